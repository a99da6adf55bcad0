//! Array functions (PHP's `ext/standard/array.c`), with PHP 8.2's
//! parameters, key rules, warnings and errors.
//!
//! Conventions shared by the functions here:
//! * Copied elements keep a PHP reference only while someone else also
//!   holds it ([`elem`]), as PHP's `Z_REFCOUNT == 1` unwrapping does.
//! * Results that PHP builds with `RETURN_EMPTY_ARRAY()` are
//!   [`PhpArray::empty_literal`] (next free key 0); freshly built ones are
//!   [`PhpArray::new`] (no int key yet). The difference shows with
//!   negative keys appended to later.
//! * Script callbacks run with no borrow of a by-reference array held: the
//!   array is read, the callback runs, the result is written back.
//!
//! Sorting, `min`/`max` and `array_unique`'s comparisons live in
//! [`sort`].

use std::rc::Rc;

use minizts_core::array::KeyRef;
use minizts_core::numfmt::{self, Number};
use minizts_core::value::{identical, loose_equals};
use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::call::call_resolved;
use crate::error::{error, type_error, warning, VmResult};
use crate::limits::{hash_bytes, packed_bytes, reserve, values_with_capacity, Ticker};

mod column;
mod cursor;
mod multisort;
mod objprops;
mod random;
mod sort;
mod udiff;
mod walk;

use column::{array_column, array_replace_recursive};
use cursor::{current, end, key, next, prev, reset};
use multisort::array_multisort;
use random::{array_rand, shuffle};
use sort::{arsort, asort, krsort, ksort, max, min, natcasesort, natsort, rsort, sort, uasort, uksort, usort};
use udiff::{
    array_diff_uassoc, array_diff_ukey, array_intersect_uassoc, array_intersect_ukey, array_udiff, array_udiff_assoc,
    array_udiff_uassoc, array_uintersect, array_uintersect_assoc, array_uintersect_uassoc,
};
use walk::array_walk_recursive;

crate::builtin_table! {
    "count", ["value", "mode"], 1, 0, count;
    "sizeof", ["value", "mode"], 1, 0, count;
    "range", ["start", "end", "step"], 2, 0, range;
    "in_array", ["needle", "haystack", "strict"], 2, 0, in_array;
    "array_search", ["needle", "haystack", "strict"], 2, 0, array_search;
    "array_keys", ["array", "filter_value", "strict"], 1, 0, array_keys;
    "array_values", ["array"], 1, 0, array_values;
    "array_merge", ["...arrays"], 0, 0, array_merge;
    "array_merge_recursive", ["...arrays"], 0, 0, array_merge_recursive;
    "array_replace", ["array", "...replacements"], 1, 0, array_replace;
    "array_replace_recursive", ["array", "...replacements"], 1, 0, array_replace_recursive;
    "array_column", ["array", "column_key", "index_key"], 2, 0, array_column;
    "array_rand", ["array", "num"], 1, 0, array_rand;
    "shuffle", ["array"], 1, 0b1, shuffle;
    "array_sum", ["array"], 1, 0, array_sum;
    "array_product", ["array"], 1, 0, array_product;
    "array_push", ["array", "...values"], 1, 0b1, array_push;
    "array_pop", ["array"], 1, 0b1, array_pop;
    "array_shift", ["array"], 1, 0b1, array_shift;
    "array_unshift", ["array", "...values"], 1, 0b1, array_unshift;
    "array_slice", ["array", "offset", "length", "preserve_keys"], 2, 0, array_slice;
    "array_splice", ["array", "offset", "length", "replacement"], 2, 0b1, array_splice;
    "array_reverse", ["array", "preserve_keys"], 1, 0, array_reverse;
    "array_flip", ["array"], 1, 0, array_flip;
    "array_fill", ["start_index", "count", "value"], 3, 0, array_fill;
    "array_fill_keys", ["keys", "value"], 2, 0, array_fill_keys;
    "array_pad", ["array", "length", "value"], 3, 0, array_pad;
    "array_chunk", ["array", "length", "preserve_keys"], 2, 0, array_chunk;
    "array_combine", ["keys", "values"], 2, 0, array_combine;
    "array_key_exists", ["key", "array"], 2, 0, array_key_exists;
    "key_exists", ["key", "array"], 2, 0, array_key_exists;
    "array_key_first", ["array"], 1, 0, array_key_first;
    "array_key_last", ["array"], 1, 0, array_key_last;
    "current", ["array"], 1, 0, current;
    "pos", ["array"], 1, 0, current;
    "key", ["array"], 1, 0, key;
    "next", ["array"], 1, 0b1, next;
    "prev", ["array"], 1, 0b1, prev;
    "reset", ["array"], 1, 0b1, reset;
    "end", ["array"], 1, 0b1, end;
    "array_is_list", ["array"], 1, 0, array_is_list;
    "array_map", ["callback", "array", "...arrays"], 2, 0, array_map;
    "array_filter", ["array", "callback", "mode"], 1, 0, array_filter;
    "array_reduce", ["array", "callback", "initial"], 2, 0, array_reduce;
    "array_walk", ["array", "callback", "arg"], 2, 0b1, array_walk;
    "array_walk_recursive", ["array", "callback", "arg"], 2, 0b1, array_walk_recursive;
    "array_change_key_case", ["array", "case"], 1, 0, array_change_key_case;
    "array_unique", ["array", "flags"], 1, 0, array_unique;
    "array_count_values", ["array"], 1, 0, array_count_values;
    "array_diff", ["array", "...arrays"], 1, 0, array_diff;
    "array_diff_key", ["array", "...arrays"], 1, 0, array_diff_key;
    "array_diff_assoc", ["array", "...arrays"], 1, 0, array_diff_assoc;
    "array_intersect", ["array", "...arrays"], 1, 0, array_intersect;
    "array_intersect_key", ["array", "...arrays"], 1, 0, array_intersect_key;
    "array_intersect_assoc", ["array", "...arrays"], 1, 0, array_intersect_assoc;
    "array_udiff", ["array", "...rest"], 2, 0, array_udiff;
    "array_udiff_assoc", ["array", "...rest"], 2, 0, array_udiff_assoc;
    "array_udiff_uassoc", ["array", "...rest"], 3, 0, array_udiff_uassoc;
    "array_diff_ukey", ["array", "...rest"], 2, 0, array_diff_ukey;
    "array_diff_uassoc", ["array", "...rest"], 2, 0, array_diff_uassoc;
    "array_uintersect", ["array", "...rest"], 2, 0, array_uintersect;
    "array_uintersect_assoc", ["array", "...rest"], 2, 0, array_uintersect_assoc;
    "array_uintersect_uassoc", ["array", "...rest"], 3, 0, array_uintersect_uassoc;
    "array_intersect_ukey", ["array", "...rest"], 2, 0, array_intersect_ukey;
    "array_intersect_uassoc", ["array", "...rest"], 2, 0, array_intersect_uassoc;
    "sort", ["array", "flags"], 1, 0b1, sort;
    "rsort", ["array", "flags"], 1, 0b1, rsort;
    "asort", ["array", "flags"], 1, 0b1, asort;
    "arsort", ["array", "flags"], 1, 0b1, arsort;
    "ksort", ["array", "flags"], 1, 0b1, ksort;
    "krsort", ["array", "flags"], 1, 0b1, krsort;
    "natsort", ["array"], 1, 0b1, natsort;
    "natcasesort", ["array"], 1, 0b1, natcasesort;
    "usort", ["array", "callback"], 2, 0b1, usort;
    "uasort", ["array", "callback"], 2, 0b1, uasort;
    "uksort", ["array", "callback"], 2, 0b1, uksort;
    "array_multisort", ["array", "...rest"], 1, 0xffff_ffff, array_multisort;
    "min", ["value", "...values"], 1, 0, min;
    "max", ["value", "...values"], 1, 0, max;
}

