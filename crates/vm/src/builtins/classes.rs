//! Class and object functions: `get_class`, `get_parent_class`,
//! `method_exists`, `property_exists`, `class_exists` and its siblings,
//! `get_object_vars`, `get_class_methods`, `is_a`, `is_subclass_of`,
//! `get_called_class`, `spl_object_id`, `spl_object_hash`, as PHP 8.2's
//! Zend/zend_builtin_functions.c and ext/spl do them.

use std::rc::Rc;

use minizts_core::object::{acc, Class, ClassKind};
use minizts_core::{PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{error, type_error, VmResult};

crate::builtin_table! {
    "get_class", ["object"], 0, 0, get_class;
    "get_parent_class", ["object_or_class"], 0, 0, get_parent_class;
    "get_called_class", [], 0, 0, get_called_class;
    "method_exists", ["object_or_class", "method"], 2, 0, method_exists;
    "property_exists", ["object_or_class", "property"], 2, 0, property_exists;
    "class_exists", ["class", "autoload"], 1, 0, class_exists;
    "interface_exists", ["interface", "autoload"], 1, 0, interface_exists;
    "trait_exists", ["trait", "autoload"], 1, 0, trait_exists;
    "enum_exists", ["enum", "autoload"], 1, 0, enum_exists;
    "get_object_vars", ["object"], 1, 0, get_object_vars;
    "get_class_methods", ["object_or_class"], 1, 0, get_class_methods;
    "is_a", ["object_or_class", "class", "allow_string"], 2, 0, is_a;
    "is_subclass_of", ["object_or_class", "class", "allow_string"], 2, 0, is_subclass_of;
    "spl_object_id", ["object"], 1, 0, spl_object_id;
    "spl_object_hash", ["object"], 1, 0, spl_object_hash;
    "class_implements", ["object_or_class", "autoload"], 1, 0, class_implements;
}

/// The class of an object argument, or of a class-name string when
/// `strings` allows one.
fn class_arg<G: Globals>(g: G, v: &Value, strings: bool) -> Option<Rc<Class>> {
    match v {
        Value::Obj(o) => Some(o.class.clone()),
        Value::Closure(_) => crate::class::lookup(g, b"Closure"),
        Value::Str(s) if strings => crate::class::lookup(g, s.as_bytes()),
        Value::Ref(r) => class_arg(g, &r.get(), strings),
        _ => None,
    }
}

fn get_class<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if a.is_empty() {
        return match crate::objects::scope(g) {
            Some(c) => Ok(Value::Str(c.name.clone())),
            None => error("get_class() without arguments must be called from within a class"),
        };
    }
    let v = a.value(0).into_owned();
    match class_arg(g, &v, false) {
        Some(c) => Ok(Value::Str(c.name.clone())),
        None => type_error(format!(
            "get_class(): Argument #1 ($object) must be of type object, {} given",
            v.type_name()
        )),
    }
}

fn get_parent_class<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let class = if a.is_empty() {
        crate::objects::scope(g)
    } else {
        class_arg(g, &a.value(0), true)
    };
    Ok(match class.and_then(|c| c.parent.clone()) {
        Some(p) => Value::Str(p.name.clone()),
        None => Value::Bool(false),
    })
}

fn get_called_class<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    match crate::objects::called(g) {
        Some(c) => Ok(Value::Str(c.name.clone())),
        None => error("get_called_class() must be called from within a class"),
    }
}

fn method_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let name = a.str(g, 1)?;
    let Some(c) = class_arg(g, &v, true) else {
        if matches!(v, Value::Str(_)) {
            return Ok(Value::Bool(false));
        }
        return type_error(format!(
            "method_exists(): Argument #1 ($object_or_class) must be of type object|string, {} given",
            v.type_name()
        ));
    };
    Ok(Value::Bool(
        c.methods.contains_key(name.as_bytes().to_ascii_lowercase().as_slice()),
    ))
}

