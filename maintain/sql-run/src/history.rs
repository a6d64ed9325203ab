//! History as tables, read from a database for the compiler: `t AS OF 'REF'` (t's tree at
//! another state, read in place: no copy), `rnt_log`, `rnt_branches` and
//! `rnt_diff('FROM', 'TO', 'rel')` (rows made from the history and from a diff of two states'
//! trees, at the cost of the change).
//!
//! [`Reader`] answers the compiler's [`History`] questions, collecting what the query must
//! evaluate beside the state: relations read from other states (declared in the query's
//! text, their entries passed to `Database::query_with`) and the rows of the system tables
//! (as fact rules of ephemeral relations).

use crate::error::Sql;
use rnt_db::{Database, DiffScope, RelationEntry, Snapshot, Value};
use rnt_lang::change::Sign;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::{ColumnType, Type};
use rnt_sql::catalog::{Catalog, Column, Table};
use rnt_sql::history::fact_rule;
use rnt_sql::history::History;
use rnt_sql::pg_catalog::PgCatalog;
use rnt_sql::{SqlError, SqlResult};
use rnt_store::Address;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// What a query evaluates beside its state: declarations and rules, and stored relations
/// of other states under the names the declarations give them.
#[derive(Default)]
pub struct Extra {
    /// Declarations and fact rules, in the rule language.
    pub text: String,
    /// Relations of other states: (the name the query reads it by, its entry there).
    pub entries: Vec<(String, RelationEntry)>,
    made: usize,
}

/// A [`History`] over a database, reading from the state `snapshot` (rnt_log is its
/// history).
pub struct Reader<'d> {
    db: &'d Database,
    snapshot: &'d Snapshot,
    extra: RefCell<Extra>,
}

