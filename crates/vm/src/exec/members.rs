//! The run loop's fast paths for object and class members: a property
//! read or write, a method's resolution, a class constant, a static
//! property or an `instanceof` class that the instruction's runtime cache
//! entry answers (PHP's handlers for `FETCH_OBJ_R`, `ASSIGN_OBJ`,
//! `INIT_METHOD_CALL`, `INIT_STATIC_METHOD_CALL`, `FETCH_CLASS_CONSTANT`,
//! `FETCH_STATIC_PROP_R` and `INSTANCEOF` take the same branch on a
//! `CACHE_SLOT` hit).
//!
//! Each is out of line, so that the loop only pays a call for them, and
//! answers `None` for anything it does not do — no cache entry, another
//! class or scope, a reference, magic, an uninitialised property, a
//! readonly one, a value a typed property would have to convert or check
//! by class — which the general path (`slow.rs`, `objects.rs`) then does
//! in full, filling the cache entry for the next time.

use minizts_core::bytecode::{BinOp, IncDec, Op, Src, NO_CACHE};
use minizts_core::object::{acc, MethodBody};
use minizts_core::string::with_lowercase;
use minizts_core::value::ClosureKind;
use minizts_core::{Obj, PhpRef, Value};
use minizts_globals::executor::{CacheEntry, ExecutorGlobals, FrameScopes};
use minizts_globals::{eg, Frame, Globals};

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

/// A property instruction's cache miss, before the general path: an
/// object of another class than the entry's (a base class's method run
/// on instances of its subclasses, or any other polymorphic site; PHP's
/// cache slot too holds one class). Property `name` is looked up here
/// and, when it is a declared slot the running scope reaches, the entry
/// remembers it, as the general path's lookup would, and `retry` (the
/// fast path again) answers. `None` for everything else, and for a hit:
/// the fast path declined for another reason.
#[inline(never)]
pub(super) fn prop_miss<G: Globals, T>(
    g: G,
    obj: &Value,
    name: Src,
    cache: u16,
    retry: impl FnOnce() -> Option<T>,
) -> Option<T> {
    let Value::Obj(o) = obj else { return None };
    if cache == NO_CACHE {
        return None;
    }
    let remembered = eg!(g, |eg| {
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*eg.frames.last()?.function }.cache_base + u32::from(cache);
        if crate::objects::cached_slot_in(eg, at, &o.class).is_some() {
            return None;
        }
        let Value::Str(name) = const_operand(eg, name)? else {
            return None;
        };
        let name = name.clone();
        let scope = eg.frames.last().map_or(0, |f| f.scope);
        let classes = &eg.classes;
        let scope_class = (scope != 0).then(|| &**classes.get(scope - 1));
        let crate::objects::Lookup::Slot(slot) = crate::objects::lookup_in(classes, &o.class, &name, scope_class)
        else {
            return None;
        };
        *eg.runtime_cache.get_mut(at as usize)? = CacheEntry::Prop {
            class: o.class.id,
            scope,
            slot,
        };
        Some(())
    });
    remembered.and_then(|()| retry())
}

