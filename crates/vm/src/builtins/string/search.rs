//! Searching, slicing, splitting and joining: substr, the strpos family,
//! strstr and friends, substr_count, strspn, explode/implode, str_split,
//! chunk_split, str_word_count.

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use super::{arg_type_error, charmask, null_deprecated, opt_nullable_int, safe_alloc, str_value};
use crate::builtins::Args;
use crate::error::{type_error, VmResult};
use crate::limits::{packed_bytes, reserve, values_with_capacity, Ticker};

/// The first occurrence of `needle` in `hay` (an empty needle is found at
/// 0, as PHP's `php_memnstr`). The search takes time linear in both, so a
/// needle that nearly matches everywhere cannot make it quadratic.
pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    match needle.len() {
        0 => Some(0),
        1 => memchr::memchr(needle[0], hay),
        _ => memchr::memmem::find(hay, needle),
    }
}

/// Every non-overlapping occurrence of `needle` (non-empty) in `hay`, left
/// to right, as the splitting and replacing loops step through them.
pub(super) fn find_all<'h>(hay: &'h [u8], needle: &'h [u8]) -> memchr::memmem::FindIter<'h, 'h> {
    memchr::memmem::find_iter(hay, needle)
}

/// The last occurrence of `needle` lying wholly in `hay` (an empty
/// needle is found at the end, as `zend_memnrstr`), in linear time.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(hay.len());
    }
    memchr::memmem::rfind(hay, needle)
}

/// The bytes listed in `chars`, as a table (a membership test per byte
/// of the subject, whatever the list's length).
fn byte_set(chars: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    for &c in chars {
        set[c as usize] = true;
    }
    set
}

/// `substr`'s offset/length clamping: the byte range selected.
pub(super) fn substr_range(len: usize, offset: i64, length: Option<i64>) -> Option<(usize, usize)> {
    let len_i = len as i64;
    if offset > len_i {
        return None;
    }
    let start = if offset < 0 {
        if offset.unsigned_abs() > len as u64 {
            0
        } else {
            (len_i + offset) as usize
        }
    } else {
        offset as usize
    };
    let rest = len - start;
    let count = match length {
        None => rest,
        Some(l) if l < 0 => {
            if l.unsigned_abs() > rest as u64 {
                0
            } else {
                rest - l.unsigned_abs() as usize
            }
        }
        Some(l) => (l as u64).min(rest as u64) as usize,
    };
    Some((start, start + count))
}

pub(super) fn substr<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let offset = a.int(g, 1)?;
    let length = opt_nullable_int(g, a, 2)?;
    match substr_range(s.len(), offset, length) {
        Some((0, end)) if end == s.len() => Ok(Value::Str(s)),
        Some((start, end)) => Ok(Value::str(&s[start..end])),
        None => Ok(Value::Str(PhpStr::empty())),
    }
}

/// A search offset: negative counts from the end; must land inside the
/// haystack (a ValueError otherwise).
fn search_start(a: &Args, len: usize, offset: i64) -> VmResult<usize> {
    let start = if offset < 0 {
        offset.checked_add(len as i64)
    } else {
        Some(offset)
    };
    match start {
        Some(s) if s >= 0 && s as u64 <= len as u64 => Ok(s as usize),
        _ => a.value_error(2, "must be contained in argument #1 ($haystack)"),
    }
}

fn strpos_impl<G: Globals>(g: G, a: &mut Args, fold: bool) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    let offset = a.opt_int(g, 2, 0)?;
    let start = search_start(a, hay.len(), offset)?;
    let found = if fold {
        find(&hay[start..].to_ascii_lowercase(), &needle.to_ascii_lowercase())
    } else {
        find(&hay[start..], &needle)
    };
    Ok(found.map_or(Value::Bool(false), |p| Value::Int((start + p) as i64)))
}

pub(super) fn strpos<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strpos_impl(g, a, false)
}

