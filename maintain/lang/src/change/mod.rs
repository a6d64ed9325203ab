//! Change files and inline changes: parsing and checking against the relations' schemas.
//!
//! ```text
//! # one change per line; `#` starts a comment (outside strings); blank lines are ignored
//! +orders(1, 7, 30)          # insert a tuple
//! -customers(3, "pro")       # delete a tuple
//! +flags(-12, "a\"b\u00e9", true)
//! -customers(7, _)           # delete by key: customers is `key(id)`
//! ```
//!
//! A change is `+` (insert) or `-` (delete), a relation name, and its values in
//! parentheses: ints (decimal, may be negative, within i64), double-quoted strings with
//! JSON escapes, `true`/`false`. Spaces and tabs may surround every token. In a delete from
//! a keyed relation, `_` may stand for a non-key value: the delete removes whatever tuple
//! holds the key (a delete by key).
//!
//! [`parse_changes`] turns text into [`Change`]s; [`check_changes`] checks them against the
//! schemas (relation known, arity, types, size, `_` only where allowed) and that one change
//! set names each tuple at most once and each key of a keyed relation at most once per
//! sign, giving a [`ChangeSet`]. Errors are one line and name the place:
//! `changes.txt, line 3, column 14: expected `,` or `)` after value, found `x``.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::conform::conform;
use crate::decimal::Decimal;
use crate::diagnostic::clip;
use crate::literal::unescape_json_string;
use crate::schema::RelationSchema;
use crate::tuple::{check_tuple, TupleDisplay, TupleError, TUPLE_BYTES_MAX};
use crate::value::{ColumnType, Type, Value};

/// Whether a change inserts or deletes its tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sign {
    /// `+`: insert the tuple (a no-op when present).
    Insert,
    /// `-`: delete the tuple (a no-op when absent).
    Delete,
    /// `~`: update by key: the tuple with the change's key gets the values named, keeps the
    /// others (`_`); no tuple with that key is an error. Only for keyed relations.
    Update,
}

impl fmt::Display for Sign {
    /// `+` or `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sign::Insert => "+",
            Sign::Delete => "-",
            Sign::Update => "~",
        })
    }
}

/// One change as written: sign, relation, values, and where it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Change {
    /// Insert or delete.
    pub sign: Sign,
    /// The relation's name.
    pub relation: String,
    /// The tuple's values, in the order written, without the `_`s (see `wildcards`).
    pub values: Vec<Value>,
    /// For a change written with named columns (`+flights(id: 1, carrier: "UA")`), the
    /// column each value names, in the order written; empty for a positional change.
    /// [`resolve_named`] turns a named change into a positional one.
    pub names: Vec<String>,
    /// The positions (0-based, ascending, among all the terms written) where `_` stands
    /// for any value: a delete by key. Empty for an exact change (every change but
    /// `-r(7, _)`), so `values` is then the whole tuple.
    pub wildcards: Vec<usize>,
    /// The line (1-based) the change is on.
    pub line: usize,
    /// What the change was read from (a file name, `argument 2`), if labelled.
    pub source: Option<Arc<str>>,
}

impl Change {
    /// An exact change (no `_`) of `values` in `relation`, labelled with its line and source.
    pub fn exact(
        sign: Sign,
        relation: impl Into<String>,
        values: Vec<Value>,
        line: usize,
        source: Option<Arc<str>>,
    ) -> Change {
        Change {
            sign,
            relation: relation.into(),
            values,
            names: Vec::new(),
            wildcards: Vec::new(),
            line,
            source,
        }
    }

    /// The change's tuple in change-file syntax without the sign: `orders(1, 7, 30)`. Only
    /// for exact changes; [`fmt::Display`] shows the `_`s of a delete by key.
    pub fn tuple(&self) -> TupleDisplay<'_> {
        TupleDisplay {
            relation: &self.relation,
            values: &self.values,
        }
    }

    /// Whether every value is given (no `_`) and by position: the change is its tuple.
    pub fn is_exact(&self) -> bool {
        self.wildcards.is_empty() && self.names.is_empty()
    }

    /// The terms as written: `Some(value)`, or `None` where `_` stands.
    pub fn pattern(&self) -> Vec<Option<&Value>> {
        let mut values = self.values.iter();
        (0..self.values.len() + self.wildcards.len())
            .map(|position| {
                if self.wildcards.binary_search(&position).is_ok() {
                    None
                } else {
                    values.next()
                }
            })
            .collect()
    }
}

impl fmt::Display for Change {
    /// Change-file syntax: `+orders(1, 7, 30)`, `-customers(7, _)`. [`parse_changes`] reads
    /// it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_exact() {
            return write!(f, "{}{}", self.sign, self.tuple());
        }
        write!(f, "{}{}(", self.sign, self.relation)?;
        if !self.names.is_empty() {
            for (i, (name, value)) in self.names.iter().zip(&self.values).enumerate() {
                let comma = if i > 0 { ", " } else { "" };
                write!(f, "{comma}{name}: {value}")?;
            }
            return f.write_str(")");
        }
        for (i, term) in self.pattern().into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match term {
                Some(value) => write!(f, "{value}")?,
                None => f.write_str("_")?,
            }
        }
        f.write_str(")")
    }
}

/// A change that cannot be parsed or checked. Displays as one line: the place (source,
/// line, column when known), then what is wrong and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeError {
    /// What the change was read from, if labelled.
    pub source: Option<Arc<str>>,
    /// The line (1-based).
    pub line: usize,
    /// The column (1-based, in characters), when the error is at one spot of the line.
    pub column: Option<usize>,
    /// What is wrong, e.g. ``expected `,` or `)` after value, found `x` ``.
    pub message: String,
}

impl fmt::Display for ChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = Place {
            source: self.source.as_deref(),
            line: self.line,
            column: self.column,
        };
        write!(f, "{place}{}", self.message)
    }
}

// Written by hand: thiserror would take the `source` field for the error's cause.
impl std::error::Error for ChangeError {}

/// Formats `[source, ]line L[, column C]: `.
struct Place<'a> {
    source: Option<&'a str>,
    line: usize,
    column: Option<usize>,
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(source) = self.source {
            write!(f, "{source}, ")?;
        }
        write!(f, "line {}", self.line)?;
        if let Some(column) = self.column {
            write!(f, ", column {column}")?;
        }
        f.write_str(": ")
    }
}

mod check;
mod named;
mod parse;

pub use check::{check_change_slice, check_changes, conform_changes, key_text, ChangeSet};
pub use named::resolve_named;
pub use parse::{parse_change, parse_changes};
