//! The language room: what users write and what tuples are. Values and their
//! order-preserving tuple encoding, schemas, change files, CSV, and the rule language —
//! syntax (lexer, parser, tree), checks (types, safety, stratification, query head
//! inference), strata and the canonical program text.
//!
//! *Invariant: `lang` imports nothing from merkle or store, nor from the rooms above it
//! (`eval`, `delta`, `db`), and nothing here returns `DbError`: each part has its own error
//! type or returns diagnostics. It could be its own crate; parsing and checking a program
//! needs no store.*

pub mod canonical;
pub mod change;
pub mod check;
pub mod csv;
pub mod diagnostic;
pub mod literal;
pub mod schema;
pub mod strata;
pub mod syntax;
pub mod tuple;
pub mod value;
