//! Executor and compiler globals (PHP's `EG` and `CG`) and the strategies
//! that reach them.
//!
//! All per-thread engine state lives in two structs, [`ExecutorGlobals`]
//! and [`CompilerGlobals`], kept together in one [`ThreadGlobals`]. The
//! compiler, VM and builtins never name a storage location: they hold a
//! handle `g: G` where `G:` [`Globals`], and every access is `eg!(g)` or
//! `cg!(g)`, PHP's `EG()` / `CG()`. A strategy decides what the handle is
//! and how an access finds the state; code is monomorphised per strategy,
//! so the cost of an access is exactly the strategy's.
//!
//! The strategies (module [`strategies`]) model every way PHP and its peers
//! have reached per-thread state: process statics (`nts`), a context
//! pointer passed everywhere (`ctx`), `pthread_getspecific` per access
//! (`fetch`), a cached resource-table pointer plus an id (`table`), a cached
//! pointer plus a fixed offset (`offset`), and one native thread-local
//! struct (`tls`). The table-based ones keep EG and CG in the
//! [`resources`] manager, PHP's TSRM.
//!
//! Two rules keep the `unsafe` underneath sound, and the types enforce
//! them: a handle never leaves the thread that started it (handles are
//! neither `Send` nor `Sync`, see [`strategies::ThreadBound`]), and a
//! borrow from `eg!`/`cg!` ends with its statement (see [`access`]; debug
//! builds also refuse two borrows alive at once).

#![deny(clippy::multiple_unsafe_ops_per_block)]

pub mod access;
pub mod code;
pub mod compiler;
pub mod executor;
pub mod lock;
pub mod memory;
pub mod probes;
pub mod resources;
pub mod strategies;

pub use access::{with_cg, with_eg, CgAccess, EgAccess};
pub use compiler::{CompilerGlobals, InternalFunction, OpArrayBuilder};
pub use executor::{ErrorSink, ExecutorGlobals, Frame, Output, Sink, VmStack};
pub use strategies::{Counted, Ctx, Fetch, Nts, Offset, Table, Tls};

/// This thread's engine state: executor and compiler globals together.
pub struct ThreadGlobals {
    pub eg: ExecutorGlobals,
    pub cg: CompilerGlobals,
}

impl ThreadGlobals {
    pub fn new() -> ThreadGlobals {
        ThreadGlobals {
            eg: ExecutorGlobals::new(),
            cg: CompilerGlobals::new(),
        }
    }
}

impl Default for ThreadGlobals {
    fn default() -> Self {
        ThreadGlobals::new()
    }
}

/// Why a thread could not start an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupError {
    /// This thread already has engine globals.
    AlreadyStarted,
    /// The strategy allows only one engine thread and another one runs.
    SingleThreaded(&'static str),
}

impl std::fmt::Display for StartupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartupError::AlreadyStarted => write!(f, "this thread has already started an engine"),
            StartupError::SingleThreaded(name) => {
                write!(f, "the '{name}' globals strategy allows only one engine thread")
            }
        }
    }
}

impl std::error::Error for StartupError {}

