//! Which of a function's variables can ever hold a PHP reference.
//!
//! A write to a variable that holds a reference must go through it, so the
//! VM's plain register writes (an `Add` whose destination is `$x`) are only
//! correct for variables that never hold one. Inside a function, a
//! variable becomes a reference only through something the function itself
//! says: `global`, `static`, `=&`, `foreach (… as &$v)`, passing it to a
//! by-reference parameter (known at compile time for named functions and
//! builtins; assumed for calls through a value), `use (&$v)`, or being a
//! by-reference parameter or by-reference capture itself. Top-level code
//! is different: any function's `global $x` can turn its variables into
//! references, so there every variable counts as possibly a reference.

use hashbrown::HashSet;
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::*;

use crate::Compiler;

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// The variables of function `f` that may hold a reference.
    pub(crate) fn ref_vars(&mut self, f: &'a FunctionDecl<'a>) -> HashSet<&'a str> {
        let mut out = HashSet::new();
        for p in f.params.iter().filter(|p| p.by_ref) {
            out.insert(p.name);
        }
        for u in f.uses.iter().filter(|u| u.by_ref) {
            out.insert(u.name);
        }
        match &f.body {
            FunctionBody::Block(stmts) => {
                for s in stmts.iter() {
                    self.refs_stmt(s, &mut out);
                }
            }
            FunctionBody::Arrow(e) => self.refs_expr(e, &mut out),
            FunctionBody::None => {}
        }
        out
    }

    /// The arguments of a call whose callee is known only at run time
    /// (a method): any variable may go by reference.
    fn refs_runtime_args(&mut self, args: &'a [Arg<'a>], out: &mut HashSet<&'a str>) {
        for a in args.iter() {
            if let ExprKind::Var(n) = a.value.kind {
                out.insert(n);
            }
            self.refs_expr(a.value, out);
        }
    }

    fn refs_class(&mut self, class: &ClassRef<'a>, out: &mut HashSet<&'a str>) {
        if let ClassRef::Expr(e) = class {
            self.refs_expr(e, out);
        }
    }

    fn refs_name(&mut self, name: &MemberName<'a>, out: &mut HashSet<&'a str>) {
        if let MemberName::Expr(e) = name {
            self.refs_expr(e, out);
        }
    }

    fn refs_stmt(&mut self, s: &'a Stmt<'a>, out: &mut HashSet<&'a str>) {
        match &s.kind {
            StmtKind::Expr(e) => self.refs_expr(e, out),
            StmtKind::Echo(es) | StmtKind::Unset(es) => es.iter().for_each(|e| self.refs_expr(e, out)),
            StmtKind::If { cond, then, els } => {
                self.refs_expr(cond, out);
                self.refs_stmt(then, out);
                if let Some(e) = els {
                    self.refs_stmt(e, out);
                }
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.refs_expr(cond, out);
                self.refs_stmt(body, out);
            }
            StmtKind::For { init, cond, step, body } => {
                for e in init.iter().chain(cond.iter()).chain(step.iter()) {
                    self.refs_expr(e, out);
                }
                self.refs_stmt(body, out);
            }
            StmtKind::Foreach {
                subject,
                key,
                value,
                by_ref,
                body,
            } => {
                if *by_ref {
                    if let ExprKind::Var(n) = subject.kind {
                        out.insert(n);
                    }
                    if let ExprKind::Var(n) = value.kind {
                        out.insert(n);
                    }
                }
                self.refs_expr(subject, out);
                if let Some(k) = key {
                    self.refs_expr(k, out);
                }
                self.refs_expr(value, out);
                self.refs_stmt(body, out);
            }
            StmtKind::Switch { subject, cases } => {
                self.refs_expr(subject, out);
                for c in cases.iter() {
                    if let Some(t) = c.test {
                        self.refs_expr(t, out);
                    }
                    c.body.iter().for_each(|s| self.refs_stmt(s, out));
                }
            }
            StmtKind::Return(Some(e)) => self.refs_expr(e, out),
            StmtKind::Global(names) => out.extend(names.iter().copied()),
            StmtKind::GlobalByName(name) => self.refs_expr(name, out),
            StmtKind::Static(vars) => {
                for v in vars.iter() {
                    out.insert(v.name);
                    if let Some(i) = v.init {
                        self.refs_expr(i, out);
                    }
                }
            }
            StmtKind::Const(items) => items.iter().for_each(|(_, e)| self.refs_expr(e, out)),
            StmtKind::Block(stmts) => stmts.iter().for_each(|s| self.refs_stmt(s, out)),
            StmtKind::Try { body, catches, finally } => {
                body.iter().for_each(|s| self.refs_stmt(s, out));
                for c in catches.iter() {
                    c.body.iter().for_each(|s| self.refs_stmt(s, out));
                }
                if let Some(f) = finally {
                    f.iter().for_each(|s| self.refs_stmt(s, out));
                }
            }
            StmtKind::Return(None)
            | StmtKind::InlineHtml(_)
            | StmtKind::Break(_)
            | StmtKind::Continue(_)
            | StmtKind::Function(_)
            | StmtKind::Class(_)
            | StmtKind::Nop
            | StmtKind::Label(_)
            | StmtKind::Goto(_)
            | StmtKind::Refused(_)
            | StmtKind::Namespace { .. }
            | StmtKind::Use(_) => {}
        }
    }

    fn refs_expr(&mut self, e: &'a Expr<'a>, out: &mut HashSet<&'a str>) {
        match &e.kind {
            ExprKind::AssignRef { target, source } => {
                for side in [target, source] {
                    if let ExprKind::Var(n) = side.kind {
                        out.insert(n);
                    }
                    self.refs_expr(side, out);
                }
            }
            ExprKind::Call { name, args } => {
                let callee = self.callee(name);
                let key = crate::function_key(&callee.target);
                let internal = cg!(self.g).function_table.get(key.as_slice()).copied();
                let decl = callee.decl;
                for (i, a) in args.iter().enumerate() {
                    let by_ref = match (internal, decl) {
                        (Some(f), _) => f.param_by_ref(i),
                        (None, Some(d)) => match d.params.get(i) {
                            Some(p) => p.by_ref,
                            None => d.params.last().is_some_and(|p| p.variadic && p.by_ref),
                        },
                        (None, None) => false,
                    };
                    // A named argument's parameter is known only at run time.
                    if by_ref || a.name.is_some() {
                        if let ExprKind::Var(n) = a.value.kind {
                            out.insert(n);
                        }
                    }
                    self.refs_expr(a.value, out);
                }
            }
            ExprKind::CallValue { callee, args } => {
                self.refs_expr(callee, out);
                for a in args.iter() {
                    // Whether this goes by reference is known only at run time.
                    if let ExprKind::Var(n) = a.value.kind {
                        out.insert(n);
                    }
                    self.refs_expr(a.value, out);
                }
            }
            ExprKind::Closure(f) => {
                for u in f.uses.iter().filter(|u| u.by_ref) {
                    out.insert(u.name);
                }
            }
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Const(_) | ExprKind::Var(_) => {}
            ExprKind::VarVar { name, .. } | ExprKind::CallableFromValue(name) => self.refs_expr(name, out),
            ExprKind::CallableFromName(_) | ExprKind::Refused(_) => {}
            ExprKind::Interp(parts) => {
                for p in parts.iter() {
                    if let InterpPart::Expr(e) = p {
                        self.refs_expr(e, out);
                    }
                }
            }
            ExprKind::Array(items, _) => {
                for item in items.iter() {
                    if let Some(k) = item.key {
                        self.refs_expr(k, out);
                    }
                    if let Some(v) = item.value {
                        // `[&$x]` makes `$x` a reference.
                        if let (true, ExprKind::Var(n)) = (item.by_ref, &v.kind) {
                            out.insert(n);
                        }
                        self.refs_expr(v, out);
                    }
                }
            }
            ExprKind::CurlyIndex { base, index } => {
                self.refs_expr(base, out);
                self.refs_expr(index, out);
            }
            ExprKind::Index { base, index } => {
                self.refs_expr(base, out);
                if let Some(i) = index {
                    self.refs_expr(i, out);
                }
            }
            ExprKind::Unary { expr, .. }
            | ExprKind::Cast { expr, .. }
            | ExprKind::Print(expr)
            | ExprKind::Empty(expr)
            | ExprKind::Eval(expr)
            | ExprKind::Include { path: expr, .. }
            | ExprKind::Silence(expr) => self.refs_expr(expr, out),
            ExprKind::Match { subject, arms } => {
                self.refs_expr(subject, out);
                for arm in arms.iter() {
                    arm.conds
                        .unwrap_or_default()
                        .iter()
                        .for_each(|c| self.refs_expr(c, out));
                    self.refs_expr(arm.body, out);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.refs_expr(lhs, out);
                self.refs_expr(rhs, out);
            }
            ExprKind::Assign { target, value } | ExprKind::AssignOp { target, value, .. } => {
                // A list with references makes its right side a reference
                // (PHP's `MAKE_REF`).
                if let (ExprKind::Array(items, _), ExprKind::Var(n)) = (&target.kind, &value.kind) {
                    if crate::lvalue::list_has_ref(items) {
                        out.insert(n);
                    }
                }
                self.refs_expr(target, out);
                self.refs_expr(value, out);
            }
            ExprKind::IncDec { target, .. } => self.refs_expr(target, out),
            ExprKind::Ternary { cond, then, els } => {
                self.refs_expr(cond, out);
                if let Some(t) = then {
                    self.refs_expr(t, out);
                }
                self.refs_expr(els, out);
            }
            ExprKind::Isset(es) => es.iter().for_each(|e| self.refs_expr(e, out)),
            ExprKind::Exit(Some(e)) => self.refs_expr(e, out),
            ExprKind::Exit(None) => {}
            ExprKind::New { class, args } => {
                self.refs_class(class, out);
                self.refs_runtime_args(args, out);
            }
            ExprKind::Prop { obj, name, .. } | ExprKind::MethodCallable { obj, name } => {
                self.refs_expr(obj, out);
                self.refs_name(name, out);
            }
            ExprKind::MethodCall { obj, name, args, .. } => {
                self.refs_expr(obj, out);
                self.refs_name(name, out);
                self.refs_runtime_args(args, out);
            }
            ExprKind::StaticCall { class, name, args } => {
                self.refs_class(class, out);
                self.refs_name(name, out);
                self.refs_runtime_args(args, out);
            }
            ExprKind::ClassConst { class, .. } => self.refs_class(class, out),
            ExprKind::StaticProp { class, name } | ExprKind::StaticCallable { class, name } => {
                self.refs_class(class, out);
                self.refs_name(name, out);
            }
            ExprKind::InstanceOf { expr, class } => {
                self.refs_expr(expr, out);
                self.refs_class(class, out);
            }
            ExprKind::Clone(e) | ExprKind::Throw(e) => self.refs_expr(e, out),
        }
    }
}
