//! Classes and objects as data: what a class declares once it is linked
//! (its property slots, constants, methods, with everything inherited
//! already in place), the object an instance is, and the store that hands
//! out object handles (PHP's `zend_class_entry`, `zend_object` and
//! `EG(objects_store)`).
//!
//! Behaviour (linking a declaration, property access with visibility,
//! method lookup, destructors) is the VM's: this module only says what
//! the engine keeps. Everything a class refers to is by request-wide id
//! (functions, other classes), so classes hold no cycles.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use hashbrown::HashMap;

use crate::bytecode::FuncId;
use crate::string::PhpStr;
use crate::value::Value;
use crate::PhpArray;

/// Member and class flags (PHP's `ZEND_ACC_*`, the subset minizts keeps).
pub mod acc {
    pub const PUBLIC: u16 = 1;
    pub const PROTECTED: u16 = 2;
    pub const PRIVATE: u16 = 4;
    pub const STATIC: u16 = 8;
    pub const ABSTRACT: u16 = 16;
    pub const FINAL: u16 = 32;
    pub const READONLY: u16 = 64;
    pub const VISIBILITY: u16 = PUBLIC | PROTECTED | PRIVATE;

    /// The visibility as PHP's messages write it.
    pub fn visibility_word(flags: u16) -> &'static str {
        if flags & PRIVATE != 0 {
            "private"
        } else if flags & PROTECTED != 0 {
            "protected"
        } else {
            "public"
        }
    }
}

/// What a class-like declaration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    Class,
    Interface,
    Trait,
    Enum,
}

/// A request-wide class id: its index in EG's class table.
pub type ClassId = u32;

/// A declared instance property: one slot of every instance.
#[derive(Debug, Clone)]
pub struct PropInfo {
    pub name: PhpStr,
    pub flags: u16,
    /// The class that declared it.
    pub declaring: ClassId,
    /// Its declared type, as written (checked by the VM).
    pub ty: Option<Rc<crate::bytecode::TypeDecl>>,
    /// Whether it has a default (an untyped property without one is
    /// null; a typed one without one starts uninitialised).
    pub has_default: bool,
}

/// A static property: one slot shared by the class and the subclasses
/// that do not redeclare it.
#[derive(Debug, Clone)]
pub struct StaticProp {
    pub name: PhpStr,
    pub flags: u16,
    pub declaring: ClassId,
    pub slot: crate::PhpRef,
    pub ty: Option<Rc<crate::bytecode::TypeDecl>>,
}

/// A class constant (or enum case), evaluated on first use.
#[derive(Debug)]
pub struct ClassConst {
    pub name: PhpStr,
    pub flags: u16,
    pub declaring: ClassId,
    /// The value once evaluated.
    pub value: RefCell<Option<Value>>,
    /// The function that computes it (a constant expression compiled as
    /// a tiny function), until it has run.
    pub init: Option<FuncId>,
    /// Whether this is an enum case.
    pub is_case: bool,
    /// Set while the initialiser runs (a constant that needs itself).
    pub evaluating: Cell<bool>,
}

/// How a method runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodBody {
    /// A script function.
    User(FuncId),
    /// A builtin class's method: builtin id.
    Native(u16),
}

/// A method as a class has it (inherited ones included).
#[derive(Debug)]
pub struct Method {
    /// As declared (messages keep its case).
    pub name: PhpStr,
    pub flags: u16,
    /// The class whose body declared it (for a trait's method, the class
    /// that uses the trait).
    pub declaring: ClassId,
    pub body: MethodBody,
}

impl Method {
    pub fn is_static(&self) -> bool {
        self.flags & acc::STATIC != 0
    }
}

/// The magic methods a class has, looked up once at link time.
#[derive(Debug, Default, Clone)]
pub struct Magic {
    pub construct: Option<Rc<Method>>,
    pub destruct: Option<Rc<Method>>,
    pub clone: Option<Rc<Method>>,
    pub get: Option<Rc<Method>>,
    pub set: Option<Rc<Method>>,
    pub isset: Option<Rc<Method>>,
    pub unset: Option<Rc<Method>>,
    pub call: Option<Rc<Method>>,
    pub call_static: Option<Rc<Method>>,
    pub to_string: Option<Rc<Method>>,
    pub invoke: Option<Rc<Method>>,
    pub serialize: Option<Rc<Method>>,
    pub unserialize: Option<Rc<Method>>,
    pub debug_info: Option<Rc<Method>>,
}

