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
//! Objects are made as they are met (PHP's `object_init_ex`, no
//! constructor), so that `r:n;` can name them; their properties are
//! read into the graph like an array's elements, keyed by the mangled
//! name of the property each lands in, and stored when the values are
//! made. A `Serializable` object's `unserialize()` runs as it is met;
//! `__unserialize()` and `__wakeup()` calls wait until the whole string
//! is read, in the order their objects were completed, as PHP delays
//! them. A class that is not found (or not allowed by
//! `allowed_classes`) gives a `__PHP_Incomplete_Class` object that
//! keeps its name.

use std::rc::Rc;

use minizts_core::numfmt;
use minizts_core::object::{acc, Class, ClassKind};
use minizts_core::{Key, Obj, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{notice, type_error, value_error, warning, VmError, VmResult};
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
    /// An index into `Reader::objs`.
    Obj(usize),
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
    /// `O:len:"Class":N:{`: the object made, its property count, and
    /// whether its properties go to `__unserialize()`.
    Object(Obj, i64, bool),
    /// `r:n;`, as the 0-based slot number.
    ObjRef(i64),
    /// A value made at once: an enum case (`E:`), a `Serializable`
    /// object (`C:`).
    Made(Value),
}

/// An array whose elements are still being read.
struct Frame {
    arr: usize,
    remaining: i64,
    /// The object whose properties these are (an index into `objs`).
    obj: Option<usize>,
    /// The typed property this value is for, checked when it is read:
    /// the object, the property's key and the cell.
    check: Option<(usize, Key, usize)>,
}

/// An object read.
struct ObjRec {
    value: Value,
    /// Its properties go to `__unserialize()` as an array.
    unserialize: bool,
    /// The mangled name of each declared property, with its slot.
    slots: Rc<hashbrown::HashMap<Vec<u8>, u32>>,
}

/// A call that waits until the whole string is read.
enum Delayed {
    Wakeup(usize),
    /// The object, and the array of its properties.
    Unserialize(usize, usize),
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
    /// For each of `arrays`, the object it is the properties of
    /// (`None`: an array).
    owners: Vec<Option<usize>>,
    objs: Vec<ObjRec>,
    delayed: Vec<Delayed>,
    /// `allowed_classes`, lower-cased (`None`: every class).
    allowed: Option<Vec<Vec<u8>>>,
    /// The values an outer `unserialize()` numbered before this one (a
    /// call from a `Serializable::unserialize()` goes on with its
    /// numbering): the objects among them.
    base: Vec<Option<Value>>,
    /// Whether nested calls go on with this numbering.
    shared: bool,
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
            owners: Vec::new(),
            objs: Vec::new(),
            delayed: Vec::new(),
            allowed: None,
            base: Vec::new(),
            shared: false,
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
                if !hashed {
                    return Err(Stop::Fail);
                }
                let id = (self.parse_uiv(start + 2) as i64).wrapping_sub(1);
                Ok(if c0 == b'r' { Tok::ObjRef(id) } else { Tok::BackRef(id) })
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

    /// A value another call read, as a cell of this one.
    fn outer_value(&mut self, v: Value) -> Zv {
        match v {
            Value::Bool(b) => Zv::Bool(b),
            Value::Int(n) => Zv::Int(n),
            Value::Float(f) => Zv::Float(f),
            Value::Str(s) => Zv::Str(s),
            Value::Obj(_) => {
                self.objs.push(ObjRec {
                    value: v,
                    unserialize: false,
                    slots: Rc::default(),
                });
                Zv::Obj(self.objs.len() - 1)
            }
            _ => Zv::Null,
        }
    }

    /// Every value numbered so far, outer calls' first (the arrays left
    /// out).
    fn numbered(&self) -> Vec<Option<Value>> {
        let mut out = self.base.clone();
        for &c in &self.slots {
            let zv = match self.cells.get(c) {
                Some(Zv::Ref(r)) => self.refs.get(*r),
                zv => zv,
            };
            out.push(match zv {
                Some(Zv::Arr(_)) | None => None,
                Some(zv) => Some(self.probe(zv)),
            });
        }
        out
    }

