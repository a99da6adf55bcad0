//! The numeric fast paths, written once: int and float arithmetic,
//! comparisons and truth tests on operands that need no conversion, no
//! warning and no error. Each gives `None` when it does not apply (an
//! operand of another type, an int overflow, a division by zero); the run
//! loop then takes the instruction's general path (`slow.rs`, through
//! `ops`), which gives the same result for every case these handle. PHP's
//! specialised handlers (`ZEND_ADD_SPEC_*`, `ZEND_IS_SMALLER_SPEC_*`) cover
//! the same cases. The arithmetic ones are macros (see below), used by
//! every instruction that does arithmetic: `+ - * / %`, the bit operators,
//! `op=` on a variable and on an array element. With them, the other value
//! operations the loop does in place on the same terms: `===`, casts, and
//! an array literal's keyed elements.

use std::rc::Rc;

use minizts_core::bytecode::{BinOp, CastKind};
use minizts_core::Value;

/// Both operands as floats when at least one is a float and the other an
/// int or a float.
#[inline(always)]
fn floats(a: &Value, b: &Value) -> Option<(f64, f64)> {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => Some((*x, *y)),
        (Value::Int(x), Value::Float(y)) => Some((*x as f64, *y)),
        (Value::Float(x), Value::Int(y)) => Some((*x, *y as f64)),
        _ => None,
    }
}

// The arithmetic fast paths are macros, not functions returning a
// `Value`: each result is written where it is made, by `$w!($at, value)`
// (the run loop's `put!` for a register, `put_elem!` for an array
// element), so an int result and a float result never meet in one
// `Value` (which LLVM can only build in memory, the two payloads living
// in different register classes). `$none` runs when the fast path does
// not apply (the run loop's `slow!()`).

/// `a + b`, `a - b`, `a * b` (`$checked` the int operation, `$op` the
/// float one).
macro_rules! arith {
    ($w:ident, $at:expr, $a:expr, $b:expr, $checked:ident, $op:tt, $none:expr) => {
        match ($a, $b) {
            (Value::Int(x), Value::Int(y)) => match x.$checked(*y) {
                Some(n) => $w!($at, Value::Int(n)),
                None => $none,
            },
            (Value::Float(x), Value::Float(y)) => $w!($at, Value::Float(*x $op *y)),
            (Value::Int(x), Value::Float(y)) => $w!($at, Value::Float(*x as f64 $op *y)),
            (Value::Float(x), Value::Int(y)) => $w!($at, Value::Float(*x $op *y as f64)),
            _ => $none,
        }
    };
}

/// `a / b`: an int when both are ints and the division is exact, as in
/// PHP (`i64::MIN / -1` does not fit: the float); a division by zero is
/// the general path's error.
macro_rules! div {
    ($w:ident, $at:expr, $a:expr, $b:expr, $none:expr) => {
        match ($a, $b) {
            (Value::Int(x), Value::Int(y)) if *y != 0 => match x.checked_rem(*y) {
                Some(0) => $w!($at, Value::Int(*x / *y)),
                _ => $w!($at, Value::Float(*x as f64 / *y as f64)),
            },
            (a, b) => match $crate::exec::num::floats_for_div(a, b) {
                Some(r) => $w!($at, Value::Float(r)),
                None => $none,
            },
        }
    };
}

/// `a % b` on ints (`%` converts anything else to an int, which may warn:
/// the general path's); `x % -1` is 0, a modulo by zero the general
/// path's error.
macro_rules! rem {
    ($w:ident, $at:expr, $a:expr, $b:expr, $none:expr) => {
        match ($a, $b) {
            (Value::Int(x), Value::Int(y)) if *y != 0 => $w!($at, Value::Int(x.wrapping_rem(*y))),
            _ => $none,
        }
    };
}

