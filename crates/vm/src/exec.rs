//! The run loop: one loop over every instruction, with the hot state (the
//! current function's code and constants, the register window, the
//! instruction pointer) in locals, as in Lua's `lvm.c`.
//!
//! Each instruction's semantics are written once. Its general path, with
//! PHP's full semantics, is in `slow.rs` ([`slow::step`], out of line);
//! the loop here holds only fast paths, each all or nothing: when its
//! operands are of the kinds it handles it completes the instruction,
//! otherwise it has changed nothing and hands the instruction to the
//! general path, which tells the loop where to go on. The numeric fast
//! paths are written once too, in `num.rs`, and shared by every
//! instruction that does arithmetic or compares (`+`, `+=`, `$a[$k] +=`,
//! `<`, the compare-and-branch forms). An instruction without a fast path
//! goes to the general path directly.
//!
//! Why one loop with its general paths out of line: a loop whose every
//! handler is inline is one very large function, and LLVM then keeps the
//! hot state in stack slots and reloads it in every handler; kept small,
//! with the general paths behind calls, the loop keeps its state in
//! registers. `MINIZTS_GENERIC=1` in the environment turns every fast
//! path and every operand specialisation off (the compiler emits only
//! general forms, the loop sends every instruction to its general path):
//! the test suite runs the golden scripts that way too, which checks that
//! the fast paths agree with the general ones.
//!
//! Script-to-script calls do not recurse on the native stack: a call saves
//! the caller's position in its frame, pushes the callee's frame and
//! carries on in the same loop; a return pops and resumes the caller. The
//! loop returns when a frame marked `native` returns (the script's main
//! frame, or a callback a builtin is running).
//!
//! Per-thread state is reached through the globals strategy at the points
//! PHP's VM reaches it: frames on call and return, the interrupt flag on
//! backward jumps and calls, function and constant lookups, the symbol
//! table, output, error state.

use std::rc::Rc;

use std::sync::atomic::Ordering;

use minizts_core::bytecode::{BinOp, Function, Op, Reg, Src, Target};
use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::executor::CacheEntry;
use minizts_globals::{eg, EgAccess, Frame, Globals};

use crate::error::{locate, VmResult};

mod foreach;
// After `num`: the member fast paths use its arithmetic macros.
#[macro_use]
mod num;
mod members;
mod slow;

pub(crate) use slow::method_name;

/// Saves the executing instruction in the current frame (for messages
/// and stack traces).
#[inline]
fn save_pc<G: Globals>(g: G, at: *const Op) {
    if let Some(f) = eg!(g).frames.last_mut() {
        f.pc = at;
    }
}

/// The VM's interrupt check, at backward jumps and calls.
#[inline(always)]
fn check_limits<G: Globals>(g: G) -> VmResult<()> {
    crate::limits::safe_point(g)
}

/// `a[n] = v` unless the element is a reference (then `v` comes back for
/// the general path, which writes through it); the old value comes back
/// for the caller to release (its release may make a destructor due).
#[inline(always)]
fn set_int_element(a: &mut PhpArray, n: i64, v: Value) -> Result<Value, Value> {
    let (elem, _) = a.entry(Key::Int(n));
    if matches!(elem, Value::Ref(_)) {
        return Err(v);
    }
    Ok(std::mem::replace(elem, v))
}

