//! The instruction set, declared once.
//!
//! Every instruction is one line of the table at the end of this file: its
//! name, its mnemonic, how it prints, and its fields, each with a *kind*
//! that says what the field is to the rest of the engine. Everything that
//! has to agree with the instruction set is derived from those lines: the
//! [`Op`] enum, the mnemonic, the listing format, the jump target, the
//! register and constant operands (which the verifier checks against the
//! window and the pool), and the mapping between the general instructions
//! and their operand-specialised forms. Adding an instruction is one line
//! here and its semantics in the VM (`minizts_vm`'s `exec.rs`: the general
//! path, and a fast path if it has one).
//!
//! Field kinds (the type each becomes):
//! - `reg` (`Reg`): a register, read or written; `Reg::NONE` allowed where
//!   the instruction documents it (an unused result).
//! - `regs[n]` (`Reg`): the first of `n` consecutive registers, `n` being
//!   another field of the instruction.
//! - `src` (`Src`): a read operand, register or constant.
//! - `sreg` (`Reg`), `konst` (`Src`, always a constant): a `src` field of
//!   the general form, specialised to one kind (only in specialised forms).
//! - `target` (`Target`): a jump target, an index into the code.
//! - `back` (`u16`): a specialised loop bottom's distance back to its
//!   target in bytes (see [`Op::with_back`]).
//! - `cidx` (`u16`): the index of a string constant (a name).
//! - `site` (`u16`): a call or constant-fetch site of the function.
//! - `lit` (`u16`): one of the function's constant array literals
//!   ([`super::Function::arrays`]).
//! - `cache` (`u16`): the instruction's runtime cache slot, counted from
//!   the function's first ([`super::NO_CACHE`]: none; see
//!   [`super::Function::cache_base`]).
//! - `builtin` (`u16`): a builtin function's id.
//! - `func` (`FuncId`): a function of the script.
//! - `u8`, `u16`, `bool`, `BinOp`, `IncDec`, `CastKind`: immediates.

use super::{BinOp, CastKind, FuncId, IncDec, Reg, Src, Target};

/// The Rust type of a field kind.
macro_rules! field_type {
    (reg) => {
        Reg
    };
    (regs) => {
        Reg
    };
    (src) => {
        Src
    };
    (sreg) => {
        Reg
    };
    (konst) => {
        Src
    };
    (target) => {
        Target
    };
    (back) => {
        u16
    };
    (cidx) => {
        u16
    };
    (site) => {
        u16
    };
    (lit) => {
        u16
    };
    (cache) => {
        u16
    };
    (builtin) => {
        u16
    };
    (func) => {
        FuncId
    };
    (u8) => {
        u8
    };
    (u16) => {
        u16
    };
    (bool) => {
        bool
    };
    (BinOp) => {
        BinOp
    };
    (IncDec) => {
        IncDec
    };
    (CastKind) => {
        CastKind
    };
}

/// A specialised form's field as its general form's (`sreg` becomes a
/// register `Src`; the rest are the same value).
macro_rules! to_general {
    (sreg, $f:expr) => {
        Src::reg($f)
    };
    ($k:ident, $f:expr) => {
        $f
    };
}

/// Whether a general form's field fits a specialised form's kind.
macro_rules! fits {
    (sreg, $f:expr) => {
        $f.as_reg().is_some()
    };
    (konst, $f:expr) => {
        $f.is_const()
    };
    ($k:ident, $f:expr) => {
        true
    };
}

/// A general form's field converted to a specialised form's kind (after
/// `fits!`).
macro_rules! to_special {
    (sreg, $f:expr) => {
        match $f.as_reg() {
            Some(r) => r,
            None => unreachable!("checked by `fits!`"),
        }
    };
    ($k:ident, $f:expr) => {
        $f
    };
}

/// Calls `$reg`/`$src` (closures of `Op::operands`) for a field.
macro_rules! visit_operand {
    ($reg:ident, $src:ident, reg, $f:expr $(, $n:expr)?) => {
        $reg(*$f, 1)
    };
    ($reg:ident, $src:ident, sreg, $f:expr $(, $n:expr)?) => {
        $reg(*$f, 1)
    };
    ($reg:ident, $src:ident, regs, $f:expr, $n:expr) => {
        $reg(*$f, *$n as usize)
    };
    ($reg:ident, $src:ident, src, $f:expr $(, $n:expr)?) => {
        $src(*$f)
    };
    ($reg:ident, $src:ident, konst, $f:expr $(, $n:expr)?) => {
        $src(*$f)
    };
    ($reg:ident, $src:ident, cidx, $f:expr $(, $n:expr)?) => {
        $src(Src::konst(*$f))
    };
    ($reg:ident, $src:ident, $k:ident, $f:expr $(, $n:expr)?) => {};
}

/// Renders a field for the listing (see `display.rs`).
macro_rules! render_field {
    ($d:ident, reg, $f:expr $(, $n:expr)?) => {
        $d.reg(*$f)
    };
    ($d:ident, sreg, $f:expr $(, $n:expr)?) => {
        $d.reg(*$f)
    };
    ($d:ident, regs, $f:expr, $n:expr) => {
        $d.regs(*$f, *$n as usize)
    };
    ($d:ident, src, $f:expr $(, $n:expr)?) => {
        $d.src(*$f)
    };
    ($d:ident, konst, $f:expr $(, $n:expr)?) => {
        $d.src(*$f)
    };
    ($d:ident, cidx, $f:expr $(, $n:expr)?) => {
        $d.src(Src::konst(*$f))
    };
    ($d:ident, site, $f:expr $(, $n:expr)?) => {
        $d.site(*$f)
    };
    ($d:ident, lit, $f:expr $(, $n:expr)?) => {
        $d.literal(*$f)
    };
    ($d:ident, builtin, $f:expr $(, $n:expr)?) => {
        $d.builtin(*$f)
    };
    ($d:ident, func, $f:expr $(, $n:expr)?) => {
        format!("#{}", $f)
    };
    ($d:ident, BinOp, $f:expr $(, $n:expr)?) => {
        $f.symbol().to_string()
    };
    ($d:ident, IncDec, $f:expr $(, $n:expr)?) => {
        format!("{:?}", $f)
    };
    ($d:ident, CastKind, $f:expr $(, $n:expr)?) => {
        format!("{:?}", $f).to_lowercase()
    };
    ($d:ident, $k:ident, $f:expr $(, $n:expr)?) => {
        $f.to_string()
    };
}

