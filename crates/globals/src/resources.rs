//! The resource manager: PHP's TSRM under clear names.
//!
//! A *resource* is a block of per-thread state of a given size, with a
//! constructor run for each thread and a destructor run when the thread
//! ends: the executor and compiler globals in the table-based strategies,
//! and (later) every extension's module globals. [`ResourceManager::allocate_id`]
//! registers one and returns its id (PHP's `ts_allocate_id`); every thread
//! then finds its block at `storage[id - 1]` of its [`ThreadResources`].
//! *Fast* resources ([`ResourceManager::allocate_fast_id`], PHP ≥ 7.4's
//! `ts_allocate_fast_id`) also live at a fixed offset inside one block per
//! thread, so they can be reached as "thread block + constant offset".
//!
//! The shared tables are guarded by one [`Lock`] (PHP's `tsmm_mutex`) whose
//! kind is chosen once per process. Ids allocated while threads run reach
//! those threads: the allocating thread constructs the new block for each
//! of them, as PHP's `ts_allocate_id` does. Each thread's slot table has a
//! fixed capacity, so it never moves while other threads read it without
//! the lock.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::lock::{Lock, LockKind};
use crate::{CompilerGlobals, ExecutorGlobals};

/// A resource id: 1-based, as PHP's `ts_rsrc_id`.
pub type ResourceId = usize;

/// Builds a resource's block for one thread. `extern "C"`, because
/// extensions loaded at run time register theirs (PHP's `GINIT`) across
/// the C ABI; the block arrives zeroed.
pub type Ctor = unsafe extern "C" fn(*mut c_void);
/// Tears a resource's block down when its thread ends (PHP's `GSHUTDOWN`).
pub type Dtor = unsafe extern "C" fn(*mut c_void);

/// How many resources a process may have (each thread's table is this big).
pub const MAX_RESOURCES: usize = 256;

/// Bytes reserved per thread for fast resources (PHP's `tsrm_reserve`).
pub const FAST_RESERVE: usize = 64 * 1024;

#[derive(Clone, Copy)]
struct ResourceType {
    name: &'static str,
    layout: Layout,
    ctor: Option<Ctor>,
    dtor: Option<Dtor>,
    /// Where the block sits in each thread's fast block, for fast ids.
    fast_offset: Option<usize>,
}

/// One thread's resources (PHP's `tsrm_tls_entry`). `storage` is the first
/// field, so a pointer to this struct is also a pointer to the pointer to
/// the slot table, as in PHP.
#[repr(C)]
pub struct ThreadResources {
    /// `storage[id - 1]` is this thread's block of resource `id`.
    pub storage: *mut *mut u8,
    /// This thread's fast block: fast resources at fixed offsets.
    pub fast: *mut u8,
}

struct ThreadEntry(*mut ThreadResources);

// SAFETY: the pointer is only used under the manager's lock (to fill in
// slots for new ids and to tear the thread down).
unsafe impl Send for ThreadEntry {}

#[derive(Default)]
struct State {
    types: Vec<ResourceType>,
    fast_used: usize,
    threads: Vec<ThreadEntry>,
}

/// Why a resource could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceError {
    TooMany,
    FastReserveExhausted { wanted: usize, left: usize },
}

impl std::fmt::Display for ResourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResourceError::TooMany => write!(f, "more than {MAX_RESOURCES} thread resources"),
            ResourceError::FastReserveExhausted { wanted, left } => {
                write!(
                    f,
                    "fast thread resource of {wanted} bytes does not fit ({left} bytes left)"
                )
            }
        }
    }
}

impl std::error::Error for ResourceError {}

/// The process-wide resource manager (see the module docs).
pub struct ResourceManager {
    lock: Lock,
    state: UnsafeCell<State>,
}

// SAFETY: `state` is only touched while `lock` is held.
unsafe impl Sync for ResourceManager {}
// SAFETY: as above; the raw pointers in `state` are owned by the manager.
unsafe impl Send for ResourceManager {}

static MANAGER: OnceLock<ResourceManager> = OnceLock::new();

