//! Merging the newest packs, so a store keeps O(log n) packs however many commits wrote it
//! and however many of them were killed.
//!
//! Policy (a base-4 counter that repairs itself): the packs, oldest first, should each be
//! at least [`MERGE_FACTOR`] times the pack [`MERGE_WINDOW`] places newer — so each size
//! band (a factor of 4) holds at most 3 packs. While the rule is broken, the packs from the
//! oldest one that breaks it (a crash between a publish and its merge can leave one
//! anywhere) to the newest are merged into one. Afterwards the rule holds for every pack,
//! so a store of B pack bytes whose newest pack is b bytes holds at most
//! 3 × (1 + log4(B / b)) packs, and without crashes each byte is copied about log4(B / b)
//! times. Three commits in four merge nothing. (Until 2026-12-05 it was a binary counter —
//! each pack at least twice the next newer one, at most 1 + log2(B / b) packs — which
//! copied each byte log2(B / b) times and merged in every second commit: on the reference
//! store the median CLI commit spent more in those copies and their fsyncs than in all its
//! maintenance. Lookups pass more packs now; a miss in a small pack is a binary search of
//! a bucket of a few entries.)
//!
//! Usually the merge is folded into a publish (`super::publish`): the run the policy picks,
//! counting the pending pack as the newest, is copied into the pending pack before it is
//! sealed, and one manifest swap lists it in the run's place. Otherwise (packs sealed
//! unpublished, a run larger than a place buffers, or a fold that met damage) the newest
//! packs are merged after the publish, into a pack of their own with a swap of its own.
//!
//! A merge copies records as they are, each record's header checked first (its mark, the
//! address the index gives, its length): a record in the wrong place, or an unreadable
//! index, stops the merge and leaves the packs as they were. A record's bytes are not
//! decompressed or re-hashed — every read does that — so damage inside a record is carried
//! over as it is and reported when that chunk is read, as before the merge
//! (`rnt fsck --repair` mends it). The merged
//! packs are deleted only after the swap; a deletion needs no fsync (a file that comes
//! back after a crash is unlisted, so never read).

use super::engine::Packs;
use super::index::Entry;
use super::manifest::{Manifest, PackMeta};
use super::pending::PendingPack;
use super::place::PackPlace;
use super::publish::CAS_ATTEMPTS_MAX;
use super::record;
use super::sealed::SealedPack;
use crate::fault;
use crate::StoreResult;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Each pack should be at least this many times the pack [`MERGE_WINDOW`] places newer.
pub const MERGE_FACTOR: u64 = 4;

/// How many places newer the pack a pack is compared with lies: the packs a size band
/// holds before they merge.
pub const MERGE_WINDOW: usize = 3;

/// Whether `sizes` (oldest first) keep the rule: each pack at least [`MERGE_FACTOR`] times
/// the pack [`MERGE_WINDOW`] places newer.
pub fn packs_are_balanced(sizes: &[u64]) -> bool {
    sizes
        .windows(MERGE_WINDOW + 1)
        .all(|band| band[0] >= MERGE_FACTOR.saturating_mul(band[MERGE_WINDOW]))
}

/// The oldest pack of `sizes` that breaks the rule, if any.
fn oldest_unbalanced(sizes: &[u64]) -> Option<usize> {
    (0..sizes.len().saturating_sub(MERGE_WINDOW))
        .find(|&k| sizes[k] < MERGE_FACTOR.saturating_mul(sizes[k + MERGE_WINDOW]))
}

/// The first pack (index into `sizes`, oldest first) of the newest run to merge: the
/// newest pack alone when `sizes` keep the rule; else, while the rule is broken, the
/// packs from the oldest one that breaks it to the newest, merged. Merging the run leaves
/// `sizes` balanced.
pub fn merge_start(sizes: &[u64]) -> usize {
    let mut first = sizes.len().saturating_sub(1);
    let mut merged = sizes.to_vec();
    while let Some(k) = oldest_unbalanced(&merged) {
        // Packs before `k` keep their places, so `k` is an index into `sizes` too; each
        // round merges a longer run (the next broken pack lies before `k`).
        debug_assert!(k < first || first + 1 == sizes.len());
        let run = merged[k..]
            .iter()
            .fold(0u64, |total, &size| total.saturating_add(size));
        merged.truncate(k);
        merged.push(run);
        first = k;
    }
    debug_assert!(packs_are_balanced(&merged));
    first
}