/// The int bit operators (`<< >> & | ^`): shifts by 0..63 only (negative
/// ones throw, wider ones saturate: the general path's).
macro_rules! bits {
    ($w:ident, $at:expr, $op:expr, $a:expr, $b:expr, $none:expr) => {
        match ($op, $a, $b) {
            (BinOp::Shl, Value::Int(x), Value::Int(y)) if (0..64).contains(y) => {
                $w!($at, Value::Int(x.wrapping_shl(*y as u32)))
            }
            (BinOp::Shr, Value::Int(x), Value::Int(y)) if (0..64).contains(y) => $w!($at, Value::Int(*x >> *y)),
            (BinOp::BitAnd, Value::Int(x), Value::Int(y)) => $w!($at, Value::Int(*x & *y)),
            (BinOp::BitOr, Value::Int(x), Value::Int(y)) => $w!($at, Value::Int(*x | *y)),
            (BinOp::BitXor, Value::Int(x), Value::Int(y)) => $w!($at, Value::Int(*x ^ *y)),
            _ => $none,
        }
    };
}

/// `a <op> b` for every binary operator with a numeric fast path (the
/// others: `$none`).
macro_rules! binary {
    ($w:ident, $at:expr, $op:expr, $a:expr, $b:expr, $none:expr) => {
        match $op {
            BinOp::Add => arith!($w, $at, $a, $b, checked_add, +, $none),
            BinOp::Sub => arith!($w, $at, $a, $b, checked_sub, -, $none),
            BinOp::Mul => arith!($w, $at, $a, $b, checked_mul, *, $none),
            BinOp::Div => div!($w, $at, $a, $b, $none),
            BinOp::Mod => rem!($w, $at, $a, $b, $none),
            BinOp::Spaceship => match $crate::exec::num::spaceship($a, $b) {
                Some(c) => $w!($at, Value::Int(c)),
                None => $none,
            },
            op => bits!($w, $at, op, $a, $b, $none),
        }
    };
}

/// `a <op> b` when an operand is a reference (a `global` variable, a
/// by-reference parameter) to a number and the other a number or such a
/// reference: the arithmetic fast paths once more, behind the reference,
/// as PHP's handlers dereference their operands on their slower path.
/// `None` when neither is a reference or the fast path does not apply.
#[inline(never)]
pub(crate) fn through_refs(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    if !matches!(a, Value::Ref(_)) && !matches!(b, Value::Ref(_)) {
        return None;
    }
    // SAFETY: no mutable borrow of a reference is held between the run
    // loop's instructions, and these borrows end with this call.
    let (a, b) = unsafe { (deref(a)?, deref(b)?) };
    macro_rules! some {
        ($at:expr, $v:expr) => {
            Some($v)
        };
    }
    binary!(some, (), op, a, b, None)
}

/// The value behind a reference, or the value itself.
///
/// # Safety
/// As for [`minizts_core::PhpRef::peek`].
#[inline(always)]
unsafe fn deref(v: &Value) -> Option<&Value> {
    match v {
        // SAFETY: forwarded to the caller.
        Value::Ref(r) => unsafe { r.peek() },
        v => Some(v),
    }
}

/// The float quotient for `div!` when an operand is a float and the
/// divisor is not zero.
#[inline(always)]
pub(crate) fn floats_for_div(a: &Value, b: &Value) -> Option<f64> {
    match floats(a, b) {
        Some((x, y)) if y != 0.0 => Some(x / y),
        _ => None,
    }
}

/// `a < b` on numbers (an int against a float compared as floats, as
/// PHP 8 does).
#[inline(always)]
pub(crate) fn less(a: &Value, b: &Value) -> Option<bool> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Some(x < y);
    }
    floats(a, b).map(|(x, y)| x < y)
}

/// `a <=> b` on numbers (PHP's three-way comparison: a float NAN on
/// either side gives 1).
#[inline(always)]
pub(crate) fn spaceship(a: &Value, b: &Value) -> Option<i64> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Some(x.cmp(y) as i64);
    }
    floats(a, b).map(|(x, y)| {
        if x == y {
            0
        } else if x < y {
            -1
        } else {
            1
        }
    })
}

