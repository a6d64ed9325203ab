//! The sled backend: the embedded default, one directory on disk.
//! (Filled in by the store work; this stub keeps the crate compiling.)

/// sled's page cache size when the caller does not choose one (sled's own default is 1 GiB).
pub const SLED_CACHE_BYTES_DEFAULT: u64 = 64 * 1024 * 1024;

/// A [`crate::ChunkStore`] in a sled database directory.
pub struct SledStore {
    _private: (),
}
