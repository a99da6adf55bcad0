//! `foreach` by reference (`FE_RESET_RW` / `FE_FETCH_RW`).
//!
//! The loop reaches its array through a reference, so it sees changes made
//! to the variable during the loop, and registers its place with the array
//! it iterates ([`IterPos`], PHP's `HashTableIterator`): the array moves
//! that place when it moves or removes slots (unset, compaction, packed to
//! hash, `array_shift`, `array_unshift`, `array_splice`, sorting). When the
//! variable no longer holds the array the loop registered with (it was
//! reassigned, or copied away from under the loop), the loop registers with
//! the new one at its first element, as `zend_hash_iterator_pos_ex` does.
//!
//! A foreach by value needs none of this: it holds its own count on the
//! array it started with and a bare position (`Value::IterVal`), handled
//! in the run loop.
//!
//! Over an object that is not `Traversable` the loop makes each visible
//! property a reference, in the order they had when it started.

use std::rc::Rc;

use minizts_core::array::IterPos;
use minizts_core::bytecode::Op;
use minizts_core::value::RefIter;
use minizts_core::{PhpRef, Value};
use minizts_globals::Globals;

use super::save_pc;
use crate::error::{warning, VmResult};

/// What the next step of a by-reference loop found.
pub(super) enum RefStep {
    /// The key and the element, made a reference.
    Element(Value, PhpRef),
    End,
    /// The variable no longer holds an array (its type name).
    NotArray(&'static str),
    /// A property could not be made a reference.
    Error(Box<crate::error::VmError>),
}

/// Checks a by-reference foreach subject; false (after PHP's warning for a
/// non-array) means there is nothing to iterate.
pub(super) fn start_ref_iteration<G: Globals>(g: G, at: *const Op, r: &PhpRef) -> VmResult<bool> {
    let inner = r.borrow();
    match &*inner {
        Value::Arr(a) => Ok(!a.is_empty()),
        // (A user `Iterator`'s values are no variables; the builtin
        // iterators' by-reference loops minizts does not have.)
        Value::Obj(o) if crate::objects::implements(o, b"Iterator") && !crate::class::is_builtin(&o.class) => {
            drop(inner);
            save_pc(g, at);
            crate::error::error("An iterator cannot be used with foreach by reference")
        }
        Value::Obj(o) if !crate::objects::implements(o, b"Traversable") => {
            let o = o.clone();
            drop(inner);
            Ok(!crate::objects::props_array(g, &o, crate::objects::scope(g).as_ref()).is_empty())
        }
        other => {
            let t = other.type_name();
            drop(inner);
            not_an_array(g, at, t);
            Ok(false)
        }
    }
}

/// The loop's state over the array in `r`; it registers at the first step.
pub(super) fn ref_iter(r: PhpRef) -> Value {
    Value::IterRef(Box::new(RefIter {
        array: r,
        pos: None,
        props: None,
    }))
}

/// The next property of a by-reference foreach over object `o`: the
/// first visible one the loop has not given yet, so that properties added
/// meanwhile are seen, as PHP's loop over the property table sees them.
fn next_property<G: Globals>(g: G, state: &mut RefIter, o: &minizts_core::Obj) -> RefStep {
    let given = state.props.get_or_insert_with(Vec::new);
    let props = crate::objects::props_array(g, o, crate::objects::scope(g).as_ref());
    let Some(key) = props
        .iter()
        .map(|(k, _)| k.to_value())
        .find(|k| !given.iter().any(|seen| same_key(seen, k)))
    else {
        return RefStep::End;
    };
    given.push(key.clone());
    let name = match &key {
        Value::Str(s) => s.clone(),
        other => minizts_core::PhpStr::from(other.to_int().to_string().as_bytes()),
    };
    match crate::objects::foreach_ref(g, o, &name) {
        Ok(r) => RefStep::Element(key, r),
        Err(e) => RefStep::Error(e),
    }
}

/// PHP's warning for a foreach over something that is not an array.
pub(super) fn not_an_array<G: Globals>(g: G, at: *const Op, type_name: &str) {
    save_pc(g, at);
    warning(
        g,
        &format!("foreach() argument must be of type array|object, {type_name} given"),
    );
}

/// Whether two property names (array keys as values) are the same.
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x.as_bytes() == y.as_bytes(),
        _ => false,
    }
}

/// The next element of a by-reference foreach, made a reference.
pub(super) fn next_ref_element<G: Globals>(g: G, state: &mut RefIter) -> RefStep {
    let object = match &*state.array.borrow() {
        Value::Obj(o) => Some(o.clone()),
        _ => None,
    };
    if let Some(o) = object {
        return next_property(g, state, &o);
    }
    let Ok(mut inner) = state.array.try_borrow_mut() else {
        return RefStep::End;
    };
    let Value::Arr(rc) = &mut *inner else {
        return RefStep::NotArray(inner.type_name());
    };
    let registered = state.pos.as_ref().is_some_and(|p| rc.has_iterator(p));
    if registered && rc.at_or_after(state.pos.as_ref().map_or(0, IterPos::get)).is_none() {
        return RefStep::End;
    }
    if Rc::get_mut(rc).is_none() {
        // The element becomes a reference, so the array is separated; the
        // loops registered with it go along (PHP's would stay on the one
        // array, which PHP does not separate here). A loop new to this
        // array separates it in any case, as PHP's does.
        let mut copy = (**rc).clone();
        if registered {
            rc.move_iterators_to(&mut copy);
        }
        *rc = Rc::new(copy);
    }
    let Some(arr) = Rc::get_mut(rc) else {
        return RefStep::End;
    };
    let pos: IterPos = match &state.pos {
        Some(p) if registered => p.clone(),
        _ => {
            let p = arr.add_iterator(0);
            state.pos = Some(p.clone());
            p
        }
    };
    let Some((i, k, _)) = arr.at_or_after(pos.get()) else {
        return RefStep::End;
    };
    let key = k.to_value();
    pos.set(i + 1);
    match arr.value_at_mut(i) {
        Some(slot) => RefStep::Element(key, crate::gc::slot_ref(g, slot)),
        None => RefStep::End,
    }
}
