//! Math functions, as PHP 8.2's ext/standard/math.c and ext/random:
//! rounding, powers and logarithms, trigonometry, base conversion and the
//! random number generators.
//!
//! Float results must match PHP's bit for bit, so each function does the
//! same C library call (Rust's `f64` methods call the same libm) or the
//! same arithmetic in the same order as php-src.

use std::cell::Cell;

use minizts_core::bytecode::BinOp;
use minizts_core::numfmt::{self, MtRand, MtRandMode, Number, RoundMode};
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{deprecated, throw, value_error, VmResult};

crate::builtin_table! {
    "abs", ["num"], 1, 0, abs;
    "ceil", ["num"], 1, 0, ceil;
    "floor", ["num"], 1, 0, floor;
    "round", ["num", "precision", "mode"], 1, 0, round;
    "sqrt", ["num"], 1, 0, sqrt;
    "pow", ["num", "exponent"], 2, 0, pow;
    "intdiv", ["num1", "num2"], 2, 0, intdiv;
    "fmod", ["num1", "num2"], 2, 0, fmod;
    "fdiv", ["num1", "num2"], 2, 0, fdiv;
    "exp", ["num"], 1, 0, exp;
    "expm1", ["num"], 1, 0, expm1;
    "log", ["num", "base"], 1, 0, log;
    "log10", ["num"], 1, 0, log10;
    "log1p", ["num"], 1, 0, log1p;
    "sin", ["num"], 1, 0, sin;
    "cos", ["num"], 1, 0, cos;
    "tan", ["num"], 1, 0, tan;
    "asin", ["num"], 1, 0, asin;
    "acos", ["num"], 1, 0, acos;
    "atan", ["num"], 1, 0, atan;
    "atan2", ["y", "x"], 2, 0, atan2;
    "sinh", ["num"], 1, 0, sinh;
    "cosh", ["num"], 1, 0, cosh;
    "tanh", ["num"], 1, 0, tanh;
    "asinh", ["num"], 1, 0, asinh;
    "acosh", ["num"], 1, 0, acosh;
    "atanh", ["num"], 1, 0, atanh;
    "pi", [], 0, 0, pi;
    "is_nan", ["num"], 1, 0, is_nan;
    "is_finite", ["num"], 1, 0, is_finite;
    "is_infinite", ["num"], 1, 0, is_infinite;
    "hypot", ["x", "y"], 2, 0, hypot;
    "deg2rad", ["num"], 1, 0, deg2rad;
    "rad2deg", ["num"], 1, 0, rad2deg;
    "base_convert", ["num", "from_base", "to_base"], 3, 0, base_convert;
    "mt_srand", ["seed", "mode"], 0, 0, mt_srand;
    "srand", ["seed", "mode"], 0, 0, mt_srand;
    // Declared variadic so that the functions themselves can say PHP's
    // "expects exactly 2 arguments" for any count but 0 and 2.
    "mt_rand", ["min", "...max"], 0, 0, mt_rand;
    "rand", ["min", "...max"], 0, 0, rand;
    "mt_getrandmax", [], 0, 0, mt_getrandmax;
    "getrandmax", [], 0, 0, mt_getrandmax;
    "random_int", ["min", "max"], 2, 0, random_int;
    "lcg_value", [], 0, 0, lcg_value;
}

fn abs<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(match a.number(g, 0)? {
        Number::Int(n) => n.checked_abs().map_or(Value::Float(-(n as f64)), Value::Int),
        Number::Float(f) => Value::Float(f.abs()),
    })
}

fn ceil<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Float(a.number(g, 0)?.to_f64().ceil()))
}

fn floor<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Float(a.number(g, 0)?.to_f64().floor()))
}

fn round<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let num = a.number(g, 0)?;
    let precision = a.opt_int(g, 1, 0)?;
    // PHP 8.2 rounds half up for an unknown mode (8.3 made it an error).
    let mode = RoundMode::from_php(a.opt_int(g, 2, 1)?).unwrap_or(RoundMode::HalfUp);
    let places = precision.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    Ok(Value::Float(match num {
        Number::Int(n) if places >= 0 => n as f64,
        n => numfmt::php_round_mode(n.to_f64(), places, mode),
    }))
}

/// A `float -> float` function.
fn unary<G: Globals>(g: G, a: &Args, f: fn(f64) -> f64) -> VmResult<Value> {
    Ok(Value::Float(f(a.float(g, 0)?)))
}

