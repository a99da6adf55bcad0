//! Functions about the engine and the environment: constants, function
//! lookup, time, memory, error reporting, ini settings; and the internal
//! constants.
//!
//! `ini_get`/`ini_set` know the settings minizts has (`precision`,
//! `memory_limit`, `max_execution_time`, `error_reporting`) and a few
//! fixed ones; like PHP they answer `false` for any other name.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::{eg, memory, Globals};

use crate::builtins::Args;
use crate::error::{warning, VmResult};

mod assert;
mod backtrace;
mod callback;
mod errors;
mod gc;
mod ini;
mod version;
use assert::{assert, assert_options};
use backtrace::{debug_backtrace, debug_print_backtrace};
pub(crate) use callback::run_shutdown_functions;
use callback::{
    call_user_func, call_user_func_array, forward_static_call, forward_static_call_array, register_shutdown_function,
};
use errors::{
    error_clear_last, error_get_last, restore_error_handler, restore_exception_handler, set_error_handler,
    set_exception_handler, trigger_error,
};
use gc::{gc_collect_cycles, gc_disable, gc_enable, gc_enabled, gc_mem_caches, gc_status};
use ini::parse_ini_string;
use version::version_compare;

crate::builtin_table! {
    "define", ["constant_name", "value", "case_insensitive"], 2, 0, define;
    "defined", ["constant_name"], 1, 0, defined;
    "constant", ["name"], 1, 0, constant;
    "function_exists", ["function"], 1, 0, function_exists;
    "microtime", ["as_float"], 0, 0, microtime;
    "hrtime", ["as_number"], 0, 0, hrtime;
    "memory_get_usage", ["real_usage"], 0, 0, memory_get_usage;
    "memory_get_peak_usage", ["real_usage"], 0, 0, memory_get_peak_usage;
    "time", [], 0, 0, time;
    "gettimeofday", ["as_float"], 0, 0, gettimeofday;
    "date_default_timezone_set", ["timezoneId"], 1, 0, date_default_timezone_set;
    "date_default_timezone_get", [], 0, 0, date_default_timezone_get;
    "error_reporting", ["error_level"], 0, 0, error_reporting;
    "ini_get", ["option"], 1, 0, ini_get;
    "ini_set", ["option", "value"], 2, 0, ini_set;
    "ini_alter", ["option", "value"], 2, 0, ini_set;
    "set_time_limit", ["seconds"], 1, 0, set_time_limit;
    "php_sapi_name", [], 0, 0, php_sapi_name;
    "phpversion", ["extension"], 0, 0, phpversion;
    "gc_collect_cycles", [], 0, 0, gc_collect_cycles;
    "gc_enable", [], 0, 0, gc_enable;
    "gc_disable", [], 0, 0, gc_disable;
    "gc_enabled", [], 0, 0, gc_enabled;
    "gc_status", [], 0, 0, gc_status;
    "gc_mem_caches", [], 0, 0, gc_mem_caches;
    "call_user_func", ["callback", "...args"], 1, 0, call_user_func;
    "call_user_func_array", ["callback", "args"], 2, 0, call_user_func_array;
    "forward_static_call", ["callback", "...args"], 1, 0, forward_static_call;
    "assert", ["assertion", "description"], 1, 0, assert;
    "assert_options", ["option", "value"], 1, 0, assert_options;
    "forward_static_call_array", ["callback", "args"], 2, 0, forward_static_call_array;
    "register_shutdown_function", ["callback", "...args"], 1, 0, register_shutdown_function;
    "set_error_handler", ["callback", "error_levels"], 1, 0, set_error_handler;
    "restore_error_handler", [], 0, 0, restore_error_handler;
    "set_exception_handler", ["callback"], 1, 0, set_exception_handler;
    "restore_exception_handler", [], 0, 0, restore_exception_handler;
    "trigger_error", ["message", "error_level"], 1, 0, trigger_error;
    "user_error", ["message", "error_level"], 1, 0, trigger_error;
    "error_get_last", [], 0, 0, error_get_last;
    "error_clear_last", [], 0, 0, error_clear_last;
    "debug_backtrace", ["options", "limit"], 0, 0, debug_backtrace;
    "debug_print_backtrace", ["options", "limit"], 0, 0, debug_print_backtrace;
    "gethostname", [], 0, 0, gethostname;
    "get_included_files", [], 0, 0, get_included_files;
    "get_required_files", [], 0, 0, get_included_files;
    "get_include_path", [], 0, 0, get_include_path;
    "set_include_path", ["include_path"], 1, 0, set_include_path;
    "version_compare", ["version1", "version2", "operator"], 2, 0, version_compare;
    "parse_ini_string", ["ini_string", "process_sections", "scanner_mode"], 1, 0, parse_ini_string;
}

