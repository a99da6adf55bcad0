//! Numeric strings with PHP 8 semantics, and the conversions built on
//! them: `(int)` and `(float)` casts of strings, float to int, `intval()`
//! with a base, and the comparison of two strings (`<=>`, `==`).
//!
//! The central routine is [`parse_numeric_ex`], a port of
//! `_is_numeric_string_ex()`: optional leading whitespace (`" \t\n\r\v\f"`),
//! an optional sign, decimal digits with an optional fraction and exponent
//! (`"1e3"`, `".5"` and `"5."` are numeric; hex, octal and binary notations
//! are not), then optional trailing whitespace. A string that only *starts*
//! with a number (`"12abc"`) is "leading-numeric": arithmetic uses the
//! prefix with a warning, `is_numeric()` says no.

use std::cmp::Ordering;

use super::float::write_u64;

/// The value of a numeric string: PHP reads integers as `int` unless they
/// overflow, everything with a fraction or an exponent as `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    /// The value as a float, as PHP's arithmetic promotes it.
    pub fn to_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

/// Everything `_is_numeric_string_ex()` reports about a string.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumericInfo {
    pub value: Number,
    /// `true` when the whole string is numeric (surrounding whitespace
    /// allowed); `false` when only a prefix is and junk follows.
    pub whole: bool,
    /// Set when an integer literal did not fit an `int` and was read as a
    /// float: `1` above `PHP_INT_MAX`, `-1` below `PHP_INT_MIN`, else `0`.
    /// The string comparison uses it to avoid trusting a lossy float.
    pub overflow: i8,
}

/// Digits beyond which an integer literal cannot fit an `i64`
/// (`MAX_LENGTH_OF_LONG - 1` in php-src, counted after leading zeros).
const MAX_INT_DIGITS: usize = 20;

/// `PHP_INT_MIN`'s digits: a 19-digit literal at or above this overflows
/// (unless it is exactly `-9223372036854775808`).
const LONG_MIN_DIGITS: &[u8] = b"9223372036854775808";

/// C `strcmp()` of the NUL-terminated string starting at `s` (ending at
/// the first NUL or the end of the slice) against `lit`.
fn c_strcmp(s: &[u8], lit: &[u8]) -> Ordering {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    s[..end].cmp(lit)
}

/// The whitespace PHP's numeric strings may start and end with.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Index just past the longest `zend_strtod()` number starting at `start`
/// (sign, digits, optional fraction, optional exponent), or `start` when
/// there is no number there.
fn float_prefix_end(s: &[u8], start: usize) -> usize {
    let mut p = start;
    if matches!(s.get(p), Some(b'+' | b'-')) {
        p += 1;
    }
    let int_start = p;
    while s.get(p).is_some_and(u8::is_ascii_digit) {
        p += 1;
    }
    let mut mantissa_digits = p - int_start;
    if s.get(p) == Some(&b'.') {
        let frac_start = p + 1;
        let mut q = frac_start;
        while s.get(q).is_some_and(u8::is_ascii_digit) {
            q += 1;
        }
        mantissa_digits += q - frac_start;
        if mantissa_digits > 0 {
            p = q;
        }
    }
    if mantissa_digits == 0 {
        return start;
    }
    if matches!(s.get(p), Some(b'e' | b'E')) {
        let mut q = p + 1;
        if matches!(s.get(q), Some(b'+' | b'-')) {
            q += 1;
        }
        if s.get(q).is_some_and(u8::is_ascii_digit) {
            while s.get(q).is_some_and(u8::is_ascii_digit) {
                q += 1;
            }
            p = q;
        }
    }
    p
}