thread_local! {
    /// The calling thread's resources, under every strategy (the
    /// executable's `_tsrm_ls_cache`): what extensions reach their module
    /// globals through. The table-based strategies keep their own copy on
    /// their access path, so what they measure stays theirs alone.
    static CURRENT: Cell<*mut ThreadResources> = const { Cell::new(ptr::null_mut()) };
}

/// The calling thread's resources (null if it has none).
#[inline]
pub fn current() -> *mut ThreadResources {
    CURRENT.with(Cell::get)
}

/// Chooses the lock kind. Only before the manager is first used; returns
/// false if it is too late (the kind in force stays).
pub fn configure(kind: LockKind) -> bool {
    let mut set = false;
    MANAGER.get_or_init(|| {
        set = true;
        ResourceManager::new(kind)
    });
    set
}

/// The process-wide manager (created with a `std` lock if not configured).
pub fn manager() -> &'static ResourceManager {
    MANAGER.get_or_init(|| ResourceManager::new(LockKind::Std))
}

impl ResourceManager {
    fn new(kind: LockKind) -> ResourceManager {
        ResourceManager {
            lock: Lock::new(kind),
            state: UnsafeCell::new(State::default()),
        }
    }

    pub fn lock_kind(&self) -> LockKind {
        self.lock.kind()
    }

