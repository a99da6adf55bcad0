//! Float to string the way PHP 8.2 prints it, for every caller that
//! prints floats: string conversion/`echo` (ini `precision`, default 14),
//! and `var_dump`, `var_export`, `json_encode`, `serialize` (ini
//! `serialize_precision`, default -1 meaning "shortest round-trip").
//!
//! All of them go through `zend_gcvt()`, ported here as [`php_gcvt`]; the
//! callers differ only in the digit count, the exponent letter and whether
//! they append `.0` to integral values:
//!
//! | caller | function | `1.0` | `1e25` | `0.1+0.2` |
//! |---|---|---|---|---|
//! | `echo`, `(string)`, `print_r`, `strval`, interpolation | [`php_float_to_string`]`(f, 14)` | `1` | `1.0E+25` | `0.3` |
//! | `var_dump`, `debug_zval_dump`, `serialize` (`d:...;`) | [`php_float_repr`] | `1` | `1.0E+25` | `0.30000000000000004` |
//! | `var_export` | [`php_float_var_export`] | `1.0` | `1.0E+25` | `0.30000000000000004` |
//! | `json_encode` | [`php_float_json`]`(f, false)` | `1` | `1.0e+25` | `0.30000000000000004` |
//! | `json_encode(.., JSON_PRESERVE_ZERO_FRACTION)` | [`php_float_json`]`(f, true)` | `1.0` | `1.0e+25` | `0.30000000000000004` |
//!
//! `var_dump` wraps the repr itself (`float(1)`); `var_export` and
//! `serialize` print `INF`, `-INF` and `NAN` as the repr does, while
//! `json_encode` refuses them (error "Inf and NaN cannot be JSON encoded",
//! writing `0` under `JSON_PARTIAL_OUTPUT_ON_ERROR`), hence the `Option`.

use super::dtoa::{self, DigitSource};

/// `zend_gcvt(value, ndigit, '.', exp_char, buf)`, appended to `out`.
///
/// * `ndigit >= 0`: round to `ndigit` significant digits (0 acts as 1 for
///   the rounding but still as 0 for the notation threshold);
///   `ndigit < 0`: shortest round-trip digits, with 17 as threshold.
/// * Scientific notation (`1.0E+25`, `1.5E-7`) is used when the decimal
///   exponent exceeds `ndigit` or the value is below `1e-4`; otherwise plain
///   notation without trailing zeros. Mantissas always have a fraction
///   (`1.0E+25`), exponents have no padding.
/// * Negative zero keeps its sign (`-0`).
/// * Infinities and NaN print `INF`, `-INF`, `NAN`, cut to `ndigit`
///   characters like the C original's `snprintf(buf, ndigit + 1, ...)`
///   (so `precision=2` echoes `INF` as `IN`).
pub fn php_gcvt(out: &mut Vec<u8>, value: f64, ndigit: i32, exp_char: u8) {
    php_gcvt_with(&mut dtoa::Stateless, out, value, ndigit, exp_char)
}

/// [`php_gcvt`] with the digits from `src`.
pub fn php_gcvt_with(src: &mut dyn DigitSource, out: &mut Vec<u8>, value: f64, ndigit: i32, exp_char: u8) {
    let (shortest, ndigit) = if ndigit < 0 { (true, 17) } else { (false, ndigit) };

    if !value.is_finite() {
        let text: &[u8] = if value.is_nan() {
            b"NAN"
        } else if value < 0.0 {
            b"-INF"
        } else {
            b"INF"
        };
        let keep = text.len().min(ndigit as usize);
        out.extend_from_slice(&text[..keep]);
        return;
    }

    let digits = if shortest {
        src.shortest(value)
    } else {
        src.significant(value, ndigit)
    };
    let ds = digits.digits();
    let decpt = digits.decpt;

    if value.is_sign_negative() {
        out.push(b'-');
    }

    if (decpt >= 0 && decpt > ndigit) || decpt < -3 {
        let exp = decpt - 1;
        out.push(ds[0]);
        out.push(b'.');
        if ds.len() == 1 {
            out.push(b'0');
        } else {
            out.extend_from_slice(&ds[1..]);
        }
        out.push(exp_char);
        out.push(if exp < 0 { b'-' } else { b'+' });
        write_u64(out, exp.unsigned_abs() as u64);
    } else if decpt < 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
        out.extend_from_slice(ds);
    } else {
        let decpt = decpt as usize;
        if ds.len() >= decpt {
            out.extend_from_slice(&ds[..decpt]);
        } else {
            out.extend_from_slice(ds);
            out.extend(std::iter::repeat_n(b'0', decpt - ds.len()));
        }
        if ds.len() > decpt {
            if decpt == 0 {
                out.push(b'0');
            }
            out.push(b'.');
            out.extend_from_slice(&ds[decpt..]);
        }
    }
}

