//! `rnt diff REF REF [REL] [--all]`: the tuples that differ between two states, one change
//! a line in change-file syntax, sorted by relation then tuple. By default only base
//! relations are listed, so the output is a change file that, committed on the first
//! state, reaches the second state's contents.

use crate::Context;
use clap::Args;
use rnt_maintain::tuple::TupleDisplay;
use rnt_maintain::{Database, DiffScope, Sign, Snapshot, Tuple, TupleChange};
use std::collections::BTreeSet;
use std::io::Write;

/// Arguments of `rnt diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The state to go from.
    #[arg(value_name = "FROM")]
    from: String,
    /// The state to go to.
    #[arg(value_name = "TO")]
    to: String,
    /// Only this relation (derived ones included).
    #[arg(value_name = "REL", conflicts_with = "all")]
    relation: Option<String>,
    /// Every stored relation, derived ones included.
    #[arg(long)]
    all: bool,
}

/// Prints the differences.
pub fn run(context: &Context, args: DiffArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let from = db.resolve(&args.from)?;
    let to = db.resolve(&args.to)?;
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