/// A linked class.
#[derive(Debug)]
pub struct Class {
    pub id: ClassId,
    /// As declared.
    pub name: PhpStr,
    pub kind: ClassKind,
    /// `ABSTRACT`, `FINAL`, `READONLY` of [`acc`].
    pub flags: u16,
    pub parent: Option<Rc<Class>>,
    /// Every interface it implements, inherited ones included, each once.
    pub interfaces: Vec<Rc<Class>>,
    /// The traits its declaration uses, in order (`class_uses`).
    pub traits: Vec<Rc<Class>>,
    /// The names of the properties, instance and static, that this class
    /// declares itself (those of its traits after), in declaration order:
    /// PHP lists a class's own properties before the inherited ones
    /// (`get_class_vars`).
    pub declared: Vec<PhpStr>,
    /// Instance property slots, the parent's first.
    pub props: Vec<PropInfo>,
    /// The slot a property name reaches from outside the class that
    /// declared a private one (private properties of ancestors are in
    /// `private_props` of their own class).
    pub prop_index: HashMap<PhpStr, u32>,
    /// Defaults of the slots (`Undef` for an uninitialised typed one),
    /// complete once `defaults_ready` is set: the declaration's defaults
    /// are evaluated when the class is first used.
    pub defaults: RefCell<Vec<Value>>,
    pub defaults_ready: Cell<bool>,
    /// The function computing this declaration's own defaults (a list,
    /// one value per entry of `default_targets`).
    pub defaults_fn: Option<FuncId>,
    pub default_targets: Vec<DefaultTarget>,
    /// The defaults of the properties its traits brought in.
    pub trait_defaults: Vec<TraitDefaults>,
    /// Static properties by name.
    pub statics: HashMap<PhpStr, StaticProp>,
    /// Constants (and enum cases) by name, in declaration order for the
    /// enum's `cases()`.
    pub consts: HashMap<PhpStr, Rc<ClassConst>>,
    pub const_order: Vec<PhpStr>,
    /// Methods by lower-case name.
    pub methods: HashMap<Box<[u8]>, Rc<Method>>,
    /// The keys of `methods` in PHP's order (the class's own, then those
    /// it inherits, then its traits' and interfaces' others):
    /// `get_class_methods` lists them so.
    pub method_order: Vec<Box<[u8]>>,
    pub magic: Magic,
    /// The backing type of a backed enum (`int` or `string`).
    pub enum_backing: Option<EnumBacking>,
    /// A backed enum's cases have been checked (each value of the
    /// backing type, no two alike): PHP's backed enum table, built when
    /// the enum's constants are first used, again after a failure.
    pub consts_checked: Cell<bool>,
    /// Whether instances hold only their declared properties; an
    /// instance of a class that allows dynamic ones keeps them in
    /// [`Object::dynamic`].
    pub allow_dynamic: bool,
    /// Whether `new` of it (or a subclass) must run a native
    /// constructor's state set-up: the builtin class an object's native
    /// state comes from.
    pub native: Option<NativeKind>,
}

/// Where one of a declaration's property defaults goes.
#[derive(Debug, Clone)]
pub enum DefaultTarget {
    /// An instance property slot.
    Slot(u32),
    /// A static property, by name.
    Static(PhpStr),
    /// A default the class does not take (a trait's property that the
    /// class has already).
    Skip,
}

/// A used trait's defaults function, which the using class runs in its
/// own scope (a trait's `self::X` is the class's), and where each of its
/// values goes in the class.
#[derive(Debug, Clone)]
pub struct TraitDefaults {
    pub func: FuncId,
    pub targets: Vec<DefaultTarget>,
}

/// The builtin classes whose objects carry native state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeKind {
    /// `Throwable`s: their trace.
    Throwable,
    /// `ArrayIterator`, `ArrayObject`.
    ArrayIterator,
    /// `Closure`'s own objects are `Value::Closure`; this marks the class.
    Closure,
    /// `Generator` and other classes that cannot be made with `new`.
    NotInstantiable,
    /// A class that refuses dynamic properties and serialization
    /// (`SensitiveParameterValue`: PHP's `ZEND_ACC_NO_DYNAMIC_PROPERTIES`
    /// and `ZEND_ACC_NOT_SERIALIZABLE`).
    Sealed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnumBacking {
    Int,
    String,
}