/// A way to reach this thread's globals (see the crate docs).
///
/// # Safety
/// Implementations must return pointers to this thread's live
/// [`ThreadGlobals`] fields from [`Globals::eg_ptr`] and
/// [`Globals::cg_ptr`] for every handle returned by
/// [`Globals::thread_startup`] until [`Globals::thread_shutdown`]. The
/// handle type must be neither `Send` nor `Sync` (hold a
/// [`strategies::ThreadBound`] or a raw pointer) and must not be
/// constructible outside `thread_startup`, so that the compiler keeps
/// every handle on the thread that started it.
pub unsafe trait Globals: Copy + 'static {
    /// The name `--globals=NAME` selects.
    const NAME: &'static str;
    /// One line on what it models.
    const DESCRIPTION: &'static str;
    /// Whether this is the counting copy of a strategy (`run --stats`),
    /// in which the engine also counts what it does on its general paths;
    /// a constant, so that the other strategies compile the counting out.
    const COUNTED: bool = false;

    /// This thread's executor globals.
    fn eg_ptr(self) -> *mut ExecutorGlobals;
    /// This thread's compiler globals.
    fn cg_ptr(self) -> *mut CompilerGlobals;

    /// This thread's resource table (the resource manager's, where module
    /// globals live), as this strategy can hand it to an extension: found
    /// through a native thread-local by default, passed along by `ctx`.
    #[inline(always)]
    fn resources(self) -> *mut resources::ThreadResources {
        resources::current()
    }
    /// Creates this thread's globals and returns the handle to them.
    fn thread_startup() -> Result<Self, StartupError>;
    /// Destroys this thread's globals.
    ///
    /// # Safety
    /// Called once, on the thread that started the handle; neither the
    /// handle nor any copy of it (nor a reference from `eg!`/`cg!`) is
    /// used afterwards. Handles are `Copy`, so the compiler cannot check
    /// this; callers keep the handle in one function that starts and ends
    /// the engine.
    unsafe fn thread_shutdown(self);
}

/// `EG(…)`: this thread's executor globals, for one statement.
///
/// `eg!(g)` is a `&mut ExecutorGlobals` borrowed from a temporary guard
/// ([`EgAccess`]), so it lives until the end of the statement and no
/// longer; every access asks the strategy again, as PHP's `EG()` does.
/// `eg!(g, |eg| …)` runs a closure with the reference, for code that needs
/// several accesses together ([`with_eg`]). Debug builds panic if a second
/// borrow is taken while one is alive (see [`access`]), so take one per
/// statement and read what a call needs into a local before the call.
///
/// ```
/// use minizts_globals::{eg, Globals, Tls};
/// let g = Tls::thread_startup().unwrap();
/// eg!(g).exit_status = 2;
/// let status = eg!(g).exit_status;
/// let frames = eg!(g, |eg| eg.frames.len());
/// assert_eq!((status, frames), (2, 0));
/// // SAFETY: `g` is not used after this.
/// unsafe { g.thread_shutdown() };
/// ```
///
/// The reference cannot be kept past its statement:
///
/// ```compile_fail,E0716
/// use minizts_globals::{eg, Globals, Tls};
/// let g = Tls::thread_startup().unwrap();
/// let eg = eg!(g);
/// eg.exit_status = 2;
/// ```
///
/// nor taken out of the closure form:
///
/// ```compile_fail
/// use minizts_globals::{eg, Globals, Tls};
/// let g = Tls::thread_startup().unwrap();
/// let frames = eg!(g, |eg| &mut eg.frames);
/// frames.clear();
/// ```
#[macro_export]
macro_rules! eg {
    ($g:expr) => {
        match $g {
            handle => {
                // SAFETY: the guard is a temporary of the caller's
                // statement and its reference is borrowed from it, so the
                // reference ends with the statement (see `access`).
                unsafe { $crate::EgAccess::new(handle) }
            }
        }
        .get()
    };
    ($g:expr, $f:expr) => {
        $crate::with_eg($g, $f)
    };
}

/// `CG(…)`: this thread's compiler globals, for one statement (same rules
/// as [`eg!`], with [`CgAccess`] and [`with_cg`]).
///
/// ```compile_fail,E0716
/// use minizts_globals::{cg, Globals, Tls};
/// let g = Tls::thread_startup().unwrap();
/// let cg = cg!(g);
/// cg.cache_slots = 2;
/// ```
#[macro_export]
macro_rules! cg {
    ($g:expr) => {
        match $g {
            handle => {
                // SAFETY: as in `eg!`.
                unsafe { $crate::CgAccess::new(handle) }
            }
        }
        .get()
    };
    ($g:expr, $f:expr) => {
        $crate::with_cg($g, $f)
    };
}
