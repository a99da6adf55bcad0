//! SPL's functions (ext/spl/php_spl.c, spl_iterators.c): the autoloader
//! registry (`spl_autoload_register`, `spl_autoload_unregister`,
//! `spl_autoload_functions`, `spl_autoload_call`, `spl_autoload`,
//! `spl_autoload_extensions`; autoloading itself is
//! `class::autoload`), the iterator helpers (`iterator_to_array`,
//! `iterator_count`, `iterator_apply`) and `class_parents`,
//! `class_uses`.

use std::rc::Rc;

use minizts_core::object::Class;
use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::executor::Autoloader;
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::call::Callee;
use crate::error::{notice, type_error, VmResult};

crate::builtin_table! {
    "spl_autoload_register", ["callback", "throw", "prepend"], 0, 0, spl_autoload_register;
    "spl_autoload_unregister", ["callback"], 1, 0, spl_autoload_unregister;
    "spl_autoload_functions", [], 0, 0, spl_autoload_functions;
    "spl_autoload_call", ["class"], 1, 0, spl_autoload_call;
    "spl_autoload_extensions", ["file_extensions"], 0, 0, spl_autoload_extensions;
    "spl_autoload", ["class", "file_extensions"], 1, 0, spl_autoload;
    "iterator_to_array", ["iterator", "preserve_keys"], 1, 0, iterator_to_array;
    "iterator_count", ["iterator"], 1, 0, iterator_count;
    "iterator_apply", ["iterator", "callback", "args"], 2, 0, iterator_apply;
    "class_parents", ["object_or_class", "autoload"], 1, 0, class_parents;
    "class_uses", ["object_or_class", "autoload"], 1, 0, class_uses;
}

/// What PHP compares to tell two autoloaders apart (`autoload_func_info`:
/// the function, the object, the calling class, the closure object).
fn identity(callable: &Value, callee: &Callee) -> Box<[u8]> {
    let text = match (callable, callee) {
        (Value::Closure(c), _) => format!("closure {:p}", Rc::as_ptr(c)),
        (_, Callee::User { func, .. }) => format!("function {func}"),
        (_, Callee::Builtin(id)) => format!("builtin {id}"),
        (_, Callee::Method(m)) => format!(
            "method {:?} {} {} {} {:?}",
            m.method.body,
            m.method.declaring,
            m.called.id,
            m.this
                .as_ref()
                .filter(|_| !m.method.is_static())
                .map_or(0, |o| o.addr()),
            m.magic_name.as_ref().map(|n| n.as_bytes().to_ascii_lowercase())
        ),
    };
    text.into_bytes().into()
}

/// What `spl_autoload_functions` lists for an autoloader: a closure as
/// it is, a method as `[object or class, name]`, a function by name.
fn listed<G: Globals>(g: G, callable: &Value, callee: &Callee) -> Value {
    match (callable, callee) {
        (Value::Closure(_), _) => callable.clone(),
        (_, Callee::User { func, .. }) => {
            // SAFETY: used here only.
            Value::str(&*unsafe { crate::code::known(g, *func) }.name)
        }
        (_, Callee::Builtin(id)) => Value::str(crate::builtins::info(*id).name),
        (_, Callee::Method(m)) => {
            let first = match (&m.this, m.method.is_static()) {
                (Some(o), false) => Value::Obj(o.clone()),
                _ => Value::Str(m.called.name.clone()),
            };
            let name = m.magic_name.clone().unwrap_or_else(|| m.method.name.clone());
            Value::arr(PhpArray::from_list(vec![first, Value::Str(name)]))
        }
    }
}

/// The callable at `i` (a reference followed) and what it calls.
fn callable_at<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<(Value, Callee)> {
    let callee = a.callable(g, i)?;
    Ok((a.value(i).deref_clone(), callee))
}

fn is_autoload_call(callee: &Callee) -> bool {
    matches!(callee, Callee::Builtin(id) if crate::builtins::info(*id).name == "spl_autoload_call")
}

