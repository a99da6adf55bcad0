//! Autoloading (PHP's `zend_lookup_class_ex` and SPL's
//! `spl_perform_autoload`): a class that is not declared when code needs
//! it is handed, by name, to each autoloader `spl_autoload_register`
//! installed, in order, until one of them declares it.

use std::rc::Rc;

use minizts_core::object::Class;
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::call::Callee;
use crate::error::VmResult;

/// Whether PHP would hand `name` to an autoloader: only letters, digits,
/// `_`, `\` and bytes from 0x80 make a class name
/// (`zend_is_valid_class_name`).
fn valid_name(name: &[u8]) -> bool {
    name.iter()
        .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'\\' || c >= 0x80)
}

/// Runs the autoloaders for class `name`, which is not declared: the
/// class once one of them declared it.
pub(crate) fn run<G: Globals>(g: G, name: &[u8]) -> VmResult<Option<Rc<Class>>> {
    if eg!(g).autoload.functions.is_empty() || !valid_name(name) {
        return Ok(None);
    }
    let k = super::key(name);
    // An autoloader that needs the class it is loading does not start
    // the autoloaders again: the class is just not there.
    if !eg!(g).autoload.in_progress.insert(k.clone().into()) {
        return Ok(None);
    }
    let bare = name.strip_prefix(b"\\").unwrap_or(name);
    let r = perform(g, bare, &k);
    eg!(g).autoload.in_progress.remove(k.as_slice());
    r
}

/// Calls the autoloaders in order with `name` until class `lc_name` is
/// declared (`spl_perform_autoload`; also `spl_autoload_call`). An
/// autoloader's exception stops the search.
pub(crate) fn perform<G: Globals>(g: G, name: &[u8], lc_name: &[u8]) -> VmResult<Option<Rc<Class>>> {
    // By position, reading the list afresh each time: an autoloader may
    // register or unregister others.
    let mut i = 0;
    loop {
        let next = eg!(g, |eg| eg.autoload.functions.get(i).map(|a| a.resolved.clone()));
        let Some(resolved) = next else { return Ok(None) };
        let Some(callee) = resolved.downcast_ref::<Callee>() else {
            return Ok(None);
        };
        crate::call::call_resolved(g, callee, vec![Value::Str(PhpStr::from(name))])?;
        if let Some(c) = eg!(g).classes.find(lc_name).cloned() {
            return Ok(Some(c));
        }
        i += 1;
    }
}
