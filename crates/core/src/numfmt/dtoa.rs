//! Decimal digits of a double, in the `zend_dtoa()` modes PHP's float
//! printing is built on.
//!
//! PHP links David Gay's `dtoa.c`; the modes it uses are
//!
//! * mode 0: the shortest digit string that reads back as the same double
//!   (`serialize_precision = -1`, i.e. `var_dump`, `var_export`,
//!   `json_encode`);
//! * mode 2: the value correctly rounded to `n` significant digits
//!   (`precision = 14` for `echo`, `%g` in `printf`);
//! * mode 3: correctly rounded to `n` digits after the point (`%f`, `%e`).
//!
//! Rust's own float formatting (Grisu with a Dragon4 fallback) computes
//! the same correctly rounded digits, so rather than carry a bignum
//! implementation we let `core::fmt` generate them and reshape its output.
//! Two places where dtoa differs are patched up: exact ties between two
//! shortest candidates (dtoa picks the even digit, Rust the upper one),
//! and dtoa's "small integer" path, which keeps trailing zeros after a tie
//! rounded down. The oracle tests compare the results with PHP on many
//! thousands of doubles.

use std::fmt::Write;

/// Digits kept inline before spilling to the heap: enough for
/// `precision = 17` and any shortest representation, which covers the hot
/// `echo $float` path without allocating.
const INLINE: usize = 40;

/// The most significant digits a double's exact decimal expansion can
/// have (the largest subnormal has 767); asking for more only adds zeros,
/// which `dtoa` strips anyway.
const MAX_SIGNIFICANT: usize = 800;

/// A digit string with its decimal point position, as `zend_dtoa` returns
/// it: the value is `0.DIGITS × 10^decpt`, with trailing zeros removed and
/// zero written as the single digit `0` with `decpt = 1`.
pub struct Digits {
    inline: [u8; INLINE],
    len: usize,
    spill: Vec<u8>,
    exp_neg: bool,
    exp: i32,
    in_exp: bool,
    /// Position of the decimal point relative to the first digit.
    pub decpt: i32,
}

impl Digits {
    pub(crate) fn new() -> Self {
        Digits {
            inline: [0; INLINE],
            len: 0,
            spill: Vec::new(),
            exp_neg: false,
            exp: 0,
            in_exp: false,
            decpt: 0,
        }
    }

    /// The ASCII digits, most significant first.
    pub fn digits(&self) -> &[u8] {
        if self.spill.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }

    pub(crate) fn push(&mut self, b: u8) {
        if self.spill.is_empty() && self.len < INLINE {
            self.inline[self.len] = b;
            self.len += 1;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline[..self.len]);
            }
            self.spill.push(b);
        }
    }

    fn truncate(&mut self, n: usize) {
        if self.spill.is_empty() {
            self.len = n;
        } else {
            self.spill.truncate(n);
        }
    }

    /// Turns the collected `d.ddde±x` pieces into dtoa's shape.
    fn finish(mut self) -> Self {
        let exp = if self.exp_neg { -self.exp } else { self.exp };
        let mut n = self.digits().len();
        while n > 1 && self.digits()[n - 1] == b'0' {
            n -= 1;
        }
        self.truncate(n);
        if self.digits() == b"0" {
            // dtoa reports zero as "0" with the point after it.
            self.decpt = 1;
        } else {
            self.decpt = exp + 1;
        }
        self
    }
}