impl<P: PackPlace> Packs<P> {
    /// Merges the newest packs into one when the policy says so (see the module
    /// documentation). Damage met, or a lost race, leaves the packs as they were.
    pub(crate) fn merge_newest_packs(&self) -> StoreResult<()> {
        let view = self.view();
        let sizes: Vec<u64> = view.manifest.packs.iter().map(|pack| pack.bytes).collect();
        let first = merge_start(&sizes);
        if sizes.len() - first < 2 {
            return Ok(());
        }
        let run = &view.packs[first..];
        let Some(merged) = self.copy_newest_first(run)? else {
            return Ok(());
        };
        let sealed = self.seal(merged)?;
        self.publish_merge(run, &sealed.meta)
    }

    /// Copies every record of `run` into a new pack, newest pack first (see
    /// [`Packs::copy_into`]). `None` when a record or an index is damaged.
    fn copy_newest_first(
        &self,
        run: &[Arc<SealedPack<P>>],
    ) -> StoreResult<Option<PendingPack<P::Writer>>> {
        let mut merged = PendingPack::new(self.place().create_pack()?);
        Ok(self.copy_into(run, &mut merged)?.then_some(merged))
    }

    /// Appends to `merged` every record of `run` it does not hold yet, newest pack first (so
    /// a chunk held twice keeps its newest record), each pack in the order its records lie
    /// in its file, each record's header checked first. A pack is read in spans of
    /// neighbouring records (one read each, into one buffer reused for the whole merge)
    /// rather than a read and a buffer per record: on the reference store, reading record
    /// by record into fresh memory made merging a sixth of a CLI commit's CPU. `false` when a
    /// record or an index is damaged (what was appended stays: copies of listed chunks,
    /// which cost space only).
    pub(crate) fn copy_into(
        &self,
        run: &[Arc<SealedPack<P>>],
        merged: &mut PendingPack<P::Writer>,
    ) -> StoreResult<bool> {
        let mut buffer = Vec::new();
        let mut entries = 0usize;
        for pack in run {
            entries = entries.saturating_add(pack.entries_hint(self.place())?);
        }
        merged.reserve(entries);
        for pack in run.iter().rev() {
            let Ok(entries) = pack.all_entries(self.place())? else {
                return Ok(false);
            };
            let mut fresh: Vec<Entry> = entries
                .into_iter()
                .filter(|entry| !merged.holds(&entry.address))
                .collect();
            fresh.sort_unstable_by_key(|entry| entry.offset);
            for span in spans_of(&fresh, self.place().merge_read_bytes()) {
                let range = span_range(span);
                let Ok(Some(())) = pack.read_span(self.place(), range.clone(), &mut buffer) else {
                    return Ok(false);
                };
                for entry in span {
                    let start =
                        usize::try_from(entry.offset - range.start).expect("a span is in memory");
                    let record = &buffer[start..start + entry.len as usize];
                    if record::check_header(&entry.address, record).is_err() {
                        return Ok(false);
                    }
                    merged.append(entry.address, record)?;
                    fault::point(fault::GC_COPY);
                }
            }
        }
        Ok(true)
    }

