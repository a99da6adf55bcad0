//! Binding a class's traits (PHP's `zend_do_bind_traits`): the
//! `insteadof` and `as` rules resolved and checked
//! (`zend_traits_init_trait_structures`), each trait's methods copied in
//! under their names and aliases (`zend_traits_copy_functions`,
//! `zend_add_trait_method`: a class's own method wins, two traits'
//! methods collide, an abstract one is a requirement the class's method
//! must meet), then the traits' constants and properties, which must
//! agree with what the class has.

use std::rc::Rc;

use minizts_core::bytecode::{FuncId, TraitRuleDef};
use minizts_core::object::{
    acc, Class, ClassConst, ClassId, ClassKind, DefaultTarget, Method, PropInfo, StaticProp, TraitDefaults,
};
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::link::{Draft, ValueCheck, SELF};
use super::variance::{display_name, Checker, Status};
use crate::error::{Location, VmError, VmResult};

/// An `as` rule as it applies: the trait it names (or the one that has
/// the method), the method, the new visibility, the alias.
struct Alias<'r> {
    trait_id: ClassId,
    method: &'r str,
    flags: u16,
    alias: Option<&'r str>,
}

impl Draft<'_> {
    fn is_trait_scope<G: Globals>(&self, g: G, scope: ClassId) -> bool {
        scope != SELF && eg!(g).classes.get(scope).kind == ClassKind::Trait
    }

    /// The trait a rule names, which the class must use
    /// (`zend_check_trait_usage`).
    fn rule_trait<G: Globals>(&self, g: G, written: &str) -> VmResult<Rc<Class>> {
        let Some(t) = super::lookup(g, written.as_bytes()) else {
            return self.fail(format!("Could not find trait {written}"));
        };
        if t.kind != ClassKind::Trait {
            return self.fail(format!(
                "Class {} is not a trait, Only traits may be used in 'as' and 'insteadof' statements",
                display_name(t.name.as_bytes())
            ));
        }
        if !self.traits.iter().any(|u| u.id == t.id) {
            return self.fail(format!(
                "Required Trait {} wasn't added to {}",
                display_name(t.name.as_bytes()),
                self.name
            ));
        }
        Ok(t)
    }

    pub(super) fn bind_traits<G: Globals>(&mut self, g: G) -> VmResult<()> {
        let traits = self.traits.clone();
        let rules = &self.def.trait_rules;
        // The methods `insteadof` leaves out, per trait.
        let mut excluded: Vec<Vec<Vec<u8>>> = vec![Vec::new(); traits.len()];
        for rule in rules {
            let TraitRuleDef::Insteadof {
                trait_name,
                method,
                instead_of,
            } = rule
            else {
                continue;
            };
            let t = self.rule_trait(g, trait_name)?;
            let lc = method.to_ascii_lowercase().into_bytes();
            if !t.methods.contains_key(lc.as_slice()) {
                return self.fail(format!(
                    "A precedence rule was defined for {}::{method} but this method does not exist",
                    display_name(t.name.as_bytes())
                ));
            }
            for other in instead_of {
                let e = self.rule_trait(g, other)?;
                let i = traits.iter().position(|u| u.id == e.id).unwrap_or(0);
                if excluded[i].contains(&lc) {
                    return self.fail(format!(
                        "Failed to evaluate a trait precedence ({method}). Method of trait {} was defined to be excluded multiple times",
                        display_name(e.name.as_bytes())
                    ));
                }
                excluded[i].push(lc.clone());
                if t.id == e.id {
                    let tn = display_name(t.name.as_bytes());
                    return self.fail(format!(
                        "Inconsistent insteadof definition. The method {method} is to be used from {tn}, but {tn} is also on the exclude list"
                    ));
                }
            }
        }
        let mut aliases: Vec<Alias<'_>> = Vec::new();
        for rule in rules {
            let TraitRuleDef::Alias {
                trait_name,
                method,
                flags,
                alias,
            } = rule
            else {
                continue;
            };
            let lc = method.to_ascii_lowercase().into_bytes();
            let t = match trait_name {
                Some(tn) => {
                    let t = self.rule_trait(g, tn)?;
                    if !t.methods.contains_key(lc.as_slice()) {
                        return self.fail(format!(
                            "An alias was defined for {}::{method} but this method does not exist",
                            display_name(t.name.as_bytes())
                        ));
                    }
                    t
                }
                None => {
                    let mut found: Option<&Rc<Class>> = None;
                    for u in &traits {
                        if !u.methods.contains_key(lc.as_slice()) {
                            continue;
                        }
                        if let Some(f) = found {
                            let (a, b) = (display_name(f.name.as_bytes()), display_name(u.name.as_bytes()));
                            return self.fail(format!(
                                "An alias was defined for method {method}(), which exists in both {a} and {b}. Use {a}::{method} or {b}::{method} to resolve the ambiguity"
                            ));
                        }
                        found = Some(u);
                    }
                    match (found, alias) {
                        (Some(f), _) => f.clone(),
                        (None, Some(a)) => {
                            return self.fail(format!(
                                "An alias ({a}) was defined for method {method}(), but this method does not exist"
                            ))
                        }
                        (None, None) => {
                            return self.fail(format!(
                                "The modifiers of the trait method {method}() are changed, but this method does not exist. Error"
                            ))
                        }
                    }
                }
            };
            aliases.push(Alias {
                trait_id: t.id,
                method,
                flags: *flags,
                alias: alias.as_deref(),
            });
        }
        for (i, t) in traits.iter().enumerate() {
            for key in &t.method_order {
                let Some(m) = t.methods.get(key) else { continue };
                self.copy_trait_method(g, t, key, m, &excluded[i], &aliases)?;
            }
        }
        // The traits' methods are the class's now.
        for i in 0..self.methods.len() {
            if self.is_trait_scope(g, self.methods[i].scope) {
                self.methods[i].scope = SELF;
            }
        }
        self.bind_trait_consts(g, &traits)?;
        self.bind_trait_props(g, &traits)
    }

    /// Trait `t`'s method `m` under its aliases and, unless excluded,
    /// its own name (`zend_traits_copy_functions`).
    fn copy_trait_method<G: Globals>(
        &mut self,
        g: G,
        t: &Rc<Class>,
        key: &[u8],
        m: &Rc<Method>,
        excluded: &[Vec<u8>],
        aliases: &[Alias<'_>],
    ) -> VmResult<()> {
        let applies = |a: &Alias<'_>| a.trait_id == t.id && a.method.as_bytes().eq_ignore_ascii_case(key);
        for a in aliases {
            let Some(name) = a.alias else { continue };
            if !applies(a) {
                continue;
            }
            let flags = if a.flags != 0 {
                a.flags | (m.flags & !acc::VISIBILITY)
            } else {
                m.flags
            };
            self.add_trait_method(g, t, name, flags, m)?;
        }
        if excluded.iter().any(|k| k.as_slice() == key) {
            return Ok(());
        }
        let mut flags = m.flags;
        for a in aliases {
            if a.alias.is_none() && a.flags != 0 && applies(a) {
                flags = a.flags | (m.flags & !acc::VISIBILITY);
            }
        }
        let name = String::from_utf8_lossy(m.name.as_bytes()).into_owned();
        self.add_trait_method(g, t, &name, flags, m)
    }

    /// One method of trait `t` as `name` with `flags`
    /// (`zend_add_trait_method`).
    fn add_trait_method<G: Globals>(
        &mut self,
        g: G,
        t: &Rc<Class>,
        name: &str,
        flags: u16,
        m: &Rc<Method>,
    ) -> VmResult<()> {
        let key: Box<[u8]> = name.to_ascii_lowercase().into_bytes().into();
        // The trait's method as the trait has it, with the rule's flags.
        let from_trait = Rc::new(Method {
            name: m.name.clone(),
            flags,
            declaring: m.declaring,
            body: m.body,
        });
        let mut check = None;
        if let Some(existing) = self.method(&key).cloned() {
            let existing_from_trait = self.is_trait_scope(g, existing.scope);
            // The same method reached through two traits is one method.
            if existing.m.body == m.body
                && (existing.m.flags & acc::VISIBILITY) == (flags & acc::VISIBILITY)
                && existing_from_trait
            {
                return Ok(());
            }
            // An abstract method is a requirement the method the class
            // has must meet.
            if flags & acc::ABSTRACT != 0 {
                return self.check_method(
                    g,
                    &(existing.m.clone(), existing.scope),
                    &(from_trait, t.id),
                    true,
                    false,
                );
            }
            if existing.scope == SELF {
                // The class's own method wins.
                return Ok(());
            }
            if existing_from_trait && existing.m.flags & acc::ABSTRACT == 0 {
                return self.fail(format!(
                    "Trait method {}::{} has not been applied as {}::{name}, because of collision with {}::{}",
                    display_name(t.name.as_bytes()),
                    m.name,
                    self.name,
                    self.class_name(g, existing.scope),
                    existing.m.name
                ));
            }
            check = Some(existing);
        }
        let new = Rc::new(Method {
            name: PhpStr::from(name.as_bytes()),
            flags,
            declaring: SELF,
            body: m.body,
        });
        self.put_method(key, new.clone(), t.id);
        if let Some(existing) = check {
            // It overrides what the class inherited.
            self.check_method(g, &(new, t.id), &(existing.m.clone(), existing.scope), true, true)?;
        }
        Ok(())
    }

    /// The first of the traits before `current` that has constant or
    /// property `name`, or the class (PHP's `find_first_*_definition`).
    fn first_definition<G: Globals>(
        &self,
        g: G,
        traits: &[Rc<Class>],
        current: usize,
        declaring: ClassId,
        has: impl Fn(&Class) -> bool,
    ) -> String {
        if declaring == SELF {
            if let Some(t) = traits[..current].iter().find(|t| has(t)) {
                return display_name(t.name.as_bytes());
            }
        }
        self.class_name(g, declaring)
    }

    /// The traits' constants (`zend_do_traits_constant_binding`).
    fn bind_trait_consts<G: Globals>(&mut self, g: G, traits: &[Rc<Class>]) -> VmResult<()> {
        for (i, t) in traits.iter().enumerate() {
            for name in &t.const_order {
                let Some(tc) = t.consts.get(name) else { continue };
                if let Some(existing) = self.consts.get(name) {
                    let mask = acc::VISIBILITY | acc::FINAL;
                    let first =
                        self.first_definition(g, traits, i, existing.declaring, |c| c.consts.contains_key(name));
                    if tc.flags & mask != existing.flags & mask {
                        return self.fail(const_conflict(
                            &first,
                            &self.class_name(g, tc.declaring),
                            name,
                            &self.name,
                        ));
                    }
                    self.value_checks.push(ValueCheck::Const {
                        name: name.clone(),
                        trait_: t.clone(),
                        first,
                    });
                    continue;
                }
                self.consts.insert(
                    name.clone(),
                    Rc::new(ClassConst {
                        name: name.clone(),
                        flags: tc.flags,
                        declaring: SELF,
                        value: std::cell::RefCell::new(None),
                        init: tc.init,
                        is_case: tc.is_case,
                        evaluating: std::cell::Cell::new(false),
                    }),
                );
                self.const_order.push(name.clone());
            }
        }
        Ok(())
    }

    /// The traits' properties (`zend_do_traits_property_binding`).
    fn bind_trait_props<G: Globals>(&mut self, g: G, traits: &[Rc<Class>]) -> VmResult<()> {
        for (i, t) in traits.iter().enumerate() {
            // Before its defaults are evaluated (in the class's scope,
            // below): what a property without one starts as.
            let tdefaults = t.defaults.borrow().clone();
            let mut added: Vec<(PhpStr, bool)> = Vec::new();
            for name in &t.declared {
                let (info, value, is_static) = if let Some(&slot) = t.prop_index.get(name) {
                    (t.props[slot as usize].clone(), tdefaults[slot as usize].clone(), false)
                } else if let Some(sp) = t.statics.get(name) {
                    let info = PropInfo {
                        name: sp.name.clone(),
                        flags: sp.flags,
                        declaring: sp.declaring,
                        ty: sp.ty.clone(),
                        has_default: true,
                    };
                    (info, sp.slot.get(), true)
                } else {
                    continue;
                };
                let colliding: Option<PropInfo> = match self.prop_index.get(name) {
                    Some(&slot) => Some(self.props[slot as usize].clone()),
                    None => self.statics.get(name).map(|s| PropInfo {
                        name: s.name.clone(),
                        flags: s.flags,
                        declaring: s.declaring,
                        ty: s.ty.clone(),
                        has_default: true,
                    }),
                };
                if let Some(c) = colliding {
                    let mask = acc::VISIBILITY | acc::STATIC | acc::READONLY;
                    let first = self.first_definition(g, traits, i, c.declaring, |k| {
                        k.prop_index.contains_key(name) || k.statics.contains_key(name)
                    });
                    let mut compatible = c.flags & mask == info.flags & mask;
                    if compatible {
                        let mut ck = Checker::new(g, self);
                        compatible = self.prop_status(&mut ck, &info, &c) == Status::Success;
                    }
                    if !compatible {
                        return self.fail(prop_conflict(
                            &first,
                            &display_name(t.name.as_bytes()),
                            name,
                            &self.name,
                        ));
                    }
                    self.value_checks.push(ValueCheck::Prop {
                        name: name.clone(),
                        is_static,
                        trait_: t.clone(),
                        first,
                    });
                    continue;
                }
                if self.def.flags & acc::READONLY != 0 && info.flags & acc::READONLY == 0 {
                    return self.fail(format!(
                        "Readonly class {} cannot use trait with a non-readonly property {}::${name}",
                        self.name,
                        display_name(t.name.as_bytes())
                    ));
                }
                if !self.declared.contains(name) {
                    self.declared.push(name.clone());
                }
                added.push((name.clone(), is_static));
                if is_static {
                    self.statics.insert(
                        name.clone(),
                        StaticProp {
                            name: name.clone(),
                            flags: info.flags,
                            declaring: SELF,
                            slot: crate::gc::new_ref(g, value),
                            ty: info.ty.clone(),
                        },
                    );
                } else {
                    self.prop_index.insert(name.clone(), self.props.len() as u32);
                    self.props.push(PropInfo {
                        declaring: SELF,
                        ..info
                    });
                    self.defaults.push(value);
                }
            }
            // The trait's defaults functions, run by the class in its
            // scope, each value to the property the class took from it.
            for (func, targets) in default_sources(t) {
                let targets = targets
                    .iter()
                    .map(|target| match target {
                        DefaultTarget::Slot(s) => {
                            let name = &t.props[*s as usize].name;
                            match self.prop_index.get(name) {
                                Some(&slot) if added.contains(&(name.clone(), false)) => DefaultTarget::Slot(slot),
                                _ => DefaultTarget::Skip,
                            }
                        }
                        DefaultTarget::Static(name) if added.contains(&(name.clone(), true)) => {
                            DefaultTarget::Static(name.clone())
                        }
                        _ => DefaultTarget::Skip,
                    })
                    .collect();
                self.trait_defaults.push(TraitDefaults { func, targets });
            }
        }
        Ok(())
    }
}