    /// Runs `f` with the manager's lock held (for callers that model
    /// PHP's per-request `ts_resource()`).
    pub fn with_lock<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.lock.lock();
        f()
    }

    /// How many threads have resources now.
    pub fn live_threads(&self) -> usize {
        let _guard = self.lock.lock();
        // SAFETY: the lock is held.
        unsafe { (*self.state.get()).threads.len() }
    }

    /// Registers a resource of `layout` with its per-thread constructor and
    /// destructor (PHP's `ts_allocate_id`); running threads get their
    /// block at once.
    pub fn allocate_id(
        &self,
        name: &'static str,
        layout: Layout,
        ctor: Option<Ctor>,
        dtor: Option<Dtor>,
    ) -> Result<ResourceId, ResourceError> {
        self.allocate(name, layout, ctor, dtor, false).map(|(id, _)| id)
    }

    /// Registers a resource that also lives at a fixed offset in every
    /// thread's fast block (PHP's `ts_allocate_fast_id`); returns its id and
    /// offset.
    pub fn allocate_fast_id(
        &self,
        name: &'static str,
        layout: Layout,
        ctor: Option<Ctor>,
        dtor: Option<Dtor>,
    ) -> Result<(ResourceId, usize), ResourceError> {
        self.allocate(name, layout, ctor, dtor, true)
            .map(|(id, off)| (id, off.expect("fast ids have an offset")))
    }

    fn allocate(
        &self,
        name: &'static str,
        layout: Layout,
        ctor: Option<Ctor>,
        dtor: Option<Dtor>,
        fast: bool,
    ) -> Result<(ResourceId, Option<usize>), ResourceError> {
        let _guard = self.lock.lock();
        // SAFETY: the lock is held for the rest of this function.
        let state = unsafe { &mut *self.state.get() };
        if state.types.len() >= MAX_RESOURCES {
            return Err(ResourceError::TooMany);
        }
        let fast_offset = if fast {
            let start = state.fast_used.next_multiple_of(layout.align().max(8));
            if start + layout.size() > FAST_RESERVE {
                return Err(ResourceError::FastReserveExhausted {
                    wanted: layout.size(),
                    left: FAST_RESERVE.saturating_sub(state.fast_used),
                });
            }
            state.fast_used = start + layout.size();
            Some(start)
        } else {
            None
        };
        let ty = ResourceType {
            name,
            layout,
            ctor,
            dtor,
            fast_offset,
        };
        state.types.push(ty);
        let id = state.types.len();
        // Threads already running get the new resource now.
        for t in &state.threads {
            // SAFETY: a registered thread's resources stay allocated until
            // it unregisters, which also takes the lock (held here); their
            // slot table is touched only under the lock, so this is the
            // one reference to it.
            let res = unsafe { &mut *t.0 };
            // SAFETY: `res` is live with room for every id below
            // `MAX_RESOURCES` (checked when `id` was allocated), and the
            // lock is held.
            unsafe { install(res, id, &ty) };
        }
        Ok((id, fast_offset))
    }

    /// Gives the calling thread its resources: a slot table, a fast block,
    /// and a constructed block for every resource (PHP's
    /// `allocate_new_resource`). The caller keeps the pointer until
    /// [`ResourceManager::thread_shutdown`].
    pub fn thread_startup(&self) -> *mut ThreadResources {
        let _guard = self.lock.lock();
        // SAFETY: the lock is held for the rest of this function.
        let state = unsafe { &mut *self.state.get() };
        let slots = Layout::array::<*mut u8>(MAX_RESOURCES).expect("slot table layout");
        let fast = Layout::from_size_align(FAST_RESERVE, 64).expect("fast block layout");
        // SAFETY: the slot table's layout has a non-zero size.
        let storage = unsafe { alloc_zeroed(slots) } as *mut *mut u8;
        // SAFETY: the fast block's layout has a non-zero size.
        let fast_block = unsafe { alloc_zeroed(fast) };
        if storage.is_null() || fast_block.is_null() {
            std::alloc::handle_alloc_error(slots);
        }
        let res = Box::into_raw(Box::new(ThreadResources {
            storage,
            fast: fast_block,
        }));
        for (i, ty) in state.types.iter().enumerate() {
            // SAFETY: `res` was just made from a `Box`, and nothing else
            // refers to it yet.
            let r = unsafe { &mut *res };
            // SAFETY: `r` has room for every id and the lock is held.
            unsafe { install(r, i + 1, ty) };
        }
        state.threads.push(ThreadEntry(res));
        CURRENT.with(|c| c.set(res));
        res
    }

    /// Runs every destructor of this thread's resources, in reverse order
    /// of allocation, and frees them (PHP's `ts_free_thread`).
    ///
    /// # Safety
    /// `res` must come from [`ResourceManager::thread_startup`] and not be
    /// used again (nor any pointer into its blocks).
    pub unsafe fn thread_shutdown(&self, res: *mut ThreadResources) {
        let _guard = self.lock.lock();
        // SAFETY: the lock is held for the rest of this function.
        let state = unsafe { &mut *self.state.get() };
        state.threads.retain(|t| t.0 != res);
        if CURRENT.with(Cell::get) == res {
            CURRENT.with(|c| c.set(ptr::null_mut()));
        }
        // SAFETY: the caller hands `res` over (it came from
        // `thread_startup`'s `Box` and nothing uses it again).
        let r = unsafe { &mut *res };
        for (i, ty) in state.types.iter().enumerate().rev() {
            // SAFETY: the slot table holds `MAX_RESOURCES` slots and `i`
            // is a registered id's index, below that.
            let slot = unsafe { r.storage.add(i) };
            // SAFETY: the slot is in the live table; `install` filled it
            // (or it is still zeroed, a null block).
            let block = unsafe { *slot };
            if block.is_null() {
                continue;
            }
            if let Some(dtor) = ty.dtor {
                // SAFETY: the block was constructed by `install` for this
                // resource and is destroyed once, here.
                unsafe { dtor(block.cast()) };
            }
            if ty.fast_offset.is_none() {
                // SAFETY: a slow resource's block was allocated by
                // `install` with exactly this layout.
                unsafe { dealloc(block, block_layout(ty.layout)) };
            }
        }
        // SAFETY: the slot table was allocated by `thread_startup` with
        // this layout, and no block refers to it.
        unsafe {
            dealloc(
                r.storage as *mut u8,
                Layout::array::<*mut u8>(MAX_RESOURCES).expect("layout"),
            )
        };
        // SAFETY: likewise for the fast block; its destructors have run.
        unsafe { dealloc(r.fast, Layout::from_size_align(FAST_RESERVE, 64).expect("layout")) };
        // SAFETY: `res` came from `Box::into_raw` and `r` is not used again.
        drop(unsafe { Box::from_raw(res) });
    }

    /// The names of the registered resources, by id.
    pub fn resource_names(&self) -> Vec<&'static str> {
        let _guard = self.lock.lock();
        // SAFETY: the lock is held.
        unsafe { (*self.state.get()).types.iter().map(|t| t.name).collect() }
    }
}

