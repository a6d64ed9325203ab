//! DML as change sets: each statement reads what it changes with a query against the state
//! it runs on, then the change set goes through the ordinary commit (so denials — CHECK,
//! UNIQUE, FOREIGN KEY — judge it as any commit, exit 2 naming the constraint).
//!
//! - A keyed table (PRIMARY KEY): INSERT of a present key is a violation of `t_pkey` unless
//!   ON CONFLICT says what to do; UPDATE may move keys, never onto another row's.
//! - A bag (no PRIMARY KEY): a row's `_count` goes up by the copies inserted and the row
//!   leaves when DELETE or UPDATE takes it (all its copies: SQL cannot tell them apart).
//! - NOT NULL: a null into such a column is a violation named `t_c_not_null` (exit 2).

use crate::body::{AtomKind, Body, Ex, Var};
use crate::catalog::{Catalog, Table};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::from::add_source;
use crate::insert_conflict::{on_present, refuse_insert_clauses, OnPresent};
use crate::names;
use crate::row_check::{conformed, not_null, pkey_violation, typed};
use crate::scope::Scope;
use crate::select::{split_and, Lowerer};
use crate::top;
use rnt_lang::change::{Change, Sign};
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::Value;
use sqlparser::ast::{
    Assignment, AssignmentTarget, Delete, Expr, FromTable, Insert, TableFactor, TableObject, Update,
};
use std::collections::BTreeMap;

/// What a DML statement reads from the state it runs on; `rnt-sql-run` answers from the
/// database (the head, or a transaction's working state).
pub trait Reads {
    /// The rows of `rules`, whose first head is the answer, evaluated on the state.
    fn answer(&self, rules: &str) -> SqlResult<Vec<Vec<Value>>>;
    /// Every tuple of relation `relation` (a bag's with its `_count` last).
    fn tuples(&self, relation: &str) -> SqlResult<Vec<Vec<Value>>>;
    /// The tuple of keyed relation `relation` whose declared key holds `key` (in the key's
    /// declaration order), if any: O(log n) reads. `None` for the outer `Option` when the
    /// relation has no declared key.
    fn tuple_with_key(
        &self,
        relation: &str,
        key: &[Value],
    ) -> SqlResult<Option<Option<Vec<Value>>>>;
}

/// A DML statement's change set and the rows it wrote, as PostgreSQL counts them in its
/// command tag (`INSERT 0 n`, `UPDATE n`, `DELETE n`): rows inserted (a conflict's update
/// included, a skipped one not), rows the WHERE matched (updated to the same values or
/// not), rows deleted; a bag's row counts as many times as its copies.
#[derive(Debug, Default)]
pub struct Written {
    /// The change set.
    pub changes: Vec<Change>,
    /// The rows written.
    pub rows: u64,
}

/// What DML statements read and write: the state they run on and its catalog.
pub struct Target<'a> {
    /// The state's rows.
    pub reads: &'a dyn Reads,
    /// Its catalog.
    pub catalog: &'a Catalog,
}

