//! Mapping CSV rows to a relation's tuples: the header (or the columns given), the field
//! texts, null.

use super::{invalid, CsvError, CsvReader};
use crate::conform::parse_text;
use crate::diagnostic::clip;
use crate::schema::RelationSchema;
use crate::tuple::{check_tuple, Tuple, TupleError, TUPLE_BYTES_MAX};
use crate::value::{ColumnType, Value};
use std::collections::HashSet;
use std::io::BufRead;

/// Which columns a file holds, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Columns {
    /// The first record is a header naming them (the default).
    #[default]
    Header,
    /// The file has no header; these are its columns (`--no-header --columns a,b,c`).
    Given(Vec<String>),
}

/// How [`TupleReader`] reads a file (the options of `rnt import`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The character between fields (`,`).
    pub delimiter: char,
    /// Where the column names come from.
    pub columns: Columns,
    /// The unquoted text that stands for null (`--null TEXT`); `None`: an empty unquoted
    /// field is null in a nullable column.
    pub null: Option<String>,
    /// Whether columns that are no attribute of the relation are skipped (otherwise they
    /// are an error).
    pub ignore_extra_columns: bool,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            delimiter: ',',
            columns: Columns::Header,
            null: None,
            ignore_extra_columns: false,
        }
    }
}

/// Reads the tuples of one relation from CSV (see the module docs and [`ReadOptions`]).
pub struct TupleReader<'s, R> {
    records: CsvReader<R>,
    schema: &'s RelationSchema,
    types: Vec<ColumnType>,
    /// For each CSV column, the attribute it holds (`None`: an ignored column).
    attribute_of_column: Vec<Option<usize>>,
    /// Whether the columns are the attributes in declaration order.
    columns_in_order: bool,
    /// The columns skipped as no attribute of the relation.
    ignored: Vec<String>,
    /// The text that stands for null, if not the empty unquoted field.
    null: Option<String>,
    /// The line the last record read starts on.
    line: usize,
}

impl<'s, R: BufRead> TupleReader<'s, R> {
    /// Reads the header row from `input` and matches it to `schema`'s attributes: every
    /// attribute must be named exactly once, and no other name may appear.
    pub fn new(input: R, schema: &'s RelationSchema) -> Result<TupleReader<'s, R>, CsvError> {
        TupleReader::with_options(input, schema, &ReadOptions::default())
    }

    /// Reads `input` as `options` say. The column names (the header's, or the ones given)
    /// are matched to `schema`'s attributes in any order: a name twice is an error, a
    /// missing nullable attribute is null in every tuple, a missing one without `?` is an
    /// error naming it, and a name that is no attribute is an error unless
    /// `options.ignore_extra_columns`.
    pub fn with_options(
        input: R,
        schema: &'s RelationSchema,
        options: &ReadOptions,
    ) -> Result<TupleReader<'s, R>, CsvError> {
        let mut records = CsvReader::new(input).with_delimiter(options.delimiter);
        let (names, line) = match &options.columns {
            Columns::Given(names) => (names.clone(), 0),
            Columns::Header => {
                let expected = schema.attribute_names().collect::<Vec<_>>().join(",");
                let header = records.read_record()?.ok_or_else(|| {
                    invalid(
                        1,
                        format!("expected a header row `{expected}`, found the end of input"),
                    )
                })?;
                (header.fields, header.line)
            }
        };
        let (attribute_of_column, ignored) =
            match_columns(&names, schema, options.ignore_extra_columns)
                .map_err(|message| invalid(line.max(1), message))?;
        let columns_in_order = attribute_of_column.len() == schema.arity()
            && attribute_of_column
                .iter()
                .enumerate()
                .all(|(c, &a)| Some(c) == a);
        Ok(TupleReader {
            records,
            schema,
            types: schema.types(),
            columns_in_order,
            attribute_of_column,
            ignored,
            null: options.null.clone(),
            line,
        })
    }

    /// The line the last record read (the header, then each tuple's row) starts on.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The columns skipped because they are no attribute of the relation.
    pub fn ignored_columns(&self) -> &[String] {
        &self.ignored
    }

