//! The diff/intersect functions with user comparators (`array_udiff`,
//! `array_diff_ukey`, `array_intersect_uassoc`, …), ported from PHP's
//! `php_array_diff`/`php_array_intersect`: every array is sorted with
//! [`zend_sort`] and the sorted lists are walked together, so that the
//! callbacks are called on the same pairs in the same order as in PHP
//! (visible when they print, and in the result of an inconsistent one).
//! `array_udiff_assoc`/`array_uintersect_assoc` look keys up instead
//! (`php_array_diff_key`/`php_array_intersect_key`).
//!
//! PHP reads the callbacks off the end of the arguments: they are
//! checked first, then the arrays, each array sorted as soon as it is
//! checked.

use std::rc::Rc;

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::Globals;

use super::elem;
use super::sort::{user_compare, zend_sort};
use crate::builtins::Args;
use crate::call::{builtin_arity, call_resolved, Callee};
use crate::error::{type_error, VmResult};
use crate::limits::Ticker;

/// An element of a sorted list (PHP's `Bucket` copy).
struct Entry {
    key: Key,
    val: Value,
}

/// What the walk matches elements by (PHP's `DIFF_NORMAL`, `DIFF_KEY`,
/// `DIFF_ASSOC` and their `INTERSECT_` twins).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Behavior {
    Values,
    Keys,
    Assoc,
}

/// How elements compare: the comparators of one call.
struct Comparators<'a> {
    name: &'static str,
    /// The user's value comparator; `None`: the values' string forms.
    data: Option<&'a Callee>,
    /// The user's key comparator; `None`: the keys' string forms.
    key: Option<&'a Callee>,
    /// PHP keeps one "current callback" (`BG(user_compare_fci)`) and
    /// `php_array_intersect` does not switch it back to the key callback
    /// after values that compared equal: until the next element of the
    /// first array, key comparisons call the value callback (on keys).
    key_uses_data: bool,
    ticker: Ticker,
}

impl Comparators<'_> {
    fn data<G: Globals>(&mut self, g: G, x: &Entry, y: &Entry) -> VmResult<i32> {
        self.ticker.tick(g)?;
        match self.data {
            Some(cb) => user_compare(g, cb, self.name, x.val.deref_clone(), y.val.deref_clone()),
            None => {
                let a = crate::ops::to_str(g, &x.val.deref())?;
                let b = crate::ops::to_str(g, &y.val.deref())?;
                Ok(a.as_bytes().cmp(b.as_bytes()) as i32)
            }
        }
    }

    fn key<G: Globals>(&mut self, g: G, x: &Entry, y: &Entry) -> VmResult<i32> {
        self.ticker.tick(g)?;
        let cb = match (self.key_uses_data, self.data) {
            (true, Some(data)) => Some(data),
            _ => self.key,
        };
        match cb {
            Some(cb) => user_compare(g, cb, self.name, x.key.to_value(), y.key.to_value()),
            None => Ok(key_bytes(&x.key).cmp(&key_bytes(&y.key)) as i32),
        }
    }
}

fn key_bytes(k: &Key) -> Vec<u8> {
    match k {
        Key::Int(n) => n.to_string().into_bytes(),
        Key::Str(s) => s.as_bytes().to_vec(),
    }
}

/// The callbacks: the last `n` arguments.
fn callbacks<G: Globals>(g: G, a: &Args, n: usize) -> VmResult<Vec<Callee>> {
    if a.len() < n + 1 {
        return builtin_arity(a.name(), n + 1, None, a.len());
    }
    (a.len() - n..a.len()).map(|i| a.rest_callable(g, i)).collect()
}

/// The arrays: the arguments before the `n` callbacks, each given to
/// `each` as soon as it is checked.
fn arrays(a: &Args, n: usize, mut each: impl FnMut(&Rc<PhpArray>) -> VmResult<()>) -> VmResult<Vec<Rc<PhpArray>>> {
    let narrays = a.len() - n;
    let mut out = Vec::with_capacity(narrays);
    for i in 0..narrays {
        let arr = match &*a.value(i) {
            Value::Arr(x) => x.clone(),
            other => {
                let name = if i == 0 { " ($array)" } else { "" };
                return type_error(format!(
                    "{}(): Argument #{}{name} must be of type array, {} given",
                    a.name(),
                    i + 1,
                    crate::types::type_name(other)
                ));
            }
        };
        each(&arr)?;
        out.push(arr);
    }
    Ok(out)
}

