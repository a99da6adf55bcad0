//! Checking values against declared parameter and return types, as PHP
//! 8.2 does (`zend_verify_scalar_type_hint` and
//! `zend_verify_weak_scalar_type_hint`): a value of an accepted type
//! passes; otherwise, in coercive mode, a scalar may be converted to the
//! first accepted scalar type it converts to (int, then float, then
//! string, then bool), and in strict mode only an int to a float; anything
//! else is a `TypeError` with PHP's message.
//!
//! Which mode applies is the file's (`declare(strict_types=1)`): for a
//! parameter, the calling function's file, unless a builtin called it
//! (internal callers are never strict); for a return value, the
//! function's own.

use minizts_core::bytecode::{type_bits as bits, TypeDecl};
use minizts_core::numfmt::{self, Number};
use minizts_core::{PhpStr, Value};
use minizts_globals::Globals;

use crate::error::deprecated;

/// The type bit of `v`'s type (0 for a reference and the iterator
/// values).
#[inline]
pub(crate) fn kind(v: &Value) -> u16 {
    match v {
        Value::Undef | Value::Null => bits::NULL,
        Value::Bool(true) => bits::TRUE,
        Value::Bool(false) => bits::FALSE,
        Value::Int(_) => bits::INT,
        Value::Float(_) => bits::FLOAT,
        Value::Str(_) => bits::STRING,
        Value::Arr(_) => bits::ARRAY,
        Value::Closure(_) | Value::Obj(_) => bits::OBJECT,
        Value::Ref(_) | Value::IterVal(..) | Value::IterRef(_) => 0,
    }
}

/// Whether `class`, one of its ancestors or one of its interfaces is
/// named `name` (compared as PHP compares class names). A class's own
/// links answer this without looking the name up; an alias of the class
/// is not found here.
fn class_named(class: &minizts_core::Class, name: &str) -> bool {
    named_in(class, name).is_some()
}

/// The id of the class or interface named `name` among `class`, its
/// ancestors and its interfaces (as [`class_named`] finds it).
#[inline]
pub(crate) fn named_in(class: &minizts_core::Class, name: &str) -> Option<minizts_core::object::ClassId> {
    // Types name classes as they were declared nearly always: the exact
    // comparison first, the case-insensitive one only where it fails.
    let named = |k: &minizts_core::Class| {
        let k = k.name.as_bytes();
        k.len() == name.len() && (k == name.as_bytes() || k.eq_ignore_ascii_case(name.as_bytes()))
    };
    let mut c = Some(class);
    while let Some(k) = c {
        if named(k) {
            return Some(k.id);
        }
        c = k.parent.as_deref();
    }
    class.interfaces.iter().find(|i| named(i)).map(|i| i.id)
}

/// Whether `ty` takes `v` by its type alone (`int`, `object`, `mixed`, …).
#[inline(always)]
pub(crate) fn takes_kind(ty: &TypeDecl, v: &Value) -> bool {
    ty.mask & kind(v) != 0
}

/// Whether `ty` takes `v` (not a reference) as it is, seen from `v`'s
/// type alone or from the names of an object's classes: what `accepts`
/// says without a class lookup or a scope, so it may say no where
/// `accepts` says yes (`self`, `static`, `callable`, an alias), never
/// the other way round. The run loop's fast paths check with it.
///
/// `scopes` are the class ids + 1 that `self` and `static` stand for (a
/// frame's scope and called scope; 0 where there is none), compared by
/// id, as PHP compares the class its cache slot holds.
pub(crate) fn accepts_plainly(ty: &TypeDecl, v: &Value, scopes: (u32, u32)) -> bool {
    if ty.mask & kind(v) != 0 {
        return true;
    }
    match v {
        Value::Obj(o) if !ty.intersection => {
            let (scope, called) = scopes;
            (ty.mask & bits::STATIC != 0 && called != 0 && descends_from(&o.class, called - 1))
                || ty.classes.iter().any(|c| {
                    if c.eq_ignore_ascii_case("self") {
                        scope != 0 && descends_from(&o.class, scope - 1)
                    } else {
                        class_named(&o.class, c)
                    }
                })
        }
        _ => false,
    }
}

/// Whether `class` is class `id`, extends it or implements it.
pub(crate) fn descends_from(class: &minizts_core::Class, id: minizts_core::object::ClassId) -> bool {
    let mut c = Some(class);
    while let Some(k) = c {
        if k.id == id {
            return true;
        }
        c = k.parent.as_deref();
    }
    class.interfaces.iter().any(|i| i.id == id)
}

