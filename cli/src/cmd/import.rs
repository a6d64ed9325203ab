//! `rnt import REL FILE.csv [--replace] [-m MSG] [options]`: insert every row of a CSV file
//! into a base relation (upserting into a keyed one), or with `--replace` make the relation
//! hold exactly the file's rows, in one commit.
//!
//! Two passes over the file: the first parses and checks every row (nothing is kept, so
//! memory stays bounded) and stops at the first bad field with its line, before any tree
//! is touched; the second streams the rows into the import. Standard input is copied to a
//! temporary file during the first pass, so it can be read twice. The options say how the
//! file is written (`--delimiter`, `--null`, `--no-header --columns`, `--ignore-columns`);
//! see `docs/design.md`, "Import".

use crate::cmd::commit::write_stats;
use crate::output::write_outcome;
use crate::progress::Progress;
use crate::Context;
use clap::Args;
use rnt_db::change::{conform_changes, parse_change};
use rnt_db::csv::{Columns, ReadOptions, TupleReader};
use rnt_db::witness::{matches, witness_patterns};
use rnt_db::{CommitOutcome, CsvError, DbError, DbResult, ImportMode, Imported, RelationSchema};
use rnt_db::{Database, Snapshot, Tuple};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::Arc;

/// Bytes of the CSV read ahead at a time.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// Rows the parsing thread hands over at a time.
const PARSED_CHUNK_ROWS: usize = 4096;

/// Chunks of parsed rows that may wait for the importing thread: bounds the memory the
/// parser runs ahead by (about a million rows at most, far less in practice).
const PARSED_CHUNKS_QUEUED: usize = 16;

/// Arguments of `rnt import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The base relation to fill.
    #[arg(value_name = "REL")]
    relation: String,
    /// The CSV file (header row = attribute names, in any order; `-` reads standard input).
    #[arg(value_name = "FILE.csv")]
    file: String,
    /// The commit message (default: `import REL from FILE.csv`, or with `--replace`
    /// `replace REL with FILE.csv`).
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
    /// When a denial refuses it, list up to N witnesses of each violated denial (a
    /// `(and more: --witnesses N)` says when there are more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cmd::at_least_one)]
    witnesses: usize,
    /// Print the tree work the import did (nodes written and read, entries read).
    #[arg(long)]
    stats: bool,
    /// Make the relation hold exactly the file's rows: tuples the file lacks are deleted.
    /// The commit's delta is the diff of the old and new contents.
    #[arg(long)]
    replace: bool,
    /// The character between fields: `,` (default), `tab`, or any one character.
    #[arg(long, value_name = "C", default_value = ",")]
    delimiter: String,
    /// The unquoted text that stands for null (e.g. `NA`). By default an empty unquoted
    /// field is null in a nullable column; with `--null`, an empty field is the empty string
    /// in a str column and an error elsewhere.
    #[arg(long, value_name = "TEXT")]
    null: Option<String>,
    /// Skip columns that are no attribute of the relation (listed on stderr) instead of
    /// refusing the file.
    #[arg(long)]
    ignore_columns: bool,
    /// The file has no header row: its columns are `--columns`.
    #[arg(long, requires = "columns")]
    no_header: bool,
    /// The columns of a file without a header, in order: `--columns id,carrier,dep`.
    #[arg(
        long,
        value_name = "A,B,C",
        requires = "no_header",
        value_delimiter = ','
    )]
    columns: Vec<String>,
}

impl ImportArgs {
    /// How the file is read.
    fn read_options(&self) -> DbResult<ReadOptions> {
        let delimiter = match self.delimiter.as_str() {
            "tab" | "\\t" => '\t',
            other => {
                let mut chars = other.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if !['"', '\r', '\n'].contains(&c) => c,
                    _ => {
                        return Err(DbError::user(format!(
                            "--delimiter takes one character other than `\"` and a line break, \
                             or `tab`; found `{other}`"
                        )))
                    }
                }
            }
        };
        let columns = if self.no_header {
            Columns::Given(self.columns.iter().map(|c| c.trim().to_string()).collect())
        } else {
            Columns::Header
        };
        Ok(ReadOptions {
            delimiter,
            columns,
            null: self.null.clone(),
            ignore_extra_columns: self.ignore_columns,
        })
    }
}

