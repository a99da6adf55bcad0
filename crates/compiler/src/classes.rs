//! Class-like declarations: a [`ClassDef`] per declaration, with its
//! methods compiled as functions of their own and its constants, enum
//! cases and property defaults as small functions that compute them
//! (the VM runs those when the class is first used, as PHP evaluates its
//! constant expressions lazily), and PHP's compile-time checks of the
//! declaration (`zend_compile_class_decl` and the member compilers).

use std::rc::Rc;

use minizts_core::bytecode::{ClassDef, ConstDef, FuncId, MethodDef, Op, PropDef, Src, TraitRuleDef, TypeDecl};
use minizts_core::object::{acc, ClassKind as Kind, EnumBacking};
use minizts_globals::{cg, Globals, OpArrayBuilder};
use minizts_syntax::ast::*;
use minizts_syntax::names;

use crate::types::{one_of, Place, RESERVED_CLASS_NAMES};
use crate::{ClassCtx, Compiler, Result};

/// A member's modifier bits as `acc` bits (the same values, `var` being
/// `public`).
pub(crate) fn acc_bits(m: u16) -> u16 {
    let mut bits = m & !modifiers::VAR;
    if m & modifiers::VAR != 0 {
        bits |= acc::PUBLIC;
    }
    bits
}

/// `acc_bits`, public when no visibility is written.
fn member_flags(m: u16) -> u16 {
    let bits = acc_bits(m);
    if bits & acc::VISIBILITY == 0 {
        bits | acc::PUBLIC
    } else {
        bits
    }
}

fn core_kind(kind: ClassKind) -> Kind {
    match kind {
        ClassKind::Class => Kind::Class,
        ClassKind::Interface => Kind::Interface,
        ClassKind::Trait => Kind::Trait,
        ClassKind::Enum => Kind::Enum,
    }
}

