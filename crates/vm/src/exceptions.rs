//! Exceptions: `Throwable` objects (their file, line and trace, set when
//! they are made), engine errors made into objects when something
//! catches them, the search for a handler when an instruction fails
//! (PHP's `ZEND_HANDLE_EXCEPTION` and its `try_catch_array` walk), and
//! the "Uncaught …" report.
//!
//! The run loop's error exit calls [`unwind`]: the hot loop itself
//! does nothing for exceptions.

use minizts_core::bytecode::Op;
use minizts_core::{Obj, PhpArray, Value};
use minizts_globals::{eg, Globals};

use crate::error::VmError;

/// The state a `Throwable` keeps beside its properties: its trace as
/// PHP prints it (the lines of `getTraceAsString`, without `#n `).
pub struct ThrowableState {
    pub trace_lines: Vec<String>,
}

/// The slot of property `name` of a `Throwable` (declared by `Exception`
/// or `Error`, private ones included).
pub fn slot(o: &Obj, name: &str) -> Option<usize> {
    o.class.props.iter().position(|p| p.name.as_bytes() == name.as_bytes())
}

/// Property `name` of a `Throwable`.
pub fn get(o: &Obj, name: &str) -> Value {
    slot(o, name).map_or(Value::Null, |s| o.props.borrow()[s].deref_clone())
}

/// Sets property `name` of a `Throwable`.
pub fn set(o: &Obj, name: &str, v: Value) {
    if let Some(s) = slot(o, name) {
        o.props.borrow_mut()[s] = v;
    }
}

/// A new `Throwable`'s file, line and trace: where it is made (PHP's
/// `zend_default_exception_new`).
pub fn init_throwable<G: Globals>(g: G, o: &Obj) {
    let here = crate::error::current_location(g);
    let (file, line) = match &here {
        Some(l) => (Value::str(l.file.as_bytes()), Value::Int(l.line as i64)),
        None => (Value::str(""), Value::Int(0)),
    };
    set(o, "file", file);
    set(o, "line", line);
    let frames = crate::error::trace_frames(g);
    set(o, "trace", trace_array(&frames));
    *o.native.borrow_mut() = Some(Box::new(ThrowableState {
        trace_lines: frames.iter().map(crate::error::trace_line).collect(),
    }));
}

/// A backtrace as `getTrace()` gives it.
fn trace_array(frames: &[crate::error::TraceFrame]) -> Value {
    let mut out = PhpArray::new();
    for f in frames {
        let mut e = PhpArray::new();
        if let Some((file, line)) = &f.at {
            e.insert(minizts_core::Key::from_bytes(b"file"), Value::str(file.as_bytes()));
            e.insert(minizts_core::Key::from_bytes(b"line"), Value::Int(*line as i64));
        }
        e.insert(
            minizts_core::Key::from_bytes(b"function"),
            Value::str(f.function.as_bytes()),
        );
        if let Some((class, call)) = &f.class {
            e.insert(minizts_core::Key::from_bytes(b"class"), Value::str(class.as_bytes()));
            e.insert(minizts_core::Key::from_bytes(b"type"), Value::str(call.as_bytes()));
        }
        let mut args = PhpArray::new();
        for a in &f.args {
            let _ = args.push(a.clone());
        }
        e.insert(minizts_core::Key::from_bytes(b"args"), Value::arr(args));
        let _ = out.push(Value::arr(e));
    }
    Value::arr(out)
}