    /// `unserialize_allowed_class`.
    fn allowed(&self, name: &[u8]) -> bool {
        match &self.allowed {
            None => true,
            Some(list) => {
                let lc = name.to_ascii_lowercase();
                list.contains(&lc)
            }
        }
    }

    /// `O:len:"Class":n:{…}` and `C:len:"Class":n:{…}`: the class is
    /// found (autoloaded), and the object made; `cursor` is past the
    /// opening quote.
    fn object(&mut self, start: usize, cursor: usize) -> Read<Tok> {
        let g = self.g;
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
        if name[0] == 0 || name[0] == b'\\' {
            return Err(Stop::Fail);
        }
        let name = PhpStr::from(name);
        let class = if !self.allowed(name.as_bytes()) {
            None
        } else if let Some(c) = crate::class::lookup(g, name.as_bytes()) {
            Some(c)
        } else {
            if !valid_class_name(name.as_bytes()) {
                return Err(Stop::Fail);
            }
            match crate::builtins::codec::serialize::locked(|| crate::class::load(g, name.as_bytes()))? {
                Some(c) => Some(c),
                None => self.callback_class(&name)?,
            }
        };
        let incomplete = class.is_none();
        let class = match class {
            Some(c) => c,
            None => crate::class::find(g, crate::builtins::codec::serialize::INCOMPLETE)?,
        };
        self.p = end;
        if crate::builtins::codec::serialize::not_serializable(&class) {
            return crate::error::throw(
                "Exception",
                format!(
                    "Unserialization of '{}' is not allowed",
                    crate::objects::message_name(&class.name)
                ),
            )
            .map_err(Stop::Vm);
        }
        if custom {
            return self.custom(&class, incomplete.then_some(&name));
        }
        if self.p + 2 >= self.buf.len() {
            warning(g, "Bad unserialize data");
            return Err(Stop::Fail);
        }
        let (elements, q) = self.parse_iv2(self.p + 2);
        self.p = q;
        if elements < 0 || elements > (self.buf.len() - end) as i64 / 2 || self.at(self.p) != b':' {
            return Err(Stop::Fail);
        }
        if self.at(self.p + 1) != b'{' {
            self.p += 1;
            return Err(Stop::Fail);
        }
        self.p += 2;
        let has_unserialize = !incomplete && class.magic.unserialize.is_some();
        if custom_unserializer(&class).is_some() && !has_unserialize {
            warning(
                g,
                &format!(
                    "Erroneous data format for unserializing '{}'",
                    crate::objects::message_name(&class.name)
                ),
            );
            return Err(Stop::Fail);
        }
        let o = crate::objects::instantiate(g, &class)?;
        if incomplete {
            store_class_name(&o, &name);
        }
        Ok(Tok::Object(o, elements, has_unserialize))
    }

    /// The `unserialize_callback_func` ini setting's function, called
    /// with a class name no autoloader found, then the class if it
    /// declared it (`object_common`'s fallback in `php_var_unserialize`).
    fn callback_class(&mut self, name: &PhpStr) -> Read<Option<Rc<Class>>> {
        let g = self.g;
        let func = eg!(g, |eg| eg
            .basic
            .ini_text(b"unserialize_callback_func")
            .map(PhpStr::from));
        let Some(func) = func.filter(|f| !f.is_empty()) else {
            return Ok(None);
        };
        let callable = Value::Str(func.clone());
        let func_name = String::from_utf8_lossy(func.as_bytes()).into_owned();
        if let Err(why) = crate::call::callable::check(g, &callable, true)? {
            return crate::error::error(format!("Invalid callback {func_name}, {why}")).map_err(Stop::Vm);
        }
        crate::builtins::codec::serialize::locked(|| {
            crate::call::call_callable(g, &callable, vec![Value::Str(name.clone())])
        })?;
        // (Looked up again with the autoloaders, which the function may
        // have registered.)
        let class = crate::builtins::codec::serialize::locked(|| crate::class::load(g, name.as_bytes()))?;
        if class.is_none() {
            warning(
                g,
                &format!("unserialize(): Function {func_name}() hasn't defined the class it was called for"),
            );
        }
        Ok(class)
    }

