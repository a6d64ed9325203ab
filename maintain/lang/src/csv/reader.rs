//! Reading CSV records (RFC 4180), streaming over any `BufRead`.

use super::{invalid, CsvError, RECORD_BYTES_MAX};
use std::io::{BufRead, Read};

/// One CSV record: its fields, and the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The line (1-based) the record starts on.
    pub line: usize,
    /// The fields, unquoted.
    pub fields: Vec<String>,
    /// For each field, whether it was enclosed in quotes (so `""` is an empty string, where
    /// an empty unquoted field may stand for null).
    pub quoted: Vec<bool>,
}

/// Where the parser is within a record.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the start of a field.
    FieldStart,
    /// Inside an unquoted field.
    Unquoted,
    /// Inside a quoted field.
    Quoted,
    /// Just after a `"` inside a quoted field: the closing quote, or the first of `""`.
    QuoteInQuoted,
}

/// The fields of the record being read, kept from record to record so that their strings'
/// buffers are reused: the first `used` strings are the record's fields.
#[derive(Default)]
struct Fields {
    list: Vec<String>,
    /// Whether each field of `list` was quoted.
    quoted: Vec<bool>,
    used: usize,
}

impl Fields {
    /// Starts a record: no fields yet.
    fn clear(&mut self) {
        self.used = 0;
    }

    /// Starts the record's next field, empty.
    fn start(&mut self) {
        if self.used == self.list.len() {
            self.list.push(String::new());
            self.quoted.push(false);
        } else {
            self.list[self.used].clear();
            self.quoted[self.used] = false;
        }
        self.used += 1;
    }

    /// The field being read (a record always has one once it started).
    fn current(&mut self) -> &mut String {
        debug_assert!(
            self.used > 0,
            "a record's first field starts with the record"
        );
        &mut self.list[self.used - 1]
    }

    /// Marks the field being read as quoted.
    fn mark_quoted(&mut self) {
        self.quoted[self.used - 1] = true;
    }

    fn as_slice(&self) -> &[String] {
        &self.list[..self.used]
    }

    fn quoted(&self) -> &[bool] {
        &self.quoted[..self.used]
    }
}

/// Reads CSV records one at a time from a `BufRead` (RFC 4180; see the module docs).
pub struct CsvReader<R> {
    input: R,
    /// Physical lines read so far.
    lines_read: usize,
    /// The current line's bytes.
    raw: Vec<u8>,
    /// The fields of the record read last.
    fields: Fields,
    /// Set after the end of input or an error: the iterator yields nothing more.
    done: bool,
    /// The character between fields: `,` unless [`CsvReader::with_delimiter`] says.
    delimiter: char,
}

impl<R: BufRead> CsvReader<R> {
    /// A reader over `input`.
    pub fn new(input: R) -> CsvReader<R> {
        CsvReader {
            input,
            lines_read: 0,
            raw: Vec::new(),
            fields: Fields::default(),
            done: false,
            delimiter: ',',
        }
    }

    /// This reader with `delimiter` between fields instead of `,` (a tab, `;`, `|`). It
    /// may not be `"`, CR or LF.
    pub fn with_delimiter(mut self, delimiter: char) -> CsvReader<R> {
        debug_assert!(!['"', '\r', '\n'].contains(&delimiter));
        self.delimiter = delimiter;
        self
    }

    /// The number of physical lines read so far.
    pub fn lines_read(&self) -> usize {
        self.lines_read
    }

    /// The next record, or `None` at the end of input. Blank lines between records are
    /// skipped.
    pub fn read_record(&mut self) -> Result<Option<Record>, CsvError> {
        Ok(self.read_fields()?.map(|line| Record {
            line,
            fields: self.fields.as_slice().to_vec(),
            quoted: self.fields.quoted().to_vec(),
        }))
    }

    /// Reads the next record into the reused field buffer ([`CsvReader::fields`]) and
    /// returns the line it starts on, or `None` at the end of input.
    pub(super) fn read_fields(&mut self) -> Result<Option<usize>, CsvError> {
        if self.done {
            return Ok(None);
        }
        let result = self.parse_record();
        if !matches!(result, Ok(Some(_))) {
            self.done = true;
        }
        result
    }

    /// The fields of the record [`CsvReader::read_fields`] read last.
    pub(super) fn fields(&self) -> &[String] {
        self.fields.as_slice()
    }

    /// Whether each field of the record read last was quoted.
    pub(super) fn quoted(&self) -> &[bool] {
        self.fields.quoted()
    }

