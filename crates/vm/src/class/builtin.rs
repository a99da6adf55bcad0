//! The builtin classes and interfaces (`stdClass`, `Throwable` and PHP
//! 8.2's exception hierarchy, the engine's interfaces, `Closure`, SPL's
//! `ArrayIterator` and `ArrayObject`), each linked into
//! the request's class table the first time a script names it, so that a
//! request that uses none pays nothing.
//!
//! Draft (issue 21): the native methods (`Exception::getMessage` and the
//! others) are builtins of the `classes` module, named `Class::method`,
//! which the function table does not list.

use std::rc::Rc;

use hashbrown::HashMap;
use minizts_core::object::{acc, Class, ClassKind, Method, MethodBody, NativeKind, PropInfo};
use minizts_core::{PhpStr, Value};
use minizts_globals::Globals;

/// One builtin class: its name, parent, interfaces and kind.
struct Spec {
    name: &'static str,
    parent: Option<&'static str>,
    interfaces: &'static [&'static str],
    kind: ClassKind,
    flags: u16,
}

const fn class(name: &'static str, parent: Option<&'static str>, interfaces: &'static [&'static str]) -> Spec {
    Spec {
        name,
        parent,
        interfaces,
        kind: ClassKind::Class,
        flags: 0,
    }
}

