//! The time limit: one watchdog thread per process sets a running
//! request's interrupt flag when its `max_execution_time` expires; the VM
//! notices at its next backward jump or call and ends the request with
//! PHP's "Maximum execution time … exceeded" fatal error.
//!
//! The flag lives in the request thread's executor globals. The watchdog
//! holds a raw pointer to it, used only under the watchdog's lock and only
//! while the timer is armed; the request disarms the timer (taking the
//! same lock) before its globals can go away.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use minizts_globals::executor::Interrupt;

struct FlagPtr(*const Interrupt);

// SAFETY: the pointer is only dereferenced by the watchdog thread under
// `Watchdog::entries`' lock while its entry exists, and the owner removes
// the entry (under the same lock) before the flag is freed (`disarm`).
unsafe impl Send for FlagPtr {}

struct Entry {
    id: u64,
    deadline: Instant,
    flag: FlagPtr,
}

struct Watchdog {
    entries: Mutex<Vec<Entry>>,
    wake: Condvar,
    next_id: AtomicU64,
}

fn watchdog() -> &'static Watchdog {
    static WATCHDOG: OnceLock<&'static Watchdog> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog {
            entries: Mutex::new(Vec::new()),
            wake: Condvar::new(),
            next_id: AtomicU64::new(1),
        }));
        std::thread::Builder::new()
            .name("minizts-timer".into())
            .spawn(move || run(w))
            .expect("start the timer thread");
        w
    })
}

fn run(w: &'static Watchdog) {
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        entries.retain(|e| {
            if e.deadline <= now {
                // SAFETY: see `FlagPtr`: armed entries point at live flags.
                unsafe { (*e.flag.0).time_out() };
                false
            } else {
                true
            }
        });
        let next = entries.iter().map(|e| e.deadline).min();
        entries = match next {
            Some(deadline) => {
                let wait = deadline.saturating_duration_since(Instant::now());
                w.wake.wait_timeout(entries, wait).unwrap_or_else(|e| e.into_inner()).0
            }
            None => w.wake.wait(entries).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// An armed time limit; disarm it before the flag goes away.
#[must_use]
pub struct Timer(u64);

/// Sets `flag` after `after` unless disarmed first.
///
/// # Safety
/// `flag` must stay valid until [`disarm`] is called with the returned
/// timer.
pub unsafe fn arm(flag: &Interrupt, after: Duration) -> Timer {
    let w = watchdog();
    let id = w.next_id.fetch_add(1, Ordering::Relaxed);
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    entries.push(Entry {
        id,
        deadline: Instant::now() + after,
        flag: FlagPtr(flag),
    });
    w.wake.notify_one();
    Timer(id)
}

/// Cancels a timer (no effect if it already fired).
pub fn disarm(timer: Timer) {
    let w = watchdog();
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    entries.retain(|e| e.id != timer.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_after_the_deadline_and_not_after_disarm() {
        let fired = Box::new(Interrupt::default());
        let kept = Box::new(Interrupt::default());
        // SAFETY: both flags outlive their timers (disarmed below).
        let t1 = unsafe { arm(&fired, Duration::from_millis(20)) };
        let t2 = unsafe { arm(&kept, Duration::from_millis(20)) };
        disarm(t2);
        let start = Instant::now();
        while !fired.pending.load(Ordering::Relaxed) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(fired.timed_out.load(Ordering::Relaxed));
        std::thread::sleep(Duration::from_millis(40));
        assert!(!kept.pending.load(Ordering::Relaxed));
        disarm(t1);
    }
}
