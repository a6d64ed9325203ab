//! `rnt diff REF [TO] [REL] [--all | --program] [--format changes|json]`: the tuples that
//! differ between two states — REF's first parent and REF when one REF is given (the root
//! commit's parent is the empty state) — one change a line in change-file syntax, sorted by
//! relation then tuple, a key's (an aggregate view's group's) `-` before its `+`. By default
//! only base relations are listed, so the output is a change file that, committed on the
//! first state, reaches the second state's contents. `rnt diff REF REL` (the second word a
//! relation, not a reference) is REL's changes in REF; a name that is both is an error.
//! When the two programs differ, a note on stderr says so; `--program` prints a unified
//! diff of the two canonical program texts instead of tuples. JSON: an array of
//! `{"relation", "sign", "tuple"}` in the same order.
//!
//! The SQL compiler's helper relations (names starting with `_`) are left out of `--all`
//! and of `--program` unless `--internal` is given; naming one as REL shows its changes.
//! When every change between the states is a helper's, stdout stays empty (a change file
//! with nothing in it, as for two equal states) and a note on stderr says so.

use crate::line_diff;
use crate::output::Json;
use crate::Context;
use clap::{Args, ValueEnum};
use rnt_db::tuple::TupleDisplay;
use rnt_db::{
    key_columns, sort_changes, Database, DbError, DiffScope, Sign, Snapshot, Tuple, TupleChange,
};
use std::collections::BTreeSet;
use std::io::Write;

/// The line on stderr when the two states' programs differ (the contract in `docs/design.md`).
pub const PROGRAM_DIFFERS_NOTE: &str = "note: the program differs; see rnt program";

/// Arguments of `rnt diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The state to go from; alone, the state to go to, from its first parent.
    #[arg(value_name = "REF")]
    first: String,
    /// The state to go to.
    #[arg(value_name = "TO")]
    second: Option<String>,
    /// Only this relation (derived ones included).
    #[arg(value_name = "REL", conflicts_with_all = ["all", "program"])]
    relation: Option<String>,
    /// Every stored relation, derived ones included.
    #[arg(long, conflicts_with = "program")]
    all: bool,
    /// A unified diff of the two canonical program texts instead of tuples.
    #[arg(long)]
    program: bool,
    /// Also the SQL compiler's helper relations (names starting with `_`): their tuples
    /// with --all, their declarations and rules with --program.
    #[arg(long)]
    internal: bool,
    /// Output format of the tuples.
    #[arg(long, value_enum, default_value_t = DiffFormat::Changes, conflicts_with = "program")]
    format: DiffFormat,
}

/// Output format of `diff`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// A change file: `+r(…)` and `-r(…)`, one a line.
    #[default]
    Changes,
    /// An array of `{"relation", "sign", "tuple"}`.
    Json,
}

/// Prints the differences.
pub fn run(context: &Context, args: DiffArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let (second, relation) = second_word(&db, &args)?;
    let (from_name, from, to_name, to) = match &second {
        Some(second) => (
            args.first.clone(),
            db.resolve(&args.first)?,
            second.clone(),
            db.resolve(second)?,
        ),
        None => {
            let to = db.resolve(&args.first)?;
            let from = db.first_parent(&to)?;
            (format!("{}^", args.first), from, args.first.clone(), to)
        }
    };
    let program = |s: &Snapshot| crate::internal::program_text(&s.state.program, args.internal);
    if args.program {
        let text = line_diff::unified(&from_name, &program(&from), &to_name, &program(&to));
        write!(out, "{text}")?;
        return Ok(());
    }
    let scope = match (relation, args.all) {
        (Some(relation), _) => DiffScope::Relation(relation),
        (None, true) => DiffScope::All,
        (None, false) => DiffScope::Base,
    };
    let mut changes = match &scope {
        DiffScope::Relation(name) if !is_stored(&from, name) && !is_stored(&to, name) => {
            evaluated_diff(&db, &from, &to, name)?
        }
        _ => db.diff(&from, &to, &scope)?,
    };
    let listed = changes.len();
    if !matches!(scope, DiffScope::Relation(_)) {
        changes.retain(|c| crate::internal::shown(&c.relation, args.internal));
    }
    write_changes(out, &changes, args.format)?;
    if changes.is_empty() && listed > 0 {
        context.note(&format!(
            "note: only the SQL compiler's helper relations changed ({listed} tuple change{}; {})",
            if listed == 1 { "" } else { "s" },
            crate::internal::HINT
        ));
    }
    // A program that differs only in the helpers' rules differs in nothing `program` shows.
    if from.state.program != to.state.program && program(&from) != program(&to) {
        // The changes are on stdout already; flush them so the note follows them on a
        // terminal that shows both streams.
        out.flush()?;
        for change in rnt_db::schema_changes(&from.state, &to.state) {
            if crate::internal::shown(&change.relation, args.internal) {
                context.note(&schema_change_note(&change));
            }
        }
        context.note(PROGRAM_DIFFERS_NOTE);
    }
    Ok(())
}

