//! The request's limits, held inside every instruction and builtin:
//! `memory_limit`, `max_execution_time`, and the cycle collections that
//! come due between them.
//!
//! All three arrive as EG's interrupt flag (`EG.interrupt.pending`): the
//! watchdog thread sets it when the time limit expires
//! ([`crate::timer`]), the counting allocator when the request's live
//! bytes pass its memory limit (`globals::memory`), the collector when
//! enough references have piled up ([`crate::gc`]). The run loops test it
//! at backward jumps and calls, [`crate::builtins::call`] after every
//! builtin, and builtins that loop over their input every few thousand
//! steps ([`Ticker`]), so a request stops within one statement, or one
//! builtin's stretch of work, of passing a limit. [`interrupted`] turns
//! the flag into PHP's fatal errors.
//!
//! The same flag tells the VM that diagnostics are waiting for the user
//! error handler (`set_error_handler`). Those run only at a
//! [`safe_point`], where script code may run: between instructions, at
//! calls, after a builtin; never at a builtin's [`Ticker`], where the
//! builtin may be in the middle of changing a value the handler could
//! reach.
//!
//! A request must never make the allocator fail, which would abort the
//! process: a result whose size the script chose (a width, a count, a
//! string offset, a repeat) is checked before it is allocated
//! ([`reserve`], [`string_buffer`], [`values_with_capacity`]), with the
//! size PHP's allocator would have asked for, so the message is PHP's.

use std::sync::atomic::Ordering;

use minizts_core::Value;
use minizts_globals::{eg, memory, Globals};

use crate::error::{fatal, VmResult};

/// The interrupt check: cheap when nothing is pending.
#[inline(always)]
pub(crate) fn check<G: Globals>(g: G) -> VmResult<()> {
    if eg!(g).interrupt.pending.load(Ordering::Relaxed) {
        return interrupted(g);
    }
    Ok(())
}

/// The interrupt check at a point where script code may run (the VM
/// between instructions, at calls and after builtins): the limits, then
/// the diagnostics waiting for the user error handler. A builtin in the
/// middle of its work checks only the limits ([`check`]).
#[inline(always)]
pub(crate) fn safe_point<G: Globals>(g: G) -> VmResult<()> {
    if eg!(g).interrupt.pending.load(Ordering::Relaxed) {
        return interrupted_at_safe_point(g);
    }
    Ok(())
}

#[cold]
#[inline(never)]
pub(crate) fn interrupted_at_safe_point<G: Globals>(g: G) -> VmResult<()> {
    interrupted(g)?;
    // Objects whose last holder went have their destructors run here,
    // as close as the VM can get to PHP running them in the release.
    crate::objects::run_destructors(g)?;
    crate::error::run_user_handlers(g)
}

/// Handles a raised interrupt: the time limit, a due cycle collection,
/// the memory limit (after a collection, as PHP's allocator collects
/// before it gives up).
#[cold]
#[inline(never)]
pub(crate) fn interrupted<G: Globals>(g: G) -> VmResult<()> {
    let timed_out = eg!(g, |eg| {
        eg.interrupt.pending.store(false, Ordering::Relaxed);
        let timed_out = eg.interrupt.timed_out.swap(false, Ordering::Relaxed);
        timed_out.then_some(eg.settings.max_execution_time.as_secs())
    });
    if let Some(secs) = timed_out {
        return fatal(format!(
            "Maximum execution time of {secs} second{} exceeded",
            if secs == 1 { "" } else { "s" }
        ));
    }
    // Diagnostics waiting for the user error handler keep the flag up
    // until a safe point runs it.
    eg!(g, |eg| {
        if !eg.user_errors.pending.is_empty() {
            eg.interrupt.pending.store(true, Ordering::Relaxed);
        }
    });
    crate::gc::collect_if_due(g);
    if let Some(tried) = memory::take_exceeded() {
        let limit = eg!(g).settings.memory_limit.unwrap_or(usize::MAX);
        if memory::usage() > limit {
            crate::gc::collect(g);
        }
        if memory::usage() > limit {
            return exhausted(limit, tried);
        }
    }
    Ok(())
}

/// Starts the request's time limit afresh: `after` from now, none when
/// it is zero (request startup, `set_time_limit`,
/// `ini_set('max_execution_time')`). The timer is armed on first use and
/// disarmed when the request ends (`run_request`'s guard).
pub(crate) fn set_time_limit<G: Globals>(g: G, after: std::time::Duration) {
    eg!(g, |eg| match eg.time_limit {
        Some(id) => crate::timer::rearm(id, after),
        None if !after.is_zero() => {
            let file = eg.script().map_or("Unknown", |s| &s.file);
            // SAFETY: the flag lives in this thread's executor globals,
            // which outlive the request; `run_request`'s guard disarms
            // the timer before the request ends, on every path, a panic's
            // unwinding included.
            eg.time_limit = unsafe { crate::timer::arm(&eg.interrupt, after, file) };
        }
        None => {}
    })
}

