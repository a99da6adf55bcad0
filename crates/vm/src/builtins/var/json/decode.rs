//! `json_decode` as ext/json's scanner and parser decide: the same
//! error for the same input (the first problem in reading order wins:
//! a nesting level at or past the depth, a control character or NUL, a
//! lone UTF-16 surrogate escape, malformed UTF-8, or else a syntax
//! error), integers that overflow becoming floats (or strings with
//! `JSON_BIGINT_AS_STRING`), object keys going through the symbol table
//! as array keys do.
//!
//! The parser keeps its own stack of open containers rather than
//! recursing, so a deeply nested input with a huge `$depth` cannot
//! overflow the Rust stack.
//!
//! minizts has no objects: a JSON object decodes to an array when
//! `$associative` (or `JSON_OBJECT_AS_ARRAY`) asks for arrays; otherwise
//! a successful decode that met an object stops the request with
//! minizts' "does not support" error.

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::{error_message, INVALID_UTF8_IGNORE, INVALID_UTF8_SUBSTITUTE, THROW_ON_ERROR};
use crate::builtins::Args;
use crate::error::{fatal, throw, VmResult};

const OBJECT_AS_ARRAY: i64 = 1;
const BIGINT_AS_STRING: i64 = 2;

const ERROR_DEPTH: u32 = 1;
const ERROR_CTRL_CHAR: u32 = 3;
const ERROR_SYNTAX: u32 = 4;
const ERROR_UTF8: u32 = 5;
const ERROR_INVALID_PROPERTY_NAME: u32 = 9;
const ERROR_UTF16: u32 = 10;

/// An open container: its elements so far and, for an object, the key
/// waiting for its value.
enum Frame {
    Array(PhpArray),
    Object(PhpArray, Option<PhpStr>),
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    options: i64,
    /// Whether objects are wanted as objects (so keys are checked as
    /// property names).
    objects: bool,
    saw_object: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The error for an unexpected token here: a NUL inside the input
    /// is a control character; anything else, or the end, is syntax.
    fn unexpected(&self) -> u32 {
        match self.peek() {
            Some(0) => ERROR_CTRL_CHAR,
            _ => ERROR_SYNTAX,
        }
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, u32> {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(ERROR_SYNTAX)
        }
    }

