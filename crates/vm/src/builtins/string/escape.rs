//! C-style and shell escaping: addcslashes/stripcslashes (string.c),
//! escapeshellarg/escapeshellcmd (exec.c, the POSIX branch, in the C
//! locale PHP 8 runs in), and str_rot13.

use minizts_core::Value;
use minizts_globals::Globals;

use super::{charmask, safe_alloc, str_value};
use crate::builtins::Args;
use crate::error::VmResult;

pub(super) fn addcslashes<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let chars = a.str(g, 1)?;
    if s.is_empty() {
        return Ok(Value::Str(s));
    }
    if chars.is_empty() {
        return Ok(Value::Str(s));
    }
    let mask = charmask(g, "addcslashes", &chars);
    // At most four bytes (`\ooo`) for each.
    let mut out = safe_alloc(g, s.len(), 4, 0)?;
    for &c in s.iter() {
        if !mask[c as usize] {
            out.push(c);
            continue;
        }
        out.push(b'\\');
        if (32..=126).contains(&c) {
            out.push(c);
            continue;
        }
        match c {
            b'\n' => out.push(b'n'),
            b'\t' => out.push(b't'),
            b'\r' => out.push(b'r'),
            7 => out.push(b'a'),
            11 => out.push(b'v'),
            8 => out.push(b'b'),
            12 => out.push(b'f'),
            _ => out.extend_from_slice(format!("{c:03o}").as_bytes()),
        }
    }
    Ok(str_value(out))
}

pub(super) fn stripcslashes<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 >= s.len() {
            out.push(s[i]);
            i += 1;
            continue;
        }
        i += 1;
        let simple = match s[i] {
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b'a' => Some(7),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'b' => Some(8),
            b'f' => Some(12),
            b'\\' => Some(b'\\'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 1;
            continue;
        }
        if s[i] == b'x' && s.get(i + 1).is_some_and(u8::is_ascii_hexdigit) {
            let n = if s.get(i + 2).is_some_and(u8::is_ascii_hexdigit) {
                2
            } else {
                1
            };
            let digits = std::str::from_utf8(&s[i + 1..i + 1 + n]).unwrap_or("0");
            out.push(u8::from_str_radix(digits, 16).unwrap_or(0));
            i += 1 + n;
            continue;
        }
        let n = s[i..].iter().take(3).take_while(|c| (b'0'..=b'7').contains(c)).count();
        if n > 0 {
            let v = s[i..i + n].iter().fold(0u32, |acc, &c| acc * 8 + (c - b'0') as u32);
            out.push(v as u8);
            i += n;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Ok(str_value(out))
}

pub(super) fn str_rot13<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let out = s
        .iter()
        .map(|&c| match c {
            b'a'..=b'z' => (c - b'a' + 13) % 26 + b'a',
            b'A'..=b'Z' => (c - b'A' + 13) % 26 + b'A',
            _ => c,
        })
        .collect();
    Ok(str_value(out))
}

fn reject_nul<G: Globals>(g: G, a: &Args) -> VmResult<minizts_core::PhpStr> {
    let s = a.str(g, 0)?;
    if s.contains(&0) {
        return a.value_error(0, "must not contain any null bytes");
    }
    Ok(s)
}

/// The longest command line the system takes (`sysconf(_SC_ARG_MAX)`,
/// as php_exec's startup reads it), which bounds both escapes.
fn cmd_max_len() -> usize {
    // SAFETY: sysconf only reads a system limit.
    let n = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    usize::try_from(n).unwrap_or(4096)
}

/// PHP's fatal error when a string to escape, or its escape, is longer
/// than a command line can be.
fn check_len(len: usize, limit: usize, what: &str, name: &str) -> VmResult<()> {
    if len > limit {
        return crate::error::fatal(format!(
            "{name}(): {what} exceeds the allowed length of {} bytes",
            cmd_max_len()
        ));
    }
    Ok(())
}

pub(super) fn escapeshellarg<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = reject_nul(g, a)?;
    let max = cmd_max_len();
    // The limit leaves room for the two quotes and the terminating NUL.
    check_len(s.len(), max.saturating_sub(3), "Argument", a.name())?;
    let mut out = safe_alloc(g, s.len(), 4, 2)?;
    out.push(b'\'');
    // The C locale's mblen refuses bytes past ASCII: PHP drops them.
    for &c in s.iter().filter(|c| c.is_ascii()) {
        if c == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(c);
        }
    }
    out.push(b'\'');
    check_len(out.len(), max.saturating_add(1), "Escaped argument", a.name())?;
    Ok(str_value(out))
}

pub(super) fn escapeshellcmd<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = reject_nul(g, a)?;
    let max = cmd_max_len();
    check_len(s.len(), max.saturating_sub(3), "Command", a.name())?;
    let mut out = safe_alloc(g, s.len(), 2, 0)?;
    // The position of the quote that closes the one being passed over:
    // paired quotes stay, a lone one is escaped.
    let mut pending: Option<usize> = None;
    for (x, &c) in s.iter().enumerate() {
        // The C locale's mblen refuses bytes past ASCII: PHP drops them.
        if !c.is_ascii() {
            continue;
        }
        match c {
            b'"' | b'\'' => {
                if pending.is_none() {
                    pending = s[x + 1..].iter().position(|&d| d == c).map(|p| x + 1 + p);
                    if pending.is_none() {
                        out.push(b'\\');
                    }
                } else if pending.is_some_and(|p| s[p] == c) {
                    pending = None;
                } else {
                    out.push(b'\\');
                }
                out.push(c);
            }
            b'#' | b'&' | b';' | b'`' | b'|' | b'*' | b'?' | b'~' | b'<' | b'>' | b'^' | b'(' | b')' | b'[' | b']'
            | b'{' | b'}' | b'$' | b'\\' | b'\n' => {
                out.push(b'\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    check_len(out.len(), max.saturating_add(1), "Escaped command", a.name())?;
    Ok(str_value(out))
}
