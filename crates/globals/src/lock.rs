//! The lock that guards the resource manager's shared tables (PHP's
//! `tsmm_mutex`) and, later, other process-wide engine state. Its kind is
//! chosen once per process, so the threaded runner can measure how each
//! behaves under contention (seed 003):
//!
//! - `std`: the standard library's mutex (futex-based: it parks at once
//!   when contended, after a very short spin);
//! - `spin`: a test-and-test-and-set spinlock that never sleeps;
//! - `adaptive`: glibc's `PTHREAD_MUTEX_ADAPTIVE_NP` shape: try the lock a
//!   bounded number of times, spinning in between, then block;
//! - `pthread`: glibc's default `pthread_mutex_t` (a futex lock that never
//!   spins), which valgrind's helgrind and drd understand: the kind to run
//!   them with (`scripts/threads-helgrind.sh`).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Which lock to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    Std,
    Spin,
    Adaptive,
    Pthread,
}

impl LockKind {
    pub const ALL: [LockKind; 4] = [LockKind::Std, LockKind::Spin, LockKind::Adaptive, LockKind::Pthread];

    pub fn name(self) -> &'static str {
        match self {
            LockKind::Std => "std",
            LockKind::Spin => "spin",
            LockKind::Adaptive => "adaptive",
            LockKind::Pthread => "pthread",
        }
    }

    pub fn parse(s: &str) -> Option<LockKind> {
        LockKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// How many times the adaptive lock tries before it blocks (glibc's
/// `max_adaptive_count` defaults to 100).
const ADAPTIVE_TRIES: u32 = 100;

/// A lock of a kind chosen at run time.
pub struct Lock {
    kind: LockKind,
    mutex: Mutex<()>,
    spin: AtomicBool,
    /// Boxed: a pthread mutex must not move once used.
    pthread: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: the pthread mutex is only used through pthread_mutex_lock and
// pthread_mutex_unlock, which are thread-safe; the other fields are Sync.
unsafe impl Sync for Lock {}
// SAFETY: as above; a pthread mutex may be used from any thread.
unsafe impl Send for Lock {}

/// Holds a [`Lock`] until dropped.
pub struct LockGuard<'a> {
    lock: &'a Lock,
    _mutex: Option<MutexGuard<'a, ()>>,
}

impl Lock {
    pub fn new(kind: LockKind) -> Lock {
        Lock {
            kind,
            mutex: Mutex::new(()),
            spin: AtomicBool::new(false),
            pthread: Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)),
        }
    }

    pub fn kind(&self) -> LockKind {
        self.kind
    }

    pub fn lock(&self) -> LockGuard<'_> {
        let mutex = match self.kind {
            LockKind::Std => Some(self.mutex.lock().unwrap_or_else(|e| e.into_inner())),
            LockKind::Spin => {
                loop {
                    if !self.spin.swap(true, Ordering::Acquire) {
                        break;
                    }
                    // Wait until it looks free before trying again, so the
                    // waiting threads do not fight over the cache line.
                    while self.spin.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                }
                None
            }
            LockKind::Adaptive => {
                let mut got = None;
                for i in 0..ADAPTIVE_TRIES {
                    match self.mutex.try_lock() {
                        Ok(g) => {
                            got = Some(g);
                            break;
                        }
                        Err(std::sync::TryLockError::Poisoned(e)) => {
                            got = Some(e.into_inner());
                            break;
                        }
                        Err(std::sync::TryLockError::WouldBlock) => {
                            for _ in 0..(1 << (i.min(6))) {
                                std::hint::spin_loop();
                            }
                        }
                    }
                }
                Some(got.unwrap_or_else(|| self.mutex.lock().unwrap_or_else(|e| e.into_inner())))
            }
            LockKind::Pthread => {
                // SAFETY: an initialised mutex at a stable address; this
                // thread does not hold it (locks are not re-entered).
                let r = unsafe { libc::pthread_mutex_lock(self.pthread.get()) };
                assert_eq!(r, 0, "pthread_mutex_lock failed");
                None
            }
        };
        LockGuard {
            lock: self,
            _mutex: mutex,
        }
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        match self.lock.kind {
            LockKind::Spin => self.lock.spin.store(false, Ordering::Release),
            // SAFETY: this guard's thread locked it.
            LockKind::Pthread => unsafe {
                libc::pthread_mutex_unlock(self.lock.pthread.get());
            },
            LockKind::Std | LockKind::Adaptive => {}
        }
        // The mutex guard, if any, unlocks itself.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_kind_excludes() {
        // Fewer rounds under Miri, which interprets every one.
        let rounds = if cfg!(miri) { 50 } else { 2000 };
        for kind in LockKind::ALL {
            let lock = Arc::new(Lock::new(kind));
            let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let inside = Arc::new(AtomicBool::new(false));
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let (lock, counter, inside) = (lock.clone(), counter.clone(), inside.clone());
                    std::thread::spawn(move || {
                        for _ in 0..rounds {
                            let _g = lock.lock();
                            assert!(!inside.swap(true, Ordering::SeqCst), "{kind:?} let two threads in");
                            counter.fetch_add(1, Ordering::Relaxed);
                            inside.store(false, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(counter.load(Ordering::Relaxed), 4 * rounds);
        }
    }

    #[test]
    fn names_round_trip() {
        for kind in LockKind::ALL {
            assert_eq!(LockKind::parse(kind.name()), Some(kind));
        }
        assert_eq!(LockKind::parse("nope"), None);
    }
}
