//! `str_getcsv`: php_fgetcsv (ext/standard/file.c) without a stream,
//! step for step, since its quirks are observable: text after a closing
//! enclosure joins the field, an unterminated enclosure takes the rest
//! of the line with its line end, blanks before an enclosure are
//! skipped. In the C locale PHP 8 runs in, `mblen` refuses bytes past
//! ASCII; PHP then steps over them one at a time, which is what this
//! does too.

use minizts_core::{PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

/// `php_fgetcsv_lookup_trailing_spaces`: the end of `s` without its
/// line end (`\n`, `\r` or `\r\n`, judged on the last ASCII bytes).
fn without_line_end(s: &[u8]) -> usize {
    let mut last = [0u8; 2];
    for &c in s.iter().filter(|c| c.is_ascii()) {
        last = [last[1], c];
    }
    match last {
        [b'\r', b'\n'] => s.len() - 2,
        [_, b'\n' | b'\r'] => s.len() - 1,
        _ => s.len(),
    }
}

/// The fields of one CSV line; `None` for a blank line.
fn parse(buf: &[u8], delim: u8, enc: u8, esc: Option<u8>) -> Option<Vec<Vec<u8>>> {
    // PHP's buffer is NUL-terminated, and it reads the terminator.
    let at = |i: usize| buf.get(i).copied().unwrap_or(0);
    let limit = without_line_end(buf);
    let line_end = limit;
    let step = |i: usize| usize::from(i < limit);
    let mut values = Vec::new();
    let mut bptr = 0usize;
    let mut first = true;
    loop {
        let mut temp: Vec<u8> = Vec::new();
        let mut inc = step(bptr);
        // Blanks before an enclosure are dropped (ASCII bytes only:
        // PHP's check needs mblen to say 1).
        if inc == 1 && at(bptr).is_ascii() {
            let mut t = bptr;
            while at(t) != delim && matches!(at(t), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
                t += 1;
            }
            if at(t) == enc && t < limit {
                bptr = t;
            }
        }
        if first && bptr == line_end {
            return None;
        }
        first = false;
        if inc != 0 && at(bptr) == enc {
            let mut state = 0;
            bptr += 1;
            let mut hunk = bptr;
            inc = step(bptr);
            // 2A: an enclosed field.
            loop {
                if inc == 0 {
                    match state {
                        2 => {
                            temp.extend_from_slice(&buf[hunk..bptr - 1]);
                            hunk = bptr;
                        }
                        _ => {
                            if state == 1 || hunk != line_end {
                                temp.extend_from_slice(&buf[hunk..bptr.min(buf.len())]);
                                hunk = bptr;
                            }
                            // The enclosure is unterminated: the line end
                            // is part of the field.
                            temp.extend_from_slice(&buf[line_end..]);
                            if bptr > limit {
                                bptr -= 1;
                            }
                        }
                    }
                    break;
                }
                let c = at(bptr);
                match state {
                    1 => {
                        bptr += 1;
                        state = 0;
                    }
                    2 => {
                        if c != enc {
                            temp.extend_from_slice(&buf[hunk..bptr - 1]);
                            hunk = bptr;
                            break;
                        }
                        temp.extend_from_slice(&buf[hunk..bptr]);
                        bptr += 1;
                        hunk = bptr;
                        state = 0;
                    }
                    _ => {
                        if c == enc {
                            state = 2;
                        } else if esc == Some(c) {
                            state = 1;
                        }
                        bptr += 1;
                    }
                }
                inc = step(bptr);
            }
            // Whatever follows the closing enclosure, up to the
            // delimiter, joins the field.
            while inc != 0 && at(bptr) != delim {
                bptr += 1;
                inc = step(bptr);
            }
            temp.extend_from_slice(&buf[hunk.min(bptr)..bptr]);
            bptr += inc;
        } else {
            // 2B: a plain field.
            let hunk = bptr;
            while inc != 0 && at(bptr) != delim {
                bptr += 1;
                inc = step(bptr);
            }
            temp.extend_from_slice(&buf[hunk..bptr]);
            temp.truncate(without_line_end(&temp));
            if at(bptr) == delim {
                bptr += 1;
            }
        }
        values.push(temp);
        if inc == 0 {
            return Some(values);
        }
    }
}

pub(super) fn str_getcsv<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let delim = a.opt_str(g, 1, b",")?.first().copied().unwrap_or(b',');
    let enc = a.opt_str(g, 2, b"\"")?.first().copied().unwrap_or(b'"');
    let esc = if a.has(3) {
        a.str(g, 3)?.first().copied()
    } else {
        Some(b'\\')
    };
    let values = match parse(&s, delim, enc, esc) {
        Some(fields) => fields.into_iter().map(|f| Value::Str(f.into())).collect(),
        None => vec![Value::Null],
    };
    Ok(Value::arr(PhpArray::from_list(values)))
}
