//! The engine's value type (PHP's `zval`) and PHP 8's conversion and
//! comparison rules.
//!
//! A [`Value`] is 16 bytes: a tag and one word. Strings, arrays,
//! references and closures are refcounted and shared on copy; writes go
//! through copy-on-write ([`Value::array_mut`], [`PhpStr::make_mut`]).
//! A few variants exist only inside the engine and never reach a script:
//! `Undef` (an unset variable or a deleted array slot, PHP's `IS_UNDEF`) and
//! the two foreach iterators.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell, RefMut};
use std::rc::Rc;

use crate::array::{IterPos, PhpArray};
use crate::gc::Collector;
use crate::numfmt::{self, Number};
use crate::string::PhpStr;

mod compare;

pub use compare::{compare, identical, loose_equals, NestingError, MAX_COMPARE_DEPTH};

/// A PHP value (see the module docs).
#[derive(Debug, Default)]
pub enum Value {
    /// Unset (internal only).
    #[default]
    Undef,
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(PhpStr),
    Arr(Rc<PhpArray>),
    /// A PHP reference (`&$x`): the slot is shared by every holder.
    Ref(PhpRef),
    /// A closure object (class `Closure`).
    Closure(Rc<Closure>),
    /// Any other object.
    Obj(crate::object::Obj),
    /// foreach by value (internal): the array iterated and the position.
    IterVal(Rc<PhpArray>, u32),
    /// foreach by reference (internal).
    IterRef(Box<RefIter>),
}

impl Clone for Value {
    #[inline(always)]
    fn clone(&self) -> Value {
        if self.is_scalar() || self.is_interned_str() {
            // SAFETY: a scalar or an interned string owns nothing (no
            // count, no allocation), so a bitwise copy is a complete,
            // independent copy.
            unsafe { std::ptr::read(self) }
        } else {
            self.clone_counted()
        }
    }
}

impl Value {
    /// The part of `clone` for values that hold a count.
    #[inline(never)]
    fn clone_counted(&self) -> Value {
        match self {
            Value::Str(s) => Value::Str(s.clone()),
            Value::Arr(a) => Value::Arr(a.clone()),
            Value::Ref(r) => Value::Ref(r.clone()),
            Value::Closure(c) => Value::Closure(c.clone()),
            Value::Obj(o) => Value::Obj(o.clone()),
            Value::IterVal(a, p) => Value::IterVal(a.clone(), *p),
            Value::IterRef(it) => clone_iter_ref(it),
            Value::Undef => Value::Undef,
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(n) => Value::Int(*n),
            Value::Float(f) => Value::Float(*f),
        }
    }
}

/// `clone_counted`'s one case that allocates, out of line so that the
/// others (a count incremented) need no stack frame.
#[cold]
#[inline(never)]
fn clone_iter_ref(it: &RefIter) -> Value {
    Value::IterRef(Box::new(it.clone()))
}

/// A reference: a shared, mutable slot (PHP's `zend_reference`).
#[derive(Clone, Debug)]
pub struct PhpRef(Rc<RefSlot>);

/// What a reference points to: the shared value, and the typed
/// properties that hold the reference, whose types every write through
/// it must satisfy (PHP's reference "type sources"; almost always none).
pub(crate) struct RefSlot {
    pub(crate) value: RefCell<Value>,
    sources: Cell<Option<Box<[TypeSource]>>>,
}

impl std::fmt::Debug for RefSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

/// A typed property that holds a reference (see [`PhpRef::type_sources`]).
#[derive(Clone, Debug)]
pub struct TypeSource {
    pub ty: Rc<crate::bytecode::TypeDecl>,
    /// The class that declared the property, and its name: the property
    /// (instance or static) the messages name.
    pub class: u32,
    pub name: PhpStr,
}

impl PhpRef {
    /// A new reference holding `v`, made known to the request's cycle
    /// collector (every cycle passes through a reference).
    pub fn new(v: Value, gc: &mut Collector) -> PhpRef {
        let rc = Rc::new(RefSlot {
            value: RefCell::new(v),
            sources: Cell::new(None),
        });
        gc.track(&rc);
        PhpRef(rc)
    }

    pub(crate) fn from_rc(rc: Rc<RefSlot>) -> PhpRef {
        PhpRef(rc)
    }

