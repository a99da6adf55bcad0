//! Calls: pushing and popping frames, resolving what a name or a value
//! calls, and calling back into scripts from builtins.

use std::rc::Rc;

use minizts_core::bytecode::{FuncId, Function, Reg};
use minizts_core::value::{Closure, ClosureKind};
use minizts_core::{PhpArray, Value};
use minizts_globals::executor::{CacheEntry, FunctionRef};
use minizts_globals::{cg, eg, Frame, Globals};

use crate::error::{error, fatal, locate, throw, Location, VmError, VmResult};
use crate::exec::execute;

pub mod callable;
mod named;
pub use named::{arguments_from_array, named_param_by_ref, Sent};

/// How deep builtins may call back into scripts (each level uses native
/// stack; script-to-script calls use none).
pub const MAX_NATIVE_DEPTH: u32 = 2000;

/// What a call resolves to.
#[derive(Clone, Debug)]
pub enum Callee {
    User {
        func: FuncId,
        closure: Option<Rc<Closure>>,
    },
    Builtin(u16),
    /// A method (a callable array, a `'C::m'` string, an object with
    /// `__invoke`).
    Method(Rc<crate::objects::Resolved>),
}

impl Callee {
    /// The script function the callee runs with its declared
    /// parameters (`None`: a builtin, a native method or `__call`).
    pub fn user_function(&self) -> Option<FuncId> {
        match self {
            Callee::User { func, .. } => Some(*func),
            Callee::Method(m) if m.magic_name.is_none() => match m.method.body {
                minizts_core::object::MethodBody::User(f) => Some(f),
                minizts_core::object::MethodBody::Native(_) => None,
            },
            _ => None,
        }
    }
}

/// Looks a function name up (lowercase): user functions first, then
/// internal ones (a user function cannot shadow an internal one).
pub fn lookup_function<G: Globals>(g: G, lower: &[u8]) -> Option<FunctionRef> {
    if let Some(&id) = eg!(g).functions.get(lower) {
        return Some(FunctionRef::User(id));
    }
    cg!(g).function_table.get(lower).map(|f| FunctionRef::Builtin(f.id))
}

/// Resolves call site `site` of function `func` (through the runtime
/// cache).
pub fn resolve_site<G: Globals>(g: G, func: &Function, site: u16) -> VmResult<FuncId> {
    let s = &func.sites[site as usize];
    if let CacheEntry::Function(id) = eg!(g).runtime_cache[s.cache_slot as usize] {
        return Ok(id);
    }
    // An unqualified name in a namespace falls back to the global
    // function (a builtin one is bound by the compiler).
    let found = eg!(g, |eg| {
        eg.functions
            .get(&*s.key)
            .or_else(|| s.fallback.as_deref().and_then(|k| eg.functions.get(k)))
            .copied()
    });
    match found {
        Some(id) => {
            eg!(g).runtime_cache[s.cache_slot as usize] = CacheEntry::Function(id);
            Ok(id)
        }
        None => error(format!("Call to undefined function {}()", s.name)),
    }
}

