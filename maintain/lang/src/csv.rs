//! CSV (RFC 4180) reading and writing, and the mapping between CSV rows and tuples.
//!
//! Reading ([`CsvReader`], streaming over any `BufRead`): fields are separated by commas,
//! records end with LF or CRLF (the last one may have no line ending). A field is either
//! unquoted (no `"`, CR or LF inside) or enclosed in double quotes, and then may hold
//! commas, line breaks (kept as written) and doubled quotes `""` standing for one `"`.
//! Blank lines are skipped, so a record holding one empty field is written `""`. A UTF-8
//! byte order mark at the start is ignored. Malformed input is an error naming its line.
//!
//! Mapping ([`TupleReader`]): the first record is the header; its names are matched to the
//! relation's attributes in any order, and every attribute must appear exactly once. Each
//! later record becomes a tuple: `int` fields are decimal i64 (spaces around them are
//! allowed), `bool` fields are `true` or `false`, `str` fields are taken as they are.
//!
//! Writing ([`CsvWriter`]): a header row of the attribute names in declaration order, then
//! one row per tuple, LF line endings. A field is quoted only when it holds a comma, a
//! quote, CR or LF, or starts or ends with a space (quotes inside are doubled) — and, so
//! that the row is not a blank line, when it is the only field of its row and empty.

use std::borrow::Cow;
use std::io::{self, BufRead, Read, Write};

use crate::conform::parse_text;
use crate::schema::RelationSchema;
use crate::tuple::{check_tuple, Tuple, TupleError, TUPLE_BYTES_MAX};
use crate::value::{ColumnType, Value};

/// The longest record, in bytes of CSV text. A valid tuple encodes to at most
/// [`TUPLE_BYTES_MAX`] bytes, and its CSV text is at most a few times that (doubled quotes,
/// ints in decimal, `false` for a one-byte bool: at most 6× for a tuple of bools), so this
/// is above any valid record. The limit bounds memory when a quote is never closed and
/// reports that early.
pub const RECORD_BYTES_MAX: usize = 8 * TUPLE_BYTES_MAX;

/// Malformed CSV, or a row that does not fit the relation.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    /// The input could not be read.
    #[error("line {line}: cannot read the input: {source}")]
    Io {
        /// The line being read (1-based).
        line: usize,
        /// The I/O error.
        source: io::Error,
    },
    /// The input is not valid CSV or does not match the relation.
    #[error("line {line}{}: {message}", column.as_ref().map(|c| format!(", column {c}")).unwrap_or_default())]
    Invalid {
        /// The line (1-based) of the problem.
        line: usize,
        /// The attribute (header name) of the field at fault, when one field is.
        column: Option<String>,
        /// What is wrong and what was expected.
        message: String,
    },
}

impl CsvError {
    /// The line (1-based) the error is on.
    pub fn line(&self) -> usize {
        match self {
            CsvError::Io { line, .. } | CsvError::Invalid { line, .. } => *line,
        }
    }
}

fn invalid(line: usize, message: impl Into<String>) -> CsvError {
    CsvError::Invalid {
        line,
        column: None,
        message: message.into(),
    }
}

