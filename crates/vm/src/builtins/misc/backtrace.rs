//! `debug_backtrace` and `debug_print_backtrace` (PHP's
//! Zend/zend_builtin_functions.c): the calls below the caller, as an
//! array and as the trace lines of an uncaught error.

use minizts_core::{Key, PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{trace_frames, trace_line, FrameKind, TraceFrame, VmResult};

/// `DEBUG_BACKTRACE_IGNORE_ARGS`.
const IGNORE_ARGS: i64 = 2;

/// The frames PHP lists: `$limit` of them unless it is 0 (none for a
/// negative one, which 8.2 does not refuse).
fn frames<G: Globals>(g: G, a: &Args) -> VmResult<(Vec<TraceFrame>, i64)> {
    let options = a.opt_int(g, 0, 0)?;
    let limit = a.opt_int(g, 1, 0)?;
    let mut frames = trace_frames(g);
    if limit != 0 {
        frames.truncate(limit.max(0) as usize);
    }
    Ok((frames, options))
}

pub(super) fn debug_backtrace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (frames, options) = frames(g, a)?;
    let mut out = PhpArray::new();
    for f in frames {
        let mut entry = PhpArray::new();
        if let Some((file, line)) = f.at {
            entry.insert(Key::from_bytes(b"file"), Value::str(&*file));
            entry.insert(Key::from_bytes(b"line"), Value::Int(line as i64));
        }
        // An eval's frame has no arguments to list; an include's lists
        // its file, before the function and whatever the options say.
        match f.kind {
            FrameKind::Call => {
                entry.insert(Key::from_bytes(b"function"), Value::str(f.function.as_str()));
                if let Some((class, call)) = &f.class {
                    entry.insert(Key::from_bytes(b"class"), Value::str(class.as_str()));
                    entry.insert(Key::from_bytes(b"type"), Value::str(*call));
                }
                if options & IGNORE_ARGS == 0 {
                    entry.insert(Key::from_bytes(b"args"), Value::arr(PhpArray::from_list(f.args)));
                }
            }
            FrameKind::Eval => {
                entry.insert(Key::from_bytes(b"function"), Value::str(f.function.as_str()));
            }
            FrameKind::Include => {
                entry.insert(Key::from_bytes(b"args"), Value::arr(PhpArray::from_list(f.args)));
                entry.insert(Key::from_bytes(b"function"), Value::str(f.function.as_str()));
            }
        }
        let _ = out.push(Value::arr(entry));
    }
    Ok(Value::arr(out))
}

pub(super) fn debug_print_backtrace<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let (mut frames, options) = frames(g, a)?;
    let mut text = String::new();
    for (i, f) in frames.iter_mut().enumerate() {
        if options & IGNORE_ARGS != 0 && f.kind != FrameKind::Include {
            f.args.clear();
        }
        text.push_str(&format!("#{i} {}\n", trace_line(f)));
    }
    crate::output::write(g, text.as_bytes());
    Ok(Value::Null)
}
