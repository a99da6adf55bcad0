//! Expressions that produce a value.

use minizts_core::bytecode::{BinOp, CastKind, IncDec, Op, Reg, Src, Target, NO_CACHE};
use minizts_core::Value;
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::*;
use minizts_syntax::names;

use crate::objects::{has_nullsafe, referenceable};
use crate::{vars, Compiler, Result};

/// The most arguments a call instruction holds (its count is a byte); a
/// call with more sends them in an array (`CALL_SPREAD`).
const MAX_ARGS: usize = 255;

/// Whether assignment target `t` is a list with references in it.
pub(crate) fn list_with_refs(t: &Expr<'_>) -> bool {
    matches!(&t.kind, ExprKind::Array(items, _) if crate::lvalue::list_has_ref(items))
}

/// Whether PHP compiles the call of `name` with `args` to an instruction
/// of its own rather than a call (`zend_try_compile_special_func`), so
/// that its result is a value, not a call's result: as an argument for a
/// by-reference parameter it is then the error of a value, not the
/// notice of a call.
fn special_function(name: &str, args: &[Arg<'_>]) -> bool {
    if args.iter().any(|a| a.spread || a.name.is_some()) {
        return false;
    }
    let name = name.strip_prefix('\\').unwrap_or(name).to_ascii_lowercase();
    let literal = |f: fn(&ExprKind<'_>) -> bool| matches!(args, [a] if f(&a.value.kind));
    match name.as_str() {
        "strlen" | "is_null" | "is_bool" | "is_long" | "is_int" | "is_integer" | "is_float" | "is_double"
        | "is_string" | "is_array" | "is_object" | "is_resource" | "is_scalar" | "boolval" | "intval" | "floatval"
        | "doubleval" | "strval" | "count" | "sizeof" | "gettype" => args.len() == 1,
        "defined" => literal(|k| matches!(k, ExprKind::Str(_))),
        "chr" => literal(|k| matches!(k, ExprKind::Int(_))),
        "ord" => literal(|k| matches!(k, ExprKind::Str(_))),
        "func_num_args" | "func_get_args" | "get_called_class" => args.is_empty(),
        "get_class" => args.len() <= 1,
        "array_key_exists" => args.len() == 2,
        _ => false,
    }
}

/// The types `name`'s test takes (`is_int` and the others PHP compiles
/// to `ZEND_TYPE_CHECK`; `is_resource` stays a call: a closed resource is
/// none), or `None`.
fn type_check_mask(name: &str) -> Option<u16> {
    use minizts_core::bytecode::type_bits as b;
    Some(match name {
        "is_null" => b::NULL,
        "is_bool" => b::BOOL,
        "is_long" | "is_int" | "is_integer" => b::INT,
        "is_float" | "is_double" => b::FLOAT,
        "is_string" => b::STRING,
        "is_array" => b::ARRAY,
        "is_object" => b::OBJECT,
        "is_scalar" => b::BOOL | b::INT | b::FLOAT | b::STRING,
        _ => return None,
    })
}

/// A call by name as the compiler binds it: `target` is the function
/// (a builtin when it is one), and an unqualified name inside a
/// namespace whose function this file does not declare and that names
/// no builtin also has the global `fallback` the run looks up when the
/// namespace has no such function.
pub(crate) struct Callee<'a> {
    pub target: String,
    pub fallback: Option<String>,
    /// The declaration in this file the call would reach, for its
    /// by-reference parameters.
    pub decl: Option<&'a FunctionDecl<'a>>,
    /// This file declares `target`.
    pub own: bool,
}

impl Callee<'_> {
    /// The one name a call that cannot fall back (a callable string)
    /// uses: the global function's, unless this file declares the
    /// namespace's.
    pub fn bound(&self) -> &str {
        match &self.fallback {
            Some(global) if !self.own => global,
            _ => &self.target,
        }
    }
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// Whether a call is one PHP compiles to an instruction of its own
    /// (see [`special_function`]): never an unqualified name in a
    /// namespace, which PHP resolves when it runs.
    fn special_call(&self, name: &str, args: &[Arg<'_>]) -> bool {
        let resolved = self.ns.function_name(name);
        resolved.fallback.is_none() && special_function(&resolved.name, args)
    }

    /// Compiles `e`; returns where its value is: a constant, a CV's
    /// register, or a temporary above the watermark the caller took.
    pub(crate) fn expr(&mut self, e: &'a Expr<'a>) -> Result<Src> {
        match &e.kind {
            ExprKind::Int(n) => self.const_int(*n),
            ExprKind::Float(f) => self.const_float(*f),
            ExprKind::Str(s) => self.const_str(s),
            ExprKind::Var("GLOBALS") => {
                let dst = self.temp()?;
                self.emit(Op::FetchGlobals { dst });
                Ok(Src::reg(dst))
            }
            ExprKind::Var("this") if self.no_this => {
                // (PHP's `FETCH_THIS` in code that never has an object.)
                self.at(e.pos);
                let message = self.const_str_index(b"Using $this when not in object context")?;
                self.emit(Op::ThrowError { message });
                self.const_null()
            }
            ExprKind::Var("this") if !self.in_function => {
                let var = self.cv("this")?;
                self.at(e.pos);
                self.emit(Op::CheckThis { var });
                Ok(Src::reg(var))
            }
            ExprKind::Var(name) => Ok(Src::reg(self.cv(name)?)),
            // The line of the token itself, not of the instruction being
            // emitted (an element of a multi-line array literal).
            ExprKind::Const(name) if name.eq_ignore_ascii_case("__LINE__") => {
                self.const_int(self.line_of(e.pos) as i64)
            }
            ExprKind::Const(name) => self.constant(name),
            // `A::class`, resolved now.
            ExprKind::ClassConst { class, name } if name.eq_ignore_ascii_case("class") => {
                match self.folded_class_name(*class)? {
                    Some(folded) => self.const_str(&names::to_bytes(&folded)),
                    None => {
                        let t = self.temp()?;
                        self.expr_into(e, t)?;
                        Ok(Src::reg(t))
                    }
                }
            }
            _ => {
                let t = self.temp()?;
                self.expr_into(e, t)?;
                Ok(Src::reg(t))
            }
        }
    }

    /// Compiles `e` into register `dst` (a temporary).
    pub(crate) fn expr_into(&mut self, e: &'a Expr<'a>, dst: Reg) -> Result<()> {
        // The outermost element of a member chain with a nullsafe
        // operator is where the chain's short circuit ends.
        let in_chain = std::mem::take(&mut self.in_chain);
        if !in_chain && has_nullsafe(e) {
            let null = self.const_null()?;
            return self.short_circuit(dst, null, |c| {
                c.in_chain = true;
                c.expr_into(e, dst)
            });
        }
        let line = self.line;
        self.at(e.pos);
        let mark = self.mark();
        match &e.kind {
            ExprKind::Var("GLOBALS") => {
                self.emit(Op::FetchGlobals { dst });
            }
            // A constant looked up when it runs is fetched into `dst`
            // itself (PHP's `FETCH_CONSTANT` into the assignment's
            // target); one known now is a move.
            ExprKind::Const(name) if !name.eq_ignore_ascii_case("__LINE__") => {
                let v = self.constant_into(name, Some(dst))?;
                if v != Src::reg(dst) {
                    self.emit(Op::Move { dst, src: v });
                }
            }
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Var(_) | ExprKind::Const(_) => {
                let v = self.expr(e)?;
                self.emit(Op::Move { dst, src: v });
            }
            ExprKind::VarVar { name, global } => {
                let name = self.expr(name)?;
                self.at(e.pos);
                self.emit(Op::FetchVarVar {
                    dst,
                    name,
                    quiet: false,
                    global: *global,
                    cache: NO_CACHE,
                });
            }
            ExprKind::Interp(parts) => self.interpolate(parts, dst)?,
            ExprKind::Eval(code) => {
                let at = code.pos;
                let code = self.expr(code)?;
                // PHP dates the eval from its code's expression.
                self.at(at);
                self.emit(Op::Eval { dst, code });
            }
            ExprKind::Include { kind, path } => {
                let path = self.expr(path)?;
                self.at(e.pos);
                self.emit(Op::Include {
                    dst,
                    path,
                    once: kind.once(),
                    required: kind.required(),
                });
            }
            ExprKind::Array(_, ArraySyntax::List) => return self.error("Cannot use list() as standalone expression"),
            ExprKind::Array(items, _) => {
                // PHP folds a constant array as it compiles it, unpacking
                // what it can.
                if items.iter().any(|item| item.spread) {
                    self.fold(e)?;
                }
                match self.array_constant(items)? {
                    Some(lit) => {
                        self.emit(Op::LoadArray {
                            dst,
                            lit,
                            cache: NO_CACHE,
                        });
                    }
                    None => self.array_literal(items, dst)?,
                }
            }
            ExprKind::Index { base, index } => {
                let Some(index) = index else {
                    return self.error("Cannot use [] for reading");
                };
                if let ExprKind::Index {
                    base: inner,
                    index: Some(first),
                } = &base.kind
                {
                    // Two levels at once: the inner array is only looked at.
                    let b = self.dim_base(inner, dst)?;
                    let k1 = self.expr(first)?;
                    let k2 = self.expr(index)?;
                    self.at(e.pos);
                    self.emit(Op::FetchDim2 { dst, base: b, k1, k2 });
                } else {
                    let b = self.dim_base(base, dst)?;
                    let k = self.expr(index)?;
                    self.emit(Op::FetchDim { dst, base: b, key: k });
                }
            }
            ExprKind::Call { name, args } => self.call(name, args, dst)?,
            ExprKind::CallValue { callee, args } => self.call_value(callee, args, dst)?,
            ExprKind::CallableFromName(name) => {
                let callee = self.callee(name);
                let src = self.const_str(&names::to_bytes(callee.bound()))?;
                self.at(e.pos);
                self.emit(Op::MakeCallable { dst, src });
            }
            ExprKind::CallableFromValue(callee) => {
                let src = self.expr(callee)?;
                self.at(e.pos);
                self.emit(Op::MakeCallable { dst, src });
            }
            ExprKind::Closure(f) => self.closure(f, dst)?,
            ExprKind::Refused(message) => return self.error(*message),
            ExprKind::CurlyIndex { .. } => return self.error(CURLY_INDEX),
            ExprKind::Unary { op, expr } => {
                let v = self.expr(expr)?;
                self.at(e.pos);
                let op = match op {
                    UnaryOp::Not => Op::Not { dst, src: v },
                    UnaryOp::Neg => Op::Neg { dst, src: v },
                    UnaryOp::Plus => Op::Plus { dst, src: v },
                    UnaryOp::BitNot => Op::BitNot { dst, src: v },
                };
                self.emit(op);
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, dst)?,
            ExprKind::Assign { target, value } => {
                // The move is the snapshot PHP's assignment result is: the
                // variable may change later in the same expression.
                let v = match target.kind {
                    ExprKind::Index { .. } => self.assign_dim_result(target, value)?,
                    _ => self.assign(target, value)?,
                };
                self.emit(Op::Move { dst, src: v });
            }
            ExprKind::AssignRef { target, source } => {
                self.assign_ref(target, source)?;
                let v = self.expr(target)?;
                self.emit(Op::Move { dst, src: v });
            }
            ExprKind::AssignOp { op, target, value } => self.assign_op(*op, target, value, dst)?,
            ExprKind::IncDec {
                prefix,
                increment,
                target,
            } => {
                let kind = match (prefix, increment) {
                    (true, true) => IncDec::PreInc,
                    (true, false) => IncDec::PreDec,
                    (false, true) => IncDec::PostInc,
                    (false, false) => IncDec::PostDec,
                };
                self.inc_dec(target, kind, dst)?;
            }
            ExprKind::Ternary { cond, then, els } => match then {
                Some(then) => {
                    let to_else = self.cond_jump(cond, false)?;
                    self.expr_into(then, dst)?;
                    let over = self.emit(Op::Jmp { target: 0 });
                    self.patch_all_here(&to_else);
                    self.expr_into(els, dst)?;
                    self.patch_here(over);
                }
                None => {
                    self.expr_into(cond, dst)?;
                    let done = self.emit(Op::JmpIf {
                        cond: Src::reg(dst),
                        target: 0,
                    });
                    self.expr_into(els, dst)?;
                    self.patch_here(done);
                }
            },
            ExprKind::Isset(es) => {
                let mut done = Vec::new();
                for (i, var) in es.iter().enumerate() {
                    self.isset_one(var, dst)?;
                    if i + 1 < es.len() {
                        done.push(self.emit(Op::JmpIfNot {
                            cond: Src::reg(dst),
                            target: 0,
                        }));
                    }
                }
                self.patch_all_here(&done);
            }
            ExprKind::Empty(var) if matches!(var.kind, ExprKind::Prop { .. }) => self.empty_prop(var, dst)?,
            ExprKind::Empty(var) => {
                let v = match var.kind {
                    ExprKind::Var(_)
                    | ExprKind::VarVar { .. }
                    | ExprKind::Index { .. }
                    | ExprKind::StaticProp { .. } => self.quiet(var)?,
                    // PHP's check of a curly-brace offset misses it here.
                    ExprKind::CurlyIndex { base, index } => self.quiet_dim(base, index)?,
                    _ => self.expr(var)?,
                };
                self.emit(Op::Not { dst, src: v });
            }
            ExprKind::Cast { to, expr } => {
                let kind = match to {
                    CastType::Int => CastKind::Int,
                    CastType::Float => CastKind::Float,
                    CastType::String => CastKind::String,
                    CastType::Bool => CastKind::Bool,
                    CastType::Array => CastKind::Array,
                    CastType::Unset => return self.error("The (unset) cast is no longer supported"),
                    CastType::Object => CastKind::Object,
                };
                let v = self.expr(expr)?;
                self.emit(Op::Cast { dst, src: v, kind });
            }
            ExprKind::Print(inner) => {
                let v = self.expr(inner)?;
                self.at(e.pos);
                self.emit(Op::Echo { src: v });
                let one = self.const_int(1)?;
                self.emit(Op::Move { dst, src: one });
            }
            ExprKind::Exit(status) => {
                let v = match status {
                    Some(s) => self.expr(s)?,
                    None => self.const_null()?,
                };
                self.at(e.pos);
                self.emit(Op::Exit { src: v });
                let null = self.const_null()?;
                self.emit(Op::Move { dst, src: null });
            }
            ExprKind::Silence(inner) => {
                let save = self.temp()?;
                self.emit(Op::Silence { save });
                self.expr_into(inner, dst)?;
                self.emit(Op::Unsilence { save });
            }
            ExprKind::Match { subject, arms } => self.match_expr(subject, arms, dst)?,
            ExprKind::New { class, args } => self.new_expr(*class, args, dst)?,
            ExprKind::Prop { obj, name, nullsafe } => self.prop_fetch(obj, *name, *nullsafe, dst, false)?,
            ExprKind::MethodCall {
                obj,
                name,
                args,
                nullsafe,
            } => self.method_call(obj, *name, args, *nullsafe, dst)?,
            ExprKind::StaticCall { class, name, args } => self.static_call(*class, *name, args, dst)?,
            ExprKind::ClassConst { class, name } => self.class_const(*class, name, dst)?,
            ExprKind::StaticProp { class, name } => self.static_prop_fetch(*class, *name, dst, false)?,
            ExprKind::InstanceOf { expr, class } => self.instance_of(expr, *class, dst)?,
            ExprKind::Clone(inner) => {
                let v = self.expr(inner)?;
                self.at(e.pos);
                self.emit(Op::Clone { dst, src: v });
            }
            ExprKind::Throw(inner) => {
                let v = self.expr(inner)?;
                self.at(e.pos);
                self.emit(Op::Throw { src: v });
            }
            ExprKind::MethodCallable { obj, name } => self.method_callable(obj, *name, dst)?,
            ExprKind::StaticCallable { class, name } => self.static_callable(*class, *name, dst)?,
        }
        self.release(mark);
        self.line = line;
        Ok(())
    }

    /// Compiles `e` for its side effects only.
    pub(crate) fn expr_discard(&mut self, e: &'a Expr<'a>) -> Result<()> {
        match &e.kind {
            ExprKind::Assign { target, value } => {
                self.assign_value_unused = true;
                let v = self.assign(target, value);
                self.assign_value_unused = false;
                let v = v?;
                // The reference a list with references made of its right
                // side is let go at once, as PHP frees that result.
                if let (true, Some(r)) = (list_with_refs(target), v.as_reg()) {
                    self.emit(Op::UnsetVar { var: r });
                }
            }
            ExprKind::AssignRef { target, source } => self.assign_ref(target, source)?,
            ExprKind::IncDec {
                prefix,
                increment,
                target,
            } => {
                // Pre and post are the same when the value is unused.
                if let ExprKind::Var(name) = target.kind {
                    let var = self.cv(name)?;
                    let _ = prefix;
                    self.emit(if *increment {
                        Op::IncVar { var }
                    } else {
                        Op::DecVar { var }
                    });
                    return Ok(());
                }
                let kind = match (prefix, increment) {
                    (_, true) => IncDec::PreInc,
                    (_, false) => IncDec::PreDec,
                };
                self.inc_dec(target, kind, Reg::NONE)?;
            }
            ExprKind::AssignOp { op, target, value } if *op != BinaryOp::Coalesce => {
                self.assign_op(*op, target, value, Reg::NONE)?;
            }
            ExprKind::Call { name, args } if is_foldable(&self.callee(name).target, args) => {
                // `strlen("x");` as a statement: nothing to do at run time.
            }
            ExprKind::Var(_) | ExprKind::VarVar { .. } => {
                // A statement `$x;` still reads $x (and warns if unset).
                let v = self.expr(e)?;
                let t = self.temp()?;
                self.emit(Op::Move { dst: t, src: v });
            }
            _ => {
                self.expr(e)?;
            }
        }
        Ok(())
    }

    /// A bare name: `true`/`false`/`null`, a magic constant, an internal
    /// constant (folded), or a user constant looked up at run time.
    fn constant(&mut self, name: &str) -> Result<Src> {
        self.constant_into(name, None)
    }

    /// The constant `name`: a pool constant when it is known now, else
    /// fetched when it runs, into `into` if given (else a temporary).
    fn constant_into(&mut self, name: &str, into: Option<Reg>) -> Result<Src> {
        // Magic constants are keywords, in any case.
        let magic = if name.starts_with("__") {
            name.to_ascii_uppercase()
        } else {
            String::new()
        };
        match magic.as_str() {
            "__LINE__" => return self.const_int(self.line as i64),
            "__FILE__" => return self.const_str(self.file.as_bytes()),
            "__DIR__" => {
                let dir = std::path::Path::new(self.file)
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return self.const_str(dir.as_bytes());
            }
            "__FUNCTION__" => {
                let name = cg!(self.g).op_array().name.clone();
                let name = if name.starts_with('{') && &*name != "{closure}" {
                    ""
                } else {
                    &name
                };
                return self.const_str(&names::to_bytes(name));
            }
            "__CLASS__" => return self.class_magic(),
            "__TRAIT__" => {
                let name = match &self.class {
                    Some(c) if c.kind == ClassKind::Trait => c.name.to_string(),
                    _ => String::new(),
                };
                return self.const_str(&names::to_bytes(&name));
            }
            "__METHOD__" if self.method_name.is_some() => {
                let name = self.method_name.clone().unwrap_or_default();
                return self.const_str(&names::to_bytes(&name));
            }
            // Outside a method, the function's name.
            "__METHOD__" => return self.constant("__FUNCTION__"),
            "__NAMESPACE__" => {
                let ns = self.ns.namespace().to_string();
                return self.const_str(&names::to_bytes(&ns));
            }
            _ => {}
        }
        // Not a keyword: written as it is (`\__COMPILER_HALT_OFFSET__`
        // too) or resolving to it, but not relative to a namespace.
        const HALT: &str = "__COMPILER_HALT_OFFSET__";
        if let Some(offset) = self.halt_offset {
            if name.strip_prefix('\\').unwrap_or(name) == HALT || self.ns.const_name(name).name == HALT {
                return self.const_int(offset as i64);
            }
        }
        match self.known_constant(name) {
            Some(Value::Int(n)) => self.const_int(n),
            Some(Value::Float(f)) => self.const_float(f),
            Some(Value::Bool(b)) => self.const_bool(b),
            Some(Value::Str(s)) => self.const_str(&s),
            Some(_) => self.const_null(),
            None => {
                let resolved = self.ns.const_name(name);
                let key = crate::namespaces::const_key(&resolved.name);
                let fallback = resolved.fallback.as_deref().map(|f| names::to_bytes(f).into_owned());
                let site = self.site_with_fallback(&resolved.name, &key, fallback)?;
                let t = match into {
                    Some(r) => r,
                    None => self.temp()?,
                };
                self.emit(Op::FetchConst { dst: t, site });
                Ok(Src::reg(t))
            }
        }
    }

    fn binary(&mut self, op: BinaryOp, lhs: &'a Expr<'a>, rhs: &'a Expr<'a>, dst: Reg) -> Result<()> {
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let a = self.expr(lhs)?;
                self.emit(Op::ToBool { dst, src: a });
                let done = if op == BinaryOp::And {
                    self.emit(Op::JmpIfNot {
                        cond: Src::reg(dst),
                        target: 0,
                    })
                } else {
                    self.emit(Op::JmpIf {
                        cond: Src::reg(dst),
                        target: 0,
                    })
                };
                let b = self.expr(rhs)?;
                self.emit(Op::ToBool { dst, src: b });
                self.patch_here(done);
                return Ok(());
            }
            BinaryOp::Coalesce => {
                match lhs.kind {
                    ExprKind::Var(_)
                    | ExprKind::VarVar { .. }
                    | ExprKind::Index { .. }
                    | ExprKind::Prop { .. }
                    | ExprKind::StaticProp { .. } => {
                        let v = self.quiet(lhs)?;
                        self.emit(Op::Move { dst, src: v });
                    }
                    _ => self.expr_into(lhs, dst)?,
                }
                let done = self.emit(Op::JmpIfNotNull {
                    src: Src::reg(dst),
                    target: 0,
                });
                self.expr_into(rhs, dst)?;
                self.patch_here(done);
                return Ok(());
            }
            _ => {}
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        self.at(lhs.pos);
        let op = match op {
            BinaryOp::Add => Op::Add { dst, a, b },
            BinaryOp::Sub => Op::Sub { dst, a, b },
            BinaryOp::Mul => Op::Mul { dst, a, b },
            BinaryOp::Div => Op::Div { dst, a, b },
            BinaryOp::Mod => Op::Mod { dst, a, b },
            BinaryOp::Concat => Op::Concat { dst, a, b },
            BinaryOp::Lt => Op::Lt { dst, a, b },
            BinaryOp::Le => Op::Le { dst, a, b },
            // `a > b` is `b < a`, as PHP compiles it.
            BinaryOp::Gt => Op::Lt { dst, a: b, b: a },
            BinaryOp::Ge => Op::Le { dst, a: b, b: a },
            BinaryOp::Eq => Op::Eq { dst, a, b },
            BinaryOp::Identical => Op::Identical { dst, a, b },
            BinaryOp::Xor => {
                let ta = self.temp()?;
                self.emit(Op::ToBool { dst: ta, src: a });
                let tb = self.temp()?;
                self.emit(Op::ToBool { dst: tb, src: b });
                Op::Binary {
                    op: BinOp::NotIdentical,
                    dst,
                    a: Src::reg(ta),
                    b: Src::reg(tb),
                }
            }
            other => Op::Binary {
                op: bin_op(other),
                dst,
                a,
                b,
            },
        };
        self.emit(op);
        Ok(())
    }

    /// A double-quoted string's parts, concatenated.
    fn interpolate(&mut self, parts: &'a [InterpPart<'a>], dst: Reg) -> Result<()> {
        if parts.len() > 255 {
            return self.error("minizts: too many parts in one string");
        }
        let start = self.temps(parts.len())?;
        for (i, part) in parts.iter().enumerate() {
            let r = start.plus(i as u16);
            match part {
                InterpPart::Lit(s) => {
                    let k = self.const_str(s)?;
                    self.emit(Op::Move { dst: r, src: k });
                }
                InterpPart::Expr(e) => self.expr_into(e, r)?,
            }
        }
        self.emit(Op::ConcatN {
            dst,
            start,
            n: parts.len() as u8,
        });
        Ok(())
    }

    /// `match`: the conditions in order, each compared with `===` and
    /// jumping to its arm's body; when none is identical, the `default`
    /// body (wherever it stands) or `UnhandledMatchError`.
    fn match_expr(&mut self, subject: &'a Expr<'a>, arms: &'a [MatchArm<'a>], dst: Reg) -> Result<()> {
        let subj = self.temp()?;
        self.expr_into(subject, subj)?;
        let mut to_body: Vec<Vec<Target>> = Vec::with_capacity(arms.len());
        for arm in arms {
            let mut jumps = Vec::new();
            for cond in arm.conds.unwrap_or_default() {
                let mark = self.mark();
                let v = self.expr(cond)?;
                jumps.push(self.emit(Op::JmpIdentical {
                    a: Src::reg(subj),
                    b: v,
                    if_true: true,
                    target: 0,
                }));
                self.release(mark);
            }
            to_body.push(jumps);
        }
        let to_default = if arms.iter().any(|a| a.conds.is_none()) {
            Some(self.emit(Op::Jmp { target: 0 }))
        } else {
            self.at(match_error_pos(subject, arms));
            self.emit(Op::MatchError { src: Src::reg(subj) });
            None
        };
        let mut ends = Vec::with_capacity(arms.len());
        for (arm, jumps) in arms.iter().zip(to_body) {
            for j in jumps {
                self.patch_here(j);
            }
            if arm.conds.is_none() {
                if let Some(j) = to_default {
                    self.patch_here(j);
                }
            }
            self.expr_into(arm.body, dst)?;
            ends.push(self.emit(Op::Jmp { target: 0 }));
        }
        for j in ends {
            self.patch_here(j);
        }
        Ok(())
    }

    /// An array literal whose keys are int or string literals and whose
    /// values are scalar literals or such arrays (no `&`, no `...`) as one
    /// of the function's constant literals (`LOAD_ARRAY`'s), as PHP makes
    /// such an array when it compiles it; `None` for any other.
    fn array_constant(&mut self, items: &'a [ArrayItem<'a>]) -> Result<Option<u16>> {
        // Nested literals kept before an element turns out not constant
        // are dropped again (the array is compiled element by element,
        // its nested literals with it).
        let mark = cg!(self.g).op_array().arrays.len();
        let lit = self.array_constant_items(items)?;
        if lit.is_none() {
            cg!(self.g).op_array().arrays.truncate(mark);
        }
        Ok(lit)
    }

    /// [`Self::array_constant`] before its clean-up.
    fn array_constant_items(&mut self, items: &'a [ArrayItem<'a>]) -> Result<Option<u16>> {
        use minizts_core::bytecode::{ArrayLiteral, LiteralItem, LiteralValue};
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Some(value) = item.value else { return Ok(None) };
            if item.by_ref || item.spread {
                return Ok(None);
            }
            let key = match item.key {
                None => None,
                // (The largest int key leaves no next key: a later `[v]`
                // is the general path's error.)
                Some(k) => match self.literal_scalar(k) {
                    Some(Value::Int(n)) if n != i64::MAX => Some(self.const_int(n)?),
                    Some(Value::Str(s)) if minizts_core::array::canonical_int(&s) != Some(i64::MAX) => {
                        Some(self.const_str(&s)?)
                    }
                    _ => return Ok(None),
                },
            };
            let value = match &value.kind {
                ExprKind::Array(inner, syntax) if *syntax != ArraySyntax::List => {
                    match self.array_constant_items(inner)? {
                        Some(i) => LiteralValue::Array(i),
                        None => return Ok(None),
                    }
                }
                _ => match self.literal_scalar(value) {
                    Some(v) => LiteralValue::Const(self.const_value(v)?.index() as u16),
                    None => return Ok(None),
                },
            };
            out.push(LiteralItem {
                key: key.map(|k| k.index() as u16),
                value,
            });
        }
        let index = cg!(self.g, |cg| {
            let arrays = &mut cg.op_array().arrays;
            arrays.push(ArrayLiteral {
                items: out.into_boxed_slice(),
            });
            arrays.len() - 1
        });
        match u16::try_from(index) {
            Ok(i) => Ok(Some(i)),
            Err(_) => self.too_large(),
        }
    }

    /// The value of a scalar literal (`1`, `-1.5`, `'a'`, `true`, a
    /// constant the compiler knows), which compiles to a constant and no
    /// code; `None` for any other expression.
    fn literal_scalar(&self, e: &'a Expr<'a>) -> Option<Value> {
        match &e.kind {
            ExprKind::Int(n) => Some(Value::Int(*n)),
            ExprKind::Float(f) => Some(Value::Float(*f)),
            ExprKind::Str(s) => Some(Value::Str(minizts_core::PhpStr::from(*s))),
            ExprKind::Unary { op: UnaryOp::Neg, expr } => match &expr.kind {
                ExprKind::Int(n) => n.checked_neg().map(Value::Int),
                ExprKind::Float(f) => Some(Value::Float(-f)),
                _ => None,
            },
            ExprKind::Const(name) if !name.eq_ignore_ascii_case("__LINE__") => self.known_constant(name),
            _ => None,
        }
    }

    /// A constant of the pool holding `v` (a scalar or a string).
    fn const_value(&mut self, v: Value) -> Result<Src> {
        match v {
            Value::Null => self.const_null(),
            Value::Bool(b) => self.const_bool(b),
            Value::Int(n) => self.const_int(n),
            Value::Float(f) => self.const_float(f),
            Value::Str(s) => self.const_str(&s),
            _ => self.error("minizts: internal error: a constant that is not a scalar"),
        }
    }

    fn array_literal(&mut self, items: &'a [ArrayItem<'a>], dst: Reg) -> Result<()> {
        // Built in a temporary so that `$a = [$a]` reads the old `$a`.
        let arr = self.temp()?;
        self.emit(Op::NewArray {
            dst: arr,
            capacity: items.len().min(u16::MAX as usize) as u16,
        });
        for item in items {
            let Some(value) = item.value else {
                return self.error("Cannot use empty array elements in arrays");
            };
            let mark = self.mark();
            if item.by_ref {
                // `[&$x]`, `['k' => &$a[1]]`: the key first, then the
                // slot made a reference, bound into the new array.
                let k = self.temp()?;
                match item.key {
                    Some(key) => self.expr_into(key, k)?,
                    None => {
                        self.emit(Op::UnsetVar { var: k });
                    }
                }
                let r = self.reference_to(value)?;
                self.emit(Op::AssignDimRef {
                    var: arr,
                    keys: k,
                    depth: 1,
                    src: r,
                });
            } else if item.spread {
                let v = self.expr(value)?;
                self.emit(Op::ArraySpread { arr, src: v });
            } else if let Some(key) = item.key {
                let k = self.expr(key)?;
                let v = self.expr(value)?;
                self.emit(Op::ArraySet { arr, key: k, src: v });
            } else {
                let v = self.expr(value)?;
                self.emit(Op::ArrayPush { arr, src: v });
            }
            self.release(mark);
        }
        self.emit(Op::Move {
            dst,
            src: Src::reg(arr),
        });
        Ok(())
    }

    /// Compiles the arguments of a call of the function named `callee`
    /// into `n` consecutive registers.
    /// With `prefer_ref`, a by-reference argument that is not a variable
    /// goes by value.
    fn args(
        &mut self,
        callee: &str,
        args: &'a [Arg<'a>],
        by_ref: impl Fn(usize) -> bool,
        prefer_ref: bool,
    ) -> Result<Reg> {
        if args.len() > MAX_ARGS {
            return self.error("minizts: internal error: too many arguments for one call instruction");
        }
        if args.iter().any(|a| a.spread) {
            return self.error("minizts does not support argument unpacking (...$args) yet");
        }
        let start = self.temps(args.len())?;
        for (i, a) in args.iter().enumerate() {
            let r = start.plus(i as u16);
            let mark = self.mark();
            match &a.value.kind {
                // `$GLOBALS` is a read-only copy: a value; so is `$this`.
                ExprKind::Var(name) if *name == "GLOBALS" || *name == "this" => self.expr_into(a.value, r)?,
                ExprKind::Var(_) if by_ref(i) => self.reference_into(a.value, r)?,
                _ if by_ref(i) && referenceable(a.value) => self.reference_into(a.value, r)?,
                // A list assignment with references gives the reference
                // its right side became, which a by-reference parameter
                // takes as it is.
                ExprKind::Assign { target, value } if by_ref(i) && list_with_refs(target) => {
                    let v = self.assign(target, value)?;
                    if let Some(var) = v.as_reg() {
                        self.emit(Op::MakeRef { dst: r, var });
                    }
                }
                // PHP passes a call's result (with a notice minizts does
                // not print yet) and a reference assignment's reference;
                // except the calls it compiles to instructions, which give
                // a value like any expression.
                ExprKind::Call { name, args } if !by_ref(i) || !self.special_call(name, args) => {
                    self.expr_into(a.value, r)?
                }
                ExprKind::CallValue { .. }
                | ExprKind::MethodCall { .. }
                | ExprKind::StaticCall { .. }
                | ExprKind::AssignRef { .. } => self.expr_into(a.value, r)?,
                _ if by_ref(i) && !prefer_ref => {
                    self.expr_into(a.value, r)?;
                    self.cannot_pass_by_ref(callee, a.value, i, r)?;
                }
                _ => self.expr_into(a.value, r)?,
            }
            self.release(mark);
        }
        Ok(start)
    }

    /// Any other value for a by-reference parameter: PHP throws "f():
    /// Argument #N ($x) cannot be passed by reference" when the call
    /// sends it, after the arguments before it are evaluated and before
    /// the ones after it. `SendVarEx` with the value's own register as
    /// its variable is the VM's form of that check: it looks the
    /// parameter up again when it runs (a function declared twice, in
    /// branches, may differ from the declaration the compiler saw), throws
    /// with the parameter's name if it is by reference, and otherwise
    /// leaves the value as it is.
    fn cannot_pass_by_ref(&mut self, callee: &str, value: &'a Expr<'a>, i: usize, r: Reg) -> Result<()> {
        let c = self.temp()?;
        let name = self.const_str(&names::to_bytes(callee))?;
        self.emit(Op::Move { dst: c, src: name });
        self.at(value.pos);
        self.emit(Op::SendVarEx {
            dst: r,
            var: r,
            callee: c,
            argno: i as u8,
            method: false,
        });
        Ok(())
    }

    /// `callee(...)` with `...$spread` or named arguments, or more than
    /// one instruction's argument count, where `callee` is a function's
    /// name: the arguments are gathered into an array, which the call
    /// unpacks when it runs. Whether an argument goes by reference is
    /// decided when it is sent, as PHP's `SEND_VAR_EX` and `SEND_UNPACK`
    /// decide, since which function `callee` names is known only then.
    pub(crate) fn call_spread(&mut self, callee: Src, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        let line = self.line;
        self.check_arg_order(args)?;
        let c = self.temp()?;
        self.emit(Op::Move { dst: c, src: callee });
        self.spread_args(c, false, args, dst, line)
    }

    /// The same for a call already resolved into `callee`…`callee+2` (by
    /// `INIT_METHOD`, `INIT_STATIC_METHOD`, `NEW` or `INIT_DYNAMIC_CALL`,
    /// before the arguments are evaluated, as without the array).
    pub(crate) fn call_spread_prepared(&mut self, callee: Reg, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        let line = self.line;
        self.check_arg_order(args)?;
        self.spread_args(callee, true, args, dst, line)
    }

    /// The argument array of a `CALL_SPREAD` of `c` (with `method`, the
    /// first of three prepared registers), then the call.
    fn spread_args(&mut self, c: Reg, method: bool, args: &'a [Arg<'a>], dst: Reg, line: u32) -> Result<()> {
        let arr = self.temp()?;
        self.emit(Op::NewArray { dst: arr, capacity: 0 });
        for (i, a) in args.iter().enumerate() {
            let mark = self.mark();
            if a.spread {
                match &a.value.kind {
                    ExprKind::Var(name) if *name != "GLOBALS" => {
                        let var = self.cv(name)?;
                        self.at(a.value.pos);
                        self.emit(Op::SendUnpack {
                            arr,
                            src: var,
                            callee: c,
                            method,
                        });
                    }
                    _ => {
                        let v = self.expr(a.value)?;
                        self.emit(Op::ArraySpread { arr, src: v });
                    }
                }
            } else {
                // Positional arguments come first (`check_arg_order`), so
                // `i` is the position of one.
                let which = match a.name {
                    Some(name) => self.const_str(name.as_bytes())?,
                    None => self.const_int(i as i64)?,
                };
                let r = self.temp()?;
                self.send_arg(a.value, c, which, r, method)?;
                match a.name {
                    Some(name) => {
                        let name = self.const_str_index(name.as_bytes())?;
                        self.emit(Op::ArgSet { arr, name, src: r });
                    }
                    None => {
                        self.emit(Op::ArgPush { arr, src: r });
                    }
                }
            }
            self.release(mark);
        }
        self.line = line;
        self.emit(Op::CallSpread {
            dst,
            callee: c,
            args: arr,
            method,
        });
        Ok(())
    }

    /// Compiles argument `e` (the one `which` names: its position or its
    /// name) of the call of the callable in `c` into `r`: a variable or
    /// element by reference when the parameter is by reference at run
    /// time, else by value.
    /// With `method`, `c` is the first of the three registers of a
    /// resolved method call.
    pub(crate) fn send_arg(&mut self, e: &'a Expr<'a>, c: Reg, which: Src, r: Reg, method: bool) -> Result<()> {
        let variable = match e.kind {
            ExprKind::Var(name) => name != "GLOBALS" && name != "this",
            _ => referenceable(e),
        };
        if !variable {
            return self.expr_into(e, r);
        }
        let by_val = self.emit(Op::JmpArgByVal {
            callee: c,
            arg: which,
            target: 0,
            method,
        });
        let mark = self.mark();
        if matches!(e.kind, ExprKind::Index { .. }) && !self.writable_dim(e) {
            // `$f([0, 1][0])` with `$f` taking a reference: PHP's error
            // when the argument is sent.
            self.at(e.pos);
            let message = self.const_str_index(b"Cannot use temporary expression in write context")?;
            self.emit(Op::ThrowError { message });
        } else {
            self.reference_into(e, r)?;
        }
        self.release(mark);
        let over = self.emit(Op::Jmp { target: 0 });
        self.patch_here(by_val);
        self.expr_into(e, r)?;
        self.patch_here(over);
        Ok(())
    }

    /// PHP's compile-time rules for the order of named, positional and
    /// unpacked arguments.
    fn check_arg_order(&self, args: &'a [Arg<'a>]) -> Result<()> {
        let (mut named, mut unpacked) = (false, false);
        for (i, a) in args.iter().enumerate() {
            if a.spread {
                if named {
                    return self.error("Cannot use argument unpacking after named arguments");
                }
                unpacked = true;
            } else if let Some(name) = a.name {
                if args[..i].iter().any(|b| b.name == Some(name)) {
                    return self.error(format!("Duplicate named parameter ${name}"));
                }
                named = true;
            } else if named {
                return self.error("Cannot use positional argument after named argument");
            } else if unpacked {
                return self.error("Cannot use positional argument after argument unpacking");
            }
        }
        Ok(())
    }

    fn call(&mut self, name: &'a str, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        let callee = self.callee(name);
        if callee.target.eq_ignore_ascii_case("assert") {
            let internal = cg!(self.g).function_table.get(b"assert".as_slice()).copied();
            if let Some(f) = internal {
                return self.assert_call(callee, f.id, args, dst);
            }
        }
        self.call_by_name(callee, args, dst)
    }

    /// What a call of the function written `written` calls, as far as
    /// the compiler can tell (see [`Callee`]).
    pub(crate) fn callee(&self, written: &str) -> Callee<'a> {
        let resolved = self.ns.function_name(written);
        let own = crate::function_key(&resolved.name);
        let declared = self.decls.get(own.as_slice()).copied();
        match resolved.fallback {
            // The namespace's own function when this file declares one;
            // otherwise a builtin is bound now and any other name waits
            // for the run.
            Some(global) if declared.is_none() => {
                let key = crate::function_key(&global);
                if cg!(self.g).function_table.contains_key(key.as_slice()) {
                    return Callee {
                        decl: None,
                        target: global,
                        fallback: None,
                        own: false,
                    };
                }
                Callee {
                    decl: self.decls.get(key.as_slice()).copied(),
                    target: resolved.name,
                    fallback: Some(global),
                    own: false,
                }
            }
            fallback => Callee {
                own: declared.is_some(),
                decl: declared,
                target: resolved.name,
                fallback,
            },
        }
    }

    /// `assert(…)` as PHP compiles it (`zend_compile_assert`): skipped,
    /// giving true, while `zend.assertions` is not 1, and given the
    /// description `assert(<its expression>)` when it has none.
    fn assert_call(&mut self, name: Callee<'a>, id: u16, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        let line = self.line;
        let check = self.emit(Op::AssertCheck { target: 0 });
        match args {
            [a] if !a.spread && a.name.is_none() => {
                let start = self.temps(2)?;
                self.expr_into(a.value, start)?;
                let message = self.const_str(&crate::export::assert_message(a.value))?;
                self.emit(Op::Move {
                    dst: start.plus(1),
                    src: message,
                });
                self.line = line;
                self.emit(Op::CallBuiltin {
                    dst,
                    id,
                    args: start,
                    argc: 2,
                });
            }
            _ => self.call_by_name(name, args, dst)?,
        }
        let over = self.emit(Op::Jmp { target: 0 });
        self.patch_here(check);
        let t = self.const_bool(true)?;
        self.emit(Op::Move { dst, src: t });
        self.patch_here(over);
        Ok(())
    }

    fn call_by_name(&mut self, callee: Callee<'a>, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        if args.len() > MAX_ARGS || args.iter().any(|a| a.spread || a.name.is_some()) {
            let callee = self.const_str(&names::to_bytes(callee.bound()))?;
            return self.call_spread(callee, args, dst);
        }
        let name = callee.target.as_str();
        let lower = name.to_ascii_lowercase();
        let key = crate::function_key(name);
        let line = self.line;
        let internal = cg!(self.g).function_table.get(key.as_slice()).copied();
        if internal.is_some() && self.fold_call(&lower, args, dst)? {
            return Ok(());
        }
        match internal {
            Some(f) => {
                if self.builtin_instruction(&lower, f.id, args, dst)? {
                    return Ok(());
                }
                let start = self.args(name, args, |i| f.param_by_ref(i), f.prefer_ref)?;
                self.line = line;
                self.emit(Op::CallBuiltin {
                    dst,
                    id: f.id,
                    args: start,
                    argc: args.len() as u8,
                });
            }
            None => {
                let decl = callee.decl;
                let by_ref = |i: usize| {
                    decl.is_some_and(|d| match d.params.get(i) {
                        Some(p) => p.by_ref,
                        None => d.params.last().is_some_and(|p| p.variadic && p.by_ref),
                    })
                };
                let start = self.args(name, args, by_ref, false)?;
                self.line = line;
                let fallback = callee.fallback.as_deref().map(crate::function_key);
                let site = self.site_with_fallback(name, &key, fallback)?;
                self.emit(Op::CallUser {
                    dst,
                    site,
                    args: start,
                    argc: args.len() as u8,
                });
            }
        }
        Ok(())
    }

    /// A call of a builtin that has an instruction of its own (`Op::Strlen`
    /// and those after it), with the number of arguments the instruction
    /// takes, compiled to it: the arguments are read where they are.
    /// Returns whether it was. A two-argument one needs a second argument
    /// whose evaluation changes nothing (a variable or a literal): the
    /// first is then read when the call runs, as a call would have sent it.
    fn builtin_instruction(&mut self, name: &str, id: u16, args: &'a [Arg<'a>], dst: Reg) -> Result<bool> {
        type Two = fn(Reg, Src, Src, u16, bool) -> Op;
        let line = self.line;
        let mark = self.mark();
        match args {
            [] if name == "func_num_args" && self.in_function => {
                self.emit(Op::FuncNumArgs { dst, id });
            }
            [x] => {
                // What the call compiles to; a name not listed stays a call.
                enum One {
                    Test(u16),
                    Cast(CastKind),
                    Builtin(fn(Reg, Src, u16, bool) -> Op),
                }
                let what = match (type_check_mask(name), name) {
                    (Some(mask), _) => One::Test(mask),
                    // PHP compiles these to its cast (`ZEND_CAST`): the
                    // same conversion, warnings and errors.
                    (None, "intval") => One::Cast(CastKind::Int),
                    (None, "floatval" | "doubleval") => One::Cast(CastKind::Float),
                    (None, "strval") => One::Cast(CastKind::String),
                    (None, "boolval") => One::Cast(CastKind::Bool),
                    (None, "strlen") => One::Builtin(|dst, arg, id, tmp| Op::Strlen { dst, arg, id, tmp }),
                    (None, "count" | "sizeof") => One::Builtin(|dst, arg, id, tmp| Op::Count { dst, arg, id, tmp }),
                    (None, "ord") => One::Builtin(|dst, arg, id, tmp| Op::Ord { dst, arg, id, tmp }),
                    (None, "chr") => One::Builtin(|dst, arg, id, tmp| Op::Chr { dst, arg, id, tmp }),
                    (None, "abs") => One::Builtin(|dst, arg, id, tmp| Op::Abs { dst, arg, id, tmp }),
                    (None, "sqrt") => One::Builtin(|dst, arg, id, tmp| Op::Sqrt { dst, arg, id, tmp }),
                    (None, "floor") => One::Builtin(|dst, arg, id, tmp| Op::Floor { dst, arg, id, tmp }),
                    (None, "ceil") => One::Builtin(|dst, arg, id, tmp| Op::Ceil { dst, arg, id, tmp }),
                    _ => return Ok(false),
                };
                if x.spread {
                    return Ok(false);
                }
                let arg = self.expr(x.value)?;
                let tmp = self.is_temp(arg);
                self.line = line;
                self.emit(match what {
                    One::Test(mask) => Op::TypeCheck {
                        dst,
                        arg,
                        id,
                        tmp,
                        mask,
                    },
                    One::Cast(kind) => Op::Cast { dst, src: arg, kind },
                    One::Builtin(make) => make(dst, arg, id, tmp),
                });
            }
            [x, y] => {
                let make: Two = match name {
                    "intdiv" => |dst, a, b, id, tmp| Op::Intdiv { dst, a, b, id, tmp },
                    "min" => |dst, a, b, id, tmp| Op::Min { dst, a, b, id, tmp },
                    "max" => |dst, a, b, id, tmp| Op::Max { dst, a, b, id, tmp },
                    _ => return Ok(false),
                };
                let inert = matches!(y.value.kind, ExprKind::Var(_) | ExprKind::Int(_) | ExprKind::Float(_));
                if x.spread || y.spread || !inert {
                    return Ok(false);
                }
                let a = self.expr(x.value)?;
                let b = self.expr(y.value)?;
                let tmp = self.is_temp(a);
                self.line = line;
                self.emit(make(dst, a, b, id, tmp));
            }
            _ => return Ok(false),
        }
        self.release(mark);
        Ok(true)
    }

    /// Whether operand `s` is a temporary register (what an expression
    /// left there is released after its one use).
    pub(crate) fn is_temp(&mut self, s: Src) -> bool {
        s.as_reg().is_some_and(|r| !cg!(self.g).op_array().is_cv(r))
    }

    /// Evaluates a few pure builtins at compile time when their argument
    /// is a literal, as PHP's compiler does (`strlen("hallo")` is 5 before
    /// the script runs). Returns whether it did.
    fn fold_call(&mut self, name: &str, args: &'a [Arg<'a>], dst: Reg) -> Result<bool> {
        let [arg] = args else { return Ok(false) };
        if arg.spread {
            return Ok(false);
        }
        let folded = match (name, &arg.value.kind) {
            ("strlen", ExprKind::Str(s)) => self.const_int(s.len() as i64)?,
            ("ord", ExprKind::Str(s)) => self.const_int(s.first().copied().unwrap_or(0) as i64)?,
            ("chr", ExprKind::Int(n)) => self.const_str(&[n.rem_euclid(256) as u8])?,
            _ => return Ok(false),
        };
        self.emit(Op::Move { dst, src: folded });
        Ok(true)
    }

    fn call_value(&mut self, callee: &'a Expr<'a>, args: &'a [Arg<'a>], dst: Reg) -> Result<()> {
        let line = self.line;
        // The callable is resolved before the arguments are evaluated, into
        // three registers as a method call's (`INIT_DYNAMIC_CALL`), so the
        // sends and the call read what it found.
        let c = self.temps(3)?;
        let src = match callee.kind {
            ExprKind::Var(name) if name != "this" && name != "GLOBALS" => Src::reg(self.cv(name)?),
            _ => {
                self.in_chain = true;
                self.expr_into(callee, c)?;
                Src::reg(c)
            }
        };
        self.line = line;
        self.emit(Op::InitDynamicCall { callee: c, src });
        if args.len() > MAX_ARGS || args.iter().any(|a| a.spread || a.name.is_some()) {
            return self.call_spread_prepared(c, args, dst);
        }
        // The sends as a method call's: `INIT_DYNAMIC_CALL` fills the same
        // three registers.
        let (start, vals) = self.method_args(c, args)?;
        self.line = line;
        self.emit(Op::CallValue {
            dst,
            callee: c,
            args: start,
            argc: args.len() as u8,
            vals,
        });
        Ok(())
    }

    fn closure(&mut self, f: &'a FunctionDecl<'a>, dst: Reg) -> Result<()> {
        // PHP binds the `use` variables in the enclosing function before it
        // compiles the closure, each checked at the line the one before
        // it left current.
        for (i, u) in f.uses.iter().enumerate() {
            if u.name == "this" {
                return self.error("Cannot use $this as lexical variable");
            }
            // `$GLOBALS` is an auto-global too, for PHP.
            if u.name == "GLOBALS" || minizts_core::superglobals::is_auto_global(u.name) {
                return self.error("Cannot use auto-global as lexical variable");
            }
            if f.uses[..i].iter().any(|v| v.name == u.name) {
                return self.error(format!("Cannot use variable ${} twice", u.name));
            }
            self.line = self.line_of(u.pos);
        }
        let id = self.compile_function(f)?;
        let captures = vars::captures(f);
        if captures.len() > 255 {
            return self.error("minizts: a closure captures too many variables");
        }
        let is_arrow = matches!(f.body, FunctionBody::Arrow(_));
        let start = self.temps(captures.len())?;
        for (i, c) in captures.iter().enumerate() {
            let r = start.plus(i as u16);
            let var = self.cv(c.name)?;
            if c.by_ref {
                self.emit(Op::MakeRef { dst: r, var });
            } else if is_arrow {
                // Arrow functions take what exists, silently.
                self.emit(Op::Capture { dst: r, var });
            } else {
                self.emit(Op::Move {
                    dst: r,
                    src: Src::reg(var),
                });
            }
        }
        self.emit(Op::MakeClosure {
            dst,
            func: id,
            captures: start,
            n: captures.len() as u8,
        });
        Ok(())
    }

    /// `isset(var)` of one variable or element into `dst`.
    fn isset_one(&mut self, var: &'a Expr<'a>, dst: Reg) -> Result<()> {
        let mark = self.mark();
        match var.kind {
            ExprKind::Var(_) | ExprKind::VarVar { .. } | ExprKind::Index { .. } | ExprKind::StaticProp { .. } => {
                let v = self.quiet(var)?;
                self.emit(Op::IsSet { dst, src: v });
            }
            ExprKind::Prop { .. } => self.isset_prop(var, dst)?,
            // PHP's check of a curly-brace offset misses it here.
            ExprKind::CurlyIndex { base, index } => {
                let v = self.quiet_dim(base, index)?;
                self.emit(Op::IsSet { dst, src: v });
            }
            _ => {
                return self.error(
                    "Cannot use isset() on the result of an expression (you can use \"null !== expression\" instead)",
                )
            }
        }
        self.release(mark);
        Ok(())
    }

    /// Reads a variable, element or property without warnings (null if
    /// missing).
    pub(crate) fn quiet(&mut self, e: &'a Expr<'a>) -> Result<Src> {
        let in_chain = std::mem::take(&mut self.in_chain);
        if !in_chain && has_nullsafe(e) {
            let t = self.temp()?;
            let null = self.const_null()?;
            self.short_circuit(t, null, |c| {
                let v = c.quiet_element(e, true)?;
                c.emit(Op::Move { dst: t, src: v });
                Ok(())
            })?;
            return Ok(Src::reg(t));
        }
        self.quiet_element(e, in_chain)
    }

    /// `quiet` of one element of a chain; `in_chain`: it is part of the
    /// chain of the expression being read.
    fn quiet_element(&mut self, e: &'a Expr<'a>, in_chain: bool) -> Result<Src> {
        match &e.kind {
            ExprKind::Prop { obj, name, nullsafe } => {
                let t = self.temp()?;
                self.prop_fetch(obj, *name, *nullsafe, t, true)?;
                Ok(Src::reg(t))
            }
            ExprKind::StaticProp { class, name } => {
                let t = self.temp()?;
                self.static_prop_fetch(*class, *name, t, true)?;
                Ok(Src::reg(t))
            }
            ExprKind::Var("GLOBALS") => self.expr(e),
            ExprKind::Var(name) => {
                let var = self.cv(name)?;
                let t = self.temp()?;
                self.emit(Op::Quiet { dst: t, var });
                Ok(Src::reg(t))
            }
            ExprKind::VarVar { name, global } => {
                let name = self.expr(name)?;
                let t = self.temp()?;
                self.at(e.pos);
                self.emit(Op::FetchVarVar {
                    dst: t,
                    name,
                    quiet: true,
                    global: *global,
                    cache: NO_CACHE,
                });
                Ok(Src::reg(t))
            }
            ExprKind::Index {
                base,
                index: Some(index),
            } => self.quiet_dim(base, index),
            ExprKind::Index { index: None, .. } => self.error("Cannot use [] for reading"),
            _ if in_chain => self.chain_expr(e),
            _ => self.expr(e),
        }
    }

    /// Reads `base[index]` without warnings.
    fn quiet_dim(&mut self, base: &'a Expr<'a>, index: &'a Expr<'a>) -> Result<Src> {
        let b = match base.kind {
            // The fetch itself reads an unset base quietly.
            ExprKind::Var(name) => Src::reg(self.cv(name)?),
            _ => {
                self.in_chain = true;
                let b = self.quiet(base);
                self.in_chain = false;
                b?
            }
        };
        let k = self.expr(index)?;
        // A temporary base gets the element (see `dim_base`).
        let t = match b.as_reg().filter(|_| self.is_temp(b)) {
            Some(t) => t,
            None => self.temp()?,
        };
        self.emit(Op::FetchDimQuiet {
            dst: t,
            base: b,
            key: k,
        });
        Ok(Src::reg(t))
    }

    /// The base of `base[…]` read into `dst`: computed into `dst` itself
    /// when it is a value of its own (a property, a call's result, an
    /// element) and `dst` a temporary, so that the fetch's result replaces
    /// it. A temporary copy of an array left behind would hold a count on
    /// it, and the next write to the array it came from would copy it
    /// whole (PHP frees a `TMP` operand as it is used).
    fn dim_base(&mut self, base: &'a Expr<'a>, dst: Reg) -> Result<Src> {
        let own_value = !matches!(
            base.kind,
            ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::Str(_)
                | ExprKind::Var(_)
                | ExprKind::Const(_)
                | ExprKind::ClassConst { .. }
        );
        if !own_value || dst.is_none() || !self.is_temp(Src::reg(dst)) {
            return self.chain_expr(base);
        }
        self.in_chain = true;
        let r = self.expr_into(base, dst);
        self.in_chain = false;
        r?;
        Ok(Src::reg(dst))
    }
}

