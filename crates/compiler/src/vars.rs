//! Finding a function's variables before compiling it.
//!
//! PHP gives every variable a function names a fixed slot (a CV). The
//! compiler does the same, and needs the full list before it emits code
//! so that temporaries can be allocated above the CVs. Nested named
//! functions and closures have their own variables and are not entered;
//! what a closure captures from this scope (`use ($x)`, or whatever an
//! arrow function reads) does belong to this scope.

use minizts_syntax::ast::*;

/// Variable names in order of first appearance, and whether the code
/// also reaches its scope in ways the names do not show.
#[derive(Default)]
pub struct VarNames<'a> {
    names: Vec<&'a str>,
    seen: hashbrown::HashSet<&'a str>,
    /// Variables are reached by a name computed at run time (`$$x`,
    /// `extract`, `compact`, `get_defined_vars`).
    pub by_name: bool,
    /// The arguments are read as a list (`func_get_args` and siblings).
    pub arg_list: bool,
}

impl<'a> VarNames<'a> {
    pub fn add(&mut self, name: &'a str) {
        if self.seen.insert(name) {
            self.names.push(name);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.names.iter().copied()
    }
}

/// A variable a closure takes from its defining scope.
pub struct Capture<'a> {
    pub name: &'a str,
    pub by_ref: bool,
}

/// What closure `f` captures: its `use` list, or for an arrow function
/// every variable its body reads that is not a parameter.
/// `$this` is never captured: a closure made in a method is bound to
/// the method's object.
pub fn captures<'a>(f: &'a FunctionDecl<'a>) -> Vec<Capture<'a>> {
    match &f.body {
        FunctionBody::Block(_) | FunctionBody::None => f
            .uses
            .iter()
            .map(|u| Capture {
                name: u.name,
                by_ref: u.by_ref,
            })
            .collect(),
        FunctionBody::Arrow(e) => {
            let mut names = VarNames::default();
            collect_expr(e, &mut names);
            names
                .iter()
                .filter(|n| *n != "this" && !f.params.iter().any(|p| p.name == *n))
                .map(|name| Capture { name, by_ref: false })
                .collect()
        }
    }
}

pub fn collect_stmt<'a>(s: &'a Stmt<'a>, out: &mut VarNames<'a>) {
    match &s.kind {
        StmtKind::Expr(e) => collect_expr(e, out),
        StmtKind::Echo(es) | StmtKind::Unset(es) => es.iter().for_each(|e| collect_expr(e, out)),
        StmtKind::InlineHtml(_) | StmtKind::Break(_) | StmtKind::Continue(_) | StmtKind::Nop => {}
        StmtKind::Label(_) | StmtKind::Goto(_) | StmtKind::Refused(_) => {}
        // Taken apart before functions are compiled (see `namespaces`).
        StmtKind::Namespace { .. } | StmtKind::Use(_) => {}
        StmtKind::If { cond, then, els } => {
            collect_expr(cond, out);
            collect_stmt(then, out);
            if let Some(e) = els {
                collect_stmt(e, out);
            }
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            collect_expr(cond, out);
            collect_stmt(body, out);
        }
        StmtKind::For { init, cond, step, body } => {
            for e in init.iter().chain(cond.iter()).chain(step.iter()) {
                collect_expr(e, out);
            }
            collect_stmt(body, out);
        }
        StmtKind::Foreach {
            subject,
            key,
            value,
            body,
            ..
        } => {
            collect_expr(subject, out);
            if let Some(k) = key {
                collect_expr(k, out);
            }
            collect_expr(value, out);
            collect_stmt(body, out);
        }
        StmtKind::Switch { subject, cases } => {
            collect_expr(subject, out);
            for c in cases.iter() {
                if let Some(t) = c.test {
                    collect_expr(t, out);
                }
                c.body.iter().for_each(|s| collect_stmt(s, out));
            }
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                collect_expr(e, out);
            }
        }
        StmtKind::Global(names) => names.iter().for_each(|n| out.add(n)),
        StmtKind::GlobalByName(name) => {
            out.by_name = true;
            collect_expr(name, out);
        }
        StmtKind::Static(vars) => {
            for v in vars.iter() {
                out.add(v.name);
                if let Some(init) = v.init {
                    collect_expr(init, out);
                }
            }
        }
        // Methods are functions of their own.
        StmtKind::Function(_) | StmtKind::Class(_) => {}
        StmtKind::Const(items) => items.iter().for_each(|(_, e)| collect_expr(e, out)),
        StmtKind::Block(stmts) => stmts.iter().for_each(|s| collect_stmt(s, out)),
        StmtKind::Try { body, catches, finally } => {
            body.iter().for_each(|s| collect_stmt(s, out));
            for c in catches.iter() {
                if let Some(v) = c.var {
                    out.add(v);
                }
                c.body.iter().for_each(|s| collect_stmt(s, out));
            }
            if let Some(f) = finally {
                f.iter().for_each(|s| collect_stmt(s, out));
            }
        }
    }
}

