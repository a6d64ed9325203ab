//! Change files and inline changes: parsing and checking against the relations' schemas.
//!
//! ```text
//! # one change per line; `#` starts a comment (outside strings); blank lines are ignored
//! +orders(1, 7, 30)          # insert a tuple
//! -customers(3, "pro")       # delete a tuple
//! +flags(-12, "a\"b\u00e9", true)
//! ```
//!
//! A change is `+` (insert) or `-` (delete), a relation name, and its values in
//! parentheses: ints (decimal, may be negative, within i64), double-quoted strings with
//! JSON escapes, `true`/`false`. Spaces and tabs may surround every token.
//!
//! [`parse_changes`] turns text into [`Change`]s; [`check_changes`] checks them against the
//! schemas (relation known, arity, types, size) and that one change set names each tuple at
//! most once, giving a [`ChangeSet`]. Errors are one line and name the place:
//! `changes.txt, line 3, column 14: expected `,` or `)` after value, found `x``.

use std::collections::hash_map::{Entry, HashMap};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::lang::diagnostic::clip;
use crate::lang::literal::unescape_json_string;
use crate::lang::schema::RelationSchema;
use crate::lang::tuple::{check_tuple, TupleDisplay, TupleError, TUPLE_BYTES_MAX};
use crate::lang::value::Value;

/// Whether a change inserts or deletes its tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sign {
    /// `+`: insert the tuple (a no-op when present).
    Insert,
    /// `-`: delete the tuple (a no-op when absent).
    Delete,
}

impl fmt::Display for Sign {
    /// `+` or `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sign::Insert => "+",
            Sign::Delete => "-",
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
    /// The tuple's values, in the order written.
    pub values: Vec<Value>,
    /// The line (1-based) the change is on.
    pub line: usize,
    /// What the change was read from (a file name, `argument 2`), if labelled.
    pub source: Option<Arc<str>>,
}

impl Change {
    /// The change's tuple in change-file syntax without the sign: `orders(1, 7, 30)`.
    pub fn tuple(&self) -> TupleDisplay<'_> {
        TupleDisplay {
            relation: &self.relation,
            values: &self.values,
        }
    }
}

impl fmt::Display for Change {
    /// Change-file syntax: `+orders(1, 7, 30)`. [`parse_changes`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.sign, self.tuple())
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

/// Parses a change file (or inline changes): one change per line, `#` comments, blank
/// lines ignored. `source` labels the changes and any error (a file name, `argument 2`).
/// Stops at the first error.
pub fn parse_changes(text: &str, source: Option<&str>) -> Result<Vec<Change>, ChangeError> {
    let source: Option<Arc<str>> = source.map(Arc::from);
    let mut changes = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let mut parser = LineParser {
            text: line,
            pos: 0,
            line: index + 1,
            source: &source,
        };
        if let Some(change) = parser.change()? {
            changes.push(change);
        }
    }
    Ok(changes)
}

/// Parses exactly one change, e.g. a `CHANGE` argument of `rnt commit`; comments and blank
/// lines around it are allowed.
pub fn parse_change(text: &str, source: Option<&str>) -> Result<Change, ChangeError> {
    let mut changes = parse_changes(text, source)?.into_iter();
    match (changes.next(), changes.next()) {
        (Some(change), None) => Ok(change),
        (None, _) => Err(ChangeError {
            source: source.map(Arc::from),
            line: 1,
            column: None,
            message: "expected a change like `+orders(1, 7, 30)`, found none".to_string(),
        }),
        (Some(first), Some(second)) => Err(ChangeError {
            source: second.source.clone(),
            line: second.line,
            column: None,
            message: format!(
                "expected one change, found a second one after `{}`",
                clip(&first.to_string())
            ),
        }),
    }
}

/// Parses one line of a change file.
struct LineParser<'a> {
    text: &'a str,
    /// Byte offset of the next unread character.
    pos: usize,
    line: usize,
    source: &'a Option<Arc<str>>,
}

