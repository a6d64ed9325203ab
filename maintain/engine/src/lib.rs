//! rnt's engine: a checked program run over a state's trees. `eval` runs it from scratch
//! (plans per rule, binding-aware reads of trees and their indexes, the join loop,
//! fixpoints, aggregates, windows, ad-hoc queries); `delta` maintains it from tuple
//! deltas, one operator per file with its equation on top; `provenance` explains why a
//! tuple is there (`rnt why`).
//!
//! *Invariant: `maintain(V, state, Δ) == eval(V, state + Δ)` — a maintained relation
//! equals its from-scratch evaluation on the same state, tree for tree (`rnt verify`
//! compares their addresses).*
//!
//! *Invariant: `rnt-engine` depends on `rnt-lang` and `rnt-merkle` only; it never sees a
//! store backend, a ref or a commit (Cargo enforces it).*

pub mod beside;
pub mod budget;
pub mod delta;
mod error;
pub mod eval;
pub mod explain;
pub mod provenance;

pub use error::{violations_text, ArithmeticFault, EngineError, EngineResult, Violation};
