//! Publishing: sealing what a handle wrote and replacing the manifest with one that lists
//! it (and moves a ref), as one atomic step of the place.
//!
//! *Invariant: a manifest never names a pack that is not durable, and a ref never names a
//! chunk that is not in a listed pack: the pending pack is sealed before the manifest that
//! lists it is swapped in, and a ref moves only in such a swap.*

use super::engine::{Packs, View, Writer};
use super::manifest::Manifest;
use super::pending::PendingPack;
use super::place::{PackPlace, Swap};
use super::sealed::SealedPack;
use crate::backend::check_expected;
use crate::{Address, StoreError, StoreResult};
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
    /// Seals the pending pack, then replaces the manifest with one listing every sealed
    /// pack not yet listed and, when `ref_move` is given, the ref moved by compare-and-swap;
    /// retried on the new manifest while the moved ref still holds its expected value. Then
    /// merges the newest packs when the policy says so.
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
        if let Some(pending) = writer.pending.take() {
            if !pending.is_empty() {
                let sealed = self.seal(pending)?;
                writer.unpublished.push(sealed);
            }
        }
        for attempt in 0..CAS_ATTEMPTS_MAX {
            let view = self.view();
            let Some(manifest) = next_manifest(&view.manifest, &writer.unpublished, ref_move)?
            else {
                writer.unpublished.clear();
                return Ok(());
            };
            if self.swap(&view, manifest)? {
                writer.unpublished.clear();
                // Published: a merge that fails now costs space, never data.
                let _ = self.merge_newest_packs();
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

    /// Seals `pending` under its final name: a pack ready to be listed.
    pub(crate) fn seal(&self, pending: PendingPack<P::Writer>) -> StoreResult<Arc<SealedPack<P>>> {
        let (meta, index) = pending.seal()?;
        Ok(Arc::new(SealedPack::written(meta, self.place(), index)))
    }

    /// Swaps in `manifest`, the successor of `view`'s, and makes it this handle's view;
    /// `false` when another writer replaced the manifest first (this handle then reads the
    /// new one).
    pub(crate) fn swap(&self, view: &View<P>, manifest: Manifest) -> StoreResult<bool> {
        debug_assert_eq!(manifest.generation, view.manifest.generation + 1);
        match self
            .place()
            .swap_manifest(&view.manifest, &view.version, &manifest)?
        {
            Swap::Won(version) => {
                self.install(manifest, version);
                Ok(true)
            }
            Swap::Lost { newer } => {
                if let Some((manifest, version)) = newer {
                    self.install(manifest, version);
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

/// The manifest that follows `current` with `unpublished` listed and `ref_move` made, or
/// `None` when it would say what `current` says (nothing to publish).
fn next_manifest<P: PackPlace>(
    current: &Manifest,
    unpublished: &[Arc<SealedPack<P>>],
    ref_move: Option<RefMove<'_>>,
) -> StoreResult<Option<Manifest>> {
    let mut manifest = current.clone();
    if let Some(ref_move) = ref_move {
        check_move(current, ref_move)?;
        let (name, _, new) = ref_move;
        match new {
            Some(address) => manifest.refs.insert(name.to_string(), address),
            None => manifest.refs.remove(name),
        };
    }
    for pack in unpublished {
        if !manifest
            .packs
            .iter()
            .any(|listed| listed.name == pack.meta.name)
        {
            manifest.packs.push(pack.meta.clone());
        }
    }
    if manifest == *current {
        return Ok(None);
    }
    manifest.generation += 1;
    Ok(Some(manifest))
}
