//! Array and string dimensions: `$a[k]` reads, and writes through chains
//! of keys (`$a[1]['x'][] = v`), with PHP's key conversion, auto-created
//! arrays, copy-on-write, string offsets, references and warnings.
//!
//! A write walks the chain recursively so that a reference met on the way
//! is borrowed for exactly as long as the walk below it: no pointer into an
//! array outlives the instruction.

use std::rc::Rc;

use minizts_core::array::NextElementOccupied;
use minizts_core::bytecode::{BinOp, IncDec};
use minizts_core::numfmt;
use minizts_core::{Key, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::Globals;

use crate::error::{deprecated, error, fatal, type_error, warning, VmResult};
use crate::ops;

/// How a read treats a missing element.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// `$a[k]`: warns.
    Normal,
    /// Inside `isset`, `empty`, `??`: silent.
    Quiet,
    /// `list()`: warns for a missing key of an array, silent otherwise
    /// (a string gives nothing).
    List,
}

/// PHP's conversion of a value used as an array key.
#[inline]
pub fn to_key<G: Globals>(g: G, v: &Value) -> VmResult<Key> {
    Ok(match v {
        Value::Int(n) => Key::Int(*n),
        Value::Str(s) => Key::from_php_str(s.clone()),
        Value::Bool(b) => Key::Int(*b as i64),
        Value::Null | Value::Undef => Key::Str(PhpStr::empty()),
        Value::Float(f) => Key::Int(ops::float_to_int_checked(g, *f)),
        Value::Ref(r) => return to_key(g, &r.borrow()),
        _ => return type_error("Illegal offset type"),
    })
}

fn undefined_key<G: Globals>(g: G, key: &Key) {
    match key {
        Key::Int(n) => warning(g, &format!("Undefined array key {n}")),
        Key::Str(s) => warning(g, &format!("Undefined array key \"{}\"", String::from_utf8_lossy(s))),
    }
}

/// `base[key]`.
pub fn fetch<G: Globals>(g: G, base: &Value, key: &Value, mode: ReadMode) -> VmResult<Value> {
    match base {
        Value::Arr(a) => {
            let k = match to_key(g, key) {
                Ok(k) => k,
                Err(_) if mode == ReadMode::Quiet => return Ok(Value::Null),
                Err(e) => return Err(e),
            };
            match a.get(&k) {
                Some(v) => Ok(v.deref_clone()),
                None => {
                    if mode != ReadMode::Quiet {
                        undefined_key(g, &k);
                    }
                    Ok(Value::Null)
                }
            }
        }
        // `list()` takes nothing from a string (PHP's
        // `zend_fetch_dimension_address_LIST_r`).
        Value::Str(_) if mode == ReadMode::List => Ok(Value::Null),
        Value::Str(s) => string_offset(g, s, key, mode),
        Value::Ref(r) => fetch(g, &r.borrow(), key, mode),
        Value::Undef | Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
            if mode == ReadMode::Normal {
                warning(
                    g,
                    &format!("Trying to access array offset on value of type {}", base.type_name()),
                );
            }
            Ok(Value::Null)
        }
        Value::Closure(_) => {
            if mode == ReadMode::Quiet {
                return Ok(Value::Null);
            }
            error("Cannot use object of type Closure as array")
        }
        Value::Obj(o) => crate::objects::offset_get(g, o, key, mode == ReadMode::Quiet),
        Value::IterVal(..) | Value::IterRef(_) => Ok(Value::Null),
    }
}

/// The offset a string is read or written at, or why not.
fn string_index<G: Globals>(g: G, key: &Value, quiet: bool) -> VmResult<Option<i64>> {
    Ok(Some(match key {
        Value::Int(n) => *n,
        Value::Str(k) => match numfmt::parse_numeric(k) {
            Some((numfmt::Number::Int(n), true)) => n,
            Some((numfmt::Number::Int(n), false)) if !quiet => {
                warning(g, &format!("Illegal string offset \"{}\"", String::from_utf8_lossy(k)));
                n
            }
            _ if quiet => return Ok(None),
            _ => {
                return type_error(format!(
                    "Cannot access offset of type {} on string",
                    if numfmt::parse_numeric(k).is_some() {
                        "float"
                    } else {
                        "string"
                    }
                ))
            }
        },
        Value::Float(f) => {
            if !quiet {
                warning(g, "String offset cast occurred");
            }
            numfmt::float_to_int(*f)
        }
        Value::Bool(b) => {
            if !quiet {
                warning(g, "String offset cast occurred");
            }
            *b as i64
        }
        Value::Null | Value::Undef => {
            if !quiet {
                warning(g, "String offset cast occurred");
            }
            0
        }
        Value::Ref(r) => return string_index(g, &r.borrow(), quiet),
        _ => {
            if quiet {
                return Ok(None);
            }
            return type_error(format!("Cannot access offset of type {} on string", key.type_name()));
        }
    }))
}

