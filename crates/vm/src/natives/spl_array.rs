//! SPL's `ArrayIterator` and `ArrayObject` (ext/spl/spl_array.c): an
//! object holding an array (its "storage"), reached as an array
//! (`ArrayAccess`, `Countable`) and iterated: an `ArrayIterator` is its
//! own `Iterator`, an `ArrayObject` hands out one over its storage
//! (`IteratorAggregate`). The storage lives in the object's native state;
//! `var_dump` shows it as PHP's debug info does (a private `storage`).
//!
//! Differences from PHP: an object given as the storage is copied into
//! an array of its visible properties (PHP works on the object's own
//! property table), and an `ArrayObject`'s iterator iterates a copy of
//! the array as it was when `getIterator()` was called.

use minizts_core::object::{Class, NativeKind};
use minizts_core::{Obj, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::call::builtin_arity;
use crate::error::{error, throw, type_error, warning, VmResult};

/// The native state of an `ArrayIterator` or `ArrayObject`.
#[derive(Default)]
pub struct SplArray {
    /// The array (always a `Value::Arr`, empty by default).
    pub storage: PhpArray,
    /// The iterator's position (`ArrayIterator`): a slot of the array.
    pub pos: usize,
    /// `getFlags()`/`setFlags()` (`STD_PROP_LIST`, `ARRAY_AS_PROPS`).
    pub flags: i64,
    /// `ArrayObject`'s iterator class, when not `ArrayIterator`.
    pub iterator_class: Option<PhpStr>,
}

/// Runs `f` on the native state of `o`, made empty first if it has none
/// (a subclass whose constructor did not call the parent's). `f` must not
/// call back into scripts.
pub fn with_state<R>(o: &Obj, f: impl FnOnce(&mut SplArray) -> R) -> R {
    let mut native = o.native.borrow_mut();
    if !native.as_ref().is_some_and(|b| b.is::<SplArray>()) {
        *native = Some(Box::<SplArray>::default());
    }
    match native.as_mut().and_then(|b| b.downcast_mut::<SplArray>()) {
        Some(state) => f(state),
        None => f(&mut SplArray::default()),
    }
}

/// The builtin class (`ArrayIterator` or `ArrayObject`) `class` derives
/// from: the one whose private `storage` PHP's debug info shows.
pub fn base_name(class: &Class) -> PhpStr {
    let mut c = class;
    loop {
        if crate::class::is_builtin(c) {
            return c.name.clone();
        }
        match &c.parent {
            Some(p) => c = p,
            None => return c.name.clone(),
        }
    }
}

/// `clone`: the copy gets the same array (and flags), its iterator at
/// the start.
pub fn clone_state(from: &Obj, to: &Obj) {
    if from.class.native != Some(NativeKind::ArrayIterator) {
        return;
    }
    let (storage, flags, iterator_class) = with_state(from, |s| (s.storage.clone(), s.flags, s.iterator_class.clone()));
    with_state(to, |s| {
        s.storage = storage;
        s.flags = flags;
        s.iterator_class = iterator_class;
    });
}

/// The storage of `o` as a value, if it is one of these objects.
pub fn storage_of(o: &Obj) -> Option<Value> {
    (o.class.native == Some(NativeKind::ArrayIterator)).then(|| with_state(o, |s| Value::arr(s.storage.clone())))
}

/// An array or object argument made the storage.
fn storage_from<G: Globals>(g: G, class: &str, method: &str, v: &Value) -> VmResult<PhpArray> {
    match v.deref_clone() {
        Value::Arr(a) => Ok((*a).clone()),
        Value::Obj(o) if o.class.native == Some(NativeKind::ArrayIterator) => Ok(with_state(&o, |s| s.storage.clone())),
        Value::Obj(o) => Ok(crate::objects::props_array(g, &o, None)),
        other => type_error(format!(
            "{class}::{method}(): Argument #1 ($array) must be of type array, {} given",
            other.type_name()
        )),
    }
}

/// Calls method `method` of `class` on `this`.
pub(super) fn call<G: Globals>(
    g: G,
    class: &str,
    method: &str,
    this: Option<&Obj>,
    args: Vec<Value>,
) -> VmResult<Value> {
    let Some(o) = this else {
        return error(format!(
            "Non-static method {class}::{method}() cannot be called statically"
        ));
    };
    let arity = |min: usize, max: usize| -> VmResult<()> {
        if args.len() < min || args.len() > max {
            return builtin_arity(&format!("{class}::{method}"), min, Some(max), args.len());
        }
        Ok(())
    };
    let arg = |i: usize| args.get(i).map_or(Value::Null, Value::deref_clone);
    let key_of = |v: &Value| crate::dim::to_key(g, v);
    Ok(match method {
        "__construct" => {
            arity(0, if class == "ArrayObject" { 3 } else { 2 })?;
            let storage = match args.first() {
                Some(v) => storage_from(g, class, method, v)?,
                None => PhpArray::new(),
            };
            let flags = match args.get(1) {
                Some(v) => v.deref_clone().to_int(),
                None => 0,
            };
            let iterator_class = match args.get(2) {
                Some(v) => Some(iterator_class(g, class, &v.deref_clone())?),
                None => None,
            };
            with_state(o, |s| {
                s.storage = storage;
                s.flags = flags;
                s.pos = 0;
                s.iterator_class = iterator_class;
            });
            Value::Null
        }
        "offsetExists" => {
            arity(1, 1)?;
            let k = key_of(&arg(0))?;
            Value::Bool(with_state(o, |s| s.storage.contains_key(&k)))
        }
        "offsetGet" => {
            arity(1, 1)?;
            let k = key_of(&arg(0))?;
            match with_state(o, |s| s.storage.get(&k).map(Value::deref_clone)) {
                Some(v) => v,
                None => {
                    match &k {
                        minizts_core::Key::Int(n) => warning(g, &format!("Undefined array key {n}")),
                        minizts_core::Key::Str(s) => {
                            warning(g, &format!("Undefined array key \"{}\"", String::from_utf8_lossy(s)))
                        }
                    }
                    Value::Null
                }
            }
        }
        "offsetSet" => {
            arity(2, 2)?;
            let (k, v) = (arg(0), arg(1));
            if k.is_null() {
                return append(o, v);
            }
            let k = key_of(&k)?;
            with_state(o, |s| s.storage.insert(k, v));
            Value::Null
        }
        "offsetUnset" => {
            arity(1, 1)?;
            let k = key_of(&arg(0))?;
            with_state(o, |s| s.storage.remove(&k));
            Value::Null
        }
        "append" => {
            arity(1, 1)?;
            append(o, arg(0))?
        }
        "getArrayCopy" => {
            arity(0, 0)?;
            Value::arr(with_state(o, |s| s.storage.clone()))
        }
        "count" => {
            arity(0, 0)?;
            Value::Int(with_state(o, |s| s.storage.len() as i64))
        }
        "getFlags" => {
            arity(0, 0)?;
            Value::Int(with_state(o, |s| s.flags))
        }
        "setFlags" => {
            arity(1, 1)?;
            let flags = arg(0).to_int();
            with_state(o, |s| s.flags = flags);
            Value::Null
        }
        "asort" | "ksort" | "natsort" | "natcasesort" | "uasort" | "uksort" => sort(g, o, method, args)?,
        "rewind" => {
            arity(0, 0)?;
            with_state(o, |s| s.pos = 0);
            Value::Null
        }
        "valid" => {
            arity(0, 0)?;
            Value::Bool(with_state(o, |s| s.storage.at_or_after(s.pos).is_some()))
        }
        "current" => {
            arity(0, 0)?;
            with_state(o, |s| {
                s.storage
                    .at_or_after(s.pos)
                    .map_or(Value::Null, |(_, _, v)| v.deref_clone())
            })
        }
        "key" => {
            arity(0, 0)?;
            with_state(o, |s| {
                s.storage
                    .at_or_after(s.pos)
                    .map_or(Value::Null, |(_, k, _)| k.to_value())
            })
        }
        "next" => {
            arity(0, 0)?;
            with_state(o, |s| {
                if let Some((i, _, _)) = s.storage.at_or_after(s.pos) {
                    s.pos = i + 1;
                }
            });
            Value::Null
        }
        "seek" => {
            arity(1, 1)?;
            let n = arg(0).to_int();
            let found = with_state(o, |s| {
                let mut pos = 0;
                let mut left = n;
                while let Some((i, _, _)) = s.storage.at_or_after(pos) {
                    if left == 0 {
                        s.pos = i;
                        return true;
                    }
                    left -= 1;
                    pos = i + 1;
                }
                false
            });
            if n < 0 || !found {
                return throw("OutOfBoundsException", format!("Seek position {n} is out of range"));
            }
            Value::Null
        }
        "getIterator" => {
            arity(0, 0)?;
            let (storage, flags, class_name) =
                with_state(o, |s| (s.storage.clone(), s.flags, s.iterator_class.clone()));
            let class_name = class_name.unwrap_or_else(|| PhpStr::from(&b"ArrayIterator"[..]));
            let it_class = crate::class::find(g, class_name.as_bytes())?;
            let it = crate::objects::instantiate(g, &it_class)?;
            with_state(&it, |s| {
                s.storage = storage;
                s.flags = flags;
            });
            Value::Obj(it)
        }
        "exchangeArray" => {
            arity(1, 1)?;
            let new = storage_from(g, class, method, &arg(0))?;
            Value::arr(with_state(o, |s| {
                s.pos = 0;
                std::mem::replace(&mut s.storage, new)
            }))
        }
        "setIteratorClass" => {
            arity(1, 1)?;
            let name = iterator_class(g, class, &arg(0))?;
            with_state(o, |s| s.iterator_class = Some(name));
            Value::Null
        }
        "getIteratorClass" => {
            arity(0, 0)?;
            Value::Str(
                with_state(o, |s| s.iterator_class.clone()).unwrap_or_else(|| PhpStr::from(&b"ArrayIterator"[..])),
            )
        }
        _ => return error(format!("minizts: native method {class}::{method} is missing")),
    })
}

fn append(o: &Obj, v: Value) -> VmResult<Value> {
    if with_state(o, |s| s.storage.push(v)).is_err() {
        return error("Cannot add element to the array as the next element is already occupied");
    }
    Ok(Value::Null)
}

/// An iterator class argument: the name of `ArrayIterator` or a class
/// derived from it.
fn iterator_class<G: Globals>(g: G, class: &str, v: &Value) -> VmResult<PhpStr> {
    let name = crate::ops::to_str(g, v)?;
    let found = crate::class::load(g, name.as_bytes())?;
    let base = crate::class::find(g, b"ArrayIterator")?;
    match found {
        Some(c) if c.is_subclass_of(&base) => Ok(c.name.clone()),
        _ => type_error(format!(
            "{class}::setIteratorClass(): Argument #1 ($iteratorClass) must be a class name derived from \
             ArrayIterator, {} given",
            String::from_utf8_lossy(&name)
        )),
    }
}

/// The sorts: the array function of the same name on the storage (taken
/// out while the function runs, as a callback may reach the object).
fn sort<G: Globals>(g: G, o: &Obj, method: &str, args: Vec<Value>) -> VmResult<Value> {
    let storage = with_state(o, |s| std::mem::take(&mut s.storage));
    let r = crate::gc::new_ref(g, Value::arr(storage));
    let mut call_args = vec![Value::Ref(r.clone())];
    call_args.extend(args.into_iter().map(|v| v.deref_clone()));
    let result = crate::call::call_callable(g, &Value::str(method), call_args);
    let sorted = match r.get() {
        Value::Arr(a) => (*a).clone(),
        _ => PhpArray::new(),
    };
    with_state(o, |s| s.storage = sorted);
    result
}
