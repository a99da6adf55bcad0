//! Replacing: str_replace, str_ireplace, strtr, substr_replace.

use std::collections::HashMap;

use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use super::search::find_all;
use super::{arg_type_error, safe_alloc, set_ref, str_or_array, str_value, StrOrArray};
use crate::builtins::Args;
use crate::error::{type_error, warning, VmResult};
use crate::limits::Ticker;

/// Replaces every non-overlapping `search` (non-empty) in `subject`,
/// scanning left to right; `None` when nothing matched. `fold` compares
/// ASCII case-insensitively (str_ireplace).
fn replace_all<G: Globals>(
    g: G,
    subject: &[u8],
    search: &[u8],
    repl: &[u8],
    fold: bool,
    count: &mut i64,
) -> VmResult<Option<Vec<u8>>> {
    let lowered;
    let (hay, needle): (&[u8], Vec<u8>) = if fold {
        lowered = subject.to_ascii_lowercase();
        (&lowered, search.to_ascii_lowercase())
    } else {
        (subject, search.to_vec())
    };
    // One call per search and subject: a call with many searches, or
    // many subjects, stops here at a limit.
    crate::limits::check(g)?;
    // Counted first, so the result is sized (and checked) before it is
    // made, as PHP does, without a list of the matches.
    let hits = find_all(hay, &needle).count();
    if hits == 0 {
        return Ok(None);
    }
    let mut out = if repl.len() > needle.len() {
        safe_alloc(g, hits, repl.len() - needle.len(), subject.len())?
    } else {
        Vec::with_capacity(subject.len() - hits * (needle.len() - repl.len()))
    };
    let mut last = 0;
    for h in find_all(hay, &needle) {
        out.extend_from_slice(&subject[last..h]);
        out.extend_from_slice(repl);
        last = h + needle.len();
    }
    out.extend_from_slice(&subject[last..]);
    *count += hits as i64;
    Ok(Some(out))
}

/// One subject string through every search/replace pair.
fn replace_in_subject<G: Globals>(
    g: G,
    search: &StrOrArray,
    replace: &StrOrArray,
    subject: PhpStr,
    fold: bool,
    count: &mut i64,
) -> VmResult<PhpStr> {
    if subject.is_empty() {
        return Ok(subject);
    }
    match search {
        StrOrArray::Str(s) => {
            let StrOrArray::Str(r) = replace else {
                return Ok(subject);
            };
            if s.is_empty() {
                return Ok(subject);
            }
            Ok(replace_all(g, &subject, s, r, fold, count)?.map_or(subject, PhpStr::new))
        }
        StrOrArray::Arr(searches) => {
            let mut current = subject;
            let mut repl_values = match replace {
                StrOrArray::Arr(r) => Some(r.values()),
                StrOrArray::Str(_) => None,
            };
            for entry in searches.values() {
                let s = crate::ops::to_str(g, &entry.deref())?;
                // The replacement is taken (and converted) even for an
                // empty search, which then does nothing.
                let r = match (&mut repl_values, replace) {
                    (Some(it), _) => match it.next() {
                        Some(v) => crate::ops::to_str(g, &v.deref())?,
                        None => PhpStr::empty(),
                    },
                    (None, StrOrArray::Str(r)) => r.clone(),
                    (None, StrOrArray::Arr(_)) => PhpStr::empty(),
                };
                if s.is_empty() {
                    continue;
                }
                if let Some(out) = replace_all(g, &current, &s, &r, fold, count)? {
                    current = PhpStr::new(out);
                }
                if current.is_empty() {
                    break;
                }
            }
            Ok(current)
        }
    }
}

fn str_replace_impl<G: Globals>(g: G, a: &mut Args, fold: bool) -> VmResult<Value> {
    let search = str_or_array(g, a, 0)?;
    let replace = str_or_array(g, a, 1)?;
    let subject = str_or_array(g, a, 2)?;
    if matches!((&search, &replace), (StrOrArray::Str(_), StrOrArray::Arr(_))) {
        return type_error(format!(
            "{}(): Argument #2 ($replace) must be of type string when argument #1 ($search) is a string",
            a.name()
        ));
    }
    let mut count = 0;
    let result = match subject {
        StrOrArray::Str(s) => Value::Str(replace_in_subject(g, &search, &replace, s, fold, &mut count)?),
        StrOrArray::Arr(items) => {
            let mut out = PhpArray::with_capacity(items.len());
            for (k, v) in items.iter() {
                let s = crate::ops::to_str(g, &v.deref())?;
                let r = replace_in_subject(g, &search, &replace, s, fold, &mut count)?;
                out.insert(k.to_key(), Value::Str(r));
            }
            Value::arr(out)
        }
    };
    set_ref(a, 3, Value::Int(count));
    Ok(result)
}

