//! Formatting and base conversion: sprintf, vsprintf, number_format,
//! dechex/hexdec and the other bases, bin2hex/hex2bin. The format engine
//! and the number formatting are numfmt's; this is the glue that gives
//! them PHP values and reports what they find.

use std::borrow::Cow;
use std::cell::RefCell;

use minizts_core::numfmt::{self, ArgSource, FormatArg, SprintfErrorKind};
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::{opt_nullable_str, str_value};
use crate::builtins::Args;
use crate::error::{deprecated, notice, throw, warning, VmResult};

/// What formatting ran into, replayed in order once it is done (the
/// engine cannot call back into the VM).
enum Issue {
    Notice(String),
    Warning(&'static str),
    ObjectToString,
}

/// A value as a `printf` argument, with PHP's `zval_get_*` coercions.
struct FmtValue<'a> {
    value: &'a Value,
    precision: i32,
    issues: &'a RefCell<Vec<Issue>>,
}

impl FormatArg for FmtValue<'_> {
    fn to_int(&self) -> i64 {
        if let Value::Closure(_) = self.value {
            let issue = Issue::Warning("Object of class Closure could not be converted to int");
            self.issues.borrow_mut().push(issue);
        }
        self.value.to_int()
    }
    fn to_float(&self) -> f64 {
        if let Value::Closure(_) = self.value {
            let issue = Issue::Warning("Object of class Closure could not be converted to float");
            self.issues.borrow_mut().push(issue);
        }
        self.value.to_float()
    }
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        match self.value {
            Value::Str(s) => Cow::Borrowed(s.as_bytes()),
            v => {
                let mut out = Vec::new();
                if let Err(issue) = v.write_string(&mut out, self.precision) {
                    self.issues.borrow_mut().push(match issue {
                        minizts_core::value::ToStringIssue::Array => Issue::Warning("Array to string conversion"),
                        minizts_core::value::ToStringIssue::Object => Issue::ObjectToString,
                    });
                }
                Cow::Owned(out)
            }
        }
    }
    fn as_int(&self) -> Option<i64> {
        match self.value {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// PHP's `sprintf` on `args` (the values after the format) for `printf`
/// (variadic arguments) and `vprintf` (an array), the names its notices
/// carry. Other callers name themselves with [`format_named`].
pub(crate) fn format<G: Globals>(g: G, format: &[u8], args: &[Value], source: ArgSource) -> VmResult<Vec<u8>> {
    let name = match source {
        ArgSource::Variadic(_) => "printf",
        ArgSource::Array => "vprintf",
    };
    format_named(g, name, format, args, source)
}

/// PHP's `sprintf` on `args`, as function `name` (which prefixes its
/// notices).
pub(crate) fn format_named<G: Globals>(
    g: G,
    name: &str,
    format: &[u8],
    args: &[Value],
    source: ArgSource,
) -> VmResult<Vec<u8>> {
    let values: Vec<Value> = args.iter().map(Value::deref_clone).collect();
    let precision = eg!(g).settings.precision;
    let issues = RefCell::new(Vec::new());
    let wrapped: Vec<FmtValue> = values
        .iter()
        .map(|value| FmtValue {
            value,
            precision,
            issues: &issues,
        })
        .collect();
    let mut out = Vec::new();
    let budget = crate::limits::room(g);
    let r = numfmt::php_sprintf_bounded(
        &mut out,
        format,
        &wrapped,
        source,
        &mut |m| issues.borrow_mut().push(Issue::Notice(m.to_string())),
        budget,
    );
    drop(wrapped);
    for issue in issues.into_inner() {
        match issue {
            Issue::Notice(m) => notice(g, &format!("{name}(): {m}")),
            Issue::Warning(m) => warning(g, m),
            Issue::ObjectToString => {
                return crate::error::error("Object of class Closure could not be converted to string")
            }
        }
    }
    match r {
        Ok(()) => Ok(out),
        Err(e) => {
            let message = String::from_utf8_lossy(&e.message).into_owned();
            match e.kind {
                SprintfErrorKind::ArgumentCount => throw("ArgumentCountError", message),
                SprintfErrorKind::Value => throw("ValueError", message),
                SprintfErrorKind::Fatal => crate::error::fatal(message),
                SprintfErrorKind::OverBudget(len) => {
                    // PHP's buffer starts at 240 bytes and doubles until
                    // the output (and a NUL) fits: that is the block its
                    // message names.
                    let mut size = 240usize;
                    while size <= len {
                        size = size.saturating_mul(2);
                    }
                    crate::limits::reserve(g, crate::limits::string_bytes(size))
                        .and_then(|()| crate::limits::out_of_memory(len))
                }
            }
        }
    }
}

pub(super) fn sprintf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let f = a.str(g, 0)?;
    let out = format_named(g, "sprintf", &f, &a.v[1..], ArgSource::Variadic(1))?;
    Ok(str_value(out))
}

pub(super) fn vsprintf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let f = a.str(g, 0)?;
    let values: Vec<Value> = a.array(1)?.values().cloned().collect();
    let out = format_named(g, "vsprintf", &f, &values, ArgSource::Array)?;
    Ok(str_value(out))
}