/// Which user comparator each callback argument is: `(data, key)`
/// positions among the callbacks.
struct Shape {
    behavior: Behavior,
    data_user: bool,
    key_user: bool,
}

impl Shape {
    fn callbacks(&self) -> usize {
        self.data_user as usize + self.key_user as usize
    }
}

/// The first array, every array's sorted list, the callbacks.
type Prepared = (Rc<PhpArray>, Vec<Vec<Entry>>, Vec<Callee>);

/// Checks the operands and sorts each array's list; returns the first
/// array, the lists and the callbacks.
fn prepare<G: Globals>(g: G, a: &Args, shape: &Shape) -> VmResult<Prepared> {
    let callees = callbacks(g, a, shape.callbacks())?;
    let (data_cb, key_cb) = callbacks_of(shape, &callees);
    let mut cmp = Comparators {
        name: a.name(),
        data: data_cb,
        key: key_cb,
        key_uses_data: false,
        ticker: Ticker::new(),
    };
    let mut lists = Vec::new();
    let arrays = arrays(a, shape.callbacks(), |arr| {
        let mut list: Vec<Entry> = arr
            .iter()
            .map(|(k, v)| Entry {
                key: k.to_key(),
                val: v.clone(),
            })
            .collect();
        if list.len() > 1 {
            match shape.behavior {
                Behavior::Values => zend_sort(&mut list, &mut |x, y| cmp.data(g, x, y))?,
                _ => zend_sort(&mut list, &mut |x, y| cmp.key(g, x, y))?,
            }
        }
        lists.push(list);
        Ok(())
    })?;
    Ok((arrays[0].clone(), lists, callees))
}

/// The data and key comparators among the callbacks (PHP takes the
/// data one first when there are two).
fn callbacks_of<'a>(shape: &Shape, callees: &'a [Callee]) -> (Option<&'a Callee>, Option<&'a Callee>) {
    match (shape.data_user, shape.key_user) {
        (true, true) => (Some(&callees[0]), Some(&callees[1])),
        (true, false) => (Some(&callees[0]), None),
        (false, true) => (None, Some(&callees[0])),
        (false, false) => (None, None),
    }
}

/// `php_array_diff`.
fn sorted_diff<G: Globals>(g: G, a: &Args, shape: Shape) -> VmResult<Value> {
    let (first, lists, callees) = prepare(g, a, &shape)?;
    let (data_cb, key_cb) = callbacks_of(&shape, &callees);
    let mut cmp = Comparators {
        name: a.name(),
        data: data_cb,
        key: key_cb,
        key_uses_data: false,
        ticker: Ticker::new(),
    };
    let behavior = shape.behavior;
    let mut out = (*first).clone();
    let l0 = &lists[0];
    let mut ptrs = vec![0usize; lists.len()];
    let mut p0 = 0;
    while p0 < l0.len() {
        let mut c = 1;
        for i in 1..lists.len() {
            let li = &lists[i];
            let mut ptr = ptrs[i];
            if behavior == Behavior::Values {
                while ptrs[i] < li.len() {
                    c = cmp.data(g, &l0[p0], &li[ptrs[i]])?;
                    if c <= 0 {
                        break;
                    }
                    ptrs[i] += 1;
                }
            } else {
                while ptr < li.len() {
                    c = cmp.key(g, &l0[p0], &li[ptr])?;
                    if c == 0 {
                        break;
                    }
                    ptr += 1;
                }
            }
            if c == 0 {
                match behavior {
                    Behavior::Values => {
                        if ptrs[i] < li.len() {
                            ptrs[i] += 1;
                        }
                        break;
                    }
                    Behavior::Assoc => {
                        if ptr < li.len() {
                            if cmp.data(g, &l0[p0], &li[ptr])? != 0 {
                                c = -1;
                            } else {
                                break;
                            }
                        }
                    }
                    Behavior::Keys => break,
                }
            }
        }
        // Found in another array: removed, with the equal ones after it;
        // else kept, with them.
        let found = c == 0;
        loop {
            if found {
                out.remove(&l0[p0].key);
            }
            p0 += 1;
            if p0 == l0.len() {
                return Ok(Value::arr(out));
            }
            if behavior != Behavior::Values || cmp.data(g, &l0[p0 - 1], &l0[p0])? != 0 {
                break;
            }
        }
    }
    Ok(Value::arr(out))
}

