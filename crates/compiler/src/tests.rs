//! Unit tests of what classes, objects and exceptions compile to: the
//! register layouts and jump conventions the VM relies on (see
//! `objects.rs` and `exceptions.rs`). Some build their AST by hand, so
//! that they test the compiler alone.

use std::sync::Arc;

use minizts_core::bytecode::{class_mode, CastKind, Function, Op, Reg, Script, Src};
use minizts_core::object::{acc, ClassKind as Kind};
use minizts_globals::{Globals, Tls};
use minizts_syntax::ast::*;
use minizts_syntax::LineIndex;

use crate::{CompileError, Unit};

/// Runs `f` with this thread's compiler globals (no builtins).
fn with_globals<T>(f: impl FnOnce(Tls) -> T) -> T {
    let g = Tls::thread_startup().expect("a fresh test thread");
    let out = f(g);
    // SAFETY: `g` is not used after this.
    unsafe { g.thread_shutdown() };
    out
}

fn try_compile(src: &str) -> Result<Arc<Script>, CompileError> {
    with_globals(|g| crate::compile(g, src.as_bytes(), "test.php"))
}

fn compile(src: &str) -> Arc<Script> {
    match try_compile(src) {
        Ok(s) => s,
        Err(e) => panic!("line {}: {}", e.line, e.message),
    }
}

fn error(src: &str) -> String {
    match try_compile(src) {
        Ok(_) => panic!("compiled: {src}"),
        Err(e) => e.message,
    }
}