/// Appends the string conversion of a float (`(string)$f`, `echo $f`)
/// under ini `precision` (PHP's default is 14; 0 behaves as 1, -1 as
/// shortest round-trip).
pub fn write_float(out: &mut Vec<u8>, value: f64, precision: i32) {
    write_float_with(&mut dtoa::Stateless, out, value, precision)
}

/// [`write_float`] with the digits from `src`.
pub fn write_float_with(src: &mut dyn DigitSource, out: &mut Vec<u8>, value: f64, precision: i32) {
    php_gcvt_with(src, out, value, if precision == 0 { 1 } else { precision }, b'E');
}

/// The string conversion of a float under ini `precision`:
/// `php_float_to_string(0.1 + 0.2, 14) == "0.3"`,
/// `php_float_to_string(1e15, 14) == "1.0E+15"`.
pub fn php_float_to_string(value: f64, precision: i32) -> String {
    let mut out = Vec::with_capacity(24);
    write_float(&mut out, value, precision);
    ascii_string(out)
}

/// Appends the shortest round-trip form used with the default
/// `serialize_precision = -1` (`var_dump`, `serialize`, `debug_zval_dump`).
pub fn write_float_repr(out: &mut Vec<u8>, value: f64) {
    write_float_repr_with(&mut dtoa::Stateless, out, value)
}

/// [`write_float_repr`] with the digits from `src`.
pub fn write_float_repr_with(src: &mut dyn DigitSource, out: &mut Vec<u8>, value: f64) {
    php_gcvt_with(src, out, value, -1, b'E');
}

/// The shortest round-trip form: `0.1` -> `"0.1"`, `1e100` -> `"1.0E+100"`,
/// `1e15` -> `"1000000000000000"` (plain notation up to 17 integer
/// digits), `-0.0` -> `"-0"`. `var_dump` prints it bare (`float(1)`).
pub fn php_float_repr(value: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_float_repr(&mut out, value);
    ascii_string(out)
}

/// Appends `var_export`'s form: the repr plus `.0` when it would otherwise
/// read back as an int (`1.0`, `-0.0`, `1000000000000000.0`); `INF`,
/// `-INF` and `NAN` stay bare.
pub fn write_float_var_export(out: &mut Vec<u8>, value: f64) {
    write_float_var_export_with(&mut dtoa::Stateless, out, value)
}

/// [`write_float_var_export`] with the digits from `src`.
pub fn write_float_var_export_with(src: &mut dyn DigitSource, out: &mut Vec<u8>, value: f64) {
    let start = out.len();
    write_float_repr_with(src, out, value);
    if value.is_finite() && !out[start..].iter().any(|&b| matches!(b, b'.' | b'e' | b'E')) {
        out.extend_from_slice(b".0");
    }
}

/// `var_export`'s form of a float, see [`write_float_var_export`].
pub fn php_float_var_export(value: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_float_var_export(&mut out, value);
    ascii_string(out)
}

/// Appends `json_encode`'s form (lowercase `e`; `.0` appended to integral
/// values only with `JSON_PRESERVE_ZERO_FRACTION`). Returns `false`, writing
/// nothing, for infinities and NaN, which JSON cannot represent.
pub fn write_float_json(out: &mut Vec<u8>, value: f64, preserve_zero_fraction: bool) -> bool {
    write_float_json_with(&mut dtoa::Stateless, out, value, preserve_zero_fraction)
}

/// [`write_float_json`] with the digits from `src`.
pub fn write_float_json_with(
    src: &mut dyn DigitSource,
    out: &mut Vec<u8>,
    value: f64,
    preserve_zero_fraction: bool,
) -> bool {
    if !value.is_finite() {
        return false;
    }
    let start = out.len();
    php_gcvt_with(src, out, value, -1, b'e');
    if preserve_zero_fraction && !out[start..].contains(&b'.') {
        out.extend_from_slice(b".0");
    }
    true
}

/// `json_encode`'s form of a float, `None` for infinities and NaN.
pub fn php_float_json(value: f64, preserve_zero_fraction: bool) -> Option<String> {
    let mut out = Vec::with_capacity(24);
    write_float_json(&mut out, value, preserve_zero_fraction).then(|| ascii_string(out))
}

/// Appends the decimal digits of `n`.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Our formatters only ever emit ASCII.
fn ascii_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}
