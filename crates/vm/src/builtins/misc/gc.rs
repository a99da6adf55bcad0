//! `gc_collect_cycles()` and its kin: the script's view of the cycle
//! collector (`core::gc`, run by `vm::gc`).

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::{eg, memory, Globals};

use crate::builtins::Args;
use crate::error::VmResult;

pub(super) fn gc_collect_cycles<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(crate::gc::collect(g) as i64))
}

pub(super) fn gc_enable<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    // The setting then reads "1", whatever text set it before.
    eg!(g).basic.set_ini_text(b"zend.enable_gc", None);
    eg!(g).gc.enabled = true;
    Ok(Value::Null)
}

pub(super) fn gc_disable<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    eg!(g).basic.set_ini_text(b"zend.enable_gc", None);
    eg!(g).gc.enabled = false;
    Ok(Value::Null)
}

pub(super) fn gc_enabled<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Bool(eg!(g).gc.enabled))
}

/// PHP 8.2's four figures. "roots" counts the live references, which the
/// collector takes as its possible roots (PHP's buffer holds only those
/// whose count dropped since, so PHP's figure is lower).
pub(super) fn gc_status<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let figures = eg!(g, |eg| {
        let gc = &mut eg.gc;
        [
            ("runs", gc.runs as i64),
            ("collected", gc.collected as i64),
            ("threshold", gc.threshold() as i64),
            ("roots", gc.roots() as i64),
        ]
    });
    Ok(Value::arr(PhpArray::from_pairs(
        figures.map(|(k, v)| (Key::from_bytes(k.as_bytes()), Value::Int(v))),
    )))
}

/// Hands the allocator's cached free blocks back to the system (PHP's
/// `zend_mm_gc`); returns how many bytes that was.
pub(super) fn gc_mem_caches<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(memory::release_thread_cache() as i64))
}
