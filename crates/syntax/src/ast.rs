//! The abstract syntax tree of minizts's PHP subset.
//!
//! Every node lives in a [`bumpalo::Bump`] arena owned by the caller (the
//! compiler keeps it in its compiler globals, as PHP keeps its AST arena in
//! `CG(ast_arena)`), so nodes are plain `&'a` references and slices and the
//! whole tree is freed at once when the arena is reset. Nodes carry the byte
//! offset where they start; [`crate::LineIndex`] turns that into the line
//! number PHP prints in its messages.

pub mod depth;
pub mod dump;

/// A parsed script: the statements of its top-level code.
#[derive(Debug)]
pub struct Script<'a> {
    pub stmts: &'a [Stmt<'a>],
    /// Where the data after `__halt_compiler();` starts
    /// (`__COMPILER_HALT_OFFSET__`), if the script has one.
    pub halt_offset: Option<usize>,
    /// `declare(strict_types=1)`: calls made from this file, and returns
    /// from its functions, check declared scalar types strictly.
    pub strict_types: bool,
}

/// A statement and the byte offset where it starts.
#[derive(Debug)]
pub struct Stmt<'a> {
    pub pos: u32,
    pub kind: StmtKind<'a>,
}

#[derive(Debug)]
pub enum StmtKind<'a> {
    /// An expression evaluated for its effect: `foo();`
    Expr(&'a Expr<'a>),
    /// `echo a, b;` (also `<?= a ?>`)
    Echo(&'a [&'a Expr<'a>]),
    /// Text outside `<?php … ?>`, echoed as it is.
    InlineHtml(&'a [u8]),
    /// `if (cond) then else els`; `elseif` arrives as `else if`.
    If {
        cond: &'a Expr<'a>,
        then: &'a Stmt<'a>,
        els: Option<&'a Stmt<'a>>,
    },
    While {
        cond: &'a Expr<'a>,
        body: &'a Stmt<'a>,
    },
    DoWhile {
        body: &'a Stmt<'a>,
        cond: &'a Expr<'a>,
    },
    /// `for (init; cond; step)`: each clause is a comma list; the loop
    /// continues while the *last* expression of `cond` is true.
    For {
        init: &'a [&'a Expr<'a>],
        cond: &'a [&'a Expr<'a>],
        step: &'a [&'a Expr<'a>],
        body: &'a Stmt<'a>,
    },
    Foreach {
        subject: &'a Expr<'a>,
        key: Option<&'a Expr<'a>>,
        value: &'a Expr<'a>,
        by_ref: bool,
        body: &'a Stmt<'a>,
    },
    Switch {
        subject: &'a Expr<'a>,
        cases: &'a [Case<'a>],
    },
    /// `break N;` (N is 1 when omitted).
    Break(u32),
    /// `continue N;`
    Continue(u32),
    Return(Option<&'a Expr<'a>>),
    /// `global $a, $b;`
    Global(&'a [&'a str]),
    /// `global $$name` or `global ${expr}`: the global whose name is the
    /// expression's value.
    GlobalByName(&'a Expr<'a>),
    /// `static $a = init, $b;`
    Static(&'a [StaticVar<'a>]),
    /// `unset($a, $b[1]);`
    Unset(&'a [&'a Expr<'a>]),
    /// `function name(…) { … }`
    Function(&'a FunctionDecl<'a>),
    /// `const A = 1, B = 2;`
    Const(&'a [(&'a str, &'a Expr<'a>)]),
    /// `{ … }`
    Block(&'a [Stmt<'a>]),
    /// `;`
    Nop,
    /// `name:`, a target for `goto`.
    Label(&'a str),
    /// `goto name;`
    Goto(&'a str),
    /// A statement PHP parses and then refuses when it compiles it
    /// (`break $x;`, `foreach ($a as &$k => $v)`): compiling it is this
    /// fatal error, raised where PHP's compiler reaches it.
    Refused(&'a str),
    /// A class, interface, trait or enum declaration.
    Class(&'a ClassDecl<'a>),
    /// `try { … } catch (A|B $e) { … } finally { … }`
    Try {
        body: &'a [Stmt<'a>],
        catches: &'a [Catch<'a>],
        finally: Option<&'a [Stmt<'a>]>,
    },
    /// `namespace A\B;` (no body: the namespace holds until the next
    /// one), `namespace A\B { … }` or `namespace { … }` (no name: the
    /// global namespace). Only at the top level of a file (or, as PHP's
    /// compiler then refuses, inside another namespace's block).
    Namespace {
        name: Option<&'a str>,
        body: Option<&'a [Stmt<'a>]>,
        /// Nothing but `declare`s and empty statements comes before it in
        /// the file (PHP's `zend_is_first_statement`, with `;` allowed).
        first: bool,
    },
    /// `use A\B as C, function f, const X;` or a group use
    /// (`use A\{B, C}`): the imports of the namespace it stands in.
    Use(&'a [UseItem<'a>]),
}

