//! One writer at a time: a write takes the gate, then the store's writer lock (waited for
//! as any writer waits), runs, publishes and lets the lock go, so a CLI writer beside the
//! server gets its turn. Every write bumps a counter that subscriptions watch.

use rnt_db::{Database, DbError};
use std::sync::Mutex;
use tokio::sync::watch;

/// The writers' gate of one server.
pub struct Gate {
    writer: Mutex<()>,
    writes: watch::Sender<u64>,
}

/// Lets go of the store's writer lock when the write ends, however it ends (a panic too).
struct Holding<'a> {
    db: &'a Database,
    released: bool,
}

impl Holding<'_> {
    fn release(mut self) -> anyhow::Result<()> {
        self.released = true;
        self.db.chunks().end_writing().map_err(DbError::from)?;
        Ok(())
    }
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.db.chunks().end_writing();
        }
    }
}

impl Gate {
    /// A gate no one holds.
    pub fn new() -> Gate {
        Gate {
            writer: Mutex::new(()),
            writes: watch::channel(0).0,
        }
    }

    /// Runs `write` as the one writer of this server, holding the store's writer lock.
    pub fn write<T>(&self, db: &Database, write: impl FnOnce() -> T) -> anyhow::Result<T> {
        let _one = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        db.chunks().begin_writing().map_err(DbError::from)?;
        let holding = Holding {
            db,
            released: false,
        };
        let result = write();
        holding.release()?;
        self.writes.send_modify(|count| *count += 1);
        Ok(result)
    }

    /// A receiver told of every write this server makes.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.writes.subscribe()
    }
}
