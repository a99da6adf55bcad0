//! Array functions.

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

crate::builtin_table! {
    "count", ["value", "mode"], 1, 0, count;
    "range", ["start", "end", "step"], 2, 0, range;
    "in_array", ["needle", "haystack", "strict"], 2, 0, in_array;
}

fn count<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0);
    match &*v {
        Value::Arr(arr) => {
            let recursive = a.opt_int(g, 1, 0)? == 1;
            Ok(Value::Int(
                if recursive { count_recursive(arr) } else { arr.len() } as i64
            ))
        }
        other => crate::error::type_error(format!(
            "count(): Argument #1 ($value) must be of type Countable|array, {} given",
            other.type_name()
        )),
    }
}

fn count_recursive(a: &PhpArray) -> usize {
    a.values()
        .map(|v| match v.deref_clone() {
            Value::Arr(inner) => 1 + count_recursive(&inner),
            _ => 1,
        })
        .sum()
}

fn range<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let start = a.value(0).into_owned();
    let end = a.value(1).into_owned();
    let step = if a.has(2) { a.number(g, 2)?.to_f64().abs() } else { 1.0 };
    if step == 0.0 {
        return a.value_error(2, "cannot be 0");
    }
    let is_float = matches!(start, Value::Float(_)) || matches!(end, Value::Float(_)) || step.fract() != 0.0;
    let mut out = PhpArray::new();
    if !is_float {
        let (s, e, st) = (start.to_int(), end.to_int(), step as i64);
        let n = ((s - e).unsigned_abs() / st as u64) as usize + 1;
        crate::builtins::reserve(g, n.saturating_mul(16))?;
        let mut out = Vec::with_capacity(n);
        let mut x = s;
        for _ in 0..n {
            out.push(Value::Int(x));
            x = if s <= e { x + st } else { x - st };
        }
        return Ok(Value::arr(PhpArray::from_list(out)));
    }
    let (s, e) = (start.to_float(), end.to_float());
    let n = ((s - e).abs() / step).floor() as usize + 1;
    crate::builtins::reserve(g, n.saturating_mul(16))?;
    for i in 0..n {
        let x = if s <= e {
            s + i as f64 * step
        } else {
            s - i as f64 * step
        };
        let _ = out.push(Value::Float(x));
    }
    Ok(Value::arr(out))
}

fn in_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let needle = a.get(0);
    let hay = a.array(1)?;
    let strict = a.opt_bool(g, 2, false)?;
    let found = hay.values().any(|v| {
        let v = v.deref();
        if strict {
            minizts_core::value::identical(&v, &needle)
        } else {
            minizts_core::value::loose_equals(&v, &needle)
        }
    });
    let _ = Key::Int(0);
    Ok(Value::Bool(found))
}