/// Checks every row of the file, then streams it into the relation and commits.
pub fn run(context: &Context, args: ImportArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let relation = args.relation.as_str();
    let options = args.read_options()?;
    let mut input = Input::open(&args.file)?;
    let db = context.open_for_writing()?.with_witnesses(args.witnesses);
    let head = db.head()?;
    head.require(relation)?;
    let schema = head
        .schema(relation)
        .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no schema")))?;
    let checked = check_every_row(&mut input, &schema, &options)?;
    if !checked.ignored.is_empty() {
        eprintln!(
            "ignored column{} not in {relation}: {}",
            if checked.ignored.len() == 1 { "" } else { "s" },
            checked.ignored.join(", ")
        );
    }
    let message = args.message.clone().unwrap_or_else(|| {
        if args.replace {
            format!("replace {relation} with {}", args.file)
        } else {
            format!("import {relation} from {}", args.file)
        }
    });
    let mode = if args.replace {
        ImportMode::Replace
    } else {
        ImportMode::Insert
    };
    let before = db.nodes().counters();
    let imported = match import_rows(&db, &mut input, &schema, &options, mode, &message) {
        Err(DbError::DenialViolated {
            denial,
            witness,
            mut violations,
        }) => {
            // The first witness names the line of the file behind it, when one is.
            let place = match witness_line(&mut input, &head, &schema, &options, &denial, &witness)
            {
                Some(line) => format!(" (from {}, line {line})", input.name),
                None => String::new(),
            };
            if let Some(first) = violations.first_mut().and_then(|v| v.witnesses.first_mut()) {
                first.push_str(&place);
            }
            return Err(DbError::DenialViolated {
                denial,
                witness: format!("{witness}{place}"),
                violations,
            }
            .into());
        }
        other => other?,
    };
    report(out, &schema, &imported, args.replace)?;
    if args.stats {
        write_stats(out, &db, before, &imported.outcome)?;
    }
    Ok(())
}

/// Prints the outcome, and on stderr the duplicate rows merged.
fn report(
    out: &mut dyn Write,
    schema: &RelationSchema,
    imported: &Imported,
    replace: bool,
) -> anyhow::Result<()> {
    let relation = &schema.name;
    if imported.duplicates > 0 {
        let n = imported.duplicates;
        let hint = if schema.key_columns().is_none() {
            ": a relation is a set; declare a key or an id column"
        } else {
            " (each repeats a row with its key)"
        };
        eprintln!(
            "{n} duplicate row{} merged{hint}",
            if n == 1 { "" } else { "s" }
        );
    }
    write_outcome(out, &imported.outcome)?;
    if matches!(imported.outcome, CommitOutcome::NothingToCommit) {
        let read = imported.rows;
        if replace {
            writeln!(
                out,
                "({read} rows read; {relation} already holds exactly these tuples)"
            )?;
        } else {
            writeln!(
                out,
                "({read} rows read; every one was already in {relation})"
            )?;
        }
    }
    Ok(())
}

/// The file to import: a file by name, or standard input copied to a temporary file by the
/// first pass.
struct Input {
    /// The name errors give it: the path, or `standard input`.
    name: String,
    /// The file read; for standard input, the copy (filled by the first pass).
    file: Option<File>,
    /// Its size in bytes, for the progress line, when known.
    total: Option<u64>,
}

impl Input {
    fn open(path: &str) -> DbResult<Input> {
        if path == "-" {
            return Ok(Input {
                name: "standard input".to_string(),
                file: None,
                total: None,
            });
        }
        let file =
            File::open(path).map_err(|e| DbError::user(format!("cannot read {path}: {e}")))?;
        let total = file.metadata().ok().map(|m| m.len());
        Ok(Input {
            name: path.to_string(),
            file: Some(file),
            total,
        })
    }

    /// The input from its start, for a pass; the first pass over standard input reads it
    /// while copying it to a temporary file, which later passes read.
    fn pass(&mut self) -> DbResult<Box<dyn Read + Send>> {
        let io_error = |e: std::io::Error| DbError::user(format!("cannot read the input: {e}"));
        match &mut self.file {
            Some(file) => {
                file.rewind().map_err(io_error)?;
                Ok(Box::new(file.try_clone().map_err(io_error)?))
            }
            None => {
                let copy = tempfile::tempfile().map_err(|e| {
                    DbError::user(format!(
                        "cannot make a temporary copy of standard input: {e}"
                    ))
                })?;
                self.file = Some(copy.try_clone().map_err(io_error)?);
                Ok(Box::new(Tee {
                    input: std::io::stdin(),
                    copy,
                }))
            }
        }
    }
}

