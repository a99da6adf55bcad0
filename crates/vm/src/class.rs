//! Classes at run time: the class table lookups, linking a compiled
//! declaration (`ClassDef`) into a `Class` with everything inherited in
//! place (PHP's `zend_do_inheritance`, `zend_do_implement_interface`,
//! trait binding), and the builtin classes, made on first use.
//!
//! Draft: written before the compiler side existed; compiled and tested
//! with the rest of issue 21.

use std::rc::Rc;

use hashbrown::HashMap;
use minizts_core::bytecode::{ClassDef, FuncId, Script};
use minizts_core::object::{
    acc, Class, ClassConst, ClassId, ClassKind, Magic, Method, MethodBody, PropInfo, StaticProp,
};
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::error::{error, fatal, VmResult};

pub(crate) mod autoload;
mod builtin;

/// The lower-case lookup key of a class name (a leading `\` dropped).
pub fn key(name: &[u8]) -> Vec<u8> {
    name.strip_prefix(b"\\").unwrap_or(name).to_ascii_lowercase()
}

/// The builtin classes' names and kinds, as `get_declared_classes`
/// lists them (before the script's).
pub fn builtin_names() -> impl Iterator<Item = (&'static str, ClassKind)> {
    builtin::names()
}

/// Class `name` if it is declared (or builtin), without autoloading.
pub fn lookup<G: Globals>(g: G, name: &[u8]) -> Option<Rc<Class>> {
    let k = key(name);
    if let Some(c) = eg!(g).classes.find(&k) {
        return Some(c.clone());
    }
    builtin::make(g, &k)
}

/// Class `name`, autoloaded if it is not declared yet (PHP's
/// `zend_lookup_class`): `None` when no autoloader declared it; an
/// autoloader's exception is the error.
pub fn load<G: Globals>(g: G, name: &[u8]) -> VmResult<Option<Rc<Class>>> {
    if let Some(c) = lookup(g, name) {
        return Ok(Some(c));
    }
    autoload::run(g, name)
}

/// Class `name`, autoloaded if need be, or PHP's `Class "X" not found`
/// error.
pub fn find<G: Globals>(g: G, name: &[u8]) -> VmResult<Rc<Class>> {
    find_as(g, name, "Class")
}

/// [`find`] with the word the error starts with (`Interface`, `Trait`).
pub fn find_as<G: Globals>(g: G, name: &[u8], word: &str) -> VmResult<Rc<Class>> {
    match load(g, name)? {
        Some(c) => Ok(c),
        None => error(format!(
            "{word} \"{}\" not found",
            String::from_utf8_lossy(name.strip_prefix(b"\\").unwrap_or(name))
        )),
    }
}

/// Whether `class` is one of the engine's own (PHP's internal classes).
pub fn is_builtin(class: &Class) -> bool {
    builtin::is_builtin_name(class.name.as_bytes())
}

/// Makes `alias` another name of `class` (`class_alias`); `false` when
/// the name is taken.
pub fn add_alias<G: Globals>(g: G, alias: &[u8], class: &Class) -> bool {
    let k = key(alias);
    if lookup(g, &k).is_some() {
        return false;
    }
    eg!(g).classes.by_name.insert(k.into(), class.id);
    true
}

/// Adds a linked class to the request's table under its name.
pub(crate) fn register<G: Globals>(g: G, make: impl FnOnce(ClassId) -> Class) -> Rc<Class> {
    let id = eg!(g).classes.list.len() as ClassId;
    let class = Rc::new(make(id));
    eg!(g, |eg| {
        eg.classes.by_name.insert(key(class.name.as_bytes()).into(), id);
        eg.classes.list.push(class.clone());
    });
    class
}

