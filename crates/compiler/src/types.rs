//! Type declarations: compiling a parameter or return type to a
//! [`TypeDecl`] with PHP's compile-time checks (`zend_compile_typename`,
//! the default-value check of `zend_compile_params`, the `return`
//! checks of `zend_emit_return_type_check`), and the instructions that
//! check them when the function runs.

use std::borrow::Cow;

use minizts_core::bytecode::{type_bits as bits, Op, Reg, TypeDecl, NO_CACHE};
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::{Expr, ExprKind, FunctionDecl, TypeHint};

use crate::{Compiler, Result};

/// Where a type is declared (some types are allowed only for returns).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Param,
    Return,
}

/// A builtin type's bits, or `None` for a class name.
fn builtin_bits(name: &str) -> Option<u16> {
    Some(match name.to_ascii_lowercase().as_str() {
        "null" => bits::NULL,
        "false" => bits::FALSE,
        "true" => bits::TRUE,
        "bool" => bits::BOOL,
        "int" => bits::INT,
        "float" => bits::FLOAT,
        "string" => bits::STRING,
        "array" => bits::ARRAY,
        "object" => bits::OBJECT,
        "callable" => bits::CALLABLE,
        "void" => bits::VOID,
        "never" => bits::NEVER,
        "static" => bits::STATIC,
        "mixed" => bits::ANY | bits::MIXED,
        _ => return None,
    })
}

