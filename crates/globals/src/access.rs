//! The borrows `eg!` and `cg!` hand out, and the rules the types enforce.
//!
//! `eg!(g)` expands to `EgAccess::new(g).get()`: a guard made as a
//! temporary, and a `&mut ExecutorGlobals` borrowed from that temporary.
//! A temporary lives until the end of the statement that made it, so the
//! reference cannot outlive the statement: `eg!(g).field = v;` and
//! `eg!(g).method()` compile, `let eg = eg!(g);` followed by a later use
//! of `eg` does not (E0716, "temporary value dropped while borrowed").
//! Code that needs several accesses in a row takes the closure form,
//! `eg!(g, |eg| …)` ([`with_eg`]), whose reference cannot leave the
//! closure.
//!
//! What the types cannot see is two guards alive in one statement (or
//! one held by a `match`/`if let` scrutinee across its arms) while a call
//! inside reaches EG again. Debug builds catch that: each guard claims a
//! per-thread flag and gives it back when dropped, and a second claim
//! while the first is alive panics, naming the borrow. Release builds
//! carry no flag and no drop, so an access compiles to exactly the
//! strategy's pointer and a dereference. The rule for code is therefore:
//! one `eg!` per statement, read what a call needs into a local before
//! the call, and never hold a scrutinee borrow across code that reaches
//! EG.

use crate::{CompilerGlobals, ExecutorGlobals, Globals};

#[cfg(debug_assertions)]
mod flag {
    use std::cell::Cell;

    thread_local! {
        pub static EG: Cell<bool> = const { Cell::new(false) };
        pub static CG: Cell<bool> = const { Cell::new(false) };
    }

    #[cold]
    #[inline(never)]
    fn overlap(what: &str) -> ! {
        panic!(
            "{what}: the globals are already borrowed on this thread by a borrow that is still alive \
             (two in one statement, a `match`/`if let` scrutinee held across its arms, or a borrow held \
             across a call that reaches them again): read what is needed into a local first"
        )
    }

    #[inline]
    pub fn claim(flag: &'static std::thread::LocalKey<Cell<bool>>, what: &str) {
        if flag.with(|f| f.replace(true)) {
            overlap(what);
        }
    }

    #[inline]
    pub fn release(flag: &'static std::thread::LocalKey<Cell<bool>>) {
        flag.with(|f| f.set(false));
    }
}

/// The guard behind `eg!`: one borrow of this thread's executor globals.
/// Use it through `eg!`, which keeps it a temporary.
#[must_use]
pub struct EgAccess {
    ptr: *mut ExecutorGlobals,
}

impl EgAccess {
    /// Starts a borrow of `g`'s executor globals.
    ///
    /// # Safety
    /// No other reference to the executor globals may be used while the
    /// guard's reference is alive. `eg!` upholds the lifetime half by
    /// making the guard a temporary; a named guard (`let mut a =
    /// unsafe { EgAccess::new(g) }; let eg = a.get();`, for a hot path
    /// that cannot take a closure) makes its caller promise that nothing
    /// until the guard drops reaches EG another way. Debug builds check
    /// both at run time.
    #[inline(always)]
    pub unsafe fn new<G: Globals>(g: G) -> EgAccess {
        #[cfg(debug_assertions)]
        flag::claim(&flag::EG, "eg!");
        EgAccess { ptr: g.eg_ptr() }
    }

    /// The executor globals, for as long as the guard is borrowed.
    #[inline(always)]
    pub fn get(&mut self) -> &mut ExecutorGlobals {
        // SAFETY: the pointer is to this thread's live executor globals
        // (the `Globals` contract: handles exist only between startup and
        // shutdown and cannot leave their thread), and the reference is
        // tied to `&mut self`, so it ends before the guard does; `new`'s
        // caller promised no other reference is used meanwhile.
        unsafe { &mut *self.ptr }
    }
}

#[cfg(debug_assertions)]
impl Drop for EgAccess {
    #[inline]
    fn drop(&mut self) {
        flag::release(&flag::EG);
    }
}

/// The guard behind `cg!` (the compiler globals' [`EgAccess`]).
#[must_use]
pub struct CgAccess {
    ptr: *mut CompilerGlobals,
}

