//! `define`: set or change the program. Base relations keep their tuples (a base relation
//! that holds tuples can be neither dropped nor given another schema); a view whose
//! definition is unchanged — its rules and everything they read, directly or not (the
//! relation's *signature*) — keeps its trees; every other view is computed from scratch.
//!
//! *Invariant: equal programs over equal base contents give equal states, whatever history
//! led there.*

use crate::commit::NewCommit;
use crate::snapshot::Snapshot;
use crate::{rebuild_views, update_base_indexes, CommitOutcome, CommitTimings, Database};
use crate::{DbError, DbResult};
use rnt_engine::eval::kind_code;
use rnt_engine::eval::plans::plan_program;
use rnt_engine::eval::IsKind;
use rnt_lang::check::{compile, Program};
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::syntax::ast::{Literal, RelationKind};
use rnt_merkle::{RelationEntry, State, Tree};
use std::collections::{BTreeMap, BTreeSet};

impl Database {
    /// Sets the program. Base relations keep their tuples; a base relation that holds
    /// tuples can be neither dropped nor given another schema. Every view is computed and
    /// every index built; a denial the data already violates refuses the program.
    pub fn define(&self, text: &str, source_name: &str, message: &str) -> DbResult<CommitOutcome> {
        self.define_with_progress(text, source_name, message, &mut |_| {})
    }

    /// [`Database::define`], calling `progress` with a line of text before each view it
    /// computes (for a progress display during long backfills).
    pub fn define_with_progress(
        &self,
        text: &str,
        source_name: &str,
        message: &str,
        progress: &mut dyn FnMut(&str),
    ) -> DbResult<CommitOutcome> {
        self.define_with_clock(text, source_name, message, None, progress)
    }

    /// [`Database::define_with_progress`] with the new state's clock set to `clock` when
    /// given (`rnt define --clock T`). Otherwise a program that mentions `now` keeps the
    /// head's clock (a define changes the program, not the time), or, when the head's
    /// program did not mention `now`, starts it at the commit time. The clock never goes
    /// back, and a program without `now` has none.
    pub fn define_with_clock(
        &self,
        text: &str,
        source_name: &str,
        message: &str,
        clock: Option<i64>,
        progress: &mut dyn FnMut(&str),
    ) -> DbResult<CommitOutcome> {
        let program = compile(text).map_err(|diagnostics| DbError::Program {
            rendered: render_all(&diagnostics, &Source::new(source_name, text)),
            errors: diagnostics.len(),
        })?;
        let head = self.head()?;
        let clock = define_clock(&head, &program, clock, self.commit_time())?;
        let state = self.state_for_program(&head, &program, clock, progress)?;
        if state == head.state && head.commit.is_some() {
            return Ok(CommitOutcome::NothingToCommit);
        }
        let new = NewCommit {
            merged: None,
            state,
            changes: Vec::new(),
            stats: Vec::new(),
            timings: CommitTimings::default(),
            message,
            action: None,
        };
        self.write_commit(&head, new)
    }

    /// The state of `program` over `head`'s base contents at `clock`: base relations keep
    /// their tuples (refused when one that holds tuples would be dropped or change schema),
    /// views whose definition is unchanged keep their trees (unless they depend on the
    /// clock and it moved), every other view is computed and every index built; a denial
    /// the data violates refuses the program. Writes no commit.
    pub(super) fn state_for_program(
        &self,
        head: &Snapshot,
        program: &Program,
        clock: Option<i64>,
        progress: &mut dyn FnMut(&str),
    ) -> DbResult<State> {
        self.state_for_program_with(head, program, clock, progress, &Replaced::default())
    }

