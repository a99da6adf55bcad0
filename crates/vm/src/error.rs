//! Errors, warnings and where they happened.
//!
//! PHP 8 reports most run-time failures by throwing an `Error` (or one of
//! its subclasses); minizts has no `try`/`catch`, so a thrown error always
//! ends the request as PHP's "Uncaught …" fatal error does. Warnings,
//! notices and deprecations are printed at once and execution goes on.
//! Messages use PHP's wording and `display_errors=stderr` format.

use std::fmt::Write as _;
use std::io::Write as _;

use minizts_core::bytecode::Op;
use minizts_core::Value;
use std::sync::atomic::Ordering;

use minizts_globals::executor::{LastError, PendingError};
use minizts_globals::{eg, ErrorSink, Globals};

/// Where an error happened: file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: Box<str>,
    pub line: u32,
}

/// Why execution stopped early.
#[derive(Debug, Clone, PartialEq)]
pub enum VmError {
    /// A thrown `Error` nobody caught (`class` is PHP's class name).
    Uncaught {
        class: &'static str,
        message: String,
        at: Option<Location>,
        /// PHP's "Stack trace:" lines, innermost first.
        trace: Vec<String>,
    },
    /// A fatal error (E_ERROR): memory or time limit, nesting, …
    Fatal { message: String, at: Option<Location> },
    /// `exit()`.
    Exit,
    /// A thrown object (`throw`, or an engine error once an object).
    Thrown(minizts_core::Obj),
    /// An error whose report is already written out (an uncaught
    /// exception, which needed the request to word it).
    Reported(String),
}

/// Results in the VM carry errors boxed, keeping the happy path small.
pub type VmResult<T> = Result<T, Box<VmError>>;

/// A thrown `Error` of class `class`.
pub fn throw<T>(class: &'static str, message: impl Into<String>) -> VmResult<T> {
    Err(Box::new(VmError::Uncaught {
        class,
        message: message.into(),
        at: None,
        trace: Vec::new(),
    }))
}

/// `throw new Error(message)`.
pub fn error<T>(message: impl Into<String>) -> VmResult<T> {
    throw("Error", message)
}

/// `throw new TypeError(message)`.
pub fn type_error<T>(message: impl Into<String>) -> VmResult<T> {
    throw("TypeError", message)
}

/// `throw new ValueError(message)`.
pub fn value_error<T>(message: impl Into<String>) -> VmResult<T> {
    throw("ValueError", message)
}

/// A fatal error.
pub fn fatal<T>(message: impl Into<String>) -> VmResult<T> {
    Err(Box::new(VmError::Fatal {
        message: message.into(),
        at: None,
    }))
}

/// A comparison that met a reference to an array it was comparing:
/// PHP's fatal "Nesting level too deep - recursive dependency?".
impl From<minizts_core::value::NestingError> for Box<VmError> {
    #[cold]
    fn from(e: minizts_core::value::NestingError) -> Box<VmError> {
        Box::new(VmError::Fatal {
            message: e.to_string(),
            at: None,
        })
    }
}

/// Levels of non-fatal diagnostics (PHP's `E_*` constants), and
/// `E_USER_ERROR`, which `trigger_error` raises and which is fatal once
/// reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Warning,
    Notice,
    Deprecated,
    UserError,
    UserWarning,
    UserNotice,
    UserDeprecated,
}

/// PHP's `E_USER_ERROR`.
const E_USER_ERROR: i64 = 256;

/// PHP's `E_COMPILE_WARNING`.
const E_COMPILE_WARNING: i64 = 128;

impl Level {
    pub fn bit(self) -> i64 {
        match self {
            Level::Warning => 2,
            Level::Notice => 8,
            Level::Deprecated => 8192,
            Level::UserError => E_USER_ERROR,
            Level::UserWarning => 512,
            Level::UserNotice => 1024,
            Level::UserDeprecated => 16384,
        }
    }
}

