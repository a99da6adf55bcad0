//! `round()` and `number_format()` as PHP 8.2 implements them.
//!
//! PHP 8.2 still uses the algorithm of the 5.3 rounding RFC: before
//! rounding to the requested places, the value is "pre-rounded" to the 15
//! significant digits a double reliably holds, so that `round(1.955, 2)`
//! gives 1.96 even though the double is 1.95499999999999996. PHP 8.4
//! replaced this; do not "fix" it towards 8.4's results.

use super::dtoa;
use super::numeric::str_to_float;

/// The rounding modes of PHP 8.2's `round()` (the values of the
/// `PHP_ROUND_*` constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundMode {
    HalfUp = 1,
    HalfDown = 2,
    HalfEven = 3,
    HalfOdd = 4,
}

impl RoundMode {
    /// The mode for a `PHP_ROUND_*` value; `None` for anything else, for
    /// which `round()` throws `ValueError: round(): Argument #3 ($mode)
    /// must be a valid rounding mode (PHP_ROUND_*)`.
    pub fn from_php(mode: i64) -> Option<RoundMode> {
        match mode {
            1 => Some(RoundMode::HalfUp),
            2 => Some(RoundMode::HalfDown),
            3 => Some(RoundMode::HalfEven),
            4 => Some(RoundMode::HalfOdd),
            _ => None,
        }
    }
}

/// `php_intpow10()`: exact powers from a table, `pow()` beyond it.
fn intpow10(power: i64) -> f64 {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    if (0..=22).contains(&power) {
        POWERS[power as usize]
    } else {
        10f64.powf(power as f64)
    }
}

/// `php_round_helper()`: rounds to an integer in the given mode, deciding
/// ties by exact comparison with the half-way value.
fn round_helper(value: f64, mode: RoundMode) -> f64 {
    if value >= 0.0 {
        let tmp = (value + 0.5).floor();
        let back = match mode {
            RoundMode::HalfUp => false,
            RoundMode::HalfDown => value == -0.5 + tmp,
            RoundMode::HalfEven => value == 0.5 + 2.0 * (tmp / 2.0).floor(),
            RoundMode::HalfOdd => value == 0.5 + 2.0 * (tmp / 2.0).floor() - 1.0,
        };
        if back {
            tmp - 1.0
        } else {
            tmp
        }
    } else {
        let tmp = (value - 0.5).ceil();
        let back = match mode {
            RoundMode::HalfUp => false,
            RoundMode::HalfDown => value == 0.5 + tmp,
            RoundMode::HalfEven => value == -0.5 + 2.0 * (tmp / 2.0).ceil(),
            RoundMode::HalfOdd => value == -0.5 + 2.0 * (tmp / 2.0).ceil() + 1.0,
        };
        if back {
            tmp + 1.0
        } else {
            tmp
        }
    }
}

/// `round($value, $places)` with the default `PHP_ROUND_HALF_UP`:
/// `round(2.5) == 3.0`, `round(-2.5) == -3.0`, `round(1.955, 2) == 1.96`,
/// `round(1234.5678, -2) == 1200.0`.
///
/// The caller converts `$precision` to `i32` saturating, as PHP does.
/// `round()` of an int with `$places >= 0` is just the int as a float; the
/// engine can skip the call.
pub fn php_round(value: f64, places: i32) -> f64 {
    php_round_mode(value, places, RoundMode::HalfUp)
}

/// `_php_math_round()`: `round()` with an explicit mode.
pub fn php_round_mode(value: f64, places: i32, mode: RoundMode) -> f64 {
    if !value.is_finite() || value == 0.0 {
        return value;
    }
    let places = places.max(i32::MIN + 1);
    let precision_places = 14 - value.abs().log10().floor() as i32;
    let f1 = intpow10(i64::from(places).abs());

    let mut tmp;
    // If the precision a double guarantees reaches beyond the requested
    // places, but not so far that the result would vanish, round to that
    // precision first to wash out representation error.
    if precision_places > places && precision_places - 15 < places {
        let f2 = intpow10(i64::from(precision_places).abs());
        tmp = if precision_places >= 0 { value * f2 } else { value / f2 };
        tmp = round_helper(tmp, mode);
        // places < precision_places, so this moves the point left.
        let f2 = intpow10((i64::from(places) - i64::from(precision_places)).abs());
        tmp /= f2;
    } else {
        tmp = if places >= 0 { value * f1 } else { value / f1 };
        // Beyond a double's precision rounding is pointless.
        if tmp.abs() >= 1e15 {
            return value;
        }
    }

    tmp = round_helper(tmp, mode);

    if places.abs() < 23 {
        if places > 0 {
            tmp / f1
        } else {
            tmp * f1
        }
    } else {
        // 10^places is inexact here, so php-src goes through a string and
        // strtod(), which rounds correctly: snprintf("%15fe%d"). PHP's own
        // snprintf prints no sign for negative zero, so neither do we.
        let tmp = if tmp == 0.0 { 0.0 } else { tmp };
        let text = format!("{:15.6}e{}", tmp, -(places as i64));
        let back = str_to_float(text.as_bytes());
        if back.is_finite() {
            back
        } else {
            value
        }
    }
}

/// `printf`'s limit on `%.Nf` digits in php-src's own `snprintf` (which
/// `number_format` uses): `NDIG - 2`.
const MAX_FIXED_DIGITS: usize = 318;

/// `number_format($num, $decimals, $dec_point, $thousands_sep)` (PHP 8.2).
///
/// The absolute value is rounded half up with [`php_round`] (negative
/// `$decimals` count as 0 in 8.2), printed with exactly `$decimals`
/// decimals, and the integer part grouped by threes. The minus sign is
/// dropped when the rounded value is zero (`number_format(-0.01)` is
/// `"0"`). Infinities print as `"inf"` and NaN as `"nan"`, unsigned and
/// without separators. Either separator may be empty or longer than one
/// byte.
pub fn number_format(value: f64, decimals: i32, dec_point: &[u8], thousands_sep: &[u8]) -> Vec<u8> {
    let dec = decimals.max(0);
    let mut negative = value < 0.0;
    let d = php_round(value.abs(), dec);
    if d.is_nan() {
        return b"nan".to_vec();
    }
    if d.is_infinite() {
        return b"inf".to_vec();
    }
    if negative && d == 0.0 {
        negative = false;
    }

    let dec = dec as usize;
    let mut digits = Vec::with_capacity(24);
    dtoa::write_fixed(&mut digits, d, dec.min(MAX_FIXED_DIGITS));
    let (int_part, frac_part) = match digits.iter().position(|&b| b == b'.') {
        Some(dp) if dec > 0 => (&digits[..dp], &digits[dp + 1..]),
        _ => (&digits[..], &digits[digits.len()..]),
    };

    let groups = (int_part.len() - 1) / 3;
    let mut out = Vec::with_capacity(int_part.len() + groups * thousands_sep.len() + dec + dec_point.len() + 1);
    if negative {
        out.push(b'-');
    }
    let lead = int_part.len() - groups * 3;
    out.extend_from_slice(&int_part[..lead]);
    for chunk in int_part[lead..].chunks(3) {
        out.extend_from_slice(thousands_sep);
        out.extend_from_slice(chunk);
    }
    if dec > 0 {
        out.extend_from_slice(dec_point);
        out.extend_from_slice(frac_part);
        // Only reached beyond the snprintf digit limit.
        out.extend(std::iter::repeat_n(b'0', dec - frac_part.len()));
    }
    out
}