/// The function named `name` (the first one).
fn function<'s>(script: &'s Script, name: &str) -> &'s Function {
    script
        .functions
        .iter()
        .find(|f| &*f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// The index of the first instruction `pick` accepts.
fn find(f: &Function, pick: impl Fn(&Op) -> bool) -> usize {
    f.code
        .iter()
        .position(pick)
        .unwrap_or_else(|| panic!("not found in {:?}", f.code))
}

fn konst(f: &Function, s: Src) -> &minizts_core::Value {
    assert!(s.is_const(), "{s:?} is no constant");
    &f.consts.values()[s.index()]
}

fn is_str(f: &Function, s: Src, text: &str) -> bool {
    matches!(konst(f, s), minizts_core::Value::Str(v) if &v[..] == text.as_bytes())
}

#[test]
fn a_class_declaration_is_a_class_def_with_its_members() {
    let script = compile(
        "<?php
        abstract class A extends B implements I, J {
            use T1, T2 { T1::f insteadof T2; g as protected h; }
            const X = 1 + 2;
            private const Y = 'y';
            public $p = [1, 2], $q;
            protected static ?int $s = 3;
            var $v;
            public function __construct(public int $promoted, $plain) { $this->x = 1; }
            final public static function f() {}
            abstract protected function g(int $a);
        }
        if (true) { interface I {} }",
    );
    assert_eq!(script.classes.len(), 2);
    // Only the unconditional top-level one is declared early.
    assert_eq!(script.early_classes, [0]);
    let a = &script.classes[0];
    assert_eq!(&*a.name, "A");
    assert_eq!(a.kind, Kind::Class);
    assert_eq!(a.flags, acc::ABSTRACT);
    assert_eq!(a.parent.as_deref(), Some("B"));
    assert_eq!(a.interfaces.iter().map(|i| &**i).collect::<Vec<_>>(), ["I", "J"]);
    assert_eq!(a.traits.iter().map(|i| &**i).collect::<Vec<_>>(), ["T1", "T2"]);
    assert_eq!(a.trait_rules.len(), 2);
    assert_eq!(script.classes[1].kind, Kind::Interface);

    let consts: Vec<(&str, u16)> = a.consts.iter().map(|c| (&*c.name, c.flags)).collect();
    assert_eq!(consts, [("X", acc::PUBLIC), ("Y", acc::PRIVATE)]);
    let props: Vec<(&str, u16, bool)> = a.props.iter().map(|p| (&*p.name, p.flags, p.has_default)).collect();
    assert_eq!(
        props,
        [
            ("p", acc::PUBLIC, true),
            ("q", acc::PUBLIC, false),
            ("s", acc::PROTECTED | acc::STATIC, true),
            ("v", acc::PUBLIC, false),
            ("promoted", acc::PUBLIC, false),
        ]
    );
    assert!(a.props[2].ty.is_some() && a.props[4].ty.is_some());
    let methods: Vec<(&str, u16)> = a.methods.iter().map(|m| (&*m.name, m.flags)).collect();
    assert_eq!(
        methods,
        [
            ("__construct", acc::PUBLIC),
            ("f", acc::PUBLIC | acc::STATIC | acc::FINAL),
            ("g", acc::PROTECTED | acc::ABSTRACT),
        ]
    );

    // Each method is a function of the class; the constructor assigns
    // its promoted parameter to `$this` before its body.
    let first = script.first_func;
    let ctor = script.function(a.methods[0].func).expect("the constructor");
    assert_eq!(ctor.class_decl, Some(0));
    assert_eq!(ctor.method_flags, acc::PUBLIC);
    let this = ctor.this_cv.expect("the constructor uses $this");
    assert_eq!(&*ctor.cv_names[this as usize], "this");
    let promote = find(ctor, |op| matches!(op, Op::AssignProp { .. }));
    let Op::AssignProp { obj, name, src, .. } = ctor.code[promote] else {
        unreachable!()
    };
    assert_eq!(obj, Src::reg(Reg::new(this)));
    assert!(is_str(ctor, name, "promoted"));
    assert_eq!(src, Src::reg(Reg::new(0)));
    let f = script.function(a.methods[1].func).expect("f");
    assert_eq!(f.this_cv, None);
    // An abstract method is a body that returns null.
    let g = script.function(a.methods[2].func).expect("g");
    assert_eq!(g.code.len(), 1);
    assert_eq!(g.params.len(), 1);

    // Constants and defaults are functions computing them.
    let x = script
        .function(a.consts[0].init.expect("X has a value"))
        .expect("X's function");
    assert_eq!(&*x.name, "{const}");
    assert_eq!(x.class_decl, Some(0));
    let defaults = script
        .function(a.defaults.expect("defaults"))
        .expect("the defaults function");
    assert_eq!(defaults.class_decl, Some(0));
    let pushes = defaults
        .code
        .iter()
        .filter(|op| matches!(op, Op::ArrayPush { .. }))
        .count();
    // p's and s's defaults; [1, 2] is a constant literal.
    assert_eq!(pushes, 2);
    assert!(defaults.code.iter().any(|op| matches!(op, Op::LoadArray { .. })));
    assert_eq!(defaults.arrays.len(), 1);
    assert!(first == 0);

    // The declaration stays where it was written.
    let main = script.main();
    assert!(main.code.iter().any(|op| matches!(op, Op::DeclareClass { decl: 0 })));
    assert!(main.code.iter().any(|op| matches!(op, Op::DeclareClass { decl: 1 })));
}

#[test]
fn enums_have_cases_and_a_backing() {
    let script = compile("<?php enum E: string implements I { case A = 'a'; case B = 'b'; const C = self::A; }");
    let e = &script.classes[0];
    assert_eq!(e.kind, Kind::Enum);
    assert_eq!(e.backing, Some(minizts_core::object::EnumBacking::String));
    let cases: Vec<(&str, bool)> = e.consts.iter().map(|c| (&*c.name, c.is_case)).collect();
    assert_eq!(cases, [("A", true), ("B", true), ("C", false)]);
    let pure = compile("<?php enum F { case X; }");
    assert!(pure.classes[0].consts[0].init.is_none());
}

#[test]
fn new_puts_the_constructor_call_after_it_and_skips_it_without_arguments() {
    let script = compile("<?php $o = new A($x, 1); $p = new static; $q = new $name;");
    let main = script.main();
    let at = find(main, |op| matches!(op, Op::New { .. }));
    let Op::New { dst, class, skip, .. } = main.code[at] else {
        unreachable!()
    };
    // The constructor's call is in the three registers above the object.
    let callee = dst.plus(1);
    assert_eq!(class_mode::of_operand(class, main.consts.values()), class_mode::NAME);
    assert!(is_str(main, class, "A"));
    let call = find(main, |op| matches!(op, Op::CallMethod { .. }));
    let Op::CallMethod {
        dst: result,
        callee: c,
        args,
        argc,
        ..
    } = main.code[call]
    else {
        unreachable!()
    };
    assert_eq!(c, callee);
    assert_eq!(argc, 2);
    // The arguments follow the three registers of the call; the result
    // is not the object's register.
    assert_eq!(args.idx(), callee.idx() + 4);
    assert_ne!(result, dst);
    assert!(args.idx() > dst.idx());
    // Without a constructor, the arguments are still evaluated (PHP's
    // `zend_pass_function`); only a call without arguments is skipped.
    assert_eq!(skip as usize, at + 1);
    let new_static = find(
        main,
        |op| matches!(op, Op::New { class, .. } if class_mode::of_operand(*class, main.consts.values()) == class_mode::STATIC),
    );
    let (Op::New { skip, .. }, Op::CallMethod { argc: 0, .. }) = (main.code[new_static], main.code[new_static + 1])
    else {
        unreachable!()
    };
    assert_eq!(skip as usize, new_static + 2);
    // `$x` is sent as the constructor's parameter wants it.
    assert!(main.code[at..call]
        .iter()
        .any(|op| matches!(op, Op::SendVarEx { callee: c, method: true, argno: 0, .. } if *c == callee)));
    let modes: Vec<u8> = main
        .code
        .iter()
        .filter_map(|op| match op {
            Op::New { class, .. } => Some(class_mode::of_operand(*class, main.consts.values())),
            _ => None,
        })
        .collect();
    assert_eq!(modes, [class_mode::NAME, class_mode::STATIC, class_mode::VALUE]);
}

#[test]
fn an_anonymous_class_is_declared_then_instantiated_by_its_name() {
    let script = compile("<?php\n$o = new class(1) extends P { public function __construct(public $a) {} };");
    let def = &script.classes[0];
    assert_eq!(&*def.name, "P@anonymous\0test.php:2$0");
    assert!(script.early_classes.is_empty());
    let main = script.main();
    let declare = find(main, |op| matches!(op, Op::DeclareClass { decl: 0 }));
    let new = find(main, |op| matches!(op, Op::New { .. }));
    assert!(declare < new);
    let Op::New { class, .. } = main.code[new] else {
        unreachable!()
    };
    assert_eq!(class_mode::of_operand(class, main.consts.values()), class_mode::NAME);
    assert!(is_str(main, class, "P@anonymous\0test.php:2$0"));
}

#[test]
fn a_method_call_resolves_into_three_registers_then_calls() {
    let script = compile("<?php function f($o, $a) { return $o->m($a, 2, $a[0]); }");
    let f = function(&script, "f");
    let init = find(f, |op| matches!(op, Op::InitMethod { .. }));
    let Op::InitMethod { callee, obj, name, .. } = f.code[init] else {
        unreachable!()
    };
    assert_eq!(obj, Src::reg(Reg::new(0)));
    assert!(is_str(f, name, "m"));
    let call = find(f, |op| matches!(op, Op::CallMethod { .. }));
    let Op::CallMethod {
        callee: c, args, argc, ..
    } = f.code[call]
    else {
        unreachable!()
    };
    assert_eq!((c, argc), (callee, 3));
    assert_eq!(args.idx(), callee.idx() + 3);
    // A variable goes as the parameter wants it; an element is decided
    // when the call runs.
    assert!(f.code[init..call].iter().any(|op| matches!(
        op,
        Op::SendVarEx { dst, callee: cc, argno: 0, method: true, .. } if *dst == args && *cc == callee
    )));
    assert!(f.code[init..call].iter().any(|op| matches!(
        op,
        Op::JmpArgByVal { callee: cc, method: true, .. } if *cc == callee
    )));
    // A variable sent to a method may become a reference.
    assert!(!f.code.iter().any(|op| matches!(op, Op::AddRR { .. })));
}

#[test]
fn static_calls_name_their_class_by_mode() {
    let script = compile(
        "<?php class A extends B { function m() { A::f(); self::f(); parent::f(); static::f(); $this::f(); } }",
    );
    let m = function(&script, "m");
    let modes: Vec<u8> = m
        .code
        .iter()
        .filter_map(|op| match op {
            Op::InitStaticMethod { mode, .. } => Some(*mode),
            _ => None,
        })
        .collect();
    assert_eq!(
        modes,
        [
            class_mode::NAME,
            class_mode::SELF,
            class_mode::PARENT,
            class_mode::STATIC,
            class_mode::VALUE
        ]
    );
}

#[test]
fn spreads_and_named_arguments_call_the_prepared_method() {
    let script = compile("<?php class A extends B { function m($a) { $this->f(...$a); parent::g(x: 1); } }");
    let m = function(&script, "m");
    let spreads: Vec<bool> = m
        .code
        .iter()
        .filter_map(|op| match op {
            Op::CallSpread { method, .. } => Some(*method),
            _ => None,
        })
        .collect();
    assert_eq!(spreads, [true, true]);
    // The methods are resolved as without the array, before the
    // arguments, and no callable array is built.
    assert!(m.code.iter().any(|op| matches!(op, Op::InitMethod { .. })));
    assert!(m
        .code
        .iter()
        .any(|op| matches!(op, Op::InitStaticMethod { mode, .. } if *mode == class_mode::PARENT)));
    assert!(!m.code.iter().any(|op| matches!(op, Op::ArrayPush { .. })));
    assert!(!m.code.iter().any(|op| matches!(op, Op::CallMethod { .. })));
}

#[test]
fn a_nullsafe_operator_short_circuits_its_whole_chain() {
    let script = compile("<?php function f($a) { return $a?->b->c()['d']; }");
    let f = function(&script, "f");
    let check = find(f, |op| matches!(op, Op::JmpIdentical { .. }));
    let Op::JmpIdentical { a, target, .. } = f.code[check] else {
        unreachable!()
    };
    assert_eq!(a, Src::reg(Reg::new(0)));
    // It lands past the whole chain, where null is the result (returned
    // at once here).
    assert!(
        matches!(f.code[target as usize], Op::Return { src } if src.is_const() && *konst(f, src) == minizts_core::Value::Null)
    );
    let dim = find(f, |op| matches!(op, Op::FetchDim { .. }));
    assert!(dim < target as usize);
    // Each element once.
    assert_eq!(
        f.code.iter().filter(|op| matches!(op, Op::JmpIdentical { .. })).count(),
        1
    );
}

#[test]
fn isset_and_empty_of_properties() {
    let script = compile("<?php function f($o) { return [isset($o->a->b), empty($o->c), $o->d ?? 1, isset($o?->e)]; }");
    let f = function(&script, "f");
    // `$o->a` is read quietly, then `isset` asks about `b`.
    let quiet = find(f, |op| matches!(op, Op::FetchProp { quiet: true, .. }));
    let isset = find(f, |op| matches!(op, Op::IssetProp { .. }));
    assert!(quiet < isset);
    assert_eq!(f.code.iter().filter(|op| matches!(op, Op::IssetProp { .. })).count(), 3);
    // `empty` is one instruction, as PHP's ISSET_ISEMPTY_PROP_OBJ.
    assert_eq!(
        f.code
            .iter()
            .filter(|op| matches!(op, Op::IssetProp { empty: true, .. }))
            .count(),
        1
    );
    assert!(!f.code.iter().any(|op| matches!(op, Op::FetchProp { quiet: false, .. })));
}

#[test]
fn class_constants_and_names() {
    let script =
        compile("<?php class A { function m($o) { return [B::X, B::class, self::class, static::class, $o::class]; } }");
    let m = function(&script, "m");
    assert!(m.code.iter().any(|op| matches!(
        op,
        Op::FetchClassConst {
            mode: class_mode::NAME,
            ..
        }
    )));
    // `B::class` and `self::class` are folded; the others are looked up.
    let fetched: Vec<u8> = m
        .code
        .iter()
        .filter_map(|op| match op {
            Op::FetchClassName { mode, .. } => Some(*mode),
            _ => None,
        })
        .collect();
    assert_eq!(fetched, [class_mode::STATIC, class_mode::VALUE]);
    assert!(m
        .code
        .iter()
        .any(|op| matches!(op, Op::ArrayPush { src, .. } if src.is_const() && is_str(m, *src, "A"))));
}

#[test]
fn this_is_a_cv_and_closures_do_not_capture_it() {
    let script = compile(
        "<?php class A { function m() { $f = fn($x) => $this->p + $x; $g = static function () {}; return $f; } }",
    );
    let m = function(&script, "m");
    // The method never names `$this` itself, but has its CV for the
    // closures.
    assert!(m.this_cv.is_some());
    let Some(Op::MakeClosure { n, .. }) = m.code.iter().find(|op| matches!(op, Op::MakeClosure { .. })) else {
        panic!("no closure")
    };
    assert_eq!(*n, 0);
    let closures: Vec<&Function> = script.functions.iter().filter(|f| f.is_closure).collect();
    assert_eq!(closures.len(), 2);
    assert!(closures[0].this_cv.is_some());
    assert_eq!(closures[0].class_decl, Some(0));
    assert_eq!(closures[0].method_flags, 0);
    assert_eq!(closures[1].method_flags, acc::STATIC);
}

#[test]
fn try_catch_finally_layout() {
    let script = compile(
        "<?php function f($x) {
            try {
                if ($x) { return g(); }
            } catch (A | B $e) {
                echo 1;
            } catch (C) {
                echo 2;
            } finally {
                echo 3;
            }
            return 4;
        }",
    );
    let f = function(&script, "f");
    assert_eq!(f.try_ranges.len(), 1);
    let range = f.try_ranges[0];
    assert_eq!(range.start, 0);
    let code = &f.code;
    // The catch chain: A jumps to B's CATCH, B's to C's, C is the last.
    let Op::Catch { var, next, last, .. } = code[range.catch as usize] else {
        panic!("no CATCH at {}", range.catch)
    };
    assert!(!last);
    assert_eq!(&*f.cv_names[var.idx()], "e");
    assert!(matches!(code[range.catch as usize + 1], Op::Jmp { .. }));
    let Op::Catch {
        var: var_b,
        next: next_b,
        last: false,
        ..
    } = code[next as usize]
    else {
        panic!("no second CATCH")
    };
    assert_eq!(var_b, var);
    // A match on A jumps to where B's match falls: the clause's body.
    let Op::Jmp { target: body } = code[range.catch as usize + 1] else {
        unreachable!()
    };
    assert_eq!(body, next + 1);
    let Op::Catch {
        var: none, last: true, ..
    } = code[next_b as usize]
    else {
        panic!("no last CATCH")
    };
    assert!(none.is_none());
    // The finally block ends with its FAST_RET, and every FAST_CALL goes
    // to it with the statement's slot.
    assert!(matches!(code[range.finally_end as usize], Op::FastRet { slot } if slot == range.slot));
    let calls: Vec<&Op> = code.iter().filter(|op| matches!(op, Op::FastCall { .. })).collect();
    // The return, the body's end and each clause's end.
    assert_eq!(calls.len(), 4);
    for call in calls {
        assert!(matches!(call, Op::FastCall { slot, target } if *slot == range.slot && *target == range.finally));
    }
    // The return keeps its value out of the finally block's way.
    let ret = find(f, |op| matches!(op, Op::FastCall { .. }));
    let Op::Move { dst, .. } = code[ret - 1] else {
        panic!("no move before the FAST_CALL: {:?}", code[ret - 1])
    };
    assert!(dst.idx() > range.slot.idx());
    assert_eq!(code[ret + 1], Op::Return { src: Src::reg(dst) });
}

