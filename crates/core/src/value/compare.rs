//! PHP 8's comparisons: `==` ([`loose_equals`]), `===` ([`identical`])
//! and `<=>` ([`compare`], PHP's `zend_compare`).
//!
//! Arrays compare element by element, so a comparison recurses as deep
//! as its operands nest, and an array that holds a reference to itself
//! would recurse for ever. PHP guards `zend_hash_compare` the same way
//! for both: the same array on both sides is equal at once, and an array
//! met again on the left while it is being compared is the fatal
//! "Nesting level too deep - recursive dependency?". minizts keeps the
//! left-hand arrays being compared on a path (PHP flags them with
//! `GC_PROTECT_RECURSION`) and also gives that error past
//! [`MAX_COMPARE_DEPTH`] levels, where PHP 8.2 would run out of native
//! stack and crash.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::rc::Rc;

use super::Value;
use crate::array::PhpArray;
use crate::numfmt::{self, Number};
use crate::string::PhpStr;

/// A comparison met an array it was already comparing (a reference to
/// itself), or nested past [`MAX_COMPARE_DEPTH`]: PHP's fatal error
/// "Nesting level too deep - recursive dependency?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestingError;

impl std::fmt::Display for NestingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Nesting level too deep - recursive dependency?")
    }
}

impl std::error::Error for NestingError {}

/// How many arrays deep a comparison goes before it gives up (each level
/// is a few native stack frames; the engine's threads have room for many
/// more).
pub const MAX_COMPARE_DEPTH: usize = 100_000;

/// Up to this many arrays deep the path is searched linearly; deeper, a
/// set keeps the test constant-time.
const LINEAR_PATH: usize = 32;

/// The arrays on the left-hand side of the comparisons in progress,
/// outermost first. Comparisons of scalars never touch it, and it
/// allocates only when arrays nest.
#[derive(Default)]
struct Path {
    /// Addresses of the arrays (or objects) on the path.
    arrays: Vec<usize>,
    /// The same arrays, once there are more than `LINEAR_PATH`.
    set: Option<HashSet<usize>>,
}

impl Path {
    /// Runs `f` with `x` on the path, or fails if it is already on it (or
    /// the path is too long).
    #[inline]
    fn enter<T>(
        &mut self,
        x: &PhpArray,
        f: impl FnOnce(&mut Path) -> Result<T, NestingError>,
    ) -> Result<T, NestingError> {
        self.enter_at(x as *const PhpArray as usize, f)
    }

    /// [`Path::enter`] for the container at address `p`.
    fn enter_at<T>(
        &mut self,
        p: usize,
        f: impl FnOnce(&mut Path) -> Result<T, NestingError>,
    ) -> Result<T, NestingError> {
        if self.arrays.len() >= MAX_COMPARE_DEPTH {
            return Err(NestingError);
        }
        let seen = match &mut self.set {
            Some(set) => !set.insert(p),
            None if self.arrays.len() < LINEAR_PATH => self.arrays.contains(&p),
            None => {
                let mut set: HashSet<_> = self.arrays.iter().copied().collect();
                let seen = !set.insert(p);
                self.set = Some(set);
                seen
            }
        };
        if seen {
            return Err(NestingError);
        }
        self.arrays.push(p);
        let r = f(self);
        self.arrays.pop();
        if let Some(set) = &mut self.set {
            set.remove(&p);
        }
        r
    }
}

/// `==` on values is PHP's `===` (for tests and assertions; the VM calls
/// [`loose_equals`] and [`identical`] explicitly); a nesting error is
/// "not equal".
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        identical(self, other).unwrap_or(false)
    }
}

/// `$a === $b`.
#[inline]
pub fn identical(a: &Value, b: &Value) -> Result<bool, NestingError> {
    match (a, b) {
        // Only arrays nest; everything else needs no path.
        (Value::Ref(_), _) | (_, Value::Ref(_)) | (Value::Arr(_), Value::Arr(_)) => {
            identical_in(a, b, &mut Path::default())
        }
        _ => Ok(identical_flat(a, b)),
    }
}