fn string_offset<G: Globals>(g: G, s: &PhpStr, key: &Value, mode: ReadMode) -> VmResult<Value> {
    let quiet = mode == ReadMode::Quiet;
    let Some(n) = string_index(g, key, quiet)? else {
        return Ok(Value::Null);
    };
    let len = s.len() as i64;
    let i = if n < 0 { len + n } else { n };
    if i < 0 || i >= len {
        if quiet {
            return Ok(Value::Null);
        }
        warning(g, &format!("Uninitialized string offset {n}"));
        return Ok(Value::str(""));
    }
    Ok(Value::Str(PhpStr::one_byte(s[i as usize])))
}

/// Turns an empty or null container into an array (PHP's auto-creation).
fn vivify<G: Globals>(g: G, container: &mut Value) -> VmResult<()> {
    match container {
        Value::Undef | Value::Null => *container = Value::arr(PhpArray::new()),
        Value::Bool(false) => {
            deprecated(g, "Automatic conversion of false to array is deprecated");
            *container = Value::arr(PhpArray::new());
        }
        _ => {}
    }
    Ok(())
}

fn occupied<T>(_: NextElementOccupied) -> VmResult<T> {
    error("Cannot add element to the array as the next element is already occupied")
}

fn not_an_array<T>(container: &Value) -> VmResult<T> {
    match container {
        Value::Closure(_) => error("Cannot use object of type Closure as array"),
        Value::Obj(o) => error(format!("Cannot use object of type {} as array", o.class.name)),
        _ => error("Cannot use a scalar value as an array"),
    }
}

/// The element `key` designates in an array container, created (as null)
/// if missing; `Undef` as key appends. `rw` warns for a missing key, as
/// read-modify-write operations do.
fn element<'v, G: Globals>(g: G, container: &'v mut Value, key: &Value, rw: bool) -> VmResult<&'v mut Value> {
    vivify(g, container)?;
    match container {
        Value::Arr(a) => {
            let arr = Rc::make_mut(a);
            if let Value::Undef = key {
                return arr.push_slot(Value::Null).or_else(occupied);
            }
            let k = to_key(g, key)?;
            if rw && arr.get(&k).is_none() {
                undefined_key(g, &k);
            }
            Ok(arr.entry(k).0)
        }
        Value::Str(_) => wrong_string_offset(g, key, false, "Cannot use string offset as an array"),
        other => not_an_array(other),
    }
}

/// A string where a write needs an element it can hold on to (PHP's
/// `zend_fetch_dimension_address` on a string): `[]` is refused first,
/// then the offset is checked as an offset (its warnings, or the
/// `TypeError` of an offset that is no number), then `message`, which
/// says what was attempted. `unset` checks the offset without warning.
fn wrong_string_offset<G: Globals, T>(g: G, key: &Value, unset: bool, message: &str) -> VmResult<T> {
    match key {
        Value::Undef => return error("[] operator not supported for strings"),
        Value::Str(k) if unset => {
            if !matches!(numfmt::parse_numeric(k), Some((numfmt::Number::Int(_), _))) {
                return type_error("Cannot access offset of type string on string");
            }
        }
        _ => {
            string_index(g, key, false)?;
        }
    }
    error(message)
}

/// Walks `keys[..n-1]` from `slot` (creating arrays), then runs `last` on
/// the container of the final key.
fn walk<G: Globals, R>(
    g: G,
    slot: &mut Value,
    keys: &[Value],
    rw: bool,
    last: &mut dyn FnMut(&mut Value, &Value) -> VmResult<R>,
) -> VmResult<R> {
    if let Value::Ref(r) = slot {
        let r = r.clone();
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        return walk(g, &mut inner, keys, rw, last);
    }
    match keys {
        [] => unreachable!("a dimension write has at least one key"),
        [key] => last(slot, key),
        [key, rest @ ..] => {
            if let Value::Obj(o) = &*slot {
                let o = o.clone();
                let mut child = overloaded_element(g, &o, key)?;
                return walk(g, &mut child, rest, rw, last);
            }
            let child = element(g, slot, key, rw)?;
            walk(g, child, rest, rw, last)
        }
    }
}

