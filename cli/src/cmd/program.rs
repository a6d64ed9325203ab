//! `rnt program [--at REF] [--internal] [--format table|json]`: the canonical program text
//! of a state, as the state stores it (comments and layout dropped, a fixed order). The
//! table format is the text as it is; JSON is `{"commit": HEX, "state": HEX, "program":
//! TEXT}`, with `commit` null for a state named by its hash or the empty store's state.
//! Without `--internal`, both leave out the SQL compiler's helper relations (their
//! declarations and rules) and say how many in a first `#` comment line.

use crate::cmd::snapshot_at;
use crate::output::{Json, ReportFormat};
use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt program`.
#[derive(Debug, Args)]
pub struct ProgramArgs {
    /// The state to read (default: HEAD).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
    /// Also print the SQL compiler's helper relations (names starting with `_`) and their
    /// rules: the program exactly as the state stores it.
    #[arg(long)]
    internal: bool,
}

/// Prints the program.
pub fn run(context: &Context, args: ProgramArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let snapshot = snapshot_at(&db, args.at.as_deref())?;
    let program = crate::internal::program_text(&snapshot.state.program, args.internal);
    match args.format {
        ReportFormat::Table => write!(out, "{program}")?,
        ReportFormat::Json => {
            let json = Json::object([
                ("commit", Json::opt_str(snapshot.commit.map(|c| c.to_hex()))),
                ("state", Json::Str(snapshot.state_address.to_hex())),
                ("program", Json::Str(program)),
            ]);
            write!(out, "{}", json.pretty())?;
        }
    }
    Ok(())
}