/// PHP's `HT_MAX_SIZE` on 64-bit builds: no array may hold this many.
const HT_MAX_SIZE: u64 = 0x4000_0000;

/// An element as a copy puts it in a new array: a reference nobody else
/// holds any more is unwrapped.
fn elem(v: &Value) -> Value {
    match v {
        Value::Ref(r) if r.count() == 1 => r.get(),
        Value::Undef => Value::Null,
        other => other.clone(),
    }
}

/// Adds `v` under a string key as is, or after the int keys so far.
fn keep_str_key(out: &mut PhpArray, k: KeyRef<'_>, v: Value) {
    match k {
        KeyRef::Str(s) => out.insert(Key::Str(s.clone()), v),
        KeyRef::Int(_) => {
            // Renumbering from 0 cannot reach the last int key.
            let _ = out.push(v);
        }
    }
}

/// PHP's "Argument #N must be of type array" for a variadic parameter
/// (PHP names only the declared parameters).
fn variadic_array(a: &Args, i: usize) -> VmResult<Rc<PhpArray>> {
    match &*a.value(i) {
        Value::Arr(x) => Ok(x.clone()),
        other => type_error(format!(
            "{}(): Argument #{} must be of type array, {} given",
            a.name(),
            i + 1,
            crate::types::type_name(other)
        )),
    }
}

/// Arguments `from..` of a variadic `array ...$arrays` parameter.
fn variadic_arrays(a: &Args, from: usize) -> VmResult<Vec<Rc<PhpArray>>> {
    (from..a.len()).map(|i| variadic_array(a, i)).collect()
}

/// A key from a value the way `array_combine`/`array_fill_keys` make
/// one: ints stay, anything else goes through its string form.
fn key_from_value<G: Globals>(g: G, v: &Value) -> VmResult<Key> {
    match v {
        Value::Int(n) => Ok(Key::Int(*n)),
        Value::Ref(r) => {
            let inner = r.get();
            key_from_value(g, &inner)
        }
        other => Ok(Key::from_php_str(crate::ops::to_str(g, other)?)),
    }
}

fn count<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mode = a.opt_int(g, 1, 0)?;
    if mode != 0 && mode != 1 {
        return a.value_error(1, "must be either COUNT_NORMAL or COUNT_RECURSIVE");
    }
    let v = a.value(0);
    match &*v {
        Value::Arr(arr) => {
            let n = if mode == 1 {
                count_recursive(g, arr, &mut hashbrown::HashSet::new(), &mut Ticker::new())?
            } else {
                arr.len()
            };
            Ok(Value::Int(n as i64))
        }
        // A `Countable`'s `count()`.
        Value::Obj(o) if crate::objects::implements(o, b"Countable") => {
            let o = o.clone();
            drop(v);
            let m = o.class.method(b"count").cloned();
            match m {
                Some(m) => Ok(Value::Int(
                    crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())?.to_int(),
                )),
                None => Ok(Value::Int(1)),
            }
        }
        other => type_error(format!(
            "{}(): Argument #1 ($value) must be of type Countable|array, {} given",
            a.name(),
            crate::types::type_name(other)
        )),
    }
}

/// `count($a, COUNT_RECURSIVE)`; `active` holds the arrays being counted,
/// so an array reached again through a reference is reported, not looped.
/// An array shared many times over is counted each time it is reached,
/// which can be far more elements than memory holds: the time limit is
/// checked as they are counted.
fn count_recursive<G: Globals>(
    g: G,
    a: &Rc<PhpArray>,
    active: &mut hashbrown::HashSet<*const PhpArray>,
    ticker: &mut Ticker,
) -> VmResult<usize> {
    let me = Rc::as_ptr(a);
    if !active.insert(me) {
        warning(g, "count(): Recursion detected");
        return Ok(0);
    }
    let mut n = a.len();
    for v in a.values() {
        ticker.tick(g)?;
        let inner = match v {
            Value::Arr(x) => Some(x.clone()),
            Value::Ref(r) => match &*r.borrow() {
                Value::Arr(x) => Some(x.clone()),
                _ => None,
            },
            _ => None,
        };
        if let Some(inner) = inner {
            n += count_recursive(g, &inner, active, ticker)?;
        }
    }
    active.remove(&me);
    Ok(n)
}

