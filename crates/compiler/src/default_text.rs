//! A parameter's default value as PHP prints it in a function's
//! declaration (`zend_get_function_declaration`, which the VM's
//! inheritance errors use): the value PHP's compiler folds the default
//! to (`null`, `true`, `1.5`, `'abcdefghij...'`, `[]`, `[...]`), or for a
//! default it leaves to run time, the constant's name (`FOO`,
//! `Foo\Bar::BAZ`) or `<expression>`.

use minizts_core::numfmt::float::php_float_to_string;
use minizts_globals::Globals;
use minizts_syntax::ast::*;

use crate::Compiler;

/// What a default folds to at compile time, as far as its text needs.
enum Folded {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    /// An array: whether it is empty.
    Array(bool),
}

impl Folded {
    fn text(&self) -> String {
        match self {
            Folded::Null => "null".into(),
            Folded::Bool(b) => if *b { "true" } else { "false" }.into(),
            Folded::Int(n) => n.to_string(),
            // As `zval_get_string` prints a float (`precision` 14).
            Folded::Float(f) => php_float_to_string(*f, 14),
            Folded::Str(s) => {
                let shown = String::from_utf8_lossy(&s[..s.len().min(10)]);
                format!("'{shown}{}'", if s.len() > 10 { "..." } else { "" })
            }
            Folded::Array(empty) => if *empty { "[]" } else { "[...]" }.into(),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Folded::Int(n) => Some(*n as f64),
            Folded::Float(f) => Some(*f),
            _ => None,
        }
    }
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// The text of default value `e` in a declaration.
    pub(crate) fn default_text(&self, e: &'a Expr<'a>) -> String {
        if let Some(v) = self.fold_default(e) {
            return v.text();
        }
        match &e.kind {
            ExprKind::Const(name) => {
                let resolved = self.ns.const_name(name);
                resolved.name.strip_prefix('\\').unwrap_or(&resolved.name).to_string()
            }
            ExprKind::ClassConst {
                class: ClassRef::Name(class),
                name,
            } => {
                let class = self.ns.class_name(class).unwrap_or_else(|_| class.to_string());
                format!("{class}::{name}")
            }
            _ => "<expression>".into(),
        }
    }

