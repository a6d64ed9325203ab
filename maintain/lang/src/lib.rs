//! rnt's language: what users write and what tuples are. Values and their
//! order-preserving tuple encoding, schemas, change files, CSV, and the rule language —
//! syntax (lexer, parser, tree), checks (types, safety, stratification, query head
//! inference), strata and the canonical program text.
//!
//! *Invariant: `rnt-lang` depends on no crate of ours (Cargo enforces it): parsing and
//! checking a program needs no store. Each part has its own error type or returns
//! diagnostics.*

#![warn(missing_docs)]

pub mod alter;
pub mod canonical;
pub mod change;
pub mod check;
pub mod conform;
pub mod csv;
pub mod decimal;
pub mod diagnostic;
pub mod float;
pub mod literal;
pub mod schema;
pub mod strata;
pub mod syntax;
pub mod time;
pub mod tuple;
pub mod value;

pub use change::{Change, ChangeError, ChangeSet, Sign};
pub use csv::CsvError;
pub use decimal::Decimal;
pub use schema::{is_internal, Attribute, RelationSchema};
pub use syntax::ast::RelationKind;
pub use tuple::{Tuple, TupleError, TUPLE_BYTES_MAX};
pub use value::{compare, ColumnType, Type, Value};
