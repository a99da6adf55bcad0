//! The bytecode VM and PHP's builtin functions.
//!
//! [`thread_startup`] gives a thread its engine globals (and registers the
//! builtins in its compiler globals); [`run_request`] runs a compiled
//! script as one request: request startup, execution, request shutdown.
//! Everything is generic over the globals strategy `G`.

pub mod builtins;
pub mod call;
pub mod class;
mod code;
mod dim;
pub mod dtoa;
mod enums;
pub mod error;
mod eval;
pub mod exceptions;
pub mod exec;
pub mod extensions;
mod gc;
mod include;
mod limits;
mod natives;
pub mod objects;
mod ops;
mod output;
mod refs;
mod scope;
pub mod timer;
mod types;

use std::sync::Arc;

use minizts_core::bytecode::Script;
use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::{eg, Frame, Globals, Sink, StartupError};

use crate::error::{write_stderr, VmError, VmResult};

/// Starts an engine on this thread: its globals, and the builtins
/// registered in its compiler globals.
pub fn thread_startup<G: Globals>() -> Result<G, StartupError> {
    let g = G::thread_startup()?;
    extensions::thread_startup();
    builtins::register(g);
    Ok(g)
}

/// Ends this thread's engine.
///
/// # Safety
/// As [`Globals::thread_shutdown`]: `g` and its copies are not used again.
pub unsafe fn thread_shutdown<G: Globals>(g: G) {
    // SAFETY: the caller's promise.
    unsafe { g.thread_shutdown() };
    extensions::thread_shutdown();
    minizts_globals::memory::release_thread_cache();
}

/// How a request ended.
pub struct RequestOutcome {
    /// The process exit status PHP would use: 0, `exit()`'s, or 255.
    pub exit_status: i32,
    /// The error that ended it, if any (already printed).
    pub error: Option<VmError>,
    /// The sink, with whatever it captured.
    pub sink: Sink,
}

/// A request's armed limits: dropped (timer disarmed, memory watch
/// removed) when the request ends, or when a panic unwinds through it, so
/// neither the watchdog nor the allocator keeps a pointer into an EG that
/// a caller may shut down after catching the panic. The timer is the one
/// in `EG.time_limit`, which `set_time_limit` may have armed meanwhile.
struct Limits<G: Globals> {
    g: G,
}

impl<G: Globals> Drop for Limits<G> {
    fn drop(&mut self) {
        minizts_globals::memory::unwatch();
        if let Some(t) = eg!(self.g).time_limit.take() {
            timer::disarm(t);
        }
    }
}

/// Runs `script` as one request with `$argv` = `argv`, output to `sink`.
pub fn run_request<G: Globals>(g: G, script: Arc<Script>, argv: &[PhpStr], sink: Sink) -> RequestOutcome {
    eg!(g).request_startup(script.clone(), sink);
    eg!(g).argv = argv.to_vec();
    let limits = Limits { g };
    let time_limit = eg!(g).settings.max_execution_time;
    limits::set_time_limit(g, time_limit);
    eg!(g, |eg| {
        if let Some(limit) = eg.settings.memory_limit {
            // SAFETY: as for the timer: `limits` unwatches it.
            unsafe { minizts_globals::memory::watch(limit, &eg.interrupt.pending) };
        }
    });
    let result = extensions::request_startup(g).and_then(|()| start(g, &script));
    let result = match result {
        Err(e) if matches!(*e, VmError::Thrown(_) | VmError::Uncaught { .. }) => user_exception_handler(g, &script, e),
        r => r.map(drop),
    };
    let (mut exit_status, mut error) = ended(g, result);
    if !eg!(g).shutdown_functions.is_empty() {
        // PHP calls them after an exit() or an uncaught error too; one
        // that exits or fails decides the status.
        let result = shutdown_frame(g, &script).and_then(|()| builtins::run_shutdown_functions(g));
        if result.is_err() {
            (exit_status, error) = ended(g, result);
        }
    }
    // The objects still alive get their destructors (PHP's
    // `zend_call_destructors`), then the request's values go.
    let result = objects::shutdown_destructors(g);
    if result.is_err() && error.is_none() {
        (exit_status, error) = ended(g, result);
    }
    drop(limits);
    extensions::request_shutdown(g);
    let sink = eg!(g).request_shutdown();
    RequestOutcome {
        exit_status,
        error,
        sink,
    }
}

/// The exit status and error of a part of the request that ended with
/// `result` (the error printed).
fn ended<T, G: Globals>(g: G, result: VmResult<T>) -> (i32, Option<VmError>) {
    match result {
        Ok(_) => (eg!(g).exit_status, None),
        Err(e) => match *e {
            VmError::Exit => (eg!(g).exit_status, None),
            VmError::Thrown(o) => {
                let text = crate::exceptions::uncaught_report(g, &o);
                write_stderr(g, &text);
                (255, Some(VmError::Reported(text)))
            }
            e => {
                if let Some(text) = e.report() {
                    write_stderr(g, &text);
                }
                (255, Some(e))
            }
        },
    }
}

/// Hands the exception `e` that ended the script to the handler
/// `set_exception_handler` installed, if there is one (PHP's
/// `zend_user_exception_handler`): the request then ends normally,
/// unless the handler throws in turn. The handler is uninstalled while
/// it runs.
fn user_exception_handler<G: Globals>(g: G, script: &Script, e: Box<VmError>) -> VmResult<()> {
    let Some(handler) = eg!(g).user_errors.exception_handler.clone() else {
        return Err(e);
    };
    let Some(o) = exceptions::materialize(g, &e) else {
        return Err(e);
    };
    drop(e);
    eg!(g, |eg| {
        let errors = &mut eg.user_errors;
        errors.exception_handlers.push(errors.exception_handler.take());
    });
    shutdown_frame(g, script)?;
    let r = call::call_callable(g, &handler, vec![Value::Obj(o)]);
    eg!(g, |eg| {
        let errors = &mut eg.user_errors;
        if errors.exception_handler.is_none() {
            errors.exception_handler = errors.exception_handlers.pop().flatten();
        }
    });
    r.map(drop)
}

