//! Linking a compiled declaration (`ClassDef`) into a `Class`, in the
//! steps and order of PHP's `zend_do_link_class`: the parent's members
//! inherited and checked against the class's own
//! (`zend_do_inheritance`), the traits bound (`zend_do_bind_traits`,
//! [`super::traits`]), the interfaces implemented
//! (`zend_do_implement_interfaces`), then what a finished class must be
//! (no abstract method left in a concrete class, an enum's rules). The
//! checks themselves are in [`super::inherit`] and, for signatures,
//! [`super::variance`].
//!
//! The class gets its id only once it is registered (a check may make a
//! builtin class, which takes the next id), so until then what the
//! class declares itself says [`SELF`] where it will say the id.

use std::rc::Rc;

use hashbrown::HashMap;
use minizts_core::bytecode::ClassDef;
use minizts_core::object::{
    acc, Class, ClassConst, ClassId, ClassKind, DefaultTarget, Method, MethodBody, PropInfo, StaticProp, TraitDefaults,
};
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use super::variance::{display_name, Checker, ClassRef, Status};
use super::{find, find_as, register};
use crate::error::{Location, VmError, VmResult};

/// The id of the class being linked, until it has one.
pub(crate) const SELF: ClassId = ClassId::MAX;

/// A method of the class being linked: its key (lower-case name), the
/// method, and the class whose name messages print for it (while traits
/// are bound, a trait's method is still the trait's).
#[derive(Clone)]
pub(crate) struct MEntry {
    pub key: Box<[u8]>,
    pub m: Rc<Method>,
    pub scope: ClassId,
}

/// A check that needed a class no one has declared yet, done again once
/// autoloading has had its chance (PHP's variance obligations).
pub(crate) enum Obligation {
    Method {
        child: (Rc<Method>, ClassId),
        parent: (Rc<Method>, ClassId),
    },
    Property {
        child: PropInfo,
        parent: PropInfo,
    },
}

/// A trait's constant or property whose value must equal what the class
/// has: compared once the class is registered and can evaluate it.
pub(crate) enum ValueCheck {
    Const {
        name: PhpStr,
        trait_: Rc<Class>,
        /// Who the message names as the first definition.
        first: String,
    },
    Prop {
        name: PhpStr,
        is_static: bool,
        trait_: Rc<Class>,
        first: String,
    },
}

/// The class being linked.
pub(crate) struct Draft<'d> {
    pub def: &'d ClassDef,
    /// The name messages print (an anonymous class's up to its NUL).
    pub name: String,
    pub file: Box<str>,
    pub line: u32,
    pub parent: Option<Rc<Class>>,
    /// Every interface the declaration names, with theirs: what the
    /// class will be an instance of, for the type checks.
    pub all_interfaces: Vec<Rc<Class>>,
    /// The interfaces as they are implemented, in PHP's order.
    pub interfaces: Vec<Rc<Class>>,
    /// The traits used, each once.
    pub traits: Vec<Rc<Class>>,
    pub methods: Vec<MEntry>,
    pub method_index: HashMap<Box<[u8]>, usize>,
    pub props: Vec<PropInfo>,
    pub defaults: Vec<Value>,
    pub prop_index: HashMap<PhpStr, u32>,
    pub statics: HashMap<PhpStr, StaticProp>,
    pub default_targets: Vec<DefaultTarget>,
    pub trait_defaults: Vec<TraitDefaults>,
    pub consts: HashMap<PhpStr, Rc<ClassConst>>,
    pub const_order: Vec<PhpStr>,
    pub declared: Vec<PhpStr>,
    pub obligations: Vec<Obligation>,
    pub value_checks: Vec<ValueCheck>,
    /// The class once registered (checks that waited for autoloading
    /// are done after).
    pub registered: Option<Rc<Class>>,
}

impl<'d> Draft<'d> {
    /// A fatal error of the declaration (reported at its line).
    pub fn fail<T>(&self, message: impl Into<String>) -> VmResult<T> {
        self.fail_at(message, None)
    }

    /// A fatal error at `at` (a method's file and line), or else at the
    /// declaration's.
    pub fn fail_at<T>(&self, message: impl Into<String>, at: Option<(Box<str>, u32)>) -> VmResult<T> {
        let (file, line) = at.unwrap_or_else(|| (self.file.clone(), self.line));
        Err(Box::new(VmError::Fatal {
            message: message.into(),
            at: Some(Location { file, line }),
        }))
    }

