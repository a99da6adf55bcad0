//! Method signature compatibility: PHP's Liskov checks of a method
//! against the one it overrides or implements
//! (`zend_do_perform_implementation_check` and the type checks under
//! it: covariant return types, contravariant parameter types), and the
//! declarations its errors print (`zend_get_function_declaration`).
//!
//! A check may need a class no one has declared yet (a type names it):
//! it is then unresolved, and the names it needed are collected, as
//! PHP's `CG(delayed_autoloads)` collects them.

use std::rc::Rc;
use std::sync::OnceLock;

use hashbrown::HashMap;
use minizts_core::bytecode::{type_bits as bits, FuncId, ParamInfo, TypeDecl};
use minizts_core::object::{Class, MethodBody};
use minizts_globals::Globals;

use super::link::{unlinked, Draft};

/// How a check came out (PHP's `inheritance_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Error,
    /// Only a tentative return type of a builtin method is broken: a
    /// deprecation, not an error.
    Warning,
    /// A class the check needs is not declared.
    Unresolved,
    Success,
}

/// A class as the checks see it: the one being linked (not registered
/// yet) or a linked one.
#[derive(Clone)]
pub(super) enum ClassRef {
    Draft,
    Linked(Rc<Class>),
    /// Another class whose declaration is being linked.
    Unlinked(Rc<super::link::Unlinked>),
}

/// A method's signature, borrowed from its function (or, for a builtin
/// method, from the signatures below).
pub(super) struct Sig<'s> {
    /// The class name the declaration prints before `::`.
    pub class: String,
    pub name: String,
    pub params: &'s [ParamInfo],
    pub required: usize,
    pub ret: Option<&'s TypeDecl>,
    /// The return type is a builtin method's tentative one.
    pub tentative: bool,
    pub by_ref_return: bool,
    /// A user function: its file and first line, where its errors are.
    pub at: Option<(Box<str>, u32)>,
}

/// The signature of a method with `body`, printed as a method of
/// `class` named `name`; `None` for a builtin method whose signature
/// minizts does not know (it is not checked).
pub(super) fn sig_of<'s, G: Globals>(g: G, body: MethodBody, class: String, name: String) -> Option<Sig<'s>> {
    match body {
        MethodBody::User(id) => {
            // SAFETY: the function outlives the link (it is the
            // request's).
            let f = unsafe { crate::code::function(g, id) }?;
            Some(Sig {
                class,
                name,
                params: &f.params,
                required: f.required as usize,
                ret: f.return_type.as_ref(),
                tentative: false,
                by_ref_return: f.by_ref_return,
                at: Some((crate::code::file_of(g, id as FuncId), f.line_start)),
            })
        }
        MethodBody::Native(nid) => {
            let &(owner, method, _) = crate::natives::NATIVES.get(nid as usize)?;
            let parsed = native_sigs().get(&(owner, method))?;
            Some(Sig {
                class,
                name,
                params: &parsed.params,
                required: parsed.required,
                ret: parsed.ret.as_ref(),
                tentative: parsed.tentative,
                by_ref_return: false,
                at: None,
            })
        }
    }
}

/// A builtin method's signature, parsed from [`NATIVE_SIGNATURES`].
struct NativeSig {
    params: Vec<ParamInfo>,
    required: usize,
    ret: Option<TypeDecl>,
    tentative: bool,
}

