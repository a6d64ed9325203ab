//! What the packs' files say of themselves, for `rnt fsck`: each listed pack's index and
//! length checked against its records, files no manifest lists, and where a chunk's
//! record lies.

use super::engine::Packs;
use super::index::Entry;
use super::place::PackPlace;
use super::sealed::{PackState, SealedPack};
use crate::{Address, ChunkFile, FileFinding, FindingKind, StoreResult};
use std::collections::BTreeSet;

impl<P: PackPlace> Packs<P> {
    /// Everything wrong with, or left over in, the files of the current manifest's packs
    /// (see [`crate::StoreFiles::findings`]).
    pub(crate) fn file_findings(&self) -> StoreResult<Vec<FileFinding>> {
        self.refresh(false)?;
        let view = self.view();
        let mut findings = Vec::new();
        for pack in &view.packs {
            match pack.state(self.place())? {
                Ok(state) => findings.extend(pack_findings(pack, &state)),
                Err(detail) => findings.push(FileFinding {
                    file: pack.label().to_string(),
                    kind: FindingKind::PackMissing,
                    detail: format!(
                        "{detail}; the chunks only it held are lost ({} listed)",
                        pack.meta.chunks
                    ),
                }),
            }
        }
        if let Some(files) = self.place().pack_files()? {
            let listed: BTreeSet<&str> = view
                .manifest
                .packs
                .iter()
                .map(|pack| pack.name.as_str())
                .collect();
            for file in files {
                let stem = file.split('.').next().unwrap_or("");
                if !listed.contains(stem) {
                    findings.push(FileFinding {
                        file: format!("packs/{file}"),
                        kind: FindingKind::Unlisted,
                        detail: "no manifest lists it (a killed writer left it, or a live \
                                 one is writing it); the next writer deletes it"
                            .to_string(),
                    });
                }
            }
        }
        Ok(findings)
    }

    /// Where the record of `address` lies: in the newest listed pack whose index (or scan)
    /// names it, even when the pack file is missing.
    pub(crate) fn chunk_file_of(&self, address: &Address) -> StoreResult<Option<ChunkFile>> {
        self.refresh(false)?;
        let view = self.view();
        for pack in view.packs.iter().rev() {
            let found = match pack.recover(self.place())? {
                Ok(()) => pack.lookup(self.place(), address)?.ok().flatten(),
                Err(_) => pack.index_lookup(self.place(), address)?,
            };
            if let Some(entry) = found {
                return Ok(Some(ChunkFile {
                    file: pack.label().to_string(),
                    offset: entry.offset,
                }));
            }
        }
        Ok(None)
    }
}

/// What is wrong with one pack whose files could be read.
fn pack_findings<P: PackPlace>(pack: &SealedPack<P>, state: &PackState) -> Vec<FileFinding> {
    let mut findings = Vec::new();
    if let Some(problem) = &state.index_problem {
        let (kind, detail) = if state.index_missing {
            (
                FindingKind::IndexMissing,
                "it is missing; reads scan the pack instead".to_string(),
            )
        } else {
            let why = problem
                .strip_prefix(&format!("{}: ", pack.index_label()))
                .unwrap_or(problem);
            (
                FindingKind::IndexDamaged,
                format!("{why}; reads scan the pack instead"),
            )
        };
        findings.push(FileFinding {
            file: pack.index_label().to_string(),
            kind,
            detail,
        });
    }
    if state.file_bytes > state.records_end {
        findings.push(FileFinding {
            file: pack.label().to_string(),
            kind: FindingKind::TrailingBytes,
            detail: format!(
                "{} bytes after the last record (which ends at {}); reads ignore them",
                state.file_bytes - state.records_end,
                state.records_end
            ),
        });
    }
    if state.file_bytes < state.records_end {
        let lost = state
            .entries
            .iter()
            .filter(|entry| past(entry, state.file_bytes))
            .count();
        findings.push(FileFinding {
            file: pack.label().to_string(),
            kind: FindingKind::CutShort,
            detail: format!(
                "it is cut short at {} bytes where its records end at {}; the {lost} \
                 records past the cut are lost",
                state.file_bytes, state.records_end
            ),
        });
    }
    findings
}

/// Whether `entry`'s record ends past `file_bytes`.
fn past(entry: &Entry, file_bytes: u64) -> bool {
    entry.offset + u64::from(entry.len) > file_bytes
}
