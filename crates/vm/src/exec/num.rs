//! The numeric fast paths, written once: int and float arithmetic,
//! comparisons and truth tests on operands that need no conversion, no
//! warning and no error. Each gives `None` when it does not apply (an
//! operand of another type, an int overflow, a division by zero); the run
//! loop then takes the instruction's general path (`slow.rs`, through
//! `ops`), which gives the same result for every case these handle. PHP's
//! specialised handlers (`ZEND_ADD_SPEC_*`, `ZEND_IS_SMALLER_SPEC_*`) cover
//! the same cases.

use minizts_core::bytecode::BinOp;
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

/// `a + b`
#[inline(always)]
pub(crate) fn add(a: &Value, b: &Value) -> Option<Value> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.checked_add(*y).map(Value::Int);
    }
    floats(a, b).map(|(x, y)| Value::Float(x + y))
}

/// `a - b`
#[inline(always)]
pub(crate) fn sub(a: &Value, b: &Value) -> Option<Value> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.checked_sub(*y).map(Value::Int);
    }
    floats(a, b).map(|(x, y)| Value::Float(x - y))
}

/// `a * b`
#[inline(always)]
pub(crate) fn mul(a: &Value, b: &Value) -> Option<Value> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.checked_mul(*y).map(Value::Int);
    }
    floats(a, b).map(|(x, y)| Value::Float(x * y))
}

/// `a / b`: an int when both are ints and the division is exact, as in
/// PHP; a division by zero is the general path's error.
#[inline(always)]
pub(crate) fn div(a: &Value, b: &Value) -> Option<Value> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        let (x, y) = (*x, *y);
        if y == 0 {
            return None;
        }
        // `i64::MIN / -1` does not fit an int: PHP gives the float.
        return Some(match x.checked_rem(y) {
            Some(0) => Value::Int(x / y),
            _ => Value::Float(x as f64 / y as f64),
        });
    }
    match floats(a, b) {
        Some((x, y)) if y != 0.0 => Some(Value::Float(x / y)),
        _ => None,
    }
}

/// `a % b` on ints (`%` converts anything else to an int, which may
/// warn: the general path's); `x % -1` is 0, a modulo by zero the general
/// path's error.
#[inline(always)]
pub(crate) fn rem(a: &Value, b: &Value) -> Option<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) if *y != 0 => Some(Value::Int(x.wrapping_rem(*y))),
        _ => None,
    }
}

/// `a <op> b` for the binary operators with a numeric fast path.
#[inline(always)]
pub(crate) fn binary(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    match op {
        BinOp::Add => add(a, b),
        BinOp::Sub => sub(a, b),
        BinOp::Mul => mul(a, b),
        BinOp::Div => div(a, b),
        BinOp::Mod => rem(a, b),
        BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            let (Value::Int(x), Value::Int(y)) = (a, b) else {
                return None;
            };
            let (x, y) = (*x, *y);
            Some(Value::Int(match op {
                // Shifts by 0..63 (negative ones throw, wider ones
                // saturate: the general path's).
                BinOp::Shl if (0..64).contains(&y) => x.wrapping_shl(y as u32),
                BinOp::Shr if (0..64).contains(&y) => x >> y,
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                _ => return None,
            }))
        }
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

/// `a === b` on scalars (values of different types are not identical;
/// strings and arrays are the general path's).
#[inline(always)]
pub(crate) fn identical(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x == y),
        (Value::Float(x), Value::Float(y)) => Some(x == y),
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::Null, Value::Null) => Some(true),
        _ if a.is_scalar() && b.is_scalar() && !matches!(a, Value::Undef) && !matches!(b, Value::Undef) => Some(false),
        _ => None,
    }
}

/// The truth value of a bool, an int, null or a float.
#[inline(always)]
pub(crate) fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Int(n) => Some(*n != 0),
        Value::Null => Some(false),
        Value::Float(x) => Some(*x != 0.0),
        _ => None,
    }
}