pub(super) fn stripos<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strpos_impl(g, a, true)
}

fn strrpos_impl<G: Globals>(g: G, a: &mut Args, fold: bool) -> VmResult<Value> {
    let mut hay = a.str(g, 0)?.to_vec();
    let mut needle = a.str(g, 1)?.to_vec();
    let offset = a.opt_int(g, 2, 0)?;
    if fold {
        hay.make_ascii_lowercase();
        needle.make_ascii_lowercase();
    }
    let len = hay.len();
    // The match must start at or after `from` and end by `to`.
    let (from, to) = if offset >= 0 {
        if offset as u64 > len as u64 {
            return a.value_error(2, "must be contained in argument #1 ($haystack)");
        }
        (offset as usize, len)
    } else {
        let back = offset.unsigned_abs();
        if offset == i64::MIN || back > len as u64 {
            return a.value_error(2, "must be contained in argument #1 ($haystack)");
        }
        let back = back as usize;
        let to = if back < needle.len() {
            len
        } else {
            len - back + needle.len()
        };
        (0, to)
    };
    Ok(rfind(&hay[from..to], &needle).map_or(Value::Bool(false), |p| Value::Int((from + p) as i64)))
}

pub(super) fn strrpos<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strrpos_impl(g, a, false)
}

pub(super) fn strripos<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strrpos_impl(g, a, true)
}

fn strstr_impl<G: Globals>(g: G, a: &mut Args, fold: bool) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    let before = a.opt_bool(g, 2, false)?;
    let found = if fold {
        find(&hay.to_ascii_lowercase(), &needle.to_ascii_lowercase())
    } else {
        find(&hay, &needle)
    };
    Ok(match found {
        None => Value::Bool(false),
        Some(p) if before => Value::str(&hay[..p]),
        Some(0) => Value::Str(hay),
        Some(p) => Value::str(&hay[p..]),
    })
}

pub(super) fn strstr<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strstr_impl(g, a, false)
}

pub(super) fn stristr<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strstr_impl(g, a, true)
}

pub(super) fn strrchr<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    // Only the needle's first byte counts; PHP reads the terminating NUL
    // of an empty needle.
    let c = needle.first().copied().unwrap_or(0);
    Ok(match hay.iter().rposition(|&b| b == c) {
        Some(p) => Value::str(&hay[p..]),
        None => Value::Bool(false),
    })
}

pub(super) fn strpbrk<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let chars = a.str(g, 1)?;
    if chars.is_empty() {
        return a.value_error(1, "must be a non-empty string");
    }
    let set = byte_set(&chars);
    Ok(match s.iter().position(|&c| set[c as usize]) {
        Some(p) => Value::str(&s[p..]),
        None => Value::Bool(false),
    })
}

pub(super) fn str_contains<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    Ok(Value::Bool(find(&hay, &needle).is_some()))
}

pub(super) fn str_starts_with<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    Ok(Value::Bool(hay.starts_with(&needle)))
}

pub(super) fn str_ends_with<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    Ok(Value::Bool(hay.ends_with(&needle)))
}

pub(super) fn substr_count<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hay = a.str(g, 0)?;
    let needle = a.str(g, 1)?;
    let offset = a.opt_int(g, 2, 0)?;
    let length = opt_nullable_int(g, a, 3)?;
    if needle.is_empty() {
        return a.value_error(1, "cannot be empty");
    }
    let len = hay.len() as i64;
    let start = if offset < 0 { offset.saturating_add(len) } else { offset };
    if start < 0 || start > len {
        return a.value_error(2, "must be contained in argument #1 ($haystack)");
    }
    let mut end = len;
    if let Some(l) = length {
        let l = if l < 0 { l.saturating_add(len - start) } else { l };
        if l < 0 || l > len - start {
            return a.value_error(3, "must be contained in argument #1 ($haystack)");
        }
        end = start + l;
    }
    let count = find_all(&hay[start as usize..end as usize], &needle).count();
    Ok(Value::Int(count as i64))
}

