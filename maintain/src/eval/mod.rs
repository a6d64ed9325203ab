//! Evaluation: plans, binding-aware reads, the join loop, fixpoints, the engine and
//! ad-hoc queries.

pub mod aggregate;
pub mod engine;
pub mod expr;
pub mod join;
pub mod plan;
pub mod query;
pub mod read;