const fn interface(name: &'static str, extends: &'static [&'static str]) -> Spec {
    Spec {
        name,
        parent: None,
        interfaces: extends,
        kind: ClassKind::Interface,
        flags: 0,
    }
}

/// Every builtin class, parents before children (written once: the
/// lookup, `get_declared_classes` and the docs come from it).
const SPECS: &[Spec] = &[
    class("stdClass", None, &[]),
    interface("Traversable", &[]),
    interface("Iterator", &["Traversable"]),
    interface("IteratorAggregate", &["Traversable"]),
    interface("ArrayAccess", &[]),
    interface("Countable", &[]),
    interface("Stringable", &[]),
    interface("JsonSerializable", &[]),
    interface("Serializable", &[]),
    interface("SeekableIterator", &["Iterator"]),
    interface("UnitEnum", &[]),
    interface("BackedEnum", &["UnitEnum"]),
    interface("Throwable", &["Stringable"]),
    class("Exception", None, &["Throwable"]),
    class("Error", None, &["Throwable"]),
    class("ErrorException", Some("Exception"), &[]),
    class("TypeError", Some("Error"), &[]),
    class("ValueError", Some("Error"), &[]),
    class("ArithmeticError", Some("Error"), &[]),
    class("DivisionByZeroError", Some("ArithmeticError"), &[]),
    class("AssertionError", Some("Error"), &[]),
    class("ArgumentCountError", Some("TypeError"), &[]),
    class("CompileError", Some("Error"), &[]),
    class("ParseError", Some("CompileError"), &[]),
    class("UnhandledMatchError", Some("Error"), &[]),
    class("JsonException", Some("Exception"), &[]),
    class("LogicException", Some("Exception"), &[]),
    class("BadFunctionCallException", Some("LogicException"), &[]),
    class("BadMethodCallException", Some("BadFunctionCallException"), &[]),
    class("DomainException", Some("LogicException"), &[]),
    class("InvalidArgumentException", Some("LogicException"), &[]),
    class("LengthException", Some("LogicException"), &[]),
    class("OutOfRangeException", Some("LogicException"), &[]),
    class("RuntimeException", Some("Exception"), &[]),
    class("OutOfBoundsException", Some("RuntimeException"), &[]),
    class("OverflowException", Some("RuntimeException"), &[]),
    class("RangeException", Some("RuntimeException"), &[]),
    class("UnderflowException", Some("RuntimeException"), &[]),
    class("UnexpectedValueException", Some("RuntimeException"), &[]),
    class(
        "ArrayIterator",
        None,
        &["SeekableIterator", "ArrayAccess", "Serializable", "Countable"],
    ),
    class(
        "ArrayObject",
        None,
        &["IteratorAggregate", "ArrayAccess", "Serializable", "Countable"],
    ),
    Spec {
        name: "SensitiveParameter",
        parent: None,
        interfaces: &[],
        kind: ClassKind::Class,
        flags: acc::FINAL,
    },
    Spec {
        name: "SensitiveParameterValue",
        parent: None,
        interfaces: &[],
        kind: ClassKind::Class,
        flags: acc::FINAL,
    },
    Spec {
        name: "Closure",
        parent: None,
        interfaces: &[],
        kind: ClassKind::Class,
        flags: acc::FINAL,
    },
    // What `unserialize()` makes of an object whose class is not found.
    Spec {
        name: "__PHP_Incomplete_Class",
        parent: None,
        interfaces: &[],
        kind: ClassKind::Class,
        flags: acc::FINAL,
    },
];

/// The properties every `Exception` and `Error` has (PHP declares them
/// on each of the two roots: `message`, `code`, `file`, `line` protected,
/// `string`, `trace`, `previous` private).
fn throwable_props(id: u32) -> Vec<(PropInfo, Value)> {
    let p = |name: &str, flags: u16, v: Value| {
        (
            PropInfo {
                name: PhpStr::from(name.as_bytes()),
                flags,
                declaring: id,
                ty: None,
                has_default: true,
            },
            v,
        )
    };
    vec![
        p("message", acc::PROTECTED, Value::str("")),
        p("string", acc::PRIVATE, Value::str("")),
        p("code", acc::PROTECTED, Value::Int(0)),
        p("file", acc::PROTECTED, Value::str("")),
        p("line", acc::PROTECTED, Value::Null),
        p("trace", acc::PRIVATE, Value::empty_array()),
        p("previous", acc::PRIVATE, Value::Null),
    ]
}

/// The builtin classes' names and kinds, parents first.
pub(super) fn names() -> impl Iterator<Item = (&'static str, ClassKind)> {
    SPECS.iter().map(|s| (s.name, s.kind))
}

/// Whether a builtin class is named `name` (any case).
pub(super) fn is_builtin_name(name: &[u8]) -> bool {
    SPECS.iter().any(|s| s.name.as_bytes().eq_ignore_ascii_case(name))
}

/// Links builtin class `lc_name` (lower case) into the request's table,
/// with its parents, if there is such a class.
pub(super) fn make<G: Globals>(g: G, lc_name: &[u8]) -> Option<Rc<Class>> {
    let spec = SPECS.iter().find(|s| s.name.as_bytes().eq_ignore_ascii_case(lc_name))?;
    let parent = match spec.parent {
        Some(p) => Some(super::lookup(g, p.as_bytes())?),
        None => None,
    };
    let mut interfaces: Vec<Rc<Class>> = parent.as_ref().map_or_else(Vec::new, |p| p.interfaces.clone());
    for i in spec.interfaces {
        let i = super::lookup(g, i.as_bytes())?;
        for j in std::iter::once(&i).chain(i.interfaces.iter()) {
            if !interfaces.iter().any(|k| k.id == j.id) {
                interfaces.push(j.clone());
            }
        }
    }
    let is_root_throwable = matches!(spec.name, "Exception" | "Error");
    Some(super::register(g, |id| {
        let (mut props, mut defaults) = parent.as_ref().map_or_else(
            || (Vec::new(), Vec::new()),
            |p| (p.props.clone(), p.defaults.borrow().clone()),
        );
        if is_root_throwable {
            for (info, v) in throwable_props(id) {
                props.push(info);
                defaults.push(v);
            }
        }
        if spec.name == "SensitiveParameterValue" {
            props.push(PropInfo {
                name: PhpStr::from(&b"value"[..]),
                flags: acc::PRIVATE | acc::READONLY,
                declaring: id,
                ty: None,
                has_default: false,
            });
            defaults.push(Value::Undef);
        }
        if spec.name == "ErrorException" {
            props.push(PropInfo {
                name: PhpStr::from(&b"severity"[..]),
                flags: acc::PROTECTED,
                declaring: id,
                ty: None,
                has_default: true,
            });
            defaults.push(Value::Int(1));
        }
        let prop_index = props
            .iter()
            .enumerate()
            .filter(|(_, p)| p.flags & acc::PRIVATE == 0 || p.declaring == id)
            .map(|(i, p)| (p.name.clone(), i as u32))
            .collect();
        let mut methods: HashMap<Box<[u8]>, Rc<Method>> = parent.as_ref().map_or_else(HashMap::new, |p| {
            p.methods.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        });
        for (nid, name, flags) in crate::natives::declared_by(spec.name) {
            methods.insert(
                name.to_ascii_lowercase().into_bytes().into(),
                Rc::new(Method {
                    name: PhpStr::from(name.as_bytes()),
                    flags,
                    declaring: id,
                    body: MethodBody::Native(nid),
                }),
            );
        }
        let mut method_order: Vec<Box<[u8]>> = crate::natives::declared_by(spec.name)
            .map(|(_, name, _)| name.to_ascii_lowercase().into_bytes().into_boxed_slice())
            .collect();
        for k in parent.iter().flat_map(|p| p.method_order.iter()) {
            if !method_order.contains(k) {
                method_order.push(k.clone());
            }
        }
        let declared = props
            .iter()
            .filter(|p| p.declaring == id)
            .map(|p| p.name.clone())
            .collect();
        let magic = super::magic_of(&methods);
        let native = if is_root_throwable {
            Some(NativeKind::Throwable)
        } else if spec.name == "SensitiveParameterValue" {
            Some(NativeKind::Sealed)
        } else if spec.name == "Closure" {
            Some(NativeKind::Closure)
        } else if matches!(spec.name, "ArrayIterator" | "ArrayObject") {
            Some(NativeKind::ArrayIterator)
        } else {
            parent.as_ref().and_then(|p| p.native)
        };
        Class {
            id,
            name: PhpStr::from(spec.name.as_bytes()),
            kind: spec.kind,
            flags: spec.flags,
            parent,
            interfaces,
            traits: Vec::new(),
            declared,
            props,
            prop_index,
            defaults: std::cell::RefCell::new(defaults),
            defaults_ready: std::cell::Cell::new(true),
            defaults_fn: None,
            default_targets: Vec::new(),
            trait_defaults: Vec::new(),
            statics: HashMap::new(),
            consts: HashMap::new(),
            const_order: Vec::new(),
            methods,
            method_order,
            magic,
            enum_backing: None,
            consts_checked: std::cell::Cell::new(false),
            allow_dynamic: spec.name == "stdClass" || spec.name == "__PHP_Incomplete_Class",
            native,
        }
    }))
}
