//! Register bytecode: the instruction set and compiled scripts.
//!
//! Each function runs in a window of registers on the VM stack: first its
//! compiled variables (CVs: parameters, then every other `$name` it uses,
//! like PHP's CVs), then temporaries. An operand that only reads ([`Src`])
//! may name a register or a constant from the function's pool. Calls pass
//! arguments in consecutive registers at the top of the caller's window;
//! the callee's window starts there, so arguments land in its parameters
//! without a copy (as in Lua).
//!
//! A compiled [`Script`] holds no refcounted value: its constants are
//! scalars and interned strings, so one compiled script can serve many
//! threads.

use std::fmt::{self, Write as _};

use crate::string::{InternedStrings, PhpStr};
use crate::value::Value;

/// A register in the current function's window.
///
/// It holds twice the register's index, which is the register's offset
/// from the window's base in 8-byte units: the run loop reaches a 16-byte
/// register as `base + raw * 8`, one x86 addressing mode, with no shift
/// (PHP's oplines likewise hold byte offsets, not variable numbers).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reg(u16);

// The run loop's `raw * 8` addressing relies on 16-byte values.
const _: () = assert!(std::mem::size_of::<Value>() == 16);

impl Reg {
    /// "No register" (an unused result, a missing key).
    pub const NONE: Reg = Reg(u16::MAX);

    /// The largest register index an operand can name.
    pub const MAX_INDEX: u16 = 0x7ffe;

    /// Register number `i` of the window.
    pub const fn new(i: u16) -> Reg {
        assert!(i <= Reg::MAX_INDEX);
        Reg(i << 1)
    }

    pub fn idx(self) -> usize {
        (self.0 >> 1) as usize
    }

    /// The register's offset from the window's base in 8-byte units.
    #[inline(always)]
    pub fn raw(self) -> usize {
        self.0 as usize
    }

    /// The register `n` places above this one.
    pub fn plus(self, n: u16) -> Reg {
        Reg::new(self.idx() as u16 + n)
    }

    pub fn is_none(self) -> bool {
        self == Reg::NONE
    }
}

impl fmt::Debug for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            write!(f, "Reg(NONE)")
        } else {
            write!(f, "Reg({})", self.idx())
        }
    }
}

/// A read operand: a register or a constant of the function's pool.
///
/// The low bit says which (set for a constant), the rest is the index, so
/// a register operand has the same bits as its [`Reg`] and the run loop
/// reaches either kind with one addressing mode: `base + raw * 8` for a
/// register, `consts + raw * 8 - 8` for a constant.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Src(u16);

impl Src {
    pub fn reg(r: Reg) -> Src {
        debug_assert!(!r.is_none());
        Src(r.0)
    }

    pub fn konst(k: u16) -> Src {
        debug_assert!(k <= Reg::MAX_INDEX);
        Src((k << 1) | 1)
    }

    #[inline(always)]
    pub fn is_const(self) -> bool {
        self.0 & 1 != 0
    }

    /// The register's or constant's index.
    pub fn index(self) -> usize {
        (self.0 >> 1) as usize
    }

    /// The index and kind bit as one number (see the type's docs).
    #[inline(always)]
    pub fn raw(self) -> usize {
        self.0 as usize
    }

    /// The register, if this operand is one.
    pub fn as_reg(self) -> Option<Reg> {
        (!self.is_const()).then_some(Reg(self.0))
    }
}

impl fmt::Debug for Src {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_reg() {
            Some(r) => write!(f, "{r:?}"),
            None => write!(f, "Const({})", self.index()),
        }
    }
}

impl From<Reg> for Src {
    fn from(r: Reg) -> Src {
        Src::reg(r)
    }
}

/// A jump target: an index into the function's code.
pub type Target = u32;

/// Binary operators that share one generic instruction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Concat,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    NotEq,
    Identical,
    NotIdentical,
    Lt,
    Le,
    Spaceship,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
            Pow => "**",
            Concat => ".",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            NotEq => "!=",
            Identical => "===",
            NotIdentical => "!==",
            Lt => "<",
            Le => "<=",
            Spaceship => "<=>",
        }
    }
}

/// `++`/`--`, before or after.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum IncDec {
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

impl IncDec {
    pub fn is_inc(self) -> bool {
        matches!(self, IncDec::PreInc | IncDec::PostInc)
    }

    pub fn is_pre(self) -> bool {
        matches!(self, IncDec::PreInc | IncDec::PreDec)
    }
}

/// The target of a cast.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum CastKind {
    Int,
    Float,
    String,
    Bool,
    Array,
}

