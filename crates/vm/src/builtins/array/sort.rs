//! Sorting: PHP's `zend_sort` (insertion sort for up to 16 elements,
//! otherwise a quick sort with median-of-3/5 pivots) ported step for step,
//! so that a comparator is called on the same pairs in the same order as in
//! PHP — visible when callbacks print, when comparisons warn, and in the
//! result of an inconsistent comparator. Sorts are made stable the way
//! PHP 8 does it: equal elements compare by their original position.
//!
//! Also here: the comparisons behind the sort flags, user comparators
//! (with 8.2's deprecation of bool results), `min`/`max` and the
//! flag-driven `array_unique`.

use std::rc::Rc;

use minizts_core::numfmt;
use minizts_core::value::compare;
use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::compare_steps;
use crate::builtins::Args;
use crate::call::{call_resolved, Callee};
use crate::error::{deprecated, type_error, VmResult};
use crate::limits::Ticker;

/// A comparator: negative, zero or positive like C's.
type Cmp<'a, T> = dyn FnMut(&T, &T) -> VmResult<i32> + 'a;

/// One element being sorted, with its original position for stability.
pub(super) struct Item {
    pos: usize,
    key: Key,
    val: Value,
}

fn items_of(arr: &PhpArray) -> Vec<Item> {
    arr.iter()
        .enumerate()
        .map(|(pos, (k, v))| Item {
            pos,
            key: k.to_key(),
            val: v.clone(),
        })
        .collect()
}

/// Puts sorted items back into an array: renumbered from 0, or under
/// their keys with the original next free key (sorting leaves it alone).
fn rebuild(orig: &PhpArray, items: Vec<Item>, renumber: bool) -> PhpArray {
    if renumber {
        return PhpArray::from_list(items.into_iter().map(|i| i.val).collect());
    }
    let mut out = PhpArray::from_pairs(items.into_iter().map(|i| (i.key, i.val)));
    if out.next_free() != orig.next_free() {
        out.set_next_free(orig.next_free());
    }
    out
}

fn sort2<T>(v: &mut [T], a: usize, b: usize, cmp: &mut Cmp<T>) -> VmResult<()> {
    if cmp(&v[a], &v[b])? > 0 {
        v.swap(a, b);
    }
    Ok(())
}

fn sort3<T>(v: &mut [T], a: usize, b: usize, c: usize, cmp: &mut Cmp<T>) -> VmResult<()> {
    if cmp(&v[a], &v[b])? <= 0 {
        if cmp(&v[b], &v[c])? <= 0 {
            return Ok(());
        }
        v.swap(b, c);
        if cmp(&v[a], &v[b])? > 0 {
            v.swap(a, b);
        }
        return Ok(());
    }
    if cmp(&v[c], &v[b])? <= 0 {
        v.swap(a, c);
        return Ok(());
    }
    v.swap(a, b);
    if cmp(&v[b], &v[c])? > 0 {
        v.swap(b, c);
    }
    Ok(())
}