/// Reads a float syntax slice found by [`float_prefix_end`]; Rust's parser
/// is correctly rounded like `zend_strtod()` and accepts the same forms.
fn parse_float_slice(s: &[u8]) -> f64 {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// Port of `_is_numeric_string_ex()` with `allow_errors = true`: the
/// numeric value at the start of `s`, whether it spans the whole string,
/// and the integer overflow direction. `None` when `s` does not start with
/// a number at all (`""`, `" "`, `"abc"`, `"."`); `"0x1A"` is the number 0
/// followed by junk.
pub fn parse_numeric_ex(s: &[u8]) -> Option<NumericInfo> {
    let len = s.len();
    let mut start = 0;
    while start < len && is_ws(s[start]) {
        start += 1;
    }
    let at = |i: usize| s.get(i).copied().unwrap_or(0);

    let mut p = start;
    let neg = match at(p) {
        b'-' => {
            p += 1;
            true
        }
        b'+' => {
            p += 1;
            false
        }
        _ => false,
    };

    let mut overflow = 0i8;
    let mut end;
    let value;
    if at(p).is_ascii_digit() {
        while at(p) == b'0' {
            p += 1;
        }
        let digits_start = p;
        let mut acc: u64 = 0;
        while at(p).is_ascii_digit() && p - digits_start < MAX_INT_DIGITS {
            acc = acc.wrapping_mul(10).wrapping_add((at(p) - b'0') as u64);
            p += 1;
        }
        let digits = p - digits_start;
        let mut to_float = false;
        // Where php-src's cursor stops: an exponent sign without digits
        // ("1e+") is stepped onto before giving up.
        let mut cursor = p;
        if digits >= MAX_INT_DIGITS {
            overflow = if neg { -1 } else { 1 };
            to_float = true;
        } else if at(p) == b'.' {
            to_float = true;
        } else if matches!(at(p), b'e' | b'E') {
            let mut e = p + 1;
            if matches!(at(e), b'+' | b'-') {
                cursor = e;
                e += 1;
            }
            to_float = at(e).is_ascii_digit();
        }
        if to_float {
            end = float_prefix_end(s, start);
            value = Number::Float(parse_float_slice(&s[start..end]));
        } else {
            end = cursor;
            // A 19-digit literal may still exceed the range. php-src
            // checks with a strcmp() from `cursor - digits`, which runs on
            // past the digits (so even trailing whitespace counts as
            // "greater") and is off by one after "1e+" (where it compares
            // the wrong digits and lets the value wrap).
            let mut fits = true;
            if digits == MAX_INT_DIGITS - 1 {
                let cmp = c_strcmp(&s[cursor - digits..], LONG_MIN_DIGITS);
                fits = cmp == Ordering::Less || (cmp == Ordering::Equal && neg);
            }
            if fits {
                let v = acc as i64;
                value = Number::Int(if neg { v.wrapping_neg() } else { v });
            } else {
                overflow = if neg { -1 } else { 1 };
                value = Number::Float(parse_float_slice(&s[start..p]));
            }
        }
    } else if at(p) == b'.' && at(p + 1).is_ascii_digit() {
        end = float_prefix_end(s, start);
        value = Number::Float(parse_float_slice(&s[start..end]));
    } else {
        return None;
    }

    while end < len && is_ws(s[end]) {
        end += 1;
    }
    Some(NumericInfo {
        value,
        whole: end == len,
        overflow,
    })
}

/// The number a string starts with and whether the whole string is
/// numeric (`Some((n, true))`), only a prefix is (`Some((n, false))`,
/// "leading-numeric", e.g. `"12abc"`), or `None` when it is not numeric
/// at all. See [`parse_numeric_ex`].
pub fn parse_numeric(s: &[u8]) -> Option<(Number, bool)> {
    parse_numeric_ex(s).map(|info| (info.value, info.whole))
}

/// `is_numeric($s)` for strings, with the value: only whole numeric
/// strings (surrounding whitespace allowed). This is also the test the
/// engine applies before `$s++`/`$s--` and string comparisons.
pub fn is_numeric_str(s: &[u8]) -> Option<Number> {
    match parse_numeric_ex(s) {
        Some(info) if info.whole => Some(info.value),
        _ => None,
    }
}

/// `(int)$string` (also `intval($s)`, `settype`, int parameters in coercive
/// mode): the numeric prefix, 0 when there is none; floats saturate to
/// `PHP_INT_MAX`/`PHP_INT_MIN` (`"1e100"` -> `PHP_INT_MAX`) except
/// infinities, which give 0 (`"1e1000"` -> 0).
pub fn str_to_int(s: &[u8]) -> i64 {
    match parse_numeric_ex(s) {
        None => 0,
        Some(NumericInfo {
            value: Number::Int(i), ..
        }) => i,
        Some(NumericInfo {
            value: Number::Float(f),
            ..
        }) => float_to_int_saturating(f),
    }
}

/// `(float)$string`: `zend_strtod()` on the string after leading
/// whitespace; 0.0 when no number starts there. Unlike the numeric-string
/// test this keeps the sign of zero (`"-0"` -> `-0.0`).
pub fn str_to_float(s: &[u8]) -> f64 {
    let mut start = 0;
    while start < s.len() && is_ws(s[start]) {
        start += 1;
    }
    let end = float_prefix_end(s, start);
    if end == start {
        0.0
    } else {
        parse_float_slice(&s[start..end])
    }
}

/// `zend_dval_to_lval()` on 64-bit platforms, used by `(int)$float`, float
/// array keys, `%d` and friends: NaN and infinities give 0, values out of
/// the `int` range wrap modulo 2^64 (`(int)1e19 === -8446744073709551616`).
pub fn float_to_int(f: f64) -> i64 {
    if !f.is_finite() {
        return 0;
    }
    if fits_i64(f) {
        return f as i64;
    }
    const TWO_POW_64: f64 = 18446744073709551616.0;
    // Out-of-range doubles are integers, so fmod is exact and so is the
    // correction into [0, 2^64).
    let mut m = f % TWO_POW_64;
    if m < 0.0 {
        m += TWO_POW_64;
    }
    (m as u64) as i64
}

/// `zend_dval_to_lval_cap()`, used when a numeric *string* holds a float
/// (`(int)"1e100"`): NaN and infinities give 0, other out-of-range values
/// saturate.
pub fn float_to_int_saturating(f: f64) -> i64 {
    if !f.is_finite() {
        0
    } else if fits_i64(f) {
        f as i64
    } else if f > 0.0 {
        i64::MAX
    } else {
        i64::MIN
    }
}

/// `ZEND_DOUBLE_FITS_LONG`: `(double)PHP_INT_MAX` is 2^63, itself out of
/// range, while -2^63 fits.
fn fits_i64(f: f64) -> bool {
    (-9223372036854775808.0..9223372036854775808.0).contains(&f)
}

/// Appends the decimal form of an int.
pub fn write_int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, n.unsigned_abs());
}

