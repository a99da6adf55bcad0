//! PHP's auto-globals: the variables every function sees without
//! `global`, and the variables the top-level scope starts with.
//!
//! Written once here because the compiler (which binds them) and the VM
//! (which fills them at request startup) must agree on the list.

/// The auto-globals besides `$GLOBALS` (which is no variable since PHP
/// 8.1: the compiler turns its uses into by-name accesses of the global
/// scope).
pub const AUTO_GLOBALS: &[&str] = &["_GET", "_POST", "_COOKIE", "_FILES", "_SERVER", "_ENV", "_REQUEST"];

/// The global variables a CLI request starts with, in the order PHP's
/// symbol table has them (`_ENV` and `_REQUEST` are made only for scripts
/// that name them, as PHP's just-in-time auto-globals are).
pub const REQUEST_START: &[&str] = &["_GET", "_POST", "_COOKIE", "_FILES", "argv", "argc", "_SERVER"];

/// Whether `name` (without the `$`) is an auto-global.
pub fn is_auto_global(name: &str) -> bool {
    AUTO_GLOBALS.contains(&name)
}