/// Leaves the main frame alone on the frame stack for the shutdown
/// functions to be called from: after an exit() or an error the frames
/// it was in are dropped (their registers stay until the stack is
/// reset); if the main frame is gone, a fresh one stands in for it.
fn shutdown_frame<G: Globals>(g: G, script: &Script) -> VmResult<()> {
    let has_main = eg!(g, |eg| {
        let keep = eg.frames.first().is_some_and(|f| f.func == 0);
        eg.frames.truncate(keep as usize);
        eg.native_depth = 0;
        eg.script_ended = true;
        keep
    });
    if !has_main {
        main_frame(g, script)?;
    }
    Ok(())
}

/// Pushes the main script's frame (its variables unset).
fn main_frame<G: Globals>(g: G, script: &Script) -> VmResult<*mut Value> {
    let main = script.main();
    let (chunk, base) = match eg!(g).stack.bottom(main.num_regs as usize) {
        Ok(w) => w,
        Err(o) => return error::fatal(format!("Maximum call stack size of {} bytes reached", o.limit_bytes)),
    };
    eg!(g).frames.push(Frame {
        func: 0,
        function: main,
        base,
        chunk,
        pc: main.code.as_ptr(),
        ret: minizts_core::bytecode::Reg::NONE,
        argc: 0,
        closure: None,
        native: true,
        scope: 0,
        called: 0,
    });
    Ok(base)
}

fn start<G: Globals>(g: G, script: &Script) -> VmResult<Value> {
    error::compile_warnings(g, script);
    for &f in &script.early_functions {
        call::declare_function(g, f)?;
    }
    // PHP's early binding: top-level classes whose parents are known.
    for &c in &script.early_classes {
        class::declare_early(g, script, c)?;
    }
    let main = script.main();
    let base = main_frame(g, script)?;
    for (i, name) in main.cv_names.iter().enumerate() {
        if let Some(v) = request_global(g, name) {
            // SAFETY: `i` is a CV of the main function, inside its window.
            unsafe { *base.add(i) = v };
        }
    }
    exec::execute(g)
}

/// The value global `name` starts a request with, if it is one PHP's CLI
/// makes (see `minizts_core::superglobals`).
pub(crate) fn request_global<G: Globals>(g: G, name: &str) -> Option<Value> {
    let argv = || -> Vec<Value> { eg!(g).argv.iter().map(|s| Value::Str(s.clone())).collect() };
    let env = || {
        let mut a = PhpArray::new();
        for (k, v) in std::env::vars_os() {
            let v = Value::Str(PhpStr::from(v.as_encoded_bytes()));
            a.insert(minizts_core::Key::from_bytes(k.as_encoded_bytes()), v);
        }
        a
    };
    Some(match name {
        "argv" => Value::arr(PhpArray::from_list(argv())),
        "argc" => Value::Int(eg!(g).argv.len() as i64),
        "_GET" | "_POST" | "_COOKIE" | "_FILES" | "_REQUEST" => Value::arr(PhpArray::new()),
        "_ENV" => Value::arr(env()),
        "_SERVER" => {
            let mut server = env();
            let script = eg!(g).argv.first().cloned().unwrap_or_else(PhpStr::empty);
            for key in ["PHP_SELF", "SCRIPT_NAME", "SCRIPT_FILENAME", "PATH_TRANSLATED"] {
                server.insert(
                    minizts_core::Key::from_bytes(key.as_bytes()),
                    Value::Str(script.clone()),
                );
            }
            server.insert(
                minizts_core::Key::from_bytes(b"DOCUMENT_ROOT"),
                Value::Str(PhpStr::empty()),
            );
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            server.insert(
                minizts_core::Key::from_bytes(b"REQUEST_TIME_FLOAT"),
                Value::Float(now.as_secs_f64()),
            );
            server.insert(
                minizts_core::Key::from_bytes(b"REQUEST_TIME"),
                Value::Int(now.as_secs() as i64),
            );
            server.insert(
                minizts_core::Key::from_bytes(b"argv"),
                Value::arr(PhpArray::from_list(argv())),
            );
            server.insert(
                minizts_core::Key::from_bytes(b"argc"),
                Value::Int(eg!(g).argv.len() as i64),
            );
            Value::arr(server)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout};

    use minizts_globals::memory::{self, CountingAlloc};
    use minizts_globals::strategies::Tls;

    /// A thread's engine shutdown hands its cached small blocks back, so a
    /// finished worker keeps no memory in the allocator's free lists.
    #[test]
    fn thread_shutdown_empties_the_allocator_free_lists() {
        std::thread::spawn(|| {
            let g: Tls = super::thread_startup().expect("engine startup");
            let layout = Layout::from_size_align(40, 8).unwrap();
            // SAFETY: the block is freed once, with its layout. (The test
            // binary's global allocator is the system's; the engine's
            // allocator is called directly to put a block on a list.)
            unsafe { CountingAlloc.dealloc(CountingAlloc.alloc(layout), layout) };
            assert_eq!(memory::thread_cache_counts().iter().sum::<u32>(), 1);
            // SAFETY: `g` is not used again.
            unsafe { super::thread_shutdown(g) };
            assert_eq!(memory::thread_cache_counts().iter().sum::<u32>(), 0);
        })
        .join()
        .unwrap();
    }
}