fn collect_class<'a>(class: &ClassRef<'a>, out: &mut VarNames<'a>) {
    if let ClassRef::Expr(e) = class {
        collect_expr(e, out);
    }
}

fn collect_name<'a>(name: &MemberName<'a>, out: &mut VarNames<'a>) {
    if let MemberName::Expr(e) = name {
        collect_expr(e, out);
    }
}

fn collect_args<'a>(args: &'a [Arg<'a>], out: &mut VarNames<'a>) {
    args.iter().for_each(|a| collect_expr(a.value, out));
}

pub fn collect_expr<'a>(e: &'a Expr<'a>, out: &mut VarNames<'a>) {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Const(_) => {}
        // `$GLOBALS` is no variable of the function (`FETCH_GLOBALS`).
        ExprKind::Var("GLOBALS") => {}
        ExprKind::Var(name) => out.add(name),
        ExprKind::VarVar { name, global } => {
            // `$GLOBALS[name]` reaches the global scope, not this one.
            out.by_name |= !global;
            collect_expr(name, out);
        }
        ExprKind::Interp(parts) => {
            for p in parts.iter() {
                if let InterpPart::Expr(e) = p {
                    collect_expr(e, out);
                }
            }
        }
        ExprKind::Array(items, _) => {
            for item in items.iter() {
                if let Some(k) = item.key {
                    collect_expr(k, out);
                }
                if let Some(v) = item.value {
                    collect_expr(v, out);
                }
            }
        }
        ExprKind::CurlyIndex { base, index } => {
            collect_expr(base, out);
            collect_expr(index, out);
        }
        ExprKind::Index { base, index } => {
            collect_expr(base, out);
            if let Some(i) = index {
                collect_expr(i, out);
            }
        }
        ExprKind::Call { name, args } => {
            // (The last part: a namespaced call may fall back to the
            // global function.)
            let name = name.rsplit('\\').next().unwrap_or(name);
            if ["extract", "compact", "get_defined_vars"]
                .iter()
                .any(|f| f.eq_ignore_ascii_case(name))
            {
                out.by_name = true;
            }
            if ["func_get_args", "func_get_arg", "func_num_args"]
                .iter()
                .any(|f| f.eq_ignore_ascii_case(name))
            {
                out.arg_list = true;
            }
            args.iter().for_each(|a| collect_expr(a.value, out))
        }
        ExprKind::CallableFromName(_) | ExprKind::Refused(_) => {}
        ExprKind::CallableFromValue(callee) => collect_expr(callee, out),
        ExprKind::CallValue { callee, args } => {
            collect_expr(callee, out);
            args.iter().for_each(|a| collect_expr(a.value, out));
        }
        ExprKind::Closure(f) => captures(f).iter().for_each(|c| out.add(c.name)),
        // The code reaches the scope's variables by name.
        ExprKind::Eval(code) | ExprKind::Include { path: code, .. } => {
            out.by_name = true;
            collect_expr(code, out);
        }
        ExprKind::Unary { expr, .. }
        | ExprKind::Cast { expr, .. }
        | ExprKind::Print(expr)
        | ExprKind::Empty(expr)
        | ExprKind::Silence(expr) => collect_expr(expr, out),
        ExprKind::Match { subject, arms } => {
            collect_expr(subject, out);
            for arm in arms.iter() {
                arm.conds.unwrap_or_default().iter().for_each(|c| collect_expr(c, out));
                collect_expr(arm.body, out);
            }
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_expr(lhs, out);
            collect_expr(rhs, out);
        }
        ExprKind::Assign { target, value } | ExprKind::AssignOp { target, value, .. } => {
            collect_expr(target, out);
            collect_expr(value, out);
        }
        ExprKind::AssignRef { target, source } => {
            collect_expr(target, out);
            collect_expr(source, out);
        }
        ExprKind::IncDec { target, .. } => collect_expr(target, out),
        ExprKind::Ternary { cond, then, els } => {
            collect_expr(cond, out);
            if let Some(t) = then {
                collect_expr(t, out);
            }
            collect_expr(els, out);
        }
        ExprKind::Isset(es) => es.iter().for_each(|e| collect_expr(e, out)),
        ExprKind::Exit(e) => {
            if let Some(e) = e {
                collect_expr(e, out);
            }
        }
        // An anonymous class's body is its own.
        ExprKind::New { class, args } => {
            collect_class(class, out);
            collect_args(args, out);
        }
        ExprKind::Prop { obj, name, .. } | ExprKind::MethodCallable { obj, name } => {
            collect_expr(obj, out);
            collect_name(name, out);
        }
        ExprKind::MethodCall { obj, name, args, .. } => {
            collect_expr(obj, out);
            collect_name(name, out);
            collect_args(args, out);
        }
        ExprKind::StaticCall { class, name, args } => {
            collect_class(class, out);
            collect_name(name, out);
            collect_args(args, out);
        }
        ExprKind::ClassConst { class, .. } => collect_class(class, out),
        ExprKind::StaticProp { class, name } | ExprKind::StaticCallable { class, name } => {
            collect_class(class, out);
            collect_name(name, out);
        }
        ExprKind::InstanceOf { expr, class } => {
            collect_expr(expr, out);
            collect_class(class, out);
        }
        ExprKind::Clone(e) | ExprKind::Throw(e) => collect_expr(e, out),
    }
}

