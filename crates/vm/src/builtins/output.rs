//! Output functions: `printf`/`vprintf`, output buffering (`ob_*`) and
//! `flush`, with PHP 8.2's notices when there is no buffer to act on.
//!
//! Buffers are the stack in `eg.output.buffers` (innermost last); writing
//! anywhere goes to the innermost one. Buffers left open are flushed at
//! the end of the request by the output layer itself.

use minizts_core::numfmt::ArgSource;
use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{notice, VmResult};

crate::builtin_table! {
    "printf", ["format", "...values"], 1, 0, printf;
    "vprintf", ["format", "values"], 2, 0, vprintf;
    "ob_start", ["callback", "chunk_size", "flags"], 0, 0, ob_start;
    "ob_get_clean", [], 0, 0, ob_get_clean;
    "ob_get_contents", [], 0, 0, ob_get_contents;
    "ob_end_clean", [], 0, 0, ob_end_clean;
    "ob_end_flush", [], 0, 0, ob_end_flush;
    "ob_get_flush", [], 0, 0, ob_get_flush;
    "ob_clean", [], 0, 0, ob_clean;
    "ob_flush", [], 0, 0, ob_flush;
    "ob_get_level", [], 0, 0, ob_get_level;
    "ob_get_length", [], 0, 0, ob_get_length;
    "ob_implicit_flush", ["enable"], 0, 0, ob_implicit_flush;
    "ob_list_handlers", [], 0, 0, ob_list_handlers;
    "flush", [], 0, 0, flush;
}

fn printf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let f = a.str(g, 0)?;
    let out = super::string::format(g, &f, &a.v[1..], ArgSource::Variadic(1))?;
    crate::output::write(g, &out);
    Ok(Value::Int(out.len() as i64))
}

fn vprintf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let f = a.str(g, 0)?;
    let values: Vec<Value> = a.array(1)?.values().cloned().collect();
    let out = super::string::format(g, &f, &values, ArgSource::Array)?;
    crate::output::write(g, &out);
    Ok(Value::Int(out.len() as i64))
}

fn ob_start<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if a.has(0) && !a.value(0).is_null() {
        return crate::error::fatal("minizts does not support output callbacks in ob_start()");
    }
    // Chunk size and flags only matter with a callback; still typed.
    a.opt_int(g, 1, 0)?;
    a.opt_int(g, 2, 0)?;
    eg!(g).output.buffers.push(Vec::new());
    Ok(Value::Bool(true))
}

fn ob_get_clean<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    // No notice without a buffer: PHP checks for one first.
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

fn ob_end_clean<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let popped = eg!(g).output.buffers.pop();
    match popped {
        Some(_) => Ok(Value::Bool(true)),
        None => no_buffer(g, a, "Failed to delete buffer. No buffer to delete"),
    }
}

/// Pops the innermost buffer into the next level (or the sink).
fn pop_flush<G: Globals>(g: G) -> Option<Vec<u8>> {
    eg!(g, |eg| {
        let buf = eg.output.buffers.pop()?;
        eg.output.write(&buf);
        Some(buf)
    })
}

fn ob_end_flush<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    match pop_flush(g) {
        Some(_) => Ok(Value::Bool(true)),
        None => no_buffer(g, a, "Failed to delete and flush buffer. No buffer to delete or flush"),
    }
}

fn ob_get_flush<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    match pop_flush(g) {
        Some(buf) => Ok(Value::Str(PhpStr::new(buf))),
        None => no_buffer(g, a, "Failed to delete and flush buffer. No buffer to delete or flush"),
    }
}

fn ob_clean<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let cleared = eg!(g).output.buffers.last_mut().map(Vec::clear);
    match cleared {
        Some(()) => Ok(Value::Bool(true)),
        None => no_buffer(g, a, "Failed to delete buffer. No buffer to delete"),
    }
}

fn ob_flush<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let flushed = eg!(g, |eg| {
        let buf = eg.output.buffers.pop()?;
        eg.output.write(&buf);
        eg.output.buffers.push(Vec::new());
        Some(())
    });
    match flushed {
        Some(()) => Ok(Value::Bool(true)),
        None => no_buffer(g, a, "Failed to flush buffer. No buffer to flush"),
    }
}

/// PHP's notice for an `ob_*` call with no buffer, and its `false`.
fn no_buffer<G: Globals>(g: G, a: &Args, what: &str) -> VmResult<Value> {
    notice(g, &format!("{}(): {what}", a.name()));
    Ok(Value::Bool(false))
}

fn ob_get_level<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(eg!(g).output.buffers.len() as i64))
}

fn ob_get_length<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    match eg!(g).output.buffers.last() {
        Some(buf) => Ok(Value::Int(buf.len() as i64)),
        None => Ok(Value::Bool(false)),
    }
}

fn ob_implicit_flush<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    // The CLI flushes implicitly anyway.
    a.opt_bool(g, 0, true)?;
    Ok(Value::Null)
}

fn ob_list_handlers<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let n = eg!(g).output.buffers.len();
    Ok(Value::arr(PhpArray::from_list(vec![
        Value::str(
            "default output handler"
        );
        n
    ])))
}

fn flush<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    // flush() pushes what already left the buffers; it never empties an
    // output buffer.
    eg!(g).output.flush_sink();
    Ok(Value::Null)
}