/// `$obj[key]` where a write goes on below it (PHP's `read_dimension`
/// for writing): `offsetGet`'s result, written through when it is a
/// reference or an object; anything else is a copy, with PHP's notice.
fn overloaded_element<G: Globals>(g: G, o: &minizts_core::Obj, key: &Value) -> VmResult<Value> {
    let v = crate::objects::offset_get(g, o, key, false)?;
    if !matches!(v, Value::Ref(_) | Value::Obj(_) | Value::Closure(_)) {
        crate::error::notice(
            g,
            &format!(
                "Indirect modification of overloaded element of {} has no effect",
                crate::objects::message_name(&o.class.name)
            ),
        );
    }
    Ok(v)
}

/// `slot[k1]…[kn] = v`. When the last container is a string, returns
/// what the assignment gives as its value: the byte written, as a string
/// (or null where nothing was written).
pub fn assign<G: Globals>(g: G, slot: &mut Value, keys: &[Value], v: Value) -> VmResult<Option<Value>> {
    let v = match assign_plain(slot, keys, v) {
        Ok(done) => return done,
        Err(v) => v,
    };
    // `$obj[$k] = $v` on an `ArrayAccess`: its `offsetSet`, called with
    // no borrow of the variable held.
    let obj = match &*slot {
        Value::Obj(o) => Some(o.clone()),
        Value::Ref(r) => match r.try_borrow().as_deref() {
            Ok(Value::Obj(o)) => Some(o.clone()),
            _ => None,
        },
        _ => None,
    };
    if let (Some(o), [key]) = (obj, keys) {
        crate::objects::offset_set(g, &o, key, v)?;
        return Ok(None);
    }
    let mut pending = None;
    let r = assign_in(g, slot, keys, v, &mut pending)?;
    // An element that is a reference to a container on the way (`$a[1]`
    // with `$a[1] = &$a`) is written once the walk has let go of it: the
    // old value, that container, is replaced (PHP frees it the same way).
    if let Some((r, v)) = pending {
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        let old = std::mem::replace(&mut *inner, v);
        drop(inner);
        drop(old);
    }
    Ok(r)
}

/// The common case of an assignment, before any walk: one key, an
/// unshared array, an int or string key, an element that is not a
/// reference. `Err` gives the value back when it is not that case.
#[inline(always)]
fn assign_plain(slot: &mut Value, keys: &[Value], v: Value) -> Result<VmResult<Option<Value>>, Value> {
    if let (Value::Arr(a), [key]) = (&mut *slot, keys) {
        match key {
            Value::Int(n) => {
                let (elem, _) = Rc::make_mut(a).entry(Key::Int(*n));
                if !matches!(elem, Value::Ref(_)) {
                    elem.overwrite(v);
                    return Ok(Ok(None));
                }
            }
            Value::Str(k) => {
                let (elem, _) = Rc::make_mut(a).entry(Key::from_php_str(k.clone()));
                if !matches!(elem, Value::Ref(_)) {
                    elem.overwrite(v);
                    return Ok(Ok(None));
                }
            }
            Value::Undef => return Ok(Rc::make_mut(a).push(v).or_else(occupied).map(|()| None)),
            _ => {}
        }
    }
    Err(v)
}

fn assign_in<G: Globals>(
    g: G,
    slot: &mut Value,
    keys: &[Value],
    v: Value,
    pending: &mut Option<(PhpRef, Value)>,
) -> VmResult<Option<Value>> {
    if let Value::Ref(r) = slot {
        let r = r.clone();
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        return assign_in(g, &mut inner, keys, v, pending);
    }
    let v = match assign_plain(slot, keys, v) {
        Ok(done) => return done,
        Err(v) => v,
    };
    let mut v = Some(v);
    walk(g, slot, keys, false, &mut |container, key| {
        let v = v.take().expect("assigned once");
        if let Value::Obj(o) = container {
            let o = o.clone();
            crate::objects::offset_set(g, &o, key, v)?;
            return Ok(None);
        }
        if let Value::Str(s) = container {
            let written = assign_string_offset(g, s, key, &v)?;
            return Ok(Some(written.map_or(Value::Null, |c| Value::str(&[c][..]))));
        }
        let elem = element(g, container, key, false)?;
        match elem {
            Value::Ref(r) => match r.try_borrow_mut() {
                Ok(mut inner) => *inner = v,
                Err(_) => *pending = Some((r.clone(), v)),
            },
            _ => *elem = v,
        }
        Ok(None)
    })
}