/// Publishes the line the running builtin was called from while a time
/// limit is armed, for the hard timeout's message.
#[inline(always)]
pub(crate) fn publish_line<G: Globals>(g: G) {
    if eg!(g).interrupt.watched.load(Ordering::Relaxed) {
        publish_line_slow(g);
    }
}

#[cold]
#[inline(never)]
pub(crate) fn publish_line_slow<G: Globals>(g: G) {
    let line = crate::error::current_location(g).map_or(0, |l| l.line);
    eg!(g).interrupt.line.store(line, Ordering::Relaxed);
}

/// PHP's "Allowed memory size … exhausted" fatal error.
#[cold]
fn exhausted<T>(limit: usize, tried: usize) -> VmResult<T> {
    fatal(format!(
        "Allowed memory size of {limit} bytes exhausted (tried to allocate {tried} bytes)"
    ))
}

/// Counts a builtin's steps and makes the interrupt check every
/// [`Ticker::EVERY`] of them, so a long builtin stops at the time or
/// memory limit.
pub(crate) struct Ticker(u32);

impl Ticker {
    pub(crate) const EVERY: u32 = 4096;

    pub(crate) fn new() -> Ticker {
        Ticker(Ticker::EVERY)
    }

    /// Bytes of byte-wise work (a copy, a comparison, a row of a
    /// distance table) that count as one step.
    pub(crate) const BYTES_PER_STEP: usize = 64;

    /// One step: the interrupt check when one is due.
    #[inline(always)]
    pub(crate) fn tick<G: Globals>(&mut self, g: G) -> VmResult<()> {
        self.0 -= 1;
        if self.0 == 0 {
            self.0 = Ticker::EVERY;
            return check(g);
        }
        Ok(())
    }

    /// `steps` steps at once (work whose size varies from step to step).
    #[inline(always)]
    pub(crate) fn tick_by<G: Globals>(&mut self, g: G, steps: usize) -> VmResult<()> {
        if steps >= self.0 as usize {
            self.0 = Ticker::EVERY;
            return check(g);
        }
        self.0 -= steps as u32;
        Ok(())
    }

    /// One step for a piece of byte-wise work of `bytes` bytes, and one
    /// more per [`Ticker::BYTES_PER_STEP`] of them.
    #[inline(always)]
    pub(crate) fn tick_bytes<G: Globals>(&mut self, g: G, bytes: usize) -> VmResult<()> {
        self.tick_by(g, 1 + bytes / Ticker::BYTES_PER_STEP)
    }
}

/// How many more bytes fit under `memory_limit` (`isize::MAX` without
/// one: the most any allocation can be).
pub(crate) fn room<G: Globals>(g: G) -> usize {
    match eg!(g).settings.memory_limit {
        Some(l) => l.saturating_sub(memory::usage()),
        None => isize::MAX as usize,
    }
}

/// Checks that `bytes` more bytes fit under `memory_limit` before they
/// are allocated (PHP's allocator refuses such a request with this
/// message). `bytes` should be what PHP's allocator would ask for
/// ([`php_block`], [`string_bytes`], [`packed_bytes`], [`hash_bytes`]).
pub(crate) fn reserve<G: Globals>(g: G, bytes: usize) -> VmResult<()> {
    if bytes > room(g) {
        // PHP's allocator treats "no limit" as a limit of PHP_INT_MAX.
        let limit = eg!(g).settings.memory_limit.unwrap_or(isize::MAX as usize);
        return exhausted(limit, bytes);
    }
    Ok(())
}

