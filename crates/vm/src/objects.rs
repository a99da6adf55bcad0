//! Objects at run time: `new`, property access with PHP's visibility
//! rules and its magic hooks (`__get`, `__set`, `__isset`, `__unset`),
//! method lookup for calls, static members and class constants (PHP's
//! `zend_std_*` object handlers and `zend_object_handlers.c`).
//!
//! The running code's scope (for `self::` and visibility) and called
//! scope (`static::`) are the top frame's, as PHP reads them from
//! `EG(current_execute_data)`.

use std::rc::Rc;

use minizts_core::bytecode::class_mode;
use minizts_core::object::{acc, Class, ClassConst, ClassId, ClassKind, DefaultTarget, Method, MethodBody, Object};
use minizts_core::string::with_lowercase;
use minizts_core::{Obj, PhpStr, Value};
use minizts_globals::executor::{CacheEntry, ClassTable, ExecutorGlobals, FrameScopes};
use minizts_globals::{eg, Globals};

use crate::error::{deprecated, error, notice, warning, VmResult};

mod modify;

pub use modify::{modify_prop, Change};

/// The class of id + 1 `id1` (0: none).
fn class_by_id1<G: Globals>(g: G, id1: u32) -> Option<Rc<Class>> {
    (id1 != 0).then(|| eg!(g).classes.get(id1 - 1).clone())
}

/// The slot that property cache entry `at` says code of the running
/// scope reaches on an object of `class`, if it says so.
fn cached_slot<G: Globals>(g: G, at: u32, class: &Class) -> Option<u32> {
    eg!(g, |eg| cached_slot_in(eg, at, class)).map(|(slot, _)| slot)
}

/// [`cached_slot`] in `eg`, with the running scope (class id + 1, 0:
/// none).
#[inline(always)]
pub(crate) fn cached_slot_in(eg: &ExecutorGlobals, at: u32, class: &Class) -> Option<(u32, u32)> {
    let scope = eg.frames.last().map_or(0, |f| f.scope);
    match eg.runtime_cache.get(at as usize)? {
        CacheEntry::Prop {
            class: c,
            scope: s,
            slot,
        } if *c == class.id && *s == scope => Some((*slot, scope)),
        _ => None,
    }
}

/// Remembers in property cache entry `at` (if any) where a lookup from
/// the running scope led on an object of `class`.
fn remember_slot<G: Globals>(g: G, at: Option<u32>, class: &Class, found: &Lookup) {
    if let (Some(at), Lookup::Slot(slot)) = (at, found) {
        eg!(g, |eg| {
            let scope = eg.frames.last().map_or(0, |f| f.scope);
            eg.runtime_cache[at as usize] = CacheEntry::Prop {
                class: class.id,
                scope,
                slot: *slot,
            };
        });
    }
}

/// What `pick` reads from runtime cache entry `at` (if the instruction
/// has one), given the running frame's scopes.
pub(crate) fn cached<G: Globals, T>(
    g: G,
    at: Option<u32>,
    pick: impl FnOnce(&CacheEntry, FrameScopes) -> Option<T>,
) -> Option<T> {
    let at = at?;
    eg!(g, |eg| pick(
        eg.runtime_cache.get(at as usize)?,
        FrameScopes::of_top(&eg.frames)
    ))
}

/// Puts what `make` makes of the running frame's scopes in runtime cache
/// entry `at` (if the instruction has one).
pub(crate) fn remember<G: Globals>(g: G, at: Option<u32>, make: impl FnOnce(FrameScopes) -> CacheEntry) {
    let Some(at) = at else { return };
    let old = eg!(g, |eg| {
        let entry = make(FrameScopes::of_top(&eg.frames));
        std::mem::replace(&mut eg.runtime_cache[at as usize], entry)
    });
    // Released outside the EG access: an old value may own an object.
    drop(old);
}

/// [`class_operand`] through the instruction's cache entry `at`, which
/// remembers the class for the next time.
pub fn class_operand_cached<G: Globals>(g: G, v: &Value, mode: u8, at: Option<u32>) -> VmResult<Rc<Class>> {
    if let Some(c) = cached_class(g, at) {
        return Ok(c);
    }
    let c = class_operand(g, v, mode)?;
    remember_class(g, at, &c);
    Ok(c)
}

/// The class cache entry `at` holds for the running frame's scopes.
pub fn cached_class<G: Globals>(g: G, at: Option<u32>) -> Option<Rc<Class>> {
    cached(g, at, |e, here| match e {
        CacheEntry::Class { at, class } if *at == here => Some(class.clone()),
        _ => None,
    })
}

/// Remembers `class` in cache entry `at` for the running frame's scopes.
pub fn remember_class<G: Globals>(g: G, at: Option<u32>, class: &Rc<Class>) {
    remember(g, at, |at| CacheEntry::Class {
        at,
        class: class.clone(),
    });
}

/// The running code's class scope.
pub fn scope<G: Globals>(g: G) -> Option<Rc<Class>> {
    let id1 = eg!(g, |eg| eg.frames.last().map_or(0, |f| f.scope));
    class_by_id1(g, id1)
}

/// The running code's called scope (`static::`).
pub fn called<G: Globals>(g: G) -> Option<Rc<Class>> {
    let id1 = eg!(g, |eg| eg.frames.last().map_or(0, |f| f.called));
    class_by_id1(g, id1)
}

/// `$this` of the running frame, if it has one.
pub fn this<G: Globals>(g: G) -> Option<Obj> {
    eg!(g, |eg| {
        // Code that `eval` or `include` runs has its caller's `$this`.
        let f = eg
            .frames
            .iter()
            .rev()
            // SAFETY: a frame's function is one of the request's.
            .find(|f| !unsafe { &*f.function }.in_caller_scope)?;
        // SAFETY: a frame's function is one of the request's.
        let cv = unsafe { &*f.function }.this_cv?;
        // SAFETY: a CV of the frame's live window.
        match unsafe { &*f.base.add(cv as usize) } {
            Value::Obj(o) => Some(o.clone()),
            _ => None,
        }
    })
}

/// The class a class operand names (see `class_mode`).
pub fn class_operand<G: Globals>(g: G, v: &Value, mode: u8) -> VmResult<Rc<Class>> {
    match mode {
        class_mode::SELF => scope(g).map_or_else(|| error("Cannot access \"self\" when no class scope is active"), Ok),
        class_mode::PARENT => match scope(g) {
            Some(s) => match &s.parent {
                Some(p) => Ok(p.clone()),
                None => error("Cannot access \"parent\" when current class scope has no parent"),
            },
            None => error("Cannot access \"parent\" when no class scope is active"),
        },
        class_mode::STATIC => {
            called(g).map_or_else(|| error("Cannot access \"static\" when no class scope is active"), Ok)
        }
        _ => match v {
            Value::Obj(o) => Ok(o.class.clone()),
            Value::Closure(_) => crate::class::find(g, b"Closure"),
            Value::Str(s) => crate::class::find(g, s.as_bytes()),
            Value::Ref(r) => class_operand(g, &r.get(), mode),
            _ => error("Class name must be a valid object or a string"),
        },
    }
}

/// Evaluates the property defaults of `class` (and its parents) the
/// first time it is used (PHP's `zend_update_class_constants`).
pub fn ensure_defaults<G: Globals>(g: G, class: &Rc<Class>) -> VmResult<()> {
    if class.defaults_ready.get() {
        return Ok(());
    }
    if let Some(p) = &class.parent {
        ensure_defaults(g, p)?;
        // Inherited slots take the parent's evaluated defaults.
        let pd = p.defaults.borrow();
        let mut d = class.defaults.borrow_mut();
        for (i, v) in pd.iter().enumerate() {
            if class.props[i].declaring == p.props[i].declaring {
                d[i] = v.clone();
            }
        }
    }
    let traits = class.trait_defaults.iter().map(|t| (t.func, &t.targets));
    for (f, targets) in class
        .defaults_fn
        .map(|f| (f, &class.default_targets))
        .into_iter()
        .chain(traits)
    {
        let list = crate::call::call_in_scope(g, f, None, class.id, class.id, Vec::new())?;
        if let Value::Arr(a) = list {
            for (target, v) in targets.iter().zip(a.values()) {
                match target {
                    DefaultTarget::Slot(s) => {
                        let mut v = v.deref_clone();
                        if let Some(p) = class.props.get(*s as usize) {
                            if let Some(ty) = &p.ty {
                                v = crate::types::check_default(g, ty, v, p.declaring, &p.name)?;
                            }
                        }
                        class.defaults.borrow_mut()[*s as usize] = v;
                    }
                    DefaultTarget::Static(name) => {
                        if let Some(sp) = class.statics.get(name) {
                            let mut v = v.deref_clone();
                            if let Some(ty) = &sp.ty {
                                v = crate::types::check_default(g, ty, v, sp.declaring, &sp.name)?;
                            }
                            sp.slot.set(v);
                        }
                    }
                    DefaultTarget::Skip => {}
                }
            }
        }
    }
    class.defaults_ready.set(true);
    Ok(())
}

/// `new C` without the constructor call: PHP's `object_init_ex`.
pub fn instantiate<G: Globals>(g: G, class: &Rc<Class>) -> VmResult<Obj> {
    match class.kind {
        ClassKind::Interface => return error(format!("Cannot instantiate interface {}", class.name)),
        ClassKind::Trait => return error(format!("Cannot instantiate trait {}", class.name)),
        ClassKind::Enum => return error(format!("Cannot instantiate enum {}", class.name)),
        ClassKind::Class => {}
    }
    if class.is_abstract() {
        return error(format!("Cannot instantiate abstract class {}", class.name));
    }
    if class.native == Some(minizts_core::object::NativeKind::Closure) {
        return error(format!("Instantiation of class {} is not allowed", class.name));
    }
    ensure_defaults(g, class)?;
    let props = class.defaults.borrow().clone();
    let store = eg!(g).objects.clone();
    let obj = store.create(class.clone(), props);
    if class.is_throwable() {
        crate::exceptions::init_throwable(g, &obj);
    }
    Ok(obj)
}

/// Where a property name leads on an object, seen from a scope.
pub(crate) enum Lookup {
    /// A declared property's slot.
    Slot(u32),
    /// Not declared: a dynamic property (which may not exist).
    Dynamic,
    /// Declared but not visible from the scope: the declaring class and
    /// the property's flags, for the message.
    Hidden(Rc<Class>, u16),
}

/// PHP's `zend_check_protected`: whether code of `scope` may see a
/// protected member declared by `declaring`.
fn protected_visible(declaring: &Class, scope: &Class) -> bool {
    scope.is_subclass_of(declaring) || declaring.is_subclass_of(scope)
}

