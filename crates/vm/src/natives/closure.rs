//! `Closure`'s methods (Zend/zend_closures.c): `bind` and `bindTo` (a
//! copy with another `$this` and class scope, after PHP's checks of what
//! may be bound), `call` (a call with a `$this` for its duration),
//! `fromCallable` and `__invoke`.

use std::rc::Rc;

use minizts_core::object::{acc, Class};
use minizts_core::value::{Closure, ClosureKind};
use minizts_core::{Obj, Value};
use minizts_globals::{eg, Globals};

use crate::call::{builtin_arity, Callee};
use crate::error::{error, type_error, warning, VmResult};

/// A static method called on the class (or on a closure, which PHP
/// allows).
pub(super) fn call_static<G: Globals>(g: G, method: &str, args: Vec<Value>) -> VmResult<Value> {
    match method {
        "bind" => {
            if args.len() < 2 || args.len() > 3 {
                return builtin_arity("Closure::bind", 2, Some(3), args.len());
            }
            let c = match args[0].deref_clone() {
                Value::Closure(c) => c,
                other => {
                    return type_error(format!(
                        "Closure::bind(): Argument #1 ($closure) must be of type Closure, {} given",
                        other.type_name()
                    ))
                }
            };
            bind(g, "Closure::bind", 1, &c, &args[1..])
        }
        "fromCallable" => {
            if args.len() != 1 {
                return builtin_arity("Closure::fromCallable", 1, Some(1), args.len());
            }
            let v = args[0].deref_clone();
            if let Value::Closure(_) = v {
                return Ok(v);
            }
            match crate::call::callable::check(g, &v, false)? {
                Ok(c) => crate::call::closure_of(g, c.callee),
                Err(why) => type_error(format!("Failed to create closure from callable: {why}")),
            }
        }
        _ => error(format!(
            "Non-static method Closure::{method}() cannot be called statically"
        )),
    }
}

/// A method called on closure `c`.
pub(super) fn call_on<G: Globals>(g: G, method: &str, c: &Rc<Closure>, args: Vec<Value>) -> VmResult<Value> {
    match method {
        "bindTo" => {
            if args.is_empty() || args.len() > 2 {
                return builtin_arity("Closure::bindTo", 1, Some(2), args.len());
            }
            bind(g, "Closure::bindTo", 0, c, &args)
        }
        "call" => call(g, c, args),
        "__invoke" => crate::call::call_callable(g, &Value::Closure(c.clone()), args),
        _ => call_static(g, method, args),
    }
}

/// The class of id + 1 `id1`, if any.
fn class_of<G: Globals>(g: G, id1: u32) -> Option<Rc<Class>> {
    (id1 != 0).then(|| eg!(g).classes.get(id1 - 1).clone())
}

/// What PHP knows of a closure's function when binding it: whether it
/// is a "fake" closure (of a named function or method), static, and
/// uses `$this`, and its name.
struct Facts {
    fake: bool,
    is_static: bool,
    uses_this: bool,
    name: String,
}

fn facts<G: Globals>(g: G, c: &Closure) -> Facts {
    match c.kind {
        ClosureKind::Builtin(id) => Facts {
            fake: true,
            is_static: false,
            uses_this: false,
            name: crate::builtins::info(id).name.to_string(),
        },
        kind => {
            // SAFETY: used here only.
            let f = unsafe { crate::code::known(g, c.func) };
            Facts {
                fake: kind != ClosureKind::Literal,
                is_static: f.method_flags & acc::STATIC != 0,
                uses_this: f.this_cv.is_some(),
                name: f.name.to_string(),
            }
        }
    }
}

/// PHP's `zend_valid_closure_binding`: whether `c` may get `this` and
/// `scope`, with the warning that says why not.
fn valid_binding<G: Globals>(g: G, c: &Closure, this: Option<&Obj>, scope: Option<&Rc<Class>>) -> bool {
    let f = facts(g, c);
    let func_scope = class_of(g, c.scope);
    if let Some(this) = this {
        if f.is_static {
            warning(g, "Cannot bind an instance to a static closure");
            return false;
        }
        if let (true, Some(fs)) = (f.fake, &func_scope) {
            if !this.class.is_subclass_of(fs) {
                warning(
                    g,
                    &format!(
                        "Cannot bind method {}::{}() to object of class {}",
                        fs.name, f.name, this.class.name
                    ),
                );
                return false;
            }
        }
    } else if f.fake && func_scope.is_some() && !f.is_static {
        warning(g, "Cannot unbind $this of method");
        return false;
    } else if !f.fake && c.this.is_some() && f.uses_this {
        warning(g, "Cannot unbind $this of closure using $this");
        return false;
    }
    let same_scope = scope.map(|s| s.id + 1).unwrap_or(0) == c.scope;
    if let Some(s) = scope {
        if !same_scope && crate::class::is_builtin(s) {
            warning(g, &format!("Cannot bind closure to scope of internal class {}", s.name));
            return false;
        }
    }
    if f.fake && !same_scope {
        warning(
            g,
            if func_scope.is_none() {
                "Cannot rebind scope of closure created from function"
            } else {
                "Cannot rebind scope of closure created from method"
            },
        );
        return false;
    }
    true
}

