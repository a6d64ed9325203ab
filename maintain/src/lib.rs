//! rnt's relational layer: the data model, the rule language and its checks, evaluation,
//! and incremental maintenance.

pub mod literal;
pub mod value;

pub use value::{Type, Value};
