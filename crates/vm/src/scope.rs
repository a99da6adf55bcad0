//! The running function's variables by name: `$$name` and `${expr}`,
//! `compact`, `extract`, `get_defined_vars`, and the argument list that
//! `func_get_args` reads.
//!
//! PHP keeps compiled variables in slots and builds a symbol table for a
//! frame only when code asks for variables by name
//! (`zend_rebuild_symbol_table`). Here a variable the function names in its
//! code is its CV register; one created by name that has no CV lives in
//! the function's hidden symbols array (see `Function::symbols`), or, for
//! the top-level code, in EG's table of extra globals, where `global`
//! finds it too. The compiler gives a function its symbols array when the
//! body reaches variables by name, so that a function that does not pays
//! nothing.

use std::rc::Rc;

use minizts_core::array::Key;
use minizts_core::bytecode::Function;
use minizts_core::{PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::error::{error, VmResult};

/// The running frame, as far as its variables go.
struct Scope {
    base: *mut Value,
    function: *const Function,
    main: bool,
}

fn scope<G: Globals>(g: G) -> Scope {
    eg!(g, |eg| {
        let f = eg.frames.last().expect("a running frame");
        Scope {
            base: f.base,
            function: f.function,
            main: f.func == 0,
        }
    })
}

/// Whether `name` is one of the compiler's hidden variables (their names
/// start with a NUL byte, which no variable named in code can).
fn hidden(name: &[u8]) -> bool {
    name.first() == Some(&0)
}

impl Scope {
    fn function(&self) -> &Function {
        // SAFETY: a frame's function belongs to the running script, which
        // outlives every frame of the request.
        unsafe { &*self.function }
    }

    /// Register `i` of the frame's window.
    ///
    /// # Safety
    /// `i` is below the function's `num_regs`, and the register is not
    /// otherwise borrowed while the result is used.
    #[allow(clippy::mut_from_ref)] // as `cv`
    unsafe fn reg(&self, i: usize) -> &mut Value {
        debug_assert!(i < self.function().num_regs as usize);
        // SAFETY: forwarded to the caller; the window is reserved on the VM
        // stack (whose chunks never move) while the frame runs.
        unsafe { &mut *self.base.add(i) }
    }

    /// The CV named `name`.
    // The register lives on the VM stack, not in `self`.
    #[allow(clippy::mut_from_ref)]
    fn cv(&self, name: &[u8]) -> Option<&mut Value> {
        if hidden(name) {
            return None;
        }
        let i = self.function().cv_names.iter().position(|n| n.as_bytes() == name)?;
        // SAFETY: CVs are the window's first registers; the VM borrows no
        // register across the builtin or instruction calling this.
        Some(unsafe { self.reg(i) })
    }

    /// The function's hidden symbols array, if it has one.
    #[allow(clippy::mut_from_ref)]
    fn symbols(&self) -> Option<&mut PhpArray> {
        let i = self.function().symbols?;
        // SAFETY: the symbols CV is a CV of this function (the compiler
        // made it), and nothing else refers to it.
        let slot = unsafe { self.reg(i as usize) };
        if !matches!(slot, Value::Arr(_)) {
            *slot = Value::arr(PhpArray::new());
        }
        match slot {
            Value::Arr(a) => Some(Rc::make_mut(a)),
            _ => None,
        }
    }
}

/// A variable's value, or `None` if it is not set.
fn set_value(slot: &Value) -> Option<Value> {
    match slot {
        Value::Undef => None,
        v => Some(v.deref_clone()),
    }
}

/// The value of the variable named `name`, or `None` if it is not set.
pub(crate) fn fetch<G: Globals>(g: G, name: &[u8]) -> Option<Value> {
    let s = scope(g);
    if let Some(slot) = s.cv(name) {
        return set_value(slot);
    }
    if s.main {
        return eg!(g, |eg| eg.extra_globals.get(name).map(PhpRef::get));
    }
    let v = s.symbols()?.get_str(name)?;
    Some(v.deref_clone())
}

/// The variable named `name` as a reference, created (null) if it does
/// not exist: a CV becomes a reference, as `$r = &$x` makes it one.
pub(crate) fn bind<G: Globals>(g: G, name: &[u8]) -> PhpRef {
    let s = scope(g);
    if let Some(slot) = s.cv(name) {
        return crate::gc::slot_ref(g, slot);
    }
    if s.main {
        if let Some(r) = eg!(g).extra_globals.get(name) {
            return r.clone();
        }
        let r = crate::gc::new_ref(g, Value::Null);
        eg!(g).extra_globals.insert(name.into(), r.clone());
        return r;
    }
    match s.symbols() {
        Some(table) => {
            let (slot, _) = table.entry(Key::from_bytes(name));
            crate::gc::slot_ref(g, slot)
        }
        // A function without a symbols array cannot reach a variable it
        // does not name (the compiler gives one to every function that
        // reaches variables by name); the write goes nowhere.
        None => crate::gc::new_ref(g, Value::Null),
    }
}

/// Binds the variable named `name` to `r` (`$$name = &$x`).
pub(crate) fn bind_to<G: Globals>(g: G, name: &[u8], r: PhpRef) {
    let s = scope(g);
    if let Some(slot) = s.cv(name) {
        *slot = Value::Ref(r);
    } else if s.main {
        eg!(g).extra_globals.insert(name.into(), r);
    } else if let Some(table) = s.symbols() {
        table.insert(Key::from_bytes(name), Value::Ref(r));
    }
}

/// Assigns `v` to the variable named `name` (through its reference, if it
/// is one), creating it.
pub(crate) fn assign<G: Globals>(g: G, name: &[u8], v: Value) {
    let s = scope(g);
    if let Some(slot) = s.cv(name) {
        match slot {
            Value::Ref(r) => r.set(v),
            _ => *slot = v,
        }
        return;
    }
    bind(g, name).set(v);
}

/// `unset($$name)`.
pub(crate) fn unset<G: Globals>(g: G, name: &[u8]) {
    let s = scope(g);
    if let Some(slot) = s.cv(name) {
        *slot = Value::Undef;
    } else if s.main {
        eg!(g).extra_globals.remove(name);
    } else if let Some(table) = s.symbols() {
        table.remove(&Key::from_bytes(name));
    }
}

/// Every set variable of the running function, in PHP's order (its CVs,
/// then those created by name), as `get_defined_vars` gives them.
pub(crate) fn all<G: Globals>(g: G) -> Vec<(PhpStr, Value)> {
    let s = scope(g);
    let f = s.function();
    let mut out = Vec::new();
    for (i, name) in f.cv_names.iter().enumerate() {
        if hidden(name.as_bytes()) {
            continue;
        }
        // SAFETY: `i` is a CV of this function; nothing borrows it.
        if let Some(v) = set_value(unsafe { s.reg(i) }) {
            out.push((PhpStr::from(name.as_bytes()), v));
        }
    }
    if s.main {
        eg!(g, |eg| {
            for (name, r) in &eg.extra_globals {
                out.push((PhpStr::from(&name[..]), r.get()));
            }
        });
    } else if let Some(table) = s.symbols() {
        for (k, v) in table.iter() {
            let name = match k {
                minizts_core::array::KeyRef::Str(s) => s.clone(),
                minizts_core::array::KeyRef::Int(n) => PhpStr::from(n.to_string().as_str()),
            };
            out.push((name, v.deref_clone()));
        }
    }
    out
}

/// The arguments the running function was called with, as
/// `func_get_args` gives them: the parameters' current values, then the
/// arguments past them. `what` is the calling builtin's name, for PHP's
/// error at the top level.
pub(crate) fn args<G: Globals>(g: G, what: &str) -> VmResult<Vec<Value>> {
    let (s, argc) = eg!(g, |eg| {
        let f = eg.frames.last().expect("a running frame");
        (
            Scope {
                base: f.base,
                function: f.function,
                main: f.func == 0,
            },
            f.argc as usize,
        )
    });
    if s.main {
        return error(format!("{what}() cannot be called from the global scope"));
    }
    let f = s.function();
    let variadic = f.params.last().is_some_and(|p| p.variadic);
    let fixed = if variadic { f.params.len() - 1 } else { f.params.len() };
    let mut out = Vec::with_capacity(argc);
    for i in 0..argc.min(fixed) {
        // SAFETY: parameters are the window's first CVs.
        out.push(unsafe { s.reg(i) }.deref_clone());
    }
    // The rest: a variadic parameter's array, or the hidden list of the
    // arguments past the parameters.
    let rest = if variadic {
        Some(fixed)
    } else {
        f.extra_args.map(usize::from)
    };
    if let Some(i) = rest {
        // SAFETY: a CV of this function.
        if let Value::Arr(a) = unsafe { s.reg(i) }.deref_clone() {
            out.extend(a.values().map(Value::deref_clone));
        }
    }
    for v in &mut out {
        if matches!(v, Value::Undef) {
            *v = Value::Null;
        }
    }
    Ok(out)
}

/// How many arguments the running function was called with.
pub(crate) fn arg_count<G: Globals>(g: G, what: &str) -> VmResult<usize> {
    let (main, argc) = eg!(g, |eg| {
        let f = eg.frames.last().expect("a running frame");
        (f.func == 0, f.argc as usize)
    });
    if main {
        return error(format!("{what}() must be called from a function context"));
    }
    Ok(argc)
}
