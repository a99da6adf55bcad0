//! Expressions on objects and classes: `new`, property reads, method and
//! static calls, class constants, static properties, `instanceof`,
//! `clone`, `throw`, and the nullsafe operator's short circuit.
//!
//! Conventions the VM relies on:
//! - A method call is `INIT_METHOD` (or `INIT_STATIC_METHOD`) into three
//!   consecutive temporaries `callee`…`callee+2`, the arguments in the
//!   temporaries after them (the top of the window), then `CALL_METHOD`.
//!   The arguments are sent as for a call of a value (`SEND_VAR_EX`,
//!   `JMP_ARG_BY_VAL` with `method` set and `callee` the first of the
//!   three).
//! - `new` is `NEW` (which fills `callee`…`callee+2` with the
//!   constructor's call when there is one, and otherwise jumps to `skip`),
//!   the arguments, and `CALL_METHOD` into a temporary of its own.
//! - A call with `...` or named arguments is prepared the same way, its
//!   arguments gathered into an array after the three registers, and
//!   made by `CALL_SPREAD` with `method` set.
//! - The nullsafe operator jumps (`JMP_IDENTICAL obj === null`) to the end
//!   of its whole chain, where the chain's value is null.

use minizts_core::bytecode::NO_CACHE;
use minizts_core::bytecode::{class_mode, Op, Reg, Src};
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::*;
use minizts_syntax::names;

use crate::ct::Folded;
use crate::{Compiler, Result};

/// The most arguments one call instruction holds.
const MAX_ARGS: usize = 255;

/// Whether member chain `e` (properties, method calls, offsets, static
/// members of a value, calls of a value, down to the first thing that is
/// none of those) has a nullsafe operator.
pub(crate) fn has_nullsafe(e: &Expr<'_>) -> bool {
    match &e.kind {
        ExprKind::Prop { obj, nullsafe, .. } | ExprKind::MethodCall { obj, nullsafe, .. } => {
            *nullsafe || has_nullsafe(obj)
        }
        ExprKind::Index { base, .. } => has_nullsafe(base),
        ExprKind::StaticProp {
            class: ClassRef::Expr(c),
            ..
        }
        | ExprKind::ClassConst {
            class: ClassRef::Expr(c),
            ..
        }
        | ExprKind::StaticCall {
            class: ClassRef::Expr(c),
            ..
        } => has_nullsafe(c),
        ExprKind::CallValue { callee, .. } => has_nullsafe(callee),
        _ => false,
    }
}

/// Whether an argument is a variable that a by-reference parameter takes
/// by reference (besides a plain `$var`): an element, a property, a
/// static property or `$$name`, not under a nullsafe operator.
pub(crate) fn referenceable(e: &Expr<'_>) -> bool {
    matches!(
        e.kind,
        ExprKind::Index { .. } | ExprKind::VarVar { .. } | ExprKind::Prop { .. } | ExprKind::StaticProp { .. }
    ) && !has_nullsafe(e)
}