fn range<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let start = a.get(0);
    let end = a.get(1);
    let (mut step, step_is_float) = if a.has(2) {
        match a.number(g, 2)? {
            Number::Int(n) => (n as f64, false),
            Number::Float(f) => (f, true),
        }
    } else {
        (1.0, false)
    };
    if step < 0.0 {
        step = -step;
    }
    if let (Value::Str(s), Value::Str(e)) = (&start, &end) {
        if !s.is_empty() && !e.is_empty() {
            let t1 = numfmt::is_numeric_str(s);
            let t2 = numfmt::is_numeric_str(e);
            let is_float = |t: &Option<Number>| matches!(t, Some(Number::Float(_)));
            if is_float(&t1) || is_float(&t2) || step_is_float {
                return range_float(g, a, start.to_float(), end.to_float(), step);
            }
            if t1.is_some() || t2.is_some() {
                return range_int(g, a, start.to_int(), end.to_int(), step);
            }
            return range_chars(a, s[0], e[0], step);
        }
    }
    if matches!(start, Value::Float(_)) || matches!(end, Value::Float(_)) || step_is_float {
        return range_float(g, a, start.to_float(), end.to_float(), step);
    }
    range_int(g, a, start.to_int(), end.to_int(), step)
}

fn range_step_error<T>(a: &Args) -> VmResult<T> {
    a.value_error(2, "must not exceed the specified range")
}

/// `range('a', 'e')`: single bytes, never stepping past 0 or 255.
fn range_chars(a: &Args, low: u8, high: u8, step: f64) -> VmResult<Value> {
    let lstep = step as i64;
    let (low, high) = (i64::from(low), i64::from(high));
    let mut out = Vec::new();
    if low > high {
        if low - high < lstep || lstep <= 0 {
            return range_step_error(a);
        }
        let mut c = low;
        while c >= high {
            out.push(Value::Str(PhpStr::one_byte(c as u8)));
            if c - lstep < 0 {
                break;
            }
            c -= lstep;
        }
    } else if high > low {
        if high - low < lstep || lstep <= 0 {
            return range_step_error(a);
        }
        let mut c = low;
        while c <= high {
            out.push(Value::Str(PhpStr::one_byte(c as u8)));
            if c + lstep > 255 {
                break;
            }
            c += lstep;
        }
    } else {
        out.push(Value::Str(PhpStr::one_byte(low as u8)));
    }
    Ok(Value::arr(PhpArray::from_list(out)))
}

/// `%0.0f` as PHP's formatter writes it (infinities lose their sign).
fn fmt_f0(f: f64) -> String {
    if f.is_infinite() {
        "inf".into()
    } else if f.is_nan() {
        "nan".into()
    } else {
        format!("{f:.0}")
    }
}

fn range_float<G: Globals>(g: G, a: &Args, low: f64, high: f64, step: f64) -> VmResult<Value> {
    if low.is_infinite() || high.is_infinite() {
        return crate::error::value_error(format!(
            "Invalid range supplied: start={} end={}",
            fmt_f0(low),
            fmt_f0(high)
        ));
    }
    let descending = low > high;
    let ascending = high > low;
    // Equal bounds, or a NaN: a single element.
    if !descending && !ascending {
        return Ok(Value::arr(PhpArray::from_list(vec![Value::Float(low)])));
    }
    let span = if descending { low - high } else { high - low };
    if span < step || step <= 0.0 {
        return range_step_error(a);
    }
    let calc = span / step + 1.0;
    if calc >= HT_MAX_SIZE as f64 {
        let (first, second) = if descending { (high, low) } else { (low, high) };
        return crate::error::value_error(format!(
            "The supplied range exceeds the maximum array size: start={} end={}",
            fmt_f0(first),
            fmt_f0(second)
        ));
    }
    let size = numfmt::php_round(calc, 0) as u32;
    reserve(g, packed_bytes(u64::from(size)))?;
    let mut out = values_with_capacity(size as usize)?;
    for i in 0..size {
        let x = if descending {
            low - f64::from(i) * step
        } else {
            low + f64::from(i) * step
        };
        if (descending && x < high) || (!descending && x > high) {
            break;
        }
        out.push(Value::Float(x));
    }
    Ok(Value::arr(PhpArray::from_list(out)))
}

fn range_int<G: Globals>(g: G, a: &Args, low: i64, high: i64, step: f64) -> VmResult<Value> {
    if step <= 0.0 || step.is_nan() {
        return range_step_error(a);
    }
    let lstep = step as u64;
    if lstep == 0 {
        return range_step_error(a);
    }
    if low == high {
        return Ok(Value::arr(PhpArray::from_list(vec![Value::Int(low)])));
    }
    let descending = low > high;
    let span = if descending {
        (low as u64).wrapping_sub(high as u64)
    } else {
        (high as u64).wrapping_sub(low as u64)
    };
    if span < lstep {
        return range_step_error(a);
    }
    let calc = span / lstep;
    if calc >= HT_MAX_SIZE - 1 {
        let (first, second) = if descending { (high, low) } else { (low, high) };
        return crate::error::value_error(format!(
            "The supplied range exceeds the maximum array size: start={first} end={second}"
        ));
    }
    let size = calc + 1;
    reserve(g, packed_bytes(size))?;
    let mut out = values_with_capacity(size as usize)?;
    for i in 0..size {
        let off = i.wrapping_mul(lstep);
        let x = if descending {
            (low as u64).wrapping_sub(off)
        } else {
            (low as u64).wrapping_add(off)
        };
        out.push(Value::Int(x as i64));
    }
    Ok(Value::arr(PhpArray::from_list(out)))
}

