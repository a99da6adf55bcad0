//! PHP 8's operators on values: arithmetic with int overflow to float,
//! numeric strings, string concatenation, bitwise operators, comparisons,
//! increment and decrement, casts.
//!
//! Operands arrive dereferenced (never a reference, never `Undef`): the
//! run loop resolves those first, with their warnings.

use std::rc::Rc;

use minizts_core::bytecode::{BinOp, CastKind, IncDec};
use minizts_core::numfmt::{self, Number};
use minizts_core::value::{compare, identical, loose_equals, ToStringIssue};
use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::error::{deprecated, error, throw, type_error, warning, VmResult};

/// `a <op> b`.
pub fn binary<G: Globals>(g: G, op: BinOp, a: &Value, b: &Value) -> VmResult<Value> {
    Ok(match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow => return arith(g, op, a, b),
        BinOp::Concat => return concat(g, a, b),
        BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => return bitwise(g, op, a, b),
        BinOp::Eq => Value::Bool(loose_equals(a, b)?),
        BinOp::NotEq => Value::Bool(!loose_equals(a, b)?),
        BinOp::Identical => Value::Bool(identical(a, b)?),
        BinOp::NotIdentical => Value::Bool(!identical(a, b)?),
        BinOp::Lt => Value::Bool(compare(a, b)? < 0),
        BinOp::Le => Value::Bool(compare(a, b)? <= 0),
        BinOp::Spaceship => Value::Int(compare(a, b)? as i64),
    })
}

fn unsupported<T>(op: BinOp, a: &Value, b: &Value) -> VmResult<T> {
    type_error(format!(
        "Unsupported operand types: {} {} {}",
        crate::types::type_name(a),
        op.symbol(),
        crate::types::type_name(b)
    ))
}

/// The number an operand is, warning for leading-numeric strings.
fn number<G: Globals>(g: G, v: &Value) -> Option<Number> {
    match v.to_number() {
        Ok((n, true)) => Some(n),
        Ok((n, false)) => {
            warning(g, "A non-numeric value encountered");
            Some(n)
        }
        Err(()) => None,
    }
}

/// Arithmetic: `+ - * / % **`.
pub fn arith<G: Globals>(g: G, op: BinOp, a: &Value, b: &Value) -> VmResult<Value> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return int_arith(op, *x, *y);
    }
    if let (Value::Arr(x), Value::Arr(y)) = (a, b) {
        if op == BinOp::Add {
            return Ok(Value::Arr(array_union(x, y)));
        }
        return unsupported(op, a, b);
    }
    if matches!(a, Value::Arr(_) | Value::Closure(_)) || matches!(b, Value::Arr(_) | Value::Closure(_)) {
        return unsupported(op, a, b);
    }
    if op == BinOp::Mod {
        let x = int_operand(g, a)?;
        let y = int_operand(g, b)?;
        return int_arith(op, x, y);
    }
    let (Some(x), Some(y)) = (number(g, a), number(g, b)) else {
        return unsupported(op, a, b);
    };
    match (x, y) {
        (Number::Int(x), Number::Int(y)) => int_arith(op, x, y),
        _ => float_arith(op, x.to_f64(), y.to_f64()),
    }
}

fn int_arith(op: BinOp, x: i64, y: i64) -> VmResult<Value> {
    Ok(match op {
        BinOp::Add => x.checked_add(y).map_or(Value::Float(x as f64 + y as f64), Value::Int),
        BinOp::Sub => x.checked_sub(y).map_or(Value::Float(x as f64 - y as f64), Value::Int),
        BinOp::Mul => x.checked_mul(y).map_or(Value::Float(x as f64 * y as f64), Value::Int),
        BinOp::Div => {
            if y == 0 {
                return throw("DivisionByZeroError", "Division by zero");
            }
            // `checked_rem` first: `i64::MIN % -1` overflows (PHP gives a
            // float for `PHP_INT_MIN / -1`).
            if x.checked_rem(y) == Some(0) && !(x == i64::MIN && y == -1) {
                Value::Int(x / y)
            } else {
                Value::Float(x as f64 / y as f64)
            }
        }
        BinOp::Mod => {
            if y == 0 {
                return throw("DivisionByZeroError", "Modulo by zero");
            }
            if y == -1 {
                Value::Int(0)
            } else {
                Value::Int(x % y)
            }
        }
        BinOp::Pow => int_pow(x, y),
        _ => unreachable!("not arithmetic: {op:?}"),
    })
}