/// `$a[$k] = $v` with a non-numeric string key `k`, when the variable
/// holds an array (directly or behind a reference; separated if shared)
/// whose element there is not a reference; `Err` (nothing written)
/// otherwise. The old value comes back for the caller to release.
#[inline(never)]
fn set_str_element(var: &mut Value, k: PhpStr, v: Value) -> Result<Value, ()> {
    if minizts_core::array::canonical_int(&k).is_some() {
        return Err(());
    }
    let set = |a: &mut Rc<PhpArray>| {
        // Separated first if shared (see `push_element`).
        let a = Rc::make_mut(a);
        let (elem, _) = a.entry(Key::from_php_str(k));
        if matches!(elem, Value::Ref(_)) {
            return Err(());
        }
        Ok(std::mem::replace(elem, v))
    };
    match var {
        Value::Arr(a) => set(a),
        Value::Ref(r) => match r.try_borrow_mut().as_deref_mut() {
            Ok(Value::Arr(a)) => set(a),
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// `$a[] = v` when the variable holds an array (directly or behind a
/// reference; separated if shared) whose next index is free, `v` neither
/// a reference nor unset; `false` (nothing written) otherwise.
#[inline(never)]
fn push_element(var: &mut Value, v: Value) -> bool {
    if matches!(v, Value::Ref(_) | Value::Undef) {
        return false;
    }
    // A shared array (a literal's, a copy's) is separated first, as a
    // write separates it anywhere.
    let push = |a: &mut Rc<PhpArray>| Rc::make_mut(a).push(v).is_ok();
    match var {
        Value::Arr(a) => push(a),
        Value::Ref(r) => match r.try_borrow_mut().as_deref_mut() {
            Ok(Value::Arr(a)) => push(a),
            _ => false,
        },
        _ => false,
    }
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
        None => a.get_str_key_mut(k),
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

/// The array a value holds, directly or behind a reference (a
/// by-reference parameter, a global): how an array read dereferences its
/// container once, as PHP's handlers do.
///
/// # Safety
/// Nothing may borrow the reference mutably while the array is used.
#[inline(always)]
unsafe fn array_of(v: &Value) -> Option<&PhpArray> {
    match v {
        Value::Arr(a) => Some(a),
        // SAFETY: forwarded to the caller.
        Value::Ref(r) => match unsafe { r.peek() } {
            Some(Value::Arr(a)) => Some(a),
            _ => None,
        },
        _ => None,
    }
}

/// Frees what a returning window's registers hold (the fast return's
/// out-of-line half: the general path frees them the same way).
#[inline(never)]
fn release_window(regs: &mut [Value]) {
    for v in regs {
        v.release_counted();
    }
}

/// Releases the closure a returning closure's frame held (out of line:
/// most frames hold none).
#[inline(never)]
fn release_closure(c: Rc<minizts_core::value::Closure>) {
    drop(c);
}

/// Moves the closure out of register `r`, leaving it empty.
///
/// # Safety
/// `r` is a live register that nothing else refers to.
#[inline(always)]
unsafe fn take_closure(r: *mut Value) -> Option<Rc<minizts_core::value::Closure>> {
    // SAFETY: the caller's; the register is left empty (`Undef` owns
    // nothing), so the value read out is owned once.
    match unsafe { std::ptr::replace(r, Value::Undef) } {
        Value::Closure(c) => Some(c),
        other => {
            // SAFETY: as above: put back as it was (over the `Undef`).
            unsafe { std::ptr::write(r, other) };
            None
        }
    }
}

/// Drops the counted value a register held (the cold half of `put!`);
/// `true` when that left the interrupt flag up — an object whose last
/// holder this was has a destructor due — so that the run loop goes to
/// its safe point before the next instruction, as PHP runs the
/// destructor inside the release.
#[cold]
#[inline(never)]
fn drop_cold<G: Globals>(g: G, old: Value) -> bool {
    drop(old);
    eg!(g).interrupt.pending.load(Ordering::Relaxed)
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

/// Where the run loop goes on after an instruction's general path: the
/// address of the instruction to run next, with bit 0 set when frames
/// changed (a call or a return: the loop reloads its locals from the
/// frame now on top), or null when the `native` frame returned (its value
/// is then in `step`'s `done`). One word, so that a result comes back in
/// registers (instructions are 4-byte aligned: bit 0 is free).
#[derive(Clone, Copy)]
pub(super) struct Next(*const Op);

const _: () = assert!(std::mem::align_of::<Op>() >= 2);

impl Next {
    /// The run ended: the `native` frame returned.
    pub const DONE: Next = Next(std::ptr::null());

    /// Instruction `at` of the same function.
    pub fn at(at: *const Op) -> Next {
        Next(at)
    }

    /// Instruction `at` of the function of the frame now on top.
    pub fn frame(at: *const Op) -> Next {
        Next(at.wrapping_byte_add(1))
    }
}

/// Runs frames from the current top frame until a `native` frame returns;
/// returns its value. Errors come back located (file, line, trace).
pub fn execute<G: Globals>(g: G) -> VmResult<Value> {
    let r = if minizts_core::bytecode::generic_only() {
        run::<G, false>(g)
    } else {
        run::<G, true>(g)
    };
    match r {
        Ok(v) => Ok(v),
        Err(e) => Err(locate(g, e)),
    }
}

/// The run loop (see the module docs). With `FAST` false every
/// instruction takes its general path.
fn run<G: Globals, const FAST: bool>(g: G) -> VmResult<Value> {
    let (func, mut base, start_pc) = eg!(g, |eg| {
        let frame = eg.frames.last().expect("a frame to run");
        // SAFETY: a frame's function is one of the request's, which
        // outlive its frames and this loop.
        let func: &Function = unsafe { &*frame.function };
        let start = func.index_of(frame.pc).expect("a frame starts inside its code");
        (func, frame.base, start)
    });
    // Where the general path leaves the value of a `native` frame's return.
    let mut done = Value::Null;
    // Whether the dispatch loop left at a safe point (see `safe_point!`).
    let mut at_safe_point = false;
    let mut code: *const Op = func.code.as_ptr();
    let mut consts: *const Value = func.consts.values().as_ptr();

    // The next instruction, as a pointer (PHP's `opline`): cheaper to step
    // than an index. SAFETY (all uses): every function's code ends with a
    // `Return` and every jump target is inside its code (the verifier), so
    // `ip` never leaves the code.
    // SAFETY: `start_pc` is the frame's instruction, inside its code.
    let mut ip: *const Op = unsafe { code.add(start_pc) };
    // The instruction executing (`ip` is one past it).
    #[collapse_debuginfo(yes)]
    macro_rules! cur {
        () => {
            // SAFETY: `ip` is one past the executing instruction, in the
            // code.
            unsafe { ip.sub(1) }
        };
    }
    // Switches the locals to the frame now on top of EG's frames.
    #[collapse_debuginfo(yes)]
    macro_rules! load_frame {
        () => {{
            let (f, b) = eg!(g, |eg| {
                let frame = eg.frames.last().expect("a frame");
                (frame.function, frame.base)
            });
            // SAFETY: a frame's function points into the running script's
            // functions.
            let func = unsafe { &*f };
            base = b;
            code = func.code.as_ptr();
            consts = func.consts.values().as_ptr();
        }};
    }
    // Hands the executing instruction to its general path: leaves the
    // dispatch loop for the one place below that calls it (one copy of
    // that code, not one per fast path).
    #[collapse_debuginfo(yes)]
    macro_rules! slow {
        () => {
            break
        };
    }
    // Leaves the dispatch loop after the executing instruction finished,
    // for the safe point (interrupt flag up: destructors due). Said by a
    // flag kept in memory, not by a value the loop breaks with or by a
    // mark on `ip`: either would be a value LLVM merges at the loop's
    // exit, and it then spends an instruction on it at every dispatch.
    #[collapse_debuginfo(yes)]
    macro_rules! safe_point {
        () => {{
            // SAFETY: a local.
            unsafe { std::ptr::write_volatile(&mut at_safe_point, true) };
            break;
        }};
    }
    // Register `r` as stored (its raw form is its offset in 8-byte units:
    // see `Reg`). SAFETY (all uses): the verifier only lets registers
    // below the function's `num_regs` through, and the window
    // `base..base+num_regs` is reserved on the VM stack (whose chunks
    // never move) for as long as the frame runs.
    #[collapse_debuginfo(yes)]
    macro_rules! rv {
        ($r:expr) => {{
            let r: Reg = $r;
            // SAFETY: see above.
            unsafe { &*base.byte_add(r.raw() * 8) }
        }};
    }
    // Register `r`, to write in place; no other reference to it is live
    // while it is used.
    #[collapse_debuginfo(yes)]
    macro_rules! slot {
        ($r:expr) => {{
            let r: Reg = $r;
            // SAFETY: as for `rv!`, and the reference is the only one.
            unsafe { &mut *base.byte_add(r.raw() * 8) }
        }};
    }
    // Constant operand `k` of the pool. Its raw form is twice the index
    // plus one (see `Src`), so the constant is 8 bytes before
    // `consts + raw * 8`: one addressing mode.
    #[collapse_debuginfo(yes)]
    macro_rules! kv {
        ($k:expr) => {{
            let k: Src = $k;
            // SAFETY: the verifier checks constant operands against the
            // pool; `raw * 8 - 8` is the index times the size of a `Value`.
            unsafe { &*consts.byte_add(k.raw() * 8 - 8) }
        }};
    }
    // An operand as stored (a reference or `Undef` unresolved).
    // Both kinds are reached from one origin, picked without a branch:
    // the window's base for a register, 8 bytes before the pool for a
    // constant (see `kv!`).
    #[collapse_debuginfo(yes)]
    macro_rules! raw {
        ($s:expr) => {{
            let s: Src = $s;
            let origin = if s.is_const() {
                consts.wrapping_byte_sub(8)
            } else {
                base as *const Value
            };
            // SAFETY: the verifier checks register operands against the
            // window and constant ones against the pool, so the address is
            // the operand's (as for `rv!` and `kv!`).
            unsafe { &*origin.wrapping_byte_add(s.raw() * 8) }
        }};
    }
    // `var = v` when `v` is a plain copy (a scalar or an interned
    // string), written through a reference whose value owns nothing;
    // anything else goes to the general path. `Assign` and `AssignTmp`
    // share it.
    #[collapse_debuginfo(yes)]
    macro_rules! assign_plain {
        ($var:expr, $v:expr) => {{
            let var: Reg = $var;
            let v: &Value = $v;
            if !v.is_plain_copy() {
                slow!();
            }
            if let Value::Ref(r) = rv!(var) {
                // Behind a reference when what it holds owns nothing.
                let Ok(mut inner) = r.try_borrow_mut() else { slow!() };
                if !inner.is_scalar() || r.is_typed() {
                    slow!();
                }
                // SAFETY: as for `Move`; the scalar overwritten owns
                // nothing.
                unsafe { std::ptr::write(&mut *inner, std::ptr::read(v)) };
                continue;
            }
            // SAFETY: as for `Move`.
            put!(var, unsafe { std::ptr::read(v) })
        }};
    }
    // Writes value `v` to register `r` and goes on. Each fast path writes
    // its own result (a shared tail would rebuild a whole `Value` through
    // the stack); the old value is dropped out of line, since a temporary
    // almost always held a scalar. The destination is reached by a raw
    // pointer: the result expression may read it (`$x = $x * 2`), and is
    // evaluated before the write.
    #[collapse_debuginfo(yes)]
    macro_rules! put {
        ($r:expr, $v:expr) => {{
            let r: Reg = $r;
            // SAFETY: as for `rv!`.
            let slot: *mut Value = unsafe { base.byte_add(r.raw() * 8) };
            let v: Value = $v;
            // `v` is only ever stored, on both paths, so it stays in
            // registers (tag and payload stored apart). Were it also
            // passed to a call, LLVM would build it in a stack slot with
            // two narrow stores and copy it with one wide load, which the
            // store buffer cannot forward: a stall of a dozen cycles on
            // every arithmetic result.
            // SAFETY: `slot` is a live register; a scalar owns nothing, so
            // overwriting it without dropping leaks nothing.
            if unsafe { (*slot).is_scalar() } {
                // SAFETY: as just said.
                unsafe { std::ptr::write(slot, v) };
            } else {
                // SAFETY: `slot` is a live register, and nothing else
                // refers to it once `v` is computed; the old value, moved
                // out, is dropped after the new one is in (PHP's order).
                let old = unsafe { std::ptr::replace(slot, v) };
                if drop_cold(g, old) {
                    safe_point!();
                }
            }
            continue;
        }};
    }
    // Releases `old`, a value just replaced in place: an object it held
    // alone goes now, its destructor run (or thrown) at this instruction,
    // as `put!` does for a register.
    #[collapse_debuginfo(yes)]
    macro_rules! release_old {
        ($old:expr) => {{
            let old: Value = $old;
            if !old.is_scalar() && drop_cold(g, old) {
                safe_point!();
            }
        }};
    }
    // Writes an array element's new number in place, through `e` (a
    // pointer to the element, which held a number, owning nothing) and
    // goes on: the arithmetic macros' writer for `$a[$k] op= n`.
    #[collapse_debuginfo(yes)]
    macro_rules! put_elem {
        ($e:expr, $v:expr) => {{
            let v: Value = $v;
            // SAFETY: `e` is the element, alive and unshared; its number
            // owns nothing.
            unsafe { std::ptr::write($e, v) };
            continue;
        }};
    }
    // Stores the element an array read found and goes on; a reference
    // element, or nothing found, goes to the general path.
    #[collapse_debuginfo(yes)]
    macro_rules! fetched {
        ($dst:expr, $found:expr) => {
            match $found {
                // SAFETY: a value that owns nothing copies completely by its
                // bits; the copy is taken before the register is written (it
                // may hold the array read from).
                Some(v) if v.is_plain_copy() => put!($dst, unsafe { std::ptr::read(v) }),
                Some(v) if !matches!(v, Value::Ref(_)) => put!($dst, v.clone()),
                _ => slow!(),
            }
        };
    }
    // A copy of value `v` into register `r` (`MOVE`, and an argument
    // passed by value): a bit copy of what owns nothing, a counted copy of
    // the rest; a reference or an unset variable takes the general path.
    #[collapse_debuginfo(yes)]
    macro_rules! copy_into {
        ($r:expr, $v:expr) => {{
            let v: &Value = $v;
            if v.is_plain_copy() {
                // SAFETY: the value owns nothing (see `is_plain_copy`), and
                // the copy is taken before the register is written.
                put!($r, unsafe { std::ptr::read(v) })
            }
            if matches!(v, Value::Ref(_) | Value::Undef) {
                slow!();
            }
            put!($r, v.clone())
        }};
    }
    // `put!` of a fast path's result, or the general path.
    #[collapse_debuginfo(yes)]
    macro_rules! put_or_slow {
        ($r:expr, $v:expr) => {{
            match $v {
                Some(v) => put!($r, v),
                None => slow!(),
            }
        }};
    }
    // Operand `s` with a reference followed (the general path when the
    // reference is borrowed).
    #[collapse_debuginfo(yes)]
    macro_rules! arg {
        ($s:expr) => {
            match raw!($s) {
                // SAFETY: nothing borrows a reference mutably while an
                // instruction reads it, and the value read is used before
                // anything writes.
                Value::Ref(r) => match unsafe { r.peek() } {
                    Some(v) => v,
                    None => slow!(),
                },
                v => v,
            }
        };
    }
    // Writes a builtin instruction's result `v` (a scalar) after releasing
    // its argument `arg` when that is a temporary holding something counted
    // (`tmp`), as a call releases its argument registers.
    #[collapse_debuginfo(yes)]
    macro_rules! builtin_result {
        ($dst:expr, $v:expr, $tmp:expr, $arg:expr) => {{
            let v: Value = $v;
            if $tmp {
                if let Some(r) = $arg.as_reg() {
                    let t = slot!(r);
                    if !t.is_scalar() {
                        // SAFETY: the temporary is not read again before it
                        // is written.
                        if drop_cold(g, unsafe { std::ptr::replace(t, Value::Undef) }) {
                            // A destructor due: the result goes in, then
                            // the safe point.
                            *slot!($dst) = v;
                            safe_point!();
                        }
                    }
                }
            }
            put!($dst, v)
        }};
    }
    // The arithmetic fast paths' last try: an operand behind a reference
    // (`num::through_refs`), else the general path.
    #[collapse_debuginfo(yes)]
    macro_rules! refs {
        ($dst:expr, $op:expr, $a:expr, $b:expr) => {
            match num::through_refs($op, $a, $b) {
                Some(v) => put!($dst, v),
                None => slow!(),
            }
        };
    }
    // Takes a jump to `t`; a backward one is a loop's back edge, where a
    // pending interrupt sends the jump to its general path (which checks
    // the limits).
    #[collapse_debuginfo(yes)]
    macro_rules! jump {
        ($t:expr) => {{
            let t: Target = $t;
            // SAFETY: jump targets are inside the code (the verifier).
            let to = unsafe { code.add(t as usize) };
            if to < ip && eg!(g).interrupt.pending.load(Ordering::Relaxed) {
                slow!();
            }
            ip = to;
            continue;
        }};
    }
    // A compare-and-branch: jumps if the fast comparison `$cmp` is
    // `if_true`.
    #[collapse_debuginfo(yes)]
    macro_rules! branch {
        ($cmp:expr, $if_true:expr, $target:expr) => {{
            match $cmp {
                Some(r) => {
                    if r == $if_true {
                        jump!($target);
                    }
                    continue;
                }
                None => slow!(),
            }
        }};
    }
    // A specialised loop bottom: steps int `var` by one and jumps `back`
    // bytes back, to its target, while `test(var, limit)` holds, else
    // skips the entry test that follows it.
    #[collapse_debuginfo(yes)]
    macro_rules! loop_bottom {
        ($var:expr, $lv:expr, $back:expr, $step:ident, $test:expr) => {{
            let test: fn(i64, i64) -> bool = $test;
            // The limit is read before the variable is borrowed (it may be
            // the variable itself).
            let Value::Int(m) = *$lv else { slow!() };
            let Value::Int(n) = slot!($var) else { slow!() };
            let Some(x) = n.$step(1) else { slow!() };
            if test(x, m) {
                if eg!(g).interrupt.pending.load(Ordering::Relaxed) {
                    slow!();
                }
                *n = x;
                let at = cur!();
                // SAFETY: `back` leads from this instruction to its target,
                // inside the code (the verifier).
                ip = unsafe { at.byte_sub(usize::from($back)) };
                continue;
            }
            *n = x;
            // SAFETY: the entry test follows, and the code ends with a
            // return after it.
            ip = unsafe { ip.add(1) };
            continue;
        }};
    }
    // A call of `callee` (id `fid`) with plain arguments, when its window
    // fits in the stack chunk, the frame vector has room and no interrupt
    // is pending (the general path checks at every call), and its
    // variables past the arguments hold no counted value (dead slots
    // after a return; one that does goes to the general path, which drops
    // it).
    #[collapse_debuginfo(yes)]
    macro_rules! fast_enter {
        // `$lookup` finds the callee and its id through `$eg`, in the
        // same EG access as the frame push (`None`: the general path).
        ($eg:ident => $lookup:expr, $dst:expr, $args:expr, $argc:expr) => {
            fast_enter!($eg => $lookup, $dst, $args, $argc, 0, 0, None::<*mut Value>)
        };
        // A method's: the frame's scope and called scope (class ids + 1),
        // and the register holding `$this` (moved into the callee's
        // `$this` variable; the lookup makes sure that dropping it instead,
        // when the body has none, releases nothing).
        ($eg:ident => $lookup:expr, $dst:expr, $args:expr, $argc:expr, $scope:expr, $called:expr, $this:expr) => {
            fast_enter!($eg => $lookup, $dst, $args, $argc, $scope, $called, $this, None)
        };
        // A closure's: the register holding the closure, which the frame
        // takes (the call consumes it, as PHP's call frame holds the
        // closure until the call ends), and whose bound values and `$this`
        // go into the callee's variables.
        ($eg:ident => $lookup:expr, $dst:expr, $args:expr, $argc:expr, $scope:expr, $called:expr, $this:expr, $closure:expr) => {{
            let closure_reg: Option<*mut Value> = $closure;
            // SAFETY: until the block ends, nothing in it reaches EG but
            // through `eg`: the guard is named only because a closure could
            // not leave the loop.
            let mut access = unsafe { EgAccess::new(g) };
            let $eg = access.get();
            let found: Option<(minizts_core::bytecode::FuncId, &Function)> = $lookup;
            let Some((fid, callee)) = found.map(|(id, f)| (id, f as *const Function)) else {
                drop(access);
                slow!();
            };
            // SAFETY: the request's functions outlive its frames and this
            // loop (EG's code drops them only at request shutdown).
            let callee: &Function = unsafe { &*callee };
            let eg = $eg;
            if eg.interrupt.pending.load(Ordering::Relaxed) {
                drop(access);
                slow!();
            }
            let n = eg.frames.len();
            if n == eg.frames.capacity() {
                drop(access);
                slow!();
            }
            let frames = eg.frames.as_mut_ptr();
            // SAFETY: the running frame is the top one.
            let caller = unsafe { &mut *frames.add(n - 1) };
            // SAFETY: the argument registers are in the window.
            let at: *mut Value = unsafe { base.byte_add($args.raw() * 8) };
            let nregs = callee.num_regs as usize;
            if !eg.stack.reserve_in_chunk(caller.chunk, at, nregs) {
                drop(access);
                slow!();
            }
            let argc = $argc as usize;
            // SAFETY: `at..at+nregs` is the window just reserved, past the
            // caller's registers except the arguments.
            let cvs = unsafe { std::slice::from_raw_parts_mut(at, callee.num_cvs as usize) };
            let cvs = cvs.get_mut(argc..).unwrap_or_default();
            // (Checked before anything is written: the general path may
            // still take the call.)
            if !cvs.iter().all(Value::is_scalar) {
                drop(access);
                slow!();
            }
            for v in cvs {
                // SAFETY: a scalar owns nothing.
                unsafe { std::ptr::write(v, Value::Undef) };
            }
            // SAFETY: the register holds a closure (the arm checked).
            let closure = closure_reg.and_then(|r| unsafe { take_closure(r) });
            if let Some(c) = &closure {
                // SAFETY: `at` is the callee's window, its variables
                // cleared above.
                unsafe { crate::call::enter_closure(c, callee, at) };
            }
            let pc = cur!();
            caller.pc = pc;
            // SAFETY: slot `n` is below the capacity (checked above) and
            // holds no frame; the length then covers it.
            unsafe {
                frames.add(n).write(Frame {
                    func: fid,
                    function: callee,
                    base: at,
                    chunk: caller.chunk,
                    pc: callee.code.as_ptr(),
                    ret: $dst,
                    argc: argc as u16,
                    closure,
                    native: false,
                    scope: $scope,
                    called: $called,
                });
                eg.frames.set_len(n + 1);
            }
            base = at;
            code = callee.code.as_ptr();
            consts = callee.consts.values().as_ptr();
            ip = code;
            let this: Option<*mut Value> = $this;
            if let Some(this) = this {
                // SAFETY: `this` is a register of the caller's window, and
                // the callee's `$this` variable one of its window (cleared
                // above).
                unsafe {
                    let this = std::ptr::replace(this, Value::Undef);
                    match callee.this_cv {
                        Some(cv) => at.add(cv as usize).write(this),
                        None => drop(this),
                    }
                }
            }
            continue;
        }};
    }

    loop {
        // The dispatch loop: fast paths only; `slow!()` and
        // `safe_point!()` leave it.
        loop {
            // SAFETY: `ip` is inside the code (see its declaration).
            let op = unsafe { &*ip };
            // SAFETY: the instruction at `ip` is not the last one's end: the
            // code ends with a return, which never falls through.
            ip = unsafe { ip.add(1) };
            if !FAST {
                slow!();
            }
            match *op {
                // Not `{}`: an arm that does nothing would make the dispatch
                // block its own successor, and LLVM does not tail-duplicate
                // a single-block loop, so no arm would get its own copy of
                // the dispatch (threaded dispatch lost). The compiler never
                // emits `NOP` in running code.
                Op::Nop {} => slow!(),
                Op::Move { dst, src } => copy_into!(dst, raw!(src)),
                Op::MoveC { dst, src } => {
                    // SAFETY: a constant owns nothing (the pool holds scalars
                    // and interned strings), and the copy is taken before the
                    // register is written.
                    let v = kv!(src);
                    // SAFETY: as just said.
                    put!(dst, unsafe { std::ptr::read(v) })
                }
                // `$x = v`: a value that owns nothing into a variable that is
                // not a reference (a reference is not a scalar: `put!` would
                // overwrite it, so it goes to the general path).
                Op::Assign { var, src } => assign_plain!(var, raw!(src)),
                // A temporary holding a plain copy needs no emptying: the
                // next write to it overwrites it without a drop.
                Op::AssignTmp { var, src } => {
                    let v = rv!(src);
                    if v.is_plain_copy() {
                        assign_plain!(var, v)
                    }
                    // `$x = new C`, `$s = $a . $b`, `$a = f()`: a counted
                    // value moves out of its temporary into a variable that
                    // is not a reference.
                    if matches!(v, Value::Ref(_) | Value::Undef) || matches!(rv!(var), Value::Ref(_)) {
                        slow!();
                    }
                    put!(var, std::mem::take(slot!(src)))
                }
                Op::Add { dst, a, b } => {
                    arith!(put, dst, raw!(a), raw!(b), checked_add, +, refs!(dst, BinOp::Add, raw!(a), raw!(b)))
                }
                Op::Sub { dst, a, b } => {
                    arith!(put, dst, raw!(a), raw!(b), checked_sub, -, refs!(dst, BinOp::Sub, raw!(a), raw!(b)))
                }
                Op::Mul { dst, a, b } => {
                    arith!(put, dst, raw!(a), raw!(b), checked_mul, *, refs!(dst, BinOp::Mul, raw!(a), raw!(b)))
                }
                Op::AddRR { dst, a, b } => {
                    arith!(put, dst, rv!(a), rv!(b), checked_add, +, refs!(dst, BinOp::Add, rv!(a), rv!(b)))
                }
                Op::AddRC { dst, a, b } => {
                    arith!(put, dst, rv!(a), kv!(b), checked_add, +, refs!(dst, BinOp::Add, rv!(a), kv!(b)))
                }
                Op::SubRR { dst, a, b } => {
                    arith!(put, dst, rv!(a), rv!(b), checked_sub, -, refs!(dst, BinOp::Sub, rv!(a), rv!(b)))
                }
                Op::SubRC { dst, a, b } => {
                    arith!(put, dst, rv!(a), kv!(b), checked_sub, -, refs!(dst, BinOp::Sub, rv!(a), kv!(b)))
                }
                Op::MulRR { dst, a, b } => {
                    arith!(put, dst, rv!(a), rv!(b), checked_mul, *, refs!(dst, BinOp::Mul, rv!(a), rv!(b)))
                }
                Op::MulRC { dst, a, b } => {
                    arith!(put, dst, rv!(a), kv!(b), checked_mul, *, refs!(dst, BinOp::Mul, rv!(a), kv!(b)))
                }
                Op::MulCR { dst, a, b } => {
                    arith!(put, dst, kv!(a), rv!(b), checked_mul, *, refs!(dst, BinOp::Mul, kv!(a), rv!(b)))
                }
                Op::Div { dst, a, b } => div!(put, dst, raw!(a), raw!(b), refs!(dst, BinOp::Div, raw!(a), raw!(b))),
                Op::Mod { dst, a, b } => rem!(put, dst, raw!(a), raw!(b), refs!(dst, BinOp::Mod, raw!(a), raw!(b))),
                Op::Binary { op, dst, a, b } => {
                    binary!(put, dst, op, raw!(a), raw!(b), refs!(dst, op, raw!(a), raw!(b)))
                }
                Op::Lt { dst, a, b } => put_or_slow!(dst, num::less(raw!(a), raw!(b)).map(Value::Bool)),
                Op::Le { dst, a, b } => put_or_slow!(dst, num::less_eq(raw!(a), raw!(b)).map(Value::Bool)),
                Op::Eq { dst, a, b } => put_or_slow!(dst, num::equal(raw!(a), raw!(b)).map(Value::Bool)),
                Op::Identical { dst, a, b } => {
                    put_or_slow!(dst, num::identical(raw!(a), raw!(b)).map(Value::Bool))
                }
                Op::Not { dst, src } => put_or_slow!(dst, num::truthy(raw!(src)).map(|b| Value::Bool(!b))),
                Op::ToBool { dst, src } => put_or_slow!(dst, num::truthy(raw!(src)).map(Value::Bool)),
                // `$x <op>= y` on numbers, written in place (a reference or an
                // unset variable is not a number: the general path).
                Op::AssignOp { op, var, src } => {
                    // `$s .= $t` on two strings that stay small: appended in
                    // place (the string is copied first if it is shared).
                    if let (BinOp::Concat, Value::Str(t)) = (op, raw!(src)) {
                        if src.as_reg() != Some(var) {
                            if let Value::Str(s) = slot!(var) {
                                if s.len() + t.len() <= crate::limits::SMALL_STRING {
                                    s.make_mut().extend_from_slice(t);
                                    continue;
                                }
                            }
                        }
                        slow!();
                    }
                    if let Value::Ref(r) = rv!(var) {
                        // A `global` variable or by-reference parameter:
                        // in place behind the reference, when it holds a
                        // number (the guard ends with the arm).
                        let Ok(mut inner) = r.try_borrow_mut() else { slow!() };
                        if r.is_typed() {
                            slow!();
                        }
                        let p: *mut Value = &mut *inner;
                        // SAFETY: `p` is the referenced value, borrowed
                        // until the arm ends; the writer only runs when it
                        // holds a number.
                        binary!(put_elem, p, op, unsafe { &*p }, raw!(src), slow!())
                    }
                    binary!(put, var, op, rv!(var), raw!(src), slow!())
                }
                // Two strings that stay small, concatenated (no limit to check).
                Op::Concat { dst, a, b } => match (raw!(a), raw!(b)) {
                    (Value::Str(x), Value::Str(y)) if x.len() + y.len() <= crate::limits::SMALL_STRING => {
                        put!(dst, concat_small(x, y))
                    }
                    _ => slow!(),
                },
                Op::IncVar { var } => match slot!(var) {
                    Value::Int(n) if *n < i64::MAX => *n += 1,
                    _ => slow!(),
                },
                Op::DecVar { var } => match slot!(var) {
                    Value::Int(n) if *n > i64::MIN => *n -= 1,
                    _ => slow!(),
                },
                Op::IncDecVar { var, kind, dst } => {
                    let Value::Int(n) = *rv!(var) else { slow!() };
                    let Some(x) = kind.step_int(n) else { slow!() };
                    if let Value::Int(n) = slot!(var) {
                        *n = x;
                    }
                    // The result goes in after the variable (it may be the
                    // variable itself, which then ends with the result, as in
                    // the general path).
                    if !dst.is_none() {
                        put!(dst, Value::Int(if kind.is_pre() { x } else { n }));
                    }
                }
                Op::Quiet { dst, var } => {
                    let v = rv!(var);
                    if !v.is_plain_copy() {
                        slow!();
                    }
                    // SAFETY: as for `Move`.
                    put!(dst, unsafe { std::ptr::read(v) })
                }
                Op::FetchDim { dst, base: b, key } => {
                    // An int or (non-numeric) string key of an array, directly
                    // or behind a reference (a by-reference parameter, a
                    // global).
                    let c = raw!(b);
                    // SAFETY: nothing borrows a reference mutably while this
                    // instruction reads it.
                    let found = match (unsafe { array_of(c) }, raw!(key)) {
                        (Some(arr), Value::Int(k)) => arr.get_int(*k),
                        (Some(arr), Value::Str(k)) if minizts_core::array::canonical_int(k).is_none() => {
                            arr.get_str_key(k)
                        }
                        // `$s[$i]` inside a string: its interned one-byte
                        // string.
                        (None, &Value::Int(i)) => match c {
                            Value::Str(s) if (i as u64) < s.len() as u64 => {
                                put!(dst, Value::Str(PhpStr::one_byte(s[i as usize])))
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    fetched!(dst, found)
                }
                // `isset($a[$k])`, `$a[$k] ?? x`: as `FetchDim` on an
                // array, and a missing key reads as null.
                Op::FetchDimQuiet { dst, base: b, key } => {
                    let c = raw!(b);
                    // SAFETY: as for `FetchDim`.
                    let Some(arr) = (unsafe { array_of(c) }) else { slow!() };
                    let found = match raw!(key) {
                        Value::Int(k) => arr.get_int(*k),
                        Value::Str(k) if minizts_core::array::canonical_int(k).is_none() => arr.get_str_key(k),
                        _ => slow!(),
                    };
                    match found {
                        None => put!(dst, Value::Null),
                        found => fetched!(dst, found),
                    }
                }
                Op::FetchDim2 { dst, base: b, k1, k2 } => {
                    let c = raw!(b);
                    // SAFETY: as for `FetchDim`.
                    let found = match (unsafe { array_of(c) }, raw!(k1), raw!(k2)) {
                        (Some(outer), Value::Int(i), Value::Int(j)) => match outer.get_int(*i) {
                            Some(Value::Arr(inner)) => inner.get_int(*j),
                            _ => None,
                        },
                        _ => None,
                    };
                    fetched!(dst, found)
                }
                // `unset($x)` of a variable that owns nothing, and the
                // "append" marker put in a key register (`$a[$k][] = v`).
                Op::UnsetVar { var } => {
                    let s = slot!(var);
                    if !s.is_scalar() {
                        slow!();
                    }
                    // SAFETY: a scalar owns nothing, so overwriting it
                    // without a drop leaks nothing.
                    unsafe { std::ptr::write(s, Value::Undef) };
                }
                Op::AssignDimPush { var, src, tmp } => {
                    // The value's copy is taken before the variable is
                    // borrowed (it may be the variable itself).
                    let v = raw!(src).clone();
                    if !push_element(slot!(var), v) {
                        slow!();
                    }
                    if tmp {
                        if let Some(t) = src.as_reg() {
                            // The array holds the value now: the release
                            // frees nothing.
                            slot!(t).release_counted();
                        }
                    }
                }
                Op::AssignDim1 { var, key, src } => {
                    // An int key of an unshared array, directly in the variable
                    // or behind a reference (a by-reference parameter): in
                    // place, unless the element is a reference. The operands
                    // are read before the variable is borrowed (either may be
                    // the variable itself).
                    let n = match raw!(key) {
                        Value::Int(n) => *n,
                        // A string key: out of line, with copies of the key
                        // and the value taken before the variable is
                        // borrowed.
                        Value::Str(k) => {
                            let v = raw!(src);
                            if matches!(v, Value::Ref(_) | Value::Undef) {
                                slow!();
                            }
                            let (k, v) = (k.clone(), v.clone());
                            let Ok(old) = set_str_element(slot!(var), k, v) else {
                                slow!()
                            };
                            release_old!(old);
                            continue;
                        }
                        _ => slow!(),
                    };
                    let v = raw!(src);
                    let done = if v.is_plain_copy() {
                        // SAFETY: the value owns nothing, and the copy is taken
                        // before the variable is borrowed.
                        let v = unsafe { std::ptr::read(v) };
                        match slot!(var) {
                            Value::Arr(a) => overwrite_scalar_element(a, n, v),
                            Value::Ref(r) => match r.try_borrow_mut().as_deref_mut() {
                                Ok(Value::Arr(a)) => overwrite_scalar_element(a, n, v),
                                _ => false,
                            },
                            _ => false,
                        }
                    } else if matches!(v, Value::Ref(_) | Value::Undef) {
                        false
                    } else {
                        let v = v.clone();
                        let v = match slot!(var) {
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
                            Ok(old) => {
                                release_old!(old);
                                true
                            }
                            Err(_) => false,
                        }
                    };
                    if !done {
                        slow!();
                    }
                }
                Op::AssignDimOp1 { op, var, key, src, dst } => {
                    // (The expression's value is read: rare, left to the
                    // slow path.)
                    if !dst.is_none() {
                        slow!();
                    }
                    // `$a[$k] <op>= n` on a number element of an unshared
                    // array, in place, the array directly in the variable or
                    // behind a reference (dereferenced once). The operands are
                    // read before the variable is borrowed: either may be the
                    // variable itself.
                    let (k, n) = (raw!(key), raw!(src));
                    let elem = match k {
                        Value::Int(k) => {
                            let k = *k;
                            if !matches!(n, Value::Int(_) | Value::Float(_)) {
                                slow!();
                            }
                            // SAFETY: `n` is a number, which owns nothing: its
                            // copy is taken before the variable is borrowed.
                            let n = unsafe { std::ptr::read(n) };
                            let e: *mut Value = match slot!(var) {
                                Value::Arr(a) => match Rc::get_mut(a).and_then(|a| a.get_int_mut(k)) {
                                    Some(e) => e,
                                    None => slow!(),
                                },
                                // The reference's value is borrowed for this
                                // instruction only: the element is written
                                // before anything else can reach it.
                                Value::Ref(r) => match r.try_borrow_mut().as_deref_mut() {
                                    Ok(Value::Arr(a)) => match Rc::get_mut(a).and_then(|a| a.get_int_mut(k)) {
                                        Some(e) => e,
                                        None => slow!(),
                                    },
                                    _ => slow!(),
                                },
                                _ => slow!(),
                            };
                            // SAFETY: `e` is the element, read before it is
                            // written.
                            binary!(put_elem, e, op, unsafe { &*e }, &n, slow!())
                        }
                        Value::Str(k) if key.as_reg() != Some(var) => match n {
                            // The key is another register than the variable,
                            // so it may be read while the variable is
                            // borrowed; so is `src`, which holds an int, not
                            // the array.
                            Value::Int(n) => add_to_str_element(slot!(var), op, k, *n),
                            _ => false,
                        },
                        _ => false,
                    };
                    if !elem {
                        slow!();
                    }
                }
                Op::Jmp { target } | Op::JmpBack { target } => jump!(target),
                Op::JmpIf { cond, target } => branch!(num::truthy(raw!(cond)), true, target),
                Op::JmpArgByVal {
                    callee,
                    arg,
                    target,
                    method: false,
                } => {
                    // A script closure called with a positional argument
                    // (a callback handed to a function, `$f($a[$i])`):
                    // its parameter's flag, without resolving the callee.
                    let (Value::Closure(c), Value::Int(i)) = (rv!(callee), raw!(arg)) else {
                        slow!()
                    };
                    if matches!(c.kind, minizts_core::value::ClosureKind::Builtin(_)) {
                        slow!();
                    }
                    // SAFETY: a closure's function is one of the request's.
                    if !unsafe { crate::code::known(g, c.func) }.param_by_ref(*i as usize) {
                        jump!(target);
                    }
                }
                Op::JmpIfNot { cond, target } => branch!(num::truthy(raw!(cond)), false, target),
                Op::JmpIfNotNull { src, target } => {
                    let v = raw!(src);
                    if matches!(v, Value::Ref(_)) {
                        slow!();
                    }
                    if !v.is_null() {
                        jump!(target);
                    }
                }
                Op::JmpLt { a, b, if_true, target } => branch!(num::less(raw!(a), raw!(b)), if_true, target),
                Op::JmpLtRR { a, b, if_true, target } => branch!(num::less(rv!(a), rv!(b)), if_true, target),
                Op::JmpLtRC { a, b, if_true, target } => branch!(num::less(rv!(a), kv!(b)), if_true, target),
                Op::JmpLtCR { a, b, if_true, target } => branch!(num::less(kv!(a), rv!(b)), if_true, target),
                Op::JmpLe { a, b, if_true, target } => branch!(num::less_eq(raw!(a), raw!(b)), if_true, target),
                Op::JmpLeRR { a, b, if_true, target } => branch!(num::less_eq(rv!(a), rv!(b)), if_true, target),
                Op::JmpLeRC { a, b, if_true, target } => branch!(num::less_eq(rv!(a), kv!(b)), if_true, target),
                Op::JmpEq { a, b, if_true, target } => branch!(num::equal(raw!(a), raw!(b)), if_true, target),
                Op::JmpIdentical { a, b, if_true, target } => {
                    branch!(num::identical(raw!(a), raw!(b)), if_true, target)
                }
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
                Op::CallDirect {
                    dst,
                    args,
                    argc,
                    func: fid,
                    ..
                } => {
                    // (`bind_early_calls` writes `CallDirect` only with the
                    // id of a function of the caller's script.)
                    fast_enter!(eg => eg.code.get(fid).map(|f| (fid, f)), dst, args, argc)
                }
                Op::CallUser { dst, site, args, argc } => {
                    fast_enter!(eg => {
                        // SAFETY: the top frame's function is the running
                        // one.
                        let func = unsafe { &*eg.frames.last().expect("a frame").function };
                        match eg.runtime_cache[func.sites[site as usize].cache_slot as usize] {
                            CacheEntry::Function(id) => eg
                                .code
                                .get(id)
                                .filter(|f| f.takes_plainly(argc as usize))
                                .map(|f| (id, f)),
                            _ => None,
                        }
                    }, dst, args, argc)
                }
                // Declared types that take the value as it is.
                Op::VerifyArg { param, cache } => {
                    // SAFETY: `base` is the running frame's window.
                    if !unsafe { members::verify_arg(g, base, param, cache) } {
                        slow!();
                    }
                }
                Op::VerifyReturn { dst, src, cache } => {
                    let v = raw!(src);
                    if matches!(v, Value::Ref(_) | Value::Undef) || !members::verify_return(g, v, cache) {
                        slow!();
                    }
                    put!(dst, v.clone())
                }
                // Object members that the instruction's runtime cache
                // entry answers (`members.rs`).
                Op::IssetProp {
                    dst, obj, empty, cache, ..
                } => {
                    put_or_slow!(dst, members::isset_prop(g, arg!(obj), cache, empty).map(Value::Bool))
                }
                Op::FetchProp { dst, obj, cache, .. } => {
                    put_or_slow!(dst, members::fetch_prop(g, arg!(obj), cache))
                }
                Op::AssignProp { obj, src, cache, .. } => match members::assign_prop(g, arg!(obj), cache, arg!(src)) {
                    Some(false) => continue,
                    Some(true) => safe_point!(),
                    None => slow!(),
                },
                // SAFETY: `op` is the executing instruction, on its
                // window and pool.
                Op::AssignPropDim { depth: 1, .. } => match unsafe { members::assign_prop_dim(g, op, base, consts) } {
                    Some(false) => continue,
                    Some(true) => safe_point!(),
                    None => slow!(),
                },
                Op::InitMethod {
                    callee,
                    obj,
                    tmp,
                    cache,
                    ..
                } => {
                    let regs: *mut Value = slot!(callee);
                    // A temporary is reached without a reference, as it is
                    // written; any other operand is only read.
                    let from: *mut Value = match obj.as_reg() {
                        // SAFETY: a register of the window.
                        Some(r) if tmp => unsafe { base.byte_add(r.raw() * 8) },
                        _ => std::ptr::from_ref(arg!(obj)).cast_mut(),
                    };
                    // SAFETY: `callee` is the first of three registers of
                    // the window; `from` as just said.
                    if !unsafe { members::init_method(g, from, tmp, cache, regs) } {
                        slow!();
                    }
                }
                Op::Cast { dst, src, kind } => put_or_slow!(dst, num::cast_plain(raw!(src), kind)),
                Op::ArraySet { arr, key, src } => {
                    if !num::array_set_plain(slot!(arr), raw!(key), raw!(src)) {
                        slow!();
                    }
                }
                // Whether an argument that may be passed by reference
                // (`f($a[0])`, `$o->m($p->q)`) is, by position, for a
                // script method or closure (see `SEND_VAR_EX`).
                Op::JmpArgByVal {
                    callee,
                    arg,
                    target,
                    method,
                } => {
                    let Value::Int(i @ 0..=0xffff) = *raw!(arg) else {
                        slow!()
                    };
                    let regs: *const Value = slot!(callee);
                    // SAFETY: as for `SEND_VAR_EX`.
                    match unsafe { members::callee_param_by_ref(g, regs, i as u16, method) } {
                        Some(false) => jump!(target),
                        Some(true) => {}
                        None => slow!(),
                    }
                }
                // A parameter with a default: skip the default's code when
                // the call passed it (a named argument's skipped parameter
                // comes unset).
                Op::JmpIfPassed { param, target } => {
                    let argc = eg!(g, |eg| eg.frames.last().map_or(0, |f| f.argc));
                    if argc > param && !matches!(rv!(Reg::new(param)), Value::Undef) {
                        jump!(target);
                    }
                }
                // A variable passed by value to a script method's or a
                // closure's parameter (PHP's `SEND_VAR_EX` on the
                // function's argument flags); by reference, an undefined
                // or reference variable, or another callee: the general
                // path.
                Op::SendVarEx {
                    dst,
                    var,
                    callee,
                    argno,
                    method,
                } if dst != var => {
                    let regs: *const Value = slot!(callee);
                    // SAFETY: `callee` is the first of a method call's three
                    // registers of the window, or the callee's register.
                    if unsafe { members::callee_param_by_ref(g, regs, u16::from(argno), method) } != Some(false) {
                        slow!();
                    }
                    copy_into!(dst, rv!(var))
                }
                Op::InitStaticMethod { callee, cache, .. } => {
                    let regs: *mut Value = slot!(callee);
                    // SAFETY: `callee` is the first of three registers of
                    // the window.
                    if !unsafe { members::init_static_method(g, cache, regs) } {
                        slow!();
                    }
                }
                // A closure literal called through a variable (PHP's
                // `INIT_DYNAMIC_CALL` of a `Closure`, then `DO_UCALL`), its
                // function taking the arguments plainly and none of them
                // sent as a value to a by-reference parameter.
                Op::CallValue {
                    dst,
                    callee,
                    args,
                    argc,
                    vals,
                } if matches!(rv!(callee), Value::Closure(c) if c.kind == minizts_core::value::ClosureKind::Literal) => {
                    let reg: *mut Value = slot!(callee);
                    // SAFETY: a register of the window.
                    let (fid, scope, called) = match unsafe { &*reg } {
                        Value::Closure(c) if c.kind == minizts_core::value::ClosureKind::Literal => {
                            (c.func, c.scope, c.called)
                        }
                        _ => slow!(),
                    };
                    fast_enter!(eg => eg
                        .code
                        .get(fid)
                        .filter(|f| {
                            f.takes_plainly(argc as usize) && vals & f.by_ref_args == 0
                        })
                        .map(|f| (fid, f)), dst, args, argc, scope, called, None::<*mut Value>, Some(reg))
                }
                // A script method that `INIT_METHOD`, `INIT_STATIC_METHOD`
                // or `INIT_DYNAMIC_CALL` put in the callee registers
                // (`objects::fill_callee`), taking its arguments plainly,
                // none of them a value that a by-reference parameter
                // refuses (`vals`).
                Op::CallMethod {
                    dst,
                    callee,
                    args,
                    argc,
                    vals,
                } => {
                    let regs: *mut Value = slot!(callee);
                    // SAFETY: `callee` is the first of three registers of
                    // the window.
                    let (this, desc, called) = unsafe { (&*regs, &*regs.add(1), &*regs.add(2)) };
                    let (Value::Int(desc), Value::Int(called)) = (desc, called) else {
                        slow!()
                    };
                    if desc & crate::objects::NATIVE_BIT != 0 {
                        slow!();
                    }
                    let fid = *desc as u32;
                    let scope = (*desc >> 32) as u32 + 1;
                    let called = *called as u32 + 1;
                    match this {
                        Value::Obj(this) => {
                            let shared = this.count() > 1;
                            fast_enter!(eg => match eg.code.get(fid) {
                                Some(f)
                                    if f.takes_plainly(argc as usize)
                                        && vals & f.by_ref_args == 0
                                        && (shared || f.this_cv.is_some()) =>
                                {
                                    Some((fid, f))
                                }
                                _ => None,
                            }, dst, args, argc, scope, called, Some(regs))
                        }
                        // A static method: no `$this`.
                        Value::Null => fast_enter!(eg => match eg.code.get(fid) {
                            Some(f) if f.takes_plainly(argc as usize) && vals & f.by_ref_args == 0 => Some((fid, f)),
                            _ => None,
                        }, dst, args, argc, scope, called, None::<*mut Value>),
                        _ => slow!(),
                    }
                }
                // A script method on an object that `INIT_DYNAMIC_CALL`
                // resolved (`[$obj, 'name']`), as `CALL_METHOD`, none of the
                // arguments a value that a by-reference parameter refuses.
                Op::CallValue {
                    dst,
                    callee,
                    args,
                    argc,
                    vals: 0,
                } => {
                    let regs: *mut Value = slot!(callee);
                    // SAFETY: `callee` is the first of three registers of
                    // the window.
                    let (this, desc, called) = unsafe { (&*regs, &*regs.add(1), &*regs.add(2)) };
                    let (Value::Obj(this), Value::Int(desc), Value::Int(called)) = (this, desc, called) else {
                        slow!()
                    };
                    if desc & crate::objects::NATIVE_BIT != 0 {
                        slow!();
                    }
                    let fid = *desc as u32;
                    let scope = (*desc >> 32) as u32 + 1;
                    let called = *called as u32 + 1;
                    let shared = this.count() > 1;
                    fast_enter!(eg => eg
                        .code
                        .get(fid)
                        .filter(|f| f.takes_plainly(argc as usize) && (shared || f.this_cv.is_some()))
                        .map(|f| (fid, f)), dst, args, argc, scope, called, Some(regs))
                }
                Op::IncDecProp {
                    obj, kind, dst, cache, ..
                } => {
                    let Some(r) = members::inc_dec_prop(g, arg!(obj), cache, kind) else {
                        slow!()
                    };
                    if !dst.is_none() {
                        put!(dst, Value::Int(r));
                    }
                }
                Op::AssignPropOp {
                    op,
                    obj,
                    src,
                    dst,
                    cache,
                    ..
                } => {
                    let Some(r) = members::assign_prop_op(g, arg!(obj), cache, op, arg!(src)) else {
                        slow!()
                    };
                    if !dst.is_none() {
                        put!(dst, r);
                    }
                }
                Op::FetchClassConst {
                    dst,
                    class,
                    mode,
                    cache,
                    ..
                } => {
                    let of = if mode == minizts_core::bytecode::class_mode::VALUE {
                        match arg!(class) {
                            Value::Obj(o) => o.class.id,
                            _ => slow!(),
                        }
                    } else {
                        CacheEntry::NAMED_CLASS
                    };
                    put_or_slow!(dst, members::class_const(g, cache, of))
                }
                Op::FetchConst { dst, site } => put_or_slow!(dst, members::constant(g, site)),
                Op::FetchStaticProp { dst, cache, .. } => put_or_slow!(dst, members::static_prop_value(g, cache)),
                Op::AssignStaticProp { src, cache, .. } => match members::assign_static_prop(g, cache, arg!(src)) {
                    Some(false) => continue,
                    Some(true) => safe_point!(),
                    None => slow!(),
                },
                Op::IncDecStaticProp { kind, dst, cache, .. } => {
                    let Some(r) = members::inc_dec_static_prop(g, cache, kind) else {
                        slow!()
                    };
                    if !dst.is_none() {
                        put!(dst, Value::Int(r));
                    }
                }
                Op::FetchStaticPropRef {
                    dst,
                    cache,
                    bind: false,
                    ..
                } => {
                    put_or_slow!(dst, members::static_prop(g, cache).map(Value::Ref))
                }
                Op::InstanceOf { dst, src, cache, .. } => {
                    put_or_slow!(dst, members::instance_of(g, arg!(src), cache).map(Value::Bool))
                }
                // A return of a value that owns nothing from a frame a call in
                // bytecode pushed, whose window holds nothing but scalars and
                // interned strings, into a caller register that holds a scalar
                // (all or nothing: the checks come before any write).
                Op::Return { src } => {
                    let v = raw!(src);
                    // A counted value in a register of the returning window
                    // moves out of it (the register is then empty; put back if
                    // the fast path does not apply).
                    let moved: Option<*mut Value> = match src.as_reg() {
                        Some(r) if !v.is_plain_copy() && !matches!(v, Value::Ref(_) | Value::Undef) => {
                            Some(slot!(r) as *mut Value)
                        }
                        _ => None,
                    };
                    if !v.is_plain_copy() && moved.is_none() {
                        slow!();
                    }
                    // SAFETY: a bit copy: the value owns nothing, or its
                    // register is emptied below, so it is owned once.
                    let v = unsafe { std::ptr::read(v) };
                    if let Some(p) = moved {
                        // SAFETY: `p` is the live register `v` came from.
                        unsafe { std::ptr::write(p, Value::Undef) };
                    }
                    // Gives the value back to its register, if it moved, and
                    // takes the general path.
                    #[collapse_debuginfo(yes)]
                    macro_rules! bail {
                        ($access:expr) => {{
                            match moved {
                                // SAFETY: `p` is the register emptied above.
                                Some(p) => unsafe { std::ptr::write(p, v) },
                                None => std::mem::forget(v),
                            }
                            drop($access);
                            slow!();
                        }};
                    }
                    // SAFETY: only `eg` reaches EG until the arm ends (as in
                    // `fast_enter!`).
                    let mut access = unsafe { EgAccess::new(g) };
                    let eg = access.get();
                    let n = eg.frames.len();
                    let frames = eg.frames.as_mut_ptr();
                    // SAFETY: the running frame is the top one.
                    let top = unsafe { &*frames.add(n - 1) };
                    if top.native {
                        bail!(access);
                    }
                    // SAFETY: a frame that is not native has a caller below it
                    // (a call in bytecode pushed it).
                    let caller = unsafe { &*frames.add(n - 2) };
                    let ret = top.ret;
                    // SAFETY: the caller's return register is in its window.
                    let dst = (!ret.is_none()).then(|| unsafe { caller.base.byte_add(ret.raw() * 8) });
                    // SAFETY: `base..base+num_regs` is the returning window,
                    // which nothing else refers to.
                    let window = unsafe { std::slice::from_raw_parts_mut(base, (*top.function).num_regs as usize) };
                    // Scalars need nothing: one tight pass finds the first
                    // register that holds anything else, and the rest is
                    // released out of line (PHP frees a function's variables
                    // as it leaves). Dropping a value only frees memory: no
                    // script code runs and EG is not reached, so the frame
                    // can still be popped here.
                    // A destructor made due on the way is run at the safe
                    // point once the caller's frame is back.
                    let mut due = false;
                    if let Some(first) = window.iter().position(|v| !v.is_scalar()) {
                        release_window(&mut window[first..]);
                        due = eg.interrupt.pending.load(Ordering::Relaxed);
                    }
                    // SAFETY: popping the frame with `set_len` forgets it, so
                    // the bit copy of its closure that follows (the frame's
                    // slot is still allocated, and nothing has written it)
                    // is owned once; the caller's saved instruction is the
                    // call, followed by more code; the caller's function
                    // points into the script.
                    unsafe {
                        eg.frames.set_len(n - 1);
                        if let Some(c) = std::ptr::read(&(*frames.add(n - 1)).closure) {
                            // As the general path does: the frame's closure
                            // goes once the frame is popped.
                            release_closure(c);
                            due |= eg.interrupt.pending.load(Ordering::Relaxed);
                        }
                        let func = &*caller.function;
                        base = caller.base;
                        code = func.code.as_ptr();
                        consts = func.consts.values().as_ptr();
                        ip = caller.pc.add(1);
                        if let Some(d) = dst {
                            if (*d).is_scalar() {
                                d.write(v);
                            } else {
                                // A temporary the caller still held a
                                // counted value in: dropped once the result
                                // is in (PHP's order).
                                let mut old = std::ptr::replace(d, v);
                                release_window(std::slice::from_mut(&mut old));
                                due |= eg.interrupt.pending.load(Ordering::Relaxed);
                            }
                        }
                    }
                    if due {
                        drop(access);
                        safe_point!();
                    }
                }
                Op::CallBuiltin { dst, id, args, argc } => {
                    let at = cur!();
                    // SAFETY: the operands are the window's registers.
                    if let Err(e) = unsafe { call_builtin(g, at, base, dst, id, args, argc) } {
                        // What the builtin threw goes to the innermost
                        // handler, as the general path's errors do.
                        match after_step(g, Err(e)) {
                            Ok(Next(to)) => {
                                load_frame!();
                                ip = to.wrapping_byte_sub(1);
                                continue;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
                // The builtins with instructions of their own, on the
                // argument types that need no conversion (behind a
                // reference too, as PHP's handlers dereference theirs).
                Op::Strlen { dst, arg, tmp, .. } => {
                    let Value::Str(s) = arg!(arg) else { slow!() };
                    let v = Value::Int(s.len() as i64);
                    builtin_result!(dst, v, tmp, arg)
                }
                Op::Count { dst, arg, tmp, .. } => {
                    let Value::Arr(a) = arg!(arg) else { slow!() };
                    let v = Value::Int(a.len() as i64);
                    builtin_result!(dst, v, tmp, arg)
                }
                Op::FetchVarVar { dst, cache, .. } => put_or_slow!(dst, crate::scope::fetch_global_cached(g, cache)),
                Op::TypeCheck {
                    dst, arg, tmp, mask, ..
                } => {
                    let v = arg!(arg);
                    // An unset variable: PHP's warning first.
                    if matches!(v, Value::Undef) {
                        slow!();
                    }
                    let v = Value::Bool(crate::types::kind(v) & mask != 0);
                    builtin_result!(dst, v, tmp, arg)
                }
                Op::FuncNumArgs { dst, .. } => match crate::scope::arg_count_plain(g) {
                    Some(n) => put!(dst, Value::Int(n as i64)),
                    None => slow!(),
                },
                Op::Ord { dst, arg, tmp, .. } => {
                    let Value::Str(s) = arg!(arg) else { slow!() };
                    let v = Value::Int(s.first().map_or(0, |&c| c as i64));
                    builtin_result!(dst, v, tmp, arg)
                }
                Op::Chr { dst, arg, .. } => match *arg!(arg) {
                    // PHP takes the low byte.
                    Value::Int(c) => put!(dst, Value::Str(PhpStr::one_byte(c as u8))),
                    _ => slow!(),
                },
                Op::Abs { dst, arg, .. } => match *arg!(arg) {
                    // `abs(PHP_INT_MIN)` is a float: the general path.
                    Value::Int(n) if n != i64::MIN => put!(dst, Value::Int(n.abs())),
                    Value::Float(x) => put!(dst, Value::Float(x.abs())),
                    _ => slow!(),
                },
                Op::Sqrt { dst, arg, .. } => match *arg!(arg) {
                    Value::Float(x) => put!(dst, Value::Float(x.sqrt())),
                    Value::Int(n) => put!(dst, Value::Float((n as f64).sqrt())),
                    _ => slow!(),
                },
                Op::Floor { dst, arg, .. } => match *arg!(arg) {
                    Value::Float(x) => put!(dst, Value::Float(x.floor())),
                    Value::Int(n) => put!(dst, Value::Float(n as f64)),
                    _ => slow!(),
                },
                Op::Ceil { dst, arg, .. } => match *arg!(arg) {
                    Value::Float(x) => put!(dst, Value::Float(x.ceil())),
                    Value::Int(n) => put!(dst, Value::Float(n as f64)),
                    _ => slow!(),
                },
                Op::Intdiv { dst, a, b, .. } => match (arg!(a), arg!(b)) {
                    // Division by zero and `PHP_INT_MIN / -1` throw: the
                    // general path.
                    (&Value::Int(x), &Value::Int(y)) if y != 0 && y != -1 => put!(dst, Value::Int(x / y)),
                    _ => slow!(),
                },
                // PHP keeps the first of two equal arguments; two floats
                // of which one is NAN go to the general path (its
                // comparison decides).
                Op::Min { dst, a, b, .. } => match (arg!(a), arg!(b)) {
                    (&Value::Int(x), &Value::Int(y)) => put!(dst, Value::Int(if y < x { y } else { x })),
                    (&Value::Float(x), &Value::Float(y)) if !x.is_nan() && !y.is_nan() => {
                        put!(dst, Value::Float(if y < x { y } else { x }))
                    }
                    _ => slow!(),
                },
                Op::Max { dst, a, b, .. } => match (arg!(a), arg!(b)) {
                    (&Value::Int(x), &Value::Int(y)) => put!(dst, Value::Int(if y > x { y } else { x })),
                    (&Value::Float(x), &Value::Float(y)) if !x.is_nan() && !y.is_nan() => {
                        put!(dst, Value::Float(if y > x { y } else { x }))
                    }
                    _ => slow!(),
                },
                Op::Echo { src } => match raw!(src) {
                    Value::Str(s) => eg!(g).output.write(s),
                    _ => slow!(),
                },
                Op::NewArray { dst, capacity } => {
                    let a = if capacity == 0 {
                        PhpArray::empty_literal()
                    } else {
                        PhpArray::with_capacity(capacity as usize)
                    };
                    put!(dst, Value::arr(a))
                }
                // A constant array literal the request built already.
                Op::LoadArray { dst, cache, .. } => {
                    let Some(v) = members::cached_array(g, cache) else {
                        slow!()
                    };
                    put!(dst, v)
                }
                // Appends to the array literal being built (a failed push,
                // PHP's error, changes nothing: the general path raises it).
                Op::ArrayPush { arr, src } => {
                    let v = raw!(src);
                    if matches!(v, Value::Ref(_) | Value::Undef) {
                        slow!();
                    }
                    let v = v.clone();
                    let Some(a) = slot!(arr).array_mut() else { slow!() };
                    if a.push(v).is_err() {
                        slow!();
                    }
                }
                Op::FeFetch { iter, value, key, end } => {
                    // Variables that are not references take the element and
                    // key as they are (a reference is written through: the
                    // general path).
                    if matches!(rv!(value), Value::Ref(_)) || (!key.is_none() && matches!(rv!(key), Value::Ref(_))) {
                        slow!();
                    }
                    let Value::IterVal(a, pos) = slot!(iter) else { slow!() };
                    let Some((i, k, v)) = a.at_or_after(*pos as usize) else {
                        jump!(end)
                    };
                    let (k, v) = (k.to_value(), v.deref_clone());
                    *pos = (i + 1) as u32;
                    let old = std::mem::replace(slot!(value), v);
                    if !key.is_none() {
                        slot!(key).overwrite(k);
                    }
                    release_old!(old);
                }
                // `$a[$i][$j] <op>= n` (any depth) on a number element of
                // unshared arrays, in place.
                Op::AssignDimOp {
                    op,
                    var,
                    keys,
                    depth,
                    src,
                    dst,
                } => {
                    let n = raw!(src);
                    if !dst.is_none() || !matches!(n, Value::Int(_) | Value::Float(_)) {
                        slow!();
                    }
                    // SAFETY: a number owns nothing; copied before the variable
                    // is borrowed.
                    let n = unsafe { std::ptr::read(n) };
                    // SAFETY: the key registers are temporaries above the
                    // variable (they never overlap it), in the window.
                    let keys = unsafe { std::slice::from_raw_parts(base.byte_add(keys.raw() * 8), depth as usize) };
                    let Some(e) = number_element(slot!(var), keys) else {
                        slow!()
                    };
                    // SAFETY: `e` is the element, read before it is written.
                    binary!(put_elem, e, op, unsafe { &*e }, &n, slow!())
                }
                // `$a[$k]++` (any depth) on an int element of unshared
                // arrays, in place.
                Op::IncDecDim {
                    var,
                    keys,
                    depth,
                    kind,
                    dst,
                } => {
                    // SAFETY: as for `AssignDimOp`.
                    let keys = unsafe { std::slice::from_raw_parts(base.byte_add(keys.raw() * 8), depth as usize) };
                    let Some(e) = number_element(slot!(var), keys) else {
                        slow!()
                    };
                    // SAFETY: `e` is the element; nothing else reaches the
                    // variable until it is written.
                    let e = unsafe { &mut *e };
                    let Value::Int(n) = *e else { slow!() };
                    let Some(x) = kind.step_int(n) else { slow!() };
                    *e = Value::Int(x);
                    if !dst.is_none() {
                        put!(dst, Value::Int(if kind.is_pre() { x } else { n }));
                    }
                }
                Op::IsSet { dst, src } => {
                    let v = raw!(src);
                    if matches!(v, Value::Ref(_)) {
                        slow!();
                    }
                    put!(dst, Value::Bool(!v.is_null()))
                }
                // A closure that calls a function (a literal, a builtin's or
                // a function's first-class callable, not a method's) goes
                // into the call's register, null after it saying that it
                // is not a method.
                Op::InitDynamicCall { callee, src } => {
                    use minizts_core::value::ClosureKind;
                    let v = raw!(src);
                    if !matches!(v, Value::Closure(c) if c.kind != ClosureKind::Magic
                        && (c.kind != ClosureKind::Named || c.scope == 0))
                    {
                        slow!();
                    }
                    let first: *mut Value = slot!(callee);
                    // SAFETY: the call's second register, of the window; a
                    // scalar owns nothing.
                    unsafe {
                        let next = first.add(1);
                        if !(*next).is_scalar() {
                            slow!();
                        }
                        std::ptr::write(next, Value::Null);
                    }
                    if src != Src::reg(callee) {
                        copy_into!(callee, v)
                    }
                }
                Op::New { dst, skip, cache, .. } => {
                    let regs: *mut Value = slot!(dst);
                    // SAFETY: `dst` and the constructor call's three
                    // registers above it are the window's (see `Op::New`).
                    match unsafe { members::new_object(g, cache, regs) } {
                        Some(true) => {}
                        // No constructor: past its call (a forward jump,
                        // which needs no interrupt check).
                        // SAFETY: jump targets are inside the code.
                        Some(false) => ip = unsafe { code.add(skip as usize) },
                        None => slow!(),
                    }
                }
                // Every other kind, named rather than `_`: with a catch-all
                // arm LLVM checks the kind's range before the jump table on
                // every dispatch.
                Op::AssignRef { .. }
                | Op::Neg { .. }
                | Op::Plus { .. }
                | Op::BitNot { .. }
                | Op::BindVarVar { .. }
                | Op::AssignRefVarVar { .. }
                | Op::UnsetVarVar { .. }
                | Op::FetchGlobals { .. }
                | Op::Eval { .. }
                | Op::Include { .. }
                | Op::DetachScope { .. }
                | Op::FetchDimList { .. }
                | Op::AssignDim { .. }
                | Op::AssignPropDim { .. }
                | Op::AssignDimRef { .. }
                | Op::UnsetDim { .. }
                | Op::MakeRef { .. }
                | Op::MakeRefDim { .. }
                | Op::ArraySpread { .. }
                | Op::ConcatN { .. }
                | Op::IncJmpLt { .. }
                | Op::IncJmpLe { .. }
                | Op::DecJmpGt { .. }
                | Op::DecJmpGe { .. }
                | Op::CallSpread { .. }
                | Op::SendVarEx { .. }
                | Op::AssignDimResult { .. }
                | Op::AssertCheck { .. }
                | Op::ArgPush { .. }
                | Op::ArgSet { .. }
                | Op::SendUnpack { .. }
                | Op::ThrowError { .. }
                | Op::DeclareFunction { .. }
                | Op::MakeClosure { .. }
                | Op::Capture { .. }
                | Op::MakeCallable { .. }
                | Op::VerifyDefault { .. }
                | Op::VerifyReturnRef { .. }
                | Op::ReturnRef { .. }
                | Op::RefResult { .. }
                | Op::VerifyNoReturn { .. }
                | Op::BindGlobal { .. }
                | Op::BindGlobalByName { .. }
                | Op::BindStatic { .. }
                | Op::InitStatic { .. }
                | Op::DeclareConst { .. }
                | Op::FeReset { .. }
                | Op::FeResetRef { .. }
                | Op::FeResetRefFrom { .. }
                | Op::FeFetchRef { .. }
                | Op::FeFree { .. }
                | Op::Exit { .. }
                | Op::MatchError { .. }
                | Op::EnumProp { .. }
                | Op::CheckThis { .. }
                | Op::Silence { .. }
                | Op::Unsilence { .. }
                | Op::DeclareClass { .. }
                | Op::FetchPropRef { .. }
                | Op::AssignPropRef { .. }
                | Op::AssignStaticPropOp { .. }
                | Op::FetchStaticPropRef { bind: true, .. }
                | Op::AssignStaticPropRef { .. }
                | Op::UnsetProp { .. }
                | Op::FetchClassName { .. }
                | Op::Clone { .. }
                | Op::Throw { .. }
                | Op::Catch { .. }
                | Op::FastCall { .. }
                | Op::FastRet { .. }
                | Op::CallValue { .. } => slow!(),
            }
        }
        // SAFETY: a local.
        let safe = unsafe { std::ptr::read_volatile(&at_safe_point) };
        if safe {
            // SAFETY: a local.
            unsafe { std::ptr::write_volatile(&mut at_safe_point, false) };
        }
        // The general path of the instruction the dispatch loop stopped
        // at (or its safe point), and where it says to go on.
        let at = cur!();
        // SAFETY: the executing instruction is the top frame's, on its
        // window.
        match unsafe { leave_dispatch(g, base, at, safe, &mut done) } {
            Ok(Next(to)) if to.addr() & 1 != 0 => {
                load_frame!();
                ip = to.wrapping_byte_sub(1);
            }
            Ok(Next(to)) if to.is_null() => return Ok(std::mem::take(&mut done)),
            Ok(Next(to)) => ip = to,
            Err(e) => return Err(e),
        }
    }
}

/// Where the run loop goes on after its dispatch loop stopped at
/// instruction `at`: the instruction's general path; or, when `at` ran
/// to its end with the interrupt flag up (`at_safe_point`), the next
/// one.
///
/// # Safety
/// As for [`slow::step`].
#[inline(always)]
unsafe fn leave_dispatch<G: Globals>(
    g: G,
    base: *mut Value,
    at: *const Op,
    at_safe_point: bool,
    done: &mut Value,
) -> VmResult<Next> {
    let next = if at_safe_point {
        save_pc(g, at);
        // The frame is reloaded: what runs at the safe point may grow
        // the frames.
        Ok(Next::frame(at.wrapping_add(1)))
    } else {
        // SAFETY: the caller's.
        unsafe { slow::step(g, base, at, done) }
    };
    if next.is_ok() && !eg!(g).interrupt.pending.load(Ordering::Relaxed) {
        return next;
    }
    after_step(g, next)
}

/// The rare ends of an instruction: destructors made due and diagnostics
/// raised for the user error handler run here, before the next
/// instruction, and what they throw is thrown at this one; a thrown
/// exception goes to the innermost handler around the instruction, in
/// this frame or a caller's (frames popped on the way).
#[cold]
#[inline(never)]
fn after_step<G: Globals>(g: G, next: VmResult<Next>) -> VmResult<Next> {
    let next = match next {
        Ok(n) if eg!(g).interrupt.pending.load(Ordering::Relaxed) => {
            crate::limits::interrupted_at_safe_point(g).map(|()| n)
        }
        n => n,
    };
    match next {
        Err(e) => crate::exceptions::unwind(g, e).map(Next::frame),
        n => n,
    }
}

/// `$a[k] = v` when `a` is unshared and its element `k` holds a scalar or
/// is new (so nothing is dropped), `v` owning nothing; `false`, with
/// nothing done, otherwise (a new element is only made when it is then
/// written).
#[inline(always)]
fn overwrite_scalar_element(a: &mut Rc<PhpArray>, k: i64, v: Value) -> bool {
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

/// Calls builtin `id` with the `argc` arguments in the registers from
/// `args` and writes its result to `dst`: a builtin call's one path (the
/// run loop's and the general one).
///
/// # Safety
/// `at` is the executing instruction; `args..args+argc` and `dst` are
/// registers of the window at `base`.
#[inline(always)]
pub(super) unsafe fn call_builtin<G: Globals>(
    g: G,
    at: *const Op,
    base: *mut Value,
    dst: Reg,
    id: u16,
    args: Reg,
    argc: u8,
) -> VmResult<()> {
    // SAFETY: the argument registers are in the window; frames a builtin's
    // callbacks push go above it.
    let slice = unsafe { std::slice::from_raw_parts_mut(base.byte_add(args.raw() * 8), argc as usize) };
    // SAFETY: `dst` is a register of the window.
    unsafe { call_builtin_with(g, at, base, dst, id, slice) }
}

/// Calls builtin `id` with `args` (cleared after the call, as argument
/// registers are) and writes its result into `dst`.
///
/// # Safety
/// `dst` is a register of the window at `base`.
pub(super) unsafe fn call_builtin_with<G: Globals>(
    g: G,
    at: *const Op,
    base: *mut Value,
    dst: Reg,
    id: u16,
    args: &mut [Value],
) -> VmResult<()> {
    // The position, and the line for a time limit's message, in one
    // access (`builtins::call_at` publishes the line itself).
    let watched = eg!(g, |eg| {
        if let Some(f) = eg.frames.last_mut() {
            f.pc = at;
        }
        eg.interrupt.watched.load(Ordering::Relaxed)
    });
    if watched {
        crate::limits::publish_line_slow(g);
    }
    let r = crate::builtins::call_unchecked(g, id, args, crate::builtins::CallSite::Named);
    clear_args(args);
    match r {
        // SAFETY: `dst` is a register of the window (the caller's
        // contract).
        Ok(v) => unsafe { &mut *base.byte_add(dst.raw() * 8) }.overwrite(v),
        Err(e) => {
            // A limit passed inside the builtin stops the request at its
            // call, before what the builtin threw.
            crate::limits::check(g)?;
            // What the builtin threw is the pending exception from here
            // on, as PHP's internal functions leave theirs in
            // EG(exception).
            crate::exceptions::raise(g, e)?
        }
    }
    after_internal_call(g)
}

/// PHP's test after every internal call (`if (EG(exception))` in
/// `ZEND_DO_ICALL`), with the interrupt flag (a memory limit the builtin
/// crossed, a destructor made due), read in the same access: the pending
/// exception goes to its handler, the interrupt to the safe point, whose
/// fatal error names the builtin's line.
#[inline(always)]
pub(super) fn after_internal_call<G: Globals>(g: G) -> VmResult<()> {
    let (thrown, interrupted) = eg!(g, |eg| {
        (eg.exception.is_some(), eg.interrupt.pending.load(Ordering::Relaxed))
    });
    if thrown || interrupted {
        return after_internal_call_slow(g, thrown, interrupted);
    }
    Ok(())
}

/// [`after_internal_call`] when the builtin left an exception or raised
/// the interrupt flag: a limit it passed stops the request first (as PHP's
/// allocator or timer would have stopped it inside the builtin), then the
/// exception goes to its handler, then the safe point's other work.
#[cold]
#[inline(never)]
fn after_internal_call_slow<G: Globals>(g: G, thrown: bool, interrupted: bool) -> VmResult<()> {
    if interrupted {
        crate::limits::check(g)?;
    }
    if let Some(e) = thrown.then(|| crate::exceptions::take_pending(g)).flatten() {
        return Err(e);
    }
    if interrupted {
        return crate::limits::interrupted_at_safe_point(g);
    }
    Ok(())
}

/// `x . y` for two strings whose total length stays small (so no limit
/// needs checking), in one allocation.
#[inline(never)]
fn concat_small(x: &PhpStr, y: &PhpStr) -> Value {
    let mut out = Vec::with_capacity(x.len() + y.len());
    out.extend_from_slice(x);
    out.extend_from_slice(y);
    Value::Str(PhpStr::new(out))
}

/// The element `var[k1]...[kn]` when the variable holds an array
/// (directly or behind a reference), every array on the way is unshared,
/// every key an int or a non-numeric string, and the element exists and
/// holds a number; `None`, with nothing changed, otherwise. The pointer
/// is valid until anything else reaches the variable.
#[inline(never)]
fn number_element(var: &mut Value, keys: &[Value]) -> Option<*mut Value> {
    let mut cur: *mut Value = match var {
        Value::Ref(r) => {
            let mut inner = r.try_borrow_mut().ok()?;
            &mut *inner as *mut Value
        }
        v => v,
    };
    for k in keys {
        // SAFETY: `cur` is the variable's value or an element of an
        // unshared array reached from it, and nothing else refers to it.
        let Value::Arr(a) = (unsafe { &mut *cur }) else {
            return None;
        };
        let a = Rc::get_mut(a)?;
        cur = match k {
            Value::Int(k) => a.get_int_mut(*k)?,
            Value::Str(k) if minizts_core::array::canonical_int(k).is_none() => a.get_str_key_mut(k)?,
            _ => return None,
        };
    }
    // SAFETY: as above.
    matches!(unsafe { &*cur }, Value::Int(_) | Value::Float(_)).then_some(cur)
}
