//! The columns a SELECT block's FROM clause brings into scope, each under its source's
//! name or alias.

use super::{Bound, NotYet};
use crate::ir::{Field, Ty};
use crate::names;
use sqlparser::ast::Ident;

/// One FROM item's columns.
#[derive(Clone, Debug)]
pub struct Source {
    /// The name SQL qualifies its columns with (the alias, else the relation's name).
    pub alias: String,
    /// Its columns.
    pub fields: Vec<Field>,
    /// The position of its first column in the block's input row.
    pub offset: usize,
}

/// The sources of a block, in FROM order; their columns are consecutive in the input row.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The sources.
    pub sources: Vec<Source>,
}

impl Scope {
    /// The number of columns in the input row.
    pub fn width(&self) -> usize {
        self.sources.iter().map(|s| s.fields.len()).sum()
    }

    /// Adds a source after the others; refused when its alias is taken.
    pub fn push(&mut self, alias: String, fields: Vec<Field>) -> Bound<()> {
        if self.sources.iter().any(|s| s.alias == alias) {
            return Err(NotYet("a FROM name used twice"));
        }
        let offset = self.width();
        self.sources.push(Source {
            alias,
            fields,
            offset,
        });
        Ok(())
    }

    /// The column `parts` names (`c` or `t.c`): its input position and type.
    pub fn resolve(&self, parts: &[Ident]) -> Bound<(usize, Ty)> {
        let parts: Vec<String> = parts
            .iter()
            .map(names::ident)
            .collect::<Result<_, _>>()
            .map_err(|_| NotYet("a name the language cannot hold"))?;
        let found: Vec<(usize, Ty)> = match parts.as_slice() {
            [column] => self
                .sources
                .iter()
                .flat_map(|s| Self::column_of(s, column))
                .collect(),
            [table, column] => self
                .sources
                .iter()
                .filter(|s| s.alias == *table)
                .flat_map(|s| Self::column_of(s, column))
                .collect(),
            _ => return Err(NotYet("a name of three parts")),
        };
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(NotYet("an unknown column")),
            _ => Err(NotYet("an ambiguous column")),
        }
    }

    fn column_of(source: &Source, column: &str) -> Option<(usize, Ty)> {
        let position = source.fields.iter().position(|f| f.name == column)?;
        Some((source.offset + position, source.fields[position].ty))
    }
}