fn lookup<G: Globals>(g: G, o: &Object, name: &PhpStr, scope: Option<&Rc<Class>>) -> Lookup {
    eg!(g, |eg| lookup_in(&eg.classes, &o.class, name, scope.map(|s| &**s)))
}

/// Where property `name` of an object of `class` leads code of `scope`
/// (PHP's `zend_get_property_offset`), with the class table the
/// declaring classes are found in.
pub(crate) fn lookup_in(classes: &ClassTable, class: &Class, name: &PhpStr, scope: Option<&Class>) -> Lookup {
    // A private property of the scope's own class wins when the object
    // is an instance of that class (a parent's private slot).
    if let Some(s) = scope {
        if s.id != class.id && class.is_subclass_of(s) {
            if let Some(&slot) = s.prop_index.get(name) {
                let p = &s.props[slot as usize];
                if p.flags & acc::PRIVATE != 0 && p.declaring == s.id {
                    return Lookup::Slot(slot);
                }
            }
        }
    }
    let Some(&slot) = class.prop_index.get(name) else {
        return Lookup::Dynamic;
    };
    let p = &class.props[slot as usize];
    if p.flags & acc::PUBLIC != 0 || p.flags & acc::VISIBILITY == 0 {
        return Lookup::Slot(slot);
    }
    let declaring = classes.get(p.declaring);
    let visible = match scope {
        None => false,
        Some(s) if p.flags & acc::PRIVATE != 0 => s.id == p.declaring,
        Some(s) => protected_visible(declaring, s),
    };
    if visible {
        Lookup::Slot(slot)
    } else {
        Lookup::Hidden(declaring.clone(), p.flags)
    }
}

/// A dynamic property is about to be made: an error for an enum or a
/// readonly class (`ZEND_ACC_NO_DYNAMIC_PROPERTIES`), deprecated unless
/// the class allows them.
fn new_dynamic<G: Globals>(g: G, o: &Object, name: &PhpStr) -> VmResult<()> {
    if o.class.kind == ClassKind::Enum
        || o.class.flags & acc::READONLY != 0
        || o.class.native == Some(minizts_core::object::NativeKind::Sealed)
    {
        return error(format!(
            "Cannot create dynamic property {}::${}",
            message_name(&o.class.name),
            name_str(name)
        ));
    }
    if !o.class.allow_dynamic {
        deprecated(
            g,
            &format!(
                "Creation of dynamic property {}::${} is deprecated",
                o.class.name,
                name_str(name)
            ),
        );
    }
    Ok(())
}

/// A class's name as PHP's messages print it: up to its NUL byte (an
/// anonymous class's name goes on with where it was declared).
pub(crate) fn message_name(name: &PhpStr) -> String {
    let b = name.as_bytes();
    String::from_utf8_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]).into_owned()
}

fn name_str(name: &PhpStr) -> String {
    String::from_utf8_lossy(name.as_bytes()).into_owned()
}

fn hidden_error<T>(declaring: &Class, flags: u16, name: &PhpStr) -> VmResult<T> {
    error(format!(
        "Cannot access {} property {}::${}",
        acc::visibility_word(flags),
        declaring.name,
        name_str(name)
    ))
}

/// What an operand that should be an object is, for PHP's messages
/// ("on null", "on int", "on string").
fn non_object_type(v: &Value) -> &'static str {
    v.type_name()
}

/// Calls magic method `m` of `o` with `args` (its `$this`).
fn call_magic<G: Globals>(g: G, o: &Obj, m: &Rc<Method>, args: Vec<Value>) -> VmResult<Value> {
    crate::call::call_method(g, m, Some(o.clone()), o.class.id, args)
}

/// Runs `f` with the object's hook guard set, unless it is set already
/// (then `None`: a hook reached again from inside itself accesses the
/// property directly, PHP's property guards).
fn guarded<T>(o: &Obj, f: impl FnOnce() -> VmResult<T>) -> Option<VmResult<T>> {
    if o.has_flag(Object::IN_HOOK) {
        return None;
    }
    o.set_flag(Object::IN_HOOK, true);
    let r = f();
    o.set_flag(Object::IN_HOOK, false);
    Some(r)
}

/// `__get` for a read; inside `isset`/`??` (`quiet`) only after
/// `__isset` says the property exists (PHP's `BP_VAR_IS` reads).
fn magic_read<G: Globals>(g: G, o: &Obj, get: &Rc<Method>, name: &PhpStr, quiet: bool) -> VmResult<Value> {
    if quiet {
        if let Some(isset) = o.class.magic.isset.clone() {
            if !call_magic(g, o, &isset, vec![Value::Str(name.clone())])?.to_bool() {
                return Ok(Value::Null);
            }
        }
    }
    call_magic(g, o, get, vec![Value::Str(name.clone())])
}

/// `$obj->name` (`quiet`: inside `isset`/`??`, no warning); `cache`:
/// the instruction's runtime cache entry, if it has one.
pub fn read<G: Globals>(g: G, objv: &Value, name: &PhpStr, quiet: bool, cache: Option<u32>) -> VmResult<Value> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(r) => return read(g, &r.get(), name, quiet, cache),
        other => {
            if !quiet {
                warning(
                    g,
                    &format!(
                        "Attempt to read property \"{}\" on {}",
                        name_str(name),
                        non_object_type(other)
                    ),
                );
            }
            return Ok(Value::Null);
        }
    };
    if let Some(slot) = cache.and_then(|at| cached_slot(g, at, &o.class)) {
        let v = o.props.borrow()[slot as usize].deref_clone_keep_undef();
        if !matches!(v, Value::Undef) {
            return Ok(v);
        }
    }
    let scope = scope(g);
    let found = lookup(g, o, name, scope.as_ref());
    remember_slot(g, cache, &o.class, &found);
    match found {
        Lookup::Slot(slot) => {
            let v = o.props.borrow()[slot as usize].deref_clone_keep_undef();
            if !matches!(v, Value::Undef) {
                return Ok(v);
            }
            if let Some(get) = o.class.magic.get.clone() {
                if let Some(r) = guarded(o, || magic_read(g, o, &get, name, quiet)) {
                    return r;
                }
            }
            let p = &o.class.props[slot as usize];
            if p.ty.is_some() {
                return error(format!(
                    "Typed property {}::${} must not be accessed before initialization",
                    message_name(&eg!(g).classes.get(p.declaring).name),
                    name_str(name)
                ));
            }
            if !quiet {
                warning(g, &format!("Undefined property: {}::${}", o.class.name, name_str(name)));
            }
            Ok(Value::Null)
        }
        Lookup::Dynamic => {
            if let Some(v) = o.dynamic.borrow().as_ref().and_then(|d| {
                d.get(&minizts_core::Key::from_php_str(name.clone()))
                    .map(Value::deref_clone)
            }) {
                return Ok(v);
            }
            if let Some(get) = o.class.magic.get.clone() {
                if let Some(r) = guarded(o, || magic_read(g, o, &get, name, quiet)) {
                    return r;
                }
            }
            if !quiet {
                warning(g, &format!("Undefined property: {}::${}", o.class.name, name_str(name)));
            }
            Ok(Value::Null)
        }
        Lookup::Hidden(declaring, flags) => {
            if let Some(get) = o.class.magic.get.clone() {
                if let Some(r) = guarded(o, || magic_read(g, o, &get, name, quiet)) {
                    return r;
                }
            }
            hidden_error(&declaring, flags, name)
        }
    }
}

/// Writes `v` through property reference `r`; PHP's error if the
/// property is being written through the same reference already (a
/// hook that writes the property an outer write is still holding).
fn set_through<G: Globals>(g: G, r: &minizts_core::PhpRef, v: Value) -> VmResult<()> {
    if r.is_typed() {
        return crate::refs::assign(g, r, v);
    }
    match r.try_set(v) {
        Ok(()) => Ok(()),
        Err(_) => error("Cannot modify a property while it is being modified (minizts: the write reached itself)"),
    }
}

/// `$obj->name = v`; `cache`: the instruction's runtime cache entry, if
/// it has one.
pub fn write<G: Globals>(g: G, objv: &Value, name: &PhpStr, v: Value, cache: Option<u32>) -> VmResult<()> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(r) => return write(g, &r.get(), name, v, cache),
        other => {
            return error(format!(
                "Attempt to assign property \"{}\" on {}",
                name_str(name),
                non_object_type(other)
            ))
        }
    };
    // A readonly property's write depends on more than the slot (whether
    // it is initialised, and the scope's class): never from the cache.
    let hit = cache
        .and_then(|at| cached_slot(g, at, &o.class))
        .filter(|&slot| o.class.props[slot as usize].flags & acc::READONLY == 0);
    let (scope, found) = match hit {
        Some(slot) => (None, Lookup::Slot(slot)),
        None => {
            let scope = scope(g);
            let found = lookup(g, o, name, scope.as_ref());
            remember_slot(g, cache, &o.class, &found);
            (scope, found)
        }
    };
    match found {
        Lookup::Slot(slot) => {
            let p = &o.class.props[slot as usize];
            if p.flags & acc::READONLY != 0 {
                let initialised = !matches!(o.props.borrow()[slot as usize], Value::Undef);
                let declaring = eg!(g).classes.get(p.declaring).clone();
                if initialised {
                    return error(format!(
                        "Cannot modify readonly property {}::${}",
                        o.class.name,
                        name_str(name)
                    ));
                }
                if scope.as_ref().is_none_or(|s| s.id != p.declaring) {
                    return error(format!(
                        "Cannot initialize readonly property {}::${} from {}",
                        declaring.name,
                        name_str(name),
                        scope
                            .as_ref()
                            .map_or_else(|| "global scope".to_string(), |s| format!("scope {}", s.name))
                    ));
                }
            }
            // An unset property's write goes to `__set` (PHP tells an
            // unset typed property from a never initialised one, which is
            // written directly; minizts does not keep that flag, and takes
            // every typed one for the second).
            if p.ty.is_none() && matches!(o.props.borrow()[slot as usize], Value::Undef) {
                if let Some(set) = o.class.magic.set.clone() {
                    if let Some(r) = guarded(o, || call_magic(g, o, &set, vec![Value::Str(name.clone()), v.clone()])) {
                        return r.map(drop);
                    }
                }
            }
            let v = match &p.ty {
                Some(ty) => crate::types::check_property(g, ty, v, &o.class, p.declaring, name)?,
                None => v,
            };
            let mut props = o.props.borrow_mut();
            let slot = &mut props[slot as usize];
            let old = match slot {
                Value::Ref(r) => {
                    let r = r.clone();
                    drop(props);
                    return set_through(g, &r, v);
                }
                slot => std::mem::replace(slot, v),
            };
            drop(props);
            drop(old);
            Ok(())
        }
        Lookup::Dynamic => {
            let key = minizts_core::Key::from_php_str(name.clone());
            let exists = o.dynamic.borrow().as_ref().is_some_and(|d| d.get(&key).is_some());
            if !exists {
                if let Some(set) = o.class.magic.set.clone() {
                    if let Some(r) = guarded(o, || call_magic(g, o, &set, vec![Value::Str(name.clone()), v.clone()])) {
                        return r.map(drop);
                    }
                }
                new_dynamic(g, o, name)?;
            }
            let mut d = o.dynamic.borrow_mut();
            let table = d.get_or_insert_with(Default::default);
            let (slot, _) = table.entry(key);
            match slot {
                Value::Ref(r) => {
                    let r = r.clone();
                    drop(d);
                    return set_through(g, &r, v);
                }
                slot => *slot = v,
            }
            Ok(())
        }
        Lookup::Hidden(declaring, flags) => {
            if let Some(set) = o.class.magic.set.clone() {
                if let Some(r) = guarded(o, || call_magic(g, o, &set, vec![Value::Str(name.clone()), v.clone()])) {
                    return r.map(drop);
                }
            }
            hidden_error(&declaring, flags, name)
        }
    }
}