/// Calls `f` on every named function declared anywhere in `s`
/// (conditional and nested declarations included).
pub fn walk_stmt_decls<'a>(s: &'a Stmt<'a>, f: &mut dyn FnMut(&'a FunctionDecl<'a>)) {
    match &s.kind {
        StmtKind::Function(decl) => {
            f(decl);
            if let FunctionBody::Block(stmts) = &decl.body {
                stmts.iter().for_each(|s| walk_stmt_decls(s, f));
            }
        }
        StmtKind::If { then, els, .. } => {
            walk_stmt_decls(then, f);
            if let Some(e) = els {
                walk_stmt_decls(e, f);
            }
        }
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Foreach { body, .. } => walk_stmt_decls(body, f),
        StmtKind::Switch { cases, .. } => {
            for c in cases.iter() {
                c.body.iter().for_each(|s| walk_stmt_decls(s, f));
            }
        }
        StmtKind::Block(stmts) => stmts.iter().for_each(|s| walk_stmt_decls(s, f)),
        StmtKind::Try { body, catches, finally } => {
            body.iter().for_each(|s| walk_stmt_decls(s, f));
            for c in catches.iter() {
                c.body.iter().for_each(|s| walk_stmt_decls(s, f));
            }
            if let Some(stmts) = finally {
                stmts.iter().for_each(|s| walk_stmt_decls(s, f));
            }
        }
        // Not the methods themselves: the functions declared in them.
        StmtKind::Class(class) => {
            for m in class.members.iter() {
                if let Member::Method { decl, .. } = m {
                    if let FunctionBody::Block(stmts) = &decl.body {
                        stmts.iter().for_each(|s| walk_stmt_decls(s, f));
                    }
                }
            }
        }
        _ => {}
    }
}
