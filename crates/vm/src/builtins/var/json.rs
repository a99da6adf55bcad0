//! `json_encode` as PHP 8.2's ext/json encoder, with every `JSON_*`
//! encoding flag, the depth limit, partial output and
//! `JSON_THROW_ON_ERROR` (a `JsonException`, which ends the request since
//! minizts cannot catch it); plus `json_last_error(_msg)`.
//!
//! PHP keeps encoding after most errors and decides at the end: without
//! `JSON_PARTIAL_OUTPUT_ON_ERROR` any error makes the result `false`;
//! with it, the failed parts read `null` (`0` for INF/NAN, `""` for a bad
//! key) and the rest stands.
//!
//! The decoder is in `decode`.

mod decode;

pub(super) use decode::json_decode;

use hashbrown::HashSet;
use std::rc::Rc;

use minizts_core::numfmt::{self, Number};
use minizts_core::{KeyRef, PhpArray, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{throw, VmError, VmResult};
use crate::limits::Ticker;

const HEX_TAG: i64 = 1;
const HEX_AMP: i64 = 2;
const HEX_APOS: i64 = 4;
const HEX_QUOT: i64 = 8;
const FORCE_OBJECT: i64 = 16;
const NUMERIC_CHECK: i64 = 32;
const UNESCAPED_SLASHES: i64 = 64;
const PRETTY_PRINT: i64 = 128;
const UNESCAPED_UNICODE: i64 = 256;
const PARTIAL_OUTPUT_ON_ERROR: i64 = 512;
const PRESERVE_ZERO_FRACTION: i64 = 1024;
const UNESCAPED_LINE_TERMINATORS: i64 = 2048;
const INVALID_UTF8_IGNORE: i64 = 0x10_0000;
const INVALID_UTF8_SUBSTITUTE: i64 = 0x20_0000;
const THROW_ON_ERROR: i64 = 0x40_0000;

/// `JSON_ERROR_*` codes the encoder sets.
const ERROR_NONE: u32 = 0;
const ERROR_DEPTH: u32 = 1;
const ERROR_UTF8: u32 = 5;
const ERROR_RECURSION: u32 = 6;
const ERROR_INF_OR_NAN: u32 = 7;
const ERROR_NON_BACKED_ENUM: u32 = 11;

/// `php_json_get_error_msg()`.
fn error_message(code: u32) -> &'static str {
    match code {
        0 => "No error",
        1 => "Maximum stack depth exceeded",
        2 => "State mismatch (invalid or malformed JSON)",
        3 => "Control character error, possibly incorrectly encoded",
        4 => "Syntax error",
        5 => "Malformed UTF-8 characters, possibly incorrectly encoded",
        6 => "Recursion detected",
        7 => "Inf and NaN cannot be JSON encoded",
        8 => "Type is not supported",
        9 => "The decoded property name is invalid",
        10 => "Single unpaired UTF-16 surrogate in unicode escape",
        11 => "Non-backed enums have no default serialization",
        _ => "Unknown error",
    }
}

struct Encoder<G> {
    g: G,
    out: Vec<u8>,
    options: i64,
    depth: i32,
    max_depth: i32,
    error: u32,
    /// Arrays and objects being encoded, by address.
    active: HashSet<*const ()>,
    /// Where float digits come from (`--dtoa`).
    dtoa: Box<dyn minizts_core::numfmt::DigitSource>,
    /// A limit's failed check: encoding stops and the call fails with it
    /// (a value shared many times over encodes to far more than memory
    /// holds, and takes as long).
    failed: Option<Box<VmError>>,
    /// Counts the elements encoded and the bytes they took.
    ticker: Ticker,
    /// The output's length at the last step.
    mark: usize,
}