/// What calling `v` would run (closures and function-name strings).
pub fn resolve_callable<G: Globals>(g: G, v: &Value) -> VmResult<Callee> {
    match v {
        Value::Closure(c) => Ok(match c.kind {
            ClosureKind::Literal => Callee::User {
                func: c.func,
                closure: Some(c.clone()),
            },
            // The closure of a method (`$obj->m(...)`) calls it on its
            // object, in its class.
            ClosureKind::Named if c.scope != 0 => {
                let class = eg!(g).classes.get(c.scope - 1).clone();
                let called = if c.called != 0 {
                    eg!(g).classes.get(c.called - 1).clone()
                } else {
                    class.clone()
                };
                let method = match c.bound.first() {
                    // A trait method's alias, by its name.
                    Some(Value::Str(alias)) => {
                        minizts_core::string::with_lowercase(alias.as_bytes(), |lc| class.methods.get(lc).cloned())
                    }
                    _ => class
                        .methods
                        .values()
                        .find(|m| m.body == minizts_core::object::MethodBody::User(c.func))
                        .cloned(),
                };
                match method {
                    Some(method) => Callee::Method(Rc::new(crate::objects::Resolved {
                        method,
                        this: c.this.clone(),
                        called,
                        magic_name: None,
                        closure: None,
                    })),
                    None => Callee::User {
                        func: c.func,
                        closure: None,
                    },
                }
            }
            ClosureKind::Named => Callee::User {
                func: c.func,
                closure: None,
            },
            ClosureKind::Builtin(id) => Callee::Builtin(id),
            ClosureKind::Magic => {
                let class = eg!(g).classes.get(c.scope.saturating_sub(1)).clone();
                let called = match c.called {
                    0 => class.clone(),
                    id1 => eg!(g).classes.get(id1 - 1).clone(),
                };
                let method = class
                    .methods
                    .values()
                    .find(|m| m.body == minizts_core::object::MethodBody::User(c.func))
                    .cloned();
                let (Some(method), Some(Value::Str(name))) = (method, c.bound.first()) else {
                    return error("Closure object cannot be called");
                };
                Callee::Method(Rc::new(crate::objects::Resolved {
                    method,
                    this: c.this.clone(),
                    called,
                    magic_name: Some(name.clone()),
                    closure: None,
                }))
            }
        }),
        Value::Str(name) if memchr::memmem::find(name, b"::").is_some() => {
            let at = memchr::memmem::find(name, b"::").expect("found");
            let class = crate::class::find(g, &name[..at])?;
            let method = minizts_core::PhpStr::from(&name[at + 2..]);
            Ok(Callee::Method(Rc::new(crate::objects::resolve_static(
                g, &class, &method, false,
            )?)))
        }
        Value::Str(name) => {
            let name = name.strip_prefix(b"\\").unwrap_or(name);
            match minizts_core::string::with_lowercase(name, |lc| lookup_function(g, lc)) {
                Some(FunctionRef::User(func)) => Ok(Callee::User { func, closure: None }),
                // (A scope-bound builtin is a valid callback; calling it
                // is the error, see `builtins::call_at`.)
                Some(FunctionRef::Builtin(id)) => Ok(Callee::Builtin(id)),
                None => error(format!(
                    "Call to undefined function {}()",
                    String::from_utf8_lossy(name)
                )),
            }
        }
        Value::Ref(r) => resolve_callable(g, &r.get()),
        Value::Arr(a) if a.len() != 2 => error("Array callback must have exactly two elements"),
        Value::Arr(a) => {
            let (Some(target), Some(Value::Str(name))) = (
                a.get(&minizts_core::Key::Int(0)).map(Value::deref_clone),
                a.get(&minizts_core::Key::Int(1)).map(Value::deref_clone),
            ) else {
                return error("Array callback must have exactly two members");
            };
            let r = match &target {
                Value::Obj(_) | Value::Closure(_) => crate::objects::resolve_method(g, &target, &name, None)?,
                Value::Str(class) => {
                    let class = crate::class::find(g, class.as_bytes())?;
                    crate::objects::resolve_static(g, &class, &name, false)?
                }
                _ => return error("First array member is not a valid class name or object"),
            };
            Ok(Callee::Method(Rc::new(r)))
        }
        Value::Obj(o) => match o.class.magic.invoke.clone() {
            Some(m) => Ok(Callee::Method(Rc::new(crate::objects::Resolved {
                method: m,
                this: Some(o.clone()),
                called: o.class.clone(),
                magic_name: None,
                closure: None,
            }))),
            None => error("Object of type {} is not callable".replace("{}", &o.class.name.to_string())),
        },
        other => error(format!("Value of type {} is not callable", other.type_name())),
    }
}

/// Whether parameter `i` of `callee` is by reference.
pub fn param_by_ref<G: Globals>(g: G, callee: &Callee, i: usize) -> bool {
    match callee {
        Callee::User { func, .. } => {
            // SAFETY: used within the call.
            unsafe { crate::code::known(g, *func) }.param_by_ref(i)
        }
        Callee::Builtin(id) => crate::builtins::info(*id).param_by_ref(i),
        Callee::Method(_) => match callee.user_function() {
            Some(func) => param_by_ref(g, &Callee::User { func, closure: None }, i),
            None => false,
        },
    }
}