pub(super) fn str_replace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    str_replace_impl(g, a, false)
}

pub(super) fn str_ireplace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    str_replace_impl(g, a, true)
}

pub(super) fn strtr<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let from = str_or_array(g, a, 1)?;
    let to = super::opt_nullable_str(g, a, 2, b"")?;
    let has_to = a.has(2) && !a.value(2).is_null();
    match (&from, has_to) {
        (StrOrArray::Str(_), false) => {
            return type_error("strtr(): Argument #2 ($from) must be of type array, string given")
        }
        (StrOrArray::Arr(_), true) => {
            return type_error("strtr(): Argument #2 ($from) must be of type string, array given")
        }
        _ => {}
    }
    if s.is_empty() {
        return Ok(Value::Str(s));
    }
    let pairs = match from {
        StrOrArray::Str(from) => {
            let n = from.len().min(to.len());
            let mut map: [u8; 256] = std::array::from_fn(|i| i as u8);
            for i in 0..n {
                map[from[i] as usize] = to[i];
            }
            return Ok(str_value(s.iter().map(|&c| map[c as usize]).collect()));
        }
        StrOrArray::Arr(pairs) => pairs,
    };
    if pairs.is_empty() {
        return Ok(Value::Str(s));
    }
    if pairs.len() == 1 {
        // PHP's single-pair shortcut converts the value up front.
        let Some((k, v)) = pairs.iter().next() else {
            return Ok(Value::Str(s));
        };
        let key = crate::ops::to_str(g, &k.to_value())?;
        let repl = crate::ops::to_str(g, &v.deref())?;
        if key.is_empty() {
            warning(g, "strtr(): Ignoring replacement of empty string");
            return Ok(Value::Str(s));
        }
        let mut count = 0;
        return Ok(replace_all(g, &s, &key, &repl, false, &mut count)?.map_or(Value::Str(s), str_value));
    }
    let mut map: HashMap<Vec<u8>, Value> = HashMap::new();
    let mut lens: Vec<usize> = Vec::new();
    for (k, v) in pairs.iter() {
        let key = crate::ops::to_str(g, &k.to_value())?;
        if key.is_empty() {
            warning(g, "strtr(): Ignoring replacement of empty string");
            continue;
        }
        if key.len() > s.len() {
            continue;
        }
        if !lens.contains(&key.len()) {
            lens.push(key.len());
        }
        map.insert(key.to_vec(), v.deref_clone());
    }
    if map.is_empty() {
        return Ok(Value::Str(s));
    }
    lens.sort_unstable_by(|x, y| y.cmp(x));
    let mut out = Vec::with_capacity(s.len());
    let mut pos = 0;
    // Each position may try every key length, and each match may write a
    // long replacement: the time and the result grow with products of
    // the inputs.
    let mut ticker = Ticker::new();
    'scan: while pos < s.len() {
        for &len in &lens {
            if len > s.len() - pos {
                continue;
            }
            ticker.tick(g)?;
            if let Some(v) = map.get(&s[pos..pos + len]) {
                let before = out.len();
                crate::ops::write_str(g, &mut out, v)?;
                ticker.tick_bytes(g, out.len() - before)?;
                pos += len;
                continue 'scan;
            }
        }
        out.push(s[pos]);
        pos += 1;
    }
    Ok(str_value(out))
}

/// `substr_replace` on one string: PHP clamps `offset` and `length` into
/// the string rather than failing.
fn splice<G: Globals>(g: G, orig: &[u8], offset: i64, length: Option<i64>, repl: &[u8]) -> VmResult<Vec<u8>> {
    let len = orig.len() as i64;
    let f = if offset < 0 {
        offset.saturating_add(len).max(0)
    } else {
        offset.min(len)
    };
    let mut l = length.unwrap_or(len);
    if l < 0 {
        l = (len - f).saturating_add(l).max(0);
    }
    if l > len - f {
        l = len - f;
    }
    let (f, l) = (f as usize, l as usize);
    let mut out = safe_alloc(g, 1, orig.len() - l + repl.len(), 0)?;
    out.extend_from_slice(&orig[..f]);
    out.extend_from_slice(repl);
    out.extend_from_slice(&orig[f + l..]);
    Ok(out)
}