/// The version minizts reports (`PHP_VERSION`, `phpversion()`): the
/// release of PHP 8.2 it is compared with (the oracle's `php -v`), in
/// PHP's own format, so scripts that print or compare it see what they
/// would under that PHP.
const PHP_VERSION: &str = "8.2.36";

/// The internal constants PHP 8.1 deprecated (`file()`'s flags that never
/// did anything).
pub(crate) const DEPRECATED_CONSTANTS: &[(&str, i64)] = &[("FILE_BINARY", 0), ("FILE_TEXT", 0)];

/// The internal constants, folded by the compiler.
pub(crate) fn constants() -> Vec<(&'static str, Value)> {
    use std::f64::consts;
    let mut out = vec![
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
        ("PHP_VERSION", Value::str(PHP_VERSION)),
        ("PHP_MAJOR_VERSION", Value::Int(8)),
        ("PHP_MINOR_VERSION", Value::Int(2)),
        ("PHP_RELEASE_VERSION", Value::Int(36)),
        ("PHP_EXTRA_VERSION", Value::str("")),
        ("PHP_VERSION_ID", Value::Int(80236)),
        ("PHP_DEBUG", Value::Int(0)),
        ("PHP_ZTS", Value::Int(1)),
        ("PHP_MAXPATHLEN", Value::Int(4096)),
        ("PHP_OS", Value::str("Linux")),
        ("PHP_OS_FAMILY", Value::str("Linux")),
        ("PHP_SAPI", Value::str("cli")),
        ("DIRECTORY_SEPARATOR", Value::str("/")),
        ("PATH_SEPARATOR", Value::str(":")),
        // Math (ext/standard/math.c): the C library's M_* values.
        ("M_PI", Value::Float(consts::PI)),
        ("M_E", Value::Float(consts::E)),
        ("M_LOG2E", Value::Float(consts::LOG2_E)),
        ("M_LOG10E", Value::Float(consts::LOG10_E)),
        ("M_LN2", Value::Float(consts::LN_2)),
        ("M_LN10", Value::Float(consts::LN_10)),
        ("M_PI_2", Value::Float(consts::FRAC_PI_2)),
        ("M_PI_4", Value::Float(consts::FRAC_PI_4)),
        ("M_1_PI", Value::Float(consts::FRAC_1_PI)),
        ("M_2_PI", Value::Float(consts::FRAC_2_PI)),
        ("M_SQRTPI", Value::Float(1.772_453_850_905_516)),
        ("M_2_SQRTPI", Value::Float(consts::FRAC_2_SQRT_PI)),
        ("M_LNPI", Value::Float(1.144_729_885_849_400_2)),
        ("M_EULER", Value::Float(0.577_215_664_901_532_9)),
        ("M_SQRT2", Value::Float(consts::SQRT_2)),
        ("M_SQRT1_2", Value::Float(consts::FRAC_1_SQRT_2)),
        ("M_SQRT3", Value::Float(1.732_050_807_568_877_2)),
        ("PHP_ROUND_HALF_UP", Value::Int(1)),
        ("PHP_ROUND_HALF_DOWN", Value::Int(2)),
        ("PHP_ROUND_HALF_EVEN", Value::Int(3)),
        ("PHP_ROUND_HALF_ODD", Value::Int(4)),
        ("MT_RAND_MT19937", Value::Int(0)),
        ("MT_RAND_PHP", Value::Int(1)),
        ("PATHINFO_DIRNAME", Value::Int(1)),
        ("PATHINFO_BASENAME", Value::Int(2)),
        ("PATHINFO_EXTENSION", Value::Int(4)),
        ("PATHINFO_FILENAME", Value::Int(8)),
        // Errors.
        ("E_ERROR", Value::Int(1)),
        ("E_WARNING", Value::Int(2)),
        ("E_PARSE", Value::Int(4)),
        ("E_NOTICE", Value::Int(8)),
        ("E_CORE_ERROR", Value::Int(16)),
        ("E_CORE_WARNING", Value::Int(32)),
        ("E_COMPILE_ERROR", Value::Int(64)),
        ("E_COMPILE_WARNING", Value::Int(128)),
        ("E_USER_ERROR", Value::Int(256)),
        ("E_USER_WARNING", Value::Int(512)),
        ("E_USER_NOTICE", Value::Int(1024)),
        ("E_STRICT", Value::Int(2048)),
        ("E_RECOVERABLE_ERROR", Value::Int(4096)),
        ("E_DEPRECATED", Value::Int(8192)),
        ("E_USER_DEPRECATED", Value::Int(16384)),
        ("E_ALL", Value::Int(32767)),
        // Where a setting may be changed (`ini_get_all()`'s access
        // levels).
        ("INI_USER", Value::Int(1)),
        ("INI_PERDIR", Value::Int(2)),
        ("INI_SYSTEM", Value::Int(4)),
        ("INI_ALL", Value::Int(7)),
        ("DEBUG_BACKTRACE_PROVIDE_OBJECT", Value::Int(1)),
        ("DEBUG_BACKTRACE_IGNORE_ARGS", Value::Int(2)),
        // Strings.
        ("STR_PAD_RIGHT", Value::Int(1)),
        ("STR_PAD_LEFT", Value::Int(0)),
        ("STR_PAD_BOTH", Value::Int(2)),
        ("ENT_HTML_QUOTE_NONE", Value::Int(0)),
        ("ENT_HTML_QUOTE_SINGLE", Value::Int(1)),
        ("ENT_HTML_QUOTE_DOUBLE", Value::Int(2)),
        ("ENT_COMPAT", Value::Int(2)),
        ("ENT_QUOTES", Value::Int(3)),
        ("ENT_NOQUOTES", Value::Int(0)),
        ("ENT_IGNORE", Value::Int(4)),
        ("ENT_SUBSTITUTE", Value::Int(8)),
        ("ENT_DISALLOWED", Value::Int(128)),
        ("ENT_HTML401", Value::Int(0)),
        ("ENT_XML1", Value::Int(16)),
        ("ENT_XHTML", Value::Int(32)),
        ("ENT_HTML5", Value::Int(48)),
        ("HTML_SPECIALCHARS", Value::Int(0)),
        ("HTML_ENTITIES", Value::Int(1)),
        // URLs.
        ("PHP_URL_SCHEME", Value::Int(0)),
        ("PHP_URL_HOST", Value::Int(1)),
        ("PHP_URL_PORT", Value::Int(2)),
        ("PHP_URL_USER", Value::Int(3)),
        ("PHP_URL_PASS", Value::Int(4)),
        ("PHP_URL_PATH", Value::Int(5)),
        ("PHP_URL_QUERY", Value::Int(6)),
        ("PHP_URL_FRAGMENT", Value::Int(7)),
        ("PHP_QUERY_RFC1738", Value::Int(1)),
        ("PHP_QUERY_RFC3986", Value::Int(2)),
        // Arrays.
        ("SORT_ASC", Value::Int(4)),
        ("SORT_DESC", Value::Int(3)),
        ("SORT_REGULAR", Value::Int(0)),
        ("SORT_NUMERIC", Value::Int(1)),
        ("SORT_STRING", Value::Int(2)),
        ("SORT_LOCALE_STRING", Value::Int(5)),
        ("SORT_NATURAL", Value::Int(6)),
        ("SORT_FLAG_CASE", Value::Int(8)),
        ("CASE_LOWER", Value::Int(0)),
        ("CASE_UPPER", Value::Int(1)),
        ("COUNT_NORMAL", Value::Int(0)),
        ("COUNT_RECURSIVE", Value::Int(1)),
        ("ARRAY_FILTER_USE_KEY", Value::Int(2)),
        ("ARRAY_FILTER_USE_BOTH", Value::Int(1)),
        // JSON.
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
        ("JSON_OBJECT_AS_ARRAY", Value::Int(1)),
        ("JSON_BIGINT_AS_STRING", Value::Int(2)),
        ("JSON_INVALID_UTF8_IGNORE", Value::Int(1_048_576)),
        ("JSON_INVALID_UTF8_SUBSTITUTE", Value::Int(2_097_152)),
        ("JSON_THROW_ON_ERROR", Value::Int(4_194_304)),
    ];
    const JSON_ERROR_NAMES: [&str; 11] = [
        "JSON_ERROR_NONE",
        "JSON_ERROR_DEPTH",
        "JSON_ERROR_STATE_MISMATCH",
        "JSON_ERROR_CTRL_CHAR",
        "JSON_ERROR_SYNTAX",
        "JSON_ERROR_UTF8",
        "JSON_ERROR_RECURSION",
        "JSON_ERROR_INF_OR_NAN",
        "JSON_ERROR_UNSUPPORTED_TYPE",
        "JSON_ERROR_INVALID_PROPERTY_NAME",
        "JSON_ERROR_UTF16",
    ];
    // syslog's (from the C library; minizts has no syslog functions).
    let log = [
        ("LOG_EMERG", libc::LOG_EMERG),
        ("LOG_ALERT", libc::LOG_ALERT),
        ("LOG_CRIT", libc::LOG_CRIT),
        ("LOG_ERR", libc::LOG_ERR),
        ("LOG_WARNING", libc::LOG_WARNING),
        ("LOG_NOTICE", libc::LOG_NOTICE),
        ("LOG_INFO", libc::LOG_INFO),
        ("LOG_DEBUG", libc::LOG_DEBUG),
        ("LOG_KERN", libc::LOG_KERN),
        ("LOG_USER", libc::LOG_USER),
        ("LOG_MAIL", libc::LOG_MAIL),
        ("LOG_DAEMON", libc::LOG_DAEMON),
        ("LOG_AUTH", libc::LOG_AUTH),
        ("LOG_SYSLOG", libc::LOG_SYSLOG),
        ("LOG_LPR", libc::LOG_LPR),
        ("LOG_NEWS", libc::LOG_NEWS),
        ("LOG_UUCP", libc::LOG_UUCP),
        ("LOG_CRON", libc::LOG_CRON),
        ("LOG_AUTHPRIV", libc::LOG_AUTHPRIV),
        ("LOG_LOCAL0", libc::LOG_LOCAL0),
        ("LOG_LOCAL1", libc::LOG_LOCAL1),
        ("LOG_LOCAL2", libc::LOG_LOCAL2),
        ("LOG_LOCAL3", libc::LOG_LOCAL3),
        ("LOG_LOCAL4", libc::LOG_LOCAL4),
        ("LOG_LOCAL5", libc::LOG_LOCAL5),
        ("LOG_LOCAL6", libc::LOG_LOCAL6),
        ("LOG_LOCAL7", libc::LOG_LOCAL7),
        ("LOG_PID", libc::LOG_PID),
        ("LOG_CONS", libc::LOG_CONS),
        ("LOG_ODELAY", libc::LOG_ODELAY),
        ("LOG_NDELAY", libc::LOG_NDELAY),
        ("LOG_NOWAIT", libc::LOG_NOWAIT),
        ("LOG_PERROR", libc::LOG_PERROR),
    ];
    out.extend(log.iter().map(|&(name, v)| (name, Value::Int(i64::from(v)))));
    out.extend(ini::CONSTANTS.iter().map(|&(name, v)| (name, Value::Int(v))));
    out.extend(assert::CONSTANTS.iter().map(|&(name, v)| (name, Value::Int(v))));
    out.extend(
        JSON_ERROR_NAMES
            .iter()
            .enumerate()
            .map(|(i, &name)| (name, Value::Int(i as i64))),
    );
    out
}