fn sort4<T>(v: &mut [T], a: usize, b: usize, c: usize, d: usize, cmp: &mut Cmp<T>) -> VmResult<()> {
    sort3(v, a, b, c, cmp)?;
    if cmp(&v[c], &v[d])? > 0 {
        v.swap(c, d);
        if cmp(&v[b], &v[c])? > 0 {
            v.swap(b, c);
            if cmp(&v[a], &v[b])? > 0 {
                v.swap(a, b);
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn sort5<T>(v: &mut [T], a: usize, b: usize, c: usize, d: usize, e: usize, cmp: &mut Cmp<T>) -> VmResult<()> {
    sort4(v, a, b, c, d, cmp)?;
    if cmp(&v[d], &v[e])? > 0 {
        v.swap(d, e);
        if cmp(&v[c], &v[d])? > 0 {
            v.swap(c, d);
            if cmp(&v[b], &v[c])? > 0 {
                v.swap(b, c);
                if cmp(&v[a], &v[b])? > 0 {
                    v.swap(a, b);
                }
            }
        }
    }
    Ok(())
}

/// Moves the element at `i` down to `j` (`j <= i`), shifting the rest up.
fn rotate_into<T>(v: &mut [T], j: usize, i: usize) {
    v[j..=i].rotate_right(1);
}

/// `zend_insert_sort`.
fn insert_sort<T>(v: &mut [T], cmp: &mut Cmp<T>) -> VmResult<()> {
    let n = v.len();
    match n {
        0 | 1 => return Ok(()),
        2 => return sort2(v, 0, 1, cmp),
        3 => return sort3(v, 0, 1, 2, cmp),
        4 => return sort4(v, 0, 1, 2, 3, cmp),
        5 => return sort5(v, 0, 1, 2, 3, 4, cmp),
        _ => {}
    }
    let sentry = 6;
    for i in 1..sentry {
        let mut j = i - 1;
        if cmp(&v[j], &v[i])? <= 0 {
            continue;
        }
        while j != 0 {
            j -= 1;
            if cmp(&v[j], &v[i])? <= 0 {
                j += 1;
                break;
            }
        }
        rotate_into(v, j, i);
    }
    for i in sentry..n {
        let mut j = i - 1;
        if cmp(&v[j], &v[i])? <= 0 {
            continue;
        }
        loop {
            // `j` starts at `i - 1 >= 5` and stops at 0 or 1, so it never
            // goes below 0.
            j -= 2;
            if cmp(&v[j], &v[i])? <= 0 {
                j += 1;
                if cmp(&v[j], &v[i])? <= 0 {
                    j += 1;
                }
                break;
            }
            if j == 0 {
                break;
            }
            if j == 1 {
                j -= 1;
                if cmp(&v[i], &v[j])? > 0 {
                    j += 1;
                }
                break;
            }
        }
        rotate_into(v, j, i);
    }
    Ok(())
}

/// `zend_sort`: PHP's hybrid sort, comparator calls in PHP's order.
pub(super) fn zend_sort<T>(v: &mut [T], cmp: &mut Cmp<T>) -> VmResult<()> {
    let (mut lo, mut hi) = (0, v.len());
    loop {
        let nmemb = hi - lo;
        if nmemb <= 16 {
            return insert_sort(&mut v[lo..hi], cmp);
        }
        let start = lo;
        let end = hi;
        let offset = nmemb >> 1;
        let pivot = start + offset;
        if nmemb >> 10 != 0 {
            let delta = offset >> 1;
            sort5(v, start, start + delta, pivot, pivot + delta, end - 1, cmp)?;
        } else {
            sort3(v, start, pivot, end - 1, cmp)?;
        }
        v.swap(start + 1, pivot);
        let pivot = start + 1;
        let mut i = pivot + 1;
        let mut j = end - 1;
        'partition: loop {
            while cmp(&v[pivot], &v[i])? > 0 {
                i += 1;
                if i == j {
                    break 'partition;
                }
            }
            j -= 1;
            if j == i {
                break 'partition;
            }
            while cmp(&v[j], &v[pivot])? > 0 {
                j -= 1;
                if j == i {
                    break 'partition;
                }
            }
            v.swap(i, j);
            i += 1;
            if i == j {
                break 'partition;
            }
        }
        v.swap(pivot, i - 1);
        // Recurse into the smaller side, loop on the larger one.
        if (i - 1) - start < end - i {
            zend_sort(&mut v[start..i - 1], cmp)?;
            lo = i;
            hi = end;
        } else {
            zend_sort(&mut v[i..end], cmp)?;
            lo = start;
            hi = i - 1;
        }
    }
}

/// How the sort flags compare (`SORT_REGULAR`, `SORT_NUMERIC`,
/// `SORT_STRING`, `SORT_NATURAL`, each with `SORT_FLAG_CASE` where it
/// applies). `SORT_LOCALE_STRING` is `SORT_STRING` in the C locale.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavor {
    Regular,
    Numeric,
    Str,
    StrCase,
    Natural,
    NaturalCase,
}

pub(super) fn flavor(flags: i64) -> Flavor {
    let case = flags & 8 != 0;
    match flags & !8 {
        1 => Flavor::Numeric,
        2 if case => Flavor::StrCase,
        2 | 5 => Flavor::Str,
        6 if case => Flavor::NaturalCase,
        6 => Flavor::Natural,
        _ => Flavor::Regular,
    }
}

fn three_way(a: f64, b: f64) -> i32 {
    if a == b {
        0
    } else if a < b {
        -1
    } else {
        1
    }
}

fn bytes_cmp(a: &[u8], b: &[u8]) -> i32 {
    a.cmp(b) as i32
}

fn bytes_case_cmp(a: &[u8], b: &[u8]) -> i32 {
    let la = a.iter().map(u8::to_ascii_lowercase);
    let lb = b.iter().map(u8::to_ascii_lowercase);
    la.cmp(lb) as i32
}

/// `php_array_data_compare_unstable_i`'s special case: enum cases are
/// uncomparable, yet a sort groups equal ones together (by address) and
/// puts them after other values, so that `array_unique()` finds them.
fn enum_grouped(r: i32, a: &Value, b: &Value) -> i32 {
    let is_enum = |v: &Value| match &*v.deref() {
        Value::Obj(o) if o.class.kind == minizts_core::object::ClassKind::Enum => Some(o.addr()),
        _ => None,
    };
    if r != 1 {
        return r;
    }
    match (is_enum(a), is_enum(b)) {
        (Some(x), Some(y)) => x.cmp(&y) as i32,
        (None, Some(_)) => -1,
        _ => r,
    }
}

/// Two values compared as a sort flag says (warnings for arrays turned
/// into strings, as PHP gives).
pub(super) fn data_compare<G: Globals>(g: G, fl: Flavor, a: &Value, b: &Value) -> VmResult<i32> {
    Ok(match fl {
        Flavor::Regular => enum_grouped(compare(a, b)?, a, b),
        Flavor::Numeric => three_way(a.to_float(), b.to_float()),
        Flavor::Str | Flavor::StrCase | Flavor::Natural | Flavor::NaturalCase => {
            let x = crate::ops::to_str(g, &a.deref())?;
            let y = crate::ops::to_str(g, &b.deref())?;
            match fl {
                Flavor::Str => bytes_cmp(&x, &y),
                Flavor::StrCase => bytes_case_cmp(&x, &y),
                Flavor::Natural => strnatcmp_ex(&x, &y, false),
                _ => strnatcmp_ex(&x, &y, true),
            }
        }
    })
}

fn key_string(k: &Key) -> PhpStr {
    match k {
        Key::Int(n) => PhpStr::from(n.to_string()),
        Key::Str(s) => s.clone(),
    }
}

/// Two keys compared as a sort flag says.
fn key_compare(fl: Flavor, a: &Key, b: &Key) -> i32 {
    match (fl, a, b) {
        (Flavor::Regular | Flavor::Numeric, Key::Int(x), Key::Int(y)) => {
            if x > y {
                1
            } else {
                -1
            }
        }
        (Flavor::Regular, Key::Str(x), Key::Str(y)) => numfmt::smart_str_compare(x, y) as i32,
        // Keys are ints and strings, which always compare.
        (Flavor::Regular, _, _) => compare(&a.to_value(), &b.to_value()).unwrap_or(0),
        (Flavor::Numeric, _, _) => {
            let f = |k: &Key| match k {
                Key::Int(n) => *n as f64,
                Key::Str(s) => numfmt::str_to_float(s),
            };
            three_way(f(a), f(b))
        }
        (Flavor::Str, _, _) => bytes_cmp(&key_string(a), &key_string(b)),
        (Flavor::StrCase, _, _) => bytes_case_cmp(&key_string(a), &key_string(b)),
        (Flavor::Natural, _, _) => strnatcmp_ex(&key_string(a), &key_string(b), false),
        (Flavor::NaturalCase, _, _) => strnatcmp_ex(&key_string(a), &key_string(b), true),
    }
}

/// PHP's `strnatcmp_ex`: "natural order" (runs of digits compare as
/// numbers, leading zeros and spaces skipped).
pub(crate) fn strnatcmp_ex(a: &[u8], b: &[u8], fold_case: bool) -> i32 {
    if a.is_empty() || b.is_empty() {
        return a.len().cmp(&b.len()) as i32;
    }
    // C reads the terminating NUL past the end; so does this.
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let (mut ap, mut bp) = (0usize, 0usize);
    let (mut ca, mut cb) = (a[0], b[0]);
    while ca == b'0' && ap + 1 < a.len() && a[ap + 1].is_ascii_digit() {
        ap += 1;
        ca = a[ap];
    }
    while cb == b'0' && bp + 1 < b.len() && b[bp + 1].is_ascii_digit() {
        bp += 1;
        cb = b[bp];
    }
    loop {
        while is_c_space(ca) {
            ap += 1;
            ca = at(a, ap);
        }
        while is_c_space(cb) {
            bp += 1;
            cb = at(b, bp);
        }
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let fractional = ca == b'0' || cb == b'0';
            let result = if fractional {
                nat_compare_left(a, &mut ap, b, &mut bp)
            } else {
                nat_compare_right(a, &mut ap, b, &mut bp)
            };
            if result != 0 {
                return result;
            } else if ap == a.len() && bp == b.len() {
                return 0;
            } else if ap == a.len() {
                return -1;
            } else if bp == b.len() {
                return 1;
            }
            ca = at(a, ap);
            cb = at(b, bp);
        }
        if fold_case {
            ca = ca.to_ascii_uppercase();
            cb = cb.to_ascii_uppercase();
        }
        if ca < cb {
            return -1;
        } else if ca > cb {
            return 1;
        }
        ap += 1;
        bp += 1;
        if ap >= a.len() && bp >= b.len() {
            return 0;
        } else if ap >= a.len() {
            return -1;
        } else if bp >= b.len() {
            return 1;
        }
        ca = a[ap];
        cb = b[bp];
    }
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn digit_at(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// Right-aligned numbers: the longer run wins, else the first difference.
fn nat_compare_right(a: &[u8], ap: &mut usize, b: &[u8], bp: &mut usize) -> i32 {
    let mut bias = 0;
    loop {
        match (digit_at(a, *ap), digit_at(b, *bp)) {
            (false, false) => return bias,
            (false, true) => return -1,
            (true, false) => return 1,
            (true, true) => {
                if bias == 0 {
                    bias = bytes_cmp(&[a[*ap]], &[b[*bp]]);
                }
            }
        }
        *ap += 1;
        *bp += 1;
    }
}

/// Left-aligned (fractional) numbers: the first difference wins.
fn nat_compare_left(a: &[u8], ap: &mut usize, b: &[u8], bp: &mut usize) -> i32 {
    loop {
        match (digit_at(a, *ap), digit_at(b, *bp)) {
            (false, false) => return 0,
            (false, true) => return -1,
            (true, false) => return 1,
            (true, true) => {
                let c = bytes_cmp(&[a[*ap]], &[b[*bp]]);
                if c != 0 {
                    return c;
                }
            }
        }
        *ap += 1;
        *bp += 1;
    }
}

/// What a builtin sort orders by.
#[derive(Clone, Copy)]
enum By {
    Value,
    Key,
}

/// `sort`/`rsort`/`asort`/`arsort`/`ksort`/`krsort`/`natsort`/…
fn flag_sort<G: Globals>(
    g: G,
    a: &mut Args,
    by: By,
    fl: Option<Flavor>,
    reverse: bool,
    renumber: bool,
) -> VmResult<Value> {
    let arr = a.array(0)?;
    let fl = match fl {
        Some(fl) => fl,
        None => flavor(a.opt_int(g, 1, 0)?),
    };
    if arr.is_empty() || (arr.len() == 1 && !renumber) {
        return Ok(Value::Bool(true));
    }
    let mut items = items_of(&arr);
    // A comparison that fails (the time limit, a conversion that throws)
    // ends the sort at once; the array is left as it was.
    let mut ticker = Ticker::new();
    zend_sort(&mut items, &mut |x: &Item, y: &Item| {
        let r = match by {
            By::Value => {
                ticker.tick_by(g, compare_steps(&x.val))?;
                data_compare(g, fl, &x.val, &y.val)?
            }
            By::Key => {
                ticker.tick(g)?;
                key_compare(fl, &x.key, &y.key)
            }
        };
        let r = if reverse { -r.signum() } else { r };
        Ok(if r != 0 { r } else { x.pos.cmp(&y.pos) as i32 })
    })?;
    let mut out = rebuild(&arr, items, renumber);
    drop(arr);
    a.with_ref(0, |slot| {
        // PHP sorts an unshared array in place, so the by-reference loops
        // over it carry on in the sorted one.
        if let Value::Arr(old) = slot {
            if let Some(old) = Rc::get_mut(old) {
                out.take_iterators_of_sorted(old);
            }
        }
        *slot = Value::arr(out)
    });
    Ok(Value::Bool(true))
}

pub(super) fn sort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Value, None, false, true)
}

pub(super) fn rsort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Value, None, true, true)
}

