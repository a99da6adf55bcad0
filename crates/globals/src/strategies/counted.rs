//! `Counted<S>`: strategy `S` with a count of every EG and CG access, for
//! `minizts run --stats`. A separate type, so the counting code exists
//! only in the counted copy of the engine and costs the measured
//! strategies nothing. The engine's code is the same under every
//! strategy, so the counts are too; dividing a strategy's extra
//! instructions by them gives its cost per access.

use std::cell::{Cell, RefCell};

use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError};

thread_local! {
    static EG_ACCESSES: Cell<u64> = const { Cell::new(0) };
    static CG_ACCESSES: Cell<u64> = const { Cell::new(0) };
    static GENERAL_PATH: RefCell<Vec<(&'static str, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Counts one run of instruction `mnemonic` on the VM's general path (the
/// instructions its run loop has no fast path for, or whose fast path
/// declined): where the time goes that the run loop does not see.
pub fn count_general_path(mnemonic: &'static str) {
    GENERAL_PATH.with(|h| {
        let mut h = h.borrow_mut();
        match h.iter_mut().find(|(m, _)| *m == mnemonic) {
            Some((_, n)) => *n += 1,
            None => h.push((mnemonic, 1)),
        }
    });
}

/// This thread's general-path counts since the last reset, the most
/// frequent first.
pub fn general_path_counts() -> Vec<(&'static str, u64)> {
    let mut v = GENERAL_PATH.with(|h| h.borrow().clone());
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
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
    GENERAL_PATH.with(|h| h.borrow_mut().clear());
}

// SAFETY: forwards to `S`, which upholds the contract.
unsafe impl<S: Globals> Globals for Counted<S> {
    const NAME: &'static str = S::NAME;
    const DESCRIPTION: &'static str = S::DESCRIPTION;
    const COUNTED: bool = true;

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