/// `&$obj->name`: the property as a reference, made one if it is not
/// (and created, null, if it does not exist), for writes through it.
pub fn make_ref<G: Globals>(g: G, objv: &Value, name: &PhpStr) -> VmResult<minizts_core::PhpRef> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(r) => return make_ref(g, &r.get(), name),
        other => {
            return error(format!(
                "Attempt to modify property \"{}\" on {}",
                name_str(name),
                non_object_type(other)
            ))
        }
    };
    let scope = scope(g);
    match lookup(g, o, name, scope.as_ref()) {
        Lookup::Slot(slot) => {
            let p = &o.class.props[slot as usize];
            if p.flags & acc::READONLY != 0 && !matches!(o.props.borrow()[slot as usize], Value::Undef) {
                return error(format!(
                    "Cannot modify readonly property {}::${}",
                    o.class.name,
                    name_str(name)
                ));
            }
            let mut props = o.props.borrow_mut();
            let v = &mut props[slot as usize];
            if let Value::Ref(r) = v {
                return Ok(r.clone());
            }
            let inner = match std::mem::take(v) {
                Value::Undef => Value::Null,
                x => x,
            };
            let r = crate::gc::new_ref(g, inner);
            if let Some(ty) = &p.ty {
                crate::refs::add_source(&r, ty, p.declaring, name);
            }
            *v = Value::Ref(r.clone());
            Ok(r)
        }
        Lookup::Dynamic => {
            let key = minizts_core::Key::from_php_str(name.clone());
            let exists = o.dynamic.borrow().as_ref().is_some_and(|d| d.get(&key).is_some());
            if !exists {
                if let Some(r) = magic_get_ref(g, o, name) {
                    return r;
                }
                new_dynamic(g, o, name)?;
            }
            let mut d = o.dynamic.borrow_mut();
            let table = d.get_or_insert_with(Default::default);
            let (slot, _) = table.entry(key);
            if let Value::Ref(r) = slot {
                return Ok(r.clone());
            }
            let inner = match std::mem::take(slot) {
                Value::Undef => Value::Null,
                x => x,
            };
            let r = crate::gc::new_ref(g, inner);
            *slot = Value::Ref(r.clone());
            Ok(r)
        }
        Lookup::Hidden(declaring, flags) => match magic_get_ref(g, o, name) {
            Some(r) => r,
            None => hidden_error(&declaring, flags, name),
        },
    }
}

/// [`make_ref`] of a property that `__get` answers (one not there, or not
/// accessible here), unless the class has none or it is running for this
/// name already: a `&__get`'s reference is the property's; any other
/// value is a copy, which PHP notices unless it is an object (its handle
/// is shared).
fn magic_get_ref<G: Globals>(g: G, o: &Obj, name: &PhpStr) -> Option<VmResult<minizts_core::PhpRef>> {
    let get = o.class.magic.get.clone()?;
    let r = guarded(o, || call_magic(g, o, &get, vec![Value::Str(name.clone())]))?;
    Some(r.map(|v| match v {
        Value::Ref(r) => r,
        v => {
            if !matches!(v, Value::Obj(_) | Value::Closure(_)) {
                notice(
                    g,
                    &format!(
                        "Indirect modification of overloaded property {}::${} has no effect",
                        o.class.name,
                        name_str(name)
                    ),
                );
            }
            crate::gc::new_ref(g, v)
        }
    }))
}

/// `foreach ($obj as &$v)`'s reference to property `name` of `o` (PHP's
/// `zend_fe_fetch_object_helper`): as [`make_ref`], but a readonly
/// property (the loop sees only initialized ones) is PHP's error.
pub fn foreach_ref<G: Globals>(g: G, o: &Obj, name: &PhpStr) -> VmResult<minizts_core::PhpRef> {
    if let Lookup::Slot(slot) = lookup(g, o, name, scope(g).as_ref()) {
        let p = &o.class.props[slot as usize];
        if p.flags & acc::READONLY != 0 {
            return error(format!(
                "Cannot acquire reference to readonly property {}::${}",
                eg!(g).classes.get(p.declaring).name,
                name_str(name)
            ));
        }
    }
    make_ref(g, &Value::Obj(o.clone()), name)
}

/// What a `__get` that PHP's by-reference fetch fell back to gives:
/// PHP's notice unless it returned a reference or an object, then the
/// error every reference assignment to an overloaded property ends in.
fn overloaded_ref_error<G: Globals>(g: G, o: &Obj, get: &Rc<Method>, name: &PhpStr) -> Option<VmResult<()>> {
    let r = guarded(o, || call_magic(g, o, get, vec![Value::Str(name.clone())]))?;
    Some(r.and_then(|v| {
        if !matches!(v, Value::Ref(_) | Value::Obj(_) | Value::Closure(_)) {
            notice(
                g,
                &format!(
                    "Indirect modification of overloaded property {}::${} has no effect",
                    o.class.name,
                    name_str(name)
                ),
            );
        }
        error("Cannot assign by reference to overloaded object")
    }))
}

/// `$obj->name = &…`: binds the property to reference `r` (PHP's
/// `zend_assign_to_property_reference`). `__set` is not called: a
/// property only `__get` reaches is an error, as PHP's by-reference
/// fetch of it fails.
pub fn assign_ref<G: Globals>(g: G, objv: &Value, name: &PhpStr, r: minizts_core::PhpRef) -> VmResult<()> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(inner) => return assign_ref(g, &inner.get(), name, r),
        Value::Closure(_) => return error("Closure object cannot have properties"),
        other => {
            return error(format!(
                "Attempt to modify property \"{}\" on {}",
                name_str(name),
                non_object_type(other)
            ))
        }
    };
    let scope = scope(g);
    match lookup(g, o, name, scope.as_ref()) {
        Lookup::Slot(slot) => {
            let p = &o.class.props[slot as usize];
            let unset = matches!(o.props.borrow()[slot as usize], Value::Undef);
            if p.flags & acc::READONLY != 0 {
                let declaring = eg!(g).classes.get(p.declaring).name.clone();
                if !unset && matches!(o.props.borrow()[slot as usize].deref_clone(), Value::Obj(_)) {
                    return error("Cannot assign by reference to overloaded object");
                }
                let what = if unset { "indirectly modify" } else { "modify" };
                return error(format!(
                    "Cannot {what} readonly property {declaring}::${}",
                    name_str(name)
                ));
            }
            if unset && p.ty.is_none() {
                if let Some(get) = o.class.magic.get.clone() {
                    if let Some(r) = overloaded_ref_error(g, o, &get, name) {
                        return r;
                    }
                }
            }
            if let Some(ty) = &p.ty {
                crate::refs::bind_typed(g, &r, ty, p.declaring, name)?;
            }
            let old = std::mem::replace(&mut o.props.borrow_mut()[slot as usize], Value::Ref(r));
            if let (Value::Ref(old), Some(_)) = (&old, &p.ty) {
                old.remove_type_source(p.declaring, name);
            }
            drop(old);
            Ok(())
        }
        Lookup::Dynamic => {
            let key = minizts_core::Key::from_php_str(name.clone());
            let exists = o.dynamic.borrow().as_ref().is_some_and(|d| d.get(&key).is_some());
            if !exists {
                if let Some(get) = o.class.magic.get.clone() {
                    if let Some(r) = overloaded_ref_error(g, o, &get, name) {
                        return r;
                    }
                }
                new_dynamic(g, o, name)?;
            }
            let mut d = o.dynamic.borrow_mut();
            let table = d.get_or_insert_with(Default::default);
            let (slot, _) = table.entry(key);
            let old = std::mem::replace(slot, Value::Ref(r));
            drop(d);
            drop(old);
            Ok(())
        }
        Lookup::Hidden(declaring, flags) => {
            if let Some(get) = o.class.magic.get.clone() {
                if let Some(r) = overloaded_ref_error(g, o, &get, name) {
                    return r;
                }
            }
            hidden_error(&declaring, flags, name)
        }
    }
}

/// `C::$name = &…`: binds static property `C::$name` to reference `r`.
/// The static's own slot, shared by the classes that inherit it, is a
/// reference; once bound, it holds the reference bound (the one place a
/// reference holds another), which [`static_ref`] gives instead.
pub fn assign_static_ref<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, r: minizts_core::PhpRef) -> VmResult<()> {
    let current = static_ref(g, class, name)?;
    let Some(sp) = class.statics.get(name) else {
        return Ok(());
    };
    if current.ptr_eq(&r) {
        return Ok(());
    }
    if let Some(ty) = &sp.ty {
        crate::refs::bind_typed(g, &r, ty, sp.declaring, name)?;
        current.remove_type_source(sp.declaring, name);
    }
    let old = std::mem::replace(&mut *sp.slot.borrow_mut(), Value::Ref(r));
    drop(old);
    Ok(())
}

/// A read-modify-write of a property: `$o->p <op>= v` or `++`/`--`.
#[derive(Clone, Copy)]
pub enum Modify<'a> {
    Op(minizts_core::bytecode::BinOp, &'a Value),
    IncDec(minizts_core::bytecode::IncDec),
}

impl Modify<'_> {
    /// The new value from `cur` (in place); the expression's value.
    fn apply<G: Globals>(self, g: G, cur: &mut Value) -> VmResult<Value> {
        match self {
            Modify::Op(op, v) => {
                crate::dim::apply_op(g, cur, op, v)?;
                Ok(cur.clone())
            }
            Modify::IncDec(kind) => crate::dim::inc_dec_slot(g, cur, kind),
        }
    }

    /// Through typed reference `r`.
    pub(crate) fn apply_typed_ref<G: Globals>(self, g: G, r: &minizts_core::PhpRef) -> VmResult<Value> {
        match self {
            Modify::Op(op, v) => {
                crate::refs::assign_op(g, r, op, v)?;
                Ok(r.get())
            }
            Modify::IncDec(kind) => crate::refs::inc_dec(g, r, kind),
        }
    }
}