/// Reads standard input and writes what it read to a file.
struct Tee {
    input: std::io::Stdin,
    copy: File,
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        self.copy.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// What the first pass found: every row fits, and these columns are ignored.
struct Checked {
    ignored: Vec<String>,
}

/// The first pass: parses and checks every row, keeping none; the first bad one is an
/// error naming the file, line, column and value.
fn check_every_row(
    input: &mut Input,
    schema: &RelationSchema,
    options: &ReadOptions,
) -> DbResult<Checked> {
    let name = input.name.clone();
    let bytes_read = Arc::new(AtomicU64::new(0));
    let reader = buffered(input.pass()?, &bytes_read);
    let mut progress = Progress::new(format!("checking {name}"), input.total);
    let failed = |error: CsvError| DbError::user(format!("{name}, {error}"));
    let mut rows = TupleReader::with_options(reader, schema, options).map_err(failed)?;
    let ignored = rows.ignored_columns().to_vec();
    let mut count = 0u64;
    while rows.read_tuple().map_err(failed)?.is_some() {
        count += 1;
        if count.is_multiple_of(65_536) {
            progress.update(count, bytes_read.load(Ordering::Relaxed));
        }
    }
    progress.finish();
    Ok(Checked { ignored })
}

/// The second pass: the rows, parsed on a thread of their own a chunk ahead, into the
/// import. When the import stops early (an error), the receiver is dropped and the parser
/// stops at its next chunk.
fn import_rows(
    db: &Database,
    input: &mut Input,
    schema: &RelationSchema,
    options: &ReadOptions,
    mode: ImportMode,
    message: &str,
) -> DbResult<Imported> {
    let name = input.name.clone();
    let bytes_read = Arc::new(AtomicU64::new(0));
    let reader = buffered(input.pass()?, &bytes_read);
    let mut progress = Progress::new(format!("importing {}", schema.name), input.total);
    let mut report = |rows| progress.update(rows, bytes_read.load(Ordering::Relaxed));
    let (name, relation) = (name.as_str(), schema.name.as_str());
    let imported = std::thread::scope(|scope| {
        let (sender, receiver) = sync_channel::<Vec<DbResult<Tuple>>>(PARSED_CHUNKS_QUEUED);
        scope.spawn(move || {
            let mut rows = LazyRows::new(reader, schema, options, name);
            loop {
                let chunk: Vec<DbResult<Tuple>> = rows.by_ref().take(PARSED_CHUNK_ROWS).collect();
                if chunk.is_empty() || sender.send(chunk).is_err() {
                    return;
                }
            }
        });
        let rows = receiver.into_iter().flatten();
        db.import_rows(relation, rows, message, &mut report, mode)
    });
    progress.finish();
    imported
}

/// The line of the first row of the file that could stand behind `witness` of `denial`
/// (`rnt_db::witness`), found by a third pass over the file; `None` when the witness comes
/// from no row of it (another relation's tuples, or the program's other rules).
fn witness_line(
    input: &mut Input,
    head: &Snapshot,
    schema: &RelationSchema,
    options: &ReadOptions,
    denial: &str,
    witness: &str,
) -> Option<usize> {
    let denial_schema = head.schema(denial)?;
    let mut changes = vec![parse_change(&format!("+{witness}"), None).ok()?];
    conform_changes(&mut changes, |_| Some(&denial_schema)).ok()?;
    let patterns = witness_patterns(&head.program, denial, &changes[0].values, &schema.name);
    if patterns.is_empty() {
        return None;
    }
    let reader = BufReader::with_capacity(READ_BUFFER_BYTES, input.pass().ok()?);
    let mut rows = TupleReader::with_options(reader, schema, options).ok()?;
    while let Ok(Some(tuple)) = rows.read_tuple() {
        if patterns.iter().any(|p| matches(p, &tuple)) {
            return Some(rows.line());
        }
    }
    None
}

/// `input` read ahead in large buffers, counting the bytes read into `count`.
fn buffered(input: Box<dyn Read + Send>, count: &Arc<AtomicU64>) -> impl BufRead + Send {
    BufReader::with_capacity(
        READ_BUFFER_BYTES,
        CountingReader {
            inner: input,
            count: count.clone(),
        },
    )
}

/// Counts the bytes read through it, for the progress line (read on another thread).
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The tuples of a CSV input. The header is read on the first `next`, so that the
/// database checks the relation (known, a base relation) before the file is judged.
struct LazyRows<'s, R> {
    input: Option<R>,
    reader: Option<TupleReader<'s, R>>,
    schema: &'s RelationSchema,
    options: &'s ReadOptions,
    name: &'s str,
    failed: bool,
}

impl<'s, R: BufRead> LazyRows<'s, R> {
    fn new(
        input: R,
        schema: &'s RelationSchema,
        options: &'s ReadOptions,
        name: &'s str,
    ) -> LazyRows<'s, R> {
        LazyRows {
            input: Some(input),
            reader: None,
            schema,
            options,
            name,
            failed: false,
        }
    }

    fn error(&mut self, error: CsvError) -> DbError {
        self.failed = true;
        DbError::user(format!("{}, {error}", self.name))
    }
}

impl<R: BufRead> Iterator for LazyRows<'_, R> {
    type Item = DbResult<Tuple>;

    fn next(&mut self) -> Option<DbResult<Tuple>> {
        if self.failed {
            return None;
        }
        if let Some(input) = self.input.take() {
            match TupleReader::with_options(input, self.schema, self.options) {
                Ok(reader) => self.reader = Some(reader),
                Err(error) => return Some(Err(self.error(error))),
            }
        }
        match self.reader.as_mut()?.read_tuple() {
            Ok(Some(tuple)) => Some(Ok(tuple)),
            Ok(None) => None,
            Err(error) => Some(Err(self.error(error))),
        }
    }
}
