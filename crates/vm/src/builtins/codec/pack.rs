//! `pack()` and `unpack()`, as PHP 8.2's ext/standard/pack.c on a 64-bit
//! little-endian machine: every format code, repeaters and `*`, PHP's
//! warnings and ValueErrors, and its arithmetic on C `int`s (kept here
//! with wrapping `i32` operations, so that out-of-range repeaters end as
//! PHP's do rather than in an overflow panic).

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{value_error, warning, VmResult};
use crate::limits::{string_buffer, Ticker};

/// C's `atoi` on the digits at the start of `s`: `strtol`'s value,
/// saturated at `LONG_MAX`, truncated to an `int`.
fn atoi(s: &[u8]) -> i32 {
    let mut n: i64 = 0;
    for &c in s.iter().take_while(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    n as i32
}

/// `strtol` on the digits at the start of `s`, `None` past `long`'s range.
fn strtol(s: &[u8]) -> Option<i64> {
    let mut n: i64 = 0;
    for &c in s.iter().take_while(|c| c.is_ascii_digit()) {
        n = n.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    Some(n)
}

/// `convert_to_long`, with its warning for an object.
fn to_long<G: Globals>(g: G, v: &Value) -> i64 {
    if let Value::Closure(_) = v {
        warning(g, "Object of class Closure could not be converted to int");
    }
    v.to_int()
}

/// `zval_get_double`, with its warning for an object.
fn to_double<G: Globals>(g: G, v: &Value) -> f64 {
    if let Value::Closure(_) = v {
        warning(g, "Object of class Closure could not be converted to float");
    }
    v.to_float()
}

/// The output being packed: writes land inside it (PHP sized it for
/// every position the format reaches); the guard keeps a miscount from
/// panicking.
struct Output(Vec<u8>);

impl Output {
    fn put(&mut self, pos: i64, bytes: &[u8]) {
        let Ok(pos) = usize::try_from(pos) else { return };
        let end = pos + bytes.len();
        if end > self.0.len() {
            self.0.resize(end, 0);
        }
        self.0[pos..end].copy_from_slice(bytes);
    }

    fn fill(&mut self, pos: i64, n: i64, byte: u8) {
        let (Ok(pos), Ok(n)) = (usize::try_from(pos), usize::try_from(n)) else {
            return;
        };
        let end = pos + n;
        if end > self.0.len() {
            self.0.resize(end, 0);
        }
        self.0[pos..end].fill(byte);
    }

    fn byte_mut(&mut self, pos: i64) -> Option<&mut u8> {
        usize::try_from(pos).ok().and_then(|p| self.0.get_mut(p))
    }
}

pub(in crate::builtins) fn pack<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let format = a.str(g, 0)?;
    let argv: Vec<Value> = (1..a.len()).map(|i| a.get(i)).collect();
    // `try_convert_to_string` converts a `*` string argument in place.
    let mut strs: Vec<Option<PhpStr>> = vec![None; argv.len()];
    let num_args = i32::try_from(argv.len()).unwrap_or(i32::MAX);
    let mut codes: Vec<(u8, i32)> = Vec::new();
    let mut currentarg: i32 = 0;
    let mut i = 0;
    while i < format.len() {
        let code = format[i];
        i += 1;
        let mut arg: i32 = 1;
        if i < format.len() {
            if format[i] == b'*' {
                arg = -1;
                i += 1;
            } else if format[i].is_ascii_digit() {
                arg = atoi(&format[i..]);
                while i < format.len() && format[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
        let c = code as char;
        match code {
            b'x' | b'X' | b'@' => {
                if arg < 0 {
                    warning(g, &format!("pack(): Type {c}: '*' ignored"));
                    arg = 1;
                }
            }
            b'a' | b'A' | b'Z' | b'h' | b'H' => {
                let Some(v) = argv.get(currentarg as usize) else {
                    return value_error(format!("Type {c}: not enough arguments"));
                };
                if arg < 0 {
                    let s = crate::ops::to_str(g, v)?;
                    arg = (s.len() as i32).wrapping_add(i32::from(code == b'Z'));
                    strs[currentarg as usize] = Some(s);
                }
                currentarg += 1;
            }
            b'q' | b'Q' | b'J' | b'P' | b'c' | b'C' | b's' | b'S' | b'i' | b'I' | b'l' | b'L' | b'n' | b'N' | b'v'
            | b'V' | b'f' | b'g' | b'G' | b'd' | b'e' | b'E' => {
                if arg < 0 {
                    arg = num_args - currentarg;
                }
                match currentarg.checked_add(arg) {
                    Some(n) if n <= num_args => currentarg = n,
                    _ => return value_error(format!("Type {c}: too few arguments")),
                }
            }
            _ => return value_error(format!("Type {c}: unknown format code")),
        }
        codes.push((code, arg));
    }
    if currentarg < num_args {
        warning(g, &format!("pack(): {} arguments unused", num_args - currentarg));
    }

    // The output's size: the furthest position the format reaches.
    let (mut pos, mut size): (i32, i32) = (0, 0);
    for &(code, arg) in &codes {
        let width = match code {
            b'h' | b'H' => Some((arg.wrapping_add(arg % 2) / 2, 1)),
            b'a' | b'A' | b'Z' | b'c' | b'C' | b'x' => Some((arg, 1)),
            b's' | b'S' | b'n' | b'v' => Some((arg, 2)),
            b'i' | b'I' | b'l' | b'L' | b'N' | b'V' | b'f' | b'g' | b'G' => Some((arg, 4)),
            b'q' | b'Q' | b'J' | b'P' | b'd' | b'e' | b'E' => Some((arg, 8)),
            b'X' => {
                pos = pos.wrapping_sub(arg);
                if pos < 0 {
                    warning(g, "pack(): Type X: outside of string");
                    pos = 0;
                }
                None
            }
            _ => {
                pos = arg;
                None
            }
        };
        if let Some((n, w)) = width {
            if n < 0 || i32::MAX.wrapping_sub(pos) / w < n {
                return value_error(format!("Type {}: integer overflow in format string", code as char));
            }
            pos += n * w;
        }
        size = size.max(pos);
    }

    let mut out = string_buffer(g, 0, 0, size as usize)?;
    out.resize(size as usize, 0);
    let mut out = Output(out);
    let mut pos: i64 = 0;
    let mut next = 0usize;
    let mut ticker = Ticker::new();
    for (code, arg) in codes {
        let arg = i64::from(arg);
        let c = code as char;
        match code {
            b'a' | b'A' | b'Z' => {
                let copy = if code == b'Z' { (arg - 1).max(0) } else { arg };
                let s = match strs[next].take() {
                    Some(s) => s,
                    None => crate::ops::to_str(g, &argv[next])?,
                };
                next += 1;
                out.fill(pos, arg, if code == b'A' { b' ' } else { 0 });
                let n = s.len().min(copy.max(0) as usize);
                out.put(pos, &s[..n]);
                pos += arg;
            }
            b'h' | b'H' => {
                let s = match strs[next].take() {
                    Some(s) => s,
                    None => crate::ops::to_str(g, &argv[next])?,
                };
                next += 1;
                let mut shift = if code == b'h' { 0 } else { 4 };
                let mut first = true;
                let mut n = arg;
                pos -= 1;
                if n > s.len() as i64 {
                    warning(g, &format!("pack(): Type {c}: not enough characters in string"));
                    n = s.len() as i64;
                }
                for &ch in s.iter().take(n.max(0) as usize) {
                    let nibble = match (ch as char).to_digit(16) {
                        Some(d) => d as u8,
                        None => {
                            warning(g, &format!("pack(): Type {c}: illegal hex digit {}", char::from(ch)));
                            0
                        }
                    };
                    if first {
                        pos += 1;
                        out.put(pos, &[0]);
                    }
                    first = !first;
                    if let Some(b) = out.byte_mut(pos) {
                        *b |= nibble << shift;
                    }
                    shift = (shift + 4) & 7;
                    ticker.tick(g)?;
                }
                pos += 1;
            }
            b'x' => {
                out.fill(pos, arg, 0);
                pos += arg;
            }
            b'X' => pos = (pos - arg).max(0),
            b'@' => {
                if arg > pos {
                    out.fill(pos, arg - pos, 0);
                }
                pos = arg;
            }
            _ => {
                for _ in 0..arg {
                    let v = &argv[next];
                    next += 1;
                    let bytes: Vec<u8> = match code {
                        b'c' | b'C' => vec![to_long(g, v) as u8],
                        b's' | b'S' | b'v' => (to_long(g, v) as u16).to_le_bytes().to_vec(),
                        b'n' => (to_long(g, v) as u16).to_be_bytes().to_vec(),
                        b'i' | b'I' | b'l' | b'L' | b'V' => (to_long(g, v) as u32).to_le_bytes().to_vec(),
                        b'N' => (to_long(g, v) as u32).to_be_bytes().to_vec(),
                        b'q' | b'Q' | b'P' => to_long(g, v).to_le_bytes().to_vec(),
                        b'J' => to_long(g, v).to_be_bytes().to_vec(),
                        b'f' | b'g' => (to_double(g, v) as f32).to_le_bytes().to_vec(),
                        b'G' => (to_double(g, v) as f32).to_be_bytes().to_vec(),
                        b'd' | b'e' => to_double(g, v).to_le_bytes().to_vec(),
                        _ => to_double(g, v).to_be_bytes().to_vec(),
                    };
                    out.put(pos, &bytes);
                    pos += bytes.len() as i64;
                    ticker.tick(g)?;
                }
            }
        }
    }
    let mut out = out.0;
    out.truncate(usize::try_from(pos).unwrap_or(0));
    Ok(Value::Str(PhpStr::new(out)))
}

/// Reads `N` bytes at `pos` (the caller checked they are there).
fn bytes_at<const N: usize>(input: &[u8], pos: i64) -> [u8; N] {
    let mut b = [0u8; N];
    if let Some(s) = usize::try_from(pos).ok().and_then(|p| input.get(p..p + N)) {
        b.copy_from_slice(s);
    }
    b
}

pub(in crate::builtins) fn unpack<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let format = a.str(g, 0)?;
    let data = a.str(g, 1)?;
    let offset = a.opt_int(g, 2, 0)?;
    if offset < 0 || offset as u64 > data.len() as u64 {
        return a.value_error(2, "must be contained in argument #2 ($data)");
    }
    let input = &data[offset as usize..];
    let inputlen = input.len() as i64;
    let mut inputpos: i64 = 0;
    let mut result = PhpArray::new();
    let mut ticker = Ticker::new();
    let mut f = 0usize;
    while f < format.len() {
        let ty = format[f];
        f += 1;
        let c = ty as char;
        let mut repetitions: i64 = 1;
        if f < format.len() {
            if format[f].is_ascii_digit() {
                match strtol(&format[f..]) {
                    Some(n) if n <= i64::from(i32::MAX) => repetitions = n,
                    _ => {
                        warning(g, &format!("unpack(): Type {c}: integer overflow"));
                        return Ok(Value::Bool(false));
                    }
                }
                while f < format.len() && format[f].is_ascii_digit() {
                    f += 1;
                }
            } else if format[f] == b'*' {
                repetitions = -1;
                f += 1;
            }
        }
        let name_start = f;
        while f < format.len() && format[f] != b'/' {
            f += 1;
        }
        let name = &format[name_start..f.min(name_start + 200)];
        let argb = repetitions;
        let mut size: i64 = match ty {
            b'X' => {
                if repetitions < 0 {
                    warning(g, &format!("unpack(): Type {c}: '*' ignored"));
                    repetitions = 1;
                }
                -1
            }
            b'@' => 0,
            b'a' | b'A' | b'Z' => std::mem::replace(&mut repetitions, 1),
            b'h' | b'H' => {
                let rep = std::mem::replace(&mut repetitions, 1);
                if rep > 0 {
                    (rep + 1) / 2
                } else {
                    rep
                }
            }
            b'c' | b'C' | b'x' => 1,
            b's' | b'S' | b'n' | b'v' => 2,
            b'i' | b'I' | b'l' | b'L' | b'N' | b'V' | b'f' | b'g' | b'G' => 4,
            b'q' | b'Q' | b'J' | b'P' | b'd' | b'e' | b'E' => 8,
            _ => return crate::error::value_error(format!("Invalid format type {c}")),
        };
        let mut i: i64 = 0;
        while i != repetitions {
            ticker.tick(g)?;
            if size != 0 && size != -1 && i64::from(i32::MAX) - size + 1 < inputpos {
                warning(g, &format!("unpack(): Type {c}: integer overflow"));
                return Ok(Value::Bool(false));
            }
            if inputpos + size <= inputlen {
                // The element's name: the format's, numbered when repeated.
                let (name_whole, number) = (repetitions == 1 && !name.is_empty(), i + 1);
                let at = inputpos as usize;
                let value = match ty {
                    b'a' | b'A' | b'Z' => {
                        let mut len = inputlen - inputpos;
                        if size >= 0 && len > size {
                            len = size;
                        }
                        size = len;
                        let s = &input[at..at + len as usize];
                        let s = match ty {
                            b'a' => s,
                            b'A' => {
                                let keep = s
                                    .iter()
                                    .rposition(|b| !matches!(b, 0 | b' ' | b'\t' | b'\r' | b'\n'))
                                    .map_or(0, |p| p + 1);
                                &s[..keep]
                            }
                            _ => &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())],
                        };
                        Some(Value::str(s))
                    }
                    b'h' | b'H' => {
                        if size > i64::from(i32::MAX / 2) {
                            return a
                                .value_error(0, &format!("repeater must be less than or equal to {}", i32::MAX / 2));
                        }
                        let mut len = (inputlen - inputpos) * 2;
                        if size >= 0 && len > size * 2 {
                            len = size * 2;
                        }
                        if len > 0 && argb > 0 {
                            len -= argb % 2;
                        }
                        let len = len.max(0) as usize;
                        let mut out = string_buffer(g, 0, 0, len)?;
                        let mut shift = if ty == b'h' { 0 } else { 4 };
                        for o in 0..len {
                            let nibble = input.get(at + o / 2).map_or(0, |b| (b >> shift) & 0xf);
                            out.push(b"0123456789abcdef"[nibble as usize]);
                            shift = (shift + 4) & 7;
                        }
                        Some(Value::Str(PhpStr::new(out)))
                    }
                    b'c' => Some(Value::Int(i64::from(input[at] as i8))),
                    b'C' => Some(Value::Int(i64::from(input[at]))),
                    b's' => Some(Value::Int(i64::from(i16::from_le_bytes(bytes_at(input, inputpos))))),
                    b'S' | b'v' => Some(Value::Int(i64::from(u16::from_le_bytes(bytes_at(input, inputpos))))),
                    b'n' => Some(Value::Int(i64::from(u16::from_be_bytes(bytes_at(input, inputpos))))),
                    b'i' | b'l' => Some(Value::Int(i64::from(i32::from_le_bytes(bytes_at(input, inputpos))))),
                    b'I' | b'L' | b'V' => Some(Value::Int(i64::from(u32::from_le_bytes(bytes_at(input, inputpos))))),
                    b'N' => Some(Value::Int(i64::from(u32::from_be_bytes(bytes_at(input, inputpos))))),
                    b'q' | b'Q' | b'P' => Some(Value::Int(i64::from_le_bytes(bytes_at(input, inputpos)))),
                    b'J' => Some(Value::Int(i64::from_be_bytes(bytes_at(input, inputpos)))),
                    b'f' | b'g' => Some(Value::Float(f64::from(f32::from_le_bytes(bytes_at(input, inputpos))))),
                    b'G' => Some(Value::Float(f64::from(f32::from_be_bytes(bytes_at(input, inputpos))))),
                    b'd' | b'e' => Some(Value::Float(f64::from_le_bytes(bytes_at(input, inputpos)))),
                    b'E' => Some(Value::Float(f64::from_be_bytes(bytes_at(input, inputpos)))),
                    b'X' => {
                        // Never true (`size` is -1): PHP's check, kept.
                        if inputpos < size {
                            inputpos = -size;
                            i = repetitions - 1;
                            if repetitions >= 0 {
                                warning(g, &format!("unpack(): Type {c}: outside of string"));
                            }
                        }
                        None
                    }
                    b'@' => {
                        if repetitions <= inputlen {
                            inputpos = repetitions;
                        } else {
                            warning(g, &format!("unpack(): Type {c}: outside of string"));
                        }
                        i = repetitions - 1;
                        None
                    }
                    _ => None,
                };
                if let Some(v) = value {
                    let key = if name_whole {
                        Key::from_bytes(name)
                    } else {
                        let mut k = name.to_vec();
                        minizts_core::numfmt::write_int(&mut k, number);
                        Key::from_bytes(&k)
                    };
                    result.insert(key, v);
                }
                inputpos += size;
                if inputpos < 0 {
                    if size != -1 {
                        warning(g, &format!("unpack(): Type {c}: outside of string"));
                    }
                    inputpos = 0;
                }
            } else if repetitions < 0 {
                break;
            } else {
                warning(
                    g,
                    &format!(
                        "unpack(): Type {c}: not enough input, need {size}, have {}",
                        inputlen - inputpos
                    ),
                );
                return Ok(Value::Bool(false));
            }
            i += 1;
        }
        if f < format.len() {
            f += 1;
        }
    }
    Ok(Value::arr(result))
}
