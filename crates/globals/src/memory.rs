//! Memory accounting: a global allocator that counts each thread's live
//! bytes, so the engine can report `memory_get_usage()` and enforce
//! `memory_limit` (PHP's Zend memory manager keeps the same figures in its
//! per-thread heap, `AG(mm_heap)`).
//!
//! The binary installs [`CountingAlloc`] as its global allocator. Counts
//! are per thread: bytes freed by another thread than the one that
//! allocated them move between counters, which the engine avoids by
//! keeping a request's values on its thread.
//!
//! Small blocks (up to [`SMALL_MAX`] bytes) go through per-thread free
//! lists, one per 16-byte size class, in front of the system allocator:
//! the role of the bins in PHP's per-thread heap. A script's strings,
//! references and array headers are such blocks, and a kernel like
//! bench.mz's `hash1` makes and frees hundreds of thousands of them: the
//! lists took a tenth off its instructions (docs/performance.md). A list
//! keeps at most [`BIN_CAP`] blocks and hands the rest back to the
//! system; [`release_thread_cache`] empties them when a thread's engine
//! shuts down. A thread that never runs an engine (a helper thread that
//! frees a block) keeps what its lists hold until the process ends, at
//! most `BIN_CAP` blocks a class.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// Past this many live bytes, `TRIPWIRE` is set.
    static LIMIT: Cell<isize> = const { Cell::new(isize::MAX) };
    /// The running request's interrupt flag (null: none).
    static TRIPWIRE: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
    /// The size of the first allocation that took live bytes past `LIMIT`
    /// since [`take_exceeded`] last looked (0: none).
    static EXCEEDED: Cell<usize> = const { Cell::new(0) };
    /// Allocator calls (allocations, reallocations and frees) so far.
    static CALLS: Cell<u64> = const { Cell::new(0) };
    /// The small-block free lists (see the module docs). No destructor on
    /// purpose: registering one allocates, which would re-enter this
    /// allocator while the thread-local is being set up.
    static BINS: Bins = const { Bins::new() };
}

/// The largest block the free lists keep.
pub const SMALL_MAX: usize = 128;

// Every `new` allocates an object (behind an `Rc`, two counts ahead of
// it) and every release frees one: it must stay a small block.
const _: () = assert!(std::mem::size_of::<minizts_core::Object>() + 2 * std::mem::size_of::<usize>() <= SMALL_MAX);
/// Bytes between size classes, and the alignment of every small block.
const CLASS_STEP: usize = 16;
const CLASSES: usize = SMALL_MAX / CLASS_STEP;
/// At most this many free blocks per class stay on a list.
pub const BIN_CAP: u32 = 4096;

/// A free block's first word: the next free block of its class.
struct FreeBlock {
    next: *mut FreeBlock,
}

struct Bins {
    heads: [Cell<*mut FreeBlock>; CLASSES],
    counts: [Cell<u32>; CLASSES],
}

impl Bins {
    const fn new() -> Bins {
        Bins {
            heads: [const { Cell::new(ptr::null_mut()) }; CLASSES],
            counts: [const { Cell::new(0) }; CLASSES],
        }
    }
}

/// The size class of `layout`, if its blocks go through the free lists.
#[inline(always)]
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size();
    (size <= SMALL_MAX && layout.align() <= CLASS_STEP && size > 0).then(|| (size - 1) / CLASS_STEP)
}

/// The layout every block of class `c` is allocated from the system with.
#[inline(always)]
fn class_layout(c: usize) -> Layout {
    // SAFETY: (c + 1) * 16 is a small non-zero multiple of the power-of-two
    // alignment 16.
    unsafe { Layout::from_size_align_unchecked((c + 1) * CLASS_STEP, CLASS_STEP) }
}

/// A block of class `c`: the head of its list, or a new one.
#[inline(always)]
fn small_alloc(c: usize) -> *mut u8 {
    let popped = BINS.with(|b| {
        let head = b.heads[c].get();
        if !head.is_null() {
            // SAFETY: a list holds only free blocks of class `c` (at least
            // 16 bytes, 16-aligned) that this thread pushed, each starting
            // with a valid `FreeBlock`; nothing else refers to them.
            b.heads[c].set(unsafe { (*head).next });
            b.counts[c].set(b.counts[c].get() - 1);
        }
        head
    });
    if !popped.is_null() {
        return popped.cast();
    }
    // SAFETY: a non-zero size.
    unsafe { System.alloc(class_layout(c)) }
}