fn define<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    if name.windows(2).any(|w| w == b"::") {
        return crate::error::value_error("define(): Argument #1 ($constant_name) cannot be a class constant");
    }
    let v = a.get(1);
    if a.has(2) && a.bool(g, 2)? {
        crate::error::warning(g, "define(): Argument #3 ($case_insensitive) is ignored since declaration of case-insensitive constants is no longer supported");
    }
    Ok(Value::Bool(crate::builtins::define_constant(g, &name, v)?))
}

fn defined<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    Ok(Value::Bool(lookup_constant(g, &name, true)?.is_some()))
}

fn constant<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    match lookup_constant(g, &name, false)? {
        Some(v) => Ok(v),
        // (Only a silent lookup gives nothing without an error.)
        None => Ok(Value::Null),
    }
}

/// The constant `defined()` and `constant()` name (PHP's
/// `zend_get_constant_ex`): a global or namespaced one, or a class's
/// (`C::X`, `self::X`). `silent` (for `defined`) gives `None` for what
/// is not there, where `constant` throws PHP's error.
fn lookup_constant<G: Globals>(g: G, name: &[u8], silent: bool) -> VmResult<Option<Value>> {
    let name = name.strip_prefix(b"\\").unwrap_or(name);
    if let Some(p) = name.windows(2).rposition(|w| w == b"::").filter(|&p| p > 0) {
        return class_constant(g, &name[..p], &name[p + 2..], silent);
    }
    let special = match name.to_ascii_lowercase().as_slice() {
        b"true" => Some(Value::Bool(true)),
        b"false" => Some(Value::Bool(false)),
        b"null" => Some(Value::Null),
        _ => None,
    };
    let key = crate::builtins::constant_key(name);
    let found = special
        .or_else(|| eg!(g).constants.get(&*key).cloned())
        .or_else(|| minizts_globals::cg!(g).constant_table.get(&*key).cloned());
    let found = match found {
        Some(v) => Some(v),
        // A deprecated constant's use warns, as `defined` does not.
        None if silent => DEPRECATED_CONSTANTS
            .iter()
            .any(|(n, _)| n.as_bytes() == name)
            .then_some(Value::Null),
        None => crate::builtins::deprecated_constant(g, name),
    };
    match found {
        Some(v) => Ok(Some(v)),
        None if silent => Ok(None),
        None => crate::error::error(format!("Undefined constant \"{}\"", String::from_utf8_lossy(name))),
    }
}

