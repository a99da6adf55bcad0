//! Enums: a case is an object of its enum, made once, with its `name`
//! (and `value` for a backed enum), readonly.

use std::rc::Rc;

use minizts_core::object::Class;
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::error::VmResult;

/// The object case `name` of `class` is, its backing value `v` (null for
/// a pure enum).
pub fn make_case<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, v: Value) -> VmResult<Value> {
    let props = class.defaults.borrow().clone();
    let store = eg!(g).objects.clone();
    let o = store.create(class.clone(), props);
    if let Some(&slot) = class.prop_index.get(&PhpStr::from(&b"name"[..])) {
        o.props.borrow_mut()[slot as usize] = Value::Str(name.clone());
    }
    if let Some(&slot) = class.prop_index.get(&PhpStr::from(&b"value"[..])) {
        o.props.borrow_mut()[slot as usize] = v;
    }
    Ok(Value::Obj(o))
}

/// `E::cases()`, `E::from($v)`, `E::tryFrom($v)`.
pub fn static_method<G: Globals>(g: G, class: &Rc<Class>, method: &str, args: Vec<Value>) -> VmResult<Value> {
    let cases: Vec<PhpStr> = class
        .const_order
        .iter()
        .filter(|n| class.consts.get(*n).is_some_and(|c| c.is_case))
        .cloned()
        .collect();
    if method == "cases" {
        let mut out = minizts_core::PhpArray::new();
        for n in &cases {
            let _ = out.push(crate::objects::class_const(g, class, n)?);
        }
        return Ok(Value::arr(out));
    }
    let Some(v) = args.first().map(Value::deref_clone) else {
        return crate::error::throw(
            "ArgumentCountError",
            format!("{}::{method}() expects exactly 1 argument, 0 given", class.name),
        );
    };
    // The value as the backing type takes it (weak mode's conversions).
    let key = match class.enum_backing {
        Some(minizts_core::object::EnumBacking::Int) => match &v {
            Value::Int(_) => v.clone(),
            Value::Str(s) => match minizts_core::numfmt::is_numeric_str(s) {
                Some(minizts_core::numfmt::Number::Int(n)) => Value::Int(n),
                _ => {
                    return crate::error::type_error(format!(
                        "{}::{method}(): Argument #1 ($value) must be of type int, string given",
                        class.name
                    ))
                }
            },
            Value::Float(f) if f.fract() == 0.0 => Value::Int(*f as i64),
            other => {
                return crate::error::type_error(format!(
                    "{}::{method}(): Argument #1 ($value) must be of type int, {} given",
                    class.name,
                    other.type_name()
                ))
            }
        },
        _ => Value::Str(crate::ops::to_str(g, &v)?),
    };
    for n in &cases {
        let case = crate::objects::class_const(g, class, n)?;
        if let Value::Obj(o) = &case {
            if crate::exceptions::get(o, "value") == key {
                return Ok(case);
            }
        }
    }
    if method == "tryFrom" {
        return Ok(Value::Null);
    }
    let shown = match &key {
        Value::Str(s) => format!("\"{s}\""),
        other => crate::ops::to_str(g, other)?.to_string(),
    };
    crate::error::value_error(format!("{shown} is not a valid backing value for enum {}", class.name))
}