impl<'a> LineParser<'a> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_blanks(&mut self) {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t']);
        self.pos += rest.len() - trimmed.len();
    }

    /// An error at byte offset `at` of the line.
    fn error_at(&self, at: usize, message: String) -> ChangeError {
        ChangeError {
            source: self.source.clone(),
            line: self.line,
            column: Some(self.text[..at].chars().count() + 1),
            message,
        }
    }

    /// ``expected {what}, found {the next token}`` at the current position.
    fn expected(&self, what: &str) -> ChangeError {
        self.error_at(self.pos, format!("expected {what}, found {}", self.found()))
    }

    /// Names the next token for a message: `` `word` ``, `` `c` `` or `end of line`.
    fn found(&self) -> String {
        let rest = self.rest();
        match rest.chars().next() {
            None => "end of line".to_string(),
            Some(' ') => "a space".to_string(),
            Some('\t') => "a tab".to_string(),
            Some(c) if c.is_alphanumeric() || c == '_' => {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                format!("`{}`", clip(&rest[..end]))
            }
            Some(c) => format!("`{c}`"),
        }
    }

    /// The line's change, or `None` for a blank or comment-only line.
    fn change(&mut self) -> Result<Option<Change>, ChangeError> {
        self.skip_blanks();
        let sign = match self.peek() {
            None | Some('#') => return Ok(None),
            Some('+') => Sign::Insert,
            Some('-') => Sign::Delete,
            Some(_) => return Err(self.expected("`+` or `-` at the start of a change")),
        };
        self.pos += 1;
        self.skip_blanks();
        let relation = self
            .identifier()
            .ok_or_else(|| self.expected(&format!("a relation name after `{sign}`")))?;
        self.skip_blanks();
        if self.peek() != Some('(') {
            return Err(self.expected("`(` after the relation name"));
        }
        self.pos += 1;
        self.skip_blanks();
        let mut values = Vec::new();
        if self.peek() == Some(')') {
            self.pos += 1;
        } else {
            loop {
                values.push(self.value()?);
                self.skip_blanks();
                match self.peek() {
                    Some(',') => {
                        self.pos += 1;
                        self.skip_blanks();
                    }
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.expected("`,` or `)` after value")),
                }
            }
        }
        self.skip_blanks();
        match self.peek() {
            None | Some('#') => {}
            Some(_) => return Err(self.expected("end of line or a `#` comment after `)`")),
        }
        Ok(Some(Change {
            sign,
            relation: relation.to_string(),
            values,
            line: self.line,
            source: self.source.clone(),
        }))
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`, if one starts here.
    fn identifier(&mut self) -> Option<&'a str> {
        let text: &'a str = self.text;
        let rest = &text[self.pos..];
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return None;
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.pos += end;
        Some(&rest[..end])
    }

    /// An int, a string or a bool.
    fn value(&mut self) -> Result<Value, ChangeError> {
        let start = self.pos;
        match self.peek() {
            Some('"') => self.string(),
            Some('-') | Some('0'..='9') => {
                let negative = self.peek() == Some('-');
                if negative {
                    self.pos += 1;
                }
                let digits = self.rest().len()
                    - self
                        .rest()
                        .trim_start_matches(|c: char| c.is_ascii_digit())
                        .len();
                if digits == 0 {
                    return Err(self.expected("digits after `-`"));
                }
                self.pos += digits;
                let text = &self.text[start..self.pos];
                text.parse::<i64>().map(Value::Int).map_err(|_| {
                    self.error_at(
                        start,
                        format!(
                            "integer {} is out of range for int ({} to {})",
                            clip(text),
                            i64::MIN,
                            i64::MAX
                        ),
                    )
                })
            }
            _ => match self.identifier() {
                Some("true") => Ok(Value::Bool(true)),
                Some("false") => Ok(Value::Bool(false)),
                _ => {
                    self.pos = start;
                    Err(self
                        .expected("a value (an int, a string in double quotes, `true` or `false`)"))
                }
            },
        }
    }

    /// A double-quoted string with JSON escapes; the cursor is on the opening quote.
    fn string(&mut self) -> Result<Value, ChangeError> {
        let start = self.pos;
        let body_start = start + 1;
        let mut escaped = false;
        let mut body_end = None;
        for (offset, c) in self.text[body_start..].char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    body_end = Some(body_start + offset);
                    break;
                }
                _ => {}
            }
        }
        let Some(body_end) = body_end else {
            return Err(self.error_at(
                start,
                "string is not closed: expected `\"` before end of line".to_string(),
            ));
        };
        let text = unescape_json_string(&self.text[body_start..body_end])
            .map_err(|message| self.error_at(start, message))?;
        self.pos = body_end + 1;
        Ok(Value::Str(text))
    }
}

