//! `tlsdemo`: one per-thread counter kept six ways, one function per way,
//! so that a script can measure what each way of reaching thread-local
//! state costs an extension loaded with `dlopen` (docs/tls-models.md,
//! `bench-scripts/tls_models.mz`, `scripts/tls-models.sh`).
//!
//! | function | the counter lives in | reached by |
//! |---|---|---|
//! | `tlsdemo_dynamic()` | a Rust `thread_local!` | the dynamic TLS model: `__tls_get_addr` |
//! | `tlsdemo_initial_exec()` | a C `__thread` with `tls_model("initial-exec")` | a GOT load of the offset, then `%fs` |
//! | `tlsdemo_module_globals()` | the module globals | this library's own cached table pointer (PHP 7's `ZEND_TSRMLS_CACHE`), then the id |
//! | `tlsdemo_host_accessor()` | the module globals | a host call, `HostApi::module_globals(id)` |
//! | `tlsdemo_ctx()` | the module globals | the table passed in with the call (PHP 5's `tsrm_ls`) |
//! | `tlsdemo_tlsdesc()` | a C `__thread` compiled with `-mtls-dialect=gnu2` | a TLS descriptor call |
//!
//! Each function increments its counter and returns the new value; the
//! increment itself is an `extern "C"` function that is never inlined
//! (`tlsdemo_inc_*`), so `objdump` and callgrind can find the access.
//! Everything else a call does (the host's dispatch, `function!`'s panic
//! guard, making the return value) is the same for all six.
//!
//! `tlsdemo_get(string $which)` reads a counter without changing it;
//! `tlsdemo_repeat(string $which, int $n)` runs one variant's increment
//! `$n` times inside the extension, to time the access without the call
//! overhead; `tlsdemo_variants()` lists the variants this build has. The
//! request startup hook refreshes the cached table pointer and resets all
//! six counters, so every request starts from zero.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use minizts_ext_api::rust::{Call, HookCtx, Result, OK};
use minizts_ext_api::{
    export_module, function, hook, module_globals_in, FunctionEntry, HostApi, ModuleEntry, Status, ThreadResources, Val,
};

/// The counters kept in module globals (variants c, d, e).
#[derive(Default)]
#[repr(C)]
pub struct TlsDemoGlobals {
    module_globals: i64,
    host_accessor: i64,
    ctx: i64,
}

/// The resource id the host assigns to [`TlsDemoGlobals`].
static GLOBALS_ID: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Variant (a). A `const` initialiser and a type without `Drop`: std
    /// makes this a plain `#[thread_local]` static, with no lazy
    /// initialisation and no destructor registration.
    static DYNAMIC: Cell<i64> = const { Cell::new(0) };

    /// This thread's resource table, cached by the request startup hook
    /// (PHP's `ZEND_TSRMLS_CACHE`, `ZEND_TSRMLS_CACHE_UPDATE()`). A Rust
    /// thread-local in a cdylib, so reading it is itself a dynamic-model
    /// access.
    static TSRMLS_CACHE: Cell<*mut ThreadResources> = const { Cell::new(std::ptr::null_mut()) };
}

extern "C" {
    fn tlsdemo_inc_initial_exec() -> i64;
    fn tlsdemo_get_initial_exec() -> i64;
    fn tlsdemo_set_initial_exec(value: i64);
}

#[cfg(tlsdemo_tlsdesc)]
extern "C" {
    fn tlsdemo_inc_tlsdesc() -> i64;
    fn tlsdemo_get_tlsdesc() -> i64;
    fn tlsdemo_set_tlsdesc(value: i64);
}

/// Variant (a): `++DYNAMIC`.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tlsdemo_inc_dynamic() -> i64 {
    DYNAMIC.with(|c| {
        let v = c.get().wrapping_add(1);
        c.set(v);
        v
    })
}

/// This thread's module globals block, given its resource table.
///
/// # Safety
/// `res` is this thread's live table and the module's globals are
/// registered (the host wrote [`GLOBALS_ID`] before any call).
#[inline(always)]
unsafe fn block(res: *const ThreadResources) -> *mut TlsDemoGlobals {
    // SAFETY: the caller's contract.
    unsafe { module_globals_in(res, GLOBALS_ID.load(Ordering::Relaxed)) }
}

