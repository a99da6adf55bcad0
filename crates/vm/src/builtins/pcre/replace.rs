//! preg_replace, preg_filter, preg_replace_callback and
//! preg_replace_callback_array (php_pcre.c's `php_pcre_replace_impl`,
//! `php_pcre_replace_func_impl` and `preg_replace_common`): patterns,
//! replacements and subjects as strings or arrays, `$n`/`\n`/`${n}`
//! references, the limit and the count.

use std::rc::Rc;

use minizts_core::{KeyRef, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use super::ffi::{PCRE2_ERROR_NOMATCH, PCRE2_NO_UTF_CHECK, PCRE2_UNSET};
use super::matching::populate;
use super::{compile, set_error, set_exec_error, Matcher, INTERNAL_ERROR, NO_ERROR};
use crate::builtins::Args;
use crate::call::{call_resolved, Callee};
use crate::error::{deprecated, type_error, VmResult};
use crate::limits::Ticker;

/// An `array|string` parameter.
enum StrOrArray {
    Str(PhpStr),
    Array(Rc<PhpArray>),
}

fn str_or_array<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<StrOrArray> {
    let v = a.value(i);
    match &*v {
        Value::Arr(arr) => Ok(StrOrArray::Array(arr.clone())),
        Value::Closure(_) => type_error(format!(
            "{}(): Argument #{} (${}) must be of type array|string, Closure given",
            a.name(),
            i + 1,
            a.info.params[i]
        )),
        Value::Null | Value::Undef => {
            deprecated(
                g,
                &format!(
                    "{}(): Passing null to parameter #{} (${}) of type array|string is deprecated",
                    a.name(),
                    i + 1,
                    a.info.params[i]
                ),
            );
            Ok(StrOrArray::Str(PhpStr::empty()))
        }
        _ => Ok(StrOrArray::Str(a.str(g, i)?)),
    }
}

/// What a match is replaced with.
enum Replacement<'a> {
    /// A string with `$n`-style references.
    Text(&'a [u8]),
    /// A callback given the match's groups (with the callback's flags).
    Callback(&'a Callee, i64),
}

/// PHP's `preg_get_backref`: a reference at `at` (`$n`, `\n`, `${n}`, one
/// or two digits): its number and where the text goes on.
fn backref(r: &[u8], at: usize) -> Option<(usize, usize)> {
    let byte = |i: usize| r.get(i).copied().unwrap_or(0);
    if byte(at + 1) == 0 {
        return None;
    }
    let mut w = at;
    let brace = r[w] == b'$' && byte(w + 1) == b'{';
    if brace {
        w += 1;
    }
    w += 1;
    if !byte(w).is_ascii_digit() {
        return None;
    }
    let mut n = usize::from(byte(w) - b'0');
    w += 1;
    if byte(w).is_ascii_digit() {
        n = n * 10 + usize::from(byte(w) - b'0');
        w += 1;
    }
    if brace {
        if byte(w) != b'}' {
            return None;
        }
        w += 1;
    }
    Some((n, w))
}

/// Appends replacement text `r` for a match with `count` groups set.
fn expand(out: &mut Vec<u8>, r: &[u8], subject: &[u8], ov: &[usize], count: usize) {
    let mut walk = 0;
    let mut last = 0u8;
    while walk < r.len() {
        let c = r[walk];
        if c == b'\\' || c == b'$' {
            if last == b'\\' {
                // The backslash before it escapes it.
                if let Some(prev) = out.last_mut() {
                    *prev = c;
                }
                walk += 1;
                last = 0;
                continue;
            }
            if let Some((n, next)) = backref(r, walk) {
                if n < count && ov[2 * n] != PCRE2_UNSET {
                    out.extend_from_slice(&subject[ov[2 * n]..ov[2 * n + 1]]);
                }
                walk = next;
                continue;
            }
        }
        out.push(c);
        walk += 1;
        last = c;
    }
}

/// One pattern on one subject: the result (`None`: an error, with the
/// last error set). `limit` is PHP's `size_t` limit (-1: no limit).
fn replace_in<G: Globals>(
    g: G,
    func: &str,
    regex: &[u8],
    subject: &PhpStr,
    with: &Replacement,
    limit: i64,
    replaced: &mut i64,
) -> VmResult<Option<PhpStr>> {
    let Some(pattern) = compile(g, func, regex) else {
        return Ok(None);
    };
    let mut limit = limit as u64;
    set_error(g, NO_ERROR);
    let s: &[u8] = subject;
    let len = s.len();
    let Some(mut m) = Matcher::new(g, &pattern, s) else {
        return Ok(None);
    };
    let mut out: Option<Vec<u8>> = None;
    let (mut start, mut last_end) = (0usize, 0usize);
    let mut ticker = Ticker::new();
    let mut rc = m.exec(0, pattern.first_options());
    loop {
        let not_matched;
        if rc >= 0 && limit > 0 {
            let mut done = false;
            loop {
                ticker.tick(g)?;
                let count = if rc == 0 { pattern.groups } else { rc as usize };
                let ov = m.ovector().to_vec();
                if ov[1] < ov[0] {
                    set_error(g, INTERNAL_ERROR);
                    return Ok(None);
                }
                *replaced += 1;
                let called = match with {
                    Replacement::Text(_) => None,
                    Replacement::Callback(callee, flags) => {
                        let mut groups = PhpArray::new();
                        populate(&mut groups, &pattern, s, &ov, count, m.mark(), *flags);
                        let r = call_resolved(g, callee, vec![Value::arr(groups)])?;
                        Some(match r {
                            Value::Str(r) => r,
                            other => crate::ops::to_str(g, &other)?,
                        })
                    }
                };
                let buf = out.get_or_insert_with(Vec::new);
                buf.extend_from_slice(&s[last_end..ov[0]]);
                match (&called, with) {
                    (Some(r), _) => buf.extend_from_slice(r),
                    (None, Replacement::Text(r)) => expand(buf, r, s, &ov, count),
                    (None, _) => {}
                }
                limit -= 1;
                start = ov[1];
                last_end = ov[1];
                if start == ov[0] {
                    rc = m.exec_not_empty(start);
                    if rc >= 0 && limit > 0 {
                        continue;
                    } else if rc == PCRE2_ERROR_NOMATCH || limit == 0 {
                        if start < len {
                            start += pattern.unit_len(s, start);
                        } else {
                            done = true;
                        }
                    } else {
                        set_exec_error(g, rc);
                        return Ok(None);
                    }
                }
                break;
            }
            not_matched = done;
        } else if rc == PCRE2_ERROR_NOMATCH || limit == 0 {
            not_matched = true;
        } else {
            set_exec_error(g, rc);
            return Ok(None);
        }
        if not_matched {
            return Ok(Some(match out {
                None => subject.clone(),
                Some(mut buf) => {
                    buf.extend_from_slice(&s[last_end..]);
                    PhpStr::from(buf)
                }
            }));
        }
        rc = m.exec(start, PCRE2_NO_UTF_CHECK);
    }
}

/// Every pattern (a string, or an array's in order) on one subject.
fn replace_subject<G: Globals>(
    g: G,
    func: &str,
    patterns: &StrOrArray,
    with: &ReplacementArg,
    subject: PhpStr,
    limit: i64,
    replaced: &mut i64,
) -> VmResult<Option<PhpStr>> {
    let list: Vec<PhpStr> = match patterns {
        StrOrArray::Str(p) => {
            let r = with.nth(g, 0)?;
            return replace_in(g, func, p, &subject, &r.as_replacement(with), limit, replaced);
        }
        StrOrArray::Array(ps) => ps
            .values()
            .map(|v| crate::ops::to_str(g, &v.deref_clone()))
            .collect::<VmResult<_>>()?,
    };
    let mut subject = subject;
    for (i, p) in list.iter().enumerate() {
        let r = with.nth(g, i)?;
        match replace_in(g, func, p, &subject, &r.as_replacement(with), limit, replaced)? {
            Some(s) => subject = s,
            None => return Ok(None),
        }
    }
    Ok(Some(subject))
}

/// The replacement argument: one string, one per pattern, or a callback.
enum ReplacementArg {
    Text(PhpStr),
    Texts(Vec<PhpStr>),
    Callback(Callee, i64),
}

/// One pattern's replacement, resolved.
enum Resolved {
    Text(PhpStr),
    Callback,
}

impl Resolved {
    fn as_replacement<'a>(&'a self, arg: &'a ReplacementArg) -> Replacement<'a> {
        match (self, arg) {
            (Resolved::Text(t), _) => Replacement::Text(t),
            (Resolved::Callback, ReplacementArg::Callback(c, f)) => Replacement::Callback(c, *f),
            (Resolved::Callback, _) => Replacement::Text(b""),
        }
    }
}

impl ReplacementArg {
    /// The replacement for pattern `i` (an array's missing ones are "").
    fn nth<G: Globals>(&self, _g: G, i: usize) -> VmResult<Resolved> {
        Ok(match self {
            ReplacementArg::Text(t) => Resolved::Text(t.clone()),
            ReplacementArg::Texts(ts) => Resolved::Text(ts.get(i).cloned().unwrap_or_else(PhpStr::empty)),
            ReplacementArg::Callback(..) => Resolved::Callback,
        })
    }
}

/// The subjects' loop shared by the four functions: the result (a string,
/// null, or an array of the subjects that gave one) and the count.
fn replace_all<G: Globals>(
    g: G,
    func: &str,
    patterns: &StrOrArray,
    with: &ReplacementArg,
    subjects: StrOrArray,
    limit: i64,
    filter: bool,
) -> VmResult<(Value, i64)> {
    let mut replaced = 0i64;
    match subjects {
        StrOrArray::Str(s) => {
            let r = replace_subject(g, func, patterns, with, s, limit, &mut replaced)?;
            Ok(match r {
                Some(r) if !filter || replaced > 0 => (Value::Str(r), replaced),
                _ => (Value::Null, replaced),
            })
        }
        StrOrArray::Array(arr) => {
            let mut out = PhpArray::new();
            for (k, v) in arr.iter() {
                let before = replaced;
                let s = crate::ops::to_str(g, &v.deref_clone())?;
                if let Some(r) = replace_subject(g, func, patterns, with, s, limit, &mut replaced)? {
                    if !filter || replaced > before {
                        out.insert(k.to_key(), Value::Str(r));
                    }
                }
            }
            Ok((Value::arr(out), replaced))
        }
    }
}

fn set_count(a: &mut Args, i: usize, n: i64) {
    if a.has(i) {
        a.with_ref(i, |slot| *slot = Value::Int(n));
    }
}

fn replace_common<G: Globals>(g: G, a: &mut Args, filter: bool) -> VmResult<Value> {
    let patterns = str_or_array(g, a, 0)?;
    let replacement = str_or_array(g, a, 1)?;
    let subjects = str_or_array(g, a, 2)?;
    let limit = a.opt_int(g, 3, -1)?;
    let with = match replacement {
        StrOrArray::Str(s) => ReplacementArg::Text(s),
        StrOrArray::Array(r) => {
            if let StrOrArray::Str(_) = patterns {
                return type_error(format!(
                    "{}(): Argument #1 ($pattern) must be of type array when argument #2 ($replacement) is an array, string given",
                    a.name()
                ));
            }
            ReplacementArg::Texts(
                r.values()
                    .map(|v| crate::ops::to_str(g, &v.deref_clone()))
                    .collect::<VmResult<_>>()?,
            )
        }
    };
    let (result, n) = replace_all(g, a.name(), &patterns, &with, subjects, limit, filter)?;
    set_count(a, 4, n);
    Ok(result)
}

pub(super) fn preg_replace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    replace_common(g, a, false)
}

pub(super) fn preg_filter<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    replace_common(g, a, true)
}