pub(super) fn asort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Value, None, false, false)
}

pub(super) fn arsort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Value, None, true, false)
}

pub(super) fn ksort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Key, None, false, false)
}

pub(super) fn krsort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Key, None, true, false)
}

pub(super) fn natsort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Value, Some(Flavor::Natural), false, false)
}

pub(super) fn natcasesort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    flag_sort(g, a, By::Value, Some(Flavor::NaturalCase), false, false)
}

/// A user comparator's answer as PHP reads it: `(int)` of the result,
/// reduced to its sign. A bool is deprecated, once per sort call (every
/// user sort clears the flag, so a sort nested in a comparator re-arms the
/// outer sort's notice, as in PHP), and `false` is asked again with the
/// operands swapped, since it cannot tell "less" from "equal".
pub(super) fn user_compare<G: Globals>(g: G, callee: &Callee, name: &str, x: Value, y: Value) -> VmResult<i32> {
    let r = call_resolved(g, callee, vec![x.clone(), y.clone()])?;
    if let Value::Bool(b) = r {
        if !eg!(g, |eg| std::mem::replace(
            &mut eg.basic.sort_bool_deprecation_shown,
            true
        )) {
            deprecated(
                g,
                &format!(
                    "{name}(): Returning bool from comparison function is deprecated, \
                     return an integer less than, equal to, or greater than zero"
                ),
            );
        }
        if !b {
            let again = call_resolved(g, callee, vec![y, x])?;
            return Ok(-(again.to_int().signum() as i32));
        }
    }
    Ok(r.to_int().signum() as i32)
}