/// Whether `v` matches `needle` by `==`, or `===` when strict.
#[inline(always)]
fn matches(v: &Value, needle: &Value, strict: bool) -> VmResult<bool> {
    Ok(if strict {
        identical(v, needle)?
    } else {
        loose_equals(&v.deref(), needle)?
    })
}

/// How many steps comparing `needle` with a value can take, at most
/// about: a comparison walks a string or an array's elements.
pub(super) fn compare_steps(needle: &Value) -> usize {
    match needle {
        Value::Arr(a) => 1 + a.len(),
        Value::Str(s) => 1 + s.len() / Ticker::BYTES_PER_STEP,
        _ => 1,
    }
}

/// The key of the first element of `hay` equal to `needle` (`==`, or
/// `===` when strict). A comparison can take as long as the arrays it
/// compares, so the time limit is checked as it goes.
fn search<'a, G: Globals>(g: G, hay: &'a PhpArray, needle: &Value, strict: bool) -> VmResult<Option<KeyRef<'a>>> {
    let mut ticker = Ticker::new();
    let steps = compare_steps(needle);
    for (k, v) in hay.iter() {
        ticker.tick_by(g, steps)?;
        if matches(v, needle, strict)? {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

fn in_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let needle = a.get(0);
    let hay = a.array(1)?;
    let strict = a.opt_bool(g, 2, false)?;
    Ok(Value::Bool(search(g, &hay, &needle, strict)?.is_some()))
}

fn array_search<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let needle = a.get(0);
    let hay = a.array(1)?;
    let strict = a.opt_bool(g, 2, false)?;
    Ok(search(g, &hay, &needle, strict)?.map_or(Value::Bool(false), KeyRef::to_value))
}

fn array_keys<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let strict = a.opt_bool(g, 2, false)?;
    if arr.is_empty() {
        return Ok(Value::Arr(arr));
    }
    let keys: Vec<Value> = if a.has(1) {
        let needle = a.get(1);
        let mut keys = Vec::new();
        let mut ticker = Ticker::new();
        let steps = compare_steps(&needle);
        for (k, v) in arr.iter() {
            ticker.tick_by(g, steps)?;
            if matches(v, &needle, strict)? {
                keys.push(k.to_value());
            }
        }
        keys
    } else {
        arr.iter().map(|(k, _)| k.to_value()).collect()
    };
    Ok(Value::arr(PhpArray::from_list(keys)))
}

fn array_values<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    if arr.is_empty() {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    // A list is returned as it is, references and all (PHP's
    // `RETURN_COPY`): `$a = array_values($a)` inside a foreach by
    // reference leaves the loop on the same array.
    if arr.is_packed() && arr.next_free() == arr.len() as i64 {
        return Ok(Value::Arr(arr));
    }
    Ok(Value::arr(PhpArray::from_list(arr.values().map(elem).collect())))
}

/// `array_merge`'s rule: string keys overwrite, int keys append.
fn merge_into<G: Globals>(g: G, out: &mut PhpArray, src: &PhpArray, ticker: &mut Ticker) -> VmResult<()> {
    for (k, v) in src.iter() {
        ticker.tick(g)?;
        match k {
            KeyRef::Str(s) => out.insert(Key::Str(s.clone()), elem(v)),
            KeyRef::Int(_) => {
                if out.push(elem(v)).is_err() {
                    return cannot_add();
                }
            }
        }
    }
    Ok(())
}

fn cannot_add<T>() -> VmResult<T> {
    error("Cannot add element to the array as the next element is already occupied")
}

/// The elements of `arrays` together, as PHP counts them before it
/// merges (an unpacked argument list may hold one array many times):
/// PHP's error past `HT_MAX_SIZE`, and the memory limit checked for the
/// result's table, packed when the first array is.
fn check_merged_size<G: Globals>(g: G, arrays: &[Rc<PhpArray>]) -> VmResult<()> {
    let total = arrays.iter().fold(0u64, |n, x| n.saturating_add(x.len() as u64));
    if total >= HT_MAX_SIZE {
        return error(format!("The total number of elements must be lower than {HT_MAX_SIZE}"));
    }
    match arrays.first() {
        Some(first) if first.is_packed() => reserve(g, packed_bytes(total)),
        _ => reserve(g, hash_bytes(total)),
    }
}

fn array_merge<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arrays = variadic_arrays(a, 0)?;
    if arrays.iter().all(|x| x.is_empty()) {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    check_merged_size(g, &arrays)?;
    let mut ticker = Ticker::new();
    let mut out = PhpArray::new();
    for src in &arrays {
        merge_into(g, &mut out, src, &mut ticker)?;
    }
    Ok(Value::arr(out))
}

fn array_merge_recursive<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arrays = variadic_arrays(a, 0)?;
    let Some((first, rest)) = arrays.split_first().filter(|_| arrays.iter().any(|x| !x.is_empty())) else {
        return Ok(Value::arr(PhpArray::empty_literal()));
    };
    check_merged_size(g, &arrays)?;
    let mut ticker = Ticker::new();
    let mut out = PhpArray::new();
    merge_into(g, &mut out, first, &mut ticker)?;
    for src in rest {
        merge_recursive(g, &mut out, src, &mut hashbrown::HashSet::new(), &mut ticker)?;
    }
    Ok(Value::arr(out))
}

