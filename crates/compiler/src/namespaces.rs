//! Namespaces while a file compiles: which namespace each top-level
//! statement stands in and which imports hold there (PHP's
//! `FC(current_namespace)` and its import tables), PHP's checks of the
//! `namespace` and `use` statements, and the resolution of the names the
//! code writes (`zend_resolve_class_name`, `zend_resolve_function_name`,
//! `zend_resolve_const_name`).
//!
//! The parser keeps names as written (`a`, `a\b`, `\a\b`,
//! `namespace\a`); everything here is the compiler's. A compiled name is
//! final, except an unqualified function or constant name inside a
//! namespace, which PHP looks up at run time in the namespace first and
//! then globally: such a name resolves to both (see [`Resolved`]).

use std::rc::Rc;

use hashbrown::{HashMap, HashSet};
use minizts_globals::Globals;
use minizts_syntax::ast::{Stmt, StmtKind, UseItem, UseKind};

use crate::types::{one_of, RESERVED_CLASS_NAMES};
use crate::{vars, Compiler, Result};

/// The namespace a statement stands in and the imports in force there.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    /// The namespace as declared; `None` is the global one.
    pub name: Option<Rc<str>>,
    /// Imported class names by lowercase alias.
    classes: HashMap<String, Rc<str>>,
    /// Imported function names by lowercase alias.
    functions: HashMap<String, Rc<str>>,
    /// Imported constant names by alias (case-sensitive).
    consts: HashMap<String, Rc<str>>,
}

/// A function or constant name resolved: what to look up, and, for an
/// unqualified name inside a namespace, the global name to look up when
/// that is not there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub name: String,
    pub fallback: Option<String>,
}

/// The lookup key of a constant name: PHP folds the namespace part's
/// case, not the constant's own.
pub(crate) fn const_key(name: &str) -> Vec<u8> {
    let bytes = minizts_syntax::names::to_bytes(name);
    let mut key = bytes.into_owned();
    if let Some(at) = key.iter().rposition(|&b| b == b'\\') {
        key[..at].make_ascii_lowercase();
    }
    key
}

impl Scope {
    /// `name` in the current namespace (`zend_prefix_with_ns`).
    pub fn prefixed(&self, name: &str) -> String {
        match &self.name {
            Some(ns) => format!("{ns}\\{name}"),
            None => name.to_string(),
        }
    }

    /// Whether `alias` is a class import (`zend_is_not_imported`'s
    /// question).
    pub fn imports_class(&self, alias: &str) -> bool {
        self.classes.contains_key(&alias.to_ascii_lowercase())
    }

