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
use minizts_globals::executor::CacheEntry;
use minizts_globals::{eg, Globals};

use crate::error::{error, VmResult};

/// Which variables a name is looked up in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Which {
    /// The running function's (`$$name`, `compact`, `extract`).
    Local,
    /// The global scope's, from any function (`$GLOBALS[name]`, `global`).
    Global,
}

/// A frame, as far as its variables go; `base` is null for the global
/// scope once the top-level code has returned (a shutdown function),
/// when only the globals created by name are left.
struct Scope {
    base: *mut Value,
    function: *const Function,
    main: bool,
}

#[inline(always)]
fn scope<G: Globals>(g: G, which: Which) -> Scope {
    if which == Which::Local {
        share_inline_vars(g);
    }
    raw_scope(g, which)
}

/// Variables that `eval`'d or included code set since it started, and
/// that its caller did not have then, are still registers of its own
/// frame (`eval::detach` hands them over when it returns); a by-name
/// access from inside it reaches the caller's scope, so they are handed
/// over first. PHP's symbol table points at such a frame's slots, which
/// gives the same.
fn share_inline_vars<G: Globals>(g: G) {
    let inline: Vec<(*mut Value, *const Function)> = eg!(g, |eg| eg
        .frames
        .iter()
        .rev()
        // SAFETY: a frame's function is one of the request's.
        .take_while(|f| unsafe { &*f.function }.in_caller_scope)
        .map(|f| (f.base, f.function))
        .collect());
    if inline.is_empty() {
        return;
    }
    let target = raw_scope(g, Which::Local);
    for (base, function) in inline {
        // SAFETY: as above.
        let f = unsafe { &*function };
        for (i, name) in f.cv_names.iter().enumerate() {
            if hidden(name.as_bytes()) || minizts_core::superglobals::is_auto_global(name) {
                continue;
            }
            // SAFETY: CV `i` is in the live window of an inline frame;
            // nothing else borrows it while a builtin or by-name
            // instruction runs.
            let slot = unsafe { &mut *base.add(i) };
            if matches!(slot, Value::Undef | Value::Ref(_)) {
                continue;
            }
            let v = std::mem::replace(slot, Value::Undef);
            let r = bind_in(g, &target, name.as_bytes());
            r.set(v);
            *slot = Value::Ref(r);
        }
    }
}

#[inline(always)]
fn raw_scope<G: Globals>(g: G, which: Which) -> Scope {
    eg!(g, |eg| {
        let f = match which {
            // An `eval()`'s code reaches its caller's variables (its own
            // are bound to them, see `eval`).
            Which::Local => eg.frames.iter().rev().find(|f| {
                // SAFETY: a frame's function is one of the request's.
                !unsafe { &*f.function }.in_caller_scope
            }),
            Which::Global => eg.frames.first().filter(|f| f.func == 0),
        };
        match f {
            Some(f) => Scope {
                base: f.base,
                function: f.function,
                main: f.func == 0,
            },
            None => Scope {
                base: std::ptr::null_mut(),
                function: std::ptr::null(),
                main: true,
            },
        }
    })
}

/// Whether `name` is one of the compiler's hidden variables (their names
/// start with a NUL byte, which no variable named in code can).
fn hidden(name: &[u8]) -> bool {
    name.first() == Some(&0)
}

impl Scope {
    /// The frame's function; `None` for the global scope without its
    /// frame.
    fn function(&self) -> Option<&Function> {
        // SAFETY: a frame's function belongs to the running script, which
        // outlives every frame of the request.
        unsafe { self.function.as_ref() }
    }

    /// Register `i` of the frame's window.
    ///
    /// # Safety
    /// `i` is below the function's `num_regs`, and the register is not
    /// otherwise borrowed while the result is used.
    #[allow(clippy::mut_from_ref)] // as `cv`
    unsafe fn reg(&self, i: usize) -> &mut Value {
        debug_assert!(self.function().is_some_and(|f| i < f.num_regs as usize));
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
        let i = self.function()?.cv_names.iter().position(|n| n.as_bytes() == name)?;
        // SAFETY: CVs are the window's first registers; the VM borrows no
        // register across the builtin or instruction calling this.
        Some(unsafe { self.reg(i) })
    }

