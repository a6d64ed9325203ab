//! `alter`: a base relation's schema changed in place, in one commit (docs/design.md,
//! "Schema changes"). The program is rewritten with the relation (`rnt_lang::alter`), the
//! relation's tuples are carried into the new schema, and the state is built as `define`
//! builds one: relations and views that do not read the altered relation keep their
//! trees (same addresses). When every rule over the relation matches the same tuples one
//! for one (an added or renamed column, a renamed relation, a key, a dropped column that
//! merges no tuples), every view keeps its trees too, unread: the rewritten rules derive
//! exactly what the old ones did. A dropped column that merges tuples is first made a
//! delta (the merged-away tuples deleted, the views maintained from it), then merges
//! nothing. Otherwise (a type, a drop under a window) the views that read the relation
//! are computed from scratch and the denials that read it judged.
//!
//! Each tuple `t` of the old schema becomes `map(t)`: for every column of the new schema,
//! the old column it came from (by position across a rename) read into its new type
//! (`conform`, exact or refused), or the added column's fill (its default, or null). A
//! keyless relation is a set, so tuples that become equal merge (a dropped column); their
//! number is reported.
//!
//! *Invariant: an alter that fails or is refused writes no ref; a keyed relation holds at
//! most one tuple per key after it.*

use crate::commit::NewCommit;
use crate::define::Replaced;
use crate::snapshot::Snapshot;
use crate::{CommitOutcome, CommitTimings, Database, DbError, DbResult};
use rnt_engine::delta::base::BaseEdit;
use rnt_engine::eval::read::decode_stored;
use rnt_lang::alter::{is_widening, rewrite, Alteration};
use rnt_lang::canonical::canonical_text;
use rnt_lang::change::{key_text, parse_change};
use rnt_lang::check::{compile, Program};
use rnt_lang::conform::conform;
use rnt_lang::diagnostic::{render_all, Source as Text};
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::Literal;
use rnt_lang::tuple::{encode_tuple, Tuple};
use rnt_lang::value::{ColumnType, Value};
use rnt_merkle::{Edit, RelationEntry, Tree};
use rnt_store::Address;
use std::collections::BTreeMap;

/// The most duplicate keys a refused key change lists.
pub const KEY_DUPLICATES_LISTED_MAX: usize = 10;

/// What an alter did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Altered {
    /// The commit made (or "nothing to commit" when the schema already was the new one).
    pub outcome: CommitOutcome,
    /// Tuples of a keyless relation that became equal and merged (a dropped column).
    pub merged: u64,
}

/// One alter of one relation: its schema before and after, the change, and an added
/// column's default.
#[derive(Clone, Copy)]
struct Altering<'a> {
    old: &'a RelationSchema,
    new: &'a RelationSchema,
    alteration: &'a Alteration,
    default: Option<&'a str>,
}

/// What [`Database::merge_away_first`] did before a drop.
struct MergedAway {
    /// The state to alter (not committed): the head, less the merged-away tuples.
    start: Snapshot,
    /// How many tuples were deleted.
    deleted: u64,
    /// The relation's tuples in the new schema (encoded, sorted), when they were read (a
    /// keyless relation).
    mapped: Option<Vec<Vec<u8>>>,
}

impl MergedAway {
    /// Nothing done: alter `head` as it is.
    fn nothing(head: &Snapshot) -> MergedAway {
        MergedAway {
            start: head.clone(),
            deleted: 0,
            mapped: None,
        }
    }
}

/// Where each column of the new schema comes from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// The old tuple's column at this position.
    Old(usize),
    /// A new column's fill.
    Fill(Value),
    /// A new column whose fill is known nowhere: added with `--default` to a relation
    /// that held no tuples (a merge cannot carry a tuple into it; the alter never makes
    /// one).
    Unknown,
}

