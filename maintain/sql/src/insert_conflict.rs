//! What an INSERT does with a row whose key is present: refuse it (the key's constraint),
//! keep the present row (`ON CONFLICT DO NOTHING`, `INSERT OR IGNORE`), put the proposed
//! row in its place (`INSERT OR REPLACE`, `REPLACE INTO`) or update the present one
//! (`ON CONFLICT DO UPDATE`); and the INSERT clauses refused by name.

use crate::catalog::Table;
use crate::error::{SqlError, SqlResult};
use crate::names;
use sqlparser::ast::{
    ConflictTarget, DoUpdate, Insert, OnConflictAction, OnInsert, SqliteOnConflict,
};

/// What an INSERT does with a proposed row whose key is present.
#[derive(Clone, Copy)]
pub enum OnPresent<'a> {
    /// Refuse the statement: the key's constraint is violated.
    Refuse,
    /// Keep the present row (`ON CONFLICT DO NOTHING`, `INSERT OR IGNORE`).
    Nothing,
    /// Put the proposed row in its place (`INSERT OR REPLACE`).
    Replace,
    /// Update the present row (`ON CONFLICT DO UPDATE`).
    Update(&'a DoUpdate),
}

/// The INSERT's answer for present keys, from ON CONFLICT or SQLite's `OR IGNORE` /
/// `OR REPLACE` (which DuckDB takes too) and `REPLACE INTO`.
pub fn on_present<'a>(insert: &'a Insert, table: &Table) -> SqlResult<OnPresent<'a>> {
    if insert.replace_into {
        // `REPLACE INTO` (SQLite, MySQL): INSERT OR REPLACE.
        return match (&insert.on, insert.or, insert.ignore) {
            (None, None, false) => Ok(OnPresent::Replace),
            _ => Err(SqlError::bind("REPLACE INTO with another conflict clause")),
        };
    }
    match (&insert.on, insert.or, insert.ignore) {
        (None, None, false) => Ok(OnPresent::Refuse),
        (None, Some(SqliteOnConflict::Ignore), _) | (None, None, true) => Ok(OnPresent::Nothing),
        (None, Some(SqliteOnConflict::Replace), _) => Ok(OnPresent::Replace),
        (None, Some(other), _) => Err(SqlError::unsupported(format!(
            "INSERT {other} (ON CONFLICT DO NOTHING, DO UPDATE, OR IGNORE and OR REPLACE are)"
        ))),
        (Some(OnInsert::OnConflict(conflict)), None, false) => {
            check_conflict_target(table, conflict.conflict_target.as_ref())?;
            Ok(match &conflict.action {
                OnConflictAction::DoNothing => OnPresent::Nothing,
                OnConflictAction::DoUpdate(update) => OnPresent::Update(update),
            })
        }
        (Some(OnInsert::OnConflict(_)), ..) => Err(SqlError::bind(
            "INSERT with both OR IGNORE/OR REPLACE and ON CONFLICT: write one",
        )),
        (Some(_), ..) => Err(SqlError::unsupported(
            "ON DUPLICATE KEY UPDATE (write ON CONFLICT)",
        )),
    }
}

/// Refuses by name the INSERT clauses rnt does not honour (none is ignored silently).
pub fn refuse_insert_clauses(insert: &Insert) -> SqlResult<()> {
    let refused = [
        (insert.overwrite, "INSERT OVERWRITE"),
        (insert.partitioned.is_some(), "INSERT … PARTITION"),
        (insert.overriding.is_some(), "INSERT … OVERRIDING"),
        (insert.by_name, "INSERT … BY NAME"),
        (insert.priority.is_some(), "INSERT with a priority"),
        (insert.output.is_some(), "INSERT … OUTPUT"),
        (insert.insert_alias.is_some(), "INSERT … AS alias"),
        (insert.settings.is_some(), "INSERT … SETTINGS"),
        (
            !insert.after_columns.is_empty(),
            "INSERT with columns after the table",
        ),
    ];
    match refused.iter().find(|(present, _)| *present) {
        Some((_, what)) => Err(SqlError::unsupported(what.to_string())),
        None => Ok(()),
    }
}

/// Refuses an ON CONFLICT target other than the primary key's columns.
fn check_conflict_target(table: &Table, target: Option<&ConflictTarget>) -> SqlResult<()> {
    match target {
        None => Ok(()),
        Some(ConflictTarget::Columns { columns, .. }) => {
            let named: Vec<usize> = columns
                .iter()
                .map(|c| names::ident(c).map(|c| table.column(&c)))
                .collect::<SqlResult<Vec<_>>>()?
                .into_iter()
                .flatten()
                .collect();
            let mut key = table.keys[0].clone();
            let mut named = named;
            key.sort_unstable();
            named.sort_unstable();
            match key == named {
                true => Ok(()),
                false => Err(SqlError::unsupported(
                    "ON CONFLICT on columns other than the primary key",
                )),
            }
        }
        Some(other) => Err(SqlError::unsupported(format!("ON CONFLICT {other}"))),
    }
}