/// Runs declaration `index` of `script` (`DECLARE_CLASS`, or early
/// binding before the script runs). One already declared is skipped.
pub fn declare<G: Globals>(g: G, script: &Script, index: u32) -> VmResult<()> {
    let unit = (script.first_func, index);
    if eg!(g).classes.declared.contains(&unit) {
        return Ok(());
    }
    let def = &script.classes[index as usize];
    let k = key(def.name.as_bytes());
    if def.name.as_ref() != "class@anonymous" && (eg!(g).classes.find(&k).is_some() || builtin::is_builtin_name(&k)) {
        return fatal(format!(
            "Cannot declare {} {}, because the name is already in use",
            def_kind_word(def),
            def.name
        ));
    }
    link(g, def, script.first_func, index)?;
    eg!(g).classes.declared.insert(unit);
    Ok(())
}

fn def_kind_word(def: &ClassDef) -> &'static str {
    match def.kind {
        ClassKind::Interface => "interface",
        ClassKind::Trait => "trait",
        ClassKind::Enum => "enum",
        ClassKind::Class => "class",
    }
}

/// Whether every class `def` builds on is known now (early binding
/// declares only those; the others wait for their statement).
pub fn can_link_early<G: Globals>(g: G, def: &ClassDef) -> bool {
    def.parent
        .iter()
        .chain(def.interfaces.iter())
        .chain(def.traits.iter())
        .all(|n| lookup(g, n.as_bytes()).is_some())
}

