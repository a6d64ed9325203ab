//! File-system helpers of the pack backend: positioned reads, folder syncs, sizes, the
//! stamp that tells one manifest file from the next, and whether a process still runs.

use crate::StoreResult;
use std::fs::{self, File};
use std::path::Path;

/// What tells one manifest file from the next: a replace is a rename, so a new inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    pub(crate) inode: u64,
    pub(crate) bytes: u64,
    pub(crate) modified_ns: i128,
}

/// Deletes a file; one that is already gone is fine.
pub(crate) fn remove_if_present(path: &Path) -> StoreResult<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Bytes of every file under `folder`.
pub(crate) fn folder_bytes(folder: &Path) -> StoreResult<u64> {
    let mut total = 0;
    for entry in fs::read_dir(folder)? {
        let entry = entry?;
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        total += if meta.is_dir() {
            folder_bytes(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

#[cfg(unix)]
pub(crate) fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(windows)]
pub(crate) fn read_at(file: &File, mut buffer: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buffer.is_empty() {
        let n = file.seek_read(buffer, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer = &mut buffer[n..];
        offset += n as u64;
    }
    Ok(())
}

/// Fsyncs a folder, so the files created or renamed in it survive a crash.
pub(crate) fn sync_folder(folder: &Path) -> StoreResult<()> {
    #[cfg(unix)]
    crate::meter::measure(crate::meter::Work::Fsync, 0, || {
        File::open(folder)?.sync_all()
    })?;
    #[cfg(not(unix))]
    let _ = folder;
    Ok(())
}

/// Whether process `pid` still runs (Linux: its `/proc` entry exists). Where that cannot
/// be told, every process counts as alive, so nothing live is ever deleted.
pub(crate) fn process_is_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return true;
    }
    proc_root.join(pid.to_string()).exists()
}

pub(crate) fn stamp_of(path: &Path) -> StoreResult<Option<FileStamp>> {
    match fs::metadata(path) {
        Ok(meta) => Ok(Some(FileStamp {
            inode: inode_of(&meta),
            bytes: meta.len(),
            modified_ns: meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |duration| {
                    i128::try_from(duration.as_nanos()).unwrap_or(0)
                }),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
pub(crate) fn inode_of(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
pub(crate) fn inode_of(_meta: &fs::Metadata) -> u64 {
    0
}
