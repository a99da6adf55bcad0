//! User error handlers and the error record: `set_error_handler`,
//! `restore_error_handler`, `trigger_error`, `error_get_last`,
//! `error_clear_last`, and the uncaught-exception handler
//! (`set_exception_handler`, `restore_exception_handler`). The error
//! handlers are called by [`crate::error::run_user_handlers`], the
//! exception handler when the request ends on an exception.

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::executor::UserErrorHandler;
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{raise, Level, VmResult};

/// PHP's `E_ALL`, the levels a handler takes by default.
const E_ALL: i64 = 32767;

pub(super) fn set_error_handler<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callback = a.opt_callable(g, 0)?.map(|_| a.get(0));
    let levels = a.opt_int(g, 1, E_ALL)?;
    let old = eg!(g, |eg| {
        let errors = &mut eg.user_errors;
        let old = errors.handler.take();
        errors.stack.push(old.clone());
        errors.handler = callback.map(|callback| UserErrorHandler { callback, levels });
        old
    });
    Ok(old.map_or(Value::Null, |h| h.callback))
}

pub(super) fn restore_error_handler<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    eg!(g, |eg| {
        let errors = &mut eg.user_errors;
        errors.handler = errors.stack.pop().flatten();
    });
    Ok(Value::Bool(true))
}

pub(super) fn set_exception_handler<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callback = a.opt_callable(g, 0)?.map(|_| a.get(0));
    let old = eg!(g, |eg| {
        let errors = &mut eg.user_errors;
        let old = errors.exception_handler.take();
        errors.exception_handlers.push(old.clone());
        errors.exception_handler = callback;
        old
    });
    Ok(old.unwrap_or(Value::Null))
}

pub(super) fn restore_exception_handler<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    eg!(g, |eg| {
        let errors = &mut eg.user_errors;
        errors.exception_handler = errors.exception_handlers.pop().flatten();
    });
    Ok(Value::Bool(true))
}

pub(super) fn trigger_error<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let message = a.str(g, 0)?;
    let level = match a.opt_int(g, 1, Level::UserNotice.bit())? {
        256 => Level::UserError,
        512 => Level::UserWarning,
        1024 => Level::UserNotice,
        16384 => Level::UserDeprecated,
        _ => {
            return a.value_error(
                1,
                "must be one of E_USER_ERROR, E_USER_WARNING, E_USER_NOTICE, or E_USER_DEPRECATED",
            )
        }
    };
    raise(g, level, &String::from_utf8_lossy(&message))?;
    Ok(Value::Bool(true))
}

pub(super) fn error_get_last<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let Some(last) = eg!(g).user_errors.last.clone() else {
        return Ok(Value::Null);
    };
    let mut arr = PhpArray::new();
    arr.insert(Key::from_bytes(b"type"), Value::Int(last.level));
    arr.insert(Key::from_bytes(b"message"), Value::str(last.message.as_str()));
    arr.insert(
        Key::from_bytes(b"file"),
        Value::str(last.file.as_deref().unwrap_or("Unknown")),
    );
    arr.insert(Key::from_bytes(b"line"), Value::Int(i64::from(last.line)));
    Ok(Value::Arr(arr.into()))
}

pub(super) fn error_clear_last<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    eg!(g).user_errors.last = None;
    Ok(Value::Null)
}