/// Links `def` (declaration `index` of the script whose first function
/// is `first_func`) into a class of the request.
fn link<G: Globals>(g: G, def: &ClassDef, first_func: FuncId, index: u32) -> VmResult<Rc<Class>> {
    let _ = (first_func, index);
    let parent = match &def.parent {
        Some(p) => {
            let pc = find(g, p.as_bytes())?;
            if pc.kind == ClassKind::Interface {
                return fatal(format!("Class {} cannot extend interface {}", def.name, pc.name));
            }
            if pc.kind == ClassKind::Trait {
                return fatal(format!("Class {} cannot extend trait {}", def.name, pc.name));
            }
            if pc.flags & acc::FINAL != 0 {
                return fatal(format!("Class {} cannot extend final class {}", def.name, pc.name));
            }
            Some(pc)
        }
        None => None,
    };
    let mut interfaces: Vec<Rc<Class>> = parent.as_ref().map_or_else(Vec::new, |p| p.interfaces.clone());
    // An enum implements `UnitEnum`, and `BackedEnum` when backed.
    let implied: &[&str] = match (def.kind, def.backing) {
        (ClassKind::Enum, Some(_)) => &["UnitEnum", "BackedEnum"],
        (ClassKind::Enum, None) => &["UnitEnum"],
        _ => &[],
    };
    for name in implied {
        let i = find(g, name.as_bytes())?;
        if !interfaces.iter().any(|k| k.id == i.id) {
            interfaces.push(i);
        }
    }
    for name in &def.interfaces {
        let i = find_as(g, name.as_bytes(), "Interface")?;
        if i.kind != ClassKind::Interface {
            return fatal(format!(
                "{} cannot implement {} - it is not an interface",
                def.name, i.name
            ));
        }
        for j in i.interfaces.iter().chain(std::iter::once(&i)) {
            if !interfaces.iter().any(|k| k.id == j.id) {
                interfaces.push(j.clone());
            }
        }
    }
    let mut traits = Vec::new();
    for name in &def.traits {
        let t = find_as(g, name.as_bytes(), "Trait")?;
        if t.kind != ClassKind::Trait {
            return fatal(format!("{} cannot use {} - it is not a trait", def.name, t.name));
        }
        // A trait's property defaults are copied into the class using it.
        crate::objects::ensure_defaults(g, &t)?;
        traits.push(t);
    }
    Ok(register(g, |id| {
        let mut props: Vec<PropInfo> = parent.as_ref().map_or_else(Vec::new, |p| p.props.clone());
        let mut defaults: Vec<Value> = parent.as_ref().map_or_else(Vec::new, |p| p.defaults.borrow().clone());
        let mut default_targets = Vec::new();
        let mut prop_index: HashMap<PhpStr, u32> = parent.as_ref().map_or_else(HashMap::new, |p| {
            // A parent's private property stays in its slot but is not
            // reached by name from outside the parent.
            p.prop_index
                .iter()
                .filter(|(_, &slot)| p.props[slot as usize].flags & acc::PRIVATE == 0)
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        });
        let mut statics: HashMap<PhpStr, StaticProp> = parent.as_ref().map_or_else(HashMap::new, |p| {
            p.statics
                .iter()
                .filter(|(_, s)| s.flags & acc::PRIVATE == 0)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        });
        if def.kind == ClassKind::Enum {
            let mut names = vec!["name"];
            if def.backing.is_some() {
                names.push("value");
            }
            for n in names {
                let name = PhpStr::from(n.as_bytes());
                prop_index.insert(name.clone(), props.len() as u32);
                props.push(PropInfo {
                    name,
                    flags: acc::PUBLIC | acc::READONLY,
                    declaring: id,
                    ty: None,
                    has_default: false,
                });
                defaults.push(Value::Undef);
            }
        }
        for p in &def.props {
            let name = PhpStr::from(p.name.as_bytes());
            if p.has_default {
                default_targets.push(if p.flags & acc::STATIC != 0 {
                    minizts_core::object::DefaultTarget::Static(name.clone())
                } else {
                    // The slot is known once the loop below has placed it;
                    // patched after.
                    minizts_core::object::DefaultTarget::Slot(u32::MAX)
                });
            }
            if p.flags & acc::STATIC != 0 {
                statics.insert(
                    name.clone(),
                    StaticProp {
                        name,
                        flags: p.flags,
                        declaring: id,
                        slot: crate::gc::new_ref(
                            g,
                            if p.has_default || p.ty.is_none() {
                                Value::Null
                            } else {
                                Value::Undef
                            },
                        ),
                        ty: p.ty.clone().map(Rc::new),
                    },
                );
                continue;
            }
            let info = PropInfo {
                name: name.clone(),
                flags: p.flags,
                declaring: id,
                ty: p.ty.clone().map(Rc::new),
                has_default: p.has_default,
            };
            let initial = if p.ty.is_some() && !p.has_default {
                Value::Undef
            } else {
                Value::Null
            };
            let slot = match prop_index.get(&name) {
                // Redeclared: the child's declaration takes the slot.
                Some(&slot) => {
                    props[slot as usize] = info;
                    defaults[slot as usize] = initial;
                    slot
                }
                None => {
                    prop_index.insert(name, props.len() as u32);
                    props.push(info);
                    defaults.push(initial);
                    props.len() as u32 - 1
                }
            };
            if p.has_default {
                if let Some(minizts_core::object::DefaultTarget::Slot(s)) = default_targets.last_mut() {
                    *s = slot;
                }
            }
        }
        // A trait's properties, after the class's own, unless it
        // declares them itself.
        for t in &traits {
            let tdefaults = t.defaults.borrow();
            for (i, p) in t.props.iter().enumerate() {
                if prop_index.contains_key(&p.name) {
                    continue;
                }
                prop_index.insert(p.name.clone(), props.len() as u32);
                let mut info = p.clone();
                info.declaring = id;
                props.push(info);
                defaults.push(tdefaults[i].clone());
            }
            for (name, sp) in &t.statics {
                statics.entry(name.clone()).or_insert_with(|| StaticProp {
                    name: sp.name.clone(),
                    flags: sp.flags,
                    declaring: id,
                    slot: crate::gc::new_ref(g, sp.slot.get()),
                    ty: sp.ty.clone(),
                });
            }
        }
        let mut methods: HashMap<Box<[u8]>, Rc<Method>> = parent.as_ref().map_or_else(HashMap::new, |p| {
            p.methods.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        });
        for i in &interfaces {
            for (k, m) in &i.methods {
                methods.entry(k.clone()).or_insert_with(|| m.clone());
            }
        }
        for t in &traits {
            for (k, m) in &t.methods {
                methods.insert(
                    k.clone(),
                    Rc::new(Method {
                        name: m.name.clone(),
                        flags: m.flags,
                        declaring: id,
                        body: m.body,
                    }),
                );
            }
        }
        for m in &def.methods {
            methods.insert(
                m.name.as_bytes().to_ascii_lowercase().into(),
                Rc::new(Method {
                    name: PhpStr::from(m.name.as_bytes()),
                    flags: m.flags,
                    declaring: id,
                    body: MethodBody::User(m.func),
                }),
            );
        }
        let mut consts: HashMap<PhpStr, Rc<ClassConst>> = parent.as_ref().map_or_else(HashMap::new, |p| {
            p.consts.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        });
        let mut const_order = parent.as_ref().map_or_else(Vec::new, |p| p.const_order.clone());
        for i in &interfaces {
            for (k, c) in &i.consts {
                consts.entry(k.clone()).or_insert_with(|| c.clone());
            }
        }
        for c in &def.consts {
            let name = PhpStr::from(c.name.as_bytes());
            if !consts.contains_key(&name) {
                const_order.push(name.clone());
            }
            consts.insert(
                name.clone(),
                Rc::new(ClassConst {
                    name,
                    flags: c.flags,
                    declaring: id,
                    value: std::cell::RefCell::new(None),
                    init: c.init,
                    is_case: c.is_case,
                    evaluating: std::cell::Cell::new(false),
                }),
            );
        }
        let magic = magic_of(&methods);
        let mut method_order: Vec<Box<[u8]>> = Vec::with_capacity(methods.len());
        let own = def
            .methods
            .iter()
            .map(|m| m.name.as_bytes().to_ascii_lowercase().into_boxed_slice());
        let inherited = parent.iter().flat_map(|p| p.method_order.iter().cloned());
        let used = traits.iter().flat_map(|t| t.method_order.iter().cloned());
        let abstract_ = interfaces.iter().flat_map(|i| i.method_order.iter().cloned());
        for k in own.chain(inherited).chain(used).chain(abstract_) {
            if !method_order.contains(&k) {
                method_order.push(k);
            }
        }
        let mut declared: Vec<PhpStr> = def.props.iter().map(|p| PhpStr::from(p.name.as_bytes())).collect();
        for t in &traits {
            for n in &t.declared {
                if !declared.contains(n) {
                    declared.push(n.clone());
                }
            }
        }
        Class {
            id,
            name: PhpStr::from(def.name.as_bytes()),
            traits,
            declared,
            kind: def.kind,
            flags: def.flags,
            native: parent.as_ref().and_then(|p| p.native),
            allow_dynamic: def.allow_dynamic || parent.as_ref().is_some_and(|p| p.allow_dynamic),
            parent,
            interfaces,
            props,
            prop_index,
            defaults: std::cell::RefCell::new(defaults),
            defaults_ready: std::cell::Cell::new(false),
            defaults_fn: def.defaults,
            default_targets,
            statics,
            consts,
            const_order,
            methods,
            method_order,
            magic,
            enum_backing: def.backing,
        }
    }))
}

/// The magic methods among `methods`.
pub(crate) fn magic_of(methods: &HashMap<Box<[u8]>, Rc<Method>>) -> Magic {
    let get = |n: &str| methods.get(n.as_bytes()).cloned();
    Magic {
        construct: get("__construct"),
        destruct: get("__destruct"),
        clone: get("__clone"),
        get: get("__get"),
        set: get("__set"),
        isset: get("__isset"),
        unset: get("__unset"),
        call: get("__call"),
        call_static: get("__callstatic"),
        to_string: get("__tostring"),
        invoke: get("__invoke"),
        serialize: get("__serialize"),
        unserialize: get("__unserialize"),
        debug_info: get("__debuginfo"),
    }
}
