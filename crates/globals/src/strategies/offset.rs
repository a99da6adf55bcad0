//! The `offset` strategy: a native thread-local caches this thread's fast
//! block, and EG sits at an offset fixed at startup: PHP ≥ 7.4's
//! `ts_allocate_fast_id` / `TSRMG_FAST()` (`_tsrm_ls_cache +
//! executor_globals_offset`). An access loads the cached pointer and the
//! offset (a process-wide variable), adds them, then loads the field.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use super::ThreadBound;
use crate::resources::{self, CG_OFFSET, EG_OFFSET};
use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError};

thread_local! {
    /// This thread's fast block.
    static CACHE: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
    /// This thread's resources, for shutdown.
    static RESOURCES: Cell<*mut resources::ThreadResources> = const { Cell::new(std::ptr::null_mut()) };
}

/// A thread-local cache of the fast block, plus a fixed offset.
#[derive(Clone, Copy, Debug)]
pub struct Offset(ThreadBound);

// SAFETY: `thread_startup` caches this thread's live fast block, in which
// EG and CG (fast resources) sit at their offsets; the handle exists only
// between startup and shutdown on this thread.
unsafe impl Globals for Offset {
    const NAME: &'static str = "offset";
    const DESCRIPTION: &'static str =
        "thread-local cache pointer + an offset fixed at startup (PHP >= 7.4's TSRMG_FAST)";

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        let base = CACHE.with(Cell::get);
        base.wrapping_add(EG_OFFSET.load(Ordering::Relaxed)).cast()
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        let base = CACHE.with(Cell::get);
        base.wrapping_add(CG_OFFSET.load(Ordering::Relaxed)).cast()
    }

    fn thread_startup() -> Result<Offset, StartupError> {
        resources::register_engine_globals();
        if !CACHE.with(Cell::get).is_null() {
            return Err(StartupError::AlreadyStarted);
        }
        let res = resources::manager().thread_startup();
        // SAFETY: `res` is this thread's live resources.
        CACHE.with(|c| c.set(unsafe { (*res).fast }));
        RESOURCES.with(|r| r.set(res));
        Ok(Offset(ThreadBound::new()))
    }

    unsafe fn thread_shutdown(self) {
        CACHE.with(|c| c.set(std::ptr::null_mut()));
        let res = RESOURCES.with(|r| r.replace(std::ptr::null_mut()));
        if !res.is_null() {
            // SAFETY: this thread's resources; the caches are cleared first.
            unsafe { resources::manager().thread_shutdown(res) };
        }
    }
}