/// Fills the cache when a thread calls before any request startup ran on
/// it (the host always runs the hook first; this keeps a misuse safe).
#[cold]
#[inline(never)]
fn fill_cache(host: &HostApi) -> *mut ThreadResources {
    // SAFETY: a plain host call.
    let res = unsafe { (host.thread_resources)() };
    TSRMLS_CACHE.with(|c| c.set(res));
    res
}

/// Variant (c): `++TSRMG_BULK_STATIC(tlsdemo_globals_id, …)->module_globals`,
/// the cached table pointer indexed by the id.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tlsdemo_inc_module_globals(host: &HostApi) -> i64 {
    let mut res = TSRMLS_CACHE.with(Cell::get);
    if res.is_null() {
        res = fill_cache(host);
    }
    // SAFETY: `res` is this thread's table (set at request startup or just
    // now); calls on one thread never overlap.
    let g = unsafe { &mut *block(res) };
    g.module_globals = g.module_globals.wrapping_add(1);
    g.module_globals
}

/// Variant (d): asks the host for the block on every call.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tlsdemo_inc_host_accessor(host: &HostApi) -> i64 {
    // SAFETY: the host looks up this thread's block of our id; calls on
    // one thread never overlap.
    let g = unsafe { &mut *(host.module_globals)(GLOBALS_ID.load(Ordering::Relaxed)).cast::<TlsDemoGlobals>() };
    g.host_accessor = g.host_accessor.wrapping_add(1);
    g.host_accessor
}

/// Variant (e): the table the host passed in with the call.
///
/// # Safety
/// `res` is the calling thread's resource table (`CallInfo::resources`).
#[no_mangle]
#[inline(never)]
pub unsafe extern "C" fn tlsdemo_inc_ctx(res: *mut ThreadResources) -> i64 {
    // SAFETY: the caller's contract.
    let g = unsafe { &mut *block(res) };
    g.ctx = g.ctx.wrapping_add(1);
    g.ctx
}

fn dynamic(call: &Call) -> Result<Val> {
    Ok(call.new_long(tlsdemo_inc_dynamic()))
}

fn initial_exec(call: &Call) -> Result<Val> {
    // SAFETY: a C function with no preconditions.
    Ok(call.new_long(unsafe { tlsdemo_inc_initial_exec() }))
}

fn module_globals(call: &Call) -> Result<Val> {
    Ok(call.new_long(tlsdemo_inc_module_globals(call.host())))
}

fn host_accessor(call: &Call) -> Result<Val> {
    Ok(call.new_long(tlsdemo_inc_host_accessor(call.host())))
}

fn ctx(call: &Call) -> Result<Val> {
    // SAFETY: the host passes this thread's table with every call.
    Ok(call.new_long(unsafe { tlsdemo_inc_ctx(call.resources()) }))
}

#[cfg(tlsdemo_tlsdesc)]
fn tlsdesc(call: &Call) -> Result<Val> {
    // SAFETY: a C function with no preconditions.
    Ok(call.new_long(unsafe { tlsdemo_inc_tlsdesc() }))
}

/// The variants `tlsdemo_get()` knows, in table order.
const VARIANTS: &str = if cfg!(tlsdemo_tlsdesc) {
    "dynamic, initial_exec, module_globals, host_accessor, ctx, tlsdesc"
} else {
    "dynamic, initial_exec, module_globals, host_accessor, ctx"
};

/// `tlsdemo_get(string $which): int` — a counter's value, unchanged.
fn get(call: &Call) -> Result<Val> {
    let which = call.str(0)?;
    let globals = || {
        // SAFETY: the host passes this thread's table; we only read.
        unsafe { &*block(call.resources()) }
    };
    let v = match which {
        b"dynamic" => DYNAMIC.with(Cell::get),
        // SAFETY: the C getter has no preconditions.
        b"initial_exec" => unsafe { tlsdemo_get_initial_exec() },
        b"module_globals" => globals().module_globals,
        b"host_accessor" => globals().host_accessor,
        b"ctx" => globals().ctx,
        #[cfg(tlsdemo_tlsdesc)]
        // SAFETY: as above.
        b"tlsdesc" => unsafe { tlsdemo_get_tlsdesc() },
        _ => {
            return Err(call.fatal(&format!(
                "tlsdemo_get(): Argument #1 ($which) must be one of {VARIANTS}"
            )))
        }
    };
    Ok(call.new_long(v))
}

