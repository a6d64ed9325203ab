//! `rnt alter [-m MSG] REL FORM`: change a base relation's schema in place, in one commit
//! (docs/design.md, "Schema changes"). The program is rewritten with the relation; views
//! that read it are recomputed, everything else keeps its trees.

use crate::output::committed_line;
use crate::Context;
use clap::{Args, Subcommand};
use rnt_db::{parse_column_type, Alteration, CommitOutcome, DbError};
use std::io::Write;

/// Arguments of `rnt alter`.
#[derive(Debug, Args)]
pub struct AlterArgs {
    /// The base relation to alter.
    #[arg(value_name = "REL")]
    relation: String,
    /// The commit message (default: `alter REL FORM`).
    #[arg(short, long, value_name = "MSG", global = true)]
    message: Option<String>,
    /// What to change.
    #[command(subcommand)]
    form: Form,
}

/// The forms of `rnt alter`.
#[derive(Debug, Subcommand)]
enum Form {
    /// Add a column (it goes last); a `T?` column without a default fills with null.
    Add {
        /// The new column's name.
        column: String,
        /// Its type: int, str, bool, date, timestamp, decimal(p, s), with `?` for nullable.
        #[arg(value_name = "TYPE")]
        column_type: String,
        /// The value the column takes in every tuple, as a change file writes it (`7`,
        /// `"none"`, `12.50`, `null`); not kept in the declaration.
        #[arg(long, value_name = "VALUE", allow_hyphen_values = true)]
        default: Option<String>,
    },
    /// Drop a column no rule reads (a keyless relation merges tuples that become equal).
    Drop {
        /// The column.
        column: String,
    },
    /// Rename a column (named arguments in rules follow).
    Rename {
        /// The column.
        column: String,
        /// Its new name.
        new: String,
    },
    /// Rename the relation (every rule follows).
    RenameTo {
        /// The new name.
        new: String,
    },
    /// Widen a column's type: T → T?, int → decimal(p, s), a wider decimal.
    Type {
        /// The column.
        column: String,
        /// The new type.
        #[arg(value_name = "TYPE")]
        column_type: String,
    },
    /// Set the key (checked against the data), or remove it with --none.
    Key {
        /// The key's columns.
        #[arg(value_name = "COLUMN", required_unless_present = "none")]
        columns: Vec<String>,
        /// No key.
        #[arg(long, conflicts_with = "columns")]
        none: bool,
    },
    /// Drop the relation and its tuples (refused while a rule reads it).
    DropRelation,
}

impl Form {
    /// The alteration the form asks for, and an added column's default.
    fn alteration(self) -> Result<(Alteration, Option<String>), DbError> {
        let column_type = |text: &str| parse_column_type(text).map_err(|e| DbError::user(e.0));
        Ok(match self {
            Form::Add {
                column,
                column_type: ty,
                default,
            } => (
                Alteration::Add {
                    column,
                    column_type: column_type(&ty)?,
                },
                default,
            ),
            Form::Drop { column } => (Alteration::Drop { column }, None),
            Form::Rename { column, new } => (Alteration::Rename { column, new }, None),
            Form::RenameTo { new } => (Alteration::RenameTo { new }, None),
            Form::Type {
                column,
                column_type: ty,
            } => (
                Alteration::Type {
                    column,
                    column_type: column_type(&ty)?,
                },
                None,
            ),
            Form::Key { columns, .. } => (Alteration::Key { columns }, None),
            Form::DropRelation => (Alteration::DropRelation, None),
        })
    }
}

/// Alters the relation in one commit and prints the `committed` line (and, on stderr, the
/// tuples a dropped column merged).
pub fn run(context: &Context, args: AlterArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (alteration, default) = args.form.alteration()?;
    let relation = args.relation;
    if let Alteration::RenameTo { new } = &alteration {
        // A name at all (`_` alone is the wildcard: the database says it is not a name).
        let a_name = new.len() > 1 && new.chars().all(|c| c == '_' || c.is_alphanumeric());
        if a_name && rnt_db::is_internal(new) {
            return Err(crate::internal::reserved_name(new).into());
        }
    }
    let db = context.open_for_writing()?;
    let message = args
        .message
        .unwrap_or_else(|| format!("alter {relation} {alteration}"));
    let altered = db.alter(&relation, &alteration, default.as_deref(), &message)?;
    match altered.outcome {
        CommitOutcome::Committed {
            commit,
            state,
            changes,
            ..
        } => {
            writeln!(
                out,
                "{}",
                committed_line(&commit, &state, &changes, Some(&message))
            )?;
            if altered.merged > 0 {
                context.note(&format!(
                    "{} tuples merged: `{relation}` has no key, and they became equal without the dropped column",
                    altered.merged
                ));
            }
        }
        CommitOutcome::NothingToCommit => {
            writeln!(out, "nothing to commit (the schema is unchanged)")?
        }
    }
    Ok(())
}