/// An engine error as the object a `catch` gets: of its class, with its
/// message, where it happened and its trace.
pub fn materialize<G: Globals>(g: G, e: &VmError) -> Option<Obj> {
    match e {
        VmError::Thrown(o) => Some(o.clone()),
        VmError::Uncaught {
            class,
            message,
            at,
            trace,
        } => {
            let cls = crate::class::lookup(g, class.as_bytes())?;
            let store = eg!(g).objects.clone();
            crate::objects::ensure_defaults(g, &cls).ok()?;
            let props = cls.defaults.borrow().clone();
            let o = store.create(cls, props);
            set(&o, "message", Value::str(message.as_bytes()));
            if let Some(at) = at {
                set(&o, "file", Value::str(at.file.as_bytes()));
                set(&o, "line", Value::Int(at.line as i64));
            }
            set(&o, "trace", trace_array(&crate::error::trace_frames(g)));
            *o.native.borrow_mut() = Some(Box::new(ThrowableState {
                trace_lines: trace.clone(),
            }));
            Some(o)
        }
        _ => None,
    }
}

/// Makes an exception error the pending exception, PHP's
/// `EG(exception)` (`zend_throw_exception_internal`): an engine error
/// becomes its object here, where it happened. Any other error (an exit,
/// a fatal error: PHP's bailout) is given back.
pub fn raise<G: Globals>(g: G, e: Box<VmError>) -> Result<(), Box<VmError>> {
    let o = match *e {
        VmError::Thrown(o) => o,
        VmError::Uncaught { .. } => {
            let e = crate::error::locate(g, e);
            match materialize(g, &e) {
                Some(o) => o,
                None => return Err(e),
            }
        }
        _ => return Err(e),
    };
    eg!(g).exception = Some(Value::Obj(o));
    Ok(())
}

/// Takes the pending exception out of `EG(exception)`, as the error that
/// carries it through Rust code (out of a native frame's call, or to the
/// end of the request).
pub fn take_pending<G: Globals>(g: G) -> Option<Box<VmError>> {
    match eg!(g).exception.take() {
        Some(Value::Obj(o)) => Some(Box::new(VmError::Thrown(o))),
        _ => None,
    }
}

/// Finds where the error `e`, raised by the current frame's instruction,
/// goes (PHP's `ZEND_HANDLE_EXCEPTION`): the innermost `try` around it
/// in this frame or, popping frames, in a caller. `Ok` is the
/// instruction to go on at (in the frame now on top); `Err` gives the
/// error back when nothing in the script frames down to the next native
/// one handles it (that native frame is popped too, unless it is the
/// main script's).
///
/// While the handler is looked for the exception is pending in
/// `EG(exception)`, and a `catch` finds it there (`ZEND_CATCH` takes it);
/// a `finally` takes it into its slot. An engine error the VM raised
/// itself becomes its object only when a `try` needs it or its frame is
/// left, so that an error that ends the request in the main script's
/// frame is reported from the error as it is.
pub fn unwind<G: Globals>(g: G, e: Box<VmError>) -> Result<*const Op, Box<VmError>> {
    if !matches!(*e, VmError::Thrown(_) | VmError::Uncaught { .. }) {
        return Err(e);
    }
    let e = crate::error::locate(g, e);
    let mut engine_error = match *e {
        VmError::Thrown(o) => {
            eg!(g).exception = Some(Value::Obj(o));
            None
        }
        _ => Some(e),
    };
    // The error that leaves the script frames: the pending exception, or
    // the engine error that has not needed its object yet.
    let leave = |g: G, engine_error: Option<Box<VmError>>| match engine_error {
        Some(e) => e,
        // (Always pending here; were it not, the request ends with an
        // internal error rather than silently.)
        None => take_pending(g).unwrap_or_else(|| {
            Box::new(VmError::Fatal {
                message: "minizts: internal error: the pending exception is gone".into(),
                at: None,
            })
        }),
    };
    loop {
        // (A destructor run once the main frame has returned throws with
        // no frame left to look in.)
        let top = eg!(g, |eg| {
            let f = eg.frames.last()?;
            Some((f.function, f.base, f.pc, f.native, eg.frames.len() == 1 && f.func == 0))
        });
        let Some((function, base, pc, native, is_main)) = top else {
            return Err(leave(g, engine_error));
        };
        // SAFETY: a frame's function is one of the request's.
        let func = unsafe { &*function };
        let at = func.index_of(pc).unwrap_or(0) as u32;
        for r in &func.try_ranges {
            if at < r.start {
                continue;
            }
            let target = if r.catch != 0 && at < r.catch {
                Some((r.catch, true))
            } else if r.finally != 0 && at < r.finally {
                Some((r.finally, false))
            } else {
                if r.finally != 0 && at < r.finally_end {
                    // Thrown out of a finally block run for an exception:
                    // that one becomes the new one's previous.
                    // SAFETY: the slot is a register of the frame's window.
                    let slot = unsafe { &mut *base.byte_add(r.slot.raw() * 8) };
                    if let Value::Obj(unwound) = slot {
                        let unwound = unwound.clone();
                        *slot = Value::Null;
                        if let Some(e) = engine_error.take() {
                            raise(g, e)?;
                        }
                        if let Some(Value::Obj(o)) = eg!(g).exception.clone() {
                            set_previous(&o, unwound);
                        }
                    }
                }
                None
            };
            let Some((target, is_catch)) = target else {
                continue;
            };
            if let Some(e) = engine_error.take() {
                raise(g, e)?;
            }
            if !is_catch {
                let exception = eg!(g).exception.take().unwrap_or(Value::Null);
                // SAFETY: the slot is a register of the frame's window.
                unsafe { *base.byte_add(r.slot.raw() * 8) = exception };
            }
            // SAFETY: try ranges point into the function's code.
            return Ok(unsafe { func.code.as_ptr().add(target as usize) });
        }
        if native {
            if !is_main {
                pop_frame(g, func.num_regs as usize, base);
            }
            return Err(leave(g, engine_error));
        }
        // The exception outlives the frames it leaves: an engine error
        // is made into its object while its frames are still there.
        if let Some(e) = engine_error.take() {
            raise(g, e)?;
        }
        // A constructor the exception leaves: its object is never
        // destructed (PHP's `zend_object_store_ctor_failed`).
        if !func.is_closure && func.name.eq_ignore_ascii_case("__construct") {
            if let Some(cv) = func.this_cv {
                // SAFETY: the CV is a register of the frame's window.
                if let Value::Obj(o) = unsafe { &*base.add(cv as usize) } {
                    o.set_flag(minizts_core::object::Object::DESTRUCTED, true);
                }
            }
        }
        pop_frame(g, func.num_regs as usize, base);
    }
}

