//! Output: `echo` and `print` of any value through the output layer
//! (output buffers, then the sink).

use minizts_core::numfmt;
use minizts_core::Value;
use minizts_globals::{eg, Globals};

use crate::error::VmResult;
use crate::ops;

/// `echo v`.
pub fn echo<G: Globals>(g: G, v: &Value) -> VmResult<()> {
    match v {
        Value::Str(s) => eg!(g).output.write(s),
        Value::Int(n) => {
            let mut buf = Vec::with_capacity(20);
            numfmt::write_int(&mut buf, *n);
            eg!(g).output.write(&buf);
        }
        Value::Ref(r) => {
            let v = r.borrow().clone();
            return echo(g, &v);
        }
        other => {
            let mut buf = Vec::new();
            ops::write_str(g, &mut buf, other)?;
            // A user error handler sees a conversion's warning before the
            // text is written, as in PHP.
            crate::limits::safe_point(g)?;
            eg!(g).output.write(&buf);
        }
    }
    Ok(())
}

/// Writes raw bytes to the output layer.
pub fn write<G: Globals>(g: G, bytes: &[u8]) {
    eg!(g).output.write(bytes);
}
