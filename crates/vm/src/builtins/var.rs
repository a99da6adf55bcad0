//! Variable handling: type names and predicates, conversions, and the
//! dumpers (`var_dump`, `print_r`, `var_export` in `dump`, `json_encode`
//! in `json`), as PHP 8.2's ext/standard/type.c, var.c and ext/json do
//! them.

use minizts_core::numfmt;
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{warning, VmResult};

mod dump;
mod json;

use dump::{debug_zval_dump, print_r, var_dump, var_export};
use json::{json_decode, json_encode, json_last_error, json_last_error_msg};

crate::builtin_table! {
    "gettype", ["value"], 1, 0, gettype;
    "get_debug_type", ["value"], 1, 0, get_debug_type;
    "var_dump", ["value", "...values"], 1, 0, var_dump;
    "debug_zval_dump", ["value", "...values"], 1, 0, debug_zval_dump;
    "print_r", ["value", "return"], 1, 0, print_r;
    "var_export", ["value", "return"], 1, 0, var_export;
    "json_encode", ["value", "flags", "depth"], 1, 0, json_encode;
    "json_decode", ["json", "associative", "depth", "flags"], 1, 0, json_decode;
    "json_last_error", [], 0, 0, json_last_error;
    "json_last_error_msg", [], 0, 0, json_last_error_msg;
    "is_int", ["value"], 1, 0, is_int;
    "is_integer", ["value"], 1, 0, is_int;
    "is_long", ["value"], 1, 0, is_int;
    "is_float", ["value"], 1, 0, is_float;
    "is_double", ["value"], 1, 0, is_float;
    "is_string", ["value"], 1, 0, is_string;
    "is_array", ["value"], 1, 0, is_array;
    "is_bool", ["value"], 1, 0, is_bool;
    "is_null", ["value"], 1, 0, is_null;
    "is_numeric", ["value"], 1, 0, is_numeric;
    "is_scalar", ["value"], 1, 0, is_scalar;
    "is_iterable", ["value"], 1, 0, is_array;
    "is_countable", ["value"], 1, 0, is_array;
    "is_object", ["value"], 1, 0, is_object;
    "is_callable", ["value", "syntax_only", "callable_name"], 1, 4, is_callable;
    "intval", ["value", "base"], 1, 0, intval;
    "floatval", ["value"], 1, 0, floatval;
    "doubleval", ["value"], 1, 0, floatval;
    "strval", ["value"], 1, 0, strval;
    "boolval", ["value"], 1, 0, boolval;
    "settype", ["var", "type"], 2, 1, settype;
}

fn gettype<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::str(a.value(0).gettype()))
}

fn get_debug_type<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    // The names of type declarations, which are also those of messages.
    Ok(Value::str(&*crate::types::type_name(&a.value(0))))
}

fn is_int<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(*a.value(0), Value::Int(_))))
}

fn is_float<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(*a.value(0), Value::Float(_))))
}

fn is_string<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(*a.value(0), Value::Str(_))))
}

/// `is_array`, and `is_iterable`/`is_countable`, which differ from it
/// only for objects implementing interfaces minizts has no classes for.
fn is_array<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(*a.value(0), Value::Arr(_))))
}

fn is_bool<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(*a.value(0), Value::Bool(_))))
}

fn is_null<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(a.value(0).is_null()))
}

fn is_object<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(*a.value(0), Value::Closure(_) | Value::Obj(_))))
}

fn is_numeric<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(match &*a.value(0) {
        Value::Int(_) | Value::Float(_) => true,
        Value::Str(s) => numfmt::is_numeric_str(s).is_some(),
        _ => false,
    }))
}

fn is_scalar<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(matches!(
        *a.value(0),
        Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Bool(_)
    )))
}

fn is_callable<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.get(0);
    let syntax_only = a.opt_bool(g, 1, false)?;
    let callable = match &v {
        Value::Closure(_) => true,
        Value::Str(_) if syntax_only => true,
        Value::Arr(arr) if syntax_only => {
            arr.len() == 2
                && matches!(
                    (
                        arr.get_int(0).map(Value::deref_clone),
                        arr.get_int(1).map(Value::deref_clone)
                    ),
                    (
                        Some(Value::Str(_) | Value::Obj(_) | Value::Closure(_)),
                        Some(Value::Str(_))
                    )
                )
        }
        // (A class a callable names is autoloaded.)
        Value::Str(_) | Value::Arr(_) | Value::Obj(_) => crate::call::callable::check(g, &v, false)?.is_ok(),
        _ => false,
    };
    if a.has(2) {
        let name = callable_name(g, &v);
        a.with_ref(2, |slot| *slot = Value::Str(name));
    }
    Ok(Value::Bool(callable))
}

/// `zend_get_callable_name()`: how `is_callable()` names what it checked.
fn callable_name<G: Globals>(g: G, v: &Value) -> PhpStr {
    match v {
        Value::Str(s) => s.clone(),
        Value::Closure(_) => PhpStr::from("Closure::__invoke"),
        Value::Arr(arr) if arr.len() == 2 => {
            let class = match arr.get_int(0).map(Value::deref_clone) {
                Some(Value::Str(s)) => s,
                Some(Value::Closure(_)) => PhpStr::from("Closure"),
                _ => return PhpStr::from("Array"),
            };
            let Some(Value::Str(method)) = arr.get_int(1).map(Value::deref_clone) else {
                return PhpStr::from("Array");
            };
            let mut out = class.as_bytes().to_vec();
            out.extend_from_slice(b"::");
            out.extend_from_slice(&method);
            PhpStr::new(out)
        }
        Value::Arr(_) => PhpStr::from("Array"),
        other => {
            let mut out = Vec::new();
            let _ = other.write_string(&mut out, eg!(g).settings.precision);
            PhpStr::new(out)
        }
    }
}

fn intval<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let base = a.opt_int(g, 1, 10)?;
    let v = a.get(0);
    Ok(Value::Int(match &v {
        Value::Str(s) if base != 10 => numfmt::intval_base(s, base),
        Value::Closure(_) => {
            warning(g, "Object of class Closure could not be converted to int");
            1
        }
        other => other.to_int(),
    }))
}

fn floatval<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.get(0);
    if let Value::Closure(_) = v {
        warning(g, "Object of class Closure could not be converted to float");
        return Ok(Value::Float(1.0));
    }
    Ok(Value::Float(v.to_float()))
}

fn strval<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Str(crate::ops::to_str(g, &a.value(0))?))
}

fn boolval<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(a.value(0).to_bool()))
}

/// `settype()`: the variable converted as a cast would (`null`, which
/// no cast makes, included).
fn settype<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    use minizts_core::bytecode::CastKind;
    let ty = a.str(g, 1)?;
    let kind = match &*ty.as_bytes().to_ascii_lowercase() {
        b"integer" | b"int" => Some(CastKind::Int),
        b"float" | b"double" => Some(CastKind::Float),
        b"string" => Some(CastKind::String),
        b"array" => Some(CastKind::Array),
        b"object" => Some(CastKind::Object),
        b"bool" | b"boolean" => Some(CastKind::Bool),
        b"null" => None,
        b"resource" => return crate::error::value_error("Cannot convert to resource type"),
        _ => return a.value_error(1, "must be a valid type"),
    };
    let old = a.get(0).deref_clone();
    let new = match kind {
        Some(kind) => crate::ops::cast(g, &old, kind)?,
        None => Value::Null,
    };
    a.with_ref(0, |slot| *slot = new);
    Ok(Value::Bool(true))
}