fn spl_autoload_register<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let given = a.opt_callable(g, 0)?;
    let throw = a.opt_bool(g, 1, true)?;
    let prepend = a.opt_bool(g, 2, false)?;
    if !throw {
        notice(
            g,
            "spl_autoload_register(): Argument #2 ($do_throw) has been ignored, spl_autoload_register() will \
             always throw",
        );
    }
    let (callable, callee) = match given {
        Some(callee) => {
            if is_autoload_call(&callee) {
                return a.value_error(0, "must not be the spl_autoload_call() function");
            }
            (a.value(0).deref_clone(), callee)
        }
        None => {
            let v = Value::str("spl_autoload");
            let callee = crate::call::resolve_callable(g, &v)?;
            (v, callee)
        }
    };
    let identity = identity(&callable, &callee);
    let listed = listed(g, &callable, &callee);
    eg!(g, |eg| {
        let list = &mut eg.autoload.functions;
        if list.iter().any(|f| f.identity == identity) {
            return;
        }
        let entry = Autoloader {
            callable: listed,
            identity,
            resolved: Rc::new(callee),
        };
        if prepend {
            list.insert(0, entry);
        } else {
            list.push(entry);
        }
    });
    Ok(Value::Bool(true))
}

fn spl_autoload_unregister<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (callable, callee) = callable_at(g, a, 0)?;
    if is_autoload_call(&callee) {
        eg!(g).autoload.functions.clear();
        return Ok(Value::Bool(true));
    }
    let identity = identity(&callable, &callee);
    let removed = eg!(g, |eg| {
        let list = &mut eg.autoload.functions;
        match list.iter().position(|f| f.identity == identity) {
            Some(i) => {
                list.remove(i);
                true
            }
            None => false,
        }
    });
    Ok(Value::Bool(removed))
}

fn spl_autoload_functions<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let list: Vec<Value> = eg!(g, |eg| eg
        .autoload
        .functions
        .iter()
        .map(|f| f.callable.clone())
        .collect());
    Ok(Value::arr(PhpArray::from_list(list)))
}

fn spl_autoload_call<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let lc = name.as_bytes().to_ascii_lowercase();
    crate::class::autoload::perform(g, name.as_bytes(), &lc)?;
    Ok(Value::Null)
}

/// The file extensions `spl_autoload` tries when none are given.
const DEFAULT_EXTENSIONS: &[u8] = b".inc,.php";

fn spl_autoload_extensions<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if a.has(0) && !a.value(0).is_null() {
        let exts = a.str(g, 0)?;
        eg!(g).autoload.extensions = Some(exts);
    }
    let exts = eg!(g, |eg| eg.autoload.extensions.clone());
    Ok(Value::Str(exts.unwrap_or_else(|| PhpStr::from(DEFAULT_EXTENSIONS))))
}

/// `spl_autoload`: the default autoloader looks for the lower-case class
/// name with each extension along `include_path`. minizts cannot run a
/// file from inside a builtin, so finding one is an error that says so;
/// finding none does nothing, as in PHP.
fn spl_autoload<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let name = a.str(g, 0)?;
    let exts = match a.has(1) && !a.value(1).is_null() {
        true => a.str(g, 1)?,
        false => eg!(g, |eg| eg.autoload.extensions.clone()).unwrap_or_else(|| PhpStr::from(DEFAULT_EXTENSIONS)),
    };
    let lc = String::from_utf8_lossy(&name.as_bytes().to_ascii_lowercase()).replace('\\', "/");
    for ext in exts.as_bytes().split(|&b| b == b',') {
        let file = format!("{lc}{}", String::from_utf8_lossy(ext));
        if crate::include::find(g, &file).is_some() {
            return crate::error::fatal(format!(
                "minizts: spl_autoload() cannot include {file} (loading files from the default autoloader is \
                 not supported)"
            ));
        }
    }
    Ok(Value::Null)
}

