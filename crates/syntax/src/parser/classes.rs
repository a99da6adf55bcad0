//! The builder's part for classes and exceptions: class-like
//! declarations and their members, with the checks PHP's parser makes on
//! modifiers (`zend_add_class_modifier`, `zend_add_member_modifier`), and
//! `try` statements. What needs the rest of the class (redeclared members,
//! abstract methods with bodies, interface rules) is the compiler's.

use super::{fatal_error, user_error, Builder, ParseResult};
use crate::ast::*;

/// What a member's modifiers may be checked as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MemberKind {
    Method,
    Property,
    Const,
}

impl<'a> Builder<'a> {
    /// `try` needs at least one `catch` or a `finally`.
    pub fn try_stmt(
        &self,
        pos: usize,
        body: Vec<Stmt<'a>>,
        catches: Vec<Catch<'a>>,
        finally: Option<Vec<Stmt<'a>>>,
    ) -> ParseResult<'a, Stmt<'a>> {
        if catches.is_empty() && finally.is_none() {
            return fatal_error(pos, "Cannot use try without catch or finally");
        }
        Ok(self.stmt(
            pos,
            StmtKind::Try {
                body: self.slice(body),
                catches: self.slice(catches),
                finally: finally.map(|f| self.slice(f)),
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn class_decl(
        &self,
        pos: usize,
        end_pos: usize,
        kind: ClassKind,
        name: &'a str,
        class_modifiers: Vec<(usize, u16)>,
        parent: Option<&'a str>,
        interfaces: Vec<&'a str>,
        backing: Option<&'a TypeHint<'a>>,
        members: Vec<Member<'a>>,
        attributes: Vec<Attribute<'a>>,
    ) -> ParseResult<'a, &'a ClassDecl<'a>> {
        let mut mods = 0u16;
        for (at, m) in class_modifiers {
            if mods & m != 0 {
                return fatal_error(
                    at,
                    format!("Multiple {} modifiers are not allowed", modifiers::keyword(m)),
                );
            }
            mods |= m;
            if mods & modifiers::ABSTRACT != 0 && mods & modifiers::FINAL != 0 {
                return fatal_error(at, "Cannot use the final modifier on an abstract class");
            }
        }
        Ok(self.alloc(ClassDecl {
            pos: pos as u32,
            end_pos: end_pos as u32,
            kind,
            name,
            modifiers: mods,
            parent,
            interfaces: self.slice(interfaces),
            backing,
            members: self.slice(members),
            attributes: self.slice(attributes),
        }))
    }

    /// Combines a member's modifiers as PHP's parser does, with its errors.
    fn member_modifiers(&self, kind: MemberKind, list: &[(usize, u16)]) -> ParseResult<'a, u16> {
        let mut mods = 0u16;
        for &(at, m) in list {
            let m = if m == modifiers::VAR { modifiers::PUBLIC } else { m };
            if m & modifiers::VISIBILITY != 0 && mods & modifiers::VISIBILITY != 0 {
                return fatal_error(at, "Multiple access type modifiers are not allowed");
            }
            if mods & m != 0 {
                return fatal_error(
                    at,
                    format!("Multiple {} modifiers are not allowed", modifiers::keyword(m)),
                );
            }
            if kind == MemberKind::Const {
                for bad in [modifiers::STATIC, modifiers::ABSTRACT, modifiers::READONLY] {
                    if m == bad {
                        return fatal_error(
                            at,
                            format!("Cannot use '{}' as constant modifier", modifiers::keyword(m)),
                        );
                    }
                }
            }
            mods |= m;
            if mods & modifiers::ABSTRACT != 0 && mods & modifiers::FINAL != 0 {
                return fatal_error(at, "Cannot use the final modifier on an abstract class member");
            }
        }
        Ok(mods)
    }

    pub fn const_member(
        &self,
        pos: usize,
        mods: Vec<(usize, u16)>,
        items: Vec<(&'a str, &'a Expr<'a>)>,
    ) -> ParseResult<'a, Member<'a>> {
        let modifiers = self.member_modifiers(MemberKind::Const, &mods)?;
        if let Some(&(name, _)) = items.iter().find(|(n, _)| n.eq_ignore_ascii_case("class")) {
            let _ = name;
            return fatal_error(
                pos,
                "A class constant must not be called 'class'; it is reserved for class name fetching",
            );
        }
        Ok(Member::Const {
            pos: pos as u32,
            modifiers,
            items: self.slice(items),
        })
    }

    pub fn property_member(
        &self,
        pos: usize,
        mods: Vec<(usize, u16)>,
        ty: Option<&'a TypeHint<'a>>,
        items: Vec<PropertyItem<'a>>,
    ) -> ParseResult<'a, Member<'a>> {
        // A property needs a modifier (`var` at least): without one, the
        // variable is where PHP's grammar stops.
        if mods.is_empty() {
            let (at, name) = match ty {
                Some(_) => (pos, None),
                None => (items[0].pos as usize, Some(items[0].name)),
            };
            return match name {
                Some(n) => user_error(
                    at,
                    format!("syntax error, unexpected variable \"${n}\", expecting \"function\" or \"const\""),
                ),
                None => user_error(at, "syntax error, unexpected identifier"),
            };
        }
        let modifiers = self.member_modifiers(MemberKind::Property, &mods)?;
        Ok(Member::Property {
            pos: pos as u32,
            modifiers,
            ty,
            items: self.slice(items),
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn method_member(
        &self,
        pos: usize,
        mods: Vec<(usize, u16)>,
        end_pos: usize,
        name: &'a str,
        params: Vec<Param<'a>>,
        by_ref_return: bool,
        return_type: Option<&'a TypeHint<'a>>,
        body: Option<Vec<Stmt<'a>>>,
        attributes: Option<Vec<Attribute<'a>>>,
    ) -> ParseResult<'a, Member<'a>> {
        let modifiers = self.member_modifiers(MemberKind::Method, &mods)?;
        let body = match body {
            Some(stmts) => FunctionBody::Block(self.slice(stmts)),
            None => FunctionBody::None,
        };
        let decl = self.function(
            pos,
            end_pos,
            name,
            params,
            by_ref_return,
            return_type,
            Vec::new(),
            body,
            attributes,
            modifiers & modifiers::STATIC != 0,
        );
        Ok(Member::Method { modifiers, decl })
    }

    /// `callee(args)`: a call of a property as written (`$o->m()`) or of a
    /// class member (`A::m()`, `A::$name()`) is a method call; anything
    /// else calls the callee's value.
    pub fn call_value(&self, pos: usize, callee: &'a Expr<'a>, args: Vec<Arg<'a>>) -> &'a Expr<'a> {
        let args = self.slice(args);
        if !self.is_parenthesized(callee) {
            match callee.kind {
                ExprKind::Prop { obj, name, nullsafe } => {
                    return self.expr(
                        pos,
                        ExprKind::MethodCall {
                            obj,
                            name,
                            args,
                            nullsafe,
                        },
                    )
                }
                ExprKind::ClassConst { class, name } => {
                    return self.expr(
                        pos,
                        ExprKind::StaticCall {
                            class,
                            name: MemberName::Ident(name),
                            args,
                        },
                    )
                }
                ExprKind::StaticProp { class, name } => {
                    let name = match name {
                        MemberName::Ident(v) => MemberName::Expr(self.expr(callee.pos as usize, ExprKind::Var(v))),
                        MemberName::Expr(e) => MemberName::Expr(
                            self.expr(callee.pos as usize, ExprKind::VarVar { name: e, global: false }),
                        ),
                    };
                    return self.expr(pos, ExprKind::StaticCall { class, name, args });
                }
                _ => {}
            }
        }
        self.expr(pos, ExprKind::CallValue { callee, args })
    }

    /// `callee(...)`: a method's first-class callable for a property or
    /// class member as written.
    pub fn callable_from_value(&self, pos: usize, callee: &'a Expr<'a>) -> &'a Expr<'a> {
        if !self.is_parenthesized(callee) {
            match callee.kind {
                ExprKind::Prop { obj, name, .. } => {
                    return self.expr(pos, ExprKind::MethodCallable { obj, name });
                }
                ExprKind::ClassConst { class, name } => {
                    return self.expr(
                        pos,
                        ExprKind::StaticCallable {
                            class,
                            name: MemberName::Ident(name),
                        },
                    );
                }
                _ => {}
            }
        }
        self.expr(pos, ExprKind::CallableFromValue(callee))
    }
}
