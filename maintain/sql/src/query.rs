//! A query as a relation: WITH's CTEs, a SELECT, VALUES, and set operations — UNION ALL
//! adds multiplicities, UNION keeps each row once, EXCEPT and INTERSECT compare rows as
//! GROUP BY does (null equal to null), by grouping both sides tagged and keeping the groups
//! seen on one side only, or on both; EXCEPT ALL and INTERSECT ALL group the same way and
//! keep a row `max(m − n, 0)` and `min(m, n)` times (a bag).

use crate::body::Body;
use crate::catalog::{Column, Table};
use crate::error::{SqlError, SqlResult};
use crate::expr;
use crate::names;
use crate::scope::Source;
use crate::select::{Lowerer, Produced};
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::{ColumnType, Type};
use sqlparser::ast::{Expr, Query, SetExpr, SetOperator, SetQuantifier, Values};

impl Lowerer<'_> {
    /// Lowers `query` (no correlation) into the relation `name`.
    pub fn query_into(
        &mut self,
        query: &Query,
        name: &str,
        sort_keys: &[Expr],
    ) -> SqlResult<Table> {
        let produced = self.query_with(query, name, &[], sort_keys)?;
        if !produced.correlated.is_empty() {
            return Err(SqlError::unsupported("a correlated subquery here"));
        }
        Ok(produced.table)
    }

    /// Lowers a subquery that may read the enclosing sources `outer` (by equality).
    pub fn correlated_query(
        &mut self,
        query: &Query,
        name: &str,
        outer: &[Source],
    ) -> SqlResult<Produced> {
        self.query_with(query, name, outer, &[])
    }

    fn query_with(
        &mut self,
        query: &Query,
        name: &str,
        outer: &[Source],
        sort_keys: &[Expr],
    ) -> SqlResult<Produced> {
        if query.limit_clause.is_some() || query.fetch.is_some() {
            return Err(SqlError::unsupported(
                "LIMIT or OFFSET in a subquery (only a query's outermost ORDER BY … LIMIT)",
            ));
        }
        let scoped = self.ctes.len();
        if let Some(with) = &query.with {
            if with.recursive {
                self.recursive_ctes(with)?;
            } else {
                for cte in &with.cte_tables {
                    let cte_name = names::new_name(&cte.alias.name)?;
                    let relation = self.helper_name();
                    let mut table = self.query_into(&cte.query, &relation, &[])?;
                    rename_columns(&mut table, &cte.alias.columns)?;
                    self.replace_made(&table);
                    self.ctes.push((cte_name, relation));
                }
            }
        }
        let produced = self.set_expr(&query.body, name, outer, sort_keys);
        self.ctes.truncate(scoped);
        produced
    }

    fn replace_made(&mut self, table: &Table) {
        if let Some(made) = self.made.iter_mut().find(|t| t.name == table.name) {
            *made = table.clone();
        }
    }

    fn set_expr(
        &mut self,
        body: &SetExpr,
        name: &str,
        outer: &[Source],
        sort_keys: &[Expr],
    ) -> SqlResult<Produced> {
        match body {
            SetExpr::Select(select) => self.select(select, name, outer, sort_keys),
            SetExpr::Query(query) => self.query_with(query, name, outer, sort_keys),
            SetExpr::Values(values) => {
                refuse_sort_keys(sort_keys)?;
                Ok(Produced {
                    table: self.values(values, name)?,
                    correlated: Vec::new(),
                })
            }
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                refuse_sort_keys(sort_keys)?;
                // An ALL operation needs each side's counts; the others only the distinct rows.
                let outer = std::mem::replace(
                    &mut self.distinct,
                    !matches!(set_quantifier, SetQuantifier::All),
                );
                let left_name = self.helper_name();
                let left = self.set_expr(left, &left_name, &[], &[]);
                let right_name = self.helper_name();
                let right = self.set_expr(right, &right_name, &[], &[]);
                self.distinct = outer;
                let (left, right) = (left?, right?);
                if !left.correlated.is_empty() || !right.correlated.is_empty() {
                    return Err(SqlError::unsupported("a correlated set operation"));
                }
                let (left_table, right_table) = self.aligned(left.table, right.table);
                let table =
                    self.set_operation(&left_table, op, set_quantifier, &right_table, name)?;
                Ok(Produced {
                    table,
                    correlated: Vec::new(),
                })
            }
            other => Err(SqlError::unsupported(format!(
                "the query `{}`",
                crate::error::clip(other)
            ))),
        }
    }

    fn set_operation(
        &mut self,
        left: &Table,
        op: &SetOperator,
        quantifier: &SetQuantifier,
        right: &Table,
        name: &str,
    ) -> SqlResult<Table> {
        if left.columns.len() != right.columns.len() {
            return Err(SqlError::bind(format!(
                "each side of {op} has as many columns ({} and {})",
                left.columns.len(),
                right.columns.len()
            )));
        }
        let width = left.columns.len();
        let vars: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
        let all = matches!(quantifier, SetQuantifier::All);
        let read = |t: &Table, count: &str| match t.bag {
            true => format!("{}({}, {count})", t.name, vars.join(", ")),
            false => format!("{}({})", t.name, vars.join(", ")),
        };
        let columns = left.columns.clone();
        match (op, all) {
            (SetOperator::Union, false) => {
                for side in [left, right] {
                    self.rules.push(format!(
                        "{name}({}) :- {}.",
                        vars.join(", "),
                        read(side, "_")
                    ));
                }
                Ok(self.set_table(name, columns, false))
            }
            (SetOperator::Union, true) => {
                let tagged = self.tagged(left, right, &vars)?;
                self.rules.push(format!(
                    "{name}({}, sum(n)) :- {tagged}(_, {}, n).",
                    vars.join(", "),
                    vars.join(", ")
                ));
                Ok(self.set_table(name, columns, true))
            }
            (SetOperator::Except | SetOperator::Intersect, false) => {
                let tagged = self.tagged(left, right, &vars)?;
                let grouped = self.helper_name();
                self.rules.push(format!(
                    "{grouped}({}, min(t), max(t)) :- {tagged}(t, {}, _).",
                    vars.join(", "),
                    vars.join(", ")
                ));
                let tags = if matches!(op, SetOperator::Except) {
                    "1, 1"
                } else {
                    "1, 2"
                };
                self.rules.push(format!(
                    "{name}({}) :- {grouped}({}, {tags}).",
                    vars.join(", "),
                    vars.join(", ")
                ));
                Ok(self.set_table(name, columns, false))
            }
            (SetOperator::Except, true) => {
                self.except_all(left, right, &vars, name)?;
                Ok(self.set_table(name, columns, true))
            }
            (SetOperator::Intersect, true) => {
                self.intersect_all(left, right, &vars, name)?;
                Ok(self.set_table(name, columns, true))
            }
            (other, _) => Err(SqlError::unsupported(format!("{other} ALL"))),
        }
    }

    /// EXCEPT ALL: a row `m` times on the left and `n` on the right is kept `m − n` times
    /// when that is positive. The sides are summed as one group per row (null equal to
    /// null, as GROUP BY compares), the right side's counts negated:
    /// `name(r, d) :- Σ{m | left(r, m)} − Σ{n | right(r, n)} = d, d > 0`.
    fn except_all(
        &mut self,
        left: &Table,
        right: &Table,
        vars: &[String],
        name: &str,
    ) -> SqlResult<()> {
        let tagged = self.tagged(left, right, vars)?;
        let (signed, difference) = (self.helper_name(), self.helper_name());
        let row = vars.join(", ");
        self.rules.extend([
            format!("{signed}(1, {row}, n) :- {tagged}(1, {row}, n)."),
            format!("{signed}(2, {row}, s) :- {tagged}(2, {row}, n), s = 0 - n."),
            format!("{difference}({row}, sum(s)) :- {signed}(_, {row}, s)."),
            format!("{name}({row}, d) :- {difference}({row}, d), d > 0."),
        ]);
        Ok(())
    }

    /// INTERSECT ALL: a row `m` times on the left and `n` on the right is kept `min(m, n)`
    /// times when both hold it (one group per row, null equal to null):
    /// `name(r, c) :- tags of r are {1, 2}, c = min(m, n)`.
    fn intersect_all(
        &mut self,
        left: &Table,
        right: &Table,
        vars: &[String],
        name: &str,
    ) -> SqlResult<()> {
        let tagged = self.tagged(left, right, vars)?;
        let grouped = self.helper_name();
        let row = vars.join(", ");
        self.rules.extend([
            format!("{grouped}({row}, min(t), max(t), min(n)) :- {tagged}(t, {row}, n)."),
            format!("{name}({row}, c) :- {grouped}({row}, 1, 2, c)."),
        ]);
        Ok(())
    }

    /// A helper holding both sides' rows tagged 1 (left) and 2 (right), each with its
    /// multiplicity (1 for a set): one tuple per (tag, row).
    fn tagged(&mut self, left: &Table, right: &Table, vars: &[String]) -> SqlResult<String> {
        let tagged = self.helper_name();
        for (tag, side) in [(1, left), (2, right)] {
            let (read, count) = match side.bag {
                true => (format!("{}({}, n)", side.name, vars.join(", ")), "n"),
                false => (format!("{}({})", side.name, vars.join(", ")), "1"),
            };
            self.rules.push(format!(
                "{tagged}({tag}, {}, {count}) :- {read}.",
                vars.join(", ")
            ));
        }
        Ok(tagged)
    }

    /// The two sides of a set operation with numeric columns of one type: where one side's
    /// column is an int and the other's a decimal, or both decimals of different scales,
    /// both are read as `decimal(38, s)`, `s` the larger scale (DuckDB's union type keeps
    /// the larger scale), through a helper casting the side that differs.
    fn aligned(&mut self, left: Table, right: Table) -> (Table, Table) {
        if left.columns.len() != right.columns.len() {
            return (left, right);
        }
        let target: Vec<Option<Type>> = left
            .columns
            .iter()
            .zip(&right.columns)
            .map(|(a, b)| match (a.ty.map(|t| t.ty), b.ty.map(|t| t.ty)) {
                (Some(x), Some(y)) if x == y => None,
                (Some(x), Some(y)) => common_numeric(x, y),
                _ => None,
            })
            .collect();
        if target.iter().all(Option::is_none) {
            return (left, right);
        }
        (
            self.cast_columns(left, &target),
            self.cast_columns(right, &target),
        )
    }

    /// `table` with each column whose `target` is given (and differs) cast to it.
    fn cast_columns(&mut self, table: Table, target: &[Option<Type>]) -> Table {
        let differs =
            |c: usize| target[c].is_some_and(|t| table.columns[c].ty.map(|x| x.ty) != Some(t));
        if !(0..table.columns.len()).any(differs) {
            return table;
        }
        let name = self.helper_name();
        let mut read: Vec<String> = (0..table.columns.len()).map(|i| format!("c{i}")).collect();
        let mut head = read.clone();
        for (c, term) in head.iter_mut().enumerate() {
            if let Some(ty) = target[c].filter(|_| differs(c)) {
                *term = format!("d{c}");
                read.push(format!("d{c} = cast(c{c} as {})", ty.name()));
            }
        }
        let width = table.columns.len();
        let (atom_terms, head_terms) = match table.bag {
            true => (
                format!("{}, n", read[..width].join(", ")),
                format!("{}, n", head.join(", ")),
            ),
            false => (read[..width].join(", "), head.join(", ")),
        };
        let casts = read[width..].join(", ");
        self.rules.push(format!(
            "{name}({head_terms}) :- {}({atom_terms}), {casts}.",
            table.name
        ));
        let columns = table
            .columns
            .iter()
            .enumerate()
            .map(|(c, column)| Column {
                name: column.name.clone(),
                ty: match target[c] {
                    Some(ty) => Some(ColumnType::nullable(ty)),
                    None => column.ty,
                },
            })
            .collect();
        let cast = Table {
            name,
            columns,
            ..table
        };
        self.made(cast.clone());
        cast
    }

    fn set_table(&mut self, name: &str, columns: Vec<Column>, bag: bool) -> Table {
        let width = columns.len();
        let table = Table {
            name: name.to_string(),
            kind: RelationKind::View,
            columns,
            bag,
            keys: if bag {
                Vec::new()
            } else {
                vec![(0..width).collect()]
            },
        };
        self.made(table.clone());
        table
    }

    /// VALUES rows: one rule per distinct row, holding how often it is written.
    fn values(&mut self, values: &Values, name: &str) -> SqlResult<Table> {
        let mut rows: Vec<(Vec<String>, i64)> = Vec::new();
        let mut width = None;
        let body = Body::default();
        let scope = crate::scope::Scope::default();
        for row in &values.rows {
            let mut texts = Vec::new();
            for e in &row.content {
                let (ex, _) = expr::lower(e, &scope, &expr::Context::default(), &body)?;
                texts.push(body.render(&ex));
            }
            if *width.get_or_insert(texts.len()) != texts.len() {
                return Err(SqlError::bind("VALUES rows of different lengths"));
            }
            match rows.iter_mut().find(|(r, _)| *r == texts) {
                Some((_, n)) => *n += 1,
                None => rows.push((texts, 1)),
            }
        }
        let width = width.unwrap_or(0);
        for (mut row, n) in rows {
            row.push(n.to_string());
            self.rules.push(fact_rule(name, &row));
        }
        let columns = (0..width)
            .map(|i| Column {
                name: format!("col{i}"),
                ty: None,
            })
            .collect();
        Ok(self.set_table(name, columns, true))
    }

    /// WITH RECURSIVE: each CTE `c AS (base UNION recursive)` as rules of one relation;
    /// UNION ALL is refused (a recursion that counts derivations need not end).
    fn recursive_ctes(&mut self, with: &sqlparser::ast::With) -> SqlResult<()> {
        for cte in &with.cte_tables {
            let cte_name = names::new_name(&cte.alias.name)?;
            let relation = self.helper_name();
            let SetExpr::SetOperation {
                left,
                op: SetOperator::Union,
                set_quantifier,
                right,
            } = &*cte.query.body
            else {
                return Err(SqlError::unsupported(
                    "WITH RECURSIVE other than `base UNION recursive step`",
                ));
            };
            if matches!(set_quantifier, SetQuantifier::All) {
                return Err(SqlError::unsupported(
                    "UNION ALL in WITH RECURSIVE: a recursion over a bag counts derivations \
                     and need not end; write UNION",
                ));
            }
            // The base step first, so that the relation's columns are known to the step;
            // both as sets (UNION).
            let outer = std::mem::replace(&mut self.distinct, true);
            let base_name = self.helper_name();
            let base = self.set_expr(left, &base_name, &[], &[]);
            self.distinct = outer;
            let base = base?.table;
            let mut table = Table {
                name: relation.clone(),
                kind: RelationKind::View,
                columns: base.columns.clone(),
                bag: false,
                keys: vec![(0..base.columns.len()).collect()],
            };
            rename_columns(&mut table, &cte.alias.columns)?;
            self.made(table.clone());
            self.ctes.push((cte_name, relation.clone()));
            let outer = std::mem::replace(&mut self.distinct, true);
            let step_name = self.helper_name();
            let step = self.set_expr(right, &step_name, &[], &[]);
            self.distinct = outer;
            let step = step?.table;
            let vars: Vec<String> = (0..table.columns.len()).map(|i| format!("c{i}")).collect();
            for side in [&base, &step] {
                let read = match side.bag {
                    true => format!("{}({}, _)", side.name, vars.join(", ")),
                    false => format!("{}({})", side.name, vars.join(", ")),
                };
                self.rules
                    .push(format!("{relation}({}) :- {read}.", vars.join(", ")));
            }
        }
        Ok(())
    }
}