/// Whether the arguments need the array form of a call (`CALL_SPREAD`).
fn needs_spread(args: &[Arg<'_>]) -> bool {
    args.len() > MAX_ARGS || args.iter().any(|a| a.spread || a.name.is_some())
}

/// `self`, `parent` or `static` written as a class name: its mode.
impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// Compiles `e` as the object, base or callee of an element of a
    /// member chain: a nullsafe operator inside it short-circuits the
    /// chain it belongs to.
    pub(crate) fn chain_expr(&mut self, e: &'a Expr<'a>) -> Result<Src> {
        self.in_chain = true;
        let v = self.expr(e);
        self.in_chain = false;
        v
    }

    /// Runs `body` (which compiles a member chain into `dst`) as a chain
    /// the nullsafe operators inside it short-circuit: they jump to its
    /// end, where `dst` gets `fallback`.
    pub(crate) fn short_circuit(
        &mut self,
        dst: Reg,
        fallback: Src,
        body: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.short_circuits.push(Vec::new());
        let result = body(self);
        let jumps = self.short_circuits.pop().unwrap_or_default();
        result?;
        if jumps.is_empty() {
            return Ok(());
        }
        let over = self.emit(Op::Jmp { target: 0 });
        self.patch_all_here(&jumps);
        self.emit(Op::Move { dst, src: fallback });
        self.patch_here(over);
        Ok(())
    }

    /// `obj?->…`: the jump to the chain's end when `obj` is null.
    pub(crate) fn nullsafe_check(&mut self, obj: Src) -> Result<()> {
        let null = self.const_null()?;
        let jump = self.emit(Op::JmpIdentical {
            a: obj,
            b: null,
            if_true: true,
            target: 0,
        });
        match self.short_circuits.last_mut() {
            Some(jumps) => {
                jumps.push(jump);
                Ok(())
            }
            None => self.error("minizts: internal error: a nullsafe operator outside its chain"),
        }
    }

    /// A member name: a string constant as written, or the value of the
    /// expression that computes it.
    /// The name of a called method: one PHP knows when it compiles the
    /// call must be a string.
    fn method_name(&mut self, name: MemberName<'a>) -> Result<Src> {
        if let MemberName::Expr(e) = name {
            if matches!(self.fold(e)?, Some(Folded::Int | Folded::Array(_) | Folded::Other)) {
                return self.error("Method name must be a string");
            }
        }
        self.member_name(name)
    }

    pub(crate) fn member_name(&mut self, name: MemberName<'a>) -> Result<Src> {
        match name {
            MemberName::Ident(n) => self.const_str(&names::to_bytes(n)),
            MemberName::Expr(e) => self.expr(e),
        }
    }

    /// Whether PHP knows, when it compiles the current code, which class
    /// `self` and `parent` name (`zend_is_scope_known`): not in a closure
    /// (it may be bound to another), a trait (the using class), or
    /// top-level code (an included file runs in its includer's scope).
    fn scope_known(&mut self) -> bool {
        if cg!(self.g).op_array().is_closure {
            return false;
        }
        match &self.class {
            Some(c) => c.kind != ClassKind::Trait,
            None => self.in_function,
        }
    }

    /// PHP's compile-time check of `self`, `parent` and `static` where it
    /// knows the scope (`zend_ensure_valid_class_fetch_type`).
    fn check_class_keyword(&mut self, mode: u8) -> Result<()> {
        // Not in a class's constant expressions, resolved when used.
        if self.const_expr || !self.scope_known() {
            return Ok(());
        }
        let word = class_mode::word(mode);
        match &self.class {
            None => self.error(format!("Cannot use \"{word}\" when no class scope is active")),
            Some(c) if mode == class_mode::PARENT && c.parent.is_none() => {
                self.error("Cannot use \"parent\" when current class scope has no parent")
            }
            Some(_) => Ok(()),
        }
    }

    /// The class a `self`/`parent` names where that is known when
    /// compiling (for the callable arrays of spreads and first-class
    /// callables).
    fn known_class_name(&mut self, mode: u8) -> Option<String> {
        if !self.scope_known() {
            return None;
        }
        let c = self.class.as_ref()?;
        match mode {
            class_mode::SELF => Some(c.name.to_string()),
            class_mode::PARENT => c.parent.as_deref().map(str::to_string),
            _ => None,
        }
    }

    /// The `class` operand and mode of an instruction naming class
    /// `class` (see `class_mode`). `chain`: a value there is part of the
    /// member chain being compiled.
    pub(crate) fn class_operand(&mut self, class: ClassRef<'a>, chain: bool) -> Result<(Src, u8)> {
        match class {
            ClassRef::Name(n) => match class_mode::keyword(n.as_bytes()) {
                Some(mode) => {
                    self.check_class_keyword(mode)?;
                    Ok((self.const_str(class_mode::word(mode).as_bytes())?, mode))
                }
                None => {
                    let name = self.class_name(n)?;
                    Ok((self.const_str(&names::to_bytes(&name))?, class_mode::NAME))
                }
            },
            ClassRef::Static => {
                self.check_class_keyword(class_mode::STATIC)?;
                Ok((self.const_str(b"static")?, class_mode::STATIC))
            }
            ClassRef::Expr(e) => {
                // A literal that is no string names no class (`(0)::X`).
                let literal = match &e.kind {
                    ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Array(..) => true,
                    ExprKind::Unary {
                        op: UnaryOp::Neg | UnaryOp::Plus,
                        expr,
                    } => matches!(expr.kind, ExprKind::Int(_) | ExprKind::Float(_)),
                    _ => false,
                };
                if literal {
                    return self.error("Illegal class name");
                }
                let v = if chain { self.chain_expr(e)? } else { self.expr(e)? };
                // A value mode's operand is a register.
                let v = match v.as_reg() {
                    Some(_) => v,
                    None => {
                        let t = self.temp()?;
                        self.emit(Op::Move { dst: t, src: v });
                        Src::reg(t)
                    }
                };
                Ok((v, class_mode::VALUE))
            }
            ClassRef::Anonymous(_) => self.error("minizts: internal error: an anonymous class outside new"),
        }
    }

    /// The first element of the callable array of a static member of
    /// `class`: the class's name (or the object) as a value.
    fn callable_class(&mut self, class: Src, mode: u8, what: &str) -> Result<Src> {
        match mode {
            class_mode::NAME | class_mode::VALUE => Ok(class),
            class_mode::STATIC => {
                let t = self.temp()?;
                self.emit(Op::FetchClassName { dst: t, class, mode });
                Ok(Src::reg(t))
            }
            _ => match self.known_class_name(mode) {
                Some(name) => self.const_str(&names::to_bytes(&name)),
                None => self.error(format!(
                    "minizts does not support {what} of {}:: methods here yet",
                    class_mode::word(mode)
                )),
            },
        }
    }

    /// A new temporary holding the callable array `[first, name]`.
    fn callable_array(&mut self, first: Src, name: Src) -> Result<Reg> {
        let arr = self.temp()?;
        self.emit(Op::NewArray { dst: arr, capacity: 2 });
        self.emit(Op::ArrayPush { arr, src: first });
        self.emit(Op::ArrayPush { arr, src: name });
        Ok(arr)
    }

    /// The arguments of a call resolved into `callee`…`callee+2` (by
    /// `INIT_METHOD`, `INIT_STATIC_METHOD` or `INIT_DYNAMIC_CALL`), into
    /// consecutive registers (returned): variables are sent by reference
    /// or by value as the callee's parameter is, decided when the call
    /// runs (`SEND_VAR_EX`, `JMP_ARG_BY_VAL`); the mask returned marks
    /// the arguments that are values (the call's `vals`).
    pub(crate) fn method_args(&mut self, callee: Reg, args: &'a [Arg<'a>]) -> Result<(Reg, u16)> {
        let start = self.temps(args.len())?;
        let mut vals = 0u16;
        for (i, a) in args.iter().enumerate() {
            let r = start.plus(i as u16);
            let mark = self.mark();
            match &a.value.kind {
                // `$this` and `$GLOBALS` are values.
                ExprKind::Var(name) if *name != "GLOBALS" && *name != "this" => {
                    let var = self.cv(name)?;
                    self.emit(Op::SendVarEx {
                        dst: r,
                        var,
                        callee,
                        argno: i as u8,
                        method: true,
                    });
                }
                _ if referenceable(a.value) => {
                    let which = self.const_int(i as i64)?;
                    self.send_arg(a.value, callee, which, r, true)?;
                }
                ExprKind::Assign { target, value } if crate::expr::list_with_refs(target) => {
                    let v = self.assign(target, value)?;
                    if let Some(var) = v.as_reg() {
                        self.emit(Op::SendVarEx {
                            dst: r,
                            var,
                            callee,
                            argno: i as u8,
                            method: true,
                        });
                    }
                }
                // A call's result goes as it is (PHP's `SEND_VAR_NO_REF_EX`).
                ExprKind::Call { .. }
                | ExprKind::CallValue { .. }
                | ExprKind::MethodCall { .. }
                | ExprKind::StaticCall { .. }
                | ExprKind::AssignRef { .. } => self.expr_into(a.value, r)?,
                // Any other value: PHP's `SEND_VAL_EX`, an error if the
                // parameter turns out to be by reference (`vals`).
                _ => {
                    self.expr_into(a.value, r)?;
                    if i < 16 {
                        vals |= 1 << i;
                    }
                }
            }
            self.release(mark);
        }
        Ok((start, vals))
    }

    /// `new C(args)`, `new class(args) {…}`: the object into `dst`.
    pub(crate) fn new_expr(&mut self, class: ClassRef<'a>, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        let line = self.line;
        // The instruction has no mode: it follows from the operand.
        let (class, _) = match class {
            // An anonymous class is declared where it is instantiated
            // (again each time: the VM skips it once declared), then
            // instantiated by its generated name.
            ClassRef::Anonymous(decl) => {
                let index = self.class_decl(decl)?;
                self.line = line;
                self.emit(Op::DeclareClass { decl: index as u16 });
                let name = match &self.classes[index as usize] {
                    Some(def) => def.name.clone(),
                    None => return self.error("minizts: internal error: an undeclared anonymous class"),
                };
                (self.const_str(&names::to_bytes(&name))?, class_mode::NAME)
            }
            other => self.class_operand(other, false)?,
        };
        // The call's three registers are the ones above the object's: a
        // `dst` that is not the top temporary gets the object through one.
        let obj = if usize::from(self.mark()) == dst.idx() + 1 {
            dst
        } else {
            self.temp()?
        };
        let callee = self.temps(3)?;
        debug_assert_eq!(callee, obj.plus(1));
        if needs_spread(args) {
            let result = self.temp()?;
            self.line = line;
            let new = self.emit(Op::New {
                dst: obj,
                class,
                skip: 0,
                cache: NO_CACHE,
            });
            // Arguments are evaluated with no constructor to take them
            // (see `Op::New`).
            self.patch_here(new);
            self.call_spread_prepared(callee, args, result)?;
        } else {
            let result = self.temp()?;
            self.line = line;
            let new = self.emit(Op::New {
                dst: obj,
                class,
                skip: 0,
                cache: NO_CACHE,
            });
            if !args.is_empty() {
                self.patch_here(new);
            }
            let (start, vals) = self.method_args(callee, args)?;
            self.line = line;
            self.emit(Op::CallMethod {
                dst: result,
                callee,
                args: start,
                argc: args.len() as u8,
                vals,
            });
            if args.is_empty() {
                self.patch_here(new);
            }
        }
        if obj != dst {
            // Moved, not copied: the temporary must not keep the object
            // alive past its last reference (its destructor runs then).
            self.emit(Op::Move {
                dst,
                src: Src::reg(obj),
            });
            self.emit(Op::UnsetVar { var: obj });
        }
        Ok(())
    }

    /// `obj->name` (`obj?->name`) into `dst`; `quiet` inside `isset`,
    /// `empty` and `??`, where the object is read quietly too.
    pub(crate) fn prop_fetch(
        &mut self,
        obj: &'a Expr<'a>,
        name: MemberName<'a>,
        nullsafe: bool,
        dst: Reg,
        quiet: bool,
    ) -> Result<()> {
        let line = self.line;
        let o = if quiet {
            self.quiet_object(obj, nullsafe)?
        } else {
            self.chain_expr(obj)?
        };
        if nullsafe {
            self.nullsafe_check(o)?;
        }
        let n = self.member_name(name)?;
        self.line = line;
        if self.const_operand {
            self.emit(Op::EnumProp { src: o, name: n });
        }
        self.emit(Op::FetchProp {
            dst,
            obj: o,
            name: n,
            quiet,
            cache: NO_CACHE,
        });
        Ok(())
    }

    /// The object of a property read inside `isset`/`empty`/`??`: a
    /// variable as it is (the fetch reads an unset one quietly), anything
    /// else quietly.
    /// With `nullsafe`, a variable is read quietly first: the test for
    /// null reads it as it is.
    pub(crate) fn quiet_object(&mut self, obj: &'a Expr<'a>, nullsafe: bool) -> Result<Src> {
        match obj.kind {
            ExprKind::Var(name) if name != "GLOBALS" && !nullsafe => Ok(Src::reg(self.cv(name)?)),
            _ => {
                self.in_chain = true;
                let v = self.quiet(obj);
                self.in_chain = false;
                v
            }
        }
    }

    /// `isset(obj->name)` into `dst`.
    pub(crate) fn isset_prop(&mut self, e: &'a Expr<'a>, dst: Reg) -> Result<()> {
        let ExprKind::Prop { obj, name, nullsafe } = e.kind else {
            return self.error("minizts: internal error: isset of a property that is none");
        };
        let body = |c: &mut Self| {
            let line = c.line;
            let o = c.quiet_object(obj, nullsafe)?;
            if nullsafe {
                c.nullsafe_check(o)?;
            }
            let n = c.member_name(name)?;
            c.line = line;
            c.emit(Op::IssetProp {
                dst,
                obj: o,
                name: n,
                empty: false,
                cache: NO_CACHE,
            });
            Ok(())
        };
        if has_nullsafe(e) {
            let no = self.const_bool(false)?;
            self.short_circuit(dst, no, body)
        } else {
            body(self)
        }
    }

    /// `empty(obj->name)` into `dst`: not set (`__isset` asked first),
    /// or set to something falsy.
    pub(crate) fn empty_prop(&mut self, e: &'a Expr<'a>, dst: Reg) -> Result<()> {
        let ExprKind::Prop { obj, name, nullsafe } = e.kind else {
            return self.error("minizts: internal error: empty of a property that is none");
        };
        let body = |c: &mut Self| {
            let line = c.line;
            let o = c.quiet_object(obj, nullsafe)?;
            if nullsafe {
                c.nullsafe_check(o)?;
            }
            let n = c.member_name(name)?;
            c.line = line;
            c.emit(Op::IssetProp {
                dst,
                obj: o,
                name: n,
                empty: true,
                cache: NO_CACHE,
            });
            Ok(())
        };
        if has_nullsafe(e) {
            let yes = self.const_bool(true)?;
            self.short_circuit(dst, yes, body)
        } else {
            body(self)
        }
    }

    /// `obj->name(args)` (`obj?->name(args)`) into `dst`.
    pub(crate) fn method_call(
        &mut self,
        obj: &'a Expr<'a>,
        name: MemberName<'a>,
        args: &'a [Arg<'a>],
        nullsafe: bool,
        dst: Reg,
    ) -> Result<()> {
        let line = self.line;
        let o = self.chain_expr(obj)?;
        if nullsafe {
            self.nullsafe_check(o)?;
        }
        let n = self.method_name(name)?;
        let callee = self.temps(3)?;
        self.line = line;
        let tmp = self.is_temp(o);
        self.emit(Op::InitMethod {
            callee,
            obj: o,
            name: n,
            tmp,
            cache: NO_CACHE,
        });
        if needs_spread(args) {
            return self.call_spread_prepared(callee, args, dst);
        }
        let (start, vals) = self.method_args(callee, args)?;
        self.line = line;
        self.emit(Op::CallMethod {
            dst,
            callee,
            args: start,
            argc: args.len() as u8,
            vals,
        });
        Ok(())
    }

    /// `C::name(args)`, `parent::name(args)`, `$obj::name(args)` into
    /// `dst`.
    pub(crate) fn static_call(
        &mut self,
        class: ClassRef<'a>,
        name: MemberName<'a>,
        args: &'a [Arg<'a>],
        dst: Reg,
    ) -> Result<()> {
        let line = self.line;
        let (c, mode) = self.class_operand(class, true)?;
        let n = self.method_name(name)?;
        let callee = self.temps(3)?;
        self.line = line;
        self.emit(Op::InitStaticMethod {
            callee,
            class: c,
            mode,
            name: n,
            cache: NO_CACHE,
        });
        if needs_spread(args) {
            return self.call_spread_prepared(callee, args, dst);
        }
        let (start, vals) = self.method_args(callee, args)?;
        self.line = line;
        self.emit(Op::CallMethod {
            dst,
            callee,
            args: start,
            argc: args.len() as u8,
            vals,
        });
        Ok(())
    }

    /// `C::class` of a class written by name, which PHP resolves when it
    /// compiles (`self::class` too where it knows the class).
    pub(crate) fn folded_class_name(&mut self, class: ClassRef<'a>) -> Result<Option<String>> {
        Ok(match class {
            ClassRef::Name(n) => match class_mode::keyword(n.as_bytes()) {
                None => Some(self.class_name(n)?),
                Some(class_mode::SELF) => self.known_class_name(class_mode::SELF),
                Some(_) => None,
            },
            _ => None,
        })
    }

    /// The class a name written in code means in the current namespace
    /// (`self`, `parent` and `static` stay as they are).
    pub(crate) fn class_name(&self, written: &str) -> Result<String> {
        match self.ns.class_name(written) {
            Ok(name) => Ok(name),
            Err(message) => self.error(message),
        }
    }

    /// `C::NAME` (and `C::class`) into `dst`.
    pub(crate) fn class_const(&mut self, class: ClassRef<'a>, name: &'a str, dst: Reg) -> Result<()> {
        let line = self.line;
        if name.eq_ignore_ascii_case("class") {
            if let Some(folded) = self.folded_class_name(class)? {
                let k = self.const_str(&names::to_bytes(&folded))?;
                self.emit(Op::Move { dst, src: k });
                return Ok(());
            }
            let (c, mode) = self.class_operand(class, true)?;
            self.line = line;
            self.emit(Op::FetchClassName { dst, class: c, mode });
            return Ok(());
        }
        let (c, mode) = self.class_operand(class, true)?;
        let k = self.const_str_index(&names::to_bytes(name))?;
        self.line = line;
        self.emit(Op::FetchClassConst {
            dst,
            class: c,
            mode,
            name: k,
            cache: NO_CACHE,
        });
        Ok(())
    }

    /// `C::$name` into `dst` (`quiet` inside `isset`/`empty`/`??`).
    pub(crate) fn static_prop_fetch(
        &mut self,
        class: ClassRef<'a>,
        name: MemberName<'a>,
        dst: Reg,
        quiet: bool,
    ) -> Result<()> {
        let line = self.line;
        let (c, mode) = self.class_operand(class, true)?;
        let n = self.member_name(name)?;
        self.line = line;
        self.emit(Op::FetchStaticProp {
            dst,
            class: c,
            mode,
            name: n,
            quiet,
            cache: NO_CACHE,
        });
        Ok(())
    }

    /// A new temporary holding the reference static property `C::$name`
    /// is, for the variable instructions to write through.
    pub(crate) fn static_prop_ref(
        &mut self,
        class: ClassRef<'a>,
        name: MemberName<'a>,
        dst: Reg,
        bind: bool,
    ) -> Result<()> {
        let line = self.line;
        let (c, mode) = self.class_operand(class, false)?;
        let n = self.member_name(name)?;
        self.line = line;
        self.emit(Op::FetchStaticPropRef {
            dst,
            class: c,
            mode,
            name: n,
            bind,
            cache: NO_CACHE,
        });
        Ok(())
    }

    /// The class and name operands of static property `C::$name`.
    pub(crate) fn static_prop_operands(&mut self, class: ClassRef<'a>, name: MemberName<'a>) -> Result<(Src, u8, Src)> {
        let line = self.line;
        let (c, mode) = self.class_operand(class, false)?;
        let n = self.member_name(name)?;
        self.line = line;
        Ok((c, mode, n))
    }

    /// Puts the reference property `obj->name` is (made one) into `dst`.
    pub(crate) fn prop_ref(&mut self, obj: &'a Expr<'a>, name: MemberName<'a>, dst: Reg) -> Result<()> {
        let line = self.line;
        let (o, n) = self.prop_operands(obj, name)?;
        self.line = line;
        self.emit(Op::FetchPropRef { dst, obj: o, name: n });
        Ok(())
    }

    /// The object (fetched for writing) and the name of property
    /// `obj->name` that is written or changed.
    pub(crate) fn prop_operands(&mut self, obj: &'a Expr<'a>, name: MemberName<'a>) -> Result<(Src, Src)> {
        let o = self.write_object(obj)?;
        let n = self.member_name(name)?;
        Ok((o, n))
    }

    /// `expr instanceof C` into `dst`.
    pub(crate) fn instance_of(&mut self, expr: &'a Expr<'a>, class: ClassRef<'a>, dst: Reg) -> Result<()> {
        let line = self.line;
        let v = self.expr(expr)?;
        let (c, mode) = self.class_operand(class, false)?;
        self.line = line;
        self.emit(Op::InstanceOf {
            dst,
            src: v,
            class: c,
            mode,
            cache: NO_CACHE,
        });
        Ok(())
    }

    /// `obj->name(...)`: the closure of the callable array `[obj, name]`.
    pub(crate) fn method_callable(&mut self, obj: &'a Expr<'a>, name: MemberName<'a>, dst: Reg) -> Result<()> {
        let line = self.line;
        let o = self.expr(obj)?;
        let n = self.member_name(name)?;
        let arr = self.callable_array(o, n)?;
        self.line = line;
        self.emit(Op::MakeCallable {
            dst,
            src: Src::reg(arr),
        });
        Ok(())
    }

    /// `C::name(...)`: the closure of the callable array `['C', name]`.
    pub(crate) fn static_callable(&mut self, class: ClassRef<'a>, name: MemberName<'a>, dst: Reg) -> Result<()> {
        let line = self.line;
        let (c, mode) = self.class_operand(class, false)?;
        let first = self.callable_class(c, mode, "first-class callables")?;
        let n = self.member_name(name)?;
        let arr = self.callable_array(first, n)?;
        self.line = line;
        self.emit(Op::MakeCallable {
            dst,
            src: Src::reg(arr),
        });
        Ok(())
    }

    /// The class name `__CLASS__` stands for: the class being compiled
    /// (`""` outside one); in a trait, the class using it, found when
    /// the code runs.
    pub(crate) fn class_magic(&mut self) -> Result<Src> {
        match &self.class {
            None => self.const_str(b""),
            Some(c) if c.kind == ClassKind::Trait => {
                let t = self.temp()?;
                let class = self.const_str(b"self")?;
                self.emit(Op::FetchClassName {
                    dst: t,
                    class,
                    mode: class_mode::SELF,
                });
                Ok(Src::reg(t))
            }
            Some(c) => {
                let name = c.name.clone();
                self.const_str(&names::to_bytes(&name))
            }
        }
    }
}