/// `tlsdemo_repeat(string $which, int $n): int` — increments counter
/// `$which` `$n` times in a loop inside the extension (each time a call of
/// its `tlsdemo_inc_*` function) and returns the counter: the access
/// without the host's per-call overhead.
fn repeat(call: &Call) -> Result<Val> {
    let which = call.str(0)?;
    let n = call.long(1)?;
    let (host, res) = (call.host(), call.resources());
    let mut last = 0;
    match which {
        b"dynamic" => (0..n).for_each(|_| last = tlsdemo_inc_dynamic()),
        // SAFETY: a C function with no preconditions.
        b"initial_exec" => (0..n).for_each(|_| last = unsafe { tlsdemo_inc_initial_exec() }),
        b"module_globals" => (0..n).for_each(|_| last = tlsdemo_inc_module_globals(host)),
        b"host_accessor" => (0..n).for_each(|_| last = tlsdemo_inc_host_accessor(host)),
        // SAFETY: `res` is this thread's table, passed in with the call.
        b"ctx" => (0..n).for_each(|_| last = unsafe { tlsdemo_inc_ctx(res) }),
        #[cfg(tlsdemo_tlsdesc)]
        // SAFETY: a C function with no preconditions.
        b"tlsdesc" => (0..n).for_each(|_| last = unsafe { tlsdemo_inc_tlsdesc() }),
        _ => {
            return Err(call.fatal(&format!(
                "tlsdemo_repeat(): Argument #1 ($which) must be one of {VARIANTS}"
            )))
        }
    }
    Ok(call.new_long(last))
}

/// `tlsdemo_variants(): string` — the variants this build has,
/// comma-separated (`tlsdesc` is absent where it could not be built).
fn variants(call: &Call) -> Result<Val> {
    Ok(call.new_str(VARIANTS.replace(' ', "").as_bytes()))
}

/// Request startup: refresh the cached table pointer (PHP's
/// `ZEND_TSRMLS_CACHE_UPDATE()`) and reset every counter.
fn request_startup(ctx: &HookCtx) -> Status {
    TSRMLS_CACHE.with(|c| c.set(ctx.resources()));
    DYNAMIC.with(|c| c.set(0));
    // SAFETY: C setters with no preconditions.
    unsafe { tlsdemo_set_initial_exec(0) };
    #[cfg(tlsdemo_tlsdesc)]
    // SAFETY: as above.
    unsafe {
        tlsdemo_set_tlsdesc(0)
    };
    // SAFETY: the host passes this module's block.
    if let Some(g) = unsafe { ctx.globals::<TlsDemoGlobals>() } {
        *g = TlsDemoGlobals::default();
    }
    OK
}

#[cfg(tlsdemo_tlsdesc)]
const N: usize = 9;
#[cfg(not(tlsdemo_tlsdesc))]
const N: usize = 8;

static FUNCTIONS: [FunctionEntry; N] = [
    function!("tlsdemo_dynamic", "", 0, dynamic),
    function!("tlsdemo_initial_exec", "", 0, initial_exec),
    function!("tlsdemo_module_globals", "", 0, module_globals),
    function!("tlsdemo_host_accessor", "", 0, host_accessor),
    function!("tlsdemo_ctx", "", 0, ctx),
    #[cfg(tlsdemo_tlsdesc)]
    function!("tlsdemo_tlsdesc", "", 0, tlsdesc),
    function!("tlsdemo_get", "which", 1, get),
    function!("tlsdemo_repeat", "which,n", 2, repeat),
    function!("tlsdemo_variants", "", 0, variants),
];

export_module!(ModuleEntry::new(c"tlsdemo", c"0.1.0", &FUNCTIONS)
    .with_globals::<TlsDemoGlobals>(&GLOBALS_ID)
    .with_request_hooks(hook!(request_startup), None));