/// What a `use` imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseKind {
    Class,
    Function,
    Const,
}

/// One import of a `use` statement.
#[derive(Debug)]
pub struct UseItem<'a> {
    pub pos: u32,
    pub kind: UseKind,
    /// The imported name, fully qualified, without a leading `\`.
    pub name: &'a str,
    /// `as` the alias (else the name's last part).
    pub alias: Option<&'a str>,
    /// Part of a group use (`use A\{B}`), whose names are always
    /// qualified.
    pub group: bool,
}

/// One `catch (A|B $e) { … }` clause (the variable may be left out).
#[derive(Debug)]
pub struct Catch<'a> {
    pub pos: u32,
    pub classes: &'a [&'a str],
    pub var: Option<&'a str>,
    pub body: &'a [Stmt<'a>],
}

/// What a class-like declaration declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    Class,
    Interface,
    Trait,
    Enum,
}

impl ClassKind {
    /// The keyword, as messages spell it.
    pub fn keyword(self) -> &'static str {
        match self {
            ClassKind::Class => "class",
            ClassKind::Interface => "interface",
            ClassKind::Trait => "trait",
            ClassKind::Enum => "enum",
        }
    }
}

/// Member and class modifiers, as bits (PHP's `ZEND_ACC_*` subset).
pub mod modifiers {
    pub const PUBLIC: u16 = 1;
    pub const PROTECTED: u16 = 2;
    pub const PRIVATE: u16 = 4;
    pub const STATIC: u16 = 8;
    pub const ABSTRACT: u16 = 16;
    pub const FINAL: u16 = 32;
    pub const READONLY: u16 = 64;
    /// `var`: a public property written the PHP 4 way.
    pub const VAR: u16 = 128;
    pub const VISIBILITY: u16 = PUBLIC | PROTECTED | PRIVATE;

    /// The keyword of a single modifier bit.
    pub fn keyword(bit: u16) -> &'static str {
        match bit {
            PUBLIC => "public",
            PROTECTED => "protected",
            PRIVATE => "private",
            STATIC => "static",
            ABSTRACT => "abstract",
            FINAL => "final",
            READONLY => "readonly",
            _ => "var",
        }
    }
}

/// `class Name extends Parent implements I, J { members }` and its
/// siblings; an anonymous class (`new class {…}`) has the name
/// `class@anonymous`.
#[derive(Debug)]
pub struct ClassDecl<'a> {
    pub pos: u32,
    /// Where its closing brace is.
    pub end_pos: u32,
    pub kind: ClassKind,
    pub name: &'a str,
    /// `abstract`, `final`, `readonly` (bits of [`modifiers`]).
    pub modifiers: u16,
    /// `extends` of a class.
    pub parent: Option<&'a str>,
    /// `implements` of a class or an enum; `extends` of an interface.
    pub interfaces: &'a [&'a str],
    /// The backing type of an enum (`enum Suit: string`).
    pub backing: Option<&'a TypeHint<'a>>,
    pub members: &'a [Member<'a>],
    pub attributes: &'a [Attribute<'a>],
}

/// A member of a class-like declaration.
#[derive(Debug)]
pub enum Member<'a> {
    /// `[modifiers] const A = 1, B = 2;`
    Const {
        pos: u32,
        modifiers: u16,
        items: &'a [(&'a str, &'a Expr<'a>)],
    },
    /// `modifiers [type] $a = 1, $b;`
    Property {
        pos: u32,
        modifiers: u16,
        ty: Option<&'a TypeHint<'a>>,
        items: &'a [PropertyItem<'a>],
    },
    /// `[modifiers] function name(…) { … }`, or `;` for an abstract or
    /// interface method.
    Method { modifiers: u16, decl: &'a FunctionDecl<'a> },
    /// `use A, B { A::x insteadof B; B::x as y; }`
    TraitUse {
        pos: u32,
        traits: &'a [&'a str],
        rules: &'a [TraitRule<'a>],
    },
    /// `case Name = value;` of an enum.
    Case {
        pos: u32,
        name: &'a str,
        value: Option<&'a Expr<'a>>,
    },
}

#[derive(Debug)]
pub struct PropertyItem<'a> {
    pub pos: u32,
    pub name: &'a str,
    pub default: Option<&'a Expr<'a>>,
}

