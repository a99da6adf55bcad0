//! `array_column` (rows that are arrays; minizts has no objects) and
//! `array_replace_recursive`.

use std::rc::Rc;

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::Globals;

use super::{elem, variadic_arrays};
use crate::builtins::Args;
use crate::error::{error, type_error, VmResult};
use crate::limits::Ticker;

/// A `string|int|null` parameter as a key (`None`: null), coerced as
/// PHP's `Z_PARAM_STR_OR_LONG_OR_NULL` does: int-like scalars become
/// ints, strings stay strings (numeric ones are looked up as ints).
fn key_param<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<Option<Key>> {
    let v = a.value(i);
    Ok(match &*v {
        Value::Null | Value::Undef => None,
        Value::Int(n) => Some(Key::Int(*n)),
        Value::Str(s) => Some(Key::from_php_str(s.clone())),
        Value::Bool(b) => Some(Key::Int(*b as i64)),
        Value::Float(f) if f.is_finite() && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(f) => {
            Some(Key::Int(a.int(g, i)?))
        }
        Value::Float(_) => Some(Key::from_php_str(crate::ops::to_str(g, &v)?)),
        other => {
            return type_error(format!(
                "{}(): Argument #{} (${}) must be of type string|int|null, {} given",
                a.name(),
                i + 1,
                if i == 1 { "column_key" } else { "index_key" },
                other.type_name()
            ))
        }
    })
}

/// A row's element under `key` (rows that are not arrays have none).
fn fetch(row: &Value, key: &Key) -> Option<Value> {
    match row {
        Value::Arr(r) => r.get(key).map(Value::deref_clone),
        _ => None,
    }
}

pub(super) fn array_column<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let input = a.array(0)?;
    let column = key_param(g, a, 1)?;
    let index = if a.has(2) { key_param(g, a, 2)? } else { None };
    let mut out = PhpArray::new();
    for row in input.values() {
        let row = row.deref_clone();
        let v = match &column {
            None => row.clone(),
            Some(k) => match fetch(&row, k) {
                Some(v) => v,
                None => continue,
            },
        };
        match index.as_ref().and_then(|k| fetch(&row, k)) {
            Some(k) => out.insert(crate::dim::to_key(g, &k)?, v),
            None => {
                if out.push(v).is_err() {
                    return error("Cannot add element to the array as the next element is already occupied");
                }
            }
        }
    }
    Ok(Value::arr(out))
}

/// PHP's `php_array_replace_recursive`: an array replacing an array
/// goes in element by element, anything else replaces what is there.
fn replace_recursive<G: Globals>(
    g: G,
    dest: &mut PhpArray,
    src: &Rc<PhpArray>,
    active: &mut Vec<*const PhpArray>,
    ticker: &mut Ticker,
) -> VmResult<()> {
    if active.contains(&Rc::as_ptr(src)) {
        return error("Recursion detected");
    }
    active.push(Rc::as_ptr(src));
    for (k, v) in src.iter() {
        ticker.tick(g)?;
        let key = k.to_key();
        let inner = match v.deref_clone() {
            Value::Arr(inner) => inner,
            _ => {
                dest.insert(key, elem(v));
                continue;
            }
        };
        let mut target = match dest.get(&key).map(Value::deref_clone) {
            Some(Value::Arr(x)) => x,
            _ => {
                dest.insert(key, elem(v));
                continue;
            }
        };
        replace_recursive(g, Rc::make_mut(&mut target), &inner, active, ticker)?;
        // PHP separates the element: a reference there is replaced by
        // the merged array.
        dest.insert(key, Value::Arr(target));
    }
    active.pop();
    Ok(())
}

pub(super) fn array_replace_recursive<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let first = a.array(0)?;
    let rest = variadic_arrays(a, 1)?;
    let mut out = (*first).clone();
    let mut ticker = Ticker::new();
    let mut active = Vec::new();
    for src in &rest {
        replace_recursive(g, &mut out, src, &mut active, &mut ticker)?;
    }
    Ok(Value::arr(out))
}