/// PHP's error for a curly-brace offset (see [`ExprKind::CurlyIndex`]).
pub(crate) const CURLY_INDEX: &str = "Array and string offset access syntax with curly braces is no longer supported";

/// Whether `name(args)` is a call [`Compiler::fold_call`] evaluates at
/// compile time.
fn is_foldable(name: &str, args: &[Arg<'_>]) -> bool {
    let name = name.strip_prefix('\\').unwrap_or(name).to_ascii_lowercase();
    matches!(
        (name.as_str(), args),
        (
            "strlen" | "ord",
            [Arg {
                value: Expr {
                    kind: ExprKind::Str(_),
                    ..
                },
                spread: false,
                name: None
            }]
        ) | (
            "chr",
            [Arg {
                value: Expr {
                    kind: ExprKind::Int(_),
                    ..
                },
                spread: false,
                name: None
            }]
        )
    )
}

/// The generic instruction's operator for an AST operator.
pub(crate) fn bin_op(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Mod => BinOp::Mod,
        BinaryOp::Pow => BinOp::Pow,
        BinaryOp::Concat => BinOp::Concat,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::BitAnd => BinOp::BitAnd,
        BinaryOp::BitOr => BinOp::BitOr,
        BinaryOp::BitXor => BinOp::BitXor,
        BinaryOp::Eq => BinOp::Eq,
        BinaryOp::NotEq => BinOp::NotEq,
        BinaryOp::Identical => BinOp::Identical,
        BinaryOp::NotIdentical => BinOp::NotIdentical,
        BinaryOp::Lt => BinOp::Lt,
        BinaryOp::Le => BinOp::Le,
        BinaryOp::Spaceship => BinOp::Spaceship,
        BinaryOp::Gt | BinaryOp::Ge | BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Coalesce => {
            unreachable!("{op:?} is compiled specially")
        }
    }
}

/// The line PHP gives `UnhandledMatchError`: that of the last code compiled
/// before its `MATCH_ERROR`. PHP compiles a match whose conditions are all
/// int literals (two or more) or all string literals (five or more) to a
/// jump table, leaving the subject last; otherwise the last condition.
fn match_error_pos(subject: &Expr<'_>, arms: &[MatchArm<'_>]) -> u32 {
    let conds: Vec<&Expr<'_>> = arms
        .iter()
        .flat_map(|a| a.conds.unwrap_or_default().iter().copied())
        .collect();
    let int = |e: &Expr<'_>| match &e.kind {
        ExprKind::Int(_) => true,
        ExprKind::Unary { op: UnaryOp::Neg, expr } => matches!(expr.kind, ExprKind::Int(_)),
        _ => false,
    };
    let jump_table = (conds.len() >= 2 && conds.iter().all(|c| int(c)))
        || (conds.len() >= 5 && conds.iter().all(|c| matches!(c.kind, ExprKind::Str(_))));
    match conds.last() {
        Some(last) if !jump_table => last.pos,
        _ => subject.pos,
    }
}
