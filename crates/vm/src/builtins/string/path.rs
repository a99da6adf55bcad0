//! `basename`, `dirname`, `pathinfo`: path strings taken apart as PHP
//! does it on Unix (`/` only, bytes, the C locale), touching no file.

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

/// PHP's `php_basename`: the last component, trailing slashes ignored,
/// less `suffix` when it is a proper suffix of it.
fn basename_of<'a>(s: &'a [u8], suffix: &[u8]) -> &'a [u8] {
    let mut end = s.len();
    while end > 0 && s[end - 1] == b'/' {
        end -= 1;
    }
    if end == 0 {
        return b"";
    }
    let start = s[..end].iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1);
    let name = &s[start..end];
    if !suffix.is_empty() && suffix.len() < name.len() && name.ends_with(suffix) {
        return &name[..name.len() - suffix.len()];
    }
    name
}

/// `zend_dirname`: the path less its last component and the slashes
/// before it; `.` for none, `/` for the root.
fn dirname_of(s: &[u8]) -> &[u8] {
    if s.is_empty() {
        return b"";
    }
    let mut end = s.len();
    while end > 0 && s[end - 1] == b'/' {
        end -= 1;
    }
    if end == 0 {
        return b"/";
    }
    while end > 0 && s[end - 1] != b'/' {
        end -= 1;
    }
    if end == 0 {
        return b".";
    }
    while end > 0 && s[end - 1] == b'/' {
        end -= 1;
    }
    if end == 0 {
        return b"/";
    }
    &s[..end]
}

pub(super) fn basename<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let path = a.str(g, 0)?;
    let suffix = a.opt_str(g, 1, b"")?;
    Ok(Value::Str(PhpStr::from(basename_of(&path, &suffix))))
}

pub(super) fn dirname<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let path = a.str(g, 0)?;
    let levels = a.opt_int(g, 1, 1)?;
    if levels < 1 {
        return a.value_error(1, "must be greater than or equal to 1");
    }
    let mut cur: &[u8] = &path;
    let mut left = levels;
    loop {
        let next = dirname_of(cur);
        // `.` and `/` are their own parents: the levels stop there.
        let shorter = next.len() < cur.len();
        cur = next;
        left -= 1;
        if !shorter || left == 0 {
            break;
        }
    }
    Ok(Value::Str(PhpStr::from(cur)))
}

const PATHINFO_DIRNAME: i64 = 1;
const PATHINFO_BASENAME: i64 = 2;
const PATHINFO_EXTENSION: i64 = 4;
const PATHINFO_FILENAME: i64 = 8;
const PATHINFO_ALL: i64 = 15;

pub(super) fn pathinfo<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let path = a.str(g, 0)?;
    let opt = a.opt_int(g, 1, PATHINFO_ALL)?;
    let mut out = PhpArray::new();
    let put =
        |out: &mut PhpArray, k: &str, v: &[u8]| out.insert(Key::Str(PhpStr::from(k)), Value::Str(PhpStr::from(v)));
    if opt & PATHINFO_DIRNAME != 0 {
        let d = dirname_of(&path);
        // PHP's C string stops at a NUL byte.
        let d = &d[..d.iter().position(|&c| c == 0).unwrap_or(d.len())];
        if !d.is_empty() {
            put(&mut out, "dirname", d);
        }
    }
    let base = basename_of(&path, b"");
    if opt & PATHINFO_BASENAME != 0 {
        put(&mut out, "basename", base);
    }
    let dot = base.iter().rposition(|&c| c == b'.');
    if opt & PATHINFO_EXTENSION != 0 {
        if let Some(i) = dot {
            put(&mut out, "extension", &base[i + 1..]);
        }
    }
    if opt & PATHINFO_FILENAME != 0 {
        put(&mut out, "filename", &base[..dot.unwrap_or(base.len())]);
    }
    if opt == PATHINFO_ALL {
        return Ok(Value::arr(out));
    }
    // One part asked for: the first one found, or "".
    let first = out.values().next().cloned();
    Ok(first.unwrap_or_else(|| Value::Str(PhpStr::empty())))
}
