//! The language: values, tuples and their encodings, schemas, change files, CSV, and the
//! rule language (syntax, checks, strata, canonical form).

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