/// `Closure::bind($closure, $newThis, $newScope)` and
/// `$closure->bindTo($newThis, $newScope)` (PHP's `do_closure_bind`);
/// `args` are `$newThis` and `$newScope`, the first of them argument
/// number `first + 1`.
fn bind<G: Globals>(g: G, fname: &str, first: usize, c: &Rc<Closure>, args: &[Value]) -> VmResult<Value> {
    let this = match args[0].deref_clone() {
        Value::Obj(o) => Some(o),
        Value::Null => None,
        Value::Closure(_) => return error(format!("minizts: {fname}() cannot bind a closure as $this")),
        other => {
            return type_error(format!(
                "{fname}(): Argument #{} ($newThis) must be of type ?object, {} given",
                first + 1,
                other.type_name()
            ))
        }
    };
    let scope = match args.get(1).map(Value::deref_clone) {
        None => class_of(g, c.scope),
        Some(Value::Obj(o)) => Some(o.class.clone()),
        Some(Value::Closure(_)) => Some(crate::class::find(g, b"Closure")?),
        Some(Value::Null) => None,
        Some(v @ (Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_))) => {
            let name = crate::ops::to_str(g, &v)?;
            if name.as_bytes() == b"static" {
                class_of(g, c.scope)
            } else {
                match crate::class::load(g, name.as_bytes())? {
                    Some(cls) => Some(cls),
                    None => {
                        warning(g, &format!("Class \"{}\" not found", String::from_utf8_lossy(&name)));
                        return Ok(Value::Null);
                    }
                }
            }
        }
        Some(other) => {
            return type_error(format!(
                "{fname}(): Argument #{} ($newScope) must be of type object|string|null, {} given",
                first + 2,
                other.type_name()
            ))
        }
    };
    if !valid_binding(g, c, this.as_ref(), scope.as_ref()) {
        return Ok(Value::Null);
    }
    Ok(Value::Closure(Rc::new(rebound(g, c, this, scope)?)))
}

/// A copy of `c` (a new object) bound to `this` in `scope`, as
/// `zend_create_closure` makes it: with an object and no scope the scope
/// is `Closure`; a builtin function's closure keeps neither.
fn rebound<G: Globals>(g: G, c: &Closure, this: Option<Obj>, scope: Option<Rc<Class>>) -> VmResult<Closure> {
    let (this, scope) = match c.kind {
        ClosureKind::Builtin(_) => (None, None),
        _ => match (this, scope) {
            (Some(t), None) => (Some(t), Some(crate::class::find(g, b"Closure")?)),
            (t, s) => (t.filter(|_| s.is_some()), s),
        },
    };
    let called = match (&this, &scope) {
        (Some(t), _) => t.class.id + 1,
        (None, Some(s)) => s.id + 1,
        (None, None) => 0,
    };
    let this = this.filter(|_| !facts(g, c).is_static);
    Ok(crate::call::new_closure(
        g,
        c.func,
        c.bound.clone(),
        crate::call::copy_statics(g, c),
        c.kind,
        this,
        scope.map_or(0, |s| s.id + 1),
        called,
    ))
}

/// `$closure->call($newThis, ...$args)`: calls it with `$newThis` as
/// `$this` and its class as the scope, for this call only.
fn call<G: Globals>(g: G, c: &Rc<Closure>, mut args: Vec<Value>) -> VmResult<Value> {
    if args.is_empty() {
        return builtin_arity("Closure::call", 1, None, 0);
    }
    let rest = args.split_off(1);
    let o = match args[0].deref_clone() {
        Value::Obj(o) => o,
        other => {
            return type_error(format!(
                "Closure::call(): Argument #1 ($newThis) must be of type object, {} given",
                other.type_name()
            ))
        }
    };
    let class = o.class.clone();
    if !valid_binding(g, c, Some(&o), Some(&class)) {
        return Ok(Value::Null);
    }
    let callee = match c.kind {
        ClosureKind::Literal => {
            // The same closure for the duration of the call (no new
            // object, so no handle), whose static variables it shares.
            let temp = Rc::new(Closure {
                func: c.func,
                bound: c.bound.clone(),
                statics: std::cell::RefCell::new(c.statics.borrow().clone()),
                handle: c.handle,
                kind: c.kind,
                store: None,
                this: Some(o),
                scope: class.id + 1,
                called: class.id + 1,
            });
            let r = crate::call::call_resolved(
                g,
                &Callee::User {
                    func: c.func,
                    closure: Some(temp.clone()),
                },
                rest,
            );
            let made = temp.statics.borrow();
            for (mine, theirs) in c.statics.borrow_mut().iter_mut().zip(made.iter()) {
                if mine.is_none() {
                    mine.clone_from(theirs);
                }
            }
            return r.map(|v| v.deref_clone());
        }
        _ => {
            let mut bound = rebound(g, c, Some(o), Some(class))?;
            // Not a new object either.
            if let Some(store) = bound.store.take() {
                store.release_handle(bound.handle);
            }
            bound.handle = c.handle;
            crate::call::resolve_callable(g, &Value::Closure(Rc::new(bound)))?
        }
    };
    crate::call::call_resolved(g, &callee, rest).map(|v| v.deref_clone())
}