#[test]
fn nested_tries_are_recorded_innermost_first_and_leaving_calls_each_finally() {
    let script = compile(
        "<?php function f() {
            foreach ([1] as $v) {
                try {
                    try { break; } finally { echo 1; }
                } finally { echo 2; }
            }
        }",
    );
    let f = function(&script, "f");
    let [inner, outer] = f.try_ranges[..] else {
        panic!("{:?}", f.try_ranges)
    };
    assert!(inner.finally < outer.finally);
    let calls: Vec<(Reg, u32)> = f
        .code
        .iter()
        .filter_map(|op| match op {
            Op::FastCall { slot, target } => Some((*slot, *target)),
            _ => None,
        })
        .collect();
    // `break`: the inner finally then the outer one.
    assert_eq!(calls[0], (inner.slot, inner.finally));
    assert_eq!(calls[1], (outer.slot, outer.finally));
}

#[test]
fn a_try_without_finally_has_no_slot() {
    let script = compile("<?php try { f(); } catch (Exception $e) { }");
    let range = script.main().try_ranges[0];
    assert!(range.slot.is_none());
    assert_eq!((range.finally, range.finally_end), (0, 0));
}

#[test]
fn declaration_errors() {
    assert_eq!(
        error("<?php interface I { private function f(); }"),
        "Access type for interface method I::f() must be public"
    );
    assert_eq!(
        error("<?php class A { function f(){} function F(){} }"),
        "Cannot redeclare A::F()"
    );
    assert_eq!(
        error("<?php class A { function f(public $x) {} }"),
        "Cannot declare promoted property outside a constructor"
    );
    assert_eq!(
        error("<?php class A { public $x = $y; }"),
        "Constant expression contains invalid operations"
    );
    assert_eq!(
        error("<?php class A { abstract function f(); }"),
        "Class A contains 1 abstract method and must therefore be declared abstract or implement the remaining methods (A::f)"
    );
    assert_eq!(error("<?php unset($this);"), "Cannot unset $this");
    assert_eq!(
        error("<?php unset($a?->b);"),
        "Can't use nullsafe operator in write context"
    );
    assert_eq!(
        error("<?php function f() { return self::X; }"),
        "Cannot use \"self\" when no class scope is active"
    );
    assert_eq!(
        error("<?php enum E: int { case A; }"),
        "Case A of backed enum E must have a value"
    );
    assert_eq!(
        error("<?php enum E { public function __toString() {} }"),
        "Enum E cannot include magic method __toString"
    );
    assert_eq!(
        error("<?php class A { function __get($a, $b) {} }"),
        "Method A::__get() must take exactly 1 argument"
    );
    assert_eq!(
        error("<?php class A { function __set(int $a, $b) {} }"),
        "A::__set(): Parameter #1 ($a) must be of type string when declared"
    );
    assert_eq!(
        error("<?php class A { function __toString(): int {} }"),
        "A::__toString(): Return type must be string when declared"
    );
    assert_eq!(
        error("<?php new class { public $x; public $x; };"),
        "Cannot redeclare class@anonymous::$x"
    );
    assert_eq!(error("<?php (0)::X;"), "Illegal class name");
    assert_eq!(
        error("<?php function f() { try {} finally { goto out; } out: }"),
        "jump out of a finally block is disallowed"
    );
    assert_eq!(
        error("<?php function f() { goto in; try {} finally { in: } }"),
        "jump into a finally block is disallowed"
    );
    assert_eq!(
        error("<?php while (1) { try {} finally { break; } }"),
        "jump out of a finally block is disallowed"
    );
    assert_eq!(
        error("<?php class A { function __construct(public int $x = null) {} }"),
        "Cannot use null as default value for parameter $x of type int"
    );
    // Lazily resolved: no parent needed when compiling.
    assert!(try_compile("<?php class A { const X = parent::Y; }").is_ok());
}