/// PHP's error for a value that is not a variable passed to parameter `i`
/// of `callee`, a by-reference one. A variadic rest has no name to give.
pub fn cannot_pass_by_reference<G: Globals, T>(g: G, callee: &Callee, i: usize) -> VmResult<T> {
    let (name, param) = match callee {
        Callee::User { func, .. } => {
            // SAFETY: used within the call.
            let f = unsafe { crate::code::known(g, *func) };
            let name = &*f.name;
            (name, f.params.get(i).filter(|p| !p.variadic).map(|p| &*p.name))
        }
        Callee::Builtin(id) => {
            let info = crate::builtins::info(*id);
            (info.name, info.params.get(i).filter(|p| !p.starts_with("...")).copied())
        }
        Callee::Method(_) => {
            let name = named::callee_name(g, callee);
            let param = callee
                .user_function()
                .and_then(|f| {
                    // SAFETY: used within the call.
                    unsafe { crate::code::known(g, f) }
                        .params
                        .get(i)
                        .filter(|p| !p.variadic)
                })
                .map(|p| format!(" (${})", p.name))
                .unwrap_or_default();
            return error(format!(
                "{name}(): Argument #{}{param} cannot be passed by reference",
                i + 1
            ));
        }
    };
    let param = param.map_or(String::new(), |p| format!(" (${p})"));
    error(format!(
        "{name}(): Argument #{}{param} cannot be passed by reference",
        i + 1
    ))
}

/// Puts closure `c`'s bound values (`use`) and its `$this` into the
/// variables of its function `f`'s new window at `base`.
///
/// # Safety
/// `base` is the window of a frame of `f` being entered, which nothing
/// else refers to.
#[inline]
pub(crate) unsafe fn enter_closure(c: &Closure, f: &Function, base: *mut Value) {
    for (&cv, v) in f.bound_cvs.iter().zip(c.bound.iter()) {
        // SAFETY: bound CVs are registers of the window.
        unsafe { *base.add(cv as usize) = v.clone() };
    }
    if let (Some(this), Some(cv)) = (&c.this, f.this_cv) {
        // SAFETY: a CV of the window.
        unsafe { *base.add(cv as usize) = Value::Obj(this.clone()) };
    }
}

