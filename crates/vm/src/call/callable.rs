//! PHP's callable check (`zend_is_callable_at_frame`) for the callables
//! that builtins and `callable` declarations take: `'C::m'` strings and
//! `[class or object, method]` arrays, resolved from the calling frame.
//! Unlike a dynamic call (`$f()`), such a callable may name its class
//! `self`, `parent` or `static` (which mean the calling frame's classes)
//! and an array's method may name a class too (`[$obj, 'parent::m']`),
//! both deprecated since PHP 8.2. The method is looked up as PHP's
//! `zend_is_callable_check_func` does, and a callable that is not valid
//! gets PHP's description of why (the text after "must be a valid
//! callback, ").

use std::rc::Rc;

use minizts_core::object::{acc, Class, Method};
use minizts_core::{Key, Obj, PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::{resolve_callable, Callee};
use crate::error::{deprecated, VmResult};
use crate::objects::Resolved;

/// A callable that passed the check: what it calls, and the class its
/// method was looked up in (PHP's `fcc->calling_scope`, which
/// `forward_static_call` needs).
pub struct Checked {
    pub callee: Callee,
    pub calling: Option<Rc<Class>>,
}

/// PHP's `zend_fcall_info_cache` while a callable is checked.
#[derive(Default)]
struct Fcc {
    object: Option<Obj>,
    calling: Option<Rc<Class>>,
    called: Option<Rc<Class>>,
}

/// The calling frame: its class scope, called scope and `$this`.
struct Frame {
    scope: Option<Rc<Class>>,
    called: Option<Rc<Class>>,
    this: Option<Obj>,
}

/// Checks `v` as a callable from the running frame, raising PHP's
/// deprecations for relative class names unless `quiet`. `Ok(Err(why))`:
/// not callable, and why.
pub fn check<G: Globals>(g: G, v: &Value, quiet: bool) -> VmResult<Result<Checked, String>> {
    let frame = Frame {
        scope: crate::objects::scope(g),
        called: crate::objects::called(g),
        this: crate::objects::this(g),
    };
    match v {
        Value::Ref(r) => check(g, &r.get(), quiet),
        Value::Str(s) if split_method(s).is_some() => {
            let mut fcc = Fcc::default();
            check_func(g, &frame, &mut fcc, s, None, false, quiet)
        }
        Value::Arr(a) if a.len() == 2 => {
            let first = a.get(&Key::Int(0)).map(Value::deref_clone);
            let second = a.get(&Key::Int(1)).map(Value::deref_clone);
            let (Some(first), Some(Value::Str(method))) = (first, second) else {
                return Ok(Err(array_problem(a.get(&Key::Int(0)))));
            };
            let mut fcc = Fcc::default();
            let strict = match &first {
                Value::Str(class) => match check_class(g, &frame, &mut fcc, class, frame.scope.clone(), quiet)? {
                    Ok(strict) => strict,
                    Err(why) => return Ok(Err(why)),
                },
                Value::Obj(o) => {
                    fcc.calling = Some(o.class.clone());
                    fcc.object = Some(o.clone());
                    false
                }
                // A closure's methods are `Closure`'s own.
                Value::Closure(_) => return Ok(plain(g, v)),
                _ => return Ok(Err(array_problem(Some(&first)))),
            };
            let org = fcc.calling.clone();
            check_func(g, &frame, &mut fcc, &method, org, strict, quiet)
        }
        Value::Arr(_) => Ok(Err("array callback must have exactly two members".into())),
        Value::Str(_) | Value::Closure(_) | Value::Obj(_) => Ok(plain(g, v)),
        _ => Ok(Err("no array or string given".into())),
    }
}

/// A callable with no class to resolve (a function's name, a closure, an
/// object with `__invoke`, a closure's method): as a dynamic call
/// resolves it.
fn plain<G: Globals>(g: G, v: &Value) -> Result<Checked, String> {
    match resolve_callable(g, v) {
        Ok(callee) => Ok(Checked { callee, calling: None }),
        Err(_) => Err(match v {
            Value::Str(s) => format!(
                "function \"{}\" not found or invalid function name",
                String::from_utf8_lossy(s)
            ),
            Value::Arr(a) => match a.get(&Key::Int(1)).map(Value::deref_clone) {
                Some(Value::Str(m)) => format!(
                    "class Closure does not have a method \"{}\"",
                    String::from_utf8_lossy(&m)
                ),
                _ => "second array member is not a valid method".into(),
            },
            _ => "no array or string given".into(),
        }),
    }
}

/// Why an array of two members whose first is `first` is not a
/// callable, when its members have the wrong types.
fn array_problem(first: Option<&Value>) -> String {
    match first.map(Value::deref_clone) {
        Some(Value::Str(_) | Value::Obj(_) | Value::Closure(_)) => "second array member is not a valid method".into(),
        _ => "first array member is not a valid class name or object".into(),
    }
}

/// `name` split at its last `::` into class and method.
fn split_method(name: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memrchr(b':', name)?;
    (colon > 1 && name[colon - 1] == b':').then(|| (&name[..colon - 1], &name[colon + 1..]))
}

/// PHP's `zend_is_callable_check_class`: the class `name` means from
/// the frame (`scope`: the class `self` means), filling in `fcc`.
/// `Ok(strict)`: whether the method must be the class's own (not a
/// private one of the scope).
fn check_class<G: Globals>(
    g: G,
    frame: &Frame,
    fcc: &mut Fcc,
    name: &[u8],
    scope: Option<Rc<Class>>,
    quiet: bool,
) -> VmResult<Result<bool, String>> {
    let lc = name.to_ascii_lowercase();
    let no_scope = |word: &str| Ok(Err(format!("cannot access \"{word}\" when no class scope is active")));
    let warn = |word: &str| {
        if !quiet {
            deprecated(g, &format!("Use of \"{word}\" in callables is deprecated"));
        }
    };
    let (calling, strict) = match &*lc {
        b"self" => {
            let Some(scope) = scope else {
                return no_scope("self");
            };
            warn("self");
            (scope, false)
        }
        b"parent" => {
            let Some(scope) = scope else {
                return no_scope("parent");
            };
            let Some(parent) = scope.parent.clone() else {
                return Ok(Err(
                    "cannot access \"parent\" when current class scope has no parent".into()
                ));
            };
            warn("parent");
            (parent, true)
        }
        b"static" => {
            let Some(called) = frame.called.clone() else {
                return no_scope("static");
            };
            warn("static");
            fcc.called = Some(called.clone());
            fcc.calling = Some(called);
            if fcc.object.is_none() {
                fcc.object = frame.this.clone();
            }
            return Ok(Ok(true));
        }
        _ => {
            let Some(class) = crate::class::load(g, name)? else {
                return Ok(Err(format!("class \"{}\" not found", String::from_utf8_lossy(name))));
            };
            fcc.called = Some(class.clone());
            if fcc.object.is_none() {
                // A class the running method's class derives from, named
                // from an instance: the call keeps `$this`.
                if let (Some(scope), Some(this)) = (&frame.scope, &frame.this) {
                    if this.class.is_subclass_of(scope) && scope.is_subclass_of(&class) {
                        fcc.object = Some(this.clone());
                        fcc.called = Some(this.class.clone());
                    }
                }
            } else if let Some(o) = &fcc.object {
                fcc.called = Some(o.class.clone());
            }
            fcc.calling = Some(class);
            return Ok(Ok(true));
        }
    };
    fcc.called = frame
        .called
        .clone()
        .filter(|c| c.is_subclass_of(&calling))
        .or_else(|| Some(calling.clone()));
    fcc.calling = Some(calling);
    if fcc.object.is_none() {
        fcc.object = frame.this.clone();
    }
    Ok(Ok(strict))
}

/// PHP's `zend_is_callable_check_func` for method `callable` (which may
/// name its class, `'C::m'`) of `org`, the class an array callable
/// names (`None`: a `'C::m'` string).
fn check_func<G: Globals>(
    g: G,
    frame: &Frame,
    fcc: &mut Fcc,
    callable: &PhpStr,
    org: Option<Rc<Class>>,
    mut strict: bool,
    quiet: bool,
) -> VmResult<Result<Checked, String>> {
    let mname: &[u8] = match split_method(callable) {
        Some((cname, mname)) => {
            let scope = org.clone().or_else(|| frame.scope.clone());
            // The deprecation of a relative name is the form's own here.
            strict = match check_class(g, frame, fcc, cname, scope, quiet || org.is_some())? {
                Ok(strict) => strict,
                Err(why) => return Ok(Err(why)),
            };
            if let (Some(org), Some(calling)) = (&org, &fcc.calling) {
                if !org.is_subclass_of(calling) {
                    return Ok(Err(format!("class {} is not a subclass of {}", org.name, calling.name)));
                }
                if !quiet {
                    deprecated(
                        g,
                        &format!(
                            "Callables of the form [\"{}\", \"{}\"] are deprecated",
                            org.name,
                            String::from_utf8_lossy(callable)
                        ),
                    );
                }
            }
            mname
        }
        None => callable,
    };
    let Some(calling) = fcc.calling.clone() else {
        return Ok(Err(format!(
            "function \"{}\" not found or invalid function name",
            String::from_utf8_lossy(callable)
        )));
    };
    let lc = mname.to_ascii_lowercase();
    let name = PhpStr::from(mname);
    let mut found: Option<Rc<Method>> = None;
    let mut magic = false;
    if strict && lc == b"__construct" {
        found = calling.magic.construct.clone();
    } else if let Some(m) = calling.method(&lc) {
        let mut m = m.clone();
        // The scope's own private method wins over one of a subclass.
        if !strict {
            if let Some(scope) = &frame.scope {
                let declaring = class_of(g, m.declaring);
                if scope.id != m.declaring && declaring.is_subclass_of(scope) {
                    if let Some(p) = scope
                        .method(&lc)
                        .filter(|p| p.flags & acc::PRIVATE != 0 && p.declaring == scope.id)
                    {
                        m = p.clone();
                    }
                }
            }
        }
        let magic_instead = if fcc.object.is_some() {
            calling.magic.call.is_some()
        } else {
            calling.magic.call_static.is_some()
        };
        if hidden(g, &m, frame.scope.as_ref()) && magic_instead {
            found = None;
        } else {
            found = Some(m);
        }
    }
    if found.is_none() {
        let same = org.as_ref().is_some_and(|o| o.id == calling.id);
        match &fcc.object {
            Some(o) if same => {
                if strict && calling.magic.call.is_some() {
                    found = calling.magic.call.clone();
                    magic = true;
                } else {
                    // The object's own lookup, which must find a method of
                    // the named class or an ancestor of it when a class
                    // was named.
                    let (candidate, via_call) = match o.class.method(&lc) {
                        Some(m) if !hidden(g, m, frame.scope.as_ref()) => (Some(m.clone()), false),
                        _ => (o.class.magic.call.clone(), true),
                    };
                    if let Some(m) = candidate {
                        if !strict || calling.is_subclass_of(&class_of(g, m.declaring)) {
                            found = Some(m);
                            magic = via_call;
                        }
                    }
                }
            }
            _ => {
                let this = frame.this.clone().filter(|t| t.class.is_subclass_of(&calling));
                let visible = calling.method(&lc).filter(|m| !hidden(g, m, frame.scope.as_ref()));
                if let Some(m) = visible {
                    found = Some(m.clone());
                } else if let (Some(call), Some(_)) = (calling.magic.call.clone(), &this) {
                    found = Some(call);
                    magic = true;
                } else if let Some(cs) = calling.magic.call_static.clone() {
                    found = Some(cs);
                    magic = true;
                }
                if magic && fcc.object.is_none() {
                    fcc.object = this;
                }
            }
        }
    }
    let Some(m) = found else {
        return Ok(Err(format!(
            "class {} does not have a method \"{}\"",
            calling.name,
            String::from_utf8_lossy(mname)
        )));
    };
    if !magic {
        if m.flags & acc::ABSTRACT != 0 {
            return Ok(Err(format!(
                "cannot call abstract method {}::{}()",
                calling.name, m.name
            )));
        }
        if fcc.object.is_none() && !m.is_static() {
            return Ok(Err(format!(
                "non-static method {}::{}() cannot be called statically",
                calling.name, m.name
            )));
        }
        if hidden(g, &m, frame.scope.as_ref()) {
            return Ok(Err(format!(
                "cannot access {} method {}::{}()",
                acc::visibility_word(m.flags),
                calling.name,
                m.name
            )));
        }
    }
    let mut this = fcc.object.clone();
    let called = match &this {
        Some(o) => o.class.clone(),
        None => fcc.called.clone().unwrap_or_else(|| calling.clone()),
    };
    if m.is_static() {
        this = None;
    }
    Ok(Ok(Checked {
        callee: Callee::Method(Rc::new(Resolved {
            method: m,
            this,
            called,
            magic_name: magic.then_some(name),
            closure: None,
        })),
        calling: Some(calling),
    }))
}

fn class_of<G: Globals>(g: G, id: minizts_core::object::ClassId) -> Rc<Class> {
    eg!(g).classes.get(id).clone()
}

/// Whether code of `scope` may not call method `m` (PHP's check of a
/// method's visibility, protected ones against the class that first
/// declared the method).
fn hidden<G: Globals>(g: G, m: &Method, scope: Option<&Rc<Class>>) -> bool {
    if m.flags & (acc::PRIVATE | acc::PROTECTED) == 0 || scope.is_some_and(|s| s.id == m.declaring) {
        return false;
    }
    if m.flags & acc::PRIVATE != 0 {
        return true;
    }
    let Some(scope) = scope else {
        return true;
    };
    let root = root_class(g, m);
    !(scope.is_subclass_of(&root) || root.is_subclass_of(scope))
}

/// The class that first declared method `m` (PHP's
/// `zend_get_function_root_class`): its topmost ancestor with a
/// non-private method of that name.
fn root_class<G: Globals>(g: G, m: &Method) -> Rc<Class> {
    let mut root = class_of(g, m.declaring);
    let lc = m.name.as_bytes().to_ascii_lowercase();
    let mut c = root.parent.clone();
    while let Some(p) = c {
        if p.method(&lc).is_some_and(|pm| pm.flags & acc::PRIVATE == 0) {
            root = p.clone();
        }
        c = p.parent.clone();
    }
    root
}
