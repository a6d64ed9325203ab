//! Evaluation: plans, binding-aware reads, the join loop, fixpoints, the engine and
//! ad-hoc queries.

pub mod aggregate;
pub mod engine;
pub mod expr;
pub mod index;
pub mod join;
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
