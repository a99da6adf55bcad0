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

mod named;
pub use named::{arguments_from_array, named_param_by_ref, Sent};

/// How deep builtins may call back into scripts (each level uses native
/// stack; script-to-script calls use none).
pub const MAX_NATIVE_DEPTH: u32 = 2000;

/// What a call resolves to.
#[derive(Clone, Debug)]
pub enum Callee {
    User { func: FuncId, closure: Option<Rc<Closure>> },
    Builtin(u16),
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
    let found = eg!(g).functions.get(&*s.key).copied();
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
            ClosureKind::Named => Callee::User {
                func: c.func,
                closure: None,
            },
            ClosureKind::Builtin(id) => Callee::Builtin(id),
        }),
        Value::Str(name) => {
            let name = name.strip_prefix(b"\\").unwrap_or(name);
            match lookup_function(g, &name.to_ascii_lowercase()) {
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
        Value::Ref(r) => resolve_callable(g, &r.borrow()),
        Value::Arr(a) if a.len() != 2 => error("Array callback must have exactly two elements"),
        Value::Arr(_) => error("minizts does not support array callables (there are no classes)"),
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
    }
}

/// PHP's error for a value that is not a variable passed to parameter `i`
/// of `callee`, a by-reference one. A variadic rest has no name to give.
pub fn cannot_pass_by_reference<G: Globals, T>(g: G, callee: &Callee, i: usize) -> VmResult<T> {
    let (name, param) = match callee {
        Callee::User { func, .. } => {
            // SAFETY: used within the call.
            let f = unsafe { crate::code::known(g, *func) };
            let name = if f.is_closure { "{closure}" } else { &f.name };
            (name, f.params.get(i).filter(|p| !p.variadic).map(|p| &*p.name))
        }
        Callee::Builtin(id) => {
            let info = crate::builtins::info(*id);
            (info.name, info.params.get(i).filter(|p| !p.starts_with("...")).copied())
        }
    };
    let param = param.map_or(String::new(), |p| format!(" (${p})"));
    error(format!(
        "{name}(): Argument #{}{param} cannot be passed by reference",
        i + 1
    ))
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
    let (caller_file, caller_line) = match too_few.then(|| crate::error::current_location(g)).flatten() {
        Some(l) => (l.file, l.line),
        None => (Box::from(""), 0),
    };
    let fixed = if variadic { nparams - 1 } else { nparams };
    let keep = if variadic && argc > fixed {
        // The last parameter collects the rest as an array.
        let mut rest = PhpArray::new();
        for i in fixed..argc {
            // SAFETY: `args..args+argc` are the caller's argument registers.
            let v = unsafe { std::mem::take(&mut *args.add(i)) };
            let _ = rest.push(v);
        }
        // SAFETY: as above; slot `fixed` is an argument register.
        unsafe { *args.add(fixed) = Value::arr(rest) };
        nparams
    } else {
        argc.min(fixed)
    };
    // Arguments past the parameters: kept for `func_get_args` where the
    // function reads them, otherwise left for the caller to release.
    let extra = match f.extra_args {
        Some(cv) if !variadic && argc > fixed => {
            let mut rest = PhpArray::new();
            for i in fixed..argc {
                // SAFETY: `args..args+argc` are the caller's argument registers.
                let v = unsafe { std::mem::take(&mut *args.add(i)) };
                let _ = rest.push(v);
            }
            Some((cv, Value::arr(rest)))
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
    if let Some(c) = &closure {
        for (i, &cv) in f.bound_cvs.iter().enumerate() {
            if let Some(v) = c.bound.get(i) {
                // SAFETY: bound CVs are registers of the window.
                unsafe { *base.add(cv as usize) = v.clone() };
            }
        }
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
    });
    if too_few {
        let name = if f.is_closure { "{closure}" } else { &f.name };
        let how = if f.required as usize == nparams && !variadic {
            "exactly"
        } else {
            "at least"
        };
        // Called from a builtin (a callback), PHP names no call site.
        let message = if native {
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
        return Err(err);
    }
    Ok(())
}

/// The closure `v(...)` makes (PHP's `ZEND_CALLABLE_CONVERT`): a closure
/// as it is, and for a function's name a closure that calls it.
pub fn callable_closure<G: Globals>(g: G, v: &Value) -> VmResult<Value> {
    let (func, kind) = match resolve_callable(g, v)? {
        Callee::User { closure: Some(c), .. } => return Ok(Value::Closure(c)),
        Callee::User { func, closure: None } => (func, ClosureKind::Named),
        Callee::Builtin(id) => (0, ClosureKind::Builtin(id)),
    };
    let handle = eg!(g, |eg| {
        eg.next_object_handle += 1;
        eg.next_object_handle - 1
    });
    Ok(Value::Closure(Rc::new(Closure {
        func,
        bound: Vec::new(),
        statics: std::cell::RefCell::new(Vec::new()),
        handle,
        kind,
    })))
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
        Callee::User { func, closure } => {
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
            let (at, chunk) = eg!(g, |eg| {
                let top = eg.frames.last().expect("a calling frame");
                let n = eg.code.get(top.func).expect("the calling frame's function").num_regs as usize;
                // SAFETY: the top frame's window is `base..base+n`.
                (unsafe { eg.stack.after(top.base, n) }, top.chunk)
            });
            let argc = args.len();
            // SAFETY: used within the call.
            let f = unsafe { crate::code::known(g, *func) };
            for (i, a) in args.iter().enumerate() {
                let by_ref = f.param_by_ref(i);
                // (A parameter a named argument skipped is unset.)
                if by_ref && !matches!(a, Value::Ref(_) | Value::Undef) {
                    let name = if f.is_closure { "{closure}" } else { &f.name };
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
            unsafe { push_frame(g, *func, at, chunk, argc, Reg::NONE, closure.clone(), true)? };
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