impl Class {
    /// Whether this class is `other` or extends or implements it.
    pub fn is_subclass_of(&self, other: &Class) -> bool {
        if self.id == other.id {
            return true;
        }
        if other.kind == ClassKind::Interface {
            return self.interfaces.iter().any(|i| i.id == other.id);
        }
        let mut c = self.parent.as_deref();
        while let Some(p) = c {
            if p.id == other.id {
                return true;
            }
            c = p.parent.as_deref();
        }
        false
    }

    /// Method `lc_name` (lower case).
    pub fn method(&self, lc_name: &[u8]) -> Option<&Rc<Method>> {
        self.methods.get(lc_name)
    }

    pub fn is_abstract(&self) -> bool {
        self.flags & acc::ABSTRACT != 0
    }

    /// Whether the class is `Throwable`'s.
    pub fn is_throwable(&self) -> bool {
        self.native == Some(NativeKind::Throwable)
    }
}

/// An object (PHP's `zend_object`).
pub struct Object {
    pub class: Rc<Class>,
    handle: u32,
    store: Rc<ObjectStore>,
    /// Declared properties by slot; `Undef` is an unset or uninitialised
    /// one.
    pub props: RefCell<Vec<Value>>,
    /// Dynamic properties, in the order they were made. Boxed: most
    /// objects have none, and the box keeps an object small enough for
    /// the allocator's per-thread free lists.
    pub dynamic: RefCell<Option<Box<PhpArray>>>,
    /// `DESTRUCTED`, …
    pub flags: Cell<u8>,
    /// The state of a builtin class's object.
    pub native: RefCell<Option<Box<dyn std::any::Any>>>,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "object({})#{}",
            String::from_utf8_lossy(self.class.name.as_bytes()),
            self.handle
        )
    }
}

impl Object {
    /// The destructor has run (or must not).
    pub const DESTRUCTED: u8 = 1;
    /// Being compared or printed (PHP's recursion guard).
    pub const GUARD: u8 = 2;
    /// `__get` (and the other property hooks) running for it: a nested
    /// access of the same name reads the property itself.
    pub const IN_HOOK: u8 = 4;

    pub fn handle(&self) -> u32 {
        self.handle
    }

    pub fn has_flag(&self, f: u8) -> bool {
        self.flags.get() & f != 0
    }

    pub fn set_flag(&self, f: u8, on: bool) {
        let v = self.flags.get();
        self.flags.set(if on { v | f } else { v & !f });
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        // A reference one of its typed properties held outlives it: the
        // property stops constraining what the reference holds.
        let props = self.props.get_mut();
        if props.iter().any(|v| matches!(v, Value::Ref(_))) {
            for (v, p) in props.iter().zip(self.class.props.iter()) {
                if let (Value::Ref(r), Some(_)) = (v, &p.ty) {
                    r.remove_type_source(p.declaring, &p.name);
                }
            }
        }
        self.store.release(self.handle);
    }
}

/// A counted handle to an object: what a `Value::Obj` holds. When the
/// last one goes and the object has a destructor that has not run, the
/// object is kept alive on the store's queue instead, for the VM to run
/// the destructor at its next safe point (PHP runs it at once, inside the
/// release; minizts cannot run script code from a drop).
#[derive(Debug)]
pub struct Obj(Rc<Object>);

impl Clone for Obj {
    #[inline]
    fn clone(&self) -> Obj {
        Obj(self.0.clone())
    }
}

impl std::ops::Deref for Obj {
    type Target = Object;
    #[inline]
    fn deref(&self) -> &Object {
        &self.0
    }
}

impl Drop for Obj {
    // Inline: most drops are of one holder among several, a count given
    // back; the last holder's check is out of line.
    #[inline]
    fn drop(&mut self) {
        if Rc::strong_count(&self.0) == 1 {
            self.drop_last();
        }
    }
}

impl Obj {
    /// The last holder goes: an object whose destructor has not run is
    /// queued for it (see [`Obj`]).
    #[inline(never)]
    fn drop_last(&mut self) {
        if self.0.class.magic.destruct.is_some() && !self.0.has_flag(Object::DESTRUCTED) {
            self.0.set_flag(Object::DESTRUCTED, true);
            let store = self.0.store.clone();
            store.queue_destructor(Obj(self.0.clone()));
        }
    }
}