    /// `object_custom`: `C:len:"Class":n:{data}`, `p` at the closing
    /// quote of the name.
    fn custom(&mut self, class: &Rc<Class>, incomplete: Option<&PhpStr>) -> Read<Tok> {
        let g = self.g;
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
                g,
                &format!("Insufficient data for unserializing - {datalen} required, {present} present"),
            );
            return Err(Stop::Fail);
        }
        let datalen = datalen as usize;
        if self.at(self.p + datalen) != b'}' {
            self.p += datalen;
            return Err(Stop::Fail);
        }
        let data = PhpStr::from(&self.buf[self.p..self.p + datalen]);
        let v = match custom_unserializer(class) {
            None => {
                warning(
                    g,
                    &format!(
                        "Class {} has no unserializer",
                        crate::objects::message_name(&class.name)
                    ),
                );
                let o = crate::objects::instantiate(g, class)?;
                if let Some(name) = incomplete {
                    store_class_name(&o, name);
                }
                Value::Obj(o)
            }
            Some(m) => {
                let o = crate::objects::instantiate(g, class)?;
                let before = self.base.len() + self.slots.len();
                if self.shared {
                    let mut numbered = self.numbered();
                    // This object has the number the reader gave it.
                    if let Some(last) = numbered.last_mut() {
                        *last = Some(Value::Obj(o.clone()));
                    }
                    NESTED.with(|n| n.borrow_mut().parked = Some(numbered));
                }
                let r = crate::call::call_method(g, &m, Some(o.clone()), class.id, vec![Value::Str(data)]);
                if self.shared {
                    // What the nested calls numbered counts here too.
                    let numbered = NESTED.with(|n| n.borrow_mut().parked.take()).unwrap_or_default();
                    for v in numbered.into_iter().skip(before) {
                        let zv = match v {
                            Some(v) => self.outer_value(v),
                            None => Zv::Null,
                        };
                        self.cells.push(zv);
                        self.slots.push(self.cells.len() - 1);
                    }
                }
                r?;
                Value::Obj(o)
            }
        };
        self.p += datalen + 1;
        Ok(Tok::Made(v))
    }

    /// `E:len:"Enum:Case";`.
    fn enum_case(&mut self, start: usize, cursor: usize) -> Read<Tok> {
        let g = self.g;
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
                g,
                &format!("unserialize(): Invalid enum name '{}' (missing colon)", c_str(text)),
            );
            return Err(Stop::Fail);
        };
        let (enum_name, case) = (&text[..colon], PhpStr::from(&text[colon + 1..]));
        if !self.allowed(enum_name) {
            return Err(Stop::Fail);
        }
        let class = if valid_class_name(enum_name) {
            crate::class::load(g, enum_name)?
        } else {
            None
        };
        let Some(class) = class else {
            if valid_class_name(enum_name) {
                warning(g, &format!("unserialize(): Class '{}' not found", c_str(enum_name)));
            }
            return Err(Stop::Fail);
        };
        if class.kind != ClassKind::Enum {
            warning(
                g,
                &format!("unserialize(): Class '{}' is not an enum", c_str(enum_name)),
            );
            return Err(Stop::Fail);
        }
        self.p = end + 2;
        let case_text = String::from_utf8_lossy(case.as_bytes()).into_owned();
        match class.consts.get(&case) {
            None => {
                warning(
                    g,
                    &format!("unserialize(): Undefined constant {}::{case_text}", c_str(enum_name)),
                );
                Err(Stop::Fail)
            }
            Some(c) if !c.is_case => {
                warning(
                    g,
                    &format!("unserialize(): {}::{case_text} is not an enum case", c_str(enum_name)),
                );
                Err(Stop::Fail)
            }
            Some(_) => Ok(Tok::Made(crate::objects::class_const(g, &class, &case)?)),
        }
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
                // A reference into an outer call's values is its value
                // (the two are not bound).
                if let Some(outer) = usize::try_from(id).ok().and_then(|i| self.base.get(i)) {
                    let Some(v) = outer.clone() else {
                        return Err(Stop::Fail);
                    };
                    let zv = self.outer_value(v);
                    self.cells[cell] = zv;
                    return Ok(None);
                }
                let own = usize::try_from(id).ok().and_then(|i| i.checked_sub(self.base.len()));
                let target = match own.and_then(|i| self.slots.get(i)) {
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
            Tok::ObjRef(id) => {
                let id = usize::try_from(id).unwrap_or(usize::MAX);
                if let Some(outer) = self.base.get(id) {
                    let Some(v @ Value::Obj(_)) = outer.clone() else {
                        return Err(Stop::Fail);
                    };
                    let zv = self.outer_value(v);
                    self.cells[cell] = zv;
                    return Ok(None);
                }
                let target = match self.slots.get(id - self.base.len()) {
                    Some(&t) if t != cell => t,
                    _ => return Err(Stop::Fail),
                };
                let held = match &self.cells[target] {
                    Zv::Ref(r) => self.refs.get(*r),
                    zv => Some(zv),
                };
                match held {
                    Some(Zv::Obj(i)) => Zv::Obj(*i),
                    _ => return Err(Stop::Fail),
                }
            }
            Tok::Made(v) => {
                self.objs.push(ObjRec {
                    value: v,
                    unserialize: false,
                    slots: Rc::default(),
                });
                Zv::Obj(self.objs.len() - 1)
            }
            Tok::Object(o, n, unserialize) => {
                let slots = slot_names(self.g, &o.class);
                self.objs.push(ObjRec {
                    value: Value::Obj(o),
                    unserialize,
                    slots,
                });
                let obj = self.objs.len() - 1;
                self.cells[cell] = Zv::Obj(obj);
                self.arrays.push(PhpArray::new());
                self.owners.push(Some(obj));
                let arr = self.arrays.len() - 1;
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
                return Ok(Some(Frame {
                    arr,
                    remaining: n,
                    obj: Some(obj),
                    check: None,
                }));
            }
            Tok::Array(0) => {
                self.owners.push(None);
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
                self.owners.push(None);
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
                return Ok(Some(Frame {
                    arr,
                    remaining: n,
                    obj: None,
                    check: None,
                }));
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
                let Some(done) = self.stack.pop() else { break };
                self.depth -= 1;
                if self.p >= self.buf.len() || self.at(self.p) != b'}' {
                    return Err(Stop::Fail);
                }
                self.p += 1;
                if let Some(obj) = done.obj {
                    self.completed(obj, done.arr);
                }
                if let Some((obj, key, cell)) = done.check {
                    self.check_type(obj, &key, cell)?;
                }
                self.after_element()?;
                continue;
            }
            top.remaining -= 1;
            let arr = top.arr;
            let owner = top.obj.filter(|&o| !self.objs[o].unserialize);
            let key = match self.token(false)? {
                Tok::Int(n) => Key::Int(n),
                Tok::Str(s) => Key::from_php_str(s),
                _ => return Err(Stop::Fail),
            };
            let key = match owner {
                Some(obj) => self.prop_key(obj, arr, key)?,
                None => key,
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
                    self.arrays[arr].insert(key.clone(), Value::Int(c as i64));
                    c
                }
            };
            match self.value(cell)? {
                Some(mut frame) => {
                    // A nested value is checked once it is read whole.
                    frame.check = owner.map(|obj| (obj, key, cell));
                    self.stack.push(frame);
                }
                None => {
                    if let Some(obj) = owner {
                        self.check_type(obj, &key, cell)?;
                    }
                    self.after_element()?
                }
            }
        }
        Ok(())
    }

    /// An object's properties are all read: its `__wakeup()` or
    /// `__unserialize()` call waits for the end.
    fn completed(&mut self, obj: usize, arr: usize) {
        let rec = &self.objs[obj];
        if rec.unserialize {
            self.delayed.push(Delayed::Unserialize(obj, arr));
        } else if let Value::Obj(o) = &rec.value {
            if o.class.method(b"__wakeup").is_some()
                && !o
                    .class
                    .name
                    .as_bytes()
                    .eq_ignore_ascii_case(crate::builtins::codec::serialize::INCOMPLETE)
            {
                self.delayed.push(Delayed::Wakeup(obj));
            }
        }
    }

    /// The property a key of an object's data lands in, as its mangled
    /// name (`process_nested_object_data` with
    /// `is_property_visibility_changed`): a declared property's, or the
    /// key itself for a dynamic one (deprecated, or an error, where the
    /// class takes none).
    fn prop_key(&mut self, obj: usize, arr: usize, key: Key) -> Read<Key> {
        let g = self.g;
        let key = match key {
            Key::Int(n) => Key::from_bytes(n.to_string().as_bytes()),
            k => k,
        };
        let Value::Obj(o) = self.objs[obj].value.clone() else {
            return Ok(key);
        };
        let text = key_text(&key);
        let bytes = &text[..];
        if self.objs[obj].slots.contains_key(bytes) || self.arrays[arr].get(&key).is_some() {
            return Ok(key);
        }
        let class = o.class.clone();
        if !class.props.is_empty() {
            let (owner, name) = match bytes {
                [0, rest @ ..] => {
                    if bytes.len() < 3 || rest[0] == 0 {
                        notice(g, "Illegal member variable name");
                        return Err(Stop::Fail);
                    }
                    match rest[..rest.len() - 1].iter().position(|&c| c == 0) {
                        Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
                        None => {
                            notice(g, "Corrupt member variable name");
                            return Err(Stop::Fail);
                        }
                    }
                }
                _ => (None, bytes),
            };
            let reachable = match owner {
                None => true,
                Some(c) => c == b"*" || c.eq_ignore_ascii_case(class.name.as_bytes()),
            };
            if reachable {
                // The most derived declaration of the name.
                if let Some(p) = class.props.iter().rev().find(|p| p.name.as_bytes() == name) {
                    let declaring = eg!(g).classes.get(p.declaring).name.clone();
                    return Ok(Key::from_bytes(&mangle(p.flags, declaring.as_bytes(), name)));
                }
            }
        }
        if !class.allow_dynamic
            && !class
                .name
                .as_bytes()
                .eq_ignore_ascii_case(crate::builtins::codec::serialize::INCOMPLETE)
        {
            let shown = unmangled(bytes);
            if class.flags & acc::READONLY != 0 {
                return crate::error::error(format!(
                    "Cannot create dynamic property {}::${}",
                    crate::objects::message_name(&class.name),
                    String::from_utf8_lossy(shown)
                ))
                .map_err(Stop::Vm);
            }
            crate::error::deprecated(
                g,
                &format!(
                    "Creation of dynamic property {}::${} is deprecated",
                    crate::objects::message_name(&class.name),
                    String::from_utf8_lossy(shown)
                ),
            );
        }
        Ok(key)
    }

    /// What a cell holds, as far as a type check needs: an array's
    /// elements and a reference's other holders do not matter.
    fn probe(&self, zv: &Zv) -> Value {
        match zv {
            Zv::Null => Value::Null,
            Zv::Bool(b) => Value::Bool(*b),
            Zv::Int(n) => Value::Int(*n),
            Zv::Float(f) => Value::Float(*f),
            Zv::Str(s) => Value::Str(s.clone()),
            Zv::Arr(_) => Value::empty_array(),
            Zv::Ref(r) => self.refs.get(*r).map_or(Value::Null, |z| self.probe(z)),
            Zv::Obj(i) => self.objs.get(*i).map_or(Value::Null, |o| o.value.clone()),
        }
    }

    /// A typed property's value is checked strictly, as it is read.
    fn check_type(&mut self, obj: usize, key: &Key, cell: usize) -> Read<()> {
        let Value::Obj(o) = &self.objs[obj].value else {
            return Ok(());
        };
        let Some(&slot) = self.objs[obj].slots.get(&key_text(key)) else {
            return Ok(());
        };
        let Some(p) = o.class.props.get(slot as usize) else {
            return Ok(());
        };
        let Some(ty) = p.ty.clone() else {
            return Ok(());
        };
        let v = self.probe(&self.cells[cell]);
        if crate::types::check(self.g, &ty, &v, true).is_ok() {
            return Ok(());
        }
        let declaring = eg!(self.g).classes.get(p.declaring).name.clone();
        type_error(format!(
            "Cannot assign {} to property {}::${} of type {}",
            crate::types::type_name(&v),
            crate::objects::message_name(&declaring),
            String::from_utf8_lossy(p.name.as_bytes()),
            ty.to_php_string()
        ))
        .map_err(Stop::Vm)
    }

    /// Makes the values of the graph read, and stores the objects'
    /// properties; with the calls that wait for the end, in order (an
    /// object, and for `__unserialize()` its data).
    fn finish(mut self) -> (Value, Vec<(Obj, Option<Value>)>) {
        let g = self.g;
        let refs: Vec<PhpRef> = (0..self.refs.len())
            .map(|_| crate::gc::new_ref(g, Value::Null))
            .collect();
        let mut made: Vec<Option<Value>> = vec![None; self.arrays.len()];
        let objs: Vec<Value> = self.objs.iter().map(|o| o.value.clone()).collect();
        fn make(zv: Zv, made: &mut [Option<Value>], refs: &[PhpRef], objs: &[Value]) -> Value {
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
                Zv::Obj(i) => objs.get(i).cloned().unwrap_or(Value::Null),
            }
        }
        // An array nested directly in another was read after it: making
        // them from the last, each finds its elements made.
        let mut data: Vec<Option<Value>> = vec![None; self.arrays.len()];
        for a in (0..self.arrays.len()).rev() {
            let index = std::mem::take(&mut self.arrays[a]);
            let mut arr = PhpArray::with_capacity(index.len());
            for (key, cell) in index.iter() {
                let cell = match cell {
                    Value::Int(c) => *c as usize,
                    _ => continue,
                };
                let zv = self.take(cell);
                arr.insert(key.to_key(), make(zv, &mut made, &refs, &objs));
            }
            match self.owners.get(a).copied().flatten() {
                Some(o) if self.objs[o].unserialize => data[a] = Some(Value::Arr(Rc::new(arr))),
                Some(o) => store_props(g, &self.objs[o], arr),
                None => made[a] = Some(Value::Arr(Rc::new(arr))),
            }
        }
        for (r, slot) in refs.iter().enumerate() {
            let zv = std::mem::take(&mut self.refs[r]);
            slot.set(make(zv, &mut made, &refs, &objs));
        }
        let root = self.take(0);
        let root = make(root, &mut made, &refs, &objs);
        let mut calls = Vec::new();
        for d in std::mem::take(&mut self.delayed) {
            let (o, arr) = match d {
                Delayed::Wakeup(o) => (o, None),
                Delayed::Unserialize(o, a) => (o, Some(data[a].take().unwrap_or_else(Value::empty_array))),
            };
            if let Value::Obj(o) = &self.objs[o].value {
                calls.push((o.clone(), arr));
            }
        }
        (root, calls)
    }
}