/// One instruction. Registers are `Reg`, read operands `Src`, jump targets
/// indexes into the function's code. A write to a CV goes through a
/// reference if the CV holds one; a write to a temporary never does.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Op {
    /// Does nothing.
    Nop,
    /// `dst = src` (into a temporary).
    Move { dst: Reg, src: Src },
    /// `var = src` (a variable: writes through a reference).
    Assign { var: Reg, src: Src },
    /// `var = &src`: both variables share one reference from now on.
    AssignRef { var: Reg, src: Reg },
    /// `dst = a + b`
    Add { dst: Reg, a: Src, b: Src },
    /// `dst = a - b`
    Sub { dst: Reg, a: Src, b: Src },
    /// `dst = a * b`
    Mul { dst: Reg, a: Src, b: Src },
    /// `dst = a . b`
    Concat { dst: Reg, a: Src, b: Src },
    /// `dst = a < b`
    Lt { dst: Reg, a: Src, b: Src },
    /// `dst = a <= b`
    Le { dst: Reg, a: Src, b: Src },
    /// `dst = a == b`
    Eq { dst: Reg, a: Src, b: Src },
    /// `dst = a === b`
    Identical { dst: Reg, a: Src, b: Src },
    /// `dst = a <op> b` for the other binary operators.
    Binary { op: BinOp, dst: Reg, a: Src, b: Src },
    /// `var <op>= src` on a variable.
    AssignOp { op: BinOp, var: Reg, src: Src },
    /// `dst = !src`
    Not { dst: Reg, src: Src },
    /// `dst = -src`
    Neg { dst: Reg, src: Src },
    /// `dst = +src`
    Plus { dst: Reg, src: Src },
    /// `dst = ~src`
    BitNot { dst: Reg, src: Src },
    /// `dst = (bool) src`
    ToBool { dst: Reg, src: Src },
    /// `dst = (kind) src`
    Cast { dst: Reg, src: Src, kind: CastKind },
    /// `$var++` as a statement (the loop counter).
    IncVar { var: Reg },
    /// `$var--` as a statement.
    DecVar { var: Reg },
    /// `++var`, `var--`, …; `dst` (unless NONE) gets the expression's value.
    IncDecVar { var: Reg, kind: IncDec, dst: Reg },
    /// `dst` = the variable without the "undefined variable" warning
    /// (null if unset): the read `isset`, `empty` and `??` make.
    Quiet { dst: Reg, var: Reg },
    /// `dst = src !== null` (after a quiet read: `isset`).
    IsSet { dst: Reg, src: Src },
    /// Unsets a variable (dropping its reference binding, if any).
    UnsetVar { var: Reg },

    /// `dst = base[key]`, warning as PHP does on a missing key or offset.
    FetchDim { dst: Reg, base: Src, key: Src },
    /// `dst = base[k1][k2]` without copying the inner array (matrices).
    FetchDim2 { dst: Reg, base: Src, k1: Src, k2: Src },
    /// `dst = base[key]` or null, silently (inside isset/empty/??).
    FetchDimQuiet { dst: Reg, base: Src, key: Src },
    /// `dst = base[key]` for `list()`: warns on a missing key of an array,
    /// gives null silently for anything that is not an array.
    FetchDimList { dst: Reg, base: Src, key: Src },
    /// `var[k1]…[kn] = src`; the `depth` keys are in consecutive
    /// registers from `keys`; an `Undef` key means `[]` (append).
    AssignDim { var: Reg, keys: Reg, depth: u8, src: Src },
    /// `var[key] = src`, one dimension with the key read as an operand
    /// when the instruction runs (no copy into a key register; PHP also
    /// reads a variable key at the assignment).
    AssignDim1 { var: Reg, key: Src, src: Src },
    /// `var[key] <op>= src`, one dimension.
    AssignDimOp1 { op: BinOp, var: Reg, key: Src, src: Src },
    /// `var[k1]…[kn] = &…`: stores the reference held in `src`.
    AssignDimRef { var: Reg, keys: Reg, depth: u8, src: Reg },
    /// `var[k1]…[kn] <op>= src`
    AssignDimOp {
        op: BinOp,
        var: Reg,
        keys: Reg,
        depth: u8,
        src: Src,
    },
    /// `++var[k1]…[kn]` and the others; `dst` gets the value unless NONE.
    IncDecDim {
        var: Reg,
        keys: Reg,
        depth: u8,
        kind: IncDec,
        dst: Reg,
    },
    /// `unset(var[k1]…[kn])`
    UnsetDim { var: Reg, keys: Reg, depth: u8 },
    /// Makes `var` a reference (if it is not one) and puts it in `dst`.
    MakeRef { dst: Reg, var: Reg },
    /// Makes `var[k1]…[kn]` a reference (creating it) and puts it in `dst`.
    MakeRefDim { dst: Reg, var: Reg, keys: Reg, depth: u8 },

    /// `dst = []` (an empty array literal).
    NewArray { dst: Reg, capacity: u16 },
    /// Appends `src` to the array being built in `arr`.
    ArrayPush { arr: Reg, src: Src },
    /// `arr[key] = src` on the array being built in `arr`.
    ArraySet { arr: Reg, key: Src, src: Src },
    /// `...src` inside an array literal.
    ArraySpread { arr: Reg, src: Src },
    /// `dst` = the `n` registers from `start` concatenated (interpolation).
    ConcatN { dst: Reg, start: Reg, n: u8 },

    /// Continue at `target`.
    Jmp { target: Target },
    /// Continue at an earlier `target`: a loop's back edge, where the VM
    /// checks its interrupt flag (time limit) and memory limit.
    JmpBack { target: Target },
    /// Jump if `cond` is true.
    JmpIf { cond: Src, target: Target },
    /// Jump if `cond` is false.
    JmpIfNot { cond: Src, target: Target },
    /// Jump if `src` is not null (`??`).
    JmpIfNotNull { src: Src, target: Target },
    /// Jump if `(a < b) == if_true` (a comparison fused with its branch).
    JmpLt {
        a: Src,
        b: Src,
        if_true: bool,
        target: Target,
    },
    /// A `for` loop's bottom, `$var++; if ($var < limit) goto target`,
    /// fused; when it does not jump it also skips the next instruction
    /// (the same test, which the loop's entry jump lands on).
    IncJmpLt { var: Reg, limit: Src, target: Target },
    /// The same with `$var <= limit`.
    IncJmpLe { var: Reg, limit: Src, target: Target },
    /// A counting-down loop's bottom, `$var--; if ($var > limit) goto
    /// target`, fused the same way (the test is `JMP_LT (limit < $var)`).
    DecJmpGt { var: Reg, limit: Src, target: Target },
    /// The same with `$var >= limit` (`JMP_LE (limit <= $var)`).
    DecJmpGe { var: Reg, limit: Src, target: Target },
    // The specialised loop bottoms below also hold `back`: how many bytes
    // the instruction is past its target (set by the compiler's last
    // pass, `with_back`, and checked when the function is finished). The
    // hot loop jumps back with it, without the code's address, which it
    // keeps in a stack slot.
    /// `IncJmpLt` with the limit in a register.
    IncJmpLtR {
        var: Reg,
        limit: Reg,
        target: Target,
        back: u16,
    },
    /// `IncJmpLt` with a constant limit (a constant `Src`).
    IncJmpLtC {
        var: Reg,
        limit: Src,
        target: Target,
        back: u16,
    },
    /// `IncJmpLe` with the limit in a register.
    IncJmpLeR {
        var: Reg,
        limit: Reg,
        target: Target,
        back: u16,
    },
    /// `IncJmpLe` with a constant limit.
    IncJmpLeC {
        var: Reg,
        limit: Src,
        target: Target,
        back: u16,
    },
    /// `DecJmpGt` with the limit in a register.
    DecJmpGtR {
        var: Reg,
        limit: Reg,
        target: Target,
        back: u16,
    },
    /// `DecJmpGt` with a constant limit.
    DecJmpGtC {
        var: Reg,
        limit: Src,
        target: Target,
        back: u16,
    },
    /// `DecJmpGe` with the limit in a register.
    DecJmpGeR {
        var: Reg,
        limit: Reg,
        target: Target,
        back: u16,
    },
    /// `DecJmpGe` with a constant limit.
    DecJmpGeC {
        var: Reg,
        limit: Src,
        target: Target,
        back: u16,
    },
    /// Jump if `(a <= b) == if_true`.
    JmpLe {
        a: Src,
        b: Src,
        if_true: bool,
        target: Target,
    },

    // Operand-specialised forms, written only by the compiler's last pass
    // (`specialise`): each means exactly what its general form means, but
    // its operands' kinds (register or constant) are part of the opcode,
    // so the VM reads them without testing (PHP specialises its handlers
    // by operand type the same way). They print as their general forms.
    /// `Move` of constant `k` (a constant `Src`: a scalar or an interned
    /// string, so a copy of its bits).
    MoveC { dst: Reg, k: Src },
    /// `Add` with two registers.
    AddRR { dst: Reg, a: Reg, b: Reg },
    /// `Add` with a register and constant `k` (a constant `Src`).
    AddRC { dst: Reg, a: Reg, k: Src },
    /// `Sub` with two registers.
    SubRR { dst: Reg, a: Reg, b: Reg },
    /// `Sub` with a register and constant `k`.
    SubRC { dst: Reg, a: Reg, k: Src },
    /// `Mul` with two registers.
    MulRR { dst: Reg, a: Reg, b: Reg },
    /// `Mul` with a register and constant `k`.
    MulRC { dst: Reg, a: Reg, k: Src },
    /// `Mul` with constant `k` first and a register (`2 * $z`).
    MulCR { dst: Reg, k: Src, b: Reg },
    /// `JmpLt` with two registers.
    JmpLtRR {
        a: Reg,
        b: Reg,
        if_true: bool,
        target: Target,
    },
    /// `JmpLt` with a register and constant `k` (`a < k`).
    JmpLtRC {
        a: Reg,
        k: Src,
        if_true: bool,
        target: Target,
    },
    /// `JmpLt` with constant `k` and a register (`k < b`).
    JmpLtCR {
        k: Src,
        b: Reg,
        if_true: bool,
        target: Target,
    },
    /// `JmpLe` with two registers.
    JmpLeRR {
        a: Reg,
        b: Reg,
        if_true: bool,
        target: Target,
    },
    /// `JmpLe` with a register and constant `k` (`a <= k`).
    JmpLeRC {
        a: Reg,
        k: Src,
        if_true: bool,
        target: Target,
    },
    /// Jump if `(a == b) == if_true`.
    JmpEq {
        a: Src,
        b: Src,
        if_true: bool,
        target: Target,
    },
    /// Jump if `(a === b) == if_true`.
    JmpIdentical {
        a: Src,
        b: Src,
        if_true: bool,
        target: Target,
    },

    /// Calls the user function named by call site `site` with the `argc`
    /// arguments in the registers from `args`; the result goes to `dst`.
    CallUser { dst: Reg, site: u16, args: Reg, argc: u8 },
    /// `CallUser` bound when the script was compiled: `func` is a function
    /// declared at the top level (PHP's early binding) and `argc` fits its
    /// parameters without defaults or variadics to sort out, so no cache
    /// lookup and no argument-count check at run time.
    CallDirect {
        dst: Reg,
        site: u16,
        args: Reg,
        argc: u8,
        func: FuncId,
    },
    /// Calls builtin `id` with the arguments in the registers from `args`.
    CallBuiltin { dst: Reg, id: u16, args: Reg, argc: u8 },
    /// Calls the closure or string callable in `callee`.
    CallValue { dst: Reg, callee: Reg, args: Reg, argc: u8 },
    /// Calls the callable in `callee` (a closure, or a function's name)
    /// with the values of the array in `args` as its arguments
    /// (`f(...$args)`).
    CallSpread { dst: Reg, callee: Reg, args: Reg },
    /// Passes variable `var` as argument `argno` of the call of `callee`:
    /// by reference if that parameter is by reference, else by value.
    /// With `var` equal to `dst`, the argument is a value that is not a
    /// variable: a by-reference parameter throws PHP's "cannot be passed
    /// by reference" error.
    SendVarEx { dst: Reg, var: Reg, callee: Reg, argno: u8 },
    /// Returns `src` to the caller.
    Return { src: Src },
    /// Jumps over the default-value code of `param` when it was passed.
    JmpIfPassed { param: u16, target: Target },

    /// Declares function `func` (a conditional or nested declaration).
    DeclareFunction { func: u32 },
    /// `dst` = a closure of function `func`, capturing the `n` registers
    /// from `captures` (values, or references for `use (&$x)`).
    MakeClosure { dst: Reg, func: u32, captures: Reg, n: u8 },
    /// `global $name`: binds `var` to the global variable named by
    /// constant `name`.
    BindGlobal { var: Reg, name: u16 },
    /// `static $x`: if static slot `slot` is initialised, binds `var` to it
    /// and jumps to `target`; otherwise falls into the initialiser code.
    BindStatic { var: Reg, slot: u16, target: Target },
    /// Creates static slot `slot` holding `src` and binds `var` to it.
    InitStatic { var: Reg, slot: u16, src: Src },
    /// `dst` = the constant named by constant-fetch site `site`.
    FetchConst { dst: Reg, site: u16 },
    /// `const NAME = src;` (NAME is constant `name`).
    DeclareConst { name: u16, src: Src },

    /// Starts a foreach by value over `subject` (jumps to `end` if empty
    /// or not an array; warns for non-arrays).
    FeReset { iter: Reg, subject: Src, end: Target },
    /// Starts a foreach by reference over variable `var`.
    FeResetRef { iter: Reg, var: Reg, end: Target },
    /// Starts a foreach by reference over the reference in `src`.
    FeResetRefFrom { iter: Reg, src: Reg, end: Target },
    /// Next element into `value` (and its key into `key` unless NONE), or
    /// jump to `end` when there is none.
    FeFetch {
        iter: Reg,
        value: Reg,
        key: Reg,
        end: Target,
    },
    /// Next element bound by reference to `value`, or jump to `end`.
    FeFetchRef {
        iter: Reg,
        value: Reg,
        key: Reg,
        end: Target,
    },
    /// Ends a foreach (releases the array it held).
    FeFree { iter: Reg },

    /// `echo src`
    Echo { src: Src },
    /// `exit` / `exit(src)`; src NONE-like constant null for a bare exit.
    Exit { src: Src },
    /// Starts `@expr`: saves the error reporting level in `save`, sets 0.
    Silence { save: Reg },
    /// Ends `@expr`: restores the level saved in `save`.
    Unsilence { save: Reg },
}

