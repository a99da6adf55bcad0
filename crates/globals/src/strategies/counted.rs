//! `Counted<S>`: strategy `S` with a count of every EG and CG access, for
//! `minizts run --stats`. A separate type, so the counting code exists
//! only in the counted copy of the engine and costs the measured
//! strategies nothing. The engine's code is the same under every
//! strategy, so the counts are too; dividing a strategy's extra
//! instructions by them gives its cost per access.

use std::cell::Cell;

use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError};

thread_local! {
    static EG_ACCESSES: Cell<u64> = const { Cell::new(0) };
    static CG_ACCESSES: Cell<u64> = const { Cell::new(0) };
}

/// Strategy `S`, counting accesses.
#[derive(Clone, Copy, Debug)]
pub struct Counted<S>(S);

/// This thread's (EG, CG) access counts since the last reset.
pub fn access_counts() -> (u64, u64) {
    (EG_ACCESSES.with(Cell::get), CG_ACCESSES.with(Cell::get))
}

/// Zeroes this thread's access counts.
pub fn reset_access_counts() {
    EG_ACCESSES.with(|c| c.set(0));
    CG_ACCESSES.with(|c| c.set(0));
}

// SAFETY: forwards to `S`, which upholds the contract.
unsafe impl<S: Globals> Globals for Counted<S> {
    const NAME: &'static str = S::NAME;
    const DESCRIPTION: &'static str = S::DESCRIPTION;

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        EG_ACCESSES.with(|c| c.set(c.get() + 1));
        self.0.eg_ptr()
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        CG_ACCESSES.with(|c| c.set(c.get() + 1));
        self.0.cg_ptr()
    }

    #[inline(always)]
    fn resources(self) -> *mut crate::resources::ThreadResources {
        self.0.resources()
    }

    fn thread_startup() -> Result<Self, StartupError> {
        S::thread_startup().map(Counted)
    }

    unsafe fn thread_shutdown(self) {
        // SAFETY: the caller's promise covers the wrapped handle too.
        unsafe { self.0.thread_shutdown() }
    }
}
