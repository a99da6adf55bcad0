//! PHP's inheritance checks, each where `zend_do_link_class` makes it:
//! a class against its parent (`zend_do_inheritance_ex`: properties,
//! constants, methods), against its interfaces
//! (`zend_do_implement_interfaces` and the interfaces' own hooks), and
//! what a finished class must be (`zend_verify_abstract_class`,
//! `zend_verify_enum`). The messages and their order are PHP 8.2's.

use std::rc::Rc;

use minizts_core::object::{acc, Class, ClassConst, ClassId, ClassKind, Method, PropInfo};
use minizts_core::PhpStr;
use minizts_globals::{eg, Globals};

use super::link::{Draft, Obligation, SELF};
use super::variance::{display_name, sig_of, Checker, ClassRef, Status};
use crate::error::VmResult;

/// A method and the class messages name for it.
pub(crate) type MRef = (Rc<Method>, ClassId);

/// `" or weaker"` after a visibility that is not public.
fn or_weaker(flags: u16) -> &'static str {
    if flags & acc::PUBLIC != 0 {
        ""
    } else {
        " or weaker"
    }
}

/// The visibility bits in PHP's order (public < protected < private).
fn ppp(flags: u16) -> u16 {
    flags & acc::VISIBILITY
}

impl Draft<'_> {
    fn class_of<G: Globals>(&self, g: G, id: ClassId) -> Rc<Class> {
        eg!(g).classes.get(id).clone()
    }

    /// A property's declaring class for messages and type scopes.
    fn prop_scope<G: Globals>(&self, g: G, declaring: ClassId) -> ClassRef {
        if declaring == SELF {
            ClassRef::Draft
        } else {
            ClassRef::Linked(self.class_of(g, declaring))
        }
    }

    /// The parent's members, checked against the class's own
    /// (`zend_do_inheritance_ex`).
    pub(super) fn inherit_parent<G: Globals>(&mut self, g: G) -> VmResult<()> {
        let Some(parent) = self.parent.clone() else {
            return Ok(());
        };
        let pname = display_name(parent.name.as_bytes());
        if parent.flags & acc::FINAL != 0 || parent.kind == ClassKind::Enum {
            return self.fail(format!("Class {} cannot extend final class {pname}", self.name));
        }
        match parent.kind {
            ClassKind::Interface => return self.fail(format!("Class {} cannot extend interface {pname}", self.name)),
            ClassKind::Trait => return self.fail(format!("Class {} cannot extend trait {pname}", self.name)),
            _ => {}
        }
        let readonly = self.def.flags & acc::READONLY != 0;
        if readonly != (parent.flags & acc::READONLY != 0) {
            return self.fail(format!(
                "{} class {} cannot extend {} class {pname}",
                if readonly { "Readonly" } else { "Non-readonly" },
                self.name,
                if readonly { "non-readonly" } else { "readonly" },
            ));
        }
        self.inherit_props(g, &parent)?;
        self.inherit_consts(g, &parent)?;
        for key in &parent.method_order {
            let Some(pm) = parent.methods.get(key) else {
                continue;
            };
            match self.method(key) {
                Some(own) => {
                    let child = (own.m.clone(), own.scope);
                    self.check_method(g, &child, &(pm.clone(), pm.declaring), true, true)?;
                }
                None => self.put_method(key.clone(), pm.clone(), pm.declaring),
            }
        }
        Ok(())
    }

    /// The class's own properties against the parent's of the same names
    /// (`do_inherit_property`).
    fn inherit_props<G: Globals>(&mut self, g: G, parent: &Rc<Class>) -> VmResult<()> {
        for p in &self.def.props {
            let name = PhpStr::from(p.name.as_bytes());
            let inherited: Option<PropInfo> = match parent.prop_index.get(&name) {
                Some(&slot) => Some(parent.props[slot as usize].clone()),
                None => parent.statics.get(&name).map(|s| PropInfo {
                    name: s.name.clone(),
                    flags: s.flags,
                    declaring: s.declaring,
                    ty: s.ty.clone(),
                    has_default: true,
                }),
            };
            let Some(q) = inherited else { continue };
            if q.flags & acc::PRIVATE != 0 {
                continue;
            }
            let qname = self.class_name(g, q.declaring);
            let n = &p.name;
            if (q.flags & acc::STATIC) != (p.flags & acc::STATIC) {
                let word = |f: u16| if f & acc::STATIC != 0 { "static " } else { "non static " };
                return self.fail(format!(
                    "Cannot redeclare {}{qname}::${n} as {}{}::${n}",
                    word(q.flags),
                    word(p.flags),
                    self.name
                ));
            }
            if (q.flags & acc::READONLY) != (p.flags & acc::READONLY) {
                let word = |f: u16| {
                    if f & acc::READONLY != 0 {
                        "readonly"
                    } else {
                        "non-readonly"
                    }
                };
                return self.fail(format!(
                    "Cannot redeclare {} property {qname}::${n} as {} {}::${n}",
                    word(q.flags),
                    word(p.flags),
                    self.name
                ));
            }
            if ppp(p.flags) > ppp(q.flags) {
                return self.fail(format!(
                    "Access level to {}::${n} must be {} (as in class {qname}){}",
                    self.name,
                    acc::visibility_word(q.flags),
                    or_weaker(q.flags)
                ));
            }
            let child = PropInfo {
                name: name.clone(),
                flags: p.flags,
                declaring: SELF,
                ty: p.ty.clone().map(Rc::new),
                has_default: p.has_default,
            };
            if q.ty.is_some() {
                let mut ck = Checker::new(g, self);
                let status = self.prop_status(&mut ck, &child, &q);
                drop(ck);
                match status {
                    Status::Success => {}
                    Status::Unresolved => self.obligations.push(Obligation::Property { child, parent: q }),
                    _ => return self.incompatible_prop(g, &child, &q),
                }
            } else if p.ty.is_some() {
                return self.fail(format!(
                    "Type of {}::${n} must not be defined (as in class {qname})",
                    self.name
                ));
            }
        }
        Ok(())
    }

    /// Whether two declarations of a property have the same type
    /// (`property_types_compatible`: a subtype both ways).
    pub(super) fn prop_status<G: Globals>(
        &self,
        ck: &mut Checker<'_, G>,
        child: &PropInfo,
        parent: &PropInfo,
    ) -> Status {
        let (Some(ct), Some(pt)) = (&child.ty, &parent.ty) else {
            return if child.ty.is_none() && parent.ty.is_none() {
                Status::Success
            } else {
                Status::Error
            };
        };
        if ct == pt && ct.classes.iter().all(|c| !is_relative(c)) {
            return Status::Success;
        }
        let cs = self.prop_scope(ck.g, child.declaring);
        let ps = self.prop_scope(ck.g, parent.declaring);
        let a = ck.covariant(&cs, ct, &ps, pt);
        let b = ck.covariant(&ps, pt, &cs, ct);
        if a == Status::Success && b == Status::Success {
            Status::Success
        } else if a == Status::Error || b == Status::Error {
            Status::Error
        } else {
            Status::Unresolved
        }
    }

    /// "Type of C::$p must be T (as in class P)".
    pub(super) fn incompatible_prop<G: Globals>(&self, g: G, child: &PropInfo, parent: &PropInfo) -> VmResult<()> {
        let ck = Checker::new(g, self);
        let scope = self.prop_scope(g, parent.declaring);
        let ty = parent
            .ty
            .as_deref()
            .map_or_else(String::new, |t| ck.type_text(&scope, t));
        self.fail(format!(
            "Type of {}::${} must be {ty} (as in class {})",
            self.class_name(g, child.declaring),
            child.name,
            self.class_name(g, parent.declaring)
        ))
    }

    /// The parent's constants: the class's own must not hide a final one
    /// or narrow its visibility (`do_inherit_class_constant`).
    fn inherit_consts<G: Globals>(&mut self, g: G, parent: &Rc<Class>) -> VmResult<()> {
        let mut names: Vec<PhpStr> = parent.const_order.clone();
        let mut rest: Vec<PhpStr> = parent.consts.keys().filter(|k| !names.contains(k)).cloned().collect();
        rest.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        names.extend(rest);
        for name in names {
            let Some(pc) = parent.consts.get(&name) else { continue };
            match self.consts.get(&name) {
                Some(own) => {
                    let declaring = self.class_name(g, pc.declaring);
                    if ppp(own.flags) > ppp(pc.flags) {
                        return self.fail(format!(
                            "Access level to {}::{} must be {} (as in class {declaring}){}",
                            self.name,
                            name,
                            acc::visibility_word(pc.flags),
                            or_weaker(pc.flags)
                        ));
                    }
                    if pc.flags & acc::FINAL != 0 {
                        return self.fail(format!(
                            "{}::{name} cannot override final constant {declaring}::{name}",
                            self.name
                        ));
                    }
                }
                None if pc.flags & acc::PRIVATE == 0 => {
                    self.consts.insert(name.clone(), pc.clone());
                    self.const_order.push(name);
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Where a method's errors are reported: its function's first line.
    fn method_at<G: Globals>(&self, g: G, m: &Method) -> Option<(Box<str>, u32)> {
        sig_of(g, m.body, String::new(), String::new()).and_then(|s| s.at)
    }

    /// The abstract method a constructor must match, if any: its own
    /// prototype when that is abstract (an abstract constructor, or an
    /// interface's), which PHP keeps as the method's `prototype`.
    fn ctor_prototype<G: Globals>(&self, g: G, m: &Rc<Method>, scope: ClassId) -> Option<MRef> {
        let proto = self.prototype_of(g, m).unwrap_or_else(|| (m.clone(), scope));
        (proto.0.flags & acc::ABSTRACT != 0).then_some(proto)
    }

    /// The method `m` implements or overrides in the classes above the
    /// one that declares it (an interface's wins over the parent's).
    fn prototype_of<G: Globals>(&self, g: G, m: &Rc<Method>) -> Option<MRef> {
        if m.declaring == SELF {
            return None;
        }
        let class = self.class_of(g, m.declaring);
        if class.kind == ClassKind::Interface {
            return None;
        }
        let key = m.name.as_bytes().to_ascii_lowercase();
        for i in class.interfaces.iter().rev() {
            if let Some(im) = i.methods.get(key.as_slice()) {
                return Some((im.clone(), im.declaring));
            }
        }
        let pm = class.parent.as_ref()?.methods.get(key.as_slice())?.clone();
        if pm.flags & acc::PRIVATE != 0 && pm.flags & acc::ABSTRACT == 0 {
            return None;
        }
        Some(self.prototype_of(g, &pm).unwrap_or_else(|| (pm.clone(), pm.declaring)))
    }

    /// Method `child` where `parent` was (`do_inheritance_check_on_method`):
    /// `proto` checks finality, staticness, abstractness and the
    /// signature; `visibility` that access is not narrowed.
    pub(super) fn check_method<G: Globals>(
        &mut self,
        g: G,
        child: &MRef,
        parent: &MRef,
        proto: bool,
        visibility: bool,
    ) -> VmResult<()> {
        let (cm, cscope) = (&child.0, child.1);
        let (pm, pscope) = (&parent.0, parent.1);
        let pflags = pm.flags;
        let is_ctor = pm.name.as_bytes().eq_ignore_ascii_case(b"__construct");
        // A private method is the parent's own business (an abstract one
        // from a trait excepted).
        if pflags & acc::PRIVATE != 0 && pflags & acc::ABSTRACT == 0 && !is_ctor {
            return Ok(());
        }
        let cname = &cm.name;
        if proto && pflags & acc::FINAL != 0 {
            return self.fail_at(
                format!("Cannot override final method {}::{cname}()", self.class_name(g, pscope)),
                self.method_at(g, cm),
            );
        }
        if proto && (cm.flags & acc::STATIC) != (pflags & acc::STATIC) {
            let (from, to) = if cm.flags & acc::STATIC != 0 {
                ("non static", "static")
            } else {
                ("static", "non static")
            };
            return self.fail_at(
                format!(
                    "Cannot make {from} method {}::{cname}() {to} in class {}",
                    self.class_name(g, pscope),
                    self.class_name(g, cscope)
                ),
                self.method_at(g, cm),
            );
        }
        if proto && cm.flags & acc::ABSTRACT != 0 && pflags & acc::ABSTRACT == 0 {
            return self.fail_at(
                format!(
                    "Cannot make non abstract method {}::{cname}() abstract in class {}",
                    self.class_name(g, pscope),
                    self.class_name(g, cscope)
                ),
                self.method_at(g, cm),
            );
        }
        // A constructor only answers to an abstract prototype.
        let target: MRef = if is_ctor {
            match self.ctor_prototype(g, pm, pscope) {
                Some(p) => p,
                None => return Ok(()),
            }
        } else {
            parent.clone()
        };
        if visibility && ppp(cm.flags) > ppp(pflags) {
            return self.fail_at(
                format!(
                    "Access level to {}::{cname}() must be {} (as in class {}){}",
                    self.class_name(g, cscope),
                    acc::visibility_word(pflags),
                    self.class_name(g, target.1),
                    or_weaker(pflags)
                ),
                self.method_at(g, cm),
            );
        }
        if proto {
            let child = (cm.clone(), cscope);
            let mut ck = Checker::new(g, self);
            let status = self.method_status(&mut ck, &child, &target);
            drop(ck);
            match status {
                Status::Success => {}
                Status::Unresolved => self.obligations.push(Obligation::Method { child, parent: target }),
                _ => self.incompatible_method(g, &child, &target, status, None)?,
            }
        }
        Ok(())
    }

    /// Whether method `child` may stand where `parent` stood.
    pub(super) fn method_status<G: Globals>(&self, ck: &mut Checker<'_, G>, child: &MRef, parent: &MRef) -> Status {
        let g = ck.g;
        let (Some(cs), Some(ps)) = (
            sig_of(g, child.0.body, self.class_name(g, child.1), child.0.name.to_string()),
            sig_of(
                g,
                parent.0.body,
                self.class_name(g, parent.1),
                parent.0.name.to_string(),
            ),
        ) else {
            return Status::Success;
        };
        let (cscope, pscope) = (self.sig_scope(g, &child.0), self.sig_scope(g, &parent.0));
        ck.implementation(&cs, &cscope, &ps, &pscope)
    }

    /// The error of an incompatible signature
    /// (`emit_incompatible_method_error`); a tentative return type only
    /// warrants a deprecation.
    pub(super) fn incompatible_method<G: Globals>(
        &self,
        g: G,
        child: &MRef,
        parent: &MRef,
        status: Status,
        unresolved: Option<String>,
    ) -> VmResult<()> {
        let (Some(cs), Some(ps)) = (
            sig_of(g, child.0.body, self.class_name(g, child.1), child.0.name.to_string()),
            sig_of(
                g,
                parent.0.body,
                self.class_name(g, parent.1),
                parent.0.name.to_string(),
            ),
        ) else {
            return Ok(());
        };
        let ck = Checker::new(g, self);
        let child_decl = ck.declaration(&cs, &self.sig_scope(g, &child.0));
        let parent_decl = ck.declaration(&ps, &self.sig_scope(g, &parent.0));
        match status {
            Status::Warning => Ok(()),
            Status::Unresolved => self.fail_at(
                format!(
                    "Could not check compatibility between {child_decl} and {parent_decl}, because class {} is not available",
                    unresolved.unwrap_or_default()
                ),
                cs.at.clone(),
            ),
            _ => self.fail_at(
                format!("Declaration of {child_decl} must be compatible with {parent_decl}"),
                cs.at.clone(),
            ),
        }
    }

    /// The interfaces the class names, then those it inherits
    /// (`zend_do_implement_interfaces`, `zend_do_inherit_interfaces`).
    pub(super) fn implement_interfaces<G: Globals>(&mut self, g: G, declared: Vec<Rc<Class>>) -> VmResult<()> {
        let inherited: Vec<Rc<Class>> = self.parent.as_ref().map_or_else(Vec::new, |p| p.interfaces.clone());
        let num_parent = inherited.len();
        let mut list = inherited;
        for iface in declared {
            if iface.kind != ClassKind::Interface {
                return self.fail(format!(
                    "{} cannot implement {} - it is not an interface",
                    self.name,
                    display_name(iface.name.as_bytes())
                ));
            }
            match list.iter().position(|i| i.id == iface.id) {
                Some(j) if j >= num_parent => {
                    return self.fail(format!(
                        "{} {} cannot implement previously implemented interface {}",
                        self.kind_word(),
                        self.name,
                        display_name(iface.name.as_bytes())
                    ));
                }
                // Implemented by the parent already: only its constants
                // are checked again.
                Some(_) => {
                    for name in iface_const_names(&iface) {
                        let c = iface.consts[&name].clone();
                        self.iface_const_check(g, &name, &c)?;
                    }
                }
                None => list.push(iface),
            }
        }
        self.interfaces = list[..num_parent].to_vec();
        let own: Vec<Rc<Class>> = list[num_parent..].to_vec();
        self.interfaces.extend(own.iter().cloned());
        for i in 0..num_parent {
            let iface = self.interfaces[i].clone();
            self.interface_hook(g, &iface)?;
        }
        for iface in own {
            self.interface_members(g, &iface)?;
        }
        Ok(())
    }

    /// One interface's constants and methods, its hook, then the
    /// interfaces it extends (`do_interface_implementation`).
    pub(super) fn interface_members<G: Globals>(&mut self, g: G, iface: &Rc<Class>) -> VmResult<()> {
        for name in iface_const_names(iface) {
            let c = iface.consts[&name].clone();
            if self.iface_const_check(g, &name, &c)? {
                self.consts.insert(name.clone(), c);
                self.const_order.push(name);
            }
        }
        for key in &iface.method_order {
            let Some(im) = iface.methods.get(key) else { continue };
            match self.method(key) {
                Some(e) if Rc::ptr_eq(&e.m, im) => {}
                Some(e) => {
                    let child = (e.m.clone(), e.scope);
                    self.check_method(g, &child, &(im.clone(), im.declaring), true, true)?;
                }
                None => self.put_method(key.clone(), im.clone(), im.declaring),
            }
        }
        self.interface_hook(g, iface)?;
        for j in &iface.interfaces {
            if !self.interfaces.iter().any(|k| k.id == j.id) {
                self.interfaces.push(j.clone());
                self.interface_hook(g, j)?;
            }
        }
        Ok(())
    }

    /// Whether interface constant `c` may be added (no constant of the
    /// name yet), with PHP's errors for one that clashes
    /// (`do_inherit_constant_check`).
    fn iface_const_check<G: Globals>(&self, g: G, name: &PhpStr, c: &Rc<ClassConst>) -> VmResult<bool> {
        let Some(old) = self.consts.get(name) else {
            return Ok(true);
        };
        if c.declaring != old.declaring && c.flags & acc::FINAL != 0 {
            return self.fail(format!(
                "{}::{name} cannot override final constant {}::{name}",
                self.class_name(g, old.declaring),
                self.class_name(g, c.declaring)
            ));
        }
        if old.declaring != c.declaring && old.declaring != SELF {
            return self.fail(format!(
                "{} {} inherits both {}::{name} and {}::{name}, which is ambiguous",
                self.kind_word(),
                self.name,
                self.class_name(g, old.declaring),
                self.class_name(g, c.declaring)
            ));
        }
        Ok(false)
    }

    /// What an interface checks of a class implementing it (PHP's
    /// `interface_gets_implemented` handlers).
    fn interface_hook<G: Globals>(&self, g: G, iface: &Rc<Class>) -> VmResult<()> {
        if self.def.kind == ClassKind::Interface {
            return Ok(());
        }
        let has = |n: &str| {
            self.interfaces
                .iter()
                .any(|i| i.name.eq_ignore_ascii_case(n.as_bytes()))
        };
        let name = iface.name.as_bytes();
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if is("Traversable") {
            if !self.is_explicit_abstract_class() && !has("Iterator") && !has("IteratorAggregate") {
                // (An E_CORE_ERROR, which PHP reports at no place.)
                return self.fail_at(
                    format!(
                        "{} {} must implement interface Traversable as part of either Iterator or IteratorAggregate",
                        self.kind_word(),
                        self.name
                    ),
                    Some(("Unknown".into(), 0)),
                );
            }
        } else if (is("IteratorAggregate") && has("Iterator")) || (is("Iterator") && has("IteratorAggregate")) {
            return self.fail(format!(
                "Class {} cannot implement both Iterator and IteratorAggregate at the same time",
                self.name
            ));
        } else if is("UnitEnum") || is("BackedEnum") {
            if self.def.kind != ClassKind::Enum {
                return self.fail(format!(
                    "Non-enum class {} cannot implement interface {}",
                    self.name,
                    display_name(name)
                ));
            }
            if is("BackedEnum") && self.def.backing.is_none() {
                return self.fail(format!(
                    "Non-backed enum {} cannot implement interface {}",
                    self.name,
                    display_name(name)
                ));
            }
        } else if is("Throwable") {
            let mut root = self.parent.clone();
            while let Some(p) = root.as_ref().and_then(|r| r.parent.clone()) {
                root = Some(p);
            }
            let ok = root
                .as_ref()
                .is_some_and(|r| r.name.as_bytes() == b"Exception" || r.name.as_bytes() == b"Error");
            if !ok {
                return self.fail(if self.def.kind == ClassKind::Enum {
                    format!(
                        "{} {} cannot implement interface Throwable",
                        self.kind_word(),
                        self.name
                    )
                } else {
                    format!(
                        "{} {} cannot implement interface Throwable, extend Exception or Error instead",
                        self.kind_word(),
                        self.name
                    )
                });
            }
        } else if is("Serializable")
            && !self.is_explicit_abstract_class()
            && (self.method(b"__serialize").is_none() || self.method(b"__unserialize").is_none())
            // (The builtin classes minizts has serialize their own way.)
            && !self.extends_builtin()
        {
            crate::error::deprecated(
                g,
                &format!(
                    "{} implements the Serializable interface, which is deprecated. Implement __serialize() and __unserialize() instead (or in addition, if support for old PHP versions is necessary)",
                    self.name
                ),
            );
        }
        Ok(())
    }

    /// Whether a builtin class is among the ancestors.
    fn extends_builtin(&self) -> bool {
        let mut p = self.parent.clone();
        while let Some(c) = p {
            if super::is_builtin(&c) {
                return true;
            }
            p = c.parent.clone();
        }
        false
    }

    fn is_explicit_abstract_class(&self) -> bool {
        self.def.flags & acc::ABSTRACT != 0
    }

    /// A concrete class must have no abstract method left, an abstract
    /// one no abstract private one (`zend_verify_abstract_class`).
    pub(super) fn verify_abstract<G: Globals>(&self, g: G) -> VmResult<()> {
        let explicit = self.is_explicit_abstract_class();
        let left: Vec<&super::link::MEntry> = self
            .methods
            .iter()
            .filter(|e| e.m.flags & acc::ABSTRACT != 0 && (!explicit || e.m.flags & acc::PRIVATE != 0))
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        let n = left.len();
        let mut list: Vec<String> = left
            .iter()
            .take(3)
            .map(|e| format!("{}::{}", self.class_name(g, e.scope), e.m.name))
            .collect();
        if n > 3 {
            list.push("...".into());
        }
        let s = if n > 1 { "s" } else { "" };
        if !explicit && self.def.kind != ClassKind::Enum {
            self.fail(format!(
                "{} {} contains {n} abstract method{s} and must therefore be declared abstract or implement the remaining methods ({})",
                self.kind_word(),
                self.name,
                list.join(", ")
            ))
        } else {
            self.fail(format!(
                "{} {} must implement {n} abstract private method{s} ({})",
                self.kind_word(),
                self.name,
                list.join(", ")
            ))
        }
    }

    /// What an enum may not get from its traits and interfaces
    /// (`zend_verify_enum`).
    pub(super) fn verify_enum<G: Globals>(&self, _g: G) -> VmResult<()> {
        let backed = self.def.backing.is_some();
        let extra_prop = self.props.iter().any(|p| {
            let n = p.name.as_bytes();
            !(n == b"name" || (backed && n == b"value"))
        });
        if extra_prop || !self.statics.is_empty() {
            return self.fail(format!("Enum {} cannot include properties", self.name));
        }
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
            if self.method(magic.to_ascii_lowercase().as_bytes()).is_some() {
                return self.fail(format!("Enum {} cannot include magic method {magic}", self.name));
            }
        }
        if self
            .interfaces
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(b"Serializable"))
        {
            return self.fail(format!(
                "Enum {} cannot implement the Serializable interface",
                self.name
            ));
        }
        Ok(())
    }
}

/// An interface's constant names, in declaration order.
fn iface_const_names(iface: &Class) -> Vec<PhpStr> {
    let mut names: Vec<PhpStr> = iface.const_order.clone();
    let mut rest: Vec<PhpStr> = iface.consts.keys().filter(|k| !names.contains(k)).cloned().collect();
    rest.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names.extend(rest);
    names
}

/// Whether a type's class name depends on where it is written.
fn is_relative(name: &str) -> bool {
    name.eq_ignore_ascii_case("self") || name.eq_ignore_ascii_case("parent")
}