    /// The name of class `id` (this one's for [`SELF`]).
    pub fn class_name<G: Globals>(&self, g: G, id: ClassId) -> String {
        if id == SELF {
            self.name.clone()
        } else {
            display_name(eg!(g).classes.get(id).name.as_bytes())
        }
    }

    /// Where `self` and `parent` point in method `m`'s types: the class
    /// that declares it, or this one for its own and its traits'.
    pub fn sig_scope<G: Globals>(&self, g: G, m: &Method) -> ClassRef {
        if m.declaring == SELF {
            return ClassRef::Draft;
        }
        let c = eg!(g).classes.get(m.declaring).clone();
        if c.kind == ClassKind::Trait {
            ClassRef::Draft
        } else {
            ClassRef::Linked(c)
        }
    }

    pub fn method(&self, key: &[u8]) -> Option<&MEntry> {
        self.method_index.get(key).map(|&i| &self.methods[i])
    }

    /// Adds or replaces method `key` (a replaced one keeps its place).
    pub fn put_method(&mut self, key: Box<[u8]>, m: Rc<Method>, scope: ClassId) {
        match self.method_index.get(&key) {
            Some(&i) => self.methods[i] = MEntry { key, m, scope },
            None => {
                self.method_index.insert(key.clone(), self.methods.len());
                self.methods.push(MEntry { key, m, scope });
            }
        }
    }

    /// PHP's `zend_get_object_type_uc`.
    pub fn kind_word(&self) -> &'static str {
        match self.def.kind {
            ClassKind::Class => "Class",
            ClassKind::Interface => "Interface",
            ClassKind::Trait => "Trait",
            ClassKind::Enum => "Enum",
        }
    }
}

/// A class whose declaration is being linked (its parent or interfaces
/// are loading, or its checks wait for autoloading): PHP has it in the
/// class table already, unlinked, and the variance checks of other
/// classes may find it there (`ZEND_FETCH_CLASS_ALLOW_UNLINKED`).
pub(crate) struct Unlinked {
    pub name: String,
    pub parent: Option<Box<str>>,
    pub interfaces: Vec<Box<str>>,
}