impl Op {
    /// The general form of an operand-specialised instruction (itself for
    /// any other): what it means, and how it prints.
    pub fn generic(self) -> Op {
        use Op::*;
        let r = Src::reg;
        match self {
            MoveC { dst, k } => Move { dst, src: k },
            AddRR { dst, a, b } => Add { dst, a: r(a), b: r(b) },
            AddRC { dst, a, k: c } => Add { dst, a: r(a), b: c },
            SubRR { dst, a, b } => Sub { dst, a: r(a), b: r(b) },
            SubRC { dst, a, k: c } => Sub { dst, a: r(a), b: c },
            MulRR { dst, a, b } => Mul { dst, a: r(a), b: r(b) },
            MulRC { dst, a, k: c } => Mul { dst, a: r(a), b: c },
            MulCR { dst, k: c, b } => Mul { dst, a: c, b: r(b) },
            JmpLtRR { a, b, if_true, target } => JmpLt {
                a: r(a),
                b: r(b),
                if_true,
                target,
            },
            JmpLtRC {
                a,
                k: c,
                if_true,
                target,
            } => JmpLt {
                a: r(a),
                b: c,
                if_true,
                target,
            },
            JmpLtCR {
                k: c,
                b,
                if_true,
                target,
            } => JmpLt {
                a: c,
                b: r(b),
                if_true,
                target,
            },
            JmpLeRR { a, b, if_true, target } => JmpLe {
                a: r(a),
                b: r(b),
                if_true,
                target,
            },
            JmpLeRC {
                a,
                k: c,
                if_true,
                target,
            } => JmpLe {
                a: r(a),
                b: c,
                if_true,
                target,
            },
            IncJmpLtR { var, limit, target, .. } => IncJmpLt {
                var,
                limit: r(limit),
                target,
            },
            IncJmpLtC { var, limit, target, .. } => IncJmpLt { var, limit, target },
            IncJmpLeR { var, limit, target, .. } => IncJmpLe {
                var,
                limit: r(limit),
                target,
            },
            IncJmpLeC { var, limit, target, .. } => IncJmpLe { var, limit, target },
            DecJmpGtR { var, limit, target, .. } => DecJmpGt {
                var,
                limit: r(limit),
                target,
            },
            DecJmpGtC { var, limit, target, .. } => DecJmpGt { var, limit, target },
            DecJmpGeR { var, limit, target, .. } => DecJmpGe {
                var,
                limit: r(limit),
                target,
            },
            DecJmpGeC { var, limit, target, .. } => DecJmpGe { var, limit, target },
            op => op,
        }
    }