/// One adaptation of a trait `use`.
#[derive(Debug)]
pub enum TraitRule<'a> {
    /// `T::m insteadof A, B;`
    Insteadof {
        pos: u32,
        trait_name: &'a str,
        method: &'a str,
        instead_of: &'a [&'a str],
    },
    /// `[T::]m as [visibility] [alias];`
    Alias {
        pos: u32,
        trait_name: Option<&'a str>,
        method: &'a str,
        modifiers: u16,
        alias: Option<&'a str>,
    },
}

/// The class an expression names: `A`, `self`/`parent`/`static`, a value
/// (`$obj::X`, `new $name`), or an anonymous class being declared.
#[derive(Debug, Clone, Copy)]
pub enum ClassRef<'a> {
    Name(&'a str),
    /// `static` (late static binding).
    Static,
    Expr(&'a Expr<'a>),
    Anonymous(&'a ClassDecl<'a>),
}

/// A member name: as written, or computed (`$obj->$name`,
/// `$obj->{'a' . 'b'}`, `A::$name()`).
#[derive(Debug, Clone, Copy)]
pub enum MemberName<'a> {
    Ident(&'a str),
    Expr(&'a Expr<'a>),
}

#[derive(Debug)]
pub struct Case<'a> {
    pub pos: u32,
    /// Where its `:` or `;` is: PHP dates a case from there (the line of
    /// "Switch statements may only contain one default clause").
    pub sep_pos: u32,
    /// `None` for `default:`.
    pub test: Option<&'a Expr<'a>>,
    pub body: &'a [Stmt<'a>],
}

#[derive(Debug)]
pub struct StaticVar<'a> {
    pub name: &'a str,
    pub init: Option<&'a Expr<'a>>,
}

/// A named function, a closure or an arrow function.
#[derive(Debug)]
pub struct FunctionDecl<'a> {
    pub pos: u32,
    /// Where the body's closing brace is (PHP reports `return` at the end of
    /// a function on that line).
    pub end_pos: u32,
    /// The declared name; `{closure}` for closures and arrow functions.
    pub name: &'a str,
    pub params: &'a [Param<'a>],
    pub by_ref_return: bool,
    pub return_type: Option<&'a TypeHint<'a>>,
    /// For closures, the `use (…)` list; empty otherwise.
    pub uses: &'a [ClosureUse<'a>],
    pub body: FunctionBody<'a>,
    /// `#[Name(args), …]` before the declaration.
    pub attributes: &'a [Attribute<'a>],
    /// `static function` / `static fn`: a closure without `$this`.
    pub is_static: bool,
}

/// One attribute of a `#[…]` group.
#[derive(Debug)]
pub struct Attribute<'a> {
    pub pos: u32,
    /// The class name, resolved (no leading `\`).
    pub name: &'a str,
    pub args: &'a [Arg<'a>],
}

#[derive(Debug)]
pub enum FunctionBody<'a> {
    Block(&'a [Stmt<'a>]),
    /// An arrow function `fn(…) => expr`: it captures, by value, every
    /// variable of the enclosing scope that the expression uses.
    Arrow(&'a Expr<'a>),
    /// No body: an abstract or interface method (`;`).
    None,
}

#[derive(Debug)]
pub struct Param<'a> {
    pub pos: u32,
    pub name: &'a str,
    pub default: Option<&'a Expr<'a>>,
    pub by_ref: bool,
    pub variadic: bool,
    pub ty: Option<&'a TypeHint<'a>>,
    pub attributes: &'a [Attribute<'a>],
    /// Constructor promotion: the visibility (and `readonly`) bits of
    /// [`modifiers`] of a promoted parameter, 0 for a plain one.
    pub promote: u16,
}

/// A parameter or return type, kept as written.
#[derive(Debug)]
pub struct TypeHint<'a> {
    pub nullable: bool,
    /// `A&B` rather than `A|B`.
    pub intersection: bool,
    /// The names as written: `\int` keeps its backslash, `a\b` its
    /// namespace (PHP's checks tell them apart). Every name of a DNF
    /// type, its intersections' too.
    pub names: &'a [&'a str],
    /// A union with an intersection member (`(A&B)|C`, PHP 8.2's DNF
    /// types): its members in source order, each an intersection's names
    /// or a single name; empty for the other forms.
    pub dnf: &'a [&'a [&'a str]],
}

#[derive(Debug)]
pub struct ClosureUse<'a> {
    pub pos: u32,
    pub name: &'a str,
    pub by_ref: bool,
}