/// A tiny AST builder for the statements the tests write by hand.
struct Ast<'a>(&'a bumpalo::Bump);

impl<'a> Ast<'a> {
    fn e(&self, kind: ExprKind<'a>) -> &'a Expr<'a> {
        self.0.alloc(Expr { pos: 6, kind })
    }

    fn var(&self, name: &'a str) -> &'a Expr<'a> {
        self.e(ExprKind::Var(name))
    }

    fn int(&self, n: i64) -> &'a Expr<'a> {
        self.e(ExprKind::Int(n))
    }

    fn prop(&self, obj: &'a Expr<'a>, name: &'a str) -> &'a Expr<'a> {
        self.e(ExprKind::Prop {
            obj,
            name: MemberName::Ident(name),
            nullsafe: false,
        })
    }

    fn stmt(&self, e: &'a Expr<'a>) -> Stmt<'a> {
        Stmt {
            pos: 6,
            kind: StmtKind::Expr(e),
        }
    }
}

/// Compiles hand-built top-level statements.
fn compile_stmts(build: impl for<'a> FnOnce(&Ast<'a>) -> Vec<Stmt<'a>>) -> Arc<Script> {
    let arena = bumpalo::Bump::new();
    let ast = Ast(&arena);
    let stmts = build(&ast);
    let script = minizts_syntax::ast::Script {
        stmts: arena.alloc_slice_fill_iter(stmts),
        halt_offset: None,
        strict_types: false,
    };
    let src = b"<?php ...";
    let lines = LineIndex::new(src);
    with_globals(|g| crate::compile_ast(g, &script, &lines, src.len(), Unit::script("test.php")))
        .unwrap_or_else(|e| panic!("{}", e.message))
}