thread_local! {
    static LINKING: std::cell::RefCell<Vec<Rc<Unlinked>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The class being linked that is named `name`, if any.
pub(crate) fn unlinked(name: &str) -> Option<Rc<Unlinked>> {
    LINKING.with(|l| {
        l.borrow()
            .iter()
            .rev()
            .find(|u| u.name.eq_ignore_ascii_case(name))
            .cloned()
    })
}

/// Keeps a class on the stack of those being linked while it is.
struct LinkingGuard;

impl LinkingGuard {
    fn push(def: &ClassDef) -> LinkingGuard {
        let u = Unlinked {
            name: def.name.to_string(),
            parent: def.parent.clone(),
            interfaces: def.interfaces.clone(),
        };
        LINKING.with(|l| l.borrow_mut().push(Rc::new(u)));
        LinkingGuard
    }
}

impl Drop for LinkingGuard {
    fn drop(&mut self) {
        LINKING.with(|l| {
            l.borrow_mut().pop();
        });
    }
}

/// How linking came out.
pub(crate) enum Linked {
    Done,
    /// Early binding only: a check needs a class not declared yet, so
    /// the class waits for its declaration statement.
    Deferred,
}

/// Links `def` (of a script of file `file`) into a class of the request.
/// `early`: before the script runs (PHP's compile-time early binding).
pub(crate) fn link<G: Globals>(g: G, def: &ClassDef, file: &str, early: bool) -> VmResult<Linked> {
    let name = display_name(def.name.as_bytes());
    let at = || Location {
        file: file.into(),
        line: def.line_start,
    };
    let located = |e: Box<VmError>| -> Box<VmError> {
        match *e {
            VmError::Fatal { message, at: None } => Box::new(VmError::Fatal {
                message,
                at: Some(at()),
            }),
            other => Box::new(other),
        }
    };
    // Seen, unlinked, by the checks of classes loaded meanwhile.
    let _linking = (!early).then(|| LinkingGuard::push(def));
    // What the declaration builds on, loaded first (an autoloader may
    // still fail cleanly here), as `zend_do_link_class` does.
    let parent = match &def.parent {
        Some(p) => Some(find(g, p.as_bytes())?),
        None => None,
    };
    let mut traits: Vec<Rc<Class>> = Vec::new();
    for t in &def.traits {
        // A trait that is not there is a fatal error, not an exception.
        let Some(t) = super::load(g, t.as_bytes())? else {
            return Err(located(Box::new(VmError::Fatal {
                message: format!("Trait \"{}\" not found", t.strip_prefix('\\').unwrap_or(t)),
                at: None,
            })));
        };
        if t.kind != ClassKind::Trait {
            return Err(located(Box::new(VmError::Fatal {
                message: format!("{name} cannot use {} - it is not a trait", t.name),
                at: None,
            })));
        }
        if !traits.iter().any(|u| u.id == t.id) {
            traits.push(t);
        }
    }
    // An enum implements `UnitEnum`, and `BackedEnum` when backed, after
    // what it names (`zend_enum_add_interfaces`).
    let mut iface_names: Vec<&str> = def.interfaces.iter().map(|s| &**s).collect();
    if def.kind == ClassKind::Enum {
        iface_names.push("UnitEnum");
        if def.backing.is_some() {
            iface_names.push("BackedEnum");
        }
    }
    let mut declared_ifaces: Vec<Rc<Class>> = Vec::new();
    for n in &iface_names {
        declared_ifaces.push(find_as(g, n.as_bytes(), "Interface")?);
    }
    let mut all_interfaces: Vec<Rc<Class>> = Vec::new();
    for i in &declared_ifaces {
        for j in i.interfaces.iter().chain(std::iter::once(i)) {
            if !all_interfaces.iter().any(|k| k.id == j.id) {
                all_interfaces.push(j.clone());
            }
        }
    }
    let mut d = Draft {
        def,
        name,
        file: file.into(),
        line: def.line_start,
        parent,
        all_interfaces,
        interfaces: Vec::new(),
        traits,
        methods: Vec::new(),
        method_index: HashMap::new(),
        props: Vec::new(),
        defaults: Vec::new(),
        prop_index: HashMap::new(),
        statics: HashMap::new(),
        default_targets: Vec::new(),
        trait_defaults: Vec::new(),
        consts: HashMap::new(),
        const_order: Vec::new(),
        declared: Vec::new(),
        obligations: Vec::new(),
        value_checks: Vec::new(),
        registered: None,
    };
    own_members(g, &mut d)?;
    if def.kind == ClassKind::Enum {
        d.enum_methods()?;
    }
    d.inherit_parent(g)?;
    if !d.traits.is_empty() {
        d.bind_traits(g)?;
    }
    d.implement_interfaces(g, declared_ifaces)?;
    if matches!(def.kind, ClassKind::Class | ClassKind::Enum) {
        d.verify_abstract(g)?;
    }
    if def.kind == ClassKind::Enum {
        d.verify_enum(g)?;
    }
    // A `__toString` from a trait makes the class `Stringable` too (its
    // own one did at compile time).
    if def.kind != ClassKind::Trait
        && d.method(b"__tostring").is_some()
        && !d.interfaces.iter().any(|i| i.name.eq_ignore_ascii_case(b"Stringable"))
    {
        if let Some(s) = super::lookup(g, b"Stringable") {
            d.interfaces.push(s.clone());
            d.interface_members(g, &s)?;
        }
    }
    if !d.obligations.is_empty() && early {
        return Ok(Linked::Deferred);
    }
    let value_checks = std::mem::take(&mut d.value_checks);
    // Registered before the checks that waited are done again: loading
    // the classes they need may need this one (PHP's "nearly linked").
    let class = finish(g, &mut d);
    d.registered = Some(class.clone());
    if !d.obligations.is_empty() {
        d.resolve_obligations(g)?;
    }
    for check in value_checks {
        super::traits::check_value(g, &class, check, file, def.line_start)?;
    }
    Ok(Linked::Done)
}

/// What the declaration itself declares: its properties (after the
/// parent's slots), constants and methods, as `SELF`'s.
fn own_members<G: Globals>(g: G, d: &mut Draft<'_>) -> VmResult<()> {
    let def = d.def;
    if let Some(p) = &d.parent {
        d.props = p.props.clone();
        d.defaults = p.defaults.borrow().clone();
        // A parent's private property stays in its slot but is not
        // reached by name from outside the parent.
        d.prop_index = p
            .prop_index
            .iter()
            .filter(|(_, &slot)| p.props[slot as usize].flags & acc::PRIVATE == 0)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        d.statics = p
            .statics
            .iter()
            .filter(|(_, s)| s.flags & acc::PRIVATE == 0)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
    }
    if def.kind == ClassKind::Enum {
        let mut names = vec!["name"];
        if def.backing.is_some() {
            names.push("value");
        }
        for n in names {
            let name = PhpStr::from(n.as_bytes());
            d.prop_index.insert(name.clone(), d.props.len() as u32);
            d.props.push(PropInfo {
                name,
                flags: acc::PUBLIC | acc::READONLY,
                declaring: SELF,
                ty: None,
                has_default: false,
            });
            d.defaults.push(Value::Undef);
        }
    }
    for p in &def.props {
        let name = PhpStr::from(p.name.as_bytes());
        d.declared.push(name.clone());
        if p.has_default {
            d.default_targets.push(if p.flags & acc::STATIC != 0 {
                DefaultTarget::Static(name.clone())
            } else {
                // The slot is known once the loop below has placed it.
                DefaultTarget::Slot(u32::MAX)
            });
        }
        if p.flags & acc::STATIC != 0 {
            d.statics.insert(
                name.clone(),
                StaticProp {
                    name,
                    flags: p.flags,
                    declaring: SELF,
                    slot: crate::gc::new_ref(
                        g,
                        if p.has_default || p.ty.is_none() {
                            Value::Null
                        } else {
                            Value::Undef
                        },
                    ),
                    ty: p.ty.clone().map(Rc::new),
                },
            );
            continue;
        }
        let info = PropInfo {
            name: name.clone(),
            flags: p.flags,
            declaring: SELF,
            ty: p.ty.clone().map(Rc::new),
            has_default: p.has_default,
        };
        let initial = if p.ty.is_some() && !p.has_default {
            Value::Undef
        } else {
            Value::Null
        };
        let slot = match d.prop_index.get(&name) {
            // Redeclared: the class's declaration takes the parent's slot.
            Some(&slot) => {
                d.props[slot as usize] = info;
                d.defaults[slot as usize] = initial;
                slot
            }
            None => {
                d.prop_index.insert(name, d.props.len() as u32);
                d.props.push(info);
                d.defaults.push(initial);
                d.props.len() as u32 - 1
            }
        };
        if p.has_default {
            if let Some(DefaultTarget::Slot(s)) = d.default_targets.last_mut() {
                *s = slot;
            }
        }
    }
    for c in &def.consts {
        let name = PhpStr::from(c.name.as_bytes());
        d.const_order.push(name.clone());
        d.consts.insert(
            name.clone(),
            Rc::new(ClassConst {
                name,
                flags: c.flags,
                declaring: SELF,
                value: std::cell::RefCell::new(None),
                init: c.init,
                is_case: c.is_case,
                evaluating: std::cell::Cell::new(false),
            }),
        );
    }
    for m in &def.methods {
        let key: Box<[u8]> = m.name.as_bytes().to_ascii_lowercase().into();
        d.put_method(
            key,
            Rc::new(Method {
                name: PhpStr::from(m.name.as_bytes()),
                flags: m.flags,
                declaring: SELF,
                body: MethodBody::User(m.func),
            }),
            SELF,
        );
    }
    Ok(())
}

impl Draft<'_> {
    /// An enum's `cases()` (and a backed one's `from()` and `tryFrom()`),
    /// its own methods before anything is inherited
    /// (`zend_enum_register_funcs`).
    fn enum_methods(&mut self) -> VmResult<()> {
        let mut wanted = vec![("UnitEnum", "cases")];
        if self.def.backing.is_some() {
            wanted.push(("BackedEnum", "from"));
            wanted.push(("BackedEnum", "tryFrom"));
        }
        for (owner, name) in wanted {
            let key: Box<[u8]> = name.to_ascii_lowercase().into_bytes().into();
            if self.method(&key).is_some() {
                return self.fail(format!("Cannot redeclare {}::{name}()", self.name));
            }
            let Some((nid, _, _)) = crate::natives::declared_by(owner).find(|(_, m, _)| *m == name) else {
                continue;
            };
            self.put_method(
                key,
                Rc::new(Method {
                    name: PhpStr::from(name.as_bytes()),
                    flags: acc::PUBLIC | acc::STATIC,
                    declaring: SELF,
                    body: MethodBody::Native(nid),
                }),
                SELF,
            );
        }
        Ok(())
    }

    /// The checks that waited for autoloading: each unresolved class is
    /// loaded, then each check is done again (PHP's
    /// `load_delayed_classes` and `resolve_delayed_variance_obligations`).
    fn resolve_obligations<G: Globals>(&mut self, g: G) -> VmResult<()> {
        let mut names: Vec<String> = Vec::new();
        for o in &self.obligations {
            let mut ck = Checker::new(g, self);
            match o {
                Obligation::Method { child, parent } => {
                    let _ = self.method_status(&mut ck, child, parent);
                }
                Obligation::Property { child, parent } => {
                    let _ = self.prop_status(&mut ck, child, parent);
                }
            }
            for n in ck.unresolved {
                if !names.iter().any(|m| m.eq_ignore_ascii_case(&n)) {
                    names.push(n);
                }
            }
        }
        for n in &names {
            if let Err(e) = super::load(g, n.as_bytes()) {
                return Err(crate::exceptions::uncaught_during(
                    g,
                    e,
                    &format!("During inheritance of {}, while autoloading {n}", self.name),
                ));
            }
        }
        let obligations = std::mem::take(&mut self.obligations);
        for o in &obligations {
            let mut ck = Checker::new(g, self);
            match o {
                Obligation::Method { child, parent } => {
                    let status = self.method_status(&mut ck, child, parent);
                    let first = ck.unresolved.first().cloned();
                    drop(ck);
                    if status != Status::Success {
                        self.incompatible_method(g, child, parent, status, first)?;
                    }
                }
                Obligation::Property { child, parent } => {
                    let status = self.prop_status(&mut ck, child, parent);
                    drop(ck);
                    if status != Status::Success {
                        self.incompatible_prop(g, child, parent)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Registers the linked class: `SELF` becomes its id.
fn finish<G: Globals>(g: G, d: &mut Draft<'_>) -> Rc<Class> {
    let def = d.def;
    let parent = d.parent.clone();
    let entries = std::mem::take(&mut d.methods);
    d.method_index.clear();
    let traits = std::mem::take(&mut d.traits);
    let declared = std::mem::take(&mut d.declared);
    let interfaces = std::mem::take(&mut d.interfaces);
    let props = std::mem::take(&mut d.props);
    let prop_index = std::mem::take(&mut d.prop_index);
    let defaults = std::mem::take(&mut d.defaults);
    let default_targets = std::mem::take(&mut d.default_targets);
    let trait_defaults = std::mem::take(&mut d.trait_defaults);
    let statics = std::mem::take(&mut d.statics);
    let consts = std::mem::take(&mut d.consts);
    let const_order = std::mem::take(&mut d.const_order);
    register(g, |id| {
        let fix = |c: ClassId| if c == SELF { id } else { c };
        let mut methods: HashMap<Box<[u8]>, Rc<Method>> = HashMap::with_capacity(entries.len());
        let mut method_order: Vec<Box<[u8]>> = Vec::with_capacity(entries.len());
        for e in entries {
            let m = if e.m.declaring == SELF {
                Rc::new(Method {
                    name: e.m.name.clone(),
                    flags: e.m.flags,
                    declaring: id,
                    body: e.m.body,
                })
            } else {
                e.m
            };
            method_order.push(e.key.clone());
            methods.insert(e.key, m);
        }
        let props: Vec<PropInfo> = props
            .into_iter()
            .map(|mut p| {
                p.declaring = fix(p.declaring);
                p
            })
            .collect();
        let statics = statics
            .into_iter()
            .map(|(k, mut s)| {
                s.declaring = fix(s.declaring);
                (k, s)
            })
            .collect();
        let consts = consts
            .into_iter()
            .map(|(k, c)| {
                let c = if c.declaring == SELF {
                    Rc::new(ClassConst {
                        name: c.name.clone(),
                        flags: c.flags,
                        declaring: id,
                        value: std::cell::RefCell::new(c.value.borrow().clone()),
                        init: c.init,
                        is_case: c.is_case,
                        evaluating: std::cell::Cell::new(false),
                    })
                } else {
                    c
                };
                (k, c)
            })
            .collect();
        let magic = super::magic_of(&methods);
        Class {
            id,
            name: PhpStr::from(def.name.as_bytes()),
            traits,
            declared,
            kind: def.kind,
            flags: def.flags,
            native: parent.as_ref().and_then(|p| p.native),
            allow_dynamic: def.allow_dynamic || parent.as_ref().is_some_and(|p| p.allow_dynamic),
            parent,
            interfaces,
            props,
            prop_index,
            defaults: std::cell::RefCell::new(defaults),
            defaults_ready: std::cell::Cell::new(false),
            defaults_fn: def.defaults,
            default_targets,
            trait_defaults,
            statics,
            consts,
            const_order,
            methods,
            method_order,
            magic,
            enum_backing: def.backing,
            consts_checked: std::cell::Cell::new(false),
        }
    })
}