impl<G: Globals> Encoder<G> {
    /// One element about to be encoded; false when encoding must stop.
    fn step(&mut self) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let grown = self.out.len() - self.mark;
        self.mark = self.out.len();
        match self.ticker.tick_bytes(self.g, grown) {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    fn has(&self, flag: i64) -> bool {
        self.options & flag != 0
    }

    fn pretty_char(&mut self, c: u8) {
        if self.has(PRETTY_PRINT) {
            self.out.push(c);
        }
    }

    fn pretty_indent(&mut self) {
        if self.has(PRETTY_PRINT) {
            let n = self.depth.max(0) as usize * 4;
            self.out.resize(self.out.len() + n, b' ');
        }
    }

    /// `php_json_encode_zval()`: false when encoding failed here (the
    /// caller stops unless partial output is on).
    fn encode(&mut self, v: &Value) -> bool {
        match v {
            Value::Ref(r) => {
                let inner = r.borrow();
                self.encode(&inner)
            }
            Value::Undef | Value::Null | Value::IterVal(..) | Value::IterRef(_) => {
                self.out.extend_from_slice(b"null");
                true
            }
            Value::Bool(b) => {
                self.out.extend_from_slice(if *b { b"true" } else { b"false" });
                true
            }
            Value::Int(n) => {
                numfmt::write_int(&mut self.out, *n);
                true
            }
            Value::Float(f) => {
                // PHP records the error and carries on with a 0.
                let zero_fraction = self.has(PRESERVE_ZERO_FRACTION);
                if !numfmt::write_float_json_with(&mut *self.dtoa, &mut self.out, *f, zero_fraction) {
                    self.error = ERROR_INF_OR_NAN;
                    self.out.push(b'0');
                }
                true
            }
            Value::Str(s) => self.string(s, self.options),
            Value::Arr(arr) => self.container(Some(arr), Rc::as_ptr(arr) as *const ()),
            // A closure is an object without public properties.
            Value::Closure(c) => self.container(None, Rc::as_ptr(c) as *const ()),
            Value::Obj(o) => {
                if o.class
                    .interfaces
                    .iter()
                    .any(|i| i.name.as_bytes() == b"JsonSerializable")
                {
                    let m = o.class.method(b"jsonserialize").cloned();
                    if let Some(m) = m {
                        match crate::call::call_method(self.g, &m, Some(o.clone()), o.class.id, Vec::new()) {
                            Ok(v) => {
                                let p = o.addr() as *const ();
                                if self.active.contains(&p) {
                                    self.error = ERROR_RECURSION;
                                    self.out.extend_from_slice(b"null");
                                    return false;
                                }
                                self.active.insert(p);
                                let ok = self.encode(&v);
                                self.active.remove(&p);
                                return ok;
                            }
                            Err(_) => {
                                self.out.extend_from_slice(b"null");
                                return false;
                            }
                        }
                    }
                }
                // A backed enum's case is its value; a pure one has none.
                if o.class.kind == minizts_core::object::ClassKind::Enum {
                    let value = o.class.prop_index.get(&PhpStr::from(&b"value"[..])).copied();
                    let v = match (o.class.enum_backing, value) {
                        (Some(_), Some(slot)) => o.props.borrow().get(slot as usize).cloned(),
                        _ => None,
                    };
                    let Some(v) = v else {
                        self.error = ERROR_NON_BACKED_ENUM;
                        self.out.push(b'0');
                        return false;
                    };
                    return self.encode(&v);
                }
                // An object is its public properties.
                let props = crate::objects::props_array(self.g, o, None);
                let saved = self.options;
                self.options |= FORCE_OBJECT;
                let ok = self.container(Some(&props), o.addr() as *const ());
                self.options = saved;
                ok
            }
        }
    }

    /// `php_json_encode_array()`: an array (`Some`) or an object with no
    /// properties (`None`).
    fn container(&mut self, arr: Option<&PhpArray>, p: *const ()) -> bool {
        let as_object = match arr {
            Some(arr) => self.has(FORCE_OBJECT) || !arr.is_list(),
            None => true,
        };
        if self.active.contains(&p) {
            self.error = ERROR_RECURSION;
            self.out.extend_from_slice(b"null");
            return false;
        }
        self.active.insert(p);
        self.out.push(if as_object { b'{' } else { b'[' });
        self.depth += 1;

        let mut need_comma = false;
        for (k, v) in arr.into_iter().flat_map(PhpArray::iter) {
            if !self.step() {
                self.active.remove(&p);
                return false;
            }
            if need_comma {
                self.out.push(b',');
            } else {
                need_comma = true;
            }
            self.pretty_char(b'\n');
            self.pretty_indent();
            if as_object {
                match k {
                    KeyRef::Str(s) => {
                        let ok = self.string(s, self.options & !NUMERIC_CHECK);
                        if !ok && self.has(PARTIAL_OUTPUT_ON_ERROR) {
                            // Replace the "null" written for the bad key.
                            self.out.truncate(self.out.len() - 4);
                            self.out.extend_from_slice(b"\"\"");
                        }
                    }
                    KeyRef::Int(n) => {
                        self.out.push(b'"');
                        numfmt::write_int(&mut self.out, n);
                        self.out.push(b'"');
                    }
                }
                self.out.push(b':');
                self.pretty_char(b' ');
            }
            if !self.encode(v) && !self.has(PARTIAL_OUTPUT_ON_ERROR) {
                self.active.remove(&p);
                return false;
            }
        }
        self.active.remove(&p);

        // PHP checks the depth on the way out, so the innermost container
        // over the limit reports it.
        if self.depth > self.max_depth {
            self.error = ERROR_DEPTH;
            if !self.has(PARTIAL_OUTPUT_ON_ERROR) {
                return false;
            }
        }
        self.depth -= 1;
        if need_comma {
            self.pretty_char(b'\n');
            self.pretty_indent();
        }
        self.out.push(if as_object { b'}' } else { b']' });
        true
    }

    /// `php_json_escape_string()`.
    fn string(&mut self, s: &[u8], options: i64) -> bool {
        if s.is_empty() {
            self.out.extend_from_slice(b"\"\"");
            return true;
        }
        let has = |flag: i64| options & flag != 0;
        if has(NUMERIC_CHECK) {
            match numfmt::is_numeric_str(s) {
                Some(Number::Int(n)) => {
                    numfmt::write_int(&mut self.out, n);
                    return true;
                }
                Some(Number::Float(f)) if f.is_finite() => {
                    numfmt::write_float_json_with(&mut *self.dtoa, &mut self.out, f, has(PRESERVE_ZERO_FRACTION));
                    return true;
                }
                _ => {}
            }
        }
        let checkpoint = self.out.len();
        self.out.reserve(s.len() + 2);
        self.out.push(b'"');
        let mut pos = 0;
        while pos < s.len() {
            // A run of bytes no option escapes is copied at once.
            let plain = s[pos..]
                .iter()
                .position(|&b| {
                    !(0x20..0x80).contains(&b) || matches!(b, b'"' | b'\\' | b'/' | b'<' | b'>' | b'&' | b'\'')
                })
                .unwrap_or(s.len() - pos);
            if plain > 0 {
                self.out.extend_from_slice(&s[pos..pos + plain]);
                pos += plain;
                continue;
            }
            let b = s[pos];
            if b >= 0x80 {
                match next_utf8_char(s, pos) {
                    Ok((c, len)) => {
                        let raw = has(UNESCAPED_UNICODE)
                            && (has(UNESCAPED_LINE_TERMINATORS) || !(0x2028..=0x2029).contains(&c));
                        if raw {
                            self.out.extend_from_slice(&s[pos..pos + len]);
                        } else if c >= 0x10000 {
                            let c = c - 0x10000;
                            self.unicode_escape(0xd800 | (c >> 10));
                            self.unicode_escape(0xdc00 | (c & 0x3ff));
                        } else {
                            self.unicode_escape(c);
                        }
                        pos += len;
                    }
                    Err(advance) => {
                        pos += advance;
                        if has(INVALID_UTF8_IGNORE) {
                        } else if has(INVALID_UTF8_SUBSTITUTE) {
                            if has(UNESCAPED_UNICODE) {
                                self.out.extend_from_slice("\u{fffd}".as_bytes());
                            } else {
                                self.out.extend_from_slice(b"\\ufffd");
                            }
                        } else {
                            self.out.truncate(checkpoint);
                            self.error = ERROR_UTF8;
                            if has(PARTIAL_OUTPUT_ON_ERROR) {
                                self.out.extend_from_slice(b"null");
                            }
                            return false;
                        }
                    }
                }
                continue;
            }
            let escaped: &[u8] = match b {
                b'"' if has(HEX_QUOT) => b"\\u0022",
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'/' if has(UNESCAPED_SLASHES) => b"/",
                b'/' => b"\\/",
                0x08 => b"\\b",
                0x0c => b"\\f",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                b'<' if has(HEX_TAG) => b"\\u003C",
                b'>' if has(HEX_TAG) => b"\\u003E",
                b'&' if has(HEX_AMP) => b"\\u0026",
                b'\'' if has(HEX_APOS) => b"\\u0027",
                0..=0x1f => {
                    self.unicode_escape(u32::from(b));
                    pos += 1;
                    continue;
                }
                _ => std::slice::from_ref(&s[pos]),
            };
            self.out.extend_from_slice(escaped);
            pos += 1;
        }
        self.out.push(b'"');
        true
    }

    /// `\uXXXX` with lowercase hex digits.
    fn unicode_escape(&mut self, c: u32) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        self.out.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            self.out.push(DIGITS[((c >> shift) & 0xf) as usize]);
        }
    }
}