/// The label PHP prints before a diagnostic of level `bit`.
fn label(bit: i64) -> &'static str {
    match bit {
        2 | 128 | 512 => "Warning",
        8 | 1024 => "Notice",
        8192 | 16384 => "Deprecated",
        _ => "Fatal error",
    }
}

/// The location of the instruction the current frame is executing.
pub fn current_location<G: Globals>(g: G) -> Option<Location> {
    eg!(g, |eg| {
        if eg.script_ended && eg.frames.len() == 1 {
            return None;
        }
        let frame = eg.frames.last()?;
        let unit = eg.code.unit_of(frame.func)?;
        let f = unit.function(frame.func)?;
        let line = f.line_at(frame.pc).unwrap_or(f.line_end);
        Some(Location {
            file: unit.file.clone(),
            line,
        })
    })
}

/// Raises a diagnostic (PHP's `zend_error`): a user error handler that
/// takes its level gets it (at the VM's next check, see
/// [`PendingError`]); otherwise it is reported at once, and an
/// `E_USER_ERROR` is fatal.
pub fn raise<G: Globals>(g: G, level: Level, message: &str) -> VmResult<()> {
    let at = current_location(g);
    deliver(g, level.bit(), message, at)
}

/// [`raise`] at `at`: to the user error handler if it takes `bit`, else
/// reported.
fn deliver<G: Globals>(g: G, bit: i64, message: &str, at: Option<Location>) -> VmResult<()> {
    let handled = eg!(g, |eg| eg
        .user_errors
        .handler
        .as_ref()
        .is_some_and(|h| h.levels & bit != 0));
    if handled {
        eg!(g, |eg| {
            eg.user_errors.pending.push(PendingError {
                level: bit,
                message: message.to_owned(),
                file: at.as_ref().map(|l| l.file.clone()),
                line: at.as_ref().map_or(0, |l| l.line),
            });
            eg.interrupt.pending.store(true, Ordering::Relaxed);
        });
        return Ok(());
    }
    report(g, bit, message, at)
}

/// Reports the warnings PHP's compiler raised for `script`, which PHP
/// raises while it compiles, before the code runs: an `E_WARNING` goes
/// to a user error handler that takes it, as [`raise`] sends it.
pub(crate) fn compile_warnings<G: Globals>(g: G, script: &minizts_core::bytecode::Script) {
    for w in &script.warnings {
        let at = Location {
            file: script.file.clone(),
            line: w.line,
        };
        // A warning is never fatal; no handler may take a compile warning.
        let _ = if w.compile {
            report(g, E_COMPILE_WARNING, &w.message, Some(at))
        } else {
            deliver(g, Level::Warning.bit(), &w.message, Some(at))
        };
    }
}

/// Raises a warning, notice or deprecation (see [`raise`]).
pub fn diagnostic<G: Globals>(g: G, level: Level, message: &str) {
    debug_assert!(level != Level::UserError, "E_USER_ERROR goes through `raise`");
    let _ = raise(g, level, message);
}

/// `error_get_last()`'s record.
fn remember<G: Globals>(g: G, bit: i64, message: &str, at: Option<Location>) {
    eg!(g).user_errors.last = Some(LastError {
        level: bit,
        message: message.to_owned(),
        file: at.as_ref().map(|l| l.file.clone()),
        line: at.as_ref().map_or(0, |l| l.line),
    });
}

/// PHP's own error handler (`php_error_cb`): remembers the diagnostic,
/// prints it unless `error_reporting` masks it, and makes an
/// `E_USER_ERROR` fatal.
fn report<G: Globals>(g: G, bit: i64, message: &str, at: Option<Location>) -> VmResult<()> {
    remember(g, bit, message, at.clone());
    if bit == E_USER_ERROR {
        return Err(Box::new(VmError::Fatal {
            message: message.to_owned(),
            at,
        }));
    }
    if eg!(g).error_reporting & bit != 0 {
        write_stderr(g, &format_message(label(bit), message, at.as_ref()));
    }
    Ok(())
}