/// An expression and the byte offset where it starts.
#[derive(Debug)]
pub struct Expr<'a> {
    pub pos: u32,
    pub kind: ExprKind<'a>,
}

#[derive(Debug)]
pub enum ExprKind<'a> {
    Int(i64),
    Float(f64),
    /// A string literal with its escapes already resolved.
    Str(&'a [u8]),
    /// A double-quoted string with variables in it.
    Interp(&'a [InterpPart<'a>]),
    /// `$name` (the name without the `$`).
    Var(&'a str),
    /// `$$name`, `${expr}`: the variable whose name is the value of the
    /// expression. `global` for `$GLOBALS[expr]`, which since PHP 8.1 is
    /// not an element of an array but the global variable of that name.
    VarVar {
        name: &'a Expr<'a>,
        global: bool,
    },
    /// `[…]`, `array(…)` or `list(…)`; as an assignment target,
    /// destructuring.
    Array(&'a [ArrayItem<'a>], ArraySyntax),
    /// `base[index]`; `base[]` (index `None`) only as a write target.
    Index {
        base: &'a Expr<'a>,
        index: Option<&'a Expr<'a>>,
    },
    /// `base{index}`, the offset syntax PHP 8 removed. The base of another
    /// offset is an offset like `[…]` (the parser makes it one), and so is
    /// the operand of `isset` and `empty`; compiling it anywhere else is
    /// an error (PHP checks only there).
    CurlyIndex {
        base: &'a Expr<'a>,
        index: &'a Expr<'a>,
    },
    /// A bare name: a constant (`true`, `PHP_EOL`, `FOO`).
    Const(&'a str),
    /// `name(args)`: a call of a named function.
    Call {
        name: &'a str,
        args: &'a [Arg<'a>],
    },
    /// `name(...)`: the first-class callable of a named function (a
    /// closure that calls it).
    CallableFromName(&'a str),
    /// `expr(...)`: the first-class callable of a callable value.
    CallableFromValue(&'a Expr<'a>),
    /// `expr(args)`: a call of a closure or a string callable.
    CallValue {
        callee: &'a Expr<'a>,
        args: &'a [Arg<'a>],
    },
    /// `function (…) use (…) { … }` or `fn (…) => …`
    Closure(&'a FunctionDecl<'a>),
    /// `new A(args)`; `new class (args) {…}`
    New {
        class: ClassRef<'a>,
        args: &'a [Arg<'a>],
    },
    /// `obj->name`, `obj?->name`
    Prop {
        obj: &'a Expr<'a>,
        name: MemberName<'a>,
        nullsafe: bool,
    },
    /// `obj->name(args)`, `obj?->name(args)`
    MethodCall {
        obj: &'a Expr<'a>,
        name: MemberName<'a>,
        args: &'a [Arg<'a>],
        nullsafe: bool,
    },
    /// `A::name(args)`, `parent::__construct()`, `A::$name()`
    StaticCall {
        class: ClassRef<'a>,
        name: MemberName<'a>,
        args: &'a [Arg<'a>],
    },
    /// `A::NAME`; `A::class`
    ClassConst {
        class: ClassRef<'a>,
        name: &'a str,
    },
    /// `A::$name`
    StaticProp {
        class: ClassRef<'a>,
        name: MemberName<'a>,
    },
    /// `expr instanceof A`
    InstanceOf {
        expr: &'a Expr<'a>,
        class: ClassRef<'a>,
    },
    /// `clone expr`
    Clone(&'a Expr<'a>),
    /// `throw expr` (an expression since PHP 8)
    Throw(&'a Expr<'a>),
    /// `obj->name(...)`, `A::name(...)`: the first-class callable of a
    /// method.
    MethodCallable {
        obj: &'a Expr<'a>,
        name: MemberName<'a>,
    },
    StaticCallable {
        class: ClassRef<'a>,
        name: MemberName<'a>,
    },
    Unary {
        op: UnaryOp,
        expr: &'a Expr<'a>,
    },
    Binary {
        op: BinaryOp,
        lhs: &'a Expr<'a>,
        rhs: &'a Expr<'a>,
    },
    /// `target = value`
    Assign {
        target: &'a Expr<'a>,
        value: &'a Expr<'a>,
    },
    /// `target = &source`
    AssignRef {
        target: &'a Expr<'a>,
        source: &'a Expr<'a>,
    },
    /// `target op= value`; `??=` is `op: Coalesce`.
    AssignOp {
        op: BinaryOp,
        target: &'a Expr<'a>,
        value: &'a Expr<'a>,
    },
    /// `++$x`, `$x++`, `--$x`, `$x--`
    IncDec {
        prefix: bool,
        increment: bool,
        target: &'a Expr<'a>,
    },
    /// `cond ? then : els`; `cond ?: els` has `then: None`.
    Ternary {
        cond: &'a Expr<'a>,
        then: Option<&'a Expr<'a>>,
        els: &'a Expr<'a>,
    },
    Isset(&'a [&'a Expr<'a>]),
    Empty(&'a Expr<'a>),
    /// `eval(code)`: compiles and runs the string in the current scope.
    Eval(&'a Expr<'a>),
    /// `include path` and its three siblings: compiles the file and runs
    /// it in the current scope.
    Include {
        kind: IncludeKind,
        path: &'a Expr<'a>,
    },
    Cast {
        to: CastType,
        expr: &'a Expr<'a>,
    },
    /// `print expr` (always 1)
    Print(&'a Expr<'a>),
    /// `exit`, `exit(status)`, `die(…)`
    Exit(Option<&'a Expr<'a>>),
    /// `@expr`: warnings raised while evaluating `expr` are not shown.
    Silence(&'a Expr<'a>),
    /// `match (subject) { conds => body, …, default => body }`
    Match {
        subject: &'a Expr<'a>,
        arms: &'a [MatchArm<'a>],
    },
    /// An expression PHP parses and then refuses when it compiles it
    /// (`1 ? 2 : 3 ? 4 : 5`): compiling it is this fatal error.
    Refused(&'a str),
}

