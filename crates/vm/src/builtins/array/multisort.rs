//! `array_multisort`: sorts several arrays of one size as the rows of a
//! table, column by column, each with its own order and sort flag
//! (PHP's `php_multisort_compare` over [`zend_sort`], made stable by the
//! rows' original positions). Int keys are renumbered, string keys kept.

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::Globals;

use super::compare_steps;
use super::sort::{data_compare, flavor, zend_sort, Flavor};
use crate::builtins::Args;
use crate::error::{type_error, value_error, VmResult};
use crate::limits::Ticker;

const SORT_ASC: i64 = 4;
const SORT_DESC: i64 = 3;
const SORT_FLAG_CASE: i64 = 8;

/// One array to sort, with how its column compares.
struct Column {
    arg: usize,
    fl: Flavor,
    desc: bool,
}

/// PHP names only the first parameter (`$array`); the rest are a variadic.
fn arg_type_error<T>(i: usize, what: &str) -> VmResult<T> {
    let name = if i == 0 { " ($array)" } else { "" };
    type_error(format!("array_multisort(): Argument #{}{name} {what}", i + 1))
}

/// Reads the arguments: arrays, each followed by at most one order flag
/// and one type flag.
fn columns(a: &Args) -> VmResult<Vec<Column>> {
    let mut cols: Vec<Column> = Vec::new();
    // Whether an order / type flag may come next (not before the first
    // array, nor twice after one).
    let (mut order_ok, mut type_ok) = (false, false);
    let (mut desc, mut ty) = (false, 0);
    for i in 0..a.len() {
        match &*a.value(i) {
            Value::Arr(_) => {
                if let Some(last) = cols.last_mut() {
                    last.fl = flavor(ty);
                    last.desc = desc;
                }
                (desc, ty) = (false, 0);
                cols.push(Column {
                    arg: i,
                    fl: Flavor::Regular,
                    desc: false,
                });
                (order_ok, type_ok) = (true, true);
            }
            Value::Int(n) => match n & !SORT_FLAG_CASE {
                SORT_ASC | SORT_DESC if order_ok => {
                    // PHP compares the whole value: `SORT_DESC |
                    // SORT_FLAG_CASE` sorts ascending.
                    desc = *n == SORT_DESC;
                    order_ok = false;
                }
                0 | 1 | 2 | 5 | 6 if type_ok => {
                    ty = *n;
                    type_ok = false;
                }
                SORT_ASC | SORT_DESC | 0 | 1 | 2 | 5 | 6 => {
                    return arg_type_error(i, "must be an array or a sort flag that has not already been specified")
                }
                _ => {
                    let name = if i == 0 { " ($array)" } else { "" };
                    return value_error(format!(
                        "array_multisort(): Argument #{}{name} must be a valid sort flag",
                        i + 1
                    ));
                }
            },
            _ => return arg_type_error(i, "must be an array or a sort flag"),
        }
    }
    if let Some(last) = cols.last_mut() {
        last.fl = flavor(ty);
        last.desc = desc;
    }
    Ok(cols)
}

pub(super) fn array_multisort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let cols = columns(a)?;
    let arrays: Vec<_> = cols.iter().map(|c| a.array(c.arg)).collect::<VmResult<_>>()?;
    let size = arrays[0].len();
    if arrays.iter().any(|x| x.len() != size) {
        return value_error("Array sizes are inconsistent");
    }
    if size == 0 {
        return Ok(Value::Bool(true));
    }
    // Row `k`: the `k`-th element of every array, then its position.
    let mut rows: Vec<(Vec<(Key, Value)>, usize)> = (0..size).map(|k| (Vec::with_capacity(cols.len()), k)).collect();
    for arr in &arrays {
        for (row, (k, v)) in rows.iter_mut().zip(arr.iter()) {
            row.0.push((k.to_key(), v.clone()));
        }
    }
    let mut ticker = Ticker::new();
    zend_sort(&mut rows, &mut |x, y| {
        for (c, col) in cols.iter().enumerate() {
            let (xv, yv) = (x.0[c].1.deref(), y.0[c].1.deref());
            ticker.tick_by(g, compare_steps(&xv))?;
            // PHP's reverse comparison swaps the operands.
            let r = if col.desc {
                data_compare(g, col.fl, &yv, &xv)?
            } else {
                data_compare(g, col.fl, &xv, &yv)?
            };
            if r != 0 {
                return Ok(r.signum());
            }
        }
        Ok(x.1.cmp(&y.1) as i32)
    })?;
    drop(arrays);
    let mut outs: Vec<PhpArray> = (0..cols.len()).map(|_| PhpArray::new()).collect();
    for (row, _) in rows {
        for (out, (k, v)) in outs.iter_mut().zip(row) {
            match k {
                Key::Str(_) => out.insert(k, v),
                Key::Int(_) => {
                    // Renumbering from 0 never meets a used key.
                    let _ = out.push(v);
                }
            }
        }
    }
    for (col, mut out) in cols.iter().zip(outs) {
        // PHP sets the next free key to the size, whatever the keys.
        out.set_next_free(size as i64);
        a.with_ref(col.arg, |slot| *slot = Value::arr(out));
    }
    Ok(Value::Bool(true))
}
