//! The array cursor functions: `current`/`pos`, `key`, `next`, `prev`,
//! `reset`, `end`, which read and move the array's internal pointer
//! (`PhpArray::cursor_*`). `current` and `key` take the array by value;
//! the others move the pointer of the array behind their reference.

use minizts_core::array::KeyRef;
use minizts_core::Value;
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

/// The element's value, or `false` past the end (PHP's convention).
fn value_or_false(e: Option<(KeyRef<'_>, &Value)>) -> Value {
    e.map_or(Value::Bool(false), |(_, v)| v.deref_clone())
}

pub(super) fn current<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    Ok(value_or_false(arr.cursor_current()))
}

pub(super) fn key<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    Ok(arr.cursor_current().map_or(Value::Null, |(k, _)| k.to_value()))
}

pub(super) fn next<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_next()))
}

pub(super) fn prev<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_prev()))
}

pub(super) fn reset<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_reset()))
}

pub(super) fn end<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    a.with_array_ref(0, |arr| value_or_false(arr.cursor_end()))
}
