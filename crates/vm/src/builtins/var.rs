//! Variable handling and dumping: var_dump, print_r, var_export,
//! json_encode, type predicates.

use minizts_core::Value;
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

crate::builtin_table! {
    "gettype", ["value"], 1, 0, gettype;
}

fn gettype<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::str(a.value(0).gettype()))
}