impl Target<'_> {
    /// The base table `name`.
    fn table(&self, name: &str) -> SqlResult<Table> {
        match self.catalog.get(name) {
            Some(t) if t.kind == RelationKind::Relation => Ok(t.clone()),
            Some(_) => Err(SqlError::bind(format!(
                "`{name}` is a view: only a table takes INSERT, UPDATE and DELETE"
            ))),
            None => Err(SqlError::unknown_relation(format!(
                "unknown table `{name}`"
            ))),
        }
    }

    /// Evaluates rules whose first head is the answer.
    fn answer(&self, rules: &str) -> SqlResult<Vec<Vec<Value>>> {
        self.reads.answer(rules)
    }

    /// The change set of an INSERT.
    pub fn insert(&self, insert: &Insert) -> SqlResult<Written> {
        let TableObject::TableName(name) = &insert.table else {
            return Err(SqlError::unsupported("INSERT into a table function"));
        };
        if insert.returning.is_some() || !insert.assignments.is_empty() {
            return Err(SqlError::unsupported("INSERT … RETURNING or SET"));
        }
        refuse_insert_clauses(insert)?;
        let table = self.table(&names::object(name)?)?;
        let positions: Vec<usize> = match insert.columns.is_empty() {
            true => (0..table.columns.len()).collect(),
            false => insert
                .columns
                .iter()
                .map(|c| {
                    let c = names::object(c)?;
                    table.column(&c).ok_or_else(|| {
                        SqlError::unknown_column(format!("`{}` has no column `{c}`", table.name))
                    })
                })
                .collect::<SqlResult<_>>()?,
        };
        let source = insert
            .source
            .as_ref()
            .ok_or_else(|| SqlError::unsupported("INSERT without VALUES or SELECT"))?;
        let rows = match literal_rows(source) {
            Some(rows) => rows,
            None if mentions_default(source) => {
                return Err(SqlError::unsupported(
                    "DEFAULT in VALUES beside a value that is not a literal",
                ))
            }
            None => {
                let lowered = top::lower(self.catalog, source)?;
                let tuples = self.answer(&lowered.rules)?;
                crate::output::rows(
                    tuples,
                    lowered.answer.bag,
                    &lowered.order,
                    lowered.offset,
                    lowered.limit,
                    lowered.visible,
                )
                .into_iter()
                .map(|row| row.into_iter().map(Some).collect())
                .collect()
            }
        };
        let mut full = Vec::new();
        for row in rows {
            if row.len() != positions.len() {
                return Err(SqlError::bind(format!(
                    "INSERT has {} target columns but {} values",
                    positions.len(),
                    row.len()
                )));
            }
            let mut tuple: Vec<Value> = (0..table.columns.len())
                .map(|at| self.catalog.default_of(&table.name, at))
                .collect();
            for (value, &at) in row.into_iter().zip(&positions) {
                if let Some(value) = value {
                    tuple[at] = value;
                }
            }
            full.push(typed(&table, tuple)?);
        }
        let asks_on_present =
            insert.on.is_some() || insert.or.is_some() || insert.ignore || insert.replace_into;
        match table.bag {
            true if asks_on_present => Err(SqlError::bind(format!(
                "`{}` has no PRIMARY KEY: ON CONFLICT, OR IGNORE and OR REPLACE need one",
                table.name
            ))),
            true => {
                for row in &full {
                    not_null(&table, row)?;
                }
                let rows = count(full.len());
                let changes = self.bag_additions(&table, full, Vec::new())?;
                Ok(Written { changes, rows })
            }
            false => {
                let changes = self.keyed_insert(&table, full, on_present(insert, &table)?)?;
                // One row in per insertion (an OR REPLACE's deletion is its row's way out).
                let rows = count(changes.iter().filter(|c| c.sign == Sign::Insert).count());
                Ok(Written { changes, rows })
            }
        }
    }

    /// Inserts into a keyed table, with ON CONFLICT's answer for present keys.
    fn keyed_insert(
        &self,
        table: &Table,
        rows: Vec<Vec<Value>>,
        action: OnPresent<'_>,
    ) -> SqlResult<Vec<Change>> {
        let key = table.keys[0].clone();
        let mut proposed: BTreeMap<Vec<Value>, Vec<Value>> = BTreeMap::new();
        for row in rows {
            let k: Vec<Value> = key.iter().map(|&c| row[c].clone()).collect();
            match proposed.entry(k) {
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(row);
                }
                // A second row of one key: a conflict clause keeps the first (DuckDB's
                // answer for DO NOTHING, DO UPDATE and OR REPLACE alike: the later rows of
                // the key are neither inserted nor applied; PostgreSQL refuses DO UPDATE
                // there); a plain INSERT's is the key's violation.
                std::collections::btree_map::Entry::Occupied(_)
                    if !matches!(action, OnPresent::Refuse) => {}
                std::collections::btree_map::Entry::Occupied(slot) => {
                    return Err(pkey_violation(table, slot.key()));
                }
            }
        }
        let present = self.present_keys(table, proposed.keys().cloned().collect())?;
        // Sized once: a change set of a million rows grown by doubling held a second,
        // half-size copy at its last growth (the statement's peak).
        let mut changes = Vec::with_capacity(proposed.len());
        let mut updates = Vec::new();
        for (k, row) in proposed {
            let written = match (present.get(&k), action) {
                (Some(_), OnPresent::Nothing | OnPresent::Update(_)) => false,
                (Some(old), OnPresent::Replace) => *old != row,
                _ => true,
            };
            if written {
                not_null(table, &row)?;
            }
            match (present.get(&k), action) {
                (None, _) => changes.push(change(Sign::Insert, table, row)),
                (Some(_), OnPresent::Refuse) => return Err(pkey_violation(table, &k)),
                (Some(_), OnPresent::Nothing) => {}
                (Some(old), OnPresent::Replace) if *old != row => {
                    changes.push(change(Sign::Delete, table, old.clone()));
                    changes.push(change(Sign::Insert, table, row));
                }
                (Some(_), OnPresent::Replace) => {}
                (Some(old), OnPresent::Update(_)) => updates.push((old.clone(), row)),
            }
        }
        if let OnPresent::Update(update) = action {
            changes.extend(self.conflict_updates(
                table,
                &updates,
                &update.assignments,
                update.selection.as_ref(),
            )?);
        }
        Ok(changes)
    }

    /// The present tuples of a keyed table under `keys`, by key.
    fn present_keys(
        &self,
        table: &Table,
        keys: Vec<Vec<Value>>,
    ) -> SqlResult<BTreeMap<Vec<Value>, Vec<Value>>> {
        if keys.is_empty() {
            return Ok(BTreeMap::new());
        }
        // By key, each an O(log n) read, when the relation declares its key; else one
        // query over the keys as facts.
        let mut found = BTreeMap::new();
        let mut keyed = true;
        for k in keys.iter().filter(|k| !k.iter().any(Value::is_null)) {
            // (A key holding a null matches no row: NOT NULL refuses it when written.)
            match self.reads.tuple_with_key(&table.name, k)? {
                None => {
                    keyed = false;
                    break;
                }
                Some(Some(tuple)) => {
                    found.insert(k.clone(), tuple);
                }
                Some(None) => {}
            }
        }
        if keyed {
            return Ok(found);
        }
        let key = &table.keys[0];
        let vars: Vec<String> = (0..table.columns.len()).map(|i| format!("c{i}")).collect();
        let key_vars: Vec<String> = key.iter().map(|&c| vars[c].clone()).collect();
        let mut rules = vec![format!(
            "{}({}) :- _keys({}), {}({}).",
            top::ANSWER,
            vars.join(", "),
            key_vars.join(", "),
            table.name,
            vars.join(", ")
        )];
        for k in &keys {
            let constants: Vec<String> = k.iter().map(Value::to_string).collect();
            rules.push(crate::query::fact_rule("_keys", &constants));
        }
        let found = self.answer(&rules.join("\n"))?;
        Ok(found
            .into_iter()
            .map(|t| (key.iter().map(|&c| t[c].clone()).collect(), t))
            .collect())
    }

    /// ON CONFLICT DO UPDATE: each present row updated by the assignments, which read the
    /// row (`t.c` or `c`) and the proposed one (`EXCLUDED.c`).
    fn conflict_updates(
        &self,
        table: &Table,
        pairs: &[(Vec<Value>, Vec<Value>)],
        assignments: &[Assignment],
        selection: Option<&Expr>,
    ) -> SqlResult<Vec<Change>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let width = table.columns.len();
        let excluded = Table {
            name: "_excluded".into(),
            bag: false,
            ..table.clone()
        };
        let mut lowerer = Lowerer::new(self.catalog, "_u");
        lowerer.made(excluded.clone());
        let mut body = Body::default();
        let mut scope = Scope::default();
        add_source(
            &mut body,
            &mut scope,
            Table {
                bag: false,
                ..table.clone()
            },
            table.name.clone(),
            AtomKind::Plain,
        )?;
        add_source(
            &mut body,
            &mut scope,
            excluded,
            "excluded".into(),
            AtomKind::Plain,
        )?;
        for &c in &table.keys[0] {
            body.unify(scope.sources[0].vars[c], scope.sources[1].vars[c]);
        }
        let new = assigned(
            table,
            &mut body,
            &scope,
            assignments,
            &mut lowerer,
            selection,
        )?;
        let mut head: Vec<String> = scope.sources[0]
            .vars
            .iter()
            .map(|v| body.name(*v))
            .collect();
        head.extend(new.iter().map(|v| body.name(*v)));
        let mut rules = vec![format!(
            "{}({}) :- {}.",
            top::ANSWER,
            head.join(", "),
            body.text()
        )];
        rules.extend(lowerer.rules);
        for (_, row) in pairs {
            // A null is typed by its column, so `excluded.c` has a type even when every
            // proposed row's `c` is null.
            let constants: Vec<String> = row
                .iter()
                .zip(&table.columns)
                .map(|(value, column)| match (value, &column.ty) {
                    (Value::Null, Some(ty)) => format!("cast(null as {})", ty.ty.name()),
                    _ => value.to_string(),
                })
                .collect();
            rules.push(crate::query::fact_rule("_excluded", &constants));
        }
        let mut changes = Vec::new();
        for tuple in self.answer(&rules.join("\n"))? {
            let updated = conformed(table, tuple[width..].to_vec())?;
            changes.push(change(Sign::Insert, table, updated));
        }
        Ok(changes)
    }

    /// A bag's rows added (`added`, each one copy) and whole rows removed (`removed`,
    /// tuples with their counts): each distinct row's count moved once.
    fn bag_additions(
        &self,
        table: &Table,
        added: Vec<Vec<Value>>,
        removed: Vec<Vec<Value>>,
    ) -> SqlResult<Vec<Change>> {
        let mut delta: BTreeMap<Vec<Value>, i64> = BTreeMap::new();
        for row in added {
            *delta.entry(row).or_default() += 1;
        }
        let mut present: BTreeMap<Vec<Value>, i64> = BTreeMap::new();
        for mut tuple in self.reads.tuples(&table.name)? {
            let count = match tuple.pop() {
                Some(Value::Int(n)) => n,
                _ => 0,
            };
            *present.entry(tuple).or_default() += count;
        }
        for mut tuple in removed {
            let count = match tuple.pop() {
                Some(Value::Int(n)) => n,
                _ => 0,
            };
            *delta.entry(tuple).or_default() -= count;
        }
        let mut changes = Vec::new();
        for (row, moved) in delta {
            let old = present.get(&row).copied().unwrap_or(0);
            let new = old + moved;
            if moved == 0 {
                continue;
            }
            if old > 0 {
                changes.push(change(Sign::Delete, table, with_count(&row, old)));
            }
            if new > 0 {
                changes.push(change(Sign::Insert, table, with_count(&row, new)));
            }
        }
        Ok(changes)
    }

    /// The change set of a DELETE.
    pub fn delete(&self, delete: &Delete) -> SqlResult<Written> {
        let from = match &delete.from {
            FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from) => from,
        };
        if delete.using.is_some()
            || delete.returning.is_some()
            || delete.limit.is_some()
            || from.len() != 1
            || !from[0].joins.is_empty()
        {
            return Err(SqlError::unsupported(
                "DELETE with USING, RETURNING, LIMIT or a join",
            ));
        }
        let (table, alias) = self.target(&from[0].relation)?;
        let rows = self.target_rows(&table, &alias, delete.selection.as_ref(), &[])?;
        let deleted = rows.iter().map(|tuple| copies(&table, tuple)).sum();
        let changes = rows
            .into_iter()
            .map(|tuple| change(Sign::Delete, &table, tuple))
            .collect();
        Ok(Written {
            changes,
            rows: deleted,
        })
    }

    /// The change set of an UPDATE.
    pub fn update(&self, update: &Update) -> SqlResult<Written> {
        if update.from.is_some() || update.returning.is_some() || !update.table.joins.is_empty() {
            return Err(SqlError::unsupported(
                "UPDATE with FROM, RETURNING or a join",
            ));
        }
        let (table, alias) = self.target(&update.table.relation)?;
        let rows = self.target_rows(
            &table,
            &alias,
            update.selection.as_ref(),
            &update.assignments,
        )?;
        let width = table.columns.len() + usize::from(table.bag);
        let matched = rows.iter().map(|tuple| copies(&table, tuple)).sum();
        let mut olds = Vec::new();
        let mut news = Vec::new();
        for tuple in rows {
            olds.push(tuple[..width].to_vec());
            news.push(conformed(&table, tuple[width..].to_vec())?);
        }
        match table.bag {
            true => {
                let copies: Vec<i64> = olds
                    .iter()
                    .map(|t| match t.last() {
                        Some(Value::Int(n)) => *n,
                        _ => 1,
                    })
                    .collect();
                let added = news
                    .into_iter()
                    .zip(copies)
                    .flat_map(|(row, n)| std::iter::repeat_n(row, usize::try_from(n).unwrap_or(0)))
                    .collect();
                self.bag_additions(&table, added, olds)
            }
            false => self.keyed_update(&table, olds, news),
        }
        .map(|changes| Written {
            changes,
            rows: matched,
        })
    }

    /// Moves rows of a keyed table: old keys out, new rows in; a new key that another row
    /// (not itself updated away) holds is a violation.
    fn keyed_update(
        &self,
        table: &Table,
        olds: Vec<Vec<Value>>,
        news: Vec<Vec<Value>>,
    ) -> SqlResult<Vec<Change>> {
        let key = table.keys[0].clone();
        let key_of =
            |row: &Vec<Value>| -> Vec<Value> { key.iter().map(|&c| row[c].clone()).collect() };
        let leaving: BTreeMap<Vec<Value>, Vec<Value>> =
            olds.iter().map(|o| (key_of(o), o.clone())).collect();
        let mut arriving: BTreeMap<Vec<Value>, Vec<Value>> = BTreeMap::new();
        for new in &news {
            if arriving.insert(key_of(new), new.clone()).is_some() {
                return Err(pkey_violation(table, &key_of(new)));
            }
        }
        let moved: Vec<Vec<Value>> = arriving
            .keys()
            .filter(|k| !leaving.contains_key(*k))
            .cloned()
            .collect();
        if let Some((k, _)) = self.present_keys(table, moved)?.into_iter().next() {
            return Err(pkey_violation(table, &k));
        }
        let mut changes = Vec::new();
        for (k, old) in &leaving {
            if !arriving.contains_key(k) {
                changes.push(change(Sign::Delete, table, old.clone()));
            }
        }
        for (k, new) in arriving {
            if leaving.get(&k) != Some(&new) {
                changes.push(change(Sign::Insert, table, new));
            }
        }
        Ok(changes)
    }

    /// The table a DELETE or UPDATE names, and its alias.
    fn target(&self, factor: &TableFactor) -> SqlResult<(Table, String)> {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let name = names::object(name)?;
                let table = self.table(&name)?;
                let alias = alias.as_ref().map_or(Ok(name), |a| names::ident(&a.name))?;
                Ok((table, alias))
            }
            other => Err(SqlError::unsupported(format!(
                "the target `{}`",
                crate::error::clip(other)
            ))),
        }
    }

    /// The table's tuples (with `_count` for a bag) that pass `selection`, each followed
    /// by the new values of every column under `assignments` (none for DELETE).
    fn target_rows(
        &self,
        table: &Table,
        alias: &str,
        selection: Option<&Expr>,
        assignments: &[Assignment],
    ) -> SqlResult<Vec<Vec<Value>>> {
        let mut lowerer = Lowerer::new(self.catalog, "_d");
        let mut body = Body::default();
        let mut scope = Scope::default();
        add_source(
            &mut body,
            &mut scope,
            table.clone(),
            alias.to_string(),
            AtomKind::Plain,
        )?;
        let new = match assignments.is_empty() {
            true => {
                if let Some(selection) = selection {
                    where_into(&mut lowerer, selection, &mut body, &scope)?;
                }
                Vec::new()
            }
            false => assigned(
                table,
                &mut body,
                &scope,
                assignments,
                &mut lowerer,
                selection,
            )?,
        };
        let source = &scope.sources[0];
        let mut head: Vec<String> = source.vars.iter().map(|v| body.name(*v)).collect();
        head.extend(source.weight.map(|w| body.name(w)));
        head.extend(new.iter().map(|v| body.name(*v)));
        let mut rules = vec![format!(
            "{}({}) :- {}.",
            top::ANSWER,
            head.join(", "),
            body.text()
        )];
        rules.extend(lowerer.rules);
        self.answer(&rules.join("\n"))
    }
}