/// Calls the user error handler for each diagnostic waiting for it, in
/// order (PHP's `zend_error_impl`): with the level, message, file and
/// line; PHP's own report follows when the handler returns `false`. The
/// handler is unset while it runs; if it installed another meanwhile,
/// that one stays. An error or `exit()` in the handler drops the
/// diagnostics after it.
#[cold]
#[inline(never)]
pub(crate) fn run_user_handlers<G: Globals>(g: G) -> VmResult<()> {
    let pending = std::mem::take(&mut eg!(g).user_errors.pending);
    for p in pending {
        // The handler runs on top of the frame that raised it.
        let handler = eg!(g, |eg| if eg.frames.is_empty() {
            None
        } else {
            eg.user_errors.handler.take()
        });
        let at = p.file.clone().map(|file| Location { file, line: p.line });
        let Some(handler) = handler else {
            report(g, p.level, &p.message, at)?;
            continue;
        };
        let args = vec![
            Value::Int(p.level),
            Value::str(p.message.as_str()),
            p.file.as_deref().map_or(Value::Null, Value::str),
            Value::Int(i64::from(p.line)),
        ];
        let result = crate::call::call_callable(g, &handler.callback, args);
        eg!(g, |eg| {
            if eg.user_errors.handler.is_none() {
                eg.user_errors.handler = Some(handler);
            }
        });
        match result {
            Ok(Value::Bool(false)) => report(g, p.level, &p.message, at)?,
            Ok(_) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub fn warning<G: Globals>(g: G, message: &str) {
    diagnostic(g, Level::Warning, message);
}

pub fn notice<G: Globals>(g: G, message: &str) {
    diagnostic(g, Level::Notice, message);
}

pub fn deprecated<G: Globals>(g: G, message: &str) {
    diagnostic(g, Level::Deprecated, message);
}

fn format_message(label: &str, message: &str, at: Option<&Location>) -> String {
    match at {
        Some(at) => format!("{label}: {message} in {} on line {}\n", at.file, at.line),
        None => format!("{label}: {message}\n"),
    }
}

/// Writes to stderr after flushing pending stdout, so that a terminal
/// shows output and messages in the order they happened.
pub fn write_stderr<G: Globals>(g: G, text: &str) {
    eg!(g, |eg| match &mut eg.errors {
        ErrorSink::Stderr => {
            eg.output.flush_sink();
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(text.as_bytes());
            let _ = err.flush();
        }
        ErrorSink::Capture(buf) => buf.extend_from_slice(text.as_bytes()),
        ErrorSink::Discard => {}
    })
}

impl VmError {
    /// The text PHP prints for this error at the end of a request.
    pub fn report(&self) -> Option<String> {
        match self {
            VmError::Exit => None,
            VmError::Thrown(o) => Some(format!(
                "Fatal error: Uncaught {} (minizts: reported without the request)\n",
                o.class.name
            )),
            VmError::Reported(text) => Some(text.clone()),
            VmError::Fatal { message, at } => Some(format_message("Fatal error", message, at.as_ref())),
            VmError::Uncaught {
                class,
                message,
                at,
                trace,
            } => {
                let (file, line) = match at {
                    Some(at) => (&*at.file, at.line),
                    None => ("Unknown", 0),
                };
                // Uncaught, a parse error reads as the compile-time one
                // (PHP's `zend_exception_error`).
                if *class == "ParseError" {
                    return Some(format!("Parse error: {message} in {file} on line {line}\n"));
                }
                // As PHP's `Exception::__toString` words an argument's type
                // error.
                let defined =
                    if matches!(*class, "TypeError" | "ArgumentCountError") && message.contains(", called in ") {
                        " and defined"
                    } else {
                        ""
                    };
                let mut out =
                    format!("Fatal error: Uncaught {class}: {message}{defined} in {file}:{line}\nStack trace:\n");
                for (i, frame) in trace.iter().enumerate() {
                    let _ = writeln!(out, "#{i} {frame}");
                }
                let _ = writeln!(out, "#{} {{main}}", trace.len());
                let _ = writeln!(out, "  thrown in {file} on line {line}");
                Some(out)
            }
        }
    }

    pub fn is_located(&self) -> bool {
        match self {
            VmError::Exit | VmError::Thrown(_) | VmError::Reported(_) => true,
            VmError::Fatal { at, .. } | VmError::Uncaught { at, .. } => at.is_some(),
        }
    }
}

/// Fills in where an error happened (the current instruction) and, for
/// thrown errors, the stack trace, unless already known.
pub fn locate<G: Globals>(g: G, mut err: Box<VmError>) -> Box<VmError> {
    if err.is_located() {
        return err;
    }
    let here = current_location(g);
    match &mut *err {
        VmError::Fatal { at, .. } => *at = here,
        VmError::Uncaught { at, trace, .. } => {
            *at = here;
            *trace = stack_trace(g);
        }
        VmError::Exit | VmError::Thrown(_) | VmError::Reported(_) => {}
    }
    err
}

/// [`locate`] for an error thrown by builtin `name` called with `args`
/// from the current frame, or (`from_native`) by another builtin or the
/// engine: the trace starts with the builtin's call.
pub fn locate_in_builtin<G: Globals>(
    g: G,
    mut err: Box<VmError>,
    name: &str,
    args: &[Value],
    from_native: bool,
) -> Box<VmError> {
    if err.is_located() {
        return err;
    }
    if let VmError::Uncaught { at, trace, .. } = &mut *err {
        let here = current_location(g);
        let site = match &here {
            Some(l) if !from_native => format!("{}({})", l.file, l.line),
            _ => "[internal function]".to_string(),
        };
        let mut lines = vec![builtin_call_line(&site, name, args)];
        if from_native {
            // The builtin that called it back has no frame of its own.
            lines.extend(
                here.as_ref()
                    .and_then(|l| builtin_running(g, l))
                    .as_ref()
                    .map(trace_line),
            );
        }
        lines.extend(stack_trace(g));
        *at = here;
        *trace = lines;
        return err;
    }
    locate(g, err)
}

/// A trace line for builtin `name` called with `args` from `site` (its
/// sensitive parameters hidden).
fn builtin_call_line(site: &str, name: &str, args: &[Value]) -> String {
    let args: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if crate::builtins::sensitive_param(name, i) {
                "Object(SensitiveParameterValue)".to_string()
            } else {
                trace_arg(v)
            }
        })
        .collect();
    format!("{site}: {name}({})", args.join(", "))
}

/// The arguments of a `CallBuiltin` that `frame` is running: they stay
/// in its registers while the builtin runs.
fn builtin_args(frame: &minizts_globals::executor::Frame, args: minizts_core::bytecode::Reg, argc: u8) -> Vec<Value> {
    (0..argc as usize)
        // SAFETY: the argument registers are in the frame's live window
        // (its frame is on the stack).
        .map(|k| unsafe { &*frame.base.byte_add(args.raw() * 8).add(k) }.deref_clone())
        .collect()
}

/// The builtin call the current frame is making, at `here`, if its
/// instruction is one.
fn builtin_running<G: Globals>(g: G, here: &Location) -> Option<TraceFrame> {
    eg!(g, |eg| {
        let frame = eg.frames.last()?;
        // SAFETY: a frame's saved pc is an instruction of its code.
        let Op::CallBuiltin { id, args, argc, .. } = (unsafe { *frame.pc }) else {
            return None;
        };
        Some(TraceFrame {
            at: Some((here.file.clone(), here.line)),
            function: crate::builtins::info(id).name.to_string(),
            class: None,
            args: builtin_args(frame, args, argc),
            kind: FrameKind::Call,
        })
    })
}

/// [`locate`] for an error thrown by builtin `name` that the engine itself
/// called after the script ended (a shutdown function): no script code
/// is running, PHP's "[no active file]" at line 0.
pub fn locate_after_script(mut err: Box<VmError>, name: &str, args: &[Value]) -> Box<VmError> {
    if let VmError::Uncaught {
        at: at @ None, trace, ..
    } = &mut *err
    {
        *at = Some(Location {
            file: "[no active file]".into(),
            line: 0,
        });
        if trace.is_empty() {
            *trace = vec![builtin_call_line("[internal function]", name, args)];
        }
    }
    err
}

/// A frame of a backtrace: the call, and where it was made from (`None`:
/// by a builtin, PHP's "[internal function]").
pub(crate) struct TraceFrame {
    pub at: Option<(Box<str>, u32)>,
    pub function: String,
    /// For a method or a closure with a class scope: the class (PHP's
    /// `class` key: the scope the code belongs to) and how it was called
    /// (`->` with an object, `::` without).
    pub class: Option<(String, &'static str)>,
    pub args: Vec<Value>,
    pub kind: FrameKind,
}

/// What kind of call a trace frame is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameKind {
    /// A function's call.
    Call,
    /// `eval()`'s code, which PHP lists without arguments.
    Eval,
    /// An included file's code: the keyword is the function, the file's
    /// path its one argument (listed before the function by
    /// `debug_backtrace`).
    Include,
}

/// The calls below the current point, innermost first (PHP's
/// `zend_fetch_debug_backtrace`). A user function a builtin called back
/// comes from "[internal function]", followed by the builtin's own call
/// when the instruction that called it shows which builtin it was.
pub(crate) fn trace_frames<G: Globals>(g: G) -> Vec<TraceFrame> {
    // (frame, argument) of each `#[SensitiveParameter]` argument, wrapped
    // once the engine's state is no longer borrowed.
    let mut sensitive: Vec<(usize, usize)> = Vec::new();
    let mut out = eg!(g, |eg| {
        let mut out = Vec::new();
        // Frame i was called from frame i-1 at that frame's saved pc.
        for i in (1..eg.frames.len()).rev() {
            let callee = &eg.frames[i];
            let caller = &eg.frames[i - 1];
            let (Some(f), Some(unit)) = (eg.code.get(callee.func), eg.code.unit_of(caller.func)) else {
                continue;
            };
            let Some(cf) = unit.function(caller.func) else {
                continue;
            };
            let line = cf.line_at(caller.pc).unwrap_or(0);
            let site = Some((unit.file.clone(), line));
            if f.in_caller_scope {
                // SAFETY: a frame's saved pc is an instruction of its code.
                let frame = match unsafe { *caller.pc } {
                    Op::Include { once, required, .. } => TraceFrame {
                        at: site,
                        function: crate::include::keyword(once, required).into(),
                        class: None,
                        args: vec![Value::str(
                            eg.code.unit_of(callee.func).map_or("", |u| &*u.file).as_bytes(),
                        )],
                        kind: FrameKind::Include,
                    },
                    _ => TraceFrame {
                        at: site,
                        function: "eval".into(),
                        class: None,
                        args: Vec::new(),
                        kind: FrameKind::Eval,
                    },
                };
                out.push(frame);
                continue;
            }
            let mut args = Vec::new();
            for (a, p) in f.params.iter().enumerate().take(callee.argc as usize) {
                // SAFETY: the frame's window is live (its frame is on the
                // stack) and holds at least its parameters.
                let v = unsafe { &*callee.base.add(a) };
                let from = args.len();
                match v {
                    // A variadic parameter's values, as they were passed.
                    Value::Arr(rest) if p.variadic => args.extend(rest.values().map(Value::deref_clone)),
                    v => args.push(v.deref_clone()),
                }
                if p.sensitive {
                    sensitive.extend((from..args.len()).map(|j| (out.len(), j)));
                }
            }
            // Those past the parameters, where the function keeps them.
            if let Some(cv) = f.extra_args.filter(|_| callee.argc as usize > f.params.len()) {
                // SAFETY: a CV of the frame's live window.
                if let Value::Arr(rest) = unsafe { &*callee.base.add(cv as usize) } {
                    args.extend(rest.values().map(Value::deref_clone));
                }
            }
            let function = f.name.to_string();
            // SAFETY: a frame's saved pc is an instruction of its code.
            let called_by = match unsafe { *caller.pc } {
                Op::CallBuiltin { id, args, argc, .. } if callee.native && !crate::builtins::is_user_call(id) => {
                    Some((id, args, argc))
                }
                _ => None,
            };
            // A callback of a builtin comes from inside it; other native
            // calls (an error handler) from the instruction they run at.
            // A method's (or a scoped closure's) class, with `->` when
            // it runs with an object.
            let has_this = match &callee.closure {
                Some(c) => c.this.is_some(),
                None => f.method_flags & minizts_core::object::acc::STATIC == 0,
            };
            let class = (callee.scope != 0 && (f.is_closure || f.class_decl.is_some()))
                .then(|| eg.classes.get(callee.scope - 1).name.to_string())
                .map(|name| (name, if has_this { "->" } else { "::" }));
            out.push(TraceFrame {
                at: if called_by.is_some() { None } else { site.clone() },
                function,
                class,
                args,
                kind: FrameKind::Call,
            });
            if let Some((id, args, argc)) = called_by {
                out.push(TraceFrame {
                    at: site,
                    function: crate::builtins::info(id).name.to_string(),
                    class: None,
                    args: builtin_args(caller, args, argc),
                    kind: FrameKind::Call,
                });
            }
        }
        out
    });
    for (f, a) in sensitive {
        let v = std::mem::take(&mut out[f].args[a]);
        out[f].args[a] = crate::natives::sensitive_value(g, v);
    }
    out
}

/// PHP's stack trace lines for the frames below the current one:
/// `file(line): function(args)`.
pub fn stack_trace<G: Globals>(g: G) -> Vec<String> {
    trace_frames(g).iter().map(trace_line).collect()
}

/// A frame as a trace line (without its `#n `).
pub(crate) fn trace_line(f: &TraceFrame) -> String {
    let site = match &f.at {
        Some((file, line)) => format!("{file}({line})"),
        None => "[internal function]".into(),
    };
    if f.kind == FrameKind::Eval {
        return format!("{site}: eval()");
    }
    let args: Vec<String> = f.args.iter().map(trace_arg).collect();
    let (class, call) = f.class.as_ref().map_or(("", ""), |(c, t)| (c.as_str(), *t));
    format!("{site}: {class}{call}{}({})", f.function, args.join(", "))
}

/// PHP's `smart_str_append_escaped`: control bytes, `\\` and bytes past
/// ASCII written as escapes, so that a trace stays on one line.
pub(crate) fn escape_trace_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &c in bytes {
        match c {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x0c => out.push_str("\\f"),
            0x0b => out.push_str("\\v"),
            b'\\' => out.push_str("\\\\"),
            0x1b => out.push_str("\\e"),
            c if !(32..=126).contains(&c) => out.push_str(&format!("\\x{c:02X}")),
            c => out.push(c as char),
        }
    }
    out
}

fn trace_arg(v: &Value) -> String {
    match v {
        Value::Undef | Value::Null => "NULL".into(),
        Value::Bool(true) => "true".into(),
        Value::Bool(false) => "false".into(),
        Value::Int(n) => n.to_string(),
        // `smart_str_append_double` at the default precision, with a
        // zero fraction shown.
        Value::Float(f) => {
            let mut text = minizts_core::numfmt::php_float_to_string(*f, 14);
            if f.is_finite() && !text.contains(['.', 'e', 'E']) {
                text.push_str(".0");
            }
            text
        }
        // `smart_str_append_escaped_truncated`: the first bytes, escaped.
        Value::Str(s) => {
            let shown = &s[..s.len().min(15)];
            let more = if s.len() > 15 { "..." } else { "" };
            format!("'{}{more}'", escape_trace_bytes(shown))
        }
        Value::Arr(_) => "Array".into(),
        Value::Ref(r) => trace_arg(&r.borrow()),
        Value::Closure(_) => "Object(Closure)".into(),
        Value::Obj(o) => format!("Object({})", o.class.name),
        Value::IterVal(..) | Value::IterRef(_) => "NULL".into(),
    }
}
