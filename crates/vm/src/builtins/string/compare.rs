//! Comparisons and text metrics: strcmp and friends, natural order,
//! substr_compare, similar_text, levenshtein, soundex, count_chars.
//!
//! PHP 8.2's comparisons return the difference of the first differing
//! bytes (glibc's `memcmp`), and -1/0/1 when one string is a prefix of
//! the other.

use std::cmp::Ordering;

use minizts_core::Value;
use minizts_globals::Globals;

use super::{opt_nullable_int, set_ref};
use crate::builtins::Args;
use crate::error::VmResult;
use crate::limits::Ticker;

fn three_way(x: usize, y: usize) -> i64 {
    match x.cmp(&y) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// `zend_binary_strncmp` / `zend_binary_strncasecmp` on at most `n`
/// bytes of each.
fn compare_n(a: &[u8], b: &[u8], n: usize, fold: bool) -> i64 {
    let la = a.len().min(n);
    let lb = b.len().min(n);
    for (&x, &y) in a[..la].iter().zip(&b[..lb]) {
        let (x, y) = if fold {
            (x.to_ascii_lowercase(), y.to_ascii_lowercase())
        } else {
            (x, y)
        };
        if x != y {
            return x as i64 - y as i64;
        }
    }
    three_way(la, lb)
}

fn two_strings<G: Globals>(g: G, a: &Args) -> VmResult<(minizts_core::PhpStr, minizts_core::PhpStr)> {
    Ok((a.str(g, 0)?, a.str(g, 1)?))
}

pub(super) fn strcmp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    Ok(Value::Int(compare_n(&x, &y, usize::MAX, false)))
}

pub(super) fn strcasecmp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    Ok(Value::Int(compare_n(&x, &y, usize::MAX, true)))
}

fn strncmp_impl<G: Globals>(g: G, a: &mut Args, fold: bool) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    let n = a.int(g, 2)?;
    if n < 0 {
        return a.value_error(2, "must be greater than or equal to 0");
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Value::Int(compare_n(&x, &y, n, fold)))
}

pub(super) fn strncmp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strncmp_impl(g, a, false)
}

pub(super) fn strncasecmp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    strncmp_impl(g, a, true)
}

/// PHP's `strnatcmp_ex` (ext/standard/strnatcmp.c), quirks included:
/// leading zeros are skipped only at the very start, and a run of digits
/// starting with 0 compares as a fraction (left-aligned).
fn natcmp(a: &[u8], b: &[u8], fold: bool) -> i64 {
    if a.is_empty() || b.is_empty() {
        return three_way(a.len(), b.len());
    }
    // Reading past the end sees C's terminating NUL.
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let digit = |s: &[u8], i: usize| i < s.len() && s[i].is_ascii_digit();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let (mut ap, mut bp) = (0usize, 0usize);
    let mut leading = true;
    loop {
        let mut ca = at(a, ap);
        let mut cb = at(b, bp);
        while leading && ca == b'0' && ap + 1 < a.len() && a[ap + 1].is_ascii_digit() {
            ap += 1;
            ca = a[ap];
        }
        while leading && cb == b'0' && bp + 1 < b.len() && b[bp + 1].is_ascii_digit() {
            bp += 1;
            cb = b[bp];
        }
        leading = false;
        while space(ca) {
            ap += 1;
            ca = at(a, ap);
        }
        while space(cb) {
            bp += 1;
            cb = at(b, bp);
        }
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let fractional = ca == b'0' || cb == b'0';
            let mut bias = 0;
            let result = loop {
                match (digit(a, ap), digit(b, bp)) {
                    (false, false) => break if fractional { 0 } else { bias },
                    (false, true) => break -1,
                    (true, false) => break 1,
                    (true, true) => {
                        let ord = a[ap] as i64 - b[bp] as i64;
                        if ord != 0 {
                            if fractional {
                                break ord.signum();
                            }
                            if bias == 0 {
                                bias = ord.signum();
                            }
                        }
                    }
                }
                ap += 1;
                bp += 1;
            };
            if result != 0 {
                return result;
            }
            match (ap >= a.len(), bp >= b.len()) {
                (true, true) => return 0,
                (true, false) => return -1,
                (false, true) => return 1,
                _ => {
                    ca = a[ap];
                    cb = b[bp];
                }
            }
        }
        if fold {
            ca = ca.to_ascii_uppercase();
            cb = cb.to_ascii_uppercase();
        }
        match ca.cmp(&cb) {
            Ordering::Less => return -1,
            Ordering::Greater => return 1,
            Ordering::Equal => {}
        }
        ap += 1;
        bp += 1;
        match (ap >= a.len(), bp >= b.len()) {
            (true, true) => return 0,
            (true, false) => return -1,
            (false, true) => return 1,
            _ => {}
        }
    }
}