fn refuse_sort_keys(sort_keys: &[Expr]) -> SqlResult<()> {
    match sort_keys.is_empty() {
        true => Ok(()),
        false => Err(SqlError::unsupported(
            "ORDER BY an expression that is not an output column of a set operation or VALUES",
        )),
    }
}

fn rename_columns(
    table: &mut Table,
    aliases: &[sqlparser::ast::TableAliasColumnDef],
) -> SqlResult<()> {
    if aliases.len() > table.columns.len() {
        return Err(SqlError::bind("more column names than columns"));
    }
    for (column, alias) in table.columns.iter_mut().zip(aliases) {
        column.name = names::new_name(&alias.name)?;
    }
    Ok(())
}

/// `name(values…)` as a rule with no atoms: constants in the head, anything else (a date,
/// a timestamp, a computed value) assigned.
pub fn fact_rule(name: &str, values: &[String]) -> String {
    let mut head = Vec::new();
    let mut assignments = Vec::new();
    for (i, text) in values.iter().enumerate() {
        match is_head_constant(text) {
            true => head.push(text.clone()),
            false => {
                head.push(format!("c{i}"));
                assignments.push(format!("c{i} = {text}"));
            }
        }
    }
    let body = match assignments.is_empty() {
        true => "true = true".to_string(),
        false => assignments.join(", "),
    };
    format!("{name}({}) :- {body}.", head.join(", "))
}

/// Whether rendered text is a constant a rule head may hold (an int, a decimal, a string,
/// `true`, `false`, `null`; `date("…")` would read as an aggregate there).
fn is_head_constant(text: &str) -> bool {
    let plain_number = text.parse::<i64>().is_ok()
        || (text
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
            && text.contains('.'));
    plain_number
        || matches!(text, "null" | "true" | "false")
        || (text.starts_with('"') && text.ends_with('"') && text.len() >= 2)
}

/// The type two numeric column types meet in: an int and a decimal, or two decimals, as
/// `decimal(38, s)` with the larger scale; `None` for any other pair.
fn common_numeric(a: Type, b: Type) -> Option<Type> {
    let scale = |t: Type| match t {
        Type::Int => Some(0),
        Type::Decimal { scale, .. } => Some(scale),
        _ => None,
    };
    let (x, y) = (scale(a)?, scale(b)?);
    Some(Type::Decimal {
        precision: 38,
        scale: x.max(y),
    })
}