    fn number(&mut self) -> Result<Value, u32> {
        let start = self.pos;
        let s = self.s;
        let mut i = self.pos;
        let negative = s.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while s.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return Err(ERROR_SYNTAX),
        }
        let int_end = i;
        let mut is_float = false;
        if s.get(i) == Some(&b'.') && s.get(i + 1).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            i += 1;
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(s.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if s.get(j).is_some_and(u8::is_ascii_digit) {
                is_float = true;
                while s.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                i = j;
            }
        }
        let i = if is_float { i } else { int_end };
        self.pos = i;
        let text = std::str::from_utf8(&s[start..i]).unwrap_or("0");
        if is_float {
            return Ok(Value::Float(text.parse().unwrap_or(0.0)));
        }
        // ext/json's overflow test: 19 digits compared with i64's limit.
        let digits = &s[start + negative as usize..i];
        let big = match digits.len() {
            n if n < 19 => false,
            19 => {
                let cmp = digits.cmp(b"9223372036854775808".as_slice());
                !(cmp.is_lt() || (cmp.is_eq() && negative))
            }
            _ => true,
        };
        if !big {
            return Ok(Value::Int(text.parse().unwrap_or(0)));
        }
        if self.options & BIGINT_AS_STRING != 0 {
            return Ok(Value::str(text));
        }
        Ok(Value::Float(text.parse().unwrap_or(0.0)))
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.s.get(at..at + 4)?;
        if !h.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    }

    fn string(&mut self) -> Result<PhpStr, u32> {
        // The opening quote.
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ERROR_CTRL_CHAR);
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(PhpStr::new(out));
                }
                0..=0x1f => return Err(ERROR_CTRL_CHAR),
                b'\\' => {
                    let e = self.s.get(self.pos + 1).copied();
                    let simple = match e {
                        Some(b'"') => Some(b'"'),
                        Some(b'\\') => Some(b'\\'),
                        Some(b'/') => Some(b'/'),
                        Some(b'b') => Some(8),
                        Some(b'f') => Some(12),
                        Some(b'n') => Some(b'\n'),
                        Some(b'r') => Some(b'\r'),
                        Some(b't') => Some(b'\t'),
                        _ => None,
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        self.pos += 2;
                        continue;
                    }
                    if e != Some(b'u') {
                        return Err(ERROR_SYNTAX);
                    }
                    let Some(u) = self.hex4(self.pos + 2) else {
                        return Err(ERROR_SYNTAX);
                    };
                    let cp = match u {
                        0xd800..=0xdbff => {
                            let low = (self.s.get(self.pos + 6..self.pos + 8) == Some(b"\\u"))
                                .then(|| self.hex4(self.pos + 8))
                                .flatten()
                                .filter(|l| (0xdc00..=0xdfff).contains(l));
                            let Some(low) = low else {
                                return Err(ERROR_UTF16);
                            };
                            self.pos += 6;
                            0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00)
                        }
                        0xdc00..=0xdfff => return Err(ERROR_UTF16),
                        _ => u,
                    };
                    self.pos += 6;
                    let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                0x20..=0x7f => {
                    out.push(c);
                    self.pos += 1;
                }
                _ => {
                    let n = match c {
                        0xc2..=0xdf => 2,
                        0xe0..=0xef => 3,
                        0xf0..=0xf4 => 4,
                        _ => 0,
                    };
                    let seq = self.s.get(self.pos..self.pos + n);
                    if let Some(seq) = seq.filter(|q| n > 0 && std::str::from_utf8(q).is_ok()) {
                        out.extend_from_slice(seq);
                        self.pos += n;
                    } else if self.options & INVALID_UTF8_IGNORE != 0 {
                        self.pos += 1;
                    } else if self.options & INVALID_UTF8_SUBSTITUTE != 0 {
                        out.extend_from_slice("\u{fffd}".as_bytes());
                        self.pos += 1;
                    } else {
                        return Err(ERROR_UTF8);
                    }
                }
            }
        }
    }

    /// An object's key and its colon; `pos` at the key's quote.
    fn key(&mut self) -> Result<PhpStr, u32> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let k = self.string()?;
        if self.objects && k.first() == Some(&0) {
            return Err(ERROR_INVALID_PROPERTY_NAME);
        }
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected());
        }
        self.pos += 1;
        Ok(k)
    }

    fn parse(&mut self, depth: i64) -> Result<Value, u32> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            // Read a value, or open a container and go on inside it.
            let mut v = match self.peek() {
                Some(c @ (b'[' | b'{')) => {
                    if stack.len() as i64 + 1 >= depth {
                        return Err(ERROR_DEPTH);
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if c == b'[' {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            Value::arr(PhpArray::new())
                        } else {
                            stack.push(Frame::Array(PhpArray::new()));
                            continue 'value;
                        }
                    } else {
                        self.saw_object = true;
                        if self.peek() == Some(b'}') {
                            self.pos += 1;
                            Value::arr(PhpArray::new())
                        } else {
                            let k = self.key()?;
                            stack.push(Frame::Object(PhpArray::new(), Some(k)));
                            continue 'value;
                        }
                    }
                }
                Some(b'"') => Value::Str(self.string()?),
                Some(b't') => self.literal(b"true", Value::Bool(true))?,
                Some(b'f') => self.literal(b"false", Value::Bool(false))?,
                Some(b'n') => self.literal(b"null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(self.unexpected()),
            };
            // Store it, and close every container that ends here.
            loop {
                let Some(top) = stack.last_mut() else {
                    self.skip_ws();
                    if self.pos < self.s.len() {
                        return Err(self.unexpected());
                    }
                    return Ok(v);
                };
                let close = match top {
                    Frame::Array(arr) => {
                        // A list built in order has no occupied next slot.
                        let _ = arr.push(v);
                        b']'
                    }
                    Frame::Object(arr, key) => {
                        if let Some(k) = key.take() {
                            arr.insert(Key::from_php_str(k), v);
                        }
                        b'}'
                    }
                };
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if let Some(Frame::Object(_, key)) = stack.last_mut() {
                            self.skip_ws();
                            let k = self.key()?;
                            *key = Some(k);
                        }
                        continue 'value;
                    }
                    Some(c) if c == close => {
                        self.pos += 1;
                        v = match stack.pop() {
                            Some(Frame::Array(a) | Frame::Object(a, _)) => Value::arr(a),
                            None => Value::Null,
                        };
                    }
                    _ => return Err(self.unexpected()),
                }
            }
        }
    }
}

pub(in crate::builtins::var) fn json_decode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let json = a.str(g, 0)?;
    let assoc = match &*a.value(1) {
        Value::Null | Value::Undef => None,
        _ => Some(a.bool(g, 1)?),
    };
    let depth = a.opt_int(g, 2, 512)?;
    let mut options = a.opt_int(g, 3, 0)?;
    match assoc {
        Some(true) => options |= OBJECT_AS_ARRAY,
        Some(false) => options &= !OBJECT_AS_ARRAY,
        None => {}
    }
    let throw_on_error = options & THROW_ON_ERROR != 0;
    if !throw_on_error {
        eg!(g, |eg| eg.basic.json_error = 0);
    }
    let fail = |code: u32| -> VmResult<Value> {
        if throw_on_error {
            return throw("JsonException", error_message(code));
        }
        eg!(g, |eg| eg.basic.json_error = code);
        Ok(Value::Null)
    };
    if json.is_empty() {
        return fail(ERROR_SYNTAX);
    }
    if depth <= 0 {
        return a.value_error(2, "must be greater than 0");
    }
    if depth > i32::MAX as i64 {
        return a.value_error(2, "must be less than 2147483647");
    }
    let mut p = Parser {
        s: &json,
        pos: 0,
        options,
        objects: options & OBJECT_AS_ARRAY == 0,
        saw_object: false,
    };
    match p.parse(depth) {
        Ok(_) if p.saw_object && p.objects => fatal(
            "minizts does not support objects: json_decode() of a JSON object needs $associative = true or JSON_OBJECT_AS_ARRAY",
        ),
        Ok(v) => Ok(v),
        Err(code) => fail(code),
    }
}
