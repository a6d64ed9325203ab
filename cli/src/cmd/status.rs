//! `rnt status [--internal] [--format table|json]`: the current branch, the head commit, its
//! state hash, and every relation with its kind, count and root (the SQL compiler's helper
//! relations only with `--internal`).

use crate::output::{write_table, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_db::DbError;
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
    /// Also list the SQL compiler's helper relations (names starting with `_`).
    #[arg(long)]
    internal: bool,
}

/// Prints the status.
pub fn run(context: &Context, args: StatusArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let branch = db.current_branch()?;
    let head = db.head()?;
    // Each relation with its kind's keyword (the state records the kind as a code).
    let relations = head
        .state
        .relations
        .iter()
        .filter(|r| crate::internal::shown(&r.name, args.internal))
        .map(|r| Ok((r, head.kind_of(r)?.keyword())))
        .collect::<Result<Vec<_>, DbError>>()?;
    match args.format {
        ReportFormat::Json => {
            // count and root are null for relations that are not stored (ephemeral, denial).
            let relations = relations
                .iter()
                .map(|(r, kind)| {
                    Json::object([
                        ("name", Json::Str(r.name.clone())),
                        ("kind", Json::Str(kind.to_string())),
                        ("count", r.count.map_or(Json::Null, Json::UInt)),
                        (
                            "root",
                            Json::opt_str(r.root.map(|root| Address::from_bytes(root).to_hex())),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                ("branch", Json::Str(branch.clone())),
                ("commit", Json::opt_str(head.commit.map(|c| c.to_hex()))),
                ("state", Json::Str(head.state_address.to_hex())),
            ];
            // A state whose program mentions `now` carries a clock; the key exists only then.
            if let Some(clock) = head.state.clock {
                fields.push(("clock", Json::Int(clock)));
            }
            fields.push(("relations", Json::Array(relations)));
            let status = Json::object(fields);
            write!(out, "{}", status.pretty())?;
        }
        ReportFormat::Table => {
            writeln!(out, "branch  {branch}")?;
            match head.commit {
                Some(commit) => writeln!(out, "commit  {}", commit.to_hex())?,
                None => writeln!(out, "commit  none (no commits yet)")?,
            }
            writeln!(out, "state   {}", head.state_address.to_hex())?;
            if let Some(clock) = head.state.clock {
                writeln!(out, "clock   {clock} ({})", crate::time::rfc3339(clock))?;
            }
            if head.state.relations.is_empty() {
                writeln!(out, "no relations (define a program with `rnt define`)")?;
                return Ok(());
            }
            writeln!(out)?;
            let rows: Vec<Vec<String>> = relations
                .iter()
                .map(|(r, kind)| {
                    vec![
                        r.name.clone(),
                        kind.to_string(),
                        r.count.map_or("-".to_string(), |c| c.to_string()),
                        r.root.map_or("-".to_string(), |root| {
                            Address::from_bytes(root).short_hex(SHORT_HEX_DIGITS)
                        }),
                    ]
                })
                .collect();
            write_table(
                out,
                &["relation", "kind", "count", "root"],
                &[false, false, true, false],
                &rows,
            )?;
        }
    }
    Ok(())
}