/// `array_merge_recursive`'s merge of `src` into `dest`; `active` holds
/// the source arrays being merged, so one that contains itself (through a
/// reference) is an error rather than an endless descent.
fn merge_recursive<G: Globals>(
    g: G,
    dest: &mut PhpArray,
    src: &Rc<PhpArray>,
    active: &mut hashbrown::HashSet<*const PhpArray>,
    ticker: &mut Ticker,
) -> VmResult<()> {
    if !active.insert(Rc::as_ptr(src)) {
        return error("Recursion detected");
    }
    for (k, v) in src.iter() {
        ticker.tick(g)?;
        let KeyRef::Str(s) = k else {
            if dest.push(elem(v)).is_err() {
                return cannot_add();
            }
            continue;
        };
        let key = Key::Str(s.clone());
        let Some(existing) = dest.get_mut(&key) else {
            dest.insert(key, elem(v));
            continue;
        };
        let mut target = match existing.deref_clone() {
            Value::Arr(x) => x,
            Value::Null => Rc::new(PhpArray::from_list(vec![Value::Null])),
            other => Rc::new(PhpArray::from_list(vec![other])),
        };
        match v.deref_clone() {
            Value::Arr(inner) => merge_recursive(g, Rc::make_mut(&mut target), &inner, active, ticker)?,
            other => {
                if Rc::make_mut(&mut target).push(other).is_err() {
                    return cannot_add();
                }
            }
        }
        if let Some(slot) = dest.get_mut(&key) {
            *slot = Value::Arr(target);
        }
    }
    active.remove(&Rc::as_ptr(src));
    Ok(())
}

fn array_replace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let first = a.array(0)?;
    let rest = variadic_arrays(a, 1)?;
    let mut out = (*first).clone();
    // An unpacked argument list can repeat a large array many times.
    let mut ticker = Ticker::new();
    for src in &rest {
        for (k, v) in src.iter() {
            ticker.tick(g)?;
            out.insert(k.to_key(), elem(v));
        }
    }
    Ok(Value::arr(out))
}

/// An element as `array_sum`/`array_product` see it: silently a number
/// (`None` for arrays and objects, which they skip).
fn silent_number(v: &Value) -> Option<Number> {
    match v {
        Value::Arr(_) | Value::Closure(_) => None,
        Value::Ref(r) => silent_number(&r.borrow()),
        other => Some(other.to_number().map_or(Number::Int(0), |(n, _)| n)),
    }
}

fn array_sum<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let mut acc = Number::Int(0);
    for v in arr.values() {
        let Some(n) = silent_number(v) else { continue };
        acc = match (acc, n) {
            (Number::Int(x), Number::Int(y)) => {
                x.checked_add(y).map_or(Number::Float(x as f64 + y as f64), Number::Int)
            }
            (x, y) => Number::Float(x.to_f64() + y.to_f64()),
        };
    }
    Ok(number_value(acc))
}

fn array_product<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let mut acc = Number::Int(1);
    for v in arr.values() {
        let Some(n) = silent_number(v) else { continue };
        acc = match (acc, n) {
            (Number::Int(x), Number::Int(y)) => {
                x.checked_mul(y).map_or(Number::Float(x as f64 * y as f64), Number::Int)
            }
            (x, y) => Number::Float(x.to_f64() * y.to_f64()),
        };
    }
    Ok(number_value(acc))
}

fn number_value(n: Number) -> Value {
    match n {
        Number::Int(i) => Value::Int(i),
        Number::Float(f) => Value::Float(f),
    }
}

fn array_push<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let values: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    a.with_array_ref(0, |arr| {
        for v in values {
            if arr.push(v).is_err() {
                return cannot_add();
            }
        }
        Ok(Value::Int(arr.len() as i64))
    })?
}

// The removed element is resolved once the array is no longer borrowed:
// it may be a reference to that very array (`$a[] = &$a`).
fn array_pop<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let popped = a.with_array_ref(0, |arr| {
        let next = arr.next_free();
        match arr.pop() {
            Some((key, v)) => {
                // The popped int key is free again if it was the last one
                // handed out.
                if let Key::Int(k) = key {
                    if next != i64::MIN && k == next.wrapping_sub(1) {
                        arr.set_next_free(k);
                    }
                }
                Some(v)
            }
            None => None,
        }
    })?;
    Ok(popped.map_or(Value::Null, |v| v.deref_clone()))
}

fn array_shift<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let shifted = a.with_array_ref(0, |arr| arr.shift())?;
    Ok(shifted.map_or(Value::Null, |v| v.deref_clone()))
}

fn array_unshift<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let values: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    a.with_array_ref(0, |arr| {
        arr.unshift(values);
        Value::Int(arr.len() as i64)
    })
}

/// An optional `?int` parameter (`None` when absent or null).
fn opt_nullable_int<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<Option<i64>> {
    if !a.has(i) || a.value(i).is_null() {
        Ok(None)
    } else {
        a.int(g, i).map(Some)
    }
}

fn array_slice<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let mut offset = a.int(g, 1)?;
    let length = opt_nullable_int(g, a, 2)?;
    let preserve = a.opt_bool(g, 3, false)?;
    let n = arr.len() as i64;
    let mut length = length.unwrap_or(n);
    if offset > n {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    if offset < 0 {
        offset = (n + offset).max(0);
    }
    if length < 0 {
        length += n - offset;
    } else if (offset as u64).saturating_add(length as u64) > n as u64 {
        length = n - offset;
    }
    if length <= 0 {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    let mut out = PhpArray::new();
    for (k, v) in arr.iter().skip(offset as usize).take(length as usize) {
        match k {
            KeyRef::Int(i) if preserve => out.insert(Key::Int(i), elem(v)),
            k => keep_str_key(&mut out, k, elem(v)),
        }
    }
    Ok(Value::arr(out))
}

fn array_splice<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let n = a.array(0)?.len() as i64;
    let mut offset = a.int(g, 1)?;
    let length = opt_nullable_int(g, a, 2)?;
    let replacement: Vec<Value> = if a.has(3) {
        match a.get(3) {
            Value::Arr(r) => r.values().map(elem).collect(),
            Value::Null => Vec::new(),
            other => vec![other],
        }
    } else {
        Vec::new()
    };
    let mut length = length.unwrap_or(n);
    if offset < 0 {
        offset = (n + offset).max(0);
    } else if offset > n {
        offset = n;
    }
    if length < 0 {
        length = (n - offset + length).max(0);
    } else if (offset as u64).saturating_add(length as u64) > n as u64 {
        length = n - offset;
    }
    let (offset, length) = (offset as usize, length as usize);
    a.with_array_ref(0, |arr| Value::arr(arr.splice(offset, length, replacement)))
}

