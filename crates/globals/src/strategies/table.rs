//! The `table` strategy: a native thread-local caches the pointer to this
//! thread's resource table, and EG is `table[eg_id]`: PHP 7's `TSRMG()`
//! with `ZEND_TSRMLS_CACHE` (`_tsrm_ls_cache`). An access loads the cached
//! pointer, the slot table, the id, the block pointer, then the field.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use super::ThreadBound;
use crate::resources::{self, ThreadResources, CG_ID, EG_ID};
use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError};

thread_local! {
    /// This thread's resources (PHP's `_tsrm_ls_cache`).
    static CACHE: Cell<*mut ThreadResources> = const { Cell::new(std::ptr::null_mut()) };
}

/// A thread-local cache of the resource table, then `table[id]`.
#[derive(Clone, Copy, Debug)]
pub struct Table(ThreadBound);

#[inline(always)]
fn slot(id: usize) -> *mut u8 {
    let res = CACHE.with(Cell::get);
    // SAFETY: `thread_startup` cached this thread's live resources; the
    // handle exists only between startup and shutdown on this thread.
    let storage = unsafe { (*res).storage };
    // SAFETY: `id` is a registered resource, inside the slot table.
    let slot = unsafe { storage.add(id - 1) };
    // SAFETY: a registered resource's slot holds its block.
    unsafe { *slot }
}

// SAFETY: see `slot`.
unsafe impl Globals for Table {
    const NAME: &'static str = "table";
    const DESCRIPTION: &'static str = "thread-local cache of the resource table, then table[id] (PHP 7's TSRMG)";

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        slot(EG_ID.load(Ordering::Relaxed)).cast()
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        slot(CG_ID.load(Ordering::Relaxed)).cast()
    }

    fn thread_startup() -> Result<Table, StartupError> {
        resources::register_engine_globals();
        if !CACHE.with(Cell::get).is_null() {
            return Err(StartupError::AlreadyStarted);
        }
        CACHE.with(|c| c.set(resources::manager().thread_startup()));
        Ok(Table(ThreadBound::new()))
    }

    unsafe fn thread_shutdown(self) {
        let res = CACHE.with(|c| c.replace(std::ptr::null_mut()));
        if !res.is_null() {
            // SAFETY: the cache held this thread's resources; it is cleared
            // before they are freed.
            unsafe { resources::manager().thread_shutdown(res) };
        }
    }
}
