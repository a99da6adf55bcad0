//! `serialize()`, byte for byte as PHP 8.2's `php_var_serialize`.
//!
//! PHP numbers every value it writes (`var_hash->n`, from 1); a
//! reference or an object met again is written `R:n;` (`r:n;` for an
//! object met directly) with the number it got when it was first met,
//! and a reference only its array holds counts as a plain value. An
//! array met directly inside itself, or inside an array that is being
//! written through a chain of direct (non-reference) elements, is
//! written `N;` (PHP's `Z_IS_RECURSIVE` guard). Objects are written as
//! PHP writes them: an enum case `E:`, a class with `__serialize()` the
//! array it returns, a `Serializable` one `C:` with the string its
//! `serialize()` returns, one with `__sleep()` the properties it names,
//! any other its properties under their mangled names.
//!
//! A `serialize()` called from a `Serializable::serialize()` goes on
//! numbering where the outer call is (PHP shares its `var_hash` then,
//! but not with calls made from `__sleep()` or `__serialize()`).
//!
//! The walk keeps its own stack of the arrays being written, so nesting
//! depth costs no native stack; the output is bounded by what fits under
//! `memory_limit` (a value shared many times over writes far more than
//! memory holds) and the walk makes the limits' checks as it goes.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use minizts_core::numfmt::{self, DigitSource};
use minizts_core::object::{acc, ClassKind, NativeKind};
use minizts_core::{KeyRef, Obj, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{fatal, throw, VmResult};
use crate::limits::Ticker;

/// An array being written: its elements from `pos` on are still to come.
struct Frame {
    arr: Rc<PhpArray>,
    pos: usize,
    /// Whether this array was entered as a direct element, so that it is
    /// guarded against being met again until its `}`.
    guarded: bool,
    /// An incomplete object's properties: its class-name member is left
    /// out.
    incomplete: bool,
    /// An object's properties: an int key is written as a string (a
    /// property name is one).
    props: bool,
}

/// What the numbering of one `serialize()` is (PHP's `var_hash`).
#[derive(Default)]
struct Numbering {
    /// The number of the last value written (`var_hash->n`).
    n: i64,
    /// References and objects already written, by address, with their
    /// number (-1: a `Serializable` object whose `serialize()` gave
    /// null, written `N;` again).
    ids: HashMap<usize, i64>,
    /// What the addresses belong to, kept alive so that no address is
    /// reused while the numbering lasts.
    keep: Vec<Value>,
}

/// PHP's `BG(serialize)` and `BG(serialize_lock)`: the numbering a
/// nested `serialize()` goes on with.
#[derive(Default)]
struct Shared {
    /// Raised while `__sleep()`/`__serialize()` run: nested calls number
    /// afresh.
    lock: u32,
    /// How many calls share the numbering now (0: none is running).
    level: u32,
    /// The numbering, while a `Serializable::serialize()` of the call
    /// that owns it runs.
    parked: Option<Numbering>,
}

thread_local! {
    static SHARED: RefCell<Shared> = RefCell::new(Shared::default());
}

/// Runs `f` with the serialize lock raised (PHP around `__sleep()`,
/// `__serialize()`, and unserialize's `__wakeup()`/`__unserialize()`).
pub(in crate::builtins) fn locked<T>(f: impl FnOnce() -> T) -> T {
    SHARED.with(|s| s.borrow_mut().lock += 1);
    let r = f();
    SHARED.with(|s| s.borrow_mut().lock -= 1);
    r
}

/// Whether `__sleep()`, `__serialize()`, `__wakeup()` or
/// `__unserialize()` is running (nested calls do not share numbering).
pub(in crate::builtins) fn lock_raised() -> bool {
    SHARED.with(|s| s.borrow().lock > 0)
}

struct Serializer<G> {
    g: G,
    out: Vec<u8>,
    num: Numbering,
    /// Whether the numbering is shared with nested calls.
    shared: bool,
    /// Arrays guarded against recursion, by address.
    guarded: HashSet<*const PhpArray>,
    stack: Vec<Frame>,
    dtoa: Box<dyn DigitSource>,
    /// How many output bytes fit under `memory_limit`.
    budget: usize,
    ticker: Ticker,
    mark: usize,
}

fn ref_id(r: &PhpRef) -> usize {
    &*r.borrow() as *const Value as usize
}

/// The name an incomplete object was serialized under
/// (`__PHP_Incomplete_Class_Name`), if `o` is one.
pub(crate) fn incomplete_name(o: &Obj) -> Option<Option<PhpStr>> {
    if !o.class.name.as_bytes().eq_ignore_ascii_case(INCOMPLETE) {
        return None;
    }
    let d = o.dynamic.borrow();
    Some(
        d.as_ref()
            .and_then(|d| d.get_str(INCOMPLETE_MEMBER))
            .and_then(|v| match v.deref_clone() {
                Value::Str(s) => Some(s),
                _ => None,
            }),
    )
}

pub(crate) const INCOMPLETE: &[u8] = b"__PHP_Incomplete_Class";
pub(crate) const INCOMPLETE_MEMBER: &[u8] = b"__PHP_Incomplete_Class_Name";

/// Whether PHP refuses to serialize objects of the class
/// (`ZEND_ACC_NOT_SERIALIZABLE`): anonymous classes and the builtin
/// classes that hold engine state.
pub(crate) fn not_serializable(c: &minizts_core::object::Class) -> bool {
    c.name.as_bytes().contains(&0)
        || matches!(
            c.native,
            Some(NativeKind::NotInstantiable) | Some(NativeKind::Closure) | Some(NativeKind::Sealed)
        )
}

impl<G: Globals> Serializer<G> {
    fn new(g: G) -> Self {
        Serializer {
            g,
            out: Vec::new(),
            num: Numbering::default(),
            shared: false,
            guarded: HashSet::new(),
            stack: Vec::new(),
            dtoa: crate::dtoa::source(g),
            budget: crate::limits::room(g),
            ticker: Ticker::new(),
            mark: 0,
        }
    }

    fn int(&mut self, n: i64) {
        numfmt::write_int(&mut self.out, n);
    }

    fn string(&mut self, s: &[u8]) {
        self.out.extend_from_slice(b"s:");
        self.int(s.len() as i64);
        self.out.extend_from_slice(b":\"");
        self.out.extend_from_slice(s);
        self.out.extend_from_slice(b"\";");
    }

    /// `php_add_var_hash`: numbers `v`; for a reference or object met
    /// before, its earlier number.
    fn number(&mut self, v: &Value) -> Option<i64> {
        self.num.n += 1;
        let (id, is_ref) = match v {
            Value::Ref(r) => match &*r.borrow() {
                // A reference to an object counts as the object.
                Value::Obj(o) => (o.addr(), true),
                _ => (ref_id(r), true),
            },
            Value::Obj(o) => (o.addr(), false),
            _ => return None,
        };
        if let Some(&n) = self.num.ids.get(&id) {
            // A reference is numbered once.
            if is_ref && n != -1 {
                self.num.n -= 1;
            }
            return Some(n);
        }
        self.num.ids.insert(id, self.num.n);
        self.num.keep.push(v.clone());
        None
    }

    /// `php_var_serialize_intern`: writes one value; an array's `{` and
    /// count are written here and its elements by the walk.
    fn value(&mut self, v: &Value, guarded: bool) -> VmResult<()> {
        if let Some(n) = self.number(v) {
            if n == -1 {
                self.out.extend_from_slice(b"N;");
            } else {
                self.out
                    .extend_from_slice(if matches!(v, Value::Ref(_)) { b"R:" } else { b"r:" });
                self.int(n);
                self.out.push(b';');
            }
            return Ok(());
        }
        let inner;
        let v = match v {
            Value::Ref(r) => {
                inner = r.get();
                &inner
            }
            v => v,
        };
        match v {
            Value::Null | Value::Undef | Value::IterVal(..) | Value::IterRef(_) | Value::Ref(_) => {
                self.out.extend_from_slice(b"N;")
            }
            Value::Bool(b) => self.out.extend_from_slice(if *b { b"b:1;" } else { b"b:0;" }),
            Value::Int(n) => {
                self.out.extend_from_slice(b"i:");
                self.int(*n);
                self.out.push(b';');
            }
            Value::Float(f) => {
                self.out.extend_from_slice(b"d:");
                numfmt::write_float_repr_with(&mut *self.dtoa, &mut self.out, *f);
                self.out.push(b';');
            }
            Value::Str(s) => self.string(s),
            Value::Arr(arr) => {
                self.out.extend_from_slice(b"a:");
                self.int(arr.len() as i64);
                self.out.extend_from_slice(b":{");
                if arr.is_empty() {
                    self.out.push(b'}');
                    if guarded {
                        self.guarded.remove(&Rc::as_ptr(arr));
                    }
                } else {
                    self.stack.push(Frame {
                        arr: arr.clone(),
                        pos: 0,
                        guarded,
                        incomplete: false,
                        props: false,
                    });
                }
            }
            Value::Closure(_) => return throw("Exception", "Serialization of 'Closure' is not allowed"),
            Value::Obj(o) => self.object(o)?,
        }
        Ok(())
    }

    /// `O:len:"Class":` with the name objects of the class are written
    /// under.
    fn class_name(&mut self, name: &[u8]) {
        self.out.extend_from_slice(b"O:");
        self.int(name.len() as i64);
        self.out.extend_from_slice(b":\"");
        self.out.extend_from_slice(name);
        self.out.extend_from_slice(b"\":");
    }

    /// The `count:{` of an object's properties, and its frame.
    fn members(&mut self, arr: Rc<PhpArray>, count: usize, incomplete: bool, props: bool) {
        self.int(count as i64);
        self.out.extend_from_slice(b":{");
        if count == 0 || arr.is_empty() {
            self.out.push(b'}');
        } else {
            self.stack.push(Frame {
                arr,
                pos: 0,
                guarded: false,
                incomplete,
                props,
            });
        }
    }

    fn object(&mut self, o: &Obj) -> VmResult<()> {
        let g = self.g;
        let class = o.class.clone();
        if not_serializable(&class) {
            return throw(
                "Exception",
                format!(
                    "Serialization of '{}' is not allowed",
                    crate::objects::message_name(&class.name)
                ),
            );
        }
        if class.kind == ClassKind::Enum {
            let case = match class.prop_index.get(&PhpStr::from(&b"name"[..])) {
                Some(&slot) => o.props.borrow().get(slot as usize).map(Value::deref_clone),
                None => None,
            };
            let case = match case {
                Some(Value::Str(s)) => s,
                _ => PhpStr::from(&b""[..]),
            };
            self.out.extend_from_slice(b"E:");
            self.int((class.name.len() + 1 + case.len()) as i64);
            self.out.extend_from_slice(b":\"");
            self.out.extend_from_slice(class.name.as_bytes());
            self.out.push(b':');
            self.out.extend_from_slice(case.as_bytes());
            self.out.extend_from_slice(b"\";");
            return Ok(());
        }
        if let Some(m) = class.magic.serialize.clone() {
            let r = locked(|| crate::call::call_method(g, &m, Some(o.clone()), class.id, Vec::new()))?;
            let Value::Arr(arr) = r else {
                return crate::error::type_error(format!(
                    "{}::__serialize() must return an array",
                    crate::objects::message_name(&class.name)
                ));
            };
            self.class_name(class.name.as_bytes());
            let n = arr.len();
            self.members(arr, n, false, false);
            return Ok(());
        }
        if let Some(m) = class
            .method(b"serialize")
            .filter(|m| crate::objects::is_user(m))
            .cloned()
        {
            if crate::objects::implements(o, b"Serializable") {
                return self.custom(o, &m);
            }
        }
        let incomplete = incomplete_name(o);
        if incomplete.is_none() {
            if let Some(m) = class.method(b"__sleep").cloned() {
                return self.sleep(o, &m);
            }
        }
        let name = match &incomplete {
            Some(Some(n)) => n.clone(),
            Some(None) => PhpStr::from(INCOMPLETE),
            None => class.name.clone(),
        };
        self.class_name(name.as_bytes());
        let props = crate::objects::mangled_props(g, o);
        let mut count = props.len();
        if count > 0 && incomplete.is_some() {
            count -= 1;
        }
        self.members(Rc::new(props), count, incomplete.is_some(), true);
        Ok(())
    }

    /// A `Serializable` object: `C:len:"Class":n:{…}` with the string
    /// its `serialize()` returns; `N;` when it returns null.
    fn custom(&mut self, o: &Obj, m: &Rc<minizts_core::object::Method>) -> VmResult<()> {
        let g = self.g;
        // A nested `serialize()` goes on with this numbering.
        let shared = self.shared;
        if shared {
            let num = std::mem::take(&mut self.num);
            SHARED.with(|s| s.borrow_mut().parked = Some(num));
        }
        let r = crate::call::call_method(g, m, Some(o.clone()), o.class.id, Vec::new());
        if shared {
            if let Some(num) = SHARED.with(|s| s.borrow_mut().parked.take()) {
                self.num = num;
            }
        }
        match r? {
            Value::Str(data) => {
                let name = o.class.name.clone();
                self.out.extend_from_slice(b"C:");
                self.int(name.len() as i64);
                self.out.extend_from_slice(b":\"");
                self.out.extend_from_slice(name.as_bytes());
                self.out.extend_from_slice(b"\":");
                self.int(data.len() as i64);
                self.out.extend_from_slice(b":{");
                self.out.extend_from_slice(data.as_bytes());
                self.out.push(b'}');
            }
            Value::Null | Value::Undef => {
                // Met again, the object is written `N;` too.
                if let Some(n) = self.num.ids.get_mut(&o.addr()) {
                    *n = -1;
                }
                self.out.extend_from_slice(b"N;");
            }
            _ => {
                return throw(
                    "Exception",
                    format!(
                        "{}::serialize() must return a string or NULL",
                        crate::objects::message_name(&o.class.name)
                    ),
                )
            }
        }
        Ok(())
    }

    /// An object with `__sleep()`: the properties it names, looked up
    /// as PHP does (the name, then as the class's private, then as
    /// protected), with PHP's warnings for the others.
    fn sleep(&mut self, o: &Obj, m: &Rc<minizts_core::object::Method>) -> VmResult<()> {
        let g = self.g;
        let class = o.class.clone();
        let cname = crate::objects::message_name(&class.name);
        let bad = format!(
            "serialize(): {cname}::__sleep() should return an array only containing the names of instance-variables to serialize"
        );
        let names = match locked(|| crate::call::call_method(g, m, Some(o.clone()), class.id, Vec::new()))? {
            Value::Arr(a) => a,
            Value::Obj(r) => Rc::new(crate::objects::mangled_props(g, &r)),
            _ => {
                crate::error::warning(g, &bad);
                self.out.extend_from_slice(b"N;");
                return Ok(());
            }
        };
        // The object's properties by mangled name; `Undef`: an
        // uninitialised typed one.
        let mut table: HashMap<Vec<u8>, Value> = HashMap::new();
        {
            let props = o.props.borrow();
            for (i, p) in class.props.iter().enumerate() {
                let v = match props.get(i) {
                    Some(Value::Ref(r)) if r.count() == 1 => r.get(),
                    Some(v) => v.clone(),
                    None => continue,
                };
                if matches!(v, Value::Undef) && p.ty.is_none() {
                    continue;
                }
                let declaring = eg!(g).classes.get(p.declaring).name.clone();
                table.insert(mangle(p.flags, declaring.as_bytes(), p.name.as_bytes()), v);
            }
        }
        if let Some(d) = o.dynamic.borrow().as_ref() {
            for (k, v) in d.iter() {
                let k = match k {
                    KeyRef::Int(n) => n.to_string().into_bytes(),
                    KeyRef::Str(s) => s.as_bytes().to_vec(),
                };
                let v = match v {
                    Value::Ref(r) if r.count() == 1 => r.get(),
                    v => v.clone(),
                };
                table.entry(k).or_insert(v);
            }
        }
        let mut out = PhpArray::new();
        for v in names.values() {
            let v = v.deref_clone();
            if !matches!(v, Value::Str(_)) {
                crate::error::warning(g, &bad);
            }
            let name = crate::ops::to_str(g, &v)?;
            let tries = [
                name.as_bytes().to_vec(),
                mangle(acc::PRIVATE, class.name.as_bytes(), name.as_bytes()),
                mangle(acc::PROTECTED, b"", name.as_bytes()),
            ];
            let mut found = false;
            for key in tries {
                let Some(val) = table.get(&key) else { continue };
                found = true;
                if matches!(val, Value::Undef) {
                    break;
                }
                let k = minizts_core::Key::from_bytes(&key);
                if out.get(&k).is_some() {
                    crate::error::notice(
                        g,
                        &format!(
                            "serialize(): \"{}\" is returned from __sleep() multiple times",
                            String::from_utf8_lossy(name.as_bytes())
                        ),
                    );
                } else {
                    out.insert(k, val.clone());
                }
                break;
            }
            if !found {
                crate::error::warning(
                    g,
                    &format!(
                        "serialize(): \"{}\" returned as member variable from __sleep() but does not exist",
                        String::from_utf8_lossy(name.as_bytes())
                    ),
                );
            }
        }
        self.class_name(class.name.as_bytes());
        let n = out.len();
        self.members(Rc::new(out), n, false, true);
        Ok(())
    }

    /// One step of the limits' checks, and the memory budget.
    fn step(&mut self) -> VmResult<()> {
        if self.out.len() > self.budget {
            let limit = eg!(self.g).settings.memory_limit.unwrap_or(isize::MAX as usize);
            return fatal(format!(
                "Allowed memory size of {limit} bytes exhausted (tried to allocate {} bytes)",
                self.out.len()
            ));
        }
        let grown = self.out.len() - self.mark;
        self.mark = self.out.len();
        self.ticker.tick_bytes(self.g, grown)
    }

    fn run(&mut self, top: &Value) -> VmResult<()> {
        self.value(top, false)?;
        while let Some(frame) = self.stack.last_mut() {
            let arr = frame.arr.clone();
            let Some((pos, key, v)) = arr.at_or_after(frame.pos) else {
                if let Some(frame) = self.stack.pop() {
                    if frame.guarded {
                        self.guarded.remove(&Rc::as_ptr(&frame.arr));
                    }
                }
                self.out.push(b'}');
                continue;
            };
            frame.pos = pos + 1;
            let props = frame.props;
            if frame.incomplete && matches!(key, KeyRef::Str(s) if s.as_bytes() == INCOMPLETE_MEMBER) {
                continue;
            }
            self.step()?;
            match key {
                KeyRef::Int(n) if props => {
                    let text = n.to_string();
                    self.string(text.as_bytes());
                }
                KeyRef::Int(n) => {
                    self.out.extend_from_slice(b"i:");
                    self.int(n);
                    self.out.push(b';');
                }
                KeyRef::Str(s) => self.string(s),
            }
            // A reference only this array holds is written as its value.
            let lone;
            let v = match v {
                Value::Ref(r) if r.count() == 1 => {
                    lone = r.get();
                    &lone
                }
                v => v,
            };
            if let Value::Arr(inner) = v {
                let p = Rc::as_ptr(inner);
                if self.guarded.contains(&p) || std::ptr::eq(p, Rc::as_ptr(&arr)) {
                    self.num.n += 1;
                    self.out.extend_from_slice(b"N;");
                } else {
                    self.guarded.insert(p);
                    self.value(v, true)?;
                }
            } else {
                self.value(v, false)?;
            }
        }
        Ok(())
    }
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

pub(in crate::builtins) fn serialize<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.get(0);
    let mut s = Serializer::new(g);
    // PHP_VAR_SERIALIZE_INIT: the outermost call (outside `__sleep()`
    // and `__serialize()`) owns a numbering that nested calls share.
    let (lock, level) = SHARED.with(|sh| {
        let sh = sh.borrow();
        (sh.lock, sh.level)
    });
    let nested = lock == 0 && level > 0;
    if lock == 0 {
        s.shared = true;
        SHARED.with(|sh| sh.borrow_mut().level += 1);
        if nested {
            if let Some(num) = SHARED.with(|sh| sh.borrow_mut().parked.take()) {
                s.num = num;
            }
        }
    }
    let r = s.run(&v);
    if lock == 0 {
        SHARED.with(|sh| {
            let mut sh = sh.borrow_mut();
            sh.level -= 1;
            if nested {
                sh.parked = Some(std::mem::take(&mut s.num));
            }
        });
    }
    r?;
    Ok(Value::Str(PhpStr::new(std::mem::take(&mut s.out))))
}