/// The note on stderr for a base relation whose schema differs between the two states
/// (an `rnt alter` between them): its declarations before and after.
fn schema_change_note(change: &rnt_db::SchemaChange) -> String {
    let after = change
        .after
        .as_deref()
        .unwrap_or("(no relation of that name)");
    format!(
        "note: the schema of `{}` differs (rnt alter): {} → {after}",
        change.relation, change.before
    )
}

/// The state to go to and the relation, from the words after REF: `REF TO [REL]` as
/// written, and `REF REL` when the second word names a relation of REF's state (or its
/// parent's) and no reference. A name that is both is an error saying so.
fn second_word(db: &Database, args: &DiffArgs) -> anyhow::Result<(Option<String>, Option<String>)> {
    let (Some(second), None) = (&args.second, &args.relation) else {
        return Ok((args.second.clone(), args.relation.clone()));
    };
    let Ok(at) = db.resolve(&args.first) else {
        return Ok((args.second.clone(), None));
    };
    let before = at.commit.map(|_| db.first_parent(&at)).transpose()?;
    let declared = at.entry(second).is_some() || before.is_some_and(|b| b.entry(second).is_some());
    if !declared {
        return Ok((args.second.clone(), None));
    }
    let is_reference = db.resolve(second).is_ok();
    if args.all {
        // `--all` lists every relation: the second word can only be the state to go to.
        if is_reference {
            return Ok((args.second.clone(), None));
        }
        return Err(DbError::user(format!(
            "`{second}` is a relation, and --all lists every relation: give one or the other"
        ))
        .into());
    }
    if is_reference {
        return Err(DbError::user(format!(
            "`{second}` is both a reference and a relation: for the relation's changes in {}, write `rnt diff {}^ {} {second}`; for the states, `rnt diff {} {second} --all`",
            args.first, args.first, args.first, args.first
        ))
        .into());
    }
    Ok((None, Some(second.clone())))
}

/// Prints changes in `format`.
fn write_changes(
    out: &mut dyn Write,
    changes: &[TupleChange],
    format: DiffFormat,
) -> anyhow::Result<()> {
    match format {
        DiffFormat::Changes => {
            for change in changes {
                let tuple = TupleDisplay {
                    relation: &change.relation,
                    values: &change.tuple,
                };
                writeln!(out, "{}{tuple}", change.sign)?;
            }
        }
        DiffFormat::Json => {
            let items = changes
                .iter()
                .map(|change| {
                    Json::object([
                        ("relation", Json::Str(change.relation.clone())),
                        ("sign", Json::Str(change.sign.to_string())),
                        (
                            "tuple",
                            Json::Array(change.tuple.iter().map(Json::of_value).collect()),
                        ),
                    ])
                })
                .collect();
            write!(out, "{}", Json::Array(items).pretty())?;
        }
    }
    Ok(())
}

/// Whether `name` is declared in `snapshot` and kept in a tree (a relation or a view).
fn is_stored(snapshot: &Snapshot, name: &str) -> bool {
    snapshot.entry(name).is_some_and(|e| e.root.is_some())
}

/// The diff of an ephemeral relation or a denial, which no state stores: evaluate it in
/// both states and compare the tuples (sorted by tuple, as `Database::diff` sorts).
fn evaluated_diff(
    db: &Database,
    from: &Snapshot,
    to: &Snapshot,
    name: &str,
) -> anyhow::Result<Vec<TupleChange>> {
    if from.entry(name).is_none() && to.entry(name).is_none() {
        to.require(name)?;
    }
    let tuples = |snapshot: &Snapshot| -> anyhow::Result<BTreeSet<Tuple>> {
        Ok(match snapshot.entry(name) {
            Some(_) => db.tuples(snapshot, name)?.into_iter().collect(),
            None => BTreeSet::new(),
        })
    };
    let (old, new) = (tuples(from)?, tuples(to)?);
    let deleted = old.difference(&new).map(|t| (t, Sign::Delete));
    let inserted = new.difference(&old).map(|t| (t, Sign::Insert));
    let mut changes: Vec<(&Tuple, Sign)> = deleted.chain(inserted).collect();
    changes.sort();
    let mut changes: Vec<TupleChange> = changes
        .into_iter()
        .map(|(tuple, sign)| TupleChange {
            relation: name.to_string(),
            sign,
            tuple: tuple.clone(),
        })
        .collect();
    let key = key_columns(to, name).or_else(|| key_columns(from, name));
    sort_changes(&mut changes, key.as_deref());
    Ok(changes)
}