impl<'d> Reader<'d> {
    /// A reader for a query of `snapshot`.
    pub fn new(db: &'d Database, snapshot: &'d Snapshot) -> Reader<'d> {
        Reader {
            db,
            snapshot,
            extra: RefCell::default(),
        }
    }

    /// What the lowered query needs beside its state.
    pub fn into_extra(self) -> Extra {
        self.extra.into_inner()
    }

    fn fresh_name(&self, what: &str) -> String {
        let mut extra = self.extra.borrow_mut();
        extra.made += 1;
        format!("_{what}{}", extra.made)
    }

    /// An ephemeral relation `name` holding `rows` (a bag: each row's count last when
    /// `bag`), declared with `columns`.
    fn facts(&self, name: &str, columns: &[(String, ColumnType)], rows: &[Vec<Value>], bag: bool) {
        let mut declared: Vec<String> = columns.iter().map(|(c, t)| format!("{c}: {t}")).collect();
        if bag {
            declared.push("_count: int".into());
        }
        let mut text = format!("ephemeral {name}({}).\n", declared.join(", "));
        for row in rows {
            let values: Vec<String> = row.iter().map(Value::to_string).collect();
            text.push_str(&fact_rule(name, &values));
            text.push('\n');
        }
        self.extra.borrow_mut().text.push_str(&text);
    }

    fn log(&self) -> SqlResult<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        for (id, commit) in self.db.reachable_commits(self.snapshot.commit).sql()? {
            let parents: Vec<String> = commit
                .parent_addresses()
                .iter()
                .map(Address::to_hex)
                .collect();
            rows.push(vec![
                Value::Str(id.to_hex()),
                Value::Str(commit.state_address().to_hex()),
                Value::Str(parents.join(" ")),
                Value::Timestamp(commit.time.saturating_mul(1_000_000)),
                Value::Str(commit.message.clone()),
            ]);
        }
        Ok(rows)
    }

    fn branches(&self) -> SqlResult<Vec<Vec<Value>>> {
        let current = self.db.current_branch().sql()?;
        let mut rows = Vec::new();
        for (name, commit) in self.db.branches().sql()? {
            let state = self.db.snapshot_of_commit(commit).sql()?.state_address;
            rows.push(vec![
                Value::Bool(name == current),
                Value::Str(name),
                Value::Str(commit.to_hex()),
                Value::Str(state.to_hex()),
            ]);
        }
        // In the declared column order: name, commit, state, current.
        for row in &mut rows {
            row.rotate_left(1);
        }
        Ok(rows)
    }

    fn diff(&self, args: &[String]) -> SqlResult<Table> {
        let [from, to, relation] = args else {
            return Err(SqlError::bind(
                "rnt_diff takes three strings: rnt_diff('FROM', 'TO', 'relation')",
            ));
        };
        let (a, b) = (self.db.resolve(from).sql()?, self.db.resolve(to).sql()?);
        let table = self.diff_columns(&a, &b, relation)?;
        let rows = self.diff_rows(&a, &b, relation, &table)?;
        let name = self.fresh_name("diff");
        let mut columns = vec![("diff_type".to_string(), ColumnType::of(Type::Str))];
        for column in &table.columns {
            let ty = column.ty.map(|t| ColumnType::nullable(t.ty));
            columns.push((column.name.clone(), ty.unwrap_or(ColumnType::of(Type::Str))));
        }
        self.facts(&name, &columns, &rows, true);
        Ok(sql_table(&name, &columns, true))
    }

    /// The relation's columns, from the later state that has it (refused when the two
    /// states' columns differ in number).
    fn diff_columns(&self, a: &Snapshot, b: &Snapshot, relation: &str) -> SqlResult<Table> {
        let of = |s: &Snapshot| Catalog::of(&s.program).get(relation).cloned();
        match (of(a), of(b)) {
            (None, None) => Err(SqlError::bind(format!(
                "rnt_diff: no relation `{relation}` in either state"
            ))),
            (Some(x), Some(y)) if x.arity() != y.arity() || x.bag != y.bag => {
                Err(SqlError::unsupported(format!(
                    "rnt_diff of `{relation}` across a change of its columns"
                )))
            }
            (x, y) => Ok(y.or(x).expect("one of the two")),
        }
    }

    /// The rows that differ, each `[sign, values…, count]`: a set's tuples once, a bag's
    /// net change of each row's multiplicity (a change by n is n rows).
    fn diff_rows(
        &self,
        a: &Snapshot,
        b: &Snapshot,
        relation: &str,
        table: &Table,
    ) -> SqlResult<Vec<Vec<Value>>> {
        let changes = self.changed_tuples(a, b, relation, table)?;
        let mut net: BTreeMap<Vec<Value>, i64> = BTreeMap::new();
        for (sign, mut tuple) in changes {
            let count = match table.bag {
                true => match tuple.pop() {
                    Some(Value::Int(n)) => n,
                    _ => 1,
                },
                false => 1,
            };
            let signed = if sign == Sign::Insert { count } else { -count };
            *net.entry(tuple).or_default() += signed;
        }
        let mut rows = Vec::new();
        for (tuple, n) in net.into_iter().filter(|(_, n)| *n != 0) {
            let sign = if n > 0 { "+" } else { "-" };
            let mut row = vec![Value::Str(sign.into())];
            row.extend(tuple);
            row.push(Value::Int(n.abs()));
            rows.push(row);
        }
        Ok(rows)
    }

    /// The tuples that differ: from the two trees for a stored relation; from evaluating
    /// both states for an ephemeral view (which keeps no tree).
    fn changed_tuples(
        &self,
        a: &Snapshot,
        b: &Snapshot,
        relation: &str,
        table: &Table,
    ) -> SqlResult<Vec<(Sign, Vec<Value>)>> {
        if table.kind != RelationKind::Ephemeral {
            let changes = self
                .db
                .diff(a, b, &DiffScope::Relation(relation.to_string()))
                .sql()?;
            return Ok(changes.into_iter().map(|c| (c.sign, c.tuple)).collect());
        }
        let read = |s: &Snapshot| -> SqlResult<BTreeSet<Vec<Value>>> {
            if s.program.relation(relation).is_none() {
                return Ok(BTreeSet::new());
            }
            let vars: Vec<String> = (0..table.arity()).map(|i| format!("c{i}")).collect();
            let rule = format!("_q({0}) :- {relation}({0}).", vars.join(", "));
            Ok(self.db.query(s, &rule).sql()?.tuples.into_iter().collect())
        };
        let (before, after) = (read(a)?, read(b)?);
        let removed = before.difference(&after).map(|t| (Sign::Delete, t.clone()));
        let added = after.difference(&before).map(|t| (Sign::Insert, t.clone()));
        Ok(removed.chain(added).collect())
    }
}

impl History for Reader<'_> {
    fn relation_at(&self, relation: &str, reference: &str) -> SqlResult<Table> {
        let there = self.db.resolve(reference).sql()?;
        let (Some(entry), Some(declared)) =
            (there.entry(relation), there.program.relation(relation))
        else {
            return Err(SqlError::bind(format!(
                "no relation `{relation}` at '{reference}'"
            )));
        };
        if entry.tree().is_none() {
            if declared.declaration.kind != RelationKind::Ephemeral {
                return Err(SqlError::bind(format!(
                    "`{relation}` at '{reference}' keeps no rows to read"
                )));
            }
            return self.evaluated_at(relation, &there);
        }
        let name = self.fresh_name("asof");
        let mut declaration = declared.declaration.clone();
        declaration.kind = RelationKind::Relation;
        declaration.name.name.clone_from(&name);
        let mut table = Catalog::of(&there.program)
            .get(relation)
            .cloned()
            .expect("a relation of the program is in its catalog");
        table.name.clone_from(&name);
        table.kind = RelationKind::Relation;
        let mut extra = self.extra.borrow_mut();
        extra
            .text
            .push_str(&rnt_lang::canonical::declaration_text(&declaration));
        extra.text.push('\n');
        extra.entries.push((name, entry.clone()));
        Ok(table)
    }

    fn system(&self, name: &str, args: Option<&[String]>) -> SqlResult<Option<Table>> {
        self.system_table(name, args)
    }
}