/// `usort`/`uasort`/`uksort`. The callback sees the array as it was: the
/// sort works on a copy that replaces the array at the end.
fn user_sort<G: Globals>(g: G, a: &mut Args, by: By, renumber: bool) -> VmResult<Value> {
    eg!(g, |eg| eg.basic.sort_bool_deprecation_shown = false);
    let arr = a.array(0)?;
    let callee = a.callable(g, 1)?;
    if arr.is_empty() {
        return Ok(Value::Bool(true));
    }
    let name = a.name();
    let mut items = items_of(&arr);
    zend_sort(&mut items, &mut |x: &Item, y: &Item| {
        let (xa, ya) = match by {
            By::Value => (x.val.deref_clone(), y.val.deref_clone()),
            By::Key => (x.key.to_value(), y.key.to_value()),
        };
        let r = user_compare(g, &callee, name, xa, ya)?;
        Ok(if r != 0 { r } else { x.pos.cmp(&y.pos) as i32 })
    })?;
    let out = rebuild(&arr, items, renumber);
    a.with_ref(0, |slot| *slot = Value::arr(out));
    Ok(Value::Bool(true))
}

pub(super) fn usort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    user_sort(g, a, By::Value, true)
}

pub(super) fn uasort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    user_sort(g, a, By::Value, false)
}

