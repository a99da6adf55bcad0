//! The time limit: one watchdog thread per process sets a running
//! request's interrupt flag when its `max_execution_time` expires; the VM
//! notices at its next backward jump or call (or a long builtin at its
//! next tick, `limits::Ticker`) and ends the request with PHP's "Maximum
//! execution time … exceeded" fatal error.
//!
//! PHP's hard timeout backs that up: a request that has not stopped
//! [`HARD_TIMEOUT`] after its flag was set (something that never reaches a
//! check) ends the process, as PHP's `zend_timeout_handler` does, with
//! "Maximum execution time of N+2 seconds exceeded (terminated)" and exit
//! status 124. In the threaded runner that ends every request, as it does
//! in PHP's thread-safe builds; the checks in the VM and the builtins are
//! there so that it never has to.
//!
//! The flag lives in the request thread's executor globals. The watchdog
//! holds a raw pointer to it, used only under the watchdog's lock and only
//! while the timer is armed; the request disarms the timer (taking the
//! same lock) before its globals can go away.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use minizts_globals::executor::Interrupt;

/// How long after the time limit a request that has not stopped ends the
/// process (PHP's `hard_timeout` default).
pub const HARD_TIMEOUT: Duration = Duration::from_secs(2);

struct FlagPtr(*const Interrupt);

// SAFETY: the pointer is only dereferenced by the watchdog thread under
// `Watchdog::entries`' lock while its entry exists, and the owner removes
// the entry (under the same lock) before the flag is freed (`disarm`).
unsafe impl Send for FlagPtr {}

struct Entry {
    id: u64,
    /// When the time limit expires (`None`: no limit now).
    deadline: Option<Instant>,
    /// The limit in seconds, for the messages.
    secs: u64,
    /// Once the limit has expired: when the hard timeout does.
    hard: Option<Instant>,
    /// The running script, for the hard timeout's message.
    file: Box<str>,
    flag: FlagPtr,
}

impl Entry {
    fn next_event(&self) -> Option<Instant> {
        self.hard.or(self.deadline)
    }
}

struct Watchdog {
    entries: Mutex<Vec<Entry>>,
    wake: Condvar,
    next_id: AtomicU64,
}

/// The process's watchdog, started on first use (`None` if its thread
/// could not be started: then time limits are not enforced, said once).
fn watchdog() -> Option<&'static Watchdog> {
    static WATCHDOG: OnceLock<Option<&'static Watchdog>> = OnceLock::new();
    *WATCHDOG.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog {
            entries: Mutex::new(Vec::new()),
            wake: Condvar::new(),
            next_id: AtomicU64::new(1),
        }));
        match std::thread::Builder::new()
            .name("minizts-timer".into())
            .stack_size(256 * 1024)
            .spawn(move || run(w))
        {
            Ok(_) => Some(w),
            Err(e) => {
                eprintln!("minizts: cannot start the timer thread ({e}); max_execution_time is not enforced");
                None
            }
        }
    })
}

fn run(w: &'static Watchdog) {
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        for e in entries.iter_mut() {
            if e.hard.is_some_and(|h| h <= now) {
                // SAFETY: see `FlagPtr`: armed entries point at live flags.
                let line = unsafe { (*e.flag.0).line.load(Ordering::Relaxed) };
                terminate(e.secs, &e.file, line);
            }
            if e.deadline.is_some_and(|d| d <= now) {
                // SAFETY: as above.
                unsafe { (*e.flag.0).time_out() };
                e.deadline = None;
                e.hard = Some(now + HARD_TIMEOUT);
            }
        }
        let next = entries.iter().filter_map(Entry::next_event).min();
        entries = match next {
            Some(at) => {
                let wait = at.saturating_duration_since(Instant::now());
                w.wake.wait_timeout(entries, wait).unwrap_or_else(|e| e.into_inner()).0
            }
            None => w.wake.wait(entries).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// PHP's hard timeout: the message straight to stderr, and the process
/// ends at once (nothing else of it can be trusted to finish).
fn terminate(secs: u64, file: &str, line: u32) -> ! {
    let (file, line) = if line == 0 { ("Unknown", 0) } else { (file, line) };
    let msg = format!(
        "\nFatal error: Maximum execution time of {secs}+{} seconds exceeded (terminated) in {file} on line {line}\n",
        HARD_TIMEOUT.as_secs()
    );
    let _ = std::io::stderr().lock().write_all(msg.as_bytes());
    // SAFETY: `_exit` ends the process without running anything else,
    // which is the point: the request thread is stuck and holds engine
    // state.
    unsafe { libc::_exit(124) }
}

/// Watches `flag` for the request running `file`: it is set `after` from
/// now. Returns the timer's id (kept in `EG.time_limit`), or `None` if
/// there is no watchdog.
///
/// # Safety
/// `flag` must stay valid until [`disarm`] is called with the returned
/// id.
#[must_use]
pub unsafe fn arm(flag: &Interrupt, after: Duration, file: &str) -> Option<u64> {
    let w = watchdog()?;
    let id = w.next_id.fetch_add(1, Ordering::Relaxed);
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    entries.push(Entry {
        id,
        deadline: (!after.is_zero()).then(|| Instant::now() + after),
        secs: after.as_secs(),
        hard: None,
        file: file.into(),
        flag: FlagPtr(flag),
    });
    flag.watched.store(true, Ordering::Relaxed);
    w.wake.notify_one();
    Some(id)
}

/// Restarts timer `id` (PHP's `set_time_limit` and
/// `ini_set('max_execution_time')`): its flag is set `after` from now,
/// never when `after` is zero.
pub fn rearm(id: u64, after: Duration) {
    let Some(w) = watchdog() else { return };
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = entries.iter_mut().find(|e| e.id == id) {
        e.deadline = (!after.is_zero()).then(|| Instant::now() + after);
        e.secs = after.as_secs();
        e.hard = None;
        // SAFETY: see `FlagPtr`: armed entries point at live flags.
        unsafe { (*e.flag.0).watched.store(!after.is_zero(), Ordering::Relaxed) };
        w.wake.notify_one();
    }
}

/// Cancels timer `id` (no effect if it already fired).
pub fn disarm(id: u64) {
    let Some(w) = watchdog() else { return };
    let mut entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
    entries.retain(|e| e.id != id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_after_the_deadline_and_not_after_disarm() {
        let fired = Box::new(Interrupt::default());
        let kept = Box::new(Interrupt::default());
        // SAFETY: both flags outlive their timers (disarmed below).
        let t1 = unsafe { arm(&fired, Duration::from_millis(20), "t.php") }.unwrap();
        // SAFETY: as above.
        let t2 = unsafe { arm(&kept, Duration::from_millis(20), "t.php") }.unwrap();
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

    #[test]
    fn rearm_sets_and_clears_the_limit() {
        let flag = Box::new(Interrupt::default());
        // SAFETY: the flag outlives its timer (disarmed below).
        let t = unsafe { arm(&flag, Duration::from_millis(10), "t.php") }.unwrap();
        rearm(t, Duration::ZERO);
        assert!(!flag.watched.load(Ordering::Relaxed));
        std::thread::sleep(Duration::from_millis(30));
        assert!(!flag.pending.load(Ordering::Relaxed));
        rearm(t, Duration::from_secs(3600));
        assert!(flag.watched.load(Ordering::Relaxed));
        rearm(t, Duration::from_millis(10));
        let start = Instant::now();
        while !flag.pending.load(Ordering::Relaxed) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(flag.timed_out.load(Ordering::Relaxed));
        disarm(t);
    }
}