fn int_pow(base: i64, exp: i64) -> Value {
    if exp < 0 {
        return Value::Float((base as f64).powf(exp as f64));
    }
    let mut result: i64 = 1;
    let mut b = base;
    let mut e = exp;
    loop {
        if e & 1 == 1 {
            match result.checked_mul(b) {
                Some(r) => result = r,
                None => return Value::Float((base as f64).powf(exp as f64)),
            }
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        match b.checked_mul(b) {
            Some(r) => b = r,
            None => return Value::Float((base as f64).powf(exp as f64)),
        }
    }
    Value::Int(result)
}

fn float_arith(op: BinOp, x: f64, y: f64) -> VmResult<Value> {
    Ok(Value::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return throw("DivisionByZeroError", "Division by zero");
            }
            x / y
        }
        BinOp::Pow => x.powf(y),
        _ => unreachable!("not float arithmetic: {op:?}"),
    }))
}

/// `$a + $b` on arrays: keys of `$a`, then keys only `$b` has.
fn array_union(x: &Rc<PhpArray>, y: &Rc<PhpArray>) -> Rc<PhpArray> {
    if y.is_empty() {
        return x.clone();
    }
    let mut out = x.clone();
    let target = Rc::make_mut(&mut out);
    for (k, v) in y.iter() {
        let key = k.to_key();
        if !target.contains_key(&key) {
            target.insert(key, v.clone());
        }
    }
    out
}

/// An operand where PHP wants an int (`%`, shifts, bitwise operators,
/// string offsets): floats with a fraction are deprecated (PHP 8.1).
pub fn int_operand<G: Globals>(g: G, v: &Value) -> VmResult<i64> {
    match v {
        Value::Int(n) => Ok(*n),
        Value::Float(f) => Ok(float_to_int_checked(g, *f)),
        Value::Null | Value::Undef => Ok(0),
        Value::Bool(b) => Ok(*b as i64),
        Value::Str(s) => match v.to_number() {
            Ok((Number::Int(n), whole)) => {
                if !whole {
                    warning(g, "A non-numeric value encountered");
                }
                Ok(n)
            }
            Ok((Number::Float(f), whole)) => {
                if !whole {
                    warning(g, "A non-numeric value encountered");
                }
                if f.is_finite() && f.fract() != 0.0 {
                    deprecated(
                        g,
                        &format!(
                            "Implicit conversion from float-string \"{}\" to int loses precision",
                            String::from_utf8_lossy(s)
                        ),
                    );
                }
                Ok(numfmt::float_to_int(f))
            }
            Err(()) => type_error(format!("Unsupported operand types: string % {}", "int")),
        },
        _ => type_error(format!("Unsupported operand types: {} % int", v.type_name())),
    }
}

/// A float used as an int, with PHP 8.1's deprecation for a lost fraction.
pub fn float_to_int_checked<G: Globals>(g: G, f: f64) -> i64 {
    if f.is_finite() && f.fract() != 0.0 {
        deprecated(
            g,
            &format!(
                "Implicit conversion from float {} to int loses precision",
                numfmt::php_float_repr(f)
            ),
        );
    }
    numfmt::float_to_int(f)
}

fn bitwise<G: Globals>(g: G, op: BinOp, a: &Value, b: &Value) -> VmResult<Value> {
    if let (Value::Str(x), Value::Str(y)) = (a, b) {
        if matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor) {
            return Ok(Value::Str(string_bitwise(op, x, y)));
        }
    }
    if matches!(a, Value::Arr(_) | Value::Closure(_)) || matches!(b, Value::Arr(_) | Value::Closure(_)) {
        return unsupported(op, a, b);
    }
    let check = |v: &Value| -> VmResult<()> {
        if let Value::Str(_) = v {
            if v.to_number().is_err() {
                return unsupported(op, a, b);
            }
        }
        Ok(())
    };
    check(a)?;
    check(b)?;
    let x = int_operand(g, a)?;
    let y = int_operand(g, b)?;
    Ok(Value::Int(match op {
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::Shl | BinOp::Shr => {
            if y < 0 {
                return throw("ArithmeticError", "Bit shift by negative number");
            }
            if op == BinOp::Shl {
                if y >= 64 {
                    0
                } else {
                    x.wrapping_shl(y as u32)
                }
            } else if y >= 64 {
                if x < 0 {
                    -1
                } else {
                    0
                }
            } else {
                x >> y
            }
        }
        _ => unreachable!("not bitwise: {op:?}"),
    }))
}

