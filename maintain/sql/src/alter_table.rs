//! ALTER TABLE onto `rnt alter` (DESIGN: Schema changes): one operation per statement, one
//! commit, the rules rewritten with the table and the views kept current as `rnt alter`
//! keeps them.
//!
//! | SQL | `rnt alter` |
//! |---|---|
//! | `ADD [COLUMN] c T [NOT NULL] [DEFAULT v]` | `add c T[?] [--default v]` |
//! | `DROP [COLUMN] c` | `drop c` |
//! | `RENAME [COLUMN] c TO d` | `rename c d` |
//! | `RENAME TO t2` | `rename-to t2` |
//! | `ALTER [COLUMN] c [SET DATA] TYPE T` | `type c T` (widening; nullability kept) |
//! | `ALTER [COLUMN] c DROP NOT NULL` | `type c T?` |
//! | `ADD PRIMARY KEY (c, …)` / `DROP PRIMARY KEY` | `key c …` / `key --none` |
//!
//! A table without a PRIMARY KEY is a bag whose last column counts each row's copies
//! (`_count`): adding or dropping a column of it, or giving it a key, would have to move or
//! sum those counts, which `rnt alter` does not do, so those are "not supported" there.

use crate::catalog::{Catalog, Table};
use crate::error::{SqlError, SqlResult};
use crate::names;
use rnt_lang::alter::Alteration;
use rnt_lang::value::ColumnType;
use sqlparser::ast::{
    AlterColumnOperation, AlterTable, AlterTableOperation, ColumnOption, Expr, RenameTableNameKind,
    TableConstraint, UnaryOperator, Value,
};

/// What an ALTER TABLE asks of `rnt alter`.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The table.
    pub relation: String,
    /// The change.
    pub alteration: Alteration,
    /// An added column's fill, as a change file writes a value.
    pub default: Option<String>,
}

/// The `rnt alter` an ALTER TABLE statement is.
pub fn plan(alter: &AlterTable, catalog: &Catalog) -> SqlResult<Planned> {
    let relation = names::object(&alter.name)?;
    let table = catalog
        .get(&relation)
        .filter(|t| t.kind == rnt_lang::syntax::ast::RelationKind::Relation)
        .ok_or_else(|| SqlError::unknown_relation(format!("unknown table `{relation}`")))?;
    let [operation] = alter.operations.as_slice() else {
        return Err(SqlError::unsupported(
            "ALTER TABLE with more than one operation (write one statement each: each is a commit)",
        ));
    };
    let (alteration, default) = operation_of(operation, table)?;
    Ok(Planned {
        relation,
        alteration,
        default,
    })
}

/// The alteration (and an added column's default) of one operation.
fn operation_of(
    operation: &AlterTableOperation,
    table: &Table,
) -> SqlResult<(Alteration, Option<String>)> {
    use AlterTableOperation as Op;
    let bag_refuses = |what: &str| -> SqlResult<()> {
        match table.bag {
            true => Err(SqlError::unsupported(format!(
                "{what} on a table without a PRIMARY KEY (its rows' copies are counted in `_count`, which the change would have to move)"
            ))),
            false => Ok(()),
        }
    };
    Ok(match operation {
        Op::AddColumn { column_def, .. } => {
            bag_refuses("ADD COLUMN")?;
            let column = names::new_name(&column_def.name)?;
            let ty = crate::types::of(&column_def.data_type)?;
            let mut nullable = true;
            let mut default = None;
            for option in &column_def.options {
                match &option.option {
                    ColumnOption::NotNull => nullable = false,
                    ColumnOption::Null => {}
                    ColumnOption::Default(value) => default = Some(literal_text(value)?),
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "the column option `{other}` in ALTER TABLE ADD COLUMN"
                        )))
                    }
                }
            }
            let column_type = ColumnType { ty, nullable };
            (
                Alteration::Add {
                    column,
                    column_type,
                },
                default,
            )
        }
        Op::DropColumn { column_names, .. } => {
            bag_refuses("DROP COLUMN")?;
            let [column] = column_names.as_slice() else {
                return Err(SqlError::unsupported("DROP COLUMN of more than one column"));
            };
            let column = existing(table, column)?;
            (Alteration::Drop { column }, None)
        }
        Op::RenameColumn {
            old_column_name,
            new_column_name,
        } => (
            Alteration::Rename {
                column: existing(table, old_column_name)?,
                new: names::new_name(new_column_name)?,
            },
            None,
        ),
        Op::RenameTable { table_name } => {
            let (RenameTableNameKind::To(name) | RenameTableNameKind::As(name)) = table_name;
            (
                Alteration::RenameTo {
                    new: names::object(name)?,
                },
                None,
            )
        }
        Op::AlterColumn { column_name, op } => (column_alteration(table, column_name, op)?, None),
        Op::AddConstraint { constraint, .. } => {
            bag_refuses("ADD PRIMARY KEY")?;
            (primary_key(table, constraint)?, None)
        }
        Op::DropPrimaryKey { .. } => {
            bag_refuses("DROP PRIMARY KEY")?;
            (
                Alteration::Key {
                    columns: Vec::new(),
                },
                None,
            )
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "ALTER TABLE … {}",
                crate::error::clip(other)
            )))
        }
    })
}

