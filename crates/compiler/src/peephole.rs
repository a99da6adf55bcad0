//! Rewrites of a finished function's code that shorten paths without
//! changing what they do: jumps to a return become the return, and a
//! temporary written only to be returned is returned directly.
//!
//! The ternary in `return $n < 2 ? 1 : f($n - 1);` compiles to
//! `MOVE t = 1; JMP end; ... end: RETURN t`; after these rewrites its
//! short arm is a single `RETURN 1` (two fewer dispatches on every leaf
//! call of a recursive function).
//!
//! Last, the arithmetic and compare-and-branch instructions the loops
//! spend their time in get forms specialised by operand kind.

use minizts_core::bytecode::{Op, Src};

/// Applies the rewrites to `code` (with its `lines`); `cvs` is the number
/// of CV registers (registers at or above it are temporaries).
pub(crate) fn shorten_returns(code: &mut [Op], lines: &mut [u32], cvs: usize) {
    for pc in 0..code.len() {
        // A jump to a return returns: the same operand is read, in the
        // same frame, and nothing else happens on the way. The line moves
        // with it, so a warning the return raises names the same line.
        if let Op::Jmp { target } = code[pc] {
            if let Op::Return { src } = code[target as usize] {
                code[pc] = Op::Return { src };
                lines[pc] = lines[target as usize];
            }
        }
    }
    for pc in 0..code.len().saturating_sub(1) {
        // `MOVE t = x; RETURN t` returns `x`: the temporary dies with the
        // frame, and both read `x` the same way (references followed, an
        // undefined variable warned about). The `RETURN t` stays for any
        // jump that lands on it.
        if let (Op::Move { dst, src }, Op::Return { src: ret }) = (code[pc], code[pc + 1]) {
            if dst.idx() >= cvs && ret == Src::reg(dst) {
                code[pc] = Op::Return { src };
            }
        }
    }
}