fn strspn_impl<G: Globals>(g: G, a: &mut Args, accept: bool) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let chars = a.str(g, 1)?;
    let offset = a.opt_int(g, 2, 0)?;
    let length = opt_nullable_int(g, a, 3)?;
    let len = s.len() as i64;
    // Out-of-range offsets and lengths clamp (no error), as PHP's.
    let start = if offset < 0 {
        (offset.saturating_add(len)).max(0)
    } else {
        offset
    };
    if start > len {
        return Ok(Value::Int(0));
    }
    let mut span = len - start;
    if let Some(l) = length {
        if l < 0 {
            span = (span.saturating_add(l)).max(0);
        } else if l < span {
            span = l;
        }
    }
    let slice = &s[start as usize..(start + span) as usize];
    // PHP's strcspn reads the terminating NUL of an empty list.
    let chars: &[u8] = if !accept && chars.is_empty() { b"\0" } else { &chars };
    let set = byte_set(chars);
    let n = slice.iter().take_while(|&&c| set[c as usize] == accept).count();
    Ok(Value::Int(n as i64))
}

pub(super) fn strspn<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strspn_impl(g, a, true)
}

pub(super) fn strcspn<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strspn_impl(g, a, false)
}

pub(super) fn explode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let sep = a.str(g, 0)?;
    let s = a.str(g, 1)?;
    let limit = a.opt_int(g, 2, i64::MAX)?;
    if sep.is_empty() {
        return a.value_error(0, "cannot be empty");
    }
    if s.is_empty() {
        let mut out = Vec::new();
        if limit >= 0 {
            out.push(Value::Str(PhpStr::empty()));
        }
        return Ok(Value::arr(PhpArray::from_list(out)));
    }
    if limit == 0 || limit == 1 {
        return Ok(Value::arr(PhpArray::from_list(vec![Value::Str(s)])));
    }
    // Each piece is made as it is found, so the memory and time limits
    // stop a huge split part way.
    let mut ticker = Ticker::new();
    let mut out = Vec::new();
    let mut last = 0;
    for p in find_all(&s, &sep) {
        if limit > 0 && out.len() as i64 >= limit - 1 {
            break;
        }
        out.push(Value::str(&s[last..p]));
        last = p + sep.len();
        ticker.tick(g)?;
    }
    out.push(Value::str(&s[last..]));
    if limit < 0 {
        let drop = limit.unsigned_abs().min(out.len() as u64) as usize;
        out.truncate(out.len() - drop);
    }
    Ok(Value::arr(PhpArray::from_list(out)))
}

pub(super) fn implode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let first = a.value(0).into_owned();
    let (sep, pieces) = if !a.has(1) || matches!(&*a.value(1), Value::Null | Value::Undef) {
        match first {
            Value::Arr(arr) => (PhpStr::empty(), arr),
            Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                return type_error(format!(
                    "{}(): Argument #1 ($array) must be of type array, string given",
                    a.name()
                ))
            }
            Value::Null | Value::Undef => {
                null_deprecated(g, a, 0, "array|string");
                return type_error(format!(
                    "{}(): Argument #1 ($array) must be of type array, string given",
                    a.name()
                ));
            }
            other => return arg_type_error(a, 0, "array|string", &other),
        }
    } else {
        let sep = match &first {
            Value::Arr(_) => None,
            Value::Str(s) => Some(s.clone()),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(crate::ops::to_str(g, &first)?),
            Value::Null | Value::Undef => {
                null_deprecated(g, a, 0, "array|string");
                Some(PhpStr::empty())
            }
            other => return arg_type_error(a, 0, "array|string", other),
        };
        let pieces = match &*a.value(1) {
            Value::Arr(arr) => arr.clone(),
            other => return arg_type_error(a, 1, "?array", other),
        };
        match sep {
            Some(sep) => (sep, pieces),
            None => {
                return type_error(format!(
                    "{}(): Argument #1 ($separator) must be of type string, array given",
                    a.name()
                ))
            }
        }
    };
    // Converting the pieces makes new strings (of ints and floats), as
    // many as the array holds: the limits are checked as they are made.
    let mut ticker = Ticker::new();
    let mut strings = Vec::with_capacity(pieces.len());
    for v in pieces.values() {
        strings.push(crate::ops::to_str(g, &v.deref())?);
        ticker.tick(g)?;
    }
    let total = strings.iter().fold(0usize, |n, s| n.saturating_add(s.len()));
    let mut out = safe_alloc(g, strings.len().saturating_sub(1), sep.len(), total)?;
    for (i, s) in strings.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(&sep);
        }
        out.extend_from_slice(s);
    }
    Ok(str_value(out))
}

