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

use std::io;

use crate::tuple::TUPLE_BYTES_MAX;

mod reader;
mod tuples;
mod writer;

pub use reader::{CsvReader, Record};
pub use tuples::{Columns, ReadOptions, TupleReader};
pub use writer::{quote_field, write_csv, CsvWriter};

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

pub(crate) fn invalid(line: usize, message: impl Into<String>) -> CsvError {
    CsvError::Invalid {
        line,
        column: None,
        message: message.into(),
    }
}
