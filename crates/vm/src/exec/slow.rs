//! The general path of every instruction: what it means, written once.
//!
//! The run loop (`exec::run`) executes an instruction here whenever its
//! fast path does not apply (or it has none): [`step`] runs exactly one
//! instruction, in its general form ([`Op::generic`]), with PHP's full
//! semantics (conversions, warnings, references, errors), and tells the
//! loop where to go on. It is out of line so that the loop's own code, and
//! the registers it keeps its state in, stay small.

use std::rc::Rc;

use minizts_core::bytecode::{BinOp, FuncId, Function, IncDec, Op, Reg, Src};
use minizts_core::value::{compare, identical, loose_equals, NestingError};
use minizts_core::{Key, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::executor::{CacheEntry, StackOverflow};
use minizts_globals::{eg, Frame, Globals};

use super::{check_limits, clear_args, foreach, save_pc, Next};
use crate::call::{self, Callee};
use crate::dim::{self, ReadMode};
use crate::error::{error, fatal, warning, VmError, VmResult};
use crate::{builtins, ops, output};

/// The runtime cache entry of an instruction's `cache` field.
fn cache_at(func: &Function, cache: u16) -> Option<u32> {
    (cache != minizts_core::bytecode::NO_CACHE).then(|| func.cache_base + u32::from(cache))
}

/// Runs the instruction at `at` of the running function (the top frame's,
/// on the register window at `base`) by its general path; says where the run
/// loop goes on (a `native` frame's return puts its value in `done`).
///
/// # Safety
/// `at` is an instruction of the top frame's function and
/// `base` that frame's window: the run loop's
/// invariants (every operand inside the window and the pool, every jump
/// target inside the code, checked by the verifier).
#[inline(never)]
pub(super) unsafe fn step<G: Globals>(g: G, base: *mut Value, at: *const Op, done: &mut Value) -> VmResult<Next> {
    // SAFETY: the top frame's function is the running one.
    let func: &Function = unsafe { &*eg!(g, |eg| eg.frames.last().expect("a frame").function) };
    let code: &[Op] = &func.code;
    let consts: &[Value] = func.consts.values();
    // The end of the VM-stack chunk holding the current window (see
    // `VmStack`).
    #[collapse_debuginfo(yes)]
    macro_rules! chunk {
        () => {
            eg!(g, |eg| eg.frames.last().expect("a frame").chunk)
        };
    }
    #[collapse_debuginfo(yes)]
    macro_rules! cur {
        () => {
            at
        };
    }
    // Continues at instruction `t` (no interrupt check).
    #[collapse_debuginfo(yes)]
    macro_rules! goto {
        ($t:expr) => {
            // SAFETY: jump targets are inside the code (the verifier).
            return Ok(Next::at(unsafe { code.as_ptr().add($t as usize) }))
        };
    }
    // Takes a jump; a backward one is a loop's back edge, where the VM
    // checks its interrupt flag.
    #[collapse_debuginfo(yes)]
    macro_rules! jump {
        ($t:expr) => {{
            // SAFETY: jump targets are inside the code (the verifier).
            let t = unsafe { code.as_ptr().add($t as usize) };
            if t <= at {
                tri!(check_limits(g));
            }
            return Ok(Next::at(t));
        }};
    }
    // Register `r` of the current window. SAFETY (all uses): the verifier
    // only lets registers below the function's `num_regs` through, and the
    // window `base..base+num_regs` is reserved on the VM stack (whose
    // chunks never move) for as long as the frame runs.
    #[collapse_debuginfo(yes)]
    macro_rules! reg {
        ($r:expr) => {{
            let r: Reg = $r;
            debug_assert!(r.idx() < func.num_regs as usize, "register {} out of window", r.idx());
            // SAFETY: the register is in the window (see above), and the
            // reference is used before anything else reaches it.
            unsafe { &mut *base.byte_add(r.raw() * 8) }
        }};
    }
    // Writes a register.
    #[collapse_debuginfo(yes)]
    macro_rules! set {
        ($r:expr, $v:expr) => {{
            let v: Value = $v;
            *reg!($r) = v;
        }};
    }
    // Register `r` as stored, shared.
    #[collapse_debuginfo(yes)]
    macro_rules! rv {
        ($r:expr) => {{
            let r: Reg = $r;
            debug_assert!(r.idx() < func.num_regs as usize);
            // SAFETY: as for `reg!`.
            unsafe { &*base.byte_add(r.raw() * 8) }
        }};
    }
    // Constant operand `k` of the pool.
    #[collapse_debuginfo(yes)]
    macro_rules! kv {
        ($k:expr) => {{
            let k: Src = $k;
            &consts[k.index()]
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
    // Function `callee`'s frame was pushed: the loop goes on at its
    // start.
    #[collapse_debuginfo(yes)]
    macro_rules! entered {
        ($callee:expr) => {{
            let callee: &Function = $callee;
            return Ok(Next::frame(callee.code.as_ptr()));
        }};
    }
    // The call of the method in the three registers at `$regs` (what
    // `INIT_METHOD` or `INIT_DYNAMIC_CALL` resolved), which it takes.
    #[collapse_debuginfo(yes)]
    macro_rules! call_prepared {
        ($dst:expr, $regs:expr, $args:expr, $argc:expr) => {{
            // SAFETY: the caller's: three registers of the window, and
            // `argc` arguments from `args`.
            let at_args = unsafe { base.byte_add($args.raw() * 8) };
            // SAFETY: as just said.
            match tri!(unsafe { call_prepared(g, $regs, at_args, $argc, $dst) }) {
                // SAFETY: the request's functions outlive its frames.
                Some(fid) => entered!(unsafe { crate::code::known(g, fid) }),
                None => {}
            }
        }};
    }
    // A fused loop bottom (`IncJmpLt` and the others): steps `var` by one
    // like `$i++`/`$i--` and jumps back to `target` if the test (PHP's
    // general comparison) holds; otherwise skips the loop's entry test,
    // which follows.
    #[collapse_debuginfo(yes)]
    macro_rules! loop_bottom {
        ($var:expr, $limit:expr, $target:expr, $kind:expr, $test:expr) => {{
            let test: fn(&Value, &Value) -> Result<bool, NestingError> = $test;
            save_pc(g, cur!());
            tri!(step_var_slow(g, $var, reg!($var), $kind));
            if tri!(test(&opnd!(Src::reg($var)), &opnd!($limit))) {
                tri!(check_limits(g));
                goto!($target);
            }
            // SAFETY: the entry test follows (the verifier), and the code
            // ends with a return after it.
            return Ok(Next::at(unsafe { at.add(2) }));
        }};
    }

    // SAFETY: `at` is an instruction of the code.
    let op = unsafe { *at };
    if G::COUNTED {
        minizts_globals::strategies::count_general_path(op.mnemonic());
    }
    // (Tested first: `generic` is a second dispatch, needed only by the
    // specialised forms.)
    let op = if op.is_specialised() { op.generic() } else { op };
    match op {
        Op::Nop {} => {}
        Op::Move { dst, src } => {
            let v = opnd!(src).clone();
            set!(dst, v);
        }
        Op::Assign { var, src } => {
            let v = opnd!(src).clone();
            tri!(assign_slot(g, reg!(var), v));
        }
        Op::AssignTmp { var, src } => {
            let v = match std::mem::take(reg!(src)) {
                Value::Ref(r) => r.get(),
                Value::Undef => Value::Null,
                v => v,
            };
            tri!(assign_slot(g, reg!(var), v));
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
        Op::Add { dst, a, b } => {
            save_pc(g, cur!());
            let r = tri!(ops::arith(g, BinOp::Add, &opnd!(a), &opnd!(b)));
            set!(dst, r);
        }
        Op::Sub { dst, a, b } => {
            save_pc(g, cur!());
            let r = tri!(ops::arith(g, BinOp::Sub, &opnd!(a), &opnd!(b)));
            set!(dst, r);
        }
        Op::Mul { dst, a, b } => {
            save_pc(g, cur!());
            let r = tri!(ops::arith(g, BinOp::Mul, &opnd!(a), &opnd!(b)));
            set!(dst, r);
        }
        Op::Div { dst, a, b } => {
            save_pc(g, cur!());
            let r = tri!(ops::binary(g, BinOp::Div, &opnd!(a), &opnd!(b)));
            set!(dst, r);
        }
        Op::Mod { dst, a, b } => {
            save_pc(g, cur!());
            let r = tri!(ops::binary(g, BinOp::Mod, &opnd!(a), &opnd!(b)));
            set!(dst, r);
        }
        Op::Concat { dst, a, b } => {
            save_pc(g, cur!());
            let r = tri!(ops::concat(g, &opnd!(a), &opnd!(b)));
            set!(dst, r);
        }
        Op::Lt { dst, a, b } => {
            let r = tri!(compare(&opnd!(a), &opnd!(b))) < 0;
            set!(dst, Value::Bool(r));
        }
        Op::Le { dst, a, b } => {
            let r = tri!(compare(&opnd!(a), &opnd!(b))) <= 0;
            set!(dst, Value::Bool(r));
        }
        Op::Eq { dst, a, b } => {
            let r = tri!(loose_equals(&opnd!(a), &opnd!(b)));
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
            save_pc(g, cur!());
            tri!(dim::apply_op(g, slot, op, &v));
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
            save_pc(g, cur!());
            tri!(step_var_slow(g, var, reg!(var), IncDec::PreInc));
        }
        Op::DecVar { var } => {
            save_pc(g, cur!());
            tri!(step_var_slow(g, var, reg!(var), IncDec::PreDec));
        }
        Op::IncDecVar { var, kind, dst } => {
            let slot = reg!(var);
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
        Op::Quiet { dst, var } => {
            let v = reg!(var).deref_clone();
            set!(dst, v);
        }
        Op::Capture { dst, var } => {
            let v = match reg!(var) {
                Value::Undef => Value::Undef,
                v => v.deref_clone(),
            };
            set!(dst, v);
        }
        Op::IsSet { dst, src } => {
            let r = !raw!(src).deref().is_null();
            set!(dst, Value::Bool(r));
        }
        Op::UnsetVar { var } => {
            *reg!(var) = Value::Undef;
        }
        Op::FetchVarVar {
            dst,
            name,
            quiet,
            global,
            cache,
        } => {
            // The variable the cache entry names, if it has one.
            if let Some(v) = crate::scope::fetch_global_cached(g, cache) {
                set!(dst, v);
            } else {
                save_pc(g, cur!());
                let name = tri!(crate::ops::to_str(g, &opnd!(name)));
                if let (Some(at), Some(cv)) = (cache_at(func, cache), crate::scope::global_cv(g, &name)) {
                    eg!(g).runtime_cache[at as usize] = CacheEntry::GlobalVar { cv };
                }
                let v = match crate::scope::fetch(g, which(global), &name) {
                    Some(v) => v,
                    None => {
                        if !quiet {
                            let what = if global { "global variable" } else { "variable" };
                            warning(g, &format!("Undefined {what} ${}", String::from_utf8_lossy(&name)));
                        }
                        Value::Null
                    }
                };
                set!(dst, v);
            }
        }
        Op::BindVarVar { dst, name, global } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            if &*name == b"this" {
                tri!(error::<()>("Cannot re-assign $this"));
            }
            let r = crate::scope::bind(g, which(global), &name);
            set!(dst, Value::Ref(r));
        }
        Op::AssignRefVarVar { name, src, global } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            if &*name == b"this" {
                tri!(error::<()>("Cannot re-assign $this"));
            }
            let r = match rv!(src) {
                Value::Ref(r) => r.clone(),
                v => crate::gc::new_ref(g, v.deref_clone()),
            };
            crate::scope::bind_to(g, which(global), &name, r);
        }
        Op::UnsetVarVar { name, global } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            crate::scope::unset(g, which(global), &name);
        }
        Op::Eval { dst, code } => {
            save_pc(g, cur!());
            let code = tri!(crate::ops::to_str(g, &opnd!(code)));
            let fid = tri!(crate::eval::compile(g, &code));
            tri!(check_limits(g));
            tri!(crate::eval::enter(g, fid, dst));
            // SAFETY: the request's functions outlive its frames.
            entered!(unsafe { crate::code::known(g, fid) });
        }
        Op::Include {
            dst,
            path,
            once,
            required,
        } => {
            save_pc(g, cur!());
            let path = tri!(crate::ops::to_str(g, &opnd!(path)));
            match tri!(crate::include::open(g, &path, once, required)) {
                crate::include::Included::Run(fid) => {
                    tri!(check_limits(g));
                    tri!(crate::eval::enter(g, fid, dst));
                    // SAFETY: the request's functions outlive its frames.
                    entered!(unsafe { crate::code::known(g, fid) });
                }
                crate::include::Included::Done(v) => set!(dst, v),
            }
        }
        Op::DetachScope {} => {
            crate::eval::detach(g, func, base);
        }
        Op::FetchGlobals { dst } => {
            set!(dst, Value::arr(crate::scope::globals(g)));
        }

        Op::FetchDim { dst, base: b, key } => {
            save_pc(g, cur!());
            let r = tri!(dim::fetch(g, &opnd!(b), &opnd!(key), ReadMode::Normal));
            set!(dst, r);
        }
        Op::FetchDim2 { dst, base: b, k1, k2 } => {
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
        Op::AssignDimResult { var, keys, depth, src } => {
            let v = opnd!(Src::reg(src)).clone();
            save_pc(g, cur!());
            let keys = keys!(keys, depth);
            if let Some(written) = tri!(dim::assign(g, reg!(var), keys, v)) {
                *reg!(src) = written;
            }
        }
        Op::AssignDimPush { var, src, tmp } => {
            let v = opnd!(src).clone();
            save_pc(g, cur!());
            tri!(dim::assign(g, reg!(var), &[Value::Undef], v));
            release_temp(tmp, src, base);
        }
        Op::AssignDim1 { var, key, src } => {
            let v = opnd!(src).clone();
            let k = opnd!(key).clone();
            save_pc(g, cur!());
            tri!(dim::assign(g, reg!(var), std::slice::from_ref(&k), v));
            k.release();
        }
        Op::AssignDimOp1 { op, var, key, src, dst } => {
            let v = opnd!(src).clone();
            let k = opnd!(key).clone();
            save_pc(g, cur!());
            if let Value::Undef = reg!(var) {
                undefined_variable(g, var.idx());
            }
            let r = tri!(dim::assign_op(
                g,
                reg!(var),
                std::slice::from_ref(&k),
                op,
                &v,
                !dst.is_none()
            ));
            v.release();
            if !dst.is_none() {
                set!(dst, r);
            }
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
            dst,
        } => {
            let v = opnd!(src).clone();
            save_pc(g, cur!());
            if let Value::Undef = reg!(var) {
                undefined_variable(g, var.idx());
            }
            let keys = keys!(keys, depth);
            let r = tri!(dim::assign_op(g, reg!(var), keys, op, &v, !dst.is_none()));
            v.release();
            if !dst.is_none() {
                set!(dst, r);
            }
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
        Op::LoadArray { dst, lit, cache } => {
            let v = match super::members::cached_array(g, cache) {
                Some(v) => v,
                None => {
                    let a = Rc::new(literal_array(func, lit));
                    if let Some(at) = cache_at(func, cache) {
                        eg!(g).runtime_cache[at as usize] = CacheEntry::Array(a.clone());
                    }
                    Value::Arr(a)
                }
            };
            set!(dst, v);
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
            if opnd!(cond).to_bool() {
                jump!(target);
            }
        }
        Op::JmpIfNot { cond, target } => {
            if !opnd!(cond).to_bool() {
                jump!(target);
            }
        }
        Op::JmpIfNotNull { src, target } => {
            if !raw!(src).deref().is_null() {
                jump!(target);
            }
        }
        Op::JmpLt { a, b, if_true, target } => {
            if (tri!(compare(&opnd!(a), &opnd!(b))) < 0) == if_true {
                jump!(target);
            }
        }
        Op::JmpLe { a, b, if_true, target } => {
            if (tri!(compare(&opnd!(a), &opnd!(b))) <= 0) == if_true {
                jump!(target);
            }
        }
        Op::IncJmpLt { var, limit, target } => {
            loop_bottom!(var, limit, target, IncDec::PreInc, |v, l| Ok(compare(v, l)? < 0))
        }
        Op::IncJmpLe { var, limit, target } => {
            loop_bottom!(var, limit, target, IncDec::PreInc, |v, l| Ok(compare(v, l)? <= 0))
        }
        Op::DecJmpGt { var, limit, target } => {
            loop_bottom!(var, limit, target, IncDec::PreDec, |v, l| Ok(compare(l, v)? < 0))
        }
        Op::DecJmpGe { var, limit, target } => {
            loop_bottom!(var, limit, target, IncDec::PreDec, |v, l| Ok(compare(l, v)? <= 0))
        }
        Op::JmpEq { a, b, if_true, target } => {
            if tri!(loose_equals(&opnd!(a), &opnd!(b))) == if_true {
                jump!(target);
            }
        }
        Op::JmpIdentical { a, b, if_true, target } => {
            if tri!(identical(&opnd!(a), &opnd!(b))) == if_true {
                jump!(target);
            }
        }

        Op::CallUser { dst, site, args, argc } => {
            let (fid, callee) = {
                let s = &func.sites[site as usize];
                // The cache read ends before a miss resolves the site
                // (which reaches EG again).
                let cached = eg!(g, |eg| match eg.runtime_cache[s.cache_slot as usize] {
                    CacheEntry::Function(id) => eg.code.get(id).map(|f| (id, f as *const Function)),
                    _ => None,
                });
                match cached {
                    // SAFETY: the request's functions outlive its frames.
                    Some((id, f)) => (id, unsafe { &*f }),
                    None => {
                        save_pc(g, cur!());
                        let id = tri!(call::resolve_site(g, func, site));
                        // SAFETY: as above.
                        (id, unsafe { crate::code::known(g, id) })
                    }
                }
            };
            tri!(check_limits(g));
            // SAFETY: the argument registers are in the window.
            let at_args = unsafe { base.byte_add(args.raw() * 8) };
            let n = argc as usize;
            if callee.takes_plainly(n) {
                // SAFETY: the arguments are the top registers of the
                // window.
                tri!(unsafe { enter(g, at, callee, fid, dst, at_args, n) });
            } else {
                save_pc(g, cur!());
                // SAFETY: the arguments are the top registers of the window.
                tri!(unsafe { call::push_frame(g, fid, at_args, chunk!(), n, dst, None, false) });
            }
            entered!(callee);
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
            let at_args = unsafe { base.byte_add(args.raw() * 8) };
            // SAFETY: the request's functions outlive its frames.
            let callee = unsafe { crate::code::known(g, fid) };
            // SAFETY: the arguments are the top registers of the window.
            tri!(unsafe { enter(g, at, callee, fid, dst, at_args, argc as usize) });
            entered!(callee);
        }
        Op::CallBuiltin { dst, id, args, argc } => {
            // Output comes after the destructors an earlier instruction
            // made due (PHP runs them inside that instruction).
            tri!(crate::objects::destructors_due(g));
            // SAFETY: the operands are the window's registers.
            tri!(unsafe { super::call_builtin(g, at, base, dst, id, args, argc) });
        }
        Op::Strlen { dst, arg, id, tmp }
        | Op::Count { dst, arg, id, tmp }
        | Op::Ord { dst, arg, id, tmp }
        | Op::Chr { dst, arg, id, tmp }
        | Op::Abs { dst, arg, id, tmp }
        | Op::Sqrt { dst, arg, id, tmp }
        | Op::Floor { dst, arg, id, tmp }
        | Op::Ceil { dst, arg, id, tmp }
        | Op::TypeCheck { dst, arg, id, tmp, .. } => {
            // SAFETY: `at` is the running function's instruction, `base`
            // its window, and the pool its constants'.
            if let Some(v) = unsafe { super::members::type_check(&*at, base, func.consts.values().as_ptr()) } {
                set!(dst, v);
            } else {
                // Owned copies: a builtin may reach a reference the operand
                // came through.
                let mut args = [Value::clone(&opnd!(arg))];
                // SAFETY: `dst` is a register of the window.
                tri!(unsafe { super::call_builtin_with(g, at, base, dst, id, &mut args) });
                release_temp(tmp, arg, base);
            }
        }
        Op::FuncNumArgs { dst, id } => {
            if let Some(n) = crate::scope::arg_count_plain(g) {
                set!(dst, Value::Int(n as i64));
            } else {
                // SAFETY: `dst` is a register of the window.
                tri!(unsafe { super::call_builtin_with(g, at, base, dst, id, &mut []) });
            }
        }
        Op::Intdiv { dst, a, b, id, tmp } | Op::Min { dst, a, b, id, tmp } | Op::Max { dst, a, b, id, tmp } => {
            let x = Value::clone(&opnd!(a));
            let mut args = [x, Value::clone(&opnd!(b))];
            // SAFETY: as above.
            tri!(unsafe { super::call_builtin_with(g, at, base, dst, id, &mut args) });
            release_temp(tmp, a, base);
        }
        Op::InitDynamicCall { callee, src } => {
            save_pc(g, cur!());
            let v = opnd!(src).clone();
            // SAFETY: `callee` is the first of three registers of the window.
            tri!(unsafe { crate::objects::init_dynamic_call(g, base.byte_add(callee.raw() * 8), v) });
        }
        // A method `INIT_DYNAMIC_CALL` resolved: the arguments' check, then
        // the call as `CALL_METHOD` makes it.
        Op::CallValue {
            dst,
            callee,
            args,
            argc,
            vals,
        } if matches!(reg!(callee.plus(1)), Value::Int(_)) => {
            save_pc(g, cur!());
            // SAFETY: `callee` is the first of three registers of the window.
            let regs = unsafe { base.byte_add(callee.raw() * 8) };
            // SAFETY: as just said.
            tri!(unsafe { refuse_values(g, regs, vals) });
            call_prepared!(dst, regs, args, argc);
        }
        Op::CallValue {
            dst,
            callee,
            args,
            argc,
            vals,
        } => {
            save_pc(g, cur!());
            // The call consumes its callee register (the frame holds a
            // closure, a method's frame its `$this`), so that what it held
            // goes when the call ends, as PHP frees its call frame.
            let callee_value = std::mem::take(reg!(callee));
            let target = tri!(call::resolve_callable(g, &callee_value));
            drop(callee_value);
            if vals != 0 && !builtins::prefers_ref(&target) {
                for i in (0..16).filter(|i| vals & (1 << i) != 0) {
                    if call::param_by_ref(g, &target, i) {
                        tri!(call::cannot_pass_by_reference::<G, ()>(g, &target, i));
                    }
                }
            }
            match target {
                Callee::User { func: fid, closure } => {
                    tri!(check_limits(g));
                    // SAFETY: the argument registers are in the window.
                    let at_args = unsafe { base.byte_add(args.raw() * 8) };
                    // SAFETY: the arguments are the top registers.
                    tri!(unsafe { call::push_frame(g, fid, at_args, chunk!(), argc as usize, dst, closure, false) });
                    // SAFETY: the request's functions outlive its frames.
                    entered!(unsafe { crate::code::known(g, fid) });
                }
                Callee::Builtin(id) => {
                    // SAFETY: as for `CallBuiltin`.
                    let slice = unsafe { std::slice::from_raw_parts_mut(base.byte_add(args.raw() * 8), argc as usize) };
                    let r = builtins::call_at(g, id, slice, builtins::CallSite::Dynamic);
                    clear_args(slice);
                    match r {
                        Ok(v) => set!(dst, v),
                        Err(e) => tri!(crate::exceptions::raise(g, e)),
                    }
                    tri!(super::after_internal_call(g));
                }
                Callee::Method(ref m) => match target.user_function() {
                    Some(fid) => {
                        tri!(check_limits(g));
                        // SAFETY: the argument registers are in the window.
                        let at_args = unsafe { base.byte_add(args.raw() * 8) };
                        // SAFETY: the arguments are the top registers.
                        tri!(unsafe { call::push_frame(g, fid, at_args, chunk!(), argc as usize, dst, None, false) });
                        call::enter_method(g, m.this.clone(), m.method.declaring + 1, m.called.id + 1);
                        // SAFETY: the request's functions outlive its frames.
                        entered!(unsafe { crate::code::known(g, fid) });
                    }
                    None => {
                        // SAFETY: as for `CallBuiltin`.
                        let slice =
                            unsafe { std::slice::from_raw_parts_mut(base.byte_add(args.raw() * 8), argc as usize) };
                        let list: Vec<Value> = slice.iter_mut().map(std::mem::take).collect();
                        let r = tri!(crate::objects::OtherCall::of(m).call(g, list));
                        tri!(check_limits(g));
                        set!(dst, r);
                    }
                },
            }
        }
        Op::CallSpread {
            dst,
            callee,
            args,
            method,
        } => {
            save_pc(g, cur!());
            // SAFETY: `callee` (with `method`, the first of three) and
            // `args` are registers of the window, `args` the top one.
            let (regs, at) = unsafe { (base.byte_add(callee.raw() * 8), base.byte_add(args.raw() * 8)) };
            // SAFETY: as just said.
            if let Some(fid) = tri!(unsafe { call_spread(g, regs, at, method, dst) }) {
                // SAFETY: the request's functions outlive its frames.
                entered!(unsafe { crate::code::known(g, fid) });
            }
        }
        Op::JmpArgByVal {
            callee,
            arg,
            target,
            method,
        } => {
            save_pc(g, cur!());
            let resolved = if method {
                // SAFETY: a call's three callee registers.
                unsafe { crate::objects::prepared_callee(g, base.byte_add(callee.raw() * 8)) }
            } else {
                call::resolve_callable(g, &reg!(callee).clone()).map_err(drop)
            };
            let by_ref = match resolved {
                Ok(c) => match &*opnd!(arg) {
                    Value::Int(i) => call::param_by_ref(g, &c, *i as usize),
                    Value::Str(name) => call::named_param_by_ref(g, &c, name),
                    _ => false,
                },
                Err(_) => false,
            };
            if !by_ref {
                jump!(target);
            }
        }
        Op::AssertCheck { target } => {
            if eg!(g).basic.assert.assertions != 1 {
                jump!(target);
            }
        }
        Op::ArgPush { arr, src } => {
            let v = std::mem::take(reg!(src));
            if let Some(a) = reg!(arr).array_mut() {
                if a.push(v).is_err() {
                    tri!(error::<()>(
                        "Cannot add element to the array as the next element is already occupied"
                    ));
                }
            }
        }
        Op::ArgSet { arr, name, src } => {
            let Value::Str(name) = &func.consts.values()[name as usize] else {
                unreachable!("an argument's name is a string constant")
            };
            let v = std::mem::take(reg!(src));
            if let Some(a) = reg!(arr).array_mut() {
                a.insert(Key::from_bytes(name), v);
            }
        }
        Op::SendUnpack {
            arr,
            src,
            callee,
            method,
        } => {
            save_pc(g, cur!());
            let target = if method {
                // SAFETY: a method call's three callee registers.
                unsafe { crate::objects::callee_of(base.byte_add(callee.raw() * 8)) }
            } else {
                call::resolve_callable(g, &reg!(callee).clone()).ok()
            };
            let start = match reg!(arr) {
                Value::Arr(a) => a.len(),
                _ => 0,
            };
            let items = match &*opnd!(Src::reg(src)) {
                Value::Arr(a) => a.clone(),
                _ => {
                    tri!(error::<()>("Only arrays and Traversables can be unpacked"));
                    unreachable!()
                }
            };
            // The first spread of a list that goes by value: the argument
            // array is the variable's, shared (the call reads values).
            if start == 0
                && items.is_list()
                && target
                    .as_ref()
                    .is_none_or(|c| !(0..items.len()).any(|i| call::param_by_ref(g, c, i)))
            {
                set!(arr, Value::Arr(items));
                // SAFETY: an instruction that is not a function's last.
                return Ok(Next::at(unsafe { at.add(1) }));
            }
            // Which elements go by reference, in order.
            let mut pos = start;
            let by_ref: Vec<bool> = items
                .iter()
                .map(|(k, _)| match (&target, k) {
                    (None, _) => false,
                    (Some(c), minizts_core::KeyRef::Int(_)) => {
                        pos += 1;
                        call::param_by_ref(g, c, pos - 1)
                    }
                    (Some(c), minizts_core::KeyRef::Str(name)) => call::named_param_by_ref(g, c, name),
                })
                .collect();
            let keys: Vec<Key> = items.iter().map(|(k, _)| k.to_key()).collect();
            let values: Vec<Value> = if by_ref.contains(&true) {
                drop(items);
                // The variable's own array, separated, gets the references.
                let slot = reg!(src);
                let mut guard;
                let container = match slot {
                    Value::Ref(r) => {
                        guard = match r.try_borrow_mut() {
                            Ok(b) => b,
                            Err(_) => tri!(fatal::<_>("minizts: a reference cycle was written through itself")),
                        };
                        &mut *guard
                    }
                    v => v,
                };
                match container.array_mut() {
                    Some(a) => a
                        .values_mut()
                        .zip(&by_ref)
                        .map(|(v, &r)| {
                            if r {
                                Value::Ref(crate::gc::slot_ref(g, v))
                            } else {
                                v.deref_clone()
                            }
                        })
                        .collect(),
                    None => Vec::new(),
                }
            } else {
                items.values().map(Value::deref_clone).collect()
            };
            if let Some(a) = reg!(arr).array_mut() {
                for (k, v) in keys.into_iter().zip(values) {
                    match k {
                        Key::Int(_) => {
                            if a.push(v).is_err() {
                                tri!(error::<()>(
                                    "Cannot add element to the array as the next element is already occupied"
                                ));
                            }
                        }
                        key => a.insert(key, v),
                    }
                }
            }
        }
        Op::ThrowError { message } => {
            let Value::Str(message) = &func.consts.values()[message as usize] else {
                unreachable!("an error's message is a string constant")
            };
            tri!(error::<()>(String::from_utf8_lossy(message).into_owned()));
        }
        Op::SendVarEx {
            dst,
            var,
            callee,
            argno,
            method,
        } => {
            save_pc(g, cur!());
            let resolved = if method {
                // SAFETY: a call's three callee registers.
                unsafe { crate::objects::prepared_callee(g, base.byte_add(callee.raw() * 8)) }
            } else {
                call::resolve_callable(g, &reg!(callee).clone()).map_err(drop)
            };
            let by_ref = match resolved {
                // `var` is `dst` when the compiler passes a value that
                // is not a variable (`sort([1])`): PHP's error if the
                // parameter is by reference.
                Ok(c) if dst == var && call::param_by_ref(g, &c, argno as usize) && !builtins::prefers_ref(&c) => {
                    tri!(call::cannot_pass_by_reference(g, &c, argno as usize))
                }
                Ok(c) => call::param_by_ref(g, &c, argno as usize),
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
        Op::DeclareClass { decl } => {
            save_pc(g, cur!());
            let fid = eg!(g).frames.last().map_or(0, |f| f.func);
            let script = eg!(g, |eg| eg.code.unit_of(fid).cloned());
            if let Some(script) = script {
                tri!(crate::class::declare(g, &script, decl as u32));
            }
        }
        Op::New {
            dst,
            class,
            skip,
            cache,
        } => {
            save_pc(g, cur!());
            let at = cache_at(func, cache);
            // The operand's mode is worked out only when the cache misses.
            let cls = match crate::objects::cached_class(g, at) {
                Some(cls) => cls,
                None => {
                    let mode = minizts_core::bytecode::class_mode::of_operand(class, consts);
                    tri!(crate::objects::class_operand_cached(g, &opnd!(class), mode, at))
                }
            };
            let o = tri!(crate::objects::instantiate(g, &cls));
            set!(dst, Value::Obj(o.clone()));
            match cls.magic.construct.clone() {
                Some(m) => {
                    tri!(crate::objects::check_constructor(g, &cls, &m));
                    let r = crate::objects::Resolved {
                        method: m,
                        this: Some(o),
                        called: cls,
                        magic_name: None,
                        closure: None,
                    };
                    // SAFETY: the three registers above `dst` are the
                    // call's (see `Op::New`), inside the window.
                    unsafe { crate::objects::fill_callee(base.byte_add(dst.plus(1).raw() * 8), r) };
                }
                None => {
                    // No method for a call with arguments to make (see
                    // `Op::New`).
                    set!(dst.plus(1), Value::Null);
                    set!(dst.plus(2), Value::Null);
                    jump!(skip)
                }
            }
        }
        Op::InitMethod {
            callee,
            obj,
            name,
            tmp,
            cache,
        } => {
            // A polymorphic site's miss, looked up and remembered without
            // the resolution below (`members::init_method_miss`).
            let from: *mut Value = std::ptr::from_ref(raw!(obj)).cast_mut();
            // SAFETY: `callee` is the first of three registers of the
            // window; `from` is the operand, with `tmp` a temporary of the
            // window that nothing else refers to.
            if unsafe { super::members::init_method_miss(g, from, tmp, name, cache, base.byte_add(callee.raw() * 8)) } {
                // SAFETY: the code goes on after an `INIT_METHOD`.
                return Ok(Next::at(unsafe { at.add(1) }));
            }
            save_pc(g, cur!());
            let name = tri!(method_name(&opnd!(name)));
            let r = tri!(crate::objects::resolve_method(
                g,
                &opnd!(obj),
                &name,
                cache_at(func, cache)
            ));
            // SAFETY: as for `New`.
            unsafe { crate::objects::fill_callee(base.byte_add(callee.raw() * 8), r) };
            // A temporary object goes with the call (which holds it, or,
            // for a static method, does not need it).
            if let (true, Some(o)) = (tmp, obj.as_reg()) {
                *reg!(o) = Value::Undef;
            }
        }
        Op::InitStaticMethod {
            callee,
            class,
            mode,
            name,
            cache,
        } => {
            save_pc(g, cur!());
            let r = tri!(crate::objects::resolve_static_cached(
                g,
                &opnd!(class),
                mode,
                &opnd!(name),
                cache_at(func, cache)
            ));
            // SAFETY: as for `New`.
            unsafe { crate::objects::fill_callee(base.byte_add(callee.raw() * 8), r) };
        }
        // The call after a `NEW` of a class without a constructor, which
        // left no method: the arguments were evaluated (PHP calls its
        // `zend_pass_function`), nothing is called.
        Op::CallMethod {
            dst,
            callee,
            args,
            argc,
            ..
        } if matches!(reg!(callee.plus(1)), Value::Null) => {
            // SAFETY: as for `CallBuiltin`.
            clear_args(unsafe { std::slice::from_raw_parts_mut(base.byte_add(args.raw() * 8), argc as usize) });
            if !dst.is_none() {
                set!(dst, Value::Null);
            }
        }
        Op::CallMethod {
            dst,
            callee,
            args,
            argc,
            vals,
        } => {
            save_pc(g, cur!());
            // SAFETY: `callee` is the first of three registers of the window.
            let regs = unsafe { base.byte_add(callee.raw() * 8) };
            // SAFETY: as just said.
            tri!(unsafe { refuse_values(g, regs, vals) });
            call_prepared!(dst, regs, args, argc);
        }
        Op::FetchProp {
            dst,
            obj,
            name,
            quiet,
            cache,
        } => {
            // A polymorphic site's miss (`members::prop_miss`).
            let o = raw!(obj);
            if let Some(v) = super::members::prop_miss(g, o, name, cache, || super::members::fetch_prop(g, o, cache)) {
                set!(dst, v);
                // SAFETY: the code goes on after a `FETCH_PROP`.
                return Ok(Next::at(unsafe { at.add(1) }));
            }
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            // Inside `isset`/`??` an unset variable is read silently.
            let objv = if quiet {
                raw!(obj).deref_clone()
            } else {
                opnd!(obj).clone()
            };
            let v = tri!(crate::objects::read(g, &objv, &name, quiet, cache_at(func, cache)));
            set!(dst, v);
        }
        Op::IssetProp {
            dst,
            obj,
            name,
            empty,
            cache,
        } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let objv = raw!(obj).deref_clone();
            let v = if empty {
                tri!(crate::objects::empty(g, &objv, &name, cache_at(func, cache)))
            } else {
                tri!(crate::objects::isset(g, &objv, &name, cache_at(func, cache)))
            };
            set!(dst, Value::Bool(v));
        }
        Op::AssignProp { obj, name, src, cache } => {
            // A polymorphic site's miss (`members::prop_miss`).
            let (o, v) = (raw!(obj), raw!(src));
            if let Some(due) =
                super::members::prop_miss(g, o, name, cache, || super::members::assign_prop(g, o, cache, v))
            {
                if due {
                    tri!(check_limits(g));
                }
                // SAFETY: the code goes on after an `ASSIGN_PROP`.
                return Ok(Next::at(unsafe { at.add(1) }));
            }
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let v = opnd!(src).deref_clone();
            // A copy of the handle: a guard on the variable's reference would
            // last through the write, which may go through that reference.
            let o = opnd!(obj).clone();
            tri!(crate::objects::write(g, &o, &name, v, cache_at(func, cache)));
        }
        // Out of line: an arm this size here would cost every general
        // path instruction a little in `step`'s prologue.
        // SAFETY: `at` is the executing instruction, on the window at
        // `base`.
        Op::AssignPropDim { .. } => tri!(unsafe { assign_prop_dim(g, at, base, func) }),
        Op::AssignPropOp {
            op,
            obj,
            name,
            src,
            dst,
            cache,
        } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let v = opnd!(src).deref_clone();
            let r = tri!(crate::objects::modify_prop(
                g,
                &opnd!(obj).clone(),
                &name,
                crate::objects::Change::Op(op),
                &v,
                cache_at(func, cache)
            ));
            if !dst.is_none() {
                set!(dst, r);
            }
        }
        Op::IncDecProp {
            obj,
            name,
            kind,
            dst,
            cache,
        } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let r = tri!(crate::objects::modify_prop(
                g,
                &opnd!(obj).clone(),
                &name,
                crate::objects::Change::IncDec(kind),
                &Value::Null,
                cache_at(func, cache)
            ));
            if !dst.is_none() {
                set!(dst, r);
            }
        }
        Op::FetchPropRef { dst, obj, name } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            // A copy of the handle: a guard on the variable's reference would
            // last through the write, which may go through that reference.
            let o = opnd!(obj).clone();
            let r = tri!(crate::objects::make_ref(g, &o, &name));
            set!(dst, Value::Ref(r));
        }
        Op::AssignPropRef { obj, name, src } => {
            let r = match std::mem::take(reg!(src)) {
                Value::Ref(r) => r,
                other => crate::gc::new_ref(g, other),
            };
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            // A copy of the handle: a guard on the variable's reference would
            // last through the write, which may go through that reference.
            let o = opnd!(obj).clone();
            tri!(crate::objects::assign_ref(g, &o, &name, r));
        }
        Op::AssignStaticPropRef { class, mode, name, src } => {
            let r = match std::mem::take(reg!(src)) {
                Value::Ref(r) => r,
                other => crate::gc::new_ref(g, other),
            };
            save_pc(g, cur!());
            let cls = tri!(crate::objects::class_operand(g, &opnd!(class), mode));
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            tri!(crate::objects::assign_static_ref(g, &cls, &name, r));
        }
        Op::UnsetProp { obj, name } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            // A copy of the handle: a guard on the variable's reference would
            // last through the write, which may go through that reference.
            let o = opnd!(obj).clone();
            tri!(crate::objects::unset(g, &o, &name));
        }
        Op::FetchStaticProp {
            dst,
            class,
            mode,
            name,
            quiet,
            cache,
        } => {
            save_pc(g, cur!());
            let at = cache_at(func, cache);
            let r = tri!(crate::objects::static_ref_cached(
                g,
                &opnd!(class),
                mode,
                &opnd!(name),
                at,
                quiet
            ));
            let v = match r.map(|r| r.get()) {
                None => Value::Null,
                // Uninitialised (typed): null when quiet, else PHP's error.
                Some(Value::Undef) => {
                    let cls = tri!(crate::objects::class_operand(g, &opnd!(class), mode));
                    let name = tri!(crate::ops::to_str(g, &opnd!(name)));
                    tri!(crate::objects::read_static(g, &cls, &name, quiet))
                }
                Some(v) => v,
            };
            set!(dst, v);
        }
        Op::FetchStaticPropRef {
            dst,
            class,
            mode,
            name,
            bind,
            cache,
        } => {
            save_pc(g, cur!());
            let r = if bind {
                let cls = tri!(crate::objects::class_operand(g, &opnd!(class), mode));
                let name = tri!(crate::ops::to_str(g, &opnd!(name)));
                Some(tri!(crate::objects::bind_static(g, &cls, &name)))
            } else {
                tri!(crate::objects::static_ref_cached(
                    g,
                    &opnd!(class),
                    mode,
                    &opnd!(name),
                    cache_at(func, cache),
                    false
                ))
            };
            set!(dst, r.map_or(Value::Null, Value::Ref));
        }
        Op::AssignStaticProp {
            class,
            mode,
            name,
            src,
            cache,
        } => {
            save_pc(g, cur!());
            // Resolved through the cache first, which the fast path reads.
            tri!(crate::objects::static_ref_cached(
                g,
                &opnd!(class),
                mode,
                &opnd!(name),
                cache_at(func, cache),
                false
            ));
            let v = opnd!(src).deref_clone();
            let cls = tri!(crate::objects::class_operand(g, &opnd!(class), mode));
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            tri!(crate::objects::assign_static(g, &cls, &name, v));
        }
        Op::AssignStaticPropOp {
            op,
            class,
            mode,
            name,
            src,
            dst,
        } => {
            save_pc(g, cur!());
            let v = opnd!(src).deref_clone();
            let cls = tri!(crate::objects::class_operand(g, &opnd!(class), mode));
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let r = tri!(crate::objects::modify_static(
                g,
                &cls,
                &name,
                crate::objects::Modify::Op(op, &v)
            ));
            if !dst.is_none() {
                set!(dst, r);
            }
        }
        Op::IncDecStaticProp {
            class,
            mode,
            name,
            kind,
            dst,
            cache,
        } => {
            save_pc(g, cur!());
            // Resolved through the cache first, which the fast path reads.
            tri!(crate::objects::static_ref_cached(
                g,
                &opnd!(class),
                mode,
                &opnd!(name),
                cache_at(func, cache),
                false
            ));
            let cls = tri!(crate::objects::class_operand(g, &opnd!(class), mode));
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let r = tri!(crate::objects::modify_static(
                g,
                &cls,
                &name,
                crate::objects::Modify::IncDec(kind)
            ));
            if !dst.is_none() {
                set!(dst, r);
            }
        }
        Op::FetchClassConst {
            dst,
            class,
            mode,
            name,
            cache,
        } => {
            save_pc(g, cur!());
            let Value::Str(name) = &func.consts.values()[name as usize] else {
                unreachable!("a constant's name is a string constant")
            };
            let v = tri!(crate::objects::class_const_cached(
                g,
                &opnd!(class),
                mode,
                name,
                cache_at(func, cache)
            ));
            set!(dst, v);
        }
        Op::FetchClassName { dst, class, mode } => {
            save_pc(g, cur!());
            let v = opnd!(class).deref_clone();
            if mode == minizts_core::bytecode::class_mode::VALUE && !matches!(v, Value::Obj(_) | Value::Closure(_)) {
                tri!(crate::error::type_error::<()>(format!(
                    "Cannot use \"::class\" on value of type {}",
                    v.type_name()
                )));
            }
            let cls = tri!(class_name_operand(g, &v, mode));
            set!(dst, Value::Str(cls.name.clone()));
        }
        Op::InstanceOf {
            dst,
            src,
            class,
            mode,
            cache,
        } => {
            save_pc(g, cur!());
            let v = opnd!(src).deref_clone();
            let at = cache_at(func, cache);
            let cached = crate::objects::cached_class(g, at);
            // `instanceof` never autoloads: a class that is not declared
            // has no instances.
            let named = match opnd!(class).deref_clone() {
                _ if cached.is_some() => None,
                Value::Str(n)
                    if mode == minizts_core::bytecode::class_mode::NAME
                        || mode == minizts_core::bytecode::class_mode::VALUE =>
                {
                    Some(n)
                }
                _ => None,
            };
            let cls = if cached.is_some() {
                cached
            } else if let Some(n) = named {
                let c = crate::class::lookup(g, n.as_bytes());
                if let Some(c) = &c {
                    crate::objects::remember_class(g, at, c);
                }
                c
            } else if mode == minizts_core::bytecode::class_mode::NAME {
                None
            } else {
                match crate::objects::class_operand(g, &opnd!(class), mode) {
                    Ok(c) => {
                        crate::objects::remember_class(g, at, &c);
                        Some(c)
                    }
                    Err(e) if mode == minizts_core::bytecode::class_mode::VALUE => {
                        drop(e);
                        tri!(crate::error::error::<()>(
                            "Class name must be a valid object or a string"
                        ));
                        None
                    }
                    Err(e) => return Err(e),
                }
            };
            set!(
                dst,
                Value::Bool(cls.is_some_and(|c| crate::objects::instance_of(&v, &c)))
            );
        }
        Op::Clone { dst, src } => {
            save_pc(g, cur!());
            let v = tri!(crate::objects::clone(g, &opnd!(src)));
            set!(dst, v);
        }
        Op::Throw { src } => {
            save_pc(g, cur!());
            match opnd!(src).deref_clone() {
                Value::Obj(o) if o.class.interfaces.iter().any(|i| i.name.as_bytes() == b"Throwable") => {
                    return Err(Box::new(crate::error::VmError::Thrown(o)));
                }
                Value::Obj(_) | Value::Closure(_) => tri!(crate::error::error::<()>(
                    "Cannot throw objects that do not implement Throwable"
                )),
                _ => tri!(crate::error::error::<()>("Can only throw objects")),
            }
        }
        Op::Catch { class, var, next, last } => {
            let Value::Str(name) = &func.consts.values()[class as usize] else {
                unreachable!("a class name is a string constant")
            };
            let exc = eg!(g).exception.clone();
            let matched = match &exc {
                Some(Value::Obj(o)) => crate::exceptions::is_a(g, o, name.as_bytes()),
                _ => false,
            };
            if matched {
                eg!(g).exception = None;
                if !var.is_none() {
                    let v = exc.expect("matched");
                    match reg!(var) {
                        Value::Ref(r) if r.is_typed() => {
                            let r = r.clone();
                            save_pc(g, cur!());
                            tri!(crate::refs::assign(g, &r, v));
                        }
                        Value::Ref(r) => r.set(v),
                        slot => *slot = v,
                    }
                }
            } else if last {
                let exc = eg!(g).exception.take();
                if let Some(Value::Obj(o)) = exc {
                    save_pc(g, cur!());
                    return Err(Box::new(crate::error::VmError::Thrown(o)));
                }
            } else {
                jump!(next);
            }
        }
        Op::FastCall { slot, target } => {
            // The return address: the instruction after this one.
            let back = func.index_of(at).map_or(0, |i| i + 1);
            set!(slot, Value::Int(back as i64));
            jump!(target);
        }
        Op::FastRet { slot } => match std::mem::take(reg!(slot)) {
            Value::Int(back) => {
                // SAFETY: a FAST_CALL's return address is inside the code.
                return Ok(Next::at(unsafe { code.as_ptr().add(back as usize) }));
            }
            Value::Obj(o) => {
                save_pc(g, cur!());
                return Err(Box::new(crate::error::VmError::Thrown(o)));
            }
            _ => {}
        },
        Op::Return { .. } | Op::ReturnRef { .. } => {
            let v = match op {
                Op::Return { src } => opnd!(src).clone(),
                Op::ReturnRef { src } => {
                    match reg!(src).clone() {
                        v @ Value::Ref(_) => v,
                        // Still a reference, to the value alone.
                        v => {
                            save_pc(g, cur!());
                            crate::error::notice(g, "Only variable references should be returned by reference");
                            Value::Ref(crate::gc::new_ref(g, v))
                        }
                    }
                }
                _ => unreachable!(),
            };
            // The main script's return keeps its frame for the shutdown
            // functions, which see the global variables (PHP destroys
            // the global symbol table after calling them).
            let keep_main = eg!(g, |eg| {
                eg.frames.len() == 1 && eg.frames[0].func == 0 && !eg.shutdown_functions.is_empty()
            });
            if keep_main {
                *done = v;
                return Ok(Next::DONE);
            }
            // Pop the frame and free what its window holds (PHP frees
            // a function's variables when it returns).
            for i in 0..func.num_regs as usize {
                // SAFETY: the window `base..base+num_regs` is the
                // returning frame's, alive until now, and nothing else
                // refers to it.
                unsafe { &mut *base.add(i) }.release_counted();
            }
            let popped = eg!(g, |eg| {
                let top = eg.frames.pop().expect("a frame to return from");
                if top.native {
                    return None;
                }
                let caller = eg.frames.last().expect("a caller frame");
                Some((caller.base, caller.pc, top.ret, top.closure))
            });
            let Some((caller_base, caller_pc, ret, closure)) = popped else {
                *done = v;
                return Ok(Next::DONE);
            };
            drop(closure);
            if !ret.is_none() {
                // SAFETY: the caller's return register is in its
                // window, which is live again.
                unsafe { *caller_base.byte_add(ret.raw() * 8) = v };
            }
            // SAFETY: the caller's saved instruction (the call) is
            // inside its code, and its code goes on after it (it ends
            // in a return).
            return Ok(Next::frame(unsafe { caller_pc.add(1) }));
        }
        Op::RefResult { dst } => {
            if !matches!(reg!(dst), Value::Ref(_)) {
                save_pc(g, cur!());
                crate::error::notice(g, "Only variables should be assigned by reference");
                let v = std::mem::take(reg!(dst));
                *reg!(dst) = Value::Ref(crate::gc::new_ref(g, v));
            }
        }
        Op::VerifyArg { param, .. } => {
            save_pc(g, cur!());
            let p = &func.params[param as usize];
            let ty = p.ty.as_ref().expect("VERIFY_ARG checks a typed parameter");
            let argc = eg!(g).frames.last().map_or(0, |f| f.argc);
            let slot = reg!(Reg::new(param));
            if p.variadic {
                tri!(crate::types::verify_variadic(g, func, param as usize, ty, slot));
            } else if argc > param && !matches!(slot, Value::Undef) {
                tri!(crate::types::verify_slot(
                    g,
                    func,
                    param as usize,
                    Some(&p.name),
                    ty,
                    slot
                ));
            }
        }
        Op::VerifyDefault { param } => {
            save_pc(g, cur!());
            let p = &func.params[param as usize];
            let ty = p.ty.as_ref().expect("VERIFY_DEFAULT checks a typed parameter");
            let slot = reg!(Reg::new(param));
            tri!(crate::types::verify_slot(
                g,
                func,
                param as usize,
                Some(&p.name),
                ty,
                slot
            ));
        }
        Op::VerifyReturn { dst, src, .. } => {
            save_pc(g, cur!());
            let v = opnd!(src).clone();
            let ty = func.return_type.as_ref().expect("VERIFY_RETURN in a typed function");
            match crate::types::check(g, ty, &v, func.strict_types) {
                Ok(None) => set!(dst, v),
                Ok(Some(c)) => set!(dst, c),
                Err(()) => tri!(Err::<(), _>(crate::types::return_error(g, func, ty, Some(&v)))),
            }
        }
        Op::VerifyReturnRef { src } => {
            save_pc(g, cur!());
            let v = opnd!(Src::reg(src)).clone();
            let ty = func
                .return_type
                .as_ref()
                .expect("VERIFY_RETURN_REF in a typed function");
            match crate::types::check(g, ty, &v, func.strict_types) {
                Ok(None) => {}
                Ok(Some(c)) => match reg!(src) {
                    Value::Ref(r) => match r.try_borrow_mut() {
                        Ok(mut inner) => *inner = c,
                        Err(_) => tri!(fatal::<()>("minizts: a reference cycle was written through itself")),
                    },
                    slot => *slot = c,
                },
                Err(()) => tri!(Err::<(), _>(crate::types::return_error(g, func, ty, Some(&v)))),
            }
        }
        Op::VerifyNoReturn {} => {
            save_pc(g, cur!());
            let ty = func.return_type.as_ref().expect("VERIFY_NO_RETURN in a typed function");
            tri!(Err::<(), _>(crate::types::return_error(g, func, ty, None)));
        }
        Op::JmpIfPassed { param, target } => {
            let argc = eg!(g).frames.last().map_or(0, |f| f.argc);
            // A parameter a named argument skipped comes unset.
            if argc > param && !matches!(reg!(Reg::new(param)), Value::Undef) {
                goto!(target);
            }
        }

        Op::DeclareFunction { func: f } => {
            save_pc(g, cur!());
            tri!(call::declare_function(g, f));
        }
        Op::MakeClosure {
            dst,
            func: f,
            captures,
            n,
        } => {
            let bound: Vec<Value> = (0..n as u16).map(|i| std::mem::take(reg!(captures.plus(i)))).collect();
            // SAFETY: used here only.
            let callee = unsafe { crate::code::known(g, f) };
            let statics = vec![None; callee.num_statics as usize];
            // A closure made in a method keeps its scope and, unless
            // static, its `$this`.
            let (scope, called) = eg!(g, |eg| eg.frames.last().map_or((0, 0), |f| (f.scope, f.called)));
            let this = if callee.method_flags & minizts_core::object::acc::STATIC != 0 {
                None
            } else {
                crate::objects::this(g)
            };
            let c = call::new_closure(
                g,
                f,
                bound,
                statics,
                minizts_core::value::ClosureKind::Literal,
                this,
                scope,
                called,
            );
            *reg!(dst) = Value::Closure(Rc::new(c));
        }
        Op::MakeCallable { dst, src } => {
            save_pc(g, cur!());
            let v = opnd!(src).clone();
            let c = tri!(call::callable_closure(g, &v));
            set!(dst, c);
        }
        Op::BindGlobal { var, name, cache } => {
            let r = match crate::scope::bind_global_cached(g, cache) {
                Some(r) => r,
                None => {
                    // Through `func`, not `consts`: the run loop then never
                    // needs the pool's length, and calls and returns do not
                    // carry it.
                    let Value::Str(name) = &func.consts.values()[name as usize] else {
                        unreachable!("a global's name is a string constant")
                    };
                    if let (Some(at), Some(cv)) = (cache_at(func, cache), crate::scope::global_cv(g, name)) {
                        eg!(g).runtime_cache[at as usize] = CacheEntry::GlobalVar { cv };
                    }
                    global_ref(g, name)
                }
            };
            *reg!(var) = Value::Ref(r);
        }
        Op::BindGlobalByName { name } => {
            save_pc(g, cur!());
            let name = tri!(crate::ops::to_str(g, &opnd!(name)));
            let r = global_ref(g, &name);
            crate::scope::bind_to(g, crate::scope::Which::Local, &name, r);
        }
        Op::BindStatic { var, slot, target } => {
            let existing = eg!(g, |eg| {
                let frame = eg.frames.last().expect("a frame");
                match &frame.closure {
                    Some(c) => c.statics.borrow().get(slot as usize).cloned().flatten(),
                    None if func.in_trait => eg
                        .trait_statics
                        .get(&(frame.func, frame.scope))
                        .and_then(|s| s.get(slot as usize))
                        .cloned()
                        .flatten(),
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
                    None if func.in_trait => {
                        let statics = eg.trait_statics.entry((frame.func, frame.scope)).or_default();
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
                None => match builtins::lookup_site_constant(g, s) {
                    Some(v) => {
                        eg!(g).runtime_cache[s.cache_slot as usize] = CacheEntry::Constant(v.clone());
                        v
                    }
                    None => {
                        save_pc(g, cur!());
                        let deprecated = builtins::deprecated_constant(g, &s.key).or_else(|| {
                            let fallback = s.fallback.as_deref()?;
                            builtins::deprecated_constant(g, fallback)
                        });
                        match deprecated {
                            Some(v) => v,
                            None => tri!(error(format!("Undefined constant \"{}\"", s.name))),
                        }
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
                Value::Obj(o) => {
                    save_pc(g, cur!());
                    // An `Iterator` (found through `IteratorAggregate`s)
                    // steps by its methods; any other object gives its
                    // visible properties.
                    match tri!(crate::objects::iteration_start(g, &o)) {
                        Some(state) => *reg!(iter) = state,
                        None => {
                            *reg!(iter) = Value::Undef;
                            goto!(end);
                        }
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
                Value::Arr(_) => {
                    save_pc(g, cur!());
                    tri!(crate::objects::iteration_next(g, reg!(iter), !key.is_none()))
                }
                _ => None,
            };
            match item {
                Some((k, v)) => {
                    tri!(assign_slot(g, reg!(value), v));
                    if !key.is_none() {
                        tri!(assign_slot(g, reg!(key), k));
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
                        tri!(assign_slot(g, reg!(key), k));
                    }
                }
                foreach::RefStep::End => goto!(end),
                foreach::RefStep::NotArray(t) => {
                    foreach::not_an_array(g, cur!(), t);
                    goto!(end);
                }
                foreach::RefStep::Error(e) => tri!(Err::<(), _>(e)),
            }
        }
        Op::FeFree { iter } => {
            *reg!(iter) = Value::Undef;
        }

        Op::Echo { src } => {
            tri!(crate::objects::destructors_due(g));
            let v = opnd!(src);
            if let Value::Str(s) = &*v {
                eg!(g).output.write(s);
            } else {
                // Owned, with no borrow held: a conversion warning may run
                // the user error handler, which may change the variable.
                let v: Value = (*v).clone();
                save_pc(g, cur!());
                tri!(output::echo(g, &v));
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
        Op::CheckThis { var } => {
            if let Value::Undef | Value::Null = reg!(var) {
                tri!(error("Using $this when not in object context"));
            }
        }
        Op::EnumProp { src, name } => {
            let name = opnd!(name).deref_clone();
            if let Value::Obj(_) = name {
                save_pc(g, cur!());
                tri!(crate::ops::to_str(g, &name));
            }
            if let Value::Obj(o) = opnd!(src).deref_clone() {
                if o.class.kind != minizts_core::object::ClassKind::Enum {
                    tri!(error(
                        "Fetching properties on non-enums in constant expressions is not allowed"
                    ));
                }
            }
        }
        Op::MatchError { src } => {
            save_pc(g, cur!());
            let v = opnd!(src).clone();
            return crate::error::throw("UnhandledMatchError", unhandled_match(g, &v));
        }
        // `@` keeps the fatal levels (E_USER_ERROR among them), and
        // restores the level only if the silenced code left it alone.
        Op::Silence { save } => {
            let level = eg!(g, |eg| {
                let level = eg.error_reporting;
                if level & !E_FATAL_ERRORS != 0 {
                    eg.error_reporting &= E_FATAL_ERRORS;
                }
                level
            });
            *reg!(save) = Value::Int(level);
        }
        Op::Unsilence { save } => {
            if let Value::Int(level) = *reg!(save) {
                eg!(g, |eg| {
                    if eg.error_reporting & !E_FATAL_ERRORS == 0 && level & !E_FATAL_ERRORS != 0 {
                        eg.error_reporting = level;
                    }
                });
            }
        }
        op => unreachable!("`generic` gives only general forms: {op:?}"),
    }
    // SAFETY: the instruction goes on to the next one, which exists: the
    // code ends with a return, which never gets here.
    Ok(Next::at(unsafe { at.add(1) }))
}

/// PHP's `E_FATAL_ERRORS`: the levels `@` does not silence.
const E_FATAL_ERRORS: i64 = 1 | 4 | 16 | 64 | 256 | 4096;

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

/// Clears operand `s`, a temporary register of the window at `base`,
/// when `tmp` says it is one (see `Op::Strlen`).
fn release_temp(tmp: bool, s: Src, base: *mut Value) {
    if let (true, Some(r)) = (tmp, s.as_reg()) {
        // SAFETY: the register is in the window (the verifier), and no
        // reference to it is held here.
        unsafe { *base.byte_add(r.raw() * 8) = Value::Undef };
    }
}

/// Throws PHP's "cannot be passed by reference" when an argument that
/// `vals` marks as a value (`SEND_VAL_EX`'s) goes to a by-reference
/// parameter of the method in the three registers at `regs`.
///
/// # Safety
/// `regs..regs+3` are registers of the running frame's window.
#[inline(never)]
unsafe fn refuse_values<G: Globals>(g: G, regs: *mut Value, vals: u16) -> VmResult<()> {
    if vals == 0 {
        return Ok(());
    }
    // SAFETY: the caller's promise.
    let Some(target) = (unsafe { crate::objects::callee_of(regs) }) else {
        return Ok(());
    };
    for i in (0..16).filter(|i| vals & (1 << i) != 0) {
        if call::param_by_ref(g, &target, i) {
            // SAFETY: as above.
            let named = unsafe { crate::objects::prepared_method(g, regs) }.unwrap_or_else(|| target.clone());
            return call::cannot_pass_by_reference(g, &named, i);
        }
    }
    Ok(())
}

/// The call of the method in the three registers at `regs` (what
/// `INIT_METHOD` or `INIT_DYNAMIC_CALL` resolved), which it takes, with
/// the `argc` arguments at `args`: `Some` with the function whose frame it
/// pushed, `None` when it ran the call and stored its result in `dst`.
/// Out of line: `step`'s frame would grow for every instruction.
///
/// # Safety
/// `regs..regs+3` and `args..args+argc` are registers of the running
/// frame's window, the arguments its top ones.
#[inline(never)]
unsafe fn call_prepared<G: Globals>(
    g: G,
    regs: *mut Value,
    args: *mut Value,
    argc: u8,
    dst: Reg,
) -> VmResult<Option<minizts_core::bytecode::FuncId>> {
    // SAFETY: the caller's.
    match unsafe { crate::objects::take_callee(g, regs) } {
        crate::objects::Taken::User {
            func,
            this,
            scope,
            called,
        } => {
            check_limits(g)?;
            let chunk = eg!(g, |eg| eg.frames.last().expect("a frame").chunk);
            // SAFETY: the caller's.
            unsafe { call::push_frame(g, func, args, chunk, argc as usize, dst, None, false)? };
            call::enter_method(g, this, scope, called);
            Ok(Some(func))
        }
        crate::objects::Taken::Other(run) => {
            // SAFETY: the caller's.
            let slice = unsafe { std::slice::from_raw_parts_mut(args, argc as usize) };
            let list: Vec<Value> = slice.iter_mut().map(std::mem::take).collect();
            let r = run.call(g, list)?;
            check_limits(g)?;
            set_result(g, dst, r);
            Ok(None)
        }
    }
}

/// Builds constant array literal `lit` of `func` (for `LOAD_ARRAY`) as
/// `NEW_ARRAY` and the element instructions would build it.
fn literal_array(func: &Function, lit: u16) -> PhpArray {
    use minizts_core::bytecode::LiteralValue;
    let items = match func.arrays.get(usize::from(lit)) {
        Some(l) if !l.items.is_empty() => &l.items,
        _ => return PhpArray::empty_literal(),
    };
    let consts = func.consts.values();
    let mut a = PhpArray::with_capacity(items.len());
    for item in items.iter() {
        let v = match item.value {
            LiteralValue::Const(c) => consts[usize::from(c)].clone(),
            LiteralValue::Array(n) => Value::arr(literal_array(func, n)),
        };
        match item.key.map(|k| &consts[usize::from(k)]) {
            // (The compiler leaves no key after the largest int, so there
            // is always a next key.)
            None => {
                let _ = a.push(v);
            }
            Some(Value::Int(k)) => a.insert(Key::Int(*k), v),
            Some(Value::Str(s)) => a.insert(Key::from_php_str(s.clone()), v),
            // (The verifier admits no other key.)
            Some(_) => {}
        }
    }
    a
}

/// `CALL_SPREAD`: the call of the function named in `regs` (with
/// `method`, of the call prepared in `regs`…`regs+2`) with the values of
/// the argument array in register `at`. A script function that takes a
/// list of arguments by value gets its frame here, its arguments written
/// from `at` on as a call's argument registers are (returns its id, for the
/// loop to enter); anything else is called through the general path, with
/// the result in `dst`.
///
/// # Safety
/// `regs` (three registers with `method`) and `at` must be registers of
/// the running frame's window, `at` above the others and no register
/// above it in use.
#[inline(never)]
unsafe fn call_spread<G: Globals>(
    g: G,
    regs: *mut Value,
    at: *mut Value,
    method: bool,
    dst: Reg,
) -> VmResult<Option<FuncId>> {
    // The callee, and for a method its `$this`, scope and called scope
    // (ids + 1).
    // SAFETY: the caller's.
    let (callable, desc) = unsafe { (&*regs, &*regs.add(1)) };
    if method && matches!((callable, desc), (Value::Null, Value::Null)) {
        // A `NEW` without a constructor (see `Op::New`): nothing to call.
        // SAFETY: the caller's.
        drop(std::mem::take(unsafe { &mut *at }));
        return Ok(None);
    }
    let prepared = method && matches!(desc, Value::Int(_));
    let (target, ctx) = if prepared {
        // SAFETY: the caller's: a method's three registers.
        match unsafe { crate::objects::take_callee(g, regs) } {
            crate::objects::Taken::User {
                func,
                this,
                scope,
                called,
            } => (Callee::User { func, closure: None }, Some((this, scope, called))),
            crate::objects::Taken::Other(other) => (Callee::Method(Rc::new(other.into_resolved(g))), None),
        }
    } else {
        // The call consumes the callable, as `CALL_VALUE` does.
        // SAFETY: the caller's.
        let v = std::mem::take(unsafe { &mut *regs });
        (call::resolve_callable(g, &v)?, None)
    };
    // SAFETY: the caller's.
    let list = match std::mem::take(unsafe { &mut *at }) {
        Value::Arr(a) => a,
        _ => Rc::new(PhpArray::new()),
    };
    if let Callee::User { func, closure } = &target {
        // SAFETY: used within the call.
        let f = unsafe { crate::code::known(g, *func) };
        let n = list.len();
        let chunk = eg!(g, |eg| eg.frames.last().expect("a frame").chunk);
        let variadic = f.params.last().is_some_and(|p| p.variadic);
        // Values only (no reference to make for a parameter), in order,
        // each with a register of its own before the chunk ends and, past
        // the parameters, a variadic one to collect them.
        if list.is_list()
            && (variadic || n <= f.params.len())
            && !(0..n).any(|i| f.param_by_ref(i))
            && at.wrapping_add(n) <= chunk
        {
            for (i, v) in list.values().enumerate() {
                // SAFETY: `at+i` lies in the chunk (just checked), whose
                // registers all hold valid values, and no frame uses it:
                // it is at or above the top of the caller's window.
                unsafe { *at.add(i) = v.deref_clone() };
            }
            drop(list);
            check_limits(g)?;
            // SAFETY: the arguments are the registers from `at`, in the
            // chunk that ends at `chunk`, above the caller's live ones.
            unsafe { call::push_frame(g, *func, at, chunk, n, dst, closure.clone(), false)? };
            if let Some((this, scope, called)) = ctx {
                call::enter_method(g, this, scope, called);
            }
            return Ok(Some(*func));
        }
    }
    let sent = if list.iter().any(|(k, _)| matches!(k, minizts_core::KeyRef::Str(_))) {
        call::arguments_from_array(g, &target, &list)?
    } else {
        call::Sent {
            args: list.values().cloned().collect(),
            named: PhpArray::new(),
        }
    };
    drop(list);
    // A by-reference parameter gets the reference the argument array
    // holds (a variable's, see `SEND_UNPACK`), or a new one around a
    // value, silently (PHP's `SEND_UNPACK` and named `SEND_VAL_EX`); the
    // others get values.
    let send = |i: Option<usize>, v: Value, by_ref: bool| match v {
        // A parameter left out stays unset.
        Value::Undef if i.is_some() => Value::Undef,
        Value::Ref(r) if by_ref => Value::Ref(r),
        v if by_ref => Value::Ref(crate::gc::new_ref(g, v)),
        v => v.deref_clone(),
    };
    let values: Vec<Value> = sent
        .args
        .into_iter()
        .enumerate()
        .map(|(i, v)| send(Some(i), v, call::param_by_ref(g, &target, i)))
        .collect();
    let mut named = sent.named;
    if !named.is_empty() {
        let by_ref = call::param_by_ref(g, &target, usize::MAX);
        for v in named.values_mut() {
            *v = send(None, std::mem::take(v), by_ref);
        }
    }
    // Called from the script, not from native code (a named call with a
    // spread comes here too, so it counts as dynamic).
    let r = match (&target, ctx) {
        (Callee::User { func, .. }, Some(ctx)) => call::call_user_from(g, *func, values, Some(named), ctx)?,
        _ => call::call_resolved_named(g, &target, values, Some(named), builtins::CallSite::Dynamic)?,
    };
    check_limits(g)?;
    set_result(g, dst, r);
    Ok(None)
}

/// Writes a call's result `r` into register `dst` (none: dropped) of the
/// running frame, the caller's again after the call.
fn set_result<G: Globals>(g: G, dst: Reg, r: Value) {
    if !dst.is_none() {
        let base = eg!(g, |eg| eg.frames.last().expect("a frame").base);
        // SAFETY: `dst` is a register of the running frame's window.
        unsafe { *base.byte_add(dst.raw() * 8) = r };
    }
}

/// `ASSIGN_PROP_DIM`'s general path: a polymorphic site's cache miss
/// first (`members::prop_miss`), then the property made a reference and
/// written through, as `FETCH_PROP_REF` and `ASSIGN_DIM` do.
///
/// # Safety
/// `at` is an `ASSIGN_PROP_DIM` of `func`, running on the window at
/// `base`.
#[inline(never)]
unsafe fn assign_prop_dim<G: Globals>(g: G, at: *const Op, base: *mut Value, func: &Function) -> VmResult<()> {
    // SAFETY: the caller's.
    let op = unsafe { &*at };
    let Op::AssignPropDim {
        obj,
        name,
        keys,
        depth,
        src,
        cache,
    } = *op
    else {
        unreachable!("an ASSIGN_PROP_DIM")
    };
    let consts = func.consts.values();
    let operand = |s: Src| match s.as_reg() {
        None => &consts[s.index()],
        // SAFETY: the verifier checks register operands against the
        // window.
        Some(r) => unsafe { &*base.byte_add(r.raw() * 8) },
    };
    if depth == 1 {
        // SAFETY: the caller's.
        let fast = || unsafe { super::members::assign_prop_dim(g, op, base, consts.as_ptr()) };
        if let Some(due) = super::members::prop_miss(g, operand(obj), name, cache, fast) {
            if due {
                save_pc(g, at);
                check_limits(g)?;
            }
            return Ok(());
        }
    }
    save_pc(g, at);
    let v = resolve(g, at, operand(src), src).clone();
    let name = crate::ops::to_str(g, &resolve(g, at, operand(name), name))?;
    // A copy of the handle: a guard on the variable's reference would
    // last through the write, which may go through that reference.
    let o = resolve(g, at, operand(obj), obj).clone();
    let mut var = Value::Ref(crate::objects::make_ref(g, &o, &name)?);
    // SAFETY: the key registers are temporaries of the window.
    let keys = unsafe { std::slice::from_raw_parts(base.byte_add(keys.raw() * 8), depth as usize) };
    crate::dim::assign(g, &mut var, keys, v)?;
    Ok(())
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

/// Warns about reading variable `reg` of the running function while it is
/// unset. The name is looked up through the current frame, not passed in:
/// given the run loop's `func`, LLVM hoisted the address of its
/// `cv_names` to the loop head and spilled it at every pass (5
/// instructions on every dispatch that goes through the head).
#[cold]
#[inline(never)]
fn undefined_variable<G: Globals>(g: G, reg: usize) {
    let name = eg!(g, |eg| {
        let func = eg.frames.last().and_then(|f| eg.code.get(f.func));
        func.and_then(|f| f.cv_names.get(reg))
            .map_or_else(|| "?".into(), |n| n.to_string())
    });
    warning(g, &format!("Undefined variable ${name}"));
}

/// Writes `v` to variable slot `slot` (through a reference if it is one).
#[inline]
pub(crate) fn assign_slot<G: Globals>(g: G, slot: &mut Value, v: Value) -> VmResult<()> {
    match slot {
        Value::Ref(r) if r.is_typed() => crate::refs::assign(g, &r.clone(), v),
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

/// Makes room for more frames (the cold half of a call's frame push).
#[cold]
#[inline(never)]
fn grow_frames(frames: &mut Vec<minizts_globals::Frame>) {
    frames.reserve(1);
}

/// Enters user function `callee` (id `fid`) whose `n` arguments are at
/// `args`, the top of the current window, when `n` needs no defaults,
/// variadics or error: saves the caller's place (`pc`, the call), takes
/// the window (the arguments are already the callee's parameters) and
/// pushes the frame in one visit to EG. The general path of a bound call
/// (the run loop's fast path does the same when the window fits the
/// stack chunk and needs no clearing).
///
/// # Safety
/// `args` is the top of the running frame's window, `n` registers of it
/// the arguments, and nothing refers to them.
pub(super) unsafe fn enter<G: Globals>(
    g: G,
    pc: *const Op,
    callee: &Function,
    fid: FuncId,
    dst: Reg,
    args: *mut Value,
    n: usize,
) -> VmResult<()> {
    let nregs = callee.num_regs as usize;
    let reserved: Result<*mut Value, StackOverflow> = eg!(g, |eg| {
        if eg.frames.len() == eg.frames.capacity() {
            grow_frames(&mut eg.frames);
        }
        let caller = eg.frames.last_mut().expect("a running frame");
        caller.pc = pc;
        let chunk = caller.chunk;
        // SAFETY: the arguments are the top registers of the window, in
        // the chunk that ends at `chunk`, and nothing refers to them.
        let (c, b) = unsafe { eg.stack.reserve(chunk, args, n, nregs) }?;
        eg.frames.push(Frame {
            func: fid,
            function: callee,
            base: b,
            chunk: c,
            pc: callee.code.as_ptr(),
            ret: dst,
            argc: n as u16,
            closure: None,
            native: false,
            scope: 0,
            called: 0,
        });
        Ok(b)
    });
    match reserved {
        Ok(b) => {
            // SAFETY: `b..b+nregs` is the window just reserved, and nothing
            // refers to its variables.
            unsafe { minizts_globals::executor::clear_variables(b, n, callee.num_cvs as usize) };
            Ok(())
        }
        Err(o) => fatal(format!(
            "Maximum call stack size of {} bytes reached. Infinite recursion?",
            o.limit_bytes
        )),
    }
}

/// The reference for global variable `name` (a top-level variable, made a
/// reference so a function can share it).
#[inline(always)]
fn global_ref<G: Globals>(g: G, name: &PhpStr) -> PhpRef {
    crate::scope::bind(g, crate::scope::Which::Global, name)
}

/// The scope an instruction's `global` flag names.
fn which(global: bool) -> crate::scope::Which {
    if global {
        crate::scope::Which::Global
    } else {
        crate::scope::Which::Local
    }
}

/// "Unhandled match case …": the value as PHP's `smart_str_append_scalar`
/// writes it, a string quoted, escaped and cut to
/// `exception_string_param_max_len` (15) bytes.
#[cold]
fn unhandled_match<G: Globals>(g: G, v: &Value) -> String {
    let v = v.deref();
    let text = match &*v {
        Value::Null | Value::Undef => "NULL".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) => {
            let mut s = crate::ops::to_str(g, &Value::Float(*f))
                .map(|s| String::from_utf8_lossy(&s).into_owned())
                .unwrap_or_default();
            if f.is_finite() && !s.contains(['.', 'e', 'E']) {
                s.push_str(".0");
            }
            s
        }
        Value::Str(s) => {
            let more = if s.len() > 15 { "..." } else { "" };
            format!("'{}{more}'", crate::error::escape_trace_bytes(&s[..s.len().min(15)]))
        }
        other => return format!("Unhandled match case of type {}", other.type_name()),
    };
    format!("Unhandled match case {text}")
}

/// The name a dynamic method call names (`$obj->$name()`), which must be
/// a string: PHP converts nothing there.
pub(crate) fn method_name(v: &Value) -> VmResult<PhpStr> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        Value::Ref(r) => method_name(&r.get()),
        _ => crate::error::error("Method name must be a string"),
    }
}

/// The class `self::class`, `parent::class`, `static::class` or
/// `$obj::class` names (PHP's `FETCH_CLASS_NAME`, whose messages differ
/// from other uses of the keywords).
fn class_name_operand<G: Globals>(g: G, v: &Value, mode: u8) -> VmResult<Rc<minizts_core::object::Class>> {
    use minizts_core::bytecode::class_mode;
    let word = match mode {
        class_mode::SELF => "self",
        class_mode::PARENT => "parent",
        class_mode::STATIC => "static",
        _ => return crate::objects::class_operand(g, v, mode),
    };
    let Some(scope) = crate::objects::scope(g) else {
        return error(format!("Cannot use \"{word}\" in the global scope"));
    };
    match mode {
        class_mode::PARENT if scope.parent.is_none() => {
            error("Cannot use \"parent\" when current class scope has no parent")
        }
        _ => crate::objects::class_operand(g, v, mode),
    }
}
