//! Functions by request-wide id (see `minizts_globals::code`).
//!
//! A function is borrowed here past EG's borrow, as a frame's function
//! pointer is: the scripts that own the functions are dropped only at
//! request shutdown, which no VM code outlives. Looking one up costs no
//! reference count (the scripts are shared by every thread running them,
//! so a count would be a contended atomic).

use minizts_core::bytecode::{FuncId, Function};
use minizts_globals::{eg, Globals};

/// Function `id` of the running request, if it has one.
///
/// # Safety
/// The result must not be used after the request ends (its script's
/// drop); any use while VM code of the request runs is fine.
pub(crate) unsafe fn function<'r, G: Globals>(g: G, id: FuncId) -> Option<&'r Function> {
    let f: Option<*const Function> = eg!(g, |eg| eg.code.get(id).map(|f| f as *const Function));
    // SAFETY: EG's code keeps the function where it is until request
    // shutdown (the caller's contract covers the rest).
    f.map(|f| unsafe { &*f })
}

/// Function `id`, which the caller knows the request has (an id from a
/// frame, a closure, the compiler or the runtime cache).
///
/// # Safety
/// As for [`function`].
pub(crate) unsafe fn known<'r, G: Globals>(g: G, id: FuncId) -> &'r Function {
    // SAFETY: forwarded.
    unsafe { function(g, id) }.expect("a function id of the running request")
}

/// The file function `id` came from, as messages print it.
pub(crate) fn file_of<G: Globals>(g: G, id: FuncId) -> Box<str> {
    eg!(g, |eg| eg
        .code
        .unit_of(id)
        .map_or_else(|| "Unknown".into(), |u| u.file.clone()))
}
