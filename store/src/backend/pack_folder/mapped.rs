//! Sealed index files mapped into memory rather than read.
//!
//! A cold process looks chunks up in every pack's index, newest first, and so meets nearly
//! every bucket of every index. Read, that is the whole of every index copied into fresh
//! memory each process (or, past `WHOLE_INDEX_BYTES_MAX`, a checked bucket at a time): on a
//! store 380 commits old (two 6 MB indexes) it was 11 ms of a 43 ms CLI commit. Mapped,
//! a lookup touches only the pages its binary search lands on, straight from the page
//! cache, with no copy and no zeroing.
//!
//! *Why mapping is safe here:* rnt never writes, truncates or rewrites a sealed index. An
//! index is written once under a temporary name and renamed to its final name (a name is
//! the hash of its bytes, so a rename over an existing name puts the same bytes there); a
//! merge or `gc` unlinks it, which leaves a mapping's pages in place until it is dropped.
//! The mapping is read-only, and a reader checks the index's length against its header
//! before it reads an entry, as it does for an index read whole. The one thing mapping
//! cannot survive is another program truncating the file while a reader has it mapped —
//! a read past the new end then stops the process (SIGBUS) instead of reporting damage;
//! git maps its pack indexes on the same terms.

use std::fs::File;

/// The bytes of a mapped index file.
pub(super) struct MappedIndex(memmap2::Mmap);

impl AsRef<[u8]> for MappedIndex {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// `file` (a sealed index of `len` bytes, `len` > 0) mapped read-only; `None` when it
/// cannot be mapped (the caller reads it instead).
pub(super) fn map_index(file: &File, len: u64) -> Option<MappedIndex> {
    debug_assert!(len > 0, "an empty file is read, not mapped");
    let len = usize::try_from(len).ok()?;
    // SAFETY: a sealed index is never written, truncated or rewritten by rnt after it is
    // renamed to its name (module documentation); the mapping is read-only and covers the
    // `len` bytes the file had when opened, and every read of it is bounds-checked against
    // that length.
    #[allow(unsafe_code)]
    let mapped = unsafe { memmap2::MmapOptions::new().len(len).map(file) };
    mapped.ok().map(MappedIndex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_mapped_index_holds_the_files_bytes() {
        let mut file = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..10_000u32).flat_map(u32::to_le_bytes).collect();
        file.write_all(&bytes).unwrap();
        let len = bytes.len() as u64;
        let mapped = map_index(&file, len).expect("a local file maps");
        assert_eq!(mapped.as_ref(), &bytes[..]);
        // The mapping covers the length asked (the length the reader checked), not more.
        let head = map_index(&file, 100).unwrap();
        assert_eq!(head.as_ref(), &bytes[..100]);
    }
}