    /// Lists `merged` in place of the packs of `run` (if every one is still listed), then
    /// deletes their files.
    fn publish_merge(&self, run: &[Arc<SealedPack<P>>], merged: &PackMeta) -> StoreResult<()> {
        let names: BTreeSet<&str> = run.iter().map(|pack| pack.meta.name.as_str()).collect();
        for _ in 0..CAS_ATTEMPTS_MAX {
            let view = self.view();
            let mut manifest = view.manifest.clone();
            if !replace_packs(&mut manifest, &names, std::slice::from_ref(merged)) {
                // Another writer merged some of them first; ours is left unlisted.
                return Ok(());
            }
            manifest.generation += 1;
            if self.swap(&view, manifest, &[])? {
                for pack in run.iter().filter(|pack| pack.meta.name != merged.name) {
                    self.place().delete_pack(&pack.meta.name)?;
                }
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Replaces the packs of `manifest` named `names` by `merged`, where the first of them
/// stood; `false` (and `manifest` unchanged) when not every one of them is listed.
pub(crate) fn replace_packs(
    manifest: &mut Manifest,
    names: &BTreeSet<&str>,
    merged: &[PackMeta],
) -> bool {
    let listed = manifest
        .packs
        .iter()
        .filter(|pack| names.contains(pack.name.as_str()))
        .count();
    if listed != names.len() {
        return false;
    }
    let at = manifest
        .packs
        .iter()
        .position(|pack| names.contains(pack.name.as_str()))
        .unwrap_or(manifest.packs.len());
    manifest
        .packs
        .retain(|pack| !names.contains(pack.name.as_str()));
    for (offset, meta) in merged.iter().enumerate() {
        if !manifest.packs.iter().any(|pack| pack.name == meta.name) {
            manifest.packs.insert(at + offset, meta.clone());
        }
    }
    true
}

/// The most bytes between two records a span reads through (records another pack already
/// gave, skipped): reading them costs less than another read.
const SPAN_GAP_MAX: u64 = 64 << 10;

/// `entries` (in file order) cut into spans: runs of neighbouring records, each at most
/// `bytes` from its first record's start to its last one's end (a record longer than that
/// is a span alone) and with gaps of at most [`SPAN_GAP_MAX`] between records.
fn spans_of(entries: &[Entry], bytes: u64) -> Vec<&[Entry]> {
    debug_assert!(entries.windows(2).all(|w| w[0].offset <= w[1].offset));
    let mut spans = Vec::new();
    let mut start = 0;
    let mut span_end = 0;
    for (i, entry) in entries.iter().enumerate() {
        let apart = entry.offset.saturating_sub(span_end) > SPAN_GAP_MAX;
        let too_long = entry.end().saturating_sub(entries[start].offset) > bytes;
        if i > start && (apart || too_long) {
            spans.push(&entries[start..i]);
            start = i;
            span_end = 0;
        }
        span_end = span_end.max(entry.end());
    }
    if start < entries.len() {
        spans.push(&entries[start..]);
    }
    spans
}

/// The bytes of the file a span's records lie in (`span` not empty).
fn span_range(span: &[Entry]) -> std::ops::Range<u64> {
    let start = span.iter().map(|entry| entry.offset).min().unwrap_or(0);
    let end = span.iter().map(Entry::end).max().unwrap_or(start);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most packs a balanced store of `total` pack bytes whose newest pack is `newest`
    /// bytes holds: [`MERGE_WINDOW`] × (1 + log4(total / newest)).
    fn balanced_pack_count_max(total: u64, newest: u64) -> usize {
        let bands = (total / newest.max(1))
            .checked_ilog(MERGE_FACTOR)
            .unwrap_or(0);
        MERGE_WINDOW * (1 + bands as usize)
    }

    #[test]
    fn merge_runs_follow_a_base_four_counter() {
        assert_eq!(merge_start(&[]), 0);
        assert_eq!(merge_start(&[10]), 0);
        // Up to three packs a band; the fourth merges them.
        assert_eq!(merge_start(&[1, 1, 1]), 2);
        assert_eq!(merge_start(&[1, 1, 1, 1]), 0);
        assert_eq!(merge_start(&[4, 1, 1, 1]), 3);
        assert_eq!(merge_start(&[4, 1, 1, 1, 1]), 1);
        // A carry through every band.
        assert_eq!(merge_start(&[1000, 4, 4, 4, 1, 1, 1, 1]), 1);
        assert_eq!(merge_start(&[64, 16, 16, 16, 4, 4, 4, 1, 1, 1, 1]), 1);
        assert_eq!(merge_start(&[16, 16, 16, 4, 4, 4, 1, 1, 1, 1]), 0);
        assert_eq!(merge_start(&[1000, 16, 16, 16, 4, 4, 4, 1, 1, 1]), 9);
    }

    /// What a crash leaves (a publish whose merge never ran) is merged by the next one,
    /// however deep it lies.
    #[test]
    fn a_run_a_crash_left_unmerged_is_merged_next_time() {
        assert_eq!(merge_start(&[3, 2, 1, 1]), 0);
        assert_eq!(merge_start(&[1000, 1, 300, 1, 1]), 1);
        // An older pack smaller than a newer one breaks nothing on its own.
        assert_eq!(merge_start(&[1000, 10, 300, 1, 1]), 4);
        assert_eq!(merge_start(&[10000, 500, 1, 300, 2, 2]), 2);
        for sizes in [
            vec![5u64, 9, 1, 1, 7, 300, 2, 2, 2, 2],
            vec![1; 40],
            vec![u64::MAX, u64::MAX, 1, u64::MAX, 1],
        ] {
            let first = merge_start(&sizes);
            let mut merged = sizes[..first].to_vec();
            merged.push(
                sizes[first..]
                    .iter()
                    .fold(0u64, |a, &b| a.saturating_add(b)),
            );
            assert!(packs_are_balanced(&merged), "{sizes:?} -> {merged:?}");
        }
    }

    /// A store kept balanced holds at most 3 × (1 + log4(B / b)) packs, and copies each
    /// byte about log4(B / b) times.
    #[test]
    fn balanced_packs_are_logarithmically_few() {
        let mut sizes: Vec<u64> = Vec::new();
        let (mut written, mut copied) = (0u64, 0u64);
        for commit in 0..5000u64 {
            let size = 100 + (commit * 7919) % 900;
            sizes.push(size);
            written += size;
            let first = merge_start(&sizes);
            let run: u64 = sizes[first..].iter().sum();
            if sizes.len() - first > 1 {
                copied += run - size;
            }
            sizes.truncate(first);
            sizes.push(run);
            let total: u64 = sizes.iter().sum();
            let bound = balanced_pack_count_max(total, sizes[sizes.len() - 1]);
            assert!(sizes.len() <= bound, "{} packs > {bound}", sizes.len());
        }
        // 5000 commits of ~550 bytes: log4(5000) ≈ 6.1 copies of each byte.
        assert!(
            copied < 7 * written,
            "{copied} bytes copied for {written} written"
        );
    }

    #[test]
    fn spans_hold_every_entry_in_order_within_the_bounds() {
        // Records of 100 bytes, back to back, except a gap wider than a span reads through
        // after the sixth.
        let entries: Vec<Entry> = (0..10u32)
            .map(|i| Entry {
                address: crate::Address::of(&i.to_le_bytes()),
                offset: 8 + u64::from(i) * 100 + if i >= 6 { SPAN_GAP_MAX + 1 } else { 0 },
                len: 100,
            })
            .collect();
        for bound in [0, 99, 100, 250, 1000, u64::MAX] {
            let spans = spans_of(&entries, bound);
            let joined: Vec<Entry> = spans.iter().flat_map(|span| span.iter().copied()).collect();
            assert_eq!(joined, entries, "bound {bound}");
            for span in &spans {
                let range = span_range(span);
                assert!(
                    span.len() == 1 || range.end - range.start <= bound,
                    "bound {bound}"
                );
                let gaps_ok = span
                    .windows(2)
                    .all(|w| w[1].offset - w[0].end() <= SPAN_GAP_MAX);
                assert!(gaps_ok, "bound {bound}: a span reads through a wide gap");
            }
            if bound == u64::MAX {
                assert_eq!(spans.len(), 2, "the wide gap splits the records in two");
            }
        }
        assert!(spans_of(&[], 100).is_empty());
    }
}