    /// [`Database::state_for_program`] with the base relations of `replaced` given their
    /// new entries (an alter's): each may change schema or go although it holds tuples,
    /// and every view that reads one, directly or not, is computed from scratch.
    pub(crate) fn state_for_program_with(
        &self,
        head: &Snapshot,
        program: &Program,
        clock: Option<i64>,
        progress: &mut dyn FnMut(&str),
        replaced: &Replaced,
    ) -> DbResult<State> {
        let old_signatures = signatures(&head.program)?;
        let new_signatures = signatures(program)?;
        let mut changed: BTreeSet<String> = new_signatures
            .iter()
            .filter(|(name, signature)| old_signatures.get(*name) != Some(*signature))
            .map(|(name, _)| name.clone())
            .collect();
        if clock != head.state.clock {
            // What reads the clock, directly or not, is computed at the new one.
            changed.extend(program.clocked_relations());
        }
        if replaced.views_see_the_same {
            // An alter that changes no tuple any rule sees: every view keeps its trees,
            // unread (the rewritten rules match the same tuples, one for one).
            debug_assert!(clock == head.state.clock, "an alter keeps the clock");
            changed.clear();
        } else {
            changed.extend(readers_of(program, replaced.entries.keys()));
        }
        let relations = self.relations_for(head, program, &changed, replaced)?;
        let plans = plan_program(program);
        let mut by_name: BTreeMap<String, RelationEntry> =
            relations.into_iter().map(|r| (r.name.clone(), r)).collect();
        update_base_indexes(&self.nodes, program, &plans, &mut by_name, None)?;
        rebuild_views(
            &self.nodes,
            program,
            &plans,
            &mut by_name,
            &changed,
            Some(self.witnesses),
            clock,
            progress,
        )?;
        let state = State {
            program: program.canonical_text(),
            relations: by_name.into_values().collect(),
            clock,
        };
        Ok(state)
    }

    /// The relation entries of a new program over the head's data.
    /// Views whose definition is unchanged (`changed` lacks them) keep their trees.
    fn relations_for(
        &self,
        head: &Snapshot,
        program: &Program,
        changed: &BTreeSet<String>,
        replaced: &Replaced,
    ) -> DbResult<Vec<RelationEntry>> {
        for old in &head.state.relations {
            let count = old.count.unwrap_or(0);
            let released = replaced.released.contains(&old.name);
            if !old.kind.is(RelationKind::Relation) || count == 0 || released {
                continue;
            }
            let keeps = program.relation(&old.name).is_some_and(|r| {
                r.kind() == RelationKind::Relation
                    && Some(r.declaration.schema()) == head.schema(&old.name)
            });
            if !keeps {
                let new_schema = program.relation(&old.name).map(|r| r.declaration.schema());
                let old_schema = head.schema(&old.name);
                let only_the_key = match (&new_schema, &old_schema) {
                    (Some(new), Some(old)) => {
                        new.attributes == old.attributes && new.key_columns() != old.key_columns()
                    }
                    _ => false,
                };
                let name = &old.name;
                let (what, command) = if only_the_key {
                    (
                        "change the key of",
                        format!("rnt alter {name} key COLUMN… (or key --none)"),
                    )
                } else if new_schema.is_some() {
                    (
                        "change the schema of",
                        format!("rnt alter {name} add|drop|rename|type …"),
                    )
                } else {
                    ("drop", format!("rnt alter {name} drop-relation"))
                };
                return Err(DbError::user(format!(
                    "cannot {what} relation `{name}`: it holds {count} tuples; `define` keeps base tuples as they are, use `{command}`"
                )));
            }
        }
        let mut empty_tree: Option<Tree> = None;
        let mut relations = Vec::new();
        for (name, relation) in &program.relations {
            let kind = relation.kind();
            let kept = head.entry(name).filter(|old| {
                let same_base = kind == RelationKind::Relation
                    && head.schema(name) == Some(relation.declaration.schema());
                let same_view = kind == RelationKind::View && !changed.contains(name);
                old.kind.is(kind) && (same_base || same_view)
            });
            let entry = match replaced.entries.get(name).or(kept) {
                Some(old) => old.clone(),
                None if kind.is_stored() => {
                    let tree = match empty_tree {
                        Some(tree) => tree,
                        None => *empty_tree.insert(Tree::empty(&self.nodes)?),
                    };
                    RelationEntry {
                        name: name.clone(),
                        kind: kind_code(kind),
                        root: Some(*tree.root().as_bytes()),
                        count: Some(0),
                        aux: Vec::new(),
                    }
                }
                None => RelationEntry {
                    name: name.clone(),
                    kind: kind_code(kind),
                    root: None,
                    count: None,
                    aux: Vec::new(),
                },
            };
            relations.push(entry);
        }
        Ok(relations)
    }
}

/// The clock of the state a define makes (see [`Database::define_with_clock`]): the
/// head's, or `now` for a program that starts mentioning `now`.
fn define_clock(
    head: &Snapshot,
    program: &Program,
    explicit: Option<i64>,
    now: i64,
) -> DbResult<Option<i64>> {
    crate::commit::clock_of(head, program, explicit, |previous| previous.unwrap_or(now))
}