/// `C::X` for [`lookup_constant`]: messages name the class as written.
fn class_constant<G: Globals>(g: G, class: &[u8], name: &[u8], silent: bool) -> VmResult<Option<Value>> {
    let written = String::from_utf8_lossy(class);
    let no_scope = |word: &str| format!("Cannot access \"{word}\" when no class scope is active");
    let ce = match written.to_ascii_lowercase().as_str() {
        "self" => match crate::objects::scope(g) {
            Some(c) => c,
            None => return crate::error::error(no_scope("self")),
        },
        "parent" => match crate::objects::scope(g) {
            None => return crate::error::error(no_scope("parent")),
            Some(c) => match c.parent.clone() {
                Some(p) => p,
                None => return crate::error::error("Cannot access \"parent\" when current class scope has no parent"),
            },
        },
        "static" => match crate::objects::called(g) {
            Some(c) => c,
            None => return crate::error::error(no_scope("static")),
        },
        _ if silent => match crate::class::load(g, class)? {
            Some(c) => c,
            None => return Ok(None),
        },
        _ => crate::class::find(g, class)?,
    };
    let key = PhpStr::from(name);
    let Some(c) = ce.consts.get(&key).cloned() else {
        if silent {
            return Ok(None);
        }
        return crate::error::error(format!(
            "Undefined constant {written}::{}",
            String::from_utf8_lossy(name)
        ));
    };
    if silent && !crate::objects::const_visible(g, c.flags, c.declaring) {
        return Ok(None);
    }
    // A trait's constants are its users', not its own (PHP checks this
    // after the visibility).
    if ce.kind == minizts_core::object::ClassKind::Trait && crate::objects::const_visible(g, c.flags, c.declaring) {
        if silent {
            return Ok(None);
        }
        return crate::error::error(format!(
            "Cannot access trait constant {written}::{} directly",
            String::from_utf8_lossy(name)
        ));
    }
    crate::objects::class_const(g, &ce, &key).map(Some)
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

fn time<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(now().as_secs() as i64))
}

