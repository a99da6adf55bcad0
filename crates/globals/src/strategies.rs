//! The ways to reach this thread's EG and CG, one type each (see
//! docs/globals.md for what each compiles to and costs).

use std::marker::PhantomData;

mod counted;
mod ctx;
mod fetch;
mod nts;
mod offset;
mod table;
mod tls;

pub use counted::{access_counts, count_general_path, general_path_counts, reset_access_counts, Counted};
pub use ctx::Ctx;
pub use fetch::Fetch;
pub use nts::Nts;
pub use offset::Offset;
pub use table::Table;
pub use tls::Tls;

/// Makes a handle neither `Send` nor `Sync`, and keeps its field private so
/// that only a strategy's `thread_startup` can make one.
///
/// A handle reaches the globals of the thread it is used on (a
/// thread-local, a key, a cache), or carries a pointer to one thread's
/// table, so a handle moved or shared to another thread would reach that
/// thread's globals, which may not exist. With this marker the compiler
/// refuses both; each worker thread starts its own handle. For every
/// strategy:
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Tls::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Tls>();
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Nts::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Nts>();
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Ctx::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Ctx>();
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Fetch::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Fetch>();
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Table::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Table>();
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Offset::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Offset>();
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::{strategies::*, Globals};
/// let h = Counted::<Tls>::thread_startup().unwrap();
/// std::thread::spawn(move || h);
/// ```
///
/// ```compile_fail,E0277
/// use minizts_globals::strategies::*;
/// fn shared<T: Sync>() {}
/// shared::<Counted<Tls>>();
/// ```
///
/// while the same handle is fine on its own thread:
///
/// ```
/// use minizts_globals::{strategies::*, Globals};
/// std::thread::spawn(|| {
///     let h = Counted::<Tls>::thread_startup().unwrap();
///     // SAFETY: `h` is not used after this.
///     unsafe { h.thread_shutdown() };
/// })
/// .join()
/// .unwrap();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ThreadBound(PhantomData<*const ()>);

impl ThreadBound {
    #[inline(always)]
    pub(crate) const fn new() -> ThreadBound {
        ThreadBound(PhantomData)
    }
}

/// Every strategy's `--globals` name and one-line description, in the
/// order the docs discuss them.
pub const ALL: [(&str, &str); 6] = [
    (<Nts as crate::Globals>::NAME, <Nts as crate::Globals>::DESCRIPTION),
    (<Ctx as crate::Globals>::NAME, <Ctx as crate::Globals>::DESCRIPTION),
    (<Fetch as crate::Globals>::NAME, <Fetch as crate::Globals>::DESCRIPTION),
    (<Table as crate::Globals>::NAME, <Table as crate::Globals>::DESCRIPTION),
    (
        <Offset as crate::Globals>::NAME,
        <Offset as crate::Globals>::DESCRIPTION,
    ),
    (<Tls as crate::Globals>::NAME, <Tls as crate::Globals>::DESCRIPTION),
];

/// The default strategy's name.
pub const DEFAULT: &str = "tls";

/// Calls `$body` with `$G` bound to the strategy type named `$name`
/// (a `&str`); evaluates to `Some(result)`, or `None` for an unknown name.
#[macro_export]
macro_rules! with_strategy {
    ($name:expr, |$G:ident| $body:expr) => {{
        use $crate::strategies::*;
        match $name {
            "nts" => {
                type $G = Nts;
                Some($body)
            }
            "ctx" => {
                type $G = Ctx;
                Some($body)
            }
            "fetch" => {
                type $G = Fetch;
                Some($body)
            }
            "table" => {
                type $G = Table;
                Some($body)
            }
            "offset" => {
                type $G = Offset;
                Some($body)
            }
            "tls" => {
                type $G = Tls;
                Some($body)
            }
            _ => None,
        }
    }};
}

// A test's unsafe block states one invariant for the steps it groups.
#[cfg(test)]
#[allow(clippy::multiple_unsafe_ops_per_block)]
mod tests {
    use super::*;
    use crate::{cg, eg, Globals, StartupError};

    /// Startup gives fresh globals that reads and writes reach, and a new
    /// start after shutdown gets fresh ones again.
    fn round_trip<G: Globals>() {
        let g = G::thread_startup().unwrap();
        assert_eq!(eg!(g).exit_status, 0);
        eg!(g).exit_status = 7;
        cg!(g).cache_slots = 9;
        assert_eq!(eg!(g).exit_status, 7);
        assert_eq!(cg!(g).cache_slots, 9);
        // SAFETY: `g` is not used after this.
        unsafe { g.thread_shutdown() };
        let g = G::thread_startup().unwrap();
        assert_eq!(eg!(g).exit_status, 0);
        assert_eq!(cg!(g).cache_slots, 0);
        // SAFETY: as above.
        unsafe { g.thread_shutdown() };
    }