/// An `array|int` parameter (`array|int|null` when `nullable`).
enum IntOrArray {
    Int(i64),
    Arr(std::rc::Rc<PhpArray>),
    Null,
}

fn int_or_array<G: Globals>(g: G, a: &Args, i: usize, nullable: bool) -> VmResult<IntOrArray> {
    let v = a.value(i);
    match &*v {
        Value::Arr(arr) => Ok(IntOrArray::Arr(arr.clone())),
        Value::Null | Value::Undef if nullable => Ok(IntOrArray::Null),
        Value::Null | Value::Undef => {
            super::null_deprecated(g, a, i, "array|int");
            Ok(IntOrArray::Int(0))
        }
        Value::Str(s) if minizts_core::numfmt::is_numeric_str(s).is_none() => {
            arg_type_error(a, i, if nullable { "array|int|null" } else { "array|int" }, &v)
        }
        Value::Closure(_) => arg_type_error(a, i, if nullable { "array|int|null" } else { "array|int" }, &v),
        _ => a.int(g, i).map(IntOrArray::Int),
    }
}

pub(super) fn substr_replace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let string = str_or_array(g, a, 0)?;
    let replace = str_or_array(g, a, 1)?;
    let offset = int_or_array(g, a, 2, false)?;
    let length = if a.has(3) {
        int_or_array(g, a, 3, true)?
    } else {
        IntOrArray::Null
    };
    match string {
        StrOrArray::Str(s) => {
            let IntOrArray::Int(f) = offset else {
                return type_error(
                    "substr_replace(): Argument #3 ($offset) cannot be an array when working on a single string",
                );
            };
            let l =
                match length {
                    IntOrArray::Arr(_) => return type_error(
                        "substr_replace(): Argument #4 ($length) cannot be an array when working on a single string",
                    ),
                    IntOrArray::Int(l) => Some(l),
                    IntOrArray::Null => None,
                };
            let repl = match &replace {
                StrOrArray::Str(r) => r.clone(),
                StrOrArray::Arr(r) => match r.values().next() {
                    Some(v) => crate::ops::to_str(g, &v.deref())?,
                    None => PhpStr::empty(),
                },
            };
            Ok(str_value(splice(g, &s, f, l, &repl)?))
        }
        StrOrArray::Arr(items) => {
            let mut offsets = match &offset {
                IntOrArray::Arr(o) => Some(o.values()),
                _ => None,
            };
            let mut lengths = match &length {
                IntOrArray::Arr(l) => Some(l.values()),
                _ => None,
            };
            let mut repls = match &replace {
                StrOrArray::Arr(r) => Some(r.values()),
                StrOrArray::Str(_) => None,
            };
            let mut out = PhpArray::with_capacity(items.len());
            // Every item gets the replacement: the results together grow
            // with the number of items times its length.
            let mut ticker = Ticker::new();
            for (k, v) in items.iter() {
                let orig = crate::ops::to_str(g, &v.deref())?;
                let f = match (&mut offsets, &offset) {
                    (Some(it), _) => it.next().map_or(0, |v| v.deref().to_int()),
                    (None, IntOrArray::Int(f)) => *f,
                    (None, _) => 0,
                };
                let l = match (&mut lengths, &length) {
                    (Some(it), _) => it.next().map(|v| v.deref().to_int()),
                    (None, IntOrArray::Int(l)) => Some(*l),
                    (None, _) => None,
                };
                let repl = match (&mut repls, &replace) {
                    (Some(it), _) => match it.next() {
                        Some(v) => crate::ops::to_str(g, &v.deref())?,
                        None => PhpStr::empty(),
                    },
                    (None, StrOrArray::Str(r)) => r.clone(),
                    (None, StrOrArray::Arr(_)) => PhpStr::empty(),
                };
                let spliced = splice(g, &orig, f, l, &repl)?;
                ticker.tick_bytes(g, spliced.len())?;
                out.insert(k.to_key(), str_value(spliced));
            }
            Ok(Value::arr(out))
        }
    }
}