impl Database {
    /// Alters base relation `relation` as `alteration` says, in one commit with `message`.
    /// `default` is an added column's fill, as a change file writes a value (`7`,
    /// `"none"`, `12.50`, `null`); a nullable column without one fills with null.
    /// Refused (exit 1, nothing written): an unknown relation or column, a name in use, a
    /// rule that reads a dropped column or relation, a narrowing type, a key the data
    /// violates; a denial the new state violates refuses it (exit 2).
    pub fn alter(
        &self,
        relation: &str,
        alteration: &Alteration,
        default: Option<&str>,
        message: &str,
    ) -> DbResult<Altered> {
        let head = self.head()?;
        head.require(relation)?;
        let old_schema = head
            .schema(relation)
            .ok_or_else(|| DbError::internal(format!("`{relation}` has an entry but no schema")))?;
        if let Alteration::Type {
            column,
            column_type,
        } = alteration
        {
            refuse_narrowing(&old_schema, column, *column_type)?;
        }
        let program = altered_program(&head, relation, alteration)?;
        let new_name = match alteration {
            Alteration::RenameTo { new } => new.as_str(),
            _ => relation,
        };
        let new_schema = program.relation(new_name).map(|r| r.declaration.schema());
        let mut replaced = Replaced::default();
        replaced.released.insert(relation.to_string());
        let windowed = window_reads(&program, new_name);
        let MergedAway {
            start,
            deleted: mut merged,
            mapped,
        } = match (&new_schema, alteration) {
            (Some(new), Alteration::Drop { .. }) if !windowed => {
                self.merge_away_first(&head, &old_schema, new, alteration)?
            }
            _ => MergedAway::nothing(&head),
        };
        let mut merged_by_the_drop = 0;
        if let Some(new_schema) = &new_schema {
            let relation = Altering {
                old: &old_schema,
                new: new_schema,
                alteration,
                default,
            };
            let (entry, gone) = self.altered_entry(&start, &relation, mapped)?;
            merged_by_the_drop = gone;
            replaced.entries.insert(new_name.to_string(), entry);
        }
        debug_assert!(
            windowed || merged_by_the_drop == 0,
            "the tuples a drop merges were deleted first"
        );
        merged += merged_by_the_drop;
        // Every rule over the relation matches the same tuples, one for one, unless a
        // type changed the values (then its readers are computed anew): its readers keep
        // their trees, unread. A drop merges nothing by now. A dropped column also changes
        // the order of a window's ties (by the remaining columns), so a window over the
        // relation is computed anew.
        replaced.views_see_the_same = match alteration {
            Alteration::Type { .. } | Alteration::DropRelation => false,
            Alteration::Drop { .. } => merged_by_the_drop == 0 && !windowed,
            _ => true,
        };
        let clock = head.state.clock;
        let state = self.state_for_program_with(&start, &program, clock, &mut |_| {}, &replaced)?;
        if state == head.state {
            return Ok(Altered {
                outcome: CommitOutcome::NothingToCommit,
                merged: 0,
            });
        }
        let new = NewCommit {
            merged: None,
            state,
            changes: Vec::new(),
            stats: Vec::new(),
            timings: CommitTimings::default(),
            message,
            action: Some(format!("alter: {message}")),
        };
        let outcome = self.write_commit(&head, new)?;
        Ok(Altered { outcome, merged })
    }