/// A `(float, float) -> float` function.
fn binary<G: Globals>(g: G, a: &Args, f: fn(f64, f64) -> f64) -> VmResult<Value> {
    let x = a.float(g, 0)?;
    let y = a.float(g, 1)?;
    Ok(Value::Float(f(x, y)))
}

fn sqrt<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::sqrt)
}

fn pow<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    // Exactly the `**` operator, errors included.
    crate::ops::arith(g, BinOp::Pow, &a.get(0), &a.get(1))
}

fn intdiv<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let x = a.int(g, 0)?;
    let y = a.int(g, 1)?;
    if y == 0 {
        return throw("DivisionByZeroError", "Division by zero");
    }
    if y == -1 && x == i64::MIN {
        return throw("ArithmeticError", "Division of PHP_INT_MIN by -1 is not an integer");
    }
    Ok(Value::Int(x / y))
}

fn fmod<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    // Rust's float `%` is C's fmod().
    binary(g, a, |x, y| x % y)
}

fn fdiv<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    binary(g, a, |x, y| x / y)
}

fn exp<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::exp)
}

fn expm1<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::exp_m1)
}

fn log<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let num = a.float(g, 0)?;
    if !a.has(1) {
        return Ok(Value::Float(num.ln()));
    }
    let base = a.float(g, 1)?;
    // php-src's special cases, in its order.
    Ok(Value::Float(if base == 2.0 {
        num.log2()
    } else if base == 10.0 {
        num.log10()
    } else if base == 1.0 {
        f64::NAN
    } else if base <= 0.0 {
        return a.value_error(1, "must be greater than 0");
    } else {
        num.ln() / base.ln()
    }))
}

fn log10<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::log10)
}

fn log1p<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::ln_1p)
}

fn sin<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::sin)
}

fn cos<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::cos)
}

fn tan<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::tan)
}

fn asin<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::asin)
}

fn acos<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::acos)
}

fn atan<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::atan)
}

fn atan2<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    binary(g, a, f64::atan2)
}

fn sinh<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::sinh)
}

fn cosh<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::cosh)
}

fn tanh<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, f64::tanh)
}

fn asinh<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, glibc_asinh)
}

fn acosh<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, glibc_acosh)
}

fn atanh<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, glibc_atanh)
}

// Rust computes asinh/acosh/atanh with its own formulas, which differ
// from the C library's in the last bit; these follow glibc's (fdlibm)
// code, on top of the libm log/log1p that Rust does call.

/// fdlibm's `ln2` (0x3FE62E42FEFA39EF), the same double as Rust's.
const LN2: f64 = std::f64::consts::LN_2;

/// glibc `__asinh`.
fn glibc_asinh(x: f64) -> f64 {
    let ix = (x.to_bits() >> 32) as u32 & 0x7fff_ffff;
    if ix < 0x3e30_0000 {
        // |x| < 2^-28
        return x;
    }
    let xa = x.abs();
    let w = if ix > 0x41b0_0000 {
        // |x| > 2^28
        if ix >= 0x7ff0_0000 {
            return x + x;
        }
        xa.ln() + LN2
    } else if ix > 0x4000_0000 {
        // 2^28 > |x| > 2
        (2.0 * xa + 1.0 / ((xa * xa + 1.0).sqrt() + xa)).ln()
    } else {
        let t = xa * xa;
        (xa + t / (1.0 + (1.0 + t).sqrt())).ln_1p()
    };
    w.copysign(x)
}

/// glibc `__ieee754_acosh` (the 64-bit word variant).
fn glibc_acosh(x: f64) -> f64 {
    let hx = x.to_bits() as i64;
    if hx > 0x4000_0000_0000_0000 {
        if hx >= 0x41b0_0000_0000_0000 {
            if hx >= 0x7ff0_0000_0000_0000 {
                return x + x;
            }
            return x.ln() + LN2;
        }
        let t = x * x;
        (2.0 * x - 1.0 / (x + (t - 1.0).sqrt())).ln()
    } else if hx > 0x3ff0_0000_0000_0000 {
        let t = x - 1.0;
        (t + (2.0 * t + t * t).sqrt()).ln_1p()
    } else if hx == 0x3ff0_0000_0000_0000 {
        0.0
    } else {
        f64::NAN
    }
}