/// `php_next_utf8_char()`: the code point at `pos` and its length, or on
/// an invalid sequence how many bytes PHP skips.
fn next_utf8_char(s: &[u8], pos: usize) -> Result<(u32, usize), usize> {
    let lead = |c: u8| c < 0x80 || (0xc2..=0xf4).contains(&c);
    let trail = |c: u8| (0x80..=0xbf).contains(&c);
    let avail = s.len() - pos;
    let at = |i: usize| s.get(pos + i).copied().unwrap_or(0);
    let c = s[pos];
    if c < 0x80 {
        Ok((u32::from(c), 1))
    } else if c < 0xc2 {
        Err(1)
    } else if c < 0xe0 {
        if avail < 2 {
            return Err(1);
        }
        if !trail(at(1)) {
            return Err(if lead(at(1)) { 1 } else { 2 });
        }
        // Never an overlong form: c >= 0xc2.
        Ok(((u32::from(c) & 0x1f) << 6 | (u32::from(at(1)) & 0x3f), 2))
    } else if c < 0xf0 {
        if avail < 3 || !trail(at(1)) || !trail(at(2)) {
            return Err(if avail < 2 || lead(at(1)) {
                1
            } else if avail < 3 || lead(at(2)) {
                2
            } else {
                3
            });
        }
        let cp = (u32::from(c) & 0x0f) << 12 | (u32::from(at(1)) & 0x3f) << 6 | (u32::from(at(2)) & 0x3f);
        if cp < 0x800 || (0xd800..=0xdfff).contains(&cp) {
            return Err(3);
        }
        Ok((cp, 3))
    } else if c < 0xf5 {
        if avail < 4 || !trail(at(1)) || !trail(at(2)) || !trail(at(3)) {
            return Err(if avail < 2 || lead(at(1)) {
                1
            } else if avail < 3 || lead(at(2)) {
                2
            } else if avail < 4 || lead(at(3)) {
                3
            } else {
                4
            });
        }
        let cp = (u32::from(c) & 0x07) << 18
            | (u32::from(at(1)) & 0x3f) << 12
            | (u32::from(at(2)) & 0x3f) << 6
            | (u32::from(at(3)) & 0x3f);
        if !(0x10000..=0x10ffff).contains(&cp) {
            return Err(4);
        }
        Ok((cp, 4))
    } else {
        Err(1)
    }
}

