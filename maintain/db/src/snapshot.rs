//! [`Snapshot`]: one state of the database, loaded and checked: its objects, its program,
//! and the schemas of its relations.

use crate::{DbError, DbResult};
use rnt_engine::eval::IsKind;
use rnt_lang::check::{compile, Program};
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::{Commit, RelationEntry, State, Tree};
use rnt_store::{Address, ChunkStore};
use std::sync::{Arc, Mutex};

/// A state of the database with everything needed to read it.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The commit that recorded this state, when it was reached through one.
    pub commit: Option<Address>,
    /// The state hash.
    pub state_address: Address,
    /// The state object.
    pub state: State,
    /// The state's program, checked (shared: states with one program text share it).
    pub program: Arc<Program>,
}

impl Snapshot {
    /// The state of a store with no commits: no program, no relations. Its address is
    /// computed, not stored.
    pub fn empty() -> DbResult<Snapshot> {
        let state = State {
            program: String::new(),
            relations: Vec::new(),
            clock: None,
        };
        let program =
            compiled("").map_err(|_| DbError::internal("the empty program does not compile"))?;
        Ok(Snapshot {
            commit: None,
            state_address: Address::of(&state.encode()),
            state,
            program,
        })
    }

    /// The same program over another state (its address computed, not stored): an
    /// intermediate state of a change made in steps.
    pub fn with_state(&self, state: State) -> Snapshot {
        Snapshot {
            commit: self.commit,
            state_address: Address::of(&state.encode()),
            state,
            program: self.program.clone(),
        }
    }

    /// The snapshot `commit` recorded.
    pub fn of_commit(chunks: &dyn ChunkStore, commit: Address) -> DbResult<Snapshot> {
        let record = Commit::read(chunks, &commit)?;
        Snapshot::load(chunks, Some(commit), record.state_address())
    }

    /// Reads the state at `state_address` and checks it: every relation's kind code names a
    /// kind, the relation has a tree exactly when its kind is stored, its program compiles
    /// and declares every relation of the state with the kind the state records.
    pub fn load(
        chunks: &dyn ChunkStore,
        commit: Option<Address>,
        state_address: Address,
    ) -> DbResult<Snapshot> {
        let state = State::read(chunks, &state_address)?;
        for entry in &state.relations {
            let kind = kind_of(&state_address, entry)?;
            if kind.is_stored() != entry.root.is_some() {
                return Err(corrupted_state(
                    &state_address,
                    format!(
                        "relation `{}` ({kind}) {}",
                        entry.name,
                        if entry.root.is_some() {
                            "has a tree, but its kind keeps none"
                        } else {
                            "has no tree, but its kind keeps one"
                        }
                    ),
                ));
            }
        }
        let program = compiled(&state.program).map_err(|diagnostics| {
            corrupted_state(
                &state_address,
                format!(
                    "its program does not compile ({} errors)",
                    diagnostics.len()
                ),
            )
        })?;
        if program.mentions_now() != state.clock.is_some() {
            return Err(corrupted_state(
                &state_address,
                if state.clock.is_some() {
                    "it has a clock, but its program does not mention `now`".to_string()
                } else {
                    "its program mentions `now`, but it has no clock".to_string()
                },
            ));
        }
        for entry in &state.relations {
            let declared = program.relation(&entry.name).map(|r| r.kind());
            if declared.is_none_or(|kind| !entry.kind.is(kind)) {
                return Err(corrupted_state(
                    &state_address,
                    format!(
                        "relation `{}` does not match the state's program",
                        entry.name
                    ),
                ));
            }
        }
        Ok(Snapshot {
            commit,
            state_address,
            state,
            program,
        })
    }

    /// The schema of relation `name`, if the program declares it.
    pub fn schema(&self, name: &str) -> Option<RelationSchema> {
        self.program
            .relation(name)
            .map(|relation| relation.declaration.schema())
    }

    /// Every relation's schema, in name order.
    pub fn schemas(&self) -> Vec<RelationSchema> {
        self.program
            .relations
            .values()
            .map(|r| r.declaration.schema())
            .collect()
    }

    /// The state's entry for relation `name`.
    pub fn entry(&self, name: &str) -> Option<&RelationEntry> {
        self.state.relation(name)
    }

    /// The tuple tree of stored relation `name`.
    pub fn tree(&self, name: &str) -> Option<Tree> {
        self.entry(name).and_then(RelationEntry::tree)
    }

    /// The kind of one of this state's relations, from the code its entry records (an
    /// unknown code is corruption, which [`Snapshot::load`] already rules out).
    pub fn kind_of(&self, entry: &RelationEntry) -> DbResult<RelationKind> {
        kind_of(&self.state_address, entry)
    }

    /// The relation's entry, or a user error naming the unknown relation.
    pub fn require(&self, name: &str) -> DbResult<&RelationEntry> {
        self.entry(name).ok_or_else(|| unknown_relation(self, name))
    }
}

/// The kind an entry of the state at `state_address` records; an unknown code is corruption.
fn kind_of(state_address: &Address, entry: &RelationEntry) -> DbResult<RelationKind> {
    RelationKind::from_code(entry.kind.0).ok_or_else(|| {
        corrupted_state(
            state_address,
            format!(
                "relation `{}` has kind code {}, which names no kind",
                entry.name, entry.kind.0
            ),
        )
    })
}

