//! The `ctx` strategy: a context pointer passed as an argument through
//! every VM, compiler and builtin function, as PHP 5 did with
//! `TSRMLS_DC`/`TSRMLS_CC` (the `void ***tsrm_ls` argument). The handle
//! *is* the pointer to this thread's resource table; an access is
//! `((type) (*tsrm_ls)[id - 1])->field`: load the slot table, load the
//! block pointer at the resource's id, then the field. (Perl's
//! `pTHX_`/`aTHX_` and Lua's `lua_State *L` pass a pointer the same way.)

use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use super::ThreadBound;
use crate::resources::{self, ThreadResources, CG_ID, EG_ID};
use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError};

/// A pointer to this thread's resource table, passed everywhere.
#[derive(Clone, Copy, Debug)]
pub struct Ctx(NonNull<ThreadResources>, ThreadBound);

#[inline(always)]
fn slot(res: NonNull<ThreadResources>, id: usize) -> *mut u8 {
    // SAFETY: the handle points at this thread's live resources (the
    // `Globals` contract).
    let storage = unsafe { (*res.as_ptr()).storage };
    // SAFETY: `id` is a registered resource, so `id - 1` is inside the
    // slot table.
    let slot = unsafe { storage.add(id - 1) };
    // SAFETY: a registered resource's slot holds its block.
    unsafe { *slot }
}

// SAFETY: the handle's pointer comes from `thread_startup` on this thread
// and is freed only by `thread_shutdown`; EG and CG are registered before
// any thread starts, so their slots are filled.
unsafe impl Globals for Ctx {
    const NAME: &'static str = "ctx";
    const DESCRIPTION: &'static str =
        "a context pointer passed to every function, then table[id] (PHP 5's TSRMLS_CC, Perl's aTHX)";

    #[inline(always)]
    fn resources(self) -> *mut ThreadResources {
        self.0.as_ptr()
    }

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        slot(self.0, EG_ID.load(Ordering::Relaxed)).cast()
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        slot(self.0, CG_ID.load(Ordering::Relaxed)).cast()
    }

    fn thread_startup() -> Result<Ctx, StartupError> {
        resources::register_engine_globals();
        let res = resources::manager().thread_startup();
        Ok(Ctx(NonNull::new(res).expect("thread resources"), ThreadBound::new()))
    }

    unsafe fn thread_shutdown(self) {
        // SAFETY: the pointer came from `thread_startup`; the handle is
        // not used after this.
        unsafe { resources::manager().thread_shutdown(self.0.as_ptr()) };
    }
}