impl PartialEq for Obj {
    fn eq(&self, other: &Obj) -> bool {
        Obj::ptr_eq(self, other)
    }
}

impl Obj {
    pub fn ptr_eq(a: &Obj, b: &Obj) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }

    /// How many holders the object has.
    pub fn count(&self) -> usize {
        Rc::strong_count(&self.0)
    }

    /// The object's address (for `spl_object_hash`-like identities).
    pub fn addr(&self) -> usize {
        Rc::as_ptr(&self.0) as usize
    }
}

/// The request's objects (PHP's `EG(objects_store)`): handles are slots
/// of a table, reused lowest-freed-last as PHP's free list reuses them,
/// and the live objects can be walked (destructors at shutdown).
#[derive(Debug)]
pub struct ObjectStore {
    slots: RefCell<Vec<Option<Weak<Object>>>>,
    /// Freed handles, the last freed on top.
    free: RefCell<Vec<u32>>,
    /// Objects whose last holder went while they have a destructor to run.
    pending: RefCell<Vec<Obj>>,
    /// Raised when `pending` gains an object: the VM's interrupt flag, so
    /// that its next safe point runs the destructor. Null when none.
    signal: Cell<*const std::sync::atomic::AtomicBool>,
}

impl Default for ObjectStore {
    fn default() -> Self {
        ObjectStore {
            slots: RefCell::default(),
            free: RefCell::default(),
            pending: RefCell::default(),
            signal: Cell::new(std::ptr::null()),
        }
    }
}

impl ObjectStore {
    /// A store that raises `signal` when a destructor is due.
    ///
    /// # Safety
    /// `signal`, unless null, must stay valid until
    /// [`ObjectStore::detach`] is called or the store and every object of
    /// it are gone (EG's interrupt flag, which outlives the request whose
    /// store this is; request shutdown detaches it).
    pub unsafe fn new(signal: *const std::sync::atomic::AtomicBool) -> Rc<ObjectStore> {
        let s = Rc::new(ObjectStore::default());
        s.signal.set(signal);
        s
    }

    /// Stops raising the signal (request shutdown).
    pub fn detach(&self) {
        self.signal.set(std::ptr::null());
    }

    /// A handle for a new object (`#N`): the last one freed, or the next.
    pub fn allocate(self: &Rc<ObjectStore>) -> u32 {
        if let Some(h) = self.free.borrow_mut().pop() {
            return h;
        }
        let mut slots = self.slots.borrow_mut();
        slots.push(None);
        slots.len() as u32
    }

    /// A new object of `class` with `props` as its slots.
    pub fn create(self: &Rc<ObjectStore>, class: Rc<Class>, props: Vec<Value>) -> Obj {
        let handle = self.allocate();
        let object = Rc::new(Object {
            class,
            handle,
            store: self.clone(),
            props: RefCell::new(props),
            dynamic: RefCell::new(None),
            flags: Cell::new(0),
            native: RefCell::new(None),
        });
        self.slots.borrow_mut()[handle as usize - 1] = Some(Rc::downgrade(&object));
        Obj(object)
    }

    /// Takes back the handle of an object that was not made by
    /// [`ObjectStore::create`] (a closure).
    pub fn release_handle(&self, handle: u32) {
        self.release(handle);
    }

    fn release(&self, handle: u32) {
        if let Ok(mut slots) = self.slots.try_borrow_mut() {
            if let Some(s) = slots.get_mut(handle as usize - 1) {
                *s = None;
            }
        }
        if let Ok(mut free) = self.free.try_borrow_mut() {
            free.push(handle);
        }
    }

    fn queue_destructor(&self, o: Obj) {
        self.pending.borrow_mut().push(o);
        let s = self.signal.get();
        if !s.is_null() {
            // SAFETY: valid until detached (see `new`).
            unsafe { &*s }.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The next object whose destructor is due.
    pub fn take_pending(&self) -> Option<Obj> {
        let mut p = self.pending.borrow_mut();
        if p.is_empty() {
            None
        } else {
            Some(p.remove(0))
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.borrow().is_empty()
    }

    /// Every live object, by handle.
    pub fn live(&self) -> Vec<Obj> {
        self.slots
            .borrow()
            .iter()
            .filter_map(|s| s.as_ref().and_then(Weak::upgrade).map(Obj))
            .collect()
    }

    /// How many handles have been made (the table's size).
    pub fn len(&self) -> usize {
        self.slots.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