#[test]
fn property_writes_go_through_the_property() {
    // $o->p = 1; $o->a[] = 2; $o->n += 3; $o->n++; $o->b->c = 4;
    // A::$s = 5; A::$s[] = 6; unset($o->p);
    let script = compile_stmts(|a| {
        let o = || a.var("o");
        let static_s = || {
            a.e(ExprKind::StaticProp {
                class: ClassRef::Name("A"),
                name: MemberName::Ident("s"),
            })
        };
        vec![
            a.stmt(a.e(ExprKind::Assign {
                target: a.prop(o(), "p"),
                value: a.int(1),
            })),
            a.stmt(a.e(ExprKind::Assign {
                target: a.e(ExprKind::Index {
                    base: a.prop(o(), "a"),
                    index: None,
                }),
                value: a.int(2),
            })),
            a.stmt(a.e(ExprKind::AssignOp {
                op: BinaryOp::Add,
                target: a.prop(o(), "n"),
                value: a.int(3),
            })),
            a.stmt(a.e(ExprKind::IncDec {
                prefix: false,
                increment: true,
                target: a.prop(o(), "n"),
            })),
            a.stmt(a.e(ExprKind::Assign {
                target: a.prop(a.prop(o(), "b"), "c"),
                value: a.int(4),
            })),
            a.stmt(a.e(ExprKind::Assign {
                target: static_s(),
                value: a.int(5),
            })),
            a.stmt(a.e(ExprKind::Assign {
                target: a.e(ExprKind::Index {
                    base: static_s(),
                    index: None,
                }),
                value: a.int(6),
            })),
            Stmt {
                pos: 6,
                kind: StmtKind::Unset(a.0.alloc_slice_copy(&[a.prop(o(), "p")])),
            },
        ]
    });
    let main = script.main();
    let names: Vec<&str> = main.code.iter().map(|op| op.mnemonic()).collect();
    assert_eq!(
        names,
        [
            "ASSIGN_PROP",
            // $o->a[] = 2: the key (`[]`: unset), then the property
            // fetched for writing and written in one instruction.
            "UNSET",
            "ASSIGN_PROP_DIM",
            // $o->n += 3 and $o->n++ change the property where it lives.
            "ASSIGN_PROP_OP",
            "INCDEC_PROP",
            // $o->b->c = 4: the object below is read.
            "FETCH_PROP",
            "ASSIGN_PROP",
            "ASSIGN_STATIC_PROP",
            "FETCH_STATIC_PROP_REF",
            "UNSET",
            "ASSIGN_DIM",
            "UNSET_PROP",
            "RETURN",
        ]
    );
    let Op::UnsetVar { var: key } = main.code[1] else {
        unreachable!()
    };
    assert!(matches!(main.code[2], Op::AssignPropDim { keys, depth: 1, .. } if keys == key));
}

