//! Builtins that read or write the calling function's variables and
//! arguments by name: `compact`, `extract`, `get_defined_vars`,
//! `func_get_args`, `func_get_arg`, `func_num_args` (PHP's
//! ext/standard/array.c and Zend/zend_builtin_functions.c). They work on
//! the frame that called them, through [`crate::scope`]; PHP forbids
//! calling them dynamically, so that frame is always the caller's.

use minizts_core::{PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{warning, VmResult};
use crate::scope;

crate::builtin_table! {
    "compact", ["var_name", "...var_names"], 1, 0, compact;
    "extract", ["array", "flags", "prefix"], 1, 1, extract;
    "get_defined_vars", [], 0, 0, get_defined_vars;
    "func_get_args", [], 0, 0, func_get_args;
    "func_get_arg", ["position"], 1, 0, func_get_arg;
    "func_num_args", [], 0, 0, func_num_args;
}

/// The builtins that must be called by name from the scope they work on.
pub(crate) const SCOPE_BOUND: &[&str] = &[
    "compact",
    "extract",
    "get_defined_vars",
    "func_get_args",
    "func_get_arg",
    "func_num_args",
];

fn compact<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut out = PhpArray::new();
    for i in 0..a.len() {
        compact_one(g, &a.get(i), i, &mut out, 0);
    }
    Ok(Value::arr(out))
}

/// Adds the variable named by `name` (or by every string in it, nested) to
/// `out`; `arg` is the argument's index, for the warning.
fn compact_one<G: Globals>(g: G, name: &Value, arg: usize, out: &mut PhpArray, depth: usize) {
    match name {
        Value::Str(s) => match scope::fetch(g, scope::Which::Local, s) {
            Some(v) => out.insert(minizts_core::array::Key::from_php_str(s.clone()), v),
            None => warning(
                g,
                &format!("compact(): Undefined variable ${}", String::from_utf8_lossy(s)),
            ),
        },
        // PHP guards against an array that contains itself.
        Value::Arr(arr) if depth < 256 => {
            for v in arr.values() {
                compact_one(g, &v.deref_clone(), arg, out, depth + 1);
            }
        }
        Value::Arr(_) => warning(g, "compact(): Recursion detected"),
        other => warning(
            g,
            &format!(
                "compact(): Argument #{} must be string or array of strings, {} given",
                arg + 1,
                crate::types::type_name(other)
            ),
        ),
    }
}

const EXTR_OVERWRITE: i64 = 0;
const EXTR_SKIP: i64 = 1;
const EXTR_PREFIX_SAME: i64 = 2;
const EXTR_PREFIX_ALL: i64 = 3;
const EXTR_PREFIX_INVALID: i64 = 4;
const EXTR_PREFIX_IF_EXISTS: i64 = 5;
const EXTR_IF_EXISTS: i64 = 6;
const EXTR_REFS: i64 = 256;

/// The `EXTR_*` constants.
pub(crate) const CONSTANTS: &[(&str, i64)] = &[
    ("EXTR_OVERWRITE", EXTR_OVERWRITE),
    ("EXTR_SKIP", EXTR_SKIP),
    ("EXTR_PREFIX_SAME", EXTR_PREFIX_SAME),
    ("EXTR_PREFIX_ALL", EXTR_PREFIX_ALL),
    ("EXTR_PREFIX_INVALID", EXTR_PREFIX_INVALID),
    ("EXTR_PREFIX_IF_EXISTS", EXTR_PREFIX_IF_EXISTS),
    ("EXTR_IF_EXISTS", EXTR_IF_EXISTS),
    ("EXTR_REFS", EXTR_REFS),
];

/// PHP's `php_valid_var_name`.
fn valid_name(s: &[u8]) -> bool {
    let start = |c: u8| c == b'_' || c.is_ascii_alphabetic() || c >= 0x7f;
    match s.split_first() {
        Some((&c, rest)) => start(c) && rest.iter().all(|&c| start(c) || c.is_ascii_digit()),
        None => false,
    }
}