/// The signatures of the builtin methods a user class may override or
/// implement, as PHP 8.2's stubs declare them: (class, method,
/// parameters, return type, whether the return type is tentative).
const NATIVE_SIGNATURES: &[(&str, &str, &str, &str, bool)] = &[
    ("IteratorAggregate", "getIterator", "", "Traversable", true),
    ("Iterator", "current", "", "mixed", true),
    ("Iterator", "next", "", "void", true),
    ("Iterator", "key", "", "mixed", true),
    ("Iterator", "valid", "", "bool", true),
    ("Iterator", "rewind", "", "void", true),
    ("SeekableIterator", "seek", "int $offset", "void", true),
    ("ArrayAccess", "offsetExists", "mixed $offset", "bool", true),
    ("ArrayAccess", "offsetGet", "mixed $offset", "mixed", true),
    ("ArrayAccess", "offsetSet", "mixed $offset, mixed $value", "void", true),
    ("ArrayAccess", "offsetUnset", "mixed $offset", "void", true),
    ("Countable", "count", "", "int", true),
    ("Stringable", "__toString", "", "string", false),
    ("JsonSerializable", "jsonSerialize", "", "mixed", true),
    ("Serializable", "serialize", "", "", false),
    ("Serializable", "unserialize", "string $data", "", false),
    ("UnitEnum", "cases", "", "array", false),
    ("BackedEnum", "from", "int|string $value", "static", false),
    ("BackedEnum", "tryFrom", "int|string $value", "?static", false),
    ("Throwable", "getMessage", "", "string", false),
    ("Throwable", "getCode", "", "", false),
    ("Throwable", "getFile", "", "string", false),
    ("Throwable", "getLine", "", "int", false),
    ("Throwable", "getTrace", "", "array", false),
    ("Throwable", "getPrevious", "", "?Throwable", false),
    ("Throwable", "getTraceAsString", "", "string", false),
    (
        "Exception",
        "__construct",
        "string $message = \"\", int $code = 0, ?Throwable $previous = null",
        "",
        false,
    ),
    ("Exception", "getMessage", "", "string", false),
    ("Exception", "getCode", "", "", false),
    ("Exception", "getFile", "", "string", false),
    ("Exception", "getLine", "", "int", false),
    ("Exception", "getTrace", "", "array", false),
    ("Exception", "getPrevious", "", "?Throwable", false),
    ("Exception", "getTraceAsString", "", "string", false),
    ("Exception", "__toString", "", "string", false),
    (
        "Error",
        "__construct",
        "string $message = \"\", int $code = 0, ?Throwable $previous = null",
        "",
        false,
    ),
    ("Error", "getMessage", "", "string", false),
    ("Error", "getCode", "", "", false),
    ("Error", "getFile", "", "string", false),
    ("Error", "getLine", "", "int", false),
    ("Error", "getTrace", "", "array", false),
    ("Error", "getPrevious", "", "?Throwable", false),
    ("Error", "getTraceAsString", "", "string", false),
    ("Error", "__toString", "", "string", false),
    ("ErrorException", "getSeverity", "", "int", false),
    ("ArrayIterator", "offsetExists", "mixed $key", "bool", true),
    ("ArrayIterator", "offsetGet", "mixed $key", "mixed", true),
    ("ArrayIterator", "offsetSet", "mixed $key, mixed $value", "void", true),
    ("ArrayIterator", "offsetUnset", "mixed $key", "void", true),
    ("ArrayIterator", "count", "", "int", true),
    ("ArrayIterator", "current", "", "mixed", true),
    ("ArrayIterator", "key", "", "string|int|null", true),
    ("ArrayIterator", "next", "", "void", true),
    ("ArrayIterator", "valid", "", "bool", true),
    ("ArrayIterator", "rewind", "", "void", true),
    ("ArrayIterator", "seek", "int $offset", "void", true),
    ("ArrayObject", "offsetExists", "mixed $key", "bool", true),
    ("ArrayObject", "offsetGet", "mixed $key", "mixed", true),
    ("ArrayObject", "offsetSet", "mixed $key, mixed $value", "void", true),
    ("ArrayObject", "offsetUnset", "mixed $key", "void", true),
    ("ArrayObject", "count", "", "int", true),
    ("ArrayObject", "getIterator", "", "Iterator", true),
];

fn native_sigs() -> &'static HashMap<(&'static str, &'static str), NativeSig> {
    static SIGS: OnceLock<HashMap<(&'static str, &'static str), NativeSig>> = OnceLock::new();
    SIGS.get_or_init(|| {
        NATIVE_SIGNATURES
            .iter()
            .map(|&(class, method, params, ret, tentative)| {
                let params: Vec<ParamInfo> = if params.is_empty() {
                    Vec::new()
                } else {
                    params.split(", ").map(parse_param).collect()
                };
                let required = params
                    .iter()
                    .rposition(|p| !p.has_default && !p.variadic)
                    .map_or(0, |i| i + 1);
                let ret = (!ret.is_empty()).then(|| parse_type(ret));
                (
                    (class, method),
                    NativeSig {
                        params,
                        required,
                        ret,
                        tentative,
                    },
                )
            })
            .collect()
    })
}

