//! The rule language's front end: text → tokens ([`lexer`]) → syntax tree ([`ast`], built by
//! [`parser`]). Every node keeps its [`Span`] so later passes (`check`, the planner) can point
//! at the source. Checking the tree is `crate::check`; its canonical text is
//! `crate::canonical`.
//!
//! *Invariant: [`parse`] is total and bounded — it never panics, and the limits below cap
//! its work on any input; every syntax error becomes a diagnostic with a span, and an item
//! with an error is left out of the tree, never half built.*

pub mod ast;
mod expr;
pub mod lexer;
pub mod parser;
mod span;

pub use parser::{parse, Parse};
pub use span::Span;

/// The largest program text accepted, in bytes. A program is code, not data: 16 MiB is far
/// beyond any real program and keeps parsing time and memory bounded on hostile input.
pub const PROGRAM_BYTES_MAX: usize = 16 << 20;

/// The most literals a rule body may hold. Far beyond any real rule (a join of a thousand
/// relations); it bounds the checker's and planner's work per rule on hostile input.
pub const BODY_LITERALS_MAX: usize = 1024;

/// The most terms an atom or head, or attributes a declaration, may hold.
pub const TERMS_MAX: usize = 1024;

/// The deepest an arithmetic expression may nest (parentheses, unary minus, or a chain of
/// binary operators). Later passes walk expressions recursively; this bound keeps their stack
/// use small on any input.
pub const EXPR_DEPTH_MAX: usize = 128;
