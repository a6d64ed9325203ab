//! `why`: how a tuple is derived at a state, down to base tuples, each with the commit
//! that last wrote it (docs/design.md, "Provenance"). The derivation is the engine's
//! (`rnt_engine::provenance`); the commits are blame's, one walk back per base tuple.

use crate::snapshot::Snapshot;
use crate::{Database, DbError, DbResult};
use rnt_engine::eval::engine::Engine;
use rnt_engine::eval::plans::shared_plans;
use rnt_engine::provenance::{Fact, Provenance, Why};
use rnt_lang::change::{check_changes, parse_change};
use rnt_lang::schema::RelationSchema;
use rnt_lang::tuple::Tuple;
use rnt_store::Address;
use std::collections::BTreeMap;

/// A derivation with the commit that last wrote each of its base tuples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    /// The derivation tree.
    pub why: Why,
    /// The commit that last wrote each base tuple of the tree, by (relation, tuple); empty
    /// for a state named by its hash (no history).
    pub writers: BTreeMap<(String, Tuple), Address>,
}

impl Database {
    /// Why the tuple `text` (as a change file writes it, without the sign: `r(1, "a")` or
    /// `r(id: 1, name: "a")`) is in its relation at `at`, listing up to `limit` rule
    /// instances for it.
    pub fn why(&self, at: &Snapshot, text: &str, limit: usize) -> DbResult<Explained> {
        let (relation, tuple) = parse_tuple(at, text)?;
        let plans = shared_plans(&at.program);
        let engine = Engine::new(&self.nodes, &at.program, &plans, &at.state.relations)
            .with_clock(at.state.clock);
        let why = Provenance::new(&engine, &at.program, &plans, limit).why(&relation, &tuple)?;
        let mut writers = BTreeMap::new();
        if at.commit.is_some() {
            let mut base = Vec::new();
            base_tuples(at, &why, &mut base);
            for (relation, tuple) in base {
                if writers.contains_key(&(relation.clone(), tuple.clone())) {
                    continue;
                }
                let writer = self.blame_tuple(at, &relation, &tuple)?;
                writers.insert((relation, tuple), writer);
            }
        }
        Ok(Explained { why, writers })
    }
}

/// Parses `text` as one tuple of a relation of `at`: the relation and its values, read
/// into its columns as a change is.
pub fn parse_tuple(at: &Snapshot, text: &str) -> DbResult<(String, Tuple)> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DbError::user(
            "name a tuple as a change file writes it, without the sign: `r(1, \"a\")`",
        ));
    }
    if text.starts_with(['+', '-', '~']) {
        return Err(DbError::user(format!(
            "write the tuple without a sign: `{}`",
            rnt_lang::diagnostic::clip(&text[1..])
        )));
    }
    // Read as an insert; a column an error names is the tuple's, without the sign.
    let change = parse_change(&format!("+{text}"), Some("the tuple")).map_err(|mut e| {
        e.column = e.column.map(|c| c.saturating_sub(1).max(1));
        if e.message.starts_with("`_` is allowed only") {
            e.message = "a tuple names every value (`_` stands for none here)".to_string();
        }
        DbError::user(e.to_string())
    })?;
    let relation = change.relation.clone();
    at.require(&relation)?;
    let schemas: BTreeMap<String, RelationSchema> = at
        .schemas()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let checked = check_changes(vec![change], |name| schemas.get(name))
        .map_err(|e| DbError::user(e.to_string()))?;
    let values = checked
        .into_changes()
        .pop()
        .map(|c| c.values)
        .ok_or_else(|| DbError::internal("a checked change vanished"))?;
    Ok((relation, values))
}

/// Every base tuple of `why` (its leaves, and the window rows of base relations), in
/// tree order.
fn base_tuples(at: &Snapshot, why: &Why, out: &mut Vec<(String, Tuple)>) {
    if !why.derived {
        out.push((why.relation.clone(), why.tuple.clone()));
    }
    for instance in &why.instances {
        for fact in &instance.body {
            if let Fact::Holds(child) = fact {
                base_tuples(at, child, out);
            }
        }
        if let Some(window) = &instance.window {
            let base = at
                .program
                .relation(&window.relation)
                .is_some_and(|r| r.kind() == rnt_lang::syntax::ast::RelationKind::Relation);
            if base {
                out.extend(
                    window
                        .rows
                        .iter()
                        .map(|t| (window.relation.clone(), t.clone())),
                );
            }
        }
    }
}
