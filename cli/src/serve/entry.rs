//! The entry the writing server leaves in the store (`server`: a file in a store folder,
//! readable by its owner only; a side object `notes/server` under an object store's prefix):
//! its HTTP address, the store's id, the machine and pid it runs as, and a secret made at
//! each start. `rnt` commands on the store read it to go through the server, after the
//! server proves it holds the secret (see `identity`); a stale entry is replaced. A
//! read-only server leaves none (any number may serve one store: replicas). No transfer
//! copies it: a clone never names the original's server.

use super::identity::{self, Answer};
use super::Server;
use crate::output::Json;
use rnt_db::DbError;
use rnt_store::ChunkStore;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The entry's file name in the store folder.
pub const ENTRY_FILE: &str = "server";

/// Where an entry is kept.
#[derive(Clone)]
enum Place {
    /// A file in a store folder.
    File(PathBuf),
    /// A side object of an object store.
    Note(Arc<dyn ChunkStore>),
}

/// The writing server, as its entry names it.
#[derive(Clone)]
pub struct Entry {
    /// Where it listens for HTTP.
    pub http: SocketAddr,
    /// The id of the store it serves (see `store_id`).
    pub store_id: String,
    /// The machine it runs on (see [`identity::this_machine`]).
    pub machine: String,
    /// Its process id, on that machine.
    pub pid: u32,
    /// The secret made at its start: a write token, and the key of its proofs.
    pub secret: String,
    /// Where the entry is kept.
    place: Place,
}

/// What an entry found in a store comes to, for a command about to use it.
pub enum Found {
    /// Its server proved it is the one named: go through it (with the current branch's
    /// commit it sees, when asked).
    Serving(Option<String>),
    /// It names a server on another machine: not for this one, left as it is.
    Elsewhere,
    /// Its server is gone, or something else answers there (the reason): replaced.
    Stale(String),
    /// Its server's process lives but did not answer in time: left as it is.
    Silent,
}

impl Entry {
    /// Records `server`, listening at `http`, in its store; `None` for a read-only server
    /// (never named) and for a store that keeps no entry. Refuses when the entry names a
    /// server that proves it serves this store; any other entry is replaced.
    pub fn record(server: &Server, http: SocketAddr) -> anyhow::Result<Option<Entry>> {
        let Some(secret) = server.secret.clone() else {
            return Ok(None);
        };
        let place = match crate::store_open::object_store_url(&server.store) {
            Some(_) => Place::Note(Arc::clone(server.db.chunks())),
            None => Place::File(server.store.join(ENTRY_FILE)),
        };
        if let Some(other) = Entry::read_at(&place) {
            match other.judge(&server.store_id, false) {
                Found::Serving(_) => {
                    return Err(DbError::user(format!(
                        "a server already serves this store at http://{} (pid {}); a second one may serve it with --read-only",
                        other.http, other.pid
                    ))
                    .into())
                }
                Found::Elsewhere => eprintln!(
                    "note: the store named a server on another machine ({}); it names this one now",
                    other.machine
                ),
                Found::Stale(_) | Found::Silent => {}
            }
        }
        let entry = Entry {
            http,
            store_id: server.store_id.clone(),
            machine: identity::this_machine(),
            pid: std::process::id(),
            secret,
            place,
        };
        if !entry.write()? {
            return Ok(None);
        }
        Ok(Some(entry))
    }

    /// The entry in store folder `store`, if there is one that reads.
    pub fn read(store: &Path) -> Option<Entry> {
        Entry::read_at(&Place::File(store.join(ENTRY_FILE)))
    }

    /// The entry of an object store, if there is one that reads.
    pub fn read_note(chunks: Arc<dyn ChunkStore>) -> Option<Entry> {
        Entry::read_at(&Place::Note(chunks))
    }

    fn read_at(place: &Place) -> Option<Entry> {
        let bytes = match place {
            Place::File(path) => std::fs::read(path).ok()?,
            Place::Note(chunks) => chunks.read_note(ENTRY_FILE).ok()??,
        };
        let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        Some(Entry {
            http: value.get("http")?.as_str()?.parse().ok()?,
            store_id: value.get("store_id")?.as_str()?.to_string(),
            machine: value.get("machine")?.as_str()?.to_string(),
            pid: u32::try_from(value.get("pid")?.as_u64()?).ok()?,
            secret: value.get("secret")?.as_str()?.to_string(),
            place: place.clone(),
        })
    }

    /// What this entry comes to for a command on the store whose id is `store_id`: asks
    /// the server it names, when that is on this machine (`with_head`: and the commit its
    /// current branch is at).
    pub fn judge(&self, store_id: &str, with_head: bool) -> Found {
        if self.machine != identity::this_machine() {
            return Found::Elsewhere;
        }
        if self.store_id != store_id {
            return Found::Stale(format!(
                "the entry names store {}, not this store ({store_id})",
                self.store_id
            ));
        }
        match identity::ask(self, store_id, with_head) {
            (Answer::Proven, head) => Found::Serving(head),
            (Answer::Other(why), _) => Found::Stale(format!("at http://{}: {why}", self.http)),
            (Answer::Nobody, _) => Found::Stale(format!("nothing answers at http://{}", self.http)),
            (Answer::Silent, _) if process_lives(self.pid) => Found::Silent,
            (Answer::Silent, _) => Found::Stale(format!(
                "its process ({}) is gone and something silent holds http://{}",
                self.pid, self.http
            )),
        }
    }

    /// Writes the entry: in a folder, a temporary file readable by its owner only, renamed
    /// into place; on an object store, the side object. `false`: the store keeps none.
    fn write(&self) -> anyhow::Result<bool> {
        let json = Json::object([
            ("http", Json::Str(self.http.to_string())),
            ("store_id", Json::Str(self.store_id.clone())),
            ("machine", Json::Str(self.machine.clone())),
            ("pid", Json::UInt(u64::from(self.pid))),
            ("secret", Json::Str(self.secret.clone())),
        ]);
        let path = match &self.place {
            Place::Note(chunks) => {
                return Ok(chunks
                    .write_note(ENTRY_FILE, json.pretty().as_bytes())
                    .map_err(DbError::from)?)
            }
            Place::File(path) => path,
        };
        let temporary = path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options
            .open(&temporary)
            .map_err(|e| DbError::user(format!("cannot write {}: {e}", temporary.display())))?;
        file.write_all(json.pretty().as_bytes())?;
        std::fs::rename(&temporary, path)?;
        Ok(true)
    }

    /// Removes the entry, if it is still the one this names (the same secret).
    pub fn remove(&self) {
        let still_ours = Entry::read_at(&self.place)
            .is_some_and(|e| e.http == self.http && identity::same_secret(&e.secret, &self.secret));
        if !still_ours {
            return;
        }
        match &self.place {
            Place::File(path) => {
                let _ = std::fs::remove_file(path);
            }
            Place::Note(chunks) => {
                let _ = chunks.remove_note(ENTRY_FILE);
            }
        }
    }
}

/// Whether process `pid` of this machine is alive (where that cannot be told: yes).
pub fn process_lives(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}