/// Pushes a frame for user function `func`, whose `argc` arguments are the
/// values at `args` (in the stack chunk that ends at `chunk`). The
/// caller's current instruction must be saved in its frame (for messages).
///
/// # Safety
/// `args..args+argc` must be live registers of the VM stack in the chunk
/// that ends at `chunk`, at the top of the caller's window, with no
/// reference to them alive.
#[allow(clippy::too_many_arguments)]
#[inline]
pub unsafe fn push_frame<G: Globals>(
    g: G,
    func: FuncId,
    args: *mut Value,
    chunk: *mut Value,
    argc: usize,
    ret: Reg,
    closure: Option<Rc<Closure>>,
    native: bool,
) -> VmResult<()> {
    // SAFETY: used while the frame is pushed.
    let f = unsafe { crate::code::known(g, func) };
    if eg!(g).frames.len() >= 1_000_000 {
        return fatal("Maximum call stack size reached. Infinite recursion?");
    }
    let nparams = f.params.len();
    let variadic = f.params.last().is_some_and(|p| p.variadic);
    let too_few = argc < f.required as usize;
    // The message names the call site, which is the current frame's until
    // the callee's frame is pushed.
    // (`call_user_func` by name calls as the script would.)
    let user_call = too_few && native && crate::builtins::in_user_call(g);
    let (caller_file, caller_line) = match too_few.then(|| crate::error::current_location(g)).flatten() {
        Some(l) => (l.file, l.line),
        None => (Box::from(""), 0),
    };
    let fixed = if variadic { nparams - 1 } else { nparams };
    let keep = if variadic && argc > fixed {
        // The last parameter collects the rest as an array.
        // SAFETY: `args..args+argc` are the caller's argument registers.
        let rest = (fixed..argc)
            .map(|i| unsafe { std::mem::take(&mut *args.add(i)) })
            .collect();
        // SAFETY: as above; slot `fixed` is an argument register.
        unsafe { *args.add(fixed) = Value::arr(PhpArray::from_list(rest)) };
        nparams
    } else {
        argc.min(fixed)
    };
    // Arguments past the parameters: kept for `func_get_args` where the
    // function reads them, otherwise left for the caller to release.
    let extra = match f.extra_args {
        Some(cv) if !variadic && argc > fixed => {
            // SAFETY: `args..args+argc` are the caller's argument registers.
            let rest = (fixed..argc)
                .map(|i| unsafe { std::mem::take(&mut *args.add(i)) })
                .collect();
            Some((cv, Value::arr(PhpArray::from_list(rest))))
        }
        _ => None,
    };
    // SAFETY: `args` points at the caller's argument registers, in the
    // chunk that ends at `chunk`, and nothing refers to the new window yet.
    let (chunk, base) = match unsafe {
        eg!(g)
            .stack
            .window(chunk, args, keep, f.cv_names.len(), f.num_regs as usize)
    } {
        Ok(w) => w,
        Err(overflow) => {
            return fatal(format!(
                "Maximum call stack size of {} bytes reached. Infinite recursion?",
                overflow.limit_bytes
            ))
        }
    };
    if let Some((cv, list)) = extra {
        // SAFETY: the hidden CV is inside the window.
        unsafe { *base.add(cv as usize) = list };
    }
    if variadic && argc <= fixed {
        // SAFETY: the window holds `num_regs >= nparams` registers.
        unsafe { *base.add(fixed) = Value::arr(PhpArray::new()) };
    }
    let (mut scope, mut called) = (0, 0);
    if let Some(c) = &closure {
        // SAFETY: `base` is the new window of `f`.
        unsafe { enter_closure(c, f, base) };
        // A closure runs in the scope it was made in (or bound to).
        (scope, called) = (c.scope, c.called);
    }
    eg!(g).frames.push(Frame {
        func,
        function: f,
        base,
        chunk,
        pc: f.code.as_ptr(),
        ret,
        argc: argc.min(u16::MAX as usize) as u16,
        closure,
        native,
        scope,
        called,
    });
    if too_few {
        let name = &*f.name;
        let how = if f.required as usize == nparams && !variadic {
            "exactly"
        } else {
            "at least"
        };
        // Called from a builtin (a callback), PHP names no call site.
        let message = if native && !user_call {
            format!(
                "Too few arguments to function {name}(), {argc} passed and {how} {} expected",
                f.required
            )
        } else {
            format!(
                "Too few arguments to function {name}(), {argc} passed in {caller_file} on line {caller_line} and {how} {} expected",
                f.required
            )
        };
        // PHP reports it at the function, with the call in the trace.
        let mut err = locate(
            g,
            Box::new(VmError::Uncaught {
                class: "ArgumentCountError",
                message,
                at: None,
                trace: Vec::new(),
            }),
        );
        if let VmError::Uncaught { at, .. } = &mut *err {
            *at = Some(Location {
                file: crate::code::file_of(g, func),
                line: f.line_start,
            });
        }
        // The call never started: the caller's `try` is the one that may
        // catch it, not one at the top of the function.
        crate::exceptions::pop_frame(g, f.num_regs as usize, base);
        return Err(err);
    }
    Ok(())
}

/// The closure `v(...)` makes (PHP's `ZEND_CALLABLE_CONVERT`): a closure
/// as it is, and for a function's name a closure that calls it.
pub fn callable_closure<G: Globals>(g: G, v: &Value) -> VmResult<Value> {
    let callee = resolve_callable(g, v)?;
    closure_of(g, callee)
}

/// The closure that calls `callee`.
pub fn closure_of<G: Globals>(g: G, callee: Callee) -> VmResult<Value> {
    let (func, kind) = match callee {
        Callee::User { closure: Some(c), .. } => return Ok(Value::Closure(c)),
        Callee::User { func, closure: None } => (func, ClosureKind::Named),
        Callee::Builtin(id) => (0, ClosureKind::Builtin(id)),
        c @ Callee::Method(_) => {
            let Callee::Method(m) = &c else { unreachable!() };
            // A closure's own `__invoke` is the closure.
            if let Some(closure) = &m.closure {
                return Ok(Value::Closure(closure.clone()));
            }
            if let (Some(name), minizts_core::object::MethodBody::User(func)) = (&m.magic_name, m.method.body) {
                return Ok(Value::Closure(Rc::new(new_closure(
                    g,
                    func,
                    vec![Value::Str(name.clone())],
                    Vec::new(),
                    ClosureKind::Magic,
                    m.this.clone(),
                    m.method.declaring + 1,
                    m.called.id + 1,
                ))));
            }
            let Some(func) = c.user_function() else {
                return error("minizts: a closure of a builtin class's method is not supported yet");
            };
            // A trait method's alias keeps its name (closures of two
            // names of one method differ).
            // SAFETY: a function of the running request.
            let f = unsafe { crate::code::known(g, func) };
            let alias = if m.method.name.as_bytes() != f.name.as_bytes() {
                vec![Value::Str(m.method.name.clone())]
            } else {
                Vec::new()
            };
            return Ok(Value::Closure(Rc::new(new_closure(
                g,
                func,
                alias,
                Vec::new(),
                ClosureKind::Named,
                m.this.clone(),
                m.method.declaring + 1,
                m.called.id + 1,
            ))));
        }
    };
    Ok(Value::Closure(Rc::new(new_closure(
        g,
        func,
        Vec::new(),
        Vec::new(),
        kind,
        None,
        0,
        0,
    ))))
}

