//! sscanf: PHP's `ext/standard/scanf.c` (itself Tcl's scanner):
//! `ValidateFormat`'s checks and messages, then `php_sscanf_internal`,
//! returning an array or, with by-reference variables, a count.

use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{value_error, VmResult};
use crate::limits::Ticker;

/// PHP's `SCAN_MAX_ARGS`: the largest `%n$` index without variables.
const MAX_ARGS: i64 = 0xff;

/// C's `isspace` in the C locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// A C string: the bytes before the first NUL.
fn c_str(s: &[u8]) -> &[u8] {
    s.split(|&c| c == 0).next().unwrap_or_default()
}

/// C's `strtoul` in base 10 over the digits at `*p` (which it moves past
/// them), saturating as it does.
fn strtoul(f: &[u8], p: &mut usize) -> u64 {
    let mut v: u64 = 0;
    while let Some(d) = f.get(*p).filter(|c| c.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(u64::from(d - b'0'));
        *p += 1;
    }
    v
}

fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// PHP's `ValidateFormat`: the number of results (variables or array
/// slots), or the ValueError PHP throws.
fn validate(format: &[u8], num_vars: usize) -> VmResult<usize> {
    let num_vars = num_vars as i64;
    let mut nassign: Vec<i32> = vec![0; num_vars.max(16) as usize];
    let (mut obj_index, mut xpg_size) = (0i64, 0i64);
    let (mut got_xpg, mut got_sequential) = (false, false);
    let bad_index = |got_xpg: bool| {
        if got_xpg {
            value_error("\"%n$\" argument index out of range")
        } else {
            value_error("Different numbers of variable names and field specifiers")
        }
    };
    let mut p = 0;
    while p < format.len() {
        let c = format[p];
        p += 1;
        if c != b'%' {
            continue;
        }
        let mut ch = at(format, p);
        p += 1;
        if ch == b'%' {
            continue;
        }
        let mut suppress = false;
        if ch == b'*' {
            suppress = true;
            ch = at(format, p);
            p += 1;
        } else if ch.is_ascii_digit() {
            let mut end = p - 1;
            // C stores strtoul's result in an int.
            let value = strtoul(format, &mut end) as u32 as i32 as i64;
            if at(format, end) == b'$' {
                p = end + 1;
                ch = at(format, p);
                p += 1;
                got_xpg = true;
                if got_sequential {
                    return value_error("cannot mix \"%\" and \"%n$\" conversion specifiers");
                }
                obj_index = value - 1;
                if obj_index < 0 || (num_vars != 0 && obj_index >= num_vars) {
                    return bad_index(got_xpg);
                }
                if num_vars == 0 {
                    if value > MAX_ARGS {
                        return bad_index(got_xpg);
                    }
                    xpg_size = xpg_size.max(value);
                }
            } else {
                got_sequential = true;
                if got_xpg {
                    return value_error("cannot mix \"%\" and \"%n$\" conversion specifiers");
                }
            }
        } else {
            got_sequential = true;
            if got_xpg {
                return value_error("cannot mix \"%\" and \"%n$\" conversion specifiers");
            }
        }
        if ch.is_ascii_digit() {
            p -= 1;
            strtoul(format, &mut p);
            ch = at(format, p);
            p += 1;
        }
        if matches!(ch, b'l' | b'L' | b'h') {
            ch = at(format, p);
            p += 1;
        }
        if !suppress && num_vars != 0 && obj_index >= num_vars {
            return bad_index(got_xpg);
        }
        match ch {
            b'n' | b'd' | b'D' | b'i' | b'o' | b'x' | b'X' | b'u' | b'f' | b'e' | b'E' | b'g' | b's' | b'c' => {}
            b'[' => {
                let unmatched = || value_error("Unmatched [ in format string");
                if at(format, p) == 0 {
                    return unmatched();
                }
                let mut ch = format[p];
                p += 1;
                if ch == b'^' {
                    if at(format, p) == 0 {
                        return unmatched();
                    }
                    ch = format[p];
                    p += 1;
                }
                if ch == b']' {
                    if at(format, p) == 0 {
                        return unmatched();
                    }
                    ch = format[p];
                    p += 1;
                }
                while ch != b']' {
                    if at(format, p) == 0 {
                        return unmatched();
                    }
                    ch = format[p];
                    p += 1;
                }
            }
            other => {
                let mut msg = String::from("Bad scan conversion character \"");
                // PHP's message is a C string: a format ending in '%' stops
                // it at the NUL.
                if other != 0 {
                    msg.push_str(&String::from_utf8_lossy(&[other]));
                    msg.push('"');
                }
                return value_error(msg);
            }
        }
        if !suppress {
            let i = obj_index as usize;
            if i >= nassign.len() {
                nassign.resize(i + 16, 0);
            }
            nassign[i] += 1;
            obj_index += 1;
        }
    }
    let total = if num_vars != 0 {
        num_vars
    } else if xpg_size != 0 {
        xpg_size
    } else {
        obj_index
    };
    for i in 0..total as usize {
        let n = nassign.get(i).copied().unwrap_or(0);
        if n > 1 {
            return value_error("Variable is assigned by multiple \"%n$\" conversion specifiers");
        }
        if xpg_size == 0 && n == 0 {
            return value_error("Variable is not assigned by any conversion specifiers");
        }
    }
    Ok(total as usize)
}