/// `zend_exception_set_previous`: `add` at the end of `o`'s chain of
/// previous exceptions, unless one chain already holds the other.
pub fn set_previous(o: &Obj, add: Obj) {
    if Obj::ptr_eq(o, &add) {
        return;
    }
    let mut ex = o.clone();
    // (Bounded: a chain made circular elsewhere must not hang.)
    for _ in 0..10_000 {
        let mut ancestor = get(&add, "previous");
        for _ in 0..10_000 {
            let Value::Obj(a) = ancestor else { break };
            if Obj::ptr_eq(&a, &ex) {
                return;
            }
            ancestor = get(&a, "previous");
        }
        match get(&ex, "previous") {
            Value::Obj(p) if Obj::ptr_eq(&p, &add) => return,
            Value::Obj(p) => ex = p,
            _ => return set(&ex, "previous", Value::Obj(add)),
        }
    }
}

/// Pops the top frame, freeing its window.
pub(crate) fn pop_frame<G: Globals>(g: G, num_regs: usize, base: *mut Value) {
    for i in 0..num_regs {
        // SAFETY: the window is the top frame's, which nothing else
        // refers to once it is being left.
        unsafe { &mut *base.add(i) }.release_counted();
    }
    let closure = eg!(g).frames.pop().and_then(|f| f.closure);
    drop(closure);
}

