//! preg_match, preg_match_all and preg_grep, and the group arrays they
//! (and preg_replace_callback) build, as php_pcre.c's
//! `php_pcre_match_impl` and `populate_subpat_array` build them.

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use super::ffi::{PCRE2_ERROR_NOMATCH, PCRE2_NO_UTF_CHECK, PCRE2_UNSET};
use super::{
    compile, last_error, set_error, set_exec_error, Matcher, Pattern, INTERNAL_ERROR, NO_ERROR, PREG_GREP_INVERT,
    PREG_OFFSET_CAPTURE, PREG_PATTERN_ORDER, PREG_SET_ORDER, PREG_UNMATCHED_AS_NULL,
};
use crate::builtins::Args;
use crate::error::VmResult;
use crate::limits::Ticker;

/// A group's value: its text, or `""`/null when it did not take part.
fn group_value(subject: &[u8], start: usize, end: usize, as_null: bool) -> Value {
    if start == PCRE2_UNSET {
        if as_null {
            Value::Null
        } else {
            Value::str(PhpStr::empty())
        }
    } else {
        Value::str(&subject[start..end])
    }
}

/// A set group's text (a split's delimiter, whose groups may be unset:
/// PHP copies `end - start` bytes from the unset marker's "offset").
pub(super) fn group_text(subject: &[u8], start: usize, end: usize) -> Value {
    if start == PCRE2_UNSET {
        Value::str(PhpStr::empty())
    } else {
        Value::str(&subject[start..end])
    }
}

/// A `[text, offset]` pair (PREG_OFFSET_CAPTURE); `-1` when unmatched.
pub(super) fn offset_pair(subject: &[u8], start: usize, end: usize, as_null: bool) -> Value {
    let (text, offset) = if start == PCRE2_UNSET {
        (group_value(subject, start, end, as_null), -1)
    } else {
        (Value::str(&subject[start..end]), start as i64)
    };
    Value::arr(PhpArray::from_list(vec![text, Value::Int(offset)]))
}

/// PHP's `add_named`: with duplicate names (`J`) a group that matched
/// wins over one that did not.
fn add_named(out: &mut PhpArray, name: &PhpStr, v: Value, unmatched: bool) {
    let key = Key::Str(name.clone());
    if !unmatched || !out.contains_key(&key) {
        out.insert(key, v);
    }
}

/// PHP's `populate_subpat_array`: one match's groups, by number and (for
/// named groups) by name first, `count` of them set by the match.
pub(super) fn populate(
    out: &mut PhpArray,
    pattern: &Pattern,
    subject: &[u8],
    ov: &[usize],
    count: usize,
    mark: Option<Vec<u8>>,
    flags: i64,
) {
    let offset_capture = flags & PREG_OFFSET_CAPTURE != 0;
    let as_null = flags & PREG_UNMATCHED_AS_NULL != 0;
    let upto = if as_null { pattern.groups } else { count };
    for i in 0..upto {
        let (start, end) = if i < count {
            (ov[2 * i], ov[2 * i + 1])
        } else {
            (PCRE2_UNSET, PCRE2_UNSET)
        };
        let v = if offset_capture {
            offset_pair(subject, start, end, as_null)
        } else {
            group_value(subject, start, end, as_null)
        };
        if let Some(Some(name)) = pattern.names.as_ref().map(|n| &n[i]) {
            add_named(out, name, v.clone(), start == PCRE2_UNSET);
        }
        let _ = out.push(v);
    }
    if let Some(mark) = mark {
        out.insert(Key::Str(PhpStr::from("MARK")), Value::str(mark));
    }
}

pub(super) fn preg_match<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    do_match(g, a, false)
}

pub(super) fn preg_match_all<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    do_match(g, a, true)
}

