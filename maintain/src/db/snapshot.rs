//! [`Snapshot`]: one state of the database, loaded and checked: its objects, its program,
//! and the schemas of its relations.

use crate::eval::stored_kind;
use crate::lang::check::{compile, Program};
use crate::lang::schema::RelationSchema;
use crate::{DbError, DbResult};
use rnt_merkle::{Commit, RelationEntry, State, Tree};
use rnt_store::{Address, ChunkStore};

/// A state of the database with everything needed to read it.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The commit that recorded this state, when it was reached through one.
    pub commit: Option<Address>,
    /// The state hash.
    pub state_address: Address,
    /// The state object.
    pub state: State,
    /// The state's program, checked.
    pub program: Program,
}

impl Snapshot {
    /// The state of a store with no commits: no program, no relations. Its address is
    /// computed, not stored.
    pub fn empty() -> DbResult<Snapshot> {
        let state = State {
            program: String::new(),
            relations: Vec::new(),
        };
        let program =
            compile("").map_err(|_| DbError::internal("the empty program does not compile"))?;
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

    /// Reads the state at `state_address` and checks its program.
    pub fn load(
        chunks: &dyn ChunkStore,
        commit: Option<Address>,
        state_address: Address,
    ) -> DbResult<Snapshot> {
        let state = State::read(chunks, &state_address)?;
        let program = compile(&state.program).map_err(|diagnostics| {
            DbError::corrupted(format!(
                "state {state_address} holds a program that does not compile ({} errors)",
                diagnostics.len()
            ))
        })?;
        for entry in &state.relations {
            let declared = program.relation(&entry.name).map(|r| stored_kind(r.kind()));
            if declared != Some(entry.kind) {
                return Err(DbError::corrupted(format!(
                    "state {state_address}: relation `{}` does not match the state's program",
                    entry.name
                )));
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

    /// The relation's entry, or a user error naming the unknown relation.
    pub fn require(&self, name: &str) -> DbResult<&RelationEntry> {
        self.entry(name).ok_or_else(|| unknown_relation(self, name))
    }
}

/// The error for a relation name the program does not declare, listing the known ones.
pub fn unknown_relation(snapshot: &Snapshot, name: &str) -> DbError {
    let known: Vec<&str> = snapshot
        .state
        .relations
        .iter()
        .map(|r| r.name.as_str())
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
