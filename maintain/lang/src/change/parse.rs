//! Reading change files: one change per line ([`parse_changes`]).

use super::*;

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
            Some('~') => Sign::Update,
            Some(_) => return Err(self.expected("`+`, `-` or `~` at the start of a change")),
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
        let terms = self.terms(sign)?;
        self.skip_blanks();
        match self.peek() {
            None | Some('#') => {}
            Some(_) => return Err(self.expected("end of line or a `#` comment after `)`")),
        }
        Ok(Some(Change {
            sign,
            relation: relation.to_string(),
            values: terms.values,
            names: terms.names,
            wildcards: terms.wildcards,
            line: self.line,
            source: self.source.clone(),
        }))
    }

    /// The terms between the parentheses, the `(` read already, up to and including the
    /// `)`: all positional (values and `_`s) or all named (`column: value`).
    fn terms(&mut self, sign: Sign) -> Result<Terms, ChangeError> {
        let mut terms = Terms::default();
        if self.peek() == Some(')') {
            self.pos += 1;
            return Ok(terms);
        }
        loop {
            let start = self.pos;
            let name = self.column_name();
            let named_before = !terms.names.is_empty();
            if !terms.is_empty() && name.is_some() != named_before {
                return Err(self.error_at(
                    start,
                    "a change names every value or none: write `column: value` for each \
                     one, or the values in column order"
                        .to_string(),
                ));
            }
            if let Some(name) = name {
                if self.wildcard() {
                    return Err(self.error_at(
                        self.pos - 1,
                        format!(
                            "`{name}: _`: leave the column out instead (a named change \
                                 names only the columns it gives)"
                        ),
                    ));
                }
                terms.names.push(name);
                terms.values.push(self.value()?);
            } else if self.wildcard() {
                if sign == Sign::Insert {
                    return Err(self.error_at(
                        self.pos - 1,
                        "`_` is allowed only in a delete (`-r(7, _)` deletes by key) or an \
                         update (`~r(7, _, 3)`): an insert names every value"
                            .to_string(),
                    ));
                }
                terms.wildcards.push(terms.len());
            } else {
                terms.values.push(self.value()?);
            }
            self.skip_blanks();
            match self.peek() {
                Some(',') => {
                    self.pos += 1;
                    self.skip_blanks();
                }
                Some(')') => {
                    self.pos += 1;
                    return Ok(terms);
                }
                _ => return Err(self.expected("`,` or `)` after value")),
            }
        }
    }

    /// A `name:` starting here (the name and the colon consumed, blanks after them
    /// skipped), or `None` with nothing consumed.
    fn column_name(&mut self) -> Option<String> {
        let start = self.pos;
        let name = self.identifier()?;
        self.skip_blanks();
        if self.peek() == Some(':') {
            self.pos += 1;
            self.skip_blanks();
            Some(name.to_string())
        } else {
            self.pos = start;
            None
        }
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
                Some(function @ ("date" | "timestamp" | "double" | "real")) => {
                    self.dated(start, function)
                }
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

    /// `date("…")`, `timestamp("…")`, `double("…")` or `real("…")`, the name read already (from `start`).
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
            "double" => ColumnType::of(Type::Double),
            "real" => ColumnType::of(Type::Real),
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

/// The terms of one change as written.
#[derive(Default)]
struct Terms {
    values: Vec<Value>,
    /// The column each value names (empty when positional).
    names: Vec<String>,
    /// The positions of the `_`s among all the terms.
    wildcards: Vec<usize>,
}

impl Terms {
    /// How many terms were read.
    fn len(&self) -> usize {
        self.values.len() + self.wildcards.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