/// Property `declaring::$name` (of type `ty`, if typed) changed by `m`
/// from `v`: its new value, checked as an assignment is, and the
/// expression's value.
fn modified<G: Globals>(
    g: G,
    m: Modify<'_>,
    mut v: Value,
    ty: Option<&Rc<minizts_core::bytecode::TypeDecl>>,
    class: &Class,
    declaring: ClassId,
    name: &PhpStr,
) -> VmResult<(Value, Value)> {
    let before = v.clone();
    let result = m.apply(g, &mut v)?;
    let Some(ty) = ty else { return Ok((v, result)) };
    if let (Modify::IncDec(kind), Value::Int(_), Value::Float(_)) = (m, &before, &v) {
        if ty.mask & minizts_core::bytecode::type_bits::FLOAT == 0 {
            let (verb, end) = if kind.is_inc() {
                ("increment", "maximal")
            } else {
                ("decrement", "minimal")
            };
            return crate::error::type_error(format!(
                "Cannot {verb} property {}::${} of type {} past its {end} value",
                message_name(&eg!(g).classes.get(declaring).name),
                name_str(name),
                ty.to_php_string()
            ));
        }
    }
    let v = crate::types::check_property(g, ty, v, class, declaring, name)?;
    let result = match m {
        Modify::Op(..) => v.clone(),
        Modify::IncDec(_) => result,
    };
    Ok((v, result))
}

/// Where static property `C::$name` is: the reference its value is
/// written through (its own slot, or the reference it was bound to, see
/// [`assign_static_ref`]), whether it was bound, and its declaration.
fn static_place<G: Globals>(
    g: G,
    class: &Rc<Class>,
    name: &PhpStr,
) -> VmResult<(minizts_core::PhpRef, bool, minizts_core::object::StaticProp)> {
    let slot = static_ref(g, class, name)?;
    let sp = class
        .statics
        .get(name)
        .expect("a static property static_ref found")
        .clone();
    let bound = !slot.ptr_eq(&sp.slot);
    Ok((slot, bound, sp))
}

fn uninitialized_static<G: Globals>(g: G, sp: &minizts_core::object::StaticProp) -> VmResult<()> {
    error(format!(
        "Typed static property {}::${} must not be accessed before initialization",
        message_name(&eg!(g).classes.get(sp.declaring).name),
        name_str(&sp.name)
    ))
}

/// `C::$name` read (`quiet`: inside `isset`/`??`, null for a property
/// that is not there or not initialised).
pub fn read_static<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, quiet: bool) -> VmResult<Value> {
    let (place, _, sp) = match static_place(g, class, name) {
        Ok(p) => p,
        Err(_) if quiet => return Ok(Value::Null),
        Err(e) => return Err(e),
    };
    match place.get() {
        Value::Undef if quiet => Ok(Value::Null),
        Value::Undef => uninitialized_static(g, &sp).map(|()| Value::Null),
        v => Ok(v),
    }
}

/// `C::$name = v`: checked against the property's type first (PHP's
/// message names the property), then against the types of the other
/// properties holding its reference.
pub fn assign_static<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, v: Value) -> VmResult<()> {
    let (place, _, sp) = static_place(g, class, name)?;
    let v = match &sp.ty {
        Some(ty) => crate::types::check_property(g, ty, v, class, sp.declaring, name)?,
        None => v,
    };
    set_through(g, &place, v)
}

/// `C::$name <op>= v`, `C::$name++`, …: as [`modify`] for a static.
pub fn modify_static<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, m: Modify<'_>) -> VmResult<Value> {
    let (place, _, sp) = static_place(g, class, name)?;
    if place.is_typed() {
        return m.apply_typed_ref(g, &place);
    }
    let v = place.get();
    if matches!(v, Value::Undef) {
        uninitialized_static(g, &sp)?;
    }
    let (v, result) = modified(g, m, v, sp.ty.as_ref(), class, sp.declaring, name)?;
    set_through(g, &place, v)?;
    Ok(result)
}

/// `&C::$name`: the static as a reference of its own, shared from now
/// on (bound into its slot, see [`assign_static_ref`]), which its type
/// constrains.
pub fn bind_static<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr) -> VmResult<minizts_core::PhpRef> {
    let (place, bound, sp) = static_place(g, class, name)?;
    if bound {
        return Ok(place);
    }
    let v = match place.get() {
        Value::Undef => match &sp.ty {
            Some(ty) if !ty.allows_null() => {
                return error(format!(
                    "Cannot access uninitialized non-nullable property {}::${} by reference",
                    message_name(&eg!(g).classes.get(sp.declaring).name),
                    name_str(name)
                ))
            }
            _ => Value::Null,
        },
        v => v,
    };
    let r = crate::gc::new_ref(g, v);
    if let Some(ty) = &sp.ty {
        crate::refs::add_source(&r, ty, sp.declaring, name);
    }
    place.set(Value::Ref(r.clone()));
    Ok(r)
}

/// The value `$obj->name` has without magic (a declared property the
/// running scope may see, or a dynamic one), behind a reference if it is
/// one; `None` when there is none, `Undef` for an uninitialised one.
fn plain_value<G: Globals>(g: G, o: &Obj, name: &PhpStr, cache: Option<u32>) -> Option<Value> {
    let found = match cache.and_then(|at| cached_slot(g, at, &o.class)) {
        Some(slot) => Lookup::Slot(slot),
        None => {
            let found = lookup(g, o, name, scope(g).as_ref());
            remember_slot(g, cache, &o.class, &found);
            found
        }
    };
    match found {
        Lookup::Slot(slot) => Some(o.props.borrow()[slot as usize].deref_clone_keep_undef()),
        Lookup::Dynamic => o.dynamic.borrow().as_ref().and_then(|d| {
            d.get(&minizts_core::Key::from_php_str(name.clone()))
                .map(Value::deref_clone)
        }),
        Lookup::Hidden(..) => None,
    }
}

/// `isset($obj->name)`.
pub fn isset<G: Globals>(g: G, objv: &Value, name: &PhpStr, cache: Option<u32>) -> VmResult<bool> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(r) => return isset(g, &r.get(), name, cache),
        _ => return Ok(false),
    };
    match plain_value(g, o, name, cache) {
        Some(v) if !matches!(v, Value::Undef) => Ok(!v.is_null()),
        _ => match o.class.magic.isset.clone() {
            Some(m) => match guarded(o, || call_magic(g, o, &m, vec![Value::Str(name.clone())])) {
                Some(r) => Ok(r?.to_bool()),
                None => Ok(false),
            },
            None => Ok(false),
        },
    }
}

/// `empty($obj->name)` (PHP's `has_property` with
/// `ZEND_PROPERTY_NOT_EMPTY`): a property with a value is empty when the
/// value is falsy; for any other, `__isset` is asked, and only when it
/// says yes does `__get` give the value to test (no `__get`: empty).
pub fn empty<G: Globals>(g: G, objv: &Value, name: &PhpStr, cache: Option<u32>) -> VmResult<bool> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(r) => return empty(g, &r.get(), name, cache),
        _ => return Ok(true),
    };
    if let Some(v) = plain_value(g, o, name, cache).filter(|v| !matches!(v, Value::Undef)) {
        return Ok(!v.to_bool());
    }
    let Some(isset) = o.class.magic.isset.clone() else {
        return Ok(true);
    };
    let said = match guarded(o, || call_magic(g, o, &isset, vec![Value::Str(name.clone())])) {
        Some(r) => r?.to_bool(),
        None => false,
    };
    if !said {
        return Ok(true);
    }
    let Some(get) = o.class.magic.get.clone() else {
        return Ok(true);
    };
    match guarded(o, || call_magic(g, o, &get, vec![Value::Str(name.clone())])) {
        Some(v) => Ok(!v?.to_bool()),
        None => Ok(true),
    }
}

/// `unset($obj->name)`.
pub fn unset<G: Globals>(g: G, objv: &Value, name: &PhpStr) -> VmResult<()> {
    let o = match objv {
        Value::Obj(o) => o,
        Value::Ref(r) => return unset(g, &r.get(), name),
        _ => return Ok(()),
    };
    let scope = scope(g);
    match lookup(g, o, name, scope.as_ref()) {
        Lookup::Slot(slot) => {
            let p = &o.class.props[slot as usize];
            if p.flags & acc::READONLY != 0 {
                return error(format!(
                    "Cannot unset readonly property {}::${}",
                    o.class.name,
                    name_str(name)
                ));
            }
            let old = std::mem::take(&mut o.props.borrow_mut()[slot as usize]);
            if let (Value::Ref(r), true) = (&old, p.ty.is_some()) {
                r.remove_type_source(p.declaring, name);
            }
            drop(old);
            Ok(())
        }
        Lookup::Dynamic => {
            let key = minizts_core::Key::from_php_str(name.clone());
            let removed = o.dynamic.borrow_mut().as_mut().and_then(|d| d.remove(&key));
            if removed.is_none() {
                if let Some(m) = o.class.magic.unset.clone() {
                    if let Some(r) = guarded(o, || call_magic(g, o, &m, vec![Value::Str(name.clone())])) {
                        r?;
                    }
                }
            }
            Ok(())
        }
        Lookup::Hidden(declaring, flags) => {
            if let Some(m) = o.class.magic.unset.clone() {
                if let Some(r) = guarded(o, || call_magic(g, o, &m, vec![Value::Str(name.clone())])) {
                    return r.map(drop);
                }
            }
            hidden_error(&declaring, flags, name)
        }
    }
}

/// A method resolved for a call: what runs, on what.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub method: Rc<Method>,
    pub this: Option<Obj>,
    /// The class `static::` means inside the call.
    pub called: Rc<Class>,
    /// For `__call`/`__callStatic`: the name that was called.
    pub magic_name: Option<PhpStr>,
    /// For a method of `Closure` called on a closure (`bindTo`, `call`,
    /// `__invoke`): the closure, which is not an `Obj`.
    pub closure: Option<Rc<minizts_core::value::Closure>>,
}