pub(super) fn uksort<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    user_sort(g, a, By::Key, false)
}

/// `min`/`max`: of an array's elements (one argument) or of the
/// arguments. The first of equal candidates wins.
fn min_max<G: Globals>(g: G, a: &mut Args, want_max: bool) -> VmResult<Value> {
    // Comparing arrays walks them: many large ones take long.
    let mut ticker = Ticker::new();
    if a.len() == 1 {
        let v = a.get(0);
        let Value::Arr(arr) = &v else {
            return type_error(format!(
                "{}(): Argument #1 ($value) must be of type array, {} given",
                a.name(),
                v.type_name()
            ));
        };
        let mut it = arr.values();
        let Some(mut best) = it.next() else {
            return a.value_error(0, "must contain at least one element");
        };
        for v in it {
            ticker.tick_by(g, compare_steps(v))?;
            let c = compare(best, v)?;
            if (want_max && c < 0) || (!want_max && c > 0) {
                best = v;
            }
        }
        return Ok(best.deref_clone());
    }
    let mut best = a.get(0);
    for i in 1..a.len() {
        let v = a.get(i);
        ticker.tick_by(g, compare_steps(&v))?;
        let c = compare(&v, &best)?;
        if (want_max && c > 0) || (!want_max && c < 0) {
            best = v;
        }
    }
    Ok(best)
}