fn string_bitwise(op: BinOp, x: &[u8], y: &[u8]) -> PhpStr {
    let out: Vec<u8> = match op {
        BinOp::BitOr => {
            let (long, short) = if x.len() >= y.len() { (x, y) } else { (y, x) };
            let mut v = long.to_vec();
            for (i, c) in short.iter().enumerate() {
                v[i] |= c;
            }
            v
        }
        BinOp::BitAnd => x.iter().zip(y).map(|(a, b)| a & b).collect(),
        _ => x.iter().zip(y).map(|(a, b)| a ^ b).collect(),
    };
    PhpStr::new(out)
}

/// `~v`
pub fn bit_not(v: &Value) -> VmResult<Value> {
    match v {
        Value::Int(n) => Ok(Value::Int(!n)),
        Value::Float(f) => Ok(Value::Int(!numfmt::float_to_int(*f))),
        Value::Str(s) => Ok(Value::Str(PhpStr::new(s.iter().map(|c| !c).collect()))),
        _ => type_error(format!("Cannot perform bitwise not on {}", v.type_name())),
    }
}

/// `-v`
pub fn negate<G: Globals>(g: G, v: &Value) -> VmResult<Value> {
    match v {
        Value::Int(n) => Ok(n.checked_neg().map_or(Value::Float(-(*n as f64)), Value::Int)),
        Value::Float(f) => Ok(Value::Float(-f)),
        _ => arith(g, BinOp::Mul, v, &Value::Int(-1)).map_err(|e| match *e {
            crate::error::VmError::Uncaught { class: "TypeError", .. } => Box::new(crate::error::VmError::Uncaught {
                class: "TypeError",
                message: format!("Unsupported operand types: {} * int", v.type_name()),
                at: None,
                trace: Vec::new(),
            }),
            other => Box::new(other),
        }),
    }
}

/// `+v`
pub fn plus<G: Globals>(g: G, v: &Value) -> VmResult<Value> {
    match v {
        Value::Int(_) | Value::Float(_) => Ok(v.clone()),
        _ => arith(g, BinOp::Mul, v, &Value::Int(1)),
    }
}

/// The string form of a value for `.`, echo and string parameters.
pub fn to_str<G: Globals>(g: G, v: &Value) -> VmResult<PhpStr> {
    let precision = eg!(g).settings.precision;
    match crate::dtoa::with(g, |d| v.to_php_str_with(d, precision)) {
        Ok(s) => Ok(s),
        Err(ToStringIssue::Array) => {
            warning(g, "Array to string conversion");
            Ok(PhpStr::from("Array"))
        }
        Err(ToStringIssue::Object) => object_to_str(g, v),
    }
}

/// An object as a string: its `__toString()` (PHP's `zend_std_cast_object_tostring`).
#[cold]
pub fn object_to_str<G: Globals>(g: G, v: &Value) -> VmResult<PhpStr> {
    match v {
        Value::Ref(r) => object_to_str(g, &r.get()),
        Value::Obj(o) => match o.class.magic.to_string.clone() {
            Some(m) => match crate::call::call_method(g, &m, Some(o.clone()), o.class.id, Vec::new())? {
                Value::Str(s) => Ok(s),
                _ => error(format!(
                    "{}::__toString(): Return value must be of type string, none returned",
                    o.class.name
                )),
            },
            None => error(format!(
                "Object of class {} could not be converted to string",
                o.class.name
            )),
        },
        _ => error("Object of class Closure could not be converted to string"),
    }
}

