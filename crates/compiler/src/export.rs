//! PHP source text of an expression, as `zend_ast_export` writes it: the
//! description `assert()` gets when it is called with one argument
//! (`assert(false)` fails with "assert(false)").
//!
//! Operators are parenthesised by PHP's priorities (`zend_ast_export_ex`'s
//! table), literals written as PHP writes their values (strings in single
//! quotes, floats with `precision` 14). Forms PHP writes at length (a
//! closure's body, a `match`) are shortened here.

use minizts_core::numfmt;
use minizts_syntax::ast::*;

/// `assert(<e>)`.
pub(crate) fn assert_message(e: &Expr<'_>) -> Vec<u8> {
    let mut out = b"assert(".to_vec();
    expr(&mut out, e, 0);
    out.push(b')');
    out
}

/// A binary operator's text and priorities: its own, its left operand's
/// and its right operand's (`BINARY_OP(op, p, pl, pr)` in zend_ast.c).
fn binary(op: BinaryOp) -> (&'static str, u32, u32, u32) {
    use BinaryOp::*;
    match op {
        Or => (" || ", 120, 120, 121),
        And => (" && ", 130, 130, 131),
        Xor => (" xor ", 40, 40, 41),
        Coalesce => (" ?? ", 110, 111, 110),
        BitOr => (" | ", 140, 140, 141),
        BitXor => (" ^ ", 150, 150, 151),
        BitAnd => (" & ", 160, 160, 161),
        Eq => (" == ", 170, 171, 171),
        NotEq => (" != ", 170, 171, 171),
        Identical => (" === ", 170, 171, 171),
        NotIdentical => (" !== ", 170, 171, 171),
        Lt => (" < ", 180, 181, 181),
        Le => (" <= ", 180, 181, 181),
        Gt => (" > ", 180, 181, 181),
        Ge => (" >= ", 180, 181, 181),
        Spaceship => (" <=> ", 180, 181, 181),
        Concat => (" . ", 185, 185, 186),
        Shl => (" << ", 190, 190, 191),
        Shr => (" >> ", 190, 190, 191),
        Add => (" + ", 200, 200, 201),
        Sub => (" - ", 200, 200, 201),
        Mul => (" * ", 210, 210, 211),
        Div => (" / ", 210, 210, 211),
        Mod => (" % ", 210, 210, 211),
        Pow => (" ** ", 250, 251, 250),
    }
}

fn open(out: &mut Vec<u8>, priority: u32, p: u32) {
    if priority > p {
        out.push(b'(');
    }
}

fn close(out: &mut Vec<u8>, priority: u32, p: u32) {
    if priority > p {
        out.push(b')');
    }
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'\'');
    for &c in s {
        if c == b'\'' || c == b'\\' {
            out.push(b'\\');
        }
        out.push(c);
    }
    out.push(b'\'');
}

fn args(out: &mut Vec<u8>, args: &[Arg<'_>]) {
    out.push(b'(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        if a.spread {
            out.extend_from_slice(b"...");
        }
        if let Some(name) = a.name {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
        }
        expr(out, a.value, 0);
    }
    out.push(b')');
}

fn array(out: &mut Vec<u8>, items: &[ArrayItem<'_>]) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        if item.spread {
            out.extend_from_slice(b"...");
        }
        if let Some(k) = item.key {
            expr(out, k, 80);
            out.extend_from_slice(b" => ");
        }
        if item.by_ref {
            out.push(b'&');
        }
        if let Some(v) = item.value {
            expr(out, v, 80);
        }
    }
    out.push(b']');
}

/// A class as written before `::` or after `new`/`instanceof`.
fn class_ref(out: &mut Vec<u8>, class: &ClassRef<'_>) {
    match class {
        ClassRef::Name(n) => out.extend_from_slice(n.as_bytes()),
        ClassRef::Static => out.extend_from_slice(b"static"),
        ClassRef::Expr(e) => expr(out, e, 0),
        ClassRef::Anonymous(_) => out.extend_from_slice(b"class"),
    }
}

/// A member's name: as written, or `{expr}` (a variable as it is).
fn member(out: &mut Vec<u8>, name: &MemberName<'_>) {
    match name {
        MemberName::Ident(n) => out.extend_from_slice(n.as_bytes()),
        MemberName::Expr(e) if matches!(e.kind, ExprKind::Var(_)) => expr(out, e, 0),
        MemberName::Expr(e) => {
            out.push(b'{');
            expr(out, e, 0);
            out.push(b'}');
        }
    }
}

