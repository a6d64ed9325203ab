//! What the compiler reads from a state, answered from the database: the rows a DML
//! statement's rules select and a table's tuples ([`StateReads`]), with the clock a query
//! of the state reads ([`readable`]).

use crate::error::Sql;
use rnt_db::{Database, Snapshot, Value};
use rnt_sql::dml::Reads;
use rnt_sql::SqlResult;
use std::borrow::Cow;

/// `snapshot` as a query reads it: a state whose program mentions `now` has a clock (its
/// last clock step, which its views were maintained at, so that a view equals its SELECT);
/// another is read at the time of the query, as a commit would take it.
pub fn readable<'s>(snapshot: &'s Snapshot, db: &Database) -> Cow<'s, Snapshot> {
    match snapshot.state.clock {
        Some(_) => Cow::Borrowed(snapshot),
        None => {
            let mut clocked = snapshot.clone();
            clocked.state.clock = Some(db.commit_time());
            Cow::Owned(clocked)
        }
    }
}

/// A state of a database, read for DML.
pub struct StateReads<'a> {
    /// The database.
    pub db: &'a Database,
    /// The state the statement reads (the head, or a transaction's working state).
    pub snapshot: &'a Snapshot,
}

impl Reads for StateReads<'_> {
    fn answer(&self, rules: &str) -> SqlResult<Vec<Vec<Value>>> {
        let snapshot = readable(self.snapshot, self.db);
        Ok(self.db.query(&snapshot, rules).sql()?.tuples)
    }

    fn tuples(&self, relation: &str) -> SqlResult<Vec<Vec<Value>>> {
        self.db.tuples(self.snapshot, relation).sql()
    }

    fn tuple_with_key(
        &self,
        relation: &str,
        key: &[Value],
    ) -> SqlResult<Option<Option<Vec<Value>>>> {
        let keyed = self
            .snapshot
            .schema(relation)
            .is_some_and(|schema| schema.key_columns().is_some());
        if !keyed {
            return Ok(None);
        }
        self.db
            .tuple_with_key(self.snapshot, relation, key)
            .map(Some)
            .sql()
    }
}
