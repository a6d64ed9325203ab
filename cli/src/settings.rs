//! What the CLI reads from the environment and hands to the library, which reads none:
//! `RNT_COMMIT_TIME` (Unix seconds), the time every new commit and reflog entry records,
//! so that commit ids are reproducible (the transcripts fix it); and the import step that
//! the memory budget allows; and the threads a commit maintains views on (`--threads N`,
//! else `RNT_THREADS`, else the cores).

use rnt_db::Database;
use rnt_store::ChunkStore;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The variable that sets how many threads a commit uses when `--threads` does not.
const THREADS_ENV: &str = "RNT_THREADS";

/// The threads installed by [`install_threads`] (0: not installed, the cores).
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Installs how many threads commits use: `option` (`--threads`), else [`THREADS_ENV`],
/// else the cores. A value of the variable that is not a count of at least one is an error.
pub fn install_threads(option: Option<usize>) -> Result<(), String> {
    let threads = match option {
        Some(n) => n,
        None => match std::env::var(THREADS_ENV) {
            Ok(text) => match text.trim().parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "{THREADS_ENV}={text:?} is not a thread count (1 to 1024)"
                    ))
                }
            },
            Err(_) => rnt_db::default_threads(),
        },
    };
    THREADS.store(threads, Ordering::Relaxed);
    Ok(())
}

/// The threads a commit maintains views on.
fn threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => rnt_db::default_threads(),
        n => n,
    }
}

/// The variable that fixes the time new commits record.
const COMMIT_TIME_ENV: &str = "RNT_COMMIT_TIME";

/// Bytes of working memory to allow per row of an import step: measured at ~600 in a
/// debug build (a 262,144-row step of a three-column relation with a count view), less in
/// a release build.
const IMPORT_STEP_BYTES_PER_ROW: usize = 1024;

/// The fewest rows per import step, however small the budget.
const IMPORT_STEP_ROWS_MIN: usize = 4096;

/// Rows per import step under a memory budget of `budget` bytes (0: none): a step's working
/// memory, which the budget cannot check until the step ends, stays within a quarter of the
/// budget; [`rnt_db::IMPORT_STEP_ROWS`] at most.
fn import_step_rows(budget: usize) -> usize {
    match budget {
        0 => rnt_db::IMPORT_STEP_ROWS,
        bytes => (bytes / 4 / IMPORT_STEP_BYTES_PER_ROW)
            .clamp(IMPORT_STEP_ROWS_MIN, rnt_db::IMPORT_STEP_ROWS),
    }
}

/// The most node cache a one-shot command takes: it reads little, and only a bulk import
/// fills its cache, with nodes it has just written. At 256 MiB, importing 10M orders with
/// two views peaks at 875 MiB (docs/bench-storage.md).
const COMMAND_NODE_CACHE_BYTES_MAX: usize = 256 << 20;

/// The node cache under a memory budget of `budget` bytes (0: none): a quarter of it,
/// `most` at most. Without the quarter, a 256 MiB cache could fill a 128 MiB budget on its
/// own during a long import.
fn node_cache_bytes(budget: usize, most: usize) -> usize {
    match budget {
        0 => most,
        bytes => (bytes / 4).min(most),
    }
}

/// The node cache of `rnt serve`: a quarter of the budget, the library's default at most
/// (1 GiB). A server lives for hours, and its commits read the current state's hot trees;
/// held to a command's 256 MiB, a 1M-order store's working set no longer fits after a few
/// hundred commits and each commit reads again what it read before (measured in a warm
/// process: W5's commit 2.7 → 7.1 ms after 1 000 commits at 256 MiB, 2.7 ms at 1 GiB).
pub fn serving_node_cache_bytes() -> usize {
    node_cache_bytes(
        rnt_db::memory_budget(),
        rnt_merkle::NODE_CACHE_BYTES_DEFAULT,
    )
}

/// A database over `chunks`, configured from the environment (and the memory budget
/// installed from it).
pub fn database(chunks: Arc<dyn ChunkStore>) -> Database {
    let budget = rnt_db::memory_budget();
    let db = Database::new(chunks)
        .with_import_step_rows(import_step_rows(budget))
        .with_node_cache_bytes(node_cache_bytes(budget, COMMAND_NODE_CACHE_BYTES_MAX))
        .with_threads(threads());
    match std::env::var(COMMIT_TIME_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
    {
        Some(fixed) => db.with_commit_time(Arc::new(move || fixed)),
        None => db,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_cache_takes_a_quarter_of_the_budget_at_most() {
        let command = COMMAND_NODE_CACHE_BYTES_MAX;
        assert_eq!(node_cache_bytes(0, command), command);
        assert_eq!(node_cache_bytes(128 << 20, command), 32 << 20);
        assert_eq!(node_cache_bytes(64 << 30, command), command);
        let serving = rnt_merkle::NODE_CACHE_BYTES_DEFAULT;
        assert_eq!(node_cache_bytes(64 << 30, serving), serving);
        assert_eq!(node_cache_bytes(2 << 30, serving), 512 << 20);
        assert!(serving > command, "a server holds more than a command");
    }

    #[test]
    fn an_import_step_fits_a_quarter_of_the_budget() {
        assert_eq!(import_step_rows(0), rnt_db::IMPORT_STEP_ROWS);
        assert_eq!(import_step_rows(8 << 30), rnt_db::IMPORT_STEP_ROWS);
        assert_eq!(import_step_rows(96 << 20), 24_576);
        assert_eq!(import_step_rows(1 << 20), IMPORT_STEP_ROWS_MIN);
    }
}