/// Runs `f` on each key and value of the array or `Traversable` at
/// argument `i` (PHP's `spl_iterator_apply`), until it returns `false`.
fn each<G: Globals>(
    g: G,
    a: &Args,
    i: usize,
    traversable_only: bool,
    want_key: bool,
    mut f: impl FnMut(Value, Value) -> VmResult<bool>,
) -> VmResult<()> {
    let v = a.value(i).deref_clone();
    match &v {
        Value::Arr(arr) if !traversable_only => {
            for (k, v) in arr.iter() {
                if !f(k.to_value(), v.deref_clone())? {
                    break;
                }
            }
            Ok(())
        }
        Value::Obj(o) if crate::objects::implements(o, b"Traversable") => {
            let Some(mut state) = crate::objects::iteration_start(g, o)? else {
                return Ok(());
            };
            while let Some((k, v)) = crate::objects::iteration_next(g, &mut state, want_key)? {
                if !f(k, v.deref_clone())? {
                    break;
                }
            }
            Ok(())
        }
        other => {
            let expected = if traversable_only {
                "Traversable"
            } else {
                "Traversable|array"
            };
            type_error(format!(
                "{}(): Argument #{} (${}) must be of type {expected}, {} given",
                a.name(),
                i + 1,
                "iterator",
                crate::types::type_name(other)
            ))
        }
    }
}

fn iterator_to_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let preserve_keys = a.opt_bool(g, 1, true)?;
    let mut out = PhpArray::new();
    each(g, a, 0, false, preserve_keys, |k, v| {
        if preserve_keys {
            let key = crate::dim::to_key(g, &k)?;
            out.insert(key, v);
        } else if out.push(v).is_err() {
            return crate::error::error("Cannot add element to the array as the next element is already occupied");
        }
        Ok(true)
    })?;
    Ok(Value::arr(out))
}

fn iterator_count<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut n = 0i64;
    each(g, a, 0, false, false, |_, _| {
        n += 1;
        Ok(true)
    })?;
    Ok(Value::Int(n))
}

fn iterator_apply<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let callee = a.callable(g, 1)?;
    let args: Vec<Value> = match a.has(2) && !a.value(2).is_null() {
        true => a.array(2)?.values().map(Value::deref_clone).collect(),
        false => Vec::new(),
    };
    let mut n = 0i64;
    each(g, a, 0, true, false, |_, _| {
        n += 1;
        let r = crate::call::call_resolved(g, &callee, args.clone())?;
        Ok(r.deref_clone().to_bool())
    })?;
    Ok(Value::Int(n))
}

/// The class argument of `class_parents`/`class_uses`: an object's, or
/// a name's (autoloaded when `autoload`), with PHP's warning for an
/// unknown name.
pub(super) fn class_of_arg<G: Globals>(g: G, a: &Args) -> VmResult<Option<Rc<Class>>> {
    let v = a.value(0).deref_clone();
    let autoload = a.opt_bool(g, 1, true)?;
    match &v {
        Value::Obj(o) => Ok(Some(o.class.clone())),
        Value::Closure(_) => Ok(crate::class::lookup(g, b"Closure")),
        Value::Str(s) => {
            let found = match autoload {
                true => crate::class::load(g, s.as_bytes())?,
                false => crate::class::lookup(g, s.as_bytes()),
            };
            if found.is_none() {
                crate::error::warning(
                    g,
                    &format!(
                        "{}(): Class {} does not exist{}",
                        a.name(),
                        String::from_utf8_lossy(s),
                        if autoload { " and could not be loaded" } else { "" }
                    ),
                );
            }
            Ok(found)
        }
        other => type_error(format!(
            "{}(): Argument #1 ($object_or_class) must be of type object|string, {} given",
            a.name(),
            crate::types::type_name(other)
        )),
    }
}

fn class_parents<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let Some(c) = class_of_arg(g, a)? else {
        return Ok(Value::Bool(false));
    };
    let mut out = PhpArray::new();
    let mut p = c.parent.clone();
    while let Some(pc) = p {
        out.insert(
            minizts_core::Key::from_php_str(pc.name.clone()),
            Value::Str(pc.name.clone()),
        );
        p = pc.parent.clone();
    }
    Ok(Value::arr(out))
}

fn class_uses<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let Some(c) = class_of_arg(g, a)? else {
        return Ok(Value::Bool(false));
    };
    let mut out = PhpArray::new();
    for t in &c.traits {
        out.insert(
            minizts_core::Key::from_php_str(t.name.clone()),
            Value::Str(t.name.clone()),
        );
    }
    Ok(Value::arr(out))
}