/// Gives back a block of class `c` (allocated with `class_layout(c)`).
///
/// # Safety
/// `p` came from `small_alloc(c)` (or the system with `class_layout(c)`)
/// and is not used again.
#[inline(always)]
unsafe fn small_free(p: *mut u8, c: usize) {
    let kept = BINS.try_with(|b| {
        let n = b.counts[c].get();
        if n >= BIN_CAP {
            return false;
        }
        let block = p.cast::<FreeBlock>();
        // SAFETY: the block is free, 16-aligned and at least 16 bytes.
        unsafe { block.write(FreeBlock { next: b.heads[c].get() }) };
        b.heads[c].set(block);
        b.counts[c].set(n + 1);
        true
    });
    if kept != Ok(true) {
        // SAFETY: the caller's promise: allocated with this layout.
        unsafe { System.dealloc(p, class_layout(c)) };
    }
}

/// Hands this thread's cached free blocks back to the system (a thread's
/// engine calls it at shutdown, so a finished thread keeps nothing);
/// returns how many bytes they were.
pub fn release_thread_cache() -> usize {
    let mut bytes = 0;
    let _ = BINS.try_with(|b| {
        for c in 0..CLASSES {
            let mut p = b.heads[c].replace(ptr::null_mut());
            b.counts[c].set(0);
            while !p.is_null() {
                // SAFETY: a free block of class `c` (see `small_alloc`),
                // now off the list.
                let next = unsafe { (*p).next };
                // SAFETY: allocated from the system with this layout.
                unsafe { System.dealloc(p.cast(), class_layout(c)) };
                bytes += class_layout(c).size();
                p = next;
            }
        }
    });
    bytes
}

/// How many free blocks this thread's lists hold, per size class.
pub fn thread_cache_counts() -> [u32; CLASSES] {
    BINS.with(|b| std::array::from_fn(|c| b.counts[c].get()))
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
                trip(n as usize);
            }
        }
    });
}

// SAFETY: small blocks (see `class_of`) are always allocated from the
// system with their class's layout, which is at least as large and as
// aligned as the caller's, and are given back with it, through the free
// lists or directly; everything else forwards to `System` unchanged. The
// counting touches only thread-local cells.
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = match class_of(layout) {
            Some(c) => small_alloc(c),
            // SAFETY: forwarded.
            None => unsafe { System.alloc(layout) },
        };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = match class_of(layout) {
            Some(c) => {
                let p = small_alloc(c);
                if !p.is_null() {
                    // SAFETY: the block has at least `layout.size()` bytes.
                    unsafe { p.write_bytes(0, layout.size()) };
                }
                p
            }
            // SAFETY: forwarded.
            None => unsafe { System.alloc_zeroed(layout) },
        };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match class_of(layout) {
            // SAFETY: a small block, so allocated with its class layout.
            Some(c) => unsafe { small_free(ptr, c) },
            // SAFETY: forwarded.
            None => unsafe { System.dealloc(ptr, layout) },
        }
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `realloc`'s contract makes `new_size` a valid size for
        // `layout`'s alignment.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let p = match (class_of(layout), class_of(new_layout)) {
            (Some(c), Some(d)) if c == d => ptr,
            (None, None) => {
                // SAFETY: forwarded.
                unsafe { System.realloc(ptr, layout, new_size) }
            }
            (old, new) => {
                // One side is a small block: move it (a small block must
                // stay allocated with its class layout, which the system's
                // realloc would not keep).
                let p = match new {
                    Some(d) => small_alloc(d),
                    // SAFETY: `new_layout` is non-zero (realloc's contract).
                    None => unsafe { System.alloc(new_layout) },
                };
                if !p.is_null() {
                    // SAFETY: both blocks are live and distinct; the copy
                    // fits both.
                    unsafe { ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size)) };
                    match old {
                        // SAFETY: the old block is a small block of class c.
                        Some(c) => unsafe { small_free(ptr, c) },
                        // SAFETY: forwarded.
                        None => unsafe { System.dealloc(ptr, layout) },
                    }
                }
                p
            }
        };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[cold]