pub(super) fn str_split<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let n = a.opt_int(g, 1, 1)?;
    if n < 1 {
        return a.value_error(1, "must be greater than 0");
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let count = s.len().div_ceil(n).max(1);
    // PHP sizes the result array first.
    reserve(g, packed_bytes(count as u64))?;
    let mut ticker = Ticker::new();
    let mut out = values_with_capacity(count)?;
    for chunk in s.chunks(n) {
        out.push(Value::str(chunk));
        ticker.tick(g)?;
    }
    Ok(Value::arr(PhpArray::from_list(out)))
}

pub(super) fn chunk_split<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let n = a.opt_int(g, 1, 76)?;
    let end = a.opt_str(g, 2, b"\r\n")?;
    if n < 1 {
        return a.value_error(1, "must be greater than 0");
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    if n > s.len() {
        let mut out = s.to_vec();
        out.extend_from_slice(&end);
        return Ok(str_value(out));
    }
    let mut out = safe_alloc(g, s.len().div_ceil(n), end.len(), s.len())?;
    for chunk in s.chunks(n) {
        out.extend_from_slice(chunk);
        out.extend_from_slice(&end);
    }
    Ok(str_value(out))
}

pub(super) fn str_word_count<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let format = a.opt_int(g, 1, 0)?;
    let chars = super::opt_nullable_str(g, a, 2, b"")?;
    let has_list = a.has(2) && !a.value(2).is_null();
    if !(0..=2).contains(&format) {
        return a.value_error(1, "must be a valid format value");
    }
    let mut list = PhpArray::new();
    if s.is_empty() {
        return Ok(if format == 0 { Value::Int(0) } else { Value::arr(list) });
    }
    let mask = if has_list {
        charmask(g, a.name(), &chars)
    } else {
        [false; 256]
    };
    let allowed = |c: u8| has_list && mask[c as usize];
    let mut p = 0;
    let mut e = s.len();
    // A word never starts with ' or - nor ends with -, unless listed.
    if (s[0] == b'\'' && !allowed(b'\'')) || (s[0] == b'-' && !allowed(b'-')) {
        p += 1;
    }
    if s[e - 1] == b'-' && !allowed(b'-') {
        e -= 1;
    }
    let mut count = 0;
    // The list of words takes far more memory than the text it came from.
    let mut ticker = Ticker::new();
    while p < e {
        let start = p;
        while p < e && (s[p].is_ascii_alphabetic() || allowed(s[p]) || s[p] == b'\'' || s[p] == b'-') {
            p += 1;
        }
        if p > start {
            match format {
                1 => {
                    ticker.tick(g)?;
                    let _ = list.push(Value::str(&s[start..p]));
                }
                2 => {
                    ticker.tick(g)?;
                    list.insert(Key::Int(start as i64), Value::str(&s[start..p]));
                }
                _ => count += 1,
            }
        }
        p += 1;
    }
    Ok(if format == 0 {
        Value::Int(count)
    } else {
        Value::arr(list)
    })
}