fn identical_in(a: &Value, b: &Value, path: &mut Path) -> Result<bool, NestingError> {
    Ok(match (a, b) {
        (Value::Ref(r), _) => identical_in(&r.borrow(), b, path)?,
        (_, Value::Ref(r)) => identical_in(a, &r.borrow(), path)?,
        (Value::Arr(x), Value::Arr(y)) => {
            if Rc::ptr_eq(x, y) {
                return Ok(true);
            }
            if x.len() != y.len() {
                return Ok(false);
            }
            path.enter(x, |path| {
                for ((k1, v1), (k2, v2)) in x.iter().zip(y.iter()) {
                    if k1 != k2 || !identical_in(v1, v2, path)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            })?
        }
        _ => identical_flat(a, b),
    })
}

/// `===` on two values that are not both arrays, neither a reference.
#[inline]
fn identical_flat(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undef | Value::Null, Value::Undef | Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x.as_bytes() == y.as_bytes(),
        (Value::Closure(x), Value::Closure(y)) => Rc::ptr_eq(x, y),
        (Value::Obj(x), Value::Obj(y)) => crate::object::Obj::ptr_eq(x, y),
        _ => false,
    }
}

/// `$a == $b` (PHP 8 rules).
#[inline]
pub fn loose_equals(a: &Value, b: &Value) -> Result<bool, NestingError> {
    Ok(match (a, b) {
        (Value::Str(x), Value::Str(y)) => numfmt::smart_str_equals(x, y),
        (Value::Int(x), Value::Int(y)) => x == y,
        _ => compare(a, b)? == 0,
    })
}

fn three_way_f(a: f64, b: f64) -> i32 {
    if a == b {
        0
    } else if a < b {
        -1
    } else {
        1
    }
}

fn ord_i32(o: Ordering) -> i32 {
    o as i32
}

/// PHP 8's `zend_compare`: -1, 0 or 1 (1 also for "uncomparable", so that
/// both `$a < $b` and `$b < $a` are false for such arrays).
pub fn compare(a: &Value, b: &Value) -> Result<i32, NestingError> {
    compare_in(a, b, &mut Path::default())
}

fn compare_in(a: &Value, b: &Value, path: &mut Path) -> Result<i32, NestingError> {
    use Value::*;
    Ok(match (a, b) {
        (Ref(r), _) => compare_in(&r.borrow(), b, path)?,
        (_, Ref(r)) => compare_in(a, &r.borrow(), path)?,
        // An enum case is only ever equal to itself (its class's compare
        // handler is `zend_objects_not_comparable`).
        (Obj(x), _) | (_, Obj(x)) if x.class.kind == crate::object::ClassKind::Enum => match (a, b) {
            (Obj(x), Obj(y)) if crate::object::Obj::ptr_eq(x, y) => 0,
            _ => 1,
        },
        (Int(x), Int(y)) => ord_i32(x.cmp(y)),
        (Int(x), Float(y)) => three_way_f(*x as f64, *y),
        (Float(x), Int(y)) => three_way_f(*x, *y as f64),
        (Float(x), Float(y)) => three_way_f(*x, *y),
        (Str(x), Str(y)) => ord_i32(numfmt::smart_str_compare(x, y)),
        (Undef | Null, Undef | Null) => 0,
        (Undef | Null, Bool(y)) => -(*y as i32),
        (Bool(x), Undef | Null) => *x as i32,
        (Bool(x), _) => ord_i32(x.cmp(&b.to_bool())),
        (_, Bool(y)) => ord_i32(a.to_bool().cmp(y)),
        (Undef | Null, Str(y)) => {
            if y.is_empty() {
                0
            } else {
                -1
            }
        }
        (Str(x), Undef | Null) => {
            if x.is_empty() {
                0
            } else {
                1
            }
        }
        (Undef | Null, _) => -(b.to_bool() as i32),
        (_, Undef | Null) => a.to_bool() as i32,
        (Int(_) | Float(_), Str(s)) => compare_number_string(a, s, false),
        (Str(s), Int(_) | Float(_)) => compare_number_string(b, s, true),
        (Arr(x), Arr(y)) => {
            if Rc::ptr_eq(x, y) {
                0
            } else {
                compare_arrays(x, y, path)?
            }
        }
        (Arr(_), _) => 1,
        (_, Arr(_)) => -1,
        (Closure(x), Closure(y)) => {
            if Rc::ptr_eq(x, y) || same_callable(x, y) {
                0
            } else {
                1
            }
        }
        (Closure(_), _) => 1,
        (_, Closure(_)) => -1,
        (Obj(x), Obj(y)) => compare_objects(x, y, path)?,
        (Obj(_), _) => 1,
        (_, Obj(_)) => -1,
        _ => 0,
    })
}