/// Whether `v` (not a reference) is accepted by `ty` as it is.
fn accepts<G: Globals>(g: G, ty: &TypeDecl, v: &Value) -> bool {
    let m = ty.mask;
    if accepts_plainly(ty, v, (0, 0)) {
        return true;
    }
    match v {
        Value::Obj(o) => {
            if m & bits::STATIC != 0 && crate::objects::called(g).is_some_and(|c| o.class.is_subclass_of(&c)) {
                return true;
            }
            let is = |name: &str| {
                let class = if name.eq_ignore_ascii_case("self") {
                    crate::objects::scope(g)
                } else if name.eq_ignore_ascii_case("parent") {
                    crate::objects::scope(g).and_then(|s| s.parent.clone())
                } else {
                    crate::class::lookup(g, name.as_bytes())
                };
                class.is_some_and(|c| o.class.is_subclass_of(&c))
            };
            if ty.intersection {
                !ty.classes.is_empty() && ty.classes.iter().all(|c| is(c))
            } else {
                // (A DNF type's intersection member: `A&B`.)
                let member = |c: &str| c.split('&').all(is);
                ty.classes.iter().any(|c| member(c)) || (m & bits::CALLABLE != 0 && o.class.magic.invoke.is_some())
            }
        }
        Value::Closure(_) => m & bits::CALLABLE != 0 || ty.classes.iter().any(|c| c.eq_ignore_ascii_case("Closure")),
        Value::Str(_) | Value::Arr(_) if m & bits::CALLABLE != 0 => {
            matches!(crate::call::callable::check(g, v, false), Ok(Ok(_)))
        }
        _ => false,
    }
}

/// A float as an int parameter takes it: in range, with PHP 8.1's
/// deprecation when the fraction is lost; `None` when out of range.
fn float_to_int<G: Globals>(g: G, f: f64, from_string: Option<&PhpStr>) -> Option<i64> {
    if !f.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        return None;
    }
    if f.fract() != 0.0 {
        let message = match from_string {
            Some(s) => format!(
                "Implicit conversion from float-string \"{}\" to int loses precision",
                String::from_utf8_lossy(s)
            ),
            None => format!(
                "Implicit conversion from float {} to int loses precision",
                numfmt::php_float_repr(f)
            ),
        };
        deprecated(g, &message);
    }
    Some(f as i64)
}

/// The weak scalar conversion of `v` to `ty`, if there is one.
fn convert<G: Globals>(g: G, ty: &TypeDecl, v: &Value) -> Option<Value> {
    let m = ty.mask;
    let number = match v {
        Value::Str(s) => numfmt::is_numeric_str(s),
        _ => None,
    };
    // An int|float union takes a numeric string as the number it spells.
    if let (Some(n), true) = (number, m & bits::INT != 0 && m & bits::FLOAT != 0) {
        return Some(match n {
            Number::Int(n) => Value::Int(n),
            Number::Float(f) => Value::Float(f),
        });
    }
    if m & bits::INT != 0 {
        let n = match v {
            Value::Float(f) => float_to_int(g, *f, None),
            Value::Bool(b) => Some(i64::from(*b)),
            Value::Str(s) => match number {
                Some(Number::Int(n)) => Some(n),
                Some(Number::Float(f)) => float_to_int(g, f, Some(s)),
                None => None,
            },
            _ => None,
        };
        if let Some(n) = n {
            return Some(Value::Int(n));
        }
    }
    if m & bits::FLOAT != 0 {
        let f = match v {
            Value::Int(n) => Some(*n as f64),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Str(_) => match number {
                Some(Number::Int(n)) => Some(n as f64),
                Some(Number::Float(f)) => Some(f),
                None => None,
            },
            _ => None,
        };
        if let Some(f) = f {
            return Some(Value::Float(f));
        }
    }
    if m & bits::STRING != 0 && matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_)) {
        return crate::ops::to_str(g, v).ok().map(Value::Str);
    }
    if m & bits::BOOL == bits::BOOL && matches!(v, Value::Int(_) | Value::Float(_) | Value::Str(_)) {
        return Some(Value::Bool(v.to_bool()));
    }
    None
}