/// Stores an object's properties as read: each key is a declared
/// property's mangled name or a dynamic property's name.
fn store_props<G: Globals>(g: G, rec: &ObjRec, props: PhpArray) {
    let Value::Obj(o) = &rec.value else { return };
    for (k, v) in props.iter() {
        if let Some(&slot) = rec.slots.get(&key_text(&k.to_key())) {
            if let (Value::Ref(r), Some(p)) = (v, o.class.props.get(slot as usize)) {
                if let Some(ty) = &p.ty {
                    r.add_type_source(minizts_core::value::TypeSource {
                        ty: ty.clone(),
                        class: p.declaring,
                        name: p.name.clone(),
                    });
                }
            }
            if let Some(s) = o.props.borrow_mut().get_mut(slot as usize) {
                *s = v.clone();
            }
        } else {
            let _ = g;
            o.dynamic
                .borrow_mut()
                .get_or_insert_with(Default::default)
                .insert(k.to_key(), v.clone());
        }
    }
}

/// The mangled name of each declared property of `class`, with its slot.
fn slot_names<G: Globals>(g: G, class: &Rc<Class>) -> Rc<hashbrown::HashMap<Vec<u8>, u32>> {
    let mut m = hashbrown::HashMap::with_capacity(class.props.len());
    for (i, p) in class.props.iter().enumerate() {
        let declaring = eg!(g).classes.get(p.declaring).name.clone();
        m.insert(mangle(p.flags, declaring.as_bytes(), p.name.as_bytes()), i as u32);
    }
    Rc::new(m)
}