/// The decimal form of an int (`(string)$int`).
pub fn int_to_string(n: i64) -> String {
    let mut out = Vec::with_capacity(20);
    write_int(&mut out, n);
    String::from_utf8(out).unwrap_or_default()
}

/// `intval($string, $base)` for a string argument.
///
/// Base 10 is the ordinary `(int)` cast ([`str_to_int`]). Other bases use C
/// `strtol()` semantics (leading whitespace, optional sign, digits up to
/// the first invalid one, saturation on overflow): base 16 accepts a `0x`
/// prefix, base 0 picks 16 for `0x`, 8 for a leading `0` and 10 otherwise.
/// PHP adds `0b` prefixes for bases 0 and 2 (base 0 then means binary).
/// There is no `0o` support (`intval("0o17", 0) === 0`). Bases outside
/// 2..=36 (other than 0) give 0.
pub fn intval_base(s: &[u8], base: i64) -> i64 {
    if base == 10 {
        return str_to_int(s);
    }
    if base == 0 || base == 2 {
        let mut i = 0;
        while i < s.len() && is_c_space(s[i]) {
            i += 1;
        }
        let rest = &s[i..];
        if rest.len() > 2 {
            let offset = usize::from(matches!(rest[0], b'-' | b'+'));
            if rest[offset] == b'0' && matches!(rest.get(offset + 1), Some(b'b' | b'B')) {
                // php-src cuts the "0b" out and hands the rest, sign
                // included, to strtol(), which may skip more whitespace
                // and read another sign ("0b 101" is 5).
                let mut cut = Vec::with_capacity(rest.len() - 2);
                cut.extend_from_slice(&rest[..offset]);
                cut.extend_from_slice(&rest[offset + 2..]);
                return strtol(&cut, 2);
            }
        }
    }
    strtol(s, base)
}

/// C `isspace()` in the C locale (the set `strtol()` skips).
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The saturated results of reading unsigned digits, for either sign.
struct Strtol {
    positive: i64,
    negated: i64,
}