/// A new closure object, its handle from the object store.
#[allow(clippy::too_many_arguments)]
pub fn new_closure<G: Globals>(
    g: G,
    func: FuncId,
    bound: Vec<Value>,
    statics: Vec<Option<minizts_core::PhpRef>>,
    kind: ClosureKind,
    this: Option<minizts_core::Obj>,
    scope: u32,
    called: u32,
) -> Closure {
    let store = eg!(g).objects.clone();
    let handle = store.allocate();
    Closure {
        func,
        bound,
        statics: std::cell::RefCell::new(statics),
        handle,
        kind,
        store: Some(store),
        this,
        scope,
        called,
    }
}

/// `clone` of a closure: the same function, captures and statics (a
/// copy, each with the value it has now), a new handle.
pub fn clone_closure<G: Globals>(g: G, c: &Closure) -> Rc<Closure> {
    Rc::new(new_closure(
        g,
        c.func,
        c.bound.clone(),
        copy_statics(g, c),
        c.kind,
        c.this.clone(),
        c.scope,
        c.called,
    ))
}

/// The static variables of a copy of closure `c` (a clone, a bound
/// copy): each starts with the value it has in `c` and goes its own way.
pub fn copy_statics<G: Globals>(g: G, c: &Closure) -> Vec<Option<minizts_core::PhpRef>> {
    c.statics
        .borrow()
        .iter()
        .map(|s| s.as_ref().map(|r| crate::gc::new_ref(g, r.get())))
        .collect()
}

/// Calls method `m` with `$this` (if any) and `called` as its called
/// scope, from native code (magic methods, destructors, constant
/// initialisers).
pub fn call_method<G: Globals>(
    g: G,
    m: &minizts_core::object::Method,
    this: Option<minizts_core::Obj>,
    called: minizts_core::object::ClassId,
    args: Vec<Value>,
) -> VmResult<Value> {
    match m.body {
        minizts_core::object::MethodBody::User(func) => call_in_scope(g, func, this, m.declaring, called, args),
        minizts_core::object::MethodBody::Native(id) => crate::natives::call(g, id, this.as_ref(), called, args),
    }
}

/// Calls script function `func` from native code as code of class
/// `scope`, `static::` being `called`, with `$this`.
pub fn call_in_scope<G: Globals>(
    g: G,
    func: FuncId,
    this: Option<minizts_core::Obj>,
    scope: minizts_core::object::ClassId,
    called: minizts_core::object::ClassId,
    args: Vec<Value>,
) -> VmResult<Value> {
    call_user(g, func, None, args, None, Some((this, scope + 1, called + 1)))
}

/// Calls `callable` with `args` from native code (a builtin's callback):
/// PHP's `zend_call_function`.
pub fn call_callable<G: Globals>(g: G, callable: &Value, args: Vec<Value>) -> VmResult<Value> {
    let callee = resolve_callable(g, callable)?;
    call_resolved(g, &callee, args)
}

/// Calls an already resolved callee with `args` from native code.
pub fn call_resolved<G: Globals>(g: G, callee: &Callee, args: Vec<Value>) -> VmResult<Value> {
    call_resolved_named(g, callee, args, None, crate::builtins::CallSite::Callback)
}