/// A property's mangled name: `"\0Class\0name"` for a private one,
/// `"\0*\0name"` for a protected one.
fn mangle(flags: u16, class: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + class.len() + 3);
    if flags & acc::PRIVATE != 0 {
        out.push(0);
        out.extend_from_slice(class);
        out.push(0);
    } else if flags & acc::PROTECTED != 0 {
        out.extend_from_slice(b"\0*\0");
    }
    out.extend_from_slice(name);
    out
}

/// A key as a property name.
fn key_text(k: &Key) -> Vec<u8> {
    match k {
        Key::Int(n) => n.to_string().into_bytes(),
        Key::Str(s) => s.as_bytes().to_vec(),
    }
}

/// The property name of a mangled name (after its second NUL).
fn unmangled(name: &[u8]) -> &[u8] {
    match name {
        [0, rest @ ..] => match rest.iter().position(|&c| c == 0) {
            Some(i) => &rest[i + 1..],
            None => name,
        },
        _ => name,
    }
}

/// The `unserialize()` method of a class that implements `Serializable`
/// (PHP's `ce->unserialize`).
fn custom_unserializer(class: &Class) -> Option<Rc<minizts_core::object::Method>> {
    if !class
        .interfaces
        .iter()
        .any(|i| i.name.as_bytes().eq_ignore_ascii_case(b"Serializable"))
    {
        return None;
    }
    class
        .method(b"unserialize")
        .filter(|m| crate::objects::is_user(m))
        .cloned()
}

