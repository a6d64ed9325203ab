//! `rnt fsck [--repair [--from REMOTE]] [--format table|json]`: read every chunk any
//! branch, tag, reflog entry or remote-tracking ref reaches and re-hash it (git's habit:
//! `fsck` checks storage as `verify` checks maintenance). Exit 0 when every reachable
//! chunk is present and hashes to its name, 3 otherwise, naming each damaged chunk, its
//! file, and the refs and states that reach it. What the store's files say of themselves
//! (bytes after the last record, a cut pack, a missing or damaged index, a missing pack,
//! files no manifest lists) is reported beside.
//!
//! `--repair` fetches the damaged chunks again from remote `--from` (each checked against
//! its name, and then what they reach), writes them over the damage, cuts a reflog at an
//! entry no remote gave back (reflogs do not travel), and rewrites each pack with damage
//! from its good records (trailing bytes dropped, a new index); then it checks again and
//! reports as above.
//!
//! JSON: `{"clean", "chunks", "bytes", "refs", "damaged": [{"chunk", "missing", "file",
//! "offset", "detail", "refs", "states"}], "files": [{"file", "kind", "detail"}],
//! "repair"}` where `repair` is `null` or `{"from", "fetched", "actions"}`.

use crate::output::{Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::progress::{human_bytes, Progress};
use crate::Context;
use clap::Args;
use rnt_db::{Database, DbError};
use rnt_merkle::{check_reachable, CheckReport};
use rnt_store::{Address, ChunkFile, ChunkStore, FileFinding};
use std::collections::BTreeSet;
use std::io::Write;

/// States listed per damaged chunk in the table (JSON lists all).
const STATES_SHOWN: usize = 3;

/// Rounds of fetching: each round fetches what the last check found damaged, and the
/// next check reads what those chunks reach (a history is walked in one round; a tree
/// fetched from its root needs one round per level).
const FETCH_ROUNDS_MAX: usize = 64;

/// Arguments of `rnt fsck`.
#[derive(Debug, Args)]
pub struct FsckArgs {
    /// Mend what can be mended: fetch damaged chunks from --from, drop bytes after the last
    /// record, rebuild damaged or missing indexes.
    #[arg(long)]
    repair: bool,
    /// The remote to fetch damaged chunks from (see `rnt remote -v`).
    #[arg(long, value_name = "REMOTE", requires = "repair")]
    from: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// What one check found.
struct Found {
    /// The refs checked, by name.
    refs: Vec<String>,
    report: CheckReport,
    /// Where each damaged chunk's record is (in `report.damaged`'s order).
    places: Vec<Option<ChunkFile>>,
    files: Vec<FileFinding>,
}

/// What a repair did.
struct Repaired {
    from: Option<String>,
    fetched: usize,
    actions: Vec<String>,
}

/// Checks (and repairs) the store.
pub fn run(context: &Context, args: FsckArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = if args.repair {
        context.open_for_writing()?
    } else {
        context.open()?
    };
    let mut found = check(&db)?;
    let repaired = match args.repair {
        true => Some(repair(context, &db, args.from.as_deref(), &found)?),
        false => None,
    };
    if repaired.is_some() {
        found = check(&db)?;
    }
    match args.format {
        ReportFormat::Json => write!(out, "{}", json(&found, repaired.as_ref()).pretty())?,
        ReportFormat::Table => write_table(out, &found, repaired.as_ref())?,
    }
    let damaged = found.report.damaged.len();
    if damaged == 0 {
        return Ok(());
    }
    let hint = match &repaired {
        Some(_) => "no remote named with --from had them",
        None => "`rnt fsck --repair --from REMOTE` fetches them from a remote that has them",
    };
    Err(DbError::corrupted(format!(
        "fsck found {damaged} damaged chunk{} (listed above); {hint}",
        if damaged == 1 { "" } else { "s" }
    ))
    .into())
}

/// Reads every chunk the refs reach, with a progress line on a terminal, and what the
/// files say.
fn check(db: &Database) -> anyhow::Result<Found> {
    let chunks = db.chunks().as_ref();
    let refs = chunks.list_refs().map_err(DbError::from)?;
    let roots: Vec<Address> = refs.iter().map(|(_, address)| *address).collect();
    let mut progress = Progress::new("fsck", None);
    let report = check_reachable(chunks, &roots, &mut |count, bytes| {
        progress.status(&format!("{count} chunks, {}", human_bytes(bytes)));
    });
    progress.finish();
    let report = report.map_err(DbError::from)?;
    let mut places = Vec::with_capacity(report.damaged.len());
    let mut files = Vec::new();
    if let Some(store_files) = chunks.files() {
        for damaged in &report.damaged {
            places.push(
                store_files
                    .chunk_file(&damaged.address)
                    .map_err(DbError::from)?,
            );
        }
        files = store_files.findings().map_err(DbError::from)?;
    } else {
        places.resize(report.damaged.len(), None);
    }
    Ok(Found {
        refs: refs.into_iter().map(|(name, _)| name).collect(),
        report,
        places,
        files,
    })
}

/// Fetches the damaged chunks from `from` (round after round, as fetched chunks reveal
/// what they reach), writes them over the damage, and rewrites the damaged packs.
fn repair(
    context: &Context,
    db: &Database,
    from: Option<&str>,
    first: &Found,
) -> anyhow::Result<Repaired> {
    let chunks = db.chunks().as_ref();
    let mut damaged: BTreeSet<Address> = addresses(&first.report);
    let mut unreadable = damaged.clone();
    let mut fetched = 0;
    if let Some(name) = from {
        let path = crate::store_open::locate(context.store.as_deref())?;
        let remote = crate::store_open::open_remote(&db.remote_url(name)?, &path, false)?;
        let mut tried = BTreeSet::new();
        for _ in 0..FETCH_ROUNDS_MAX {
            let wanted: Vec<Address> = unreadable.difference(&tried).copied().collect();
            tried.extend(wanted.iter().copied());
            let got: Vec<(Address, rnt_store::Chunk)> = wanted
                .iter()
                .filter_map(|address| Some((*address, remote.get(address).ok()?)))
                .collect();
            if got.is_empty() {
                break;
            }
            fetched += got.len();
            write_over_damage(chunks, &got)?;
            let again = check_reachable(chunks, &roots_of(chunks)?, &mut |_, _| {})
                .map_err(DbError::from)?;
            unreadable = addresses(&again);
            damaged.extend(unreadable.iter().copied());
        }
    }
    let mut actions = Vec::new();
    if !unreadable.is_empty() {
        // What no remote gave back: a reflog cut at a damaged entry makes the older ones
        // unreachable, so they need no record any more.
        actions = db.cut_damaged_reflogs(&unreadable)?;
        if !actions.is_empty() {
            unreadable = addresses(
                &check_reachable(chunks, &roots_of(chunks)?, &mut |_, _| {})
                    .map_err(DbError::from)?,
            );
        }
    }
    if let Some(files) = chunks.files() {
        let repaired = files.repair(&damaged, &unreadable).map_err(DbError::from)?;
        actions.extend(repaired.actions);
    }
    Ok(Repaired {
        from: from.map(str::to_string),
        fetched,
        actions,
    })
}

/// Writes chunks fetched again over their damaged records.
fn write_over_damage(
    chunks: &dyn ChunkStore,
    got: &[(Address, rnt_store::Chunk)],
) -> anyhow::Result<()> {
    let addressed: Vec<(Address, &[u8])> = got
        .iter()
        .map(|(address, bytes)| (*address, &bytes[..]))
        .collect();
    match chunks.files() {
        Some(files) => files.put_over_damage(&addressed),
        None => chunks
            .put_addressed(&addressed)
            .and_then(|()| chunks.flush()),
    }
    .map_err(DbError::from)?;
    Ok(())
}

/// The refs' targets.
fn roots_of(chunks: &dyn ChunkStore) -> anyhow::Result<Vec<Address>> {
    Ok(chunks
        .list_refs()
        .map_err(DbError::from)?
        .into_iter()
        .map(|(_, address)| address)
        .collect())
}

/// The damaged chunks' addresses.
fn addresses(report: &CheckReport) -> BTreeSet<Address> {
    report
        .damaged
        .iter()
        .map(|damaged| damaged.address)
        .collect()
}

/// The detail of a damaged chunk without the "corrupted chunk HEX: " its error starts
/// with (the listing names the chunk already).
fn detail_of(address: &Address, detail: &str) -> String {
    detail
        .strip_prefix(&format!("corrupted chunk {address}: "))
        .unwrap_or(detail)
        .to_string()
}

/// The report for people.
fn write_table(
    out: &mut dyn Write,
    found: &Found,
    repaired: Option<&Repaired>,
) -> anyhow::Result<()> {
    if let Some(repaired) = repaired {
        if let Some(from) = &repaired.from {
            writeln!(
                out,
                "repair: fetched {} chunks from {from}",
                repaired.fetched
            )?;
        }
        for action in &repaired.actions {
            writeln!(out, "repair: {action}")?;
        }
    }
    let report = &found.report;
    let refs = found.refs.len();
    writeln!(
        out,
        "checked {} chunks ({}) reached by {refs} ref{}: {}",
        report.chunks,
        human_bytes(report.bytes),
        if refs == 1 { "" } else { "s" },
        match report.damaged.len() {
            0 => "all good".to_string(),
            n => format!("{n} damaged"),
        }
    )?;
    for (damaged, place) in report.damaged.iter().zip(&found.places) {
        let what = if damaged.missing {
            "missing"
        } else {
            "damaged"
        };
        writeln!(
            out,
            "{what} chunk {}: {}",
            damaged.address,
            detail_of(&damaged.address, &damaged.detail)
        )?;
        if let Some(place) = place {
            writeln!(out, "  file: {} at offset {}", place.file, place.offset)?;
        }
        let refs: Vec<&str> = damaged
            .roots
            .iter()
            .map(|&root| found.refs[root].as_str())
            .collect();
        writeln!(out, "  reached by refs: {}", refs.join(", "))?;
        if !damaged.states.is_empty() {
            let mut states: Vec<String> = damaged
                .states
                .iter()
                .take(STATES_SHOWN)
                .map(|state| state.short_hex(SHORT_HEX_DIGITS))
                .collect();
            if damaged.states.len() > STATES_SHOWN {
                states.push(format!("and {} more", damaged.states.len() - STATES_SHOWN));
            }
            writeln!(out, "  in states: {}", states.join(", "))?;
        }
    }
    for finding in &found.files {
        writeln!(out, "file {}: {}", finding.file, finding.detail)?;
    }
    Ok(())
}

/// The report for scripts (the shape in the module documentation).
fn json(found: &Found, repaired: Option<&Repaired>) -> Json {
    let report = &found.report;
    let damaged = report
        .damaged
        .iter()
        .zip(&found.places)
        .map(|(damaged, place)| {
            Json::object([
                ("chunk", Json::Str(damaged.address.to_hex())),
                ("missing", Json::Bool(damaged.missing)),
                (
                    "file",
                    Json::opt_str(place.as_ref().map(|p| p.file.clone())),
                ),
                (
                    "offset",
                    place.as_ref().map_or(Json::Null, |p| Json::UInt(p.offset)),
                ),
                (
                    "detail",
                    Json::Str(detail_of(&damaged.address, &damaged.detail)),
                ),
                (
                    "refs",
                    Json::Array(
                        damaged
                            .roots
                            .iter()
                            .map(|&root| Json::Str(found.refs[root].clone()))
                            .collect(),
                    ),
                ),
                (
                    "states",
                    Json::Array(
                        damaged
                            .states
                            .iter()
                            .map(|s| Json::Str(s.to_hex()))
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let files = found
        .files
        .iter()
        .map(|finding| {
            Json::object([
                ("file", Json::Str(finding.file.clone())),
                ("kind", Json::Str(finding.kind.name().to_string())),
                ("detail", Json::Str(finding.detail.clone())),
            ])
        })
        .collect();
    let repair = repaired.map_or(Json::Null, |repaired| {
        Json::object([
            ("from", Json::opt_str(repaired.from.clone())),
            ("fetched", Json::UInt(repaired.fetched as u64)),
            (
                "actions",
                Json::Array(repaired.actions.iter().cloned().map(Json::Str).collect()),
            ),
        ])
    });
    Json::object([
        ("clean", Json::Bool(report.damaged.is_empty())),
        ("chunks", Json::UInt(report.chunks)),
        ("bytes", Json::UInt(report.bytes)),
        ("refs", Json::UInt(found.refs.len() as u64)),
        ("damaged", Json::Array(damaged)),
        ("files", Json::Array(files)),
        ("repair", repair),
    ])
}
