//! The array cursor functions: `current`/`pos`, `key`, `next`, `prev`,
//! `reset`, `end`, which read and move the array's internal pointer
//! (`PhpArray::cursor_*`). `current` and `key` take the array by value;
//! the others move the pointer of the array behind their reference.
//! On an object (deprecated since PHP 8.1) they move a pointer of the
//! object's own over its properties, keyed by their mangled names.

use minizts_core::array::KeyRef;
use minizts_core::{Key, Obj, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

/// The element's value, or `false` past the end (PHP's convention).
fn value_or_false(e: Option<(KeyRef<'_>, &Value)>) -> Value {
    e.map_or(Value::Bool(false), |(_, v)| v.deref_clone())
}

pub(super) fn current<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Some(o) = super::objprops::object_arg(a, 0) {
        return Ok(on_object(g, a, &o, Move::Stay, Want::Value));
    }
    let arr = a.array(0)?;
    Ok(value_or_false(arr.cursor_current()))
}

pub(super) fn key<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Some(o) = super::objprops::object_arg(a, 0) {
        return Ok(on_object(g, a, &o, Move::Stay, Want::Key));
    }
    let arr = a.array(0)?;
    Ok(arr.cursor_current().map_or(Value::Null, |(k, _)| k.to_value()))
}

pub(super) fn next<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Some(o) = super::objprops::object_arg(a, 0) {
        return Ok(on_object(g, a, &o, Move::Next, Want::Value));
    }
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_next()))
}

pub(super) fn prev<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Some(o) = super::objprops::object_arg(a, 0) {
        return Ok(on_object(g, a, &o, Move::Prev, Want::Value));
    }
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_prev()))
}

pub(super) fn reset<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Some(o) = super::objprops::object_arg(a, 0) {
        return Ok(on_object(g, a, &o, Move::First, Want::Value));
    }
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_reset()))
}

pub(super) fn end<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Some(o) = super::objprops::object_arg(a, 0) {
        return Ok(on_object(g, a, &o, Move::Last, Want::Value));
    }
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_end()))
}

/// Where a cursor function moves the pointer.
enum Move {
    Stay,
    Next,
    Prev,
    First,
    Last,
}

/// What a cursor function returns of the element it ends on.
enum Want {
    Value,
    Key,
}

/// An object's property pointer: an index into its declared slots, then
/// its dynamic properties, as PHP's pointer is a position in the
/// object's property table (left on a property that is unset, it reads
/// the next one there is).
struct PropertyPointer(usize);

/// A cursor function on object `o`.
fn on_object<G: Globals>(g: G, a: &Args, o: &Obj, how: Move, want: Want) -> Value {
    crate::error::deprecated(
        g,
        &format!("{}(): Calling {}() on an object is deprecated", a.name(), a.name()),
    );
    let table = properties(g, o);
    // (An object of a builtin class with native state keeps no pointer.)
    let stored = o
        .native
        .borrow()
        .as_ref()
        .map_or(Some(0), |n| n.downcast_ref::<PropertyPointer>().map(|p| p.0));
    let pos = stored.unwrap_or(0);
    let current = table.iter().position(|(at, _, _)| *at >= pos);
    let found = match how {
        Move::Stay => current,
        Move::Next => current.map(|i| i + 1).filter(|&i| i < table.len()),
        Move::Prev => current.and_then(|i| i.checked_sub(1)),
        Move::First => (!table.is_empty()).then_some(0),
        Move::Last => table.len().checked_sub(1),
    };
    if stored.is_some() && !matches!(how, Move::Stay) {
        // Past either end the pointer is nowhere, as PHP's is.
        let at = found.map_or(usize::MAX, |i| table[i].0);
        *o.native.borrow_mut() = Some(Box::new(PropertyPointer(at)));
    }
    match (found, want) {
        (Some(i), Want::Value) => table[i].2.clone(),
        (Some(i), Want::Key) => table[i].1.to_value(),
        (None, Want::Value) => Value::Bool(false),
        (None, Want::Key) => Value::Null,
    }
}

/// The initialised properties of `o` as (position, mangled name, value).
fn properties<G: Globals>(g: G, o: &Obj) -> Vec<(usize, Key, Value)> {
    let mut out = Vec::new();
    let props = o.props.borrow();
    for (i, (p, v)) in o.class.props.iter().zip(props.iter()).enumerate() {
        if matches!(v, Value::Undef) {
            continue;
        }
        out.push((i, super::objprops::mangled(g, p), v.deref_clone()));
    }
    let declared = props.len();
    drop(props);
    if let Some(d) = o.dynamic.borrow().as_ref() {
        for (i, (k, v)) in d.iter().enumerate() {
            out.push((declared + i, k.to_key(), v.deref_clone()));
        }
    }
    out
}
