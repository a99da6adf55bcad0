//! The run loop: one `match` over instructions, with the hot state (the
//! current function's code and constants, the register window, the
//! instruction index) in locals, as in Lua's `lvm.c`.
//!
//! Script-to-script calls do not recurse on the native stack: a call saves
//! the caller's position in its frame, pushes the callee's frame and
//! carries on in the same loop; a return pops and resumes the caller. The
//! loop returns when a frame marked `native` returns (the script's main
//! frame, or a callback a builtin is running).
//!
//! Loops and functions made only of instructions whose fast paths call
//! nothing (bound calls and returns included) run in a second, small loop
//! (`hot`), entered on a taken backward jump to such a loop or a call of
//! such a function; the hot loop hands back the first instruction it
//! cannot complete, in the frame then on top.
//!
//! Per-thread state is reached through the globals strategy at the points
//! PHP's VM reaches it: frames on call and return, the interrupt flag on
//! backward jumps and calls, function and constant lookups, the symbol
//! table, output, error state.

use std::rc::Rc;

use minizts_core::bytecode::{BinOp, Function, IncDec, Op, Reg, Src};
use minizts_core::value::{compare, identical, loose_equals, Closure, NestingError};
use minizts_core::{Key, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::executor::{CacheEntry, StackOverflow};
use minizts_globals::{eg, Globals};

use crate::call::{self, Callee};
use crate::dim::{self, ReadMode};
use crate::error::{error, fatal, locate, warning, VmError, VmResult};
use crate::{builtins, ops, output};

mod foreach;
mod hot;

/// A read operand: a register or constant as it is, or the value behind a
/// reference, or null for an unset variable (after its warning).
pub(crate) enum Operand<'a> {
    Plain(&'a Value),
    Guard(std::cell::Ref<'a, Value>),
    Owned(Value),
}

impl std::ops::Deref for Operand<'_> {
    type Target = Value;
    #[inline(always)]
    fn deref(&self) -> &Value {
        match self {
            Operand::Plain(v) => v,
            Operand::Guard(g) => g,
            Operand::Owned(v) => v,
        }
    }
}

/// Resolves an operand as stored: follows a reference, reads an unset
/// variable as null after PHP's warning.
#[inline(always)]
fn resolve<'a, G: Globals>(g: G, at: *const Op, v: &'a Value, s: Src) -> Operand<'a> {
    match v {
        Value::Ref(r) => Operand::Guard(r.borrow()),
        Value::Undef => {
            save_pc(g, at);
            undefined_variable(g, s.index());
            Operand::Owned(Value::Null)
        }
        v => Operand::Plain(v),
    }
}

/// Saves the executing instruction in the current frame (for messages
/// and stack traces).
#[inline]
fn save_pc<G: Globals>(g: G, at: *const Op) {
    if let Some(f) = eg!(g).frames.last_mut() {
        f.pc = at;
    }
}

/// Warns about reading variable `reg` of the running function while it is
/// unset. The name is looked up through the current frame, not passed in:
/// given the run loop's `func`, LLVM hoisted the address of its
/// `cv_names` to the loop head and spilled it at every pass (5
/// instructions on every dispatch that goes through the head).
#[cold]
#[inline(never)]
fn undefined_variable<G: Globals>(g: G, reg: usize) {
    let name = eg!(g, |eg| {
        let func = eg
            .frames
            .last()
            .and_then(|f| eg.script.as_ref()?.functions.get(f.func as usize));
        func.and_then(|f| f.cv_names.get(reg))
            .map_or_else(|| "?".into(), |n| n.to_string())
    });
    warning(g, &format!("Undefined variable ${name}"));
}

/// The VM's interrupt check, at backward jumps and calls.
#[inline(always)]
fn check_limits<G: Globals>(g: G) -> VmResult<()> {
    crate::limits::check(g)
}

/// Writes `v` to variable slot `slot` (through a reference if it is one).
#[inline]
pub(crate) fn assign_slot(slot: &mut Value, v: Value) -> VmResult<()> {
    match slot {
        Value::Ref(r) => match r.try_borrow_mut() {
            Ok(mut inner) => {
                *inner = v;
                Ok(())
            }
            Err(_) => fatal("minizts: a reference cycle was written through itself"),
        },
        _ => {
            slot.overwrite(v);
            Ok(())
        }
    }
}

/// `$var++` or `$var--` (as `kind`) on anything but an int that does not
/// overflow.
#[cold]
fn step_var_slow<G: Globals>(g: G, var: Reg, slot: &mut Value, kind: IncDec) -> VmResult<()> {
    if let Value::Undef = slot {
        undefined_variable(g, var.idx());
        *slot = Value::Null;
    }
    dim::inc_dec_slot(g, slot, kind)?.release();
    Ok(())
}

/// `a[n] = v` unless the element is a reference (then `v` comes back for
/// the general path, which writes through it).
#[inline(always)]
fn set_int_element(a: &mut PhpArray, n: i64, v: Value) -> Result<(), Value> {
    let (elem, _) = a.entry(Key::Int(n));
    if matches!(elem, Value::Ref(_)) {
        return Err(v);
    }
    elem.overwrite(v);
    Ok(())
}

/// `$a[$k] += $n` (or `-=`) with string key `k` and an int `n`, in place
/// when the variable holds an unshared array whose element is an int that
/// does not overflow; `false` (nothing done) otherwise. Out of line: the
/// run loop keeps the int-key case inline.
#[inline(never)]
fn add_to_str_element(var: &mut Value, op: BinOp, k: &PhpStr, n: i64) -> bool {
    let Value::Arr(a) = var else { return false };
    let Some(a) = Rc::get_mut(a) else { return false };
    let elem = match minizts_core::array::canonical_int(k) {
        Some(k) => a.get_int_mut(k),
        None => a.get_str_mut(k),
    };
    let Some(Value::Int(x)) = elem else { return false };
    let r = match op {
        BinOp::Add => x.checked_add(n),
        BinOp::Sub => x.checked_sub(n),
        _ => None,
    };
    match r {
        Some(r) => {
            *x = r;
            true
        }
        None => false,
    }
}

/// Makes room for more frames (the cold half of a call's frame push).
#[cold]
#[inline(never)]
fn grow_frames(frames: &mut Vec<minizts_globals::Frame>) {
    frames.reserve(1);
}

/// Overwrites a register that holds a counted value (the cold half of
/// `put!`).
#[cold]
#[inline(never)]
fn overwrite(slot: &mut Value, v: Value) {
    *slot = v;
}

/// Frees a builtin call's arguments (PHP frees them after the call).
#[inline(always)]
fn clear_args(args: &mut [Value]) {
    for v in args {
        if !v.is_scalar() {
            *v = Value::Undef;
        }
    }
}

/// Runs frames from the current top frame until a `native` frame returns;
/// returns its value. Errors come back located (file, line, trace).
pub fn execute<G: Globals>(g: G) -> VmResult<Value> {
    match run(g) {
        Ok(v) => Ok(v),
        Err(e) => Err(locate(g, e)),
    }
}

