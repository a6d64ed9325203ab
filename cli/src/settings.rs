//! What the CLI reads from the environment and hands to the library, which reads none:
//! `RNT_COMMIT_TIME` (Unix seconds), the time every new commit and reflog entry records,
//! so that commit ids are reproducible (the transcripts fix it).

use rnt_db::Database;
use rnt_store::ChunkStore;
use std::sync::Arc;

/// The variable that fixes the time new commits record.
const COMMIT_TIME_ENV: &str = "RNT_COMMIT_TIME";

/// A database over `chunks`, configured from the environment.
pub fn database(chunks: Arc<dyn ChunkStore>) -> Database {
    let db = Database::new(chunks);
    match std::env::var(COMMIT_TIME_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
    {
        Some(fixed) => db.with_commit_time(Arc::new(move || fixed)),
        None => db,
    }
}
