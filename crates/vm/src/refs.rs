//! Typed references: a reference that a typed property holds keeps that
//! property's type as one of its "type sources" ([`PhpRef::type_sources`]),
//! and every write through the reference must satisfy each source's type,
//! converting the value the same way for all of them (PHP's
//! `zend_assign_to_typed_ref` and `zend_verify_ref_assignable_zval`).
//!
//! A reference no typed property holds has no sources: the write paths
//! only look here after [`PhpRef::is_typed`] says so.

use std::rc::Rc;

use minizts_core::bytecode::{type_bits as bits, BinOp, IncDec, TypeDecl};
use minizts_core::value::{identical, TypeSource};
use minizts_core::{PhpRef, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::error::{error, type_error, VmResult};
use crate::types;

/// Whether the running code checks types strictly (its file declares
/// `strict_types=1`).
pub(crate) fn strict<G: Globals>(g: G) -> bool {
    eg!(g, |eg| match eg.frames.last() {
        // SAFETY: a frame's function is one of the request's.
        Some(f) => unsafe { &*f.function }.strict_types,
        None => false,
    })
}

fn class_name<G: Globals>(g: G, id: u32) -> String {
    crate::objects::message_name(&eg!(g).classes.get(id).name)
}

fn prop_words<G: Globals>(g: G, s: &TypeSource) -> String {
    format!(
        "property {}::${} of type {}",
        class_name(g, s.class),
        String::from_utf8_lossy(s.name.as_bytes()),
        s.ty.to_php_string()
    )
}

/// How `ty` takes `v` (PHP's `i_zend_verify_type_assignable_zval`):
/// `Some(true)` as it is, `Some(false)` only converted, `None` not at all.
fn assignable<G: Globals>(g: G, ty: &TypeDecl, v: &Value, strict: bool) -> Option<bool> {
    if matches!(types::check(g, ty, v, true), Ok(None)) {
        return Some(true);
    }
    if strict {
        return (ty.mask & bits::FLOAT != 0 && matches!(v, Value::Int(_))).then_some(false);
    }
    if matches!(v, Value::Null | Value::Undef) {
        return None;
    }
    let coercible = bits::INT | bits::FLOAT | bits::STRING;
    if ty.mask & coercible == 0 && ty.mask & bits::BOOL != bits::BOOL {
        return None;
    }
    Some(false)
}

/// `v` as every type source of `r` takes it (converted where they
/// convert it alike), or PHP's `TypeError`.
fn verify<G: Globals>(g: G, r: &PhpRef, v: Value) -> VmResult<Value> {
    let strict = strict(g);
    let sources = r.type_sources();
    let mut first: Option<&TypeSource> = None;
    let mut coerced: Option<Value> = None;
    for s in &sources {
        let fail = || {
            type_error(format!(
                "Cannot assign {} to reference held by {}",
                types::type_name(&v),
                prop_words(g, s)
            ))
        };
        let conflict = |first: &TypeSource| {
            type_error(format!(
                "Cannot assign {} to reference held by {} and {}, as this would result in an inconsistent type conversion",
                types::type_name(&v),
                prop_words(g, first),
                prop_words(g, s)
            ))
        };
        match assignable(g, &s.ty, &v, strict) {
            None => return fail(),
            Some(false) => {
                let c = match types::check(g, &s.ty, &v, strict) {
                    Ok(Some(c)) => c,
                    Ok(None) => v.clone(),
                    Err(()) => return fail(),
                };
                match (first, &coerced) {
                    (None, _) => {
                        first = Some(s);
                        coerced = Some(c);
                    }
                    (Some(f), None) => return conflict(f),
                    (Some(f), Some(prev)) => {
                        if !identical(prev, &c).unwrap_or(false) {
                            return conflict(f);
                        }
                    }
                }
            }
            Some(true) => match (first, &coerced) {
                (None, _) => first = Some(s),
                (Some(f), Some(_)) => return conflict(f),
                (Some(_), None) => {}
            },
        }
    }
    Ok(coerced.unwrap_or(v))
}

/// Writes `v` through typed reference `r`.
pub(crate) fn assign<G: Globals>(g: G, r: &PhpRef, v: Value) -> VmResult<()> {
    let v = verify(g, r, v)?;
    match r.try_set(v) {
        Ok(()) => Ok(()),
        Err(_) => error("minizts: a reference was written through itself"),
    }
}

/// `r <op>= v` through typed reference `r` (PHP's
/// `zend_binary_assign_op_typed_ref`): the result is checked before it
/// replaces the value; a string stays one under `.=`.
pub(crate) fn assign_op<G: Globals>(g: G, r: &PhpRef, op: BinOp, v: &Value) -> VmResult<()> {
    let cur = r.get();
    if op == BinOp::Concat && matches!(cur, Value::Str(_)) {
        let mut s = cur;
        crate::ops::concat_assign(g, &mut s, v)?;
        r.set(s);
        return Ok(());
    }
    let result = crate::ops::binary(g, op, &cur, v)?;
    assign(g, r, result)
}

/// `++`/`--` through typed reference `r` (PHP's `zend_incdec_typed_ref`):
/// an int that would overflow into a float is an error unless every
/// source takes floats; returns the expression's value.
pub(crate) fn inc_dec<G: Globals>(g: G, r: &PhpRef, kind: IncDec) -> VmResult<Value> {
    let before = r.get();
    let mut after = before.clone();
    crate::ops::inc_dec(g, &mut after, kind)?;
    if let (Value::Int(_), Value::Float(_)) = (&before, &after) {
        if let Some(s) = r.type_sources().iter().find(|s| s.ty.mask & bits::FLOAT == 0) {
            let (verb, end) = if kind.is_inc() {
                ("increment", "maximal")
            } else {
                ("decrement", "minimal")
            };
            return type_error(format!(
                "Cannot {verb} a reference held by {} past its {end} value",
                prop_words(g, s)
            ));
        }
    } else {
        after = verify(g, r, after)?;
    }
    r.set(after.clone());
    Ok(if kind.is_pre() { after } else { before })
}

/// Typed property `declaring::$name` of type `ty` is about to hold
/// reference `r` (`$o->p = &$x`): the referenced value must fit the type
/// (converted in place when no other property types it) and the
/// reference's other sources (PHP's `zend_verify_prop_assignable_by_ref`);
/// then the property becomes a source.
pub(crate) fn bind_typed<G: Globals>(
    g: G,
    r: &PhpRef,
    ty: &Rc<TypeDecl>,
    declaring: u32,
    name: &PhpStr,
) -> VmResult<()> {
    let source = TypeSource {
        ty: ty.clone(),
        class: declaring,
        name: name.clone(),
    };
    let v = r.get();
    let strict = strict(g);
    if r.is_typed() {
        match assignable(g, ty, &v, strict) {
            Some(true) => {}
            Some(false) if types::check(g, ty, &v, strict).is_ok() => {
                let first = r.type_sources().into_iter().next().expect("a typed reference");
                return type_error(format!(
                    "Reference with value of type {} held by {} is not compatible with {}",
                    types::type_name(&v),
                    prop_words(g, &first),
                    prop_words(g, &source)
                ));
            }
            _ => return property_error(g, &source, &v),
        }
    } else {
        match types::check(g, ty, &v, strict) {
            Ok(None) => {}
            Ok(Some(c)) => r.set(c),
            Err(()) => return property_error(g, &source, &v),
        }
    }
    r.add_type_source(source);
    Ok(())
}

fn property_error<G: Globals>(g: G, s: &TypeSource, v: &Value) -> VmResult<()> {
    type_error(format!("Cannot assign {} to {}", types::type_name(v), prop_words(g, s)))
}

/// Typed property `declaring::$name` of type `ty` was just made
/// reference `r` (`&$o->p`, a by-reference argument): the property is
/// its first source.
pub(crate) fn add_source(r: &PhpRef, ty: &Rc<TypeDecl>, declaring: u32, name: &PhpStr) {
    r.add_type_source(TypeSource {
        ty: ty.clone(),
        class: declaring,
        name: name.clone(),
    });
}