fn extract<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let flags = a.opt_int(g, 1, EXTR_OVERWRITE)?;
    // The array comes by reference where it is a variable (PHP's
    // `ZEND_SEND_PREFER_REF`): `EXTR_REFS` binds the variables to its
    // elements, made references inside it.
    let refs = flags & EXTR_REFS != 0;
    let kind = flags & 0xff;
    if !(EXTR_OVERWRITE..=EXTR_IF_EXISTS).contains(&kind) {
        return a.value_error(1, "must be a valid extract type");
    }
    let needs_prefix = matches!(
        kind,
        EXTR_PREFIX_SAME | EXTR_PREFIX_ALL | EXTR_PREFIX_INVALID | EXTR_PREFIX_IF_EXISTS
    );
    if kind > EXTR_SKIP && kind <= EXTR_PREFIX_IF_EXISTS && !a.has(2) {
        return a.value_error(2, "is required when using this extract type");
    }
    let prefix = a.opt_str(g, 2, b"")?;
    if needs_prefix && !prefix.is_empty() && !valid_name(&prefix) {
        return a.value_error(2, "must be a valid identifier");
    }
    let prefixed = |key: &[u8]| {
        let mut s = prefix.to_vec();
        s.push(b'_');
        s.extend_from_slice(key);
        s
    };
    let mut count = 0i64;
    for (k, v) in arr.iter() {
        if matches!(k, minizts_core::array::KeyRef::Str(s) if s.is_empty()) {
            continue;
        }
        let (key, numeric) = match k {
            minizts_core::array::KeyRef::Str(s) => (s.to_vec(), false),
            minizts_core::array::KeyRef::Int(n) => (n.to_string().into_bytes(), true),
        };
        let exists = || !numeric && scope::fetch(g, scope::Which::Local, &key).is_some();
        let name = match kind {
            _ if numeric && !matches!(kind, EXTR_PREFIX_ALL | EXTR_PREFIX_INVALID) => continue,
            EXTR_OVERWRITE => key.clone(),
            EXTR_SKIP if exists() || key == b"this" => continue,
            EXTR_SKIP => key.clone(),
            EXTR_IF_EXISTS if exists() => key.clone(),
            EXTR_IF_EXISTS => continue,
            EXTR_PREFIX_SAME if exists() || key == b"this" => prefixed(&key),
            EXTR_PREFIX_SAME => key.clone(),
            EXTR_PREFIX_ALL => prefixed(&key),
            EXTR_PREFIX_INVALID if numeric || !valid_name(&key) || key == b"this" => prefixed(&key),
            EXTR_PREFIX_INVALID => key.clone(),
            EXTR_PREFIX_IF_EXISTS if exists() => prefixed(&key),
            _ => continue,
        };
        if !valid_name(&name) {
            continue;
        }
        if name == b"this" {
            return crate::error::error("Cannot re-assign $this");
        }
        if refs {
            let key = k.to_key();
            let r = a.with_ref(0, |slot| {
                slot.array_mut()
                    .and_then(|arr| arr.get_mut(&key))
                    .map(|e| crate::gc::slot_ref(g, e))
            });
            if let Some(r) = r {
                scope::bind_to(g, scope::Which::Local, &name, r);
            }
        } else {
            scope::assign(g, &name, v.deref_clone());
        }
        count += 1;
    }
    Ok(Value::Int(count))
}

fn get_defined_vars<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let mut out = PhpArray::new();
    for (name, v) in scope::all(g, scope::Which::Local) {
        out.insert(minizts_core::array::Key::from_php_str(name), v);
    }
    Ok(Value::arr(out))
}

fn func_get_args<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::arr(PhpArray::from_list(scope::args(g, "func_get_args")?)))
}

fn func_get_arg<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let n = a.int(g, 0)?;
    let args = scope::args(g, "func_get_arg")?;
    if n < 0 {
        return a.value_error(0, "must be greater than or equal to 0");
    }
    match args.into_iter().nth(n as usize) {
        Some(v) => Ok(v),
        None => a.value_error(
            0,
            "must be less than the number of the arguments passed to the currently executed function",
        ),
    }
}

fn func_num_args<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(scope::arg_count(g, "func_num_args")? as i64))
}