pub(super) fn strnatcmp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    Ok(Value::Int(natcmp(&x, &y, false)))
}

pub(super) fn strnatcasecmp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    Ok(Value::Int(natcmp(&x, &y, true)))
}

pub(super) fn substr_compare<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (hay, needle) = two_strings(g, a)?;
    let offset = a.int(g, 2)?;
    let length = opt_nullable_int(g, a, 3)?;
    let fold = a.opt_bool(g, 4, false)?;
    match length {
        Some(0) => return Ok(Value::Int(0)),
        Some(l) if l < 0 => return a.value_error(3, "must be greater than or equal to 0"),
        _ => {}
    }
    let len = hay.len() as i64;
    let start = if offset < 0 {
        offset.saturating_add(len).max(0)
    } else {
        offset
    };
    if start > len {
        return a.value_error(2, "must be contained in argument #1 ($haystack)");
    }
    let rest = &hay[start as usize..];
    let n = match length {
        Some(l) => usize::try_from(l).unwrap_or(usize::MAX),
        None => needle.len().max(rest.len()),
    };
    Ok(Value::Int(compare_n(rest, &needle, n, fold)))
}

/// How many bytes `a` and `b` have in common at their start, compared a
/// word at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap_or_default());
        let y = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        let diff = x ^ y;
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// PHP's `php_similar_char`: the common characters of the longest common
/// substring and, recursively, of what lies left and right of it (an
/// explicit stack instead of recursion, so long inputs cannot overflow).
///
/// PHP's `php_similar_str` measures the match at every pair of starts and
/// keeps the first longest. The same match is found here trying fewer
/// pairs: only starts whose first bytes agree, and only while a match
/// there could still be longer than the longest so far. The work still
/// grows with the product of the lengths, so it is counted as it goes
/// (`bytes`, with the number of bytes compared: a [`Ticker`]'s) and stops
/// where that fails.
fn similar(a: &[u8], b: &[u8], mut bytes: impl FnMut(usize) -> VmResult<()>) -> VmResult<usize> {
    let mut sum = 0;
    let mut work = vec![(a, b)];
    while let Some((x, y)) = work.pop() {
        let (mut max, mut count, mut p1, mut p2) = (0, 0, 0, 0);
        for i in 0..x.len() {
            if x.len() - i <= max {
                break;
            }
            bytes(y.len())?;
            for j in memchr::memchr_iter(x[i], y) {
                if y.len() - j <= max {
                    break;
                }
                let l = common_prefix(&x[i..], &y[j..]);
                if l >= Ticker::BYTES_PER_STEP {
                    bytes(l)?;
                }
                if l > max {
                    max = l;
                    count += 1;
                    p1 = i;
                    p2 = j;
                }
            }
        }
        if max == 0 {
            continue;
        }
        sum += max;
        if p1 > 0 && p2 > 0 && count > 1 {
            work.push((&x[..p1], &y[..p2]));
        }
        if p1 + max < x.len() && p2 + max < y.len() {
            work.push((&x[p1 + max..], &y[p2 + max..]));
        }
    }
    Ok(sum)
}

pub(super) fn similar_text<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    let total = x.len() + y.len();
    if total == 0 {
        set_ref(a, 2, Value::Float(0.0));
        return Ok(Value::Int(0));
    }
    let mut ticker = Ticker::new();
    let sim = similar(&x, &y, |n| ticker.tick_bytes(g, n))?;
    set_ref(a, 2, Value::Float(sim as f64 * 200.0 / total as f64));
    Ok(Value::Int(sim as i64))
}

pub(super) fn levenshtein<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (x, y) = two_strings(g, a)?;
    let ins = a.opt_int(g, 2, 1)?;
    let rep = a.opt_int(g, 3, 1)?;
    let del = a.opt_int(g, 4, 1)?;
    if x.is_empty() {
        return Ok(Value::Int((y.len() as i64).wrapping_mul(ins)));
    }
    if y.is_empty() {
        return Ok(Value::Int((x.len() as i64).wrapping_mul(del)));
    }
    crate::limits::reserve(g, (y.len() + 1).saturating_mul(16))?;
    let mut p1: Vec<i64> = (0..=y.len() as i64).map(|i| i.wrapping_mul(ins)).collect();
    let mut p2 = vec![0i64; y.len() + 1];
    // A row of the table per byte of the first string: the time grows
    // with the product of the lengths.
    let mut ticker = Ticker::new();
    for &c in x.iter() {
        ticker.tick_bytes(g, y.len())?;
        p2[0] = p1[0].wrapping_add(del);
        for (j, &d) in y.iter().enumerate() {
            let mut c0 = p1[j].wrapping_add(if c == d { 0 } else { rep });
            let c1 = p1[j + 1].wrapping_add(del);
            if c1 < c0 {
                c0 = c1;
            }
            let c2 = p2[j].wrapping_add(ins);
            if c2 < c0 {
                c0 = c2;
            }
            p2[j + 1] = c0;
        }
        std::mem::swap(&mut p1, &mut p2);
    }
    Ok(Value::Int(p1[y.len()]))
}