pub(super) fn min<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    min_max(g, a, false)
}

pub(super) fn max<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    min_max(g, a, true)
}

/// `array_unique` with flags other than `SORT_STRING`: PHP sorts (not
/// stably) and drops each element equal to its neighbour, keeping the one
/// that came first.
pub(super) fn unique_by_flags<G: Globals>(g: G, arr: &Rc<PhpArray>, flags: i64) -> VmResult<Value> {
    let fl = flavor(flags);
    let mut items = items_of(arr);
    let mut ticker = Ticker::new();
    let mut cmp = |x: &Item, y: &Item| {
        ticker.tick_by(g, compare_steps(&x.val))?;
        data_compare(g, fl, &x.val, &y.val)
    };
    zend_sort(&mut items, &mut cmp)?;
    let mut out = (**arr).clone();
    let mut last = 0;
    for i in 1..items.len() {
        if cmp(&items[last], &items[i])? != 0 {
            last = i;
            continue;
        }
        let drop = if items[last].pos > items[i].pos {
            std::mem::replace(&mut last, i)
        } else {
            i
        };
        out.remove(&items[drop].key);
    }
    Ok(Value::arr(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (the tests must not depend on a
    /// random source).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *seed >> 33
    }

    #[test]
    fn zend_sort_agrees_with_a_stable_sort() {
        let mut seed = 7;
        for n in [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 100, 1023, 1024, 1500] {
            let v: Vec<(u64, usize)> = (0..n).map(|i| (lcg(&mut seed) % 50, i)).collect();
            let mut ours = v.clone();
            zend_sort(&mut ours, &mut |a: &(u64, usize), b: &(u64, usize)| Ok(a.cmp(b) as i32)).unwrap();
            let mut std = v;
            std.sort();
            assert_eq!(ours, std, "n = {n}");
        }
    }

    #[test]
    fn zend_sort_survives_an_inconsistent_comparator() {
        let mut seed = 3;
        let mut v: Vec<u64> = (0..3000).map(|_| lcg(&mut seed)).collect();
        let mut calls = 0u64;
        zend_sort(&mut v, &mut |_: &u64, _: &u64| {
            calls += 1;
            Ok(if calls.is_multiple_of(3) { 1 } else { -1 })
        })
        .unwrap();
        assert_eq!(v.len(), 3000);
    }

    #[test]
    fn natural_order() {
        assert!(strnatcmp_ex(b"img12", b"img10", false) > 0);
        assert!(strnatcmp_ex(b"img2", b"img10", false) < 0);
        assert!(strnatcmp_ex(b"IMG2", b"img10", true) < 0);
        assert!(strnatcmp_ex(b"IMG2", b"img10", false) < 0);
        assert!(strnatcmp_ex(b"", b"a", false) < 0);
        assert_eq!(strnatcmp_ex(b"a 1", b"a1", false), 0);
        // After the dot the digit runs compare right-aligned: 45 > 5.
        assert!(strnatcmp_ex(b"0.45", b"0.5", false) > 0);
        assert!(strnatcmp_ex(b"x", b"x ", false) < 0);
    }
}