/// `php_array_intersect`.
fn sorted_intersect<G: Globals>(g: G, a: &Args, shape: Shape) -> VmResult<Value> {
    let (first, lists, callees) = prepare(g, a, &shape)?;
    let (data_cb, key_cb) = callbacks_of(&shape, &callees);
    let mut cmp = Comparators {
        name: a.name(),
        data: data_cb,
        key: key_cb,
        key_uses_data: false,
        ticker: Ticker::new(),
    };
    let behavior = shape.behavior;
    let mut out = (*first).clone();
    let l0 = &lists[0];
    let mut ptrs = vec![0usize; lists.len()];
    let mut p0 = 0;
    let mut c = 0;
    while p0 < l0.len() {
        cmp.key_uses_data = false;
        let mut broke_at = None;
        for i in 1..lists.len() {
            let li = &lists[i];
            while ptrs[i] < li.len() {
                c = match behavior {
                    Behavior::Values => cmp.data(g, &l0[p0], &li[ptrs[i]])?,
                    _ => cmp.key(g, &l0[p0], &li[ptrs[i]])?,
                };
                if c <= 0 {
                    break;
                }
                ptrs[i] += 1;
            }
            if behavior == Behavior::Assoc && c == 0 && ptrs[i] < li.len() {
                if cmp.data(g, &l0[p0], &li[ptrs[i]])? != 0 {
                    c = 1;
                } else {
                    cmp.key_uses_data = cmp.key.is_some();
                }
            }
            if ptrs[i] == li.len() {
                // Not in this array: nor is anything after it.
                for e in &l0[p0..] {
                    out.remove(&e.key);
                }
                return Ok(Value::arr(out));
            }
            if c != 0 {
                broke_at = Some(i);
                break;
            }
            ptrs[i] += 1;
        }
        match broke_at.filter(|_| c != 0) {
            Some(i) => loop {
                // Not in all: removed, with what sorts before the other
                // array's element.
                out.remove(&l0[p0].key);
                p0 += 1;
                if p0 == l0.len() {
                    return Ok(Value::arr(out));
                }
                if behavior != Behavior::Values || cmp.data(g, &l0[p0], &lists[i][ptrs[i]])? >= 0 {
                    break;
                }
            },
            None => loop {
                p0 += 1;
                if p0 == l0.len() {
                    return Ok(Value::arr(out));
                }
                if behavior != Behavior::Values || cmp.data(g, &l0[p0 - 1], &l0[p0])? != 0 {
                    break;
                }
            },
        }
    }
    Ok(Value::arr(out))
}

/// `php_array_diff_key`/`php_array_intersect_key` with a user value
/// comparator (`zval_user_compare`: no bool deprecation here).
fn keyed<G: Globals>(g: G, a: &Args, intersect: bool) -> VmResult<Value> {
    let callees = callbacks(g, a, 1)?;
    let arrays = arrays(a, 1, |_| Ok(()))?;
    let cb = &callees[0];
    let mut ticker = Ticker::new();
    let mut out = PhpArray::new();
    'elements: for (k, v) in arrays[0].iter() {
        let key = k.to_key();
        for other in &arrays[1..] {
            ticker.tick(g)?;
            let same = match other.get(&key) {
                Some(w) => call_resolved(g, cb, vec![v.deref_clone(), w.deref_clone()])?.to_int() == 0,
                None => false,
            };
            if same != intersect {
                continue 'elements;
            }
        }
        out.insert(key, elem(v));
    }
    Ok(Value::arr(out))
}

const fn shape(behavior: Behavior, data_user: bool, key_user: bool) -> Shape {
    Shape {
        behavior,
        data_user,
        key_user,
    }
}

pub(super) fn array_udiff<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_diff(g, a, shape(Behavior::Values, true, false))
}

pub(super) fn array_diff_ukey<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_diff(g, a, shape(Behavior::Keys, false, true))
}

pub(super) fn array_diff_uassoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_diff(g, a, shape(Behavior::Assoc, false, true))
}

pub(super) fn array_udiff_uassoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_diff(g, a, shape(Behavior::Assoc, true, true))
}

pub(super) fn array_udiff_assoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    keyed(g, a, false)
}

pub(super) fn array_uintersect<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_intersect(g, a, shape(Behavior::Values, true, false))
}

pub(super) fn array_intersect_ukey<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_intersect(g, a, shape(Behavior::Keys, false, true))
}

pub(super) fn array_intersect_uassoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_intersect(g, a, shape(Behavior::Assoc, false, true))
}

pub(super) fn array_uintersect_uassoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    sorted_intersect(g, a, shape(Behavior::Assoc, true, true))
}

pub(super) fn array_uintersect_assoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    keyed(g, a, true)
}