/// `slot[k1]…[kn] = &r` (binds the element to reference `r`).
pub fn assign_ref<G: Globals>(g: G, slot: &mut Value, keys: &[Value], r: PhpRef) -> VmResult<()> {
    let mut r = Some(r);
    walk(g, slot, keys, false, &mut |container, key| {
        let elem = element(g, container, key, false)?;
        *elem = Value::Ref(r.take().expect("bound once"));
        Ok(())
    })
}

/// `$s[i] = v` on a string; returns the byte written.
fn assign_string_offset<G: Globals>(g: G, s: &mut PhpStr, key: &Value, v: &Value) -> VmResult<Option<u8>> {
    if let Value::Undef = key {
        return error("[] operator not supported for strings");
    }
    let Some(n) = string_index(g, key, false)? else {
        return Ok(None);
    };
    let len = s.len() as i64;
    let i = if n < 0 { len + n } else { n };
    if i < 0 {
        warning(g, &format!("Illegal string offset {n}"));
        return Ok(None);
    }
    let text = ops::to_str(g, v)?;
    if text.is_empty() {
        return error("Cannot assign an empty string to a string offset");
    }
    if text.len() > 1 {
        warning(g, "Only the first byte will be assigned to the string offset");
    }
    let buf = s.make_mut();
    let i = i as usize;
    if i >= buf.len() {
        crate::limits::grow_string(g, buf, i + 1 - buf.len())?;
        buf.resize(i, b' ');
        buf.push(text[0]);
    } else {
        buf[i] = text[0];
    }
    Ok(Some(text[0]))
}

/// `slot[k1]…[kn] <op>= v`
pub fn assign_op<G: Globals>(
    g: G,
    slot: &mut Value,
    keys: &[Value],
    op: BinOp,
    v: &Value,
    want: bool,
) -> VmResult<Value> {
    if let Value::Ref(r) = slot {
        let r = r.clone();
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        return assign_op(g, &mut inner, keys, op, v, want);
    }
    // The element's new value, when the expression's value is read (a
    // typed reference's, converted).
    let result = |elem: &Value| if want { elem.deref_clone() } else { Value::Null };
    // The common case: one int or string key of an existing element of an
    // unshared array (`$a[$i] += 1`, `$s[$k] .= "x"`).
    if let (Value::Arr(a), [key]) = (&mut *slot, keys) {
        let k = match key {
            Value::Int(n) => Some(Key::Int(*n)),
            Value::Str(s) => Some(Key::from_php_str(s.clone())),
            _ => None,
        };
        if let Some(k) = k {
            if let Some(elem) = Rc::make_mut(a).get_mut(&k) {
                if !matches!(elem, Value::Ref(_)) {
                    apply_op(g, elem, op, v)?;
                    return Ok(result(elem));
                }
            }
        }
    }
    walk(g, slot, keys, true, &mut |container, key| {
        if let Value::Str(_) = container {
            return wrong_string_offset(g, key, false, "Cannot use assign-op operators with string offsets");
        }
        if let Value::Obj(o) = container {
            // `zend_binary_assign_op_obj_dim`: read, operate, write back.
            let o = o.clone();
            let mut elem = crate::objects::offset_get(g, &o, key, false)?.deref_clone();
            apply_op(g, &mut elem, op, v)?;
            let r = result(&elem);
            crate::objects::offset_set(g, &o, key, elem)?;
            return Ok(r);
        }
        let elem = element(g, container, key, true)?;
        apply_op(g, elem, op, v)?;
        Ok(result(elem))
    })
}

