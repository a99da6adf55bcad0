//! Class and object functions: `get_class`, `get_parent_class`,
//! `method_exists`, `property_exists`, `class_exists` and its siblings,
//! `get_object_vars`, `get_class_vars`, `get_class_methods`, `is_a`,
//! `is_subclass_of`, `get_called_class`, `class_alias`,
//! `get_declared_traits` (and `_classes`, `_interfaces`), `spl_object_id`, `spl_object_hash`,
//! `class_implements`, as PHP 8.2's Zend/zend_builtin_functions.c and
//! ext/spl do them. A class named by a string is autoloaded where PHP
//! autoloads it.

use std::rc::Rc;

use minizts_core::object::{acc, Class, ClassKind};
use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{error, fatal, type_error, warning, VmResult};

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
    "class_alias", ["class", "alias", "autoload"], 2, 0, class_alias;
    "get_class_vars", ["class"], 1, 0, get_class_vars;
    "get_declared_traits", [], 0, 0, get_declared_traits;
    "get_declared_classes", [], 0, 0, get_declared_classes;
    "get_declared_interfaces", [], 0, 0, get_declared_interfaces;
}

/// The class of an object argument, or of a class-name string when
/// `strings` allows one (without autoloading).
fn class_arg<G: Globals>(g: G, v: &Value, strings: bool) -> Option<Rc<Class>> {
    match v {
        Value::Obj(o) => Some(o.class.clone()),
        Value::Closure(_) => crate::class::lookup(g, b"Closure"),
        Value::Str(s) if strings => crate::class::lookup(g, s.as_bytes()),
        Value::Ref(r) => class_arg(g, &r.get(), strings),
        _ => None,
    }
}

/// [`class_arg`] for a string, autoloading the class it names.
fn class_arg_load<G: Globals>(g: G, v: &Value) -> VmResult<Option<Rc<Class>>> {
    match v {
        Value::Str(s) => crate::class::load(g, s.as_bytes()),
        Value::Ref(r) => class_arg_load(g, &r.get()),
        v => Ok(class_arg(g, v, false)),
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
            crate::types::type_name(&v)
        )),
    }
}

fn get_parent_class<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let class = if a.is_empty() {
        crate::objects::scope(g)
    } else {
        class_arg_load(g, &a.value(0))?
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
    let Some(c) = class_arg_load(g, &v)? else {
        if matches!(v, Value::Str(_)) {
            return Ok(Value::Bool(false));
        }
        return type_error(format!(
            "method_exists(): Argument #1 ($object_or_class) must be of type object|string, {} given",
            crate::types::type_name(&v)
        ));
    };
    Ok(Value::Bool(
        c.methods.contains_key(name.as_bytes().to_ascii_lowercase().as_slice()),
    ))
}

fn property_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let name = a.str(g, 1)?;
    let Some(c) = class_arg_load(g, &v)? else {
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

fn exists_of<G: Globals>(g: G, a: &mut Args, kinds: &[ClassKind]) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let found = match a.opt_bool(g, 1, true)? {
        true => crate::class::load(g, name.as_bytes())?,
        false => crate::class::lookup(g, name.as_bytes()),
    };
    Ok(Value::Bool(found.is_some_and(|c| kinds.contains(&c.kind))))
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
            crate::types::type_name(&v)
        )),
    }
}

fn get_class_methods<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.value(0).into_owned();
    let Some(c) = class_arg_load(g, &v)? else {
        return type_error(format!(
            "get_class_methods(): Argument #1 ($object_or_class) must be an object or a valid class name, {} given",
            crate::types::type_name(&v)
        ));
    };
    let scope = crate::objects::scope(g);
    let mut out = PhpArray::new();
    for m in c.method_order.iter().filter_map(|k| c.methods.get(k)) {
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
    let c = match &v {
        Value::Str(_) if allow_string => class_arg_load(g, &v)?,
        _ => class_arg(g, &v, false),
    };
    let Some(c) = c else {
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
            crate::types::type_name(&v)
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
                crate::types::type_name(&v)
            ))
        }
    };
    Ok(Value::str(format!("{h:032x}").as_bytes()))
}

fn class_implements<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let Some(c) = crate::builtins::spl::class_of_arg(g, a)? else {
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

fn class_alias<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let class = a.str(g, 0)?;
    let alias = a.str(g, 1)?;
    let found = match a.opt_bool(g, 2, true)? {
        true => crate::class::load(g, class.as_bytes())?,
        false => crate::class::lookup(g, class.as_bytes()),
    };
    let Some(c) = found else {
        warning(g, &format!("Class \"{}\" not found", String::from_utf8_lossy(&class)));
        return Ok(Value::Bool(false));
    };
    if crate::class::is_builtin(&c) {
        return a.value_error(0, "must be a user-defined class name, internal class name given");
    }
    let bare = alias.as_bytes().strip_prefix(b"\\").unwrap_or(alias.as_bytes());
    if minizts_compiler::is_reserved_class_name(&String::from_utf8_lossy(bare)) {
        return fatal(format!(
            "Cannot use '{}' as class name as it is reserved",
            String::from_utf8_lossy(&alias)
        ));
    }
    if crate::class::add_alias(g, bare, &c) {
        return Ok(Value::Bool(true));
    }
    let word = match c.kind {
        ClassKind::Interface => "interface",
        ClassKind::Trait => "trait",
        ClassKind::Enum => "enum",
        ClassKind::Class => "class",
    };
    warning(
        g,
        &format!(
            "Cannot declare {word} {}, because the name is already in use",
            String::from_utf8_lossy(&alias)
        ),
    );
    Ok(Value::Bool(false))
}