/// Appends the string form of `v` to `out`.
pub fn write_str<G: Globals>(g: G, out: &mut Vec<u8>, v: &Value) -> VmResult<()> {
    let precision = eg!(g).settings.precision;
    match crate::dtoa::with(g, |d| v.write_string_with(d, out, precision)) {
        Ok(()) => Ok(()),
        Err(ToStringIssue::Array) => {
            warning(g, "Array to string conversion");
            Ok(())
        }
        Err(ToStringIssue::Object) => {
            let s = object_to_str(g, v)?;
            out.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
}

/// `a . b`
pub fn concat<G: Globals>(g: G, a: &Value, b: &Value) -> VmResult<Value> {
    let mut out = match (a, b) {
        (Value::Str(x), Value::Str(y)) => crate::limits::string_with_capacity(g, x.len() + y.len())?,
        _ => Vec::new(),
    };
    write_str(g, &mut out, a)?;
    write_str(g, &mut out, b)?;
    Ok(Value::Str(PhpStr::new(out)))
}

/// `$s .= v` on a string held in `slot`: appends in place when the
/// string is not shared.
pub fn concat_assign<G: Globals>(g: G, slot: &mut Value, v: &Value) -> VmResult<()> {
    if let Value::Str(s) = slot {
        if let Value::Str(t) = v {
            if s.len() + t.len() > crate::limits::SMALL_STRING {
                crate::limits::grow_string(g, s.make_mut(), t.len())?;
            }
        }
        let buf = s.make_mut();
        return write_str(g, buf, v);
    }
    let r = concat(g, slot, v)?;
    *slot = r;
    Ok(())
}

/// `++`/`--` on a value in place.
pub fn inc_dec<G: Globals>(g: G, slot: &mut Value, kind: IncDec) -> VmResult<()> {
    let inc = kind.is_inc();
    let new = match &*slot {
        Value::Int(n) => {
            let r = if inc { n.checked_add(1) } else { n.checked_sub(1) };
            r.map_or_else(|| Value::Float(*n as f64 + if inc { 1.0 } else { -1.0 }), Value::Int)
        }
        Value::Float(f) => Value::Float(if inc { f + 1.0 } else { f - 1.0 }),
        Value::Null | Value::Undef => {
            if inc {
                Value::Int(1)
            } else {
                Value::Null
            }
        }
        Value::Bool(_) => return Ok(()),
        Value::Str(s) => {
            if s.is_empty() {
                if inc {
                    Value::str("1")
                } else {
                    Value::Int(-1)
                }
            } else if let Some(n) = numfmt::is_numeric_str(s) {
                match n {
                    Number::Int(n) => {
                        let r = if inc { n.checked_add(1) } else { n.checked_sub(1) };
                        r.map_or_else(|| Value::Float(n as f64 + if inc { 1.0 } else { -1.0 }), Value::Int)
                    }
                    Number::Float(f) => Value::Float(if inc { f + 1.0 } else { f - 1.0 }),
                }
            } else if inc {
                Value::Str(PhpStr::new(numfmt::str_increment(s)))
            } else {
                return Ok(());
            }
        }
        Value::Arr(_) | Value::Closure(_) => {
            let what = if inc { "increment" } else { "decrement" };
            return type_error(format!("Cannot {what} {}", slot.type_name()));
        }
        // PHP 8.2 leaves an object as it is.
        Value::Obj(_) => return Ok(()),
        Value::Ref(_) | Value::IterVal(..) | Value::IterRef(_) => {
            let _ = g;
            return Ok(());
        }
    };
    *slot = new;
    Ok(())
}

/// `(kind) v`
pub fn cast<G: Globals>(g: G, v: &Value, kind: CastKind) -> VmResult<Value> {
    if let Value::Obj(o) = v {
        if matches!(kind, CastKind::Int | CastKind::Float) {
            let to = if kind == CastKind::Int { "int" } else { "float" };
            warning(
                g,
                &format!("Object of class {} could not be converted to {to}", o.class.name),
            );
        }
    }
    Ok(match kind {
        CastKind::Int => Value::Int(v.to_int()),
        CastKind::Float => Value::Float(v.to_float()),
        CastKind::Bool => Value::Bool(v.to_bool()),
        CastKind::String => Value::Str(to_str(g, v)?),
        CastKind::Array => match v {
            Value::Arr(_) => v.clone(),
            Value::Null | Value::Undef => Value::empty_array(),
            Value::Obj(o) => Value::arr(crate::objects::mangled_props(g, o)),
            other => Value::arr(PhpArray::from_list(vec![other.clone()])),
        },
        CastKind::Object => match v {
            Value::Obj(_) | Value::Closure(_) => v.clone(),
            other => {
                let class = crate::class::find(g, b"stdClass")?;
                let o = crate::objects::instantiate(g, &class)?;
                let props = match other {
                    Value::Arr(a) => (**a).clone(),
                    Value::Null | Value::Undef => PhpArray::new(),
                    scalar => {
                        let mut a = PhpArray::new();
                        a.insert(minizts_core::Key::from_bytes(b"scalar"), scalar.clone());
                        a
                    }
                };
                if !props.is_empty() {
                    *o.dynamic.borrow_mut() = Some(props);
                }
                Value::Obj(o)
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_pow_overflows_to_float() {
        assert!(matches!(int_pow(2, 10), Value::Int(1024)));
        assert!(matches!(int_pow(2, 63), Value::Float(_)));
        assert!(matches!(int_pow(-2, 63), Value::Int(i64::MIN)));
        assert!(matches!(int_pow(2, -1), Value::Float(f) if f == 0.5));
    }

    #[test]
    fn string_bitwise_lengths() {
        assert_eq!(&*string_bitwise(BinOp::BitOr, b"ab", b"c"), b"cb");
        assert_eq!(&*string_bitwise(BinOp::BitAnd, b"ab", b"c").to_vec(), &[b'a' & b'c']);
    }
}
