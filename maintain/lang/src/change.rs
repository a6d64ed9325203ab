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

use std::collections::hash_map::{Entry, HashMap};
use std::collections::BTreeMap;
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
    /// The tuple's values, in the order written, without the `_`s (see `wildcards`).
    pub values: Vec<Value>,
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

    /// Whether every value is given (no `_`).
    pub fn is_exact(&self) -> bool {
        self.wildcards.is_empty()
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
        let mut wildcards = Vec::new();
        if self.peek() == Some(')') {
            self.pos += 1;
        } else {
            loop {
                if self.wildcard() {
                    if sign == Sign::Insert {
                        return Err(self.error_at(
                            self.pos - 1,
                            "`_` is allowed only in a delete (`-r(7, _)` deletes by key): \
                             an insert names every value"
                                .to_string(),
                        ));
                    }
                    wildcards.push(values.len() + wildcards.len());
                } else {
                    values.push(self.value()?);
                }
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
            wildcards,
            line: self.line,
            source: self.source.clone(),
        }))
    }

    /// Consumes a `_` standing alone (not the start of a longer name), if one is here.
    fn wildcard(&mut self) -> bool {
        let rest = self.rest();
        let alone = rest.starts_with('_')
            && !rest[1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        if alone {
            self.pos += 1;
        }
        alone
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

    /// A value: an int, a decimal (`12.50`, `-0.5`), a string, `true`/`false`, `null`,
    /// `date("2013-01-01")` or `timestamp("2013-01-01T05:00:00Z")`.
    fn value(&mut self) -> Result<Value, ChangeError> {
        let start = self.pos;
        match self.peek() {
            Some('"') => self.string(),
            Some('-') | Some('0'..='9') => self.number(),
            _ => match self.identifier() {
                Some("true") => Ok(Value::Bool(true)),
                Some("false") => Ok(Value::Bool(false)),
                Some("null") => Ok(Value::Null),
                Some(function @ ("date" | "timestamp")) => self.dated(start, function),
                _ => {
                    self.pos = start;
                    Err(self.expected(
                        "a value (an int, a decimal, a string in double quotes, `true`, \
                         `false`, `null`, date(\"…\") or timestamp(\"…\"))",
                    ))
                }
            },
        }
    }

    /// An int or, with a `.` between digits, a decimal; the cursor is on `-` or a digit.
    fn number(&mut self) -> Result<Value, ChangeError> {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        let digits =
            |rest: &str| rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let whole = digits(self.rest());
        if whole == 0 {
            return Err(self.expected("digits after `-`"));
        }
        self.pos += whole;
        let fraction = self.rest().strip_prefix('.').map_or(0, digits);
        if fraction > 0 {
            self.pos += 1 + fraction;
            let text = &self.text[start..self.pos];
            return Decimal::parse(text).map(Value::Decimal).ok_or_else(|| {
                self.error_at(
                    start,
                    format!("decimal {} has more than 38 digits", clip(text)),
                )
            });
        }
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

    /// `date("…")` or `timestamp("…")`, the name read already (from `start`).
    fn dated(&mut self, start: usize, function: &str) -> Result<Value, ChangeError> {
        self.skip_blanks();
        if self.peek() != Some('(') {
            return Err(self.expected(&format!("`(` after `{function}`")));
        }
        self.pos += 1;
        self.skip_blanks();
        if self.peek() != Some('"') {
            return Err(self.expected(&format!("a string in double quotes in `{function}(…)`")));
        }
        let Value::Str(text) = self.string()? else {
            unreachable!("a string literal reads as a string");
        };
        self.skip_blanks();
        if self.peek() != Some(')') {
            return Err(self.expected(&format!("`)` closing `{function}(…)`")));
        }
        self.pos += 1;
        let column = match function {
            "date" => ColumnType::of(Type::Date),
            _ => ColumnType::of(Type::Timestamp),
        };
        conform(Value::Str(text), column).map_err(|message| self.error_at(start, message))
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
/// relation is known, the tuple has its arity and types and fits [`TUPLE_BYTES_MAX`], `_`
/// stands only for non-key values in a delete from a keyed relation, the change set names
/// each tuple at most once (an update is `-old` plus `+new`) and each key of a keyed
/// relation at most once per sign (two inserts with one key, or two deletes, would leave
/// which one wins to the order of lines). Stops at the first error, which names the
/// change's line.
pub fn check_changes<'s>(
    changes: Vec<Change>,
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<ChangeSet, ChangeError> {
    check_change_slice(&changes, lookup)?;
    Ok(ChangeSet { changes })
}

/// Reads each value of `changes` into its column (a column's type decides how its value
/// is read: an int or a decimal into a `decimal(p, s)`, a string into a `date`, `null`
/// into a `T?`; see `crate::conform`), before [`check_change_slice`] checks them. Changes
/// of an unknown relation or with another arity are left for that check to report.
pub fn conform_changes<'s>(
    changes: &mut [Change],
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<(), ChangeError> {
    for change in changes.iter_mut() {
        let Some(schema) = lookup(&change.relation) else {
            continue;
        };
        if change.values.len() + change.wildcards.len() != schema.arity() {
            continue;
        }
        let columns: Vec<usize> = (0..schema.arity())
            .filter(|c| change.wildcards.binary_search(c).is_err())
            .collect();
        for (value, &column) in change.values.iter_mut().zip(&columns) {
            let attribute = &schema.attributes[column];
            let read = conform(
                std::mem::replace(value, Value::Null),
                attribute.column_type(),
            );
            *value = read.map_err(|why| ChangeError {
                source: change.source.clone(),
                line: change.line,
                column: None,
                message: value_error(column, schema, &why),
            })?;
        }
    }
    Ok(())
}

/// [`check_changes`] on borrowed changes: the same checks, the same first error.
pub fn check_change_slice<'s>(
    changes: &[Change],
    lookup: impl Fn(&str) -> Option<&'s RelationSchema>,
) -> Result<(), ChangeError> {
    let mut named = NamedOnce::default();
    // Each relation's column types, found once.
    let mut types_of: HashMap<&str, Vec<ColumnType>> = HashMap::new();
    for (index, change) in changes.iter().enumerate() {
        let error = |message: String| ChangeError {
            source: change.source.clone(),
            line: change.line,
            column: None,
            message,
        };
        let schema = lookup(&change.relation)
            .ok_or_else(|| error(format!("unknown relation `{}`", change.relation)))?;
        let types = types_of
            .entry(change.relation.as_str())
            .or_insert_with(|| schema.types());
        check_against_schema(change, schema, types).map_err(error)?;
        named.note(changes, index, schema).map_err(error)?;
    }
    Ok(())
}

/// `value N of R (A) …`: what is wrong with the value at `column` of a change of `schema`.
fn value_error(column: usize, schema: &RelationSchema, why: &str) -> String {
    let attribute = &schema.attributes[column].name;
    let joint = if why.starts_with("must be") || why.starts_with("is ") {
        " "
    } else {
        ": "
    };
    format!(
        "value {} of {} ({attribute}){joint}{why}",
        column + 1,
        schema.name
    )
}

/// One change against its relation's schema: arity, each value's type, each `_`, and the
/// size of what it stores (a delete by key stores nothing: only its key must fit a key).
fn check_against_schema(
    change: &Change,
    schema: &RelationSchema,
    types: &[ColumnType],
) -> Result<(), String> {
    let pattern = change.pattern();
    if pattern.len() != schema.arity() {
        return Err(format!(
            "{} takes {} value{}, found {}",
            schema.name,
            schema.arity(),
            if schema.arity() == 1 { "" } else { "s" },
            pattern.len()
        ));
    }
    for (position, (term, attribute)) in pattern.iter().zip(&schema.attributes).enumerate() {
        match term {
            Some(value) if !attribute.column_type().holds(value) => {
                let why = conform((*value).clone(), attribute.column_type())
                    .err()
                    .unwrap_or_else(|| "read it into its column first (conform_changes)".into());
                return Err(value_error(position, schema, &why));
            }
            Some(_) => {}
            None => check_wildcard(change, schema, position)?,
        }
    }
    let checked = if change.is_exact() {
        check_tuple(&change.values, types)
    } else {
        let key = schema.key_columns().unwrap_or_default();
        let values: Vec<Value> = key.iter().filter_map(|&c| pattern[c].cloned()).collect();
        let types: Vec<ColumnType> = key
            .iter()
            .map(|&c| schema.attributes[c].column_type())
            .collect();
        check_tuple(&values, &types)
    };
    match checked {
        Ok(_) => Ok(()),
        Err(TupleError::TooLarge { bytes }) => Err(format!(
            "tuple of {} encodes to {bytes} bytes, more than the limit of {TUPLE_BYTES_MAX}",
            schema.name
        )),
        Err(other) => Err(other.to_string()),
    }
}

/// What a change set has named so far: each tuple once, and each key of a keyed relation
/// once per sign. Only looked up, never iterated.
#[derive(Default)]
struct NamedOnce<'c> {
    /// Where each tuple was first named: (relation, values) -> index of its change.
    tuples: HashMap<(&'c str, &'c [Value]), usize>,
    /// Where each key of a keyed relation was first named, per sign.
    keys: HashMap<(&'c str, Sign, Vec<&'c Value>), usize>,
}

impl<'c> NamedOnce<'c> {
    /// Notes `changes[index]`; an error when it names a tuple, or a key with the same sign,
    /// that an earlier change named.
    fn note(
        &mut self,
        changes: &'c [Change],
        index: usize,
        schema: &RelationSchema,
    ) -> Result<(), String> {
        let change = &changes[index];
        if change.is_exact() {
            if let Some(&first) = self
                .tuples
                .get(&(change.relation.as_str(), &change.values[..]))
            {
                return Err(format!(
                    "{} is already changed {}",
                    change.tuple(),
                    place_of(&changes[first], change)
                ));
            }
            self.tuples
                .insert((change.relation.as_str(), &change.values[..]), index);
        }
        let Some(key) = schema.key_columns() else {
            return Ok(());
        };
        let pattern = change.pattern();
        let values: Vec<&Value> = key.iter().filter_map(|&c| pattern[c]).collect();
        match self.keys.entry((&change.relation, change.sign, values)) {
            Entry::Vacant(slot) => {
                slot.insert(index);
                Ok(())
            }
            Entry::Occupied(slot) => {
                let verb = match change.sign {
                    Sign::Insert => "inserted",
                    Sign::Delete => "deleted",
                };
                Err(format!(
                    "{} key {} is already {verb} {} (a change set names each key at most once \
                     per sign)",
                    schema.name,
                    key_text(schema, &slot.key().2),
                    place_of(&changes[*slot.get()], change)
                ))
            }
        }
    }
}

/// Whether `_` may stand at `position` of `change`: only in a delete (the parser refuses it
/// in an insert), only from a keyed relation, and only for a non-key attribute.
fn check_wildcard(change: &Change, schema: &RelationSchema, position: usize) -> Result<(), String> {
    let attribute = &schema.attributes[position].name;
    let Some(key) = schema.key_columns() else {
        return Err(format!(
            "`_` (value {} of {}) is allowed only in a delete from a keyed relation, \
             and {} has no key: a delete names the whole tuple",
            position + 1,
            schema.name,
            schema.name
        ));
    };
    if change.sign == Sign::Insert {
        return Err(format!(
            "`_` (value {} of {}) is allowed only in a delete: an insert names every value",
            position + 1,
            schema.name
        ));
    }
    if key.contains(&position) {
        return Err(format!(
            "`_` (value {} of {}) stands for `{attribute}`, a key attribute: a delete by key \
             names every key value (key({}))",
            position + 1,
            schema.name,
            schema.key_names().join(", ")
        ));
    }
    Ok(())
}

/// Where `first` was written, as seen from `later`: `on line 3`, or `in FILE, line 3` when
/// the two came from different sources.
fn place_of(first: &Change, later: &Change) -> String {
    match &first.source {
        Some(source) if first.source != later.source => {
            format!("in {source}, line {}", first.line)
        }
        _ => format!("on line {}", first.line),
    }
}

/// A key's values with their names: `id=7`, or `(id=7, day=3)` for a key of several
/// attributes.
pub fn key_text(schema: &RelationSchema, values: &[&Value]) -> String {
    let parts: Vec<String> = schema
        .key_names()
        .into_iter()
        .zip(values)
        .map(|(name, value)| clip(&format!("{name}={value}")).into_owned())
        .collect();
    if parts.len() == 1 {
        parts.into_iter().next().unwrap_or_default()
    } else {
        format!("({})", parts.join(", "))
    }
}