/// `a <= b` on numbers.
#[inline(always)]
pub(crate) fn less_eq(a: &Value, b: &Value) -> Option<bool> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Some(x <= y);
    }
    floats(a, b).map(|(x, y)| x <= y)
}

/// `a == b` on numbers.
#[inline(always)]
pub(crate) fn equal(a: &Value, b: &Value) -> Option<bool> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Some(x == y);
    }
    floats(a, b).map(|(x, y)| x == y)
}

/// `a === b` when the answer needs no look inside: numbers, bools and
/// nulls, and any two values of different types (arrays and strings of
/// the same type are the general path's).
#[inline(always)]
pub(crate) fn identical(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x == y),
        (Value::Float(x), Value::Float(y)) => Some(x == y),
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::Null, Value::Null) => Some(true),
        (Value::Ref(_) | Value::Undef, _) | (_, Value::Ref(_) | Value::Undef) => None,
        _ if std::mem::discriminant(a) != std::mem::discriminant(b) => Some(false),
        (Value::Str(x), Value::Str(y)) => Some(x.as_bytes() == y.as_bytes()),
        (Value::Obj(x), Value::Obj(y)) => Some(minizts_core::Obj::ptr_eq(x, y)),
        (Value::Closure(x), Value::Closure(y)) => Some(Rc::ptr_eq(x, y)),
        // Two arrays: the same one is identical to itself; others are
        // compared element by element on the general path.
        (Value::Arr(x), Value::Arr(y)) if Rc::ptr_eq(x, y) => Some(true),
        _ => None,
    }
}

/// The truth value of any value but an unset variable (which warns) or a
/// reference (followed by the general path): `Value::to_bool`'s.
#[inline(always)]
pub(crate) fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Int(n) => Some(*n != 0),
        Value::Null => Some(false),
        Value::Float(x) => Some(*x != 0.0),
        Value::Str(s) => Some(!(s.is_empty() || s.as_bytes() == b"0")),
        Value::Arr(a) => Some(!a.is_empty()),
        Value::Obj(_) | Value::Closure(_) => Some(true),
        _ => None,
    }
}

/// `(int)`, `(float)`, `(bool)`, `(string)` and `(array)` of a value that
/// needs neither a warning nor a conversion that allocates beyond the
/// result: `None` for an object (which may warn or convert itself), an
/// unset variable, a reference, and a `(string)` of anything but a string
/// or an int.
#[inline(never)]
pub(crate) fn cast_plain(v: &Value, kind: CastKind) -> Option<Value> {
    if matches!(v, Value::Ref(_) | Value::Undef | Value::Obj(_) | Value::Closure(_)) {
        return None;
    }
    Some(match (kind, v) {
        (CastKind::Int, _) => Value::Int(v.to_int()),
        (CastKind::Float, _) => Value::Float(v.to_float()),
        (CastKind::Bool, _) => Value::Bool(v.to_bool()),
        (CastKind::String, Value::Str(_)) | (CastKind::Array, Value::Arr(_)) => v.clone(),
        (CastKind::String, Value::Int(n)) => Value::Str(minizts_core::PhpStr::new(n.to_string().into_bytes())),
        _ => return None,
    })
}

/// `[…, key => v]`'s insertion into the array being built in `arr`, for
/// an int key or a string key and a plain value; `false`, with nothing
/// done, for anything else (a key to convert, a reference, an unset
/// variable).
#[inline(never)]
pub(crate) fn array_set_plain(arr: &mut Value, key: &Value, v: &Value) -> bool {
    if matches!(v, Value::Ref(_) | Value::Undef) {
        return false;
    }
    let key = match key {
        Value::Int(n) => minizts_core::Key::Int(*n),
        Value::Str(s) => minizts_core::Key::from_php_str(s.clone()),
        _ => return false,
    };
    let Some(a) = arr.array_mut() else { return false };
    a.insert(key, v.clone());
    true
}
