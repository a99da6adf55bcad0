//! The `tls` strategy: EG and CG together in one native thread-local.
//!
//! This is the layout the 2025 php-src proposal and its review arrive at
//! (seed 004): one `__thread` struct holding the executor and compiler
//! globals at constant offsets, so an access is a single `%fs:`-relative
//! address computation. The thread-local has a `const` initialiser and a
//! type without drop glue (`MaybeUninit`), so Rust emits no lazy-init or
//! destructor-registration check on the access path; startup and shutdown
//! construct and destroy the globals explicitly.

use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;

use super::ThreadBound;
use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError, ThreadGlobals};

thread_local! {
    static GLOBALS: UnsafeCell<MaybeUninit<ThreadGlobals>> = const { UnsafeCell::new(MaybeUninit::uninit()) };
    /// Whether `GLOBALS` holds a live value (checked at startup and
    /// shutdown only, never on the access path).
    static STARTED: Cell<bool> = const { Cell::new(false) };
}

/// EG and CG in one native thread-local (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Tls(ThreadBound);

#[inline(always)]
fn globals_ptr() -> *mut ThreadGlobals {
    GLOBALS.with(|g| g.get().cast::<ThreadGlobals>())
}

// SAFETY: the pointers are to this thread's `GLOBALS`, initialised by
// `thread_startup` before any handle exists and destroyed only by
// `thread_shutdown`; `Tls` handles are zero-sized and every access reads
// the calling thread's own slot.
unsafe impl Globals for Tls {
    const NAME: &'static str = "tls";
    const DESCRIPTION: &'static str =
        "EG and CG in one native thread-local struct at constant offsets (php-src 2025 proposal)";

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        // SAFETY: computing a field address inside the thread-local; no
        // reference to the (possibly uninitialised) value is created.
        unsafe { &raw mut (*globals_ptr()).eg }
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        // SAFETY: as in `eg_ptr`.
        unsafe { &raw mut (*globals_ptr()).cg }
    }

    fn thread_startup() -> Result<Tls, StartupError> {
        if STARTED.get() {
            return Err(StartupError::AlreadyStarted);
        }
        // SAFETY: the slot is uninitialised (STARTED is false) and belongs
        // to this thread.
        unsafe { globals_ptr().write(ThreadGlobals::new()) };
        STARTED.set(true);
        Ok(Tls(ThreadBound::new()))
    }

    unsafe fn thread_shutdown(self) {
        if STARTED.get() {
            STARTED.set(false);
            // SAFETY: the slot holds a live value (STARTED was true) that no
            // handle will reach again.
            unsafe { globals_ptr().drop_in_place() };
        }
    }
}
