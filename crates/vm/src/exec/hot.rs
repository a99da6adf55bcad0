//! The hot loop: a second, small run loop for code whose fast paths call
//! nothing (moves, int and float arithmetic, int bit operations, numeric
//! compare-and-branch, increments, int-key element reads and scalar
//! element writes, fused loop bottoms; a new array element, the one
//! exception, is made by the array's out-of-line `entry`), and for bound
//! calls and returns between such code (`CallDirect` pushes the frame the
//! main loop would; `Return` pops it when the window and the value own
//! nothing but interned strings). `Op::runs_in_hot_loop` lists them for
//! the compiler, which marks the loops, and the functions, made only of
//! them (`mark_hot_code`).
//!
//! Why a second loop: the main run loop is one large function with calls
//! in most of its handlers, so LLVM keeps its hot state (the instruction
//! pointer, the register window) in stack slots and reloads it in every
//! handler, and any change anywhere in it can move that allocation
//! (docs/performance.md, "Where the remaining gap is"). This function
//! makes no calls, so its few locals stay in registers whatever the main
//! loop does. The main loop enters it on a taken backward jump to a marked
//! loop and at the start of a marked function, and takes over again at
//! the first instruction it does not handle, or whose fast path does not
//! apply (a non-number operand, an overflow, a result register holding a
//! value that needs dropping, a pending interrupt, a full frame vector or
//! stack chunk).
//!
//! The contract with the main loop: every instruction here either
//! completes, with exactly the effect the main loop's handler would have,
//! or is left untouched, and the returned pointer is the next instruction
//! to execute, in the function of the frame then on top of EG's frames.
//! So the main loop can always carry on at the returned instruction with
//! its own, general handler, after reloading its locals from that frame
//! when the hot loop called or returned.

use std::rc::Rc;
use std::sync::atomic::Ordering;

use minizts_core::bytecode::{BinOp, Function, Op, Reg, Src, Target};
use minizts_core::{Key, Value};
use minizts_globals::{eg, EgAccess, Frame, Globals};

/// Where the hot loop stopped.
pub(super) struct Left {
    /// The first instruction not executed.
    pub at: *const Op,
    /// The register window of its frame, the one now on top of EG's frame
    /// stack. When this is the window the hot loop was entered with and
    /// `at` is in the same code, it is the same function on the same
    /// window, so the main loop's locals still hold; otherwise calls or
    /// returns were made and the main loop reloads them from the frame.
    /// (Returned rather than a flag kept up to date in the loop, which
    /// would hold one more register in every arm.)
    pub base: *mut Value,
}