/// A `%[...]` set (PHP's `CharSet`; bytes compare as C's signed chars).
struct CharSet {
    exclude: bool,
    chars: Vec<u8>,
    ranges: Vec<(i8, i8)>,
}

impl CharSet {
    /// PHP's `BuildCharSet` on the text after `[`: the set and where the
    /// format goes on.
    fn build(f: &[u8], mut p: usize) -> (CharSet, usize) {
        let mut set = CharSet {
            exclude: false,
            chars: Vec::new(),
            ranges: Vec::new(),
        };
        if at(f, p) == b'^' {
            set.exclude = true;
            p += 1;
        }
        let mut ch = at(f, p);
        p += 1;
        let mut start = ch;
        if ch == b']' || ch == b'-' {
            set.chars.push(ch);
            ch = at(f, p);
            p += 1;
        }
        // Validation made sure a ']' closes the set.
        while ch != b']' && p <= f.len() {
            if at(f, p) == b'-' {
                start = ch;
            } else if ch == b'-' {
                if at(f, p) == b']' {
                    set.chars.push(start);
                    set.chars.push(ch);
                } else {
                    ch = at(f, p);
                    p += 1;
                    let (a, b) = (start as i8, ch as i8);
                    set.ranges.push(if a < b { (a, b) } else { (b, a) });
                }
            } else {
                set.chars.push(ch);
            }
            ch = at(f, p);
            p += 1;
        }
        (set, p)
    }

    fn contains(&self, c: u8) -> bool {
        let c8 = c as i8;
        let hit = self.chars.contains(&c) || self.ranges.iter().any(|&(a, b)| a <= c8 && c8 <= b);
        hit != self.exclude
    }
}

