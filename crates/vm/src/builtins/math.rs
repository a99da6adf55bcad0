//! Math functions.

use minizts_core::numfmt::Number;
use minizts_core::Value;
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

crate::builtin_table! {
    "abs", ["num"], 1, 0, abs;
}

fn abs<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(match a.number(g, 0)? {
        Number::Int(n) => n.checked_abs().map_or(Value::Float(-(n as f64)), Value::Int),
        Number::Float(f) => Value::Float(f.abs()),
    })
}
