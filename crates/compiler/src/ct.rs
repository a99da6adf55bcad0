//! What PHP's compiler knows of an expression before it runs: the
//! constant it folds an expression to (`zend_eval_const_expr`, as far as
//! the checks here look at it) and the calls it compiles to instructions
//! of their own (`zend_try_compile_special_func`), whose results are
//! temporaries no write may reach.

use minizts_core::numfmt::numeric::is_numeric_str;
use minizts_core::Value;
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::*;
use minizts_syntax::names;

use crate::{Compiler, Result};

/// What a folded expression is, as far as the checks need to know.
pub(crate) enum Folded {
    Int,
    Str {
        numeric: bool,
    },
    /// An array's values (keys do not matter to the checks).
    Array(Vec<Folded>),
    /// `null`, a bool or a float.
    Other,
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// The constant PHP folds `e` to when it compiles it, if it does.
    /// Folding an array literal whose elements are all constant unpacks
    /// its `...` elements there and then, and a constant that is no array
    /// is PHP's compile-time error (`zend_try_ct_eval_array`).
    pub(crate) fn fold(&self, e: &'a Expr<'a>) -> Result<Option<Folded>> {
        Ok(match &e.kind {
            ExprKind::Int(_) => Some(Folded::Int),
            ExprKind::Float(_) => Some(Folded::Other),
            ExprKind::Str(s) => Some(Folded::Str {
                numeric: is_numeric_str(s).is_some(),
            }),
            ExprKind::Const(name) => self.fold_constant(name),
            ExprKind::Unary {
                op: UnaryOp::Neg | UnaryOp::Plus,
                expr,
            } => match self.fold(expr)? {
                Some(Folded::Int) => Some(Folded::Int),
                Some(Folded::Other) if matches!(expr.kind, ExprKind::Float(_)) => Some(Folded::Other),
                _ => None,
            },
            ExprKind::Array(items, syntax) if *syntax != ArraySyntax::List => self.fold_array(items)?,
            _ => None,
        })
    }

    fn fold_constant(&self, name: &str) -> Option<Folded> {
        if name.eq_ignore_ascii_case("__LINE__") {
            return Some(Folded::Int);
        }
        match self.known_constant(name)? {
            Value::Int(_) => Some(Folded::Int),
            Value::Str(s) => Some(Folded::Str {
                numeric: is_numeric_str(&s).is_some(),
            }),
            _ => Some(Folded::Other),
        }
    }