impl Reader<'_> {
    /// A table of PostgreSQL's catalog (`pg_catalog.pg_class`, `information_schema.tables`,
    /// …) of the state read, its rows lent as facts.
    fn catalog_table(&self, name: &str) -> Option<Table> {
        let table = PgCatalog::of(&self.snapshot.program).table(name)?;
        let relation = self.fresh_name("pg");
        self.facts(&relation, &table.columns, &table.rows, false);
        Some(sql_table(&relation, &table.columns, false))
    }

    /// A plain (ephemeral) view as it was at state `there`, which keeps no rows: evaluated
    /// there, its rows lent to the query as facts (the cost of the view, as `--at` reads it).
    fn evaluated_at(&self, relation: &str, there: &Snapshot) -> SqlResult<Table> {
        let table = Catalog::of(&there.program)
            .get(relation)
            .cloned()
            .ok_or_else(|| SqlError::bind(format!("no relation `{relation}` there")))?;
        let arity = table.columns.len() + usize::from(table.bag);
        let vars: Vec<String> = (0..arity).map(|i| format!("c{i}")).collect();
        let rule = format!("_q({0}) :- {relation}({0}).", vars.join(", "));
        let readable = crate::reads::readable(there, self.db);
        let rows = self.db.query(&readable, &rule).sql()?.tuples;
        let columns: Vec<(String, ColumnType)> = table
            .columns
            .iter()
            .map(|c| {
                let ty = c.ty.map_or(ColumnType::nullable(Type::Str), |t| {
                    ColumnType::nullable(t.ty)
                });
                (c.name.clone(), ty)
            })
            .collect();
        let name = self.fresh_name("asof");
        self.facts(&name, &columns, &rows, table.bag);
        Ok(sql_table(&name, &columns, table.bag))
    }

    fn system_table(&self, name: &str, args: Option<&[String]>) -> SqlResult<Option<Table>> {
        let text = ColumnType::of(Type::Str);
        match (name, args) {
            ("rnt_log", None) => {
                let columns = [
                    ("commit", text),
                    ("state", text),
                    ("parents", text),
                    ("time", ColumnType::of(Type::Timestamp)),
                    ("message", text),
                ]
                .map(|(n, t)| (n.to_string(), t));
                let relation = self.fresh_name("log");
                self.facts(&relation, &columns, &self.log()?, false);
                Ok(Some(sql_table(&relation, &columns, false)))
            }
            ("rnt_branches", None) => {
                let columns = [
                    ("name", text),
                    ("commit", text),
                    ("state", text),
                    ("current", ColumnType::of(Type::Bool)),
                ]
                .map(|(n, t)| (n.to_string(), t));
                let relation = self.fresh_name("branches");
                self.facts(&relation, &columns, &self.branches()?, false);
                Ok(Some(sql_table(&relation, &columns, false)))
            }
            ("rnt_diff", Some(args)) => self.diff(args).map(Some),
            ("rnt_log" | "rnt_branches", Some(_)) => Err(SqlError::bind(format!(
                "{name} is a table, not a function: FROM {name}"
            ))),
            ("rnt_diff", None) => Err(SqlError::bind(
                "rnt_diff is a table function: FROM rnt_diff('FROM', 'TO', 'relation')",
            )),
            (_, None) => Ok(self.catalog_table(name)),
            (_, Some(_)) => Ok(None),
        }
    }
}

/// The table SQL sees of a relation made here.
fn sql_table(name: &str, columns: &[(String, ColumnType)], bag: bool) -> Table {
    let columns: Vec<Column> = columns
        .iter()
        .map(|(n, t)| Column {
            name: n.clone(),
            ty: Some(*t),
        })
        .collect();
    let keys = match bag {
        true => Vec::new(),
        false => vec![(0..columns.len()).collect()],
    };
    Table {
        name: name.to_string(),
        kind: RelationKind::Ephemeral,
        columns,
        bag,
        keys,
    }
}