    /// Two threads running at once each see their own globals.
    fn threads_are_separate<G: Globals>() {
        let g = G::thread_startup().unwrap();
        eg!(g).exit_status = 1;
        let (tx, rx) = std::sync::mpsc::channel();
        let other = std::thread::spawn(move || {
            let h = G::thread_startup().unwrap();
            let fresh = eg!(h).exit_status;
            eg!(h).exit_status = 2;
            // Wait for the main thread's check, so both engines are live.
            rx.recv().unwrap();
            let kept = eg!(h).exit_status;
            // SAFETY: `h` is not used after this.
            unsafe { h.thread_shutdown() };
            (fresh, kept)
        });
        assert_eq!(eg!(g).exit_status, 1);
        tx.send(()).unwrap();
        assert_eq!(other.join().unwrap(), (0, 2));
        assert_eq!(eg!(g).exit_status, 1);
        // SAFETY: `g` is not used after this.
        unsafe { g.thread_shutdown() };
    }

    /// Strategies with per-thread storage refuse a second start on one
    /// thread.
    fn second_start_refused<G: Globals>() {
        let g = G::thread_startup().unwrap();
        assert_eq!(G::thread_startup().err(), Some(StartupError::AlreadyStarted));
        // SAFETY: `g` is not used after this.
        unsafe { g.thread_shutdown() };
    }

    // Each strategy's test runs on a thread of its own, so the per-thread
    // strategies start clean whatever ran before on the test harness's
    // threads.
    fn on_new_thread(f: fn()) {
        std::thread::spawn(f).join().unwrap();
    }

    #[test]
    fn ctx() {
        on_new_thread(round_trip::<Ctx>);
        on_new_thread(threads_are_separate::<Ctx>);
        // A context pointer is not tied to a thread: one thread may run
        // several engines, as Perl's multiplicity allows.
        on_new_thread(|| {
            let a = Ctx::thread_startup().unwrap();
            let b = Ctx::thread_startup().unwrap();
            eg!(a).exit_status = 3;
            assert_eq!(eg!(b).exit_status, 0);
            // SAFETY: neither handle is used afterwards.
            unsafe {
                a.thread_shutdown();
                b.thread_shutdown();
            }
        });
    }

    #[test]
    fn fetch() {
        on_new_thread(round_trip::<Fetch>);
        on_new_thread(threads_are_separate::<Fetch>);
        on_new_thread(second_start_refused::<Fetch>);
    }

    #[test]
    fn table() {
        on_new_thread(round_trip::<Table>);
        on_new_thread(threads_are_separate::<Table>);
        on_new_thread(second_start_refused::<Table>);
    }

    #[test]
    fn offset() {
        on_new_thread(round_trip::<Offset>);
        on_new_thread(threads_are_separate::<Offset>);
        on_new_thread(second_start_refused::<Offset>);
    }

    #[test]
    fn tls() {
        on_new_thread(round_trip::<Tls>);
        on_new_thread(threads_are_separate::<Tls>);
        on_new_thread(second_start_refused::<Tls>);
    }

    /// `nts` (the only test here that uses it, since its statics are
    /// process-wide): one engine thread at a time, a second is refused
    /// with an error, and the slot is free again after shutdown.
    #[test]
    fn nts_allows_one_engine_thread() {
        on_new_thread(round_trip::<Nts>);
        let g = Nts::thread_startup().unwrap();
        eg!(g).exit_status = 5;
        let refused = std::thread::spawn(|| Nts::thread_startup().map(|_| ())).join().unwrap();
        assert_eq!(refused, Err(StartupError::SingleThreaded("nts")));
        assert_eq!(Nts::thread_startup().err(), Some(StartupError::SingleThreaded("nts")));
        assert_eq!(eg!(g).exit_status, 5);
        // SAFETY: `g` is not used after this.
        unsafe { g.thread_shutdown() };
        on_new_thread(|| {
            let g = Nts::thread_startup().unwrap();
            assert_eq!(eg!(g).exit_status, 0);
            // SAFETY: `g` is not used after this.
            unsafe { g.thread_shutdown() };
        });
    }

    /// `Counted` counts every access and changes nothing else.
    #[test]
    fn counted_counts() {
        on_new_thread(|| {
            let g = Counted::<Tls>::thread_startup().unwrap();
            reset_access_counts();
            eg!(g).exit_status = 1;
            let _ = eg!(g).exit_status;
            let _ = cg!(g).cache_slots;
            assert_eq!(access_counts(), (2, 1));
            // SAFETY: `g` is not used after this.
            unsafe { g.thread_shutdown() };
        });
    }

    #[test]
    fn names_are_unique_and_dispatch() {
        for (i, (name, _)) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|(n, _)| n != name));
            assert_eq!(crate::with_strategy!(*name, |G| <G as Globals>::NAME), Some(*name));
        }
        assert_eq!(crate::with_strategy!("nope", |G| <G as Globals>::NAME), None);
        assert!(ALL.iter().any(|(n, _)| *n == DEFAULT));
    }
}