/// A trait's defaults functions: its own, then those of its traits, each
/// with where its values go in the trait.
fn default_sources(t: &Class) -> Vec<(FuncId, Vec<DefaultTarget>)> {
    let mut out: Vec<(FuncId, Vec<DefaultTarget>)> = Vec::new();
    if let Some(f) = t.defaults_fn {
        out.push((f, t.default_targets.clone()));
    }
    for td in &t.trait_defaults {
        out.push((td.func, td.targets.clone()));
    }
    out
}

/// Trait `t`'s default for property `name`, evaluated as `class` would.
fn trait_prop_default<G: Globals>(
    g: G,
    class: &Rc<Class>,
    t: &Class,
    name: &PhpStr,
    is_static: bool,
) -> VmResult<Value> {
    for (func, targets) in default_sources(t) {
        let found = targets.iter().position(|target| match target {
            DefaultTarget::Slot(s) => !is_static && t.props[*s as usize].name == *name,
            DefaultTarget::Static(n) => is_static && n == name,
            DefaultTarget::Skip => false,
        });
        if let Some(i) = found {
            let list = crate::call::call_in_scope(g, func, None, class.id, class.id, Vec::new())?;
            return Ok(match list {
                Value::Arr(a) => a.values().nth(i).map_or(Value::Null, Value::deref_clone),
                _ => Value::Null,
            });
        }
    }
    Ok(if is_static {
        t.statics.get(name).map_or(Value::Null, |s| s.slot.get())
    } else {
        t.prop_index
            .get(name)
            .map_or(Value::Null, |&slot| t.defaults.borrow()[slot as usize].clone())
    })
}