    /// Whether a typed property holds this reference: writes through it
    /// are then checked against [`PhpRef::type_sources`].
    #[inline]
    pub fn is_typed(&self) -> bool {
        // SAFETY: the cell is not shared across threads, and no borrow of
        // its contents outlives a method of this type.
        unsafe { (*self.0.sources.as_ptr()).is_some() }
    }

    /// The typed properties holding this reference, in the order they
    /// bound it (one entry per holder: two objects of a class holding it
    /// make two).
    pub fn type_sources(&self) -> Vec<TypeSource> {
        let s = self.0.sources.take();
        let out = s.as_deref().map(<[TypeSource]>::to_vec).unwrap_or_default();
        self.0.sources.set(s);
        out
    }

    /// Records that typed property `source` holds this reference.
    pub fn add_type_source(&self, source: TypeSource) {
        let mut s = self.0.sources.take().map(Vec::from).unwrap_or_default();
        s.push(source);
        self.0.sources.set(Some(s.into_boxed_slice()));
    }

    /// Forgets one holder of this reference that is property `name` of
    /// class `class` (it let go of the reference).
    pub fn remove_type_source(&self, class: u32, name: &PhpStr) {
        let Some(s) = self.0.sources.take() else { return };
        let mut s = Vec::from(s);
        if let Some(i) = s.iter().position(|t| t.class == class && t.name == *name) {
            s.remove(i);
        }
        if !s.is_empty() {
            self.0.sources.set(Some(s.into_boxed_slice()));
        }
    }

    /// The slot's address: the same for every holder.
    pub(crate) fn identity(&self) -> usize {
        Rc::as_ptr(&self.0) as *const () as usize
    }

    #[cfg(test)]
    pub(crate) fn downgrade(&self) -> std::rc::Weak<RefSlot> {
        Rc::downgrade(&self.0)
    }

    pub fn borrow(&self) -> Ref<'_, Value> {
        self.0.value.borrow()
    }

    /// Shared access, or an error while the slot is mutably borrowed.
    pub fn try_borrow(&self) -> Result<Ref<'_, Value>, std::cell::BorrowError> {
        self.0.value.try_borrow()
    }

    pub fn borrow_mut(&self) -> RefMut<'_, Value> {
        self.0.value.borrow_mut()
    }

    /// Mutable access, or an error if the slot is already borrowed (a
    /// reference reached again through itself).
    pub fn try_borrow_mut(&self) -> Result<RefMut<'_, Value>, std::cell::BorrowMutError> {
        self.0.value.try_borrow_mut()
    }

    pub fn get(&self) -> Value {
        self.0.value.borrow().clone()
    }

    /// The value, if this was the reference's last holder (otherwise the
    /// reference just loses a holder).
    pub fn into_inner(self) -> Option<Value> {
        Rc::into_inner(self.0).map(|slot| slot.value.into_inner())
    }

    /// The referenced value without a borrow guard, or `None` while it is
    /// mutably borrowed (the VM's read fast paths).
    ///
    /// # Safety
    /// Nothing may borrow the slot mutably while the returned reference is
    /// used.
    #[inline]
    pub unsafe fn peek(&self) -> Option<&Value> {
        // SAFETY: forwarded to the caller.
        unsafe { self.0.value.try_borrow_unguarded() }.ok()
    }

    pub fn set(&self, v: Value) {
        *self.0.value.borrow_mut() = v;
    }

    /// [`PhpRef::set`], or the value back while the slot is borrowed
    /// (a write reached again from inside the write through it).
    pub fn try_set(&self, v: Value) -> Result<(), Value> {
        match self.0.value.try_borrow_mut() {
            Ok(mut slot) => {
                let old = std::mem::replace(&mut *slot, v);
                drop(slot);
                drop(old);
                Ok(())
            }
            Err(_) => Err(v),
        }
    }

    /// How many holders share this reference.
    pub fn count(&self) -> usize {
        Rc::strong_count(&self.0)
    }

    pub fn ptr_eq(&self, other: &PhpRef) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// A closure object: the function it runs and what it captured.
