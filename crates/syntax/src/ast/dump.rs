//! A compact, stable text form of the AST (S-expressions, one statement a
//! line), for golden parser tests and `minizts dump --ast`.

use std::fmt::Write as _;

use super::*;

/// Dumps a script, one top-level statement per line.
pub fn script(s: &Script<'_>) -> String {
    let mut out = String::new();
    for st in s.stmts {
        stmt(&mut out, st, 0);
        out.push('\n');
    }
    out
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn block(out: &mut String, stmts: &[Stmt<'_>], depth: usize) {
    out.push('{');
    for s in stmts {
        out.push('\n');
        indent(out, depth + 1);
        stmt(out, s, depth + 1);
    }
    out.push('\n');
    indent(out, depth);
    out.push('}');
}

fn list(out: &mut String, es: &[&Expr<'_>]) {
    for (i, e) in es.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        expr(out, e);
    }
}

fn stmt(out: &mut String, s: &Stmt<'_>, depth: usize) {
    match &s.kind {
        StmtKind::Expr(e) => expr(out, e),
        StmtKind::Echo(es) => {
            out.push_str("(echo ");
            list(out, es);
            out.push(')');
        }
        StmtKind::InlineHtml(h) => {
            let _ = write!(out, "(html {:?})", String::from_utf8_lossy(h));
        }
        StmtKind::If { cond, then, els } => {
            out.push_str("(if ");
            expr(out, cond);
            out.push(' ');
            stmt(out, then, depth);
            if let Some(e) = els {
                out.push_str(" else ");
                stmt(out, e, depth);
            }
            out.push(')');
        }
        StmtKind::While { cond, body } => {
            out.push_str("(while ");
            expr(out, cond);
            out.push(' ');
            stmt(out, body, depth);
            out.push(')');
        }
        StmtKind::DoWhile { body, cond } => {
            out.push_str("(do ");
            stmt(out, body, depth);
            out.push(' ');
            expr(out, cond);
            out.push(')');
        }
        StmtKind::For { init, cond, step, body } => {
            out.push_str("(for (");
            list(out, init);
            out.push_str(") (");
            list(out, cond);
            out.push_str(") (");
            list(out, step);
            out.push_str(") ");
            stmt(out, body, depth);
            out.push(')');
        }
        StmtKind::Foreach {
            subject,
            key,
            value,
            by_ref,
            body,
        } => {
            out.push_str("(foreach ");
            expr(out, subject);
            if let Some(k) = key {
                out.push(' ');
                expr(out, k);
                out.push_str(" =>");
            }
            out.push_str(if *by_ref { " &" } else { " " });
            expr(out, value);
            out.push(' ');
            stmt(out, body, depth);
            out.push(')');
        }
        StmtKind::Switch { subject, cases } => {
            out.push_str("(switch ");
            expr(out, subject);
            for c in cases.iter() {
                out.push('\n');
                indent(out, depth + 1);
                match c.test {
                    Some(t) => {
                        out.push_str("(case ");
                        expr(out, t);
                        out.push(' ');
                    }
                    None => out.push_str("(default "),
                }
                block(out, c.body, depth + 1);
                out.push(')');
            }
            out.push(')');
        }
        StmtKind::Break(n) => {
            let _ = write!(out, "(break {n})");
        }
        StmtKind::Continue(n) => {
            let _ = write!(out, "(continue {n})");
        }
        StmtKind::Return(e) => {
            out.push_str("(return");
            if let Some(e) = e {
                out.push(' ');
                expr(out, e);
            }
            out.push(')');
        }
        StmtKind::Global(names) => {
            let _ = write!(
                out,
                "(global {})",
                names.iter().map(|n| format!("${n}")).collect::<Vec<_>>().join(" ")
            );
        }
        StmtKind::GlobalByName(name) => {
            out.push_str("(global ${");
            expr(out, name);
            out.push_str("})");
        }
        StmtKind::Static(vars) => {
            out.push_str("(static");
            for v in vars.iter() {
                let _ = write!(out, " ${}", v.name);
                if let Some(i) = v.init {
                    out.push('=');
                    expr(out, i);
                }
            }
            out.push(')');
        }
        StmtKind::Unset(es) => {
            out.push_str("(unset ");
            list(out, es);
            out.push(')');
        }
        StmtKind::Function(f) => function(out, f, depth),
        StmtKind::Const(items) => {
            out.push_str("(const");
            for (n, e) in items.iter() {
                let _ = write!(out, " {n}=");
                expr(out, e);
            }
            out.push(')');
        }
        StmtKind::Block(stmts) => block(out, stmts, depth),
        StmtKind::Nop => out.push_str("(nop)"),
        StmtKind::Label(name) => {
            let _ = write!(out, "(label {name})");
        }
        StmtKind::Goto(name) => {
            let _ = write!(out, "(goto {name})");
        }
        StmtKind::Refused(message) => {
            let _ = write!(out, "(refused {message:?})");
        }
        StmtKind::Class(c) => class(out, c, depth),
        StmtKind::Try { body, catches, finally } => {
            out.push_str("(try ");
            block(out, body, depth);
            for c in catches.iter() {
                let _ = write!(out, " (catch {}", c.classes.join("|"));
                if let Some(v) = c.var {
                    let _ = write!(out, " ${v}");
                }
                out.push(' ');
                block(out, c.body, depth);
                out.push(')');
            }
            if let Some(f) = finally {
                out.push_str(" finally ");
                block(out, f, depth);
            }
            out.push(')');
        }
        StmtKind::Namespace { name, body, .. } => {
            let _ = write!(out, "(namespace {}", name.unwrap_or("\\"));
            if let Some(b) = body {
                out.push(' ');
                block(out, b, depth);
            }
            out.push(')');
        }
        StmtKind::Use(items) => {
            out.push_str("(use");
            for u in items.iter() {
                let kind = match u.kind {
                    UseKind::Class => "",
                    UseKind::Function => "function ",
                    UseKind::Const => "const ",
                };
                let _ = write!(out, " {kind}{}", u.name);
                if let Some(a) = u.alias {
                    let _ = write!(out, " as {a}");
                }
            }
            out.push(')');
        }
    }
}

fn modifier_words(bits: u16) -> String {
    let mut words = String::new();
    let mut bit = 1u16;
    while bit <= modifiers::VAR {
        if bits & bit != 0 {
            words.push_str(modifiers::keyword(bit));
            words.push(' ');
        }
        bit <<= 1;
    }
    words
}

fn class(out: &mut String, c: &ClassDecl<'_>, depth: usize) {
    let _ = write!(out, "({}{} {}", modifier_words(c.modifiers), c.kind.keyword(), c.name);
    if let Some(p) = c.parent {
        let _ = write!(out, " extends {p}");
    }
    if !c.interfaces.is_empty() {
        let _ = write!(out, " implements {}", c.interfaces.join(" "));
    }
    if let Some(t) = c.backing {
        let _ = write!(out, " : {}", t.names.join("|"));
    }
    out.push_str(" {");
    for m in c.members {
        out.push('\n');
        indent(out, depth + 1);
        match m {
            Member::Const { modifiers, items, .. } => {
                let _ = write!(out, "({}const", modifier_words(*modifiers));
                for (name, value) in items.iter() {
                    let _ = write!(out, " {name}=");
                    expr(out, value);
                }
                out.push(')');
            }
            Member::Property {
                modifiers, ty, items, ..
            } => {
                let _ = write!(out, "({}prop", modifier_words(*modifiers));
                if let Some(t) = ty {
                    let _ = write!(out, " {}{}", if t.nullable { "?" } else { "" }, t.names.join("|"));
                }
                for item in items.iter() {
                    let _ = write!(out, " ${}", item.name);
                    if let Some(d) = item.default {
                        out.push('=');
                        expr(out, d);
                    }
                }
                out.push(')');
            }
            Member::Method { modifiers, decl } => {
                let _ = write!(out, "({}", modifier_words(*modifiers));
                function(out, decl, depth + 1);
                out.push(')');
            }
            Member::TraitUse { traits, rules, .. } => {
                let _ = write!(out, "(use {}", traits.join(" "));
                for r in rules.iter() {
                    match r {
                        TraitRule::Insteadof {
                            trait_name,
                            method,
                            instead_of,
                            ..
                        } => {
                            let _ = write!(out, " ({trait_name}::{method} insteadof {})", instead_of.join(" "));
                        }
                        TraitRule::Alias {
                            trait_name,
                            method,
                            modifiers,
                            alias,
                            ..
                        } => {
                            out.push_str(" (");
                            if let Some(t) = trait_name {
                                let _ = write!(out, "{t}::");
                            }
                            let _ = write!(out, "{method} as {}{}", modifier_words(*modifiers), alias.unwrap_or(""));
                            out.push(')');
                        }
                    }
                }
                out.push(')');
            }
            Member::Case { name, value, .. } => {
                let _ = write!(out, "(case {name}");
                if let Some(v) = value {
                    out.push(' ');
                    expr(out, v);
                }
                out.push(')');
            }
        }
    }
    out.push('\n');
    indent(out, depth);
    out.push_str("})");
}

fn class_ref(out: &mut String, c: &ClassRef<'_>) {
    match c {
        ClassRef::Name(n) => out.push_str(n),
        ClassRef::Static => out.push_str("static"),
        ClassRef::Expr(e) => expr(out, e),
        ClassRef::Anonymous(c) => class(out, c, 0),
    }
}

fn member_name(out: &mut String, n: &MemberName<'_>) {
    match n {
        MemberName::Ident(n) => out.push_str(n),
        MemberName::Expr(e) => {
            out.push('{');
            expr(out, e);
            out.push('}');
        }
    }
}

fn function(out: &mut String, f: &FunctionDecl<'_>, depth: usize) {
    let _ = write!(out, "(function {}{} (", if f.by_ref_return { "&" } else { "" }, f.name);
    for (i, p) in f.params.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if let Some(t) = p.ty {
            let _ = write!(out, "{}{} ", if t.nullable { "?" } else { "" }, t.names.join("|"));
        }
        let _ = write!(
            out,
            "{}{}${}",
            if p.by_ref { "&" } else { "" },
            if p.variadic { "..." } else { "" },
            p.name
        );
        if let Some(d) = p.default {
            out.push('=');
            expr(out, d);
        }
    }
    out.push(')');
    if !f.uses.is_empty() {
        out.push_str(" use(");
        let uses: Vec<String> = f
            .uses
            .iter()
            .map(|u| format!("{}${}", if u.by_ref { "&" } else { "" }, u.name))
            .collect();
        out.push_str(&uses.join(" "));
        out.push(')');
    }
    if let Some(t) = f.return_type {
        let _ = write!(out, " : {}{}", if t.nullable { "?" } else { "" }, t.names.join("|"));
    }
    out.push(' ');
    match &f.body {
        FunctionBody::Block(stmts) => block(out, stmts, depth),
        FunctionBody::Arrow(e) => {
            out.push_str("=> ");
            expr(out, e);
        }
        FunctionBody::None => out.push(';'),
    }
    out.push(')');
}

/// Dumps one expression.
pub fn expr(out: &mut String, e: &Expr<'_>) {
    match &e.kind {
        ExprKind::Int(n) => {
            let _ = write!(out, "{n}");
        }
        ExprKind::Float(f) => {
            let _ = write!(out, "{f:?}");
        }
        ExprKind::Str(s) => {
            let _ = write!(out, "{:?}", String::from_utf8_lossy(s));
        }
        ExprKind::Interp(parts) => {
            out.push_str("(interp");
            for p in parts.iter() {
                out.push(' ');
                match p {
                    InterpPart::Lit(s) => {
                        let _ = write!(out, "{:?}", String::from_utf8_lossy(s));
                    }
                    InterpPart::Expr(e) => expr(out, e),
                }
            }
            out.push(')');
        }
        ExprKind::Var(n) => {
            let _ = write!(out, "${n}");
        }
        ExprKind::VarVar { name, global: false } => {
            out.push_str("${");
            expr(out, name);
            out.push('}');
        }
        ExprKind::VarVar { name, global: true } => {
            out.push_str("$GLOBALS[");
            expr(out, name);
            out.push(']');
        }
        ExprKind::Array(items, _) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if item.spread {
                    out.push_str("...");
                }
                if let Some(k) = item.key {
                    expr(out, k);
                    out.push_str(" => ");
                }
                if item.by_ref {
                    out.push('&');
                }
                match item.value {
                    Some(v) => expr(out, v),
                    None => out.push('_'),
                }
            }
            out.push(']');
        }
        ExprKind::Index { base, index } => {
            out.push_str("(index ");
            expr(out, base);
            out.push(' ');
            match index {
                Some(i) => expr(out, i),
                None => out.push_str("[]"),
            }
            out.push(')');
        }
        ExprKind::CurlyIndex { base, index } => {
            out.push_str("(curly-index ");
            expr(out, base);
            out.push(' ');
            expr(out, index);
            out.push(')');
        }
        ExprKind::Const(n) => out.push_str(n),
        ExprKind::Call { name, args } => {
            let _ = write!(out, "(call {name}");
            args_(out, args);
            out.push(')');
        }
        ExprKind::New { class, args } => {
            out.push_str("(new ");
            class_ref(out, class);
            args_(out, args);
            out.push(')');
        }
        ExprKind::Prop { obj, name, nullsafe } => {
            out.push_str(if *nullsafe { "(prop? " } else { "(prop " });
            expr(out, obj);
            out.push(' ');
            member_name(out, name);
            out.push(')');
        }
        ExprKind::MethodCall {
            obj,
            name,
            args,
            nullsafe,
        } => {
            out.push_str(if *nullsafe { "(mcall? " } else { "(mcall " });
            expr(out, obj);
            out.push(' ');
            member_name(out, name);
            args_(out, args);
            out.push(')');
        }
        ExprKind::StaticCall { class, name, args } => {
            out.push_str("(scall ");
            class_ref(out, class);
            out.push_str("::");
            member_name(out, name);
            args_(out, args);
            out.push(')');
        }
        ExprKind::ClassConst { class, name } => {
            out.push_str("(cconst ");
            class_ref(out, class);
            let _ = write!(out, "::{name})");
        }
        ExprKind::StaticProp { class, name } => {
            out.push_str("(sprop ");
            class_ref(out, class);
            out.push_str("::$");
            member_name(out, name);
            out.push(')');
        }
        ExprKind::InstanceOf { expr: e, class } => {
            out.push_str("(instanceof ");
            expr(out, e);
            out.push(' ');
            class_ref(out, class);
            out.push(')');
        }
        ExprKind::Clone(e) => {
            out.push_str("(clone ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::Throw(e) => {
            out.push_str("(throw ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::MethodCallable { obj, name } => {
            out.push_str("(mcallable ");
            expr(out, obj);
            out.push(' ');
            member_name(out, name);
            out.push(')');
        }
        ExprKind::StaticCallable { class, name } => {
            out.push_str("(scallable ");
            class_ref(out, class);
            out.push_str("::");
            member_name(out, name);
            out.push(')');
        }
        ExprKind::CallableFromName(name) => {
            let _ = write!(out, "(callable {name})");
        }
        ExprKind::CallableFromValue(callee) => {
            out.push_str("(callable-value ");
            expr(out, callee);
            out.push(')');
        }
        ExprKind::CallValue { callee, args } => {
            out.push_str("(call-value ");
            expr(out, callee);
            args_(out, args);
            out.push(')');
        }
        ExprKind::Closure(f) => function(out, f, 0),
        ExprKind::Unary { op, expr: inner } => {
            let sym = match op {
                UnaryOp::Not => "!",
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::BitNot => "~",
            };
            let _ = write!(out, "({sym} ");
            expr(out, inner);
            out.push(')');
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let _ = write!(out, "({} ", op.symbol());
            expr(out, lhs);
            out.push(' ');
            expr(out, rhs);
            out.push(')');
        }
        ExprKind::Assign { target, value } => {
            out.push_str("(= ");
            expr(out, target);
            out.push(' ');
            expr(out, value);
            out.push(')');
        }
        ExprKind::AssignRef { target, source } => {
            out.push_str("(=& ");
            expr(out, target);
            out.push(' ');
            expr(out, source);
            out.push(')');
        }
        ExprKind::AssignOp { op, target, value } => {
            let _ = write!(out, "({}= ", op.symbol());
            expr(out, target);
            out.push(' ');
            expr(out, value);
            out.push(')');
        }
        ExprKind::IncDec {
            prefix,
            increment,
            target,
        } => {
            let sym = if *increment { "++" } else { "--" };
            if *prefix {
                let _ = write!(out, "({sym}pre ");
            } else {
                let _ = write!(out, "(post{sym} ");
            }
            expr(out, target);
            out.push(')');
        }
        ExprKind::Ternary { cond, then, els } => {
            out.push_str("(? ");
            expr(out, cond);
            out.push(' ');
            match then {
                Some(t) => expr(out, t),
                None => out.push('_'),
            }
            out.push(' ');
            expr(out, els);
            out.push(')');
        }
        ExprKind::Isset(es) => {
            out.push_str("(isset ");
            list(out, es);
            out.push(')');
        }
        ExprKind::Empty(e) => {
            out.push_str("(empty ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::Eval(e) => {
            out.push_str("(eval ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::Include { kind, path } => {
            let _ = write!(out, "({} ", kind.name());
            expr(out, path);
            out.push(')');
        }
        ExprKind::Cast { to, expr: inner } => {
            let _ = write!(out, "(cast {to:?} ");
            expr(out, inner);
            out.push(')');
        }
        ExprKind::Print(e) => {
            out.push_str("(print ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::Exit(e) => {
            out.push_str("(exit");
            if let Some(e) = e {
                out.push(' ');
                expr(out, e);
            }
            out.push(')');
        }
        ExprKind::Silence(e) => {
            out.push_str("(@ ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::Refused(message) => {
            let _ = write!(out, "(refused {message:?})");
        }
        ExprKind::Match { subject, arms } => {
            out.push_str("(match ");
            expr(out, subject);
            for arm in arms.iter() {
                out.push_str(" (");
                match arm.conds {
                    Some(conds) => {
                        for (i, c) in conds.iter().enumerate() {
                            if i > 0 {
                                out.push_str(", ");
                            }
                            expr(out, c);
                        }
                    }
                    None => out.push_str("default"),
                }
                out.push_str(" => ");
                expr(out, arm.body);
                out.push(')');
            }
            out.push(')');
        }
    }
}

fn args_(out: &mut String, args: &[Arg<'_>]) {
    for a in args {
        out.push(' ');
        if a.spread {
            out.push_str("...");
        }
        if let Some(name) = a.name {
            let _ = write!(out, "{name}: ");
        }
        expr(out, a.value);
    }
}