/// [`call_resolved`] with the named arguments a variadic parameter
/// collects (`named`, string-keyed; `None` for none, which spares the
/// callbacks of sorts and maps an empty array), a builtin called from
/// `site`.
pub fn call_resolved_named<G: Globals>(
    g: G,
    callee: &Callee,
    mut args: Vec<Value>,
    named: Option<PhpArray>,
    site: crate::builtins::CallSite,
) -> VmResult<Value> {
    let named = named.filter(|n| !n.is_empty());
    match callee {
        Callee::Builtin(id) => {
            if named.is_some() {
                let info = crate::builtins::info(*id);
                // `call_user_func` passes named arguments on to its
                // callback (`Z_PARAM_VARIADIC_WITH_NAMED`); a callback
                // that is not valid is its own error, below.
                if info.name == "call_user_func" {
                    if let Some(inner) = args.first().and_then(|c| resolve_callable(g, c).ok()) {
                        let rest = args.split_off(1);
                        return call_resolved_named(g, &inner, rest, named, crate::builtins::CallSite::Callback);
                    }
                }
                // No other builtin minizts has takes unknown named
                // arguments; PHP checks the count of the others first.
                if args.len() < info.min as usize {
                    return builtin_arity(info.name, info.min as usize, info.max(), args.len());
                }
                return throw(
                    "ArgumentCountError",
                    format!("{}() does not accept unknown named parameters", info.name),
                );
            }
            crate::builtins::call_at(g, *id, &mut args, site)
        }
        Callee::User { func, closure } => call_user(g, *func, closure.clone(), args, named, None),
        Callee::Method(m) => match (callee.user_function(), named) {
            (Some(func), named) => call_user(
                g,
                func,
                None,
                args,
                named,
                Some((m.this.clone(), m.method.declaring + 1, m.called.id + 1)),
            ),
            (None, _) => {
                let other = crate::objects::OtherCall::of(m);
                other.call(g, args)
            }
        },
    }
}

/// Calls script method `func` as `ctx` says (`$this`, scope and called
/// scope, ids + 1), with named arguments: a prepared method call whose
/// arguments came in an array (`CALL_SPREAD`'s general path).
pub fn call_user_from<G: Globals>(
    g: G,
    func: FuncId,
    args: Vec<Value>,
    named: Option<PhpArray>,
    ctx: (Option<minizts_core::Obj>, u32, u32),
) -> VmResult<Value> {
    call_user(g, func, None, args, named.filter(|n| !n.is_empty()), Some(ctx))
}

/// The method context of a call from native code: `$this`, scope and
/// called scope (ids + 1).
type MethodCtx = Option<(Option<minizts_core::Obj>, u32, u32)>;

