//! `rnt import REL FILE.csv [--replace] [-m MSG]`: insert every row of a CSV file into a
//! base relation (upserting into a keyed one), or with `--replace` make the relation hold
//! exactly the file's rows, in one commit. The file streams through `TupleReader` (the
//! header row names the attributes, in any order); a row that does not fit the schema stops
//! the import with its line, and nothing is committed.

use crate::cmd::commit::write_stats;
use crate::output::write_outcome;
use crate::progress::Progress;
use crate::Context;
use clap::Args;
use rnt_db::csv::TupleReader;
use rnt_db::{CommitOutcome, CsvError, DbError, DbResult, RelationSchema, Tuple};
use std::io::{BufRead, BufReader, Read, Write};
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
    /// The CSV file (header row = attribute names; `-` reads standard input).
    #[arg(value_name = "FILE.csv")]
    file: String,
    /// The commit message (default: `import REL from FILE.csv`, or with `--replace`
    /// `replace REL with FILE.csv`).
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
    /// Print the tree work the import did (nodes written and read, entries read).
    #[arg(long)]
    stats: bool,
    /// Make the relation hold exactly the file's rows: tuples the file lacks are deleted.
    /// The commit's delta is the diff of the old and new contents.
    #[arg(long)]
    replace: bool,
}

/// Streams the file into the relation and commits.
pub fn run(context: &Context, args: ImportArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let relation = args.relation.as_str();
    let (input, name, total): (Box<dyn Read + Send>, String, Option<u64>) = if args.file == "-" {
        (
            Box::new(std::io::stdin()),
            "standard input".to_string(),
            None,
        )
    } else {
        let file = std::fs::File::open(&args.file)
            .map_err(|e| DbError::user(format!("cannot read {}: {e}", args.file)))?;
        let total = file.metadata().ok().map(|m| m.len());
        (Box::new(file), args.file.clone(), total)
    };
    let db = context.open_for_writing()?;
    let head = db.head()?;
    head.require(relation)?;
    let schema = head
        .schema(relation)
        .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no schema")))?;
    let bytes_read = Arc::new(AtomicU64::new(0));
    let input = BufReader::with_capacity(
        READ_BUFFER_BYTES,
        CountingReader {
            inner: input,
            count: bytes_read.clone(),
        },
    );
    let mut progress = Progress::new(format!("importing {relation}"), total);
    let message = args.message.clone().unwrap_or_else(|| {
        if args.replace {
            format!("replace {relation} with {}", args.file)
        } else {
            format!("import {relation} from {}", args.file)
        }
    });
    let before = db.nodes().counters();
    let mut read = 0u64;
    let mut report = |rows| {
        read = rows;
        progress.update(rows, bytes_read.load(Ordering::Relaxed));
    };
    // The file is parsed on a thread of its own, a chunk of rows ahead of the import, so
    // reading the CSV overlaps sorting, building and maintaining. When the import stops
    // early (an error), the receiver is dropped and the parser stops at its next chunk.
    let (schema, name) = (&schema, name.as_str());
    let outcome = std::thread::scope(|scope| {
        let (sender, receiver) = sync_channel::<Vec<DbResult<Tuple>>>(PARSED_CHUNKS_QUEUED);
        scope.spawn(move || {
            let mut rows = LazyRows::new(input, schema, name);
            loop {
                let chunk: Vec<DbResult<Tuple>> = rows.by_ref().take(PARSED_CHUNK_ROWS).collect();
                if chunk.is_empty() || sender.send(chunk).is_err() {
                    return;
                }
            }
        });
        let rows = receiver.into_iter().flatten();
        if args.replace {
            db.import_replace(relation, rows, &message, &mut report)
        } else {
            db.import(relation, rows, &message, &mut report)
        }
    });
    progress.finish();
    let outcome = outcome?;
    write_outcome(out, &outcome)?;
    if matches!(outcome, CommitOutcome::NothingToCommit) {
        if args.replace {
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
    if args.stats {
        write_stats(out, &db, before, &outcome)?;
    }
    Ok(())
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
    name: &'s str,
    failed: bool,
}

impl<'s, R: BufRead> LazyRows<'s, R> {
    fn new(input: R, schema: &'s RelationSchema, name: &'s str) -> LazyRows<'s, R> {
        LazyRows {
            input: Some(input),
            reader: None,
            schema,
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
            match TupleReader::new(input, self.schema) {
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
