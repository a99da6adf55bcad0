//! Named arguments: placing an argument array's string keys at the
//! callee's parameters, as PHP's `zend_handle_named_arg` does.

use minizts_core::{KeyRef, PhpArray, Value};
use minizts_globals::{eg, Globals};

use crate::call::Callee;
use crate::error::{error, throw, VmError, VmResult};

/// A callee's parameters as named arguments see them: name, by
/// reference, has a default, variadic.
pub(crate) fn params_of<G: Globals>(g: G, callee: &Callee) -> Vec<(String, bool, bool, bool)> {
    if let (Callee::Method(_), Some(func)) = (callee, callee.user_function()) {
        return params_of(g, &Callee::User { func, closure: None });
    }
    match callee {
        Callee::User { func, .. } => {
            // SAFETY: used here only.
            let f = unsafe { crate::code::known(g, *func) };
            f.params
                .iter()
                .map(|p| (p.name.to_string(), p.by_ref, p.has_default, p.variadic))
                .collect()
        }
        Callee::Method(_) => Vec::new(),
        Callee::Builtin(id) => {
            let info = crate::builtins::info(*id);
            info.params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let variadic = p.starts_with("...");
                    let name = p.trim_start_matches("...").to_string();
                    (name, info.param_by_ref(i), i >= info.min as usize, variadic)
                })
                .collect()
        }
    }
}

pub(crate) fn callee_name<G: Globals>(g: G, callee: &Callee) -> String {
    if let Callee::Method(m) = callee {
        // The class that declares it, as PHP names a function by its scope.
        let class = eg!(g).classes.get(m.method.declaring).clone();
        return format!("{}::{}", class.name, m.method.name);
    }
    match callee {
        Callee::User { func, .. } => {
            // SAFETY: used here only.
            let f = unsafe { crate::code::known(g, *func) };
            f.name.to_string()
        }
        Callee::Builtin(id) => crate::builtins::info(*id).name.to_string(),
        Callee::Method(_) => unreachable!("handled above"),
    }
}

/// The arguments an array gives (`f(...$args)`, `f(a: 1)`,
/// `call_user_func_array`): its int-keyed elements in order, then its
/// string-keyed ones as named arguments, placed at their parameters. A
/// parameter left out before a named one is sent unset
/// ([`Value::Undef`]), which a user function's default fills in
/// (`JMP_IF_PASSED`) and a builtin reads as absent; one without a
/// default is PHP's `ArgumentCountError`. Names no parameter has go to
/// [`Sent::named`] when the callee ends in a variadic parameter, which
/// collects them under their names.
pub fn arguments_from_array<G: Globals>(g: G, callee: &Callee, arr: &PhpArray) -> VmResult<Sent> {
    let mut out: Vec<Option<Value>> = Vec::with_capacity(arr.len());
    let mut extra = PhpArray::new();
    let mut named = false;
    let mut params = None;
    for (k, v) in arr.iter() {
        match k {
            KeyRef::Int(_) => {
                if named {
                    return error("Cannot use positional argument after named argument");
                }
                out.push(Some(v.clone()));
            }
            KeyRef::Str(name) => {
                named = true;
                let params = params.get_or_insert_with(|| params_of(g, callee));
                let text = String::from_utf8_lossy(name);
                let Some(i) = params.iter().position(|p| p.0 == text && !p.3) else {
                    if params.last().is_some_and(|p| p.3) {
                        extra.insert(minizts_core::Key::from_bytes(name), v.clone());
                        continue;
                    }
                    return error(format!("Unknown named parameter ${text}"));
                };
                if out.len() <= i {
                    out.resize(i + 1, None);
                }
                if out[i].is_some() {
                    return error(format!("Named parameter ${text} overwrites previous argument"));
                }
                out[i] = Some(v.clone());
            }
        }
    }
    if out.iter().all(Option::is_some) {
        return Ok(Sent {
            args: out.into_iter().flatten().collect(),
            named: extra,
        });
    }
    let params = params.unwrap_or_else(|| params_of(g, callee));
    for (i, slot) in out.iter().enumerate() {
        if slot.is_none() {
            let (name, _, has_default, _) = &params[i];
            if !has_default {
                let e = throw::<()>(
                    "ArgumentCountError",
                    format!("{}(): Argument #{} (${name}) not passed", callee_name(g, callee), i + 1),
                )
                .unwrap_err();
                // PHP reports it at the function, as a missing argument.
                let mut e = crate::error::locate(g, e);
                if let (VmError::Uncaught { at, .. }, Callee::User { func, .. }) = (&mut *e, callee) {
                    *at = Some(crate::error::Location {
                        file: crate::code::file_of(g, *func),
                        // SAFETY: used here only.
                        line: unsafe { crate::code::known(g, *func) }.line_start,
                    });
                }
                return Err(e);
            }
        }
    }
    Ok(Sent {
        args: out.into_iter().map(|v| v.unwrap_or(Value::Undef)).collect(),
        named: extra,
    })
}

/// The arguments of a call made from an array: the positional ones
/// (parameters a named argument skipped are [`Value::Undef`]) and the
/// named ones that a variadic parameter collects.
pub struct Sent {
    pub args: Vec<Value>,
    pub named: PhpArray,
}

/// Whether the parameter named `name` of `callee` is by reference (a name
/// no parameter has goes to a variadic parameter, if there is one).
pub fn named_param_by_ref<G: Globals>(g: G, callee: &Callee, name: &[u8]) -> bool {
    let params = params_of(g, callee);
    match params.iter().find(|p| p.0.as_bytes() == name && !p.3) {
        Some(p) => p.1,
        None => params.last().is_some_and(|p| p.3 && p.1),
    }
}