/// PHP's `php_do_pcre_match` and `php_pcre_match_impl`.
fn do_match<G: Globals>(g: G, a: &mut Args, global: bool) -> VmResult<Value> {
    let regex = a.str(g, 0)?;
    let subject = a.str(g, 1)?;
    let flags = a.opt_int(g, 3, 0)?;
    let offset = a.opt_int(g, 4, 0)?;
    let Some(pattern) = compile(g, a.name(), &regex) else {
        return Ok(Value::Bool(false));
    };
    if offset == i64::MIN {
        return a.value_error(4, &format!("must be greater than {}", i64::MIN));
    }
    let want_groups = a.has(2);
    if want_groups {
        a.with_ref(2, |slot| *slot = Value::empty_array());
    }
    let mut order = if global { PREG_PATTERN_ORDER } else { 0 };
    let (mut offset_capture, mut as_null) = (false, false);
    if a.has(3) {
        offset_capture = flags & PREG_OFFSET_CAPTURE != 0;
        as_null = flags & PREG_UNMATCHED_AS_NULL != 0;
        if flags & 0xff != 0 {
            order = flags & 0xff;
        }
        if (global && !(PREG_PATTERN_ORDER..=PREG_SET_ORDER).contains(&order)) || (!global && order != 0) {
            return a.value_error(3, "must be a PREG_* constant");
        }
    }
    let flags = if a.has(3) { flags } else { 0 };
    let len = subject.len();
    let mut start = if offset < 0 {
        len.saturating_sub(offset.unsigned_abs() as usize)
    } else {
        offset as usize
    };
    if start > len {
        set_error(g, INTERNAL_ERROR);
        return Ok(Value::Bool(false));
    }
    let groups = pattern.groups;
    let pattern_order = global && want_groups && order == PREG_PATTERN_ORDER;
    let mut sets: Vec<PhpArray> = if pattern_order {
        (0..groups).map(|_| PhpArray::new()).collect()
    } else {
        Vec::new()
    };
    let mut marks: Option<PhpArray> = None;
    let mut out = PhpArray::new();
    let mut matched = 0i64;
    set_error(g, NO_ERROR);
    let Some(mut m) = Matcher::new(g, &pattern, &subject) else {
        return Ok(Value::Bool(false));
    };
    let mut ticker = Ticker::new();
    let mut rc = m.exec(start, pattern.first_options());
    'outer: loop {
        if rc >= 0 {
            loop {
                ticker.tick(g)?;
                matched += 1;
                let count = if rc == 0 { groups } else { rc as usize };
                let ov = m.ovector().to_vec();
                if want_groups {
                    if ov[1] < ov[0] {
                        crate::error::warning(g, &format!("{}(): Get subpatterns list failed", a.name()));
                        return Ok(Value::Bool(false));
                    }
                    if global {
                        if pattern_order {
                            for (i, set) in sets.iter_mut().enumerate() {
                                let (s, e) = if i < count {
                                    (ov[2 * i], ov[2 * i + 1])
                                } else {
                                    (PCRE2_UNSET, PCRE2_UNSET)
                                };
                                let v = if offset_capture {
                                    offset_pair(&subject, s, e, as_null)
                                } else {
                                    group_value(&subject, s, e, as_null)
                                };
                                let _ = set.push(v);
                            }
                            if let Some(mark) = m.mark() {
                                marks
                                    .get_or_insert_with(PhpArray::new)
                                    .insert(Key::Int(matched - 1), Value::str(mark));
                            }
                        } else {
                            let mut set = PhpArray::new();
                            populate(&mut set, &pattern, &subject, &ov, count, m.mark(), flags);
                            let _ = out.push(Value::arr(set));
                        }
                    } else {
                        populate(&mut out, &pattern, &subject, &ov, count, m.mark(), flags);
                        break 'outer;
                    }
                }
                start = ov[1];
                if start == ov[0] {
                    rc = m.exec_not_empty(start);
                    if rc >= 0 {
                        if global {
                            continue;
                        }
                        break 'outer;
                    } else if rc == PCRE2_ERROR_NOMATCH {
                        if start < len {
                            start += pattern.unit_len(&subject, start);
                        } else {
                            break 'outer;
                        }
                    } else {
                        set_exec_error(g, rc);
                        break 'outer;
                    }
                }
                break;
            }
        } else if rc == PCRE2_ERROR_NOMATCH {
            break;
        } else {
            set_exec_error(g, rc);
            break;
        }
        if !global {
            break;
        }
        rc = m.exec(start, PCRE2_NO_UTF_CHECK);
    }
    if pattern_order {
        for (i, set) in sets.into_iter().enumerate() {
            let v = Value::arr(set);
            if let Some(Some(name)) = pattern.names.as_ref().map(|n| &n[i]) {
                out.insert(Key::Str(name.clone()), v.clone());
            }
            let _ = out.push(v);
        }
        if let Some(marks) = marks {
            out.insert(Key::Str(PhpStr::from("MARK")), Value::arr(marks));
        }
    }
    if want_groups {
        a.with_ref(2, |slot| *slot = Value::arr(out));
    }
    if last_error(g) == NO_ERROR {
        Ok(Value::Int(matched))
    } else {
        Ok(Value::Bool(false))
    }
}

pub(super) fn preg_grep<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let regex = a.str(g, 0)?;
    let input = a.array(1)?;
    let flags = a.opt_int(g, 2, 0)?;
    let Some(pattern) = compile(g, a.name(), &regex) else {
        return Ok(Value::Bool(false));
    };
    let invert = flags & PREG_GREP_INVERT != 0;
    let mut out = PhpArray::new();
    set_error(g, NO_ERROR);
    let mut ticker = Ticker::new();
    for (k, v) in input.iter() {
        ticker.tick(g)?;
        let s = crate::ops::to_str(g, &v.deref_clone())?;
        let Some(mut m) = Matcher::new(g, &pattern, &s) else {
            break;
        };
        let rc = m.exec(0, pattern.first_options());
        if rc >= 0 {
            if !invert {
                out.insert(k.to_key(), v.clone());
            }
        } else if rc == PCRE2_ERROR_NOMATCH {
            if invert {
                out.insert(k.to_key(), v.clone());
            }
        } else {
            set_exec_error(g, rc);
            break;
        }
    }
    Ok(Value::arr(out))
}
