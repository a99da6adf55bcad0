//! `serialize()`, byte for byte as PHP 8.2's `php_var_serialize`.
//!
//! PHP numbers every value it writes (`var_hash->n`, from 1); a
//! reference met again is written `R:n;` with the number it got when it
//! was first met, and a reference only its array holds counts as a plain
//! value. An array met directly inside itself, or inside an array that is
//! being written through a chain of direct (non-reference) elements, is
//! written `N;` (PHP's `Z_IS_RECURSIVE` guard). minizts has no objects
//! besides closures, which PHP refuses to serialize, so `r:` and `O:`
//! are never written.
//!
//! The walk keeps its own stack of the arrays being written, so nesting
//! depth costs no native stack; the output is bounded by what fits under
//! `memory_limit` (a value shared many times over writes far more than
//! memory holds) and the walk makes the limits' checks as it goes.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use minizts_core::numfmt::{self, DigitSource};
use minizts_core::{KeyRef, PhpArray, PhpRef, PhpStr, Value};
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
}

struct Serializer<G> {
    g: G,
    out: Vec<u8>,
    /// The number of the last value written (`var_hash->n`).
    n: i64,
    /// References already written, by the address of their slot, with
    /// their number.
    refs: HashMap<usize, i64>,
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

impl<G: Globals> Serializer<G> {
    fn new(g: G) -> Self {
        Serializer {
            g,
            out: Vec::new(),
            n: 0,
            refs: HashMap::new(),
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

    /// `php_var_serialize_intern`: writes one value; an array's `{` and
    /// count are written here and its elements by the walk.
    fn value(&mut self, v: &Value, guarded: bool) -> VmResult<()> {
        self.n += 1;
        let inner;
        let v = match v {
            Value::Ref(r) => {
                let id = ref_id(r);
                if let Some(&n) = self.refs.get(&id) {
                    // A reference is numbered once.
                    self.n -= 1;
                    self.out.extend_from_slice(b"R:");
                    self.int(n);
                    self.out.push(b';');
                    return Ok(());
                }
                self.refs.insert(id, self.n);
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
                    });
                }
            }
            Value::Closure(_) => return throw("Exception", "Serialization of 'Closure' is not allowed"),
            Value::Obj(o)
                if o.class.native == Some(minizts_core::object::NativeKind::Sealed)
                    || o.class.name.as_bytes().windows(11).any(|w| w == b"@anonymous\0") =>
            {
                return throw(
                    "Exception",
                    format!(
                        "Serialization of '{}' is not allowed",
                        crate::objects::message_name(&o.class.name)
                    ),
                );
            }
            Value::Obj(o) => {
                // `__serialize` gives the array to store; otherwise every
                // property, private and protected ones under PHP's
                // mangled names ("\0Class\0name", "\0*\0name").
                let arr = match o.class.method(b"__serialize").cloned() {
                    Some(m) => match crate::call::call_method(self.g, &m, Some(o.clone()), o.class.id, Vec::new())? {
                        Value::Arr(a) => a,
                        _ => {
                            return crate::error::type_error(format!(
                                "{}::__serialize() must return an array",
                                o.class.name
                            ))
                        }
                    },
                    None => {
                        let mut out = PhpArray::new();
                        for p in crate::objects::visible_props(self.g, o) {
                            if matches!(p.value, Value::Undef) {
                                continue;
                            }
                            let mut name = Vec::new();
                            if p.flags & minizts_core::object::acc::PRIVATE != 0 {
                                name.push(0);
                                name.extend_from_slice(p.class_name.as_bytes());
                                name.push(0);
                            } else if p.flags & minizts_core::object::acc::PROTECTED != 0 {
                                name.extend_from_slice(b"\0*\0");
                            }
                            name.extend_from_slice(p.name.as_bytes());
                            out.insert(minizts_core::Key::from_bytes(&name), p.value);
                        }
                        Rc::new(out)
                    }
                };
                self.out.extend_from_slice(b"O:");
                self.int(o.class.name.len() as i64);
                self.out.extend_from_slice(b":\"");
                self.out.extend_from_slice(o.class.name.as_bytes());
                self.out.extend_from_slice(b"\":");
                self.int(arr.len() as i64);
                self.out.extend_from_slice(b":{");
                if arr.is_empty() {
                    self.out.push(b'}');
                } else {
                    self.stack.push(Frame {
                        arr,
                        pos: 0,
                        guarded: false,
                    });
                }
            }
        }
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
            self.step()?;
            match key {
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
                    self.n += 1;
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

pub(in crate::builtins) fn serialize<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let v = a.get(0);
    let mut s = Serializer::new(g);
    s.run(&v)?;
    Ok(Value::Str(PhpStr::new(std::mem::take(&mut s.out))))
}
