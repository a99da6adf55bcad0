//! The engine's data model: values, strings, arrays, number formatting,
//! bytecode and compiled scripts.
//!
//! Everything here is plain data and pure functions: no per-thread state,
//! no I/O. The globals crate builds executor and compiler globals out of
//! these types; the compiler produces [`bytecode::Script`]s; the VM runs
//! them.

pub mod array;
pub mod bytecode;
pub mod gc;
pub mod numfmt;
pub mod object;
pub mod string;
pub mod superglobals;
pub mod value;

pub use array::{Key, KeyRef, PhpArray};
pub use object::{Class, Obj, Object, ObjectStore};
pub use string::{InternedStrings, PhpStr};
pub use value::{PhpRef, Value};