fn array_reverse<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let preserve = a.opt_bool(g, 1, false)?;
    let pairs: Vec<_> = arr.iter().collect();
    let mut out = PhpArray::new();
    for (k, v) in pairs.into_iter().rev() {
        match k {
            KeyRef::Int(i) if preserve => out.insert(Key::Int(i), elem(v)),
            k => keep_str_key(&mut out, k, elem(v)),
        }
    }
    Ok(Value::arr(out))
}

fn array_flip<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let mut out = PhpArray::new();
    for (k, v) in arr.iter() {
        match &*v.deref() {
            Value::Int(n) => out.insert(Key::Int(*n), k.to_value()),
            Value::Str(s) => out.insert(Key::from_php_str(s.clone()), k.to_value()),
            _ => warning(
                g,
                "array_flip(): Can only flip string and integer values, entry skipped",
            ),
        }
    }
    Ok(Value::arr(out))
}

fn array_fill<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let start = a.int(g, 0)?;
    let num = a.int(g, 1)?;
    let v = a.get(2);
    if num < 0 {
        return a.value_error(1, "must be greater than or equal to 0");
    }
    if num == 0 {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    if num > i64::from(i32::MAX) {
        return a.value_error(1, "is too large");
    }
    if start > i64::MAX - num + 1 {
        return cannot_add();
    }
    if (0..num).contains(&start) {
        reserve(g, packed_bytes((start + num) as u64))?;
    } else {
        reserve(g, hash_bytes(num as u64))?;
    }
    if start == 0 {
        let mut out = values_with_capacity(num as usize)?;
        out.resize(num as usize, v);
        return Ok(Value::arr(PhpArray::from_list(out)));
    }
    let mut out = PhpArray::new();
    for i in 0..num {
        out.insert(Key::Int(start + i), v.clone());
    }
    Ok(Value::arr(out))
}

fn array_fill_keys<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let keys = a.array(0)?;
    let v = a.get(1);
    let mut out = PhpArray::new();
    for k in keys.values() {
        out.insert(key_from_value(g, k)?, v.clone());
    }
    Ok(Value::arr(out))
}

fn array_pad<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let size = a.int(g, 1)?;
    let v = a.get(2);
    let n = arr.len() as i64;
    let abs = size.checked_abs().unwrap_or(-1);
    if abs < 0 || abs - n > 1_048_576 {
        return a.value_error(1, "must be less than or equal to 1048576");
    }
    if n >= abs {
        return Ok(Value::Arr(arr));
    }
    let pads = (abs - n) as usize;
    let mut out = PhpArray::new();
    if size < 0 {
        for _ in 0..pads {
            let _ = out.push(v.clone());
        }
    }
    for (k, e) in arr.iter() {
        keep_str_key(&mut out, k, elem(e));
    }
    if size > 0 {
        for _ in 0..pads {
            let _ = out.push(v.clone());
        }
    }
    Ok(Value::arr(out))
}

fn array_chunk<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let size = a.int(g, 1)?;
    let preserve = a.opt_bool(g, 2, false)?;
    if size < 1 {
        return a.value_error(1, "must be greater than 0");
    }
    if arr.is_empty() {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    let size = size.min(arr.len() as i64) as usize;
    let mut out = PhpArray::new();
    let mut chunk = PhpArray::new();
    // Small chunks take far more memory than the elements they hold.
    let mut ticker = Ticker::new();
    for (k, v) in arr.iter() {
        ticker.tick(g)?;
        if preserve {
            chunk.insert(k.to_key(), elem(v));
        } else {
            let _ = chunk.push(elem(v));
        }
        if chunk.len() == size {
            let _ = out.push(Value::arr(std::mem::take(&mut chunk)));
        }
    }
    if !chunk.is_empty() {
        let _ = out.push(Value::arr(chunk));
    }
    Ok(Value::arr(out))
}

fn array_combine<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let keys = a.array(0)?;
    let values = a.array(1)?;
    if keys.len() != values.len() {
        return a.value_error(0, "and argument #2 ($values) must have the same number of elements");
    }
    if keys.is_empty() {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    let mut out = PhpArray::new();
    for (k, v) in keys.values().zip(values.values()) {
        out.insert(key_from_value(g, k)?, elem(v));
    }
    Ok(Value::arr(out))
}

fn array_key_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let key = a.get(0);
    let arr = a.array(1)?;
    let key = crate::dim::to_key(g, &key)?;
    Ok(Value::Bool(arr.contains_key(&key)))
}

fn array_key_first<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    Ok(arr.iter().next().map_or(Value::Null, |(k, _)| k.to_value()))
}

fn array_key_last<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    Ok(arr.iter().last().map_or(Value::Null, |(k, _)| k.to_value()))
}

fn array_is_list<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(a.array(0)?.is_list()))
}

fn array_map<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callback = a.opt_callable(g, 0)?;
    if a.len() == 2 {
        let arr = a.array(1)?;
        let Some(callback) = callback.filter(|_| !arr.is_empty()) else {
            return Ok(Value::Arr(arr));
        };
        let mut out = PhpArray::new();
        for (k, v) in arr.iter() {
            let r = call_resolved(g, &callback, vec![v.deref_clone()])?;
            out.insert(k.to_key(), r);
        }
        return Ok(Value::arr(out));
    }
    let mut arrays = Vec::with_capacity(a.len() - 1);
    for i in 1..a.len() {
        arrays.push(if i == 1 { a.array(i)? } else { variadic_array(a, i)? });
    }
    let longest = arrays.iter().map(|x| x.len()).max().unwrap_or(0);
    let mut iters: Vec<_> = arrays.iter().map(|x| x.values()).collect();
    let mut out = Vec::with_capacity(longest);
    // A row per element: an array each, far larger than the elements.
    let mut ticker = Ticker::new();
    for _ in 0..longest {
        ticker.tick_by(g, iters.len())?;
        let row: Vec<Value> = iters
            .iter_mut()
            .map(|it| it.next().map_or(Value::Null, |v| v.clone()))
            .collect();
        out.push(match &callback {
            None => Value::arr(PhpArray::from_list(row.iter().map(elem).collect())),
            Some(cb) => call_resolved(g, cb, row.iter().map(Value::deref_clone).collect())?,
        });
    }
    Ok(Value::arr(PhpArray::from_list(out)))
}