/// An example value of a field kind (for the table's own tests).
#[cfg(test)]
macro_rules! example {
    (reg) => {
        Reg::new(1)
    };
    (regs) => {
        Reg::new(2)
    };
    (src) => {
        Src::reg(Reg::new(3))
    };
    (sreg) => {
        Reg::new(3)
    };
    (konst) => {
        Src::konst(0)
    };
    (target) => {
        0
    };
    (back) => {
        0
    };
    (cidx) => {
        0
    };
    (site) => {
        0
    };
    (lit) => {
        0
    };
    (cache) => {
        0
    };
    (builtin) => {
        0
    };
    (func) => {
        0
    };
    (u8) => {
        1
    };
    (u16) => {
        1
    };
    (bool) => {
        true
    };
    (BinOp) => {
        BinOp::Add
    };
    (IncDec) => {
        IncDec::PreInc
    };
    (CastKind) => {
        CastKind::Int
    };
}

/// Builds the instruction set from its table (see the module docs).
macro_rules! instructions {
    (
        general {
            $(
                $(#[doc = $gdoc:literal])*
                $g:ident $gm:literal $gfmt:literal {
                    $($gf:ident : $gk:ident $([$gn:ident])?),* $(,)?
                }
            )*
        }
        specialised {
            $(
                $(#[doc = $sdoc:literal])*
                $s:ident $sm:literal of $sg:ident {
                    $($sf:ident : $sk:ident),* $(,)?
                } $(+ $back:ident)?
            )*
        }
    ) => {
        /// One instruction (see the module docs for the table that
        /// declares them). Registers are `Reg`, read operands `Src`, jump
        /// targets indexes into the function's code. A write to a CV goes
        /// through a reference if the CV holds one; a write to a temporary
        /// never does.
        ///
        /// The operand-specialised forms, written only by the compiler's
        /// last pass ([`Op::specialised`]), each mean exactly what their
        /// general form means, but their operands' kinds (register or
        /// constant) are part of the opcode, so the VM reads them without
        /// testing (PHP specialises its handlers by operand type the same
        /// way).
        #[derive(Clone, Copy, PartialEq, Debug)]
        pub enum Op {
            $(
                $(#[doc = $gdoc])*
                $g { $($gf: field_type!($gk)),* },
            )*
            $(
                $(#[doc = $sdoc])*
                $s { $($sf: field_type!($sk),)* $($back: u16)? },
            )*
        }

        /// Every general instruction's mnemonic, in table order.
        pub const GENERAL_MNEMONICS: &[&str] = &[$($gm),*];
        /// Every specialised form's mnemonic, in table order.
        pub const SPECIALISED_MNEMONICS: &[&str] = &[$($sm),*];

        impl Op {
            /// The mnemonic, as listings print it.
            pub fn mnemonic(&self) -> &'static str {
                match self {
                    $(Op::$g { .. } => $gm,)*
                    $(Op::$s { .. } => $sm,)*
                }
            }

            /// How the listing prints the operands: `{field}` stands for
            /// a field (a specialised form prints as its general one).
            pub fn template(&self) -> &'static str {
                match self.generic() {
                    $(Op::$g { .. } => $gfmt,)*
                    _ => unreachable!("`generic` maps every specialised form"),
                }
            }

            /// Whether this is an operand-specialised form.
            pub fn is_specialised(&self) -> bool {
                match self {
                    $(Op::$s { .. } => true,)*
                    _ => false,
                }
            }

            /// The general form of an operand-specialised instruction
            /// (itself for any other): what it means, and what the VM's
            /// general path runs.
            #[inline]
            pub fn generic(self) -> Op {
                match self {
                    $(
                        Op::$s { $($sf,)* .. } => Op::$sg { $($sf: to_general!($sk, $sf)),* },
                    )*
                    op => op,
                }
            }

            /// The first operand-specialised form (in table order) whose
            /// kinds fit this instruction's operands; the instruction
            /// itself when none does. A loop bottom's comes with `back` 0,
            /// for [`Op::with_back`] to set.
            pub fn specialised(self) -> Op {
                $(
                    if let Op::$sg { $($sf,)* .. } = self {
                        if true $(&& fits!($sk, $sf))* {
                            return Op::$s { $($sf: to_special!($sk, $sf),)* $($back: 0)? };
                        }
                    }
                )*
                self
            }

            /// The jump target, for instructions that may jump.
            #[allow(unused_variables, unreachable_code)]
            pub fn target(&self) -> Option<Target> {
                match self {
                    $(Op::$g { $($gf),* } => { $(if_target!($gk, return Some(*$gf));)* None })*
                    $(Op::$s { $($sf,)* .. } => { $(if_target!($sk, return Some(*$sf));)* None })*
                }
            }

            /// The mutable jump target, for the compiler's back-patching.
            #[allow(unused_variables, unreachable_code)]
            pub fn target_mut(&mut self) -> Option<&mut Target> {
                match self {
                    $(Op::$g { $($gf),* } => { $(if_target!($gk, return Some($gf));)* None })*
                    $(Op::$s { $($sf,)* .. } => { $(if_target!($sk, return Some($sf));)* None })*
                }
            }

            /// A specialised loop bottom's `back` (see [`Op::with_back`]).
            pub fn back(&self) -> Option<u16> {
                let mut op = *self;
                op.back_mut().map(|b| *b)
            }

            pub(super) fn back_mut(&mut self) -> Option<&mut u16> {
                match self {
                    $($(Op::$s { $back, .. } => Some($back),)?)*
                    _ => None,
                }
            }

            /// Calls `reg` with every register range the instruction
            /// touches (as first register and count; `Reg::NONE` is
            /// skipped) and `src` with every read operand (constant
            /// indexes included). The verifier uses it to check that every
            /// operand is inside the function's window and constant pool,
            /// which is what lets the VM index both without bounds checks.
            #[allow(unused_variables)]
            pub fn operands(&self, mut reg: impl FnMut(Reg, usize), mut src: impl FnMut(Src)) {
                let mut rg = |x: Reg, n: usize| {
                    if !x.is_none() {
                        reg(x, n)
                    }
                };
                match self {
                    $(Op::$g { $($gf),* } => { $(visit_operand!(rg, src, $gk, $gf $(, $gn)?);)* })*
                    $(Op::$s { $($sf,)* .. } => { $(visit_operand!(rg, src, $sk, $sf);)* })*
                }
            }

            /// The fields that must hold constants (`konst`), for the
            /// verifier: the VM reads them as constants without testing.
            #[allow(unused_variables)]
            pub fn constant_operands(&self, mut konst: impl FnMut(Src)) {
                match self {
                    $(Op::$s { $($sf,)* .. } => { $(if_konst!($sk, konst(*$sf));)* })*
                    _ => {}
                }
            }

            /// One instance of every instruction, general forms first, with
            /// example operands (for tests).
            #[cfg(test)]
            pub(crate) fn examples() -> Vec<Op> {
                vec![
                    $(Op::$g { $($gf: example!($gk)),* },)*
                    $(Op::$s { $($sf: example!($sk),)* $($back: 0)? },)*
                ]
            }

            /// The fields rendered for the listing, by name.
            #[allow(unused_variables)]
            pub(super) fn rendered_fields(&self, d: &super::display::Renderer<'_>) -> Vec<(&'static str, String)> {
                match self.generic() {
                    $(Op::$g { $($gf),* } => vec![$((stringify!($gf), render_field!(d, $gk, &$gf $(, &$gn)?))),*],)*
                    _ => unreachable!("`generic` maps every specialised form"),
                }
            }
        }
    };
}

/// `$e` when the kind is `target`.
macro_rules! if_target {
    (target, $e:expr) => {
        $e
    };
    ($k:ident, $e:expr) => {};
}

/// `$e` when the kind is `konst`.
macro_rules! if_konst {
    (konst, $e:expr) => {
        $e
    };
    ($k:ident, $e:expr) => {};
}

instructions! {
    general {
        /// Does nothing.
        Nop "NOP" "" {}
        /// `dst = src` (into a temporary).
        Move "MOVE" "{dst} = {src}" { dst: reg, src: src }
        /// `var = src` (a variable: writes through a reference).
        Assign "ASSIGN" "{var} = {src}" { var: reg, src: src }
        /// `var = src` where `src` is a temporary the assignment consumes
        /// (a statement `$x = f();`): its value moves into the variable,
        /// so that nothing else holds it (PHP frees a `TMP` operand as
        /// it uses it; an object whose last holder is the variable is
        /// then destroyed when the variable lets go of it).
        AssignTmp "ASSIGN_TMP" "{var} = {src}" { var: reg, src: reg }
        /// `var = &src`: both variables share one reference from now on.
        AssignRef "ASSIGN_REF" "{var} = &{src}" { var: reg, src: reg }
        /// `dst = a + b`
        Add "ADD" "{dst} = {a} + {b}" { dst: reg, a: src, b: src }
        /// `dst = a - b`
        Sub "SUB" "{dst} = {a} - {b}" { dst: reg, a: src, b: src }
        /// `dst = a * b`
        Mul "MUL" "{dst} = {a} * {b}" { dst: reg, a: src, b: src }
        /// `dst = a / b`
        Div "DIV" "{dst} = {a} / {b}" { dst: reg, a: src, b: src }
        /// `dst = a % b`
        Mod "MOD" "{dst} = {a} % {b}" { dst: reg, a: src, b: src }
        /// `dst = a . b`
        Concat "CONCAT" "{dst} = {a} . {b}" { dst: reg, a: src, b: src }
        /// `dst = a < b`
        Lt "LT" "{dst} = {a} < {b}" { dst: reg, a: src, b: src }
        /// `dst = a <= b`
        Le "LE" "{dst} = {a} <= {b}" { dst: reg, a: src, b: src }
        /// `dst = a == b`
        Eq "EQ" "{dst} = {a} == {b}" { dst: reg, a: src, b: src }
        /// `dst = a === b`
        Identical "IDENTICAL" "{dst} = {a} === {b}" { dst: reg, a: src, b: src }
        /// `dst = a <op> b` for the other binary operators.
        Binary "BINARY" "{dst} = {a} {op} {b}" { op: BinOp, dst: reg, a: src, b: src }
        /// `var <op>= src` on a variable.
        AssignOp "ASSIGN_OP" "{var} {op}= {src}" { op: BinOp, var: reg, src: src }
        /// `dst = !src`
        Not "NOT" "{dst} = !{src}" { dst: reg, src: src }
        /// `dst = -src`
        Neg "NEG" "{dst} = -{src}" { dst: reg, src: src }
        /// `dst = +src`
        Plus "PLUS" "{dst} = +{src}" { dst: reg, src: src }
        /// `dst = ~src`
        BitNot "BIT_NOT" "{dst} = ~{src}" { dst: reg, src: src }
        /// `dst = (bool) src`
        ToBool "BOOL" "{dst} = (bool){src}" { dst: reg, src: src }
        /// `dst = (kind) src`
        Cast "CAST" "{dst} = ({kind}){src}" { dst: reg, src: src, kind: CastKind }
        /// `$var++` as a statement (the loop counter).
        IncVar "INC" "{var}" { var: reg }
        /// `$var--` as a statement.
        DecVar "DEC" "{var}" { var: reg }
        /// `++var`, `var--`, …; `dst` (unless NONE) gets the expression's
        /// value.
        IncDecVar "INCDEC" "{kind} {var} -> {dst}" { var: reg, kind: IncDec, dst: reg }
        /// `dst` = the variable without the "undefined variable" warning
        /// (null if unset): the read `isset`, `empty` and `??` make.
        Quiet "QUIET" "{dst} = {var}" { dst: reg, var: reg }
        /// `dst` = the variable as it is, unset included, without a
        /// warning: an arrow function's implicit capture, which binds
        /// what exists and leaves the rest unset inside.
        Capture "CAPTURE" "{dst} = {var}" { dst: reg, var: reg }
        /// `dst = src(...)`: the first-class callable of a callable
        /// value (a closure as it is; a function's name makes a closure
        /// that calls the function).
        MakeCallable "MAKE_CALLABLE" "{dst} = {src}(...)" { dst: reg, src: src }
        /// `dst = src !== null` (after a quiet read: `isset`).
        IsSet "ISSET" "{dst} = {src} !== null" { dst: reg, src: src }
        /// Unsets a variable (dropping its reference binding, if any).
        UnsetVar "UNSET" "{var}" { var: reg }
        /// `dst` = the variable whose name is the string value of `name`
        /// (`$$name`, `${expr}`), with the "undefined variable" warning
        /// unless `quiet`. With `global`, the global variable of that
        /// name (`$GLOBALS[name]`), as in all four by-name instructions.
        FetchVarVar "FETCH_VAR_VAR" "{dst} = ${name} global={global}" { dst: reg, name: src, quiet: bool, global: bool, cache: cache }
        /// Makes the variable named by `name` a reference (creating it,
        /// null, if it does not exist) and puts the reference in `dst`, so
        /// that the variable instructions write it through `dst`.
        BindVarVar "BIND_VAR_VAR" "{dst} = &${name} global={global}" { dst: reg, name: src, global: bool }
        /// `$$name = &…`: binds the variable named by `name` to the
        /// reference in `src`.
        AssignRefVarVar "ASSIGN_REF_VAR_VAR" "${name} = &{src} global={global}" { name: src, src: reg, global: bool }
        /// `unset($$name)`
        UnsetVarVar "UNSET_VAR_VAR" "${name} global={global}" { name: src, global: bool }

        /// `dst` = a copy of every global variable, as reading `$GLOBALS`
        /// as a whole gives (PHP 8.1: a read-only copy of the symbol
        /// table).
        FetchGlobals "FETCH_GLOBALS" "{dst}" { dst: reg }
        /// `dst = eval(code)`: compiles the string value of `code` and
        /// runs it in this frame's scope, as a call whose result is what
        /// its top-level code returns.
        Eval "EVAL" "{dst} = eval({code})" { dst: reg, code: src }
        /// Before an `eval()`'s code returns: its variables that were not
        /// bound to the caller's (new ones, made while it ran) become the
        /// caller's (PHP's `zend_detach_symbol_table`).
        DetachScope "DETACH_SCOPE" "" {}
        /// `dst = include path` and its siblings: opens the file (PHP's
        /// include path rules), compiles it once per request, and runs
        /// its top-level code in this frame's scope as a call whose result
        /// is what it returns (1 if nothing). `once`: a file already
        /// included gives `true` instead; `required`: a file that cannot
        /// be opened is an error rather than a warning and `false`.
        Include "INCLUDE" "{dst} = include({path}) once={once} required={required}" { dst: reg, path: src, once: bool, required: bool }

        /// `dst = base[key]`, warning as PHP does on a missing key or
        /// offset.
        FetchDim "FETCH_DIM" "{dst} = {base}[{key}]" { dst: reg, base: src, key: src }
        /// `dst = base[k1][k2]` without copying the inner array (matrices).
        FetchDim2 "FETCH_DIM2" "{dst} = {base}[{k1}][{k2}]" { dst: reg, base: src, k1: src, k2: src }
        /// `dst = base[key]` or null, silently (inside isset/empty/??).
        FetchDimQuiet "FETCH_DIM_QUIET" "{dst} = {base}[{key}]" { dst: reg, base: src, key: src }
        /// `dst = base[key]` for `list()`: warns on a missing key of an
        /// array, gives null silently for anything that is not an array.
        FetchDimList "FETCH_DIM_LIST" "{dst} = {base}[{key}]" { dst: reg, base: src, key: src }
        /// `var[k1]…[kn] = src`; the `depth` keys are in consecutive
        /// registers from `keys`; an `Undef` key means `[]` (append).
        AssignDim "ASSIGN_DIM" "{var}[{keys}] = {src}" { var: reg, keys: regs[depth], depth: u8, src: src }
        /// `AssignDim` whose value is used (`$b = $a[1] = $c`): when the
        /// last container is a string, the temporary `src` becomes what
        /// the assignment gives, the byte written (as PHP's `ASSIGN_DIM`
        /// result on a string offset).
        AssignDimResult "ASSIGN_DIM_R" "{var}[{keys}] = {src}" { var: reg, keys: regs[depth], depth: u8, src: reg }
        /// `var[key] = src`, one dimension with the key read as an operand
        /// when the instruction runs (no copy into a key register; PHP
        /// also reads a variable key at the assignment).
        AssignDim1 "ASSIGN_DIM1" "{var}[{key}] = {src}" { var: reg, key: src, src: src }
        /// `var[] = src`: appends to the variable's array (PHP's
        /// `ASSIGN_DIM` with no dimension). With `tmp`, `src` is a
        /// temporary whose value only the array keeps (the assignment's
        /// value is not read): the instruction releases it.
        AssignDimPush "ASSIGN_DIM_PUSH" "{var}[] = {src}" { var: reg, src: src, tmp: bool }
        /// `var[key] <op>= src`, one dimension; `dst` gets the element's
        /// new value unless NONE.
        AssignDimOp1 "ASSIGN_DIM_OP1" "{var}[{key}] {op}= {src} -> {dst}" { op: BinOp, var: reg, key: src, src: src, dst: reg }
        /// `var[k1]…[kn] = &…`: stores the reference held in `src`.
        AssignDimRef "ASSIGN_DIM_REF" "{var}[{keys}] = &{src}" { var: reg, keys: regs[depth], depth: u8, src: reg }
        /// `var[k1]…[kn] <op>= src`; `dst` gets the element's new value
        /// unless NONE.
        AssignDimOp "ASSIGN_DIM_OP" "{var}[{keys}] {op}= {src} -> {dst}" {
            op: BinOp, var: reg, keys: regs[depth], depth: u8, src: src, dst: reg
        }
        /// `++var[k1]…[kn]` and the others; `dst` gets the value unless
        /// NONE.
        IncDecDim "INCDEC_DIM" "{kind} {var}[{keys}] -> {dst}" {
            var: reg, keys: regs[depth], depth: u8, kind: IncDec, dst: reg
        }
        /// `unset(var[k1]…[kn])`
        UnsetDim "UNSET_DIM" "{var}[{keys}]" { var: reg, keys: regs[depth], depth: u8 }
        /// Makes `var` a reference (if it is not one) and puts it in `dst`.
        MakeRef "MAKE_REF" "{dst} = &{var}" { dst: reg, var: reg }
        /// Makes `var[k1]…[kn]` a reference (creating it) and puts it in
        /// `dst`.
        MakeRefDim "MAKE_REF_DIM" "{dst} = &{var}[{keys}]" { dst: reg, var: reg, keys: regs[depth], depth: u8 }

        /// `dst = []` (an empty array literal).
        NewArray "NEW_ARRAY" "{dst} ({capacity})" { dst: reg, capacity: u16 }
        /// `dst` = constant array literal `lit` of the function
        /// ([`super::ArrayLiteral`]): the array the cache slot keeps,
        /// built from the literal the first time in a request.
        LoadArray "LOAD_ARRAY" "{dst} = {lit}" { dst: reg, lit: lit, cache: cache }
        /// Appends `src` to the array being built in `arr`.
        ArrayPush "ARRAY_PUSH" "{arr}[] = {src}" { arr: reg, src: src }
        /// `arr[key] = src` on the array being built in `arr`.
        ArraySet "ARRAY_SET" "{arr}[{key}] = {src}" { arr: reg, key: src, src: src }
        /// `...src` inside an array literal.
        ArraySpread "ARRAY_SPREAD" "{arr} += ...{src}" { arr: reg, src: src }
        /// `dst` = the `n` registers from `start` concatenated
        /// (interpolation).
        ConcatN "CONCAT_N" "{dst} = {start}" { dst: reg, start: regs[n], n: u8 }

        /// Continue at `target`.
        Jmp "JMP" "{target}" { target: target }
        /// Continue at an earlier `target`: a loop's back edge, where the
        /// VM checks its interrupt flag (time limit) and memory limit.
        JmpBack "JMP_BACK" "{target}" { target: target }
        /// Jump if `cond` is true.
        JmpIf "JMP_IF" "{cond} {target}" { cond: src, target: target }
        /// Jump if `cond` is false.
        JmpIfNot "JMP_IF_NOT" "{cond} {target}" { cond: src, target: target }
        /// Jump if `src` is not null (`??`).
        JmpIfNotNull "JMP_IF_NOT_NULL" "{src} {target}" { src: src, target: target }
        /// Jump if `(a < b) == if_true` (a comparison fused with its
        /// branch).
        JmpLt "JMP_LT" "({a} < {b}) == {if_true} {target}" { a: src, b: src, if_true: bool, target: target }
        /// Jump if `(a <= b) == if_true`.
        JmpLe "JMP_LE" "({a} <= {b}) == {if_true} {target}" { a: src, b: src, if_true: bool, target: target }
        /// Jump if `(a == b) == if_true`.
        JmpEq "JMP_EQ" "({a} == {b}) == {if_true} {target}" { a: src, b: src, if_true: bool, target: target }
        /// Jump if `(a === b) == if_true`.
        JmpIdentical "JMP_IDENTICAL" "({a} === {b}) == {if_true} {target}" {
            a: src, b: src, if_true: bool, target: target
        }
        /// A `for` loop's bottom, `$var++; if ($var < limit) goto target`,
        /// fused; when it does not jump it also skips the next instruction
        /// (the same test, which the loop's entry jump lands on).
        IncJmpLt "INC_JMP_LT" "++{var} < {limit} {target}" { var: reg, limit: src, target: target }
        /// The same with `$var <= limit`.
        IncJmpLe "INC_JMP_LE" "++{var} <= {limit} {target}" { var: reg, limit: src, target: target }
        /// A counting-down loop's bottom, `$var--; if ($var > limit) goto
        /// target`, fused the same way (the test is `JMP_LT (limit <
        /// $var)`).
        DecJmpGt "DEC_JMP_GT" "--{var} > {limit} {target}" { var: reg, limit: src, target: target }
        /// The same with `$var >= limit` (`JMP_LE (limit <= $var)`).
        DecJmpGe "DEC_JMP_GE" "--{var} >= {limit} {target}" { var: reg, limit: src, target: target }

        /// Calls the user function named by call site `site` with the
        /// `argc` arguments in the registers from `args`; the result goes
        /// to `dst`.
        CallUser "CALL" "{dst} = {site}({args})" { dst: reg, site: site, args: regs[argc], argc: u8 }
        /// `CallUser` bound when the script was compiled: `func` is a
        /// function declared at the top level (PHP's early binding) and
        /// `argc` fits its parameters without defaults or variadics to
        /// sort out, so no cache lookup and no argument-count check at run
        /// time.
        CallDirect "CALL_DIRECT" "{dst} = {site}{func}({args})" {
            dst: reg, site: site, args: regs[argc], argc: u8, func: func
        }
        /// Calls builtin `id` with the arguments in the registers from
        /// `args`.
        CallBuiltin "CALL_BUILTIN" "{dst} = {id}({args})" { dst: reg, id: builtin, args: regs[argc], argc: u8 }
        /// `strlen(arg)`. This and the instructions up to `MAX` are the
        /// builtins PHP compiles to instructions of their own (ZEND_STRLEN,
        /// ZEND_COUNT) and more of the same kind: pure, by value, frequent
        /// in loops. The arguments are read where they are (no argument
        /// registers) and the result is written straight into `dst`. The
        /// fast path takes the argument types that need no conversion; the
        /// general path calls builtin `id` with the arguments, as
        /// `CALL_BUILTIN` would. With `tmp`, `arg` (the first argument of
        /// the two-argument ones) is a temporary that the instruction
        /// releases, as a call releases its argument registers.
        Strlen "STRLEN" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `count(arg)`.
        Count "COUNT" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `ord(arg)`.
        Ord "ORD" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `chr(arg)`.
        Chr "CHR" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `abs(arg)`.
        Abs "ABS" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `sqrt(arg)`.
        Sqrt "SQRT" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `floor(arg)`.
        Floor "FLOOR" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `ceil(arg)`.
        Ceil "CEIL" "{dst} = {arg}" { dst: reg, arg: src, id: builtin, tmp: bool }
        /// `is_int(arg)` and the other type tests (`is_null`, `is_bool`,
        /// `is_float`, `is_string`, `is_array`, `is_object`, `is_scalar`
        /// and their aliases): whether `arg`'s type is one of `mask`'s
        /// (PHP's `ZEND_TYPE_CHECK`; the bits are [`super::type_bits`]).
        TypeCheck "TYPE_CHECK" "{dst} = {id}({arg})" { dst: reg, arg: src, id: builtin, tmp: bool, mask: u16 }
        /// `func_num_args()` in a function body (`ZEND_FUNC_NUM_ARGS`):
        /// how many arguments the running frame was passed.
        FuncNumArgs "FUNC_NUM_ARGS" "{dst} = {id}()" { dst: reg, id: builtin }
        /// `intdiv(a, b)`.
        Intdiv "INTDIV" "{dst} = {a}, {b}" { dst: reg, a: src, b: src, id: builtin, tmp: bool }
        /// `min(a, b)`.
        Min "MIN" "{dst} = {a}, {b}" { dst: reg, a: src, b: src, id: builtin, tmp: bool }
        /// `max(a, b)`.
        Max "MAX" "{dst} = {a}, {b}" { dst: reg, a: src, b: src, id: builtin, tmp: bool }
        /// `callable(…)`: resolves the callable value `src` before the
        /// arguments are evaluated (PHP's `INIT_DYNAMIC_CALL`, which
        /// throws for a value that cannot be called). A method (a
        /// callable array, a `'C::m'` string, an object with `__invoke`)
        /// is written into `callee`…`callee+2` as `INIT_METHOD` writes
        /// it; anything else (a closure, a function's name) is copied into
        /// `callee`, with null in `callee+1`. `src` may be `callee`.
        InitDynamicCall "INIT_DYNAMIC_CALL" "{callee} = init {src}" { callee: reg, src: src }
        /// Calls what `INIT_DYNAMIC_CALL` left in `callee`…`callee+2`.
        /// Bit `i` of `vals` marks argument `i` (of the first 16) as a
        /// value that is not a variable or a call's result, which a
        /// by-reference parameter refuses (PHP's `SEND_VAL_EX`), checked
        /// once the callee is known.
        CallValue "CALL_VALUE" "{dst} = {callee}({args})" {
            dst: reg, callee: reg, args: regs[argc], argc: u8, vals: u16
        }
        /// Calls the callable in `callee` (a function's name), or with
        /// `method` the call prepared in `callee`…`callee+2` (as for
        /// `CALL_METHOD` and `CALL_VALUE`), with the values of the array in
        /// `args` as its arguments (`f(...$args)`, named arguments, more
        /// arguments than an instruction holds). A script function taking
        /// a list by value gets its frame in this loop, the values copied
        /// into its window; the rest goes through the general call.
        CallSpread "CALL_SPREAD" "{dst} = {callee}(...{args}) method={method}" { dst: reg, callee: reg, args: reg, method: bool }
        /// Passes variable `var` as argument `argno` of the call of
        /// `callee` (with `method`, the three registers `INIT_METHOD`,
        /// `INIT_STATIC_METHOD` or `INIT_DYNAMIC_CALL` filled): by
        /// reference if that parameter is by reference, else by value. With `var` equal to `dst`, the argument is a value
        /// that is not a variable: a by-reference parameter throws PHP's
        /// "cannot be passed by reference" error.
        SendVarEx "SEND_VAR_EX" "{dst} = {var} (arg {argno} of {callee}) method={method}" {
            dst: reg, var: reg, callee: reg, argno: u8, method: bool
        }
        /// Jumps to `target` when the call of `callee` takes argument
        /// `arg` (a position counted from 0, or a parameter's name for a
        /// named argument) by value, or when `callee` is not callable (the
        /// call reports that); falls through to the code that passes it
        /// by reference (PHP's `FETCH_*_FUNC_ARG`, decided when it runs).
        JmpArgByVal "JMP_ARG_BY_VAL" "{callee} arg {arg} {target} method={method}" { callee: reg, arg: src, target: target, method: bool }
        /// Appends argument register `src` to the argument array `arr` of
        /// a `CALL_SPREAD` as it is: a reference stays one, for a
        /// by-reference parameter.
        ArgPush "ARG_PUSH" "{arr}[] = {src}" { arr: reg, src: reg }
        /// The same for named argument `name`.
        ArgSet "ARG_SET" "{arr}[{name}] = {src}" { arr: reg, name: cidx, src: reg }
        /// `...$var` as arguments of the call of `callee` (PHP's
        /// `SEND_UNPACK`): appends the elements of the array in variable
        /// `src` to `arr`; an element that a by-reference parameter takes
        /// is first made a reference inside the variable's array (separated
        /// from its other holders), and that reference is sent.
        SendUnpack "SEND_UNPACK" "{arr}[] = ...{src} (for {callee}) method={method}" { arr: reg, src: reg, callee: reg, method: bool }
        /// Throws an `Error` with constant `message` (a misuse PHP finds
        /// only when the code runs).
        ThrowError "THROW_ERROR" "{message}" { message: cidx }
        /// Returns `src` to the caller.
        Return "RETURN" "{src}" { src: src }
        /// A by-reference function's return: the reference in `src` as it
        /// is (PHP's `ZEND_RETURN_BY_REF`); a plain value there came from
        /// an expression that is not a variable, with PHP's notice.
        ReturnRef "RETURN_REF" "&{src}" { src: reg }
        /// `dst` = a reference to the call result in `dst` for `$x =& f()`:
        /// the function's reference, or with PHP's notice a new one.
        RefResult "REF_RESULT" "&{dst}" { dst: reg }
        /// Checks parameter `param`, when it was passed, against its
        /// declared type, converting it as coercive typing mode does
        /// (PHP's `ZEND_RECV` type check); a variadic one, each value.
        /// The cache slot holds the class of the last object the type
        /// took.
        VerifyArg "VERIFY_ARG" "param {param}" { param: u16, cache: cache }
        /// Checks parameter `param`, just given its default value (a
        /// constant expression, which PHP checks only when it is
        /// evaluated), against its declared type, converting it.
        VerifyDefault "VERIFY_DEFAULT" "param {param}" { param: u16 }
        /// `dst` = `src` checked (and converted) against the function's
        /// return type (`ZEND_VERIFY_RETURN_TYPE`; the cache slot as for
        /// `VERIFY_ARG`).
        VerifyReturn "VERIFY_RETURN" "{dst} = {src}" { dst: reg, src: src, cache: cache }
        /// A by-reference function's `return` checked against its
        /// return type: the value in `src`, or the one inside the
        /// reference there, converted in place (PHP converts the
        /// referenced variable itself).
        VerifyReturnRef "VERIFY_RETURN_REF" "{src}" { src: reg }
        /// A typed function's end reached without a `return`: PHP's
        /// "none returned" TypeError unless the type is `void`.
        VerifyNoReturn "VERIFY_NO_RETURN" "" {}
        /// Jumps to `target` unless `zend.assertions` is 1: an `assert()`
        /// call is skipped, its arguments unevaluated (PHP's
        /// `ASSERT_CHECK`).
        AssertCheck "ASSERT_CHECK" "{target}" { target: target }
        /// Jumps over the default-value code of `param` when it was passed.
        JmpIfPassed "JMP_IF_PASSED" "param {param} {target}" { param: u16, target: target }

        /// Declares function `func` (a conditional or nested declaration).
        DeclareFunction "DECLARE_FUNCTION" "{func}" { func: func }
        /// `dst` = a closure of function `func`, capturing the `n`
        /// registers from `captures` (values, or references for
        /// `use (&$x)`).
        MakeClosure "MAKE_CLOSURE" "{dst} = {func} use {captures}" { dst: reg, func: func, captures: regs[n], n: u8 }
        /// `global $name`: binds `var` to the global variable named by
        /// constant `name`. The cache slot remembers which of the main
        /// script's variables that is (PHP's `BIND_GLOBAL` caches the
        /// symbol table's bucket).
        BindGlobal "BIND_GLOBAL" "{var} = global {name}" { var: reg, name: cidx, cache: cache }
        /// `global $$name`: binds the variable named by the string value
        /// of `name` to the global of that name.
        BindGlobalByName "BIND_GLOBAL_BY_NAME" "${name}" { name: src }
        /// `static $x`: if static slot `slot` is initialised, binds `var`
        /// to it and jumps to `target`; otherwise falls into the
        /// initialiser code.
        BindStatic "BIND_STATIC" "{var} slot {slot} else {target}" { var: reg, slot: u16, target: target }
        /// Creates static slot `slot` holding `src` and binds `var` to it.
        InitStatic "INIT_STATIC" "{var} slot {slot} = {src}" { var: reg, slot: u16, src: src }
        /// `dst` = the constant named by constant-fetch site `site`.
        FetchConst "FETCH_CONST" "{dst} = {site}" { dst: reg, site: site }
        /// `const NAME = src;` (NAME is constant `name`).
        DeclareConst "DECLARE_CONST" "{name} = {src}" { name: cidx, src: src }

        /// Starts a foreach by value over `subject` (jumps to `end` if
        /// empty or not an array; warns for non-arrays).
        FeReset "FE_RESET" "{iter} = {subject} end {end}" { iter: reg, subject: src, end: target }
        /// Starts a foreach by reference over variable `var`.
        FeResetRef "FE_RESET_REF" "{iter} = &{var} end {end}" { iter: reg, var: reg, end: target }
        /// Starts a foreach by reference over the reference in `src`.
        FeResetRefFrom "FE_RESET_REF_FROM" "{iter} = {src} end {end}" { iter: reg, src: reg, end: target }
        /// Next element into `value` (and its key into `key` unless NONE),
        /// or jump to `end` when there is none.
        FeFetch "FE_FETCH" "{key} => {value} from {iter} end {end}" { iter: reg, value: reg, key: reg, end: target }
        /// Next element bound by reference to `value`, or jump to `end`.
        FeFetchRef "FE_FETCH_REF" "{key} => &{value} from {iter} end {end}" {
            iter: reg, value: reg, key: reg, end: target
        }
        /// Ends a foreach (releases the array it held).
        FeFree "FE_FREE" "{iter}" { iter: reg }

        /// Declares class `decl` (an index into the script's classes);
        /// one declared early already is skipped.
        DeclareClass "DECLARE_CLASS" "{decl}" { decl: u16 }
        /// `new C(…)`: makes the object (in `dst`) of the class that
        /// `class` names (its mode follows from it: `class_mode::of_operand`);
        /// if the class has a constructor, puts its call in the three
        /// registers above `dst` for the arguments and `CALL_METHOD` (or
        /// `CALL_SPREAD`) that follow, otherwise puts null in the first two
        /// and jumps to `skip`: past the call when there are no arguments
        /// (PHP's `NEW` skips the `DO_FCALL`), else to the arguments, which
        /// are evaluated and released by a call that calls nothing (PHP's
        /// `zend_pass_function`).
        /// Neither the mode nor the call's registers are operands: with
        /// the cache slot and the jump target, twelve bytes leave no room.
        New "NEW" "{dst} = new {class} else {skip}" {
            dst: reg, class: src, skip: target, cache: cache
        }
        /// `obj->name(…)`: resolves the method for the call that follows
        /// into `callee` (the object), `callee+1` (the method) and
        /// `callee+2` (the class the call is made on, or the name for
        /// `__call`). With `tmp`, `obj` is a temporary that the call
        /// consumes: the object moves into `callee`, so that it goes when
        /// the call ends (PHP releases a `TMP` object with its call frame).
        InitMethod "INIT_METHOD" "{callee} = {obj}->{name}" { callee: reg, obj: src, name: src, tmp: bool, cache: cache }
        /// `C::name(…)`, `parent::name(…)`, …: the same for a static call
        /// (which keeps `$this` when the method is an instance method of
        /// the caller's class hierarchy).
        InitStaticMethod "INIT_STATIC_METHOD" "{callee} = {class}/{mode}::{name}" {
            callee: reg, class: src, mode: u8, name: src, cache: cache
        }
        /// Calls the method resolved in `callee` with the `argc`
        /// arguments from `args`. `vals` as for `CALL_VALUE`: the
        /// arguments that a by-reference parameter refuses.
        CallMethod "CALL_METHOD" "{dst} = {callee}({args})" { dst: reg, callee: reg, args: regs[argc], argc: u8, vals: u16 }
        /// `dst = obj->name` (`quiet`: inside `isset`/`??`, no warning).
        FetchProp "FETCH_PROP" "{dst} = {obj}->{name} quiet={quiet}" { dst: reg, obj: src, name: src, quiet: bool, cache: cache }
        /// `dst = isset(obj->name)` (with `__isset`), or with `empty`
        /// `dst = empty(obj->name)` (`__isset`, then `__get`: PHP's
        /// `ISSET_ISEMPTY_PROP_OBJ`).
        IssetProp "ISSET_PROP" "{dst} = isset({obj}->{name}) empty={empty}" {
            dst: reg, obj: src, name: src, empty: bool, cache: cache
        }
        /// `obj->name = src`
        AssignProp "ASSIGN_PROP" "{obj}->{name} = {src}" { obj: src, name: src, src: src, cache: cache }
        /// `obj->name op= src` (PHP's `ASSIGN_OBJ_OP`), the property's new
        /// value in `dst` (unless NONE).
        AssignPropOp "ASSIGN_PROP_OP" "{dst} = {obj}->{name} {op}= {src}" {
            op: BinOp, obj: src, name: src, src: src, dst: reg, cache: cache
        }
        /// `++obj->name`, `obj->name--`, … (PHP's `PRE_INC_OBJ`,
        /// `POST_DEC_OBJ`, …), the expression's value in `dst` (unless NONE).
        IncDecProp "INCDEC_PROP" "{kind} {obj}->{name} -> {dst}" {
            obj: src, name: src, kind: IncDec, dst: reg, cache: cache
        }
        /// `obj->name[k1]…[kn] = src` (PHP's `FETCH_OBJ_W` and
        /// `ASSIGN_DIM`): the `depth` keys are in consecutive registers
        /// from `keys` (an `Undef` key means `[]`), evaluated with the
        /// value before the property is fetched for writing, as PHP's
        /// delayed fetch is.
        AssignPropDim "ASSIGN_PROP_DIM" "{obj}->{name}[{keys}] = {src}" {
            obj: src, name: src, keys: regs[depth], depth: u8, src: src, cache: cache
        }
        /// Makes property `obj->name` a reference (creating it) and puts
        /// it in `dst`, for the variable instructions that write through
        /// it (`$o->a[] = 1`, `$o->n++`, `&$o->x`).
        FetchPropRef "FETCH_PROP_REF" "{dst} = &{obj}->{name}" { dst: reg, obj: src, name: src }
        /// `obj->name = &…`: binds the property to the reference held in
        /// `src` (PHP's `ASSIGN_OBJ_REF`).
        AssignPropRef "ASSIGN_PROP_REF" "{obj}->{name} = &{src}" { obj: src, name: src, src: reg }
        /// `unset(obj->name)`
        UnsetProp "UNSET_PROP" "{obj}->{name}" { obj: src, name: src }
        /// `dst = C::$name` (`quiet`: inside `isset`/`??`).
        FetchStaticProp "FETCH_STATIC_PROP" "{dst} = {class}/{mode}::${name} quiet={quiet}" {
            dst: reg, class: src, mode: u8, name: src, quiet: bool, cache: cache
        }
        /// `dst` = the reference that static property `C::$name` is, to
        /// write through (`C::$a[] = 1`); with `bind`, to be shared
        /// (`&C::$x`): the property becomes a PHP reference of its own.
        FetchStaticPropRef "FETCH_STATIC_PROP_REF" "{dst} = &{class}/{mode}::${name} bind={bind}" {
            dst: reg, class: src, mode: u8, name: src, bind: bool, cache: cache
        }
        /// `C::$name = src`
        AssignStaticProp "ASSIGN_STATIC_PROP" "{class}/{mode}::${name} = {src}" {
            class: src, mode: u8, name: src, src: src, cache: cache
        }
        /// `C::$name <op>= src` (`dst`, unless NONE, gets the result).
        AssignStaticPropOp "ASSIGN_STATIC_PROP_OP" "{class}/{mode}::${name} {op}= {src} -> {dst}" {
            op: BinOp, class: src, mode: u8, name: src, src: src, dst: reg
        }
        /// `++C::$name` and the others; `dst` (unless NONE) gets the
        /// expression's value.
        IncDecStaticProp "INCDEC_STATIC_PROP" "{kind} {class}/{mode}::${name} -> {dst}" {
            class: src, mode: u8, name: src, kind: IncDec, dst: reg, cache: cache
        }
        /// `C::$name = &…`: binds the static property to the reference
        /// held in `src` (PHP's `ASSIGN_STATIC_PROP_REF`).
        AssignStaticPropRef "ASSIGN_STATIC_PROP_REF" "{class}/{mode}::${name} = &{src}" {
            class: src, mode: u8, name: src, src: reg
        }
        /// `dst = C::NAME` (constant `name`).
        FetchClassConst "FETCH_CLASS_CONST" "{dst} = {class}/{mode}::{name}" { dst: reg, class: src, mode: u8, name: cidx, cache: cache }
        /// `dst = C::class`
        FetchClassName "FETCH_CLASS_NAME" "{dst} = {class}/{mode}::class" { dst: reg, class: src, mode: u8 }
        /// `dst = src instanceof C`
        InstanceOf "INSTANCEOF" "{dst} = {src} instanceof {class}/{mode}" { dst: reg, src: src, class: src, mode: u8, cache: cache }
        /// `dst = clone src`
        Clone "CLONE" "{dst} = clone {src}" { dst: reg, src: src }
        /// `throw src`
        Throw "THROW" "{src}" { src: src }
        /// The start of a `catch (C $var)`: if the exception being
        /// handled is a `C` (constant `class`), binds it to `var` (unless
        /// NONE) and goes on; otherwise jumps to `next`, the next clause,
        /// or with `last` throws it on.
        Catch "CATCH" "{class} -> {var} else {next} last={last}" { class: cidx, var: reg, next: target, last: bool }
        /// Runs the finally block at `target`, which comes back after
        /// this instruction (its `FAST_RET` reads `slot`).
        FastCall "FAST_CALL" "{slot} {target}" { slot: reg, target: target }
        /// The end of a finally block: back after the `FAST_CALL` that
        /// ran it, or on with the exception it was run for, or on to the
        /// next instruction when the block was entered by falling in.
        FastRet "FAST_RET" "{slot}" { slot: reg }
        /// `echo src`
        Echo "ECHO" "{src}" { src: src }
        /// `exit` / `exit(src)`; a constant null for a bare exit.
        Exit "EXIT" "{src}" { src: src }
        /// A `match` without a `default` arm found no identical
        /// condition: throws `UnhandledMatchError` naming `src`.
        MatchError "MATCH_ERROR" "{src}" { src: src }
        /// In a constant expression, property `name` is read from `src`:
        /// once the name is a string, an object must be an enum case
        /// (PHP's "Fetching properties on non-enums in constant
        /// expressions is not allowed").
        EnumProp "ENUM_PROP" "{src}->{name}" { src: src, name: src }
        /// Top-level code reads `$this` (in `var`), which only the scope
        /// of an include or eval run by a method gives it: unset, PHP's
        /// "Using $this when not in object context".
        CheckThis "CHECK_THIS" "{var}" { var: reg }
        /// Starts `@expr`: saves the error reporting level in `save`, sets
        /// 0.
        Silence "SILENCE" "{save}" { save: reg }
        /// Ends `@expr`: restores the level saved in `save`.
        Unsilence "UNSILENCE" "{save}" { save: reg }
    }
    specialised {
        /// `Move` of a constant (a scalar or an interned string, so a copy
        /// of its bits).
        MoveC "MOVE_C" of Move { dst: reg, src: konst }
        /// `Add` with two registers.
        AddRR "ADD_RR" of Add { dst: reg, a: sreg, b: sreg }
        /// `Add` with a register and a constant.
        AddRC "ADD_RC" of Add { dst: reg, a: sreg, b: konst }
        /// `Sub` with two registers.
        SubRR "SUB_RR" of Sub { dst: reg, a: sreg, b: sreg }
        /// `Sub` with a register and a constant.
        SubRC "SUB_RC" of Sub { dst: reg, a: sreg, b: konst }
        /// `Mul` with two registers.
        MulRR "MUL_RR" of Mul { dst: reg, a: sreg, b: sreg }
        /// `Mul` with a register and a constant.
        MulRC "MUL_RC" of Mul { dst: reg, a: sreg, b: konst }
        /// `Mul` with a constant first and a register (`2 * $z`).
        MulCR "MUL_CR" of Mul { dst: reg, a: konst, b: sreg }
        /// `JmpLt` with two registers.
        JmpLtRR "JMP_LT_RR" of JmpLt { a: sreg, b: sreg, if_true: bool, target: target }
        /// `JmpLt` with a register and a constant (`a < k`).
        JmpLtRC "JMP_LT_RC" of JmpLt { a: sreg, b: konst, if_true: bool, target: target }
        /// `JmpLt` with a constant and a register (`k < b`).
        JmpLtCR "JMP_LT_CR" of JmpLt { a: konst, b: sreg, if_true: bool, target: target }
        /// `JmpLe` with two registers.
        JmpLeRR "JMP_LE_RR" of JmpLe { a: sreg, b: sreg, if_true: bool, target: target }
        /// `JmpLe` with a register and a constant (`a <= k`).
        JmpLeRC "JMP_LE_RC" of JmpLe { a: sreg, b: konst, if_true: bool, target: target }
        // The specialised loop bottoms also hold `back`: how many bytes
        // the instruction is past its target (set by the compiler's last
        // pass, `with_back`, and checked by the verifier). The VM jumps
        // back with it, without the code's address.
        /// `IncJmpLt` with the limit in a register.
        IncJmpLtR "INC_JMP_LT_R" of IncJmpLt { var: reg, limit: sreg, target: target } + back
        /// `IncJmpLt` with a constant limit.
        IncJmpLtC "INC_JMP_LT_C" of IncJmpLt { var: reg, limit: konst, target: target } + back
        /// `IncJmpLe` with the limit in a register.
        IncJmpLeR "INC_JMP_LE_R" of IncJmpLe { var: reg, limit: sreg, target: target } + back
        /// `IncJmpLe` with a constant limit.
        IncJmpLeC "INC_JMP_LE_C" of IncJmpLe { var: reg, limit: konst, target: target } + back
        /// `DecJmpGt` with the limit in a register.
        DecJmpGtR "DEC_JMP_GT_R" of DecJmpGt { var: reg, limit: sreg, target: target } + back
        /// `DecJmpGt` with a constant limit.
        DecJmpGtC "DEC_JMP_GT_C" of DecJmpGt { var: reg, limit: konst, target: target } + back
        /// `DecJmpGe` with the limit in a register.
        DecJmpGeR "DEC_JMP_GE_R" of DecJmpGe { var: reg, limit: sreg, target: target } + back
        /// `DecJmpGe` with a constant limit.
        DecJmpGeC "DEC_JMP_GE_C" of DecJmpGe { var: reg, limit: konst, target: target } + back
    }
}