pub(super) fn soundex<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    // Codes for A..Z; 0 for vowels and the letters soundex ignores.
    const TABLE: &[u8; 26] = b"\x00123\x0012\x00\x0022455\x0012623\x001\x002\x002";
    let s = a.str(g, 0)?;
    let mut out = Vec::with_capacity(4);
    let mut last = 0u8;
    for &c in s.iter() {
        if out.len() >= 4 {
            break;
        }
        let c = c.to_ascii_uppercase();
        if !c.is_ascii_uppercase() {
            continue;
        }
        let code = TABLE[(c - b'A') as usize];
        if out.is_empty() {
            out.push(c);
            last = code;
        } else if code != last {
            if code != 0 {
                out.push(code);
            }
            last = code;
        }
    }
    out.resize(4, b'0');
    Ok(Value::Str(out.into()))
}

/// `count_chars`: how often each byte occurs, as an array (modes 0 to
/// 2: all bytes, those used, those unused) or a string (3: the bytes
/// used, 4: those unused).
pub(super) fn count_chars<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let mode = a.opt_int(g, 1, 0)?;
    if !(0..=4).contains(&mode) {
        return a.value_error(1, "must be between 0 and 4 (inclusive)");
    }
    let mut counts = [0i64; 256];
    for &c in s.iter() {
        counts[usize::from(c)] += 1;
    }
    let keep = |n: i64| match mode {
        1 | 3 => n != 0,
        2 | 4 => n == 0,
        _ => true,
    };
    if mode >= 3 {
        let bytes: Vec<u8> = (0..=255u8).filter(|&c| keep(counts[usize::from(c)])).collect();
        return Ok(Value::str(bytes));
    }
    let pairs = (0..256usize)
        .filter(|&c| keep(counts[c]))
        .map(|c| (minizts_core::Key::Int(c as i64), Value::Int(counts[c])));
    Ok(Value::arr(minizts_core::PhpArray::from_pairs(pairs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `php_similar_char` as php-src writes it: every pair of starts.
    fn similar_as_php(x: &[u8], y: &[u8]) -> usize {
        let (mut max, mut count, mut p1, mut p2) = (0, 0, 0, 0);
        for i in 0..x.len() {
            for j in 0..y.len() {
                let l = x[i..].iter().zip(&y[j..]).take_while(|(c, d)| c == d).count();
                if l > max {
                    max = l;
                    count += 1;
                    p1 = i;
                    p2 = j;
                }
            }
        }
        if max == 0 {
            return 0;
        }
        let mut sum = max;
        if p1 > 0 && p2 > 0 && count > 1 {
            sum += similar_as_php(&x[..p1], &y[..p2]);
        }
        if p1 + max < x.len() && p2 + max < y.len() {
            sum += similar_as_php(&x[p1 + max..], &y[p2 + max..]);
        }
        sum
    }

    #[test]
    fn similar_finds_what_php_finds() {
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize
        };
        let none = |_: usize| Ok(());
        for round in 0..3000 {
            // Small alphabets make long and repeated matches.
            let alphabet = 1 + round % 4;
            let mut word = |n: usize| -> Vec<u8> { (0..n).map(|_| b'a' + (next() % alphabet) as u8).collect() };
            let (n, m) = (round % 40, (round / 3) % 45);
            let (x, y) = (word(n), word(m));
            assert_eq!(similar(&x, &y, none).unwrap(), similar_as_php(&x, &y), "{x:?} {y:?}");
        }
        let text = b"the quick brown fox jumps over the lazy dog";
        assert_eq!(similar(text, b"the lazy dog", none).unwrap(), 12);
        // Issue 18's case, which PHP's every-pair search takes minutes on.
        let (x, y) = (b"ab".repeat(30000), b"ba".repeat(30000));
        assert_eq!(similar(&x, &y, none).unwrap(), 59999);
        assert_eq!(common_prefix(b"abcdefghijk", b"abcdefghijX"), 10);
        assert_eq!(common_prefix(b"abcdefgh", b"abcdefgh"), 8);
        assert_eq!(common_prefix(b"", b"a"), 0);
    }
}