fn array_filter<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let callback = a.opt_callable(g, 1)?;
    let mode = a.opt_int(g, 2, 0)?;
    if arr.is_empty() {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    let mut out = PhpArray::new();
    for (k, v) in arr.iter() {
        let keep = match &callback {
            None => v.to_bool(),
            Some(cb) => {
                let args = match mode {
                    2 => vec![k.to_value()],
                    1 => vec![v.deref_clone(), k.to_value()],
                    _ => vec![v.deref_clone()],
                };
                call_resolved(g, cb, args)?.to_bool()
            }
        };
        if keep {
            out.insert(k.to_key(), elem(v));
        }
    }
    Ok(Value::arr(out))
}

fn array_reduce<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let callback = a.callable(g, 1)?;
    let mut acc = a.get(2);
    for v in arr.values() {
        acc = call_resolved(g, &callback, vec![acc, v.deref_clone()])?;
    }
    Ok(acc)
}

fn array_walk<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    match objprops::object_arg(a, 0) {
        Some(o) => objprops::with_properties(g, a, 0, &o, walk_array),
        None => walk_array(g, a),
    }
}

/// `array_walk` of an array (or of an object's property table).
fn walk_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    a.array(0)?;
    let callback = a.callable(g, 1)?;
    let extra = a.has(2).then(|| a.get(2));
    let by_ref = crate::call::param_by_ref(g, &callback, 0);
    // Walk by position in the live array, as PHP's hash iterator does:
    // elements the callback adds are visited, removed ones are not.
    let mut pos = 0;
    loop {
        let step = a.with_ref(0, |slot| {
            if by_ref {
                let arr = slot.array_mut()?;
                let (p, k, _) = arr.at_or_after(pos)?;
                let key = k.to_key();
                let v = arr.value_at_mut(p)?;
                Some(Some((p, key, Value::Ref(crate::gc::slot_ref(g, v)))))
            } else {
                let Value::Arr(arr) = slot else { return None };
                Some(arr.at_or_after(pos).map(|(p, k, v)| {
                    let v = match v {
                        // A reference to the array being walked is borrowed
                        // here: its value is this array.
                        Value::Ref(r) if r.try_borrow().is_err() => Value::Arr(arr.clone()),
                        v => v.deref_clone(),
                    };
                    (p, k.to_key(), v)
                }))
            }
        });
        let (p, key, arg) = match step {
            Some(Some(step)) => step,
            Some(None) => break,
            None if matches!(a.value(0).as_ref(), Value::Arr(_)) => break,
            None => return type_error("Iterated value is no longer an array or object"),
        };
        // A callback that appends on every call never lets the walk end;
        // PHP stops when the array's next doubling passes memory_limit.
        let len = match a.value(0).as_ref() {
            Value::Arr(x) => x.len(),
            _ => 0,
        };
        if len >= 8 && len.is_power_of_two() {
            reserve(g, len.saturating_mul(16))?;
        }
        let mut args = vec![arg, key.to_value()];
        if let Some(x) = &extra {
            args.push(x.clone());
        }
        call_resolved(g, &callback, args)?;
        let next = a.with_ref(0, |slot| {
            let Value::Arr(_) = slot else { return None };
            let arr = slot.array_mut()?;
            let at = arr.position_of(&key);
            if let Some(v) = at.and_then(|q| arr.value_at_mut(q)) {
                // Unwrap the reference again if only the array holds it,
                // so copies of the array do not share the element.
                if let Value::Ref(r) = v {
                    if r.count() == 1 {
                        let inner = r.get();
                        *v = inner;
                    }
                }
            }
            Some(at.map_or(p + 1, |q| q + 1))
        });
        match next {
            Some(next) => pos = next,
            None => return type_error("Iterated value is no longer an array or object"),
        }
    }
    Ok(Value::Bool(true))
}

fn array_unique<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let flags = a.opt_int(g, 1, 2)?;
    if arr.len() <= 1 {
        return Ok(Value::Arr(arr));
    }
    if flags == 2 {
        // Equal string forms are duplicates. An int's string form is its
        // decimal text, so ints (and strings that are exactly such text)
        // are keyed by number, which saves building the text.
        let mut seen_ints = hashbrown::HashSet::new();
        let mut seen_strs = hashbrown::HashSet::new();
        let mut out = PhpArray::new();
        for (k, v) in arr.iter() {
            let first = match &*v.deref() {
                Value::Int(n) => seen_ints.insert(*n),
                other => {
                    let s = crate::ops::to_str(g, other)?;
                    match minizts_core::array::canonical_int(&s) {
                        Some(n) => seen_ints.insert(n),
                        None => seen_strs.insert(s),
                    }
                }
            };
            if first {
                out.insert(k.to_key(), elem(v));
            }
        }
        return Ok(Value::arr(out));
    }
    sort::unique_by_flags(g, &arr, flags)
}

fn array_count_values<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let mut out = PhpArray::new();
    for v in arr.values() {
        let key = match &*v.deref() {
            Value::Int(n) => Key::Int(*n),
            Value::Str(s) => Key::from_php_str(s.clone()),
            _ => {
                warning(
                    g,
                    "array_count_values(): Can only count string and integer values, entry skipped",
                );
                continue;
            }
        };
        let (slot, existed) = out.entry(key);
        *slot = Value::Int(if existed { slot.to_int() + 1 } else { 1 });
    }
    Ok(Value::arr(out))
}

