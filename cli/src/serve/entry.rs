//! The entry a running server leaves in the store (`server`: a file in a store folder, a
//! side object `notes/server` under an object store's prefix): its HTTP address, the write
//! token the store's own users present (the store is theirs), and whether it takes writes.
//! `rnt` commands on the store read it to go through the server; an entry whose server does
//! not answer is ignored, so a killed server never gets in the way. No transfer copies it:
//! a clone never names the original's server.

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

/// A running server, as its entry names it.
#[derive(Clone)]
pub struct Entry {
    /// Where it listens for HTTP.
    pub http: SocketAddr,
    /// The write token for the store's own users.
    pub token: String,
    /// Whether it refuses writes.
    pub read_only: bool,
    /// Where the entry is kept.
    place: Place,
}

impl Entry {
    /// Records `server`, listening at `http`, in its store folder (an object store has no
    /// folder to hold it: `None`). Refuses when another server answers for the store.
    pub fn record(server: &Server, http: SocketAddr) -> anyhow::Result<Option<Entry>> {
        let place = match crate::store_open::object_store_url(&server.store) {
            Some(_) => Place::Note(Arc::clone(server.db.chunks())),
            None => Place::File(server.store.join(ENTRY_FILE)),
        };
        if let Some(other) = Entry::read_at(&place) {
            if other.answers() {
                return Err(DbError::user(format!(
                    "a server already serves this store at http://{}",
                    other.http
                ))
                .into());
            }
        }
        let entry = Entry {
            http,
            token: fresh_token(),
            read_only: server.read_only,
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
            token: value.get("token")?.as_str()?.to_string(),
            read_only: value.get("read_only")?.as_bool()?,
            place: place.clone(),
        })
    }

    /// Whether something accepts connections at the entry's address.
    pub fn answers(&self) -> bool {
        std::net::TcpStream::connect_timeout(&self.http, std::time::Duration::from_millis(200))
            .is_ok()
    }

    /// Writes the entry: in a folder, a temporary file readable by its owner only, renamed
    /// into place; on an object store, the side object. `false`: the store keeps none.
    fn write(&self) -> anyhow::Result<bool> {
        let json = Json::object([
            ("http", Json::Str(self.http.to_string())),
            ("token", Json::Str(self.token.clone())),
            ("read_only", Json::Bool(self.read_only)),
            ("pid", Json::UInt(u64::from(std::process::id()))),
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

    /// Removes the entry, if it is still this server's.
    pub fn remove(&self) {
        let still_ours = Entry::read_at(&self.place)
            .is_some_and(|e| e.http == self.http && e.token == self.token);
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

/// A token no one can guess: 128 bits from the system's random source.
fn fresh_token() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut bytes));
    if read.is_err() {
        // No /dev/urandom: the standard library's randomly seeded hasher.
        use std::hash::BuildHasher as _;
        let state = std::hash::RandomState::new();
        let high = state.hash_one(std::process::id()).to_le_bytes();
        let low = state.hash_one(std::time::SystemTime::now()).to_le_bytes();
        bytes[..8].copy_from_slice(&high);
        bytes[8..].copy_from_slice(&low);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