#[test]
fn a_property_passed_by_reference_is_its_reference() {
    // function f(&$x) {} f($o->p); $r = &$o->q;
    let script = compile_stmts(|a| {
        let decl = a.0.alloc(FunctionDecl {
            pos: 6,
            end_pos: 6,
            name: "f",
            params: a.0.alloc_slice_fill_iter([Param {
                pos: 6,
                name: "x",
                default: None,
                by_ref: true,
                variadic: false,
                ty: None,
                attributes: &[],
                promote: 0,
            }]),
            by_ref_return: false,
            return_type: None,
            uses: &[],
            body: FunctionBody::Block(&[]),
            attributes: &[],
            is_static: false,
        });
        vec![
            Stmt {
                pos: 6,
                kind: StmtKind::Function(decl),
            },
            a.stmt(a.e(ExprKind::Call {
                name: "f",
                args: a.0.alloc_slice_fill_iter([Arg {
                    value: a.prop(a.var("o"), "p"),
                    spread: false,
                    name: None,
                }]),
            })),
            a.stmt(a.e(ExprKind::AssignRef {
                target: a.var("r"),
                source: a.prop(a.var("o"), "q"),
            })),
        ]
    });
    let names: Vec<&str> = script.main().code.iter().map(|op| op.mnemonic()).collect();
    assert_eq!(
        names,
        [
            "FETCH_PROP_REF",
            "CALL_DIRECT",
            "FETCH_PROP_REF",
            "ASSIGN_REF",
            "RETURN"
        ]
    );
}