/// Reads digits valid in `base` from the start of `s` (no sign, no
/// prefix), saturating like `strtol()`.
fn strtol_digits(s: &[u8], base: u32) -> Strtol {
    let mut acc: u64 = 0;
    let mut overflow = false;
    for &b in s {
        let d = match (b as char).to_digit(36) {
            Some(d) if d < base => d,
            _ => break,
        };
        match acc.checked_mul(base as u64).and_then(|v| v.checked_add(d as u64)) {
            Some(v) => acc = v,
            None => overflow = true,
        }
    }
    let positive = if overflow || acc > i64::MAX as u64 {
        i64::MAX
    } else {
        acc as i64
    };
    let negated = if overflow || acc > 1u64 << 63 {
        i64::MIN
    } else {
        (acc as i64).wrapping_neg()
    };
    Strtol { positive, negated }
}

/// C `strtol(s, NULL, base)`.
fn strtol(s: &[u8], base: i64) -> i64 {
    if base != 0 && !(2..=36).contains(&base) {
        return 0;
    }
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut base = base as u32;
    let has_hex_prefix = s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
    if (base == 0 || base == 16) && has_hex_prefix {
        i += 2;
        base = 16;
    } else if base == 0 {
        base = if s.get(i) == Some(&b'0') { 8 } else { 10 };
    }
    let v = strtol_digits(&s[i..], base);
    if neg {
        v.negated
    } else {
        v.positive
    }
}

/// `$a <=> $b` for two strings (`zendi_smart_strcmp()`): when both are
/// whole numeric strings they compare as numbers (`"10" > "9"`,
/// `"1e3" == "1000"`, `" 1" == "1"`), otherwise as bytes (`"abc" < "abd"`,
/// `"" < "0"`). Integers that overflowed to the same side, and equal
/// infinities, fall back to byte comparison since their float values
/// cannot be trusted.
pub fn smart_str_compare(a: &[u8], b: &[u8]) -> Ordering {
    match numeric_pair(a, b) {
        Some((x, y)) => compare_numeric(x, y).unwrap_or_else(|| a.cmp(b)),
        None => a.cmp(b),
    }
}

/// `$a == $b` for two strings (`zend_fast_equal_strings()`), the same
/// numeric-or-bytes rule as [`smart_str_compare`].
pub fn smart_str_equals(a: &[u8], b: &[u8]) -> bool {
    match numeric_pair(a, b) {
        Some((x, y)) => match compare_numeric(x, y) {
            Some(ord) => ord == Ordering::Equal,
            None => a == b,
        },
        None => a == b,
    }
}

fn numeric_pair(a: &[u8], b: &[u8]) -> Option<(NumericInfo, NumericInfo)> {
    let x = parse_numeric_ex(a).filter(|i| i.whole)?;
    let y = parse_numeric_ex(b).filter(|i| i.whole)?;
    Some((x, y))
}

/// Numeric comparison of two numeric strings, `None` meaning "compare the
/// bytes instead".
fn compare_numeric(x: NumericInfo, y: NumericInfo) -> Option<Ordering> {
    let (dx, dy) = (x.value.to_f64(), y.value.to_f64());
    if x.overflow != 0 && x.overflow == y.overflow && dx - dy == 0.0 {
        return None;
    }
    match (x.value, y.value) {
        (Number::Int(i), Number::Int(j)) => Some(i.cmp(&j)),
        (Number::Int(i), Number::Float(f)) => {
            if y.overflow != 0 {
                return Some(if y.overflow > 0 {
                    Ordering::Less
                } else {
                    Ordering::Greater
                });
            }
            Some(sign_of(i as f64 - f))
        }
        (Number::Float(f), Number::Int(j)) => {
            if x.overflow != 0 {
                return Some(if x.overflow > 0 {
                    Ordering::Greater
                } else {
                    Ordering::Less
                });
            }
            Some(sign_of(f - j as f64))
        }
        (Number::Float(f), Number::Float(g)) => {
            if f == g && !f.is_finite() {
                return None;
            }
            Some(sign_of(f - g))
        }
    }
}

/// `ZEND_NORMALIZE_BOOL` of a difference (NaN counts as equal).
fn sign_of(d: f64) -> Ordering {
    if d > 0.0 {
        Ordering::Greater
    } else if d < 0.0 {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}