/// glibc `__ieee754_atanh`.
fn glibc_atanh(x: f64) -> f64 {
    let xa = x.abs();
    let t = if xa < 0.5 {
        if xa < f64::from_bits(0x3e30_0000_0000_0000) {
            // |x| < 2^-28
            return x;
        }
        let t = xa + xa;
        0.5 * (t + t * xa / (1.0 - xa)).ln_1p()
    } else if xa < 1.0 {
        0.5 * ((xa + xa) / (1.0 - xa)).ln_1p()
    } else if xa > 1.0 || x.is_nan() {
        return f64::NAN;
    } else {
        return x / 0.0;
    };
    t.copysign(x)
}

fn pi<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Float(std::f64::consts::PI))
}

fn is_nan<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(a.float(g, 0)?.is_nan()))
}

fn is_finite<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(a.float(g, 0)?.is_finite()))
}

fn is_infinite<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(a.float(g, 0)?.is_infinite()))
}

fn hypot<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    binary(g, a, f64::hypot)
}

fn deg2rad<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    // php-src's operation order, for identical rounding.
    unary(g, a, |deg| (deg / 180.0) * std::f64::consts::PI)
}

fn rad2deg<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    unary(g, a, |rad| (rad / std::f64::consts::PI) * 180.0)
}

fn base_convert<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let num = a.str(g, 0)?;
    let from = a.int(g, 1)?;
    let to = a.int(g, 2)?;
    if !(2..=36).contains(&from) {
        return a.value_error(1, "must be between 2 and 36 (inclusive)");
    }
    if !(2..=36).contains(&to) {
        return a.value_error(2, "must be between 2 and 36 (inclusive)");
    }
    let (n, invalid) = base_to_number(&num, from as u32);
    if invalid {
        deprecated(
            g,
            "Invalid characters passed for attempted conversion, these have been ignored",
        );
    }
    Ok(Value::Str(number_to_base(n, to as u32)?))
}

/// `_php_math_basetozval()`: digits of `base` (others are skipped and
/// reported), an int until it would overflow, a float after. Surrounding
/// whitespace and a `0x`/`0o`/`0b` prefix matching the base are allowed.
fn base_to_number(s: &[u8], base: u32) -> (Number, bool) {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let start = s.iter().position(|b| !is_space(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !is_space(b)).map_or(start, |i| i + 1);
    let mut s = &s[start..end];
    if s.len() >= 2 && s[0] == b'0' {
        let prefix = match base {
            16 => b'x',
            8 => b'o',
            2 => b'b',
            _ => 0,
        };
        if prefix != 0 && s[1].to_ascii_lowercase() == prefix {
            s = &s[2..];
        }
    }
    let base_i = i64::from(base);
    let cutoff = i64::MAX / base_i;
    let cutlim = i64::MAX % base_i;
    let mut num: i64 = 0;
    let mut fnum: f64 = 0.0;
    let mut float_mode = false;
    let mut invalid = false;
    for &c in s {
        let d = match (c as char).to_digit(36) {
            Some(d) if d < base => i64::from(d),
            _ => {
                invalid = true;
                continue;
            }
        };
        if !float_mode {
            if num < cutoff || (num == cutoff && d <= cutlim) {
                num = num * base_i + d;
                continue;
            }
            fnum = num as f64;
            float_mode = true;
        }
        fnum = fnum * f64::from(base) + d as f64;
    }
    let n = if float_mode {
        Number::Float(fnum)
    } else {
        Number::Int(num)
    };
    (n, invalid)
}

/// `_php_math_zvaltobase()`: an int's digits (as unsigned), or a float's
/// by repeated fmod and division as php-src does it.
fn number_to_base(n: Number, base: u32) -> VmResult<PhpStr> {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    match n {
        Number::Int(v) => {
            let mut v = v as u64;
            loop {
                out.push(DIGITS[(v % u64::from(base)) as usize]);
                v /= u64::from(base);
                if v == 0 {
                    break;
                }
            }
        }
        Number::Float(f) => {
            let mut f = f.floor();
            if f.is_infinite() {
                return value_error(format!("An infinite value cannot be converted to base {base}"));
            }
            let base = f64::from(base);
            // php-src's buffer holds 64 digits.
            loop {
                let d = (f % base) as i64;
                out.push(DIGITS[d.clamp(0, 35) as usize]);
                f /= base;
                if out.len() >= 64 || f.abs() < 1.0 {
                    break;
                }
            }
        }
    }
    out.reverse();
    Ok(PhpStr::new(out))
}

/// Runs `f` on the request's Mersenne Twister, seeding it first (from
/// the clock) if the script never called `mt_srand()`, as PHP does.
/// `shuffle()`, `array_rand()`, `str_shuffle()` share it. `f` runs with
/// EG borrowed, so it must not reach EG itself.
pub(crate) fn with_mt_rand<G: Globals, R>(g: G, f: impl FnOnce(&mut MtRand) -> R) -> R {
    eg!(g, |eg| f(eg
        .mt_rand
        .get_or_insert_with(|| MtRand::new(random_u64() as u32))))
}

/// PHP's shuffle of `items` on `mt_rand`'s sequence (Fisher–Yates from
/// the end, as `php_array_data_shuffle` and `php_binary_string_shuffle`
/// draw).
pub(crate) fn shuffle_slice<G: Globals, T>(g: G, items: &mut [T]) {
    with_mt_rand(g, |mt| {
        let mut left = items.len();
        while left > 1 {
            left -= 1;
            let j = mt.uniform_range(0, left as i64) as usize;
            items.swap(left, j);
        }
    });
}

fn mt_srand<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let seed = if a.has(0) {
        a.int(g, 0)? as u32
    } else {
        random_u64() as u32
    };
    let mode = match a.opt_int(g, 1, 0)? {
        1 => MtRandMode::Php,
        _ => MtRandMode::Mt19937,
    };
    eg!(g).mt_rand = Some(MtRand::with_mode(seed, mode));
    Ok(Value::Null)
}