/// The layout a slow resource's block is allocated with (never empty).
fn block_layout(layout: Layout) -> Layout {
    Layout::from_size_align(layout.size().max(1), layout.align()).expect("layout")
}

/// Allocates and constructs resource `id`'s block for one thread.
///
/// # Safety
/// `res` must be a live `ThreadResources` with room for `id`, and the
/// manager's lock must be held.
unsafe fn install(res: &mut ThreadResources, id: ResourceId, ty: &ResourceType) {
    let block = match ty.fast_offset {
        // SAFETY: the offset and size were checked against the reserve.
        Some(off) => unsafe { res.fast.add(off) },
        None => {
            let layout = block_layout(ty.layout);
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc_zeroed(layout) };
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            p
        }
    };
    if let Some(ctor) = ty.ctor {
        // SAFETY: the block is fresh, of the resource's layout.
        unsafe { ctor(block.cast()) };
    }
    // SAFETY: `id - 1 < MAX_RESOURCES` (checked when the id was
    // allocated), inside the slot table.
    let slot = unsafe { res.storage.add(id - 1) };
    // SAFETY: the slot is in the live table and holds a plain pointer.
    unsafe { ptr::write(slot, block) };
}

// ---- The engine's own resources, for the table-based strategies. ------

/// EG's resource id (PHP's `executor_globals_id`), 0 until registered.
pub static EG_ID: AtomicUsize = AtomicUsize::new(0);
/// CG's resource id (PHP's `compiler_globals_id`).
pub static CG_ID: AtomicUsize = AtomicUsize::new(0);
/// EG's offset in the fast block (PHP's `executor_globals_offset`).
pub static EG_OFFSET: AtomicUsize = AtomicUsize::new(0);
/// CG's offset in the fast block (PHP's `compiler_globals_offset`).
pub static CG_OFFSET: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn eg_ctor(p: *mut c_void) {
    // SAFETY: the block has EG's layout and is uninitialised.
    unsafe { ptr::write(p as *mut ExecutorGlobals, ExecutorGlobals::new()) };
}

unsafe extern "C" fn eg_dtor(p: *mut c_void) {
    // SAFETY: the block holds an EG built by `eg_ctor`, used no more.
    unsafe { ptr::drop_in_place(p as *mut ExecutorGlobals) };
}

unsafe extern "C" fn cg_ctor(p: *mut c_void) {
    // SAFETY: the block has CG's layout and is uninitialised.
    unsafe { ptr::write(p as *mut CompilerGlobals, CompilerGlobals::new()) };
}

unsafe extern "C" fn cg_dtor(p: *mut c_void) {
    // SAFETY: the block holds a CG built by `cg_ctor`, used no more.
    unsafe { ptr::drop_in_place(p as *mut CompilerGlobals) };
}

/// Registers EG and CG as fast resources (once per process), as PHP's
/// `zend_startup` does in ZTS builds.
pub fn register_engine_globals() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let m = manager();
        let (eg, eg_off) = m
            .allocate_fast_id(
                "executor globals",
                Layout::new::<ExecutorGlobals>(),
                Some(eg_ctor),
                Some(eg_dtor),
            )
            .expect("EG fits the fast reserve");
        let (cg, cg_off) = m
            .allocate_fast_id(
                "compiler globals",
                Layout::new::<CompilerGlobals>(),
                Some(cg_ctor),
                Some(cg_dtor),
            )
            .expect("CG fits the fast reserve");
        EG_OFFSET.store(eg_off, Ordering::Relaxed);
        CG_OFFSET.store(cg_off, Ordering::Relaxed);
        EG_ID.store(eg, Ordering::Release);
        CG_ID.store(cg, Ordering::Release);
    });
}

