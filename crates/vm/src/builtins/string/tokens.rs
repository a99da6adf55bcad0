//! `strtok` (its state in `EG.basic`, PHP's `BG(strtok_string)`) and
//! `str_shuffle`.

use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::math::shuffle_slice;
use crate::builtins::Args;
use crate::error::VmResult;

pub(super) fn strtok<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let first = a.str(g, 0)?;
    let token = if a.has(1) && !a.value(1).is_null() {
        let token = a.str(g, 1)?;
        eg!(g, |eg| eg.basic.strtok = Some((first, 0)));
        token
    } else {
        // With one argument, it is the delimiters.
        first
    };
    let mut delim = [false; 256];
    for &c in token.iter() {
        delim[c as usize] = true;
    }
    eg!(g, |eg| {
        let st = &mut eg.basic.strtok;
        let Some((s, last)) = st.as_mut() else {
            return Ok(Value::Bool(false));
        };
        let (bytes, start) = (s.as_bytes(), *last);
        if start >= bytes.len() {
            return Ok(Value::Bool(false));
        }
        let Some(from) = (start..bytes.len()).find(|&i| !delim[bytes[i] as usize]) else {
            // Only delimiters left: PHP forgets the string.
            *st = None;
            return Ok(Value::Bool(false));
        };
        let to = (from + 1..bytes.len())
            .find(|&i| delim[bytes[i] as usize])
            .unwrap_or(bytes.len());
        let tok = Value::Str(PhpStr::from(&bytes[from..to]));
        *last = to + 1;
        Ok(tok)
    })
}

/// PHP's `php_binary_string_shuffle` (the same draws as `shuffle`).
pub(super) fn str_shuffle<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut s = a.str(g, 0)?.to_vec();
    shuffle_slice(g, &mut s);
    Ok(Value::Str(PhpStr::new(s)))
}