/// `php_store_class_name`: an incomplete object keeps the name of the
/// class it was serialized as.
fn store_class_name(o: &Obj, name: &PhpStr) {
    o.dynamic.borrow_mut().get_or_insert_with(Default::default).insert(
        Key::from_bytes(crate::builtins::codec::serialize::INCOMPLETE_MEMBER),
        Value::Str(name.clone()),
    );
}

/// The `options` array: `max_depth`, and `allowed_classes` (lower-cased;
/// `None`: every class).
#[allow(clippy::type_complexity)]
fn read_options<G: Globals>(g: G, options: &PhpArray) -> VmResult<(i64, Option<Vec<Vec<u8>>>)> {
    let mut allowed = None;
    if let Some(classes) = options.get_str(b"allowed_classes") {
        let classes = classes.deref();
        match &*classes {
            Value::Bool(true) => {}
            Value::Bool(false) => allowed = Some(Vec::new()),
            Value::Arr(list) => {
                let mut names = Vec::new();
                for v in list.values() {
                    names.push(crate::ops::to_str(g, &v.deref())?.as_bytes().to_ascii_lowercase());
                }
                allowed = Some(names);
            }
            other => {
                return type_error(format!(
                    "unserialize(): Option \"allowed_classes\" must be of type array|bool, {} given",
                    other.type_name()
                ))
            }
        }
    }
    let depth = match options.get_str(b"max_depth").map(Value::deref) {
        None => DEFAULT_MAX_DEPTH,
        Some(v) => match &*v {
            Value::Int(n) if *n < 0 => {
                return value_error("unserialize(): Option \"max_depth\" must be greater than or equal to 0")
            }
            Value::Int(n) => *n,
            other => {
                return type_error(format!(
                    "unserialize(): Option \"max_depth\" must be of type int, {} given",
                    other.type_name()
                ))
            }
        },
    };
    Ok((depth, allowed))
}