/// Collects the output of `{:e}`-style formatting: digits before the `e`
/// (ignoring the point), the exponent after it.
impl Write for Digits {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for &b in s.as_bytes() {
            if self.in_exp {
                match b {
                    b'-' => self.exp_neg = true,
                    b'0'..=b'9' => self.exp = self.exp.saturating_mul(10).saturating_add((b - b'0') as i32),
                    _ => {}
                }
            } else {
                match b {
                    b'0'..=b'9' => self.push(b),
                    b'e' | b'E' => self.in_exp = true,
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

/// Where a float's decimal digits come from: the allocation-free
/// generator here ([`Stateless`]) or the big-integer one in
/// [`super::bigdtoa`], whose buffers come from a freelist the caller
/// chooses (the threads issue's `--dtoa` switch). All print the same.
pub trait DigitSource {
    /// Mode 0: the shortest digits that round-trip.
    fn shortest(&mut self, value: f64) -> Digits;
    /// Mode 2: `ndigits` significant digits, correctly rounded.
    fn significant(&mut self, value: f64, ndigits: i32) -> Digits;
}

/// The allocation-free generator: Rust's own shortest and exact float
/// formatting, reshaped into dtoa's output (what the review of php-src
/// #13974 suggested instead of a freelist).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stateless;

impl DigitSource for Stateless {
    fn shortest(&mut self, value: f64) -> Digits {
        shortest(value)
    }

    fn significant(&mut self, value: f64, ndigits: i32) -> Digits {
        significant(value, ndigits)
    }
}

/// Mode 0: the shortest digits that round-trip. The sign is ignored; the
/// value must be finite.
pub fn shortest(value: f64) -> Digits {
    let mut d = Digits::new();
    // Writing into `Digits` never fails.
    let _ = write!(d, "{:e}", value.abs());
    let mut d = d.finish();
    d.break_tie_to_even(value.abs());
    d
}

impl Digits {
    /// When the double lies exactly halfway between two shortest
    /// candidates, Rust takes the upper one while dtoa takes the one
    /// ending in an even digit (`99033389970746.625` prints as `...62`).
    fn break_tie_to_even(&mut self, value: f64) {
        let ds = self.digits();
        let n = ds.len();
        if value == 0.0 || n > 18 || ds[n - 1] & 1 == 0 {
            return;
        }
        let d = ds.iter().fold(0u64, |acc, &b| acc * 10 + u64::from(b - b'0'));
        let q = self.decpt - n as i32;
        let (m, t) = odd_decomposition(value);
        let halfway = |twice: u64| exact_half_match(m, t, twice, q);
        let adjusted = if halfway(2 * d - 1) {
            d - 1
        } else if halfway(2 * d + 1) {
            d + 1
        } else {
            return;
        };
        // At a power of two the gap below is half the gap above, so the
        // even candidate can lie outside the interval that reads back as
        // this double (2^-24 prints as ...063, not ...062): only take it
        // if it round-trips.
        let text = format!("{adjusted}e{q}");
        if text.parse::<f64>() != Ok(value) {
            return;
        }
        let mut text = [0u8; 20];
        let mut i = text.len();
        let mut v = adjusted;
        while v > 0 {
            i -= 1;
            text[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        let new_len = text.len() - i;
        self.decpt += new_len as i32 - n as i32;
        self.truncate(0);
        let mut end = text.len();
        while end > i + 1 && text[end - 1] == b'0' {
            end -= 1;
        }
        for &b in &text[i..end] {
            self.push(b);
        }
    }
}

/// `value = m * 2^t` with `m` odd.
fn odd_decomposition(value: f64) -> (u64, i32) {
    let bits = value.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, exp) = if exp_field == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_field - 1075)
    };
    let tz = mant.trailing_zeros();
    (mant >> tz, exp + tz as i32)
}

/// Whether `2 * m * 2^t == twice * 10^q` for odd `m` and odd `twice`.
fn exact_half_match(m: u64, t: i32, twice: u64, q: i32) -> bool {
    // Both sides' odd parts and powers of two must agree.
    if t + 1 != q {
        return false;
    }
    let pow5 = |k: u32| 5u128.checked_pow(k);
    if q >= 0 {
        pow5(q as u32)
            .and_then(|p| p.checked_mul(u128::from(twice)))
            .is_some_and(|rhs| rhs == u128::from(m))
    } else {
        pow5(q.unsigned_abs())
            .and_then(|p| p.checked_mul(u128::from(m)))
            .is_some_and(|lhs| lhs == u128::from(twice))
    }
}

/// Mode 2: `ndigits` significant digits, correctly rounded (ties to even
/// on the exact binary value), trailing zeros dropped. `ndigits <= 0`
/// means 1, as in dtoa. The sign is ignored; the value must be finite.
pub fn significant(value: f64, ndigits: i32) -> Digits {
    let n = (ndigits.max(1) as usize).min(MAX_SIGNIFICANT);
    if let Some(d) = small_integer_tie(value.abs(), n) {
        return d;
    }
    let mut d = Digits::new();
    let _ = write!(d, "{:.*e}", n - 1, value.abs());
    d.finish()
}

/// dtoa's quirk for integers below 10^15 whose rounding to `n` digits is
/// an exact tie that goes down (to the even digit): its fast path gives
/// up on the tie and its "small integer" path returns the kept digits
/// without stripping trailing zeros, so `echo 100000000000005.0` prints
/// `1.0000000000000E+14` and `printf("%.6G", 1227805)` prints
/// `1.22780E+6`. Ties that round up, and everything else, come out as
/// usual.
pub(crate) fn small_integer_tie(value: f64, n: usize) -> Option<Digits> {
    if !(1.0..1e15).contains(&value) || value.fract() != 0.0 {
        return None;
    }
    let int = value as u64;
    let total = int.ilog10() as usize + 1;
    if total <= n {
        return None;
    }
    let scale = 10u64.pow((total - n) as u32);
    let kept = int / scale;
    if (int % scale) * 2 != scale || kept & 1 != 0 {
        return None;
    }
    let mut d = Digits::new();
    let mut text = [0u8; 20];
    let mut i = text.len();
    let mut v = kept;
    while v > 0 {
        i -= 1;
        text[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    for &b in &text[i..] {
        d.push(b);
    }
    d.decpt = total as i32;
    Some(d)
}

/// Writes `|value|` in fixed notation with exactly `frac` digits after the
/// point (none and no point when `frac == 0`), correctly rounded: the
/// digits of `%.Nf` (dtoa mode 3, zero padded).
pub fn write_fixed(out: &mut Vec<u8>, value: f64, frac: usize) {
    let mut w = VecWriter(out);
    let _ = write!(w, "{:.*}", frac, value.abs());
}

/// Writes `|value|` as `d.ddde±x` with `frac` digits after the point and at
/// least one exponent digit, the way PHP's `php_conv_fp()` prints `%e`.
pub fn write_exp(out: &mut Vec<u8>, value: f64, frac: usize, exp_char: u8) {
    let start = out.len();
    {
        let mut w = VecWriter(out);
        let _ = write!(w, "{:.*e}", frac, value.abs());
    }
    // Rust writes `1.5e7` / `1.5e-7`; PHP wants an explicit `+`.
    if let Some(rel) = out[start..].iter().rposition(|&b| b == b'e') {
        let at = start + rel;
        out[at] = exp_char;
        if out.get(at + 1) != Some(&b'-') {
            out.insert(at + 1, b'+');
        }
    }
}

/// Lets `write!` append to a byte vector without an intermediate `String`.
struct VecWriter<'a>(&'a mut Vec<u8>);

impl Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