/// Runs from `ip` while the instructions have fast paths that apply;
/// returns where it stopped.
///
/// # Safety
/// `ip` points into `code`, the code of the running function (the top
/// frame's), whose register window starts at `base` and whose constant
/// pool starts at `consts`; `fns` is the running script's functions. The
/// same invariants as the main loop's (`exec::run`): every register and
/// constant operand is inside the window and the pool, every jump target
/// inside the code, every bound call's function one of `fns`.
#[inline(never)]
pub(super) unsafe fn run<G: Globals>(
    g: G,
    mut ip: *const Op,
    mut base: *mut Value,
    mut code: *const Op,
    mut consts: *const Value,
    fns: *const Function,
) -> Left {
    // Register `r` (its raw form is its offset in 8-byte units).
    #[collapse_debuginfo(yes)]
    macro_rules! rv {
        ($r:expr) => {{
            let r: Reg = $r.to_owned();
            // SAFETY: registers are inside the window (see above).
            unsafe { &*base.byte_add(r.raw() * 8) }
        }};
    }
    // Register `r`, to write in place. SAFETY (all uses): as for `rv!`,
    // and no other reference to the register is live while it is used.
    #[collapse_debuginfo(yes)]
    macro_rules! slot {
        ($r:expr) => {{
            let r: Reg = $r.to_owned();
            // SAFETY: the register is in the window, and no other
            // reference to it is live while this one is used (see above).
            unsafe { &mut *base.byte_add(r.raw() * 8) }
        }};
    }
    // Constant `k` (raw form twice the index plus one: see `Src`).
    #[collapse_debuginfo(yes)]
    macro_rules! kv {
        ($k:expr) => {{
            let k: Src = $k.to_owned();
            // SAFETY: constants are inside the pool (see above).
            unsafe { &*consts.byte_add(k.raw() * 8 - 8) }
        }};
    }
    #[collapse_debuginfo(yes)]
    macro_rules! raw {
        ($s:expr) => {{
            let s: Src = $s.to_owned();
            match s.as_reg() {
                None => kv!(s),
                Some(r) => rv!(r),
            }
        }};
    }
    // Hands the current instruction to the main loop.
    #[collapse_debuginfo(yes)]
    macro_rules! leave {
        () => {
            return Left { at: ip, base }
        };
    }
    // Goes on to the next instruction.
    #[collapse_debuginfo(yes)]
    macro_rules! next {
        () => {{
            // SAFETY: every function's code ends with a return, which
            // does not go on to the next instruction, so it exists.
            ip = unsafe { ip.add(1) };
            continue;
        }};
    }
    // Writes scalar `v` to register `r` if what it holds needs no drop
    // (otherwise the main loop does the write), then goes on.
    #[collapse_debuginfo(yes)]
    macro_rules! put {
        ($r:expr, $v:expr) => {{
            let r: Reg = $r.to_owned();
            // SAFETY: as for `rv!`.
            let slot: *mut Value = unsafe { base.byte_add(r.raw() * 8) };
            // SAFETY: `slot` is a live register.
            if !unsafe { (*slot).is_scalar() } {
                leave!();
            }
            // SAFETY: a scalar owns nothing; overwriting it leaks nothing.
            // The value is computed before the write.
            unsafe { slot.write($v) };
            next!();
        }};
    }
    // Jumps to `t`; a backward jump gives the main loop a pending
    // interrupt (it checks after every return from here).
    #[collapse_debuginfo(yes)]
    macro_rules! jump {
        ($t:expr) => {{
            let t: Target = $t.to_owned();
            // SAFETY: jump targets are inside the code.
            let to = unsafe { code.add(t as usize) };
            // (`ip` is still the jump itself, so `while (true) {}`, a
            // jump to itself, is a backward one.)
            if to <= ip && eg!(g).interrupt.pending.load(Ordering::Relaxed) {
                return Left { at: to, base };
            }
            ip = to;
            continue;
        }};
    }
    #[collapse_debuginfo(yes)]
    macro_rules! arith {
        ($dst:expr, $va:expr, $vb:expr, $checked:ident, $op:tt) => {{
            match ($va, $vb) {
                (Value::Int(x), Value::Int(y)) => match x.$checked(*y) {
                    Some(n) => put!($dst, Value::Int(n)),
                    None => leave!(),
                },
                (Value::Float(x), Value::Float(y)) => put!($dst, Value::Float(*x $op *y)),
                (Value::Int(x), Value::Float(y)) => put!($dst, Value::Float(*x as f64 $op *y)),
                (Value::Float(x), Value::Int(y)) => put!($dst, Value::Float(*x $op *y as f64)),
                _ => leave!(),
            }
        }};
    }
    #[collapse_debuginfo(yes)]
    macro_rules! jmp_cmp {
        ($va:expr, $vb:expr, $op:tt, $if_true:expr, $target:expr) => {{
            let r = match ($va, $vb) {
                (Value::Int(x), Value::Int(y)) => x $op y,
                (Value::Float(x), Value::Float(y)) => x $op y,
                (Value::Int(x), Value::Float(y)) => (*x as f64) $op *y,
                (Value::Float(x), Value::Int(y)) => *x $op (*y as f64),
                _ => leave!(),
            };
            if r == *$if_true {
                jump!($target);
            }
            next!();
        }};
    }
    // A fused loop bottom: steps int `var` by one and jumps `back` bytes
    // back, to its target, while `test(var, limit)` holds, else skips the
    // entry test that follows it.
    #[collapse_debuginfo(yes)]
    macro_rules! loop_bottom {
        ($var:expr, $lv:expr, $back:expr, $step:ident, $test:expr) => {{
            let test: fn(i64, i64) -> bool = $test;
            let m = match $lv {
                Value::Int(m) => *m,
                _ => leave!(),
            };
            let Value::Int(n) = slot!($var) else { leave!() };
            let Some(x) = n.$step(1) else { leave!() };
            *n = x;
            if test(x, m) {
                // SAFETY: `back` leads to the target, inside the code
                // (checked when the function was finished).
                let to = unsafe { ip.byte_sub(usize::from(*$back)) };
                if eg!(g).interrupt.pending.load(Ordering::Relaxed) {
                    return Left { at: to, base };
                }
                ip = to;
                continue;
            }
            // SAFETY: the entry test follows, and the code ends with a
            // return after it.
            ip = unsafe { ip.add(2) };
            continue;
        }};
    }

    loop {
        // SAFETY: `ip` is inside the code (see above). The operands are
        // read by reference, in the arm that uses them.
        let op = unsafe { &*ip };
        match op {
            Op::Nop => next!(),
            Op::Move { dst, src } => {
                let v = raw!(src);
                if !v.is_plain_copy() {
                    leave!();
                }
                // SAFETY: the value owns nothing, and the copy is taken
                // before the register is written.
                put!(dst, std::ptr::read(v))
            }
            Op::MoveC { dst, k } => {
                let v = kv!(k);
                // SAFETY: as for `Move` (a constant is a plain copy).
                put!(dst, std::ptr::read(v))
            }
            // `$x = v` at top level (where variables may be references:
            // a register holding one is not a scalar, so `put!` leaves).
            Op::Assign { var, src } => {
                let v = raw!(src);
                if !v.is_plain_copy() {
                    leave!();
                }
                // SAFETY: as for `Move`.
                put!(var, std::ptr::read(v))
            }
            Op::Add { dst, a, b } => arith!(dst, raw!(a), raw!(b), checked_add, +),
            Op::Sub { dst, a, b } => arith!(dst, raw!(a), raw!(b), checked_sub, -),
            Op::Mul { dst, a, b } => arith!(dst, raw!(a), raw!(b), checked_mul, *),
            Op::AddRR { dst, a, b } => arith!(dst, rv!(a), rv!(b), checked_add, +),
            Op::AddRC { dst, a, k } => arith!(dst, rv!(a), kv!(k), checked_add, +),
            Op::SubRR { dst, a, b } => arith!(dst, rv!(a), rv!(b), checked_sub, -),
            Op::SubRC { dst, a, k } => arith!(dst, rv!(a), kv!(k), checked_sub, -),
            Op::MulRR { dst, a, b } => arith!(dst, rv!(a), rv!(b), checked_mul, *),
            Op::MulRC { dst, a, k } => arith!(dst, rv!(a), kv!(k), checked_mul, *),
            Op::MulCR { dst, k, b } => arith!(dst, kv!(k), rv!(b), checked_mul, *),
            // (`checked_*` rather than a compare with the limit: an
            // increment and an overflow test, not a 10-byte constant, a
            // decrement and a compare.)
            Op::IncVar { var } => match slot!(var) {
                Value::Int(n) => match n.checked_add(1) {
                    Some(x) => {
                        *n = x;
                        next!()
                    }
                    None => leave!(),
                },
                _ => leave!(),
            },
            Op::DecVar { var } => match slot!(var) {
                Value::Int(n) => match n.checked_sub(1) {
                    Some(x) => {
                        *n = x;
                        next!()
                    }
                    None => leave!(),
                },
                _ => leave!(),
            },
            Op::IncDecVar { var, kind, dst } => {
                let Value::Int(n) = *rv!(var) else { leave!() };
                let Some(x) = (if kind.is_inc() {
                    n.checked_add(1)
                } else {
                    n.checked_sub(1)
                }) else {
                    leave!()
                };
                // The result register is checked before the variable is
                // written (all or nothing); it may be the variable itself,
                // which then ends with the result, as in the main loop.
                if !dst.is_none() && !rv!(dst).is_scalar() {
                    leave!();
                }
                if let Value::Int(n) = slot!(var) {
                    *n = x;
                }
                if dst.is_none() {
                    next!();
                }
                put!(dst, Value::Int(if kind.is_pre() { x } else { n }))
            }
            Op::AssignOp { op, var, src } => {
                let (x, y) = (rv!(var), raw!(src));
                // Each result is written where it is made: a `Value` built
                // by a `match` and written once went through a stack slot.
                match (op, x, y) {
                    (BinOp::Add, Value::Int(x), Value::Int(y)) => match x.checked_add(*y) {
                        Some(n) => put!(*var, Value::Int(n)),
                        None => leave!(),
                    },
                    (BinOp::Sub, Value::Int(x), Value::Int(y)) => match x.checked_sub(*y) {
                        Some(n) => put!(*var, Value::Int(n)),
                        None => leave!(),
                    },
                    (BinOp::Mul, Value::Int(x), Value::Int(y)) => match x.checked_mul(*y) {
                        Some(n) => put!(*var, Value::Int(n)),
                        None => leave!(),
                    },
                    (
                        BinOp::Add | BinOp::Sub | BinOp::Mul,
                        Value::Float(_) | Value::Int(_),
                        Value::Float(_) | Value::Int(_),
                    ) => {
                        let (a, b) = (as_f64(x), as_f64(y));
                        let r = match op {
                            BinOp::Add => a + b,
                            BinOp::Sub => a - b,
                            _ => a * b,
                        };
                        put!(*var, Value::Float(r))
                    }
                    _ => leave!(),
                }
            }
            Op::Binary { op, dst, a, b } => {
                let (Value::Int(x), Value::Int(y)) = (raw!(a), raw!(b)) else {
                    leave!()
                };
                let (x, y) = (*x, *y);
                let n = match op {
                    // PHP: `%` by zero throws; `x % -1` is 0 (no overflow).
                    BinOp::Mod if y != 0 => x.wrapping_rem(y),
                    // Shifts by 0..63 (negative ones throw, wider ones
                    // saturate: the main loop's).
                    BinOp::Shl if (0..64).contains(&y) => x.wrapping_shl(y as u32),
                    BinOp::Shr if (0..64).contains(&y) => x >> y,
                    BinOp::BitAnd => x & y,
                    BinOp::BitOr => x | y,
                    BinOp::BitXor => x ^ y,
                    _ => leave!(),
                };
                put!(dst, Value::Int(n))
            }
            Op::FetchDim { dst, base: b, key } => {
                let Value::Int(k) = raw!(key) else { leave!() };
                let found = match raw!(b) {
                    Value::Arr(a) => a.get_int(*k),
                    // SAFETY: nothing borrows the reference mutably while
                    // this instruction reads it.
                    Value::Ref(r) => match unsafe { r.peek() } {
                        Some(Value::Arr(a)) => a.get_int(*k),
                        _ => None,
                    },
                    _ => None,
                };
                match found {
                    // SAFETY: the value owns nothing, and the copy is
                    // taken before the register is written.
                    Some(v) if v.is_plain_copy() => put!(dst, std::ptr::read(v)),
                    _ => leave!(),
                }
            }
            Op::FetchDim2 { dst, base: b, k1, k2 } => {
                let (Value::Arr(outer), Value::Int(i), Value::Int(j)) = (raw!(b), raw!(k1), raw!(k2)) else {
                    leave!()
                };
                match outer.get_int(*i) {
                    Some(Value::Arr(inner)) => match inner.get_int(*j) {
                        // SAFETY: as for `FetchDim`.
                        Some(v) if v.is_plain_copy() => put!(dst, std::ptr::read(v)),
                        _ => leave!(),
                    },
                    _ => leave!(),
                }
            }
            Op::AssignDim1 { var, key, src } => {
                // An element of an unshared array that holds a scalar or
                // is new, written with a value that owns nothing.
                let (Value::Int(k), v) = (raw!(key), raw!(src)) else {
                    leave!()
                };
                if !v.is_plain_copy() {
                    leave!();
                }
                // SAFETY: as for `Move`; the source is a register or a
                // constant, read before the variable is borrowed.
                let (k, v) = (*k, unsafe { std::ptr::read(v) });
                let done = match slot!(var) {
                    Value::Arr(a) => overwrite_scalar_element(a, k, v),
                    // A by-reference array parameter (heapsort's `&$ra`).
                    Value::Ref(r) => match r.try_borrow_mut().as_deref_mut() {
                        Ok(Value::Arr(a)) => overwrite_scalar_element(a, k, v),
                        _ => false,
                    },
                    _ => false,
                };
                if !done {
                    leave!();
                }
                next!()
            }
            Op::AssignDimOp1 { op, var, key, src } => {
                let (BinOp::Add | BinOp::Sub, Value::Int(k), Value::Int(n)) = (op, raw!(key), raw!(src)) else {
                    leave!()
                };
                let (k, n) = (*k, *n);
                // (The operands were copied out above.)
                let elem = match slot!(var) {
                    Value::Arr(a) => Rc::get_mut(a).and_then(|a| a.get_int_mut(k)),
                    _ => None,
                };
                let Some(Value::Int(x)) = elem else { leave!() };
                let r = if *op == BinOp::Add {
                    x.checked_add(n)
                } else {
                    x.checked_sub(n)
                };
                let Some(r) = r else { leave!() };
                *x = r;
                next!()
            }
            Op::JmpIf { cond, target } | Op::JmpIfNot { cond, target } => {
                let t = match raw!(cond) {
                    Value::Bool(b) => *b,
                    Value::Int(n) => *n != 0,
                    Value::Null => false,
                    _ => leave!(),
                };
                if t == matches!(op, Op::JmpIf { .. }) {
                    jump!(target);
                }
                next!()
            }
            Op::JmpEq { a, b, if_true, target } => {
                let (Value::Int(x), Value::Int(y)) = (raw!(a), raw!(b)) else {
                    leave!()
                };
                if (x == y) == *if_true {
                    jump!(target);
                }
                next!()
            }
            Op::Jmp { target } | Op::JmpBack { target } => jump!(target),
            Op::JmpLt { a, b, if_true, target } => jmp_cmp!(raw!(a), raw!(b), <, if_true, target),
            Op::JmpLtRR { a, b, if_true, target } => jmp_cmp!(rv!(a), rv!(b), <, if_true, target),
            Op::JmpLtRC { a, k, if_true, target } => jmp_cmp!(rv!(a), kv!(k), <, if_true, target),
            Op::JmpLtCR { k, b, if_true, target } => jmp_cmp!(kv!(k), rv!(b), <, if_true, target),
            Op::JmpLe { a, b, if_true, target } => jmp_cmp!(raw!(a), raw!(b), <=, if_true, target),
            Op::JmpLeRR { a, b, if_true, target } => jmp_cmp!(rv!(a), rv!(b), <=, if_true, target),
            Op::JmpLeRC { a, k, if_true, target } => jmp_cmp!(rv!(a), kv!(k), <=, if_true, target),
            Op::IncJmpLtR { var, limit, back, .. } => {
                loop_bottom!(var, rv!(limit), back, checked_add, |n, m| n < m)
            }
            Op::IncJmpLtC { var, limit, back, .. } => {
                loop_bottom!(var, kv!(limit), back, checked_add, |n, m| n < m)
            }
            Op::IncJmpLeR { var, limit, back, .. } => {
                loop_bottom!(var, rv!(limit), back, checked_add, |n, m| n <= m)
            }
            Op::IncJmpLeC { var, limit, back, .. } => {
                loop_bottom!(var, kv!(limit), back, checked_add, |n, m| n <= m)
            }
            Op::DecJmpGtR { var, limit, back, .. } => {
                loop_bottom!(var, rv!(limit), back, checked_sub, |n, m| m < n)
            }
            Op::DecJmpGtC { var, limit, back, .. } => {
                loop_bottom!(var, kv!(limit), back, checked_sub, |n, m| m < n)
            }
            Op::DecJmpGeR { var, limit, back, .. } => {
                loop_bottom!(var, rv!(limit), back, checked_sub, |n, m| m <= n)
            }
            Op::DecJmpGeC { var, limit, back, .. } => {
                loop_bottom!(var, kv!(limit), back, checked_sub, |n, m| m <= n)
            }
            // A bound call (the main loop's `enter!`), when the callee's
            // window fits in the stack chunk, the frame vector has room
            // and no interrupt is pending (the main loop checks at every
            // call). Its variables past the arguments are dead slots that
            // hold no counted value after a return; one that does (left by
            // something unusual) goes to the main loop, which drops it.
            Op::CallDirect {
                dst,
                args,
                argc,
                func: fid,
                ..
            } => {
                // SAFETY: until the arm ends (by `leave!` or `continue`),
                // nothing in it reaches EG but through `eg`: the guard is
                // named only because a closure could not leave the loop.
                let mut access = unsafe { EgAccess::new(g) };
                let eg = access.get();
                if eg.interrupt.pending.load(Ordering::Relaxed) {
                    leave!();
                }
                // SAFETY: `CallDirect` names one of the script's functions.
                let callee = unsafe { &*fns.add(*fid as usize) };
                let n = eg.frames.len();
                if n == eg.frames.capacity() {
                    leave!();
                }
                let frames = eg.frames.as_mut_ptr();
                // SAFETY: the running frame is the top one.
                let caller = unsafe { &mut *frames.add(n - 1) };
                // SAFETY: the argument registers are in the window.
                let at = unsafe { base.byte_add(args.raw() * 8) };
                let nregs = callee.num_regs as usize;
                if !eg.stack.reserve_in_chunk(caller.chunk, at, nregs) {
                    leave!();
                }
                let argc = *argc as usize;
                for i in argc..callee.num_cvs as usize {
                    // SAFETY: `at..at+nregs` is the window just reserved,
                    // past the caller's registers except the arguments.
                    let v = unsafe { &mut *at.add(i) };
                    if !v.is_scalar() {
                        leave!();
                    }
                    // SAFETY: a scalar owns nothing.
                    unsafe { std::ptr::write(v, Value::Undef) };
                }
                caller.pc = ip;
                // SAFETY: slot `n` is below the capacity (checked above)
                // and holds no frame; the length then covers it.
                unsafe {
                    frames.add(n).write(Frame {
                        func: *fid,
                        function: callee,
                        base: at,
                        chunk: caller.chunk,
                        pc: callee.code.as_ptr(),
                        ret: *dst,
                        argc: argc as u16,
                        closure: None,
                        native: false,
                    });
                    eg.frames.set_len(n + 1);
                }
                base = at;
                code = callee.code.as_ptr();
                consts = callee.consts.values().as_ptr();
                ip = code;
                continue;
            }
            // A return of a value that owns nothing from a frame a call in
            // bytecode pushed, whose window holds nothing but scalars and
            // interned strings, into a caller register that holds a scalar
            // (the main loop's `Return`, all or nothing: the checks come
            // before any write).
            Op::Return { src } => {
                let v = match src.as_reg() {
                    // A constant is a scalar or an interned string (the
                    // pool holds nothing else): a plain copy.
                    None => kv!(src),
                    Some(r) => {
                        let v = rv!(r);
                        if !v.is_plain_copy() {
                            leave!();
                        }
                        v
                    }
                };
                // SAFETY: the value owns nothing (a bit copy), taken before
                // the window is cleared.
                let v = unsafe { std::ptr::read(v) };
                // SAFETY: as in `CallDirect`: only `eg` reaches EG until the
                // arm ends.
                let mut access = unsafe { EgAccess::new(g) };
                let eg = access.get();
                let n = eg.frames.len();
                let frames = eg.frames.as_mut_ptr();
                // SAFETY: the running frame is the top one.
                let top = unsafe { &*frames.add(n - 1) };
                if top.native || top.closure.is_some() {
                    leave!();
                }
                // SAFETY: a frame that is not native has a caller below it
                // (a call in bytecode pushed it); its function pointer
                // points into the script's functions.
                let (caller, nregs) = unsafe { (&*frames.add(n - 2), (*top.function).num_regs as usize) };
                let ret = top.ret;
                // SAFETY: the caller's return register is in its window.
                let dst = (!ret.is_none()).then(|| unsafe { caller.base.byte_add(ret.raw() * 8) });
                // SAFETY: `d` is that live register.
                if dst.is_some_and(|d| !unsafe { (*d).is_scalar() }) {
                    leave!();
                }
                // SAFETY: `base..base+nregs` is the returning window, which
                // nothing else refers to.
                let window = unsafe { std::slice::from_raw_parts_mut(base, nregs) };
                // Scalars need nothing: one tight pass finds the first
                // register that holds anything else.
                if let Some(first) = window.iter().position(|v| !v.is_scalar()) {
                    let rest = &mut window[first..];
                    if !rest.iter().all(|v| v.is_scalar() || v.is_interned_str()) {
                        leave!();
                    }
                    for v in rest.iter_mut().filter(|v| !v.is_scalar()) {
                        // SAFETY: an interned string owns nothing (the main
                        // loop's `release_counted` clears it the same way).
                        unsafe { std::ptr::write(v, Value::Undef) };
                    }
                }
                // SAFETY: as for the main loop's `Return`: the frame owns
                // nothing (no closure), and its caller's saved instruction
                // is the call, followed by more code.
                unsafe {
                    eg.frames.set_len(n - 1);
                    let f = &*caller.function;
                    base = caller.base;
                    code = f.code.as_ptr();
                    consts = f.consts.values().as_ptr();
                    ip = caller.pc.add(1);
                    if let Some(d) = dst {
                        d.write(v);
                    }
                }
                continue;
            }
            // Every other kind, named rather than `_`: with a catch-all
            // arm LLVM checks the kind's range before the jump table on
            // every dispatch (the table then covers only some kinds);
            // with every kind named, the table covers them all and the
            // check goes, as in the main loop. A new instruction kind
            // must be placed here or given an arm.
            Op::AssignRef { .. }
            | Op::Concat { .. }
            | Op::Lt { .. }
            | Op::Le { .. }
            | Op::Eq { .. }
            | Op::Identical { .. }
            | Op::Not { .. }
            | Op::Neg { .. }
            | Op::Plus { .. }
            | Op::BitNot { .. }
            | Op::ToBool { .. }
            | Op::Cast { .. }
            | Op::Quiet { .. }
            | Op::IsSet { .. }
            | Op::UnsetVar { .. }
            | Op::FetchDimQuiet { .. }
            | Op::FetchDimList { .. }
            | Op::AssignDim { .. }
            | Op::AssignDimRef { .. }
            | Op::AssignDimOp { .. }
            | Op::IncDecDim { .. }
            | Op::UnsetDim { .. }
            | Op::MakeRef { .. }
            | Op::MakeRefDim { .. }
            | Op::NewArray { .. }
            | Op::ArrayPush { .. }
            | Op::ArraySet { .. }
            | Op::ArraySpread { .. }
            | Op::ConcatN { .. }
            | Op::JmpIfNotNull { .. }
            | Op::IncJmpLt { .. }
            | Op::IncJmpLe { .. }
            | Op::DecJmpGt { .. }
            | Op::DecJmpGe { .. }
            | Op::JmpIdentical { .. }
            | Op::CallUser { .. }
            | Op::CallBuiltin { .. }
            | Op::CallValue { .. }
            | Op::CallSpread { .. }
            | Op::SendVarEx { .. }
            | Op::JmpIfPassed { .. }
            | Op::DeclareFunction { .. }
            | Op::MakeClosure { .. }
            | Op::BindGlobal { .. }
            | Op::BindStatic { .. }
            | Op::InitStatic { .. }
            | Op::FetchConst { .. }
            | Op::DeclareConst { .. }
            | Op::FeReset { .. }
            | Op::FeResetRef { .. }
            | Op::FeResetRefFrom { .. }
            | Op::FeFetch { .. }
            | Op::FeFetchRef { .. }
            | Op::FeFree { .. }
            | Op::Echo { .. }
            | Op::Exit { .. }
            | Op::Silence { .. }
            | Op::Unsilence { .. } => leave!(),
        }
    }
}

/// A number operand as a float (the caller matched an int or a float).
#[inline(always)]
fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(n) => *n as f64,
        Value::Float(x) => *x,
        _ => unreachable!("a number"),
    }
}

/// `$a[k] = v` when `a` is unshared and its element `k` holds a scalar or
/// is new (so nothing is dropped), `v` owning nothing; `false`, with
/// nothing done, otherwise (a new element is only made when it is then
/// written).
#[inline(always)]
fn overwrite_scalar_element(a: &mut Rc<minizts_core::PhpArray>, k: i64, v: Value) -> bool {
    let Some(a) = Rc::get_mut(a) else { return false };
    // An existing element inline; a new one through `entry` (out of line).
    if let Some(e) = a.get_int_mut(k) {
        if !e.is_scalar() {
            return false;
        }
        // SAFETY: as below.
        unsafe { std::ptr::write(e, v) };
        return true;
    }
    match a.entry(Key::Int(k)).0 {
        e if e.is_scalar() => {
            // SAFETY: a scalar owns nothing, so overwriting it leaks
            // nothing; `v` owns nothing either.
            unsafe { std::ptr::write(e, v) };
            true
        }
        _ => false,
    }
}