/// C's `strtol`/`strtoul` on the digits sscanf gathered (an optional
/// sign, a `0x` for base 16), saturating; `unsigned` wraps a negative
/// value as `strtoul` does.
fn parse_int(buf: &[u8], base: u32, unsigned: bool) -> i64 {
    let mut i = 0;
    let neg = match buf.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    if base == 16 && buf.get(i) == Some(&b'0') && matches!(buf.get(i + 1), Some(b'x' | b'X')) {
        i += 2;
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &c in &buf[i.min(buf.len())..] {
        let Some(d) = (c as char).to_digit(base) else { break };
        match v.checked_mul(u64::from(base)).and_then(|v| v.checked_add(u64::from(d))) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    if unsigned {
        if overflow {
            return -1;
        }
        let v = if neg { v.wrapping_neg() } else { v };
        return v as i64;
    }
    if neg {
        if overflow || v > i64::MAX as u64 + 1 {
            i64::MIN
        } else {
            (v as i64).wrapping_neg()
        }
    } else if overflow || v > i64::MAX as u64 {
        i64::MAX
    } else {
        v as i64
    }
}

/// Where sscanf's results go.
enum Sink<'a, 'b> {
    Array(PhpArray),
    Vars(&'a mut Args<'b>),
}

impl Sink<'_, '_> {
    fn store(&mut self, index: usize, v: Value) {
        match self {
            Sink::Array(arr) => arr.insert(minizts_core::Key::Int(index as i64), v),
            // The variadic variables start after the two strings.
            Sink::Vars(a) => {
                if a.has(index + 2) {
                    a.with_ref(index + 2, |slot| *slot = v);
                }
            }
        }
    }
}

pub(super) fn sscanf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let input = a.str(g, 0)?;
    let format = a.str(g, 1)?;
    let num_vars = a.len() - 2;
    // PHP scans both as C strings.
    let s = c_str(&input);
    let f = c_str(&format);
    let total = validate(f, num_vars)?;
    let mut sink = if num_vars == 0 {
        let mut arr = PhpArray::new();
        for _ in 0..total {
            let _ = arr.push(Value::Null);
        }
        Sink::Array(arr)
    } else {
        Sink::Vars(a)
    };
    let mut obj_index: usize = 0;
    let (mut nconversions, mut underflow) = (0usize, false);
    let (mut si, mut fi) = (0usize, 0usize);
    let mut ticker = Ticker::new();
    'scan: while fi < f.len() {
        ticker.tick(g)?;
        let mut ch = f[fi];
        fi += 1;
        if is_space(ch) {
            while is_space(at(s, si)) {
                si += 1;
            }
            continue;
        }
        let literal = if ch != b'%' {
            true
        } else {
            ch = at(f, fi);
            fi += 1;
            ch == b'%'
        };
        if literal {
            if si >= s.len() {
                underflow = true;
                break;
            }
            let sc = s[si];
            si += 1;
            if ch != sc {
                break;
            }
            continue;
        }
        let mut suppress = false;
        if ch == b'*' {
            suppress = true;
            ch = at(f, fi);
            fi += 1;
        } else if ch.is_ascii_digit() {
            let mut end = fi - 1;
            let value = strtoul(f, &mut end);
            if at(f, end) == b'$' {
                fi = end + 1;
                ch = at(f, fi);
                fi += 1;
                // Validation keeps the index in range.
                obj_index = (value as usize).saturating_sub(1);
            }
        }
        let mut width: u64 = 0;
        if ch.is_ascii_digit() {
            fi -= 1;
            width = strtoul(f, &mut fi);
            ch = at(f, fi);
            fi += 1;
        }
        if matches!(ch, b'h' | b'l' | b'L') {
            ch = at(f, fi);
            fi += 1;
        }
        #[derive(PartialEq)]
        enum Op {
            Int { base: u32, unsigned: bool },
            Float,
            Str,
            Set,
        }
        let mut noskip = false;
        let op = match ch {
            b'n' => {
                if !suppress {
                    sink.store(obj_index, Value::Int(si as i64));
                    obj_index += 1;
                }
                nconversions += 1;
                continue;
            }
            b'd' | b'D' => Op::Int {
                base: 10,
                unsigned: false,
            },
            b'i' => Op::Int {
                base: 0,
                unsigned: false,
            },
            b'o' => Op::Int {
                base: 8,
                unsigned: false,
            },
            b'x' | b'X' => Op::Int {
                base: 16,
                unsigned: false,
            },
            b'u' => Op::Int {
                base: 10,
                unsigned: true,
            },
            b'f' | b'e' | b'E' | b'g' => Op::Float,
            b'c' => {
                noskip = true;
                if width == 0 {
                    width = 1;
                }
                Op::Str
            }
            b'[' => {
                noskip = true;
                Op::Set
            }
            _ => Op::Str,
        };
        if si >= s.len() {
            underflow = true;
            break;
        }
        if !noskip {
            while si < s.len() && is_space(s[si]) {
                si += 1;
            }
            if si >= s.len() {
                underflow = true;
                break;
            }
        }
        match op {
            Op::Str => {
                let limit = if width == 0 { u64::MAX } else { width };
                let len = s[si..].iter().take_while(|&&c| !is_space(c)).count();
                let len = len.min(usize::try_from(limit).unwrap_or(usize::MAX));
                if !suppress {
                    sink.store(obj_index, Value::Str(PhpStr::from(&s[si..si + len])));
                    obj_index += 1;
                }
                si += len;
            }
            Op::Set => {
                let (set, next) = CharSet::build(f, fi);
                fi = next;
                let limit = if width == 0 {
                    usize::MAX
                } else {
                    usize::try_from(width).unwrap_or(usize::MAX)
                };
                let len = s[si..].iter().take_while(|&&c| set.contains(c)).count().min(limit);
                if len == 0 {
                    break 'scan;
                }
                if !suppress {
                    sink.store(obj_index, Value::Str(PhpStr::from(&s[si..si + len])));
                    obj_index += 1;
                }
                si += len;
            }
            Op::Int { mut base, unsigned } => {
                let mut width = if width == 0 || width > 63 { 63 } else { width };
                let (mut sign_ok, mut no_digits, mut no_zero, mut x_ok) = (true, true, true, false);
                let mut buf: Vec<u8> = Vec::new();
                while width > 0 {
                    let c = at(s, si);
                    let take = match c {
                        b'0' => {
                            if base == 16 {
                                x_ok = true;
                            }
                            if base == 0 {
                                base = 8;
                                x_ok = true;
                            }
                            if no_zero {
                                sign_ok = false;
                                no_digits = false;
                                no_zero = false;
                            } else {
                                sign_ok = false;
                                x_ok = false;
                                no_digits = false;
                            }
                            true
                        }
                        b'1'..=b'7' => {
                            if base == 0 {
                                base = 10;
                            }
                            sign_ok = false;
                            x_ok = false;
                            no_digits = false;
                            true
                        }
                        b'8' | b'9' => {
                            if base == 0 {
                                base = 10;
                            }
                            if base <= 8 {
                                false
                            } else {
                                sign_ok = false;
                                x_ok = false;
                                no_digits = false;
                                true
                            }
                        }
                        b'A'..=b'F' | b'a'..=b'f' => {
                            if base <= 10 {
                                false
                            } else {
                                sign_ok = false;
                                x_ok = false;
                                no_digits = false;
                                true
                            }
                        }
                        b'+' | b'-' if sign_ok => {
                            sign_ok = false;
                            true
                        }
                        b'x' | b'X' if x_ok && buf.len() == 1 => {
                            base = 16;
                            x_ok = false;
                            true
                        }
                        _ => false,
                    };
                    if !take {
                        break;
                    }
                    buf.push(c);
                    si += 1;
                    if si >= s.len() {
                        break;
                    }
                    width -= 1;
                }
                if no_digits {
                    if si >= s.len() {
                        underflow = true;
                    }
                    break 'scan;
                }
                if matches!(buf.last(), Some(b'x' | b'X')) {
                    buf.pop();
                    si -= 1;
                }
                if !suppress {
                    let value = parse_int(&buf, base, unsigned);
                    let v = if unsigned && value < 0 {
                        Value::str((value as u64).to_string())
                    } else {
                        Value::Int(value)
                    };
                    sink.store(obj_index, v);
                    obj_index += 1;
                }
            }
            Op::Float => {
                let mut width = if width == 0 || width > 63 { 63 } else { width };
                let (mut sign_ok, mut no_digits, mut pt_ok, mut exp_ok) = (true, true, true, true);
                let mut buf: Vec<u8> = Vec::new();
                while width > 0 {
                    let c = at(s, si);
                    let take = match c {
                        b'0'..=b'9' => {
                            sign_ok = false;
                            no_digits = false;
                            true
                        }
                        b'+' | b'-' if sign_ok => {
                            sign_ok = false;
                            true
                        }
                        b'.' if pt_ok => {
                            sign_ok = false;
                            pt_ok = false;
                            true
                        }
                        // An exponent only after a digit.
                        b'e' | b'E' if !no_digits && exp_ok => {
                            exp_ok = false;
                            pt_ok = false;
                            sign_ok = true;
                            no_digits = true;
                            true
                        }
                        _ => false,
                    };
                    if !take {
                        break;
                    }
                    buf.push(c);
                    si += 1;
                    if si >= s.len() {
                        break;
                    }
                    width -= 1;
                }
                if no_digits {
                    if exp_ok {
                        if si >= s.len() {
                            underflow = true;
                        }
                        break 'scan;
                    }
                    // A bad exponent: back up over the 'e' and its sign.
                    let last = buf.pop();
                    si -= 1;
                    if !matches!(last, Some(b'e' | b'E')) {
                        buf.pop();
                        si -= 1;
                    }
                }
                if !suppress {
                    let text = std::str::from_utf8(&buf).unwrap_or("0");
                    let v = text.parse::<f64>().unwrap_or(0.0);
                    sink.store(obj_index, Value::Float(v));
                    obj_index += 1;
                }
            }
        }
        nconversions += 1;
    }
    Ok(match sink {
        Sink::Array(_) if underflow && nconversions == 0 => Value::Null,
        Sink::Vars(_) if underflow && nconversions == 0 => Value::Int(-1),
        Sink::Array(arr) => Value::arr(arr),
        Sink::Vars(_) => Value::Int(nconversions as i64),
    })
}
