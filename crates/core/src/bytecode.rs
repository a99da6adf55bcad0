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

    /// `n` after the step, `None` when it overflows (PHP then makes a
    /// float: the VM's general path).
    #[inline(always)]
    pub fn step_int(self, n: i64) -> Option<i64> {
        if self.is_inc() {
            n.checked_add(1)
        } else {
            n.checked_sub(1)
        }
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
    Object,
}

mod display;
mod table;
mod types;
mod verify;

pub use table::{Op, GENERAL_MNEMONICS, SPECIALISED_MNEMONICS};
pub use types::{bits as type_bits, TypeDecl};
pub use verify::VerifyError;

/// Whether `MINIZTS_GENERIC` is set (to anything but `0` or nothing) in
/// the environment: then the compiler emits no operand-specialised form
/// and the VM takes every instruction's general path, a configuration the
/// test suite runs to check that the fast paths agree with the general
/// ones. Read once per process.
pub fn generic_only() -> bool {
    static GENERIC: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GENERIC.get_or_init(|| std::env::var_os("MINIZTS_GENERIC").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// The `cache` field of an instruction that has no runtime cache slot
/// (its name is not a constant, or the function has too many).
pub const NO_CACHE: u16 = u16::MAX;

impl Op {
    /// The runtime cache slot of an instruction that caches a lookup (a
    /// property's slot, a method, a class, a class member), and whether
    /// what it looks up is the same each time: the names it takes are
    /// constants, and its class, if it names one, is a constant name or
    /// `self`/`parent`/`static` (a class from a value is not cached).
    pub fn cache_mut(&mut self) -> Option<(bool, &mut u16)> {
        let named = |mode: u8| mode != class_mode::VALUE;
        match self {
            Op::FetchProp { name, cache, .. }
            | Op::IssetProp { name, cache, .. }
            | Op::AssignProp { name, cache, .. }
            | Op::AssignPropDim { name, cache, .. }
            | Op::InitMethod { name, cache, .. }
            | Op::AssignPropOp { name, cache, .. }
            | Op::IncDecProp { name, cache, .. } => Some((name.is_const(), cache)),
            Op::InitStaticMethod { mode, name, cache, .. }
            | Op::FetchStaticProp { mode, name, cache, .. }
            | Op::FetchStaticPropRef { mode, name, cache, .. }
            | Op::AssignStaticProp { mode, name, cache, .. }
            | Op::IncDecStaticProp { mode, name, cache, .. } => Some((named(*mode) && name.is_const(), cache)),
            // A class from a value is cached by its class too (the
            // entry's `of`).
            Op::FetchClassConst { cache, .. } => Some((true, cache)),
            // `$GLOBALS['name']`: which of the main script's variables it
            // is.
            Op::FetchVarVar {
                name, global, cache, ..
            } => Some((*global && name.is_const(), cache)),
            Op::InstanceOf { mode, cache, .. } => Some((named(*mode), cache)),
            Op::New { class, cache, .. } => Some((class.is_const(), cache)),
            // A type check's, where the compiler asked for one (a type that
            // names a class).
            Op::VerifyArg { cache, .. } | Op::VerifyReturn { cache, .. } => Some((*cache != NO_CACHE, cache)),
            Op::BindGlobal { cache, .. } => Some((true, cache)),
            Op::LoadArray { cache, .. } => Some((true, cache)),
            _ => None,
        }
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
}

/// How a class operand (`class` with `mode`) names its class.
pub mod class_mode {
    /// `class` is a constant: the name as written.
    pub const NAME: u8 = 0;
    pub const SELF: u8 = 1;
    pub const PARENT: u8 = 2;
    pub const STATIC: u8 = 3;
    /// `class` is a register: an object, or a string naming the class.
    pub const VALUE: u8 = 4;

    /// The mode of a class written as `name`: `self`, `parent`, `static`
    /// (in any case), or `None` for a class's name.
    pub fn keyword(name: &[u8]) -> Option<u8> {
        if name.eq_ignore_ascii_case(b"self") {
            Some(SELF)
        } else if name.eq_ignore_ascii_case(b"parent") {
            Some(PARENT)
        } else if name.eq_ignore_ascii_case(b"static") {
            Some(STATIC)
        } else {
            None
        }
    }

    /// The word for keyword mode `mode`.
    pub fn word(mode: u8) -> &'static str {
        match mode {
            SELF => "self",
            PARENT => "parent",
            _ => "static",
        }
    }

    /// The mode of a class operand that carries none (`NEW`'s, which has
    /// no room for one): a register is a value, a constant a class's name
    /// or, as the compiler writes them, `self`, `parent` or `static`.
    pub fn of_operand(class: super::Src, consts: &[crate::Value]) -> u8 {
        if !class.is_const() {
            return VALUE;
        }
        match consts.get(class.index()) {
            Some(crate::Value::Str(s)) => keyword(s.as_bytes()).unwrap_or(NAME),
            _ => NAME,
        }
    }
}

/// What a call site or constant site names.
#[derive(Clone, Debug)]
pub struct Site {
    /// The name as written (for messages).
    pub name: Box<str>,
    /// The lookup key: lowercase for functions, as written for constants
    /// (`true`/`false`/`null` are folded at compile time) but for a
    /// namespace part, which is lowercase.
    pub key: Box<[u8]>,
    /// The key to look up when `key` names nothing: the global name an
    /// unqualified name inside a namespace falls back to (PHP's
    /// `INIT_NS_FCALL_BY_NAME` and `FETCH_CONSTANT` with
    /// `IS_CONSTANT_UNQUALIFIED_IN_NAMESPACE`).
    pub fallback: Option<Box<[u8]>>,
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
    /// The declared type, checked when the function is entered.
    pub ty: Option<TypeDecl>,
    /// The default value as PHP prints it in a declaration
    /// (`zend_get_function_declaration`: `'abc'`, `[]`, `null`,
    /// `self::A`, `<expression>`), when there is one.
    pub default: Option<Box<str>>,
    /// Marked `#[SensitiveParameter]`: stack traces show its value
    /// wrapped in a `SensitiveParameterValue`.
    pub sensitive: bool,
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

/// A constant array literal of a function (`[1, 2]`, `['a' => [true]]`):
/// its elements as indexes into the function's constant pool, so that it
/// is shared between threads like the pool. `LOAD_ARRAY` builds it into
/// an array once per request and shares that array from then on (a write
/// separates it), as PHP shares the immutable array it makes of such a
/// literal at compile time.
#[derive(Clone, Debug)]
pub struct ArrayLiteral {
    pub items: Box<[LiteralItem]>,
}

/// An element of an [`ArrayLiteral`].
#[derive(Clone, Copy, Debug)]
pub struct LiteralItem {
    /// The key's constant (an int or a string), or `None` for the next
    /// int key (`[v]`).
    pub key: Option<u16>,
    pub value: LiteralValue,
}

/// The value of an [`ArrayLiteral`]'s element.
#[derive(Clone, Copy, Debug)]
pub enum LiteralValue {
    /// A constant of the pool.
    Const(u16),
    /// Another of the function's literals, one listed before this one's.
    Array(u16),
}

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
    /// The constant array literals `LOAD_ARRAY` builds.
    pub arrays: Box<[ArrayLiteral]>,
    /// Call sites (`CallUser`) and constant sites (`FetchConst`).
    pub sites: Vec<Site>,
    /// Bit `i` set when argument `i` (of the first 16) is passed by
    /// reference ([`ParamInfo::by_ref`], or a by-reference variadic
    /// parameter's): a call tests its `vals` against it at once.
    pub by_ref_args: u16,
    /// The first of the function's runtime cache slots in EG's runtime
    /// cache (set when its script is finished: slots are numbered per
    /// compilation unit), and how many it has: an instruction's `cache`
    /// field counts from it (PHP's `run_time_cache` of an op array).
    pub cache_base: u32,
    pub num_caches: u16,
    /// How many `static` variables the function has.
    pub num_statics: u16,
    /// For closures: the CV that receives each bound (`use`) value.
    pub bound_cvs: Vec<u16>,
    pub is_closure: bool,
    pub line_start: u32,
    pub line_end: u32,
    /// The hidden CV holding the variables this function creates by name
    /// that have no CV of their own (`$$name`, `extract`), as an array of
    /// references; set when the body reaches variables by name.
    pub symbols: Option<u16>,
    /// The hidden CV that receives the arguments passed past the declared
    /// parameters, as a list; set when the body calls `func_get_args` or
    /// its siblings (other calls drop those arguments, as nothing can
    /// read them).
    pub extra_args: Option<u16>,
    /// The declared return type (checked by `VERIFY_RETURN`).
    pub return_type: Option<TypeDecl>,
    /// Declared `function &name()`: returns by reference.
    pub by_ref_return: bool,
    /// The top-level code of an `eval()` or an included file: it runs in
    /// its caller's scope, so the variables it reaches by name are the
    /// caller's.
    pub in_caller_scope: bool,
    /// Its file declares `strict_types=1`: the calls it makes check
    /// scalar parameter types strictly (user functions' and builtins'),
    /// and so does its own return type (PHP's `ZEND_ACC_STRICT_TYPES`).
    pub strict_types: bool,
    /// The CV of `$this`, if the body uses it: a method call (or a bound
    /// closure's) puts the object there.
    pub this_cv: Option<u16>,
    /// The `try` blocks, innermost first where they nest (PHP's
    /// `try_catch_array`): where an exception thrown inside goes.
    pub try_ranges: Vec<TryRange>,
    /// A method's flags (`acc::STATIC`, …), 0 for a function.
    pub method_flags: u16,
    /// A trait's method: each class using the trait has a copy of it,
    /// with static variables of its own (kept per class scope).
    pub in_trait: bool,
    /// The class whose body declares it (a method, or a closure or a
    /// constant initialiser written inside a class), by its index in its
    /// script's `classes`; it becomes the running frame's scope.
    pub class_decl: Option<u32>,
}

/// A `try` block of a function (instruction indexes): `start..catch` is
/// the protected code, `catch` the first `CATCH` (0: none), `finally`
/// the finally block (0: none) and `finally_end` its `FAST_RET`.
#[derive(Clone, Copy, Debug)]
pub struct TryRange {
    pub start: u32,
    pub catch: u32,
    pub finally: u32,
    pub finally_end: u32,
    /// The register a `FAST_CALL` into the finally block keeps its
    /// return address (or the exception being unwound) in.
    pub slot: Reg,
}

/// A class-like declaration as compiled: names and compiled initialisers
/// that the VM links into a class when the declaration runs.
#[derive(Debug)]
pub struct ClassDef {
    pub name: Box<str>,
    pub kind: crate::object::ClassKind,
    /// `acc::ABSTRACT`, `acc::FINAL`, `acc::READONLY`.
    pub flags: u16,
    pub parent: Option<Box<str>>,
    /// `implements` (of an interface: `extends`).
    pub interfaces: Vec<Box<str>>,
    pub traits: Vec<Box<str>>,
    pub trait_rules: Vec<TraitRuleDef>,
    pub consts: Vec<ConstDef>,
    /// Properties in declaration order, static ones included.
    pub props: Vec<PropDef>,
    pub methods: Vec<MethodDef>,
    pub backing: Option<crate::object::EnumBacking>,
    /// A function returning the list of the defaults of the properties
    /// that have one, in `props` order (run when the class is first
    /// used: defaults may name constants declared later).
    pub defaults: Option<FuncId>,
    pub line_start: u32,
    pub line_end: u32,
    /// `#[AllowDynamicProperties]`.
    pub allow_dynamic: bool,
}

#[derive(Debug)]
pub struct ConstDef {
    pub name: Box<str>,
    pub flags: u16,
    /// The function that computes the value.
    pub init: Option<FuncId>,
    pub is_case: bool,
}

#[derive(Debug)]
pub struct PropDef {
    pub name: Box<str>,
    /// Visibility, `STATIC`, `READONLY`.
    pub flags: u16,
    pub ty: Option<TypeDecl>,
    pub has_default: bool,
}

#[derive(Debug)]
pub struct MethodDef {
    pub name: Box<str>,
    pub flags: u16,
    pub func: FuncId,
}

#[derive(Debug)]
pub enum TraitRuleDef {
    /// `T::m insteadof A, B`
    Insteadof {
        trait_name: Box<str>,
        method: Box<str>,
        instead_of: Vec<Box<str>>,
    },
    /// `[T::]m as [visibility] [alias]`
    Alias {
        trait_name: Option<Box<str>>,
        method: Box<str>,
        flags: u16,
        alias: Option<Box<str>>,
    },
}

impl Function {
    /// Checks what the VM relies on without checking at run time (see
    /// `verify.rs`): operands inside the window and pool, jump targets
    /// inside the code, a return at the end.
    pub fn verify(&self) -> Result<(), VerifyError> {
        verify::verify(
            &self.code,
            self.num_regs as usize,
            self.consts.values().len(),
            self.num_caches,
        )?;
        verify::verify_literals(&self.code, &self.arrays, self.consts.values())
    }

    /// Whether a call with `argc` arguments is a plain one: enough of
    /// them, none extra, no variadic parameter to collect (defaults are
    /// the callee's own code). Such a call needs no argument handling, so
    /// the compiler may bind it (`CallDirect`) and the VM takes it
    /// without `call::push_frame`.
    #[inline]
    pub fn takes_plainly(&self, argc: usize) -> bool {
        argc >= self.required as usize && argc <= self.params.len() && !self.params.last().is_some_and(|p| p.variadic)
    }

    /// [`Function::by_ref_args`] for these parameters.
    pub fn by_ref_mask(params: &[ParamInfo]) -> u16 {
        let mut mask = 0u16;
        for (i, p) in params.iter().enumerate().take(16) {
            if p.by_ref {
                mask |= if p.variadic { u16::MAX << i } else { 1 << i };
            }
        }
        mask
    }

    /// Whether the argument at position `i` is passed by reference: its
    /// parameter's flag, or past the parameters a by-reference variadic
    /// one's.
    #[inline]
    pub fn param_by_ref(&self, i: usize) -> bool {
        match self.params.get(i) {
            Some(p) => p.by_ref,
            None => self.params.last().is_some_and(|p| p.variadic && p.by_ref),
        }
    }

    /// The index of the instruction `at` points to in this function's
    /// code, or `None` when it points elsewhere (a saved frame position
    /// turned back into an index for a line number).
    pub fn index_of(&self, at: *const Op) -> Option<usize> {
        let offset = (at as usize).wrapping_sub(self.code.as_ptr() as usize);
        let size = std::mem::size_of::<Op>();
        (offset.is_multiple_of(size) && offset / size < self.code.len()).then_some(offset / size)
    }

    /// The source line of the instruction at `at`, if it is one of this
    /// function's.
    pub fn line_at(&self, at: *const Op) -> Option<u32> {
        self.index_of(at).and_then(|pc| self.lines.get(pc)).copied()
    }
}

/// Index of a function in its script.
pub type FuncId = u32;

/// A warning PHP's compiler raises while it compiles a script.
#[derive(Debug, Clone)]
pub struct CompileWarning {
    pub message: Box<str>,
    pub line: u32,
    /// An `E_COMPILE_WARNING`, which no user error handler gets; else an
    /// `E_WARNING`, which a handler set when the code is compiled (an
    /// `eval`, an `include`) does.
    pub compile: bool,
}

/// A whole compiled script: immutable after compilation, shareable.
pub struct Script {
    /// The file name PHP prints in messages (an absolute path, or
    /// "Standard input code" / "Command line code"; "FILE(LINE) : eval()'d
    /// code" for an `eval()`).
    pub file: Box<str>,
    /// The id of `functions[0]`, the top-level code. Ids are the
    /// request's, not the script's: a request's script takes ids from 0,
    /// and each `eval()` compiles a script whose ids follow those the
    /// request already has, so that ids in code never need translating.
    pub first_func: FuncId,
    pub functions: Vec<Function>,
    /// Named functions declared unconditionally at top level: PHP declares
    /// them before the script runs, so they can be called before their
    /// declaration. (name as declared, function)
    pub early_functions: Vec<FuncId>,
    /// Every class-like declaration, anonymous classes included.
    pub classes: Vec<ClassDef>,
    /// The top-level, unconditional ones (indexes into `classes`), which
    /// PHP declares before the script runs when what they extend is
    /// known by then.
    pub early_classes: Vec<u32>,
    /// The bytes every interned constant points to.
    pub strings: InternedStrings,
    /// The end of the script's runtime-cache slots (call and constant
    /// sites): as with function ids, a request's slots are numbered
    /// across its scripts, so this is the size the cache must have.
    pub cache_slots: u32,
    /// The warnings PHP's compiler raises, reported when
    /// the script is loaded, before it runs.
    pub warnings: Vec<CompileWarning>,
}

impl Script {
    pub fn main(&self) -> &Function {
        &self.functions[0]
    }

    /// The function with request-wide id `id`, if it is this script's.
    pub fn function(&self, id: FuncId) -> Option<&Function> {
        self.functions.get(id.checked_sub(self.first_func)? as usize)
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
                let text = display::Renderer { f, builtin }.instruction(op);
                let _ = writeln!(out, "  {pc:4}  L{:<4} {text}", f.lines[pc]);
            }
            out.push('\n');
        }
        out
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

    /// A function with `code`, `regs` registers and one constant.
    fn function(code: Vec<Op>, regs: u16) -> Function {
        Function {
            name: "f".into(),
            params: Vec::new(),
            required: 0,
            cv_names: vec!["x".into()],
            num_regs: regs,
            num_cvs: 1,
            lines: vec![1; code.len()],
            code,
            consts: ConstPool::new(vec![Value::Int(7)]).expect("a scalar pool"),
            arrays: Box::new([]),
            sites: Vec::new(),
            by_ref_args: 0,
            cache_base: 0,
            num_caches: 0,
            num_statics: 0,
            bound_cvs: Vec::new(),
            is_closure: false,
            line_start: 1,
            line_end: 1,
            symbols: None,
            extra_args: None,
            return_type: None,
            by_ref_return: false,
            in_caller_scope: false,
            strict_types: false,
            this_cv: None,
            try_ranges: Vec::new(),
            method_flags: 0,
            in_trait: false,
            class_decl: None,
        }
    }

    /// Register and read operands, a `sreg` field counted as the register
    /// `Src` its general form holds.
    fn operand_list(op: &Op) -> (Vec<(Reg, usize)>, Vec<Src>) {
        let (mut regs, mut srcs) = (Vec::new(), Vec::new());
        op.operands(|r, n| regs.push((r, n)), |s| srcs.push(s));
        regs.retain(|&(r, n)| {
            let single_read = n == 1 && r == Reg::new(3);
            if single_read {
                srcs.push(Src::reg(r));
            }
            !single_read
        });
        srcs.sort_by_key(|s| s.raw());
        (regs, srcs)
    }

    #[test]
    fn mnemonics_are_unique() {
        let mut all: Vec<&str> = GENERAL_MNEMONICS.iter().chain(SPECIALISED_MNEMONICS).copied().collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a mnemonic is used twice");
        assert_eq!(Op::examples().len(), n);
    }

    #[test]
    fn specialised_forms_mean_their_general_forms() {
        for op in Op::examples().into_iter().filter(Op::is_specialised) {
            let general = op.generic();
            assert!(!general.is_specialised(), "{op:?}");
            // The general form with these operand kinds specialises back
            // to this form (the table lists no form another one hides).
            assert_eq!(general.specialised(), op, "{op:?}");
            assert_eq!(op.target(), general.target(), "{op:?}");
            assert_eq!(op.template(), general.template(), "{op:?}");
            assert_eq!(operand_list(&op), operand_list(&general), "{op:?}");
        }
        // Instructions without a fitting form stay general.
        let add = Op::Add {
            dst: Reg::new(1),
            a: Src::konst(0),
            b: Src::konst(0),
        };
        assert_eq!(add.specialised(), add);
    }

    #[test]
    fn every_template_names_only_fields_and_every_instruction_lists() {
        let f = function(vec![Op::Return { src: Src::konst(0) }], 8);
        let r = display::Renderer {
            f: &f,
            builtin: &|id| format!("builtin{id}"),
        };
        for op in Op::examples() {
            let text = r.instruction(&op);
            assert!(text.starts_with(op.mnemonic()), "{text}");
            assert!(!text.contains('{') && !text.contains('}'), "unknown field in {text}");
        }
        let add = Op::AddRC {
            dst: Reg::new(1),
            a: Reg::new(0),
            b: Src::konst(0),
        };
        assert_eq!(r.instruction(&add), "ADD_RC t1 = $x + 7");
    }

    #[test]
    fn jumps_have_mutable_targets() {
        for mut op in Op::examples() {
            let t = op.target();
            assert_eq!(op.target_mut().map(|t| *t), t, "{op:?}");
            if let Some(t) = op.target_mut() {
                *t = 5;
                assert_eq!(op.target(), Some(5));
            }
        }
    }

    #[test]
    fn the_verifier_refuses_what_the_vm_cannot_run() {
        let ret = Op::Return { src: Src::konst(0) };
        let ok = |code: Vec<Op>, regs| function(code, regs).verify();
        assert!(ok(vec![ret], 1).is_ok());
        assert!(ok(vec![Op::Nop {}], 1).is_err(), "no return at the end");
        let mv = |dst, src| Op::Move {
            dst: Reg::new(dst),
            src,
        };
        assert!(ok(vec![mv(0, Src::reg(Reg::new(1))), ret], 2).is_ok());
        assert!(
            ok(vec![mv(2, Src::konst(0)), ret], 2).is_err(),
            "register outside the window"
        );
        assert!(
            ok(vec![mv(0, Src::reg(Reg::new(2))), ret], 2).is_err(),
            "read outside the window"
        );
        assert!(
            ok(vec![mv(0, Src::konst(1)), ret], 2).is_err(),
            "constant outside the pool"
        );
        let konst_form = Op::MoveC {
            dst: Reg::new(0),
            src: Src::reg(Reg::new(1)),
        };
        assert!(
            ok(vec![konst_form, ret], 2).is_err(),
            "a register where a constant must be"
        );
        assert!(
            ok(vec![Op::Jmp { target: 2 }, ret], 1).is_err(),
            "target outside the code"
        );
        let call = Op::CallUser {
            dst: Reg::new(0),
            site: 0,
            args: Reg::new(1),
            argc: 3,
        };
        assert!(ok(vec![call, ret], 4).is_ok());
        assert!(ok(vec![call, ret], 3).is_err(), "argument range outside the window");
        // A loop bottom must be followed by its entry test, and its
        // `back` must lead to its target.
        let bottom = Op::IncJmpLt {
            var: Reg::new(0),
            limit: Src::konst(0),
            target: 0,
        };
        let test = Op::JmpLt {
            a: Src::reg(Reg::new(0)),
            b: Src::konst(0),
            if_true: true,
            target: 0,
        };
        assert!(ok(vec![Op::Nop {}, bottom, test, ret], 1).is_ok());
        assert!(ok(vec![Op::Nop {}, bottom, ret], 1).is_err());
        let special = bottom.specialised().with_back(1);
        assert_eq!(special.back(), Some(std::mem::size_of::<Op>() as u16));
        assert!(ok(vec![Op::Nop {}, special, test, ret], 1).is_ok());
        assert!(
            ok(vec![Op::Nop {}, Op::Nop {}, special, test, ret], 1).is_err(),
            "a stale `back`"
        );
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
        assert_eq!(std::mem::size_of::<Value>(), 16);
        for i in [0, 1, 2, 1000, Reg::MAX_INDEX] {
            let r = Reg::new(i);
            assert_eq!(r.idx(), i as usize);
            assert_eq!(r.raw() * 8, i as usize * 16);
            let s = Src::reg(r);
            assert_eq!((s.as_reg(), s.raw(), s.index()), (Some(r), r.raw(), i as usize));
            let k = Src::konst(i);
            assert!(k.is_const());
            assert_eq!((k.as_reg(), k.index()), (None, i as usize));
            assert_eq!(k.raw() * 8 - 8, i as usize * 16);
        }
        assert_eq!(Reg::new(3).plus(2), Reg::new(5));
    }

    #[test]
    fn const_pool_refuses_refcounted_values() {
        assert!(ConstPool::new(vec![Value::Int(1), Value::Null]).is_ok());
        assert!(ConstPool::new(vec![Value::str("xy")]).is_err());
        // The one-byte strings are interned statics, shareable.
        assert!(ConstPool::new(vec![Value::str("x")]).is_ok());
    }

    #[test]
    fn script_is_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Script>();
    }
}
