//! The methods of the builtin classes (`Exception::getMessage` and the
//! others), written once in [`NATIVES`]: the class that declares each,
//! its name and flags; its id is its index, which `MethodBody::Native`
//! holds. `Closure`'s are in [`closure`], SPL's `ArrayIterator` and
//! `ArrayObject`'s in [`spl_array`].

use minizts_core::object::acc;
use minizts_core::{Obj, Value};
use minizts_globals::Globals;

use crate::error::{error, VmResult};
use crate::exceptions as ex;

mod closure;
pub(crate) mod spl_array;

/// (declaring class, method, flags), by id.
pub const NATIVES: &[(&str, &str, u16)] = &[
    ("Exception", "__construct", acc::PUBLIC),
    ("Exception", "getMessage", acc::PUBLIC | acc::FINAL),
    ("Exception", "getCode", acc::PUBLIC | acc::FINAL),
    ("Exception", "getPrevious", acc::PUBLIC | acc::FINAL),
    ("Exception", "getFile", acc::PUBLIC | acc::FINAL),
    ("Exception", "getLine", acc::PUBLIC | acc::FINAL),
    ("Exception", "getTrace", acc::PUBLIC | acc::FINAL),
    ("Exception", "getTraceAsString", acc::PUBLIC | acc::FINAL),
    ("Exception", "__toString", acc::PUBLIC),
    ("Error", "__construct", acc::PUBLIC),
    ("Error", "getMessage", acc::PUBLIC | acc::FINAL),
    ("Error", "getCode", acc::PUBLIC | acc::FINAL),
    ("Error", "getPrevious", acc::PUBLIC | acc::FINAL),
    ("Error", "getFile", acc::PUBLIC | acc::FINAL),
    ("Error", "getLine", acc::PUBLIC | acc::FINAL),
    ("Error", "getTrace", acc::PUBLIC | acc::FINAL),
    ("Error", "getTraceAsString", acc::PUBLIC | acc::FINAL),
    ("Error", "__toString", acc::PUBLIC),
    ("ErrorException", "__construct", acc::PUBLIC),
    ("ErrorException", "getSeverity", acc::PUBLIC | acc::FINAL),
    ("SensitiveParameterValue", "__construct", acc::PUBLIC),
    ("SensitiveParameterValue", "getValue", acc::PUBLIC),
    ("SensitiveParameterValue", "__debugInfo", acc::PUBLIC),
    // An enum's own copies are its implementations (see `class::link`).
    ("UnitEnum", "cases", acc::PUBLIC | acc::STATIC | acc::ABSTRACT),
    ("BackedEnum", "from", acc::PUBLIC | acc::STATIC | acc::ABSTRACT),
    ("BackedEnum", "tryFrom", acc::PUBLIC | acc::STATIC | acc::ABSTRACT),
    ("Closure", "bind", acc::PUBLIC | acc::STATIC),
    ("Closure", "bindTo", acc::PUBLIC),
    ("Closure", "call", acc::PUBLIC),
    ("Closure", "fromCallable", acc::PUBLIC | acc::STATIC),
    ("Closure", "__invoke", acc::PUBLIC),
    ("ArrayIterator", "__construct", acc::PUBLIC),
    ("ArrayIterator", "offsetExists", acc::PUBLIC),
    ("ArrayIterator", "offsetGet", acc::PUBLIC),
    ("ArrayIterator", "offsetSet", acc::PUBLIC),
    ("ArrayIterator", "offsetUnset", acc::PUBLIC),
    ("ArrayIterator", "append", acc::PUBLIC),
    ("ArrayIterator", "getArrayCopy", acc::PUBLIC),
    ("ArrayIterator", "count", acc::PUBLIC),
    ("ArrayIterator", "getFlags", acc::PUBLIC),
    ("ArrayIterator", "setFlags", acc::PUBLIC),
    ("ArrayIterator", "asort", acc::PUBLIC),
    ("ArrayIterator", "ksort", acc::PUBLIC),
    ("ArrayIterator", "uasort", acc::PUBLIC),
    ("ArrayIterator", "uksort", acc::PUBLIC),
    ("ArrayIterator", "natsort", acc::PUBLIC),
    ("ArrayIterator", "natcasesort", acc::PUBLIC),
    ("ArrayIterator", "rewind", acc::PUBLIC),
    ("ArrayIterator", "current", acc::PUBLIC),
    ("ArrayIterator", "key", acc::PUBLIC),
    ("ArrayIterator", "next", acc::PUBLIC),
    ("ArrayIterator", "valid", acc::PUBLIC),
    ("ArrayIterator", "seek", acc::PUBLIC),
    ("ArrayObject", "__construct", acc::PUBLIC),
    ("ArrayObject", "offsetExists", acc::PUBLIC),
    ("ArrayObject", "offsetGet", acc::PUBLIC),
    ("ArrayObject", "offsetSet", acc::PUBLIC),
    ("ArrayObject", "offsetUnset", acc::PUBLIC),
    ("ArrayObject", "append", acc::PUBLIC),
    ("ArrayObject", "getArrayCopy", acc::PUBLIC),
    ("ArrayObject", "count", acc::PUBLIC),
    ("ArrayObject", "getFlags", acc::PUBLIC),
    ("ArrayObject", "setFlags", acc::PUBLIC),
    ("ArrayObject", "asort", acc::PUBLIC),
    ("ArrayObject", "ksort", acc::PUBLIC),
    ("ArrayObject", "uasort", acc::PUBLIC),
    ("ArrayObject", "uksort", acc::PUBLIC),
    ("ArrayObject", "natsort", acc::PUBLIC),
    ("ArrayObject", "natcasesort", acc::PUBLIC),
    ("ArrayObject", "getIterator", acc::PUBLIC),
    ("ArrayObject", "exchangeArray", acc::PUBLIC),
    ("ArrayObject", "setIteratorClass", acc::PUBLIC),
    ("ArrayObject", "getIteratorClass", acc::PUBLIC),
    // The builtin interfaces' methods, which classes implement (never
    // called: abstract).
    ("Iterator", "current", acc::PUBLIC | acc::ABSTRACT),
    ("Iterator", "next", acc::PUBLIC | acc::ABSTRACT),
    ("Iterator", "key", acc::PUBLIC | acc::ABSTRACT),
    ("Iterator", "valid", acc::PUBLIC | acc::ABSTRACT),
    ("Iterator", "rewind", acc::PUBLIC | acc::ABSTRACT),
    ("IteratorAggregate", "getIterator", acc::PUBLIC | acc::ABSTRACT),
    ("ArrayAccess", "offsetExists", acc::PUBLIC | acc::ABSTRACT),
    ("ArrayAccess", "offsetGet", acc::PUBLIC | acc::ABSTRACT),
    ("ArrayAccess", "offsetSet", acc::PUBLIC | acc::ABSTRACT),
    ("ArrayAccess", "offsetUnset", acc::PUBLIC | acc::ABSTRACT),
    ("Countable", "count", acc::PUBLIC | acc::ABSTRACT),
    ("Stringable", "__toString", acc::PUBLIC | acc::ABSTRACT),
    ("JsonSerializable", "jsonSerialize", acc::PUBLIC | acc::ABSTRACT),
    ("Serializable", "serialize", acc::PUBLIC | acc::ABSTRACT),
    ("Serializable", "unserialize", acc::PUBLIC | acc::ABSTRACT),
    ("SeekableIterator", "seek", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getMessage", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getCode", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getFile", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getLine", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getTrace", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getPrevious", acc::PUBLIC | acc::ABSTRACT),
    ("Throwable", "getTraceAsString", acc::PUBLIC | acc::ABSTRACT),
];

