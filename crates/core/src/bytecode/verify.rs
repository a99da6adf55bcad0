//! The bytecode verifier: what the VM relies on without checking at run
//! time, checked once when a function is finished. Every operand the
//! instruction table declares (`Op::operands`) must be inside the
//! function's register window or constant pool, every jump target inside
//! the code, every constant-kind operand a constant, every loop bottom's
//! `back` must lead to its target; the code must end with a return, and a
//! fused loop bottom must be followed by its loop's entry test (it skips
//! that test when it does not jump).

use std::fmt;

use super::Op;

/// Why a function's code is not something the VM may run.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyError {
    /// The instruction at fault (the code's length for a missing return).
    pub pc: usize,
    pub what: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "instruction {}: {}", self.pc, self.what)
    }
}

impl std::error::Error for VerifyError {}

/// Checks `code` for a window of `num_regs` registers and a pool of
/// `num_consts` constants (see the module docs).
pub fn verify(code: &[Op], num_regs: usize, num_consts: usize, num_caches: u16) -> Result<(), VerifyError> {
    let len = code.len();
    let fail = |pc: usize, what: String| Err(VerifyError { pc, what });
    if !matches!(code.last(), Some(Op::Return { .. })) {
        return fail(len, "the code must end with a return".into());
    }
    for (pc, op) in code.iter().enumerate() {
        if let Op::IncJmpLt { .. } | Op::IncJmpLe { .. } | Op::DecJmpGt { .. } | Op::DecJmpGe { .. } = op.generic() {
            if !matches!(
                code.get(pc + 1).map(|op| op.generic()),
                Some(Op::JmpLt { .. } | Op::JmpLe { .. })
            ) {
                return fail(pc, "a fused loop bottom must be followed by its entry test".into());
            }
        }
        if let Some(t) = op.target() {
            if t as usize >= len {
                return fail(pc, format!("jump target {t} outside the code ({len} instructions)"));
            }
            if let Some(back) = op.back() {
                if (t as usize) > pc || usize::from(back) != (pc - t as usize) * std::mem::size_of::<Op>() {
                    return fail(
                        pc,
                        format!("a loop bottom's distance back ({back} bytes) must lead to its target {t}"),
                    );
                }
            }
        }
        if let Some((_, &mut c)) = op.clone().cache_mut() {
            if c != super::NO_CACHE && c >= num_caches {
                return fail(pc, format!("cache slot {c} outside the function's {num_caches}"));
            }
        }
        let mut bad = None;
        op.constant_operands(|k| {
            if !k.is_const() {
                bad.get_or_insert_with(|| format!("a register where {op:?} needs a constant"));
            }
        });
        let (mut regs, mut srcs) = (Vec::new(), Vec::new());
        op.operands(|r, n| regs.push((r, n)), |s| srcs.push(s));
        if let Op::New { dst, .. } = op {
            // The constructor's call registers above the object.
            regs.push((*dst, 4));
        }
        for (r, n) in regs {
            if r.idx() + n > num_regs {
                bad.get_or_insert_with(|| {
                    format!("register {} (+{n}) outside the window of {num_regs} in {op:?}", r.idx())
                });
            }
        }
        for s in srcs {
            let (limit, what) = if s.is_const() {
                (num_consts, "constant")
            } else {
                (num_regs, "register")
            };
            if s.index() >= limit {
                bad.get_or_insert_with(|| format!("{what} {} outside its bounds ({limit}) in {op:?}", s.index()));
            }
        }
        if let Some(what) = bad {
            return fail(pc, what);
        }
    }
    Ok(())
}

/// Checks that every `LOAD_ARRAY` names one of `arrays`, and that each
/// literal's keys and values are constants of the pool (`consts`) of the
/// kinds the VM builds it from, its nested literals listed before it (so
/// building one ends).
pub fn verify_literals(
    code: &[Op],
    arrays: &[super::ArrayLiteral],
    consts: &[crate::Value],
) -> Result<(), VerifyError> {
    use super::LiteralValue;
    use crate::Value;
    for (pc, op) in code.iter().enumerate() {
        if let Op::LoadArray { lit, .. } = op {
            if usize::from(*lit) >= arrays.len() {
                return Err(VerifyError {
                    pc,
                    what: format!("array literal {lit} outside the function's {}", arrays.len()),
                });
            }
        }
    }
    for (i, a) in arrays.iter().enumerate() {
        let fail = |what: &str| {
            Err(VerifyError {
                pc: code.len(),
                what: format!("array literal {i}: {what}"),
            })
        };
        for item in a.items.iter() {
            if let Some(k) = item.key {
                if !matches!(consts.get(usize::from(k)), Some(Value::Int(_) | Value::Str(_))) {
                    return fail("a key that is not an int or string constant");
                }
            }
            match item.value {
                LiteralValue::Const(c) if usize::from(c) >= consts.len() => return fail("a value outside the pool"),
                LiteralValue::Array(n) if usize::from(n) >= i => return fail("a nested literal not listed before it"),
                _ => {}
            }
        }
    }
    Ok(())
}
