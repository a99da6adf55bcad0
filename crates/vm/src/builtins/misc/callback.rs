//! Calling a callable the script names at run time: `call_user_func`,
//! `call_user_func_array` (string keys are named arguments), and
//! `register_shutdown_function`, whose callbacks the request runs after
//! the script ends ([`run_shutdown_functions`]).

use minizts_core::{KeyRef, PhpArray, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::call::{call_resolved, Callee};
use crate::error::{error, throw, warning, VmError, VmResult};

/// A callee's parameters as named arguments see them: name, by
/// reference, has a default, variadic.
fn params_of<G: Globals>(g: G, callee: &Callee) -> Vec<(String, bool, bool, bool)> {
    match callee {
        Callee::User { func, .. } => {
            let script = eg!(g).script.clone().expect("a running script");
            let f = &script.functions[*func as usize];
            f.params
                .iter()
                .map(|p| (p.name.to_string(), p.by_ref, p.has_default, p.variadic))
                .collect()
        }
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

fn callee_name<G: Globals>(g: G, callee: &Callee) -> String {
    match callee {
        Callee::User { func, .. } => {
            let script = eg!(g).script.clone().expect("a running script");
            let f = &script.functions[*func as usize];
            if f.is_closure {
                "{closure}".into()
            } else {
                f.name.to_string()
            }
        }
        Callee::Builtin(id) => crate::builtins::info(*id).name.to_string(),
    }
}

/// Calls `callee` with `args` as `zend_call_function` sends them: by
/// value, except that a reference goes to a by-reference parameter as
/// it is. A builtin's by-reference parameter given a value warns here
/// (the call path warns for user functions).
fn call_sending<G: Globals>(g: G, callee: &Callee, args: Vec<Value>) -> VmResult<Value> {
    let builtin = match callee {
        Callee::Builtin(id) => Some(crate::builtins::info(*id)),
        Callee::User { .. } => None,
    };
    let user_by_ref = |i: usize| match callee {
        Callee::User { func, .. } => {
            let script = eg!(g).script.clone().expect("a running script");
            let params = &script.functions[*func as usize].params;
            match params.get(i) {
                Some(p) => p.by_ref,
                None => params.last().is_some_and(|p| p.variadic && p.by_ref),
            }
        }
        Callee::Builtin(_) => false,
    };
    let mut sent = Vec::with_capacity(args.len());
    for (i, v) in args.into_iter().enumerate() {
        let by_ref = match builtin {
            Some(info) => info.param_by_ref(i),
            None => user_by_ref(i),
        };
        match v {
            Value::Ref(r) if by_ref => sent.push(Value::Ref(r)),
            v => {
                let v = v.deref_clone();
                if let (true, Some(info)) = (by_ref, builtin) {
                    let name = info.params.get(i).or(info.params.last()).copied().unwrap_or("");
                    warning(
                        g,
                        &format!(
                            "{}(): Argument #{} (${}) must be passed by reference, value given",
                            info.name,
                            i + 1,
                            name.trim_start_matches("...")
                        ),
                    );
                }
                sent.push(v);
            }
        }
    }
    call_resolved(g, callee, sent)
}

pub(super) fn call_user_func<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = a.callable(g, 0)?;
    let args: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    call_sending(g, &callee, args)
}

/// The arguments an array gives: its int-keyed elements in order, then
/// its string-keyed ones as named arguments, placed at their
/// parameters. minizts has no way to leave a parameter in the middle
/// unpassed (so it takes its default), nor to collect unknown names into
/// a variadic one: those calls stop with an error that says so.
fn array_arguments<G: Globals>(g: G, callee: &Callee, arr: &PhpArray) -> VmResult<Vec<Value>> {
    let mut out: Vec<Option<Value>> = Vec::with_capacity(arr.len());
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
                let name = String::from_utf8_lossy(name);
                let Some(i) = params.iter().position(|p| p.0 == name && !p.3) else {
                    if params.last().is_some_and(|p| p.3) {
                        return error("minizts does not support named arguments collected by a variadic parameter");
                    }
                    return error(format!("Unknown named parameter ${name}"));
                };
                if out.len() <= i {
                    out.resize(i + 1, None);
                }
                if out[i].is_some() {
                    return error(format!("Named parameter ${name} overwrites previous argument"));
                }
                out[i] = Some(v.clone());
            }
        }
    }
    if out.iter().all(Option::is_some) {
        return Ok(out.into_iter().flatten().collect());
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
                    let script = eg!(g).script.clone().expect("a running script");
                    *at = Some(crate::error::Location {
                        file: script.file.clone(),
                        line: script.functions[*func as usize].line_start,
                    });
                }
                return Err(e);
            }
        }
    }
    error("minizts does not support named arguments that skip an optional parameter")
}

pub(super) fn call_user_func_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = a.callable(g, 0)?;
    let arr = a.array(1)?;
    let args = array_arguments(g, &callee, &arr)?;
    drop(arr);
    call_sending(g, &callee, args)
}

pub(super) fn register_shutdown_function<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    a.callable(g, 0)?;
    let callback = a.get(0);
    let args: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    eg!(g).shutdown_functions.push((callback, args));
    Ok(Value::Null)
}

/// PHP's `php_call_shutdown_functions`: the registered callbacks in
/// order, those they register included. An `exit()` or an error in one
/// ends the rest (the error printed as usual); the first one's outcome
/// is returned. The main frame is still there (see the return of the
/// main script), so the callbacks see the global variables.
pub(crate) fn run_shutdown_functions<G: Globals>(g: G) -> VmResult<()> {
    let mut i = 0;
    loop {
        let next = eg!(g, |eg| eg.shutdown_functions.get(i).cloned());
        let Some((callback, args)) = next else {
            return Ok(());
        };
        i += 1;
        let callee = crate::call::resolve_callable(g, &callback)?;
        match call_sending(g, &callee, args) {
            Ok(_) => {}
            Err(e) => {
                if let VmError::Exit = *e {
                    return Err(e);
                }
                return Err(crate::error::locate(g, e));
            }
        }
    }
}