    /// A drop that merges tuples made a delta first, so that the views over the relation
    /// are maintained from it (docs/design.md, "Schema changes"): of each group of tuples
    /// the drop makes equal, all but the first (in key order) are deleted from `head` as a
    /// commit deletes them, and the relation's readers maintained from that delta (denials
    /// judged). The drop then merges nothing and every view keeps its trees.
    ///
    /// *Invariant: no rule reads the dropped column (the rewrite refused it), so each rule
    /// matches the group's kept tuple exactly as it matches their merged tuple after it.*
    fn merge_away_first(
        &self,
        head: &Snapshot,
        old: &RelationSchema,
        new: &RelationSchema,
        alteration: &Alteration,
    ) -> DbResult<MergedAway> {
        let entry = head.require(&old.name)?;
        let tree = match entry.tree() {
            Some(tree) if old.key_columns().is_none() => tree,
            // A keyed relation keeps its key columns: its tuples stay distinct.
            _ => return Ok(MergedAway::nothing(head)),
        };
        let sources = sources(old, new, alteration, None, true)?;
        let (old_types, types) = (old.types(), new.types());
        // (new key, old key), sorted: each group's first is its least old key.
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for item in tree.entries(&self.nodes) {
            let (key, _) = item?;
            let tuple = decode_stored(&key, &old_types, &old.name)?;
            let mapped = map_tuple(&tuple, &sources, new)?;
            let encoded = encode_tuple(&mapped, &types)
                .map_err(|e| DbError::user(format!("`{}`: {e}", new.name)))?;
            pairs.push((encoded, key));
        }
        pairs.sort_unstable();
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(pairs.len());
        let mut deletes: Vec<Edit> = Vec::new();
        for (encoded, key) in pairs {
            if kept.last() == Some(&encoded) {
                deletes.push((key, None));
            } else {
                kept.push(encoded);
            }
        }
        deletes.sort_unstable();
        let mapped = Some(kept);
        if deletes.is_empty() {
            return Ok(MergedAway {
                mapped,
                ..MergedAway::nothing(head)
            });
        }
        let gone = deletes.len() as u64;
        let edits = vec![(old.name.clone(), BaseEdit::Edits(deletes))];
        let step = self
            .maintain(head, edits, head.state.clock, self.nodes.counters())?
            .ok_or_else(|| DbError::internal("deleting stored tuples changed nothing"))?;
        let state = step.state;
        let snapshot = Snapshot {
            commit: head.commit,
            state_address: Address::of(&state.encode()),
            state,
            program: head.program.clone(),
        };
        Ok(MergedAway {
            start: snapshot,
            deleted: gone,
            mapped,
        })
    }

    /// The entry of the altered relation under its new schema, and how many tuples merged.
    /// `mapped`: its tuples in the new schema, when they were read already.
    fn altered_entry(
        &self,
        head: &Snapshot,
        relation: &Altering<'_>,
        mapped: Option<Vec<Vec<u8>>>,
    ) -> DbResult<(RelationEntry, u64)> {
        let Altering {
            old,
            new,
            alteration,
            default,
        } = *relation;
        let entry = head.require(&old.name)?;
        let mut entry = RelationEntry {
            name: new.name.clone(),
            ..entry.clone()
        };
        if let Alteration::Key { .. } = alteration {
            self.refuse_duplicate_keys(head, new)?;
        }
        let rewrites = matches!(
            alteration,
            Alteration::Add { .. } | Alteration::Drop { .. } | Alteration::Type { .. }
        );
        if !rewrites {
            // The tuples keep their bytes: same tree, same indexes.
            return Ok((entry, 0));
        }
        let mut keys = match mapped {
            Some(keys) => keys,
            None => self.mapped_keys(&entry, old, new, alteration, default)?,
        };
        let before = keys.len() as u64;
        keys.sort_unstable();
        keys.dedup();
        let merged = before - keys.len() as u64;
        debug_assert!(
            merged == 0 || new.key_columns().is_none(),
            "a keyed relation's tuples stay distinct: its key columns are kept"
        );
        let tree = Tree::build(&self.nodes, keys.iter().map(|k| (k.as_slice(), &[][..])))?;
        entry.root = Some(*tree.root().as_bytes());
        entry.count = Some(keys.len() as u64);
        // Its indexes are built anew for the new tuples.
        entry.aux = Vec::new();
        Ok((entry, merged))
    }

