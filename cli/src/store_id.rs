//! A store's identity: a random id made when the store is made (`rnt init`, `clone`, the
//! store a first push creates), kept beside its data — the file `id` in a store folder, the
//! side object `id` of an object store — and never copied by a transfer, so a clone has an
//! id of its own. `rnt serve` gives one to a store made before ids existed.
//!
//! A server proves which store it serves with it (see `serve::identity`): a command goes
//! through a server only when the id matches its own store's.

use rnt_db::DbError;
use rnt_store::ChunkStore;
use std::path::Path;

/// The id's name: a file in a store folder, a side object of an object store.
pub const ID_NAME: &str = "id";

/// Random bytes in an id (128 bits: no two stores ever draw the same).
const ID_BYTES: usize = 16;

/// Where a store keeps its id.
pub enum Holder<'a> {
    /// A store folder.
    Folder(&'a Path),
    /// An object store (its side objects).
    Notes(&'a dyn ChunkStore),
}

/// `bytes` random bytes from the system's random source, as lower-case hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut buffer));
    if read.is_err() {
        // No /dev/urandom: the standard library's randomly seeded hasher, a word at a time.
        use std::hash::BuildHasher as _;
        for (index, chunk) in buffer.chunks_mut(8).enumerate() {
            let state = std::hash::RandomState::new();
            let word = state.hash_one((index, std::time::SystemTime::now()));
            chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
        }
    }
    buffer.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `text` has an id's form: 32 lower-case hex digits.
pub fn is_id(text: &str) -> bool {
    text.len() == 2 * ID_BYTES
        && text
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// The store's id, if it has one that reads (a damaged or half-written id reads as none).
pub fn read(holder: &Holder) -> Option<String> {
    let bytes = match holder {
        Holder::Folder(store) => std::fs::read(store.join(ID_NAME)).ok()?,
        Holder::Notes(chunks) => chunks.read_note(ID_NAME).ok()??,
    };
    let text = String::from_utf8(bytes).ok()?;
    let id = text.trim();
    is_id(id).then(|| id.to_string())
}

/// The store's id, made now when it has none. Two processes making one at once agree: a
/// folder's id is linked into place only when absent, and both read back the one that won.
pub fn ensure(holder: &Holder) -> anyhow::Result<String> {
    if let Some(id) = read(holder) {
        return Ok(id);
    }
    let fresh = random_hex(ID_BYTES);
    match holder {
        Holder::Folder(store) => write_folder_id(store, &fresh)?,
        Holder::Notes(chunks) => {
            chunks
                .write_note(ID_NAME, format!("{fresh}\n").as_bytes())
                .map_err(DbError::from)?;
        }
    }
    read(holder).ok_or_else(|| {
        DbError::user("the store's id did not read back after it was written").into()
    })
}

/// Writes `id` as the folder's id unless it has one: a temporary file, linked to its name
/// (a link never replaces), then removed. A damaged id file is replaced.
fn write_folder_id(store: &Path, id: &str) -> anyhow::Result<()> {
    let path = store.join(ID_NAME);
    let temporary = store.join(format!("{ID_NAME}.{}.tmp", random_hex(4)));
    let cannot = |e: std::io::Error| DbError::user(format!("cannot write {}: {e}", path.display()));
    std::fs::write(&temporary, format!("{id}\n")).map_err(cannot)?;
    if path.exists() && read(&Holder::Folder(store)).is_none() {
        // Damaged (or cut short by a crash): replaced whole.
        std::fs::rename(&temporary, &path).map_err(cannot)?;
        return Ok(());
    }
    let linked = std::fs::hard_link(&temporary, &path);
    let _ = std::fs::remove_file(&temporary);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(cannot(e).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_made_once_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let holder = Holder::Folder(dir.path());
        assert_eq!(read(&holder), None);
        let id = ensure(&holder).unwrap();
        assert!(is_id(&id), "{id}");
        assert_eq!(ensure(&holder).unwrap(), id);
        assert_eq!(read(&holder).as_deref(), Some(id.as_str()));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_damaged_id_is_replaced_and_two_stores_never_share_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ID_NAME), "not an id").unwrap();
        let holder = Holder::Folder(dir.path());
        assert_eq!(read(&holder), None);
        let id = ensure(&holder).unwrap();
        assert!(is_id(&id));
        let other = tempfile::tempdir().unwrap();
        assert_ne!(ensure(&Holder::Folder(other.path())).unwrap(), id);
        assert!(!is_id("ABCDEF0123456789abcdef0123456789"));
        assert!(!is_id("abc"));
    }
}