fn gettimeofday<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let t = now();
    if a.opt_bool(g, 0, false)? {
        return Ok(Value::Float(t.as_secs_f64()));
    }
    // minizts runs in UTC: no offset, no daylight saving.
    let fields = [
        ("sec", t.as_secs() as i64),
        ("usec", i64::from(t.subsec_micros())),
        ("minuteswest", 0),
        ("dsttime", 0),
    ];
    Ok(Value::arr(PhpArray::from_pairs(
        fields.map(|(k, v)| (Key::Str(PhpStr::from(k)), Value::Int(v))),
    )))
}

fn date_default_timezone_set<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    // Accepted and forgotten: minizts has no dates to apply it to.
    a.str(g, 0)?;
    Ok(Value::Bool(true))
}

fn date_default_timezone_get<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::str("UTC"))
}

/// PHP's TypeError for argument `i` declared as type `ty` (for the
/// declarations the `Args` helpers do not name, such as `?int`).
fn arg_type_error<T>(a: &Args, i: usize, param: &str, ty: &str) -> VmResult<T> {
    crate::error::type_error(format!(
        "{}(): Argument #{} (${param}) must be of type {ty}, {} given",
        a.name(),
        i + 1,
        crate::types::type_name(&a.value(i))
    ))
}

fn error_reporting<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let old = eg!(g).error_reporting;
    let level = match &*a.value(0) {
        Value::Null | Value::Undef => None,
        Value::Arr(_) | Value::Closure(_) => return arg_type_error(a, 0, "error_level", "?int"),
        Value::Str(s) if minizts_core::numfmt::is_numeric_str(s).is_none() => {
            return arg_type_error(a, 0, "error_level", "?int")
        }
        _ => Some(a.int(g, 0)?),
    };
    if let Some(level) = level {
        eg!(g).error_reporting = level;
    }
    Ok(Value::Int(old))
}

