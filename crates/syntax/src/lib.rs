//! minizts's front end: PHP-subset source to an AST.
//!
//! Data flow: source bytes → [`lexer::Lexer`] (logos tokens, HTML/code
//! modes) → the lalrpop grammar ([`parser`]) → [`ast::Script`], allocated in
//! an arena the caller owns. This crate knows nothing of bytecode or of the
//! VM; the compiler crate consumes what it produces.

pub mod ast;
pub mod lexer;
pub mod names;
pub mod parser;

pub use lexer::LineIndex;
pub use parser::{parse, SyntaxError};