/// Writes `e` inside an operator of priority `priority`.
fn expr(out: &mut Vec<u8>, e: &Expr<'_>, priority: u32) {
    match &e.kind {
        ExprKind::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        ExprKind::Float(f) => numfmt::write_float(out, *f, 14),
        ExprKind::Str(s) => string(out, s),
        ExprKind::Interp(parts) => {
            out.push(b'"');
            for p in parts.iter() {
                match p {
                    InterpPart::Lit(s) => {
                        for &c in s.iter() {
                            match c {
                                b'\n' => out.extend_from_slice(b"\\n"),
                                b'\t' => out.extend_from_slice(b"\\t"),
                                b'"' | b'\\' | b'$' => out.extend_from_slice(&[b'\\', c]),
                                c => out.push(c),
                            }
                        }
                    }
                    InterpPart::Expr(e) => match e.kind {
                        ExprKind::Var(_) => expr(out, e, 0),
                        _ => {
                            out.push(b'{');
                            expr(out, e, 0);
                            out.push(b'}');
                        }
                    },
                }
            }
            out.push(b'"');
        }
        ExprKind::Var(name) => {
            out.push(b'$');
            out.extend_from_slice(name.as_bytes());
        }
        ExprKind::VarVar { name, global: true } => {
            out.extend_from_slice(b"$GLOBALS[");
            expr(out, name, 0);
            out.push(b']');
        }
        ExprKind::VarVar { name, .. } => match name.kind {
            ExprKind::Var(_) => {
                out.push(b'$');
                expr(out, name, 0);
            }
            _ => {
                out.extend_from_slice(b"${");
                expr(out, name, 0);
                out.push(b'}');
            }
        },
        ExprKind::Array(items, _) => array(out, items),
        ExprKind::Index { base, index } => {
            expr(out, base, 260);
            out.push(b'[');
            if let Some(i) = index {
                expr(out, i, 0);
            }
            out.push(b']');
        }
        // Refused when compiled, before any message could quote it.
        ExprKind::CurlyIndex { base, index } => {
            expr(out, base, 260);
            out.push(b'{');
            expr(out, index, 0);
            out.push(b'}');
        }
        ExprKind::Refused(_) => out.extend_from_slice(b"..."),
        ExprKind::Const(name) => out.extend_from_slice(name.as_bytes()),
        ExprKind::Call { name, args: a } => {
            out.extend_from_slice(name.as_bytes());
            args(out, a);
        }
        ExprKind::CallableFromName(name) => {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"(...)");
        }
        ExprKind::CallableFromValue(callee) => {
            expr(out, callee, 0);
            out.extend_from_slice(b"(...)");
        }
        ExprKind::CallValue { callee, args: a } => {
            expr(out, callee, 0);
            args(out, a);
        }
        ExprKind::Closure(f) => match f.body {
            FunctionBody::Arrow(body) => {
                out.extend_from_slice(b"fn() => ");
                expr(out, body, 0);
            }
            FunctionBody::Block(_) | FunctionBody::None => out.extend_from_slice(b"function () {\n}"),
        },
        ExprKind::New { class, args: a } => {
            out.extend_from_slice(b"new ");
            match class {
                ClassRef::Anonymous(_) => out.extend_from_slice(b"class"),
                other => class_ref(out, other),
            }
            args(out, a);
        }
        ExprKind::Prop { obj, name, nullsafe } => {
            expr(out, obj, 260);
            out.extend_from_slice(if *nullsafe { b"?->" } else { b"->" });
            member(out, name);
        }
        ExprKind::MethodCall {
            obj,
            name,
            args: a,
            nullsafe,
        } => {
            expr(out, obj, 260);
            out.extend_from_slice(if *nullsafe { b"?->" } else { b"->" });
            member(out, name);
            args(out, a);
        }
        ExprKind::MethodCallable { obj, name } => {
            expr(out, obj, 260);
            out.extend_from_slice(b"->");
            member(out, name);
            out.extend_from_slice(b"(...)");
        }
        ExprKind::StaticCall { class, name, args: a } => {
            class_ref(out, class);
            out.extend_from_slice(b"::");
            member(out, name);
            args(out, a);
        }
        ExprKind::StaticCallable { class, name } => {
            class_ref(out, class);
            out.extend_from_slice(b"::");
            member(out, name);
            out.extend_from_slice(b"(...)");
        }
        ExprKind::ClassConst { class, name } => {
            class_ref(out, class);
            out.extend_from_slice(b"::");
            out.extend_from_slice(name.as_bytes());
        }
        ExprKind::StaticProp { class, name } => {
            class_ref(out, class);
            out.extend_from_slice(b"::$");
            member(out, name);
        }
        ExprKind::InstanceOf { expr: inner, class } => {
            open(out, priority, 230);
            expr(out, inner, 231);
            out.extend_from_slice(b" instanceof ");
            class_ref(out, class);
            close(out, priority, 230);
        }
        ExprKind::Clone(inner) => {
            open(out, priority, 270);
            out.extend_from_slice(b"clone ");
            expr(out, inner, 270);
            close(out, priority, 270);
        }
        ExprKind::Throw(inner) => {
            out.extend_from_slice(b"throw ");
            expr(out, inner, 0);
        }
        ExprKind::Unary { op, expr: inner } => {
            let (text, p) = match op {
                UnaryOp::Not => ("!", 240),
                UnaryOp::Neg => ("-", 240),
                UnaryOp::Plus => ("+", 240),
                UnaryOp::BitNot => ("~", 240),
            };
            open(out, priority, p);
            out.extend_from_slice(text.as_bytes());
            expr(out, inner, p);
            close(out, priority, p);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (text, p, pl, pr) = binary(*op);
            open(out, priority, p);
            expr(out, lhs, pl);
            out.extend_from_slice(text.as_bytes());
            expr(out, rhs, pr);
            close(out, priority, p);
        }
        ExprKind::Assign { target, value } | ExprKind::AssignRef { target, source: value } => {
            open(out, priority, 90);
            expr(out, target, 91);
            match e.kind {
                ExprKind::AssignRef { .. } => out.extend_from_slice(b" =& "),
                _ => out.extend_from_slice(b" = "),
            }
            expr(out, value, 90);
            close(out, priority, 90);
        }
        ExprKind::AssignOp { op, target, value } => {
            open(out, priority, 90);
            expr(out, target, 91);
            out.push(b' ');
            out.extend_from_slice(op.symbol().as_bytes());
            out.extend_from_slice(b"= ");
            expr(out, value, 90);
            close(out, priority, 90);
        }
        ExprKind::IncDec {
            prefix,
            increment,
            target,
        } => {
            let op: &[u8] = if *increment { b"++" } else { b"--" };
            open(out, priority, 240);
            if *prefix {
                out.extend_from_slice(op);
                expr(out, target, 260);
            } else {
                expr(out, target, 260);
                out.extend_from_slice(op);
            }
            close(out, priority, 240);
        }
        ExprKind::Ternary { cond, then, els } => {
            open(out, priority, 100);
            expr(out, cond, 101);
            match then {
                Some(t) => {
                    out.extend_from_slice(b" ? ");
                    expr(out, t, 101);
                    out.extend_from_slice(b" : ");
                }
                None => out.extend_from_slice(b" ?: "),
            }
            expr(out, els, 101);
            close(out, priority, 100);
        }
        // PHP's parser turns `isset($a, $b)` into `isset($a) && isset($b)`.
        ExprKind::Isset(es) => {
            let chained = es.len() > 1;
            if chained {
                open(out, priority, 130);
            }
            for (i, e) in es.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b" && ");
                }
                out.extend_from_slice(b"isset(");
                expr(out, e, 0);
                out.push(b')');
            }
            if chained {
                close(out, priority, 130);
            }
        }
        ExprKind::Empty(inner) => {
            out.extend_from_slice(b"empty(");
            expr(out, inner, 0);
            out.push(b')');
        }
        ExprKind::Eval(inner) => {
            out.extend_from_slice(b"eval(");
            expr(out, inner, 0);
            out.push(b')');
        }
        ExprKind::Include { kind, path } => {
            out.extend_from_slice(kind.name().as_bytes());
            out.push(b'(');
            expr(out, path, 0);
            out.push(b')');
        }
        ExprKind::Cast { to, expr: inner } => {
            let text: &[u8] = match to {
                CastType::Int => b"(int)",
                CastType::Float => b"(double)",
                CastType::String => b"(string)",
                CastType::Bool => b"(bool)",
                CastType::Array => b"(array)",
                CastType::Unset => b"(unset)",
                CastType::Object => b"(object)",
            };
            open(out, priority, 240);
            out.extend_from_slice(text);
            expr(out, inner, 240);
            close(out, priority, 240);
        }
        ExprKind::Print(inner) => {
            open(out, priority, 60);
            out.extend_from_slice(b"print ");
            expr(out, inner, 60);
            close(out, priority, 60);
        }
        ExprKind::Exit(inner) => {
            out.extend_from_slice(b"exit");
            if let Some(i) = inner {
                out.push(b'(');
                expr(out, i, 0);
                out.push(b')');
            }
        }
        ExprKind::Silence(inner) => {
            open(out, priority, 240);
            out.push(b'@');
            expr(out, inner, 240);
            close(out, priority, 240);
        }
        ExprKind::Match { subject, .. } => {
            out.extend_from_slice(b"match (");
            expr(out, subject, 0);
            out.extend_from_slice(b") {\n}");
        }
    }
}
