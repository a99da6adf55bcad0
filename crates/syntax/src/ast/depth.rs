//! How deeply an AST nests, measured without recursion.
//!
//! Every pass over the AST (collecting variables, compiling) recurses on
//! the native stack, so a script nested deeper than a limit (a million
//! `(` or `!` in a row) is refused before any of them runs. The walk here
//! keeps its own stack on the heap.

use super::*;

/// A node on the walk's stack.
enum Node<'n, 'a> {
    Stmt(&'n Stmt<'a>),
    Expr(&'n Expr<'a>),
}

/// Whether any path from the root of `stmts` down to a leaf is longer than
/// `limit` nodes.
pub fn exceeds(stmts: &[Stmt<'_>], limit: usize) -> bool {
    let mut stack: Vec<(Node<'_, '_>, usize)> = stmts.iter().map(|s| (Node::Stmt(s), 1)).collect();
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        let d = depth + 1;
        match node {
            Node::Stmt(s) => stmt_children(s, &mut |n| stack.push((n, d))),
            Node::Expr(e) => expr_children(e, &mut |n| stack.push((n, d))),
        }
    }
    false
}

fn stmt_children<'n, 'a>(s: &'n Stmt<'a>, push: &mut dyn FnMut(Node<'n, 'a>)) {
    macro_rules! e {
        ($x:expr) => {
            push(Node::Expr($x))
        };
    }
    match &s.kind {
        StmtKind::Expr(x) => e!(x),
        StmtKind::Echo(xs) | StmtKind::Unset(xs) => xs.iter().for_each(|x| e!(x)),
        StmtKind::If { cond, then, els } => {
            e!(cond);
            push(Node::Stmt(then));
            if let Some(s) = els {
                push(Node::Stmt(s));
            }
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            e!(cond);
            push(Node::Stmt(body));
        }
        StmtKind::For { init, cond, step, body } => {
            init.iter().chain(cond.iter()).chain(step.iter()).for_each(|x| e!(x));
            push(Node::Stmt(body));
        }
        StmtKind::Foreach {
            subject,
            key,
            value,
            body,
            ..
        } => {
            e!(subject);
            if let Some(k) = key {
                e!(k);
            }
            e!(value);
            push(Node::Stmt(body));
        }
        StmtKind::Switch { subject, cases } => {
            e!(subject);
            for c in cases.iter() {
                if let Some(t) = c.test {
                    e!(t);
                }
                c.body.iter().for_each(|s| push(Node::Stmt(s)));
            }
        }
        StmtKind::Return(Some(x)) | StmtKind::GlobalByName(x) => e!(x),
        StmtKind::Static(vars) => vars.iter().filter_map(|v| v.init).for_each(|x| e!(x)),
        StmtKind::Function(f) => function_children(f, push),
        StmtKind::Const(items) => items.iter().for_each(|(_, x)| e!(x)),
        StmtKind::Block(stmts) => stmts.iter().for_each(|s| push(Node::Stmt(s))),
        StmtKind::Return(None)
        | StmtKind::InlineHtml(_)
        | StmtKind::Break(_)
        | StmtKind::Continue(_)
        | StmtKind::Global(_)
        | StmtKind::Nop
        | StmtKind::Label(_)
        | StmtKind::Goto(_)
        | StmtKind::Refused(_)
        | StmtKind::Use(_) => {}
        StmtKind::Namespace { body, .. } => body.unwrap_or_default().iter().for_each(|s| push(Node::Stmt(s))),
        StmtKind::Class(c) => class_children(c, push),
        StmtKind::Try { body, catches, finally } => {
            body.iter().for_each(|s| push(Node::Stmt(s)));
            for c in catches.iter() {
                c.body.iter().for_each(|s| push(Node::Stmt(s)));
            }
            finally.unwrap_or_default().iter().for_each(|s| push(Node::Stmt(s)));
        }
    }
}

fn class_children<'n, 'a>(c: &'n ClassDecl<'a>, push: &mut dyn FnMut(Node<'n, 'a>)) {
    for m in c.members.iter() {
        match m {
            Member::Const { items, .. } => items.iter().for_each(|(_, x)| push(Node::Expr(x))),
            Member::Property { items, .. } => items.iter().filter_map(|p| p.default).for_each(|x| push(Node::Expr(x))),
            Member::Method { decl, .. } => function_children(decl, push),
            Member::Case { value: Some(x), .. } => push(Node::Expr(x)),
            Member::Case { value: None, .. } | Member::TraitUse { .. } => {}
        }
    }
}

fn class_ref_children<'n, 'a>(c: &'n ClassRef<'a>, push: &mut dyn FnMut(Node<'n, 'a>)) {
    match c {
        ClassRef::Expr(x) => push(Node::Expr(x)),
        ClassRef::Anonymous(decl) => class_children(decl, push),
        ClassRef::Name(_) | ClassRef::Static => {}
    }
}