    /// The namespace's name, empty for the global one (`__NAMESPACE__`).
    pub fn namespace(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// A qualified name whose first part is a class alias, with the
    /// alias replaced.
    fn expand_alias(&self, name: &str) -> Option<String> {
        let (first, rest) = name.split_once('\\')?;
        let target = self.classes.get(&first.to_ascii_lowercase())?;
        Some(format!("{target}\\{rest}"))
    }

    /// The class a written name means. `self`, `parent` and `static`
    /// stay as they are (the caller tells them apart); written fully
    /// qualified or relative they are PHP's error, returned as `Err`.
    pub fn class_name(&self, written: &str) -> std::result::Result<String, String> {
        let keyword = |n: &str| one_of(n, &["self", "parent", "static"]);
        if let Some(name) = written.strip_prefix('\\') {
            if keyword(name) {
                return Err(format!("'\\{name}' is an invalid class name"));
            }
            return Ok(name.to_string());
        }
        if let Some(name) = relative(written) {
            if keyword(name) {
                return Err(format!("'namespace\\{name}' is an invalid class name"));
            }
            return Ok(self.prefixed(name));
        }
        if keyword(written) {
            return Ok(written.to_string());
        }
        if written.contains('\\') {
            if let Some(full) = self.expand_alias(written) {
                return Ok(full);
            }
        } else if let Some(target) = self.classes.get(&written.to_ascii_lowercase()) {
            return Ok(target.to_string());
        }
        Ok(self.prefixed(written))
    }

    /// The function a written name calls (`zend_resolve_function_name`).
    pub fn function_name(&self, written: &str) -> Resolved {
        self.non_class_name(written, UseKind::Function)
    }

    /// The constant a written name reads (`zend_resolve_const_name`).
    pub fn const_name(&self, written: &str) -> Resolved {
        self.non_class_name(written, UseKind::Const)
    }

    fn non_class_name(&self, written: &str, kind: UseKind) -> Resolved {
        let done = |name: String| Resolved { name, fallback: None };
        if let Some(name) = written.strip_prefix('\\') {
            return done(name.to_string());
        }
        if let Some(name) = relative(written) {
            return done(self.prefixed(name));
        }
        let imported = match kind {
            UseKind::Function => self.functions.get(&written.to_ascii_lowercase()),
            _ => self.consts.get(written),
        };
        if let Some(target) = imported {
            return done(target.to_string());
        }
        if written.contains('\\') {
            return done(self.expand_alias(written).unwrap_or_else(|| self.prefixed(written)));
        }
        match &self.name {
            Some(_) => Resolved {
                name: self.prefixed(written),
                fallback: Some(written.to_string()),
            },
            None => done(written.to_string()),
        }
    }
}

/// The part after `namespace\` of a relative name.
fn relative(written: &str) -> Option<&str> {
    let head = written.get(..10)?;
    head.eq_ignore_ascii_case("namespace\\").then(|| &written[10..])
}

/// The symbols a file has declared so far (PHP's `seen_symbols`), which
/// an import may not take the name of.
#[derive(Default)]
struct Seen {
    classes: HashSet<String>,
    functions: HashSet<String>,
    consts: HashSet<String>,
}

/// The walk of a file's top level: PHP's file context.
struct Walk<'a> {
    out: Vec<(&'a Stmt<'a>, Rc<Scope>)>,
    scope: Rc<Scope>,
    /// Inside a `namespace` statement's reach (`FC(in_namespace)`).
    in_namespace: bool,
    /// The file has a braced namespace (`FC(has_bracketed_namespaces)`).
    bracketed: bool,
    seen: Seen,
}