// A test's unsafe block states one invariant for the steps it groups.
#[cfg(test)]
#[allow(clippy::multiple_unsafe_ops_per_block)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    unsafe extern "C" fn ctor_a(p: *mut c_void) {
        // SAFETY: the test resource is a u64.
        unsafe { *(p as *mut u64) = 7 };
        LOG.lock().unwrap().push("ctor a".into());
    }
    unsafe extern "C" fn dtor_a(_: *mut c_void) {
        LOG.lock().unwrap().push("dtor a".into());
    }
    unsafe extern "C" fn ctor_b(p: *mut c_void) {
        // SAFETY: the test resource is a u64.
        unsafe { *(p as *mut u64) = 9 };
        LOG.lock().unwrap().push("ctor b".into());
    }
    unsafe extern "C" fn dtor_b(_: *mut c_void) {
        LOG.lock().unwrap().push("dtor b".into());
    }

    fn block(res: *mut ThreadResources, id: ResourceId) -> *mut u64 {
        // SAFETY: the test keeps `res` alive.
        let storage = unsafe { (*res).storage };
        // SAFETY: `id` is allocated, so its slot is in the table.
        let slot = unsafe { storage.add(id - 1) };
        // SAFETY: the slot is live and initialised.
        unsafe { *slot as *mut u64 }
    }

    #[test]
    fn ids_growth_order_and_thread_exit() {
        // A private manager, so the test does not depend on others.
        for kind in LockKind::ALL {
            LOG.lock().unwrap().clear();
            let m = ResourceManager::new(kind);
            let a = m
                .allocate_id("a", Layout::new::<u64>(), Some(ctor_a), Some(dtor_a))
                .unwrap();
            assert_eq!(a, 1);
            let t1 = m.thread_startup();
            // SAFETY: `t1` is live until its shutdown below, and its
            // blocks hold constructed u64s.
            assert_eq!(unsafe { *block(t1, a) }, 7);
            // An id allocated after a thread started reaches that thread.
            let (b, off) = m
                .allocate_fast_id("b", Layout::new::<u64>(), Some(ctor_b), Some(dtor_b))
                .unwrap();
            assert_eq!(b, 2);
            // SAFETY: as above.
            assert_eq!(unsafe { *block(t1, b) }, 9);
            // SAFETY: `t1` is live and `off` is inside its fast block.
            assert_eq!(block(t1, b) as *mut u8, unsafe { (*t1).fast.add(off) });
            assert_eq!(m.live_threads(), 1);
            // SAFETY: t1 is not used again.
            unsafe { m.thread_shutdown(t1) };
            assert_eq!(m.live_threads(), 0);
            let log = LOG.lock().unwrap().clone();
            assert_eq!(log, ["ctor a", "ctor b", "dtor b", "dtor a"], "{kind:?}");
        }
    }

    #[test]
    fn threads_get_their_own_blocks() {
        static BUILT: AtomicU32 = AtomicU32::new(0);
        unsafe extern "C" fn ctor(p: *mut c_void) {
            // SAFETY: the test resource is a u64.
            unsafe { *(p as *mut u64) = BUILT.fetch_add(1, Ordering::SeqCst) as u64 + 100 };
        }
        let m = std::sync::Arc::new(ResourceManager::new(LockKind::Adaptive));
        let id = m
            .allocate_id("counter", Layout::new::<u64>(), Some(ctor), None)
            .unwrap();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    let res = m.thread_startup();
                    let p = block(res, id);
                    // SAFETY: the block is this thread's own.
                    unsafe { *p += 1000 };
                    // SAFETY: as above.
                    let v = unsafe { *p };
                    // SAFETY: res is not used again.
                    unsafe { m.thread_shutdown(res) };
                    v
                })
            })
            .collect();
        let mut seen: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        seen.sort();
        assert_eq!(seen, vec![1100, 1101, 1102, 1103]);
    }

    #[test]
    fn fast_reserve_is_enforced() {
        let m = ResourceManager::new(LockKind::Spin);
        let big = Layout::from_size_align(FAST_RESERVE + 1, 8).unwrap();
        assert!(matches!(
            m.allocate_fast_id("big", big, None, None),
            Err(ResourceError::FastReserveExhausted { .. })
        ));
    }
}