/// Damage found in the state at `state_address`.
fn corrupted_state(state_address: &Address, detail: String) -> DbError {
    DbError::Corrupted {
        address: Some(*state_address),
        detail: format!("state {state_address}: {detail}"),
    }
}

/// The error for a relation name the program does not declare, listing the known ones:
/// the SQL compiler's helpers ([`rnt_lang::is_internal`]) only when `name` is internal too.
pub fn unknown_relation(snapshot: &Snapshot, name: &str) -> DbError {
    let internal = rnt_lang::is_internal(name);
    let known: Vec<&str> = snapshot
        .state
        .relations
        .iter()
        .map(|r| r.name.as_str())
        .filter(|known| internal || !rnt_lang::is_internal(known))
        .collect();
    if known.is_empty() {
        DbError::user(format!(
            "unknown relation `{name}`: no relations are defined (use `rnt define`)"
        ))
    } else {
        DbError::user(format!(
            "unknown relation `{name}` (relations: {})",
            known.join(", ")
        ))
    }
}

/// `compile(text)`, shared: the last program compiled is kept (states of one branch mostly
/// share their program), so loading a state does not compile the same text again.
pub(crate) fn compiled(text: &str) -> Result<Arc<Program>, Vec<rnt_lang::diagnostic::Diagnostic>> {
    static LAST: Mutex<Option<(String, Arc<Program>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((kept, program)) = last.as_ref() {
        if kept == text {
            return Ok(Arc::clone(program));
        }
    }
    let program = Arc::new(compile(text)?);
    *last = Some((text.to_string(), Arc::clone(&program)));
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnt_engine::eval::kind_code;
    use rnt_merkle::KindCode;
    use rnt_store::MemoryStore;

    /// A state of `relation r(x: int). ephemeral e(x: int).` whose entries are `r` and `e`
    /// as given.
    fn write_state(chunks: &MemoryStore, r: RelationEntry, e: RelationEntry) -> Address {
        let program = compile("relation r(x: int).\nephemeral e(x: int).\ne(x) :- r(x).\n")
            .expect("the program compiles");
        let state = State {
            program: program.canonical_text(),
            relations: vec![e, r],
            clock: None,
        };
        state.write(chunks).expect("the state is written")
    }

    fn entry(name: &str, kind: KindCode, root: Option<[u8; 32]>) -> RelationEntry {
        RelationEntry {
            name: name.into(),
            kind,
            root,
            count: root.map(|_| 0),
            aux: Vec::new(),
        }
    }

    fn corruption(result: DbResult<Snapshot>, state: Address) -> String {
        match result {
            Err(DbError::Corrupted {
                address: Some(address),
                detail,
            }) => {
                assert_eq!(address, state);
                assert!(detail.contains(&state.to_string()), "{detail}");
                detail
            }
            other => panic!("expected corruption of state {state}, got {other:?}"),
        }
    }

    #[test]
    fn a_state_with_matching_kinds_and_trees_loads() {
        let chunks = MemoryStore::new();
        let state = write_state(
            &chunks,
            entry("r", kind_code(RelationKind::Relation), Some([1; 32])),
            entry("e", kind_code(RelationKind::Ephemeral), None),
        );
        let snapshot = Snapshot::load(&chunks, None, state).expect("a sound state loads");
        let r = snapshot.entry("r").expect("r is in the state");
        assert_eq!(snapshot.kind_of(r).ok(), Some(RelationKind::Relation));
    }

    #[test]
    fn an_unknown_kind_code_is_corruption_naming_the_state() {
        let chunks = MemoryStore::new();
        let state = write_state(
            &chunks,
            entry("r", KindCode(7), Some([1; 32])),
            entry("e", kind_code(RelationKind::Ephemeral), None),
        );
        let detail = corruption(Snapshot::load(&chunks, None, state), state);
        assert!(detail.contains("kind code 7"), "{detail}");
    }

    #[test]
    fn a_tree_that_does_not_match_the_kind_is_corruption_naming_the_state() {
        let chunks = MemoryStore::new();
        let ephemeral_with_tree = write_state(
            &chunks,
            entry("r", kind_code(RelationKind::Relation), Some([1; 32])),
            entry("e", kind_code(RelationKind::Ephemeral), Some([2; 32])),
        );
        let detail = corruption(
            Snapshot::load(&chunks, None, ephemeral_with_tree),
            ephemeral_with_tree,
        );
        assert!(
            detail.contains("`e` (ephemeral) has a tree, but its kind keeps none"),
            "{detail}"
        );
        let base_without_tree = write_state(
            &chunks,
            entry("r", kind_code(RelationKind::Relation), None),
            entry("e", kind_code(RelationKind::Ephemeral), None),
        );
        let detail = corruption(
            Snapshot::load(&chunks, None, base_without_tree),
            base_without_tree,
        );
        assert!(
            detail.contains("`r` (relation) has no tree, but its kind keeps one"),
            "{detail}"
        );
    }
}