/// Whether a parameter's default is a literal, whose type the compiler
/// checks (the others are checked when they are evaluated).
pub(crate) fn literal_default(e: &Expr<'_>) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Array(..) => true,
        ExprKind::Const(c) => ["null", "true", "false"].iter().any(|k| c.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

/// The names PHP 8.2 reads as builtin types when written unqualified
/// (`zend_lookup_builtin_type_by_name`; `array`, `callable` and `static`
/// are keywords).
const BUILTIN_NAMES: [&str; 12] = [
    "null", "true", "false", "int", "float", "string", "bool", "void", "never", "iterable", "object", "mixed",
];

/// The names no class may have (`zend_is_reserved_class_name`).
pub(crate) const RESERVED_CLASS_NAMES: [&str; 15] = [
    "bool", "false", "float", "int", "null", "parent", "self", "static", "string", "true", "void", "never", "iterable",
    "object", "mixed",
];

/// Whether no class may be named `name` (`class_alias` checks it at
/// run time).
pub fn is_reserved_class_name(name: &str) -> bool {
    one_of(name, &RESERVED_CLASS_NAMES)
}

pub(crate) fn one_of(name: &str, list: &[&str]) -> bool {
    list.iter().any(|n| name.eq_ignore_ascii_case(n))
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// The type a name of a declaration stands for, after PHP's checks of
    /// how it is written (`zend_compile_single_typename`): a builtin type
    /// only unqualified, no class with a reserved name, and `self`,
    /// `parent` and `static` only where a class scope may be, which a
    /// named function never has (a closure may be bound to one).
    fn type_name(&self, written: &'a str, closure: bool) -> Result<Cow<'a, str>> {
        let relative = written.get(..10).is_some_and(|h| h.eq_ignore_ascii_case("namespace\\"));
        let bare = written
            .strip_prefix('\\')
            .or(if relative { Some(&written[10..]) } else { None });
        if let Some(name) = bare {
            if one_of(name, &BUILTIN_NAMES) {
                let lower = name.to_ascii_lowercase();
                return self.error(format!("Type declaration '{lower}' must be unqualified"));
            }
            // (`'\self' is an invalid class name` and its kin.)
            return self.class_type_name(written);
        }
        if written.contains('\\') {
            return self.class_type_name(written);
        }
        if !closure && one_of(written, &["self", "parent", "static"]) {
            let lower = written.to_ascii_lowercase();
            return self.error(format!("Cannot use \"{lower}\" when no class scope is active"));
        }
        // Builtin types and `self`, `parent`, `static` are no class of
        // the namespace.
        if builtin_bits(written).is_some() || one_of(written, &["iterable", "self", "parent"]) {
            return Ok(Cow::Borrowed(written));
        }
        let class = self.class_type_name(written)?;
        // A class PHP suspects was meant as a builtin type (the check is
        // case-sensitive: `Integer` is likely a class).
        let confusable = match written {
            "boolean" => Some(Some("bool")),
            "integer" => Some(Some("int")),
            "double" => Some(Some("float")),
            "resource" => Some(None),
            _ => None,
        };
        if let Some(correct) = confusable.filter(|_| !self.ns.imports_class(written)) {
            let extra = if self.ns.name.is_some() {
                " or import the class with \"use\""
            } else {
                ""
            };
            let message = match correct {
                Some(correct) => format!(
                    "\"{written}\" will be interpreted as a class name. Did you mean \"{correct}\"? Write \"\\{class}\"{extra} to suppress this warning"
                ),
                None => format!(
                    "\"{written}\" is not a supported builtin type and will be interpreted as a class name. Write \"\\{class}\"{extra} to suppress this warning"
                ),
            };
            self.compile_warning(message, true);
        }
        Ok(class)
    }

    /// A type naming a class: resolved, and not a reserved name
    /// (`zend_assert_valid_class_name`, which names the class resolved).
    fn class_type_name(&self, written: &str) -> Result<Cow<'a, str>> {
        let class = self.class_name(written)?;
        let last = class.rsplit('\\').next().unwrap_or(&class);
        if one_of(last, &RESERVED_CLASS_NAMES) {
            return self.error(format!("Cannot use '{class}' as class name as it is reserved"));
        }
        Ok(Cow::Owned(class))
    }

    /// Compiles a declared type, with PHP's compile-time errors.
    pub(crate) fn type_decl(&self, hint: &TypeHint<'a>, place: Place, closure: bool) -> Result<TypeDecl> {
        if hint.intersection {
            return self.intersection_type(hint, closure);
        }
        let mut mask = 0u16;
        let mut classes: Vec<Box<str>> = Vec::new();
        // `iterable`'s `Traversable` does not count as a class type next
        // to `object`.
        let mut from_iterable = 0;
        // A DNF type's members, or a union's names as one-name members.
        let members: Vec<&'a [&'a str]> = if hint.dnf.is_empty() {
            hint.names.iter().map(std::slice::from_ref).collect()
        } else {
            hint.dnf.to_vec()
        };
        let union = members.len() > 1;
        for member in members {
            if member.len() > 1 {
                classes.push(self.dnf_intersection(member, &classes, closure)?);
                continue;
            }
            let name = self.type_name(member[0], closure)?;
            let name = &*name;
            let (single, class): (u16, Option<&str>) = match name.to_ascii_lowercase().as_str() {
                // PHP 8.2 compiles `iterable` to `Traversable|array`.
                "iterable" => {
                    from_iterable = 1;
                    (bits::ARRAY, Some("Traversable"))
                }
                _ => match builtin_bits(name) {
                    Some(b) => (b, None),
                    None => (0, Some(name)),
                },
            };
            if union && single & bits::MIXED != 0 {
                return self.error("Type mixed can only be used as a standalone type");
            }
            let overlap = mask & single;
            if overlap != 0 {
                let dup = TypeDecl {
                    mask: overlap,
                    classes: Box::new([]),
                    intersection: false,
                };
                return self.error(format!("Duplicate type {} is redundant", dup.to_php_string()));
            }
            if (mask & bits::TRUE != 0 && single == bits::FALSE) || (mask & bits::FALSE != 0 && single == bits::TRUE) {
                return self.error("Type contains both true and false, bool should be used instead");
            }
            mask |= single;
            if let Some(class) = class {
                for c in classes.iter() {
                    if c.eq_ignore_ascii_case(class) {
                        return self.error(format!("Duplicate type {class} is redundant"));
                    }
                    if c.contains('&') && c.split('&').any(|n| n.eq_ignore_ascii_case(class)) {
                        return self.error(format!(
                            "Type {c} is redundant as it is more restrictive than type {class}"
                        ));
                    }
                }
                classes.push(class.into());
            }
        }
        if hint.nullable {
            if mask & bits::MIXED != 0 {
                return self.error("Type mixed cannot be marked as nullable since mixed already includes null");
            }
            if mask & bits::NULL != 0 {
                return self.error("null cannot be marked as nullable");
            }
            mask |= bits::NULL;
        }
        if mask & bits::VOID != 0 && (mask != bits::VOID || !classes.is_empty()) {
            return self.error("Void can only be used as a standalone type");
        }
        if mask & bits::NEVER != 0 && (mask != bits::NEVER || !classes.is_empty()) {
            return self.error("never can only be used as a standalone type");
        }
        let ty = TypeDecl {
            mask,
            classes: classes.into(),
            intersection: false,
        };
        if mask & bits::OBJECT != 0 && (ty.classes.len() > from_iterable || mask & bits::STATIC != 0) {
            return self.error(format!(
                "Type {} contains both object and a class type, which is redundant",
                ty.to_php_string()
            ));
        }
        if place == Place::Param {
            for (bit, name) in [(bits::VOID, "void"), (bits::NEVER, "never")] {
                if mask & bit != 0 {
                    return self.error(format!("{name} cannot be used as a parameter type"));
                }
            }
        }
        Ok(ty)
    }

    /// An intersection member of a DNF type, as [`TypeDecl::classes`]
    /// keeps it (its names joined by `&`), after PHP's checks against
    /// the members before it (`zend_are_intersection_types_redundant`,
    /// `zend_is_intersection_type_redundant_by_single_type`).
    fn dnf_intersection(&self, names: &'a [&'a str], before: &[Box<str>], closure: bool) -> Result<Box<str>> {
        let hint = TypeHint {
            nullable: false,
            intersection: true,
            names,
            dnf: &[],
        };
        let group = self.intersection_type(&hint, closure)?;
        let text = group.classes.join("&");
        let has = |list: &[&str], name: &str| list.iter().any(|n| n.eq_ignore_ascii_case(name));
        let mine: Vec<&str> = group.classes.iter().map(|c| &**c).collect();
        for other in before {
            let other_names: Vec<&str> = other.split('&').collect();
            if other_names.len() == 1 {
                if has(&mine, other) {
                    return self.error(format!(
                        "Type {text} is redundant as it is more restrictive than type {other}"
                    ));
                }
                continue;
            }
            // The smaller list against the larger, as PHP compares them.
            let (smaller, larger, smaller_text, larger_text) = if other_names.len() < mine.len() {
                (&other_names, &mine, &**other, &*text)
            } else {
                (&mine, &other_names, &*text, &**other)
            };
            if smaller.iter().all(|n| has(larger, n)) {
                return if smaller.len() == larger.len() {
                    self.error(format!("Type {smaller_text} is redundant with type {larger_text}"))
                } else {
                    self.error(format!(
                        "Type {larger_text} is redundant as it is more restrictive than type {smaller_text}"
                    ))
                };
            }
        }
        Ok(text.into())
    }

    /// `A&B`: class types only.
    fn intersection_type(&self, hint: &TypeHint<'a>, closure: bool) -> Result<TypeDecl> {
        let mut classes: Vec<Box<str>> = Vec::new();
        for name in hint.names.iter() {
            let name = self.type_name(name, closure)?;
            let name = &*name;
            let builtin = match name.to_ascii_lowercase().as_str() {
                "iterable" => Some("Traversable|array".to_string()),
                _ => builtin_bits(name).map(|mask| {
                    TypeDecl {
                        mask,
                        classes: Box::new([]),
                        intersection: false,
                    }
                    .to_php_string()
                }),
            };
            if let Some(t) = builtin {
                return self.error(format!("Type {t} cannot be part of an intersection type"));
            }
            if one_of(name, &["self", "parent"]) {
                return self.error(format!("Type {name} cannot be part of an intersection type"));
            }
            if classes.iter().any(|c| c.eq_ignore_ascii_case(name)) {
                return self.error(format!("Duplicate type {name} is redundant"));
            }
            classes.push(name.into());
        }
        Ok(TypeDecl {
            mask: 0,
            classes: classes.into(),
            intersection: true,
        })
    }

    /// A parameter's type, made nullable by a `null` default (PHP's
    /// implicit nullable), with PHP's check that a literal default fits.
    pub(crate) fn param_type(
        &self,
        hint: &TypeHint<'a>,
        name: &str,
        default: Option<&'a Expr<'a>>,
        closure: bool,
    ) -> Result<TypeDecl> {
        let mut ty = self.type_decl(hint, Place::Param, closure)?;
        let Some(default) = default else { return Ok(ty) };
        let Some((given, bit)) = literal_kind(default) else {
            return Ok(ty);
        };
        if bit == bits::NULL {
            // An intersection made nullable is the DNF type `(A&B)|null`.
            if ty.intersection {
                ty.classes = Box::new([ty.classes.join("&").into()]);
                ty.intersection = false;
            }
            ty.mask |= bits::NULL;
            return Ok(ty);
        }
        if !literal_fits(&ty, bit) {
            return self.error(format!(
                "Cannot use {given} as default value for parameter ${name} of type {}",
                ty.to_php_string()
            ));
        }
        Ok(ty)
    }

    /// PHP's compile-time checks of a `return` in a function with a
    /// declared return type.
    pub(crate) fn check_return(&self, value: Option<&'a Expr<'a>>) -> Result<()> {
        let Some(ty) = &self.return_type else { return Ok(()) };
        if ty.mask == bits::VOID {
            return match value {
                None => Ok(()),
                Some(e) if matches!(e.kind, ExprKind::Const(c) if c.eq_ignore_ascii_case("null")) => self.error(
                    "A void function must not return a value (did you mean \"return;\" instead of \"return null;\"?)",
                ),
                Some(_) => self.error("A void function must not return a value"),
            };
        }
        if ty.mask == bits::NEVER {
            return self.error("A never-returning function must not return");
        }
        if value.is_none() {
            if ty.allows_null() {
                return self.error(
                    "A function with return type must return a value (did you mean \"return null;\" instead of \"return;\"?)",
                );
            }
            return self.error("A function with return type must return a value");
        }
        Ok(())
    }

    /// The typed parameters' checks at the function's entry.
    pub(crate) fn emit_param_checks(&mut self, f: &'a FunctionDecl<'a>) {
        for (i, p) in f.params.iter().enumerate() {
            if p.ty.is_some() {
                self.at(p.pos);
                let cache = cg!(self.g, |cg| cg
                    .op_array()
                    .params
                    .get(i)
                    .and_then(|p| p.ty.as_ref())
                    .map(cache_for));
                self.emit(Op::VerifyArg {
                    param: i as u16,
                    cache: cache.unwrap_or(NO_CACHE),
                });
            }
        }
    }

    /// Where a `return`'s value goes through the return type check:
    /// `v` itself when there is none (or it is `void`).
    pub(crate) fn checked_return(&mut self, v: minizts_core::bytecode::Src) -> Result<minizts_core::bytecode::Src> {
        match &self.return_type {
            Some(ty) if ty.mask != bits::VOID && ty.mask & bits::MIXED == 0 => {
                let cache = cache_for(ty);
                let dst: Reg = self.temp()?;
                self.emit(Op::VerifyReturn { dst, src: v, cache });
                Ok(minizts_core::bytecode::Src::reg(dst))
            }
            _ => Ok(v),
        }
    }
}