/// Method `name` of `class` as code of `scope` may call it; `Err` with
/// the method (if any) when it is not visible.
fn find_method(class: &Rc<Class>, lc: &[u8], scope: Option<&Rc<Class>>) -> Result<Rc<Method>, Option<Rc<Method>>> {
    // The scope's own private method wins on an instance of it.
    if let Some(s) = scope {
        if s.id != class.id && class.is_subclass_of(s) {
            if let Some(m) = s.methods.get(lc) {
                if m.flags & acc::PRIVATE != 0 && m.declaring == s.id {
                    return Ok(m.clone());
                }
            }
        }
    }
    let Some(m) = class.methods.get(lc) else {
        return Err(None);
    };
    if m.flags & acc::PRIVATE != 0 {
        if scope.is_some_and(|s| s.id == m.declaring) {
            return Ok(m.clone());
        }
        return Err(Some(m.clone()));
    }
    if m.flags & acc::PROTECTED != 0 {
        let ok = scope.is_some_and(|s| {
            let root = method_root(class, m, lc);
            s.id == m.declaring || s.is_subclass_of(&root) || root.is_subclass_of(s)
        });
        if !ok {
            return Err(Some(m.clone()));
        }
    }
    Ok(m.clone())
}

/// The class whose declaration of method `m` (found on `class`) the
/// others override (PHP's `zend_get_function_root_class`): protected
/// access is checked against it, so sibling classes may call a method
/// their common ancestor declared.
fn method_root(class: &Rc<Class>, m: &Method, lc: &[u8]) -> Rc<Class> {
    let mut root = class.clone();
    while root.id != m.declaring {
        match root.parent.clone() {
            Some(p) => root = p,
            None => return class.clone(),
        }
    }
    while let Some(p) = root.parent.clone() {
        match p.methods.get(lc) {
            // A private method is no prototype.
            Some(pm) if pm.flags & acc::PRIVATE == 0 => root = p,
            _ => break,
        }
    }
    root
}

fn scope_words(scope: Option<&Rc<Class>>) -> String {
    match scope {
        Some(s) => format!("scope {}", s.name),
        None => "global scope".into(),
    }
}

/// `$obj->name(…)`: PHP's `INIT_METHOD_CALL`.
pub fn resolve_method<G: Globals>(g: G, objv: &Value, name: &PhpStr, cache: Option<u32>) -> VmResult<Resolved> {
    let o = match objv {
        Value::Obj(o) => o.clone(),
        Value::Ref(r) => return resolve_method(g, &r.get(), name, cache),
        Value::Closure(c) => return closure_method(g, c, name),
        other => {
            return error(format!(
                "Call to a member function {}() on {}",
                name_str(name),
                non_object_type(other)
            ))
        }
    };
    if let Some(at) = cache {
        let hit = eg!(g, |eg| {
            let scope = eg.frames.last().map_or(0, |f| f.scope);
            match &eg.runtime_cache[at as usize] {
                CacheEntry::Method {
                    class,
                    scope: s,
                    method,
                } if *class == o.class.id && *s == scope => Some(method.clone()),
                _ => None,
            }
        });
        if let Some(method) = hit {
            return Ok(Resolved {
                called: o.class.clone(),
                method,
                this: Some(o),
                magic_name: None,
                closure: None,
            });
        }
    }
    let scope = scope(g);
    let found = with_lowercase(name.as_bytes(), |lc| find_method(&o.class, lc, scope.as_ref()));
    if let (Some(at), Ok(m)) = (cache, &found) {
        eg!(g, |eg| {
            let scope = eg.frames.last().map_or(0, |f| f.scope);
            eg.runtime_cache[at as usize] = CacheEntry::Method {
                class: o.class.id,
                scope,
                method: m.clone(),
            };
        });
    }
    match found {
        Ok(m) => Ok(Resolved {
            called: o.class.clone(),
            method: m,
            this: Some(o),
            magic_name: None,
            closure: None,
        }),
        Err(hidden) => {
            if let Some(call) = o.class.magic.call.clone() {
                return Ok(Resolved {
                    called: o.class.clone(),
                    method: call,
                    this: Some(o),
                    magic_name: Some(name.clone()),
                    closure: None,
                });
            }
            match hidden {
                Some(m) => error(format!(
                    "Call to {} method {}::{}() from {}",
                    acc::visibility_word(m.flags),
                    o.class.name,
                    m.name,
                    scope_words(scope.as_ref())
                )),
                None => error(format!(
                    "Call to undefined method {}::{}()",
                    o.class.name,
                    name_str(name)
                )),
            }
        }
    }
}

/// `$closure->name(…)`: a method of class `Closure` (all public).
fn closure_method<G: Globals>(g: G, c: &Rc<minizts_core::value::Closure>, name: &PhpStr) -> VmResult<Resolved> {
    let class = crate::class::find(g, b"Closure")?;
    match with_lowercase(name.as_bytes(), |lc| class.method(lc).cloned()) {
        Some(m) => Ok(Resolved {
            method: m,
            this: None,
            called: class.clone(),
            magic_name: None,
            closure: Some(c.clone()),
        }),
        None => error(format!("Call to undefined method Closure::{}()", name_str(name))),
    }
}

/// A static call's resolution through its cache entry `at`: what the
/// entry holds for the running frame's scopes (and `$this`, where the
/// method takes it), else [`resolve_static`] on the class the operand
/// names, which the entry then remembers (not a magic `__call` or
/// `__callStatic`, which depends on the name too).
pub fn resolve_static_cached<G: Globals>(
    g: G,
    class: &Value,
    mode: u8,
    name: &Value,
    at: Option<u32>,
) -> VmResult<Resolved> {
    let hit = cached(g, at, |e, here| match e {
        CacheEntry::StaticCall {
            at,
            method,
            called,
            this_class,
        } if *at == here => Some((method.clone(), *called, *this_class)),
        _ => None,
    });
    if let Some((method, called, this_class)) = hit {
        let this = if this_class == 0 {
            None
        } else {
            this(g).filter(|t| t.class.id + 1 == this_class)
        };
        if this_class == 0 || this.is_some() {
            let called = eg!(g).classes.get(called).clone();
            return Ok(Resolved {
                method,
                this,
                called,
                magic_name: None,
                closure: None,
            });
        }
    }
    let cls = class_operand(g, class, mode)?;
    let name = crate::exec::method_name(name)?;
    let forwarding = matches!(mode, class_mode::SELF | class_mode::PARENT | class_mode::STATIC);
    let r = resolve_static(g, &cls, &name, forwarding)?;
    if r.magic_name.is_none() && r.closure.is_none() {
        remember(g, at, |at| CacheEntry::StaticCall {
            at,
            method: r.method.clone(),
            called: r.called.id,
            this_class: r.this.as_ref().map_or(0, |t| t.class.id + 1),
        });
    }
    Ok(r)
}

/// `C::name(…)`: PHP's `INIT_STATIC_METHOD_CALL`. `forwarding`: the class
/// was named by `self`, `parent` or `static`, which keep the caller's
/// called scope and `$this`.
pub fn resolve_static<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, forwarding: bool) -> VmResult<Resolved> {
    let scope = scope(g);
    let this = this(g).filter(|t| t.class.is_subclass_of(class));
    let called = if forwarding {
        called(g)
            .filter(|c| c.is_subclass_of(class))
            .unwrap_or_else(|| class.clone())
    } else {
        class.clone()
    };
    match with_lowercase(name.as_bytes(), |lc| find_method(class, lc, scope.as_ref())) {
        Ok(m) => {
            if m.flags & acc::ABSTRACT != 0 {
                return error(format!("Cannot call abstract method {}::{}()", class.name, m.name));
            }
            if m.is_static() {
                return Ok(Resolved {
                    method: m,
                    this: None,
                    called,
                    magic_name: None,
                    closure: None,
                });
            }
            match this {
                Some(t) => Ok(Resolved {
                    called: t.class.clone(),
                    method: m,
                    this: Some(t),
                    magic_name: None,
                    closure: None,
                }),
                None => error(format!(
                    "Non-static method {}::{}() cannot be called statically",
                    class.name, m.name
                )),
            }
        }
        Err(hidden) => {
            if let (Some(t), Some(call)) = (this.clone(), class.magic.call.clone()) {
                return Ok(Resolved {
                    called: t.class.clone(),
                    method: call,
                    this: Some(t),
                    magic_name: Some(name.clone()),
                    closure: None,
                });
            }
            if let Some(cs) = class.magic.call_static.clone() {
                return Ok(Resolved {
                    method: cs,
                    this: None,
                    called,
                    magic_name: Some(name.clone()),
                    closure: None,
                });
            }
            match hidden {
                Some(m) => error(format!(
                    "Call to {} method {}::{}() from {}",
                    acc::visibility_word(m.flags),
                    class.name,
                    m.name,
                    scope_words(scope.as_ref())
                )),
                None => error(format!("Call to undefined method {}::{}()", class.name, name_str(name))),
            }
        }
    }
}

/// [`static_ref`] of the property an instruction names, through its
/// cache entry `at`, which remembers the property for the next time.
/// `quiet` (inside `isset`/`??`): `None` for a property that cannot be
/// had, though a class operand that names no class is still an error.
pub fn static_ref_cached<G: Globals>(
    g: G,
    class: &Value,
    mode: u8,
    name: &Value,
    at: Option<u32>,
    quiet: bool,
) -> VmResult<Option<minizts_core::PhpRef>> {
    let hit = cached(g, at, |e, here| match e {
        CacheEntry::StaticProp { at, slot, .. } if *at == here => Some(slot.clone()),
        _ => None,
    });
    if let Some(slot) = hit {
        return Ok(Some(bound_static(&slot)));
    }
    let cls = class_operand(g, class, mode)?;
    let name = crate::ops::to_str(g, name)?;
    let slot = match static_slot(g, &cls, &name) {
        Ok(slot) => slot,
        Err(_) if quiet => return Ok(None),
        Err(e) => return Err(e),
    };
    let typed = cls.statics.get(&name).is_none_or(|sp| sp.ty.is_some());
    remember(g, at, |at| CacheEntry::StaticProp {
        at,
        slot: slot.clone(),
        typed,
    });
    Ok(Some(bound_static(&slot)))
}

/// The reference static property `C::$name` is.
pub fn static_ref<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr) -> VmResult<minizts_core::PhpRef> {
    static_slot(g, class, name).map(|slot| bound_static(&slot))
}

/// The reference a static's own slot stands for: the reference bound into
/// it by `C::$x = &…` if any (see [`assign_static_ref`]), else the slot.
/// Caches keep the slot, which stays, not what is bound into it.
pub fn bound_static(slot: &minizts_core::PhpRef) -> minizts_core::PhpRef {
    if let Value::Ref(bound) = &*slot.borrow() {
        return bound.clone();
    }
    slot.clone()
}