#[derive(Debug)]
pub struct Closure {
    /// Index of the function in the compiled script.
    pub func: u32,
    /// The `use (…)` values in order (a `Value::Ref` for `use (&$x)`), or
    /// for arrow functions the variables they capture.
    pub bound: Vec<Value>,
    /// Each closure object has its own `static` variables.
    pub statics: RefCell<Vec<Option<PhpRef>>>,
    /// The object handle `var_dump` prints (`#3`).
    pub handle: u32,
    /// What made it.
    pub kind: ClosureKind,
    /// The object store that gave the handle (which takes it back when
    /// the closure goes); `None` in tests.
    pub store: Option<Rc<crate::object::ObjectStore>>,
    /// `$this` inside it (a closure made in a method, or bound).
    pub this: Option<crate::object::Obj>,
    /// Its scope (class id + 1, 0 for none) and called scope
    /// (`static::`), as the frame that made it had them.
    pub scope: u32,
    pub called: u32,
}

impl Drop for Closure {
    fn drop(&mut self) {
        if let Some(store) = &self.store {
            store.release_handle(self.handle);
        }
    }
}

/// How a closure came to be: a `function () {}` or `fn () =>` literal,
/// or the first-class callable (`f(...)`) of a named function or a
/// builtin, which calls the function itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosureKind {
    Literal,
    /// Of user function `func` (its static variables are the function's).
    Named,
    /// Of the builtin with this id (`func` is unused).
    Builtin(u16),
    /// Of a method name that `__call` or `__callStatic` takes
    /// (`$o->undeclared(...)`): `func` is that magic method's function,
    /// `bound[0]` the name called.
    Magic,
}

/// State of a `foreach (… as &$v)` loop: the array is reached through a
/// reference so the loop sees (and makes) changes, and the loop's place is
/// registered with the array it iterates, which moves it along as it
/// changes (`None` until the first step registers it).
#[derive(Clone, Debug)]
pub struct RefIter {
    pub array: PhpRef,
    pub pos: Option<IterPos>,
    /// Over an object (which `array` then holds): the names of the
    /// properties the loop has given (`None` before the first step).
    pub props: Option<Vec<Value>>,
}

/// The result of a conversion to string that cannot go through silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToStringIssue {
    /// "Array to string conversion" (a warning; the result is "Array").
    Array,
    /// An object (closure) cannot be converted: an Error.
    Object,
}

impl Value {
    pub fn str(s: impl Into<PhpStr>) -> Value {
        Value::Str(s.into())
    }

    pub fn arr(a: PhpArray) -> Value {
        Value::Arr(Rc::new(a))
    }

    pub fn empty_array() -> Value {
        Value::Arr(Rc::new(PhpArray::new()))
    }

