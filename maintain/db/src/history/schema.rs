//! Schema changes between two states (docs/design.md, "Schema changes"): the base
//! relations that held tuples in the first state and have another declaration, or none,
//! in the second. Only `rnt alter` makes such a change (`define` refuses it), so `log`
//! marks the commits that make one and `diff` notes it.
//!
//! Read from the states' program texts alone (parsed, not checked), so marking a long
//! log costs a parse per commit, not a compile.

use crate::{Database, DbResult};
use rnt_engine::eval::IsKind;
use rnt_lang::canonical::declaration_text;
use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::{Commit, State};
use std::collections::BTreeMap;

/// A base relation whose schema changed between two states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaChange {
    /// The relation's name in the first state.
    pub relation: String,
    /// Its declaration there (canonical text).
    pub before: String,
    /// Its declaration in the second state, `None` when it has none there (dropped or
    /// renamed).
    pub after: Option<String>,
}

/// The base relations that hold tuples in `before` and are declared otherwise, or not at
/// all, in `after`, by name.
pub fn schema_changes(before: &State, after: &State) -> Vec<SchemaChange> {
    changes_among(before, after, true)
}

/// Every base relation of `before` declared otherwise, or not at all, in `after`, empty
/// ones too (which `define` may also change).
pub(crate) fn all_schema_changes(before: &State, after: &State) -> Vec<SchemaChange> {
    changes_among(before, after, false)
}

/// The schema changes of the base relations of `before`, only those holding tuples when
/// `holding_tuples_only`.
fn changes_among(before: &State, after: &State, holding_tuples_only: bool) -> Vec<SchemaChange> {
    if before.program == after.program {
        return Vec::new();
    }
    let old = base_declarations(&before.program);
    let new = base_declarations(&after.program);
    before
        .relations
        .iter()
        .filter(|e| e.kind.is(RelationKind::Relation))
        .filter(|e| !holding_tuples_only || e.count.unwrap_or(0) > 0)
        .filter_map(|entry| {
            let was = old.get(&entry.name)?;
            let now = new.get(&entry.name);
            (now != Some(was)).then(|| SchemaChange {
                relation: entry.name.clone(),
                before: was.clone(),
                after: now.cloned(),
            })
        })
        .collect()
}

/// Every base relation's canonical declaration in a program text, by name (empty for a
/// text that does not parse: a stored program always does).
fn base_declarations(program: &str) -> BTreeMap<String, String> {
    let parsed = rnt_lang::syntax::parse(program);
    parsed
        .program
        .declarations
        .iter()
        .filter(|d| d.kind == RelationKind::Relation)
        .map(|d| (d.name.name.clone(), declaration_text(d)))
        .collect()
}

impl Database {
    /// The schema changes `commit` made, from its first parent's state (none for a root
    /// commit): every base relation declared otherwise or dropped, empty ones too, so an
    /// alter of a relation that held no tuples is marked as well (a `define` may change an
    /// empty relation's declaration: that is marked too, as the schema change it is).
    pub fn schema_changes_of(&self, commit: &Commit) -> DbResult<Vec<SchemaChange>> {
        let Some(parent) = commit.parent_addresses().first().copied() else {
            return Ok(Vec::new());
        };
        let chunks = self.chunks.as_ref();
        let parent = Commit::read(chunks, &parent)?;
        let before = State::read(chunks, &parent.state_address())?;
        let after = State::read(chunks, &commit.state_address())?;
        Ok(all_schema_changes(&before, &after))
    }
}
