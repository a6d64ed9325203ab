//! Publishing: sealing what a handle wrote and replacing the manifest with one that lists
//! it (and moves a ref), as one atomic step of the place. When the merge policy
//! (`super::merge`) would merge the newest packs once this one is listed, they are copied
//! into it first and the same swap lists it in their place: one sealed pack and one
//! manifest swap per commit, merge or not.
//!
//! *Invariant: a manifest never names a pack that is not durable, and a ref never names a
//! chunk that is not in a listed pack: the pending pack is sealed before the manifest that
//! lists it is swapped in, and a ref moves only in such a swap.*

use super::engine::{Packs, View, Writer};
use super::manifest::{Manifest, PackMeta};
use super::merge::{merge_start, replace_packs};
use super::pending::PendingPack;
use super::place::{PackPlace, Swap};
use super::sealed::SealedPack;
use crate::backend::check_expected;
use crate::{Address, StoreError, StoreResult};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// How often a writer retries its manifest swap after losing it to writers of other refs
/// (only a place without a writer lock loses swaps).
pub const CAS_ATTEMPTS_MAX: u32 = 200;

/// Swaps lost in a row before a writer pauses between attempts.
const CAS_ATTEMPTS_UNPAUSED: u32 = 4;

/// A ref move: name, expected value, new value.
pub type RefMove<'a> = (&'a str, Option<Address>, Option<Address>);

impl<P: PackPlace> Packs<P> {
    /// Seals the pending pack (with the newest packs folded in when the merge policy says
    /// so), then replaces the manifest with one listing every sealed pack not yet listed —
    /// in the folded packs' place — and, when `ref_move` is given, the ref moved by
    /// compare-and-swap; retried on the new manifest while the moved ref still holds its
    /// expected value. Then deletes the folded packs, or, when none were folded, merges the
    /// newest packs if the policy says so.
    pub(crate) fn publish(
        &self,
        writer: &mut Writer<P>,
        ref_move: Option<RefMove<'_>>,
    ) -> StoreResult<()> {
        self.refresh(false)?;
        // A conflicting ref move changes nothing, not even what is pending.
        if let Some(ref_move) = ref_move {
            check_move(&self.view().manifest, ref_move)?;
        }
        self.append_encoded(writer, true)?;
        let folded = self.fold_newest_packs(writer)?;
        let names: BTreeSet<&str> = folded.iter().map(|pack| pack.meta.name.as_str()).collect();
        if let Some(pending) = writer.pending.take() {
            if !pending.is_empty() {
                let sealed = self.seal(pending)?;
                writer.unpublished.push(sealed);
            }
        }
        for attempt in 0..CAS_ATTEMPTS_MAX {
            let view = self.view();
            let next = next_manifest(&view.manifest, &writer.unpublished, ref_move, &names)?;
            let Some((manifest, replaced)) = next else {
                // Already listed: each sealed pack has a listed one's name, so its index
                // bytes, and now its files.
                if !writer.unpublished.is_empty() {
                    self.install(
                        view.manifest.clone(),
                        view.version.clone(),
                        &writer.unpublished,
                    );
                }
                writer.unpublished.clear();
                return Ok(());
            };
            if self.swap(&view, manifest, &writer.unpublished)? {
                let listed: Vec<Arc<SealedPack<P>>> = writer.unpublished.drain(..).collect();
                // Published: what follows costs space when it fails, never data.
                if folded.is_empty() {
                    let _ = self.merge_newest_packs();
                } else if replaced {
                    // A pack whose index is byte for byte a folded one's has its name (and
                    // its files): it stays.
                    let kept = |name: &str| listed.iter().any(|pack| pack.meta.name == name);
                    for pack in folded.iter().filter(|pack| !kept(&pack.meta.name)) {
                        let _ = self.place().delete_pack(&pack.meta.name);
                    }
                }
                return Ok(());
            }
            if attempt >= CAS_ATTEMPTS_UNPAUSED {
                std::thread::sleep(Duration::from_millis(u64::from(attempt.min(50))));
            }
        }
        Err(StoreError::Backend(format!(
            "{}: the manifest kept changing; gave up after {CAS_ATTEMPTS_MAX} attempts",
            self.place().describe()
        )))
    }