/// Static property `C::$name`'s own slot, checked for visibility.
fn static_slot<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr) -> VmResult<minizts_core::PhpRef> {
    ensure_defaults(g, class)?;
    let Some(sp) = class.statics.get(name) else {
        return error(format!(
            "Access to undeclared static property {}::${}",
            class.name,
            name_str(name)
        ));
    };
    let scope = scope(g);
    let visible = if sp.flags & acc::PRIVATE != 0 {
        scope.as_ref().is_some_and(|s| s.id == sp.declaring)
    } else if sp.flags & acc::PROTECTED != 0 {
        let declaring = eg!(g).classes.get(sp.declaring).clone();
        scope.as_ref().is_some_and(|s| protected_visible(&declaring, s))
    } else {
        true
    };
    if !visible {
        let declaring = eg!(g).classes.get(sp.declaring).clone();
        return error(format!(
            "Cannot access {} property {}::${}",
            acc::visibility_word(sp.flags),
            declaring.name,
            name_str(name)
        ));
    }
    Ok(sp.slot.clone())
}

/// Whether the running code may read a class constant with `flags`
/// declared in class `declaring` (`zend_verify_const_access`).
pub fn const_visible<G: Globals>(g: G, flags: u16, declaring: ClassId) -> bool {
    if flags & (acc::PRIVATE | acc::PROTECTED) == 0 {
        return true;
    }
    let scope = scope(g);
    if flags & acc::PRIVATE != 0 {
        return scope.as_ref().is_some_and(|s| s.id == declaring);
    }
    let declaring = eg!(g).classes.get(declaring).clone();
    scope.as_ref().is_some_and(|s| protected_visible(&declaring, s))
}

/// [`class_const`] of the constant an instruction names, through its
/// cache entry `at`, which remembers the value for the next time.
pub fn class_const_cached<G: Globals>(
    g: G,
    class: &Value,
    mode: u8,
    name: &PhpStr,
    at: Option<u32>,
) -> VmResult<Value> {
    // A class from a value: an object's class keys the entry (a class
    // name in a string is looked up each time).
    let of = if mode == minizts_core::bytecode::class_mode::VALUE {
        match class.deref_clone() {
            Value::Obj(o) => Some(o.class.id),
            _ => None,
        }
    } else {
        Some(CacheEntry::NAMED_CLASS)
    };
    let at = at.filter(|_| of.is_some());
    let of = of.unwrap_or(CacheEntry::NAMED_CLASS);
    let hit = cached(g, at, |e, here| match e {
        CacheEntry::ClassConst { at, of: o, value } if *at == here && *o == of => Some(value.clone()),
        _ => None,
    });
    if let Some(v) = hit {
        return Ok(v);
    }
    let cls = class_operand(g, class, mode)?;
    let v = class_const(g, &cls, name)?;
    remember(g, at, |at| CacheEntry::ClassConst {
        at,
        of,
        value: v.clone(),
    });
    Ok(v)
}

/// `C::NAME`.
pub fn class_const<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr) -> VmResult<Value> {
    let Some(c) = class.consts.get(name).cloned() else {
        return error(format!("Undefined constant {}::{}", class.name, name_str(name)));
    };
    if !const_visible(g, c.flags, c.declaring) {
        return error(format!(
            "Cannot access {} constant {}::{}",
            acc::visibility_word(c.flags),
            class.name,
            name_str(name)
        ));
    }
    if class.kind == ClassKind::Trait {
        return error(format!(
            "Cannot access trait constant {}::{} directly",
            class.name,
            name_str(name)
        ));
    }
    if class.enum_backing.is_some() && !class.consts_checked.get() {
        crate::enums::check_backed(g, class)?;
    }
    const_value(g, class, name, &c)
}

/// The value of constant `c` (`name`) of `class`, evaluated the first
/// time, without the visibility check.
pub(crate) fn const_value<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, c: &Rc<ClassConst>) -> VmResult<Value> {
    if let Some(v) = c.value.borrow().as_ref() {
        return Ok(v.clone());
    }
    let Some(init) = c.init else {
        // A pure enum's case has no value to compute.
        if c.is_case {
            let v = crate::enums::make_case(g, class, name, Value::Null)?;
            *c.value.borrow_mut() = Some(v.clone());
            return Ok(v);
        }
        return Ok(Value::Null);
    };
    if c.evaluating.get() {
        return error(format!(
            "Cannot declare self-referencing constant {}::{}",
            class.name,
            name_str(name)
        ));
    }
    c.evaluating.set(true);
    let r = crate::call::call_in_scope(g, init, None, c.declaring, class.id, Vec::new());
    c.evaluating.set(false);
    let v = r?;
    let v = if c.is_case {
        crate::enums::make_case(g, class, name, v)?
    } else {
        v
    };
    *c.value.borrow_mut() = Some(v.clone());
    Ok(v)
}

/// `clone $v`.
pub fn clone<G: Globals>(g: G, v: &Value) -> VmResult<Value> {
    let o = match v {
        Value::Obj(o) => o,
        Value::Ref(r) => return clone(g, &r.get()),
        Value::Closure(c) => return Ok(Value::Closure(crate::call::clone_closure(g, c))),
        _ => return error("__clone method called on non-object"),
    };
    if o.class.kind == ClassKind::Enum {
        return error(format!(
            "Trying to clone an uncloneable object of class {}",
            o.class.name
        ));
    }
    // References held only by the original become values in the copy.
    let props: Vec<Value> = o
        .props
        .borrow()
        .iter()
        .map(|v| match v {
            Value::Ref(r) if r.count() == 1 => r.get(),
            v => v.clone(),
        })
        .collect();
    // A typed property sharing a reference with the original is one more
    // holder whose type the reference must keep.
    for (v, p) in props.iter().zip(o.class.props.iter()) {
        if let (Value::Ref(r), Some(ty)) = (v, &p.ty) {
            crate::refs::add_source(r, ty, p.declaring, &p.name);
        }
    }
    let store = eg!(g).objects.clone();
    let copy = store.create(o.class.clone(), props);
    *copy.dynamic.borrow_mut() = o.dynamic.borrow().clone();
    crate::natives::spl_array::clone_state(o, &copy);
    if let Some(m) = o.class.magic.clone.clone() {
        let scope = scope(g);
        if m.flags & acc::PRIVATE != 0 && scope.as_ref().is_none_or(|s| s.id != m.declaring) {
            return error(format!(
                "Call to private {}::__clone() from {}",
                o.class.name,
                scope_words(scope.as_ref())
            ));
        }
        crate::call::call_method(g, &m, Some(copy.clone()), copy.class.id, Vec::new())?;
    }
    Ok(Value::Obj(copy))
}

/// `$v instanceof C`.
pub fn instance_of(v: &Value, class: &Class) -> bool {
    match v {
        Value::Obj(o) => o.class.is_subclass_of(class),
        Value::Ref(r) => instance_of(&r.get(), class),
        Value::Closure(_) => class.name.as_bytes().eq_ignore_ascii_case(b"Closure"),
        _ => false,
    }
}

/// Runs the destructors due, if any (before output, so that it comes in
/// PHP's order).
#[inline]
pub fn destructors_due<G: Globals>(g: G) -> VmResult<()> {
    if eg!(g).objects.has_pending() {
        run_destructors(g)?;
    }
    Ok(())
}

/// Runs the destructors that are due (objects whose last holder went).
pub fn run_destructors<G: Globals>(g: G) -> VmResult<()> {
    loop {
        let next = eg!(g).objects.take_pending();
        let Some(o) = next else { return Ok(()) };
        if let Some(m) = o.class.magic.destruct.clone() {
            crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())?;
        }
    }
}

/// Whether `m` is run by the script (`MethodBody::User`).
pub fn is_user(m: &Method) -> bool {
    matches!(m.body, MethodBody::User(_))
}

/// A constructor `new` may call from here (a private or protected one
/// only from its class's scope).
pub fn check_constructor<G: Globals>(g: G, class: &Rc<Class>, m: &Rc<Method>) -> VmResult<()> {
    if m.flags & (acc::PRIVATE | acc::PROTECTED) == 0 {
        return Ok(());
    }
    let scope = scope(g);
    let ok = match &scope {
        Some(s) if m.flags & acc::PRIVATE != 0 => s.id == m.declaring,
        Some(s) => s.is_subclass_of(class) || class.is_subclass_of(s),
        None => false,
    };
    if ok {
        return Ok(());
    }
    error(format!(
        "Call to {} {}::__construct() from {}",
        acc::visibility_word(m.flags),
        class.name,
        scope_words(scope.as_ref())
    ))
}

/// Bit 31 of a method descriptor: a native method.
pub(crate) const NATIVE_BIT: i64 = 1 << 31;

/// Writes a resolved method call into the three callee registers at
/// `regs`: `$this` (or null), the method (its function or native id in
/// the low 32 bits, its declaring class above), and the called class's
/// id — or for `__call`/`__callStatic` the list [name, called id].
///
/// # Safety
/// `regs..regs+3` must be registers of the running frame's window.
pub unsafe fn fill_callee(regs: *mut Value, r: Resolved) {
    let low = match r.method.body {
        MethodBody::User(f) => f as i64,
        MethodBody::Native(id) => NATIVE_BIT | id as i64,
    };
    let desc = ((r.method.declaring as i64) << 32) | low;
    let third = match r.magic_name {
        Some(name) => {
            let mut l = minizts_core::PhpArray::new();
            let _ = l.push(Value::Str(name));
            let _ = l.push(Value::Int(r.called.id as i64));
            Value::arr(l)
        }
        None => Value::Int(r.called.id as i64),
    };
    // SAFETY: forwarded to the caller.
    unsafe {
        *regs = match (r.this, r.closure) {
            (Some(o), _) => Value::Obj(o),
            (None, Some(c)) => Value::Closure(c),
            (None, None) => Value::Null,
        };
        *regs.add(1) = Value::Int(desc);
        *regs.add(2) = third;
    }
}

/// The callee registers' method as a `Callee` for by-reference
/// decisions (`None`: a native method or `__call`, which take values).
///
/// # Safety
/// As for [`fill_callee`].
pub unsafe fn callee_of(regs: *const Value) -> Option<crate::call::Callee> {
    // SAFETY: forwarded to the caller.
    let (desc, third) = unsafe { (&*regs.add(1), &*regs.add(2)) };
    match (desc, third) {
        (Value::Int(d), Value::Int(_)) if d & NATIVE_BIT == 0 => Some(crate::call::Callee::User {
            func: (d & 0x7fff_ffff) as u32,
            closure: None,
        }),
        _ => None,
    }
}

