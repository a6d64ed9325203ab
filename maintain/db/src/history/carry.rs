//! A merge across an `rnt alter` (docs/design.md, "Schema changes", Merge): when the side
//! whose program the merge keeps altered a base relation since the merge base, the base's
//! and the other side's tuples of that relation are first mapped into the new schema, so
//! the other side's tuple changes are carried over (an added column: the fill the alter
//! gave; a rename: by position; a dropped column: projected away; a widened type: read
//! exactly) and the alter's own rewrite of every tuple is no conflict.
//!
//! The alters are read back from history: the first-parent chain from the altering
//! side's tip to the base, each commit that changed the relation's declaration compared
//! with its parent. An alter changes one thing, so each step is unambiguous: one column
//! more (added last; its fill is what the alter's state holds in it), one fewer (the
//! columns kept, by name), the same number (by position: a rename, a type, a key), or the
//! relation gone with a new one holding its very tree (`rename-to`). A chain that does
//! not reach the base, or a relation dropped, carries nothing: the merge then refuses the
//! other side's changes rather than lose them.
//!
//! *Invariant: a carried change is exactly `map(t)` of the other side's tuple `t`, the
//! map every tuple of the relation went through on the altering side.*

use crate::alter::{map_tuple, Source};
use crate::history::schema::all_schema_changes;
use crate::snapshot::Snapshot;
use crate::{Database, DbError, DbResult};
use rnt_engine::eval::read::decode_stored;
use rnt_engine::eval::IsKind;
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::encode_tuple;
use rnt_lang::value::Value;
use rnt_merkle::{Commit, State, Tree};
use rnt_store::Address;
use std::collections::BTreeMap;

/// The most commits a merge walks back looking for alters (a longer first-parent chain to
/// the base carries nothing: the merge refuses what it would have carried).
pub const CARRY_CHAIN_COMMITS_MAX: usize = 100_000;

/// How the tuples of one base relation at the merge base map into the kept program.
#[derive(Clone, Debug)]
pub(crate) struct Carry {
    /// The relation's name at the base (and on the side that did not alter it).
    pub(crate) old_name: String,
    /// Its schema there.
    pub(crate) old_schema: RelationSchema,
    /// Its schema in the kept program.
    pub(crate) new_schema: RelationSchema,
    /// Where each new column comes from.
    sources: Vec<Source>,
}

impl Database {
    /// The carries of the relations `tip`'s side altered since `base` (by their name at
    /// `tip`); empty when nothing was altered or the chain cannot be read back.
    pub(crate) fn carries(
        &self,
        tip: Option<Address>,
        base: Option<Address>,
    ) -> DbResult<BTreeMap<String, Carry>> {
        let (Some(tip), Some(base)) = (tip, base) else {
            return Ok(BTreeMap::new());
        };
        let Some(chain) = self.first_parent_chain(tip, base)? else {
            return Ok(BTreeMap::new());
        };
        let base_snapshot = self.snapshot_of_commit(base)?;
        // By current name: the carry from the base so far.
        let mut carries: BTreeMap<String, Carry> = BTreeMap::new();
        for schema in base_snapshot.schemas() {
            let identity = (0..schema.arity()).map(Source::Old).collect();
            let carry = Carry {
                old_name: schema.name.clone(),
                old_schema: schema.clone(),
                new_schema: schema.clone(),
                sources: identity,
            };
            carries.insert(schema.name.clone(), carry);
        }
        for (before, after) in chain {
            self.step(&mut carries, &before, &after)?;
        }
        carries.retain(|_, c| c.old_schema != c.new_schema);
        Ok(carries)
    }

    /// The commits on the first-parent chain from `tip` back to `base` as (parent, child)
    /// snapshot pairs, oldest first, only those that changed a schema; `None` when the
    /// chain does not reach `base`.
    fn first_parent_chain(
        &self,
        tip: Address,
        base: Address,
    ) -> DbResult<Option<Vec<(Snapshot, Snapshot)>>> {
        let mut pairs = Vec::new();
        let mut at = tip;
        for _ in 0..CARRY_CHAIN_COMMITS_MAX {
            if at == base {
                pairs.reverse();
                return Ok(Some(pairs));
            }
            let commit = Commit::read(self.chunks.as_ref(), &at)?;
            let Some(parent) = commit.parent_addresses().first().copied() else {
                return Ok(None);
            };
            // Empty relations too: the other side may have given one tuples since.
            let chunks = self.chunks.as_ref();
            let before = State::read(chunks, &Commit::read(chunks, &parent)?.state_address())?;
            let after = State::read(chunks, &commit.state_address())?;
            if !all_schema_changes(&before, &after).is_empty() {
                pairs.push((
                    self.snapshot_of_commit(parent)?,
                    self.snapshot_of_commit(at)?,
                ));
            }
            at = parent;
        }
        Ok(None)
    }