fn trip(bytes: usize) {
    let _ = EXCEEDED.try_with(|e| {
        if e.get() == 0 {
            e.set(bytes);
        }
    });
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
    EXCEEDED.with(|e| e.set(0));
}

/// Whether live bytes passed the [`watch`]ed limit since the last call:
/// the size of the allocation that first took them past it.
pub fn take_exceeded() -> Option<usize> {
    let bytes = EXCEEDED.with(|e| e.replace(0));
    (bytes > 0).then_some(bytes)
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

// A test's unsafe block states one invariant for the steps it groups.
#[cfg(test)]
#[allow(clippy::multiple_unsafe_ops_per_block)]
mod tests {
    use super::*;

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    #[test]
    fn small_blocks_are_reused_per_class() {
        let a = CountingAlloc;
        release_thread_cache();
        // SAFETY: (the whole test) every block is freed once, with the layout
        // it was allocated (or reallocated) with.
        unsafe {
            let p = a.alloc(layout(24));
            p.write_bytes(0xab, 24);
            a.dealloc(p, layout(24));
            assert_eq!(thread_cache_counts()[1], 1);
            // 17..=32 bytes share a class: the same block comes back.
            let q = a.alloc(layout(32));
            assert_eq!(p, q);
            assert_eq!(thread_cache_counts()[1], 0);
            // A zeroed allocation is zeroed even when it is a reused block.
            a.dealloc(q, layout(32));
            let z = a.alloc_zeroed(layout(20));
            assert_eq!(z, p);
            assert!(std::slice::from_raw_parts(z, 20).iter().all(|&b| b == 0));
            a.dealloc(z, layout(20));
            // Other classes and large blocks do not take it.
            let big = a.alloc(layout(SMALL_MAX + 1));
            let other = a.alloc(layout(8));
            assert_ne!(other, p);
            a.dealloc(other, layout(8));
            a.dealloc(big, layout(SMALL_MAX + 1));
        }
        release_thread_cache();
        assert!(thread_cache_counts().iter().all(|&n| n == 0));
    }

    #[test]
    fn realloc_keeps_bytes_across_classes() {
        let a = CountingAlloc;
        // SAFETY: as above; each pointer is used only while it is live.
        unsafe {
            let p = a.alloc(layout(10));
            for i in 0..10 {
                p.add(i).write(i as u8);
            }
            // Within the class: the same block.
            let p = a.realloc(p, layout(10), 16);
            // Up a class, past the small blocks, and back down.
            let p = a.realloc(p, layout(16), 100);
            let p = a.realloc(p, layout(100), 4000);
            let p = a.realloc(p, layout(4000), 12);
            assert_eq!(std::slice::from_raw_parts(p, 10), &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
            a.dealloc(p, layout(12));
        }
        release_thread_cache();
    }

    #[test]
    fn free_lists_are_capped() {
        let a = CountingAlloc;
        release_thread_cache();
        let n = BIN_CAP as usize + 10;
        // SAFETY: as above.
        let blocks: Vec<*mut u8> = (0..n).map(|_| unsafe { a.alloc(layout(100)) }).collect();
        for &p in &blocks {
            // SAFETY: as above.
            unsafe { a.dealloc(p, layout(100)) };
        }
        assert_eq!(thread_cache_counts()[6], BIN_CAP);
        release_thread_cache();
    }

    #[test]
    fn live_bytes_are_counted_through_the_lists() {
        let a = CountingAlloc;
        let before = usage();
        // SAFETY: as above.
        unsafe {
            let p = a.alloc(layout(40));
            assert_eq!(usage(), before + 40);
            let p = a.realloc(p, layout(40), 300);
            assert_eq!(usage(), before + 300);
            a.dealloc(p, layout(300));
        }
        assert_eq!(usage(), before);
        // The 40-byte block went to this thread's free list at the
        // realloc: hand it back, or the test thread's exit leaks it.
        release_thread_cache();
    }
}