fn const_conflict(first: &str, second: &str, name: &PhpStr, class: &str) -> String {
    format!(
        "{first} and {second} define the same constant ({name}) in the composition of {class}. However, the definition differs and is considered incompatible. Class was composed"
    )
}

fn prop_conflict(first: &str, second: &str, name: &PhpStr, class: &str) -> String {
    format!(
        "{first} and {second} define the same property (${name}) in the composition of {class}. However, the definition differs and is considered incompatible. Class was composed"
    )
}

/// Compares a trait's constant or property default with the class's,
/// once the class can evaluate its own
/// (`check_trait_property_or_constant_value_compatibility`).
pub(super) fn check_value<G: Globals>(
    g: G,
    class: &Rc<Class>,
    check: ValueCheck,
    file: &str,
    line: u32,
) -> VmResult<()> {
    let class_name = display_name(class.name.as_bytes());
    let fail = |message: String| -> VmResult<()> {
        Err(Box::new(VmError::Fatal {
            message,
            at: Some(Location {
                file: file.into(),
                line,
            }),
        }))
    };
    match check {
        ValueCheck::Const { name, trait_, first } => {
            let (Some(mine), Some(theirs)) = (class.consts.get(&name).cloned(), trait_.consts.get(&name).cloned())
            else {
                return Ok(());
            };
            let a = crate::objects::const_value(g, class, &name, &mine)?;
            // The trait's, evaluated in the class's scope.
            let theirs = Rc::new(ClassConst {
                name: theirs.name.clone(),
                flags: theirs.flags,
                declaring: class.id,
                value: std::cell::RefCell::new(None),
                init: theirs.init,
                is_case: theirs.is_case,
                evaluating: std::cell::Cell::new(false),
            });
            let b = crate::objects::const_value(g, class, &name, &theirs)?;
            if !minizts_core::value::identical(&a, &b)? {
                return fail(const_conflict(
                    &first,
                    &display_name(trait_.name.as_bytes()),
                    &name,
                    &class_name,
                ));
            }
        }
        ValueCheck::Prop {
            name,
            is_static,
            trait_,
            first,
        } => {
            crate::objects::ensure_defaults(g, class)?;
            let a = if is_static {
                let Some(x) = class.statics.get(&name) else {
                    return Ok(());
                };
                x.slot.get()
            } else {
                let Some(&x) = class.prop_index.get(&name) else {
                    return Ok(());
                };
                class.defaults.borrow()[x as usize].clone()
            };
            let b = trait_prop_default(g, class, &trait_, &name, is_static)?;
            if !minizts_core::value::identical(&a, &b)? {
                return fail(prop_conflict(
                    &first,
                    &display_name(trait_.name.as_bytes()),
                    &name,
                    &class_name,
                ));
            }
        }
    }
    Ok(())
}