/// The native methods class `name` declares: (id, method, flags).
pub fn declared_by(name: &str) -> impl Iterator<Item = (u16, &'static str, u16)> + '_ {
    NATIVES
        .iter()
        .enumerate()
        .filter(move |(_, (c, _, _))| *c == name)
        .map(|(i, (_, m, f))| (i as u16, *m, *f))
}

/// Calls native method `id` on `this` (or, static, on class `called`)
/// with `args`.
pub fn call<G: Globals>(
    g: G,
    id: u16,
    this: Option<&Obj>,
    called: minizts_core::object::ClassId,
    args: Vec<Value>,
) -> VmResult<Value> {
    let Some(&(class, method, _)) = NATIVES.get(id as usize) else {
        return error("minizts: unknown native method");
    };
    match class {
        "Closure" => return closure::call_static(g, method, args),
        "SensitiveParameterValue" => return sensitive_call(method, this, args),
        "ArrayIterator" | "ArrayObject" => return spl_array::call(g, class, method, this, args),
        _ => {}
    }
    if matches!(method, "cases" | "from" | "tryFrom") {
        let class = minizts_globals::eg!(g).classes.get(called).clone();
        return crate::enums::static_method(g, &class, method, args);
    }
    let Some(o) = this else {
        return error(format!("Non-static method {method}() cannot be called statically"));
    };
    Ok(match method {
        "__construct" => {
            let is_error_exception = o.class.native == Some(minizts_core::object::NativeKind::Throwable)
                && NATIVES[id as usize].0 == "ErrorException";
            construct_throwable(g, o, class, is_error_exception, args)?;
            Value::Null
        }
        "getMessage" => ex::get(o, "message"),
        "getCode" => ex::get(o, "code"),
        "getPrevious" => ex::get(o, "previous"),
        "getFile" => ex::get(o, "file"),
        "getLine" => ex::get(o, "line"),
        "getTrace" => ex::get(o, "trace"),
        "getSeverity" => ex::get(o, "severity"),
        "getTraceAsString" => Value::str(ex::trace_string(o).as_bytes()),
        "__toString" => Value::str(ex::to_string(g, o).as_bytes()),
        _ => return error(format!("minizts: native method {method} is missing")),
    })
}

/// Calls native method `id` of `Closure` on closure `c` (`bindTo`,
/// `call`, `__invoke`).
pub fn call_on_closure<G: Globals>(
    g: G,
    id: u16,
    c: &std::rc::Rc<minizts_core::value::Closure>,
    args: Vec<Value>,
) -> VmResult<Value> {
    match NATIVES.get(id as usize) {
        Some(&(_, method, _)) => closure::call_on(g, method, c, args),
        None => error("minizts: unknown native method"),
    }
}

static EXCEPTION_CTOR: crate::builtins::BuiltinInfo = crate::builtins::BuiltinInfo {
    name: "Exception::__construct",
    params: &["message", "code", "previous"],
    min: 0,
    by_ref: 0,
    variadic: false,
};

static ERROR_CTOR: crate::builtins::BuiltinInfo = crate::builtins::BuiltinInfo {
    name: "Error::__construct",
    params: &["message", "code", "previous"],
    min: 0,
    by_ref: 0,
    variadic: false,
};

static ERROR_EXCEPTION_CTOR: crate::builtins::BuiltinInfo = crate::builtins::BuiltinInfo {
    name: "ErrorException::__construct",
    params: &["message", "code", "severity", "filename", "line", "previous"],
    min: 0,
    by_ref: 0,
    variadic: false,
};

/// `Exception::__construct` and its siblings, with their parameters'
/// declared types checked as an internal function's are.
fn construct_throwable<G: Globals>(
    g: G,
    o: &Obj,
    class: &str,
    is_error_exception: bool,
    mut args: Vec<Value>,
) -> VmResult<()> {
    let info = if is_error_exception {
        &ERROR_EXCEPTION_CTOR
    } else if class == "Error" {
        &ERROR_CTOR
    } else {
        &EXCEPTION_CTOR
    };
    let a = crate::builtins::Args {
        v: &mut args,
        info,
        from_script: true,
    };
    // A `?Throwable` parameter.
    let previous = |i: usize| -> VmResult<Option<Value>> {
        if !a.has(i) {
            return Ok(None);
        }
        match a.get(i) {
            Value::Null => Ok(Some(Value::Null)),
            Value::Obj(o) if o.class.interfaces.iter().any(|i| i.name.as_bytes() == b"Throwable") => {
                Ok(Some(Value::Obj(o)))
            }
            v => crate::error::type_error(format!(
                "{}(): Argument #{} ($previous) must be of type ?Throwable, {} given",
                info.name,
                i + 1,
                crate::types::type_name(&v)
            )),
        }
    };
    if a.has(0) {
        ex::set(o, "message", Value::Str(a.str(g, 0)?));
    }
    if a.has(1) {
        ex::set(o, "code", Value::Int(a.int(g, 1)?));
    }
    if is_error_exception {
        // ($message, $code, $severity, $filename, $line, $previous)
        ex::set(o, "severity", Value::Int(a.opt_int(g, 2, 1)?));
        // `?string $filename`, `?int $line`: what no scalar conversion
        // takes is refused with the nullable type's name.
        let refuse = |i: usize, ty: &str| -> VmResult<()> {
            let v = a.get(i);
            let convertible = match &v {
                Value::Obj(o) => ty == "?string" && o.class.magic.to_string.is_some(),
                Value::Arr(_) | Value::Closure(_) => false,
                _ => true,
            };
            if convertible {
                return Ok(());
            }
            crate::error::type_error(format!(
                "{}(): Argument #{} (${}) must be of type {ty}, {} given",
                info.name,
                i + 1,
                info.params[i],
                crate::types::type_name(&v)
            ))
        };
        if a.has(3) && !a.get(3).is_null() {
            refuse(3, "?string")?;
            ex::set(o, "file", Value::Str(a.str(g, 3)?));
        }
        if a.has(4) && !a.get(4).is_null() {
            refuse(4, "?int")?;
            ex::set(o, "line", Value::Int(a.int(g, 4)?));
        }
        if let Some(p) = previous(5)? {
            ex::set(o, "previous", p);
        }
    } else if let Some(p) = previous(2)? {
        ex::set(o, "previous", p);
    }
    Ok(())
}

/// `SensitiveParameterValue`'s methods: it holds its value in its one
/// property, which `var_dump` and friends do not show.
fn sensitive_call(method: &str, this: Option<&Obj>, args: Vec<Value>) -> VmResult<Value> {
    let Some(o) = this else {
        return error(format!(
            "Non-static method SensitiveParameterValue::{method}() cannot be called statically"
        ));
    };
    match method {
        "__construct" => {
            let Some(v) = args.first() else {
                return crate::call::builtin_arity("SensitiveParameterValue::__construct", 1, Some(1), 0);
            };
            ex::set(o, "value", v.deref_clone());
            Ok(Value::Null)
        }
        "getValue" => Ok(ex::get(o, "value")),
        _ => Ok(Value::empty_array()),
    }
}

/// `v` wrapped in a new `SensitiveParameterValue` (how a stack trace
/// shows a `#[SensitiveParameter]` argument).
pub(crate) fn sensitive_value<G: Globals>(g: G, v: Value) -> Value {
    let Some(class) = crate::class::lookup(g, b"SensitiveParameterValue") else {
        return v;
    };
    match crate::objects::instantiate(g, &class) {
        Ok(o) => {
            ex::set(&o, "value", v);
            Value::Obj(o)
        }
        Err(_) => v,
    }
}
