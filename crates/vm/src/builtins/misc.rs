//! Functions about the engine and the environment: constants, function
//! lookup, time, memory; and the internal constants.

use std::time::{SystemTime, UNIX_EPOCH};

use minizts_core::{PhpArray, Value};
use minizts_globals::{eg, memory, Globals};

use crate::builtins::Args;
use crate::error::VmResult;

crate::builtin_table! {
    "define", ["constant_name", "value", "case_insensitive"], 2, 0, define;
    "defined", ["constant_name"], 1, 0, defined;
    "function_exists", ["function"], 1, 0, function_exists;
    "microtime", ["as_float"], 0, 0, microtime;
    "hrtime", ["as_number"], 0, 0, hrtime;
    "memory_get_usage", ["real_usage"], 0, 0, memory_get_usage;
    "memory_get_peak_usage", ["real_usage"], 0, 0, memory_get_peak_usage;
}

/// The internal constants, folded by the compiler.
pub(crate) fn constants() -> Vec<(&'static str, Value)> {
    vec![
        ("PHP_EOL", Value::str("\n")),
        ("PHP_INT_MAX", Value::Int(i64::MAX)),
        ("PHP_INT_MIN", Value::Int(i64::MIN)),
        ("PHP_INT_SIZE", Value::Int(8)),
        ("PHP_FLOAT_EPSILON", Value::Float(f64::EPSILON)),
        ("PHP_FLOAT_MAX", Value::Float(f64::MAX)),
        ("PHP_FLOAT_MIN", Value::Float(f64::MIN_POSITIVE)),
        ("PHP_FLOAT_DIG", Value::Int(15)),
        ("NAN", Value::Float(f64::NAN)),
        ("INF", Value::Float(f64::INFINITY)),
        ("M_PI", Value::Float(std::f64::consts::PI)),
        ("M_E", Value::Float(std::f64::consts::E)),
        ("PHP_VERSION", Value::str("8.2.0-minizts")),
        ("PHP_MAJOR_VERSION", Value::Int(8)),
        ("PHP_MINOR_VERSION", Value::Int(2)),
        ("PHP_OS", Value::str("Linux")),
        ("PHP_OS_FAMILY", Value::str("Linux")),
        ("E_ALL", Value::Int(32767)),
        ("E_ERROR", Value::Int(1)),
        ("E_WARNING", Value::Int(2)),
        ("E_NOTICE", Value::Int(8)),
        ("E_DEPRECATED", Value::Int(8192)),
        ("E_STRICT", Value::Int(2048)),
        ("STR_PAD_RIGHT", Value::Int(1)),
        ("STR_PAD_LEFT", Value::Int(0)),
        ("STR_PAD_BOTH", Value::Int(2)),
        ("SORT_REGULAR", Value::Int(0)),
        ("SORT_NUMERIC", Value::Int(1)),
        ("SORT_STRING", Value::Int(2)),
        ("SORT_FLAG_CASE", Value::Int(8)),
        ("SORT_NATURAL", Value::Int(6)),
        ("COUNT_NORMAL", Value::Int(0)),
        ("COUNT_RECURSIVE", Value::Int(1)),
        ("ARRAY_FILTER_USE_KEY", Value::Int(2)),
        ("ARRAY_FILTER_USE_BOTH", Value::Int(1)),
        ("JSON_HEX_TAG", Value::Int(1)),
        ("JSON_HEX_AMP", Value::Int(2)),
        ("JSON_HEX_APOS", Value::Int(4)),
        ("JSON_HEX_QUOT", Value::Int(8)),
        ("JSON_FORCE_OBJECT", Value::Int(16)),
        ("JSON_NUMERIC_CHECK", Value::Int(32)),
        ("JSON_UNESCAPED_SLASHES", Value::Int(64)),
        ("JSON_PRETTY_PRINT", Value::Int(128)),
        ("JSON_UNESCAPED_UNICODE", Value::Int(256)),
        ("JSON_PARTIAL_OUTPUT_ON_ERROR", Value::Int(512)),
        ("JSON_PRESERVE_ZERO_FRACTION", Value::Int(1024)),
        ("JSON_UNESCAPED_LINE_TERMINATORS", Value::Int(2048)),
        ("JSON_INVALID_UTF8_IGNORE", Value::Int(1_048_576)),
        ("JSON_INVALID_UTF8_SUBSTITUTE", Value::Int(2_097_152)),
        ("JSON_THROW_ON_ERROR", Value::Int(4_194_304)),
        ("MT_RAND_MT19937", Value::Int(0)),
        ("MT_RAND_PHP", Value::Int(1)),
        ("PHP_ROUND_HALF_UP", Value::Int(1)),
        ("PHP_ROUND_HALF_DOWN", Value::Int(2)),
        ("PHP_ROUND_HALF_EVEN", Value::Int(3)),
        ("PHP_ROUND_HALF_ODD", Value::Int(4)),
    ]
}

fn define<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let v = a.get(1);
    if a.has(2) && a.bool(g, 2)? {
        crate::error::warning(g, "define(): Argument #3 ($case_insensitive) is ignored since declaration of case-insensitive constants is no longer supported");
    }
    Ok(Value::Bool(crate::builtins::define_constant(g, &name, v)?))
}

fn defined<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let found = eg!(g).constants.contains_key(name.as_bytes())
        || minizts_globals::cg!(g).constant_table.contains_key(name.as_bytes());
    Ok(Value::Bool(found))
}

fn function_exists<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let name = name.strip_prefix(b"\\").unwrap_or(&name).to_ascii_lowercase();
    Ok(Value::Bool(crate::call::lookup_function(g, &name).is_some()))
}

fn now() -> std::time::Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

fn microtime<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let t = now();
    if a.opt_bool(g, 0, false)? {
        return Ok(Value::Float(t.as_secs_f64()));
    }
    let usec = t.subsec_micros() as f64 / 1e6;
    Ok(Value::str(format!("{usec:.8} {}", t.as_secs())))
}

fn hrtime<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let t = START.get_or_init(std::time::Instant::now).elapsed();
    // A monotonic clock from an arbitrary point, as PHP's.
    let ns = t.as_nanos() as i64 + 1_000_000_000;
    if a.opt_bool(g, 0, false)? {
        return Ok(Value::Int(ns));
    }
    Ok(Value::arr(PhpArray::from_list(vec![
        Value::Int(ns / 1_000_000_000),
        Value::Int(ns % 1_000_000_000),
    ])))
}

fn memory_get_usage<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(memory::usage() as i64))
}

fn memory_get_peak_usage<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(memory::peak() as i64))
}
