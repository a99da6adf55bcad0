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

use minizts_core::bytecode::NO_CACHE;
use minizts_core::object::{acc, MethodBody};
use minizts_core::{Obj, Value};
use minizts_globals::executor::CacheEntry;
use minizts_globals::{eg, Globals};

use crate::types::accepts_plainly;

/// The declared slot that the running function's cache entry `cache`
/// says code of the running scope reaches on an object of `o`'s class,
/// with that scope (class id + 1, 0: none).
#[inline(always)]
fn cached_slot<G: Globals>(g: G, o: &Obj, cache: u16) -> Option<(usize, u32)> {
    if cache == NO_CACHE {
        return None;
    }
    eg!(g, |eg| {
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*eg.frames.last()?.function }.cache_base + u32::from(cache);
        crate::objects::cached_slot_in(eg, at, &o.class).map(|(slot, scope)| (slot as usize, scope))
    })
}

/// `obj->name` through the cache: the property's value (initialised;
/// through the reference the property is, if it is one).
#[inline(never)]
pub(super) fn fetch_prop<G: Globals>(g: G, obj: &Value, cache: u16) -> Option<Value> {
    let Value::Obj(o) = obj else { return None };
    let (slot, _) = cached_slot(g, o, cache)?;
    let props = o.props.try_borrow().ok()?;
    match props.get(slot)? {
        Value::Undef => None,
        Value::Ref(r) => match &*r.try_borrow().ok()? {
            Value::Undef => None,
            v => Some(v.clone()),
        },
        v => Some(v.clone()),
    }
}

/// `obj->name = v` through the cache, where `v` is a value its type (if
/// it has one) takes as it is, and the property is not readonly or is
/// one the running scope initialises. `Some(due)`: done, `due` when the
/// old value's release made a destructor due.
#[inline(never)]
pub(super) fn assign_prop<G: Globals>(g: G, obj: &Value, cache: u16, v: &Value) -> Option<bool> {
    let Value::Obj(o) = obj else { return None };
    let (slot, scope) = cached_slot(g, o, cache)?;
    let p = o.class.props.get(slot)?;
    if matches!(v, Value::Ref(_) | Value::Undef) || p.ty.as_ref().is_some_and(|ty| !accepts_plainly(ty, v)) {
        return None;
    }
    let mut props = o.props.try_borrow_mut().ok()?;
    let place = props.get_mut(slot)?;
    if p.flags & acc::READONLY != 0 && (!matches!(place, Value::Undef) || scope != p.declaring + 1) {
        return None;
    }
    let old = match place {
        // Written through (the property was made a reference by a
        // read-modify-write or `&`); a typed reference is the general
        // path's, as are `__set` for an unset property and a reference
        // being written already.
        Value::Ref(r) if p.ty.is_none() && !r.is_typed() => {
            let r = r.clone();
            drop(props);
            let old = std::mem::replace(&mut *r.try_borrow_mut().ok()?, v.clone());
            old
        }
        Value::Ref(_) => return None,
        Value::Undef if p.ty.is_none() && o.class.magic.set.is_some() => return None,
        place => std::mem::replace(place, v.clone()),
    };
    if old.is_scalar() {
        return Some(false);
    }
    drop(old);
    Some(eg!(g).interrupt.pending.load(std::sync::atomic::Ordering::Relaxed))
}

/// `VERIFY_ARG`'s check of parameter `param` (a register of the window at
/// `base`) when its type takes the argument as it is.
///
/// # Safety
/// `base` is the running frame's window.
#[inline(never)]
pub(super) unsafe fn verify_arg<G: Globals>(g: G, base: *const Value, param: u16) -> bool {
    let Some(function) = eg!(g, |eg| eg.frames.last().map(|f| f.function)) else {
        return false;
    };
    // SAFETY: a frame's function is one of the request's.
    let func = unsafe { &*function };
    let Some(p) = func.params.get(param as usize) else {
        return false;
    };
    let Some(ty) = &p.ty else { return false };
    // SAFETY: a parameter is a CV of the window.
    let v = unsafe { &*base.add(param as usize) };
    !p.variadic && (matches!(v, Value::Undef) || accepts_plainly(ty, v))
}

/// Whether the running function's return type takes `v` as it is.
#[inline(never)]
pub(super) fn verify_return<G: Globals>(g: G, v: &Value) -> bool {
    let Some(function) = eg!(g, |eg| eg.frames.last().map(|f| f.function)) else {
        return false;
    };
    // SAFETY: a frame's function is one of the request's.
    let func = unsafe { &*function };
    func.return_type.as_ref().is_some_and(|ty| accepts_plainly(ty, v))
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
