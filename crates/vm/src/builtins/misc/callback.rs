//! Calling a callable the script names at run time: `call_user_func`,
//! `call_user_func_array` (string keys are named arguments), and
//! `register_shutdown_function`, whose callbacks the request runs after
//! the script ends ([`run_shutdown_functions`]).

use minizts_core::{PhpArray, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::builtins::CallSite;
use crate::call::{call_resolved_named, Callee};
use crate::error::{warning, VmError, VmResult};

/// Calls `callee` with `args` as `zend_call_function` sends them: by
/// value, except that a reference goes to a by-reference parameter as
/// it is. A builtin's by-reference parameter given a value warns here
/// (the call path warns for user functions).
fn call_sending<G: Globals>(g: G, callee: &Callee, args: Vec<Value>) -> VmResult<Value> {
    call_sending_named(g, callee, args, PhpArray::new())
}

/// [`call_sending`] with the named arguments a variadic parameter
/// collects.
fn call_sending_named<G: Globals>(g: G, callee: &Callee, args: Vec<Value>, mut named: PhpArray) -> VmResult<Value> {
    let builtin = match callee {
        Callee::Builtin(id) => Some(crate::builtins::info(*id)),
        Callee::User { .. } | Callee::Method(_) => None,
    };
    let user_func = callee.user_function();
    let user_by_ref = |i: usize| match user_func {
        Some(func) => {
            // SAFETY: used within the call.
            unsafe { crate::code::known(g, func) }.param_by_ref(i)
        }
        None => false,
    };
    let mut sent = Vec::with_capacity(args.len());
    for (i, v) in args.into_iter().enumerate() {
        let by_ref = match builtin {
            Some(info) => info.param_by_ref(i),
            None => user_by_ref(i),
        };
        match v {
            Value::Ref(r) if by_ref => sent.push(Value::Ref(r)),
            // A parameter a named argument skipped stays unset.
            Value::Undef => sent.push(Value::Undef),
            v => {
                let v = v.deref_clone();
                if let (true, Some(info), false) = (by_ref, builtin, crate::builtins::prefers_ref(callee)) {
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
    if !named.is_empty() && !user_by_ref(usize::MAX) {
        for v in named.values_mut() {
            *v = v.deref_clone();
        }
    }
    call_resolved_named(g, callee, sent, Some(named), CallSite::Callback)
}

pub(super) fn call_user_func<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = a.callable(g, 0)?;
    let args: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    call_sending(g, &callee, args)
}

pub(super) fn call_user_func_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = a.callable(g, 0)?;
    let arr = a.array(1)?;
    let sent = crate::call::arguments_from_array(g, &callee, &arr)?;
    drop(arr);
    call_sending_named(g, &callee, sent.args, sent.named)
}

/// `forward_static_call`: calls its callback as `call_user_func` does,
/// except that a static method of a class the calling code's called
/// scope derives from keeps that called scope (`static::`).
pub(super) fn forward_static_call<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = forwarding_callee(g, a)?;
    let args: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    call_sending(g, &callee, args)
}

pub(super) fn forward_static_call_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = forwarding_callee(g, a)?;
    let arr = a.array(1)?;
    let sent = crate::call::arguments_from_array(g, &callee, &arr)?;
    drop(arr);
    call_sending_named(g, &callee, sent.args, sent.named)
}

/// The callback of `forward_static_call(_array)`, its called scope the
/// caller's where that derives from the class the method was found in.
fn forwarding_callee<G: Globals>(g: G, a: &Args) -> VmResult<Callee> {
    let checked = a.checked_callable(g, 0)?;
    if crate::objects::scope(g).is_none() {
        return crate::error::error(format!("Cannot call {}() when no class scope is active", a.name()));
    }
    let called = crate::objects::called(g);
    Ok(match (checked.callee, checked.calling, called) {
        (Callee::Method(m), Some(calling), Some(called)) if m.this.is_none() && called.is_subclass_of(&calling) => {
            Callee::Method(std::rc::Rc::new(crate::objects::Resolved {
                method: m.method.clone(),
                this: None,
                called,
                magic_name: m.magic_name.clone(),
                closure: m.closure.clone(),
            }))
        }
        (callee, _, _) => callee,
    })
}

pub(super) fn register_shutdown_function<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = a.callable(g, 0)?;
    // A method is resolved now, from the registering code (whose `self`
    // a callback may name), as PHP keeps the resolved callback.
    let callback = match &callee {
        Callee::Method(m) if m.magic_name.is_none() && callee.user_function().is_some() => {
            crate::call::closure_of(g, callee)?
        }
        _ => a.get(0),
    };
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
        let builtin = match callee {
            Callee::Builtin(id) => Some((crate::builtins::info(id).name, args.clone())),
            Callee::User { .. } | Callee::Method(_) => None,
        };
        match call_sending(g, &callee, args) {
            Ok(_) => {}
            Err(e) => {
                if let VmError::Exit = *e {
                    return Err(e);
                }
                return Err(match builtin {
                    Some((name, args)) => crate::error::locate_after_script(e, name, &args),
                    None => crate::error::locate(g, e),
                });
            }
        }
    }
}
