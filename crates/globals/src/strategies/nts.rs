//! The `nts` strategy: EG and CG in process-wide statics, as in PHP built
//! without ZTS. An access is one RIP-relative address: the cheapest there
//! is, and the baseline every other strategy is measured against. Only one
//! engine thread may exist: a second `thread_startup` is refused.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

use super::ThreadBound;
use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError, ThreadGlobals};

struct Slot(UnsafeCell<MaybeUninit<ThreadGlobals>>);

// SAFETY: only the one thread that won `IN_USE` touches the slot, between
// its `thread_startup` and `thread_shutdown`.
unsafe impl Sync for Slot {}

static GLOBALS: Slot = Slot(UnsafeCell::new(MaybeUninit::uninit()));
/// Whether an engine thread owns `GLOBALS`.
static IN_USE: AtomicBool = AtomicBool::new(false);

/// EG and CG in process-wide statics (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Nts(ThreadBound);

#[inline(always)]
fn globals_ptr() -> *mut ThreadGlobals {
    GLOBALS.0.get().cast::<ThreadGlobals>()
}

// SAFETY: a handle exists only on the thread whose `thread_startup`
// succeeded (the handle is created there and the VM never sends it to
// another thread), and the statics hold a live value until its
// `thread_shutdown`.
unsafe impl Globals for Nts {
    const NAME: &'static str = "nts";
    const DESCRIPTION: &'static str = "process-wide statics, PHP without ZTS (one engine thread only)";

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        // SAFETY: a field address of a static; nothing is read.
        unsafe { &raw mut (*globals_ptr()).eg }
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        // SAFETY: as in `eg_ptr`.
        unsafe { &raw mut (*globals_ptr()).cg }
    }

    fn thread_startup() -> Result<Nts, StartupError> {
        if IN_USE.swap(true, Ordering::AcqRel) {
            return Err(StartupError::SingleThreaded(Self::NAME));
        }
        // SAFETY: we won `IN_USE`, so no other thread uses the slot, and it
        // is uninitialised (the previous owner dropped its value).
        unsafe { globals_ptr().write(ThreadGlobals::new()) };
        Ok(Nts(ThreadBound::new()))
    }

    unsafe fn thread_shutdown(self) {
        // SAFETY: this thread owns the slot and the value is live.
        unsafe { globals_ptr().drop_in_place() };
        IN_USE.store(false, Ordering::Release);
    }
}