/// One CSV record: its fields, and the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The line (1-based) the record starts on.
    pub line: usize,
    /// The fields, unquoted.
    pub fields: Vec<String>,
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
        } else {
            self.list[self.used].clear();
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

    fn as_slice(&self) -> &[String] {
        &self.list[..self.used]
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
        }
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
        }))
    }

    /// Reads the next record into the reused field buffer ([`CsvReader::fields`]) and
    /// returns the line it starts on, or `None` at the end of input.
    fn read_fields(&mut self) -> Result<Option<usize>, CsvError> {
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
    fn fields(&self) -> &[String] {
        self.fields.as_slice()
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
        // The common line: a whole record of unquoted fields. Without a quote or a carriage
        // return the character rules below only split at commas, so split at once.
        if *state == State::FieldStart
            && fields.used == 1
            && fields.current().is_empty()
            && !content.bytes().any(|b| b == b'"' || b == b'\r')
        {
            for (i, piece) in content.split(',').enumerate() {
                if i > 0 {
                    fields.start();
                }
                fields.current().push_str(piece);
            }
            *state = if content.is_empty() || content.ends_with(',') {
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
                (State::QuoteInQuoted, ',') | (State::FieldStart | State::Unquoted, ',') => {
                    fields.start();
                    *state = State::FieldStart;
                }
                (State::QuoteInQuoted, c) => {
                    return Err(invalid(
                        line,
                        format!(
                            "expected `,` or the end of the line after a closing quote, found `{c}`"
                        ),
                    ))
                }
                (State::FieldStart, '"') => {
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

/// Reads the tuples of one relation from CSV with a header row (see the module docs).
pub struct TupleReader<'s, R> {
    records: CsvReader<R>,
    schema: &'s RelationSchema,
    types: Vec<ColumnType>,
    /// For each CSV column, the attribute it holds.
    attribute_of_column: Vec<usize>,
    /// Whether the columns are the attributes in declaration order.
    columns_in_order: bool,
    /// The line the last record read starts on.
    line: usize,
}

impl<'s, R: BufRead> TupleReader<'s, R> {
    /// Reads the header row from `input` and matches it to `schema`'s attributes: every
    /// attribute must be named exactly once, and no other name may appear.
    pub fn new(input: R, schema: &'s RelationSchema) -> Result<TupleReader<'s, R>, CsvError> {
        let mut records = CsvReader::new(input);
        let expected = schema.attribute_names().collect::<Vec<_>>().join(",");
        let header = records.read_record()?.ok_or_else(|| {
            invalid(
                1,
                format!("expected a header row `{expected}`, found the end of input"),
            )
        })?;
        let names = schema.attribute_names().collect::<Vec<_>>().join(", ");
        let mut attribute_of_column = Vec::with_capacity(header.fields.len());
        for (column, name) in header.fields.iter().enumerate() {
            let name = name.trim_matches(' ');
            let attribute = schema.attribute_index(name).ok_or_else(|| {
                invalid(
                    header.line,
                    format!(
                        "unknown column `{name}` in the header ({} has {names})",
                        schema.name
                    ),
                )
            })?;
            if attribute_of_column[..column].contains(&attribute) {
                return Err(invalid(
                    header.line,
                    format!("column `{name}` appears twice in the header"),
                ));
            }
            attribute_of_column.push(attribute);
        }
        let missing: Vec<String> = schema
            .attributes
            .iter()
            .enumerate()
            .filter(|(attribute, _)| !attribute_of_column.contains(attribute))
            .map(|(_, attribute)| format!("`{}`", attribute.name))
            .collect();
        if !missing.is_empty() {
            return Err(invalid(
                header.line,
                format!(
                    "the header has no column{} {} ({} has {names})",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    schema.name
                ),
            ));
        }
        let columns_in_order = attribute_of_column.iter().enumerate().all(|(c, &a)| c == a);
        Ok(TupleReader {
            records,
            schema,
            types: schema.types(),
            columns_in_order,
            attribute_of_column,
            line: header.line,
        })
    }

    /// The line the last record read (the header, then each tuple's row) starts on.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The next tuple, in declaration order, or `None` at the end of input.
    pub fn read_tuple(&mut self) -> Result<Option<Tuple>, CsvError> {
        let Some(line) = self.records.read_fields()? else {
            return Ok(None);
        };
        self.line = line;
        let fields = self.records.fields();
        if fields.len() != self.attribute_of_column.len() {
            return Err(invalid(
                line,
                format!(
                    "expected {} fields, found {}",
                    self.attribute_of_column.len(),
                    fields.len()
                ),
            ));
        }
        let value_of = |column: usize| {
            let attribute = self.attribute_of_column[column];
            parse_field(&fields[column], self.types[attribute]).map_err(|message| {
                CsvError::Invalid {
                    line,
                    column: Some(self.schema.attributes[attribute].name.clone()),
                    message,
                }
            })
        };
        let tuple: Tuple = if self.columns_in_order {
            (0..fields.len()).map(value_of).collect::<Result<_, _>>()?
        } else {
            let mut slots: Vec<Option<Value>> = vec![None; self.types.len()];
            for column in 0..fields.len() {
                slots[self.attribute_of_column[column]] = Some(value_of(column)?);
            }
            // The header names every attribute exactly once, so every slot is filled.
            slots.into_iter().flatten().collect()
        };
        match check_tuple(&tuple, &self.types) {
            Ok(_) => Ok(Some(tuple)),
            Err(TupleError::TooLarge { bytes }) => Err(invalid(
                line,
                format!("tuple encodes to {bytes} bytes, more than the limit of {TUPLE_BYTES_MAX}"),
            )),
            Err(other) => Err(invalid(line, other.to_string())),
        }
    }
}

impl<R: BufRead> Iterator for TupleReader<'_, R> {
    type Item = Result<Tuple, CsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_tuple().transpose()
    }
}

/// Converts one field to a value of column type `column`: an empty field is null in a
/// nullable column; otherwise the field's text form ([`parse_text`]). The error message
/// names what was expected.
fn parse_field(field: &str, column: ColumnType) -> Result<Value, String> {
    if column.nullable && field.is_empty() {
        return Ok(Value::Null);
    }
    parse_text(field, column.ty)
}

/// `field` as it appears in a CSV row: quoted (with quotes doubled) only when it holds a
/// comma, a quote, CR or LF, or starts or ends with a space.
pub fn quote_field(field: &str) -> Cow<'_, str> {
    let needs_quotes =
        field.contains([',', '"', '\r', '\n']) || field.starts_with(' ') || field.ends_with(' ');
    if needs_quotes {
        Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(field)
    }
}

/// Writes the tuples of one relation as CSV (see the module docs): the header row when
/// created, then one row per [`CsvWriter::write_tuple`].
pub struct CsvWriter<W: Write> {
    out: W,
    arity: usize,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header row (attribute names in declaration order) to `out`.
    pub fn new(out: W, schema: &RelationSchema) -> io::Result<CsvWriter<W>> {
        let mut writer = CsvWriter {
            out,
            arity: schema.arity(),
        };
        let names: Vec<&str> = schema.attribute_names().collect();
        writer.write_row(names.iter().map(|name| quote_field(name)))?;
        Ok(writer)
    }

    /// Writes one tuple as a row. A tuple of another arity than the schema's is an
    /// `InvalidInput` error.
    pub fn write_tuple(&mut self, tuple: &[Value]) -> io::Result<()> {
        if tuple.len() != self.arity {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "tuple has {} values, the relation has {} attributes",
                    tuple.len(),
                    self.arity
                ),
            ));
        }
        // An empty string is always `""`, so that it stays apart from null (an empty
        // field).
        self.write_row(tuple.iter().map(|value| match value {
            Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
            Value::Str(s) if s.is_empty() => Cow::Borrowed("\"\""),
            Value::Str(s) => quote_field(s),
            other => Cow::Owned(other.text()),
        }))
    }

    /// Writes one row of fields, each already quoted as it must be.
    fn write_row<'v>(&mut self, fields: impl Iterator<Item = Cow<'v, str>>) -> io::Result<()> {
        let mut row = String::new();
        let mut count = 0;
        for field in fields {
            if count > 0 {
                row.push(',');
            }
            row.push_str(&field);
            count += 1;
        }
        if count == 1 && row.is_empty() {
            // A lone empty field would be a blank line, which readers skip.
            row.push_str("\"\"");
        }
        row.push('\n');
        self.out.write_all(row.as_bytes())
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes `schema`'s header row and then `tuples` as CSV to `out`.
pub fn write_csv<W: Write, T: AsRef<[Value]>>(
    out: W,
    schema: &RelationSchema,
    tuples: impl IntoIterator<Item = T>,
) -> io::Result<W> {
    let mut writer = CsvWriter::new(out, schema)?;
    for tuple in tuples {
        writer.write_tuple(tuple.as_ref())?;
    }
    writer.finish()
}
