//! Read-modify-write of a property: `$o->p++`, `--$o->p`, `$o->p op= v`
//! (PHP's `PRE_INC_OBJ`/`POST_INC_OBJ` and `ASSIGN_OBJ_OP`).
//!
//! PHP changes a declared or dynamic property where it lives (its
//! `get_property_ptr_ptr` handler), so `$this->buf .= $s` appends in
//! place and the property stays a plain value; only where that pointer
//! cannot be had (`__get`/`__set`, a readonly or typed property whose new
//! value must be checked) does it read, combine and write back. This
//! module does the same: the value is taken out of its place, changed,
//! and put back when the property's type (if any) takes the result as it
//! is; anything else goes through [`read`](super::read) and
//! [`write`](super::write), which apply the magic methods, coercion and
//! PHP's errors.

use minizts_core::bytecode::{BinOp, IncDec};
use minizts_core::object::acc;
use minizts_core::{Key, Obj, PhpRef, PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::{lookup, name_str, non_object_type, read, remember_slot, scope, write, Lookup};
use crate::error::{error, warning, VmResult};
use crate::types::accepts_plainly;

/// What a read-modify-write does to the value.
#[derive(Clone, Copy)]
pub enum Change {
    IncDec(IncDec),
    Op(BinOp),
}

/// Changes `value` in place (`v`: the operand of an `op=`).
fn apply<G: Globals>(g: G, change: Change, value: &mut Value, v: &Value) -> VmResult<()> {
    match change {
        Change::IncDec(kind) => crate::ops::inc_dec(g, value, kind),
        Change::Op(op) => crate::dim::apply_op(g, value, op, v),
    }
}

/// Whether an `op=` operand can run no script code when combined (no
/// object to convert), so that the property's value may be out of its
/// place meanwhile.
fn inert(v: &Value) -> bool {
    !matches!(v, Value::Obj(_) | Value::Closure(_) | Value::Ref(_))
}

/// `obj->name` changed by `change` (`v`: an `op=`'s operand). Gives the
/// expression's value: the old value for a postfix `++`/`--`, else the
/// value the property holds after.
pub fn modify_prop<G: Globals>(
    g: G,
    objv: &Value,
    name: &PhpStr,
    change: Change,
    v: &Value,
    cache: Option<u32>,
) -> VmResult<Value> {
    let o = match objv {
        Value::Obj(o) => o.clone(),
        Value::Ref(r) => return modify_prop(g, &r.get(), name, change, v, cache),
        other => {
            let what = match change {
                Change::IncDec(_) => "increment/decrement",
                Change::Op(_) => "assign",
            };
            return error(format!(
                "Attempt to {what} property \"{}\" on {}",
                name_str(name),
                non_object_type(other)
            ));
        }
    };
    let post = matches!(change, Change::IncDec(k) if !k.is_pre());
    let scope = scope(g);
    let found = lookup(g, &o, name, scope.as_ref());
    remember_slot(g, cache, &o.class, &found);
    // A typed reference (held by a typed property, here or elsewhere)
    // checks the result against every type it carries.
    if let Some(r) = typed_ref(&o, &found, name) {
        let m = match change {
            Change::Op(op) => super::Modify::Op(op, v),
            Change::IncDec(kind) => super::Modify::IncDec(kind),
        };
        return m.apply_typed_ref(g, &r);
    }
    match found {
        Lookup::Slot(slot) => {
            let slot = slot as usize;
            let p = &o.class.props[slot];
            let in_place = p.flags & acc::READONLY == 0 && inert(v);
            if in_place {
                let taken = {
                    let mut props = o.props.borrow_mut();
                    match &mut props[slot] {
                        Value::Undef => None,
                        // A reference: changed behind it when the property
                        // has no type (a typed reference's checks are the
                        // general path's).
                        Value::Ref(r) if p.ty.is_none() && !r.is_typed() => {
                            let r = r.clone();
                            drop(props);
                            let mut inner = std::mem::take(&mut *r.borrow_mut());
                            let before = post.then(|| inner.clone());
                            let done = apply(g, change, &mut inner, v);
                            let after = inner.clone();
                            *r.borrow_mut() = inner;
                            done?;
                            return Ok(before.unwrap_or(after));
                        }
                        Value::Ref(_) => None,
                        // A typed property gets its old value back if the
                        // result needs its coercion or fails it: kept when
                        // it costs nothing, and only then taken.
                        place if p.ty.is_none() || place.is_scalar() => Some(std::mem::take(place)),
                        _ => None,
                    }
                };
                if let Some(mut value) = taken {
                    let old = (post || p.ty.is_some()).then(|| value.clone());
                    let done = apply(g, change, &mut value, v);
                    let accepted =
                        p.ty.as_ref()
                            .is_none_or(|ty| accepts_plainly(ty, &value, (p.declaring + 1, 0)));
                    if done.is_ok() && accepted {
                        let after = if post { None } else { Some(value.clone()) };
                        o.props.borrow_mut()[slot] = value;
                        return Ok(old.filter(|_| post).or(after).unwrap_or(Value::Null));
                    }
                    // Put back what was there (a failed change leaves the
                    // property as it was, as does a failed coercion).
                    let old = old.unwrap_or(Value::Null);
                    o.props.borrow_mut()[slot] = old.clone();
                    done?;
                    if let (Change::IncDec(kind), Value::Int(_), Value::Float(_)) = (change, &old, &value) {
                        let declaring = eg!(g).classes.get(p.declaring).clone();
                        let ty = p.ty.as_ref().map(|t| t.to_php_string()).unwrap_or_default();
                        let (verb, end) = if kind.is_inc() {
                            ("increment", "maximal")
                        } else {
                            ("decrement", "minimal")
                        };
                        return crate::error::type_error(format!(
                            "Cannot {verb} property {}::${} of type {ty} past its {end} value",
                            declaring.name,
                            name_str(name)
                        ));
                    }
                    write(g, &Value::Obj(o.clone()), name, value, cache)?;
                    if post {
                        return Ok(old);
                    }
                    let after = o.props.borrow()[slot].deref_clone();
                    return Ok(after);
                }
            }
        }
        Lookup::Dynamic => {
            let key = Key::from_php_str(name.clone());
            let exists = o.dynamic.borrow().as_ref().is_some_and(|d| d.get(&key).is_some());
            if !exists && o.class.magic.get.is_none() && o.class.magic.set.is_none() {
                // PHP makes the property (with 8.2's deprecation of a
                // dynamic property) before it warns that it was not there.
                write(g, &Value::Obj(o.clone()), name, Value::Null, None)?;
                warning(g, &format!("Undefined property: {}::${}", o.class.name, name_str(name)));
            }
            if (exists || o.class.magic.get.is_none()) && inert(v) {
                let taken = {
                    let mut dynamic = o.dynamic.borrow_mut();
                    match dynamic.as_mut().and_then(|d| d.get_mut(&key)) {
                        Some(Value::Ref(_)) | None => None,
                        // Null meanwhile, not Undef: an array's Undef is a
                        // hole its lookups skip.
                        Some(place) => Some(std::mem::replace(place, Value::Null)),
                    }
                };
                if let Some(mut value) = taken {
                    let before = post.then(|| value.clone());
                    let done = apply(g, change, &mut value, v);
                    let after = if post { None } else { Some(value.clone()) };
                    if let Some(place) = o.dynamic.borrow_mut().as_mut().and_then(|d| d.get_mut(&key)) {
                        *place = value;
                    }
                    done?;
                    return Ok(before.or(after).unwrap_or(Value::Null));
                }
            }
        }
        Lookup::Hidden(..) => {}
    }
    // Through `__get`/`__set`, a readonly property, a typed reference, an
    // operand that may run code: read, combine, write back.
    let objv = Value::Obj(o);
    let old = read(g, &objv, name, false, cache)?;
    let mut value = old.clone();
    apply(g, change, &mut value, v)?;
    write(g, &objv, name, value.clone(), cache)?;
    Ok(if post { old } else { value })
}

/// The typed reference property `name` of `o` holds, if it holds one.
fn typed_ref(o: &Obj, found: &Lookup, name: &PhpStr) -> Option<PhpRef> {
    let typed = |v: Option<&Value>| match v {
        Some(Value::Ref(r)) if r.is_typed() => Some(r.clone()),
        _ => None,
    };
    match found {
        Lookup::Slot(slot) if o.class.props[*slot as usize].flags & acc::READONLY == 0 => {
            typed(o.props.borrow().get(*slot as usize))
        }
        Lookup::Dynamic => {
            let key = Key::from_php_str(name.clone());
            typed(o.dynamic.borrow().as_ref().and_then(|d| d.get(&key)))
        }
        _ => None,
    }
}