/// The WHERE of a DML statement into `body` (subqueries included).
fn where_into(
    lowerer: &mut Lowerer<'_>,
    selection: &Expr,
    body: &mut Body,
    scope: &Scope,
) -> SqlResult<()> {
    let mut conjuncts = Vec::new();
    split_and(selection, &mut conjuncts);
    let mut correlated = Vec::new();
    for conjunct in &conjuncts {
        lowerer.conjunct(conjunct, body, scope, &mut correlated)?;
    }
    Ok(())
}

/// The new value of every column of the first source under SET `assignments` (the old one
/// where none is set; the column's default for `SET c = DEFAULT`), after `selection`;
/// returns their variables.
fn assigned(
    table: &Table,
    body: &mut Body,
    scope: &Scope,
    assignments: &[Assignment],
    lowerer: &mut Lowerer<'_>,
    selection: Option<&Expr>,
) -> SqlResult<Vec<Var>> {
    let mut new: Vec<Ex> = scope.sources[0].vars.iter().map(|v| Ex::Var(*v)).collect();
    for assignment in assignments {
        let AssignmentTarget::ColumnName(column) = &assignment.target else {
            return Err(SqlError::unsupported("SET (a, b) = …"));
        };
        let column = names::object(column)?;
        let at = table.column(&column).ok_or_else(|| {
            SqlError::unknown_column(format!("`{}` has no column `{column}`", table.name))
        })?;
        let ty = table.columns[at].ty.map(|t| t.ty);
        let value = match is_default(&assignment.value) {
            true => Ex::Lit(lowerer.catalog.default_of(&table.name, at).to_string()),
            false => {
                let (value, _) = expr::lower(&assignment.value, scope, &Context::default(), body)?;
                expr::coerce((value, None), &assignment.value, ty)?.0
            }
        };
        // A null takes the column's type: alone in a head column it has none.
        new[at] = match (value, ty) {
            (Ex::Lit(text), Some(ty)) if text == "null" => {
                Ex::Cast(Box::new(Ex::Lit(text)), ty.name())
            }
            (value, _) => value,
        };
    }
    if let Some(selection) = selection {
        where_into(lowerer, selection, body, scope)?;
    }
    Ok(new
        .into_iter()
        .map(|value| crate::select::place(body, value))
        .collect())
}

