//! The names a SELECT can see: its FROM sources (each an alias, a relation and the body
//! variables of its columns) and, for a correlated subquery, the scopes around it.

use crate::body::Var;
use crate::catalog::Table;
use crate::error::{SqlError, SqlResult};
use rnt_lang::value::ColumnType;

/// One FROM source.
#[derive(Clone, Debug)]
pub struct Source {
    /// The name that qualifies its columns (the alias, or the table's name).
    pub alias: String,
    /// The relation whose columns the source names: the one its atom reads, or, for a side
    /// of an outer join read through a helper of joined rows (`outer.rs`, `left_on.rs`),
    /// that side's own relation (a domain of a column reads it, `correlate.rs`, for which
    /// a superset of the values suffices).
    pub table: Table,
    /// The body variable of each visible column.
    pub vars: Vec<Var>,
    /// A bag's multiplicity variable (`_count`).
    pub weight: Option<Var>,
    /// The right side of a LEFT JOIN: its columns may be null.
    pub optional: bool,
    /// Columns that a USING join merged into another source's (by position): `*` and
    /// an unqualified name do not see them; `alias.column` does.
    pub hidden: Vec<usize>,
}

/// What a column reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A column of this SELECT's sources: its variable and type (nullable when its source
    /// is optional).
    Local(Var, Option<ColumnType>),
    /// A column of an enclosing query (a correlated subquery): the enclosing body's variable.
    Outer(Var, Option<ColumnType>),
}

/// The sources of one SELECT, and the scope around it.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The FROM sources, in order.
    pub sources: Vec<Source>,
    /// The enclosing query's scope (for correlated subqueries), flattened.
    pub outer: Vec<Source>,
    /// USING columns: an unqualified name's value (the left side's, the right side's for
    /// a RIGHT JOIN, the first that is not null for a FULL JOIN) and type.
    pub merged: Vec<(String, Var, Option<ColumnType>)>,
}

impl Scope {
    /// Resolves `column` or `qualifier.column`.
    pub fn resolve(&self, qualifier: Option<&str>, column: &str) -> SqlResult<Resolved> {
        if qualifier.is_none() {
            if let Some((_, var, ty)) = self.merged.iter().rev().find(|(n, ..)| n == column) {
                return Ok(Resolved::Local(*var, *ty));
            }
        }
        if let Some(found) = find(&self.sources, qualifier, column)? {
            return Ok(Resolved::Local(found.0, found.1));
        }
        if let Some(found) = find(&self.outer, qualifier, column)? {
            return Ok(Resolved::Outer(found.0, found.1));
        }
        let name = match qualifier {
            Some(q) => format!("{q}.{column}"),
            None => column.to_string(),
        };
        let known: Vec<String> = self
            .sources
            .iter()
            .flat_map(|s| {
                s.table
                    .columns
                    .iter()
                    .map(move |c| format!("{}.{}", s.alias, c.name))
            })
            .take(12)
            .collect();
        Err(SqlError::unknown_column(format!(
            "unknown column `{name}` (the columns in scope are {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    /// The source named `alias`.
    pub fn source(&self, alias: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.alias == alias)
    }
}

/// Whether two columns may be one variable (an equality as a shared variable, a join read
/// through an index): their types are one, or one is unknown. Columns of two types (an int
/// and a decimal, decimals of two scales) are compared by a filter instead, which brings
/// them to one type; as one variable the rule language refuses them.
pub fn joinable(a: Option<ColumnType>, b: Option<ColumnType>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.ty == b.ty,
        _ => true,
    }
}

/// The column in `sources`, or `None`; an error when the name is ambiguous.
fn find(
    sources: &[Source],
    qualifier: Option<&str>,
    column: &str,
) -> SqlResult<Option<(Var, Option<ColumnType>)>> {
    let mut found = None;
    for source in sources {
        if qualifier.is_some_and(|q| q != source.alias) {
            continue;
        }
        let Some(position) = source.table.column(column) else {
            continue;
        };
        if qualifier.is_none() && source.hidden.contains(&position) {
            continue;
        }
        if found.is_some() {
            return Err(SqlError::bind(format!(
                "column reference `{column}` is ambiguous (qualify it: `alias.{column}`)"
            )));
        }
        let ty = source.table.columns[position].ty.map(|t| ColumnType {
            nullable: t.nullable || source.optional,
            ..t
        });
        found = Some((source.vars[position], ty));
    }
    Ok(found)
}
