//! `eval()`: compiles a string into a script of the request (PHP's
//! `zend_eval_stringl`) and runs its top-level code in the caller's
//! scope. Included files (`include`) are loaded and entered the same way.
//!
//! The compiled script joins the request's code (`EG.code`) with the next
//! function ids and cache slots, so its functions and closures stay
//! callable after the `eval()` returns, as PHP keeps them. Its top-level
//! code runs as a call whose result is what it returns; its variables are
//! the caller's: each one it names is bound, by reference, to the
//! caller's variable of that name (made if missing), an auto-global to
//! the global one. By-name lookups from an eval's frame go to the caller
//! (see `scope`).

use minizts_compiler::{CompileErrorKind, Unit, UnitKind};
use minizts_core::bytecode::{FuncId, Function, Reg};
use minizts_core::{PhpRef, Value};
use minizts_globals::{eg, Globals};

use crate::error::{Location, VmError, VmResult};
use crate::scope::{self, Which};

/// Compiles `code` (which starts in PHP mode) for an `eval()` at the
/// current instruction, declares its functions, and returns the id of its
/// top-level code.
pub(crate) fn compile<G: Globals>(g: G, code: &[u8]) -> VmResult<FuncId> {
    let here = crate::error::current_location(g);
    let file = match &here {
        Some(l) => format!("{}({}) : eval()'d code", l.file, l.line),
        None => "eval()'d code".to_string(),
    };
    let mut src = b"<?php ".to_vec();
    src.extend_from_slice(code);
    load(g, &src, &file, UnitKind::Eval)
}

/// Compiles `src` as `file` into the request's code (an `eval()`'s code
/// or an included file), declares the functions PHP declares as it
/// compiles, and returns the id of the top-level code.
pub(crate) fn load<G: Globals>(g: G, src: &[u8], file: &str, kind: UnitKind) -> VmResult<FuncId> {
    let (first_func, first_cache_slot) = eg!(g, |eg| (eg.code.next_func(), eg.runtime_cache.len() as u32));
    let unit = Unit {
        file,
        first_func,
        first_cache_slot,
        kind,
    };
    let script = match minizts_compiler::compile_unit(g, src, unit) {
        Ok(s) => s,
        Err(e) => {
            let at = Some(Location {
                // Line 0: an error PHP reports with no file.
                file: if e.line == 0 { "[no active file]" } else { file }.into(),
                line: e.line,
            });
            // PHP 8 throws a `ParseError` (uncaught, it reads as a parse
            // error); other compile errors are fatal.
            return Err(Box::new(match e.kind {
                CompileErrorKind::Parse => VmError::Uncaught {
                    class: "ParseError",
                    message: e.message,
                    at,
                    trace: Vec::new(),
                },
                CompileErrorKind::Fatal => VmError::Fatal { message: e.message, at },
            }));
        }
    };
    crate::error::compile_warnings(g, &script);
    let early = script.early_functions.clone();
    eg!(g).add_script(script);
    declare_early(g, &early)?;
    Ok(first_func)
}

/// Declares the top-level functions of loaded code; a name taken already
/// is a fatal error at the declaration, in the loaded file.
pub(crate) fn declare_early<G: Globals>(g: G, early: &[FuncId]) -> VmResult<()> {
    for &f in early {
        if let Err(mut e) = crate::call::declare_function(g, f) {
            if let VmError::Fatal { at: at @ None, .. } = &mut *e {
                *at = Some(Location {
                    file: crate::code::file_of(g, f),
                    // SAFETY: used here only.
                    line: unsafe { crate::code::known(g, f) }.line_start,
                });
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Pushes the frame of `eval`'d top-level code `func` above the running
/// frame, its variables bound to the caller's; its result goes to `dst`.
pub(crate) fn enter<G: Globals>(g: G, func: FuncId, dst: Reg) -> VmResult<()> {
    // SAFETY: used within this call.
    let f = unsafe { crate::code::known(g, func) };
    // Bound while the caller is the top frame (its scope is the one
    // `scope` finds).
    let bound: Vec<(usize, PhpRef)> = f
        .cv_names
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.starts_with('\0'))
        .filter_map(|(i, n)| {
            let name = n.as_bytes();
            if minizts_core::superglobals::is_auto_global(n) {
                return Some((i, scope::bind(g, Which::Global, name)));
            }
            // A variable the caller does not have stays unset (it warns
            // when read) until `detach` hands it over.
            scope::fetch(g, Which::Local, name)?;
            Some((i, scope::bind(g, Which::Local, name)))
        })
        .collect();
    let (at, chunk) = eg!(g, |eg| {
        let top = eg.frames.last().expect("a calling frame");
        let n = eg.code.get(top.func).expect("the calling frame's function").num_regs as usize;
        // SAFETY: the top frame's window is `base..base+n`.
        (unsafe { eg.stack.after(top.base, n) }, top.chunk)
    });
    // SAFETY: `at` is the end of the top frame's window, in the chunk that
    // ends at `chunk`; no arguments are passed.
    unsafe { crate::call::push_frame(g, func, at, chunk, 0, dst, None, false) }?;
    let base = eg!(g, |eg| eg.frames.last().expect("the eval's frame").base);
    for (i, r) in bound {
        // SAFETY: CV `i` is in the new frame's window, which holds
        // nothing that needs dropping yet (a fresh window's variables
        // are unset).
        unsafe { *base.add(i) = Value::Ref(r) };
    }
    Ok(())
}

/// `DETACH_SCOPE`: hands the eval's variables that are set to the caller
/// (those bound at entry are the caller's already: binding them again
/// changes nothing).
pub(crate) fn detach<G: Globals>(g: G, f: &Function, base: *mut Value) {
    for (i, name) in f.cv_names.iter().enumerate() {
        if name.starts_with('\0') || minizts_core::superglobals::is_auto_global(name) {
            continue;
        }
        // SAFETY: CV `i` is in the running (eval) frame's window.
        let slot = unsafe { &*base.add(i) };
        match slot {
            Value::Undef => {}
            Value::Ref(r) => scope::bind_to(g, Which::Local, name.as_bytes(), r.clone()),
            v => scope::assign(g, name.as_bytes(), v.deref_clone()),
        }
    }
}
