//! The engine's data model: values, strings, arrays, number formatting,
//! bytecode and compiled scripts.

pub mod numfmt;