/// The name of `table`'s column `ident`, which must exist.
fn existing(table: &Table, ident: &sqlparser::ast::Ident) -> SqlResult<String> {
    let name = names::ident(ident)?;
    match table.column(&name) {
        Some(_) => Ok(name),
        None => Err(SqlError::unknown_column(format!(
            "`{}` has no column `{name}`",
            table.name
        ))),
    }
}

/// ALTER COLUMN: a new type (nullability kept), or DROP NOT NULL.
fn column_alteration(
    table: &Table,
    ident: &sqlparser::ast::Ident,
    op: &AlterColumnOperation,
) -> SqlResult<Alteration> {
    let column = existing(table, ident)?;
    let current = table
        .column(&column)
        .and_then(|i| table.columns[i].ty)
        .ok_or_else(|| SqlError::bind(format!("`{column}` has no declared type")))?;
    let column_type = match op {
        AlterColumnOperation::SetDataType {
            data_type, using, ..
        } => {
            if using.is_some() {
                return Err(SqlError::unsupported("ALTER COLUMN … TYPE … USING"));
            }
            ColumnType {
                ty: crate::types::of(data_type)?,
                nullable: current.nullable,
            }
        }
        AlterColumnOperation::DropNotNull => ColumnType {
            ty: current.ty,
            nullable: true,
        },
        AlterColumnOperation::SetNotNull => {
            return Err(SqlError::unsupported(
                "SET NOT NULL (a narrowing: rnt alter only widens a column)",
            ))
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "ALTER COLUMN … {}",
                crate::error::clip(other)
            )))
        }
    };
    Ok(Alteration::Type {
        column,
        column_type,
    })
}

/// ADD PRIMARY KEY (c, …).
fn primary_key(table: &Table, constraint: &TableConstraint) -> SqlResult<Alteration> {
    let TableConstraint::PrimaryKey(key) = constraint else {
        return Err(SqlError::unsupported(
            "ADD CONSTRAINT other than PRIMARY KEY in ALTER TABLE (yet)",
        ));
    };
    let columns = key
        .columns
        .iter()
        .map(|c| match &c.column.expr {
            Expr::Identifier(ident) => existing(table, ident),
            other => Err(SqlError::unsupported(format!(
                "a key on the expression `{}`",
                crate::error::clip(other)
            ))),
        })
        .collect::<SqlResult<Vec<_>>>()?;
    Ok(Alteration::Key { columns })
}

/// A DEFAULT's literal as a change file writes it: `7`, `-2.50`, `"text"`, `true`, `null`.
fn literal_text(expr: &Expr) -> SqlResult<String> {
    match expr {
        Expr::Value(value) => match &value.value {
            Value::Number(text, _) => Ok(text.clone()),
            Value::SingleQuotedString(text) => Ok(format!(
                "\"{}\"",
                text.replace('\\', "\\\\").replace('"', "\\\"")
            )),
            Value::Boolean(b) => Ok(b.to_string()),
            Value::Null => Ok("null".to_string()),
            other => Err(SqlError::unsupported(format!("the DEFAULT `{other}`"))),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => Ok(format!("-{}", literal_text(expr)?)),
        Expr::Nested(inner) => literal_text(inner),
        other => Err(SqlError::unsupported(format!(
            "the DEFAULT `{}` (a literal is supported)",
            crate::error::clip(other)
        ))),
    }
}