/// The `(min, max)` of `mt_rand`/`rand`, which take none or both.
fn rand_bounds<G: Globals>(g: G, a: &Args) -> VmResult<Option<(i64, i64)>> {
    match a.len() {
        0 => Ok(None),
        2 => Ok(Some((a.int(g, 0)?, a.int(g, 1)?))),
        n => throw(
            "ArgumentCountError",
            format!("{}() expects exactly 2 arguments, {n} given", a.name()),
        ),
    }
}

fn mt_rand<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let Some((min, max)) = rand_bounds(g, a)? else {
        return Ok(Value::Int(i64::from(with_mt_rand(g, |mt| mt.next_u32() >> 1))));
    };
    if max < min {
        return a.value_error(1, "must be greater than or equal to argument #1 ($min)");
    }
    Ok(Value::Int(with_mt_rand(g, |mt| mt.range(min, max))))
}

fn rand<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let Some((min, max)) = rand_bounds(g, a)? else {
        return Ok(Value::Int(i64::from(with_mt_rand(g, |mt| mt.next_u32() >> 1))));
    };
    // rand() takes reversed bounds in either order.
    let (lo, hi) = if max < min { (max, min) } else { (min, max) };
    Ok(Value::Int(with_mt_rand(g, |mt| mt.range(lo, hi))))
}

fn mt_getrandmax<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(2_147_483_647))
}

thread_local! {
    /// State of the generator behind `random_int()` and `lcg_value()`,
    /// which PHP draws from the OS and scripts cannot seed.
    static RANDOM: Cell<u64> = const { Cell::new(0) };
}

/// A splitmix64 step, first seeded from the clock and the thread.
fn random_u64() -> u64 {
    RANDOM.with(|state| {
        let mut s = state.get();
        if s == 0 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let here = state as *const Cell<u64> as u64;
            s = nanos ^ here.rotate_left(32) ^ u64::from(std::process::id());
        }
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        state.set(s);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

fn random_int<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let min = a.int(g, 0)?;
    let max = a.int(g, 1)?;
    if min > max {
        return a.value_error(0, "must be less than or equal to argument #2 ($max)");
    }
    let span = (max as u64).wrapping_sub(min as u64);
    let offset = if span == u64::MAX {
        random_u64()
    } else {
        // Rejection sampling keeps the draw uniform.
        let n = span + 1;
        let limit = u64::MAX - (u64::MAX % n);
        loop {
            let r = random_u64();
            if r < limit {
                break r % n;
            }
        }
    };
    Ok(Value::Int((min as u64).wrapping_add(offset) as i64))
}

fn lcg_value<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    // In (0, 1), as PHP's combined LCG.
    let r = (random_u64() >> 11).max(1);
    Ok(Value::Float(r as f64 / (1u64 << 53) as f64))
}
