//! The evaluation room: a checked program run over one state, from scratch. Plans per rule
//! (`plan`), binding-aware reads of stored trees and their indexes (`read`, `index`), the
//! join loop (`join`), in-memory relations and deltas (`memory`), semi-naive fixpoints
//! (`fixpoint`), expressions (`expr`), aggregate groups and their stored layout
//! (`aggregate`), the engine that materializes views and judges denials (`engine`), and
//! ad-hoc queries (`query`).
//!
//! *Invariant: evaluation is a pure function of the program and the state's trees:
//! `eval(V, state)` reads, and writes only the new trees it returns. It imports from
//! `lang` only — never from `delta` or `db`.*

pub mod aggregate;
pub mod engine;
pub mod expr;
pub mod fixpoint;
pub mod index;
pub mod join;
pub mod limit;
pub mod memory;
pub mod plan;
pub mod query;
pub mod read;

use crate::lang::syntax::ast;
use rnt_merkle::RelationKind;

/// The kind a state records for a relation of the given declared kind. The language keeps
/// its own enum (it imports nothing from merkle); this is the one place the two meet.
pub(crate) fn stored_kind(kind: ast::RelationKind) -> RelationKind {
    match kind {
        ast::RelationKind::Relation => RelationKind::Relation,
        ast::RelationKind::View => RelationKind::View,
        ast::RelationKind::Ephemeral => RelationKind::Ephemeral,
        ast::RelationKind::Denial => RelationKind::Denial,
    }
}