/// PHP's word for a kind of import in messages.
fn kind_word(kind: UseKind) -> &'static str {
    match kind {
        UseKind::Class => "",
        UseKind::Function => " function",
        UseKind::Const => " const",
    }
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// The file's top-level statements with the namespace each stands
    /// in, the statements of braced namespaces in their place, after
    /// PHP's checks of the `namespace` and `use` statements (which give
    /// nothing to run).
    pub(crate) fn top_level(&mut self, stmts: &'a [Stmt<'a>]) -> Result<Vec<(&'a Stmt<'a>, Rc<Scope>)>> {
        let mut walk = Walk {
            out: Vec::new(),
            scope: Rc::new(Scope::default()),
            in_namespace: false,
            bracketed: false,
            seen: Seen::default(),
        };
        self.walk_top(stmts, &mut walk)?;
        Ok(walk.out)
    }

    fn walk_top(&mut self, stmts: &'a [Stmt<'a>], walk: &mut Walk<'a>) -> Result<()> {
        for s in stmts {
            self.at(s.pos);
            match &s.kind {
                StmtKind::Namespace { name, body, first } => {
                    self.namespace_stmt(*name, *body, *first, walk)?;
                    continue;
                }
                StmtKind::Use(items) => {
                    for item in items.iter() {
                        self.at(item.pos);
                        self.import(item, walk)?;
                    }
                }
                StmtKind::Nop => {
                    walk.out.push((s, walk.scope.clone()));
                    continue;
                }
                _ => {
                    self.see(s, walk);
                    walk.out.push((s, walk.scope.clone()));
                }
            }
            // `zend_verify_namespace`, after the statement.
            if walk.bracketed && !walk.in_namespace {
                return self.error("No code may exist outside of namespace {}");
            }
        }
        Ok(())
    }

    /// `zend_compile_namespace`.
    fn namespace_stmt(
        &mut self,
        name: Option<&'a str>,
        body: Option<&'a [Stmt<'a>]>,
        first: bool,
        walk: &mut Walk<'a>,
    ) -> Result<()> {
        let braced = body.is_some();
        let current = walk.scope.name.is_some();
        if !walk.bracketed {
            if current && braced {
                return self
                    .error("Cannot mix bracketed namespace declarations with unbracketed namespace declarations");
            }
        } else if !braced {
            return self.error("Cannot mix bracketed namespace declarations with unbracketed namespace declarations");
        } else if current || walk.in_namespace {
            return self.error("Namespace declarations cannot be nested");
        }
        let first_namespace = (!braced && !current) || (braced && !walk.bracketed);
        if first_namespace && !first {
            return self.error(
                "Namespace declaration statement has to be the very first statement or after any declare call in the script",
            );
        }
        if let Some(n) = name {
            if n.eq_ignore_ascii_case("namespace") {
                return self.error(format!("Cannot use '{n}' as namespace name"));
            }
        }
        walk.scope = Rc::new(Scope {
            name: name.map(Rc::from),
            ..Scope::default()
        });
        walk.in_namespace = true;
        if braced {
            walk.bracketed = true;
        }
        if let Some(body) = body {
            self.walk_top(body, walk)?;
            walk.in_namespace = false;
            walk.scope = Rc::new(Scope::default());
        }
        Ok(())
    }

    /// Records what a top-level statement declares (PHP registers each
    /// declaration as it compiles it).
    fn see(&mut self, s: &'a Stmt<'a>, walk: &mut Walk<'a>) {
        let scope = walk.scope.clone();
        match &s.kind {
            StmtKind::Class(c) => {
                walk.seen.classes.insert(scope.prefixed(c.name).to_ascii_lowercase());
            }
            StmtKind::Const(items) => {
                for (n, _) in items.iter() {
                    walk.seen.consts.insert(scope.prefixed(n));
                }
            }
            _ => {}
        }
        let seen = &mut walk.seen;
        vars::walk_stmt_decls(s, &mut |f| {
            seen.functions.insert(scope.prefixed(f.name).to_ascii_lowercase());
        });
    }

    /// One import of a `use` statement (`zend_compile_use`).
    fn import(&mut self, item: &UseItem<'a>, walk: &mut Walk<'a>) -> Result<()> {
        let old = item.name;
        let new = match item.alias {
            Some(a) => a.to_string(),
            None => match old.rsplit_once('\\') {
                Some((_, last)) => last.to_string(),
                None => {
                    if walk.scope.name.is_none() {
                        // A compile-time warning PHP prints before the
                        // script runs.
                        self.compile_warning(
                            format!("The use statement with non-compound name '{old}' has no effect"),
                            false,
                        );
                    }
                    old.to_string()
                }
            },
        };
        let lookup = match item.kind {
            UseKind::Const => new.clone(),
            _ => new.to_ascii_lowercase(),
        };
        if item.kind == UseKind::Class && one_of(&new, &RESERVED_CLASS_NAMES) {
            return self.error(format!(
                "Cannot use {old} as {new} because '{new}' is a special class name"
            ));
        }
        let in_use = || {
            format!(
                "Cannot use{} {old} as {new} because the name is already in use",
                kind_word(item.kind)
            )
        };
        let check = match &walk.scope.name {
            Some(ns) => format!("{}\\{lookup}", ns.to_ascii_lowercase()),
            None => lookup.clone(),
        };
        let seen = match item.kind {
            UseKind::Class => &walk.seen.classes,
            UseKind::Function => &walk.seen.functions,
            UseKind::Const => &walk.seen.consts,
        };
        if seen.contains(&check) && !old.eq_ignore_ascii_case(&check) {
            return self.error(in_use());
        }
        let scope = Rc::make_mut(&mut walk.scope);
        let table = match item.kind {
            UseKind::Class => &mut scope.classes,
            UseKind::Function => &mut scope.functions,
            UseKind::Const => &mut scope.consts,
        };
        if table.contains_key(&lookup) {
            return self.error(in_use());
        }
        table.insert(lookup, Rc::from(old));
        Ok(())
    }

    /// PHP's check that a declaration does not take an imported name
    /// (`Cannot declare class A\B because the name is already in use`).
    pub(crate) fn check_declaration(&self, kind: UseKind, unqualified: &str, full: &str) -> Result<()> {
        let (word, import) = match kind {
            UseKind::Class => ("class", self.ns.classes.get(&unqualified.to_ascii_lowercase())),
            UseKind::Function => ("function", self.ns.functions.get(&unqualified.to_ascii_lowercase())),
            UseKind::Const => ("const", self.ns.consts.get(unqualified)),
        };
        let same = |i: &str| match kind {
            UseKind::Const => i == full,
            _ => i.eq_ignore_ascii_case(full),
        };
        match import {
            Some(i) if !same(i) => self.error(format!(
                "Cannot declare {word} {full} because the name is already in use"
            )),
            _ => Ok(()),
        }
    }
}