/// The size PHP's allocator names in its message when a request of `n`
/// bytes passes the limit: a "large" request (more than a small bin's
/// size, less than a chunk) in the whole pages it takes, a small or a
/// "huge" one (a chunk or more) as it is.
pub(crate) fn php_block(n: u128) -> usize {
    // ZEND_MM_MAX_SMALL_SIZE and ZEND_MM_MAX_LARGE_SIZE.
    const MAX_SMALL: u128 = 3072;
    const MAX_LARGE: u128 = (2 << 20) - 4096;
    let n = if n > MAX_SMALL && n <= MAX_LARGE {
        (n + 4095) & !4095
    } else {
        n
    };
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The block for a string of `len` bytes (`zend_string`: a 24-byte
/// header and a NUL, 8-byte aligned).
pub(crate) fn string_bytes(len: usize) -> usize {
    php_block((len as u128 + 25 + 7) & !7)
}

/// The block for `n` elements of a packed array (power-of-two slots of
/// 16 bytes plus the minimal hash).
pub(crate) fn packed_bytes(n: u64) -> usize {
    let slots = u128::from(n.max(8).checked_next_power_of_two().unwrap_or(u64::MAX));
    php_block(slots * 16 + 8)
}

/// Like [`packed_bytes`] for a hash (32-byte buckets and a two-word index
/// per slot).
pub(crate) fn hash_bytes(n: u64) -> usize {
    let slots = u128::from(n.max(8).checked_next_power_of_two().unwrap_or(u64::MAX));
    php_block(slots * 40)
}

/// PHP's `zend_string_safe_alloc(nmemb, size, len)` checks for a result
/// of `nmemb * size + len` bytes (returned): the same overflow error, and
/// the `memory_limit` check with the block PHP's allocator would ask for.
pub(crate) fn check_string<G: Globals>(g: G, nmemb: usize, size: usize, len: usize) -> VmResult<usize> {
    let offset = (len as u128 + 25 + 7) & !7;
    let total = nmemb as u128 * size as u128 + offset;
    if total > u64::MAX as u128 {
        return fatal(format!(
            "Possible integer overflow in memory allocation ({nmemb} * {size} + {offset})"
        ));
    }
    reserve(g, php_block(total))?;
    Ok((total - offset) as usize + len)
}

/// An empty buffer with room for a result of `nmemb * size + len` bytes,
/// after [`check_string`]; an allocation the system refuses is PHP's "Out
/// of memory" fatal error rather than an abort.
pub(crate) fn string_buffer<G: Globals>(g: G, nmemb: usize, size: usize, len: usize) -> VmResult<Vec<u8>> {
    let bytes = check_string(g, nmemb, size, len)?;
    let mut out = Vec::new();
    if out.try_reserve_exact(bytes).is_err() {
        return out_of_memory(bytes);
    }
    Ok(out)
}

/// Strings up to this long are allocated without a memory-limit check of
/// their own (the allocator's tripwire catches a run of them).
pub(crate) const SMALL_STRING: usize = 64 * 1024;

/// An empty buffer for a string of `len` bytes made from strings the
/// request already holds (a concatenation): checked first when it is
/// large.
#[inline]
pub(crate) fn string_with_capacity<G: Globals>(g: G, len: usize) -> VmResult<Vec<u8>> {
    if len <= SMALL_STRING {
        return Ok(Vec::with_capacity(len));
    }
    large_string(g, len)
}

#[cold]
fn large_string<G: Globals>(g: G, len: usize) -> VmResult<Vec<u8>> {
    reserve(g, string_bytes(len))?;
    let mut out = Vec::new();
    if out.try_reserve_exact(len).is_err() {
        return out_of_memory(string_bytes(len));
    }
    Ok(out)
}

/// Makes room for `more` bytes at the end of `buf` (a string growing by
/// a size the script chose: a string offset past the end, a padding),
/// checked as PHP checks the string it would reallocate.
pub(crate) fn grow_string<G: Globals>(g: G, buf: &mut Vec<u8>, more: usize) -> VmResult<()> {
    let Some(len) = buf.len().checked_add(more) else {
        return out_of_memory(usize::MAX);
    };
    if len > buf.capacity() {
        reserve(g, string_bytes(len))?;
        if buf.try_reserve_exact(more).is_err() {
            return out_of_memory(string_bytes(len));
        }
    }
    Ok(())
}

/// An empty vector with room for `n` values; an allocation the system
/// refuses is PHP's "Out of memory" fatal error, not an abort.
pub(crate) fn values_with_capacity(n: usize) -> VmResult<Vec<Value>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        return out_of_memory(n.saturating_mul(std::mem::size_of::<Value>()));
    }
    Ok(v)
}

/// PHP's fatal error when the system refuses memory.
#[cold]
pub(crate) fn out_of_memory<T>(tried: usize) -> VmResult<T> {
    fatal(format!(
        "Out of memory (allocated {}) (tried to allocate {tried} bytes)",
        memory::usage()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_sized_as_php_sizes_them() {
        // str_repeat("x", 200000000): PHP's message says 200000032.
        assert_eq!(string_bytes(200_000_000), 200_000_032);
        assert_eq!(string_bytes(10), 40);
        // range(1, 100000000): 2147483656.
        assert_eq!(packed_bytes(100_000_000), 2_147_483_656);
        assert_eq!(packed_bytes(0), 136);
        // A large block is whole pages.
        assert_eq!(string_bytes(5000), 8192);
        assert_eq!(php_block(u128::MAX), usize::MAX);
    }
}
