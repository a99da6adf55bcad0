//! Output functions: printf, output buffering, flush.

use minizts_core::numfmt::ArgSource;
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::VmResult;

crate::builtin_table! {
    "printf", ["format", "...values"], 1, 0, printf;
    "ob_start", ["callback", "chunk_size", "flags"], 0, 0, ob_start;
    "ob_get_clean", [], 0, 0, ob_get_clean;
    "ob_get_contents", [], 0, 0, ob_get_contents;
    "ob_end_clean", [], 0, 0, ob_end_clean;
    "flush", [], 0, 0, flush;
}

fn printf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let f = a.str(g, 0)?;
    let out = super::string::format(g, &f, &a.v[1..], ArgSource::Variadic(1))?;
    eg!(g).output.write(&out);
    Ok(Value::Int(out.len() as i64))
}

fn ob_start<G: Globals>(_g: G, a: &mut Args) -> VmResult<Value> {
    if a.has(0) && !a.value(0).is_null() {
        return crate::error::fatal("minizts does not support output callbacks in ob_start()");
    }
    eg!(_g).output.buffers.push(Vec::new());
    Ok(Value::Bool(true))
}

fn ob_get_clean<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    match eg!(g).output.buffers.pop() {
        Some(buf) => Ok(Value::Str(PhpStr::new(buf))),
        None => Ok(Value::Bool(false)),
    }
}

fn ob_get_contents<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    match eg!(g).output.buffers.last() {
        Some(buf) => Ok(Value::Str(PhpStr::from(buf.as_slice()))),
        None => Ok(Value::Bool(false)),
    }
}

fn ob_end_clean<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    match eg!(g).output.buffers.pop() {
        Some(_) => Ok(Value::Bool(true)),
        None => {
            crate::error::notice(g, "ob_end_clean(): Failed to delete buffer. No buffer to delete");
            Ok(Value::Bool(false))
        }
    }
}

fn flush<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let out = &mut eg!(g).output;
    if out.buffers.is_empty() {
        out.flush_sink();
    }
    Ok(Value::Null)
}
