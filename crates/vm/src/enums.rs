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

/// PHP's backed enum table (`zend_enum_build_backed_enum_table`): each
/// case's value must be of the backing type, and no two the same. Done
/// when the enum's constants are first used; a failure is thrown each
/// time they are.
pub fn check_backed<G: Globals>(g: G, class: &Rc<Class>) -> VmResult<()> {
    let Some(backing) = class.enum_backing else {
        return Ok(());
    };
    // (A case's value may read the enum's other constants: the check is
    // not made again meanwhile.)
    class.consts_checked.set(true);
    let r = check_cases(g, class, backing);
    if r.is_err() {
        class.consts_checked.set(false);
    }
    r
}

fn check_cases<G: Globals>(g: G, class: &Rc<Class>, backing: minizts_core::object::EnumBacking) -> VmResult<()> {
    let mut seen: Vec<(Value, PhpStr)> = Vec::new();
    for n in &class.const_order {
        let Some(c) = class.consts.get(n).cloned() else {
            continue;
        };
        if !c.is_case {
            continue;
        }
        let case = crate::objects::const_value(g, class, n, &c)?;
        let Value::Obj(o) = &case else { continue };
        let v = crate::exceptions::get(o, "value");
        let want = match backing {
            minizts_core::object::EnumBacking::Int => "int",
            minizts_core::object::EnumBacking::String => "string",
        };
        let ok = matches!(
            (&v, backing),
            (Value::Int(_), minizts_core::object::EnumBacking::Int)
                | (Value::Str(_), minizts_core::object::EnumBacking::String)
        );
        if !ok {
            return crate::error::type_error(format!(
                "Enum case type {} does not match enum backing type {want}",
                v.type_name()
            ));
        }
        if let Some((_, first)) = seen.iter().find(|(w, _)| *w == v) {
            return crate::error::error(format!(
                "Duplicate value in enum {} for cases {first} and {n}",
                class.name
            ));
        }
        seen.push((v, n.clone()));
    }
    Ok(())
}
