//! An object where a builtin takes an array by reference (`array_walk`,
//! `array_walk_recursive`): PHP hands such builtins the object's
//! property table, keyed by the mangled names (`"\0Class\0name"` for a
//! private property, `"\0*\0name"` for a protected one), whatever the
//! calling scope. minizts has no such table, so the builtin works on an
//! array whose elements are references bound to the properties, which
//! are unbound again afterwards.

use minizts_core::object::{acc, PropInfo};
use minizts_core::{Key, Obj, PhpArray, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::VmResult;

/// The key of declared property `p` in a property table.
pub(super) fn mangled<G: Globals>(g: G, p: &PropInfo) -> Key {
    let mut name = Vec::with_capacity(p.name.len() + 3);
    if p.flags & acc::PRIVATE != 0 {
        name.push(0);
        name.extend_from_slice(eg!(g).classes.get(p.declaring).name.as_bytes());
        name.push(0);
    } else if p.flags & acc::PROTECTED != 0 {
        name.extend_from_slice(b"\0*\0");
    }
    name.extend_from_slice(p.name.as_bytes());
    Key::from_bytes(&name)
}

/// The object argument `i` is, if it is one.
pub(super) fn object_arg(a: &Args, i: usize) -> Option<Obj> {
    match a.value(i).as_ref() {
        Value::Obj(o) => Some(o.clone()),
        _ => None,
    }
}

/// Runs `f` with argument `i` standing for object `o`'s property table.
pub(super) fn with_properties<G: Globals>(
    g: G,
    a: &mut Args,
    i: usize,
    o: &Obj,
    f: impl FnOnce(G, &mut Args) -> VmResult<Value>,
) -> VmResult<Value> {
    let table = bind(g, o);
    let saved = std::mem::replace(&mut a.v[i], Value::arr(table));
    let r = f(g, a);
    // The table goes first, so that a reference only the object still
    // holds is its value again.
    a.v[i] = saved;
    unbind(o);
    r
}

/// The property table of `o`, each initialised property made a
/// reference that the table shares.
fn bind<G: Globals>(g: G, o: &Obj) -> PhpArray {
    let mut table = PhpArray::new();
    {
        let mut props = o.props.borrow_mut();
        for (p, slot) in o.class.props.iter().zip(props.iter_mut()) {
            if matches!(slot, Value::Undef) {
                continue;
            }
            table.insert(mangled(g, p), Value::Ref(crate::gc::slot_ref(g, slot)));
        }
    }
    if let Some(d) = o.dynamic.borrow_mut().as_mut() {
        let keys: Vec<Key> = d.iter().map(|(k, _)| k.to_key()).collect();
        for k in keys {
            if let Some(slot) = d.get_mut(&k) {
                table.insert(k, Value::Ref(crate::gc::slot_ref(g, slot)));
            }
        }
    }
    table
}

/// Makes each property of `o` that only the object refers to a plain
/// value again.
fn unbind(o: &Obj) {
    let plain = |slot: &mut Value| {
        if let Value::Ref(r) = slot {
            if r.count() == 1 {
                let v = r.get();
                *slot = v;
            }
        }
    };
    o.props.borrow_mut().iter_mut().for_each(plain);
    if let Some(d) = o.dynamic.borrow_mut().as_mut() {
        d.values_mut().for_each(plain);
    }
}