/// The callee in a call's prepared registers at `regs`, for by-reference
/// decisions: the method `INIT_METHOD` or `INIT_DYNAMIC_CALL` wrote there
/// (`Err`: a native method or `__call`, which take values), or the callable
/// `INIT_DYNAMIC_CALL` left in the first register (`Err`: not callable, an
/// error the call reports).
///
/// # Safety
/// As for [`fill_callee`].
pub(crate) unsafe fn prepared_callee<G: Globals>(g: G, regs: *const Value) -> Result<crate::call::Callee, ()> {
    // SAFETY: forwarded to the caller.
    if matches!(unsafe { &*regs.add(1) }, Value::Int(_)) {
        // SAFETY: as above.
        return unsafe { callee_of(regs) }.ok_or(());
    }
    // (A copy: resolving reaches EG, which holds the registers.)
    // SAFETY: as above.
    let v = unsafe { (*regs).clone() };
    crate::call::resolve_callable(g, &v).map_err(drop)
}

/// The script method in a call's prepared registers at `regs`, with the
/// classes it is declared in and called on (for messages that name it).
///
/// # Safety
/// As for [`fill_callee`].
pub unsafe fn prepared_method<G: Globals>(g: G, regs: *const Value) -> Option<crate::call::Callee> {
    // SAFETY: forwarded to the caller.
    let (this, desc, called) = unsafe { (&*regs, &*regs.add(1), &*regs.add(2)) };
    let (Value::Int(d), Value::Int(called)) = (desc, called) else {
        return None;
    };
    let body = MethodBody::User((d & 0x7fff_ffff) as u32);
    let (class, called) = eg!(g, |eg| (
        eg.classes.get((d >> 32) as u32).clone(),
        eg.classes.get(*called as u32).clone()
    ));
    let method = class.methods.values().find(|m| m.body == body)?.clone();
    Some(crate::call::Callee::Method(Rc::new(Resolved {
        method,
        this: match this {
            Value::Obj(o) => Some(o.clone()),
            _ => None,
        },
        called,
        magic_name: None,
        closure: None,
    })))
}

/// What `INIT_DYNAMIC_CALL` makes of callable `v` in the registers at
/// `regs`: a method goes into them as `INIT_METHOD` writes one; anything
/// else goes into the first, with null after it.
///
/// # Safety
/// As for [`fill_callee`].
pub unsafe fn init_dynamic_call<G: Globals>(g: G, regs: *mut Value, v: Value) -> VmResult<()> {
    match crate::call::resolve_callable(g, &v)? {
        // SAFETY: forwarded to the caller.
        crate::call::Callee::Method(r) => unsafe { fill_callee(regs, Rc::unwrap_or_clone(r)) },
        // SAFETY: as above.
        _ => unsafe {
            *regs = v;
            *regs.add(1) = Value::Null;
        },
    }
    Ok(())
}

/// A method call other than a script function run by the loop.
pub struct OtherCall {
    method: Rc<Method>,
    this: Option<Obj>,
    called: u32,
    magic_name: Option<Value>,
    /// The closure a `Closure` method is called on.
    closure: Option<Rc<minizts_core::value::Closure>>,
}

impl OtherCall {
    /// The call a resolved method makes from native code.
    pub fn of(r: &Resolved) -> OtherCall {
        OtherCall {
            method: r.method.clone(),
            this: r.this.clone(),
            called: r.called.id,
            magic_name: r.magic_name.clone().map(Value::Str),
            closure: r.closure.clone(),
        }
    }

    /// The call as a resolved method, for the general call paths (named
    /// arguments).
    pub fn into_resolved<G: Globals>(self, g: G) -> Resolved {
        Resolved {
            method: self.method,
            this: self.this,
            called: eg!(g).classes.get(self.called).clone(),
            magic_name: match self.magic_name {
                Some(Value::Str(s)) => Some(s),
                _ => None,
            },
            closure: self.closure,
        }
    }

    /// Runs it with `args`.
    pub fn call<G: Globals>(self, g: G, args: Vec<Value>) -> VmResult<Value> {
        if let (Some(c), MethodBody::Native(id)) = (&self.closure, self.method.body) {
            return crate::natives::call_on_closure(g, id, c, args);
        }
        match self.magic_name {
            Some(name) => {
                let mut list = minizts_core::PhpArray::new();
                for a in args {
                    let _ = list.push(a.deref_clone());
                }
                crate::call::call_method(g, &self.method, self.this, self.called, vec![name, Value::arr(list)])
            }
            None => crate::call::call_method(g, &self.method, self.this, self.called, args),
        }
    }
}

/// What the callee registers hold, taken out of them.
pub enum Taken {
    /// A script method: the loop pushes its frame.
    User {
        func: minizts_core::bytecode::FuncId,
        this: Option<Obj>,
        /// Scope and called scope, ids + 1.
        scope: u32,
        called: u32,
    },
    Other(OtherCall),
}

/// Takes the method call out of the callee registers at `regs`.
///
/// # Safety
/// As for [`fill_callee`].
pub unsafe fn take_callee<G: Globals>(g: G, regs: *mut Value) -> Taken {
    // SAFETY: forwarded to the caller.
    let (this, desc, third) = unsafe {
        (
            std::mem::take(&mut *regs),
            std::mem::take(&mut *regs.add(1)),
            std::mem::take(&mut *regs.add(2)),
        )
    };
    let (this, closure) = match this {
        Value::Obj(o) => (Some(o), None),
        Value::Closure(c) => (None, Some(c)),
        _ => (None, None),
    };
    let d = match desc {
        Value::Int(d) => d,
        _ => 0,
    };
    let declaring = (d >> 32) as u32;
    let low = d & 0xffff_ffff;
    match third {
        Value::Int(called) if low & NATIVE_BIT == 0 => Taken::User {
            func: low as u32,
            this,
            scope: declaring + 1,
            called: called as u32 + 1,
        },
        third => {
            let (called, magic_name) = match third {
                Value::Int(c) => (c as u32, None),
                Value::Arr(l) => {
                    let name = l.get(&minizts_core::Key::Int(0)).cloned().unwrap_or(Value::Null);
                    let called = l.get(&minizts_core::Key::Int(1)).map_or(0, |v| v.to_int() as u32);
                    (called, Some(name))
                }
                _ => (0, None),
            };
            let class = eg!(g).classes.get(declaring).clone();
            let body = if low & NATIVE_BIT != 0 {
                MethodBody::Native((low & 0xffff) as u16)
            } else {
                MethodBody::User(low as u32)
            };
            let method = class
                .methods
                .values()
                .find(|m| m.body == body)
                .cloned()
                .unwrap_or_else(|| {
                    Rc::new(Method {
                        name: PhpStr::from(&b"__call"[..]),
                        flags: acc::PUBLIC,
                        declaring,
                        body,
                    })
                });
            Taken::Other(OtherCall {
                method,
                this,
                called,
                magic_name,
                closure,
            })
        }
    }
}

/// Destructors at request end (PHP's `zend_call_destructors` and
/// `zend_objects_store_call_destructors`): those due, then every live
/// object's whose destructor has not run, in handle order.
pub fn shutdown_destructors<G: Globals>(g: G) -> VmResult<()> {
    run_destructors(g)?;
    let live = eg!(g).objects.live();
    for o in live {
        if o.has_flag(Object::DESTRUCTED) {
            continue;
        }
        o.set_flag(Object::DESTRUCTED, true);
        if let Some(m) = o.class.magic.destruct.clone() {
            crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())?;
        }
    }
    run_destructors(g)
}

/// A property as the dumping functions list it.
pub struct ShownProp {
    pub name: PhpStr,
    /// `acc` visibility bits (0 for a dynamic one).
    pub flags: u16,
    /// The declaring class's name (for private ones).
    pub class_name: PhpStr,
    /// `Undef` for an uninitialised typed property.
    pub value: Value,
    /// The declared type, as PHP prints it.
    pub type_text: String,
    /// An integer key of `__debugInfo()`'s array (printed `[0]`, not
    /// `["0"]`).
    pub int_key: bool,
}

impl ShownProp {
    /// `var_dump`'s key suffix: `:protected`, `:"A":private`.
    pub fn annotation(&self) -> String {
        if self.flags & acc::PRIVATE != 0 {
            format!(":\"{}\":private", String::from_utf8_lossy(self.class_name.as_bytes()))
        } else if self.flags & acc::PROTECTED != 0 {
            ":protected".into()
        } else {
            String::new()
        }
    }

    /// `print_r`'s: `:protected`, `:A:private`.
    pub fn print_r_annotation(&self) -> String {
        if self.flags & acc::PRIVATE != 0 {
            format!(":{}:private", String::from_utf8_lossy(self.class_name.as_bytes()))
        } else if self.flags & acc::PROTECTED != 0 {
            ":protected".into()
        } else {
            String::new()
        }
    }
}

/// Every property of `o` in PHP's order (declared slots, then dynamic
/// ones), unset untyped ones left out, for `var_dump` and its siblings.
pub fn visible_props<G: Globals>(g: G, o: &Obj) -> Vec<ShownProp> {
    let mut out = Vec::new();
    let props = o.props.borrow();
    for (i, p) in o.class.props.iter().enumerate() {
        // A reference held only here shows as its value.
        let v = match &props[i] {
            Value::Ref(r) if r.count() == 1 => r.get(),
            v => v.clone(),
        };
        if matches!(v, Value::Undef) && p.ty.is_none() {
            continue;
        }
        let class_name = eg!(g).classes.get(p.declaring).name.clone();
        out.push(ShownProp {
            name: p.name.clone(),
            flags: p.flags,
            class_name,
            value: v,
            type_text: p.ty.as_ref().map_or_else(String::new, |t| t.to_php_string()),
            int_key: false,
        });
    }
    drop(props);
    if let Some(d) = o.dynamic.borrow().as_ref() {
        for (k, v) in d.iter() {
            let name = match k {
                minizts_core::KeyRef::Int(n) => PhpStr::from(n.to_string().as_bytes()),
                minizts_core::KeyRef::Str(s) => s.clone(),
            };
            out.push(ShownProp {
                name,
                flags: acc::PUBLIC,
                class_name: o.class.name.clone(),
                value: match v {
                    Value::Ref(r) if r.count() == 1 => r.get(),
                    v => v.clone(),
                },
                type_text: String::new(),
                int_key: false,
            });
        }
    }
    out
}

