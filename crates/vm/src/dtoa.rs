//! Where float formatting gets its decimal digits (`--dtoa`), the three
//! designs php-src went through (seed 000, php-src #13974):
//!
//! - `shared`: big-integer arithmetic whose buffers come from one
//!   process-wide freelist, taken under a lock at every `Balloc` and
//!   `Bfree` (PHP ≤ 8.3's `zend_strtod.c` with its `ACQUIRE_DTOA_LOCK`);
//! - `per-thread`: the same arithmetic with the freelist in EG (PHP 8.4);
//! - `stateless`: an allocation-free shortest round-trip generator (what
//!   the review of #13974 suggested), the default.
//!
//! All three print the same digits (`minizts_core::numfmt::bigdtoa`'s
//! tests compare them on random doubles). The choice is process-wide and
//! made before any engine starts.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use minizts_core::numfmt::bigdtoa::{BigDtoa, Bigint, Freelist, Pool};
use minizts_core::numfmt::{DigitSource, Stateless};
use minizts_globals::lock::Lock;
use minizts_globals::{eg, Globals};

/// The `--dtoa` choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DtoaMode {
    Shared,
    PerThread,
    Stateless,
}

impl DtoaMode {
    pub const ALL: [DtoaMode; 3] = [DtoaMode::Shared, DtoaMode::PerThread, DtoaMode::Stateless];

    pub fn name(self) -> &'static str {
        match self {
            DtoaMode::Shared => "shared",
            DtoaMode::PerThread => "per-thread",
            DtoaMode::Stateless => "stateless",
        }
    }

    pub fn parse(s: &str) -> Option<DtoaMode> {
        DtoaMode::ALL.into_iter().find(|m| m.name() == s)
    }
}

static MODE: AtomicU8 = AtomicU8::new(DtoaMode::Stateless as u8);

/// Chooses the digit source for the process (before engines start).
pub fn set_mode(mode: DtoaMode) {
    MODE.store(mode as u8, Ordering::Relaxed);
}

pub fn mode() -> DtoaMode {
    match MODE.load(Ordering::Relaxed) {
        m if m == DtoaMode::Shared as u8 => DtoaMode::Shared,
        m if m == DtoaMode::PerThread as u8 => DtoaMode::PerThread,
        _ => DtoaMode::Stateless,
    }
}

/// The process-wide freelist and its lock (of the `--lock` kind).
struct Shared {
    lock: Lock,
    list: UnsafeCell<Freelist>,
}

// SAFETY: `list` is only touched with `lock` held.
unsafe impl Sync for Shared {}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| Shared {
        lock: Lock::new(minizts_globals::resources::manager().lock_kind()),
        list: UnsafeCell::new(Freelist::new()),
    })
}

/// Buffers from the shared freelist, one lock round trip per call.
struct SharedPool(&'static Shared);

impl Pool for SharedPool {
    fn balloc(&mut self, k: usize) -> Bigint {
        let _guard = self.0.lock.lock();
        // SAFETY: the lock is held.
        unsafe { (*self.0.list.get()).balloc(k) }
    }

    fn bfree(&mut self, b: Bigint) {
        let _guard = self.0.lock.lock();
        // SAFETY: the lock is held.
        unsafe { (*self.0.list.get()).bfree(b) }
    }
}

/// Buffers from this thread's EG, found through the strategy at each call.
struct EgPool<G>(G);

impl<G: Globals> Pool for EgPool<G> {
    fn balloc(&mut self, k: usize) -> Bigint {
        eg!(self.0).dtoa_freelist.balloc(k)
    }

    fn bfree(&mut self, b: Bigint) {
        eg!(self.0).dtoa_freelist.bfree(b)
    }
}

/// Runs `f` with the digit source `--dtoa` chose.
#[inline]
pub fn with<G: Globals, R>(g: G, f: impl FnOnce(&mut dyn DigitSource) -> R) -> R {
    match mode() {
        DtoaMode::Stateless => f(&mut Stateless),
        DtoaMode::PerThread => f(&mut BigDtoa(EgPool(g))),
        DtoaMode::Shared => f(&mut BigDtoa(SharedPool(shared()))),
    }
}

/// The digit source `--dtoa` chose, for code that formats many floats
/// without a handle at hand (`var_dump`, `json_encode`). Boxing a
/// zero-sized source does not allocate.
pub fn source<G: Globals>(g: G) -> Box<dyn DigitSource> {
    match mode() {
        DtoaMode::Stateless => Box::new(Stateless),
        DtoaMode::PerThread => Box::new(BigDtoa(EgPool(g))),
        DtoaMode::Shared => Box::new(BigDtoa(SharedPool(shared()))),
    }
}