    /// The tuples of `entry` (of schema `old`) mapped into `new`, encoded, in its order.
    fn mapped_keys(
        &self,
        entry: &RelationEntry,
        old: &RelationSchema,
        new: &RelationSchema,
        alteration: &Alteration,
        default: Option<&str>,
    ) -> DbResult<Vec<Vec<u8>>> {
        let holds_tuples = entry.count != Some(0);
        let sources = sources(old, new, alteration, default, holds_tuples)?;
        let tree = entry.tree().ok_or_else(|| {
            DbError::internal(format!("base relation `{}` has no tree", old.name))
        })?;
        let (old_types, types) = (old.types(), new.types());
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for item in tree.entries(&self.nodes) {
            let (key, _) = item?;
            let tuple = decode_stored(&key, &old_types, &old.name)?;
            let mapped = map_tuple(&tuple, &sources, new)?;
            let encoded = encode_tuple(&mapped, &types)
                .map_err(|e| DbError::user(format!("`{}`: {e}", new.name)))?;
            keys.push(encoded);
        }
        Ok(keys)
    }

    /// Refuses a key that some key values of the relation's tuples (under `new`, whose key
    /// it is) hold more than once, listing up to [`KEY_DUPLICATES_LISTED_MAX`] of them.
    fn refuse_duplicate_keys(&self, head: &Snapshot, new: &RelationSchema) -> DbResult<()> {
        let Some(columns) = new.key_columns() else {
            return Ok(());
        };
        let tuples = self.tuples(head, &new.name)?;
        let mut held: BTreeMap<Vec<&Value>, u64> = BTreeMap::new();
        for tuple in &tuples {
            let key: Vec<&Value> = columns.iter().map(|&c| &tuple[c]).collect();
            *held.entry(key).or_default() += 1;
        }
        let duplicates: Vec<String> = held
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(key, n)| format!("{} ({n} tuples)", key_text(new, key)))
            .collect();
        if duplicates.is_empty() {
            return Ok(());
        }
        let listed = duplicates.len().min(KEY_DUPLICATES_LISTED_MAX);
        let more = match duplicates.len() - listed {
            0 => String::new(),
            n => format!(", and {n} more"),
        };
        Err(DbError::user(format!(
            "cannot set key({}) on `{}`: {} key{} held by more than one tuple: {}{more}",
            new.key_names().join(", "),
            new.name,
            duplicates.len(),
            if duplicates.len() == 1 {
                " is"
            } else {
                "s are"
            },
            duplicates[..listed].join("; ")
        )))
    }
}

/// Whether a rule with a window literal reads `relation` (its one positive atom).
fn window_reads(program: &Program, relation: &str) -> bool {
    program.relations.values().any(|r| {
        r.is_windowed()
            && r.rules.iter().any(|c| {
                c.rule.body.iter().any(|literal| {
                    matches!(literal, Literal::Positive(atom) if atom.relation.name == relation)
                })
            })
    })
}

/// The head's program with `relation` altered, checked; a program the rewrite breaks
/// (a view's declared column no longer fits) is refused with its diagnostics.
fn altered_program(head: &Snapshot, relation: &str, alteration: &Alteration) -> DbResult<Program> {
    let parsed = rnt_lang::syntax::parse(&head.state.program);
    if !parsed.diagnostics.is_empty() {
        return Err(DbError::corrupted(format!(
            "state {}: its program does not parse",
            head.state_address
        )));
    }
    let rewritten =
        rewrite(&parsed.program, relation, alteration).map_err(|e| DbError::user(e.0))?;
    let text = canonical_text(&rewritten);
    compile(&text).map_err(|diagnostics| DbError::Program {
        rendered: format!(
            "cannot alter `{relation}` ({alteration}): the program no longer checks (change it with `rnt define` first)\n{}",
            render_all(&diagnostics, &Text::new("the altered program", &text))
        ),
        errors: diagnostics.len(),
    })
}