    /// Moves every carry through one commit that changed schemas.
    fn step(
        &self,
        carries: &mut BTreeMap<String, Carry>,
        before: &Snapshot,
        after: &Snapshot,
    ) -> DbResult<()> {
        for change in all_schema_changes(&before.state, &after.state) {
            let Some(mut carry) = carries.remove(&change.relation) else {
                continue;
            };
            let Some((name, schema, step)) = self.step_of(before, after, &change.relation)? else {
                continue; // Dropped: nothing to carry into.
            };
            carry.sources = compose(&carry.sources, &step);
            carry.new_schema = schema;
            carries.insert(name, carry);
        }
        Ok(())
    }

    /// What one alter commit did to `relation`: its new name, schema, and where each new
    /// column comes from in the old tuple; `None` when the relation was dropped.
    fn step_of(
        &self,
        before: &Snapshot,
        after: &Snapshot,
        relation: &str,
    ) -> DbResult<Option<(String, RelationSchema, Vec<Source>)>> {
        let old = before.schema(relation).ok_or_else(|| {
            DbError::internal(format!("`{relation}` changed but is not declared"))
        })?;
        let Some(name) = new_name(before, after, relation) else {
            return Ok(None);
        };
        let Some(new) = after.schema(&name) else {
            return Ok(None);
        };
        let (n, m) = (old.arity(), new.arity());
        let sources: Vec<Source> = if m == n + 1 {
            let mut sources: Vec<Source> = (0..n).map(Source::Old).collect();
            sources.push(match self.fill_of(after, &new)? {
                Some(fill) => Source::Fill(fill),
                None => Source::Unknown, // A default given to no tuple is kept nowhere.
            });
            sources
        } else if m + 1 == n {
            let by_name = |a: &rnt_lang::schema::Attribute| {
                old.attributes.iter().position(|o| o.name == a.name)
            };
            match new
                .attributes
                .iter()
                .map(by_name)
                .collect::<Option<Vec<_>>>()
            {
                Some(positions) => positions.into_iter().map(Source::Old).collect(),
                None => return Ok(None),
            }
        } else if m == n {
            (0..n).map(Source::Old).collect()
        } else {
            return Ok(None);
        };
        Ok(Some((name, new, sources)))
    }

    /// The value an added last column holds right after the alter (its fill): read from
    /// a tuple, or null for a relation that held none then and a nullable column. `None`
    /// when it held none and the column takes no null: the `--default` filled nothing and
    /// is kept nowhere, so the fill cannot be known (a merge refuses to carry a tuple into
    /// it, naming the column).
    fn fill_of(&self, after: &Snapshot, schema: &RelationSchema) -> DbResult<Option<Value>> {
        let page = self.tuples_page(after, &schema.name, 0, Some(1))?;
        let nullable = schema
            .attributes
            .last()
            .is_some_and(|a| a.column_type().nullable);
        Ok(match page.first().and_then(|t| t.last().cloned()) {
            Some(value) => Some(value),
            None => nullable.then_some(Value::Null),
        })
    }

    /// `tree` (tuples of `carry.old_schema`) mapped into `carry.new_schema`: a set, so
    /// tuples a dropped column makes equal are one.
    pub(crate) fn carried_tree(&self, carry: &Carry, tree: &Tree) -> DbResult<Tree> {
        let old_types = carry.old_schema.types();
        let types = carry.new_schema.types();
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for item in tree.entries(&self.nodes) {
            let (key, _) = item?;
            let tuple = decode_stored(&key, &old_types, &carry.old_name)?;
            let mapped = map_tuple(&tuple, &carry.sources, &carry.new_schema)?;
            let encoded = encode_tuple(&mapped, &types)
                .map_err(|e| DbError::user(format!("`{}`: {e}", carry.new_schema.name)))?;
            keys.push(encoded);
        }
        keys.sort_unstable();
        keys.dedup();
        Ok(Tree::build(
            &self.nodes,
            keys.iter().map(|k| (k.as_slice(), &[][..])),
        )?)
    }
}

/// The name `relation` of `before` has in `after`: its own, or (`rename-to`) the base
/// relation new in `after` that holds its very tree.
fn new_name(before: &Snapshot, after: &Snapshot, relation: &str) -> Option<String> {
    if after.schema(relation).is_some() {
        return Some(relation.to_string());
    }
    let root = before.entry(relation)?.root;
    after
        .state
        .relations
        .iter()
        .find(|e| {
            e.kind.is(RelationKind::Relation) && e.root == root && before.entry(&e.name).is_none()
        })
        .map(|e| e.name.clone())
}

/// The sources of `second` read through `first`: where each column after both steps
/// comes from before the first.
fn compose(first: &[Source], second: &[Source]) -> Vec<Source> {
    second
        .iter()
        .map(|source| match source {
            Source::Old(i) => first[*i].clone(),
            Source::Fill(value) => Source::Fill(value.clone()),
            Source::Unknown => Source::Unknown,
        })
        .collect()
}