    /// Follows a reference (one level; references never nest).
    pub fn deref(&self) -> Cow<'_, Value> {
        match self {
            Value::Ref(r) => Cow::Owned(r.get()),
            v => Cow::Borrowed(v),
        }
    }

    /// The value, with references and `Undef` resolved (for storing a copy).
    #[inline(always)]
    pub fn deref_clone(&self) -> Value {
        if self.is_plain_copy() {
            // SAFETY: a plain copy owns nothing (see `is_plain_copy`). One
            // 16-byte read, where a `match` rebuilding the value stores its
            // tag and payload apart, which a caller's 16-byte copy of the
            // result then cannot have forwarded from the store buffer.
            return unsafe { std::ptr::read(self) };
        }
        self.deref_clone_counted()
    }

    /// The value with a reference followed, `Undef` kept (an unset
    /// property slot stays told apart from a null one).
    pub fn deref_clone_keep_undef(&self) -> Value {
        match self {
            Value::Ref(r) => r.get(),
            v => v.clone(),
        }
    }

    #[inline(never)]
    fn deref_clone_counted(&self) -> Value {
        match self {
            Value::Ref(r) => r.get(),
            Value::Undef => Value::Null,
            v => v.clone(),
        }
    }

    /// Replaces the value, skipping the out-of-line drop when the old one
    /// owns nothing (most overwrites: an int element, a temporary).
    #[inline(always)]
    pub fn overwrite(&mut self, v: Value) {
        if self.is_scalar() {
            // SAFETY: a scalar owns nothing, so overwriting it without a
            // drop leaks nothing.
            unsafe { std::ptr::write(self, v) };
        } else {
            // The new value goes in before the old one is dropped (PHP's
            // order), and `v` is only ever stored, so it can stay in
            // registers (see the run loop's `put!`).
            drop_counted(std::mem::replace(self, v));
        }
    }

    /// Frees what the value holds, if anything: a string or a counted
    /// value becomes `Undef`, a scalar stays as it is (a returning frame's registers:
    /// temporaries are always written before they are read, and the next
    /// window over them clears its variables).
    #[inline(always)]
    pub fn release_counted(&mut self) {
        if self.is_scalar() {
            return;
        }
        if self.is_interned_str() {
            // SAFETY: an interned string owns nothing; overwriting it
            // without a drop leaks nothing (and spares the next write to
            // this register a drop call).
            unsafe { std::ptr::write(self, Value::Undef) };
        } else {
            *self = Value::Undef;
        }
    }

    /// Sets the slot to `Undef`, skipping the drop for scalars (the common
    /// case when a frame's registers are cleared).
    #[inline(always)]
    pub fn clear(&mut self) {
        if self.is_scalar() || self.is_interned_str() {
            // SAFETY: a scalar owns nothing, so overwriting it without a
            // drop leaks nothing.
            unsafe { std::ptr::write(self, Value::Undef) };
        } else {
            *self = Value::Undef;
        }
    }

    /// Drops the value, skipping the out-of-line drop for scalars (for a
    /// temporary the VM is done with).
    #[inline(always)]
    pub fn release(self) {
        if self.is_scalar() {
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }

    /// Whether the value owns nothing (no count to drop).
    #[inline(always)]
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Value::Undef | Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_)
        )
    }

    /// Whether a read of the value is a copy of its bits: a defined
    /// scalar or an interned string (no count to touch, not `Undef`,
    /// which warns, nor a reference, which is followed).
    #[inline(always)]
    pub fn is_plain_copy(&self) -> bool {
        !matches!(self, Value::Undef) && (self.is_scalar() || self.is_interned_str())
    }

    /// Whether this is an interned string (a literal: no count to touch
    /// on copy or drop).
    #[inline(always)]
    pub fn is_interned_str(&self) -> bool {
        matches!(self, Value::Str(s) if s.is_interned())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null | Value::Undef)
    }

    /// The array inside, for writing: copies it first if it is shared.
    pub fn array_mut(&mut self) -> Option<&mut PhpArray> {
        match self {
            Value::Arr(a) => Some(Rc::make_mut(a)),
            _ => None,
        }
    }

    /// PHP's type name as in error messages (`int`, `float`, `string`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Undef | Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Arr(_) => "array",
            Value::Ref(r) => r.borrow().type_name(),
            Value::Closure(_) => "Closure",
            Value::Obj(_) => "object",
            Value::IterVal(..) | Value::IterRef(_) => "iterator",
        }
    }

    /// `gettype()`'s names.
    pub fn gettype(&self) -> &'static str {
        match self {
            Value::Undef | Value::Null => "NULL",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "double",
            Value::Str(_) => "string",
            Value::Arr(_) => "array",
            Value::Ref(r) => r.borrow().gettype(),
            Value::Closure(_) => "object",
            Value::Obj(_) => "object",
            Value::IterVal(..) | Value::IterRef(_) => "unknown type",
        }
    }

    /// `(bool)$v`.
    pub fn to_bool(&self) -> bool {
        match self {
            Value::Undef | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(n) => *n != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !(s.is_empty() || s.as_bytes() == b"0"),
            Value::Arr(a) => !a.is_empty(),
            Value::Ref(r) => r.borrow().to_bool(),
            Value::Closure(_) => true,
            Value::Obj(_) => true,
            Value::IterVal(..) | Value::IterRef(_) => true,
        }
    }

    /// `(int)$v`.
    pub fn to_int(&self) -> i64 {
        match self {
            Value::Undef | Value::Null => 0,
            Value::Bool(b) => *b as i64,
            Value::Int(n) => *n,
            Value::Float(f) => numfmt::float_to_int(*f),
            Value::Str(s) => numfmt::str_to_int(s),
            Value::Arr(a) => !a.is_empty() as i64,
            Value::Ref(r) => r.borrow().to_int(),
            Value::Closure(_) => 1,
            Value::Obj(_) => 1,
            Value::IterVal(..) | Value::IterRef(_) => 0,
        }
    }

    /// `(float)$v`.
    pub fn to_float(&self) -> f64 {
        match self {
            Value::Undef | Value::Null => 0.0,
            Value::Bool(b) => *b as i64 as f64,
            Value::Int(n) => *n as f64,
            Value::Float(f) => *f,
            Value::Str(s) => numfmt::str_to_float(s),
            Value::Arr(a) => !a.is_empty() as i64 as f64,
            Value::Ref(r) => r.borrow().to_float(),
            Value::Closure(_) => 1.0,
            Value::Obj(_) => 1.0,
            Value::IterVal(..) | Value::IterRef(_) => 0.0,
        }
    }

    /// Appends the string form of a scalar to `out` (floats with
    /// `precision` significant digits, PHP's `precision` ini setting).
    /// Arrays and objects report what PHP would warn or throw about.
    pub fn write_string(&self, out: &mut Vec<u8>, precision: i32) -> Result<(), ToStringIssue> {
        self.write_string_with(&mut numfmt::Stateless, out, precision)
    }

    /// [`Value::write_string`] with float digits from `dtoa`.
    pub fn write_string_with(
        &self,
        dtoa: &mut dyn numfmt::DigitSource,
        out: &mut Vec<u8>,
        precision: i32,
    ) -> Result<(), ToStringIssue> {
        match self {
            Value::Undef | Value::Null | Value::Bool(false) => {}
            Value::Bool(true) => out.push(b'1'),
            Value::Int(n) => numfmt::write_int(out, *n),
            Value::Float(f) => numfmt::write_float_with(dtoa, out, *f, precision),
            Value::Str(s) => out.extend_from_slice(s),
            Value::Arr(_) => {
                out.extend_from_slice(b"Array");
                return Err(ToStringIssue::Array);
            }
            Value::Ref(r) => return r.borrow().write_string_with(dtoa, out, precision),
            Value::Closure(_) => return Err(ToStringIssue::Object),
            Value::Obj(_) => return Err(ToStringIssue::Object),
            Value::IterVal(..) | Value::IterRef(_) => {}
        }
        Ok(())
    }

    /// The string form (see [`Value::write_string`]); strings are shared,
    /// not copied.
    pub fn to_php_str(&self, precision: i32) -> Result<PhpStr, ToStringIssue> {
        self.to_php_str_with(&mut numfmt::Stateless, precision)
    }

    /// [`Value::to_php_str`] with float digits from `dtoa`.
    pub fn to_php_str_with(&self, dtoa: &mut dyn numfmt::DigitSource, precision: i32) -> Result<PhpStr, ToStringIssue> {
        match self {
            Value::Str(s) => Ok(s.clone()),
            Value::Ref(r) => r.borrow().to_php_str_with(dtoa, precision),
            v => {
                let mut out = Vec::new();
                let r = v.write_string_with(dtoa, &mut out, precision);
                r.map(|()| PhpStr::new(out))
            }
        }
    }

    /// The number a value is in arithmetic, and whether PHP would complain:
    /// `Ok((n, true))` clean, `Ok((n, false))` a leading-numeric string
    /// ("5 apples": warning "A non-numeric value encountered"), `Err(())`
    /// not a number at all (a TypeError for arrays, non-numeric strings).
    #[allow(clippy::result_unit_err)]
    pub fn to_number(&self) -> Result<(Number, bool), ()> {
        match self {
            Value::Undef | Value::Null => Ok((Number::Int(0), true)),
            Value::Bool(b) => Ok((Number::Int(*b as i64), true)),
            Value::Int(n) => Ok((Number::Int(*n), true)),
            Value::Float(f) => Ok((Number::Float(*f), true)),
            Value::Str(s) => match numfmt::parse_numeric(s) {
                Some((n, whole)) => Ok((n, whole)),
                None => Err(()),
            },
            Value::Ref(r) => r.borrow().to_number(),
            _ => Err(()),
        }
    }
}

/// Drops a value that owns something (out of line: `Value::overwrite`'s
/// rare half).
#[cold]
#[inline(never)]
fn drop_counted(old: Value) {
    drop(old);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::str(x)
    }

    #[test]
    fn sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    #[test]
    fn conversions() {
        assert!(!s("0").to_bool());
        assert!(s("0.0").to_bool());
        assert_eq!(s("12abc").to_int(), 12);
        assert_eq!(s(" 1e3").to_float(), 1000.0);
        assert_eq!(Value::Float(1e19).to_int(), numfmt::float_to_int(1e19));
        let mut out = Vec::new();
        Value::Float(0.1 + 0.2).write_string(&mut out, 14).unwrap();
        assert_eq!(out, b"0.3");
    }
}