/// Whether a method name is the constructor's.
fn is_constructor(name: &str) -> bool {
    name.eq_ignore_ascii_case("__construct")
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// A declaration statement: compiles the class and declares it where
    /// it stands (`DECLARE_CLASS`; the VM skips one it declared before
    /// the script ran). `early`: a top-level, unconditional declaration.
    pub(crate) fn class_stmt(&mut self, decl: &'a ClassDecl<'a>, early: bool) -> Result<()> {
        let index = self.class_decl(decl)?;
        if early {
            // A second top-level class of one name is left for its
            // declaration to refuse when it runs, as PHP does.
            let key = names::to_bytes(&self.ns.prefixed(decl.name)).to_ascii_lowercase();
            if !self.early_class_names.contains_key(&key) {
                self.early_class_names.insert(key, self.line_of(decl.pos));
                self.early_classes.push(index);
            }
        }
        self.at(decl.pos);
        self.emit(Op::DeclareClass { decl: index as u16 });
        Ok(())
    }

    /// The name an anonymous class gets: PHP's
    /// (`zend_generate_anon_class_name`), its parent's or first
    /// interface's name then `@anonymous`, a NUL byte and where it is
    /// declared, unique in the request.
    fn anonymous_class_name(&mut self, decl: &'a ClassDecl<'a>) -> Result<String> {
        let prefix = match decl.parent.or(decl.interfaces.first().copied()) {
            Some(written) => self.class_name(written)?,
            None => "class".to_string(),
        };
        let n = self.first_func + self.anonymous_classes;
        self.anonymous_classes += 1;
        Ok(format!(
            "{prefix}@anonymous\0{}:{}${n:x}",
            self.file,
            self.line_of(decl.pos)
        ))
    }

    /// Compiles a class-like declaration into the script's classes;
    /// returns its index.
    pub(crate) fn class_decl(&mut self, decl: &'a ClassDecl<'a>) -> Result<u32> {
        self.at(decl.pos);
        let index = self.classes.len() as u32;
        if index > u32::from(u16::MAX) {
            return self.error("minizts: too many classes in one script");
        }
        self.classes.push(None);
        let anonymous = decl.name == "class@anonymous";
        let name: Rc<str> = if anonymous {
            self.anonymous_class_name(decl)?.into()
        } else {
            if one_of(decl.name, &RESERVED_CLASS_NAMES) {
                return self.error(format!("Cannot use '{}' as class name as it is reserved", decl.name));
            }
            // A class takes its namespace's name.
            let full = self.ns.prefixed(decl.name);
            self.check_declaration(UseKind::Class, decl.name, &full)?;
            full.into()
        };
        let parent = match decl.parent {
            Some(written) => Some(Rc::from(self.class_name(written)?)),
            None => None,
        };
        let ctx = ClassCtx {
            index,
            name: name.clone(),
            kind: decl.kind,
            parent,
        };
        let saved = self.class.replace(ctx);
        let saved_line = self.line;
        let def = self.class_body(decl, index, &name);
        self.class = saved;
        self.line = saved_line;
        self.classes[index as usize] = Some(def?);
        Ok(index)
    }

    fn class_body(&mut self, decl: &'a ClassDecl<'a>, index: u32, full_name: &str) -> Result<ClassDef> {
        // Messages print an anonymous class's name up to its NUL byte.
        let name = full_name.split('\0').next().unwrap_or(full_name);
        let kind = decl.kind;
        // `extends` and `implements` name no class by a keyword.
        for (written, what) in decl
            .parent
            .iter()
            .map(|p| (*p, "class name"))
            .chain(decl.interfaces.iter().map(|i| (*i, "interface name")))
        {
            if one_of(written, &["self", "parent", "static"]) {
                return self.error(format!("Cannot use '{written}' as {what}, as it is reserved"));
            }
        }
        let class_flags = acc_bits(decl.modifiers);
        self.check_attributes(decl.attributes, crate::attributes::Target::Class)?;
        let mut allow_dynamic = false;
        for a in decl.attributes.iter() {
            if !self.class_name(a.name)?.eq_ignore_ascii_case("AllowDynamicProperties") {
                continue;
            }
            match kind {
                ClassKind::Trait => return self.error("Cannot apply #[AllowDynamicProperties] to trait"),
                ClassKind::Interface => return self.error("Cannot apply #[AllowDynamicProperties] to interface"),
                _ if class_flags & acc::READONLY != 0 => {
                    return self.error(format!(
                        "Cannot apply #[AllowDynamicProperties] to readonly class {name}"
                    ))
                }
                _ => allow_dynamic = true,
            }
        }
        let backing = match decl.backing {
            None => None,
            Some(hint) => {
                let single = |n: &str| {
                    !hint.nullable && !hint.intersection && matches!(hint.names, [x] if x.eq_ignore_ascii_case(n))
                };
                if single("int") {
                    Some(EnumBacking::Int)
                } else if single("string") {
                    Some(EnumBacking::String)
                } else {
                    let written = match self.type_decl(hint, Place::Param, true) {
                        Ok(t) => t.to_php_string(),
                        Err(_) => format!("{}{}", if hint.nullable { "?" } else { "" }, hint.names.join("|")),
                    };
                    return self.error(format!("Enum backing type must be int or string, {written} given"));
                }
            }
        };
        let mut consts: Vec<ConstDef> = Vec::new();
        let mut props: Vec<PropDef> = Vec::new();
        let mut methods: Vec<MethodDef> = Vec::new();
        let mut traits: Vec<Box<str>> = Vec::new();
        let mut trait_rules: Vec<TraitRuleDef> = Vec::new();
        let mut defaults: Vec<&'a Expr<'a>> = Vec::new();
        for member in decl.members {
            match member {
                Member::Const { pos, modifiers, items } => {
                    self.at(*pos);
                    let flags = member_flags(*modifiers);
                    for (cname, value) in items.iter() {
                        if consts.iter().any(|c| &*c.name == *cname) {
                            return self.error(format!("Cannot redefine class constant {name}::{cname}"));
                        }
                        if kind == ClassKind::Interface && flags & acc::PUBLIC == 0 {
                            return self.error(format!(
                                "Access type for interface constant {name}::{cname} must be public"
                            ));
                        }
                        if flags & acc::PRIVATE != 0 && flags & acc::FINAL != 0 {
                            return self.error(format!(
                                "Private constant {name}::{cname} cannot be final as it is not visible to other classes"
                            ));
                        }
                        self.check_const_expr(value)?;
                        let init = self.value_function("{const}", *pos, value)?;
                        consts.push(ConstDef {
                            name: (*cname).into(),
                            flags,
                            init: Some(init),
                            is_case: false,
                        });
                    }
                }
                Member::Property {
                    pos,
                    modifiers,
                    ty,
                    items,
                } => {
                    self.at(*pos);
                    let mut flags = member_flags(*modifiers);
                    if class_flags & acc::READONLY != 0 {
                        flags |= acc::READONLY;
                    }
                    match kind {
                        ClassKind::Interface => return self.error("Interfaces may not include properties"),
                        ClassKind::Enum => return self.error(format!("Enum {name} cannot include properties")),
                        _ => {}
                    }
                    if flags & acc::ABSTRACT != 0 {
                        return self.error("Properties cannot be declared abstract");
                    }
                    let first = items.first().map_or("", |i| i.name);
                    if flags & acc::FINAL != 0 {
                        return self.error(format!(
                            "Cannot declare property {name}::${first} final, the final modifier is allowed only for methods, classes, and class constants"
                        ));
                    }
                    let ty = match ty {
                        Some(hint) => Some(self.property_type(hint, name, first)?),
                        None => None,
                    };
                    for item in items.iter() {
                        if props.iter().any(|p| &*p.name == item.name) {
                            return self.error(format!("Cannot redeclare {name}::${}", item.name));
                        }
                        if flags & acc::READONLY != 0 {
                            if flags & acc::STATIC != 0 {
                                return self
                                    .error(format!("Static property {name}::${} cannot be readonly", item.name));
                            }
                            if ty.is_none() {
                                return self.error(format!("Readonly property {name}::${} must have type", item.name));
                            }
                            if item.default.is_some() {
                                return self.error(format!(
                                    "Readonly property {name}::${} cannot have default value",
                                    item.name
                                ));
                            }
                        }
                        if let (Some(d), Some(t)) = (item.default, &ty) {
                            self.check_property_default(t, d, name, item.name)?;
                        }
                        if let Some(d) = item.default {
                            self.check_const_expr(d)?;
                            defaults.push(d);
                        }
                        props.push(PropDef {
                            name: item.name.into(),
                            flags,
                            ty: ty.clone(),
                            has_default: item.default.is_some(),
                        });
                    }
                }
                Member::Method { modifiers, decl: f } => {
                    self.at(f.pos);
                    let mut flags = member_flags(*modifiers);
                    let has_body = !matches!(f.body, FunctionBody::None);
                    let mname = f.name;
                    if flags & acc::READONLY != 0 {
                        return self.error("Cannot use 'readonly' as method modifier");
                    }
                    if kind == ClassKind::Interface {
                        if flags & acc::PUBLIC == 0 {
                            return self.error(format!(
                                "Access type for interface method {name}::{mname}() must be public"
                            ));
                        }
                        if flags & acc::FINAL != 0 {
                            return self.error(format!("Interface method {name}::{mname}() must not be final"));
                        }
                        if flags & acc::ABSTRACT != 0 {
                            return self.error(format!("Interface method {name}::{mname}() must not be abstract"));
                        }
                        flags |= acc::ABSTRACT;
                    }
                    let word = if kind == ClassKind::Interface {
                        "Interface"
                    } else {
                        "Abstract"
                    };
                    if flags & acc::ABSTRACT != 0 {
                        if flags & acc::PRIVATE != 0 && kind != ClassKind::Trait {
                            return self.error(format!("{word} function {name}::{mname}() cannot be declared private"));
                        }
                        if has_body {
                            return self.error(format!("{word} function {name}::{mname}() cannot contain body"));
                        }
                    } else if !has_body {
                        return self.error(format!("Non-abstract method {name}::{mname}() must contain body"));
                    }
                    if methods.iter().any(|m| m.name.eq_ignore_ascii_case(mname)) {
                        return self.error(format!("Cannot redeclare {name}::{mname}()"));
                    }
                    // Constructor promotion: a property per promoted
                    // parameter, declared here in member order.
                    for p in f.params.iter().filter(|p| p.promote != 0) {
                        self.at(f.pos);
                        if !is_constructor(mname) {
                            return self.error("Cannot declare promoted property outside a constructor");
                        }
                        if flags & acc::ABSTRACT != 0 {
                            return self.error("Cannot declare promoted property in an abstract constructor");
                        }
                        if p.variadic {
                            return self.error("Cannot declare variadic promoted property");
                        }
                        if props.iter().any(|q| &*q.name == p.name) {
                            return self.error(format!("Cannot redeclare {name}::${}", p.name));
                        }
                        let mut pflags = member_flags(p.promote);
                        if class_flags & acc::READONLY != 0 {
                            pflags |= acc::READONLY;
                        }
                        if pflags & acc::READONLY != 0 && p.ty.is_none() {
                            return self.error(format!("Readonly property {name}::${} must have type", p.name));
                        }
                        let ty = match p.ty {
                            Some(hint) => Some(self.property_type(hint, name, p.name)?),
                            None => None,
                        };
                        // A promoted parameter's type is not made nullable
                        // by a null default.
                        let null_default = p
                            .default
                            .is_some_and(|d| matches!(d.kind, ExprKind::Const(c) if c.eq_ignore_ascii_case("null")));
                        if let Some(t) = ty.as_ref().filter(|t| null_default && !t.allows_null()) {
                            return self.error(format!(
                                "Cannot use null as default value for parameter ${} of type {}",
                                p.name,
                                t.to_php_string()
                            ));
                        }
                        props.push(PropDef {
                            name: p.name.into(),
                            flags: pflags,
                            ty,
                            has_default: false,
                        });
                    }
                    self.check_magic_method(name, f, flags)?;
                    let func = self.compile_method(f, flags, index)?;
                    methods.push(MethodDef {
                        name: mname.into(),
                        flags,
                        func,
                    });
                }
                Member::TraitUse {
                    pos,
                    traits: used,
                    rules,
                } => {
                    self.at(*pos);
                    if kind == ClassKind::Interface {
                        return self.error(format!(
                            "Cannot use traits inside of interfaces. {} is used in {name}",
                            used.first().copied().unwrap_or("")
                        ));
                    }
                    for t in used.iter() {
                        traits.push(self.trait_name(t)?.into());
                    }
                    for rule in rules.iter() {
                        if let TraitRule::Alias { modifiers, .. } = rule {
                            for (bit, word) in [
                                (modifiers::STATIC, "static"),
                                (modifiers::ABSTRACT, "abstract"),
                                (modifiers::FINAL, "final"),
                                (modifiers::READONLY, "readonly"),
                            ] {
                                if modifiers & bit != 0 {
                                    return self.error(format!("Cannot use '{word}' as method modifier"));
                                }
                            }
                        }
                        trait_rules.push(match rule {
                            TraitRule::Insteadof {
                                trait_name,
                                method,
                                instead_of,
                                ..
                            } => TraitRuleDef::Insteadof {
                                trait_name: self.trait_name(trait_name)?.into(),
                                method: (*method).into(),
                                instead_of: instead_of
                                    .iter()
                                    .map(|t| self.trait_name(t).map(Box::<str>::from))
                                    .collect::<Result<_>>()?,
                            },
                            TraitRule::Alias {
                                trait_name,
                                method,
                                modifiers,
                                alias,
                                ..
                            } => TraitRuleDef::Alias {
                                trait_name: match trait_name {
                                    Some(t) => Some(self.trait_name(t)?.into()),
                                    None => None,
                                },
                                method: (*method).into(),
                                flags: acc_bits(*modifiers),
                                alias: alias.map(Into::into),
                            },
                        });
                    }
                }
                Member::Case { pos, name: case, value } => {
                    self.at(*pos);
                    if kind != ClassKind::Enum {
                        return self.error("Case can only be used in enums");
                    }
                    if consts.iter().any(|c| &*c.name == *case) {
                        return self.error(format!("Cannot redefine class constant {name}::{case}"));
                    }
                    let init = match (value, backing) {
                        (None, Some(_)) => {
                            return self.error(format!("Case {case} of backed enum {name} must have a value"))
                        }
                        (Some(_), None) => {
                            return self.error(format!("Case {case} of non-backed enum {name} must not have a value"))
                        }
                        (None, None) => None,
                        (Some(v), Some(_)) => {
                            // A value of the wrong type is the VM's
                            // `TypeError` when it is evaluated.
                            self.check_const_expr(v)?;
                            Some(self.value_function("{const}", *pos, v)?)
                        }
                    };
                    consts.push(ConstDef {
                        name: (*case).into(),
                        flags: acc::PUBLIC,
                        init,
                        is_case: true,
                    });
                }
            }
        }
        // A class that is not abstract may not declare abstract methods
        // (what it inherits is checked when it is linked).
        if matches!(kind, ClassKind::Class | ClassKind::Enum) && class_flags & acc::ABSTRACT == 0 {
            let abstract_methods: Vec<&MethodDef> = methods.iter().filter(|m| m.flags & acc::ABSTRACT != 0).collect();
            if !abstract_methods.is_empty() {
                self.at(decl.pos);
                let n = abstract_methods.len();
                let mut list: Vec<String> = abstract_methods
                    .iter()
                    .take(3)
                    .map(|m| format!("{name}::{}", m.name))
                    .collect();
                if n > 3 {
                    list.push("...".into());
                }
                let word = if kind == ClassKind::Enum { "Enum" } else { "Class" };
                return self.error(format!(
                    "{word} {name} contains {n} abstract method{} and must therefore be declared abstract or implement the remaining methods ({})",
                    if n == 1 { "" } else { "s" },
                    list.join(", ")
                ));
            }
        }
        // The magic methods an enum may not have (`zend_verify_enum`).
        if kind == ClassKind::Enum {
            for magic in [
                "__construct",
                "__destruct",
                "__clone",
                "__get",
                "__set",
                "__unset",
                "__isset",
                "__toString",
                "__debugInfo",
                "__serialize",
                "__unserialize",
                "__sleep",
                "__wakeup",
                "__set_state",
            ] {
                if methods.iter().any(|m| m.name.eq_ignore_ascii_case(magic)) {
                    self.at(decl.pos);
                    return self.error(format!("Enum {name} cannot include magic method {magic}"));
                }
            }
        }
        let defaults = if defaults.is_empty() {
            None
        } else {
            Some(self.defaults_function(decl.pos, &defaults)?)
        };
        let mut interfaces: Vec<Box<str>> = decl
            .interfaces
            .iter()
            .map(|i| self.class_name(i).map(Box::<str>::from))
            .collect::<Result<_>>()?;
        // A class with `__toString` is `Stringable` (PHP adds the
        // interface when it compiles the method).
        if kind != ClassKind::Trait
            && methods.iter().any(|m| m.name.eq_ignore_ascii_case("__toString"))
            && !interfaces.iter().any(|i| i.eq_ignore_ascii_case("Stringable"))
        {
            interfaces.push("Stringable".into());
        }
        Ok(ClassDef {
            name: full_name.into(),
            kind: core_kind(kind),
            flags: class_flags,
            parent: self.class.as_ref().and_then(|c| c.parent.as_deref()).map(Into::into),
            interfaces,
            traits,
            trait_rules,
            consts,
            props,
            methods,
            backing,
            defaults,
            line_start: self.line_of(decl.pos),
            line_end: self.line_of(decl.end_pos),
            allow_dynamic,
        })
    }

    /// A trait named in `use` or in a rule: no class keyword
    /// (`zend_resolve_const_class_name_reference`).
    fn trait_name(&self, written: &str) -> Result<String> {
        if one_of(written, &["self", "parent", "static"]) {
            return self.error(format!("Cannot use '{written}' as trait name, as it is reserved"));
        }
        self.class_name(written)
    }

    /// A property's declared type, with PHP's checks of the types no
    /// property may have.
    fn property_type(&self, hint: &TypeHint<'a>, class: &str, prop: &str) -> Result<TypeDecl> {
        use minizts_core::bytecode::type_bits as bits;
        // Checked as a return type: `void` and `never` get the
        // property's message, not a parameter's.
        let ty = self.type_decl(hint, Place::Return, true)?;
        if ty.mask & (bits::VOID | bits::NEVER | bits::CALLABLE) != 0 {
            return self.error(format!(
                "Property {class}::${prop} cannot have type {}",
                ty.to_php_string()
            ));
        }
        Ok(ty)
    }

    /// PHP's check that a literal default value fits the property's type
    /// (`zend_compile_prop_decl`).
    fn check_property_default(&self, ty: &TypeDecl, d: &'a Expr<'a>, class: &str, prop: &str) -> Result<()> {
        use minizts_core::bytecode::type_bits as bits;
        let Some((given, bit)) = crate::types::literal_kind(d) else {
            return Ok(());
        };
        if crate::types::literal_fits(ty, bit) {
            return Ok(());
        }
        if bit == bits::NULL && !ty.intersection {
            let mut nullable = ty.clone();
            nullable.mask |= bits::NULL;
            return self.error(format!(
                "Default value for property of type {} may not be null. Use the nullable type {} to allow null default value",
                ty.to_php_string(),
                nullable.to_php_string()
            ));
        }
        self.error(format!(
            "Cannot use {given} as default value for property {class}::${prop} of type {}",
            ty.to_php_string()
        ))
    }

    /// PHP's compile-time checks of a magic method's signature
    /// (`zend_check_magic_method_implementation`; its warning about
    /// visibility is not given).
    fn check_magic_method(&self, class: &str, f: &'a FunctionDecl<'a>, flags: u16) -> Result<()> {
        use minizts_core::bytecode::type_bits as bits;
        let name = f.name;
        if !name.starts_with("__") {
            return Ok(());
        }
        let lower = name.to_ascii_lowercase();
        // (arguments, static, argument types, return type), `None` where
        // not checked.
        type Rule = (Option<usize>, Option<bool>, &'static [u16], Option<u16>);
        let no_ret = Some(0u16);
        let rule: Rule = match lower.as_str() {
            "__construct" => (None, Some(false), &[], no_ret),
            "__destruct" => (Some(0), Some(false), &[], no_ret),
            "__clone" => (Some(0), Some(false), &[], Some(bits::VOID)),
            "__get" => (Some(1), Some(false), &[bits::STRING], None),
            "__set" => (Some(2), Some(false), &[bits::STRING], Some(bits::VOID)),
            "__unset" => (Some(1), Some(false), &[bits::STRING], Some(bits::VOID)),
            "__isset" => (Some(1), Some(false), &[bits::STRING], Some(bits::BOOL)),
            "__call" => (Some(2), Some(false), &[bits::STRING, bits::ARRAY], None),
            "__callstatic" => (Some(2), Some(true), &[bits::STRING, bits::ARRAY], None),
            "__tostring" => (Some(0), Some(false), &[], Some(bits::STRING)),
            "__debuginfo" => (Some(0), Some(false), &[], Some(bits::ARRAY | bits::NULL)),
            "__serialize" => (Some(0), Some(false), &[], Some(bits::ARRAY)),
            "__unserialize" => (Some(1), Some(false), &[bits::ARRAY], Some(bits::VOID)),
            "__set_state" => (Some(1), Some(true), &[bits::ARRAY], Some(bits::OBJECT)),
            "__invoke" => (None, Some(false), &[], None),
            "__sleep" => (Some(0), Some(false), &[], Some(bits::ARRAY)),
            "__wakeup" => (Some(0), Some(false), &[], Some(bits::VOID)),
            _ => return Ok(()),
        };
        let (args, is_static, arg_types, ret) = rule;
        if let Some(n) = args {
            let declared = f.params.iter().filter(|p| !p.variadic).count();
            if declared != n {
                return self.error(match n {
                    0 => format!("Method {class}::{name}() cannot take arguments"),
                    1 => format!("Method {class}::{name}() must take exactly 1 argument"),
                    n => format!("Method {class}::{name}() must take exactly {n} arguments"),
                });
            }
            if f.params.iter().take(n).any(|p| p.by_ref) {
                return self.error(format!("Method {class}::{name}() cannot take arguments by reference"));
            }
        }
        match is_static {
            Some(false) if flags & acc::STATIC != 0 => {
                return self.error(format!("Method {class}::{name}() cannot be static"))
            }
            Some(true) if flags & acc::STATIC == 0 => {
                return self.error(format!("Method {class}::{name}() must be static"))
            }
            _ => {}
        }
        let as_text = |mask: u16| {
            TypeDecl {
                mask,
                classes: Box::new([]),
                intersection: false,
            }
            .to_php_string()
        };
        for (i, &want) in arg_types.iter().enumerate() {
            let Some(hint) = f.params.get(i).and_then(|p| p.ty) else {
                continue;
            };
            let ty = self.type_decl(hint, Place::Param, true)?;
            if ty.mask & want == 0 {
                return self.error(format!(
                    "{class}::{name}(): Parameter #{} (${}) must be of type {} when declared",
                    i + 1,
                    f.params[i].name,
                    as_text(want)
                ));
            }
        }
        match (ret, f.return_type) {
            (Some(0), Some(_)) => self.error(format!("Method {class}::{name}() cannot declare a return type")),
            (Some(want), Some(hint)) => {
                let ty = self.type_decl(hint, Place::Return, true)?;
                if ty.mask & bits::NEVER != 0 {
                    return Ok(());
                }
                let mut complex = !ty.classes.is_empty();
                let mut extra = ty.mask & !want;
                if extra & bits::STATIC != 0 {
                    extra &= !bits::STATIC;
                    complex = true;
                }
                if extra != 0 || (complex && want != bits::OBJECT) {
                    return self.error(format!(
                        "{class}::{name}(): Return type must be {} when declared",
                        as_text(want)
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Compiles method `f` of the class at `index` with `flags`.
    fn compile_method(&mut self, f: &'a FunctionDecl<'a>, flags: u16, index: u32) -> Result<FuncId> {
        self.pending_method = Some((flags, index));
        let id = self.compile_function(f);
        self.pending_method = None;
        id
    }

    /// A parameter's default value is a constant expression too, in which
    /// `static::` names no class yet (`zend_compile_const_expr`).
    pub(crate) fn check_static_in_default(&self, e: &'a Expr<'a>) -> Result<()> {
        match &e.kind {
            ExprKind::ClassConst {
                class: ClassRef::Static,
                name,
            } => {
                if name.eq_ignore_ascii_case("class") {
                    self.error("static::class cannot be used for compile-time class name resolution")
                } else {
                    self.error("\"static::\" is not allowed in compile-time constants")
                }
            }
            ExprKind::Unary { expr, .. } => self.check_static_in_default(expr),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.check_static_in_default(lhs)?;
                self.check_static_in_default(rhs)
            }
            ExprKind::Ternary { cond, then, els } => {
                self.check_static_in_default(cond)?;
                if let Some(t) = then {
                    self.check_static_in_default(t)?;
                }
                self.check_static_in_default(els)
            }
            _ => Ok(()),
        }
    }

    /// PHP's check of a constant expression (`zend_is_allowed_in_const_expr`):
    /// what a class constant, an enum case or a property default may be.
    pub(crate) fn check_const_expr(&self, e: &'a Expr<'a>) -> Result<()> {
        let invalid = || self.error("Constant expression contains invalid operations");
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Const(_) => Ok(()),
            ExprKind::ClassConst { class, name } => match class {
                // `parent::class` is resolved now, which needs a parent.
                ClassRef::Name(n) if n.eq_ignore_ascii_case("parent") && name.eq_ignore_ascii_case("class") => {
                    match &self.class {
                        Some(c) if c.parent.is_none() && c.kind != ClassKind::Trait => {
                            self.error("Cannot use \"parent\" when current class scope has no parent")
                        }
                        _ => Ok(()),
                    }
                }
                ClassRef::Name(_) => Ok(()),
                ClassRef::Static if name.eq_ignore_ascii_case("class") => {
                    self.error("static::class cannot be used for compile-time class name resolution")
                }
                ClassRef::Static => self.error("\"static::\" is not allowed in compile-time constants"),
                _ => invalid(),
            },
            ExprKind::Unary { expr, .. } => self.check_const_expr(expr),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.check_const_expr(lhs)?;
                self.check_const_expr(rhs)
            }
            ExprKind::Ternary { cond, then, els } => {
                self.check_const_expr(cond)?;
                if let Some(t) = then {
                    self.check_const_expr(t)?;
                }
                self.check_const_expr(els)
            }
            ExprKind::Index {
                base,
                index: Some(index),
            } => {
                self.check_const_expr(base)?;
                self.check_const_expr(index)
            }
            ExprKind::Index { index: None, .. } => self.error("Cannot use [] for reading"),
            // An enum case's `name` and `value` (PHP 8.2).
            ExprKind::Prop {
                obj,
                name: MemberName::Ident(_),
                ..
            } => self.check_const_expr(obj),
            ExprKind::Array(items, syntax) if *syntax != ArraySyntax::List => {
                for item in items.iter() {
                    if item.by_ref {
                        return invalid();
                    }
                    if let Some(k) = item.key {
                        self.check_const_expr(k)?;
                    }
                    match item.value {
                        Some(v) => self.check_const_expr(v)?,
                        None => return invalid(),
                    }
                }
                Ok(())
            }
            ExprKind::New { .. } => self.error("New expressions are not supported in this context"),
            _ => invalid(),
        }
    }

    /// A function of the current class that computes what `body` leaves
    /// (a constant's value, the list of property defaults) and returns
    /// it: the code of a constant expression the VM runs when the class
    /// needs it.
    fn init_function(&mut self, name: &str, pos: u32, body: impl FnOnce(&mut Self) -> Result<Src>) -> Result<FuncId> {
        let id = self.first_func + self.functions.len() as FuncId;
        self.functions.push(None);
        let line = self.line_of(pos);
        let mut builder = OpArrayBuilder::new(name, line, line);
        builder.strict_types = self.strict_types;
        builder.class_decl = self.class.as_ref().map(|c| c.index);
        cg!(self.g).active.push(builder);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_labels = std::mem::take(&mut self.labels);
        let saved_plain = std::mem::take(&mut self.plain_vars);
        let saved_in_function = std::mem::replace(&mut self.in_function, true);
        let saved_return_type = self.return_type.take();
        let saved_by_ref_return = std::mem::replace(&mut self.by_ref_return, false);
        let saved_finallies = std::mem::take(&mut self.finallies);
        let saved_short_circuits = std::mem::take(&mut self.short_circuits);
        let saved_in_chain = std::mem::replace(&mut self.in_chain, false);
        let saved_method_name = self.method_name.take();
        let saved_const_expr = std::mem::replace(&mut self.const_expr, true);
        let saved_const_operand = std::mem::replace(&mut self.const_operand, true);
        let saved_line = self.line;
        self.line = line;
        let result = body(self).map(|v| {
            self.emit(Op::Return { src: v });
        });
        self.loops = saved_loops;
        self.labels = saved_labels;
        self.plain_vars = saved_plain;
        self.in_function = saved_in_function;
        self.return_type = saved_return_type;
        self.by_ref_return = saved_by_ref_return;
        self.finallies = saved_finallies;
        self.short_circuits = saved_short_circuits;
        self.in_chain = saved_in_chain;
        self.method_name = saved_method_name;
        self.const_expr = saved_const_expr;
        self.const_operand = saved_const_operand;
        self.line = saved_line;
        let mut builder = cg!(self.g).active.pop().expect("initialiser op array");
        result?;
        crate::peephole::shorten_returns(&mut builder.code, &mut builder.lines, builder.cv_names.len());
        crate::peephole::specialise(&mut builder.code);
        self.functions[(id - self.first_func) as usize] = Some(builder.finish());
        Ok(id)
    }

    /// A function returning the value of constant expression `e`.
    fn value_function(&mut self, name: &str, pos: u32, e: &'a Expr<'a>) -> Result<FuncId> {
        self.init_function(name, pos, |c| c.expr(e))
    }

    /// The class's `defaults` function: the list of its property defaults.
    fn defaults_function(&mut self, pos: u32, defaults: &[&'a Expr<'a>]) -> Result<FuncId> {
        self.init_function("{defaults}", pos, |c| {
            let arr = c.temp()?;
            c.emit(Op::NewArray {
                dst: arr,
                capacity: defaults.len().min(u16::MAX as usize) as u16,
            });
            for d in defaults {
                c.at(d.pos);
                let mark = c.mark();
                let v = c.expr(d)?;
                c.emit(Op::ArrayPush { arr, src: v });
                c.release(mark);
            }
            Ok(Src::reg(arr))
        })
    }
}