/// A number against a string: numerically if the string is numeric,
/// otherwise as strings (PHP 8's "saner string to number comparisons").
fn compare_number_string(num: &Value, s: &PhpStr, swapped: bool) -> i32 {
    // NAN is unordered against any string, on either side (`zend_compare`
    // answers 1 both ways, so nothing is equal, smaller or greater).
    if matches!(num, Value::Float(f) if f.is_nan()) {
        return 1;
    }
    let r = match numfmt::is_numeric_str(s) {
        Some(n) => match (num, n) {
            (Value::Int(x), Number::Int(y)) => ord_i32(x.cmp(&y)),
            _ => three_way_f(num.to_float(), n.to_f64()),
        },
        None => {
            let mut text = Vec::new();
            let precision = 14;
            let _ = num.write_string(&mut text, precision);
            ord_i32(text.as_slice().cmp(s.as_bytes()))
        }
    };
    if swapped {
        -r
    } else {
        r
    }
}

/// `zend_hash_compare` unordered: sizes first, then each of `x`'s
/// elements against `y`'s element of the same key.
fn compare_arrays(x: &PhpArray, y: &PhpArray, path: &mut Path) -> Result<i32, NestingError> {
    match x.len().cmp(&y.len()) {
        Ordering::Less => return Ok(-1),
        Ordering::Greater => return Ok(1),
        Ordering::Equal => {}
    }
    path.enter(x, |path| {
        for (k, v1) in x.iter() {
            let Some(v2) = y.get(&k.to_key()) else {
                return Ok(1);
            };
            let c = compare_in(v1, v2, path)?;
            if c != 0 {
                return Ok(c);
            }
        }
        Ok(0)
    })
}

/// `zend_std_compare_objects`: the same object is equal; objects of
/// different classes are uncomparable (1); otherwise the declared
/// properties slot by slot (an unset one on either side makes them
/// uncomparable), then the dynamic ones as arrays.
fn compare_objects(x: &crate::object::Obj, y: &crate::object::Obj, path: &mut Path) -> Result<i32, NestingError> {
    if crate::object::Obj::ptr_eq(x, y) {
        return Ok(0);
    }
    if x.class.id != y.class.id {
        return Ok(1);
    }
    path.enter_at(x.addr(), |path| {
        let (px, py) = (x.props.borrow().clone(), y.props.borrow().clone());
        for (a, b) in px.iter().zip(py.iter()) {
            match (a, b) {
                (Value::Undef, Value::Undef) => continue,
                (Value::Undef, _) | (_, Value::Undef) => return Ok(1),
                _ => {}
            }
            let c = compare_in(a, b, path)?;
            if c != 0 {
                return Ok(c);
            }
        }
        let (dx, dy) = (x.dynamic.borrow().clone(), y.dynamic.borrow().clone());
        match (dx, dy) {
            (None, None) => Ok(0),
            (Some(a), None) => Ok(if a.is_empty() { 0 } else { 1 }),
            (None, Some(b)) => Ok(if b.is_empty() { 0 } else { -1 }),
            (Some(a), Some(b)) => compare_arrays(&a, &b, path),
        }
    })
}