fn run<G: Globals>(g: G) -> VmResult<Value> {
    let script = eg!(g).script.clone().expect("a running script");
    let (mut func, mut base, start_pc) = eg!(g, |eg| {
        let frame = eg.frames.last().expect("a frame to run");
        let func = &script.functions[frame.func as usize];
        let start = func.index_of(frame.pc).expect("a frame starts inside its code");
        (func, frame.base, start)
    });
    // The end of the VM-stack chunk holding the current window (see
    // `VmStack`): read from the frame when a call needs it rather than
    // carried through the loop.
    #[collapse_debuginfo(yes)]
    macro_rules! chunk {
        () => {
            // The closure form: its guard ends inside `with_eg`, so the
            // value can be an argument of a call that reaches EG.
            eg!(g, |eg| eg.frames.last().expect("a frame").chunk)
        };
    }
    let mut code: &[Op] = &func.code;
    let mut consts: &[Value] = func.consts.values();

    // The next instruction, as a pointer (PHP's `opline`): cheaper to step
    // than an index. SAFETY (all uses): every function's code ends with a
    // `Return` and every jump target is inside its code (checked when the
    // compiler finishes a function), so `ip` never leaves the code.
    // SAFETY: `start_pc` is the frame's instruction, inside its code.
    let mut ip: *const Op = unsafe { code.as_ptr().add(start_pc) };
    // The instruction executing, as a pointer (saved in the frame for
    // messages, traces and returns).
    #[collapse_debuginfo(yes)]
    macro_rules! cur {
        () => {
            // SAFETY: `ip` is one past the executing instruction, in `code`.
            unsafe { ip.sub(1) }
        };
    }
    // Continues at instruction `t`.
    #[collapse_debuginfo(yes)]
    macro_rules! goto {
        ($t:expr) => {
            // SAFETY: jump targets are inside the code (see `ip`).
            ip = unsafe { code.as_ptr().add($t as usize) }
        };
    }
    // Register `r` of the current window. SAFETY (all uses): the compiler
    // only emits registers below the function's `num_regs`, and the window
    // `base..base+num_regs` is reserved on the VM stack (whose chunks never
    // move) for as long as the frame runs.
    #[collapse_debuginfo(yes)]
    macro_rules! reg {
        ($r:expr) => {{
            let r: Reg = $r;
            debug_assert!(r.idx() < func.num_regs as usize, "register {} out of window", r.idx());
            // `raw` is the register's offset in 8-byte units (see `Reg`).
            // SAFETY: the register is in the window (see above), and the
            // reference is used before anything else reaches it.
            unsafe { &mut *base.byte_add(r.raw() * 8) }
        }};
    }
    // Writes a register; dropping the old value is skipped for scalars,
    // which is most writes to temporaries.
    #[collapse_debuginfo(yes)]
    macro_rules! set {
        ($r:expr, $v:expr) => {{
            let v: Value = $v;
            let slot = reg!($r);
            if slot.is_scalar() {
                // SAFETY: a scalar owns nothing, so overwriting it without
                // dropping leaks nothing.
                unsafe { std::ptr::write(slot, v) };
            } else {
                *slot = v;
            }
        }};
    }
    // Writes a scalar result and goes on to the next instruction. Each
    // fast path writes its own tag and payload (a shared tail would
    // rebuild a whole `Value` through the stack); the old value is dropped
    // out of line, since a temporary almost always held a scalar. The
    // destination is reached by a raw pointer, not a `&mut`: the result
    // expression may read it (`$x = $x * 2` writes `$x` directly), and is
    // evaluated before the write.
    #[collapse_debuginfo(yes)]
    macro_rules! put {
        ($r:expr, $v:expr) => {{
            let r: Reg = $r;
            debug_assert!(r.idx() < func.num_regs as usize, "register {} out of window", r.idx());
            // SAFETY: as for `reg!`.
            let slot: *mut Value = unsafe { base.byte_add(r.raw() * 8) };
            // SAFETY: `slot` is a live register; a scalar owns nothing, so
            // overwriting it without dropping leaks nothing.
            if unsafe { (*slot).is_scalar() } {
                // SAFETY: as just said.
                unsafe { std::ptr::write(slot, $v) };
            } else {
                let v: Value = $v;
                // SAFETY: `slot` is a live register, and nothing else
                // refers to it once `v` is computed.
                overwrite(unsafe { &mut *slot }, v);
            }
            continue;
        }};
    }
    // Stores an element an array read found (`Some`) and goes on; a
    // reference element, or nothing found, falls through to the general
    // path. A value that owns nothing is copied bit for bit, straight into
    // the register, without a `Value` rebuilt through the stack.
    #[collapse_debuginfo(yes)]
    macro_rules! fetched {
        ($dst:expr, $found:expr) => {
            match $found {
                Some(v) if v.is_scalar() || v.is_interned_str() => {
                    // SAFETY: a value that owns nothing copies completely
                    // by its bits; the copy is taken before the register is
                    // written (it may hold the array read from).
                    let v = unsafe { std::ptr::read(v) };
                    put!($dst, v);
                }
                Some(v) if !matches!(v, Value::Ref(_)) => {
                    let v = v.clone();
                    set!($dst, v);
                    continue;
                }
                _ => {}
            }
        };
    }
    // `dst = a <op> b` for `+ - *`: int and float fast paths (PHP's
    // `ZEND_ADD_SPEC` handlers do the same four), anything else through
    // `ops::arith`. The operand-specialised forms pass the operands
    // already read (`@`), with their `Src`s for the general path.
    #[collapse_debuginfo(yes)]
    macro_rules! arith {
        ($dst:expr, $a:expr, $b:expr, $checked:ident, $op:tt, $binop:expr) => {
            arith!(@ $dst, raw!($a), raw!($b), $a, $b, $checked, $op, $binop)
        };
        (@ $dst:expr, $va:expr, $vb:expr, $a:expr, $b:expr, $checked:ident, $op:tt, $binop:expr) => {{
            match ($va, $vb) {
                (Value::Int(x), Value::Int(y)) => {
                    if let Some(n) = x.$checked(*y) {
                        put!($dst, Value::Int(n));
                    }
                }
                (Value::Float(x), Value::Float(y)) => put!($dst, Value::Float(*x $op *y)),
                (Value::Int(x), Value::Float(y)) => put!($dst, Value::Float(*x as f64 $op *y)),
                (Value::Float(x), Value::Int(y)) => put!($dst, Value::Float(*x $op *y as f64)),
                _ => {}
            }
            save_pc(g, cur!());
            let r = tri!(ops::arith(g, $binop, &opnd!($a), &opnd!($b)));
            set!($dst, r);
        }};
    }
    // `a < b`, `a <= b` on numbers (ints compared as floats against a
    // float, as PHP 8 does), or `None` for the general comparison.
    #[collapse_debuginfo(yes)]
    macro_rules! num_cmp {
        ($a:expr, $b:expr, $op:tt) => {
            num_cmp!(@ raw!($a), raw!($b), $op)
        };
        (@ $va:expr, $vb:expr, $op:tt) => {
            match ($va, $vb) {
                (Value::Int(x), Value::Int(y)) => Some(x $op y),
                (Value::Float(x), Value::Float(y)) => Some(x $op y),
                (Value::Int(x), Value::Float(y)) => Some((*x as f64) $op *y),
                (Value::Float(x), Value::Int(y)) => Some(*x $op (*y as f64)),
                _ => None,
            }
        };
    }
    // Register `r` as stored, shared (both operands of `$z * $z` are the
    // same register).
    #[collapse_debuginfo(yes)]
    macro_rules! rv {
        ($r:expr) => {{
            let r: Reg = $r;
            debug_assert!(r.idx() < func.num_regs as usize);
            // SAFETY: as for `reg!`.
            unsafe { &*base.byte_add(r.raw() * 8) }
        }};
    }
    // Constant operand `k` of the pool. Its raw form is twice the index
    // plus one (see `Src`), so the constant is 8 bytes before
    // `consts + raw * 8`: one addressing mode.
    #[collapse_debuginfo(yes)]
    macro_rules! kv {
        ($k:expr) => {{
            let k: Src = $k;
            debug_assert!(k.is_const() && k.index() < consts.len());
            // SAFETY: operands are checked against the pool when the
            // compiler finishes the function; `raw * 8 - 8` is the index
            // times the size of a `Value`.
            unsafe { &*consts.as_ptr().byte_add(k.raw() * 8 - 8) }
        }};
    }
    // `JMP_LT`/`JMP_LE` (as `op`) on operands `va`, `vb` as stored
    // (`Src`s `a`, `b`): numbers compared inline, anything else by PHP's
    // general comparison.
    #[collapse_debuginfo(yes)]
    macro_rules! jmp_cmp {
        ($va:expr, $vb:expr, $a:expr, $b:expr, $op:tt, $if_true:expr, $target:expr) => {{
            let r = match num_cmp!(@ $va, $vb, $op) {
                Some(r) => r,
                None => tri!(compare(&opnd!($a), &opnd!($b))) $op 0,
            };
            if r == $if_true {
                jump!($target);
            }
        }};
    }
    // An operand as stored (a reference or `Undef` unresolved).
    #[collapse_debuginfo(yes)]
    macro_rules! raw {
        ($s:expr) => {{
            let s: Src = $s;
            match s.as_reg() {
                None => kv!(s),
                Some(r) => rv!(r),
            }
        }};
    }
    // An operand resolved: references followed, unset variables warned
    // about and read as null.
    #[collapse_debuginfo(yes)]
    macro_rules! opnd {
        ($s:expr) => {
            resolve(g, cur!(), raw!($s), $s)
        };
    }
    // Propagates an error after saving where it happened.
    #[collapse_debuginfo(yes)]
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => {
                    save_pc(g, cur!());
                    return Err(e.into());
                }
            }
        };
    }
    // Switches the locals to the frame now on top of the stack.
    #[collapse_debuginfo(yes)]
    macro_rules! load_frame {
        () => {{
            let (f, b) = eg!(g, |eg| {
                let frame = eg.frames.last().expect("a frame");
                (frame.func, frame.base)
            });
            func = &script.functions[f as usize];
            base = b;
            code = &func.code;
            consts = func.consts.values();
        }};
    }
    // Runs the code at `t` (a loop body, or a function's start) in the
    // hot loop (`hot::run`), then carries on where it stopped, in the frame
    // then on top when it made calls or returns, after checking the
    // interrupt flag (the hot loop leaves when it is set).
    #[collapse_debuginfo(yes)]
    macro_rules! hot_loop {
        ($t:expr) => {{
            // SAFETY: `t` is in the running function's code, whose window
            // and pool these are (the hot loop's contract).
            let left = unsafe { hot::run(g, $t, base, code.as_ptr(), consts.as_ptr(), script.functions.as_ptr()) };
            if left.base != base || !code.as_ptr_range().contains(&left.at) {
                load_frame!();
            }
            ip = left.at;
            if let Err(e) = check_limits(g) {
                save_pc(g, left.at);
                return Err(e);
            }
        }};
    }
    // Takes a jump; a backward one is a loop's back edge, where the VM
    // checks its interrupt flag, or enters the hot loop when the loop is
    // one the compiler marked for it.
    #[collapse_debuginfo(yes)]
    macro_rules! jump {
        ($t:expr) => {{
            // SAFETY: jump targets are inside the code (see `ip`).
            let t = unsafe { code.as_ptr().add($t as usize) };
            if t >= ip {
                ip = t;
            } else if unsafe {
                // SAFETY: jump targets are inside the code (see `ip`).
                func.is_hot_loop_head($t as usize)
            } {
                hot_loop!(t);
            } else {
                tri!(check_limits(g));
                ip = t;
            }
        }};
    }
    // The keys of a dimension chain (consecutive registers).
    #[collapse_debuginfo(yes)]
    macro_rules! keys {
        ($keys:expr, $depth:expr) => {{
            let keys: Reg = $keys;
            debug_assert!(keys.idx() + $depth as usize <= func.num_regs as usize);
            // SAFETY: as for `reg!`; the key registers are temporaries
            // above the chain's base variable, so they never overlap it.
            unsafe { std::slice::from_raw_parts(base.byte_add(keys.raw() * 8), $depth as usize) }
        }};
    }

    // A fused loop bottom (`IncJmpLt` and the others): steps `var` by one
    // and jumps back to `target` if `test(var, limit)` holds; otherwise
    // skips the loop's entry test, which follows. Ints below the overflow
    // point take the fast path; everything else steps like `$i++`/`$i--`
    // and compares by PHP's general rules (`slow_test`).
    #[collapse_debuginfo(yes)]
    macro_rules! loop_bottom {
        ($var:expr, $limit:expr, $target:expr, $step:ident, $kind:expr, $test:expr, $slow_test:expr) => {
            loop_bottom!(@ $var, raw!($limit), $limit, $target, $step, $kind, $test, $slow_test)
        };
        // The same with the limit's value as stored (`lv`) read by the
        // caller: the specialised forms know whether it is a register.
        (@ $var:expr, $lv:expr, $limit:expr, $target:expr, $step:ident, $kind:expr, $test:expr, $slow_test:expr) => {{
            let test: fn(i64, i64) -> bool = $test;
            let slow_test: fn(&Value, &Value) -> Result<bool, NestingError> = $slow_test;
            // The limit is read before the variable is borrowed (it may be
            // the variable itself).
            let m = match $lv {
                Value::Int(m) => Some(*m),
                _ => None,
            };
            let fast = match (reg!($var), m) {
                (Value::Int(n), Some(m)) => n.$step(1).map(|x| {
                    *n = x;
                    test(x, m)
                }),
                _ => None,
            };
            let r = match fast {
                Some(r) => r,
                None => {
                    save_pc(g, cur!());
                    tri!(step_var_slow(g, $var, reg!($var), $kind));
                    tri!(slow_test(&opnd!(Src::reg($var)), &opnd!($limit)))
                }
            };
            if r {
                // SAFETY: jump targets are inside the code (see `ip`).
                if unsafe { func.is_hot_loop_head($target as usize) } {
                    // SAFETY: jump targets are inside the code (see `ip`).
                    let t = unsafe { code.as_ptr().add($target as usize) };
                    hot_loop!(t);
                } else {
                    // A loop bottom always jumps back: the back edge's
                    // interrupt check without comparing the target.
                    tri!(check_limits(g));
                    goto!($target);
                }
            } else {
                // SAFETY: the entry test follows (checked when the function
                // was compiled), and the code ends with a return after it.
                ip = unsafe { ip.add(1) };
            }
        }};
    }
    // Enters user function `callee` (id `fid`) whose `n` arguments are at
    // `at`, the top of the current window, when `n` needs no defaults,
    // variadics or error: saves our place, takes the window (the arguments
    // are already the callee's parameters) and pushes the frame in one
    // visit to EG.
    #[collapse_debuginfo(yes)]
    macro_rules! enter {
        ($callee:expr, $fid:expr, $dst:expr, $at:expr, $n:expr) => {{
            let callee: &Function = $callee;
            let pc = cur!();
            let nregs = callee.num_regs as usize;
            // Takes the window and pushes the frame; what runs the callee
            // comes after, with EG no longer borrowed.
            let reserved: Result<*mut Value, StackOverflow> = eg!(g, |eg| {
                // Room for the callee's frame first, so the frame below is
                // written in place with the vector's length and address
                // read once (a `push` would build it on the stack around
                // its own capacity check).
                if eg.frames.len() == eg.frames.capacity() {
                    grow_frames(&mut eg.frames);
                }
                let n = eg.frames.len();
                debug_assert!(n > 0 && n < eg.frames.capacity(), "a running frame, room for one more");
                let frames = eg.frames.as_mut_ptr();
                // SAFETY: the running frame is the top one.
                let caller = unsafe { &mut *frames.add(n - 1) };
                caller.pc = pc;
                let chunk = caller.chunk;
                // SAFETY: the arguments are the top registers of the
                // window, in the chunk that ends at `chunk`, and nothing
                // refers to them.
                let (c, b) = unsafe { eg.stack.reserve(chunk, $at, $n, nregs) }?;
                // SAFETY: slot `n` is within the capacity reserved above
                // and holds no frame; the length then covers it.
                unsafe {
                    frames.add(n).write(minizts_globals::Frame {
                        func: $fid,
                        function: callee,
                        base: b,
                        chunk: c,
                        pc: callee.code.as_ptr(),
                        ret: $dst,
                        argc: $n as u16,
                        closure: None,
                        native: false,
                    });
                    eg.frames.set_len(n + 1);
                }
                Ok(b)
            });
            match reserved {
                Ok(b) => {
                    // SAFETY: `b..b+nregs` is the window just reserved, and
                    // nothing refers to its variables.
                    unsafe { minizts_globals::executor::clear_variables(b, $n, callee.num_cvs as usize) };
                    func = callee;
                    base = b;
                    code = &func.code;
                    consts = func.consts.values();
                    ip = code.as_ptr();
                    if callee.hot_entry {
                        hot_loop!(ip);
                    }
                }
                Err(o) => {
                    tri!(fatal::<()>(format!(
                        "Maximum call stack size of {} bytes reached. Infinite recursion?",
                        o.limit_bytes
                    )));
                }
            }
        }};
    }

    loop {
        // The instruction pointer's home is r13 at the dispatch point.
        // Without this, LLVM keeps `ip` in a stack slot across the whole
        // loop (the run loop is one large function with calls in most
        // handlers), and every dispatch loads it, stores it back
        // incremented, and copies it: 9 instructions instead of 7
        // (docs/performance.md, "What bought what").
        #[cfg(target_arch = "x86_64")]
        // The block never dereferences `ip`: `nomem` is true, and keeps
        // LLVM from assuming memory changed.
        #[allow(clippy::pointers_in_nomem_asm_block)]
        // SAFETY: an empty assembly block that touches no memory, stack or
        // flags; it only asks for `ip` to be in r13 here.
        unsafe {
            std::arch::asm!("/* ip in r13 */", inout("r13") ip, options(nomem, nostack, preserves_flags))
        };
        // SAFETY: `ip` and the code's start are in one allocation.
        debug_assert!(unsafe { ip.offset_from(code.as_ptr()) } < code.len() as isize);
        // SAFETY: `ip` is inside the code (see its declaration).
        let op = unsafe { &*ip };
        // SAFETY: the instruction at `ip` is not the last one's end: the
        // code ends with a return, which never falls through.
        ip = unsafe { ip.add(1) };
        match *op {
            Op::Nop => {}
            Op::Move { dst, src } => {
                let v = raw!(src);
                if v.is_plain_copy() {
                    // SAFETY: the value owns nothing (see `is_plain_copy`),
                    // and the copy is taken before the register is written.
                    let v = unsafe { std::ptr::read(v) };
                    put!(dst, v);
                }
                let v = opnd!(src).clone();
                set!(dst, v);
            }
            Op::MoveC { dst, k } => {
                let v = kv!(k);
                // SAFETY: a constant owns nothing (the pool holds scalars
                // and interned strings), and the copy is taken before the
                // register is written.
                let v = unsafe { std::ptr::read(v) };
                put!(dst, v);
            }
            Op::Assign { var, src } => {
                let v = opnd!(src).clone();
                tri!(assign_slot(reg!(var), v));
            }
            // The reference-taking instructions own their source
            // temporaries (the compiler makes each one for them) and
            // empty them: a reference left in a dead temporary would count
            // as a holder (`var_dump` would show `&`, a cycle would
            // survive the collector).
            Op::AssignRef { var, src } => {
                let r = std::mem::take(reg!(src));
                set!(var, r);
            }
            Op::Add { dst, a, b } => arith!(dst, a, b, checked_add, +, BinOp::Add),
            Op::Sub { dst, a, b } => arith!(dst, a, b, checked_sub, -, BinOp::Sub),
            Op::Mul { dst, a, b } => arith!(dst, a, b, checked_mul, *, BinOp::Mul),
            Op::AddRR { dst, a, b } => {
                arith!(@ dst, rv!(a), rv!(b), Src::reg(a), Src::reg(b), checked_add, +, BinOp::Add)
            }
            Op::AddRC { dst, a, k } => {
                arith!(@ dst, rv!(a), kv!(k), Src::reg(a), k, checked_add, +, BinOp::Add)
            }
            Op::SubRR { dst, a, b } => {
                arith!(@ dst, rv!(a), rv!(b), Src::reg(a), Src::reg(b), checked_sub, -, BinOp::Sub)
            }
            Op::SubRC { dst, a, k } => {
                arith!(@ dst, rv!(a), kv!(k), Src::reg(a), k, checked_sub, -, BinOp::Sub)
            }
            Op::MulRR { dst, a, b } => {
                arith!(@ dst, rv!(a), rv!(b), Src::reg(a), Src::reg(b), checked_mul, *, BinOp::Mul)
            }
            Op::MulRC { dst, a, k } => {
                arith!(@ dst, rv!(a), kv!(k), Src::reg(a), k, checked_mul, *, BinOp::Mul)
            }
            Op::MulCR { dst, k, b } => {
                arith!(@ dst, kv!(k), rv!(b), k, Src::reg(b), checked_mul, *, BinOp::Mul)
            }
            Op::Concat { dst, a, b } => {
                save_pc(g, cur!());
                let r = tri!(ops::concat(g, &opnd!(a), &opnd!(b)));
                set!(dst, r);
            }
            Op::Lt { dst, a, b } => {
                if let Some(r) = num_cmp!(a, b, <) {
                    put!(dst, Value::Bool(r));
                }
                let r = tri!(compare(&opnd!(a), &opnd!(b))) < 0;
                set!(dst, Value::Bool(r));
            }
            Op::Le { dst, a, b } => {
                if let Some(r) = num_cmp!(a, b, <=) {
                    put!(dst, Value::Bool(r));
                }
                let r = tri!(compare(&opnd!(a), &opnd!(b))) <= 0;
                set!(dst, Value::Bool(r));
            }
            Op::Eq { dst, a, b } => {
                let r = match (raw!(a), raw!(b)) {
                    (Value::Int(x), Value::Int(y)) => x == y,
                    _ => tri!(loose_equals(&opnd!(a), &opnd!(b))),
                };
                set!(dst, Value::Bool(r));
            }
            Op::Identical { dst, a, b } => {
                let r = tri!(identical(&opnd!(a), &opnd!(b)));
                set!(dst, Value::Bool(r));
            }
            Op::Binary { op, dst, a, b } => {
                save_pc(g, cur!());
                let r = tri!(ops::binary(g, op, &opnd!(a), &opnd!(b)));
                set!(dst, r);
            }
            Op::AssignOp { op, var, src } => {
                let v = opnd!(src).clone();
                let slot = reg!(var);
                if let Value::Undef = slot {
                    save_pc(g, cur!());
                    undefined_variable(g, var.idx());
                }
                match (op, &mut *slot, &v) {
                    (BinOp::Add, Value::Int(x), Value::Int(y)) if x.checked_add(*y).is_some() => *x += *y,
                    (BinOp::Sub, Value::Int(x), Value::Int(y)) if x.checked_sub(*y).is_some() => *x -= *y,
                    (BinOp::Concat, Value::Str(s), Value::Str(t))
                        if s.len() + t.len() <= crate::limits::SMALL_STRING =>
                    {
                        s.make_mut().extend_from_slice(t)
                    }
                    _ => {
                        save_pc(g, cur!());
                        tri!(dim::apply_op(g, slot, op, &v));
                    }
                }
                v.release();
            }
            Op::Not { dst, src } => {
                let r = !opnd!(src).to_bool();
                set!(dst, Value::Bool(r));
            }
            Op::Neg { dst, src } => {
                save_pc(g, cur!());
                let r = tri!(ops::negate(g, &opnd!(src)));
                set!(dst, r);
            }
            Op::Plus { dst, src } => {
                save_pc(g, cur!());
                let r = tri!(ops::plus(g, &opnd!(src)));
                set!(dst, r);
            }
            Op::BitNot { dst, src } => {
                let r = tri!(ops::bit_not(&opnd!(src)));
                set!(dst, r);
            }
            Op::ToBool { dst, src } => {
                let r = opnd!(src).to_bool();
                set!(dst, Value::Bool(r));
            }
            Op::Cast { dst, src, kind } => {
                save_pc(g, cur!());
                let r = tri!(ops::cast(g, &opnd!(src), kind));
                set!(dst, r);
            }
            Op::IncVar { var } => {
                let slot = reg!(var);
                match slot {
                    Value::Int(n) if *n < i64::MAX => *n += 1,
                    _ => {
                        save_pc(g, cur!());
                        tri!(step_var_slow(g, var, slot, IncDec::PreInc));
                    }
                }
            }
            Op::DecVar { var } => {
                let slot = reg!(var);
                match slot {
                    Value::Int(n) if *n > i64::MIN => *n -= 1,
                    _ => {
                        save_pc(g, cur!());
                        tri!(step_var_slow(g, var, slot, IncDec::PreDec));
                    }
                }
            }
            Op::IncDecVar { var, kind, dst } => {
                let slot = reg!(var);
                // Ints that do not overflow: the loop counter case.
                let fast = match slot {
                    Value::Int(n) if kind.is_inc() && *n < i64::MAX => {
                        *n += 1;
                        Some(if kind.is_pre() { *n } else { *n - 1 })
                    }
                    Value::Int(n) if !kind.is_inc() && *n > i64::MIN => {
                        *n -= 1;
                        Some(if kind.is_pre() { *n } else { *n + 1 })
                    }
                    _ => None,
                };
                match fast {
                    Some(n) => {
                        if !dst.is_none() {
                            set!(dst, Value::Int(n));
                        }
                    }
                    None => {
                        save_pc(g, cur!());
                        if let Value::Undef = slot {
                            undefined_variable(g, var.idx());
                            *slot = Value::Null;
                        }
                        let r = tri!(dim::inc_dec_slot(g, slot, kind));
                        if !dst.is_none() {
                            set!(dst, r);
                        }
                    }
                }
            }
            Op::Quiet { dst, var } => {
                let v = reg!(var).deref_clone();
                set!(dst, v);
            }
            Op::IsSet { dst, src } => {
                let r = !raw!(src).deref().is_null();
                set!(dst, Value::Bool(r));
            }
            Op::UnsetVar { var } => {
                *reg!(var) = Value::Undef;
            }

            Op::FetchDim { dst, base: b, key } => {
                // An int or (non-numeric) string key of an array, directly
                // or behind a reference (a by-reference parameter, a
                // global).
                let found = match (raw!(b), raw!(key)) {
                    (Value::Arr(arr), Value::Int(k)) => arr.get_int(*k),
                    (Value::Arr(arr), Value::Str(k)) if minizts_core::array::canonical_int(k).is_none() => {
                        arr.get_str(k)
                    }
                    // SAFETY: nothing borrows the reference mutably while
                    // this instruction reads it.
                    (Value::Ref(r), Value::Int(k)) => match unsafe { r.peek() } {
                        Some(Value::Arr(arr)) => arr.get_int(*k),
                        _ => None,
                    },
                    _ => None,
                };
                fetched!(dst, found);
                save_pc(g, cur!());
                let r = tri!(dim::fetch(g, &opnd!(b), &opnd!(key), ReadMode::Normal));
                set!(dst, r);
            }
            Op::FetchDim2 { dst, base: b, k1, k2 } => {
                let found = match (raw!(b), raw!(k1), raw!(k2)) {
                    (Value::Arr(outer), Value::Int(i), Value::Int(j)) => match outer.get_int(*i) {
                        Some(Value::Arr(inner)) => inner.get_int(*j),
                        _ => None,
                    },
                    _ => None,
                };
                fetched!(dst, found);
                save_pc(g, cur!());
                let mid = tri!(dim::fetch(g, &opnd!(b), &opnd!(k1), ReadMode::Normal));
                let r = tri!(dim::fetch(g, &mid, &opnd!(k2), ReadMode::Normal));
                set!(dst, r);
            }
            Op::FetchDimQuiet { dst, base: b, key } => {
                save_pc(g, cur!());
                let r = tri!(dim::fetch(g, &raw!(b).deref(), &opnd!(key), ReadMode::Quiet));
                set!(dst, r);
            }
            Op::FetchDimList { dst, base: b, key } => {
                save_pc(g, cur!());
                let r = tri!(dim::fetch(g, &opnd!(b), &opnd!(key), ReadMode::List));
                set!(dst, r);
            }
            Op::AssignDim { var, keys, depth, src } => {
                let v = opnd!(src).clone();
                save_pc(g, cur!());
                let keys = keys!(keys, depth);
                tri!(dim::assign(g, reg!(var), keys, v));
            }
            Op::AssignDim1 { var, key, src } => {
                let v = opnd!(src).clone();
                // An int key of an unshared array, directly in the variable
                // or behind a reference (a by-reference parameter): in
                // place. (The int is copied out: no key value to drop.)
                if let Value::Int(n) = *raw!(key) {
                    let v = match reg!(var) {
                        Value::Arr(a) => match Rc::get_mut(a) {
                            Some(a) => set_int_element(a, n, v),
                            None => Err(v),
                        },
                        Value::Ref(r) => match r.try_borrow_mut().as_deref_mut() {
                            Ok(Value::Arr(a)) => match Rc::get_mut(a) {
                                Some(a) => set_int_element(a, n, v),
                                None => Err(v),
                            },
                            _ => Err(v),
                        },
                        _ => Err(v),
                    };
                    match v {
                        Ok(()) => continue,
                        Err(v) => {
                            save_pc(g, cur!());
                            tri!(dim::assign(g, reg!(var), &[Value::Int(n)], v));
                            continue;
                        }
                    }
                }
                let k = opnd!(key).clone();
                save_pc(g, cur!());
                tri!(dim::assign(g, reg!(var), std::slice::from_ref(&k), v));
                k.release();
            }
            Op::AssignDimOp1 { op, var, key, src } => {
                // `$a[$i] += $n` on an unshared array of ints: in place.
                // (The operands are read before the variable is borrowed:
                // either may be the variable itself.)
                let ints = match (op, raw!(key), raw!(src)) {
                    (BinOp::Add | BinOp::Sub, Value::Int(k), Value::Int(n)) => Some((*k, *n)),
                    _ => None,
                };
                if let (Some((k, n)), Value::Arr(a)) = (ints, reg!(var)) {
                    if let Some(Value::Int(x)) = Rc::get_mut(a).and_then(|a| a.get_int_mut(k)) {
                        let r = if op == BinOp::Add {
                            x.checked_add(n)
                        } else {
                            x.checked_sub(n)
                        };
                        if let Some(r) = r {
                            *x = r;
                            continue;
                        }
                    }
                } else if key.as_reg() != Some(var) {
                    if let (Value::Str(k), Value::Int(n)) = (raw!(key), raw!(src)) {
                        // The key is another register than the variable,
                        // so it may be read while the variable is borrowed;
                        // so is `src`, which holds an int, not the array.
                        if add_to_str_element(reg!(var), op, k, *n) {
                            continue;
                        }
                    }
                }
                let v = opnd!(src).clone();
                let k = opnd!(key).clone();
                save_pc(g, cur!());
                if let Value::Undef = reg!(var) {
                    undefined_variable(g, var.idx());
                }
                tri!(dim::assign_op(g, reg!(var), std::slice::from_ref(&k), op, &v));
                v.release();
            }
            Op::AssignDimRef { var, keys, depth, src } => {
                let r = match std::mem::take(reg!(src)) {
                    Value::Ref(r) => r,
                    other => crate::gc::new_ref(g, other),
                };
                save_pc(g, cur!());
                let keys = keys!(keys, depth);
                tri!(dim::assign_ref(g, reg!(var), keys, r));
            }
            Op::AssignDimOp {
                op,
                var,
                keys,
                depth,
                src,
            } => {
                // `$a[$i] += $n` on an unshared array of ints: in place.
                let ints = match (depth, op, raw!(Src::reg(keys)), raw!(src)) {
                    (1, BinOp::Add | BinOp::Sub, Value::Int(k), Value::Int(n)) => Some((*k, *n)),
                    _ => None,
                };
                if let (Some((k, n)), Value::Arr(a)) = (ints, reg!(var)) {
                    if let Some(Value::Int(x)) = Rc::get_mut(a).and_then(|a| a.get_int_mut(k)) {
                        let r = if op == BinOp::Add {
                            x.checked_add(n)
                        } else {
                            x.checked_sub(n)
                        };
                        if let Some(r) = r {
                            *x = r;
                            continue;
                        }
                    }
                }
                let v = opnd!(src).clone();
                save_pc(g, cur!());
                if let Value::Undef = reg!(var) {
                    undefined_variable(g, var.idx());
                }
                let keys = keys!(keys, depth);
                tri!(dim::assign_op(g, reg!(var), keys, op, &v));
                v.release();
            }
            Op::IncDecDim {
                var,
                keys,
                depth,
                kind,
                dst,
            } => {
                save_pc(g, cur!());
                if let Value::Undef = reg!(var) {
                    undefined_variable(g, var.idx());
                }
                let keys = keys!(keys, depth);
                let r = tri!(dim::inc_dec(g, reg!(var), keys, kind));
                if !dst.is_none() {
                    set!(dst, r);
                }
            }
            Op::UnsetDim { var, keys, depth } => {
                save_pc(g, cur!());
                let keys = keys!(keys, depth);
                tri!(dim::unset(g, reg!(var), keys));
            }
            Op::MakeRef { dst, var } => {
                let r = crate::gc::slot_ref(g, reg!(var));
                *reg!(dst) = Value::Ref(r);
            }
            Op::MakeRefDim { dst, var, keys, depth } => {
                save_pc(g, cur!());
                let keys = keys!(keys, depth);
                let r = tri!(dim::make_ref(g, reg!(var), keys));
                *reg!(dst) = Value::Ref(r);
            }

            Op::NewArray { dst, capacity } => {
                let a = if capacity == 0 {
                    PhpArray::empty_literal()
                } else {
                    PhpArray::with_capacity(capacity as usize)
                };
                *reg!(dst) = Value::arr(a);
            }
            Op::ArrayPush { arr, src } => {
                let v = opnd!(src).clone();
                if let Some(a) = reg!(arr).array_mut() {
                    if a.push(v).is_err() {
                        tri!(error::<()>(
                            "Cannot add element to the array as the next element is already occupied"
                        ));
                    }
                }
            }
            Op::ArraySet { arr, key, src } => {
                save_pc(g, cur!());
                let k = tri!(dim::to_key(g, &opnd!(key)));
                let v = opnd!(src).clone();
                if let Some(a) = reg!(arr).array_mut() {
                    a.insert(k, v);
                }
            }
            Op::ArraySpread { arr, src } => {
                let v = opnd!(src).clone();
                let Value::Arr(items) = v else {
                    tri!(error::<()>("Only arrays and Traversables can be unpacked"));
                    unreachable!()
                };
                if let Some(a) = reg!(arr).array_mut() {
                    for (k, v) in items.iter() {
                        match k.to_key() {
                            Key::Int(_) => {
                                if a.push(v.deref_clone()).is_err() {
                                    tri!(error::<()>(
                                        "Cannot add element to the array as the next element is already occupied"
                                    ));
                                }
                            }
                            key => a.insert(key, v.deref_clone()),
                        }
                    }
                }
            }
            Op::ConcatN { dst, start, n } => {
                save_pc(g, cur!());
                // The strings' lengths first, so the result is allocated
                // (and checked against the memory limit) once, as PHP's
                // rope does.
                let len: usize = (0..n as u16)
                    .map(|i| match raw!(Src::reg(start.plus(i))) {
                        Value::Str(s) => s.len(),
                        Value::Ref(r) => match &*r.borrow() {
                            Value::Str(s) => s.len(),
                            _ => 0,
                        },
                        _ => 0,
                    })
                    .sum();
                let mut out = tri!(crate::limits::string_with_capacity(g, len));
                for i in 0..n as u16 {
                    let part = opnd!(Src::reg(start.plus(i)));
                    match &*part {
                        Value::Str(s) => out.extend_from_slice(s),
                        other => tri!(ops::write_str(g, &mut out, other)),
                    }
                }
                *reg!(dst) = Value::Str(PhpStr::new(out));
            }

            Op::Jmp { target } => jump!(target),
            Op::JmpBack { target } => jump!(target),
            Op::JmpIf { cond, target } => {
                let t = match raw!(cond) {
                    Value::Bool(b) => *b,
                    _ => opnd!(cond).to_bool(),
                };
                if t {
                    jump!(target);
                }
            }
            Op::JmpIfNot { cond, target } => {
                let t = match raw!(cond) {
                    Value::Bool(b) => *b,
                    _ => opnd!(cond).to_bool(),
                };
                if !t {
                    jump!(target);
                }
            }
            Op::JmpIfNotNull { src, target } => {
                if !raw!(src).deref().is_null() {
                    jump!(target);
                }
            }
            Op::JmpLt { a, b, if_true, target } => jmp_cmp!(raw!(a), raw!(b), a, b, <, if_true, target),
            Op::JmpLtRR { a, b, if_true, target } => {
                jmp_cmp!(rv!(a), rv!(b), Src::reg(a), Src::reg(b), <, if_true, target)
            }
            Op::JmpLtRC { a, k, if_true, target } => {
                jmp_cmp!(rv!(a), kv!(k), Src::reg(a), k, <, if_true, target)
            }
            Op::JmpLtCR { k, b, if_true, target } => {
                jmp_cmp!(kv!(k), rv!(b), k, Src::reg(b), <, if_true, target)
            }
            Op::IncJmpLt { var, limit, target } => {
                loop_bottom!(
                    var,
                    limit,
                    target,
                    checked_add,
                    IncDec::PreInc,
                    |n, m| n < m,
                    |v, l| Ok(compare(v, l)? < 0)
                )
            }
            Op::IncJmpLe { var, limit, target } => {
                loop_bottom!(
                    var,
                    limit,
                    target,
                    checked_add,
                    IncDec::PreInc,
                    |n, m| n <= m,
                    |v, l| Ok(compare(v, l)? <= 0)
                )
            }
            Op::DecJmpGt { var, limit, target } => {
                loop_bottom!(
                    var,
                    limit,
                    target,
                    checked_sub,
                    IncDec::PreDec,
                    |n, m| m < n,
                    |v, l| Ok(compare(l, v)? < 0)
                )
            }
            Op::DecJmpGe { var, limit, target } => {
                loop_bottom!(
                    var,
                    limit,
                    target,
                    checked_sub,
                    IncDec::PreDec,
                    |n, m| m <= n,
                    |v, l| Ok(compare(l, v)? <= 0)
                )
            }
            Op::IncJmpLtR { var, limit, target, .. } => {
                let l = Src::reg(limit);
                loop_bottom!(@ var, rv!(limit), l, target, checked_add, IncDec::PreInc,
                    |n, m| n < m, |v, l| Ok(compare(v, l)? < 0))
            }
            Op::IncJmpLtC { var, limit, target, .. } => {
                loop_bottom!(@ var, kv!(limit), limit, target, checked_add, IncDec::PreInc,
                    |n, m| n < m, |v, l| Ok(compare(v, l)? < 0))
            }
            Op::IncJmpLeR { var, limit, target, .. } => {
                let l = Src::reg(limit);
                loop_bottom!(@ var, rv!(limit), l, target, checked_add, IncDec::PreInc,
                    |n, m| n <= m, |v, l| Ok(compare(v, l)? <= 0))
            }
            Op::IncJmpLeC { var, limit, target, .. } => {
                loop_bottom!(@ var, kv!(limit), limit, target, checked_add, IncDec::PreInc,
                    |n, m| n <= m, |v, l| Ok(compare(v, l)? <= 0))
            }
            Op::DecJmpGtR { var, limit, target, .. } => {
                let l = Src::reg(limit);
                loop_bottom!(@ var, rv!(limit), l, target, checked_sub, IncDec::PreDec,
                    |n, m| m < n, |v, l| Ok(compare(l, v)? < 0))
            }
            Op::DecJmpGtC { var, limit, target, .. } => {
                loop_bottom!(@ var, kv!(limit), limit, target, checked_sub, IncDec::PreDec,
                    |n, m| m < n, |v, l| Ok(compare(l, v)? < 0))
            }
            Op::DecJmpGeR { var, limit, target, .. } => {
                let l = Src::reg(limit);
                loop_bottom!(@ var, rv!(limit), l, target, checked_sub, IncDec::PreDec,
                    |n, m| m <= n, |v, l| Ok(compare(l, v)? <= 0))
            }
            Op::DecJmpGeC { var, limit, target, .. } => {
                loop_bottom!(@ var, kv!(limit), limit, target, checked_sub, IncDec::PreDec,
                    |n, m| m <= n, |v, l| Ok(compare(l, v)? <= 0))
            }
            Op::JmpLe { a, b, if_true, target } => jmp_cmp!(raw!(a), raw!(b), a, b, <=, if_true, target),
            Op::JmpLeRR { a, b, if_true, target } => {
                jmp_cmp!(rv!(a), rv!(b), Src::reg(a), Src::reg(b), <=, if_true, target)
            }
            Op::JmpLeRC { a, k, if_true, target } => {
                jmp_cmp!(rv!(a), kv!(k), Src::reg(a), k, <=, if_true, target)
            }
            Op::JmpEq { a, b, if_true, target } => {
                let r = match (raw!(a), raw!(b)) {
                    (Value::Int(x), Value::Int(y)) => x == y,
                    _ => tri!(loose_equals(&opnd!(a), &opnd!(b))),
                };
                if r == if_true {
                    jump!(target);
                }
            }
            Op::JmpIdentical { a, b, if_true, target } => {
                let r = tri!(identical(&opnd!(a), &opnd!(b)));
                if r == if_true {
                    jump!(target);
                }
            }

            Op::CallUser { dst, site, args, argc } => {
                let fid = {
                    let s = &func.sites[site as usize];
                    // The cache read ends before a miss resolves the site
                    // (which reaches EG again).
                    let cached = match eg!(g).runtime_cache[s.cache_slot as usize] {
                        CacheEntry::Function(id) => Some(id),
                        _ => None,
                    };
                    match cached {
                        Some(id) => id,
                        None => {
                            save_pc(g, cur!());
                            let caller = eg!(g).frames.last().map_or(0, |f| f.func);
                            tri!(call::resolve_site(g, &script, caller, site))
                        }
                    }
                };
                tri!(check_limits(g));
                // SAFETY: the argument registers are in the window.
                let at = unsafe { base.byte_add(args.raw() * 8) };
                let callee = &script.functions[fid as usize];
                let n = argc as usize;
                if callee.takes_plainly(n) {
                    enter!(callee, fid, dst, at, n);
                } else {
                    save_pc(g, cur!());
                    // SAFETY: the arguments are the top registers of the window.
                    tri!(unsafe { call::push_frame(g, &script, fid, at, chunk!(), n, dst, None, false) });
                    load_frame!();
                    ip = code.as_ptr();
                }
            }
            Op::CallDirect {
                dst,
                args,
                argc,
                func: fid,
                ..
            } => {
                tri!(check_limits(g));
                // SAFETY: the argument registers are in the window.
                let at = unsafe { base.byte_add(args.raw() * 8) };
                debug_assert!((fid as usize) < script.functions.len());
                // SAFETY: only the compiler's `bind_early_calls` writes
                // `CallDirect`, with the id of one of the script's functions.
                let callee = unsafe { script.functions.get_unchecked(fid as usize) };
                enter!(callee, fid, dst, at, argc as usize);
            }
            Op::CallBuiltin { dst, id, args, argc } => {
                save_pc(g, cur!());
                debug_assert!(args.idx() + argc as usize <= func.num_regs as usize);
                // SAFETY: the argument registers are in the window. frames
                // a builtin's callbacks push go above the window.
                let slice = unsafe { std::slice::from_raw_parts_mut(base.byte_add(args.raw() * 8), argc as usize) };
                let r = builtins::call(g, id, slice);
                clear_args(slice);
                let r = tri!(r);
                // PHP checks EG(exception) after every internal call; the
                // state a builtin can leave here is the interrupt flag
                // (a memory limit it crossed), so the fatal error names
                // the builtin's line.
                tri!(check_limits(g));
                set!(dst, r);
            }
            Op::CallValue {
                dst,
                callee,
                args,
                argc,
            } => {
                save_pc(g, cur!());
                let target = tri!(call::resolve_callable(g, &reg!(callee).clone()));
                match target {
                    Callee::User { func: fid, closure } => {
                        tri!(check_limits(g));
                        // SAFETY: the argument registers are in the window.
                        let at = unsafe { base.byte_add(args.raw() * 8) };
                        // SAFETY: the arguments are the top registers.
                        tri!(unsafe {
                            call::push_frame(g, &script, fid, at, chunk!(), argc as usize, dst, closure, false)
                        });
                        load_frame!();
                        ip = code.as_ptr();
                    }
                    Callee::Builtin(id) => {
                        // SAFETY: as for `CallBuiltin`.
                        let slice =
                            unsafe { std::slice::from_raw_parts_mut(base.byte_add(args.raw() * 8), argc as usize) };
                        let r = builtins::call(g, id, slice);
                        clear_args(slice);
                        let r = tri!(r);
                        tri!(check_limits(g));
                        set!(dst, r);
                    }
                }
            }
            Op::CallSpread { dst, callee, args } => {
                save_pc(g, cur!());
                let target = tri!(call::resolve_callable(g, &reg!(callee).clone()));
                let list = match reg!(args) {
                    Value::Arr(a) => a.clone(),
                    _ => Rc::new(PhpArray::new()),
                };
                if list.iter().any(|(k, _)| matches!(k, minizts_core::KeyRef::Str(_))) {
                    tri!(error::<()>(
                        "minizts does not support named arguments (string keys when unpacking)"
                    ));
                }
                let values: Vec<Value> = list.values().map(Value::deref_clone).collect();
                let r = tri!(call::call_resolved(g, &target, values));
                set!(dst, r);
            }
            Op::SendVarEx {
                dst,
                var,
                callee,
                argno,
            } => {
                save_pc(g, cur!());
                let by_ref = match call::resolve_callable(g, &reg!(callee).clone()) {
                    // `var` is `dst` when the compiler passes a value that
                    // is not a variable (`sort([1])`): PHP's error if the
                    // parameter is by reference.
                    Ok(c) if dst == var && call::param_by_ref(g, &script, &c, argno as usize) => {
                        tri!(call::cannot_pass_by_reference(&script, &c, argno as usize))
                    }
                    Ok(c) => call::param_by_ref(g, &script, &c, argno as usize),
                    // The call itself reports a bad callee.
                    Err(_) => false,
                };
                let v = if by_ref {
                    Value::Ref(crate::gc::slot_ref(g, reg!(var)))
                } else {
                    opnd!(Src::reg(var)).clone()
                };
                set!(dst, v);
            }
            Op::Return { src } => {
                let v = match raw!(src) {
                    Value::Undef => opnd!(src).clone(),
                    Value::Ref(r) => r.get(),
                    v => v.clone(),
                };
                // Pop the frame and free what its window holds (PHP frees
                // a function's variables when it returns); the locals
                // describe the window, so nothing is looked up again.
                for i in 0..func.num_regs as usize {
                    // SAFETY: the window `base..base+num_regs` is the
                    // returning frame's, alive until now, and nothing else
                    // refers to it.
                    unsafe { &mut *base.add(i) }.release_counted();
                }
                let popped = eg!(g, |eg| {
                    let n = eg.frames.len();
                    debug_assert!(n > 0, "a frame to return from");
                    // The vector's address, read once: the writes to the
                    // frame below cannot then make LLVM read it again.
                    let frames = eg.frames.as_mut_ptr();
                    // SAFETY: the returning frame is the top one.
                    let top = unsafe { &mut *frames.add(n - 1) };
                    if top.native {
                        eg.frames.pop();
                        return None;
                    }
                    let ret = top.ret;
                    // SAFETY: the closure is moved out and the frame is then
                    // forgotten by shortening the vector (nothing else in it
                    // owns anything), so the closure is dropped once, below.
                    let closure = unsafe { std::ptr::read(&top.closure) };
                    // SAFETY: shortening only; the frame owns nothing now.
                    unsafe { eg.frames.set_len(n - 1) };
                    debug_assert!(n > 1, "a caller frame");
                    // SAFETY: a frame that is not `native` was pushed by a
                    // call in this loop, above its caller's frame (still
                    // allocated: shortening the vector frees nothing).
                    let caller = unsafe { &*frames.add(n - 2) };
                    Some((caller.function, caller.base, caller.pc, ret, closure))
                });
                let Some((function, caller_base, caller_pc, ret, closure)) = popped else {
                    return Ok(v);
                };
                // SAFETY: a frame's function pointer points into the running
                // script's functions.
                func = unsafe { &*function };
                base = caller_base;
                code = &func.code;
                // SAFETY: the caller's saved instruction (the call) is
                // inside its code, and its code goes on after it (it ends
                // in a return).
                ip = unsafe { caller_pc.add(1) };
                consts = func.consts.values();
                drop(closure);
                if !ret.is_none() {
                    set!(ret, v);
                }
            }
            Op::JmpIfPassed { param, target } => {
                let argc = eg!(g).frames.last().map_or(0, |f| f.argc);
                if argc > param {
                    goto!(target);
                }
            }

            Op::DeclareFunction { func: f } => {
                save_pc(g, cur!());
                tri!(call::declare_function(g, &script, f));
            }
            Op::MakeClosure {
                dst,
                func: f,
                captures,
                n,
            } => {
                let bound: Vec<Value> = (0..n as u16).map(|i| std::mem::take(reg!(captures.plus(i)))).collect();
                let handle = eg!(g, |eg| {
                    eg.next_object_handle += 1;
                    eg.next_object_handle - 1
                });
                let statics = vec![None; script.functions[f as usize].num_statics as usize];
                *reg!(dst) = Value::Closure(Rc::new(Closure {
                    func: f,
                    bound,
                    statics: std::cell::RefCell::new(statics),
                    handle,
                }));
            }
            Op::BindGlobal { var, name } => {
                // Through `func`, not `consts`: the run loop then never
                // needs the pool's length, and calls and returns do not
                // carry it.
                let Value::Str(name) = &func.consts.values()[name as usize] else {
                    unreachable!("a global's name is a string constant")
                };
                let r = global_ref(g, &script, name);
                *reg!(var) = Value::Ref(r);
            }
            Op::BindStatic { var, slot, target } => {
                let existing = eg!(g, |eg| {
                    let frame = eg.frames.last().expect("a frame");
                    match &frame.closure {
                        Some(c) => c.statics.borrow().get(slot as usize).cloned().flatten(),
                        None => eg
                            .statics
                            .get(frame.func as usize)
                            .and_then(|s| s.get(slot as usize))
                            .cloned()
                            .flatten(),
                    }
                });
                if let Some(r) = existing {
                    *reg!(var) = Value::Ref(r);
                    goto!(target);
                }
            }
            Op::InitStatic { var, slot, src } => {
                let r = crate::gc::new_ref(g, opnd!(src).clone());
                eg!(g, |eg| {
                    let frame = eg.frames.last().expect("a frame");
                    match &frame.closure {
                        Some(c) => {
                            let mut statics = c.statics.borrow_mut();
                            if statics.len() <= slot as usize {
                                statics.resize(slot as usize + 1, None);
                            }
                            statics[slot as usize] = Some(r.clone());
                        }
                        None => {
                            let func_id = frame.func as usize;
                            if eg.statics.len() <= func_id {
                                eg.statics.resize(func_id + 1, Vec::new());
                            }
                            let statics = &mut eg.statics[func_id];
                            if statics.len() <= slot as usize {
                                statics.resize(slot as usize + 1, None);
                            }
                            statics[slot as usize] = Some(r.clone());
                        }
                    }
                });
                *reg!(var) = Value::Ref(r);
            }
            Op::FetchConst { dst, site } => {
                let s = &func.sites[site as usize];
                let cached = match &eg!(g).runtime_cache[s.cache_slot as usize] {
                    CacheEntry::Constant(v) => Some(v.clone()),
                    _ => None,
                };
                let v = match cached {
                    Some(v) => v,
                    None => match eg!(g, |eg| eg.constants.get(&*s.key).cloned()) {
                        Some(v) => {
                            eg!(g).runtime_cache[s.cache_slot as usize] = CacheEntry::Constant(v.clone());
                            v
                        }
                        None => {
                            save_pc(g, cur!());
                            tri!(error(format!("Undefined constant \"{}\"", s.name)))
                        }
                    },
                };
                set!(dst, v);
            }
            Op::DeclareConst { name, src } => {
                save_pc(g, cur!());
                // Through `func`, as in `BindGlobal`.
                let Value::Str(name) = &func.consts.values()[name as usize] else {
                    unreachable!("a constant's name is a string constant")
                };
                let v = opnd!(src).clone();
                tri!(crate::builtins::define_constant(g, name, v));
            }

            Op::FeReset { iter, subject, end } => {
                let v = opnd!(subject).clone();
                match v {
                    Value::Arr(a) => {
                        let empty = a.is_empty();
                        *reg!(iter) = Value::IterVal(a, 0);
                        if empty {
                            goto!(end);
                        }
                    }
                    other => {
                        save_pc(g, cur!());
                        warning(
                            g,
                            &format!(
                                "foreach() argument must be of type array|object, {} given",
                                other.type_name()
                            ),
                        );
                        *reg!(iter) = Value::Undef;
                        goto!(end);
                    }
                }
            }
            Op::FeResetRef { iter, var, end } => {
                let r = crate::gc::slot_ref(g, reg!(var));
                if tri!(foreach::start_ref_iteration(g, cur!(), &r)) {
                    *reg!(iter) = foreach::ref_iter(r);
                } else {
                    *reg!(iter) = Value::Undef;
                    goto!(end);
                }
            }
            Op::FeResetRefFrom { iter, src, end } => {
                let r = match std::mem::take(reg!(src)) {
                    Value::Ref(r) => r,
                    other => crate::gc::new_ref(g, other),
                };
                if tri!(foreach::start_ref_iteration(g, cur!(), &r)) {
                    *reg!(iter) = foreach::ref_iter(r);
                } else {
                    *reg!(iter) = Value::Undef;
                    goto!(end);
                }
            }
            Op::FeFetch { iter, value, key, end } => {
                let item = match reg!(iter) {
                    Value::IterVal(a, pos) => match a.at_or_after(*pos as usize) {
                        Some((i, k, v)) => {
                            let item = (k.to_value(), v.deref_clone());
                            *pos = (i + 1) as u32;
                            Some(item)
                        }
                        None => None,
                    },
                    _ => None,
                };
                match item {
                    Some((k, v)) => {
                        tri!(assign_slot(reg!(value), v));
                        if !key.is_none() {
                            tri!(assign_slot(reg!(key), k));
                        }
                    }
                    None => goto!(end),
                }
            }
            Op::FeFetchRef { iter, value, key, end } => {
                let step = match reg!(iter) {
                    Value::IterRef(state) => foreach::next_ref_element(g, state),
                    _ => foreach::RefStep::End,
                };
                match step {
                    foreach::RefStep::Element(k, r) => {
                        *reg!(value) = Value::Ref(r);
                        if !key.is_none() {
                            tri!(assign_slot(reg!(key), k));
                        }
                    }
                    foreach::RefStep::End => goto!(end),
                    foreach::RefStep::NotArray(t) => {
                        foreach::not_an_array(g, cur!(), t);
                        goto!(end);
                    }
                }
            }
            Op::FeFree { iter } => {
                *reg!(iter) = Value::Undef;
            }

            Op::Echo { src } => {
                let v = opnd!(src);
                match &*v {
                    Value::Str(s) => eg!(g).output.write(s),
                    other => {
                        save_pc(g, cur!());
                        tri!(output::echo(g, other));
                    }
                }
            }
            Op::Exit { src } => {
                save_pc(g, cur!());
                let v = opnd!(src).clone();
                match v {
                    Value::Int(n) => eg!(g).exit_status = n as i32,
                    Value::Null => {}
                    other => tri!(output::echo(g, &other)),
                }
                return Err(Box::new(VmError::Exit));
            }
            Op::Silence { save } => {
                let level = eg!(g, |eg| std::mem::replace(&mut eg.error_reporting, 0));
                *reg!(save) = Value::Int(level);
            }
            Op::Unsilence { save } => {
                if let Value::Int(level) = reg!(save) {
                    eg!(g).error_reporting = *level;
                }
            }
        }
    }
}

/// The reference for global variable `name` (a top-level variable, made a
/// reference so a function can share it).
fn global_ref<G: Globals>(g: G, script: &minizts_core::bytecode::Script, name: &PhpStr) -> PhpRef {
    let main = script.main();
    let name_str = String::from_utf8_lossy(name);
    let slot_index = main.cv_names.iter().position(|n| **n == *name_str);
    let main_base = eg!(g).frames.first().filter(|f| f.func == 0).map(|f| f.base);
    if let (Some(i), Some(base)) = (slot_index, main_base) {
        // SAFETY: the main frame lives as long as the request and its
        // window holds every top-level variable.
        let slot = unsafe { &mut *base.add(i) };
        return crate::gc::slot_ref(g, slot);
    }
    if let Some(r) = eg!(g).extra_globals.get(name.as_bytes()) {
        return r.clone();
    }
    let r = crate::gc::new_ref(g, Value::Null);
    eg!(g).extra_globals.insert(name.as_bytes().into(), r.clone());
    r
}