/// How many rows `tuple` (a target row, a bag's with its `_count` after the columns)
/// stands for.
fn copies(table: &Table, tuple: &[Value]) -> u64 {
    match (table.bag, tuple.get(table.columns.len())) {
        (true, Some(Value::Int(n))) => u64::try_from(*n).unwrap_or(0),
        _ => 1,
    }
}

fn count(rows: usize) -> u64 {
    u64::try_from(rows).unwrap_or(u64::MAX)
}

fn with_count(row: &[Value], count: i64) -> Vec<Value> {
    let mut tuple = row.to_vec();
    tuple.push(Value::Int(count));
    tuple
}

fn change(sign: Sign, table: &Table, values: Vec<Value>) -> Change {
    Change {
        sign,
        relation: table.name.clone(),
        values,
        names: Vec::new(),
        wildcards: Vec::new(),
        line: 1,
        source: None,
    }
}

/// The rows of `VALUES (…), …` when every value is a literal or `DEFAULT` (read here, so
/// that a column of nulls needs no type), `DEFAULT` as `None`; `None` for anything else,
/// which runs as a query.
fn literal_rows(source: &sqlparser::ast::Query) -> Option<Vec<Vec<Option<Value>>>> {
    let sqlparser::ast::SetExpr::Values(values) = &*source.body else {
        return None;
    };
    if source.order_by.is_some() || source.limit_clause.is_some() {
        return None;
    }
    values
        .rows
        .iter()
        .map(|row| row.content.iter().map(literal_or_default).collect())
        .collect()
}