/// What `var_dump` and `print_r` show of `o` (PHP's
/// `get_debug_info`): the array `__debugInfo()` returns, its mangled
/// keys (`"\0A\0p"`) shown as private or protected properties, when the
/// class has the method; otherwise its properties (and an SPL array's
/// storage).
pub fn debug_props<G: Globals>(g: G, o: &Obj) -> VmResult<Vec<ShownProp>> {
    let Some(m) = o.class.magic.debug_info.clone() else {
        let mut props = visible_props(g, o);
        // An `ArrayObject`'s or `ArrayIterator`'s array, after the
        // properties.
        props.extend(crate::natives::spl_array::storage_of(o).map(|v| ShownProp {
            name: PhpStr::from(&b"storage"[..]),
            flags: acc::PRIVATE,
            class_name: crate::natives::spl_array::base_name(&o.class),
            value: v,
            type_text: String::new(),
            int_key: false,
        }));
        return Ok(props);
    };
    let info = match crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())?.deref_clone() {
        Value::Arr(a) => a,
        Value::Null => return Ok(Vec::new()),
        _ => return crate::error::fatal("__debuginfo() must return an array"),
    };
    let mut out = Vec::with_capacity(info.len());
    for (k, v) in info.iter() {
        let (name, flags, class_name, int_key) = match k {
            minizts_core::KeyRef::Int(n) => (
                PhpStr::from(n.to_string().as_bytes()),
                acc::PUBLIC,
                PhpStr::empty(),
                true,
            ),
            minizts_core::KeyRef::Str(s) => match s.as_bytes() {
                [0, rest @ ..] => match rest.iter().position(|&b| b == 0) {
                    Some(i) if &rest[..i] == b"*" => {
                        (PhpStr::from(&rest[i + 1..]), acc::PROTECTED, PhpStr::empty(), false)
                    }
                    Some(i) => (
                        PhpStr::from(&rest[i + 1..]),
                        acc::PRIVATE,
                        PhpStr::from(&rest[..i]),
                        false,
                    ),
                    None => (s.clone(), acc::PUBLIC, PhpStr::empty(), false),
                },
                _ => (s.clone(), acc::PUBLIC, PhpStr::empty(), false),
            },
        };
        out.push(ShownProp {
            name,
            flags,
            class_name,
            value: match v {
                Value::Ref(r) if r.count() == 1 => r.get(),
                v => v.clone(),
            },
            type_text: String::new(),
            int_key,
        });
    }
    Ok(out)
}

/// The properties code of the current scope sees, as an array
/// (`get_object_vars`, `(array)` casts without mangling, `foreach`).
pub fn props_array<G: Globals>(g: G, o: &Obj, scope: Option<&Rc<Class>>) -> minizts_core::PhpArray {
    let mut out = minizts_core::PhpArray::new();
    let props = o.props.borrow();
    for (i, p) in o.class.props.iter().enumerate() {
        if matches!(props[i], Value::Undef) {
            continue;
        }
        let visible = if p.flags & acc::PRIVATE != 0 {
            scope.is_some_and(|s| s.id == p.declaring)
        } else if p.flags & acc::PROTECTED != 0 {
            let declaring = eg!(g).classes.get(p.declaring).clone();
            scope.is_some_and(|s| protected_visible(&declaring, s))
        } else {
            true
        };
        if visible {
            out.insert(minizts_core::Key::from_php_str(p.name.clone()), props[i].deref_clone());
        }
    }
    drop(props);
    if let Some(d) = o.dynamic.borrow().as_ref() {
        for (k, v) in d.iter() {
            out.insert(k.to_key(), v.deref_clone());
        }
    }
    out
}

/// Whether `o` implements the interface named `name`.
pub fn implements(o: &Obj, name: &[u8]) -> bool {
    o.class
        .interfaces
        .iter()
        .any(|i| i.name.as_bytes().eq_ignore_ascii_case(name))
}

fn array_access_method<G: Globals>(g: G, o: &Obj, lc: &[u8]) -> VmResult<Rc<Method>> {
    let _ = g;
    if !implements(o, b"ArrayAccess") {
        return error(format!("Cannot use object of type {} as array", o.class.name));
    }
    match o.class.method(lc) {
        Some(m) => Ok(m.clone()),
        None => error(format!("Cannot use object of type {} as array", o.class.name)),
    }
}

/// `$obj[$key]` on an `ArrayAccess` (`offsetGet`; inside `isset`/`??`,
/// `offsetExists` first).
pub fn offset_get<G: Globals>(g: G, o: &Obj, key: &Value, quiet: bool) -> VmResult<Value> {
    // The method may drop the caller's hold on the object (and the key):
    // this call keeps its own.
    let (o, key) = (&o.clone(), &key.deref_clone());
    if quiet {
        if !implements(o, b"ArrayAccess") {
            return Ok(Value::Null);
        }
        let exists = array_access_method(g, o, b"offsetexists")?;
        if !crate::call::call_method(g, &exists, Some(o.clone()), o.class.id, vec![key.deref_clone()])?.to_bool() {
            return Ok(Value::Null);
        }
    }
    let m = array_access_method(g, o, b"offsetget")?;
    let k = if matches!(key, Value::Undef) {
        Value::Null
    } else {
        key.deref_clone()
    };
    crate::call::call_method(g, &m, Some(o.clone()), o.class.id, vec![k])
}

/// `$obj[$key] = $v` (`offsetSet`; `[]` passes a null key).
pub fn offset_set<G: Globals>(g: G, o: &Obj, key: &Value, v: Value) -> VmResult<()> {
    // The method may drop the caller's hold on the object (and the key):
    // this call keeps its own.
    let (o, key) = (&o.clone(), &key.deref_clone());
    let m = array_access_method(g, o, b"offsetset")?;
    let k = if matches!(key, Value::Undef) {
        Value::Null
    } else {
        key.deref_clone()
    };
    crate::call::call_method(g, &m, Some(o.clone()), o.class.id, vec![k, v]).map(drop)
}

/// `isset($obj[$key])` (`offsetExists`).
pub fn offset_exists<G: Globals>(g: G, o: &Obj, key: &Value) -> VmResult<bool> {
    // The method may drop the caller's hold on the object (and the key):
    // this call keeps its own.
    let (o, key) = (&o.clone(), &key.deref_clone());
    if !implements(o, b"ArrayAccess") {
        return error(format!("Cannot use object of type {} as array", o.class.name));
    }
    let m = array_access_method(g, o, b"offsetexists")?;
    Ok(crate::call::call_method(g, &m, Some(o.clone()), o.class.id, vec![key.deref_clone()])?.to_bool())
}

/// `unset($obj[$key])` (`offsetUnset`).
pub fn offset_unset<G: Globals>(g: G, o: &Obj, key: &Value) -> VmResult<()> {
    // The method may drop the caller's hold on the object (and the key):
    // this call keeps its own.
    let (o, key) = (&o.clone(), &key.deref_clone());
    let m = array_access_method(g, o, b"offsetunset")?;
    crate::call::call_method(g, &m, Some(o.clone()), o.class.id, vec![key.deref_clone()]).map(drop)
}

/// `(array) $obj`: every property under PHP's mangled name
/// (`"\0Class\0name"` for a private one, `"\0*\0name"` for a protected
/// one).
pub fn mangled_props<G: Globals>(g: G, o: &Obj) -> minizts_core::PhpArray {
    let mut out = minizts_core::PhpArray::new();
    for p in visible_props(g, o) {
        if matches!(p.value, Value::Undef) {
            continue;
        }
        let mut name = Vec::new();
        if p.flags & acc::PRIVATE != 0 {
            name.push(0);
            name.extend_from_slice(p.class_name.as_bytes());
            name.push(0);
        } else if p.flags & acc::PROTECTED != 0 {
            name.extend_from_slice(b"\0*\0");
        }
        name.extend_from_slice(p.name.as_bytes());
        out.insert(minizts_core::Key::from_bytes(&name), p.value);
    }
    out
}

/// `foreach` over an object: for an `Iterator` (reached through
/// `getIterator()` of `IteratorAggregate`s) it is rewound and the loop's
/// state is `[iterator, steps taken]`; for any other object a snapshot
/// of its visible properties is iterated as an array. `None`: nothing to
/// iterate.
pub fn iteration_start<G: Globals>(g: G, o: &Obj) -> VmResult<Option<Value>> {
    let mut o = o.clone();
    let mut guard = 0;
    // PHP iterates an object through an iterator object of its own,
    // which takes an object handle while the loop runs; `ArrayObject`'s
    // (without a `getIterator()` of the script's) is the iterator it
    // makes.
    let mut wrapped = true;
    while implements(&o, b"IteratorAggregate") {
        let m = method_or_error(&o, b"getiterator")?;
        wrapped = is_user(&m);
        match crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())? {
            Value::Obj(inner) if implements(&inner, b"Traversable") => o = inner,
            _ => {
                return crate::error::throw(
                    "Exception",
                    format!(
                        "Objects returned by {}::getIterator() must be traversable or implement interface Iterator",
                        o.class.name
                    ),
                )
            }
        }
        guard += 1;
        if guard > 1000 {
            return error("minizts: getIterator() chain too long");
        }
    }
    if implements(&o, b"Iterator") {
        let handle_holder = match wrapped {
            true => {
                let class = crate::class::find(g, b"stdClass")?;
                let store = eg!(g).objects.clone();
                Some(store.create(class, Vec::new()))
            }
            false => None,
        };
        let rewind = method_or_error(&o, b"rewind")?;
        crate::call::call_method(g, &rewind, Some(o.clone()), o.class.id, Vec::new())?;
        let mut state = minizts_core::PhpArray::new();
        let _ = state.push(Value::Obj(o));
        let _ = state.push(Value::Int(0));
        if let Some(h) = handle_holder {
            let _ = state.push(Value::Obj(h));
        }
        return Ok(Some(Value::arr(state)));
    }
    let props = props_array(g, &o, scope(g).as_ref());
    if props.is_empty() {
        return Ok(None);
    }
    Ok(Some(Value::IterVal(Rc::new(props), 0)))
}

fn method_or_error(o: &Obj, lc: &[u8]) -> VmResult<Rc<Method>> {
    match o.class.method(lc) {
        Some(m) => Ok(m.clone()),
        None => error(format!(
            "Call to undefined method {}::{}()",
            o.class.name,
            String::from_utf8_lossy(lc)
        )),
    }
}

/// The next element of an `Iterator` loop whose state is `state` (see
/// [`iteration_start`]): `next()` unless it is the first, then `valid()`,
/// `current()` and, when the loop wants it, `key()`.
pub fn iteration_next<G: Globals>(g: G, state: &mut Value, want_key: bool) -> VmResult<Option<(Value, Value)>> {
    let Some(s) = state.array_mut() else { return Ok(None) };
    let (Some(Value::Obj(o)), Some(Value::Int(steps))) = (
        s.get(&minizts_core::Key::Int(0)).cloned(),
        s.get(&minizts_core::Key::Int(1)).cloned(),
    ) else {
        return Ok(None);
    };
    s.insert(minizts_core::Key::Int(1), Value::Int(steps + 1));
    let call = |name: &[u8]| -> VmResult<Value> {
        let m = method_or_error(&o, name)?;
        crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())
    };
    if steps > 0 {
        call(b"next")?;
    }
    if !call(b"valid")?.to_bool() {
        return Ok(None);
    }
    let v = call(b"current")?;
    let k = if want_key { call(b"key")? } else { Value::Null };
    Ok(Some((k, v)))
}