/// Checks `v` against `ty` (strictly, or in coercive mode): `Ok(None)`
/// if it passes as it is, `Ok(Some(converted))`, or `Err(())` for a
/// `TypeError`.
pub(crate) fn check<G: Globals>(g: G, ty: &TypeDecl, v: &Value, strict: bool) -> Result<Option<Value>, ()> {
    if accepts(g, ty, v) {
        return Ok(None);
    }
    // Coercive mode takes a `Stringable` object for a string.
    if let (Value::Obj(o), false, true) = (v, strict, ty.mask & bits::STRING != 0) {
        if o.class.magic.to_string.is_some() {
            return crate::ops::to_str(g, v).map(|s| Some(Value::Str(s))).map_err(drop);
        }
    }
    if matches!(v, Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Bool(_)) {
        if let (Value::Int(n), true) = (v, ty.mask & bits::FLOAT != 0) {
            return Ok(Some(Value::Float(*n as f64)));
        }
        if strict {
            return Err(());
        }
        if let Some(c) = convert(g, ty, v) {
            return Ok(Some(c));
        }
    }
    Err(())
}

/// A value's type as PHP's messages name it (`zend_zval_type_name`):
/// an object by its class.
pub(crate) fn type_name(v: &Value) -> std::borrow::Cow<'static, str> {
    match v {
        // As a C string: an anonymous class's name ends at its NUL.
        Value::Obj(o) => crate::objects::message_name(&o.class.name).into(),
        Value::Ref(r) => type_name(&r.get()),
        v => v.type_name().into(),
    }
}

/// Checks a typed property's evaluated default (a constant expression's
/// value), as PHP's `zend_update_class_constants` does: strictly, so
/// that only an int becomes a float.
pub(crate) fn check_default<G: Globals>(
    g: G,
    ty: &TypeDecl,
    v: Value,
    declaring: u32,
    name: &PhpStr,
) -> crate::error::VmResult<Value> {
    match check(g, ty, &v, true) {
        Ok(None) => Ok(v),
        Ok(Some(c)) => Ok(c),
        Err(()) => {
            let declaring = crate::objects::message_name(&minizts_globals::eg!(g).classes.get(declaring).name);
            crate::error::type_error(format!(
                "Cannot assign {} to property {}::${} of type {}",
                type_name(&v),
                declaring,
                String::from_utf8_lossy(name.as_bytes()),
                ty.to_php_string()
            ))
        }
    }
}

/// Checks (and converts) a value assigned to a typed property of class
/// `class` (declared by `declaring`), as PHP's `zend_verify_property_type`.
pub(crate) fn check_property<G: Globals>(
    g: G,
    ty: &TypeDecl,
    v: Value,
    class: &minizts_core::Class,
    declaring: u32,
    name: &PhpStr,
) -> crate::error::VmResult<Value> {
    let _ = class;
    let strict = crate::refs::strict(g);
    match check(g, ty, &v, strict) {
        Ok(None) => Ok(v),
        Ok(Some(c)) => Ok(c),
        Err(()) => {
            let declaring = crate::objects::message_name(&minizts_globals::eg!(g).classes.get(declaring).name);
            crate::error::type_error(format!(
                "Cannot assign {} to property {}::${} of type {}",
                type_name(&v),
                declaring,
                String::from_utf8_lossy(name.as_bytes()),
                ty.to_php_string()
            ))
        }
    }
}

/// The name messages give the running function `f`
/// (`get_active_function_or_method_name`): a method's or a scoped
/// closure's with its class, a closure's is `{closure}` in its
/// namespace.
fn function_name<G: Globals>(g: G, f: &minizts_core::bytecode::Function) -> String {
    match crate::objects::scope(g) {
        Some(c) => format!("{}::{}", c.name, f.name),
        None => f.name.to_string(),
    }
}

/// A declared type as the running function's messages show it, `self`
/// and `parent` naming their classes (`zend_type_to_string_resolved`).
fn resolved_type<G: Globals>(g: G, ty: &TypeDecl) -> String {
    let Some(scope) = crate::objects::scope(g) else {
        return ty.to_php_string();
    };
    let mut ty = ty.clone();
    let resolve = |c: &str| -> String {
        if c.eq_ignore_ascii_case("self") {
            String::from_utf8_lossy(scope.name.as_bytes()).into()
        } else if c.eq_ignore_ascii_case("parent") {
            match &scope.parent {
                Some(p) => String::from_utf8_lossy(p.name.as_bytes()).into(),
                None => c.into(),
            }
        } else {
            c.into()
        }
    };
    for c in ty.classes.iter_mut() {
        // (Each name of a DNF type's intersection member too.)
        *c = c.split('&').map(resolve).collect::<Vec<_>>().join("&").into();
    }
    // `static` names the called class, after the class names as PHP
    // prints it.
    if ty.mask & bits::STATIC != 0 {
        if let Some(called) = crate::objects::called(g) {
            ty.mask &= !bits::STATIC;
            let mut classes = ty.classes.into_vec();
            classes.push(crate::objects::message_name(&called.name).into());
            ty.classes = classes.into();
        }
    }
    ty.to_php_string()
}