/// `memory_limit` as PHP's ini syntax writes it.
fn format_quantity(bytes: Option<usize>) -> String {
    const K: usize = 1024;
    match bytes {
        None => "-1".into(),
        Some(0) => "0".into(),
        Some(b) if b % (K * K * K) == 0 => format!("{}G", b / (K * K * K)),
        Some(b) if b % (K * K) == 0 => format!("{}M", b / (K * K)),
        Some(b) if b % K == 0 => format!("{}K", b / K),
        Some(b) => b.to_string(),
    }
}

/// An ini quantity (`128M`, `1g`, `512k`, `1048576`); `None` inside the
/// `Some` is "unlimited" (any negative number).
fn parse_quantity(s: &str) -> Option<Option<usize>> {
    let s = s.trim();
    let (digits, mult) = match s.as_bytes().last()?.to_ascii_lowercase() {
        b'k' => (&s[..s.len() - 1], 1 << 10),
        b'm' => (&s[..s.len() - 1], 1 << 20),
        b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: i64 = digits.trim().parse().ok()?;
    if n < 0 {
        return Some(None);
    }
    Some(Some((n as usize).saturating_mul(mult)))
}

/// C `atol()`: leading whitespace, a sign, digits; 0 if none (how
/// PHP's `OnUpdateLong` reads an ini number).
pub(super) fn atol(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    let n = digits[..end]
        .bytes()
        .fold(0i64, |n, d| n.wrapping_mul(10).wrapping_add(i64::from(d - b'0')));
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

/// The current value of ini setting `name`, if minizts knows it.
fn ini_value<G: Globals>(g: G, name: &[u8]) -> Option<String> {
    Some(match name {
        b"precision" => eg!(g).settings.precision.to_string(),
        b"serialize_precision" => "-1".into(),
        b"memory_limit" => format_quantity(eg!(g).settings.memory_limit),
        b"max_execution_time" => eg!(g).settings.max_execution_time.as_secs().to_string(),
        b"error_reporting" => eg!(g).error_reporting.to_string(),
        b"include_path" => eg!(g).settings.include_path.clone(),
        b"display_errors" => "stderr".into(),
        b"date.timezone" => String::new(),
        b"default_charset" => "UTF-8".into(),
        b"arg_separator.output" | b"arg_separator.input" => "&".into(),
        b"max_input_vars" => "1000".into(),
        b"max_input_nesting_level" => "64".into(),
        b"unserialize_callback_func" => eg!(g, |eg| eg.basic.ini_text(name).map(|t| t.to_vec()))
            .map_or(String::new(), |t| String::from_utf8_lossy(&t).into_owned()),
        b"zend.assertions" | b"assert.active" | b"assert.bail" | b"assert.warning" | b"assert.exception"
        | b"assert.callback" => return assert::ini_value(g, name),
        b"zend.enable_gc" => match eg!(g, |eg| eg.basic.ini_text(name).map(|t| t.to_vec())) {
            Some(text) => String::from_utf8_lossy(&text).into_owned(),
            None => if eg!(g).gc.enabled { "1" } else { "0" }.into(),
        },
        _ => return super::pcre::ini_value(g, name),
    })
}

fn ini_get<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    Ok(ini_value(g, &name).map_or(Value::Bool(false), Value::str))
}

fn ini_set<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let value = match &*a.value(1) {
        Value::Null | Value::Undef => PhpStr::empty(),
        Value::Arr(_) | Value::Closure(_) => {
            // php-src words this one without the given type.
            return crate::error::type_error(format!(
                "{}(): Argument #2 ($value) must be of type string|int|float|bool|null",
                a.name()
            ));
        }
        _ => a.str(g, 1)?,
    };
    let value = String::from_utf8_lossy(&value).into_owned();
    let Some(old) = ini_value(g, &name) else {
        return Ok(Value::Bool(false));
    };
    match name.as_bytes() {
        b"precision" => {
            let p = atol(&value);
            if p < -1 {
                return Ok(Value::Bool(false));
            }
            eg!(g).settings.precision = p.min(i64::from(i32::MAX)) as i32;
        }
        b"memory_limit" => {
            let Some(limit) = parse_quantity(&value) else {
                return Ok(Value::Bool(false));
            };
            if let Some(bytes) = limit {
                let used = memory::usage();
                if bytes < used {
                    warning(
                        g,
                        &format!("Failed to set memory limit to {bytes} bytes (Current memory usage is {used} bytes)"),
                    );
                    return Ok(Value::Bool(false));
                }
            }
            eg!(g).settings.memory_limit = limit;
            // SAFETY: the flag lives in this thread's executor globals;
            // `run_request`'s guard unwatches before the request ends.
            unsafe { memory::watch(limit.unwrap_or(usize::MAX), &eg!(g).interrupt.pending) };
        }
        b"max_execution_time" => {
            let limit = Duration::from_secs(atol(&value).max(0) as u64);
            eg!(g).settings.max_execution_time = limit;
            crate::limits::set_time_limit(g, limit);
        }
        b"error_reporting" => eg!(g).error_reporting = atol(&value),
        b"include_path" => eg!(g).settings.include_path = value,
        n if (n.starts_with(b"assert.") || n == b"zend.assertions") && !assert::set(g, n, &value) => {
            return Ok(Value::Bool(false));
        }
        n if n.starts_with(b"assert.") || n == b"zend.assertions" => {}
        b"zend.enable_gc" => eg!(g, |eg| {
            eg.gc.enabled = ini_bool(&value);
            eg.basic.set_ini_text(b"zend.enable_gc", Some(value.as_bytes()));
        }),
        n if n.starts_with(b"pcre.") => super::pcre::ini_set(g, n, &value),
        b"unserialize_callback_func" => eg!(g)
            .basic
            .set_ini_text(b"unserialize_callback_func", Some(value.as_bytes())),
        // Known but fixed in minizts.
        _ => {}
    }
    Ok(Value::str(old))
}

