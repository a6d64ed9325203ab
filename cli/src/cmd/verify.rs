//! `rnt verify [--at REF]`: recompute every materialized relation of a state (tuples,
//! derivation counts, accumulators, indexes) from its base relations and compare
//! addresses. Exit 0 when every one agrees; on a mismatch, print each differing part with
//! its tuple diff and exit 3.
//!
//! The success line counts every view it checked but names the SQL compiler's helper
//! relations (names starting with `_`) only with `--internal` ("…, and 8 of the SQL
//! compiler's helpers"); a mismatch names its relation, helper or not: it is damage.
//!
//! Invariant checked: `maintain(V, state, Δ) == eval(V, state + Δ)`, by address.

use crate::cmd::snapshot_at;
use crate::output::SHORT_HEX_DIGITS;
use crate::Context;
use clap::Args;
use rnt_db::{DbError, IsKind, RelationKind};
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The state to verify (default HEAD).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Name the SQL compiler's helper relations (names starting with `_`) checked, too.
    #[arg(long)]
    internal: bool,
}

/// Verifies the state's materialized relations.
pub fn run(context: &Context, args: VerifyArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let snapshot = snapshot_at(&db, args.at.as_deref())?;
    let mut progress = crate::progress::Progress::new("verify", None);
    let report = db.verify_with_progress(&snapshot, &mut |line| progress.message(line));
    progress.finish();
    let report = report?;
    let views: Vec<&str> = report
        .checked
        .iter()
        .map(String::as_str)
        .filter(|name| {
            snapshot
                .entry(name)
                .is_some_and(|e| e.kind.is(RelationKind::View))
        })
        .collect();
    if report.mismatches.is_empty() {
        if views.is_empty() {
            writeln!(out, "verified: no materialized views to check")?;
        } else {
            let n = views.len();
            writeln!(
                out,
                "verified: {n} materialized view{} equal{} {} recomputation ({})",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                if n == 1 { "its" } else { "their" },
                names_text(&views, args.internal)
            )?;
        }
        return Ok(());
    }
    let short =
        |a: Option<Address>| a.map_or("none".to_string(), |a| a.short_hex(SHORT_HEX_DIGITS));
    for mismatch in &report.mismatches {
        writeln!(
            out,
            "mismatch in {} ({}): maintained {}, recomputed {}",
            mismatch.relation,
            mismatch.part,
            short(mismatch.maintained),
            short(mismatch.recomputed)
        )?;
        for difference in &mismatch.differences {
            writeln!(out, "  {difference}")?;
        }
    }
    let mut relations: Vec<&str> = report
        .mismatches
        .iter()
        .map(|m| m.relation.as_str())
        .collect();
    relations.dedup();
    Err(DbError::corrupted(format!(
        "verify failed: {} differ{} from the recomputation (details above)",
        relations.join(", "),
        if relations.len() == 1 { "s" } else { "" }
    ))
    .into())
}

/// The names of the views checked: every one with `internal`; otherwise the users' and the
/// number of the SQL compiler's helpers (`lj, v, and 8 of the SQL compiler's helpers`).
fn names_text(views: &[&str], internal: bool) -> String {
    let (names, helpers): (Vec<&str>, Vec<&str>) = views
        .iter()
        .copied()
        .partition(|name| crate::internal::shown(name, internal));
    if helpers.is_empty() {
        return names.join(", ");
    }
    let helpers = format!("{} of the SQL compiler's helpers", helpers.len());
    match names.is_empty() {
        true => helpers,
        false => format!("{}, and {helpers}", names.join(", ")),
    }
}