/// ", called in FILE on line N": where a user caller called the running
/// function (nothing when a builtin called it back).
fn called_in<G: Globals>(g: G) -> String {
    minizts_globals::eg!(g, |eg| {
        let n = eg.frames.len();
        if n < 2 || eg.frames[n - 1].native {
            return String::new();
        }
        let caller = &eg.frames[n - 2];
        let Some(unit) = eg.code.unit_of(caller.func) else {
            return String::new();
        };
        let line = unit
            .function(caller.func)
            .and_then(|cf| cf.line_at(caller.pc))
            .unwrap_or(0);
        format!(", called in {} on line {line}", unit.file)
    })
}

/// PHP's `TypeError` for argument `index` (0-based) of the running
/// function `f`; `name` is `None` for a variadic parameter's values.
pub(crate) fn arg_error<G: Globals>(
    g: G,
    f: &minizts_core::bytecode::Function,
    index: usize,
    name: Option<&str>,
    ty: &TypeDecl,
    given: &Value,
) -> Box<crate::error::VmError> {
    let name = name.map_or(String::new(), |n| format!(" (${n})"));
    let message = format!(
        "{}(): Argument #{}{name} must be of type {}, {} given{}",
        function_name(g, f),
        index + 1,
        resolved_type(g, ty),
        type_name(given),
        called_in(g)
    );
    crate::error::type_error::<()>(message).unwrap_err()
}

/// PHP's `TypeError` for a return value (`None`: the end of the function
/// reached without a `return`).
pub(crate) fn return_error<G: Globals>(
    g: G,
    f: &minizts_core::bytecode::Function,
    ty: &TypeDecl,
    given: Option<&Value>,
) -> Box<crate::error::VmError> {
    let message = if ty.mask == bits::NEVER {
        format!(
            "{}(): never-returning function must not implicitly return",
            function_name(g, f)
        )
    } else {
        format!(
            "{}(): Return value must be of type {}, {} returned",
            function_name(g, f),
            resolved_type(g, ty),
            given.map_or("none".into(), type_name)
        )
    };
    crate::error::type_error::<()>(message).unwrap_err()
}

/// Whether the running function's arguments are checked strictly: its
/// caller is a user function of a `strict_types=1` file.
pub(crate) fn caller_is_strict<G: Globals>(g: G) -> bool {
    minizts_globals::eg!(g, |eg| {
        let n = eg.frames.len();
        if n < 2 || eg.frames[n - 1].native {
            return false;
        }
        // SAFETY: a frame's function is one of the request's.
        unsafe { &*eg.frames[n - 2].function }.strict_types
    })
}

/// Checks the argument in `slot` (behind its reference, for a
/// by-reference parameter) and stores its conversion there.
pub(crate) fn verify_slot<G: Globals>(
    g: G,
    f: &minizts_core::bytecode::Function,
    index: usize,
    name: Option<&str>,
    ty: &TypeDecl,
    slot: &mut Value,
) -> crate::error::VmResult<()> {
    let strict = caller_is_strict(g);
    if let Value::Ref(r) = slot {
        let v = r.get();
        return match check(g, ty, &v, strict) {
            Ok(None) => Ok(()),
            Ok(Some(c)) => {
                r.set(c);
                Ok(())
            }
            Err(()) => Err(arg_error(g, f, index, name, ty, &v)),
        };
    }
    match check(g, ty, slot, strict) {
        Ok(None) => Ok(()),
        Ok(Some(c)) => {
            *slot = c;
            Ok(())
        }
        Err(()) => Err(arg_error(g, f, index, name, ty, slot)),
    }
}

/// Checks each value a variadic parameter collected.
pub(crate) fn verify_variadic<G: Globals>(
    g: G,
    f: &minizts_core::bytecode::Function,
    index: usize,
    ty: &TypeDecl,
    slot: &mut Value,
) -> crate::error::VmResult<()> {
    let Value::Arr(a) = slot else { return Ok(()) };
    // The array the call just collected: unshared, so not copied here.
    let values = std::rc::Rc::make_mut(a);
    for (j, v) in values.values_mut().enumerate() {
        verify_slot(g, f, index + j, None, ty, v)?;
    }
    Ok(())
}