/// How an array literal was written (PHP's checks of destructuring
/// targets tell them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArraySyntax {
    /// `[…]`
    Short,
    /// `array(…)`
    Long,
    /// `list(…)`
    List,
}

/// One arm of a `match`: `a, b => body`, or `default => body` (`conds:
/// None`).
#[derive(Debug)]
pub struct MatchArm<'a> {
    pub pos: u32,
    pub conds: Option<&'a [&'a Expr<'a>]>,
    pub body: &'a Expr<'a>,
}

#[derive(Debug)]
pub enum InterpPart<'a> {
    Lit(&'a [u8]),
    Expr(&'a Expr<'a>),
}

#[derive(Debug)]
pub struct ArrayItem<'a> {
    pub key: Option<&'a Expr<'a>>,
    /// `None` only for a skipped slot in destructuring: `[, $b] = …`.
    pub value: Option<&'a Expr<'a>>,
    pub by_ref: bool,
    pub spread: bool,
}

#[derive(Debug)]
pub struct Arg<'a> {
    pub value: &'a Expr<'a>,
    /// `...$args`
    pub spread: bool,
    /// `name: value`, a named argument.
    pub name: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!`
    Not,
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `~`
    BitNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
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
    /// `&&` and `and` (short-circuit)
    And,
    /// `||` and `or` (short-circuit)
    Or,
    /// `xor`
    Xor,
    /// `??` (short-circuit, no warning for a missing left side)
    Coalesce,
    Eq,
    NotEq,
    Identical,
    NotIdentical,
    Lt,
    Le,
    Gt,
    Ge,
    Spaceship,
}

impl BinaryOp {
    /// The operator as PHP spells it (for dumps and messages).
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
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
            And => "&&",
            Or => "||",
            Xor => "xor",
            Coalesce => "??",
            Eq => "==",
            NotEq => "!=",
            Identical => "===",
            NotIdentical => "!==",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Spaceship => "<=>",
        }
    }
}

/// Which of PHP's four inclusion forms (`ZEND_INCLUDE_OR_EVAL`'s kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeKind {
    Include,
    IncludeOnce,
    Require,
    RequireOnce,
}

impl IncludeKind {
    /// The keyword, as messages and stack traces spell it.
    pub fn name(self) -> &'static str {
        match self {
            IncludeKind::Include => "include",
            IncludeKind::IncludeOnce => "include_once",
            IncludeKind::Require => "require",
            IncludeKind::RequireOnce => "require_once",
        }
    }

    /// A file already included is not run again.
    pub fn once(self) -> bool {
        matches!(self, IncludeKind::IncludeOnce | IncludeKind::RequireOnce)
    }

    /// A file that cannot be opened is a fatal error, not a warning.
    pub fn required(self) -> bool {
        matches!(self, IncludeKind::Require | IncludeKind::RequireOnce)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastType {
    Int,
    Float,
    String,
    Bool,
    Array,
    /// `(unset)` was removed in PHP 8; kept only to report it.
    Unset,
    /// `(object)`: objects are not supported; kept only to report it.
    Object,
}