/// A constant that the running function's call site `site` has cached
/// (a constant, once defined, keeps its value for the request).
#[inline(never)]
pub(super) fn constant<G: Globals>(g: G, site: u16) -> Option<Value> {
    eg!(g, |eg| {
        // SAFETY: a frame's function is one of the request's.
        let func = unsafe { &*eg.frames.last()?.function };
        let slot = func.sites.get(site as usize)?.cache_slot;
        match eg.runtime_cache.get(slot as usize)? {
            CacheEntry::Constant(v) => Some(v.clone()),
            _ => None,
        }
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

/// `isset(obj->name)` (`empty(obj->name)` with `empty`) through the
/// cache, on a property that holds a value (an unset one may have
/// `__isset` to ask).
#[inline(never)]
pub(super) fn isset_prop<G: Globals>(g: G, obj: &Value, cache: u16, empty: bool) -> Option<bool> {
    let Value::Obj(o) = obj else { return None };
    let (slot, _) = cached_slot(g, o, cache)?;
    let props = o.props.try_borrow().ok()?;
    let answer = |v: &Value| {
        if empty {
            super::num::truthy(v).map(|b| !b)
        } else {
            Some(!matches!(v, Value::Null))
        }
    };
    match props.get(slot)? {
        Value::Undef => None,
        Value::Ref(r) => match &*r.try_borrow().ok()? {
            Value::Undef => None,
            v => answer(v),
        },
        v => answer(v),
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
    // (`self` in a property's type is the class that declares it.)
    let scopes = (p.declaring + 1, 0);
    if matches!(v, Value::Ref(_) | Value::Undef) || p.ty.as_ref().is_some_and(|ty| !accepts_plainly(ty, v, scopes)) {
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
        // Owns nothing: no drop call.
        std::mem::forget(old);
        return Some(false);
    }
    drop(old);
    Some(eg!(g).interrupt.pending.load(std::sync::atomic::Ordering::Relaxed))
}

/// `ASSIGN_PROP_DIM` with one key, `obj->name[key] = src`, through the
/// cache (an `Undef` key appends), on a declared property that is not
/// readonly and holds an unshared array, directly or behind a reference,
/// whose element there is not a reference; the value is not an unset
/// variable. `Some(due)`: done, `due` when the old element's release made
/// a destructor due. A shared array (its copy on write), an auto-vivified
/// one, `ArrayAccess` and the errors are the general path's. It decodes
/// its own operands (the run loop's arm only passes them on, so that it
/// changes nothing of how the loop keeps its locals).
///
/// # Safety
/// `op` is an instruction of the running function, `base` its window
/// and `consts` its constant pool.
#[inline(never)]
pub(super) unsafe fn assign_prop_dim<G: Globals>(
    g: G,
    op: &Op,
    base: *const Value,
    consts: *const Value,
) -> Option<bool> {
    let Op::AssignPropDim {
        obj,
        keys,
        depth: 1,
        src,
        cache,
        ..
    } = *op
    else {
        return None;
    };
    // SAFETY: the verifier checks operands against the window and the
    // pool.
    let (obj, key, v) = unsafe {
        (
            &*operand(obj, base, consts),
            &*operand(Src::reg(keys), base, consts),
            &*operand(src, base, consts),
        )
    };
    // SAFETY: references are only read here, before anything is written.
    let (obj, v) = unsafe {
        (
            match obj {
                Value::Ref(r) => r.peek()?,
                v => v,
            },
            match v {
                Value::Ref(r) => r.peek()?,
                v => v,
            },
        )
    };
    let Value::Obj(o) = obj else { return None };
    let (slot, _) = cached_slot(g, o, cache)?;
    let p = o.class.props.get(slot)?;
    if p.flags & acc::READONLY != 0 || matches!(v, Value::Ref(_) | Value::Undef) {
        return None;
    }
    let key = match key {
        Value::Int(n) => Some(minizts_core::Key::Int(*n)),
        Value::Str(k) if minizts_core::array::canonical_int(k).is_none() => {
            Some(minizts_core::Key::from_php_str(k.clone()))
        }
        Value::Undef => None,
        _ => return None,
    };
    // The old element, if one was overwritten.
    let write = |arr: &mut std::rc::Rc<minizts_core::PhpArray>| -> Option<Option<Value>> {
        let a = std::rc::Rc::get_mut(arr)?;
        match key {
            Some(key) => {
                let (elem, _) = a.entry(key);
                if matches!(elem, Value::Ref(_)) {
                    return None;
                }
                Some(Some(std::mem::replace(elem, v.clone())))
            }
            None => a.push(v.clone()).ok().map(|_| None),
        }
    };
    let mut props = o.props.try_borrow_mut().ok()?;
    let old = match props.get_mut(slot)? {
        Value::Arr(a) => write(a)?,
        // A property made a reference (`&`, or a write on the general
        // path): written through.
        Value::Ref(r) => match &mut *r.try_borrow_mut().ok()? {
            Value::Arr(a) => write(a)?,
            _ => return None,
        },
        _ => return None,
    };
    drop(props);
    match old {
        Some(old) if !old.is_scalar() => {
            drop(old);
            Some(eg!(g).interrupt.pending.load(std::sync::atomic::Ordering::Relaxed))
        }
        // Owns nothing: no drop call.
        old => {
            std::mem::forget(old);
            Some(false)
        }
    }
}

/// `TYPE_CHECK`'s answer on its general path when the operand needs no
/// warning (it is set) and no release (not a temporary holding something
/// counted): the run loop declines a reference being written, and a
/// temporary's release is the general path's. `None`: the builtin.
///
/// # Safety
/// `op` is an instruction of the running function, `base` its window
/// and `consts` its constant pool.
pub(super) unsafe fn type_check(op: &Op, base: *const Value, consts: *const Value) -> Option<Value> {
    let Op::TypeCheck { arg, tmp, mask, .. } = *op else {
        return None;
    };
    // SAFETY: the verifier checks operands against the window and the
    // pool.
    let v = match unsafe { &*operand(arg, base, consts) } {
        // SAFETY: a reference is only read here.
        Value::Ref(r) => unsafe { r.peek() }?,
        v => v,
    };
    if matches!(v, Value::Undef) || (tmp && !v.is_scalar()) {
        return None;
    }
    Some(Value::Bool(crate::types::kind(v) & mask != 0))
}

/// The address of operand `s` (a register of the window at `base`, or a
/// constant of the pool at `consts`).
#[inline(always)]
fn operand(s: Src, base: *const Value, consts: *const Value) -> *const Value {
    let origin = if s.is_const() {
        consts.wrapping_byte_sub(8)
    } else {
        base
    };
    origin.wrapping_byte_add(s.raw() * 8)
}

/// `VERIFY_ARG`'s check of parameter `param` (a register of the window at
/// `base`) when its type takes the argument as it is.
///
/// # Safety
/// `base` is the running frame's window. `cache`: the instruction's
/// cache slot (for a type that names one class).
#[inline(never)]
pub(super) unsafe fn verify_arg<G: Globals>(g: G, base: *const Value, param: u16, cache: u16) -> bool {
    eg!(g, |eg| {
        let Some(f) = eg.frames.last() else { return false };
        // SAFETY: a frame's function is one of the request's.
        let func = unsafe { &*f.function };
        let Some(p) = func.params.get(param as usize) else {
            return false;
        };
        let Some(ty) = &p.ty else { return false };
        // SAFETY: a parameter is a CV of the window.
        let v = unsafe { &*base.add(param as usize) };
        !p.variadic && (matches!(v, Value::Undef) || type_takes(eg, ty, v, cache))
    })
}

/// The array that the running function's `LOAD_ARRAY` with cache slot
/// `cache` built earlier in the request, shared.
#[inline]
pub(super) fn cached_array<G: Globals>(g: G, cache: u16) -> Option<Value> {
    if cache == NO_CACHE {
        return None;
    }
    eg!(g, |eg| {
        let f = eg.frames.last()?;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base + u32::from(cache);
        match eg.runtime_cache.get(at as usize)? {
            CacheEntry::Array(a) => Some(Value::Arr(a.clone())),
            _ => None,
        }
    })
}

/// Whether the running function's return type takes `v` as it is.
#[inline(never)]
pub(super) fn verify_return<G: Globals>(g: G, v: &Value, cache: u16) -> bool {
    eg!(g, |eg| {
        let Some(f) = eg.frames.last() else { return false };
        // SAFETY: a frame's function is one of the request's.
        let func = unsafe { &*f.function };
        func.return_type.as_ref().is_some_and(|ty| type_takes(eg, ty, v, cache))
    })
}

/// Whether the running frame's type `ty` takes `v` as it is. An object,
/// for a type naming one class, is tested against the class that the
/// check's cache slot says the name stands for, by id; the slot learns it
/// from the first object the name took (PHP's `zend_check_type` with its
/// `cache_slot`).
#[inline(always)]
fn type_takes(eg: &mut ExecutorGlobals, ty: &minizts_core::bytecode::TypeDecl, v: &Value, cache: u16) -> bool {
    if crate::types::takes_kind(ty, v) {
        return true;
    }
    let Value::Obj(o) = v else { return false };
    let Some(f) = eg.frames.last() else { return false };
    let scopes = (f.scope, f.called);
    // (The compiler asks for a slot only for a type with one class name.)
    let (true, Some(name)) = (cache != NO_CACHE, ty.classes.first()) else {
        return accepts_plainly(ty, v, scopes);
    };
    // SAFETY: a frame's function is one of the request's.
    let slot = unsafe { &*f.function }.cache_base as usize + usize::from(cache);
    let Some(entry) = eg.runtime_cache.get_mut(slot) else {
        return false;
    };
    if let CacheEntry::TypeClass { class } = *entry {
        return crate::types::descends_from(&o.class, class);
    }
    match crate::types::named_in(&o.class, name) {
        Some(class) => {
            *entry = CacheEntry::TypeClass { class };
            true
        }
        None => false,
    }
}

/// `obj->name(…)`'s method through the cache, into the callee registers
/// `regs..regs+3` (as `objects::fill_callee` writes them), which hold
/// nothing counted; with `take`, the object moves out of `obj` (a
/// temporary the call consumes) instead of being shared.
///
/// # Safety
/// `regs..regs+3` are registers of the running frame's window; `obj` is
/// the operand's value, and with `take` a register of the window that
/// nothing else refers to (it is only read otherwise).
#[inline(never)]
pub(super) unsafe fn init_method<G: Globals>(g: G, obj: *mut Value, take: bool, cache: u16, regs: *mut Value) -> bool {
    // SAFETY: the caller's.
    let Value::Obj(o) = (unsafe { &*obj }) else {
        return false;
    };
    if cache == NO_CACHE {
        return false;
    }
    let desc = eg!(g, |eg| {
        let f = eg.frames.last()?;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base as usize + cache as usize;
        match eg.runtime_cache.get(at)? {
            CacheEntry::Method { class, scope, method } if *class == o.class.id && *scope == f.scope => {
                method_desc(method)
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
        let class = i64::from(o.class.id);
        let this = if take {
            std::ptr::replace(obj, Value::Undef)
        } else {
            Value::Obj(o.clone())
        };
        regs.write(this);
        regs.add(1).write(Value::Int(desc));
        regs.add(2).write(Value::Int(class));
    }
    true
}

/// [`init_method`]'s cache miss, before the general path: an object of
/// another class than the entry's (a polymorphic call site; PHP's cache
/// slot too holds one class). The method is looked up by `name` here
/// when the lookup is plain — a public, non-static script method, and no
/// private method of that name in the calling scope that would take
/// precedence — and the entry remembers it, as the general path's lookup
/// would; then [`init_method`] again. `false` for everything else, and
/// for a hit (the fast path declined for another reason).
///
/// # Safety
/// As for [`init_method`].
#[inline(never)]
pub(super) unsafe fn init_method_miss<G: Globals>(
    g: G,
    obj: *mut Value,
    take: bool,
    name: Src,
    cache: u16,
    regs: *mut Value,
) -> bool {
    // SAFETY: the caller's.
    let Value::Obj(o) = (unsafe { &*obj }) else {
        return false;
    };
    if cache == NO_CACHE {
        return false;
    }
    let remembered = eg!(g, |eg| {
        let f = eg.frames.last()?;
        let scope = f.scope;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base as usize + cache as usize;
        if let CacheEntry::Method { class, scope: s, .. } = eg.runtime_cache.get(at)? {
            if *class == o.class.id && *s == scope {
                return None;
            }
        }
        let Value::Str(name) = const_operand(eg, name)? else {
            return None;
        };
        let name = name.clone();
        let classes = &eg.classes;
        let method = with_lowercase(name.as_bytes(), |lc| {
            let m = o.class.method(lc)?;
            if m.flags & (acc::PRIVATE | acc::PROTECTED | acc::STATIC | acc::ABSTRACT) != 0 {
                return None;
            }
            if scope != 0 {
                let s = classes.get(scope - 1);
                if s.id != o.class.id && s.method(lc).is_some_and(|p| p.flags & acc::PRIVATE != 0) {
                    return None;
                }
            }
            Some(m.clone())
        })?;
        let user = method_desc(&method).is_some();
        // (A builtin class's method is remembered too: the general path
        // then finds it in the entry.)
        *eg.runtime_cache.get_mut(at)? = CacheEntry::Method {
            class: o.class.id,
            scope,
            method,
        };
        Some(user)
    });
    // SAFETY: the caller's.
    remembered == Some(true) && unsafe { init_method(g, obj, take, cache, regs) }
}

/// The running function's constant `k` (an instruction's name operand,
/// read only on a cache miss, so that the hit pays for no decoding).
fn const_operand(eg: &ExecutorGlobals, k: Src) -> Option<&Value> {
    if !k.is_const() {
        return None;
    }
    // SAFETY: a frame's function is one of the request's.
    let func = unsafe { &*eg.frames.last()?.function };
    func.consts.values().get(k.index())
}

/// A script method's callee descriptor (its declaring class and function,
/// as `objects::fill_callee` writes it); `None` for a builtin class's.
#[inline(always)]
fn method_desc(method: &minizts_core::object::Method) -> Option<i64> {
    match method.body {
        MethodBody::User(func) => Some((i64::from(method.declaring) << 32) | i64::from(func)),
        MethodBody::Native(_) => None,
    }
}

/// What `pick` reads from the running frame's cache entry `cache`, given
/// the frame (none for an instruction without one).
#[inline(always)]
fn top_entry<G: Globals, T>(g: G, cache: u16, pick: impl FnOnce(&CacheEntry, &Frame) -> Option<T>) -> Option<T> {
    if cache == NO_CACHE {
        return None;
    }
    eg!(g, |eg| {
        let f = eg.frames.last()?;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base as usize + cache as usize;
        pick(eg.runtime_cache.get(at)?, f)
    })
}

/// Whether cache entry scopes `at` are frame `f`'s.
#[inline(always)]
fn same_scopes(at: &FrameScopes, f: &Frame) -> bool {
    at.scope == f.scope && at.called == f.called
}

/// `C::name(…)`'s script method through the cache, into the callee
/// registers `regs..regs+3` (as `objects::fill_callee` writes them),
/// which hold nothing counted: with the running frame's `$this` where the
/// entry says the method takes it and `$this` is of the class it was.
///
/// # Safety
/// `regs..regs+3` are registers of the running frame's window.
#[inline(never)]
pub(super) unsafe fn init_static_method<G: Globals>(g: G, cache: u16, regs: *mut Value) -> bool {
    let found = top_entry(g, cache, |e, f| match e {
        CacheEntry::StaticCall {
            at,
            method,
            called,
            this_class,
        } if same_scopes(at, f) => {
            let MethodBody::User(func) = method.body else {
                return None;
            };
            let desc = (i64::from(method.declaring) << 32) | i64::from(func);
            let this = if *this_class == 0 {
                Value::Null
            } else {
                // SAFETY: a frame's function is one of the request's.
                let cv = unsafe { &*f.function }.this_cv?;
                // SAFETY: a CV of the frame's live window.
                match unsafe { &*f.base.add(cv as usize) } {
                    Value::Obj(o) if o.class.id + 1 == *this_class => Value::Obj(o.clone()),
                    _ => return None,
                }
            };
            Some((this, desc, *called))
        }
        _ => None,
    });
    let Some((this, desc, called)) = found else {
        return false;
    };
    // SAFETY: the caller's.
    unsafe {
        if !(*regs).is_scalar() || !(*regs.add(1)).is_scalar() || !(*regs.add(2)).is_scalar() {
            return false;
        }
        regs.write(this);
        regs.add(1).write(Value::Int(desc));
        regs.add(2).write(Value::Int(i64::from(called)));
    }
    true
}

/// `C::NAME` through the cache; `of` is the class id of the object a
/// `$obj::NAME` operand holds, or `CacheEntry::NAMED_CLASS`.
#[inline(never)]
pub(super) fn class_const<G: Globals>(g: G, cache: u16, of: u32) -> Option<Value> {
    top_entry(g, cache, |e, f| match e {
        CacheEntry::ClassConst { at, of: o, value } if *o == of && same_scopes(at, f) => Some(value.clone()),
        _ => None,
    })
}

/// The static property `C::$name` is, through the cache.
#[inline(never)]
pub(super) fn static_prop<G: Globals>(g: G, cache: u16) -> Option<PhpRef> {
    top_entry(g, cache, |e, f| match e {
        CacheEntry::StaticProp { at, slot, .. } if same_scopes(at, f) => Some(crate::objects::bound_static(slot)),
        _ => None,
    })
}

/// `C::$name`'s value through the cache.
#[inline(never)]
pub(super) fn static_prop_value<G: Globals>(g: G, cache: u16) -> Option<Value> {
    top_entry(g, cache, |e, f| match e {
        CacheEntry::StaticProp { at, slot, .. } if same_scopes(at, f) => match &*slot.try_borrow().ok()? {
            Value::Undef => None,
            // Bound by reference (`C::$x = &…`): the bound reference's value.
            Value::Ref(bound) => match &*bound.try_borrow().ok()? {
                Value::Undef => None,
                v => Some(v.clone()),
            },
            v => Some(v.clone()),
        },
        _ => None,
    })
}

/// What an untyped static property's cached slot stands for, unless it is
/// a typed reference (bound to a typed property's): a reference that
/// writes may go through as they are.
#[inline(always)]
fn untyped_static<G: Globals>(g: G, cache: u16) -> Option<PhpRef> {
    top_entry(g, cache, |e, f| match e {
        CacheEntry::StaticProp { at, slot, typed: false } if same_scopes(at, f) => {
            Some(crate::objects::bound_static(slot))
        }
        _ => None,
    })
    .filter(|r| !r.is_typed())
}

/// `C::$name = v` through the cache, on an untyped static: `Some(due)`
/// when done, `due` when the old value's release made a destructor due.
#[inline(never)]
pub(super) fn assign_static_prop<G: Globals>(g: G, cache: u16, v: &Value) -> Option<bool> {
    if matches!(v, Value::Ref(_) | Value::Undef) {
        return None;
    }
    let r = untyped_static(g, cache)?;
    let old = std::mem::replace(&mut *r.try_borrow_mut().ok()?, v.clone());
    if old.is_scalar() {
        // Owns nothing: no drop call.
        std::mem::forget(old);
        return Some(false);
    }
    drop(old);
    Some(eg!(g).interrupt.pending.load(std::sync::atomic::Ordering::Relaxed))
}

/// `++C::$name` and the like through the cache, on an untyped static
/// that holds an int and stays one: the expression's value.
#[inline(never)]
pub(super) fn inc_dec_static_prop<G: Globals>(g: G, cache: u16, kind: IncDec) -> Option<i64> {
    let r = untyped_static(g, cache)?;
    let mut inner = r.try_borrow_mut().ok()?;
    let Value::Int(n) = &mut *inner else { return None };
    let x = kind.step_int(*n)?;
    let before = std::mem::replace(n, x);
    Some(if kind.is_pre() { x } else { before })
}

/// `v instanceof C` through the cache.
#[inline(never)]
pub(super) fn instance_of<G: Globals>(g: G, v: &Value, cache: u16) -> Option<bool> {
    let class = top_entry(g, cache, |e, f| match e {
        CacheEntry::Class { at, class } if same_scopes(at, f) => Some(class.clone()),
        _ => None,
    })?;
    Some(crate::objects::instance_of(v, &class))
}

/// `++obj->name` and the like through the cache, on a property that
/// holds an int (not readonly, of no type or one that takes ints) and
/// stays one: the expression's value.
#[inline(never)]
pub(super) fn inc_dec_prop<G: Globals>(g: G, obj: &Value, cache: u16, kind: IncDec) -> Option<i64> {
    let Value::Obj(o) = obj else { return None };
    let (slot, _) = cached_slot(g, o, cache)?;
    let p = o.class.props.get(slot)?;
    if p.flags & acc::READONLY != 0
        || p.ty
            .as_ref()
            .is_some_and(|ty| !accepts_plainly(ty, &Value::Int(0), (0, 0)))
    {
        return None;
    }
    let mut props = o.props.try_borrow_mut().ok()?;
    let Value::Int(n) = props.get_mut(slot)? else {
        return None;
    };
    let x = kind.step_int(*n)?;
    let before = std::mem::replace(n, x);
    Some(if kind.is_pre() { x } else { before })
}

/// `obj->name op= v` through the cache, on a property (not readonly)
/// whose number the numeric fast paths combine with `v`, or whose string
/// `v` extends while it stays small, where its type (if any) takes the
/// result as it is: the property's new value.
#[inline(never)]
pub(super) fn assign_prop_op<G: Globals>(g: G, obj: &Value, cache: u16, op: BinOp, v: &Value) -> Option<Value> {
    let Value::Obj(o) = obj else { return None };
    let (slot, _) = cached_slot(g, o, cache)?;
    let p = o.class.props.get(slot)?;
    if p.flags & acc::READONLY != 0 {
        return None;
    }
    let mut props = o.props.try_borrow_mut().ok()?;
    let place = props.get_mut(slot)?;
    if let (BinOp::Concat, Value::Str(s), Value::Str(t)) = (op, &mut *place, v) {
        // A string property stays a string: its type took it, and takes
        // the longer one.
        if s.len() + t.len() > crate::limits::SMALL_STRING {
            return None;
        }
        s.make_mut().extend_from_slice(t);
        return Some(place.clone());
    }
    macro_rules! some {
        ($at:expr, $v:expr) => {
            Some($v)
        };
    }
    let new: Value = binary!(some, (), op, &*place, v, None)?;
    if p.ty.as_ref().is_some_and(|ty| !accepts_plainly(ty, &new, (0, 0))) || !place.is_scalar() {
        return None;
    }
    *place = new.clone();
    Some(new)
}

/// `new C` of the class that the running function's cache entry `cache`
/// names for the frame's scopes (PHP's `ZEND_NEW` on a `CACHED_PTR`
/// hit), when it is an ordinary class whose defaults are evaluated and
/// whose constructor, if it has one, is a public script method: the new
/// object goes into `regs` and the constructor's call into the three
/// registers above it, as `objects::fill_callee` writes them.
/// `Some(true)` when there is a constructor to call, `Some(false)` when
/// there is none; `None`, with nothing done, for everything else (an
/// abstract or builtin class, defaults not yet evaluated, a constructor
/// that is native, protected, or private to another class than the
/// running scope, a register holding a counted value).
///
/// # Safety
/// `regs..regs+4` are registers of the running frame's window.
#[inline(never)]
pub(super) unsafe fn new_object<G: Globals>(g: G, cache: u16, regs: *mut Value) -> Option<bool> {
    if cache == NO_CACHE {
        return None;
    }
    // SAFETY: the caller's.
    if !unsafe { std::slice::from_raw_parts(regs, 4) }
        .iter()
        .all(Value::is_scalar)
    {
        return None;
    }
    let (o, construct) = eg!(g, |eg| {
        let f = eg.frames.last()?;
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*f.function }.cache_base + u32::from(cache);
        let CacheEntry::Class { at, class } = eg.runtime_cache.get(at as usize)? else {
            return None;
        };
        if at.scope != f.scope
            || at.called != f.called
            || class.kind != minizts_core::object::ClassKind::Class
            || class.is_abstract()
            || class.native.is_some()
            || !class.defaults_ready.get()
        {
            return None;
        }
        // A private constructor is callable from its own class's code
        // (PHP's named-constructor pattern: `new self(…)` in a static
        // `of()`); a protected one's check needs the class hierarchy: the
        // general path.
        let construct = match &class.magic.construct {
            None => None,
            Some(m) => match m.body {
                MethodBody::User(func)
                    if m.flags & (acc::PRIVATE | acc::PROTECTED) == 0
                        || (m.flags & acc::PRIVATE != 0 && f.scope == m.declaring + 1) =>
                {
                    Some((i64::from(m.declaring) << 32) | i64::from(func))
                }
                _ => return None,
            },
        };
        let props = class.defaults.try_borrow().ok()?.clone();
        Some((eg.objects.create(class.clone(), props), construct))
    })?;
    // SAFETY: the caller's; the registers hold scalars (checked above).
    unsafe {
        match construct {
            None => {
                // No method, for a call with arguments (see `Op::New`).
                regs.write(Value::Obj(o));
                regs.add(1).write(Value::Null);
                regs.add(2).write(Value::Null);
            }
            Some(desc) => {
                let called = i64::from(o.class.id);
                regs.write(Value::Obj(o.clone()));
                regs.add(1).write(Value::Obj(o));
                regs.add(2).write(Value::Int(desc));
                regs.add(3).write(Value::Int(called));
            }
        }
    }
    Some(construct.is_some())
}

/// Whether parameter `argno` of the callee takes its argument by
/// reference: what `SEND_VAR_EX` asks, answered from the function's
/// parameters as PHP's handler answers it from the function's argument
/// flags. The callee is, for a method call (`method`), the script method
/// in the callee registers `regs..regs+3` (as `INIT_METHOD`,
/// `INIT_STATIC_METHOD` and, for a method, `INIT_DYNAMIC_CALL` fill them),
/// else the closure in register `regs`.
/// `None` for any other callee (a builtin class's method, `__call`, a
/// function named by a string or an array).
///
/// # Safety
/// `regs..regs+3` (a method call) or `regs` are registers of the running
/// frame's window.
#[inline(never)]
pub(super) unsafe fn callee_param_by_ref<G: Globals>(
    g: G,
    regs: *const Value,
    argno: u16,
    method: bool,
) -> Option<bool> {
    // SAFETY: the caller's (`regs + 1` is read only for a method call's
    // registers).
    let fid = if method && matches!(unsafe { &*regs.add(1) }, Value::Int(_)) {
        // SAFETY: the caller's.
        match unsafe { crate::objects::callee_of(regs) }? {
            crate::call::Callee::User { func, .. } => func,
            _ => return None,
        }
    } else {
        // SAFETY: the caller's.
        match unsafe { &*regs } {
            Value::Closure(c) => match c.kind {
                ClosureKind::Literal | ClosureKind::Named => c.func,
                ClosureKind::Builtin(id) => return Some(crate::builtins::info(id).param_by_ref(argno as usize)),
                ClosureKind::Magic => return None,
            },
            _ => return None,
        }
    };
    eg!(g, |eg| eg.code.get(fid).map(|f| f.param_by_ref(argno as usize)))
}