    /// The function's hidden symbols array, if it has one.
    #[allow(clippy::mut_from_ref)]
    fn symbols(&self) -> Option<&mut PhpArray> {
        let i = self.function()?.symbols?;
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

/// Which of the main script's variables (CVs) `name` is, when the
/// global scope has its frame: what `$GLOBALS['name']` reads, from then
/// on (see `CacheEntry::GlobalVar`).
pub(crate) fn global_cv<G: Globals>(g: G, name: &[u8]) -> Option<u32> {
    let s = raw_scope(g, Which::Global);
    if !s.main || hidden(name) {
        return None;
    }
    let i = s.function()?.cv_names.iter().position(|n| n.as_bytes() == name)?;
    u32::try_from(i).ok()
}

/// `$GLOBALS['name']` through the running function's cache slot `cache`
/// (see [`global_cv`]): the variable's value, or `None` for the general
/// path (no entry, or the variable is unset: PHP's warning).
#[inline]
pub(crate) fn fetch_global_cached<G: Globals>(g: G, cache: u16) -> Option<Value> {
    if cache == minizts_core::bytecode::NO_CACHE {
        return None;
    }
    eg!(g, |eg| {
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*eg.frames.last()?.function }.cache_base as usize + cache as usize;
        let CacheEntry::GlobalVar { cv } = eg.runtime_cache.get(at)? else {
            return None;
        };
        let main = eg.frames.first().filter(|f| f.func == 0)?;
        // SAFETY: the entry was made from the main script's function,
        // whose CV `cv` is a register of its frame's window (the first
        // frame's, live while the request runs); no register is
        // borrowed while an instruction reads its operand.
        match unsafe { &*main.base.add(*cv as usize) } {
            Value::Undef => None,
            // SAFETY: as above; the reference is only read.
            Value::Ref(r) => unsafe { r.peek() }.filter(|v| !matches!(v, Value::Undef)).cloned(),
            v => Some(v.clone()),
        }
    })
}

/// `global $name` through the running function's cache slot `cache`
/// (see [`global_cv`]): the main script's variable as a reference (made
/// one if it is not yet), or `None` when the entry names none.
pub(crate) fn bind_global_cached<G: Globals>(g: G, cache: u16) -> Option<PhpRef> {
    if cache == minizts_core::bytecode::NO_CACHE {
        return None;
    }
    let slot: *mut Value = eg!(g, |eg| {
        // SAFETY: a frame's function is one of the request's.
        let at = unsafe { &*eg.frames.last()?.function }.cache_base as usize + cache as usize;
        let CacheEntry::GlobalVar { cv } = eg.runtime_cache.get(at)? else {
            return None;
        };
        let main = eg.frames.first().filter(|f| f.func == 0)?;
        // SAFETY: as in `fetch_global_cached`: CV `cv` of the first
        // frame's window, live while the request runs.
        Some(unsafe { main.base.add(*cv as usize) })
    })?;
    // SAFETY: as just said; no other reference to the register is alive
    // while the instruction binds it.
    Some(crate::gc::slot_ref(g, unsafe { &mut *slot }))
}

/// A variable's value, or `None` if it is not set.
fn set_value(slot: &Value) -> Option<Value> {
    match slot {
        Value::Undef => None,
        v => Some(v.deref_clone()),
    }
}

/// The value of the variable named `name`, or `None` if it is not set.
pub(crate) fn fetch<G: Globals>(g: G, which: Which, name: &[u8]) -> Option<Value> {
    let s = scope(g, which);
    if let Some(slot) = s.cv(name) {
        return set_value(slot);
    }
    if s.main {
        return extra_global(g, name).map(|r| r.get());
    }
    let v = s.symbols()?.get_str(name)?;
    Some(v.deref_clone())
}

/// The variable named `name` as a reference, created (null) if it does
/// not exist: a CV becomes a reference, as `$r = &$x` makes it one.
#[inline(always)]
pub(crate) fn bind<G: Globals>(g: G, which: Which, name: &[u8]) -> PhpRef {
    bind_in(g, &scope(g, which), name)
}

fn bind_in<G: Globals>(g: G, s: &Scope, name: &[u8]) -> PhpRef {
    if let Some(slot) = s.cv(name) {
        return crate::gc::slot_ref(g, slot);
    }
    if s.main {
        if let Some(r) = extra_global(g, name) {
            return r;
        }
        // `_ENV` and `_REQUEST` are made when first reached, as PHP makes
        // its just-in-time auto-globals when it first compiles a use.
        let initial = std::str::from_utf8(name)
            .ok()
            .filter(|n| minizts_core::superglobals::is_auto_global(n))
            .and_then(|n| crate::request_global(g, n))
            .unwrap_or(Value::Null);
        let r = crate::gc::new_ref(g, initial);
        eg!(g)
            .extra_globals
            .insert(Key::from_bytes(name), Value::Ref(r.clone()));
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
pub(crate) fn bind_to<G: Globals>(g: G, which: Which, name: &[u8], r: PhpRef) {
    let s = scope(g, which);
    if let Some(slot) = s.cv(name) {
        *slot = Value::Ref(r);
    } else if s.main {
        eg!(g).extra_globals.insert(Key::from_bytes(name), Value::Ref(r));
    } else if let Some(table) = s.symbols() {
        table.insert(Key::from_bytes(name), Value::Ref(r));
    }
}

/// Assigns `v` to the variable named `name` (through its reference, if it
/// is one), creating it.
pub(crate) fn assign<G: Globals>(g: G, name: &[u8], v: Value) {
    let s = scope(g, Which::Local);
    if let Some(slot) = s.cv(name) {
        match slot {
            Value::Ref(r) => r.set(v),
            _ => *slot = v,
        }
        return;
    }
    bind(g, Which::Local, name).set(v);
}

/// `unset($$name)`.
pub(crate) fn unset<G: Globals>(g: G, which: Which, name: &[u8]) {
    let s = scope(g, which);
    if let Some(slot) = s.cv(name) {
        *slot = Value::Undef;
    } else if s.main {
        eg!(g).extra_globals.remove(&Key::from_bytes(name));
    } else if let Some(table) = s.symbols() {
        table.remove(&Key::from_bytes(name));
    }
}

/// Every set variable of the running function, in PHP's order (its CVs,
/// then those created by name), as `get_defined_vars` gives them.
pub(crate) fn all<G: Globals>(g: G, which: Which) -> Vec<(PhpStr, Value)> {
    let mut out = Vec::new();
    each(g, which, |name, v| out.push((name, v.deref_clone())));
    out
}

/// The global variables as reading `$GLOBALS` gives them: a copy of the
/// symbol table in which a variable that is a reference shared with
/// something else stays that reference (as `zend_array_dup` keeps it).
pub(crate) fn globals<G: Globals>(g: G) -> PhpArray {
    let mut out = PhpArray::new();
    each(g, Which::Global, |name, v| {
        let v = match v {
            Value::Ref(r) if r.count() > 1 => Value::Ref(r.clone()),
            v => v.deref_clone(),
        };
        out.insert(Key::from_php_str(name), v);
    });
    out
}

/// Calls `f` with each set variable of the scope and its slot (`f` must
/// not reach EG: it runs inside EG's borrow for the globals made by name).
fn each<G: Globals>(g: G, which: Which, mut f: impl FnMut(PhpStr, &Value)) {
    let s = scope(g, which);
    let cvs = s.function().map_or(&[][..], |f| &f.cv_names[..]);
    for (i, name) in cvs.iter().enumerate() {
        // (`$this` is no variable of the scope's in PHP.)
        if hidden(name.as_bytes()) || name.as_bytes() == b"this" {
            continue;
        }
        // SAFETY: `i` is a CV of this function; nothing borrows it.
        let slot = unsafe { s.reg(i) };
        if !matches!(slot, Value::Undef) {
            f(PhpStr::from(name.as_bytes()), slot);
        }
    }
    let by_name = |table: &PhpArray, f: &mut dyn FnMut(PhpStr, &Value)| {
        for (k, v) in table.iter() {
            let name = match k {
                minizts_core::array::KeyRef::Str(s) => s.clone(),
                minizts_core::array::KeyRef::Int(n) => PhpStr::from(n.to_string().as_str()),
            };
            f(name, v);
        }
    };
    if s.main {
        // `f` only copies values out; it does not reach EG.
        eg!(g, |eg| by_name(&eg.extra_globals, &mut f));
    } else if let Some(table) = s.symbols() {
        by_name(table, &mut f);
    }
}

/// The global created by name `name`, if there is one.
fn extra_global<G: Globals>(g: G, name: &[u8]) -> Option<PhpRef> {
    eg!(g, |eg| match eg.extra_globals.get(&Key::from_bytes(name)) {
        Some(Value::Ref(r)) => Some(r.clone()),
        _ => None,
    })
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
    let f = match s.function() {
        Some(f) if !s.main => f,
        _ => return error(format!("{what}() cannot be called from the global scope")),
    };
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
            // Named arguments a variadic parameter collected are not
            // among them.
            out.extend(
                a.iter()
                    .filter(|(k, _)| matches!(k, minizts_core::KeyRef::Int(_)))
                    .map(|(_, v)| v.deref_clone()),
            );
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
/// [`arg_count`] where it is not an error (in a function's frame), in
/// one EG access.
#[inline]
pub(crate) fn arg_count_plain<G: Globals>(g: G) -> Option<usize> {
    eg!(g, |eg| eg
        .frames
        .last()
        .filter(|f| f.func != 0)
        .map(|f| f.argc as usize))
}

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
