//! `unserialize()`, as PHP 8.2's `var_unserializer.re`: the same grammar,
//! the same failures at the same offsets ("Error at offset X of Y
//! bytes"), its warnings, and its `max_depth` and `allowed_classes`
//! options.
//!
//! PHP numbers every value it reads (except `R:` back-references) by the
//! zval it lands in, and `R:n;` turns the zval of value `n` into a
//! reference shared with the new one, wherever that zval is: in an array
//! still being read, in the top-level result, or in an element a later
//! duplicate key has overwritten. To follow that exactly the reader
//! first builds a graph of numbered slots ("cells"), arrays (a key →
//! cell index) and references (a cell's value moved out when `R:` made
//! it a reference), and only then makes the values: arrays from the last
//! made to the first (an array nested directly in another was always
//! made after it), references last, so references may form cycles.
//! Nesting is followed with a stack of its own, never the native one,
//! and PHP's default depth limit (4096, `unserialize_max_depth`) applies.
//!
//! minizts has no objects: `O:`, `C:` and `E:` are checked as PHP checks
//! them up to the point where PHP would make an object (an enum's class
//! is never found, since no class exists), and a string that would need
//! one stops the request with a minizts error instead.

use std::rc::Rc;

use minizts_core::numfmt;
use minizts_core::{Key, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{fatal, notice, type_error, value_error, warning, VmError, VmResult};
use crate::limits::Ticker;

/// `HT_MAX_SIZE` on 64-bit platforms.
const HT_MAX_SIZE: i64 = 0x4000_0000;

/// `unserialize_max_depth`'s default.
const DEFAULT_MAX_DEPTH: i64 = 4096;

/// Why reading stopped.
enum Stop {
    /// The data is malformed: PHP's notice with the offset reached.
    Fail,
    /// A limit or a minizts restriction: the request stops.
    Vm(Box<VmError>),
}

impl From<Box<VmError>> for Stop {
    fn from(e: Box<VmError>) -> Stop {
        Stop::Vm(e)
    }
}

type Read<T> = Result<T, Stop>;

/// A value as read, before it is made.
#[derive(Debug, Default)]
enum Zv {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(PhpStr),
    /// An index into `Reader::arrays`.
    Arr(usize),
    /// An index into `Reader::refs`.
    Ref(usize),
}

/// One token of the grammar.
enum Tok {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(PhpStr),
    /// `a:N:{`, with its element count checked.
    Array(i64),
    /// `R:n;`, as the 0-based slot number.
    BackRef(i64),
    /// `O:len:"Class":N:{`: an object of the class, its properties read
    /// as an array's elements.
    Object(PhpStr, i64),
}

/// An array whose elements are still being read.
struct Frame {
    arr: usize,
    remaining: i64,
}

struct Reader<'a, G> {
    g: G,
    buf: &'a [u8],
    /// PHP's `*p`: where reading is, and the offset a failure reports.
    p: usize,
    max_depth: i64,
    depth: i64,
    /// Every zval a value is read into; cell 0 is the result.
    cells: Vec<Zv>,
    /// Each array's keys, in order, mapped to their cells (as ints).
    arrays: Vec<PhpArray>,
    /// For each of `arrays`, the class of the object it is the
    /// properties of (`None`: an array).
    classes: Vec<Option<PhpStr>>,
    /// What each reference holds.
    refs: Vec<Zv>,
    /// `var_hash`: the cell of each numbered value.
    slots: Vec<usize>,
    stack: Vec<Frame>,
    ticker: Ticker,
}

/// `zend_is_valid_class_name`.
fn valid_class_name(name: &[u8]) -> bool {
    name.iter()
        .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'\\' || c >= 0x80)
}