fn property_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let name = a.str(g, 1)?;
    let Some(c) = class_arg(g, &v, true) else {
        return Ok(Value::Bool(false));
    };
    if c.props.iter().any(|p| p.name == name) || c.statics.contains_key(&name) {
        return Ok(Value::Bool(true));
    }
    if let Value::Obj(o) = &v {
        let key = minizts_core::Key::from_php_str(name);
        return Ok(Value::Bool(
            o.dynamic.borrow().as_ref().is_some_and(|d| d.get(&key).is_some()),
        ));
    }
    Ok(Value::Bool(false))
}

fn exists_of<G: Globals>(g: G, a: &Args, kinds: &[ClassKind]) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    Ok(Value::Bool(
        crate::class::lookup(g, name.as_bytes()).is_some_and(|c| kinds.contains(&c.kind)),
    ))
}

fn class_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    exists_of(g, a, &[ClassKind::Class, ClassKind::Enum])
}

fn interface_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    exists_of(g, a, &[ClassKind::Interface])
}

fn trait_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    exists_of(g, a, &[ClassKind::Trait])
}

fn enum_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    exists_of(g, a, &[ClassKind::Enum])
}

fn get_object_vars<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    match a.value(0).into_owned() {
        Value::Obj(o) => Ok(Value::arr(crate::objects::props_array(
            g,
            &o,
            crate::objects::scope(g).as_ref(),
        ))),
        Value::Closure(_) => Ok(Value::empty_array()),
        v => type_error(format!(
            "get_object_vars(): Argument #1 ($object) must be of type object, {} given",
            v.type_name()
        )),
    }
}

fn get_class_methods<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let Some(c) = class_arg(g, &v, true) else {
        return type_error(format!(
            "get_class_methods(): Argument #1 ($object_or_class) must be an object or a valid class name, {} given",
            v.type_name()
        ));
    };
    let scope = crate::objects::scope(g);
    let mut out = PhpArray::new();
    for m in c.methods.values() {
        let visible = if m.flags & acc::PRIVATE != 0 {
            scope.as_ref().is_some_and(|s| s.id == m.declaring)
        } else if m.flags & acc::PROTECTED != 0 {
            scope
                .as_ref()
                .is_some_and(|s| s.is_subclass_of(&c) || c.is_subclass_of(s))
        } else {
            true
        };
        if visible {
            let _ = out.push(Value::Str(m.name.clone()));
        }
    }
    Ok(Value::arr(out))
}

fn is_a_impl<G: Globals>(g: G, a: &mut Args, proper: bool) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let allow_string = a.opt_bool(g, 2, proper)?;
    let target = a.str(g, 1)?;
    let Some(c) = class_arg(g, &v, allow_string) else {
        return Ok(Value::Bool(false));
    };
    let Some(t) = crate::class::lookup(g, target.as_bytes()) else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(c.is_subclass_of(&t) && !(proper && c.id == t.id)))
}

fn is_a<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    is_a_impl(g, a, false)
}

fn is_subclass_of<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    is_a_impl(g, a, true)
}

fn spl_object_id<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    match a.value(0).into_owned() {
        Value::Obj(o) => Ok(Value::Int(o.handle() as i64)),
        Value::Closure(c) => Ok(Value::Int(c.handle as i64)),
        v => type_error(format!(
            "spl_object_id(): Argument #1 ($object) must be of type object, {} given",
            v.type_name()
        )),
    }
}

fn spl_object_hash<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let h = match a.value(0).into_owned() {
        Value::Obj(o) => o.handle(),
        Value::Closure(c) => c.handle,
        v => {
            return type_error(format!(
                "spl_object_hash(): Argument #1 ($object) must be of type object, {} given",
                v.type_name()
            ))
        }
    };
    Ok(Value::str(format!("{h:032x}").as_bytes()))
}

fn class_implements<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let Some(c) = class_arg(g, &v, true) else {
        return Ok(Value::Bool(false));
    };
    let mut out = PhpArray::new();
    for i in &c.interfaces {
        out.insert(
            minizts_core::Key::from_php_str(i.name.clone()),
            Value::Str(i.name.clone()),
        );
    }
    Ok(Value::arr(out))
}
