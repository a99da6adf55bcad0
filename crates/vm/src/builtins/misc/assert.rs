//! `assert()` with PHP 8.2's settings (`zend.assertions`, `assert.*`)
//! and `assert_options()`. The compiler adds the description
//! `assert(<expression>)` when a call gives none and skips the call while
//! `zend.assertions` is not 1 (`ASSERT_CHECK`).

use minizts_core::Value;
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{warning, VmError, VmResult};

const ASSERT_ACTIVE: i64 = 1;
const ASSERT_CALLBACK: i64 = 2;
const ASSERT_BAIL: i64 = 3;
const ASSERT_WARNING: i64 = 4;
const ASSERT_EXCEPTION: i64 = 5;

pub(crate) const CONSTANTS: &[(&str, i64)] = &[
    ("ASSERT_ACTIVE", ASSERT_ACTIVE),
    ("ASSERT_CALLBACK", ASSERT_CALLBACK),
    ("ASSERT_BAIL", ASSERT_BAIL),
    ("ASSERT_WARNING", ASSERT_WARNING),
    ("ASSERT_EXCEPTION", ASSERT_EXCEPTION),
];

pub(super) fn assert<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if !eg!(g).basic.assert.active {
        return Ok(Value::Bool(true));
    }
    if a.value(0).to_bool() {
        return Ok(Value::Bool(true));
    }
    let description = if a.has(1) && !a.value(1).is_null() {
        Some(a.str(g, 1)?)
    } else {
        None
    };
    let callback = eg!(g, |eg| eg.basic.assert.callback.clone()).or_else(|| {
        eg!(g, |eg| eg.basic.ini_text(b"assert.callback").map(Value::str))
            .filter(|v| !matches!(v, Value::Str(s) if s.is_empty()))
    });
    if let Some(cb) = callback {
        let (file, line) = match crate::error::current_location(g) {
            Some(l) => (l.file.to_string(), l.line),
            None => (String::new(), 0),
        };
        let mut args = vec![Value::str(file.as_bytes()), Value::Int(i64::from(line)), Value::Null];
        if let Some(d) = &description {
            args.push(Value::Str(d.clone()));
        }
        crate::call::call_callable(g, &cb, args)?;
    }
    let settings = eg!(g, |eg| (
        eg.basic.assert.exception,
        eg.basic.assert.warning,
        eg.basic.assert.bail
    ));
    if settings.0 {
        let message = description.map_or(String::new(), |d| String::from_utf8_lossy(&d).into_owned());
        return crate::error::throw("AssertionError", message);
    }
    if settings.1 {
        match &description {
            Some(d) => warning(g, &format!("assert(): {} failed", String::from_utf8_lossy(d))),
            None => warning(g, "assert(): Assertion failed"),
        }
    }
    if settings.2 {
        return Err(Box::new(VmError::Exit));
    }
    Ok(Value::Bool(false))
}

pub(super) fn assert_options<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let what = a.int(g, 0)?;
    let name: &[u8] = match what {
        ASSERT_ACTIVE => b"assert.active",
        ASSERT_BAIL => b"assert.bail",
        ASSERT_WARNING => b"assert.warning",
        ASSERT_EXCEPTION => b"assert.exception",
        ASSERT_CALLBACK => {
            let old = eg!(g, |eg| eg.basic.assert.callback.clone())
                .or_else(|| eg!(g, |eg| eg.basic.ini_text(b"assert.callback").map(Value::str)))
                .unwrap_or(Value::Null);
            if a.has(1) {
                let v = a.get(1).deref_clone();
                eg!(g).basic.assert.callback = Some(v);
            }
            return Ok(old);
        }
        _ => return a.value_error(0, "must be an ASSERT_* constant"),
    };
    let old = flag(g, name).unwrap_or(false);
    if a.has(1) {
        let text = a.str(g, 1)?;
        set(g, name, &String::from_utf8_lossy(&text));
    }
    Ok(Value::Int(i64::from(old)))
}

/// The effective value of a boolean `assert.*` setting.
fn flag<G: Globals>(g: G, name: &[u8]) -> Option<bool> {
    eg!(g, |eg| {
        let s = &eg.basic.assert;
        Some(match name {
            b"assert.active" => s.active,
            b"assert.bail" => s.bail,
            b"assert.warning" => s.warning,
            b"assert.exception" => s.exception,
            _ => return None,
        })
    })
}

/// `ini_get` of the assertion settings: the text a script set, else the
/// default's.
pub(super) fn ini_value<G: Globals>(g: G, name: &[u8]) -> Option<String> {
    let default = match name {
        b"zend.assertions" => eg!(g).basic.assert.assertions.to_string(),
        b"assert.callback" => String::new(),
        _ => (flag(g, name)? as i64).to_string(),
    };
    let text = eg!(g, |eg| eg.basic.ini_text(name).map(<[u8]>::to_vec));
    Some(text.map_or(default, |t| String::from_utf8_lossy(&t).into_owned()))
}

/// `ini_set` of the assertion settings; `false` when PHP refuses the
/// value (`zend.assertions` cannot move to or from -1 at run time).
pub(super) fn set<G: Globals>(g: G, name: &[u8], value: &str) -> bool {
    match name {
        b"zend.assertions" => {
            let val = super::atol(value);
            let cur = eg!(g).basic.assert.assertions;
            if cur != val && (cur < 0 || val < 0) {
                warning(
                    g,
                    "zend.assertions may be completely enabled or disabled only in php.ini",
                );
                return false;
            }
            eg!(g).basic.assert.assertions = val;
        }
        b"assert.callback" => {}
        _ => {
            let on = super::ini_bool(value);
            eg!(g, |eg| {
                let s = &mut eg.basic.assert;
                match name {
                    b"assert.active" => s.active = on,
                    b"assert.bail" => s.bail = on,
                    b"assert.warning" => s.warning = on,
                    _ => s.exception = on,
                }
            });
        }
    }
    eg!(g).basic.set_ini_text(name, Some(value.as_bytes()));
    true
}