/// `elem <op>= v` on a slot (writing through a reference).
pub fn apply_op<G: Globals>(g: G, elem: &mut Value, op: BinOp, v: &Value) -> VmResult<()> {
    if let Value::Ref(r) = elem {
        let r = r.clone();
        if r.is_typed() {
            return crate::refs::assign_op(g, &r, op, v);
        }
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        return apply_op(g, &mut inner, op, v);
    }
    if let Value::Undef = elem {
        *elem = Value::Null;
    }
    if op == BinOp::Concat {
        return ops::concat_assign(g, elem, v);
    }
    if let (BinOp::Add, Value::Int(x), Value::Int(y)) = (op, &*elem, v) {
        if let Some(r) = x.checked_add(*y) {
            *elem = Value::Int(r);
            return Ok(());
        }
    }
    // `$a += $b` on arrays merges into `$a` in place, as PHP's
    // `zend_hash_merge` does: a `foreach` over `$a` keeps its place.
    if let (BinOp::Add, Value::Arr(x), Value::Arr(y)) = (op, &mut *elem, v) {
        if !y.is_empty() {
            let target = std::rc::Rc::make_mut(x);
            for (k, val) in y.iter() {
                let key = k.to_key();
                if !target.contains_key(&key) {
                    target.insert(key, val.clone());
                }
            }
        }
        return Ok(());
    }
    let r = ops::binary(g, op, elem, v)?;
    *elem = r;
    Ok(())
}

/// `++slot[k1]…[kn]` and friends; returns the expression's value.
pub fn inc_dec<G: Globals>(g: G, slot: &mut Value, keys: &[Value], kind: IncDec) -> VmResult<Value> {
    walk(g, slot, keys, true, &mut |container, key| {
        if let Value::Str(_) = container {
            return wrong_string_offset(g, key, false, "Cannot increment/decrement string offsets");
        }
        if let Value::Obj(o) = container {
            let o = o.clone();
            let mut elem = overloaded_element(g, &o, key)?;
            return inc_dec_slot(g, &mut elem, kind);
        }
        let elem = element(g, container, key, true)?;
        inc_dec_slot(g, elem, kind)
    })
}

/// `++`/`--` on a slot (through a reference); returns the expression's
/// value.
pub fn inc_dec_slot<G: Globals>(g: G, elem: &mut Value, kind: IncDec) -> VmResult<Value> {
    if let Value::Ref(r) = elem {
        let r = r.clone();
        if r.is_typed() {
            return crate::refs::inc_dec(g, &r, kind);
        }
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        return inc_dec_slot(g, &mut inner, kind);
    }
    let before = if kind.is_pre() { None } else { Some(elem.deref_clone()) };
    ops::inc_dec(g, elem, kind)?;
    Ok(before.unwrap_or_else(|| elem.clone()))
}

/// Makes `slot[k1]…[kn]` a reference (creating it) and returns it.
pub fn make_ref<G: Globals>(g: G, slot: &mut Value, keys: &[Value]) -> VmResult<PhpRef> {
    walk(g, slot, keys, false, &mut |container, key| {
        if let Value::Str(_) = container {
            return wrong_string_offset(g, key, false, "Cannot create references to/from string offsets");
        }
        if let Value::Obj(o) = container {
            let o = o.clone();
            let mut elem = overloaded_element(g, &o, key)?;
            return Ok(crate::gc::slot_ref(g, &mut elem));
        }
        let elem = element(g, container, key, false)?;
        Ok(crate::gc::slot_ref(g, elem))
    })
}

/// `unset(slot[k1]…[kn])`: never creates anything on the way.
pub fn unset<G: Globals>(g: G, slot: &mut Value, keys: &[Value]) -> VmResult<()> {
    if let Value::Ref(r) = slot {
        let r = r.clone();
        let Ok(mut inner) = r.try_borrow_mut() else {
            return fatal("minizts: a reference cycle was written through itself");
        };
        return unset(g, &mut inner, keys);
    }
    let Some((key, rest)) = keys.split_first() else {
        return Ok(());
    };
    match slot {
        Value::Arr(a) => {
            if let Value::Undef = key {
                return error("Cannot use [] for unsetting");
            }
            let k = to_key(g, key)?;
            if rest.is_empty() {
                if a.contains_key(&k) {
                    Rc::make_mut(a).remove(&k);
                }
                Ok(())
            } else {
                if !a.contains_key(&k) {
                    return Ok(());
                }
                let arr = Rc::make_mut(a);
                match arr.get_mut(&k) {
                    Some(child) => unset(g, child, rest),
                    None => Ok(()),
                }
            }
        }
        Value::Str(_) => {
            if rest.is_empty() {
                error("Cannot unset string offsets")
            } else {
                wrong_string_offset(g, key, true, "Cannot use string offset as an array")
            }
        }
        Value::Undef | Value::Null => Ok(()),
        Value::Closure(_) => error("Cannot use object of type Closure as array"),
        Value::Obj(o) => {
            let o = o.clone();
            crate::objects::offset_unset(g, &o, key)
        }
        _ => error("Cannot unset offset in a non-array variable"),
    }
}