/// `[type ][&][...]$name[ = default]` of a stub.
fn parse_param(text: &str) -> ParamInfo {
    let (decl, default) = match text.split_once(" = ") {
        Some((d, v)) => (d, Some(v)),
        None => (text, None),
    };
    let (ty, var) = match decl.rsplit_once(' ') {
        Some((t, v)) => (Some(parse_type(t)), v),
        None => (None, decl),
    };
    let by_ref = var.starts_with('&');
    let var = var.trim_start_matches('&');
    let variadic = var.starts_with("...");
    let name = var.trim_start_matches("...").trim_start_matches('$');
    ParamInfo {
        name: name.into(),
        by_ref,
        has_default: default.is_some(),
        variadic,
        ty,
        // Internal functions print their stub's default as written.
        default: default.map(Into::into),
        sensitive: false,
    }
}

/// A stub's type: `int|string`, `?Throwable`, `mixed`, a class.
fn parse_type(text: &str) -> TypeDecl {
    let (nullable, text) = match text.strip_prefix('?') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let mut mask = if nullable { bits::NULL } else { 0 };
    let mut classes: Vec<Box<str>> = Vec::new();
    for part in text.split('|') {
        match part {
            "mixed" => mask |= bits::ANY | bits::MIXED,
            "int" => mask |= bits::INT,
            "float" => mask |= bits::FLOAT,
            "string" => mask |= bits::STRING,
            "bool" => mask |= bits::BOOL,
            "array" => mask |= bits::ARRAY,
            "object" => mask |= bits::OBJECT,
            "void" => mask |= bits::VOID,
            "null" => mask |= bits::NULL,
            "static" => mask |= bits::STATIC,
            class => classes.push(class.into()),
        }
    }
    TypeDecl {
        mask,
        classes: classes.into(),
        intersection: false,
    }
}

/// The checks' view of the classes: lookups without autoloading, the
/// class being linked included, and the names they could not find.
pub(super) struct Checker<'d, G: Globals> {
    pub g: G,
    pub draft: &'d Draft<'d>,
    /// The class names the checks needed and could not find, in order.
    pub unresolved: Vec<String>,
}

impl<'d, G: Globals> Checker<'d, G> {
    pub fn new(g: G, draft: &'d Draft<'d>) -> Self {
        Checker {
            g,
            draft,
            unresolved: Vec::new(),
        }
    }

    fn scope_name(&self, scope: &ClassRef) -> String {
        match scope {
            ClassRef::Draft => self.draft.name.clone(),
            ClassRef::Linked(c) => display_name(c.name.as_bytes()),
            ClassRef::Unlinked(u) => display_name(u.name.as_bytes()),
        }
    }

    fn scope_parent(&self, scope: &ClassRef) -> Option<String> {
        match scope {
            ClassRef::Draft => self
                .draft
                .parent
                .as_ref()
                .map(|p| display_name(p.name.as_bytes()))
                .or_else(|| self.draft.def.parent.as_deref().map(str::to_string)),
            ClassRef::Linked(c) => c.parent.as_ref().map(|p| display_name(p.name.as_bytes())),
            ClassRef::Unlinked(u) => u.parent.as_deref().map(str::to_string),
        }
    }

    /// `self` and `parent` as the class names they stand for in `scope`
    /// (PHP's `resolve_class_name`).
    pub fn resolve(&self, scope: &ClassRef, name: &str) -> String {
        if name.eq_ignore_ascii_case("self") {
            self.scope_name(scope)
        } else if name.eq_ignore_ascii_case("parent") {
            self.scope_parent(scope).unwrap_or_else(|| name.to_string())
        } else {
            name.to_string()
        }
    }

    /// Class `name` (resolved), if declared; the class being linked
    /// answers to its own name.
    fn lookup(&mut self, name: &str) -> Option<ClassRef> {
        if name.eq_ignore_ascii_case(&self.draft.name) {
            return Some(ClassRef::Draft);
        }
        if let Some(c) = super::lookup(self.g, name.as_bytes()) {
            return Some(ClassRef::Linked(c));
        }
        unlinked(name).map(ClassRef::Unlinked)
    }

    /// Notes each class `ty` names that is not declared (PHP's
    /// `register_unresolved_classes`).
    fn note_unresolved(&mut self, scope: &ClassRef, ty: &TypeDecl) {
        for c in ty.classes.iter().flat_map(|c| c.split('&')) {
            let name = self.resolve(scope, c);
            if self.lookup(&name).is_none() && !self.unresolved.iter().any(|u| u.eq_ignore_ascii_case(&name)) {
                self.unresolved.push(name);
            }
        }
    }

