//! String functions.

use std::borrow::Cow;

use minizts_core::numfmt::{self, ArgSource, FormatArg, SprintfErrorKind};
use minizts_core::{PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{notice, throw, VmResult};

crate::builtin_table! {
    "strlen", ["string"], 1, 0, strlen;
    "str_repeat", ["string", "times"], 2, 0, str_repeat;
    "strtoupper", ["string"], 1, 0, strtoupper;
    "strtolower", ["string"], 1, 0, strtolower;
    "dechex", ["num"], 1, 0, dechex;
    "sprintf", ["format", "...values"], 1, 0, sprintf;
    "number_format", ["num", "decimals", "decimal_separator", "thousands_separator"], 1, 0, number_format;
}

fn strlen<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Value::Str(s) = &*a.value(0) {
        return Ok(Value::Int(s.len() as i64));
    }
    Ok(Value::Int(a.str(g, 0)?.len() as i64))
}

fn str_repeat<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let times = a.int(g, 1)?;
    if times < 0 {
        return a.value_error(1, "must be greater than or equal to 0");
    }
    let total = (s.len() as u128) * (times as u128);
    if total > isize::MAX as u128 {
        return crate::error::fatal(format!(
            "Possible integer overflow in memory allocation ({} * {} + 32)",
            s.len(),
            times
        ));
    }
    crate::builtins::reserve(g, total as usize)?;
    Ok(Value::Str(PhpStr::new(s.repeat(times as usize))))
}

fn strtoupper<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Str(PhpStr::new(a.str(g, 0)?.to_ascii_uppercase())))
}

fn strtolower<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Str(PhpStr::new(a.str(g, 0)?.to_ascii_lowercase())))
}

fn dechex<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let n = a.int(g, 0)?;
    Ok(Value::str(format!("{:x}", n as u64)))
}

/// A value as a `printf` argument.
pub(crate) struct FmtValue<'a>(pub &'a Value);

impl FormatArg for FmtValue<'_> {
    fn to_int(&self) -> i64 {
        self.0.to_int()
    }
    fn to_float(&self) -> f64 {
        self.0.to_float()
    }
    fn to_bytes(&self) -> Cow<'_, [u8]> {
        match self.0 {
            Value::Str(s) => Cow::Borrowed(s.as_bytes()),
            v => {
                let mut out = Vec::new();
                let _ = v.write_string(&mut out, 14);
                Cow::Owned(out)
            }
        }
    }
    fn as_int(&self) -> Option<i64> {
        match self.0 {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// PHP's `sprintf` on arguments `args` (after the format).
pub(crate) fn format<G: Globals>(g: G, format: &[u8], args: &[Value], source: ArgSource) -> VmResult<Vec<u8>> {
    let values: Vec<Value> = args.iter().map(Value::deref_clone).collect();
    for v in &values {
        if let Value::Arr(_) = v {
            // PHP converts arrays with its usual warning when printed.
        }
    }
    let wrapped: Vec<FmtValue> = values.iter().map(FmtValue).collect();
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let r = numfmt::php_sprintf_into(&mut out, format, &wrapped, source, &mut |m| notes.push(m.to_string()));
    for n in notes {
        notice(g, &n);
    }
    match r {
        Ok(()) => Ok(out),
        Err(e) => {
            let class = match e.kind {
                SprintfErrorKind::ArgumentCount => "ArgumentCountError",
                SprintfErrorKind::Value => "ValueError",
                SprintfErrorKind::Fatal => "Error",
            };
            throw(class, String::from_utf8_lossy(&e.message).into_owned())
        }
    }
}

fn sprintf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let f = a.str(g, 0)?;
    let out = format(g, &f, &a.v[1..], ArgSource::Variadic(1))?;
    Ok(Value::Str(PhpStr::new(out)))
}

fn number_format<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let num = a.float(g, 0)?;
    let decimals = a.opt_int(g, 1, 0)?;
    let dec = a.opt_str(g, 2, b".")?;
    let sep = a.opt_str(g, 3, b",")?;
    let decimals = decimals.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    Ok(Value::Str(PhpStr::new(numfmt::number_format(
        num, decimals, &dec, &sep,
    ))))
}
