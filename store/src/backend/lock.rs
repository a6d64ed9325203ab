//! The writer lock: one process at a time may write a pack store.
//!
//! An exclusive advisory lock (`flock`) on `FOLDER/lock`, held for as long as the writer's
//! handle lives. The operating system drops it when the process ends, however it ends, so
//! a killed writer never leaves a store locked. Readers never take it.

use crate::{StoreError, StoreResult};
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::time::{Duration, Instant};

/// The lock file's name in the store folder.
pub const LOCK_FILE: &str = "lock";

/// The first pause between two attempts; it doubles up to [`POLL_PAUSE_MAX`].
const POLL_PAUSE_FIRST: Duration = Duration::from_millis(2);

/// The longest pause between two attempts: a waiting writer starts within this of the
/// holder's end.
const POLL_PAUSE_MAX: Duration = Duration::from_millis(50);

/// A held writer lock; dropping it lets go.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the writer lock of the store in `folder`, waiting up to `wait` for another
    /// process to let go; then fails with [`StoreError::Locked`].
    pub fn acquire(folder: &Path, wait: Duration) -> StoreResult<WriterLock> {
        let path = folder.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let started = Instant::now();
        let mut pause = POLL_PAUSE_FIRST;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(WriterLock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) => {
                    let waited = started.elapsed();
                    if waited >= wait {
                        return Err(StoreError::Locked {
                            path: folder.display().to_string(),
                            waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                        });
                    }
                    std::thread::sleep(pause.min(wait.saturating_sub(waited)));
                    pause = (pause * 2).min(POLL_PAUSE_MAX);
                }
                Err(std::fs::TryLockError::Error(error)) => return Err(error.into()),
            }
        }
    }
}