    /// Whether `a` is `b` or a subclass or implementation of it (PHP's
    /// `unlinked_instanceof`).
    fn instance_of(&mut self, a: &ClassRef, b: &ClassRef) -> bool {
        self.instance_of_at(a, b, 0)
    }

    fn instance_of_at(&mut self, a: &ClassRef, b: &ClassRef, depth: u32) -> bool {
        // Once registered, the class being linked is a class like others.
        let registered = |r: &ClassRef| match (r, &self.draft.registered) {
            (ClassRef::Draft, Some(c)) => ClassRef::Linked(c.clone()),
            _ => r.clone(),
        };
        let (a, b) = (registered(a), registered(b));
        if depth > 64 {
            return false;
        }
        match (&a, &b) {
            (ClassRef::Draft, ClassRef::Draft) => return true,
            (ClassRef::Linked(x), ClassRef::Linked(y)) => return x.is_subclass_of(y),
            (ClassRef::Unlinked(x), ClassRef::Unlinked(y)) if x.name.eq_ignore_ascii_case(&y.name) => return true,
            (ClassRef::Linked(_), _) => return false,
            _ => {}
        }
        let (parent, interfaces): (Option<String>, Vec<String>) = match &a {
            ClassRef::Draft => {
                let linked = self
                    .draft
                    .parent
                    .iter()
                    .chain(self.draft.all_interfaces.iter())
                    .any(|p| matches!(&b, ClassRef::Linked(y) if p.is_subclass_of(y)));
                if linked {
                    return true;
                }
                (None, Vec::new())
            }
            ClassRef::Unlinked(u) => (
                u.parent.as_deref().map(str::to_string),
                u.interfaces.iter().map(|i| i.to_string()).collect(),
            ),
            ClassRef::Linked(_) => return false,
        };
        let own = self.scope_name(&a);
        for n in parent.into_iter().chain(interfaces) {
            // (A class that names itself is no ancestor of itself.)
            if n.eq_ignore_ascii_case(&own) {
                continue;
            }
            if let Some(c) = self.lookup(&n) {
                if self.instance_of_at(&c, &b, depth + 1) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether a type that admits `self` of `self_scope` is `ty` of
    /// `scope` (`zend_type_permits_self`).
    fn permits_self(&mut self, ty: &TypeDecl, scope: &ClassRef, self_scope: &ClassRef) -> bool {
        if ty.mask & bits::OBJECT != 0 {
            return true;
        }
        // (A DNF type's intersection members do not count.)
        for c in ty.classes.iter().filter(|c| !c.contains('&')) {
            let name = self.resolve(scope, c);
            if let Some(ce) = self.lookup(&name) {
                if self.instance_of(self_scope, &ce) {
                    return true;
                }
            }
        }
        false
    }

    /// `zend_is_class_subtype_of_type`: class `fe_name` (resolved) against
    /// `proto` of `proto_scope`.
    fn class_subtype_of_type(&mut self, fe_name: &str, proto_scope: &ClassRef, proto: &TypeDecl) -> Status {
        let mut unresolved = false;
        let mut fe_ce: Option<ClassRef> = None;
        if proto.mask & bits::OBJECT != 0 {
            fe_ce = self.lookup(fe_name);
            if fe_ce.is_some() {
                return Status::Success;
            }
            unresolved = true;
        }
        let intersection = proto.intersection;
        for c in proto.classes.iter() {
            if let Some(group) = TypeDecl::group(c) {
                match self.class_subtype_of_type(fe_name, proto_scope, &group) {
                    Status::Error if intersection => return Status::Error,
                    Status::Success if !intersection => return Status::Success,
                    Status::Unresolved => unresolved = true,
                    _ => {}
                }
                continue;
            }
            let proto_name = self.resolve(proto_scope, c);
            if fe_name.eq_ignore_ascii_case(&proto_name) {
                if !intersection {
                    return Status::Success;
                }
                continue;
            }
            if fe_ce.is_none() {
                fe_ce = self.lookup(fe_name);
            }
            let proto_ce = self.lookup(&proto_name);
            let (Some(fe), Some(pr)) = (&fe_ce, &proto_ce) else {
                unresolved = true;
                continue;
            };
            if self.instance_of(fe, pr) {
                if !intersection {
                    return Status::Success;
                }
            } else if intersection {
                return Status::Error;
            }
        }
        if unresolved {
            Status::Unresolved
        } else if intersection {
            Status::Success
        } else {
            Status::Error
        }
    }

    /// `zend_is_intersection_subtype_of_class`.
    fn intersection_subtype_of_class(&mut self, fe_scope: &ClassRef, fe: &TypeDecl, proto_name: &str) -> Status {
        let mut unresolved = false;
        for c in fe.classes.iter() {
            let fe_name = self.resolve(fe_scope, c);
            if fe_name.eq_ignore_ascii_case(proto_name) {
                return Status::Success;
            }
            let (Some(a), Some(b)) = (self.lookup(&fe_name), self.lookup(proto_name)) else {
                unresolved = true;
                continue;
            };
            if self.instance_of(&a, &b) {
                return Status::Success;
            }
        }
        if unresolved {
            Status::Unresolved
        } else {
            Status::Error
        }
    }

    /// `zend_is_intersection_subtype_of_type`.
    fn intersection_subtype_of_type(
        &mut self,
        fe_scope: &ClassRef,
        fe: &TypeDecl,
        proto_scope: &ClassRef,
        proto: &TypeDecl,
    ) -> Status {
        let mut unresolved = false;
        if proto.mask & bits::OBJECT != 0 {
            for c in fe.classes.iter() {
                let name = self.resolve(fe_scope, c);
                if self.lookup(&name).is_some() {
                    return Status::Success;
                }
                unresolved = true;
            }
        }
        let early = if proto.intersection {
            Status::Error
        } else {
            Status::Success
        };
        for c in proto.classes.iter() {
            let status = match TypeDecl::group(c) {
                Some(group) => self.intersection_subtype_of_type(fe_scope, fe, proto_scope, &group),
                None => {
                    let proto_name = self.resolve(proto_scope, c);
                    self.intersection_subtype_of_class(fe_scope, fe, &proto_name)
                }
            };
            if status == early {
                return status;
            }
            if status == Status::Unresolved {
                unresolved = true;
            }
        }
        if unresolved {
            Status::Unresolved
        } else if early == Status::Error {
            Status::Success
        } else {
            Status::Error
        }
    }

    /// Whether `fe` (of `fe_scope`) is a subtype of `proto` (of
    /// `proto_scope`): PHP's `zend_perform_covariant_type_check`.
    pub fn covariant(
        &mut self,
        fe_scope: &ClassRef,
        fe: &TypeDecl,
        proto_scope: &ClassRef,
        proto: &TypeDecl,
    ) -> Status {
        // Anything but void is a subtype of mixed.
        if proto.mask & bits::MIXED != 0 && fe.mask & bits::VOID == 0 {
            return Status::Success;
        }
        // Builtin types may be removed, not added.
        let mut added = fe.mask & !proto.mask;
        if added != 0 {
            if added & bits::STATIC != 0 && self.permits_self(proto, proto_scope, fe_scope) {
                added &= !bits::STATIC;
            }
            if added == bits::NEVER {
                return Status::Success;
            }
            if added != 0 {
                return Status::Error;
            }
        }
        let mut unresolved = false;
        let early;
        if fe.intersection {
            early = if proto.intersection {
                Status::Error
            } else {
                Status::Success
            };
            let status = self.intersection_subtype_of_type(fe_scope, fe, proto_scope, proto);
            if status == early {
                return status;
            }
            if status == Status::Unresolved {
                unresolved = true;
            }
        } else {
            early = Status::Error;
            for c in fe.classes.iter() {
                let status = match TypeDecl::group(c) {
                    Some(group) => self.intersection_subtype_of_type(fe_scope, &group, proto_scope, proto),
                    None => {
                        let fe_name = self.resolve(fe_scope, c);
                        self.class_subtype_of_type(&fe_name, proto_scope, proto)
                    }
                };
                if status == Status::Error {
                    return status;
                }
                if status == Status::Unresolved {
                    unresolved = true;
                }
            }
        }
        if !unresolved {
            return if early == Status::Error {
                Status::Success
            } else {
                Status::Error
            };
        }
        self.note_unresolved(fe_scope, fe);
        self.note_unresolved(proto_scope, proto);
        Status::Unresolved
    }

    /// A parameter's type against the one it implements: contravariant
    /// (`zend_do_perform_arg_type_hint_check`).
    fn param_check(
        &mut self,
        fe_scope: &ClassRef,
        fe: &ParamInfo,
        proto_scope: &ClassRef,
        proto: &ParamInfo,
    ) -> Status {
        let Some(fe_ty) = &fe.ty else {
            return Status::Success;
        };
        if fe_ty.mask & bits::MIXED != 0 {
            return Status::Success;
        }
        let Some(proto_ty) = &proto.ty else {
            return Status::Error;
        };
        self.covariant(proto_scope, proto_ty, fe_scope, fe_ty)
    }

    /// Whether method `fe` may stand where `proto` stood
    /// (`zend_do_perform_implementation_check`).
    pub fn implementation(
        &mut self,
        fe: &Sig<'_>,
        fe_scope: &ClassRef,
        proto: &Sig<'_>,
        proto_scope: &ClassRef,
    ) -> Status {
        if proto.required < fe.required {
            return Status::Error;
        }
        if proto.by_ref_return && !fe.by_ref_return {
            return Status::Error;
        }
        let proto_variadic = proto.params.last().is_some_and(|p| p.variadic);
        let fe_variadic = fe.params.last().is_some_and(|p| p.variadic);
        if proto_variadic && !fe_variadic {
            return Status::Error;
        }
        let (np, nf) = (proto.params.len(), fe.params.len());
        let mut status = Status::Success;
        for i in 0..np.max(nf) {
            let proto_arg = match proto.params.get(i) {
                Some(p) => p,
                None if proto_variadic => &proto.params[np - 1],
                None => continue,
            };
            let fe_arg = match fe.params.get(i) {
                Some(p) => p,
                None if fe_variadic => &fe.params[nf - 1],
                None => return Status::Error,
            };
            match self.param_check(fe_scope, fe_arg, proto_scope, proto_arg) {
                Status::Error => return Status::Error,
                Status::Unresolved => status = Status::Unresolved,
                _ => {}
            }
            if fe_arg.by_ref != proto_arg.by_ref {
                return Status::Error;
            }
        }
        if let Some(proto_ret) = proto.ret {
            let Some(fe_ret) = fe.ret else {
                if !proto.tentative {
                    return Status::Error;
                }
                return if status == Status::Success {
                    Status::Warning
                } else {
                    status
                };
            };
            let local = self.covariant(fe_scope, fe_ret, proto_scope, proto_ret);
            if local != Status::Success {
                if local == Status::Error && proto.tentative {
                    return Status::Warning;
                }
                return local;
            }
        }
        status
    }

    /// Type `ty` as PHP prints it for `scope` (`self` and `parent`
    /// replaced: `zend_type_to_string_resolved`).
    pub fn type_text(&self, scope: &ClassRef, ty: &TypeDecl) -> String {
        if ty.classes.is_empty() {
            return ty.to_php_string();
        }
        let resolved = TypeDecl {
            mask: ty.mask,
            classes: ty
                .classes
                .iter()
                .map(|c| {
                    c.split('&')
                        .map(|n| self.resolve(scope, n))
                        .collect::<Vec<_>>()
                        .join("&")
                        .into()
                })
                .collect(),
            intersection: ty.intersection,
        };
        resolved.to_php_string()
    }

    /// The declaration PHP's inheritance errors print
    /// (`zend_get_function_declaration`).
    pub fn declaration(&self, sig: &Sig<'_>, scope: &ClassRef) -> String {
        let mut s = String::new();
        if sig.by_ref_return {
            s.push_str("& ");
        }
        s.push_str(&sig.class);
        s.push_str("::");
        s.push_str(&sig.name);
        s.push('(');
        for (i, p) in sig.params.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            if let Some(t) = &p.ty {
                s.push_str(&self.type_text(scope, t));
                s.push(' ');
            }
            if p.by_ref {
                s.push('&');
            }
            if p.variadic {
                s.push_str("...");
            }
            s.push('$');
            s.push_str(&p.name);
            if i >= sig.required && !p.variadic {
                s.push_str(" = ");
                s.push_str(p.default.as_deref().unwrap_or("<default>"));
            }
        }
        s.push(')');
        if let Some(t) = sig.ret {
            s.push_str(": ");
            s.push_str(&self.type_text(scope, t));
        }
        s
    }
}

/// A class name as messages print it: an anonymous class's up to its
/// NUL byte.
pub(super) fn display_name(name: &[u8]) -> String {
    let cut = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..cut]).into_owned()
}