/// `get_class_vars`: the default values of the properties the calling
/// scope can see, instance ones then static ones, each class's own
/// before those it inherits (PHP's order of `properties_info`).
fn get_class_vars<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let Some(c) = crate::class::load(g, name.as_bytes())? else {
        return type_error(format!(
            "get_class_vars(): Argument #1 ($class) must be a valid class name, {} given",
            String::from_utf8_lossy(&name)
        ));
    };
    crate::objects::ensure_defaults(g, &c)?;
    let scope = crate::objects::scope(g);
    let visible = |flags: u16, declaring: u32| {
        if flags & acc::PRIVATE != 0 {
            scope.as_ref().is_some_and(|s| s.id == declaring)
        } else if flags & acc::PROTECTED != 0 {
            let declaring = minizts_globals::eg!(g).classes.get(declaring).clone();
            scope
                .as_ref()
                .is_some_and(|s| s.is_subclass_of(&declaring) || declaring.is_subclass_of(s))
        } else {
            true
        }
    };
    // Each property once, by the first class up the chain that declares
    // it (a redeclared one is the child's).
    let mut chain = Vec::new();
    let mut k = Some(c.clone());
    while let Some(kc) = k {
        k = kc.parent.clone();
        chain.push(kc);
    }
    let mut seen: Vec<PhpStr> = Vec::new();
    let mut instance = PhpArray::new();
    let mut statics = Vec::new();
    for kc in &chain {
        for n in &kc.declared {
            if seen.contains(n) {
                continue;
            }
            if let Some(sp) = kc.statics.get(n).filter(|sp| sp.declaring == kc.id) {
                seen.push(n.clone());
                if visible(sp.flags, sp.declaring) {
                    statics.push((kc.clone(), n.clone()));
                }
                continue;
            }
            let Some(&slot) = kc.prop_index.get(n) else { continue };
            let info = &kc.props[slot as usize];
            if info.declaring != kc.id {
                continue;
            }
            seen.push(n.clone());
            if visible(info.flags, info.declaring) {
                let v = match c.defaults.borrow().get(slot as usize) {
                    Some(Value::Undef) | None => Value::Null,
                    Some(v) => v.deref_clone(),
                };
                instance.insert(minizts_core::Key::from_php_str(n.clone()), v);
            }
        }
    }
    for (kc, n) in statics {
        let v = static_default(g, &kc, &n)?;
        instance.insert(minizts_core::Key::from_php_str(n), v);
    }
    Ok(Value::arr(instance))
}

/// The default of static property `name` that class `c` declares (its
/// value may have changed since; the default is its initialiser's).
fn static_default<G: Globals>(g: G, c: &Rc<Class>, name: &PhpStr) -> VmResult<Value> {
    let Some(f) = c.defaults_fn else {
        return Ok(Value::Null);
    };
    let Some(i) = c
        .default_targets
        .iter()
        .position(|t| matches!(t, minizts_core::object::DefaultTarget::Static(n) if n == name))
    else {
        return Ok(Value::Null);
    };
    let list = crate::call::call_in_scope(g, f, None, c.id, c.id, Vec::new())?;
    Ok(match list {
        Value::Arr(a) => a.values().nth(i).map_or(Value::Null, Value::deref_clone),
        _ => Value::Null,
    })
}

fn get_declared_traits<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let list: Vec<Value> = minizts_globals::eg!(g, |eg| eg
        .classes
        .list
        .iter()
        .filter(|c| c.kind == ClassKind::Trait)
        .map(|c| Value::Str(c.name.clone()))
        .collect());
    Ok(Value::arr(PhpArray::from_list(list)))
}

fn get_declared_classes<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(declared(g, |k| matches!(k, ClassKind::Class | ClassKind::Enum)))
}

fn get_declared_interfaces<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(declared(g, |k| k == ClassKind::Interface))
}

/// The names of the declared classes of the kinds `kinds` takes: the
/// builtin ones, those of the script in the order they were declared,
/// then their aliases (by their lower-case names, as PHP lists them;
/// minizts keeps no declaration order for an alias, so they follow the
/// classes).
fn declared<G: Globals>(g: G, kinds: impl Fn(ClassKind) -> bool) -> Value {
    let mut list: Vec<Value> = crate::class::builtin_names()
        .filter(|(_, k)| kinds(*k))
        .map(|(name, _)| Value::str(name))
        .collect();
    minizts_globals::eg!(g, |eg| {
        list.extend(
            eg.classes
                .list
                .iter()
                .filter(|c| kinds(c.kind) && !crate::class::is_builtin(c))
                .map(|c| Value::Str(c.name.clone())),
        );
        let mut aliases: Vec<(u32, &[u8])> = eg
            .classes
            .by_name
            .iter()
            .filter(|(key, &id)| {
                let c = eg.classes.get(id);
                kinds(c.kind) && !c.name.as_bytes().eq_ignore_ascii_case(key)
            })
            .map(|(key, &id)| (id, &key[..]))
            .collect();
        aliases.sort();
        list.extend(aliases.into_iter().map(|(_, key)| Value::str(key)));
        Value::arr(PhpArray::from_list(list))
    })
}