impl CgAccess {
    /// Starts a borrow of `g`'s compiler globals.
    ///
    /// # Safety
    /// As for [`EgAccess::new`], for the compiler globals.
    #[inline(always)]
    pub unsafe fn new<G: Globals>(g: G) -> CgAccess {
        #[cfg(debug_assertions)]
        flag::claim(&flag::CG, "cg!");
        CgAccess { ptr: g.cg_ptr() }
    }

    /// The compiler globals, for as long as the guard is borrowed.
    #[inline(always)]
    pub fn get(&mut self) -> &mut CompilerGlobals {
        // SAFETY: as in `EgAccess::get`, for the compiler globals.
        unsafe { &mut *self.ptr }
    }
}

#[cfg(debug_assertions)]
impl Drop for CgAccess {
    #[inline]
    fn drop(&mut self) {
        flag::release(&flag::CG);
    }
}

/// Runs `f` with this thread's executor globals (`eg!(g, f)`): for code
/// that needs several accesses together. The reference cannot leave `f`;
/// `f` must not reach EG through `g` again (debug builds panic if it
/// does).
#[inline(always)]
pub fn with_eg<G: Globals, R>(g: G, f: impl FnOnce(&mut ExecutorGlobals) -> R) -> R {
    // SAFETY: the guard lives for this call only and its reference is
    // handed to `f` alone, which cannot keep it (its lifetime is the
    // call's); debug builds check that `f` does not borrow EG again.
    let mut access = unsafe { EgAccess::new(g) };
    f(access.get())
}

/// Runs `f` with this thread's compiler globals (`cg!(g, f)`), as
/// [`with_eg`] does for the executor globals.
#[inline(always)]
pub fn with_cg<G: Globals, R>(g: G, f: impl FnOnce(&mut CompilerGlobals) -> R) -> R {
    // SAFETY: as in `with_eg`.
    let mut access = unsafe { CgAccess::new(g) };
    f(access.get())
}

#[cfg(test)]
mod tests {
    use crate::strategies::Tls;
    use crate::{cg, eg, with_cg, with_eg, Globals};

    fn on_engine_thread(f: fn(Tls)) {
        std::thread::spawn(move || {
            let g = Tls::thread_startup().unwrap();
            f(g);
            // SAFETY: `g` is not used after this.
            unsafe { g.thread_shutdown() };
        })
        .join()
        .unwrap();
    }

    #[test]
    fn statement_and_closure_forms_reach_the_same_globals() {
        on_engine_thread(|g| {
            eg!(g).exit_status = 3;
            let seen = eg!(g, |eg| {
                eg.exit_status += 1;
                eg.exit_status
            });
            assert_eq!(seen, 4);
            assert_eq!(with_eg(g, |eg| eg.exit_status), 4);
            cg!(g).cache_slots = 2;
            cg!(g, |cg| cg.cache_slots += 1);
            assert_eq!(with_cg(g, |cg| cg.cache_slots), 3);
            // EG and CG are separate structs: one borrow of each at once
            // is fine.
            with_eg(g, |eg| eg.exit_status = cg!(g).cache_slots as i32);
            assert_eq!(eg!(g).exit_status, 3);
        });
    }

    /// Debug builds refuse a second EG borrow while one is alive, and the
    /// flag is free again once the first ends (also when it ends by a
    /// panic).
    #[test]
    #[cfg(debug_assertions)]
    fn overlapping_borrows_panic_in_debug_builds() {
        on_engine_thread(|g| {
            let nested = std::panic::catch_unwind(|| with_eg(g, |_| eg!(g).exit_status));
            let msg = nested.unwrap_err();
            let msg = msg.downcast_ref::<String>().expect("a message");
            assert!(msg.starts_with("eg!: the globals are already borrowed"), "{msg}");
            // Two in one statement: the first guard lives to the end of it.
            let two = std::panic::catch_unwind(|| eg!(g).exit_status + eg!(g).exit_status);
            assert!(two.is_err());
            let cg_twice = std::panic::catch_unwind(|| with_cg(g, |_| cg!(g).cache_slots));
            assert!(cg_twice.is_err());
            // Released by the unwinding: borrows work again.
            eg!(g).exit_status = 9;
            assert_eq!(eg!(g).exit_status, 9);
            assert_eq!(cg!(g).cache_slots, 0);
        });
    }
}