    fn fold_array(&self, items: &'a [ArrayItem<'a>]) -> Result<Option<Folded>> {
        // First every element must be constant and by value...
        let mut folded = Vec::with_capacity(items.len());
        for item in items {
            let Some(value) = item.value else { return Ok(None) };
            if item.by_ref {
                return Ok(None);
            }
            if let Some(key) = item.key {
                if self.fold(key)?.is_none() {
                    return Ok(None);
                }
            }
            match self.fold(value)? {
                Some(v) => folded.push((item.spread, v)),
                None => return Ok(None),
            }
        }
        // ...then the unpacked ones must be arrays.
        let mut values = Vec::with_capacity(folded.len());
        for (spread, v) in folded {
            match (spread, v) {
                (true, Folded::Array(inner)) => values.extend(inner),
                (true, _) => return self.error("Only arrays and Traversables can be unpacked"),
                (false, v) => values.push(v),
            }
        }
        Ok(Some(Folded::Array(values)))
    }

    /// Whether `e` is a call whose result PHP's compiler makes a
    /// temporary: a builtin it compiles to an instruction of its own, or
    /// a first-class callable.
    pub(crate) fn builtin_result(&self, e: &'a Expr<'a>) -> bool {
        match &e.kind {
            ExprKind::CallableFromName(_) | ExprKind::CallableFromValue(_) => true,
            ExprKind::Call { name, args } => self.inline_builtin(name, args),
            _ => false,
        }
    }

    /// The value PHP's compiler gives constant `name` (`true`, `false`,
    /// `null` and the builtin constants, `zend_try_ct_eval_const`), if
    /// it gives one: not for an unqualified name in a namespace, which
    /// could be the namespace's own, but for those three.
    pub(crate) fn known_constant(&self, name: &str) -> Option<Value> {
        let resolved = self.ns.const_name(name);
        let last = resolved.name.rsplit('\\').next().unwrap_or(&resolved.name);
        if resolved.fallback.is_some() || !resolved.name.contains('\\') {
            match last.to_ascii_lowercase().as_str() {
                "true" => return Some(Value::Bool(true)),
                "false" => return Some(Value::Bool(false)),
                "null" => return Some(Value::Null),
                _ => {}
            }
        }
        if resolved.fallback.is_some() {
            return None;
        }
        let key = names::to_bytes(&resolved.name);
        cg!(self.g).constant_table.get(&*key).cloned()
    }

    /// `zend_try_compile_special_func`: the builtins PHP compiles inline,
    /// each under the conditions on its arguments that PHP checks. They
    /// are PHP's core functions, which no script can redeclare.
    fn inline_builtin(&self, name: &str, args: &'a [Arg<'a>]) -> bool {
        if args.iter().any(|a| a.spread || a.name.is_some()) {
            return false;
        }
        // An unqualified name in a namespace is resolved when it runs.
        let resolved = self.ns.function_name(name);
        if resolved.fallback.is_some() {
            return false;
        }
        let name = resolved.name.as_str();
        let n = args.len();
        match name.to_ascii_lowercase().as_str() {
            "strlen" | "is_null" | "is_bool" | "is_long" | "is_int" | "is_integer" | "is_float" | "is_double"
            | "is_string" | "is_array" | "is_object" | "is_resource" | "is_scalar" | "boolval" | "intval"
            | "floatval" | "doubleval" | "strval" | "count" | "sizeof" | "gettype" => n == 1,
            "get_class" => n <= 1,
            "get_called_class" => n == 0,
            "array_key_exists" => n == 2,
            "func_num_args" | "func_get_args" => n == 0 && self.in_function,
            "defined" => {
                n == 1
                    && match &args[0].value.kind {
                        ExprKind::Str(s) => !s.contains(&b'\\') && !s.contains(&b':'),
                        // A negative number was folded by the parser: PHP
                        // sees an expression there.
                        ExprKind::Int(v) => *v >= 0,
                        ExprKind::Float(_) => true,
                        _ => false,
                    }
            }
            "array_slice" => {
                self.in_function
                    && n == 2
                    && matches!(&args[0].value.kind,
                        ExprKind::Call { name, args } if args.is_empty() && name.eq_ignore_ascii_case("func_get_args"))
                    && matches!(args[1].value.kind, ExprKind::Int(v) if v >= 0)
            }
            "in_array" => self.inline_in_array(args),
            _ => false,
        }
    }

    /// `zend_compile_func_in_array`: a constant array to search, whose
    /// values are all ints or strings (strict) or all non-numeric strings.
    fn inline_in_array(&self, args: &'a [Arg<'a>]) -> bool {
        let strict = match args {
            [_, _] => false,
            [_, _, strict] => match self.fold_truth(strict.value) {
                Some(t) => t,
                None => return false,
            },
            _ => return false,
        };
        let ExprKind::Array(items, _) = &args[1].value.kind else {
            return false;
        };
        let Ok(Some(Folded::Array(values))) = self.fold_array(items) else {
            return false;
        };
        values.iter().all(|v| match v {
            Folded::Int => strict,
            Folded::Str { numeric } => strict || !numeric,
            _ => false,
        })
    }

    /// Whether a literal or a constant PHP folds is true.
    fn fold_truth(&self, e: &'a Expr<'a>) -> Option<bool> {
        match &e.kind {
            ExprKind::Int(n) => Some(*n != 0),
            ExprKind::Float(f) => Some(*f != 0.0),
            ExprKind::Str(s) => Some(!s.is_empty() && *s != b"0"),
            ExprKind::Const(name) => self.known_constant(name).map(|v| v.to_bool()),
            _ => None,
        }
    }
}