/// `Some(None)` for `DEFAULT`, `Some(Some(v))` for a literal, `None` for anything else.
fn literal_or_default(expr: &Expr) -> Option<Option<Value>> {
    match is_default(expr) {
        true => Some(None),
        false => literal_value(expr).map(Some),
    }
}

/// `DEFAULT` written as a value (sqlparser reads it as a name).
fn is_default(expr: &Expr) -> bool {
    matches!(expr, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// Whether a `VALUES` source writes `DEFAULT` anywhere.
fn mentions_default(source: &sqlparser::ast::Query) -> bool {
    match &*source.body {
        sqlparser::ast::SetExpr::Values(values) => {
            values.rows.iter().flat_map(|r| &r.content).any(is_default)
        }
        _ => false,
    }
}

/// A literal's value: a number, a string, a bool, null, `DATE '…'`, `TIMESTAMP '…'`, or a
/// negated number.
pub(crate) fn literal_value(expr: &Expr) -> Option<Value> {
    use sqlparser::ast::{UnaryOperator, Value as V};
    match expr {
        Expr::Value(v) => match &v.value {
            V::Null => Some(Value::Null),
            V::Boolean(b) => Some(Value::Bool(*b)),
            V::SingleQuotedString(s) => Some(Value::Str(s.clone())),
            V::Number(n, _) => match n.parse::<i64>() {
                Ok(i) => Some(Value::Int(i)),
                Err(_) => match rnt_lang::decimal::Decimal::parse(n) {
                    Some(d) if !n.contains(['e', 'E']) => Some(Value::Decimal(d)),
                    // An exponent, or more than 38 digits: a double, as DuckDB reads it.
                    _ => rnt_lang::value::Float::parse(n, false).map(Value::Float),
                },
            },
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal_value(expr)? {
            Value::Int(i) => i.checked_neg().map(Value::Int),
            Value::Decimal(d) => d.checked_neg().map(Value::Decimal),
            Value::Float(x) => Some(Value::Float(rnt_lang::value::Float::double(-x.to_f64()))),
            _ => None,
        },
        Expr::TypedString(typed) => {
            let text = match &typed.value.value {
                V::SingleQuotedString(s) => s,
                _ => return None,
            };
            match crate::types::of(&typed.data_type).ok()? {
                rnt_lang::value::Type::Date => rnt_lang::time::parse_date(text).map(Value::Date),
                rnt_lang::value::Type::Timestamp => {
                    rnt_lang::time::parse_timestamp(text).map(Value::Timestamp)
                }
                _ => None,
            }
        }
        Expr::Nested(inner) => literal_value(inner),
        _ => None,
    }
}
