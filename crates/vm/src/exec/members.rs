//! The run loop's fast paths for object members: a property read or
//! write, or a method's resolution, that the instruction's runtime cache
//! entry answers (PHP's handlers for `FETCH_OBJ_R`, `ASSIGN_OBJ` and
//! `INIT_METHOD_CALL` take the same branch on a `CACHE_SLOT` hit).
//!
//! Each is out of line, so that the loop only pays a call for them, and
//! answers `None` for anything it does not do — no cache entry, another
//! class or scope, a reference, magic, an uninitialised property, a
//! readonly one, a value a typed property would have to convert or check
//! by class — which the general path (`slow.rs`, `objects.rs`) then does
//! in full, filling the cache entry for the next time.

use minizts_core::bytecode::{type_bits, NO_CACHE};
use minizts_core::object::{acc, MethodBody};
use minizts_core::{Obj, Value};
use minizts_globals::executor::CacheEntry;
use minizts_globals::{eg, Globals};

/// The declared slot that the running function's cache entry `cache`
/// says code of the running scope reaches on an object of `o`'s class.
#[inline(always)]
fn cached_slot<G: Globals>(g: G, o: &Obj, cache: u16) -> Option<usize> {
    if cache == NO_CACHE {
        return None;
    }
    eg!(g, |eg| {
        let f = eg.frames.last()?;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base as usize + cache as usize;
        match eg.runtime_cache.get(at)? {
            CacheEntry::Prop { class, scope, slot } if *class == o.class.id && *scope == f.scope => {
                Some(*slot as usize)
            }
            _ => None,
        }
    })
}

/// `obj->name` through the cache: the property's value (not a reference,
/// initialised).
#[inline(never)]
pub(super) fn fetch_prop<G: Globals>(g: G, obj: &Value, cache: u16) -> Option<Value> {
    let Value::Obj(o) = obj else { return None };
    let slot = cached_slot(g, o, cache)?;
    let props = o.props.try_borrow().ok()?;
    match props.get(slot)? {
        Value::Undef | Value::Ref(_) => None,
        v => Some(v.clone()),
    }
}

/// `obj->name = v` through the cache, for a property that is not
/// readonly, not a reference, and whose type (if it has one) takes `v`
/// as it is without a class check. `Some(due)`: done, `due` when the
/// old value's release made a destructor due.
#[inline(never)]
pub(super) fn assign_prop<G: Globals>(g: G, obj: &Value, cache: u16, v: &Value) -> Option<bool> {
    let Value::Obj(o) = obj else { return None };
    let slot = cached_slot(g, o, cache)?;
    let p = o.class.props.get(slot)?;
    if p.flags & acc::READONLY != 0 {
        return None;
    }
    let kind = match v {
        Value::Null => type_bits::NULL,
        Value::Bool(true) => type_bits::TRUE,
        Value::Bool(false) => type_bits::FALSE,
        Value::Int(_) => type_bits::INT,
        Value::Float(_) => type_bits::FLOAT,
        Value::Str(_) => type_bits::STRING,
        Value::Arr(_) => type_bits::ARRAY,
        // An object's type test may look classes up; references and
        // the rest are the general path's.
        Value::Obj(_) if p.ty.is_none() => 0,
        _ => return None,
    };
    if p.ty.as_ref().is_some_and(|ty| ty.mask & kind == 0) {
        return None;
    }
    let mut props = o.props.try_borrow_mut().ok()?;
    let place = props.get_mut(slot)?;
    // An unset property's write goes to `__set` where the class has one.
    if matches!(place, Value::Ref(_)) || (matches!(place, Value::Undef) && o.class.magic.set.is_some()) {
        return None;
    }
    let old = std::mem::replace(place, v.clone());
    drop(props);
    if old.is_scalar() {
        return Some(false);
    }
    drop(old);
    Some(eg!(g).interrupt.pending.load(std::sync::atomic::Ordering::Relaxed))
}

/// `obj->name(…)`'s method through the cache, into the callee registers
/// `regs..regs+3` (as `objects::fill_callee` writes them), which hold
/// nothing counted.
///
/// # Safety
/// `regs..regs+3` are registers of the running frame's window.
#[inline(never)]
pub(super) unsafe fn init_method<G: Globals>(g: G, obj: &Value, cache: u16, regs: *mut Value) -> bool {
    let Value::Obj(o) = obj else { return false };
    if cache == NO_CACHE {
        return false;
    }
    let desc = eg!(g, |eg| {
        let f = eg.frames.last()?;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base as usize + cache as usize;
        match eg.runtime_cache.get(at)? {
            CacheEntry::Method { class, scope, method } if *class == o.class.id && *scope == f.scope => {
                match method.body {
                    MethodBody::User(func) => Some((i64::from(method.declaring) << 32) | i64::from(func)),
                    MethodBody::Native(_) => None,
                }
            }
            _ => None,
        }
    });
    let Some(desc) = desc else { return false };
    // SAFETY: the caller's.
    unsafe {
        if !(*regs).is_scalar() || !(*regs.add(1)).is_scalar() || !(*regs.add(2)).is_scalar() {
            return false;
        }
        regs.write(Value::Obj(o.clone()));
        regs.add(1).write(Value::Int(desc));
        regs.add(2).write(Value::Int(i64::from(o.class.id)));
    }
    true
}
