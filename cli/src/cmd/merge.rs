//! `rnt merge NAME [-m MSG] [--ours | --theirs | --resolve FILE | --conflicts [--format
//! table|changes|json]]`: merge branch NAME (or any commit) into the current branch.
//! Fast-forwards when the current branch is in NAME's history; otherwise merges the base
//! relations three ways from the merge base, maintains the views and judges the denials as
//! any commit does, and commits with two parents (ours first). Exit 1 when both sides
//! changed the program differently, 2 when a denial refuses the merged contents, 4 when
//! both sides gave a key different tuples (every such key listed); nothing is written then.
//!
//! Key conflicts are resolved with `--ours` or `--theirs` (every key one way) or `--resolve
//! FILE`, a change file with one line per conflicting key: `+r(…)` keeps that tuple, `-r(…)`
//! deletes the key. `--conflicts` lists them and writes nothing: as a table, as such a
//! change file (ours kept, theirs commented out beside it), or as JSON, an array of
//! `{"relation", "key": {ATTRIBUTE: VALUE…}, "ours": [values], "theirs": [values]}`.

use crate::output::{write_outcome, write_table, Json, SHORT_HEX_DIGITS};
use crate::Context;
use clap::{Args, ValueEnum};
use rnt_db::change::parse_changes;
use rnt_db::tuple::format_tuple;
use rnt_db::{KeyConflict, MergeOutcome, ProgramSide, Resolution};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `rnt merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The branch to merge into the current one (a tag or commit also works).
    #[arg(value_name = "NAME")]
    name: String,
    /// The merge commit's message (default: `Merge NAME`).
    #[arg(short, long, value_name = "MSG", conflicts_with = "conflicts")]
    message: Option<String>,
    /// When a denial refuses it, list up to N witnesses of each violated denial (a
    /// `(and more: --witnesses N)` says when there are more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cmd::at_least_one)]
    witnesses: usize,
    /// At every key both branches gave different tuples, keep the current branch's.
    #[arg(long, conflicts_with_all = ["theirs", "resolve", "conflicts"])]
    ours: bool,
    /// At every key both branches gave different tuples, keep NAME's.
    #[arg(long, conflicts_with_all = ["resolve", "conflicts"])]
    theirs: bool,
    /// A change file picking per conflicting key: `+r(…)` keeps that tuple, `-r(…)`
    /// deletes the key (`--conflicts --format changes` writes one to start from).
    #[arg(long, value_name = "FILE", conflicts_with = "conflicts")]
    resolve: Option<PathBuf>,
    /// List the keys in conflict and write nothing.
    #[arg(long)]
    conflicts: bool,
    /// How `--conflicts` prints them.
    #[arg(long, value_enum, default_value_t = ConflictFormat::Table, requires = "conflicts")]
    format: ConflictFormat,
}

impl MergeArgs {
    /// The resolution file, if any.
    pub fn input_file(&self) -> Option<&std::path::Path> {
        self.resolve.as_deref()
    }
}

/// Output format of `merge --conflicts`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ConflictFormat {
    /// Aligned columns: relation, key, ours, theirs.
    #[default]
    Table,
    /// A change file for `--resolve`: each key's ours kept, theirs commented out.
    Changes,
    /// An array of `{"relation", "key", "ours", "theirs"}`.
    Json,
}

/// Merges, or lists the conflicts.
pub fn run(context: &Context, args: MergeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.conflicts {
        let db = context.open()?;
        let conflicts = db.merge_conflicts(&args.name)?;
        return write_conflicts(out, &conflicts, args.format);
    }
    let resolution = match (&args.resolve, args.ours, args.theirs) {
        (Some(path), _, _) => {
            let text = context.read_input_text(path);
            let text = text.map_err(|e| {
                rnt_db::DbError::user(format!("cannot read {}: {e}", path.display()))
            })?;
            let source = path.display().to_string();
            let changes = parse_changes(&text, Some(&source))
                .map_err(|e| rnt_db::DbError::user(e.to_string()))?;
            Resolution::Picks(changes)
        }
        (None, true, _) => Resolution::Ours,
        (None, _, true) => Resolution::Theirs,
        (None, false, false) => Resolution::Refuse,
    };
    let db = context.open_for_writing()?.with_witnesses(args.witnesses);
    let outcome = db.merge_with(&args.name, args.message.as_deref(), &resolution)?;
    write_merged(out, &args.name, &outcome)
}

/// Prints the conflicts of a merge in `format`.
fn write_conflicts(
    out: &mut dyn Write,
    conflicts: &[KeyConflict],
    format: ConflictFormat,
) -> anyhow::Result<()> {
    match format {
        ConflictFormat::Table => {
            let rows: Vec<Vec<String>> = conflicts
                .iter()
                .map(|c| {
                    vec![
                        c.relation.clone(),
                        c.key.clone(),
                        format_tuple(&c.relation, &c.ours),
                        format_tuple(&c.relation, &c.theirs),
                    ]
                })
                .collect();
            write_table(out, &["relation", "key", "ours", "theirs"], &[], &rows)?;
            let n = conflicts.len();
            writeln!(out, "({n} conflict{})", if n == 1 { "" } else { "s" })?;
        }
        ConflictFormat::Changes => {
            if !conflicts.is_empty() {
                writeln!(
                    out,
                    "# One line per key: keep ours, theirs (uncomment it and drop ours), another tuple with the key, or `-` to delete the key."
                )?;
            }
            for c in conflicts {
                writeln!(out, "# {} {}", c.relation, c.key)?;
                writeln!(out, "+{}  # ours", format_tuple(&c.relation, &c.ours))?;
                writeln!(out, "#+{}  # theirs", format_tuple(&c.relation, &c.theirs))?;
            }
        }
        ConflictFormat::Json => {
            let tuple = |t: &[rnt_db::Value]| Json::Array(t.iter().map(Json::of_value).collect());
            let items = conflicts
                .iter()
                .map(|c| {
                    let key = c
                        .key_values
                        .iter()
                        .map(|(name, value)| (name.clone(), Json::of_value(value)))
                        .collect();
                    Json::object([
                        ("relation", Json::Str(c.relation.clone())),
                        ("key", Json::Object(key)),
                        ("ours", tuple(&c.ours)),
                        ("theirs", tuple(&c.theirs)),
                    ])
                })
                .collect();
            write!(out, "{}", Json::Array(items).pretty())?;
        }
    }
    Ok(())
}

/// Prints a merge's outcome (also `pull`'s second part); `name` is what was merged.
pub fn write_merged(out: &mut dyn Write, name: &str, outcome: &MergeOutcome) -> anyhow::Result<()> {
    match outcome {
        MergeOutcome::UpToDate => writeln!(out, "already up to date")?,
        MergeOutcome::FastForward { from, to } => writeln!(
            out,
            "fast-forward {} to {}",
            from.map_or("nothing".to_string(), |c| c.short_hex(SHORT_HEX_DIGITS)),
            to.short_hex(SHORT_HEX_DIGITS)
        )?,
        MergeOutcome::Merged {
            program_from,
            outcome,
            ..
        } => {
            if *program_from == Some(ProgramSide::Theirs) {
                writeln!(out, "took the program of {name}")?;
            }
            write_outcome(out, outcome)?;
        }
    }
    Ok(())
}