/// A signature per relation that changes exactly when the relation's contents could: its
/// declaration and rules, and those of every relation it reads, directly or not.
///
/// Computed stratum by stratum (readers after what they read) as a hash of the stratum's
/// own texts and the signatures of the relations it reads, so each text is read once: the
/// whole define stays linear in the program. (Joining the texts of every relation read,
/// as this once did, grew quadratically along a chain of views.) The members of a
/// recursive stratum read each other, so they share one signature.
fn signatures(program: &Program) -> DbResult<BTreeMap<String, String>> {
    let own: BTreeMap<&str, String> = program
        .relations
        .iter()
        .map(|(name, relation)| {
            let mut text = rnt_lang::canonical::declaration_text(&relation.declaration);
            let mut rules: Vec<String> = relation
                .rules
                .iter()
                .map(|r| {
                    let rule = &r.rule;
                    let mut literals: Vec<String> = rule
                        .body
                        .iter()
                        .map(|l| rnt_lang::canonical::literal_text(rule, l))
                        .collect();
                    literals.sort();
                    format!(
                        "{} :- {}",
                        rnt_lang::canonical::head_text(rule, &rule.head),
                        literals.join(", ")
                    )
                })
                .collect();
            rules.sort();
            for rule in rules {
                text.push('\n');
                text.push_str(&rule);
            }
            (name.as_str(), text)
        })
        .collect();
    let hash = |text: &str| rnt_store::Address::of(text.as_bytes()).to_hex();
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    // Relations in no stratum (base relations) read nothing.
    for (name, text) in &own {
        if program.strata.stratum_of(name).is_none() {
            out.insert((*name).to_string(), hash(text));
        }
    }
    for stratum in &program.strata.strata {
        let members: BTreeSet<&str> = stratum.relations.iter().map(String::as_str).collect();
        let mut text = String::new();
        let mut reads: BTreeSet<&str> = BTreeSet::new();
        for member in &members {
            text.push_str(own.get(member).map_or("", String::as_str));
            text.push('\n');
            for rule in program.rules_of(member) {
                for literal in &rule.rule.body {
                    if let Literal::Positive(atom)
                    | Literal::Negative { atom, .. }
                    | Literal::Optional { atom, .. } = literal
                    {
                        if !members.contains(atom.relation.name.as_str()) {
                            reads.insert(atom.relation.name.as_str());
                        }
                    }
                }
            }
        }
        for read in reads {
            let signature = out.get(read).ok_or_else(|| {
                DbError::internal(format!("`{read}` is read before its stratum is signed"))
            })?;
            text.push_str(&format!("reads {read} {signature}\n"));
        }
        let signature = hash(&text);
        for member in members {
            out.insert(member.to_string(), signature.clone());
        }
    }
    Ok(out)
}

/// Base relations an alter gives new entries (`entries`, by name), and the names of the
/// head's base relations whose tuples may leave or change schema (`released`: the altered
/// relation, under its old name).
#[derive(Debug, Default)]
pub(crate) struct Replaced {
    /// The new entries, by name in the new program.
    pub(crate) entries: BTreeMap<String, RelationEntry>,
    /// Names of the head whose tuples may change schema or go.
    pub(crate) released: BTreeSet<String>,
    /// Whether every rule matches exactly as it did (an added, renamed or dropped column
    /// that merges no tuples, a renamed relation, a key): then no view is recomputed.
    pub(crate) views_see_the_same: bool,
}

/// The derived relations of `program` that read one of `names`, directly or not
/// (positively, under `not`, or `optional`), in stratum order.
fn readers_of<'n>(program: &Program, names: impl Iterator<Item = &'n String>) -> BTreeSet<String> {
    let mut reached: BTreeSet<String> = names.cloned().collect();
    let mut readers = BTreeSet::new();
    for stratum in program.strata.iter() {
        let reads = stratum.relations.iter().any(|member| {
            program.rules_of(member).iter().any(|rule| {
                rule.rule.body.iter().any(|literal| match literal {
                    Literal::Positive(atom)
                    | Literal::Negative { atom, .. }
                    | Literal::Optional { atom, .. } => reached.contains(&atom.relation.name),
                    _ => false,
                })
            })
        });
        if reads {
            reached.extend(stratum.relations.iter().cloned());
            readers.extend(stratum.relations.iter().cloned());
        }
    }
    readers
}