/// `Exception::__toString()`: each exception of the `previous` chain,
/// innermost first, joined by "Next ".
pub fn to_string<G: Globals>(g: G, o: &Obj) -> String {
    let _ = g;
    let mut chain = vec![o.clone()];
    while let Value::Obj(p) = get(chain.last().expect("one"), "previous") {
        if chain.iter().any(|c| Obj::ptr_eq(c, &p)) {
            break;
        }
        chain.push(p);
    }
    let mut out = String::new();
    for (i, e) in chain.iter().rev().enumerate() {
        if i > 0 {
            out.push_str("\n\nNext ");
        }
        let message = get(e, "message");
        let message = String::from_utf8_lossy(message.to_php_str(14).unwrap_or_default().as_bytes()).into_owned();
        let file = get(e, "file");
        let file = String::from_utf8_lossy(file.to_php_str(14).unwrap_or_default().as_bytes()).into_owned();
        let line = get(e, "line").to_int();
        let name = String::from_utf8_lossy(e.class.name.as_bytes()).into_owned();
        // An argument's type error names where the function is defined
        // too (PHP's `Exception::__toString`).
        let message = if matches!(name.as_str(), "TypeError" | "ArgumentCountError") && message.contains(", called in ")
        {
            format!("{message} and defined")
        } else {
            message
        };
        if message.is_empty() {
            out.push_str(&format!("{name} in {file}:{line}\nStack trace:\n"));
        } else {
            out.push_str(&format!("{name}: {message} in {file}:{line}\nStack trace:\n"));
        }
        out.push_str(&trace_string(e));
    }
    out
}

/// `getTraceAsString()`.
pub fn trace_string(o: &Obj) -> String {
    let lines = o
        .native
        .borrow()
        .as_ref()
        .and_then(|s| s.downcast_ref::<ThrowableState>())
        .map(|s| s.trace_lines.clone())
        .unwrap_or_default();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out.push_str(&format!("#{i} {l}\n"));
    }
    out.push_str(&format!("#{} {{main}}", lines.len()));
    out
}

/// The report of an exception nobody caught: PHP's
/// `zend_exception_error` ("Uncaught " and the exception as a string,
/// then where it was thrown).
pub fn uncaught_report<G: Globals>(g: G, o: &Obj) -> String {
    // A parse error reads as the compile-time one.
    if o.class.name.as_bytes() == b"ParseError" {
        let text = |name| {
            let v = get(o, name);
            String::from_utf8_lossy(v.to_php_str(14).unwrap_or_default().as_bytes()).into_owned()
        };
        let line = get(o, "line").to_int();
        return format!("Parse error: {} in {} on line {line}\n", text("message"), text("file"));
    }
    let text = match o.class.magic.to_string.clone() {
        Some(m) if crate::objects::is_user(&m) => {
            match crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new()) {
                Ok(Value::Str(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                _ => to_string(g, o),
            }
        }
        _ => to_string(g, o),
    };
    let file = get(o, "file");
    let file = String::from_utf8_lossy(file.to_php_str(14).unwrap_or_default().as_bytes()).into_owned();
    let line = get(o, "line").to_int();
    format!("Fatal error: Uncaught {text}\n  thrown in {file} on line {line}\n")
}

/// Whether `o`'s class is, or extends, the class named `name`
/// (case-insensitive; for `catch`).
pub fn is_a<G: Globals>(g: G, o: &Obj, name: &[u8]) -> bool {
    match crate::class::lookup(g, name) {
        Some(c) => o.class.is_subclass_of(&c),
        None => false,
    }
}

/// An exception thrown where the engine cannot let it go on (an
/// autoloader run while a class is linked) as PHP's fatal error
/// "`prefix`: Uncaught …" (`zend_exception_uncaught_error`); other errors
/// are given back as they are.
pub fn uncaught_during<G: Globals>(g: G, e: Box<VmError>, prefix: &str) -> Box<VmError> {
    if !matches!(*e, VmError::Thrown(_) | VmError::Uncaught { .. }) {
        return e;
    }
    let e = crate::error::locate(g, e);
    let Some(o) = materialize(g, &e) else {
        return e;
    };
    Box::new(VmError::Fatal {
        message: format!("{prefix}: Uncaught {}", to_string(g, &o)),
        at: None,
    })
}