fn member_name_children<'n, 'a>(n: &'n MemberName<'a>, push: &mut dyn FnMut(Node<'n, 'a>)) {
    if let MemberName::Expr(x) = n {
        push(Node::Expr(x));
    }
}

fn function_children<'n, 'a>(f: &'n FunctionDecl<'a>, push: &mut dyn FnMut(Node<'n, 'a>)) {
    for p in f.params.iter() {
        if let Some(d) = p.default {
            push(Node::Expr(d));
        }
    }
    match &f.body {
        FunctionBody::Block(stmts) => stmts.iter().for_each(|s| push(Node::Stmt(s))),
        FunctionBody::Arrow(x) => push(Node::Expr(x)),
        FunctionBody::None => {}
    }
}

fn expr_children<'n, 'a>(x: &'n Expr<'a>, push: &mut dyn FnMut(Node<'n, 'a>)) {
    macro_rules! e {
        ($x:expr) => {
            push(Node::Expr($x))
        };
    }
    match &x.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Var(_) | ExprKind::Const(_) => {}
        ExprKind::VarVar { name: y, .. } | ExprKind::CallableFromValue(y) => e!(y),
        ExprKind::CallableFromName(_) | ExprKind::Refused(_) => {}
        ExprKind::Interp(parts) => {
            for p in parts.iter() {
                if let InterpPart::Expr(y) = p {
                    e!(y);
                }
            }
        }
        ExprKind::Array(items, _) => {
            for item in items.iter() {
                if let Some(k) = item.key {
                    e!(k);
                }
                if let Some(v) = item.value {
                    e!(v);
                }
            }
        }
        ExprKind::CurlyIndex { base, index } => {
            e!(base);
            e!(index);
        }
        ExprKind::Index { base, index } => {
            e!(base);
            if let Some(i) = index {
                e!(i);
            }
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| e!(a.value)),
        ExprKind::CallValue { callee, args } => {
            e!(callee);
            args.iter().for_each(|a| e!(a.value));
        }
        ExprKind::Closure(f) => function_children(f, push),
        ExprKind::Unary { expr, .. }
        | ExprKind::Cast { expr, .. }
        | ExprKind::Print(expr)
        | ExprKind::Empty(expr)
        | ExprKind::Eval(expr)
        | ExprKind::Include { path: expr, .. }
        | ExprKind::Silence(expr) => e!(expr),
        ExprKind::Match { subject, arms } => {
            e!(subject);
            for arm in arms.iter() {
                arm.conds.unwrap_or_default().iter().for_each(|c| e!(c));
                e!(arm.body);
            }
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            e!(lhs);
            e!(rhs);
        }
        ExprKind::Assign { target, value } | ExprKind::AssignOp { target, value, .. } => {
            e!(target);
            e!(value);
        }
        ExprKind::AssignRef { target, source } => {
            e!(target);
            e!(source);
        }
        ExprKind::IncDec { target, .. } => e!(target),
        ExprKind::Ternary { cond, then, els } => {
            e!(cond);
            if let Some(t) = then {
                e!(t);
            }
            e!(els);
        }
        ExprKind::Isset(xs) => xs.iter().for_each(|y| e!(y)),
        ExprKind::Exit(Some(y)) => e!(y),
        ExprKind::Exit(None) => {}
        ExprKind::New { class, args } => {
            class_ref_children(class, push);
            args.iter().for_each(|a| e!(a.value));
        }
        ExprKind::Prop { obj, name, .. } | ExprKind::MethodCallable { obj, name } => {
            e!(obj);
            member_name_children(name, push);
        }
        ExprKind::MethodCall { obj, name, args, .. } => {
            e!(obj);
            member_name_children(name, push);
            args.iter().for_each(|a| e!(a.value));
        }
        ExprKind::StaticCall { class, name, args } => {
            class_ref_children(class, push);
            member_name_children(name, push);
            args.iter().for_each(|a| e!(a.value));
        }
        ExprKind::StaticProp { class, name } | ExprKind::StaticCallable { class, name } => {
            class_ref_children(class, push);
            member_name_children(name, push);
        }
        ExprKind::ClassConst { class, .. } => class_ref_children(class, push),
        ExprKind::InstanceOf { expr, class } => {
            e!(expr);
            class_ref_children(class, push);
        }
        ExprKind::Clone(y) | ExprKind::Throw(y) => e!(y),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn measures_nesting() {
        let arena = bumpalo::Bump::new();
        let src = format!("<?php echo {}1{};", "(".repeat(50), ")".repeat(50));
        let script = crate::parse(&arena, src.as_bytes());
        assert!(script.is_ok());
        let deep = format!("<?php $x = {}1;", "!".repeat(3000));
        let err = crate::parse(&arena, deep.as_bytes()).unwrap_err();
        assert!(err.message.contains("nested too deeply"), "{}", err.message);
    }
}
