//! The VM's side of cycle collection (`core::gc`): references are made
//! here, known to the request's collector in EG, and a collection that
//! becomes due runs at the VM's next interrupt check, where no slot is
//! borrowed.

use std::sync::atomic::Ordering;

use minizts_core::{PhpRef, Value};
use minizts_globals::{eg, Globals};

/// A new reference holding `v` (every reference the VM makes comes from
/// here or [`slot_ref`]).
#[inline]
pub(crate) fn new_ref<G: Globals>(g: G, v: Value) -> PhpRef {
    eg!(g, |eg| {
        let r = PhpRef::new(v, &mut eg.gc);
        if eg.gc.due() {
            eg.interrupt.pending.store(true, Ordering::Relaxed);
        }
        r
    })
}

/// Makes a slot a reference if it is not one; returns the reference.
pub(crate) fn slot_ref<G: Globals>(g: G, slot: &mut Value) -> PhpRef {
    if let Value::Ref(r) = slot {
        return r.clone();
    }
    let v = match std::mem::take(slot) {
        Value::Undef => Value::Null,
        v => v,
    };
    let r = new_ref(g, v);
    *slot = Value::Ref(r.clone());
    r
}

/// Runs a due automatic collection (from the interrupt check).
#[cold]
pub(crate) fn collect_if_due<G: Globals>(g: G) {
    eg!(g, |eg| {
        if eg.gc.due() {
            // Freeing the garbage runs only drops, never script code.
            eg.gc.collect_due();
        }
    })
}

/// Runs a collection; returns what `gc_collect_cycles()` returns.
pub(crate) fn collect<G: Globals>(g: G) -> usize {
    // Freeing the garbage runs only drops, never script code.
    eg!(g).gc.collect()
}
