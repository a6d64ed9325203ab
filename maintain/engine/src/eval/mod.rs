//! The evaluation room: a checked program run over one state, from scratch. Plans per rule
//! (`plan`), binding-aware reads of stored trees and their indexes (`read`, `index`), the
//! join loop (`join`), in-memory relations and deltas (`memory`), semi-naive fixpoints
//! (`fixpoint`), expressions (`expr`), aggregate groups and their stored layout
//! (`aggregate`), window literals partitioned, ordered and computed (`window`), the engine that materializes views and judges denials (`engine`), and
//! ad-hoc queries (`query`).
//!
//! *Invariant: evaluation is a pure function of the program and the state's trees:
//! `eval(V, state)` reads, and writes only the new trees it returns. It imports from
//! `lang` only — never from `delta` or `db`.*

pub mod aggregate;
pub mod cast;
pub mod condition;
pub mod crossing;
pub mod engine;
pub mod exact_sum;
pub mod expr;
pub mod fixpoint;
pub mod index;
pub mod join;
pub mod limit;
pub mod memory;
pub mod plan;
pub mod planner;
pub mod plans;
pub mod query;
pub mod read;
pub mod window;

use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::KindCode;

// The language defines the kinds and their codes (`RelationKind::code`); a state stores the
// code, opaque to merkle. These are where the two meet (`rnt-lang` depends on nothing of
// ours): a state's entry is asked for its kind (`entry.kind.is(RelationKind::View)`) and
// built from one (`kind_code(kind)`). Reading a code back is `RelationKind::from_code`; a
// state whose code names no kind is rejected as corrupted when it is loaded.

/// The code a state records for `kind`.
pub fn kind_code(kind: RelationKind) -> KindCode {
    KindCode(kind.code())
}

/// Asks a state's kind code which kind it is.
pub trait IsKind {
    /// Whether this code is `kind`'s.
    fn is(&self, kind: RelationKind) -> bool;
}

impl IsKind for KindCode {
    fn is(&self, kind: RelationKind) -> bool {
        self.0 == kind.code()
    }
}