/// What C's `%s` prints of a name: up to its first NUL.
fn c_str(s: &[u8]) -> String {
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

impl<'a, G: Globals> Reader<'a, G> {
    fn new(g: G, buf: &'a [u8], max_depth: i64) -> Self {
        Reader {
            g,
            buf,
            p: 0,
            max_depth,
            depth: 0,
            cells: vec![Zv::Null],
            arrays: Vec::new(),
            classes: Vec::new(),
            refs: Vec::new(),
            slots: Vec::new(),
            stack: Vec::new(),
            ticker: Ticker::new(),
        }
    }

    /// The byte at `i`; past the end a NUL, as PHP's strings end in one.
    fn at(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    fn digits_end(&self, mut i: usize) -> usize {
        while self.at(i).is_ascii_digit() {
            i += 1;
        }
        i
    }

    /// `parse_uiv`: the digits at `i`, wrapping as C's `size_t` does.
    fn parse_uiv(&self, mut i: usize) -> u64 {
        let mut n = 0u64;
        while self.at(i).is_ascii_digit() {
            n = n.wrapping_mul(10).wrapping_add(u64::from(self.at(i) - b'0'));
            i += 1;
        }
        n
    }

    /// `parse_iv2`: a signed number at `i` and where it ends, clamped with
    /// PHP's warning when it does not fit.
    fn parse_iv2(&self, mut i: usize) -> (i64, usize) {
        let neg = self.at(i) == b'-';
        if neg || self.at(i) == b'+' {
            i += 1;
        }
        while self.at(i) == b'0' {
            i += 1;
        }
        let start = i;
        let mut n = 0u64;
        while self.at(i).is_ascii_digit() {
            n = n.wrapping_mul(10).wrapping_add(u64::from(self.at(i) - b'0'));
            i += 1;
        }
        // MAX_LENGTH_OF_LONG - 1 digits at most.
        if i - start > 19 || n > i64::MAX as u64 + u64::from(neg) {
            warning(self.g, "unserialize(): Numerical result out of range");
            return (if neg { i64::MIN } else { i64::MAX }, i);
        }
        (if neg { (n as i64).wrapping_neg() } else { n as i64 }, i)
    }

    /// The end (the `;`) of `(iv | nv | nvexp) ";"` at `i`.
    fn float_end(&self, mut i: usize) -> Option<usize> {
        if matches!(self.at(i), b'+' | b'-') {
            i += 1;
        }
        let int_end = self.digits_end(i);
        let mut k = int_end;
        if self.at(k) == b'.' {
            let frac_end = self.digits_end(k + 1);
            if int_end == i && frac_end == k + 1 {
                return None;
            }
            k = frac_end;
        } else if int_end == i {
            return None;
        }
        if matches!(self.at(k), b'e' | b'E') {
            let mut e = k + 1;
            if matches!(self.at(e), b'+' | b'-') {
                e += 1;
            }
            let exp_end = self.digits_end(e);
            if exp_end == e {
                return None;
            }
            k = exp_end;
        }
        (self.at(k) == b';').then_some(k)
    }

    /// `php_var_unserialize_internal`'s grammar: one token at `p`, with
    /// `hashed` false for an array key (PHP's `var_hash == NULL`). Sets
    /// `p` where PHP sets it, on success and failure alike.
    fn token(&mut self, hashed: bool) -> Read<Tok> {
        self.ticker.tick(self.g)?;
        let start = self.p;
        if start >= self.buf.len() {
            return Err(Stop::Fail);
        }
        let (c0, c1) = (self.at(start), self.at(start + 1));
        match (c0, c1) {
            (b'R' | b'r', b':') => {
                let d = self.digits_end(start + 2);
                if d == start + 2 || self.at(d) != b';' {
                    return Err(Stop::Fail);
                }
                self.p = d + 1;
                // `r:` names an object, and there are none.
                if !hashed || c0 == b'r' {
                    return Err(Stop::Fail);
                }
                Ok(Tok::BackRef((self.parse_uiv(start + 2) as i64).wrapping_sub(1)))
            }
            (b'N', b';') => {
                self.p = start + 2;
                Ok(Tok::Null)
            }
            (b'b', b':') if matches!(self.at(start + 2), b'0' | b'1') && self.at(start + 3) == b';' => {
                self.p = start + 4;
                Ok(Tok::Bool(self.at(start + 2) == b'1'))
            }
            (b'i', b':') => {
                let mut j = start + 2;
                if matches!(self.at(j), b'+' | b'-') {
                    j += 1;
                }
                let d = self.digits_end(j);
                if d == j || self.at(d) != b';' {
                    return Err(Stop::Fail);
                }
                self.p = d + 1;
                Ok(Tok::Int(self.parse_iv2(start + 2).0))
            }
            (b'd', b':') => {
                let rest = &self.buf[start + 2..];
                for (text, f) in [
                    (&b"NAN;"[..], f64::NAN),
                    (b"INF;", f64::INFINITY),
                    (b"-INF;", f64::NEG_INFINITY),
                ] {
                    if rest.starts_with(text) {
                        self.p = start + 2 + text.len();
                        return Ok(Tok::Float(f));
                    }
                }
                let end = self.float_end(start + 2).ok_or(Stop::Fail)?;
                self.p = end + 1;
                Ok(Tok::Float(numfmt::str_to_float(&self.buf[start + 2..end])))
            }
            (b's' | b'S', b':') => self.string(start, c0 == b'S'),
            (b'a', b':') => {
                let d = self.digits_end(start + 2);
                if d == start + 2 || self.at(d) != b':' || self.at(d + 1) != b'{' {
                    return Err(Stop::Fail);
                }
                let (elements, _) = self.parse_iv2(start + 2);
                self.p = d + 2;
                let remaining = (self.buf.len() - self.p) as i64;
                // Each element takes at least two bytes.
                if !hashed || !(0..HT_MAX_SIZE).contains(&elements) || elements > remaining / 2 {
                    return Err(Stop::Fail);
                }
                Ok(Tok::Array(elements))
            }
            (b'O' | b'C', b':') => {
                let d = self.digits_end(start + 2);
                if d == start + 2 || self.at(d) != b':' || self.at(d + 1) != b'"' || !hashed {
                    return Err(Stop::Fail);
                }
                self.object(start, d + 2)
            }
            (b'E', b':') => {
                let d = self.digits_end(start + 2);
                if d == start + 2 || self.at(d) != b':' || self.at(d + 1) != b'"' || !hashed {
                    return Err(Stop::Fail);
                }
                self.enum_case(start, d + 2)
            }
            (b'}', _) => {
                notice(self.g, "unserialize(): Unexpected end of serialized data");
                Err(Stop::Fail)
            }
            _ => Err(Stop::Fail),
        }
    }

    /// `s:len:"…";` and `S:len:"…";` (the escaped form: `\` and two hex
    /// digits stand for a byte).
    fn string(&mut self, start: usize, escaped: bool) -> Read<Tok> {
        let d = self.digits_end(start + 2);
        if d == start + 2 || self.at(d) != b':' || self.at(d + 1) != b'"' {
            return Err(Stop::Fail);
        }
        let cursor = d + 2;
        let len = self.parse_uiv(start + 2);
        if ((self.buf.len() - cursor) as u64) < len {
            self.p = start + 2;
            return Err(Stop::Fail);
        }
        let len = len as usize;
        if len > crate::limits::SMALL_STRING {
            crate::limits::reserve(self.g, crate::limits::string_bytes(len))?;
        }
        let (s, end) = if escaped {
            let mut out = Vec::with_capacity(len);
            let mut q = cursor;
            for _ in 0..len {
                if q >= self.buf.len() {
                    return Err(Stop::Fail);
                }
                if self.at(q) == b'\\' {
                    let mut ch = 0u8;
                    for _ in 0..2 {
                        q += 1;
                        let digit = (self.at(q) as char).to_digit(16).ok_or(Stop::Fail)?;
                        ch = ch << 4 | digit as u8;
                    }
                    out.push(ch);
                } else {
                    out.push(self.at(q));
                }
                q += 1;
            }
            (PhpStr::new(out), q)
        } else {
            (PhpStr::from(&self.buf[cursor..cursor + len]), cursor + len)
        };
        if self.at(end) != b'"' {
            self.p = end;
            return Err(Stop::Fail);
        }
        if self.at(end + 1) != b';' {
            self.p = end + 1;
            return Err(Stop::Fail);
        }
        self.p = end + 2;
        Ok(Tok::Str(s))
    }

    /// `O:len:"Class":n:{…}` and `C:len:"Class":n:{…}`, checked as far
    /// as PHP checks them before it makes the object; `cursor` is past
    /// the opening quote.
    fn object(&mut self, start: usize, cursor: usize) -> Read<Tok> {
        let custom = self.at(start) == b'C';
        let len = self.parse_uiv(start + 2);
        if ((self.buf.len() - cursor) as u64) < len || len == 0 {
            self.p = start + 2;
            return Err(Stop::Fail);
        }
        let end = cursor + len as usize;
        if self.at(end) != b'"' {
            self.p = end;
            return Err(Stop::Fail);
        }
        if self.at(end + 1) != b':' {
            self.p = end + 1;
            return Err(Stop::Fail);
        }
        let name = &self.buf[cursor..end];
        // Whether or not `allowed_classes` lets the class in, a name that
        // cannot be a class fails, and any other is a class that does not
        // exist: PHP makes a `__PHP_Incomplete_Class` of it.
        if name[0] == 0 || name[0] == b'\\' || !valid_class_name(name) {
            return Err(Stop::Fail);
        }
        let name = c_str(name);
        self.p = end;
        let quote = end;
        if custom {
            let (datalen, q) = self.parse_iv2(self.p + 2);
            self.p = q;
            if self.buf.len().saturating_sub(self.p) < 2 || self.at(self.p) != b':' {
                return Err(Stop::Fail);
            }
            if self.at(self.p + 1) != b'{' {
                self.p += 1;
                return Err(Stop::Fail);
            }
            self.p += 2;
            let present = (self.buf.len() - self.p) as i64;
            if datalen < 0 || present <= datalen {
                warning(
                    self.g,
                    &format!("Insufficient data for unserializing - {datalen} required, {present} present"),
                );
                return Err(Stop::Fail);
            }
            if self.at(self.p + datalen as usize) != b'}' {
                self.p += datalen as usize;
                return Err(Stop::Fail);
            }
            warning(self.g, "Class __PHP_Incomplete_Class has no unserializer");
        } else {
            if self.p + 2 >= self.buf.len() {
                warning(self.g, "Bad unserialize data");
                return Err(Stop::Fail);
            }
            let (elements, q) = self.parse_iv2(self.p + 2);
            self.p = q;
            if elements < 0 || elements > (self.buf.len() - quote) as i64 / 2 || self.at(self.p) != b':' {
                return Err(Stop::Fail);
            }
            if self.at(self.p + 1) != b'{' {
                self.p += 1;
                return Err(Stop::Fail);
            }
        }
        if custom {
            return fatal(format!(
                "minizts: unserialize() cannot read C: (Serializable) data (class \"{name}\")"
            ))
            .map_err(Stop::Vm);
        }
        let (elements, _) = self.parse_iv2(quote + 2);
        self.p += 2;
        // The class is looked up (autoloaded) as the object is met.
        crate::class::load(self.g, name.as_bytes())?;
        Ok(Tok::Object(PhpStr::from(name.as_bytes()), elements))
    }

    /// `E:len:"Enum:Case";`: checked as PHP does; since no class exists,
    /// a well-formed one always names a class that is not found.
    fn enum_case(&mut self, start: usize, cursor: usize) -> Read<Tok> {
        let len = self.parse_uiv(start + 2);
        if ((self.buf.len() - cursor) as u64) < len || len == 0 {
            self.p = start + 2;
            return Err(Stop::Fail);
        }
        let end = cursor + len as usize;
        if self.at(end) != b'"' {
            self.p = end;
            return Err(Stop::Fail);
        }
        if self.at(end + 1) != b';' {
            self.p = end + 1;
            return Err(Stop::Fail);
        }
        let text = &self.buf[cursor..end];
        let Some(colon) = text.iter().position(|&c| c == b':') else {
            warning(
                self.g,
                &format!("unserialize(): Invalid enum name '{}' (missing colon)", c_str(text)),
            );
            return Err(Stop::Fail);
        };
        let class = &text[..colon];
        if valid_class_name(class) {
            warning(self.g, &format!("unserialize(): Class '{}' not found", c_str(class)));
        }
        Err(Stop::Fail)
    }

    /// The value of a cell, moved out (each cell is made once).
    fn take(&mut self, cell: usize) -> Zv {
        self.cells.get_mut(cell).map(std::mem::take).unwrap_or_default()
    }

    /// Reads one value into `cell` (PHP's `rval`); an array with elements
    /// is returned to be read by the caller's loop.
    fn value(&mut self, cell: usize) -> Read<Option<Frame>> {
        if self.p >= self.buf.len() {
            return Err(Stop::Fail);
        }
        if self.at(self.p) != b'R' {
            self.slots.push(cell);
        }
        let v = match self.token(true)? {
            Tok::Null => Zv::Null,
            Tok::Bool(b) => Zv::Bool(b),
            Tok::Int(n) => Zv::Int(n),
            Tok::Float(f) => Zv::Float(f),
            Tok::Str(s) => Zv::Str(s),
            Tok::BackRef(id) => {
                let target = match usize::try_from(id).ok().and_then(|i| self.slots.get(i)) {
                    Some(&t) if t != cell => t,
                    _ => return Err(Stop::Fail),
                };
                let r = match self.cells[target] {
                    Zv::Ref(r) => r,
                    _ => {
                        let inner = self.take(target);
                        self.refs.push(inner);
                        self.cells[target] = Zv::Ref(self.refs.len() - 1);
                        self.refs.len() - 1
                    }
                };
                Zv::Ref(r)
            }
            Tok::Object(class, n) => {
                self.arrays.push(PhpArray::new());
                self.classes.push(Some(class));
                let arr = self.arrays.len() - 1;
                self.cells[cell] = Zv::Arr(arr);
                if n == 0 {
                    if self.at(self.p) != b'}' || self.p >= self.buf.len() {
                        return Err(Stop::Fail);
                    }
                    self.p += 1;
                    return Ok(None);
                }
                self.depth += 1;
                return Ok(Some(Frame { arr, remaining: n }));
            }
            Tok::Array(0) => {
                self.classes.push(None);
                self.arrays.push(PhpArray::new());
                self.cells[cell] = Zv::Arr(self.arrays.len() - 1);
                if self.at(self.p) != b'}' || self.p >= self.buf.len() {
                    return Err(Stop::Fail);
                }
                self.p += 1;
                return Ok(None);
            }
            Tok::Array(n) => {
                // PHP sizes the array for its count at once.
                crate::limits::reserve(self.g, crate::limits::hash_bytes(n as u64))?;
                self.classes.push(None);
                self.arrays.push(PhpArray::new());
                let arr = self.arrays.len() - 1;
                self.cells[cell] = Zv::Arr(arr);
                if self.max_depth > 0 && self.depth >= self.max_depth {
                    warning(
                        self.g,
                        &format!(
                            "unserialize(): Maximum depth of {} exceeded. The depth limit can be changed using \
                             the max_depth unserialize() option or the unserialize_max_depth ini setting",
                            self.max_depth
                        ),
                    );
                    return Err(Stop::Fail);
                }
                self.depth += 1;
                return Ok(Some(Frame { arr, remaining: n }));
            }
        };
        self.cells[cell] = v;
        Ok(None)
    }

    /// PHP's check after an element when more are to come: the value
    /// must have ended in `;` or `}` (always true of what the grammar
    /// accepts, kept as PHP has it).
    fn after_element(&mut self) -> Read<()> {
        if let Some(top) = self.stack.last() {
            if top.remaining > 0 && !matches!(self.at(self.p.wrapping_sub(1)), b';' | b'}') {
                self.p -= 1;
                return Err(Stop::Fail);
            }
        }
        Ok(())
    }

    /// `php_var_unserialize` of the whole value, nesting on `stack`.
    fn run(&mut self) -> Read<()> {
        if let Some(frame) = self.value(0)? {
            self.stack.push(frame);
        }
        while let Some(top) = self.stack.last_mut() {
            if top.remaining == 0 {
                self.stack.pop();
                self.depth -= 1;
                if self.p >= self.buf.len() || self.at(self.p) != b'}' {
                    return Err(Stop::Fail);
                }
                self.p += 1;
                self.after_element()?;
                continue;
            }
            top.remaining -= 1;
            let arr = top.arr;
            let key = match self.token(false)? {
                Tok::Int(n) => Key::Int(n),
                Tok::Str(s) => Key::from_php_str(s),
                _ => return Err(Stop::Fail),
            };
            // A key met again reuses its element, emptied.
            let cell = match self.arrays[arr].get(&key) {
                Some(&Value::Int(c)) => {
                    let c = c as usize;
                    self.cells[c] = Zv::Null;
                    c
                }
                _ => {
                    self.cells.push(Zv::Null);
                    let c = self.cells.len() - 1;
                    self.arrays[arr].insert(key, Value::Int(c as i64));
                    c
                }
            };
            match self.value(cell)? {
                Some(frame) => self.stack.push(frame),
                None => self.after_element()?,
            }
        }
        Ok(())
    }

    /// Makes the values of the graph read.
    fn finish(mut self) -> Value {
        let g = self.g;
        let refs: Vec<PhpRef> = (0..self.refs.len())
            .map(|_| crate::gc::new_ref(g, Value::Null))
            .collect();
        let mut made: Vec<Option<Value>> = vec![None; self.arrays.len()];
        fn make(zv: Zv, made: &mut [Option<Value>], refs: &[PhpRef]) -> Value {
            match zv {
                Zv::Null => Value::Null,
                Zv::Bool(b) => Value::Bool(b),
                Zv::Int(n) => Value::Int(n),
                Zv::Float(f) => Value::Float(f),
                Zv::Str(s) => Value::Str(s),
                Zv::Arr(a) => match made.get_mut(a).and_then(Option::take) {
                    Some(v) => v,
                    None => Value::empty_array(),
                },
                Zv::Ref(r) => refs.get(r).map_or(Value::Null, |r| Value::Ref(r.clone())),
            }
        }
        // An array nested directly in another was read after it: making
        // them from the last, each finds its elements made.
        for a in (0..self.arrays.len()).rev() {
            let index = std::mem::take(&mut self.arrays[a]);
            let mut arr = PhpArray::with_capacity(index.len());
            for (key, cell) in index.iter() {
                let cell = match cell {
                    Value::Int(c) => *c as usize,
                    _ => continue,
                };
                let zv = self.take(cell);
                arr.insert(key.to_key(), make(zv, &mut made, &refs));
            }
            made[a] = Some(match self.classes.get(a).cloned().flatten() {
                Some(class) => crate::objects::from_serialized(g, &class, arr),
                None => Value::Arr(Rc::new(arr)),
            });
        }
        for (r, slot) in refs.iter().enumerate() {
            let zv = std::mem::take(&mut self.refs[r]);
            slot.set(make(zv, &mut made, &refs));
        }
        let root = self.take(0);
        // The result is never a reference itself (zend_unwrap_reference).
        match make(root, &mut made, &refs) {
            Value::Ref(r) => r.get(),
            v => v,
        }
    }
}

/// The `options` array: `max_depth`, and `allowed_classes` (checked and
/// converted as PHP does; with no classes it changes nothing).
fn read_options<G: Globals>(g: G, options: &PhpArray) -> VmResult<i64> {
    if let Some(classes) = options.get_str(b"allowed_classes") {
        let classes = classes.deref();
        match &*classes {
            Value::Bool(_) => {}
            Value::Arr(list) => {
                for v in list.values() {
                    crate::ops::to_str(g, &v.deref())?;
                }
            }
            other => {
                return type_error(format!(
                    "unserialize(): Option \"allowed_classes\" must be of type array|bool, {} given",
                    other.type_name()
                ))
            }
        }
    }
    match options.get_str(b"max_depth").map(Value::deref) {
        None => Ok(DEFAULT_MAX_DEPTH),
        Some(v) => match &*v {
            Value::Int(n) if *n < 0 => {
                value_error("unserialize(): Option \"max_depth\" must be greater than or equal to 0")
            }
            Value::Int(n) => Ok(*n),
            other => type_error(format!(
                "unserialize(): Option \"max_depth\" must be of type int, {} given",
                other.type_name()
            )),
        },
    }
}

pub(in crate::builtins) fn unserialize<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let data = a.str(g, 0)?;
    let options = if a.has(1) { Some(a.array(1)?) } else { None };
    if data.is_empty() {
        return Ok(Value::Bool(false));
    }
    let max_depth = match &options {
        Some(o) => read_options(g, o)?,
        None => DEFAULT_MAX_DEPTH,
    };
    let mut reader = Reader::new(g, &data, max_depth);
    match reader.run() {
        Ok(()) => Ok(reader.finish()),
        Err(Stop::Vm(e)) => Err(e),
        Err(Stop::Fail) => {
            notice(
                g,
                &format!("unserialize(): Error at offset {} of {} bytes", reader.p, data.len()),
            );
            Ok(Value::Bool(false))
        }
    }
}
