//! `rnt diff REF [TO] [REL] [--all | --program]`: the tuples that differ between two
//! states — REF's first parent and REF when one REF is given (the root commit's parent is
//! the empty state) — one change a line in change-file syntax, sorted by relation then
//! tuple. By default only base relations are listed, so the output is a change file that,
//! committed on the first state, reaches the second state's contents. When the two programs
//! differ, a note on stderr says so; `--program` prints a unified diff of the two canonical
//! program texts instead of tuples.

use crate::line_diff;
use crate::Context;
use clap::Args;
use rnt_db::tuple::TupleDisplay;
use rnt_db::{Database, DiffScope, Sign, Snapshot, Tuple, TupleChange};
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
}

/// Prints the differences.
pub fn run(context: &Context, args: DiffArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let (from_name, from, to_name, to) = match &args.second {
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
    if args.program {
        let text = line_diff::unified(&from_name, &from.state.program, &to_name, &to.state.program);
        write!(out, "{text}")?;
        return Ok(());
    }
    let scope = match (args.relation, args.all) {
        (Some(relation), _) => DiffScope::Relation(relation),
        (None, true) => DiffScope::All,
        (None, false) => DiffScope::Base,
    };
    let changes = match &scope {
        DiffScope::Relation(name) if !is_stored(&from, name) && !is_stored(&to, name) => {
            evaluated_diff(&db, &from, &to, name)?
        }
        _ => db.diff(&from, &to, &scope)?,
    };
    for change in changes {
        let tuple = TupleDisplay {
            relation: &change.relation,
            values: &change.tuple,
        };
        writeln!(out, "{}{tuple}", change.sign)?;
    }
    if from.state.program != to.state.program {
        // The changes are on stdout already; flush them so the note follows them on a
        // terminal that shows both streams.
        out.flush()?;
        eprintln!("{PROGRAM_DIFFERS_NOTE}");
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
    Ok(changes
        .into_iter()
        .map(|(tuple, sign)| TupleChange {
            relation: name.to_string(),
            sign,
            tuple: tuple.clone(),
        })
        .collect())
}