    /// Copies into the pending pack the newest listed packs the merge policy would merge
    /// once it is listed (counting it as the newest), and returns them; none when there is
    /// no pending pack, packs already wait sealed, the copy would outgrow what a place
    /// buffers, or damage stopped the copy (then what was copied stays: space only).
    fn fold_newest_packs(&self, writer: &mut Writer<P>) -> StoreResult<Vec<Arc<SealedPack<P>>>> {
        let Some(pending) = writer.pending.as_mut() else {
            return Ok(Vec::new());
        };
        if pending.is_empty() || !writer.unpublished.is_empty() {
            return Ok(Vec::new());
        }
        let view = self.view();
        let mut sizes: Vec<u64> = view.manifest.packs.iter().map(|pack| pack.bytes).collect();
        sizes.push(pending.len());
        let first = merge_start(&sizes).min(view.packs.len());
        let run = &view.packs[first..];
        let run_bytes: u64 = sizes[first..view.packs.len()].iter().sum();
        if run.is_empty()
            || pending.len().saturating_add(run_bytes) > self.place().pending_bytes_max()
        {
            return Ok(Vec::new());
        }
        Ok(if self.copy_into(run, pending)? {
            run.to_vec()
        } else {
            Vec::new()
        })
    }

    /// Seals `pending` under its final name: a pack ready to be listed.
    pub(crate) fn seal(&self, pending: PendingPack<P::Writer>) -> StoreResult<Arc<SealedPack<P>>> {
        let (meta, index) = pending.seal()?;
        Ok(Arc::new(SealedPack::written(meta, self.place(), index)))
    }

    /// Swaps in `manifest`, the successor of `view`'s, and makes it this handle's view;
    /// `false` when another writer replaced the manifest first (this handle then reads the
    /// new one).
    pub(crate) fn swap(
        &self,
        view: &View<P>,
        manifest: Manifest,
        sealed: &[Arc<SealedPack<P>>],
    ) -> StoreResult<bool> {
        debug_assert_eq!(manifest.generation, view.manifest.generation + 1);
        match self
            .place()
            .swap_manifest(&view.manifest, &view.version, &manifest)?
        {
            Swap::Won(version) => {
                self.install(manifest, version, sealed);
                Ok(true)
            }
            Swap::Lost { newer } => {
                if let Some((manifest, version)) = newer {
                    self.install(manifest, version, &[]);
                }
                self.refresh(true)?;
                Ok(false)
            }
        }
    }
}

/// `RefConflict` unless the moved ref holds its expected value in `manifest`.
fn check_move(manifest: &Manifest, (name, expected, _): RefMove<'_>) -> StoreResult<()> {
    check_expected(name, expected, manifest.refs.get(name).copied())
}

/// The manifest that follows `current` with `unpublished` listed — in place of the packs
/// named `folded` when all of them are still listed (then `true`) — and `ref_move` made,
/// or `None` when it would say what `current` says (nothing to publish).
fn next_manifest<P: PackPlace>(
    current: &Manifest,
    unpublished: &[Arc<SealedPack<P>>],
    ref_move: Option<RefMove<'_>>,
    folded: &BTreeSet<&str>,
) -> StoreResult<Option<(Manifest, bool)>> {
    let mut manifest = current.clone();
    if let Some(ref_move) = ref_move {
        check_move(current, ref_move)?;
        let (name, _, new) = ref_move;
        match new {
            Some(address) => manifest.refs.insert(name.to_string(), address),
            None => manifest.refs.remove(name),
        };
    }
    let is_listed = |manifest: &Manifest, meta: &PackMeta| {
        manifest.packs.iter().any(|listed| listed.name == meta.name)
    };
    // A new pack named as a folded one (the same index bytes) takes its place too.
    let new: Vec<PackMeta> = unpublished
        .iter()
        .map(|pack| pack.meta.clone())
        .filter(|meta| folded.contains(meta.name.as_str()) || !is_listed(&manifest, meta))
        .collect();
    let replaced = !folded.is_empty() && replace_packs(&mut manifest, folded, &new);
    if !replaced {
        for meta in new {
            if !is_listed(&manifest, &meta) {
                manifest.packs.push(meta);
            }
        }
    }
    if manifest == *current {
        return Ok(None);
    }
    manifest.generation += 1;
    Ok(Some((manifest, replaced)))
}