pub(super) fn number_format<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let num = a.float(g, 0)?;
    let decimals = a.opt_int(g, 1, 0)?;
    let dec = opt_nullable_str(g, a, 2, b".")?;
    let sep = opt_nullable_str(g, a, 3, b",")?;
    let decimals = decimals.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    // PHP sizes the result before it writes it: the integer digits with a
    // separator between groups of three, every requested decimal (it
    // prints them all) after the decimal point, and a sign. Both strings
    // are the script's, so the result can be far longer than the number.
    let magnitude = num.abs();
    let int_digits = if magnitude.is_finite() && magnitude >= 1.0 {
        magnitude.log10() as usize + 1
    } else {
        1
    };
    let fraction = if decimals > 0 {
        (decimals as usize).saturating_add(dec.len())
    } else {
        0
    };
    super::check_alloc(
        g,
        (int_digits - 1) / 3,
        sep.len(),
        (int_digits + 1).saturating_add(fraction),
    )?;
    Ok(str_value(numfmt::number_format(num, decimals, &dec, &sep)))
}

/// PHP's `_php_math_longtobase`: the two's-complement bits of `n` in a
/// power-of-two base.
fn to_base(n: i64, bits: u32) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mask = (1u64 << bits) - 1;
    let mut v = n as u64;
    // Written from the end of a buffer as long as the longest (64 binary
    // digits), then copied out at its exact size: one small allocation.
    let mut buf = [0u8; 64];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = DIGITS[(v & mask) as usize];
        v >>= bits;
        if v == 0 {
            break;
        }
    }
    buf[at..].to_vec()
}

pub(super) fn dechex<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(str_value(to_base(a.int(g, 0)?, 4)))
}

pub(super) fn decoct<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(str_value(to_base(a.int(g, 0)?, 3)))
}

pub(super) fn decbin<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(str_value(to_base(a.int(g, 0)?, 1)))
}

/// PHP's `_php_math_basetozval`: digits of `base` with surrounding
/// whitespace and a `0x`/`0o`/`0b` prefix skipped; other characters are
/// ignored with a deprecation; past `PHP_INT_MAX` the result is a float.
fn from_base<G: Globals>(g: G, s: &[u8], base: u32) -> Value {
    let is_space = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let start = s.iter().position(|c| !is_space(c)).unwrap_or(s.len());
    let end = s.iter().rposition(|c| !is_space(c)).map_or(start, |p| p + 1);
    let mut digits = &s[start..end];
    if digits.len() >= 2 && digits[0] == b'0' {
        let prefix = match base {
            16 => b'x',
            8 => b'o',
            _ => b'b',
        };
        if digits[1].to_ascii_lowercase() == prefix {
            digits = &digits[2..];
        }
    }
    let base_i = base as i64;
    let cutoff = i64::MAX / base_i;
    let cutlim = i64::MAX % base_i;
    let mut num: i64 = 0;
    let mut fnum: f64 = 0.0;
    let mut is_float = false;
    let mut invalid = false;
    for &c in digits {
        let d = match (c as char).to_digit(36) {
            Some(d) if d < base => d as i64,
            _ => {
                invalid = true;
                continue;
            }
        };
        if !is_float {
            if num < cutoff || (num == cutoff && d <= cutlim) {
                num = num * base_i + d;
                continue;
            }
            fnum = num as f64;
            is_float = true;
        }
        fnum = fnum * base as f64 + d as f64;
    }
    if invalid {
        deprecated(
            g,
            "Invalid characters passed for attempted conversion, these have been ignored",
        );
    }
    if is_float {
        Value::Float(fnum)
    } else {
        Value::Int(num)
    }
}

pub(super) fn hexdec<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    Ok(from_base(g, &s, 16))
}

pub(super) fn octdec<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    Ok(from_base(g, &s, 8))
}

pub(super) fn bindec<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    Ok(from_base(g, &s, 2))
}

pub(super) fn bin2hex<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let s = a.str(g, 0)?;
    let mut out = super::safe_alloc(g, s.len(), 2, 0)?;
    for &c in s.iter() {
        out.push(HEX[(c >> 4) as usize]);
        out.push(HEX[(c & 15) as usize]);
    }
    Ok(str_value(out))
}

pub(super) fn hex2bin<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    if s.len() % 2 != 0 {
        warning(g, "hex2bin(): Hexadecimal input string must have an even length");
        return Ok(Value::Bool(false));
    }
    let mut out = Vec::with_capacity(s.len() / 2);
    for pair in s.chunks(2) {
        match ((pair[0] as char).to_digit(16), (pair[1] as char).to_digit(16)) {
            (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
            _ => {
                warning(g, "hex2bin(): Input string must be hexadecimal string");
                return Ok(Value::Bool(false));
            }
        }
    }
    Ok(Value::Str(PhpStr::new(out)))
}