    /// The operand-specialised form of `Move`, `Add`, `Sub`, `Mul`,
    /// `JmpLt`, `JmpLe` or a fused loop bottom whose operands' kinds have
    /// one (the instruction itself otherwise). A loop bottom's comes with
    /// `back` 0, for [`Op::with_back`] to set.
    pub fn specialised(self) -> Op {
        use Op::*;
        let (a, b) = match self {
            Add { a, b, .. } | Sub { a, b, .. } | Mul { a, b, .. } | JmpLt { a, b, .. } | JmpLe { a, b, .. } => (a, b),
            IncJmpLt { var, limit, target } => {
                return match limit.as_reg() {
                    Some(limit) => IncJmpLtR {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                    None => IncJmpLtC {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                }
            }
            IncJmpLe { var, limit, target } => {
                return match limit.as_reg() {
                    Some(limit) => IncJmpLeR {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                    None => IncJmpLeC {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                }
            }
            DecJmpGt { var, limit, target } => {
                return match limit.as_reg() {
                    Some(limit) => DecJmpGtR {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                    None => DecJmpGtC {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                }
            }
            DecJmpGe { var, limit, target } => {
                return match limit.as_reg() {
                    Some(limit) => DecJmpGeR {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                    None => DecJmpGeC {
                        var,
                        limit,
                        target,
                        back: 0,
                    },
                }
            }
            Move { dst, src } if src.is_const() => return MoveC { dst, k: src },
            op => return op,
        };
        match (self, a.as_reg(), b.as_reg()) {
            (Add { dst, .. }, Some(a), Some(b)) => AddRR { dst, a, b },
            (Add { dst, .. }, Some(a), None) => AddRC { dst, a, k: b },
            (Sub { dst, .. }, Some(a), Some(b)) => SubRR { dst, a, b },
            (Sub { dst, .. }, Some(a), None) => SubRC { dst, a, k: b },
            (Mul { dst, .. }, Some(a), Some(b)) => MulRR { dst, a, b },
            (Mul { dst, .. }, Some(a), None) => MulRC { dst, a, k: b },
            (Mul { dst, .. }, None, Some(b)) => MulCR { dst, k: a, b },
            (JmpLt { if_true, target, .. }, Some(a), Some(b)) => JmpLtRR { a, b, if_true, target },
            (JmpLt { if_true, target, .. }, Some(a), None) => JmpLtRC {
                a,
                k: b,
                if_true,
                target,
            },
            (JmpLt { if_true, target, .. }, None, Some(b)) => JmpLtCR {
                k: a,
                b,
                if_true,
                target,
            },
            (JmpLe { if_true, target, .. }, Some(a), Some(b)) => JmpLeRR { a, b, if_true, target },
            (JmpLe { if_true, target, .. }, Some(a), None) => JmpLeRC {
                a,
                k: b,
                if_true,
                target,
            },
            (op, _, _) => op,
        }
    }

    /// The jump target, for instructions that may jump.
    pub fn target(&self) -> Option<Target> {
        use Op::*;
        match self.generic() {
            Jmp { target }
            | JmpBack { target }
            | JmpIf { target, .. }
            | JmpIfNot { target, .. }
            | JmpIfNotNull { target, .. }
            | JmpLt { target, .. }
            | IncJmpLt { target, .. }
            | IncJmpLe { target, .. }
            | DecJmpGt { target, .. }
            | DecJmpGe { target, .. }
            | JmpLe { target, .. }
            | JmpEq { target, .. }
            | JmpIdentical { target, .. }
            | JmpIfPassed { target, .. }
            | BindStatic { target, .. } => Some(target),
            FeReset { end, .. }
            | FeResetRef { end, .. }
            | FeResetRefFrom { end, .. }
            | FeFetch { end, .. }
            | FeFetchRef { end, .. } => Some(end),
            _ => None,
        }
    }

    /// Whether the VM's hot loop (`minizts_vm`'s `exec/hot.rs`) has a fast
    /// path for the instruction: one that reads and writes registers,
    /// constants and the int-keyed elements of unshared arrays, calling
    /// nothing but an array's element insertion: moves and assignments of
    /// values that own nothing, int and float arithmetic, int `% << >> & | ^`,
    /// numeric compare-and-branch, `++`/`--` on a variable, `+= -= *=`,
    /// int-key element reads and scalar element writes, jumps and the
    /// fused loop bottoms; and bound calls and returns whose windows and
    /// values own nothing but interned strings. A loop made only of these
    /// runs in the hot loop (see [`hot_loop_heads`]), and so does a
    /// function made only of them (see [`mark_hot_code`]).
    pub fn runs_in_hot_loop(&self) -> bool {
        use Op::*;
        matches!(
            self,
            Nop | Move { .. }
                | MoveC { .. }
                | CallDirect { .. }
                | Return { .. }
                | Assign { .. }
                | Add { .. }
                | Sub { .. }
                | Mul { .. }
                | AddRR { .. }
                | AddRC { .. }
                | SubRR { .. }
                | SubRC { .. }
                | MulRR { .. }
                | MulRC { .. }
                | MulCR { .. }
                | IncVar { .. }
                | DecVar { .. }
                | IncDecVar { .. }
                | AssignOp {
                    op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                    ..
                }
                | Binary {
                    op: BinOp::Mod | BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor,
                    ..
                }
                | FetchDim { .. }
                | FetchDim2 { .. }
                | AssignDim1 { .. }
                | AssignDimOp1 { .. }
                | JmpIf { .. }
                | JmpIfNot { .. }
                | JmpEq { .. }
                | Jmp { .. }
                | JmpBack { .. }
                | JmpLt { .. }
                | JmpLtRR { .. }
                | JmpLtRC { .. }
                | JmpLtCR { .. }
                | JmpLe { .. }
                | JmpLeRR { .. }
                | JmpLeRC { .. }
                | IncJmpLtR { .. }
                | IncJmpLtC { .. }
                | IncJmpLeR { .. }
                | IncJmpLeC { .. }
                | DecJmpGtR { .. }
                | DecJmpGtC { .. }
                | DecJmpGeR { .. }
                | DecJmpGeC { .. }
        )
    }

    /// For a specialised loop bottom, `back` set for the instruction at
    /// index `pc` (how many bytes it is past its target); its general
    /// form instead when that does not fit `back` (a loop of more than
    /// 5,461 instructions) or the target is not behind it. Any other
    /// instruction as it is.
    pub fn with_back(self, pc: usize) -> Op {
        let mut op = self;
        let Some(t) = op.target() else { return op };
        let Some(back) = op.back_mut() else { return op };
        match pc
            .checked_sub(t as usize)
            .and_then(|d| u16::try_from(d * std::mem::size_of::<Op>()).ok())
        {
            Some(d) => {
                *back = d;
                op
            }
            None => op.generic(),
        }
    }

    /// A specialised loop bottom's `back` (see [`Op::with_back`]).
    pub fn back(&self) -> Option<u16> {
        let mut op = *self;
        op.back_mut().map(|b| *b)
    }

    fn back_mut(&mut self) -> Option<&mut u16> {
        use Op::*;
        match self {
            IncJmpLtR { back, .. }
            | IncJmpLtC { back, .. }
            | IncJmpLeR { back, .. }
            | IncJmpLeC { back, .. }
            | DecJmpGtR { back, .. }
            | DecJmpGtC { back, .. }
            | DecJmpGeR { back, .. }
            | DecJmpGeC { back, .. } => Some(back),
            _ => None,
        }
    }

    /// The mutable jump target, for the compiler's back-patching.
    pub fn target_mut(&mut self) -> Option<&mut Target> {
        use Op::*;
        match self {
            Jmp { target }
            | JmpBack { target }
            | JmpIf { target, .. }
            | JmpIfNot { target, .. }
            | JmpIfNotNull { target, .. }
            | JmpLt { target, .. }
            | IncJmpLt { target, .. }
            | IncJmpLe { target, .. }
            | DecJmpGt { target, .. }
            | DecJmpGe { target, .. }
            | JmpLe { target, .. }
            | JmpEq { target, .. }
            | JmpIdentical { target, .. }
            | JmpIfPassed { target, .. }
            | BindStatic { target, .. }
            | JmpLtRR { target, .. }
            | JmpLtRC { target, .. }
            | JmpLtCR { target, .. }
            | JmpLeRR { target, .. }
            | JmpLeRC { target, .. }
            | IncJmpLtR { target, .. }
            | IncJmpLtC { target, .. }
            | IncJmpLeR { target, .. }
            | IncJmpLeC { target, .. }
            | DecJmpGtR { target, .. }
            | DecJmpGtC { target, .. }
            | DecJmpGeR { target, .. }
            | DecJmpGeC { target, .. } => Some(target),
            FeReset { end, .. }
            | FeResetRef { end, .. }
            | FeResetRefFrom { end, .. }
            | FeFetch { end, .. }
            | FeFetchRef { end, .. } => Some(end),
            _ => None,
        }
    }

    /// Calls `reg` with every register range the instruction touches (as
    /// first register and count; `Reg::NONE` results are skipped) and
    /// `src` with every read operand. The compiler uses it to check that
    /// every operand is inside the function's window and constant pool,
    /// which is what lets the VM index both without bounds checks.
    pub fn operands(&self, mut reg: impl FnMut(Reg, usize), mut src: impl FnMut(Src)) {
        use Op::*;
        let mut rg = |x: Reg, n: usize| {
            if !x.is_none() {
                reg(x, n)
            }
        };
        macro_rules! r {
            ($x:expr) => {
                rg($x, 1)
            };
        }
        match self.generic() {
            MoveC { .. }
            | AddRR { .. }
            | AddRC { .. }
            | SubRR { .. }
            | SubRC { .. }
            | MulRR { .. }
            | MulRC { .. }
            | MulCR { .. }
            | JmpLtRR { .. }
            | JmpLtRC { .. }
            | JmpLtCR { .. }
            | JmpLeRR { .. }
            | JmpLeRC { .. }
            | IncJmpLtR { .. }
            | IncJmpLtC { .. }
            | IncJmpLeR { .. }
            | IncJmpLeC { .. }
            | DecJmpGtR { .. }
            | DecJmpGtC { .. }
            | DecJmpGeR { .. }
            | DecJmpGeC { .. } => unreachable!("`generic` maps every specialised form"),
            Nop | Jmp { .. } | JmpBack { .. } | JmpIfPassed { .. } | DeclareFunction { .. } => {}
            Move { dst, src: s } => {
                r!(dst);
                src(s);
            }
            Assign { var, src: s } => {
                r!(var);
                src(s);
            }
            AssignRef { var, src: s } => {
                r!(var);
                r!(s);
            }
            Add { dst, a, b }
            | Sub { dst, a, b }
            | Mul { dst, a, b }
            | Concat { dst, a, b }
            | Lt { dst, a, b }
            | Le { dst, a, b }
            | Eq { dst, a, b }
            | Identical { dst, a, b }
            | Binary { dst, a, b, .. } => {
                r!(dst);
                src(a);
                src(b);
            }
            AssignOp { var, src: s, .. } => {
                r!(var);
                src(s);
            }
            Not { dst, src: s }
            | Neg { dst, src: s }
            | Plus { dst, src: s }
            | BitNot { dst, src: s }
            | ToBool { dst, src: s }
            | Cast { dst, src: s, .. }
            | IsSet { dst, src: s } => {
                r!(dst);
                src(s);
            }
            IncDecVar { var, dst, .. } => {
                r!(var);
                r!(dst);
            }
            Quiet { dst, var } | MakeRef { dst, var } => {
                r!(dst);
                r!(var);
            }
            UnsetVar { var } | IncVar { var } | DecVar { var } => r!(var),
            AssignDim1 { var, key, src: s } | AssignDimOp1 { var, key, src: s, .. } => {
                r!(var);
                src(key);
                src(s);
            }
            FetchDim2 { dst, base, k1, k2 } => {
                r!(dst);
                src(base);
                src(k1);
                src(k2);
            }
            FetchDim { dst, base, key } | FetchDimQuiet { dst, base, key } | FetchDimList { dst, base, key } => {
                r!(dst);
                src(base);
                src(key);
            }
            AssignDim {
                var,
                keys,
                depth,
                src: s,
            }
            | AssignDimOp {
                var,
                keys,
                depth,
                src: s,
                ..
            } => {
                r!(var);
                rg(keys, depth as usize);
                src(s);
            }
            AssignDimRef {
                var,
                keys,
                depth,
                src: s,
            } => {
                r!(var);
                rg(keys, depth as usize);
                r!(s);
            }
            IncDecDim {
                var, keys, depth, dst, ..
            } => {
                r!(var);
                rg(keys, depth as usize);
                r!(dst);
            }
            UnsetDim { var, keys, depth } => {
                r!(var);
                rg(keys, depth as usize);
            }
            MakeRefDim { dst, var, keys, depth } => {
                r!(dst);
                r!(var);
                rg(keys, depth as usize);
            }
            NewArray { dst, .. } => r!(dst),
            ArrayPush { arr, src: s } | ArraySpread { arr, src: s } => {
                r!(arr);
                src(s);
            }
            ArraySet { arr, key, src: s } => {
                r!(arr);
                src(key);
                src(s);
            }
            ConcatN { dst, start, n } => {
                r!(dst);
                rg(start, n as usize);
            }
            JmpIf { cond, .. } | JmpIfNot { cond, .. } => src(cond),
            JmpIfNotNull { src: s, .. } => src(s),
            IncJmpLt { var, limit, .. }
            | IncJmpLe { var, limit, .. }
            | DecJmpGt { var, limit, .. }
            | DecJmpGe { var, limit, .. } => {
                r!(var);
                src(limit);
            }
            JmpLt { a, b, .. } | JmpLe { a, b, .. } | JmpEq { a, b, .. } | JmpIdentical { a, b, .. } => {
                src(a);
                src(b);
            }
            CallUser { dst, args, argc, .. }
            | CallDirect { dst, args, argc, .. }
            | CallBuiltin { dst, args, argc, .. } => {
                r!(dst);
                rg(args, argc as usize);
            }
            CallValue {
                dst,
                callee,
                args,
                argc,
            } => {
                r!(dst);
                r!(callee);
                rg(args, argc as usize);
            }
            CallSpread { dst, callee, args } => {
                r!(dst);
                r!(callee);
                r!(args);
            }
            SendVarEx { dst, var, callee, .. } => {
                r!(dst);
                r!(var);
                r!(callee);
            }
            Return { src: s } | Echo { src: s } | Exit { src: s } => src(s),
            MakeClosure { dst, captures, n, .. } => {
                r!(dst);
                rg(captures, n as usize);
            }
            BindGlobal { var, name } => {
                r!(var);
                src(Src::konst(name));
            }
            BindStatic { var, .. } => r!(var),
            InitStatic { var, src: s, .. } => {
                r!(var);
                src(s);
            }
            FetchConst { dst, .. } => r!(dst),
            DeclareConst { name, src: s } => {
                src(Src::konst(name));
                src(s);
            }
            FeReset { iter, subject, .. } => {
                r!(iter);
                src(subject);
            }
            FeResetRef { iter, var, .. } => {
                r!(iter);
                r!(var);
            }
            FeResetRefFrom { iter, src: s, .. } => {
                r!(iter);
                r!(s);
            }
            FeFetch { iter, value, key, .. } | FeFetchRef { iter, value, key, .. } => {
                r!(iter);
                r!(value);
                r!(key);
            }
            FeFree { iter } => r!(iter),
            Silence { save } | Unsilence { save } => r!(save),
        }
    }
}

/// What a call site or constant site names.
#[derive(Clone, Debug)]
pub struct Site {
    /// The name as written (for messages).
    pub name: Box<str>,
    /// The lookup key: lowercase for functions, as written for constants
    /// (`true`/`false`/`null` are folded at compile time).
    pub key: Box<[u8]>,
    /// Index into the per-thread runtime cache.
    pub cache_slot: u32,
}

/// A parameter of a compiled function.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: Box<str>,
    pub by_ref: bool,
    pub has_default: bool,
    pub variadic: bool,
}

/// The constant pool of a function: scalars and interned strings only,
/// which is what lets a compiled script be shared between threads.
pub struct ConstPool(Box<[Value]>);

/// Why a value cannot go into a constant pool.
#[derive(Debug)]
pub struct NotShareable;

impl ConstPool {
    /// Builds a pool; fails if a value is refcounted.
    pub fn new(values: Vec<Value>) -> Result<ConstPool, NotShareable> {
        for v in &values {
            let ok = match v {
                Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => true,
                Value::Str(s) => s.is_interned(),
                _ => false,
            };
            if !ok {
                return Err(NotShareable);
            }
        }
        Ok(ConstPool(values.into_boxed_slice()))
    }

    pub fn values(&self) -> &[Value] {
        &self.0
    }
}

// SAFETY: `ConstPool::new` admits only scalars and interned strings.
// Scalars own nothing; an interned `PhpStr` is a pointer to bytes owned by
// the script's `InternedStrings`, which never change, and cloning or
// dropping it touches no counter. So reading the pool from several threads
// at once, and copying its values into each thread's registers, is safe.
unsafe impl Send for ConstPool {}
// SAFETY: as for `Send`: shared reads of scalars and interned strings
// touch no counter.
unsafe impl Sync for ConstPool {}

/// A compiled function (PHP's op array).
pub struct Function {
    /// The name as declared (`{main}` for top-level code, `{closure}`).
    pub name: Box<str>,
    pub params: Vec<ParamInfo>,
    /// How many arguments must be passed (parameters before the last
    /// required one).
    pub required: u16,
    /// CV names, in register order (parameters first).
    pub cv_names: Vec<Box<str>>,
    /// Registers in the window (CVs + temporaries).
    pub num_regs: u16,
    /// How many of the window's first registers are CVs (`cv_names.len()`
    /// within `num_regs`), stored for calls: they clear the callee's CVs
    /// past its arguments.
    pub num_cvs: u16,
    pub code: Vec<Op>,
    /// The source line of each instruction.
    pub lines: Vec<u32>,
    pub consts: ConstPool,
    /// Call sites (`CallUser`) and constant sites (`FetchConst`).
    pub sites: Vec<Site>,
    /// How many `static` variables the function has.
    pub num_statics: u16,
    /// For closures: the CV that receives each bound (`use`) value.
    pub bound_cvs: Vec<u16>,
    pub is_closure: bool,
    pub line_start: u32,
    pub line_end: u32,
    /// One bit per instruction: set where a loop made only of
    /// hot-loop instructions starts (see [`hot_loop_heads`]).
    pub hot_loops: Box<[u64]>,
    /// Whether the function is made only of hot-loop instructions, its
    /// calls only of such functions (see [`mark_hot_code`]): the VM runs
    /// a call of it in the hot loop from its first instruction.
    pub hot_entry: bool,
}

impl Function {
    /// Whether a call with `argc` arguments is a plain one: enough of
    /// them, none extra, no variadic parameter to collect (defaults are
    /// the callee's own code). Such a call needs no argument handling, so
    /// the compiler may bind it (`CallDirect`) and the VM takes it
    /// without `call::push_frame`.
    #[inline]
    pub fn takes_plainly(&self, argc: usize) -> bool {
        argc >= self.required as usize && argc <= self.params.len() && !self.params.last().is_some_and(|p| p.variadic)
    }

    /// Whether instruction `t` starts a loop made only of hot-loop
    /// instructions (the VM runs it in its hot loop).
    ///
    /// # Safety
    /// `t` is below the code's length (a checked jump target), so its bit
    /// is inside the map (`hot_loop_heads` makes one bit per instruction).
    #[inline(always)]
    pub unsafe fn is_hot_loop_head(&self, t: usize) -> bool {
        debug_assert!(t < self.code.len() && self.hot_loops.len() == self.code.len().div_ceil(64));
        // SAFETY: see above. Unchecked, because the VM asks on every taken
        // backward jump.
        unsafe { self.hot_loops.get_unchecked(t / 64) & (1 << (t % 64)) != 0 }
    }

    /// The index of the instruction `at` points to in this function's
    /// code, or `None` when it points elsewhere (a saved frame position
    /// turned back into an index for a line number).
    pub fn index_of(&self, at: *const Op) -> Option<usize> {
        let offset = (at as usize).wrapping_sub(self.code.as_ptr() as usize);
        let size = std::mem::size_of::<Op>();
        (offset.is_multiple_of(size) && offset / size < self.code.len()).then_some(offset / size)
    }
}

/// The loops of `code` that can run in the VM's hot loop, as one bit per
/// instruction set at each such loop's first instruction: a loop is the
/// instructions from a backward jump's target to the jump, and it
/// qualifies when every one of them runs in the hot loop
/// ([`Op::runs_in_hot_loop`]), for every backward jump to that target.
/// Jumps out of such a loop are fine (the VM leaves its hot loop at the
/// first instruction it does not handle).
///
/// A bound call (`CallDirect`) counts when `hot_callee` says its callee is
/// itself a hot function: the hot loop would make any call, but one into a
/// function it cannot run would leave it on every pass.
pub fn hot_loop_heads(code: &[Op], hot_callee: impl Fn(FuncId) -> bool) -> Box<[u64]> {
    // other[i]: how many of the first i instructions are not hot-loop ones.
    let mut other = Vec::with_capacity(code.len() + 1);
    other.push(0u32);
    for op in code {
        other.push(other.last().copied().unwrap_or(0) + u32::from(!runs_hot(op, &hot_callee)));
    }
    let mut heads = vec![0u64; code.len().div_ceil(64)];
    let mut not_hot = vec![0u64; heads.len()];
    for (pc, op) in code.iter().enumerate() {
        let Some(t) = op.target().map(|t| t as usize) else {
            continue;
        };
        if t > pc || t >= code.len() {
            continue;
        }
        let bit = 1u64 << (t % 64);
        if other[pc + 1] == other[t] {
            heads[t / 64] |= bit;
        } else {
            not_hot[t / 64] |= bit;
        }
    }
    for (h, n) in heads.iter_mut().zip(&not_hot) {
        *h &= !n;
    }
    heads.into_boxed_slice()
}

/// Whether `op` runs in the hot loop, a bound call only into a function
/// `hot_callee` calls hot.
fn runs_hot(op: &Op, hot_callee: &impl Fn(FuncId) -> bool) -> bool {
    match *op {
        Op::CallDirect { func, .. } => hot_callee(func),
        _ => op.runs_in_hot_loop(),
    }
}

/// Marks what of a whole script's functions the VM runs in its hot loop,
/// once its calls are bound (`CallDirect`): the functions made only of
/// hot-loop instructions whose bound calls all go to such functions
/// ([`Function::hot_entry`]), then the loops made only of hot-loop
/// instructions, counting calls of those functions ([`hot_loop_heads`]).
/// A function calling itself (fibo) qualifies: every function starts as a
/// candidate, and the ones calling a non-candidate drop out until none
/// does.
pub fn mark_hot_code(functions: &mut [Function]) {
    let mut hot: Vec<bool> = functions
        .iter()
        .map(|f| f.code.iter().all(Op::runs_in_hot_loop))
        .collect();
    loop {
        let mut dropped = false;
        for (id, f) in functions.iter().enumerate() {
            if hot[id] && !f.code.iter().all(|op| runs_hot(op, &|c| hot[c as usize])) {
                hot[id] = false;
                dropped = true;
            }
        }
        if !dropped {
            break;
        }
    }
    for (f, &h) in functions.iter_mut().zip(&hot) {
        f.hot_entry = h;
        f.hot_loops = hot_loop_heads(&f.code, |c| hot[c as usize]);
    }
}

/// Index of a function in its script.
pub type FuncId = u32;

/// A whole compiled script: immutable after compilation, shareable.
pub struct Script {
    /// The file name PHP prints in messages (an absolute path, or
    /// "Standard input code" / "Command line code").
    pub file: Box<str>,
    /// Function 0 is the top-level code.
    pub functions: Vec<Function>,
    /// Named functions declared unconditionally at top level: PHP declares
    /// them before the script runs, so they can be called before their
    /// declaration. (name as declared, function)
    pub early_functions: Vec<FuncId>,
    /// The bytes every interned constant points to.
    pub strings: InternedStrings,
    /// Size of the per-thread runtime cache (call and constant sites).
    pub cache_slots: u32,
}

impl Script {
    pub fn main(&self) -> &Function {
        &self.functions[0]
    }

    /// A readable listing of every function (`minizts dump`); builtins
    /// show as `#id`.
    pub fn disassemble(&self) -> String {
        self.disassemble_with(&|id| format!("#{id}"))
    }

    /// A readable listing, naming builtins with `builtin`.
    pub fn disassemble_with(&self, builtin: &dyn Fn(u16) -> String) -> String {
        let mut out = String::new();
        for (i, f) in self.functions.iter().enumerate() {
            let _ = writeln!(
                out,
                "function #{i} {}({}) lines {}-{}: {} regs, {} CVs",
                f.name,
                f.params
                    .iter()
                    .map(|p| format!(
                        "{}{}${}",
                        if p.variadic { "..." } else { "" },
                        if p.by_ref { "&" } else { "" },
                        p.name
                    ))
                    .collect::<Vec<_>>()
                    .join(", "),
                f.line_start,
                f.line_end,
                f.num_regs,
                f.cv_names.len()
            );
            for (pc, op) in f.code.iter().enumerate() {
                let _ = writeln!(out, "  {pc:4}  L{:<4} {}", f.lines[pc], DisplayOp { op, f, builtin });
            }
            out.push('\n');
        }
        out
    }
}

/// Formats an instruction with register names and constants resolved.
struct DisplayOp<'a> {
    op: &'a Op,
    f: &'a Function,
    builtin: &'a dyn Fn(u16) -> String,
}

impl DisplayOp<'_> {
    fn reg(&self, r: Reg) -> String {
        if r.is_none() {
            "_".into()
        } else if let Some(name) = self.f.cv_names.get(r.idx()) {
            format!("${name}")
        } else {
            format!("t{}", r.idx())
        }
    }

    fn src(&self, s: Src) -> String {
        if s.is_const() {
            match self.f.consts.values().get(s.index()) {
                Some(Value::Str(st)) => format!("{:?}", String::from_utf8_lossy(st)),
                Some(Value::Null) => "null".into(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Int(n)) => n.to_string(),
                Some(Value::Float(x)) => format!("{x:?}"),
                _ => format!("k{}", s.index()),
            }
        } else {
            self.reg(s.as_reg().expect("a register"))
        }
    }

    fn keys(&self, keys: Reg, depth: u8) -> String {
        (0..depth)
            .map(|i| format!("[{}]", self.reg(keys.plus(i as u16))))
            .collect()
    }

    fn site(&self, site: u16) -> String {
        self.f
            .sites
            .get(site as usize)
            .map_or_else(|| format!("site{site}"), |s| s.name.to_string())
    }

    fn string(&self, k: u16) -> String {
        self.src(Src::konst(k))
    }
}

impl fmt::Display for DisplayOp<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Op::*;
        let (r, s) = (|x| self.reg(x), |x| self.src(x));
        match self.op.generic() {
            MoveC { .. }
            | AddRR { .. }
            | AddRC { .. }
            | SubRR { .. }
            | SubRC { .. }
            | MulRR { .. }
            | MulRC { .. }
            | MulCR { .. }
            | JmpLtRR { .. }
            | JmpLtRC { .. }
            | JmpLtCR { .. }
            | JmpLeRR { .. }
            | JmpLeRC { .. }
            | IncJmpLtR { .. }
            | IncJmpLtC { .. }
            | IncJmpLeR { .. }
            | IncJmpLeC { .. }
            | DecJmpGtR { .. }
            | DecJmpGtC { .. }
            | DecJmpGeR { .. }
            | DecJmpGeC { .. } => unreachable!("`generic` maps every specialised form"),
            Nop => write!(f, "NOP"),
            Move { dst, src } => write!(f, "MOVE {} = {}", r(dst), s(src)),
            Assign { var, src } => write!(f, "ASSIGN {} = {}", r(var), s(src)),
            AssignRef { var, src } => write!(f, "ASSIGN_REF {} = &{}", r(var), r(src)),
            Add { dst, a, b } => write!(f, "ADD {} = {} + {}", r(dst), s(a), s(b)),
            Sub { dst, a, b } => write!(f, "SUB {} = {} - {}", r(dst), s(a), s(b)),
            Mul { dst, a, b } => write!(f, "MUL {} = {} * {}", r(dst), s(a), s(b)),
            Concat { dst, a, b } => write!(f, "CONCAT {} = {} . {}", r(dst), s(a), s(b)),
            Lt { dst, a, b } => write!(f, "LT {} = {} < {}", r(dst), s(a), s(b)),
            Le { dst, a, b } => write!(f, "LE {} = {} <= {}", r(dst), s(a), s(b)),
            Eq { dst, a, b } => write!(f, "EQ {} = {} == {}", r(dst), s(a), s(b)),
            Identical { dst, a, b } => write!(f, "IDENTICAL {} = {} === {}", r(dst), s(a), s(b)),
            Binary { op, dst, a, b } => {
                write!(f, "BINARY {} = {} {} {}", r(dst), s(a), op.symbol(), s(b))
            }
            AssignOp { op, var, src } => {
                write!(f, "ASSIGN_OP {} {}= {}", r(var), op.symbol(), s(src))
            }
            Not { dst, src } => write!(f, "NOT {} = !{}", r(dst), s(src)),
            Neg { dst, src } => write!(f, "NEG {} = -{}", r(dst), s(src)),
            Plus { dst, src } => write!(f, "PLUS {} = +{}", r(dst), s(src)),
            BitNot { dst, src } => write!(f, "BIT_NOT {} = ~{}", r(dst), s(src)),
            ToBool { dst, src } => write!(f, "BOOL {} = (bool){}", r(dst), s(src)),
            Cast { dst, src, kind } => write!(f, "CAST {} = ({kind:?}){}", r(dst), s(src)),
            IncDecVar { var, kind, dst } => write!(f, "INCDEC {kind:?} {} -> {}", r(var), r(dst)),
            Quiet { dst, var } => write!(f, "QUIET {} = {}", r(dst), r(var)),
            IncVar { var } => write!(f, "INC {}", r(var)),
            DecVar { var } => write!(f, "DEC {}", r(var)),
            IsSet { dst, src } => write!(f, "ISSET {} = {} !== null", r(dst), s(src)),
            UnsetVar { var } => write!(f, "UNSET {}", r(var)),
            FetchDim { dst, base, key } => {
                write!(f, "FETCH_DIM {} = {}[{}]", r(dst), s(base), s(key))
            }
            FetchDim2 { dst, base, k1, k2 } => {
                write!(f, "FETCH_DIM2 {} = {}[{}][{}]", r(dst), s(base), s(k1), s(k2))
            }
            FetchDimQuiet { dst, base, key } => {
                write!(f, "FETCH_DIM_QUIET {} = {}[{}]", r(dst), s(base), s(key))
            }
            FetchDimList { dst, base, key } => write!(f, "FETCH_DIM_LIST {} = {}[{}]", r(dst), s(base), s(key)),
            AssignDimRef { var, keys, depth, src } => {
                write!(f, "ASSIGN_DIM_REF {}{} = &{}", r(var), self.keys(keys, depth), r(src))
            }
            AssignDim { var, keys, depth, src } => {
                write!(f, "ASSIGN_DIM {}{} = {}", r(var), self.keys(keys, depth), s(src))
            }
            AssignDimOp {
                op,
                var,
                keys,
                depth,
                src,
            } => {
                write!(
                    f,
                    "ASSIGN_DIM_OP {}{} {}= {}",
                    r(var),
                    self.keys(keys, depth),
                    op.symbol(),
                    s(src)
                )
            }
            IncDecDim {
                var,
                keys,
                depth,
                kind,
                dst,
            } => {
                write!(
                    f,
                    "INCDEC_DIM {kind:?} {}{} -> {}",
                    r(var),
                    self.keys(keys, depth),
                    r(dst)
                )
            }
            UnsetDim { var, keys, depth } => {
                write!(f, "UNSET_DIM {}{}", r(var), self.keys(keys, depth))
            }
            MakeRef { dst, var } => write!(f, "MAKE_REF {} = &{}", r(dst), r(var)),
            MakeRefDim { dst, var, keys, depth } => {
                write!(f, "MAKE_REF_DIM {} = &{}{}", r(dst), r(var), self.keys(keys, depth))
            }
            NewArray { dst, capacity } => write!(f, "NEW_ARRAY {} ({capacity})", r(dst)),
            ArrayPush { arr, src } => write!(f, "ARRAY_PUSH {}[] = {}", r(arr), s(src)),
            ArraySet { arr, key, src } => {
                write!(f, "ARRAY_SET {}[{}] = {}", r(arr), s(key), s(src))
            }
            ArraySpread { arr, src } => write!(f, "ARRAY_SPREAD {} += ...{}", r(arr), s(src)),
            ConcatN { dst, start, n } => write!(f, "CONCAT_N {} = {}..+{n}", r(dst), r(start)),
            Jmp { target } => write!(f, "JMP {target}"),
            JmpBack { target } => write!(f, "JMP_BACK {target}"),
            JmpIf { cond, target } => write!(f, "JMP_IF {} {target}", s(cond)),
            JmpIfNot { cond, target } => write!(f, "JMP_IF_NOT {} {target}", s(cond)),
            JmpIfNotNull { src, target } => write!(f, "JMP_IF_NOT_NULL {} {target}", s(src)),
            JmpLt { a, b, if_true, target } => write!(f, "JMP_LT ({} < {}) == {if_true} {target}", s(a), s(b)),
            IncJmpLt { var, limit, target } => write!(f, "INC_JMP_LT ++{} < {} {target}", r(var), s(limit)),
            IncJmpLe { var, limit, target } => write!(f, "INC_JMP_LE ++{} <= {} {target}", r(var), s(limit)),
            DecJmpGt { var, limit, target } => write!(f, "DEC_JMP_GT --{} > {} {target}", r(var), s(limit)),
            DecJmpGe { var, limit, target } => write!(f, "DEC_JMP_GE --{} >= {} {target}", r(var), s(limit)),
            JmpLe { a, b, if_true, target } => write!(f, "JMP_LE ({} <= {}) == {if_true} {target}", s(a), s(b)),
            JmpEq { a, b, if_true, target } => write!(f, "JMP_EQ ({} == {}) == {if_true} {target}", s(a), s(b)),
            JmpIdentical { a, b, if_true, target } => {
                write!(f, "JMP_IDENTICAL ({} === {}) == {if_true} {target}", s(a), s(b))
            }
            AssignDim1 { var, key, src } => write!(f, "ASSIGN_DIM {}[{}] = {}", r(var), s(key), s(src)),
            AssignDimOp1 { op, var, key, src } => {
                write!(f, "ASSIGN_DIM_OP {}[{}] {}= {}", r(var), s(key), op.symbol(), s(src))
            }
            CallUser { dst, site, args, argc } => {
                write!(f, "CALL {} = {}({}..+{argc})", r(dst), self.site(site), r(args))
            }
            CallDirect {
                dst,
                site,
                args,
                argc,
                func,
            } => write!(
                f,
                "CALL_DIRECT {} = {}#{func}({}..+{argc})",
                r(dst),
                self.site(site),
                r(args)
            ),
            CallBuiltin { dst, id, args, argc } => write!(
                f,
                "CALL_BUILTIN {} = {}({}..+{argc})",
                r(dst),
                (self.builtin)(id),
                r(args)
            ),
            CallValue {
                dst,
                callee,
                args,
                argc,
            } => write!(f, "CALL_VALUE {} = {}({}..+{argc})", r(dst), r(callee), r(args)),
            SendVarEx {
                dst,
                var,
                callee,
                argno,
            } => write!(f, "SEND_VAR_EX {} = {} (arg {argno} of {})", r(dst), r(var), r(callee)),
            CallSpread { dst, callee, args } => write!(f, "CALL_SPREAD {} = {}(...{})", r(dst), r(callee), r(args)),
            Return { src } => write!(f, "RETURN {}", s(src)),
            JmpIfPassed { param, target } => write!(f, "JMP_IF_PASSED param {param} {target}"),
            DeclareFunction { func } => write!(f, "DECLARE_FUNCTION #{func}"),
            MakeClosure { dst, func, captures, n } => {
                write!(f, "MAKE_CLOSURE {} = #{func} use {}..+{n}", r(dst), r(captures))
            }
            BindGlobal { var, name } => {
                write!(f, "BIND_GLOBAL {} = global {}", r(var), self.string(name))
            }
            BindStatic { var, slot, target } => {
                write!(f, "BIND_STATIC {} slot {slot} else {target}", r(var))
            }
            InitStatic { var, slot, src } => {
                write!(f, "INIT_STATIC {} slot {slot} = {}", r(var), s(src))
            }
            FetchConst { dst, site } => write!(f, "FETCH_CONST {} = {}", r(dst), self.site(site)),
            DeclareConst { name, src } => {
                write!(f, "DECLARE_CONST {} = {}", self.string(name), s(src))
            }
            FeReset { iter, subject, end } => {
                write!(f, "FE_RESET {} = {} end {end}", r(iter), s(subject))
            }
            FeResetRef { iter, var, end } => {
                write!(f, "FE_RESET_REF {} = &{} end {end}", r(iter), r(var))
            }
            FeResetRefFrom { iter, src, end } => {
                write!(f, "FE_RESET_REF_FROM {} = {} end {end}", r(iter), r(src))
            }
            FeFetch { iter, value, key, end } => {
                write!(f, "FE_FETCH {} => {} from {} end {end}", r(key), r(value), r(iter))
            }
            FeFetchRef { iter, value, key, end } => {
                write!(f, "FE_FETCH_REF {} => &{} from {} end {end}", r(key), r(value), r(iter))
            }
            FeFree { iter } => write!(f, "FE_FREE {}", r(iter)),
            Echo { src } => write!(f, "ECHO {}", s(src)),
            Exit { src } => write!(f, "EXIT {}", s(src)),
            Silence { save } => write!(f, "SILENCE {}", r(save)),
            Unsilence { save } => write!(f, "UNSILENCE {}", r(save)),
        }
    }
}

impl From<PhpStr> for Value {
    fn from(s: PhpStr) -> Value {
        Value::Str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instructions `hot_loop_heads` marks.
    fn heads(code: &[Op]) -> Vec<usize> {
        let map = hot_loop_heads(code, |_| false);
        assert_eq!(map.len(), code.len().div_ceil(64));
        (0..code.len())
            .filter(|&t| map[t / 64] & (1 << (t % 64)) != 0)
            .collect()
    }

    #[test]
    fn hot_loop_heads_marks_loops_made_only_of_hot_loop_instructions() {
        let (i, n, t) = (Reg::new(0), Reg::new(1), Reg::new(2));
        let ret = Op::Return { src: Src::reg(i) };
        // 0: a loop whose body is arithmetic (hot), 1..=3; then a loop at
        // 5 whose body calls a builtin (not hot); then a loop at 8 with two
        // back edges, one of them over an echo (not hot).
        let code = vec![
            Op::Move {
                dst: i,
                src: Src::konst(0),
            },
            Op::AddRR { dst: t, a: i, b: n },
            Op::IncVar { var: i },
            Op::JmpLtRR {
                a: i,
                b: n,
                if_true: true,
                target: 1,
            },
            Op::Nop,
            Op::CallBuiltin {
                dst: t,
                id: 0,
                args: t,
                argc: 0,
            },
            Op::JmpLtRR {
                a: i,
                b: n,
                if_true: true,
                target: 5,
            },
            Op::Nop,
            Op::IncVar { var: i },
            Op::JmpLtRR {
                a: i,
                b: n,
                if_true: true,
                target: 8,
            },
            Op::Echo { src: Src::reg(t) },
            Op::JmpBack { target: 8 },
            ret,
        ];
        assert_eq!(heads(&code), [1]);
        // A forward jump marks nothing, and more than 64 instructions use
        // a second word of the map.
        let mut code = vec![Op::Nop; 70];
        code[0] = Op::Jmp { target: 68 };
        code[68] = Op::JmpBack { target: 66 };
        code[69] = ret;
        assert_eq!(hot_loop_heads(&code, |_| false).len(), 2);
        assert_eq!(heads(&code), [66]);
    }

    #[test]
    fn which_instructions_run_in_the_hot_loop() {
        let (a, b) = (Reg::new(0), Reg::new(1));
        assert!(Op::AssignOp {
            op: BinOp::Add,
            var: a,
            src: Src::reg(b)
        }
        .runs_in_hot_loop());
        assert!(!Op::AssignOp {
            op: BinOp::Concat,
            var: a,
            src: Src::reg(b)
        }
        .runs_in_hot_loop());
        assert!(Op::Binary {
            op: BinOp::Mod,
            dst: a,
            a: Src::reg(a),
            b: Src::reg(b)
        }
        .runs_in_hot_loop());
        assert!(!Op::Binary {
            op: BinOp::Div,
            dst: a,
            a: Src::reg(a),
            b: Src::reg(b)
        }
        .runs_in_hot_loop());
        assert!(!Op::Concat {
            dst: a,
            a: Src::reg(a),
            b: Src::reg(b)
        }
        .runs_in_hot_loop());
        assert!(!Op::CallBuiltin {
            dst: a,
            id: 0,
            args: b,
            argc: 0
        }
        .runs_in_hot_loop());
        assert!(Op::Return { src: Src::reg(a) }.runs_in_hot_loop());
    }

    /// A function with `code` and one register, for the marking tests.
    fn function(code: Vec<Op>) -> Function {
        Function {
            name: "f".into(),
            params: Vec::new(),
            required: 0,
            cv_names: Vec::new(),
            num_regs: 1,
            num_cvs: 0,
            lines: vec![1; code.len()],
            hot_loops: hot_loop_heads(&code, |_| false),
            code,
            consts: ConstPool::new(Vec::new()).expect("an empty pool"),
            sites: Vec::new(),
            num_statics: 0,
            bound_cvs: Vec::new(),
            is_closure: false,
            line_start: 1,
            line_end: 1,
            hot_entry: false,
        }
    }

    #[test]
    fn mark_hot_code_follows_bound_calls() {
        let r = Reg::new(0);
        let ret = Op::Return { src: Src::reg(r) };
        let call = |func| Op::CallDirect {
            dst: r,
            site: 0,
            args: r,
            argc: 0,
            func,
        };
        let echo = Op::Echo { src: Src::reg(r) };
        // 0 calls itself (recursion is hot); 1 and 2 call each other; 3
        // echoes; 4 calls 3; 5 loops over a call of 0 and, in a second
        // loop, over a call of 4.
        let mut fns = vec![
            function(vec![call(0), ret]),
            function(vec![call(2), ret]),
            function(vec![call(1), ret]),
            function(vec![echo, ret]),
            function(vec![call(3), ret]),
            function(vec![
                call(0),
                Op::JmpBack { target: 0 },
                call(4),
                Op::JmpBack { target: 2 },
                ret,
            ]),
        ];
        mark_hot_code(&mut fns);
        let entries: Vec<bool> = fns.iter().map(|f| f.hot_entry).collect();
        assert_eq!(entries, [true, true, true, false, false, false]);
        // The loop calling 0 is hot, the one calling 4 is not.
        assert_eq!(fns[5].hot_loops[0], 1);
        // Before the calls are known, a call never counts.
        assert_eq!(hot_loop_heads(&fns[5].code, |_| false)[0], 0);
    }

    #[test]
    fn instruction_size() {
        // Twelve bytes: a tag, up to four 16-bit operands, or a 32-bit jump
        // target beside two of them.
        assert!(std::mem::size_of::<Op>() <= 12, "{}", std::mem::size_of::<Op>());
    }

    #[test]
    fn operands_hold_their_offset_in_8_byte_units() {
        // The run loop reaches register `r` at `base + r.raw() * 8` and
        // constant `k` at `consts + k.raw() * 8 - 8`.
        let size = std::mem::size_of::<Value>();
        assert_eq!(size, 16);
        for i in [0, 1, 2, 1000, Reg::MAX_INDEX] {
            let r = Reg::new(i);
            assert_eq!(r.idx(), i as usize);
            assert!(!r.is_none());
            assert_eq!(r.raw() * 8, i as usize * size);
            assert_eq!(r.plus(0), r);
            let s = Src::reg(r);
            assert!(!s.is_const());
            assert_eq!((s.as_reg(), s.raw(), s.index()), (Some(r), r.raw(), i as usize));
            let k = Src::konst(i);
            assert!(k.is_const());
            assert_eq!((k.as_reg(), k.index()), (None, i as usize));
            assert_eq!(k.raw() * 8 - 8, i as usize * size);
        }
        assert_eq!(Reg::new(3).plus(2), Reg::new(5));
        assert_eq!(
            format!("{:?} {:?} {:?}", Reg::new(3), Src::konst(4), Reg::NONE),
            "Reg(3) Const(4) Reg(NONE)"
        );
    }

    #[test]
    fn const_pool_refuses_refcounted_values() {
        assert!(ConstPool::new(vec![Value::Int(1), Value::Null]).is_ok());
        assert!(ConstPool::new(vec![Value::str("x")]).is_err());
        let mut strings = InternedStrings::new();
        let i = strings.intern(b"x");
        // SAFETY: the pool is dropped before `strings`.
        let pool = ConstPool::new(vec![unsafe { strings.get(i) }.into()]);
        assert!(pool.is_ok());
        drop(pool);
    }

    #[test]
    fn script_is_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Script>();
    }
}