    /// What PHP's compiler folds a default to: literals, `null`, `true`
    /// and `false`, arithmetic on numbers, concatenation, arrays of such
    /// (it substitutes no other constant in a default).
    fn fold_default(&self, e: &'a Expr<'a>) -> Option<Folded> {
        Some(match &e.kind {
            ExprKind::Int(n) => Folded::Int(*n),
            ExprKind::Float(f) => Folded::Float(*f),
            ExprKind::Str(s) => Folded::Str(s.to_vec()),
            ExprKind::Const(name) => {
                let resolved = self.ns.const_name(name);
                let last = resolved.name.rsplit('\\').next().unwrap_or(&resolved.name);
                if resolved.fallback.is_none() && resolved.name.trim_start_matches('\\').contains('\\') {
                    return None;
                }
                match last.to_ascii_lowercase().as_str() {
                    "null" => Folded::Null,
                    "true" => Folded::Bool(true),
                    "false" => Folded::Bool(false),
                    _ => return None,
                }
            }
            ExprKind::ClassConst {
                class: ClassRef::Name(class),
                name,
            } if name.eq_ignore_ascii_case("class") && !class.eq_ignore_ascii_case("static") => {
                // `self::class` and `parent::class` are known in a
                // class's method (not a trait's).
                let scope = self.class.as_ref().filter(|c| c.kind != ClassKind::Trait);
                if class.eq_ignore_ascii_case("self") {
                    return Some(Folded::Str(scope?.name.as_bytes().to_vec()));
                }
                if class.eq_ignore_ascii_case("parent") {
                    return Some(Folded::Str(scope?.parent.as_deref()?.as_bytes().to_vec()));
                }
                let class = self.ns.class_name(class).ok()?;
                Folded::Str(class.into_bytes())
            }
            ExprKind::Unary { op, expr } => {
                let v = self.fold_default(expr)?;
                match (op, v) {
                    (UnaryOp::Neg, Folded::Int(n)) => match n.checked_neg() {
                        Some(m) => Folded::Int(m),
                        None => Folded::Float(-(n as f64)),
                    },
                    (UnaryOp::Neg, Folded::Float(f)) => Folded::Float(-f),
                    (UnaryOp::Plus, v @ (Folded::Int(_) | Folded::Float(_))) => v,
                    (UnaryOp::BitNot, Folded::Int(n)) => Folded::Int(!n),
                    _ => return None,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.fold_default(lhs)?, self.fold_default(rhs)?);
                fold_binary(*op, a, b)?
            }
            ExprKind::Ternary { cond, then, els } => {
                let c = match self.fold_default(cond)? {
                    Folded::Null => false,
                    Folded::Bool(b) => b,
                    Folded::Int(n) => n != 0,
                    Folded::Float(f) => f != 0.0,
                    Folded::Str(s) => !(s.is_empty() || s == b"0"),
                    Folded::Array(empty) => !empty,
                };
                match (c, then) {
                    (true, Some(t)) => self.fold_default(t)?,
                    (true, None) => self.fold_default(cond)?,
                    (false, _) => self.fold_default(els)?,
                }
            }
            ExprKind::Array(items, syntax) if *syntax != ArraySyntax::List => {
                for item in items.iter() {
                    if item.by_ref || item.spread {
                        return None;
                    }
                    if let Some(k) = item.key {
                        self.fold_default(k)?;
                    }
                    self.fold_default(item.value?)?;
                }
                Folded::Array(items.is_empty())
            }
            _ => return None,
        })
    }
}

/// `a op b` on folded operands, for the operators whose result on numbers
/// and strings is plain (anything else is left to run time).
fn fold_binary(op: BinaryOp, a: Folded, b: Folded) -> Option<Folded> {
    if op == BinaryOp::Concat {
        let text = |v: &Folded| -> Option<Vec<u8>> {
            Some(match v {
                Folded::Str(s) => s.clone(),
                Folded::Int(n) => n.to_string().into_bytes(),
                Folded::Null => Vec::new(),
                Folded::Bool(b) => {
                    if *b {
                        b"1".to_vec()
                    } else {
                        Vec::new()
                    }
                }
                Folded::Float(f) => php_float_to_string(*f, 14).into_bytes(),
                Folded::Array(_) => return None,
            })
        };
        let mut s = text(&a)?;
        s.extend(text(&b)?);
        return Some(Folded::Str(s));
    }
    if let (Folded::Int(x), Folded::Int(y)) = (&a, &b) {
        let (x, y) = (*x, *y);
        let int = match op {
            BinaryOp::Add => x.checked_add(y),
            BinaryOp::Sub => x.checked_sub(y),
            BinaryOp::Mul => x.checked_mul(y),
            BinaryOp::Mod if y != 0 => Some(x.wrapping_rem(y)),
            BinaryOp::BitAnd => Some(x & y),
            BinaryOp::BitOr => Some(x | y),
            BinaryOp::BitXor => Some(x ^ y),
            BinaryOp::Shl if (0..64).contains(&y) => Some(x.wrapping_shl(y as u32)),
            BinaryOp::Shr if (0..64).contains(&y) => Some(x >> y),
            BinaryOp::Div if y != 0 && x % y == 0 => x.checked_div(y),
            BinaryOp::Pow if (0..64).contains(&y) => x.checked_pow(y as u32),
            _ => None,
        };
        if let Some(n) = int {
            return Some(Folded::Int(n));
        }
    }
    let (x, y) = (a.number()?, b.number()?);
    Some(Folded::Float(match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div if y != 0.0 => x / y,
        BinaryOp::Pow => x.powf(y),
        _ => return None,
    }))
}