/// [`compile`] with `names` in the function table as builtins (ids in
/// their order), as the VM registers its builtins.
fn compile_with_builtins(src: &str, names: &[&str]) -> Arc<Script> {
    with_globals(|g| {
        minizts_globals::cg!(g, |cg| {
            for (id, name) in names.iter().enumerate() {
                let entry = minizts_globals::compiler::InternalFunction {
                    id: id as u16,
                    min_args: 0,
                    max_args: u8::MAX,
                    by_ref: 0,
                    rest_by_ref: false,
                    prefer_ref: false,
                };
                cg.function_table.insert(name.as_bytes().into(), entry);
            }
        });
        crate::compile(g, src.as_bytes(), "test.php")
    })
    .unwrap_or_else(|e| panic!("line {}: {}", e.line, e.message))
}

#[test]
fn special_functions_compile_to_their_instructions() {
    use minizts_core::bytecode::type_bits;
    let builtins = [
        "is_int",
        "is_scalar",
        "is_array",
        "is_resource",
        "intval",
        "strval",
        "func_num_args",
        "sizeof",
        "var_dump",
    ];
    let compile = |src: &str| compile_with_builtins(src, &builtins);
    let script = compile(
        "<?php function f($a) { return [is_int($a), is_scalar($a), intval($a), strval($a), func_num_args(), sizeof($a), \\is_array($a)]; }",
    );
    let f = function(&script, "f");
    let masks: Vec<u16> = f
        .code
        .iter()
        .filter_map(|op| match op {
            Op::TypeCheck { mask, .. } => Some(*mask),
            _ => None,
        })
        .collect();
    let scalar = type_bits::BOOL | type_bits::INT | type_bits::FLOAT | type_bits::STRING;
    assert_eq!(masks, [type_bits::INT, scalar, type_bits::ARRAY]);
    let casts: Vec<CastKind> = f
        .code
        .iter()
        .filter_map(|op| match op {
            Op::Cast { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    assert_eq!(casts, [CastKind::Int, CastKind::String]);
    find(f, |op| matches!(op, Op::FuncNumArgs { .. }));
    find(f, |op| matches!(op, Op::Count { .. }));
    assert!(!f.code.iter().any(|op| matches!(op, Op::CallBuiltin { .. })));
    // Outside a function `func_num_args()` is PHP's error, from the call;
    // `is_resource()` stays a call; in a namespace that declares its own
    // `is_int`, the unqualified name is that function.
    let script = compile("<?php var_dump(func_num_args(), is_resource(1));");
    assert!(!script
        .main()
        .code
        .iter()
        .any(|op| matches!(op, Op::FuncNumArgs { .. } | Op::TypeCheck { .. })));
    let script = compile(
        "<?php namespace N; function is_int($a) { return 0; } function f($a) { return is_int($a) + \\is_int($a); }",
    );
    let f = function(&script, "N\\f");
    assert_eq!(f.code.iter().filter(|op| matches!(op, Op::TypeCheck { .. })).count(), 1);
}

#[test]
fn globals_reads_with_a_constant_name_get_a_cache_slot() {
    let script = compile("<?php function f($n) { return $GLOBALS['v'] + $GLOBALS[$n]; }");
    let f = function(&script, "f");
    let caches: Vec<bool> = f
        .code
        .iter()
        .filter_map(|op| match op {
            Op::FetchVarVar { cache, .. } => Some(*cache != minizts_core::bytecode::NO_CACHE),
            _ => None,
        })
        .collect();
    assert_eq!(caches, [true, false]);
}

#[test]
fn a_constant_array_literal_is_kept_once_and_only_when_constant() {
    let script = compile("<?php function f($x) { return [[1, 2], $x, ['a' => [3]], [$x]]; }");
    let f = function(&script, "f");
    // `[1, 2]` and `['a' => [3]]` (with its `[3]`); nothing of the outer
    // array or of `[$x]`, which are built element by element.
    assert_eq!(f.arrays.len(), 3);
    assert_eq!(f.code.iter().filter(|op| matches!(op, Op::LoadArray { .. })).count(), 2);
    assert_eq!(f.code.iter().filter(|op| matches!(op, Op::NewArray { .. })).count(), 2);
}
