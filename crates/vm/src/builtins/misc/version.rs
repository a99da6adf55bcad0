//! `version_compare`: ext/standard/versioning.c. Versions are C strings
//! there (a NUL ends one), canonicalised into dot-separated parts, parts
//! compared as numbers or as the special forms `dev` < `alpha`/`a` <
//! `beta`/`b` < `RC`/`rc` < a number < `pl`/`p`.

use std::cmp::Ordering;

use minizts_core::Value;
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

pub(super) fn version_compare<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v1 = a.str(g, 0)?;
    let v2 = a.str(g, 1)?;
    let op = if a.has(2) && !a.value(2).is_null() {
        Some(a.str(g, 2)?)
    } else {
        None
    };
    let c = compare(c_str(&v1), c_str(&v2));
    let Some(op) = op else {
        return Ok(Value::Int(i64::from(c)));
    };
    let r = match op.as_bytes() {
        b"<" | b"lt" => c == -1,
        b"<=" | b"le" => c != 1,
        b">" | b"gt" => c == 1,
        b">=" | b"ge" => c != -1,
        b"==" | b"=" | b"eq" => c == 0,
        b"!=" | b"<>" | b"ne" => c != 0,
        _ => return a.value_error(2, "must be a valid comparison operator"),
    };
    Ok(Value::Bool(r))
}

fn c_str(s: &[u8]) -> &[u8] {
    &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
}

/// `php_canonicalize_version`: `-`, `_`, `+` and other non-alphanumerics
/// become dots, and a dot goes between a digit and a non-digit.
fn canonicalize(v: &[u8]) -> Vec<u8> {
    let Some((&first, rest)) = v.split_first() else {
        return Vec::new();
    };
    let digit = |c: u8| c.is_ascii_digit();
    let non_digit = |c: u8| !c.is_ascii_digit() && c != b'.';
    let mut out = Vec::with_capacity(v.len() * 2);
    out.push(first);
    let mut lp = first;
    for &c in rest {
        let dot_first = out.last() != Some(&b'.');
        if matches!(c, b'-' | b'_' | b'+') {
            if dot_first {
                out.push(b'.');
            }
        } else if (non_digit(lp) && digit(c)) || (digit(lp) && non_digit(c)) {
            if dot_first {
                out.push(b'.');
            }
            out.push(c);
        } else if !c.is_ascii_alphanumeric() {
            if dot_first {
                out.push(b'.');
            }
        } else {
            out.push(c);
        }
        lp = c;
    }
    out
}

/// `compare_special_version_forms`: by the first form each part starts
/// with (none ranks lowest).
fn compare_forms(a: &[u8], b: &[u8]) -> i32 {
    const FORMS: [(&[u8], i32); 10] = [
        (b"dev", 0),
        (b"alpha", 1),
        (b"a", 1),
        (b"beta", 2),
        (b"b", 2),
        (b"RC", 3),
        (b"rc", 3),
        (b"#", 4),
        (b"pl", 5),
        (b"p", 5),
    ];
    let rank = |s: &[u8]| FORMS.iter().find(|(f, _)| s.starts_with(f)).map_or(-1, |&(_, r)| r);
    sign(rank(a).cmp(&rank(b)))
}

fn sign(o: Ordering) -> i32 {
    match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// C's `strtol(s, NULL, 10)` on a part that starts with a digit.
fn strtol(s: &[u8]) -> i64 {
    s.iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0i64, |n, &d| n.saturating_mul(10).saturating_add(i64::from(d - b'0')))
}

/// `php_version_compare`.
fn compare(v1: &[u8], v2: &[u8]) -> i32 {
    if v1.is_empty() || v2.is_empty() {
        return sign((!v1.is_empty()).cmp(&!v2.is_empty()));
    }
    let canon = |v: &[u8]| if v[0] == b'#' { v.to_vec() } else { canonicalize(v) };
    let (a, b) = (canon(v1), canon(v2));
    let (mut p1, mut p2) = (0usize, 0usize);
    // The dot after the part being compared; `Some` before the first.
    let (mut n1, mut n2) = (Some(0usize), Some(0usize));
    let mut c = 0;
    let digit = |s: &[u8], i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    while p1 < a.len() && p2 < b.len() && n1.is_some() && n2.is_some() {
        n1 = a[p1..].iter().position(|&x| x == b'.').map(|i| p1 + i);
        n2 = b[p2..].iter().position(|&x| x == b'.').map(|i| p2 + i);
        let e1 = &a[p1..n1.unwrap_or(a.len())];
        let e2 = &b[p2..n2.unwrap_or(b.len())];
        c = match (digit(e1, 0), digit(e2, 0)) {
            (true, true) => sign(strtol(e1).cmp(&strtol(e2))),
            (false, false) => compare_forms(e1, e2),
            (true, false) => compare_forms(b"#N#", e2),
            (false, true) => compare_forms(e1, b"#N#"),
        };
        if c != 0 {
            break;
        }
        if let Some(n) = n1 {
            p1 = n + 1;
        }
        if let Some(n) = n2 {
            p2 = n + 1;
        }
    }
    if c == 0 {
        if n1.is_some() {
            c = if digit(&a, p1) {
                1
            } else {
                compare(&a[p1.min(a.len())..], b"#N#")
            };
        } else if n2.is_some() {
            c = if digit(&b, p2) {
                -1
            } else {
                compare(b"#N#", &b[p2.min(b.len())..])
            };
        }
    }
    c
}