/// Changes checked against the schemas: every relation is known, every tuple has the
/// relation's arity and types and fits [`TUPLE_BYTES_MAX`], and no tuple is named twice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeSet {
    changes: Vec<Change>,
}

impl ChangeSet {
    /// The changes in the order written.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The changes in the order written, by value.
    pub fn into_changes(self) -> Vec<Change> {
        self.changes
    }

    /// The number of changes.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Whether there are no changes.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The changes grouped by relation name (names in sorted order, changes in the order
    /// written).
    pub fn by_relation(&self) -> BTreeMap<&str, Vec<&Change>> {
        let mut groups: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        for change in &self.changes {
            groups.entry(&change.relation).or_default().push(change);
        }
        groups
    }
}

/// Checks parsed changes against the schemas `lookup` returns by relation name: the
/// relation is known, the tuple has its arity and types and fits [`TUPLE_BYTES_MAX`], and
/// the change set names each tuple at most once (an update is `-old` plus `+new`). Stops at
/// the first error, which names the change's line.
pub fn check_changes<'s>(
    changes: Vec<Change>,
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<ChangeSet, ChangeError> {
    // Where each tuple was first named: (relation, values) -> index into `changes`.
    let mut seen: HashMap<(&str, &[Value]), usize> = HashMap::new();
    for (index, change) in changes.iter().enumerate() {
        let error = |message: String| ChangeError {
            source: change.source.clone(),
            line: change.line,
            column: None,
            message,
        };
        let schema = lookup(&change.relation)
            .ok_or_else(|| error(format!("unknown relation `{}`", change.relation)))?;
        if change.values.len() != schema.arity() {
            return Err(error(format!(
                "{} takes {} value{}, found {}",
                schema.name,
                schema.arity(),
                if schema.arity() == 1 { "" } else { "s" },
                change.values.len()
            )));
        }
        for (position, (value, attribute)) in
            change.values.iter().zip(&schema.attributes).enumerate()
        {
            if value.ty() != attribute.ty {
                return Err(error(format!(
                    "value {} of {} ({}) must be {}, found {value}",
                    position + 1,
                    schema.name,
                    attribute.name,
                    attribute.ty
                )));
            }
        }
        match check_tuple(&change.values, &schema.types()) {
            Ok(_) => {}
            Err(TupleError::TooLarge { bytes }) => {
                return Err(error(format!(
                "tuple of {} encodes to {bytes} bytes, more than the limit of {TUPLE_BYTES_MAX}",
                schema.name
            )))
            }
            Err(other) => return Err(error(other.to_string())),
        }
        match seen.entry((&change.relation, &change.values)) {
            Entry::Vacant(slot) => {
                slot.insert(index);
            }
            Entry::Occupied(slot) => {
                let first = &changes[*slot.get()];
                let place = match &first.source {
                    Some(source) if first.source != change.source => {
                        format!("in {source}, line {}", first.line)
                    }
                    _ => format!("on line {}", first.line),
                };
                return Err(error(format!(
                    "{} is already changed {place}",
                    change.tuple()
                )));
            }
        }
    }
    Ok(ChangeSet { changes })
}