/// Calls script function `func` from native code (see
/// [`call_resolved_named`]), as a method when `ctx` says so.
fn call_user<G: Globals>(
    g: G,
    func: FuncId,
    closure: Option<Rc<Closure>>,
    args: Vec<Value>,
    named: Option<PhpArray>,
    ctx: MethodCtx,
) -> VmResult<Value> {
    let func = &func;
    {
        {
            // A builtin that calls back (a sort's comparator, array_map's
            // callback) stops here at a limit: a callback without loops or
            // calls of its own never reaches the VM's checks.
            crate::limits::safe_point(g)?;
            if eg!(g).native_depth >= MAX_NATIVE_DEPTH {
                return fatal(format!(
                    "Maximum function nesting level of '{MAX_NATIVE_DEPTH}' reached, aborting!"
                ));
            }
            // The new frame goes above the current frame's window.
            // (With no frame left, at request end for the destructors,
            // from the bottom of the stack.)
            let (at, chunk) = match eg!(g, |eg| {
                let top = eg.frames.last()?;
                let n = eg.code.get(top.func).expect("the calling frame's function").num_regs as usize;
                // SAFETY: the top frame's window is `base..base+n`.
                Some((unsafe { eg.stack.after(top.base, n) }, top.chunk))
            }) {
                Some(w) => w,
                None => match eg!(g).stack.bottom(0) {
                    Ok((chunk, base)) => (base, chunk),
                    Err(o) => return fatal(format!("Maximum call stack size of {} bytes reached", o.limit_bytes)),
                },
            };
            let argc = args.len();
            // SAFETY: used within the call.
            let f = unsafe { crate::code::known(g, *func) };
            for (i, a) in args.iter().enumerate() {
                let by_ref = f.param_by_ref(i);
                // (A parameter a named argument skipped is unset.)
                if by_ref && !matches!(a, Value::Ref(_) | Value::Undef) {
                    let name = &*f.name;
                    let param = f.params.get(i).or(f.params.last()).map_or("", |p| &p.name);
                    crate::error::warning(
                        g,
                        &format!(
                            "{name}(): Argument #{} (${param}) must be passed by reference, value given",
                            i + 1
                        ),
                    );
                }
            }
            // SAFETY: `at` is the end of the top frame's window, in the
            // chunk that ends at `chunk`.
            let (chunk, at) = match unsafe { eg!(g).stack.window(chunk, at, 0, 0, argc) } {
                Ok(w) => w,
                Err(o) => {
                    return fatal(format!(
                        "Maximum call stack size of {} bytes reached. Infinite recursion?",
                        o.limit_bytes
                    ))
                }
            };
            for (i, v) in args.into_iter().enumerate() {
                // SAFETY: `window` reserved `argc` registers at `at` (the
                // assignment drops what they held).
                unsafe { *at.add(i) = v };
            }
            // SAFETY: the arguments were just written to `at..at+argc`.
            unsafe { push_frame(g, *func, at, chunk, argc, Reg::NONE, closure, true)? };
            if let Some((this, scope, called)) = ctx {
                enter_method(g, this, scope, called);
            }
            if let Some(named) = named {
                // The variadic parameter, last, holds the positional rest.
                let rest = f.params.len() - 1;
                let base = eg!(g).frames.last().expect("the frame just pushed").base;
                // SAFETY: the parameter is a register of the new window,
                // and nothing else refers to it yet.
                if let Some(list) = unsafe { &mut *base.add(rest) }.array_mut() {
                    for (k, v) in named.iter() {
                        list.insert(k.to_key(), v.clone());
                    }
                }
            }
            eg!(g).native_depth += 1;
            let r = execute(g);
            eg!(g).native_depth -= 1;
            // A by-reference function's result stays a reference, as
            // `zend_call_function` leaves it (`array_map` keeps it so).
            r
        }
    }
}

/// Makes the frame just pushed a method's: its scope, called scope
/// (ids + 1) and `$this`.
pub fn enter_method<G: Globals>(g: G, this: Option<minizts_core::Obj>, scope: u32, called: u32) {
    let (base, function) = eg!(g, |eg| {
        let f = eg.frames.last_mut().expect("the frame just pushed");
        f.scope = scope;
        f.called = called;
        (f.base, f.function)
    });
    // SAFETY: the frame's function is one of the request's.
    if let (Some(this), Some(cv)) = (this, unsafe { &*function }.this_cv) {
        // SAFETY: a CV of the frame's window, which nothing else holds yet.
        unsafe { *base.add(cv as usize) = Value::Obj(this) };
    }
}

/// Declares user function `func` under its name.
pub fn declare_function<G: Globals>(g: G, func: FuncId) -> VmResult<()> {
    // SAFETY: used within this call.
    let f = unsafe { crate::code::known(g, func) };
    let key: Box<[u8]> = minizts_syntax::names::to_bytes(&f.name).to_ascii_lowercase().into();
    let prev = eg!(g).functions.get(&key).copied();
    if let Some(prev) = prev {
        // SAFETY: as `f`.
        let line = unsafe { crate::code::known(g, prev) }.line_start;
        return fatal(format!(
            "Cannot redeclare {}() (previously declared in {}:{line})",
            f.name,
            crate::code::file_of(g, prev)
        ));
    }
    eg!(g).functions.insert(key, func);
    Ok(())
}

/// `throw new ArgumentCountError(…)` for a builtin called with the wrong
/// number of arguments.
pub fn builtin_arity<T>(name: &str, min: usize, max: Option<usize>, given: usize) -> VmResult<T> {
    let (how, n) = match max {
        Some(max) if max == min => ("exactly", min),
        Some(max) if given > max => ("at most", max),
        _ => ("at least", min),
    };
    throw(
        "ArgumentCountError",
        format!(
            "{name}() expects {how} {n} argument{}, {given} given",
            if n == 1 { "" } else { "s" }
        ),
    )
}
