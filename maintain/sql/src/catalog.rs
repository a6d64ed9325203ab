//! What SQL sees of a state: its relations as tables and views, with their columns and
//! types, whether their rows may repeat, and the keys that identify a row.
//!
//! A relation whose last attribute is `_count: int` is a **bag**: each tuple is a distinct
//! row, `_count` its multiplicity (≥ 1). Tables created without a PRIMARY KEY and views
//! whose rows may repeat are bags; everything else is a set (each row once).

use rnt_lang::check::Program;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::{ColumnType, Type, Value};
use std::collections::BTreeMap;

/// The name of a bag relation's multiplicity column.
pub const COUNT_COLUMN: &str = "_count";

/// A column SQL can name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name (lower case).
    pub name: String,
    /// Its type; `None` where the lowering has not inferred it (a helper's column).
    pub ty: Option<ColumnType>,
}

/// A relation SQL can read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The relation's name.
    pub name: String,
    /// Its kind (a table is a base relation).
    pub kind: RelationKind,
    /// The columns SQL sees (a bag's `_count` is not among them).
    pub columns: Vec<Column>,
    /// Whether it holds a `_count` after its columns.
    pub bag: bool,
    /// Sets of columns (by position) that identify a row: the declared key, and for any
    /// set, all its columns. Empty for a bag.
    pub keys: Vec<Vec<usize>>,
}

impl Table {
    /// The position of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The relation's arity in the rule language (with `_count` for a bag).
    pub fn arity(&self) -> usize {
        self.columns.len() + usize::from(self.bag)
    }
}

/// Every relation of a state, by name.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    tables: BTreeMap<String, Table>,
    /// Each base relation's column defaults (`default v` in its declaration), by position.
    defaults: BTreeMap<String, Vec<Option<Value>>>,
}

impl Catalog {
    /// The catalog of a checked program.
    pub fn of(program: &Program) -> Catalog {
        let defaults = program
            .relations
            .iter()
            .map(|(name, relation)| {
                let attributes = &relation.declaration.attributes;
                (
                    name.clone(),
                    attributes.iter().map(|a| a.default.clone()).collect(),
                )
            })
            .collect();
        let tables = program
            .relations
            .iter()
            .map(|(name, relation)| {
                let declaration = &relation.declaration;
                let mut columns: Vec<Column> = declaration
                    .attributes
                    .iter()
                    .map(|a| Column {
                        name: a.name.name.clone(),
                        ty: Some(ColumnType {
                            ty: a.ty,
                            nullable: a.nullable,
                        }),
                    })
                    .collect();
                let bag = columns.last().is_some_and(|c| {
                    c.name == COUNT_COLUMN && c.ty.is_some_and(|t| t.ty == Type::Int)
                });
                if bag {
                    columns.pop();
                }
                let mut keys = Vec::new();
                if let Some(key) = &declaration.key {
                    let positions = key
                        .columns
                        .iter()
                        .filter_map(|k| columns.iter().position(|c| c.name == k.name))
                        .collect();
                    keys.push(positions);
                }
                if !bag {
                    keys.push((0..columns.len()).collect());
                }
                let table = Table {
                    name: name.clone(),
                    kind: declaration.kind,
                    columns,
                    bag,
                    keys,
                };
                (name.clone(), table)
            })
            .collect();
        Catalog { tables, defaults }
    }

    /// The value an INSERT gives column `column` of `table` when it names none: the
    /// column's DEFAULT, else null.
    pub fn default_of(&self, table: &str, column: usize) -> Value {
        self.defaults
            .get(table)
            .and_then(|d| d.get(column).cloned().flatten())
            .unwrap_or(Value::Null)
    }

    /// The relation named `name`.
    pub fn get(&self, name: &str) -> Option<&Table> {
        self.tables.get(name)
    }

    /// Every relation's name, for "did you mean".
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tables.keys().map(String::as_str)
    }
}