/// Gives `Move`, `Add`, `Sub`, `Mul`, `JmpLt`, `JmpLe` and the fused loop
/// bottoms their operand-specialised forms (`MoveC`, `AddRR`, `MulCR`,
/// `JmpLtRC`, `IncJmpLtC`, ...;
/// see [`Op::specialised`]), the loop bottoms with the distance back to
/// their target ([`Op::with_back`]). Last, because the other rewrites and
/// the loop fusion look for the general forms, and nothing moves after it.
pub(crate) fn specialise(code: &mut [Op]) {
    if minizts_core::bytecode::generic_only() {
        return;
    }
    for (pc, op) in code.iter_mut().enumerate() {
        *op = op.specialised().with_back(pc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use minizts_core::bytecode::Reg;

    fn konst(i: u16) -> Src {
        Src::konst(i)
    }

    #[test]
    fn a_jump_to_a_return_returns_and_takes_its_line() {
        let t = Reg::new(1);
        let mut code = vec![
            Op::Move { dst: t, src: konst(0) },
            Op::Jmp { target: 3 },
            Op::Move { dst: t, src: konst(1) },
            Op::Return { src: Src::reg(t) },
        ];
        let mut lines = vec![1, 1, 2, 3];
        shorten_returns(&mut code, &mut lines, 1);
        assert_eq!(code[0], Op::Return { src: konst(0) });
        assert_eq!(code[1], Op::Return { src: Src::reg(t) });
        assert_eq!(lines[1], 3);
        assert_eq!(code[2], Op::Return { src: konst(1) });
        assert_eq!(code[3], Op::Return { src: Src::reg(t) });
    }

    #[test]
    fn a_variable_written_before_its_return_is_left_alone() {
        // `$x = 5; return $x;` with $x a CV: the write stays (the rule is
        // for temporaries only).
        let x = Reg::new(0);
        let mut code = vec![Op::Move { dst: x, src: konst(0) }, Op::Return { src: Src::reg(x) }];
        let before = code.clone();
        shorten_returns(&mut code, &mut [1, 1], 1);
        assert_eq!(code, before);
    }

    #[test]
    fn a_move_of_another_register_is_left_alone() {
        let mut code = vec![
            Op::Move {
                dst: Reg::new(2),
                src: konst(0),
            },
            Op::Return {
                src: Src::reg(Reg::new(1)),
            },
        ];
        let before = code.clone();
        shorten_returns(&mut code, &mut [1, 1], 1);
        assert_eq!(code, before);
    }

    #[test]
    fn operand_kinds_pick_the_specialised_form_and_it_means_the_general_one() {
        let (a, b, d) = (Reg::new(0), Reg::new(1), Reg::new(2));
        let (r, k) = (Src::reg, konst);
        let cases = [
            (Op::Move { dst: d, src: k(3) }, Op::MoveC { dst: d, src: konst(3) }),
            (
                Op::Add {
                    dst: d,
                    a: r(a),
                    b: r(b),
                },
                Op::AddRR { dst: d, a, b },
            ),
            (
                Op::Add {
                    dst: d,
                    a: r(a),
                    b: k(3),
                },
                Op::AddRC { dst: d, a, b: konst(3) },
            ),
            (
                Op::Sub {
                    dst: d,
                    a: r(a),
                    b: r(b),
                },
                Op::SubRR { dst: d, a, b },
            ),
            (
                Op::Sub {
                    dst: d,
                    a: r(a),
                    b: k(3),
                },
                Op::SubRC { dst: d, a, b: konst(3) },
            ),
            (
                Op::Mul {
                    dst: d,
                    a: r(a),
                    b: r(a),
                },
                Op::MulRR { dst: d, a, b: a },
            ),
            (
                Op::Mul {
                    dst: d,
                    a: r(a),
                    b: k(3),
                },
                Op::MulRC { dst: d, a, b: konst(3) },
            ),
            (
                Op::Mul {
                    dst: d,
                    a: k(3),
                    b: r(a),
                },
                Op::MulCR {
                    dst: d,
                    a: konst(3),
                    b: a,
                },
            ),
            (
                Op::JmpLt {
                    a: r(a),
                    b: r(b),
                    if_true: true,
                    target: 7,
                },
                Op::JmpLtRR {
                    a,
                    b,
                    if_true: true,
                    target: 7,
                },
            ),
            (
                Op::JmpLt {
                    a: r(a),
                    b: k(3),
                    if_true: false,
                    target: 7,
                },
                Op::JmpLtRC {
                    a,
                    b: konst(3),
                    if_true: false,
                    target: 7,
                },
            ),
            (
                Op::JmpLt {
                    a: k(3),
                    b: r(b),
                    if_true: true,
                    target: 7,
                },
                Op::JmpLtCR {
                    a: konst(3),
                    b,
                    if_true: true,
                    target: 7,
                },
            ),
            (
                Op::JmpLe {
                    a: r(a),
                    b: r(b),
                    if_true: true,
                    target: 7,
                },
                Op::JmpLeRR {
                    a,
                    b,
                    if_true: true,
                    target: 7,
                },
            ),
            (
                Op::JmpLe {
                    a: r(a),
                    b: k(3),
                    if_true: true,
                    target: 7,
                },
                Op::JmpLeRC {
                    a,
                    b: konst(3),
                    if_true: true,
                    target: 7,
                },
            ),
            (
                Op::IncJmpLt {
                    var: a,
                    limit: r(b),
                    target: 7,
                },
                Op::IncJmpLtR {
                    var: a,
                    limit: b,
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::IncJmpLt {
                    var: a,
                    limit: k(3),
                    target: 7,
                },
                Op::IncJmpLtC {
                    var: a,
                    limit: k(3),
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::IncJmpLe {
                    var: a,
                    limit: r(b),
                    target: 7,
                },
                Op::IncJmpLeR {
                    var: a,
                    limit: b,
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::IncJmpLe {
                    var: a,
                    limit: k(3),
                    target: 7,
                },
                Op::IncJmpLeC {
                    var: a,
                    limit: k(3),
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::DecJmpGt {
                    var: a,
                    limit: r(b),
                    target: 7,
                },
                Op::DecJmpGtR {
                    var: a,
                    limit: b,
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::DecJmpGt {
                    var: a,
                    limit: k(3),
                    target: 7,
                },
                Op::DecJmpGtC {
                    var: a,
                    limit: k(3),
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::DecJmpGe {
                    var: a,
                    limit: r(b),
                    target: 7,
                },
                Op::DecJmpGeR {
                    var: a,
                    limit: b,
                    target: 7,
                    back: 24,
                },
            ),
            (
                Op::DecJmpGe {
                    var: a,
                    limit: k(3),
                    target: 7,
                },
                Op::DecJmpGeC {
                    var: a,
                    limit: k(3),
                    target: 7,
                    back: 24,
                },
            ),
        ];
        // At index 9, so a loop bottom's target 7 is 2 instructions (24
        // bytes) behind it.
        for (general, special) in cases {
            let mut code = [Op::Nop {}; 10];
            code[9] = general;
            specialise(&mut code);
            assert_eq!(code[9], special);
            assert_eq!(special.generic(), general);
            assert_eq!(special.target(), general.target());
        }
        // A loop bottom whose target is not behind it, or too far behind
        // for `back`, keeps its general form.
        let bottom = |target| Op::IncJmpLt {
            var: a,
            limit: k(3),
            target,
        };
        let mut code = vec![Op::Nop {}; 6000];
        code[3] = bottom(7);
        code[5999] = bottom(0);
        code[5998] = bottom(5000);
        specialise(&mut code);
        assert_eq!((code[3], code[5999]), (bottom(7), bottom(0)));
        assert_eq!(code[5998].back(), Some(998 * 12));
        // Forms with no specialisation stay general: a constant first
        // operand (but for `JmpLt`), two constants, other instructions.
        let kept = [
            Op::Add {
                dst: d,
                a: k(1),
                b: r(b),
            },
            Op::Sub {
                dst: d,
                a: k(1),
                b: k(2),
            },
            Op::JmpLe {
                a: k(1),
                b: r(b),
                if_true: true,
                target: 7,
            },
            Op::Move { dst: d, src: r(a) },
        ];
        for op in kept {
            let mut code = [op];
            specialise(&mut code);
            assert_eq!(code[0], op);
        }
    }
}
