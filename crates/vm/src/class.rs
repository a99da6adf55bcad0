//! Classes at run time: the class table lookups, linking a compiled
//! declaration (`ClassDef`) into a `Class` with everything inherited in
//! place (PHP's `zend_do_inheritance`, `zend_do_implement_interface`,
//! trait binding), and the builtin classes, made on first use.
//!
//! The linking itself is in [`link`] (with [`inherit`], [`traits`] and
//! [`variance`] for its checks); this module is the class table's side.

use std::rc::Rc;

use hashbrown::HashMap;
use minizts_core::bytecode::{ClassDef, Script};
use minizts_core::object::{Class, ClassId, ClassKind, Magic, Method};
use minizts_globals::{eg, Globals};

use crate::error::{error, VmResult};

pub(crate) mod autoload;
mod builtin;
mod inherit;
mod link;
mod traits;
mod variance;

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
    let name = name.strip_prefix(b"\\").unwrap_or(name);
    minizts_core::string::with_lowercase(name, |k| {
        if let Some(c) = eg!(g).classes.find(k) {
            return Some(c.clone());
        }
        builtin::make(g, k)
    })
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

/// Runs declaration `index` of `script` (its `DECLARE_CLASS`
/// statement). A declaration early binding declared before the script
/// ran does nothing; one that runs a second time (in a function called
/// twice) finds its name taken.
pub fn declare<G: Globals>(g: G, script: &Script, index: u32) -> VmResult<()> {
    let unit = (script.first_func, index);
    if eg!(g).classes.declared.contains(&unit) {
        return Ok(());
    }
    let def = &script.classes[index as usize];
    // An anonymous class is declared where it is instantiated, the
    // first time.
    if def.name.contains('\0') && eg!(g).classes.find(&key(def.name.as_bytes())).is_some() {
        return Ok(());
    }
    check_name_free(g, def, &script.file)?;
    // Only early binding defers a declaration; at its statement the
    // checks that wait for autoloading are done before `link` returns.
    link::link(g, def, &script.file, false)?;
    Ok(())
}

/// PHP's early binding, before the script runs: declaration `index` of
/// `script`, if it can be linked now. Like PHP, only a class that
/// implements no interface and uses no trait, whose parent is declared
/// and whose checks need no class not declared yet; the others are
/// declared when their statement runs.
pub fn declare_early<G: Globals>(g: G, script: &Script, index: u32) -> VmResult<()> {
    let def = &script.classes[index as usize];
    if !can_link_early(g, def) {
        return Ok(());
    }
    let k = key(def.name.as_bytes());
    if eg!(g).classes.find(&k).is_some() || builtin::is_builtin_name(&k) {
        // Left for the statement to refuse.
        return Ok(());
    }
    if let link::Linked::Done = link::link(g, def, &script.file, true)? {
        eg!(g).classes.declared.insert((script.first_func, index));
    }
    Ok(())
}

/// "Cannot declare class A, because the name is already in use" (the
/// new declaration's kind and name).
fn check_name_free<G: Globals>(g: G, def: &ClassDef, file: &str) -> VmResult<()> {
    if def.name.contains('\0') {
        return Ok(());
    }
    let k = key(def.name.as_bytes());
    if eg!(g).classes.find(&k).is_none() && !builtin::is_builtin_name(&k) {
        return Ok(());
    }
    Err(Box::new(crate::error::VmError::Fatal {
        message: format!(
            "Cannot declare {} {}, because the name is already in use",
            def_kind_word(def),
            def.name
        ),
        at: Some(crate::error::Location {
            file: file.into(),
            line: def.line_start,
        }),
    }))
}

fn def_kind_word(def: &ClassDef) -> &'static str {
    match def.kind {
        ClassKind::Interface => "interface",
        ClassKind::Trait => "trait",
        ClassKind::Enum => "enum",
        ClassKind::Class => "class",
    }
}

/// Whether early binding may declare `def`: no interfaces, no traits
/// (an enum implements `UnitEnum`), and a known parent.
pub fn can_link_early<G: Globals>(g: G, def: &ClassDef) -> bool {
    def.interfaces.is_empty()
        && def.traits.is_empty()
        && def.kind != ClassKind::Enum
        && def.parent.iter().all(|n| lookup(g, n.as_bytes()).is_some())
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
