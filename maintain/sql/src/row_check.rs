//! The checks DML makes of a row itself, before any commit judges it: the row read into
//! its table's column types, NOT NULL, and a second row of one primary key (the keyed
//! relation would keep one of them silently), each refused as PostgreSQL words it.

use crate::catalog::Table;
use crate::error::{ConstraintKind, SqlError, SqlResult};
use rnt_lang::conform::conform;
use rnt_lang::value::Value;

/// `row` in the table's column types, its NOT NULL columns checked.
pub(crate) fn conformed(table: &Table, row: Vec<Value>) -> SqlResult<Vec<Value>> {
    let row = typed(table, row)?;
    not_null(table, &row)?;
    Ok(row)
}

/// `row` in the table's column types; nulls anywhere (NOT NULL is judged on the row that is
/// written: an INSERT's proposed row that only updates a present one may hold a null in a
/// column the update leaves, as in DuckDB).
pub(crate) fn typed(table: &Table, row: Vec<Value>) -> SqlResult<Vec<Value>> {
    row.into_iter()
        .zip(&table.columns)
        .map(|(value, column)| {
            let ty = column.ty.expect("a table's columns have types");
            let ty = rnt_lang::value::ColumnType::nullable(ty.ty);
            conform(value, ty).map_err(|why| {
                SqlError::bind(format!(
                    "column `{}` of `{}`: the value {why}",
                    column.name, table.name
                ))
            })
        })
        .collect()
}

/// Refuses a null in a NOT NULL column of `row`, naming the constraint as PostgreSQL does.
pub(crate) fn not_null(table: &Table, row: &[Value]) -> SqlResult<()> {
    for (value, column) in row.iter().zip(&table.columns) {
        let nullable = column.ty.is_none_or(|t| t.nullable);
        if value.is_null() && !nullable {
            return Err(SqlError::constraint(ConstraintKind::NotNull, format!(
                "null value in column \"{}\" of relation \"{}\" violates not-null constraint {}_{}_not_null",
                column.name, table.name, table.name, column.name
            )));
        }
    }
    Ok(())
}

/// The violation of `table`'s primary key by a second row of `key`, as PostgreSQL words it.
pub(crate) fn pkey_violation(table: &Table, key: &[Value]) -> SqlError {
    let names: Vec<&str> = table.keys[0]
        .iter()
        .map(|&c| table.columns[c].name.as_str())
        .collect();
    let values: Vec<String> = key
        .iter()
        .map(|v| rnt_lang::diagnostic::clip(&v.to_string()).into_owned())
        .collect();
    SqlError::constraint(
        ConstraintKind::PrimaryKey,
        format!(
            "duplicate key value violates unique constraint \"{}_pkey\": ({})=({}) already exists",
            table.name,
            names.join(", "),
            values.join(", ")
        ),
    )
}