    fn parse_record(&mut self) -> Result<Option<usize>, CsvError> {
        let mut state = State::FieldStart;
        let mut start_line = None;
        let mut quote_line = 0;
        let mut record_bytes = 0usize;
        loop {
            self.raw.clear();
            let budget = (RECORD_BYTES_MAX + 1 - record_bytes) as u64;
            let read = (&mut self.input)
                .take(budget)
                .read_until(b'\n', &mut self.raw)
                .map_err(|source| CsvError::Io {
                    line: self.lines_read + 1,
                    source,
                })?;
            if read == 0 {
                return match start_line {
                    None => Ok(None),
                    // A record in progress at the end of input is inside a quoted field.
                    Some(_) => Err(invalid(
                        quote_line,
                        "quoted field is not closed: expected `\"` before the end of input",
                    )),
                };
            }
            self.lines_read += 1;
            let start = match start_line {
                Some(start) => start,
                None if self.raw == b"\n" || self.raw == b"\r\n" => continue, // blank line
                None => {
                    self.fields.clear();
                    self.fields.start();
                    *start_line.insert(self.lines_read)
                }
            };
            record_bytes += read;
            if record_bytes > RECORD_BYTES_MAX {
                return Err(invalid(
                    self.lines_read,
                    format!(
                        "record starting on line {start} is longer than {RECORD_BYTES_MAX} bytes \
                         (is a quoted field not closed?)"
                    ),
                ));
            }
            self.parse_line(&mut state, &mut quote_line)?;
            if state != State::Quoted {
                return Ok(Some(start));
            }
        }
    }

    /// Feeds the line in `self.raw` (numbered `self.lines_read`) to the record parser.
    fn parse_line(&mut self, state: &mut State, quote_line: &mut usize) -> Result<(), CsvError> {
        let line = self.lines_read;
        let text = std::str::from_utf8(&self.raw)
            .map_err(|_| invalid(line, "the line is not valid UTF-8"))?;
        let text = if line == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        let (content, ending) = match text.strip_suffix("\r\n") {
            Some(content) => (content, "\r\n"),
            None => match text.strip_suffix('\n') {
                Some(content) => (content, "\n"),
                None => (text, ""),
            },
        };
        let fields = &mut self.fields;
        let delimiter = self.delimiter;
        // The common line: a whole record of unquoted fields. Without a quote or a carriage
        // return the character rules below only split at delimiters, so split at once.
        if *state == State::FieldStart
            && fields.used == 1
            && fields.current().is_empty()
            && !content.bytes().any(|b| b == b'"' || b == b'\r')
        {
            for (i, piece) in content.split(delimiter).enumerate() {
                if i > 0 {
                    fields.start();
                }
                fields.current().push_str(piece);
            }
            *state = if content.is_empty() || content.ends_with(delimiter) {
                State::FieldStart
            } else {
                State::Unquoted
            };
            return Ok(());
        }
        for c in content.chars() {
            match (*state, c) {
                (State::Quoted, '"') => *state = State::QuoteInQuoted,
                (State::Quoted, c) => fields.current().push(c),
                (State::QuoteInQuoted, '"') => {
                    fields.current().push('"');
                    *state = State::Quoted;
                }
                (State::QuoteInQuoted | State::FieldStart | State::Unquoted, c)
                    if c == delimiter =>
                {
                    fields.start();
                    *state = State::FieldStart;
                }
                (State::QuoteInQuoted, c) => {
                    return Err(invalid(
                        line,
                        format!(
                            "expected `{delimiter}` or the end of the line after a closing quote, found `{c}`"
                        ),
                    ))
                }
                (State::FieldStart, '"') => {
                    fields.mark_quoted();
                    *state = State::Quoted;
                    *quote_line = line;
                }
                (State::Unquoted, '"') => {
                    return Err(invalid(
                        line,
                        "`\"` inside an unquoted field (enclose the field in quotes and double the quote)",
                    ))
                }
                (State::FieldStart | State::Unquoted, '\r') => {
                    return Err(invalid(
                        line,
                        "carriage return inside an unquoted field (line endings must be LF or CRLF)",
                    ))
                }
                (State::FieldStart | State::Unquoted, c) => {
                    fields.current().push(c);
                    *state = State::Unquoted;
                }
            }
        }
        if *state == State::Quoted {
            // The line break belongs to the quoted field.
            fields.current().push_str(ending);
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for CsvReader<R> {
    type Item = Result<Record, CsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_record().transpose()
    }
}
