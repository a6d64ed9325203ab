//! `rnt gc`: delete the chunks no branch, tag, `HEAD` or reflog entry reaches, and report
//! the bytes before and after.

use crate::Context;
use clap::Args;
use rnt_db::DbError;
use std::io::Write;

/// Arguments of `rnt gc`.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::output::ReportFormat::Table)]
    format: crate::output::ReportFormat,
}

/// Keeps every chunk reachable from a ref or a reflog entry (each commit, its ancestors,
/// their states and trees, the branch records) and drops the rest. Holds the writer lock throughout, so no commit lands between
/// computing what is live and dropping the rest.
pub fn run(context: &Context, args: GcArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open_for_writing()?;
    let chunks = db.chunks().clone();
    let live = db.live_chunks()?;
    let report = chunks
        .collect_garbage(&|address| live.contains(address))
        .map_err(DbError::from)?;
    if args.format == crate::output::ReportFormat::Json {
        let json = serde_json::json!({
            "bytes_before": report.bytes_before,
            "bytes_after": report.bytes_after,
            "chunks_kept": report.chunks_kept,
            "chunks_dropped": report.chunks_dropped,
        });
        writeln!(out, "{json}")?;
    } else {
        writeln!(
            out,
            "kept {} chunks, dropped {}; the store went from {} to {} bytes ({} freed)",
            report.chunks_kept,
            report.chunks_dropped,
            report.bytes_before,
            report.bytes_after,
            report.bytes_before.saturating_sub(report.bytes_after)
        )?;
    }
    Ok(())
}