/// The first array and the others of a diff/intersect call.
fn set_operands(a: &Args) -> VmResult<(Rc<PhpArray>, Vec<Rc<PhpArray>>)> {
    let first = a.array(0)?;
    let rest = variadic_arrays(a, 1)?;
    Ok((first, rest))
}

/// The string forms of an array's values (diff/intersect compare those).
fn string_set<G: Globals>(g: G, arr: &PhpArray, ticker: &mut Ticker) -> VmResult<hashbrown::HashSet<Vec<u8>>> {
    arr.values()
        .map(|v| {
            ticker.tick(g)?;
            crate::ops::to_str(g, &v.deref()).map(|s| s.as_bytes().to_vec())
        })
        .collect()
}

/// Keeps the elements of the first array for which `keep(key, value,
/// other)` holds against every other array (`all`) or against none. The
/// tests grow with the first array's size times the number of others (an
/// unpacked argument list can make that large), so they are counted.
fn filter_first<G: Globals>(
    g: G,
    a: &Args,
    all: bool,
    mut test: impl FnMut(G, KeyRef<'_>, &Value, usize) -> VmResult<bool>,
) -> VmResult<Value> {
    let (first, rest) = set_operands(a)?;
    let mut ticker = Ticker::new();
    let mut out = PhpArray::new();
    'elements: for (k, v) in first.iter() {
        for i in 0..rest.len() {
            ticker.tick(g)?;
            let hit = test(g, k, v, i)?;
            if all && !hit {
                continue 'elements;
            }
            if !all && hit {
                continue 'elements;
            }
        }
        out.insert(k.to_key(), elem(v));
    }
    Ok(Value::arr(out))
}

fn array_diff<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (first, rest) = set_operands(a)?;
    // PHP's shortcuts show in what it returns: the shared empty array, or
    // the first array itself (with its next free key).
    if first.is_empty() {
        return Ok(Value::arr(PhpArray::empty_literal()));
    }
    // The others together can be far more elements than memory holds (one
    // array unpacked many times), so the loops over them are counted.
    let mut ticker = Ticker::new();
    if first.len() == 1 {
        let only = first.values().next().map(Value::deref_clone).unwrap_or(Value::Null);
        let needle = crate::ops::to_str(g, &only)?;
        for other in &rest {
            for v in other.values() {
                ticker.tick(g)?;
                if crate::ops::to_str(g, &v.deref())?.as_bytes() == needle.as_bytes() {
                    return Ok(Value::arr(PhpArray::empty_literal()));
                }
            }
        }
        return Ok(Value::Arr(first));
    }
    if rest.iter().all(|r| r.is_empty()) {
        return Ok(Value::Arr(first));
    }
    let mut exclude = hashbrown::HashSet::new();
    for other in &rest {
        for v in other.values() {
            ticker.tick(g)?;
            exclude.insert(crate::ops::to_str(g, &v.deref())?);
        }
    }
    let mut out = PhpArray::new();
    for (k, v) in first.iter() {
        if !exclude.contains(&crate::ops::to_str(g, &v.deref())?) {
            out.insert(k.to_key(), elem(v));
        }
    }
    Ok(Value::arr(out))
}

fn array_intersect<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (first, rest) = set_operands(a)?;
    // The others can be one array unpacked many times: counted, as in
    // `filter_first`.
    let mut ticker = Ticker::new();
    let sets = rest
        .iter()
        .map(|r| string_set(g, r, &mut ticker))
        .collect::<VmResult<Vec<_>>>()?;
    // PHP removes from a copy of the first array (keeping its next free key).
    let mut out = (*first).clone();
    for (k, v) in first.iter() {
        ticker.tick_by(g, sets.len())?;
        let s = crate::ops::to_str(g, &v.deref())?;
        if !sets.iter().all(|set| set.contains(s.as_bytes())) {
            out.remove(&k.to_key());
        }
    }
    Ok(Value::arr(out))
}

fn array_diff_key<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (_, rest) = set_operands(a)?;
    filter_first(g, a, false, |_, k, _, i| Ok(rest[i].contains_key(&k.to_key())))
}

fn array_intersect_key<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (_, rest) = set_operands(a)?;
    filter_first(g, a, true, |_, k, _, i| Ok(rest[i].contains_key(&k.to_key())))
}

/// Whether `other` has key `k` with a value of the same string form.
fn assoc_hit<G: Globals>(g: G, other: &PhpArray, k: KeyRef<'_>, v: &Value) -> VmResult<bool> {
    let Some(w) = other.get(&k.to_key()) else {
        return Ok(false);
    };
    let x: PhpStr = crate::ops::to_str(g, &v.deref())?;
    let y: PhpStr = crate::ops::to_str(g, &w.deref())?;
    Ok(x.as_bytes() == y.as_bytes())
}

fn array_diff_assoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (_, rest) = set_operands(a)?;
    filter_first(g, a, false, |g, k, v, i| assoc_hit(g, &rest[i], k, v))
}

fn array_intersect_assoc<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (_, rest) = set_operands(a)?;
    filter_first(g, a, true, |g, k, v, i| assoc_hit(g, &rest[i], k, v))
}

fn array_change_key_case<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let upper = a.opt_int(g, 1, 0)? != 0;
    let mut out = PhpArray::with_capacity(arr.len());
    for (k, v) in arr.iter() {
        match k {
            KeyRef::Int(n) => out.insert(Key::Int(n), elem(v)),
            // A string key stays a string key, whatever its new case.
            KeyRef::Str(s) => {
                let s = if upper {
                    s.to_ascii_uppercase()
                } else {
                    s.to_ascii_lowercase()
                };
                out.insert(Key::Str(PhpStr::new(s)), elem(v));
            }
        }
    }
    Ok(Value::arr(out))
}
