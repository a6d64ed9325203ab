//! Writing a relation's tuples as CSV.

use crate::schema::RelationSchema;
use crate::value::Value;
use std::borrow::Cow;
use std::io::{self, Write};

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