/// Refuses a type change of `column` to `after` that is not a widening (an unknown column
/// is left to the rewrite, which names the columns).
fn refuse_narrowing(old: &RelationSchema, column: &str, after: ColumnType) -> DbResult<()> {
    let Some(before) = old.attributes.iter().find(|a| a.name == column) else {
        return Ok(());
    };
    let before = before.column_type();
    if is_widening(before, after) {
        return Ok(());
    }
    Err(DbError::user(format!(
        "cannot change `{}.{column}` from {before} to {after}: not a widening (allowed: T → T?, int → decimal(p, s), a decimal to one with at least its scale and integer digits)",
        old.name
    )))
}

/// Where each column of `new` comes from in a tuple of `old`.
fn sources(
    old: &RelationSchema,
    new: &RelationSchema,
    alteration: &Alteration,
    default: Option<&str>,
    holds_tuples: bool,
) -> DbResult<Vec<Source>> {
    let mut out = Vec::with_capacity(new.arity());
    for attribute in &new.attributes {
        let source = match old.attributes.iter().position(|a| a.name == attribute.name) {
            Some(position) => Source::Old(position),
            None => Source::Fill(fill(
                new,
                attribute.column_type(),
                &attribute.name,
                default,
                holds_tuples,
            )?),
        };
        out.push(source);
    }
    debug_assert!(
        !matches!(
            alteration,
            Alteration::Drop { .. } | Alteration::Type { .. }
        ) || out.iter().all(|s| matches!(s, Source::Old(_))),
        "only an added column is filled"
    );
    Ok(out)
}

/// An added column's fill: `default` read into its type, else null (refused for a column
/// that is not nullable, when the relation holds tuples).
fn fill(
    schema: &RelationSchema,
    column_type: ColumnType,
    column: &str,
    default: Option<&str>,
    holds_tuples: bool,
) -> DbResult<Value> {
    let Some(text) = default else {
        return match column_type.nullable || !holds_tuples {
            true => Ok(Value::Null),
            false => Err(DbError::user(format!(
                "cannot add `{column}: {column_type}` to `{}` without `--default VALUE`: the column is not nullable (or declare it `{column_type}?`)",
                schema.name
            ))),
        };
    };
    let bad = |detail: String| {
        DbError::user(format!(
            "--default {}: {detail}",
            rnt_lang::diagnostic::clip(text)
        ))
    };
    let change = parse_change(&format!("+default({text})"), None).map_err(|_| {
        bad("not a value as a change file writes one (7, \"none\", 12.50, null)".into())
    })?;
    let [value] = &change.values[..] else {
        return Err(bad("give one value".to_string()));
    };
    conform(value.clone(), column_type).map_err(|e| bad(format!("{e} (column `{column}`)")))
}

/// `tuple` of the old schema mapped into `new` by `sources`, each value read into its new
/// column's type exactly (an int that does not fit a decimal column is refused).
pub(crate) fn map_tuple(
    tuple: &Tuple,
    sources: &[Source],
    new: &RelationSchema,
) -> DbResult<Tuple> {
    let mut out = Vec::with_capacity(sources.len());
    for (source, attribute) in sources.iter().zip(&new.attributes) {
        let value = match source {
            Source::Old(position) => tuple[*position].clone(),
            Source::Fill(value) => value.clone(),
            Source::Unknown => {
                return Err(DbError::user(format!(
                    "cannot merge: tuples cannot be carried into `{0}.{1}`, added with --default while `{0}` held no tuples (a default is kept nowhere); add `{1}` on the other branch too, then merge",
                    new.name, attribute.name
                )))
            }
        };
        let value = conform(value, attribute.column_type()).map_err(|e| {
            DbError::user(format!(
                "cannot change `{}.{}` to {}: a stored value {e}",
                new.name,
                attribute.name,
                attribute.column_type()
            ))
        })?;
        out.push(value);
    }
    Ok(out)
}