/// PHP's `BG(unserialize)`: the numbering a nested call goes on with.
#[derive(Default)]
struct Nesting {
    /// How many calls share the numbering now.
    level: u32,
    /// The numbered values, while a `Serializable::unserialize()` runs.
    parked: Option<Vec<Option<Value>>>,
}

thread_local! {
    static NESTED: std::cell::RefCell<Nesting> = std::cell::RefCell::new(Nesting::default());
}

/// The delayed `__wakeup()` and `__unserialize()` calls (PHP's
/// `var_destroy`): after one fails, the others are not made.
fn delayed_calls<G: Globals>(g: G, calls: Vec<(Obj, Option<Value>)>) -> VmResult<()> {
    for (o, data) in calls {
        let class = o.class.clone();
        let (m, args) = match data {
            Some(d) => (class.magic.unserialize.clone(), vec![d]),
            None => (class.method(b"__wakeup").cloned(), Vec::new()),
        };
        let Some(m) = m else { continue };
        crate::builtins::codec::serialize::locked(|| crate::call::call_method(g, &m, Some(o.clone()), class.id, args))?;
    }
    Ok(())
}

pub(in crate::builtins) fn unserialize<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let data = a.str(g, 0)?;
    let options = if a.has(1) { Some(a.array(1)?) } else { None };
    if data.is_empty() {
        return Ok(Value::Bool(false));
    }
    let (max_depth, allowed) = match &options {
        Some(o) => read_options(g, o)?,
        None => (DEFAULT_MAX_DEPTH, None),
    };
    let mut reader = Reader::new(g, &data, max_depth);
    reader.allowed = allowed;
    // PHP_VAR_UNSERIALIZE_INIT: a call outside `__wakeup()` and the
    // like shares the numbering of the call it is nested in.
    reader.shared = !crate::builtins::codec::serialize::lock_raised();
    if reader.shared {
        let outer = NESTED.with(|n| {
            let mut n = n.borrow_mut();
            n.level += 1;
            n.parked.take()
        });
        reader.base = outer.unwrap_or_default();
    }
    let r = reader.run();
    if reader.shared {
        let numbered = reader.numbered();
        NESTED.with(|n| {
            let mut n = n.borrow_mut();
            n.level -= 1;
            n.parked = (n.level > 0).then_some(numbered);
        });
    }
    match r {
        Ok(()) => {
            let (v, calls) = reader.finish();
            delayed_calls(g, calls)?;
            // The result is never a reference itself (zend_unwrap_reference).
            Ok(match v {
                Value::Ref(r) => r.get(),
                v => v,
            })
        }
        Err(Stop::Vm(e)) => Err(e),
        Err(Stop::Fail) => {
            notice(
                g,
                &format!("unserialize(): Error at offset {} of {} bytes", reader.p, data.len()),
            );
            // The objects completed before the failure still get their
            // calls.
            if !reader.delayed.is_empty() {
                let (_, calls) = reader.finish();
                delayed_calls(g, calls)?;
            }
            Ok(Value::Bool(false))
        }
    }
}
