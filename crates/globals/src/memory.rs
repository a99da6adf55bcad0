//! Memory accounting: a global allocator that counts each thread's live
//! bytes, so the engine can report `memory_get_usage()` and enforce
//! `memory_limit` (PHP's Zend memory manager keeps the same figures in its
//! per-thread heap, `AG(mm_heap)`).
//!
//! The binary installs [`CountingAlloc`] as its global allocator. Counts
//! are per thread: bytes freed by another thread than the one that
//! allocated them move between counters, which the engine avoids by
//! keeping a request's values on its thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// Past this many live bytes, `TRIPWIRE` is set.
    static LIMIT: Cell<isize> = const { Cell::new(isize::MAX) };
    /// The running request's interrupt flag (null: none).
    static TRIPWIRE: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
    /// Allocator calls (allocations, reallocations and frees) so far.
    static CALLS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting live bytes per thread.
pub struct CountingAlloc;

/// Accounts for one allocator call that changed live bytes by `n`.
#[inline]
fn add(n: isize) {
    // `try_with` because allocations can happen while a thread's locals
    // are being torn down.
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = LIVE.try_with(|live| {
        let v = live.get() + n;
        live.set(v);
        if n > 0 {
            let _ = PEAK.try_with(|peak| {
                if v > peak.get() {
                    peak.set(v)
                }
            });
            if v > LIMIT.try_with(Cell::get).unwrap_or(isize::MAX) {
                trip();
            }
        }
    });
}

// SAFETY: every call forwards to `System` with the same arguments; the
// counting touches only thread-local cells.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[cold]
fn trip() {
    let flag = TRIPWIRE.try_with(Cell::get).unwrap_or(std::ptr::null());
    if !flag.is_null() {
        // SAFETY: `watch` requires the flag to stay valid until `unwatch`.
        unsafe { (*flag).store(true, Ordering::Release) };
    }
}

/// Sets `flag` whenever this thread's live bytes pass `limit` (the VM
/// checks the flag at its next backward jump or call, and reports PHP's
/// "Allowed memory size … exhausted").
///
/// # Safety
/// `flag` must stay valid until [`unwatch`] is called on this thread.
pub unsafe fn watch(limit: usize, flag: &AtomicBool) {
    LIMIT.with(|l| l.set(limit.min(isize::MAX as usize) as isize));
    TRIPWIRE.with(|t| t.set(flag));
}

/// Stops [`watch`]ing.
pub fn unwatch() {
    LIMIT.with(|l| l.set(isize::MAX));
    TRIPWIRE.with(|t| t.set(std::ptr::null()));
}

/// Bytes this thread has allocated and not freed (0 if the counting
/// allocator is not installed).
pub fn usage() -> usize {
    LIVE.with(|l| l.get().max(0) as usize)
}

/// The highest [`usage`] seen on this thread since [`reset_peak`].
pub fn peak() -> usize {
    PEAK.with(|p| p.get().max(0) as usize)
}

/// How many times this thread has called the allocator (allocate,
/// reallocate or free). PHP's engine reaches its allocator's per-thread
/// heap (`AG(mm_heap)`) on each such call; minizts's allocator keeps its
/// state in its own native thread-locals under every strategy, so
/// `--stats` reports this count for the reader to price separately.
pub fn allocator_calls() -> u64 {
    CALLS.with(Cell::get)
}

/// Starts a new peak measurement from the current usage.
pub fn reset_peak() {
    let now = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(now));
}