/// How PHP reads a boolean ini value (`zend_ini_parse_bool`): "true",
/// "yes" and "on" in any case, otherwise a number that is not 0.
pub(super) fn ini_bool(s: &str) -> bool {
    ["true", "yes", "on"].iter().any(|w| s.eq_ignore_ascii_case(w)) || atol(s) != 0
}

fn set_time_limit<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let secs = a.int(g, 0)?;
    let limit = Duration::from_secs(secs.max(0) as u64);
    eg!(g).settings.max_execution_time = limit;
    crate::limits::set_time_limit(g, limit);
    Ok(Value::Bool(true))
}

fn php_sapi_name<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::str("cli"))
}

fn phpversion<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if a.has(0) && !a.value(0).is_null() {
        if let Value::Arr(_) | Value::Closure(_) = &*a.value(0) {
            return arg_type_error(a, 0, "extension", "?string");
        }
        let ext = a.str(g, 0)?.to_ascii_lowercase();
        // The bundled extensions whose functions minizts has.
        let known: &[&[u8]] = &[b"core", b"standard", b"json", b"random", b"date", b"pcre"];
        if !known.contains(&ext.as_slice()) {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::str(PHP_VERSION))
}

fn gethostname<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    // PHP's buffer: HOST_NAME_MAX and the terminator.
    let mut buf = [0u8; 256];
    // SAFETY: the length passed is the buffer's.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        let code = e.raw_os_error().unwrap_or(0);
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text);
        warning(g, &format!("unable to fetch host [{code}]: {text}"));
        return Ok(Value::Bool(false));
    }
    let len = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Ok(Value::str(&buf[..len]))
}

/// `get_included_files`: the main script, when it was a file (not `-r`
/// code or standard input), then every file included, in the order they
/// were first included.
fn get_included_files<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let files = eg!(g, |eg| {
        let main = eg.script().map(|s| s.file.clone()).filter(|f| f.starts_with('/'));
        main.iter()
            .map(|f| Value::str(f.as_bytes()))
            .chain(eg.code.included_files().map(|f| Value::str(f.as_bytes())))
            .collect()
    });
    Ok(Value::arr(PhpArray::from_list(files)))
}

/// `get_include_path`
fn get_include_path<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::str(eg!(g).settings.include_path.as_bytes()))
}

/// `set_include_path`: the previous path; an empty one is refused.
fn set_include_path<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let path = a.str(g, 0)?;
    if path.is_empty() {
        return Ok(Value::Bool(false));
    }
    let new = String::from_utf8_lossy(&path).into_owned();
    let old = std::mem::replace(&mut eg!(g).settings.include_path, new);
    Ok(Value::str(old.as_bytes()))
}
