//! Text-safe encodings: quoted-printable (quot_print.c) and uuencode
//! (uuencode.c), byte for byte as PHP writes and reads them, including
//! where PHP reads the string's terminating NUL.

use minizts_core::{PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{warning, VmResult};
use crate::limits::string_buffer;

/// `PHP_QPRINT_MAXL`: the longest encoded line before a soft break.
const QP_MAXL: usize = 75;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// `php_quot_print_encode`.
pub(super) fn quoted_printable_encode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    if s.is_empty() {
        return Ok(Value::Str(s));
    }
    // PHP sizes for the worst case: three bytes each plus soft breaks.
    let mut out = string_buffer(g, 3, s.len() + s.len() * 3 / (QP_MAXL - 9) + 1, 0)?;
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut lp = 0usize;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c == b'\r' && at(i) == b'\n' && i < s.len() {
            out.extend_from_slice(b"\r\n");
            i += 1;
            lp = 0;
            continue;
        }
        let needs_escape = c < 32 || c == 0x7f || c & 0x80 != 0 || c == b'=' || (c == b' ' && at(i) == b'\r');
        if needs_escape {
            lp += 3;
            // A soft break is placed so as not to split a UTF-8 sequence.
            let brk = (lp > QP_MAXL && c <= 0x7f)
                || ((0x80..=0xdf).contains(&c) && lp + 3 > QP_MAXL)
                || ((0xe0..=0xef).contains(&c) && lp + 6 > QP_MAXL)
                || ((0xf0..=0xf4).contains(&c) && lp + 9 > QP_MAXL);
            if brk {
                out.extend_from_slice(b"=\r\n");
                lp = 3;
            }
            out.extend_from_slice(&[b'=', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
        } else {
            lp += 1;
            if lp > QP_MAXL {
                out.extend_from_slice(b"=\r\n");
                lp = 1;
            }
            out.push(c);
        }
    }
    Ok(Value::Str(PhpStr::new(out)))
}

fn hex_val(c: u8) -> u8 {
    (c as char).to_digit(16).unwrap_or(0) as u8
}

pub(super) fn quoted_printable_decode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    // PHP reads it as a C string: it ends at the first NUL.
    let s = &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())];
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'=' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        if at(i + 1).is_ascii_hexdigit() && at(i + 2).is_ascii_hexdigit() {
            out.push(hex_val(at(i + 1)) << 4 | hex_val(at(i + 2)));
            i += 3;
            continue;
        }
        // A soft line break (RFC 2045), trailing blanks allowed.
        let mut k = 1;
        while matches!(at(i + k), b' ' | b'\t') {
            k += 1;
        }
        match (at(i + k), at(i + k + 1)) {
            (0, _) => i += k,
            (b'\r', b'\n') => i += k + 2,
            (b'\r' | b'\n', _) => i += k + 1,
            _ => {
                out.push(s[i]);
                i += 1;
            }
        }
    }
    Ok(Value::Str(PhpStr::new(out)))
}

fn uu_enc(c: u32) -> u8 {
    if c != 0 {
        (c & 0o77) as u8 + b' '
    } else {
        b'`'
    }
}

fn uu_dec(c: u8) -> u32 {
    (c.wrapping_sub(b' ') & 0o77) as u32
}

/// `php_uuencode`: lines of 45 bytes; past the end PHP reads zeros.
pub(super) fn convert_uuencode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let src = a.str(g, 0)?;
    let at = |i: usize| src.get(i).copied().unwrap_or(0) as u32;
    let c2 = |i: usize| uu_enc(((at(i) << 4) & 0o60) | ((at(i + 1) >> 4) & 0o17));
    let c3 = |i: usize| uu_enc(((at(i + 1) << 2) & 0o74) | ((at(i + 2) >> 6) & 0o3));
    let e = src.len();
    let mut out = string_buffer(g, e.div_ceil(45) + 1, 62, 2)?;
    let (mut s, mut len) = (0usize, 45usize);
    while s + 3 < e {
        let mut ee = s + len;
        if ee > e {
            ee = e;
            len = ee - s;
            if len % 3 != 0 {
                ee = s + len / 3 * 3;
            }
        }
        out.push(uu_enc(len as u32));
        while s < ee {
            out.extend_from_slice(&[uu_enc(at(s) >> 2), c2(s), c3(s), uu_enc(at(s + 2) & 0o77)]);
            s += 3;
        }
        if len == 45 {
            out.push(b'\n');
        }
    }
    if s < e {
        if len == 45 {
            out.push(uu_enc((e - s) as u32));
            len = 0;
        }
        out.push(uu_enc(at(s) >> 2));
        out.push(c2(s));
        out.push(if e - s > 1 { c3(s) } else { uu_enc(0) });
        out.push(if e - s > 2 { uu_enc(at(s + 2) & 0o77) } else { uu_enc(0) });
    }
    if len < 45 {
        out.push(b'\n');
    }
    out.extend_from_slice(&[uu_enc(0), b'\n']);
    Ok(Value::Str(PhpStr::new(out)))
}

/// `php_uudecode`; `None` for a malformed string.
fn uudecode(src: &[u8]) -> Option<Vec<u8>> {
    let at = |i: usize| src.get(i).copied().unwrap_or(0);
    let e = src.len();
    let mut out = Vec::with_capacity(e);
    let (mut s, mut total) = (0usize, 0usize);
    while s < e {
        let len = uu_dec(src[s]) as usize;
        s += 1;
        if len == 0 {
            break;
        }
        if len > e {
            return None;
        }
        total += len;
        let ee = s + if len == 45 {
            60
        } else {
            (len as f64 * 1.33).floor() as usize
        };
        if ee > e {
            return None;
        }
        while s < ee {
            if s + 4 > e {
                return None;
            }
            let (d0, d1, d2, d3) = (
                uu_dec(src[s]),
                uu_dec(src[s + 1]),
                uu_dec(src[s + 2]),
                uu_dec(src[s + 3]),
            );
            out.extend_from_slice(&[
                (d0 << 2 | d1 >> 4) as u8,
                (d1 << 4 | d2 >> 2) as u8,
                (d2 << 6 | d3) as u8,
            ]);
            s += 4;
        }
        if len < 45 {
            break;
        }
        s += 1;
    }
    if total > out.len() {
        let d = |i: usize| uu_dec(at(i));
        out.push((d(s) << 2 | d(s + 1) >> 4) as u8);
        if total > 1 {
            out.push((d(s + 1) << 4 | d(s + 2) >> 2) as u8);
            if total > 2 {
                out.push((d(s + 2) << 6 | d(s + 3)) as u8);
            }
        }
    }
    out.resize(total, 0);
    Some(out)
}

pub(super) fn convert_uudecode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let src = a.str(g, 0)?;
    match uudecode(&src) {
        Some(out) if !src.is_empty() => Ok(Value::Str(PhpStr::new(out))),
        _ => {
            warning(
                g,
                "convert_uudecode(): Argument #1 ($data) is not a valid uuencoded string",
            );
            Ok(Value::Bool(false))
        }
    }
}
