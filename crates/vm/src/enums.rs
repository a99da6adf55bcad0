//! Enums: a case is an object of its enum, made once, with its `name`
//! (and `value` for a backed enum), readonly.

use std::rc::Rc;

use minizts_core::object::Class;
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::error::VmResult;

/// The object case `name` of `class` is, its backing value `v` (null for
/// a pure enum).
pub fn make_case<G: Globals>(g: G, class: &Rc<Class>, name: &PhpStr, v: Value) -> VmResult<Value> {
    let props = class.defaults.borrow().clone();
    let store = eg!(g).objects.clone();
    let o = store.create(class.clone(), props);
    if let Some(&slot) = class.prop_index.get(&PhpStr::from(&b"name"[..])) {
        o.props.borrow_mut()[slot as usize] = Value::Str(name.clone());
    }
    if let Some(&slot) = class.prop_index.get(&PhpStr::from(&b"value"[..])) {
        o.props.borrow_mut()[slot as usize] = v;
    }
    Ok(Value::Obj(o))
}