    /// The next tuple, in declaration order, or `None` at the end of input.
    pub fn read_tuple(&mut self) -> Result<Option<Tuple>, CsvError> {
        let Some(line) = self.records.read_fields()? else {
            return Ok(None);
        };
        self.line = line;
        let (fields, quoted) = (self.records.fields(), self.records.quoted());
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
        let null = self.null.as_deref();
        let value_of = |column: usize, attribute: usize| {
            let field = Field {
                text: &fields[column],
                quoted: quoted[column],
            };
            field
                .value(self.types[attribute], null)
                .map_err(|message| CsvError::Invalid {
                    line,
                    column: Some(self.schema.attributes[attribute].name.clone()),
                    message,
                })
        };
        let tuple: Tuple = if self.columns_in_order {
            (0..fields.len())
                .map(|c| value_of(c, c))
                .collect::<Result<_, _>>()?
        } else {
            // Attributes the file lacks are nullable (`match_columns`): null.
            let mut slots: Vec<Value> = vec![Value::Null; self.types.len()];
            for (column, attribute) in self.attribute_of_column.iter().enumerate() {
                if let Some(attribute) = *attribute {
                    slots[attribute] = value_of(column, attribute)?;
                }
            }
            slots
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

/// For each of a file's column `names`, the attribute of `schema` it holds (`None` for an
/// ignored one), and the names ignored. Errors: a name twice, an unknown name (unless
/// `ignore_extra`), an attribute without `?` that no column holds.
fn match_columns(
    names: &[String],
    schema: &RelationSchema,
    ignore_extra: bool,
) -> Result<(Vec<Option<usize>>, Vec<String>), String> {
    let attributes = schema.attribute_names().collect::<Vec<_>>().join(", ");
    let mut attribute_of_column: Vec<Option<usize>> = Vec::with_capacity(names.len());
    let mut ignored = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for name in names {
        let name = name.trim_matches(' ');
        if !seen.insert(name) {
            return Err(format!(
                "column `{}` appears twice in the header",
                clip(name)
            ));
        }
        match schema.attribute_index(name) {
            Some(attribute) => attribute_of_column.push(Some(attribute)),
            None if ignore_extra => {
                attribute_of_column.push(None);
                ignored.push(name.to_string());
            }
            None => {
                return Err(format!(
                    "unknown column `{}` in the header ({} has {attributes}; \
                     --ignore-columns skips the others)",
                    clip(name),
                    schema.name
                ))
            }
        }
    }
    let missing: Vec<String> = schema
        .attributes
        .iter()
        .enumerate()
        .filter(|(a, attribute)| !attribute.nullable && !attribute_of_column.contains(&Some(*a)))
        .map(|(_, attribute)| format!("`{}`", attribute.name))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the header has no column{} {} ({} has {attributes}; only a nullable column \
             may be missing)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            schema.name
        ));
    }
    Ok((attribute_of_column, ignored))
}

/// One field as read: its text and whether it was quoted.
struct Field<'f> {
    text: &'f str,
    quoted: bool,
}

impl Field<'_> {
    /// The field as a value of column type `column`. Null is an unquoted `null_text` when
    /// one is given, and otherwise an empty unquoted field in a nullable column; a quoted
    /// field is never null. Otherwise the field's text form ([`parse_text`]).
    fn value(&self, column: ColumnType, null_text: Option<&str>) -> Result<Value, String> {
        let is_null = !self.quoted
            && match null_text {
                Some(null_text) => self.text == null_text,
                None => self.text.is_empty() && column.nullable,
            };
        if is_null && !column.nullable {
            return Err(format!(
                "`{}` is null, and the column is `{column}`, not nullable",
                clip(self.text)
            ));
        }
        if is_null {
            return Ok(Value::Null);
        }
        let empty_stands_for_null = null_text.is_none() && !self.quoted && self.text.is_empty();
        if empty_stands_for_null && column.ty != crate::value::Type::Str {
            return Err(format!(
                "an empty field is null, and the column is `{column}`, not nullable"
            ));
        }
        parse_text(self.text, column.ty)
    }
}