pub(super) fn preg_replace_callback<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let patterns = str_or_array(g, a, 0)?;
    let callback = a.callable(g, 1)?;
    let subjects = str_or_array(g, a, 2)?;
    let limit = a.opt_int(g, 3, -1)?;
    let flags = a.opt_int(g, 5, 0)?;
    let with = ReplacementArg::Callback(callback, flags);
    let (result, n) = replace_all(g, a.name(), &patterns, &with, subjects, limit, false)?;
    set_count(a, 4, n);
    Ok(result)
}

pub(super) fn preg_replace_callback_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let map = a.array(0)?;
    let mut subjects = str_or_array(g, a, 1)?;
    let limit = a.opt_int(g, 2, -1)?;
    let flags = a.opt_int(g, 4, 0)?;
    let mut total = 0;
    for (k, v) in map.iter() {
        let Ok(callee) = crate::call::resolve_callable(g, &v.deref_clone()) else {
            return type_error(format!(
                "{}(): Argument #1 ($pattern) must contain only valid callbacks",
                a.name()
            ));
        };
        let KeyRef::Str(regex) = k else {
            return type_error(format!(
                "{}(): Argument #1 ($pattern) must contain only string patterns as keys",
                a.name()
            ));
        };
        let with = ReplacementArg::Callback(callee, flags);
        let patterns = StrOrArray::Str(PhpStr::from(&regex[..]));
        let (result, n) = replace_all(g, a.name(), &patterns, &with, subjects, limit, false)?;
        total += n;
        subjects = match result {
            Value::Str(s) => StrOrArray::Str(s),
            Value::Arr(arr) => StrOrArray::Array(arr),
            _ => return Ok(Value::Null),
        };
    }
    set_count(a, 3, total);
    Ok(match subjects {
        StrOrArray::Str(s) => Value::Str(s),
        StrOrArray::Array(arr) => Value::Arr(arr),
    })
}