/// A type check's cache slot request: a slot (numbered when the function
/// is finished) for a type that names one class, where the slot keeps the
/// class the name stands for; none for the others.
fn cache_for(ty: &TypeDecl) -> u16 {
    match &*ty.classes {
        [name] if !ty.intersection && !name.contains('&') && !is_relative(name) => 0,
        _ => NO_CACHE,
    }
}

/// `self`, `parent` or `static`, which name a class by the frame's scope.
fn is_relative(name: &str) -> bool {
    ["self", "parent", "static"]
        .iter()
        .any(|r| name.eq_ignore_ascii_case(r))
}

/// The type name and bit of a default value that is a literal (`-1`
/// too), as PHP's compile-time checks of defaults see it; `None` for a
/// constant expression, checked when it is evaluated.
pub(crate) fn literal_kind(e: &Expr<'_>) -> Option<(&'static str, u16)> {
    Some(match &e.kind {
        ExprKind::Int(_) => ("int", bits::INT),
        ExprKind::Float(_) => ("float", bits::FLOAT),
        ExprKind::Unary {
            op: minizts_syntax::ast::UnaryOp::Neg | minizts_syntax::ast::UnaryOp::Plus,
            expr,
        } => match expr.kind {
            ExprKind::Int(_) => ("int", bits::INT),
            ExprKind::Float(_) => ("float", bits::FLOAT),
            _ => return None,
        },
        ExprKind::Str(_) => ("string", bits::STRING),
        ExprKind::Array(_, _) => ("array", bits::ARRAY),
        ExprKind::Const(c) if c.eq_ignore_ascii_case("null") => ("null", bits::NULL),
        ExprKind::Const(c) if c.eq_ignore_ascii_case("true") => ("bool", bits::TRUE),
        ExprKind::Const(c) if c.eq_ignore_ascii_case("false") => ("bool", bits::FALSE),
        _ => return None,
    })
}

/// Whether a literal of type `bit` is a valid default for `ty`
/// (`zend_is_valid_default_value`: an int also for a float).
pub(crate) fn literal_fits(ty: &TypeDecl, bit: u16) -> bool {
    ty.mask & bit != 0 || (bit == bits::INT && ty.mask & bits::FLOAT != 0)
}