pub(super) fn json_encode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let options = a.opt_int(g, 1, 0)?;
    let depth = a.opt_int(g, 2, 512)?;
    let mut enc = Encoder {
        g,
        out: Vec::new(),
        options,
        depth: 0,
        // PHP stores the limit in a C int.
        max_depth: depth as i32,
        error: ERROR_NONE,
        active: HashSet::new(),
        dtoa: crate::dtoa::source(g),
        failed: None,
        ticker: Ticker::new(),
        mark: 0,
    };
    enc.encode(&a.value(0));
    if let Some(e) = enc.failed.take() {
        return Err(e);
    }
    let partial = options & PARTIAL_OUTPUT_ON_ERROR != 0;
    if options & THROW_ON_ERROR == 0 || partial {
        let error = enc.error;
        eg!(g, |eg| eg.basic.json_error = error);
        if enc.error != ERROR_NONE && !partial {
            return Ok(Value::Bool(false));
        }
    } else if enc.error != ERROR_NONE {
        return throw("JsonException", error_message(enc.error));
    }
    Ok(Value::Str(PhpStr::new(enc.out)))
}

pub(super) fn json_last_error<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(i64::from(eg!(g, |eg| eg.basic.json_error))))
}

pub(super) fn json_last_error_msg<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::str(error_message(eg!(g, |eg| eg.basic.json_error))))
}