/// Whether two closures made from a callable (`f(...)`,
/// `Closure::fromCallable`) call the same function the same way: PHP's
/// `zend_closure_compare` makes them equal (`==`); closures written as
/// literals are equal only to themselves.
fn same_callable(x: &crate::value::Closure, y: &crate::value::Closure) -> bool {
    use crate::value::ClosureKind;
    x.kind != ClosureKind::Literal
        && x.kind == y.kind
        && x.func == y.func
        && x.scope == y.scope
        && x.called == y.called
        && match (x.bound.first(), y.bound.first()) {
            (Some(Value::Str(a)), Some(Value::Str(b))) => a.as_bytes() == b.as_bytes(),
            (None, None) => true,
            _ => false,
        }
        && match (&x.this, &y.this) {
            (None, None) => true,
            (Some(a), Some(b)) => crate::object::Obj::ptr_eq(a, b),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::PhpRef;

    fn s(x: &str) -> Value {
        Value::str(x)
    }

    #[test]
    fn php8_comparisons() {
        let eq = |a: &Value, b: &Value| loose_equals(a, b).unwrap();
        let cmp = |a: &Value, b: &Value| compare(a, b).unwrap();
        assert!(!eq(&s("abc"), &Value::Int(0)));
        assert!(eq(&s("1"), &s("01")));
        assert!(eq(&s("10"), &s("1e1")));
        assert!(eq(&Value::Int(100), &s("1e2")));
        assert!(eq(&Value::Null, &Value::Bool(false)));
        assert!(eq(&Value::empty_array(), &Value::Bool(false)));
        assert!(eq(&Value::Null, &s("")));
        assert!(!eq(&Value::Null, &s("0")));
        assert!(eq(&s("1 "), &Value::Int(1)));
        assert!(!eq(&s("1abc"), &Value::Int(1)));
        assert_eq!(cmp(&s("abc"), &Value::Int(5)), 1);
        assert_eq!(cmp(&Value::Int(5), &s("abc")), -1);
        assert_eq!(cmp(&Value::Float(f64::NAN), &Value::Float(f64::NAN)), 1);
    }

    #[test]
    fn identity() {
        let id = |a: &Value, b: &Value| identical(a, b).unwrap();
        assert!(id(&Value::Int(1), &Value::Int(1)));
        assert!(!id(&Value::Int(1), &Value::Float(1.0)));
        assert!(!id(&Value::Float(f64::NAN), &Value::Float(f64::NAN)));
        let a = Value::arr(PhpArray::from_list(vec![Value::Int(1), s("x")]));
        let b = Value::arr(PhpArray::from_list(vec![Value::Int(1), s("x")]));
        assert!(id(&a, &b));
    }

    /// `$a = [1]; $a[] = &$a;`: the reference, holding the array that
    /// holds it. Returns the reference and the array as a value.
    fn self_referencing() -> (PhpRef, Value) {
        let r = PhpRef::new(Value::Null, &mut crate::gc::Collector::new());
        let arr = Value::arr(PhpArray::from_list(vec![Value::Int(1), Value::Ref(r.clone())]));
        r.set(arr.clone());
        (r, arr)
    }

    /// Frees a self-referencing array by breaking its cycle.
    fn unlink(r: PhpRef) {
        r.set(Value::Null);
    }

    #[test]
    fn an_array_equals_itself_through_its_own_reference() {
        let (r, a) = self_referencing();
        assert_eq!(loose_equals(&a, &a), Ok(true));
        assert_eq!(identical(&a, &a), Ok(true));
        assert_eq!(compare(&a, &Value::Ref(r.clone())), Ok(0));
        drop(a);
        unlink(r);
    }

    #[test]
    fn two_self_referencing_arrays_are_a_nesting_error() {
        let (r1, a) = self_referencing();
        let (r2, b) = self_referencing();
        assert_eq!(loose_equals(&a, &b), Err(NestingError));
        assert_eq!(compare(&a, &b), Err(NestingError));
        assert_eq!(identical(&a, &b), Err(NestingError));
        // Arrays of different sizes are decided before any recursion.
        let c = Value::arr(PhpArray::from_list(vec![a.clone()]));
        assert_eq!(compare(&c, &b), Ok(-1));
        drop((a, b, c));
        unlink(r1);
        unlink(r2);
    }

    #[test]
    fn a_cycle_deeper_than_the_linear_path_is_found() {
        // r -> [[[... [1, r] ...]]] 100 levels down, twice.
        let deep_cycle = || {
            let r = PhpRef::new(Value::Null, &mut crate::gc::Collector::new());
            let mut v = Value::arr(PhpArray::from_list(vec![Value::Int(1), Value::Ref(r.clone())]));
            for _ in 0..100 {
                v = Value::arr(PhpArray::from_list(vec![v]));
            }
            r.set(v.clone());
            (r, v)
        };
        let ((r1, a), (r2, b)) = (deep_cycle(), deep_cycle());
        assert_eq!(compare(&a, &b), Err(NestingError));
        assert_eq!(loose_equals(&a, &a), Ok(true));
        drop((a, b));
        unlink(r1);
        unlink(r2);
    }

    #[test]
    #[cfg_attr(miri, ignore = "a hundred thousand nested frames take hours under Miri")]
    fn deep_arrays_compare_until_the_depth_limit() {
        // Each level of the comparison is a native frame (more of them in
        // a debug build than the test thread's stack holds).
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(deep_arrays)
            .unwrap()
            .join()
            .unwrap();
    }

    fn deep_arrays() {
        let nest = |depth: usize| {
            let mut v = Value::Int(7);
            for _ in 0..depth {
                v = Value::arr(PhpArray::from_list(vec![v]));
            }
            v
        };
        let (a, b) = (nest(MAX_COMPARE_DEPTH), nest(MAX_COMPARE_DEPTH));
        assert_eq!(loose_equals(&a, &b), Ok(true));
        assert_eq!(identical(&a, &b), Ok(true));
        let (c, d) = (nest(MAX_COMPARE_DEPTH + 1), nest(MAX_COMPARE_DEPTH + 1));
        assert_eq!(compare(&c, &d), Err(NestingError));
        assert_eq!(identical(&c, &d), Err(NestingError));
    }
}
