//! [`Packs`]: a chunk store of packs in some [`PackPlace`], and the state a handle keeps —
//! the manifest it reads from (a [`View`]) and what it has written but not yet published.

use super::codec::Compression;
use super::encoding::Encoding;
use super::manifest::Manifest;
use super::pending::PendingPack;
use super::place::PackPlace;
use super::sealed::SealedPack;
use crate::StoreResult;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// A chunk store of packs in `P` (see `backend/packs/mod.rs`): [`crate::PackStore`] in a
/// folder, [`crate::ObjectChunkStore`] in an object store. Cloning shares the handle (and,
/// for a folder's writer, its lock).
pub struct Packs<P: PackPlace> {
    pub(crate) inner: Arc<Engine<P>>,
}

impl<P: PackPlace> Clone for Packs<P> {
    fn clone(&self) -> Packs<P> {
        Packs {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<P: PackPlace + fmt::Debug> fmt::Debug for Packs<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.place.fmt(f)
    }
}

/// What a handle holds.
pub struct Engine<P: PackPlace> {
    /// Where the packs live.
    pub(crate) place: P,
    /// How new chunks are compressed.
    pub(crate) compression: Compression,
    /// The manifest this handle reads from, and its packs.
    view: RwLock<Arc<View<P>>>,
    /// Write-side state; taken before `view` when both are needed.
    writer: Mutex<Writer<P>>,
}

/// One manifest as read, and the packs it lists, opened lazily.
pub struct View<P: PackPlace> {
    /// The manifest.
    pub manifest: Manifest,
    /// Which manifest this is, as the place tells them apart.
    pub version: P::Version,
    /// The manifest's packs, oldest first.
    pub packs: Vec<Arc<SealedPack<P>>>,
}

/// What a handle has written and not yet published.
pub struct Writer<P: PackPlace> {
    /// The pack being filled.
    pub pending: Option<PendingPack<P::Writer>>,
    /// Packs sealed but not yet listed in the manifest, oldest first.
    pub unpublished: Vec<Arc<SealedPack<P>>>,
    /// Chunks handed over for encoding, not yet in the pending pack.
    pub encoding: Encoding,
}

impl<P: PackPlace> View<P> {
    /// The view of `manifest`, with the packs of `sealed` (just sealed by this handle) and
    /// those `previous` already opened.
    fn new(
        manifest: Manifest,
        version: P::Version,
        place: &P,
        previous: Option<&View<P>>,
        sealed: &[Arc<SealedPack<P>>],
    ) -> View<P> {
        let packs = manifest
            .packs
            .iter()
            .map(|meta| {
                sealed
                    .iter()
                    .find(|pack| pack.meta == *meta)
                    .or_else(|| {
                        previous.and_then(|view| view.packs.iter().find(|open| open.meta == *meta))
                    })
                    .cloned()
                    .unwrap_or_else(|| Arc::new(SealedPack::new(meta.clone(), place)))
            })
            .collect();
        View {
            manifest,
            version,
            packs,
        }
    }
}

impl<P: PackPlace> Writer<P> {
    /// Whether the pending pack holds `address`, or will once it is encoded.
    pub fn pending_holds(&self, address: &crate::Address) -> bool {
        self.encoding.holds(address)
            || self
                .pending
                .as_ref()
                .is_some_and(|pending| pending.holds(address))
    }

    /// Whether there is anything to publish.
    pub fn has_unpublished(&self) -> bool {
        self.pending
            .as_ref()
            .is_some_and(|pending| !pending.is_empty())
            || !self.unpublished.is_empty()
            || !self.encoding.is_empty()
    }
}

impl<P: PackPlace> Packs<P> {
    /// Opens the store in `place`: reads its manifest (nothing else).
    pub(crate) fn open_in_place(place: P, compression: Compression) -> StoreResult<Packs<P>> {
        let (manifest, version) = place.read_manifest()?;
        let view = View::new(manifest, version, &place, None, &[]);
        Ok(Packs {
            inner: Arc::new(Engine {
                place,
                compression,
                view: RwLock::new(Arc::new(view)),
                writer: Mutex::new(Writer {
                    pending: None,
                    unpublished: Vec::new(),
                    encoding: Encoding::default(),
                }),
            }),
        })
    }

    /// Where the packs live.
    pub(crate) fn place(&self) -> &P {
        &self.inner.place
    }

    /// The packs the manifest lists, oldest first: (name, pack bytes, chunks).
    pub fn packs(&self) -> StoreResult<Vec<(String, u64, u64)>> {
        self.refresh(false)?;
        Ok(self
            .view()
            .manifest
            .packs
            .iter()
            .map(|pack| (pack.name.clone(), pack.bytes, pack.chunks))
            .collect())
    }

    /// The manifest this handle reads from.
    pub(crate) fn view(&self) -> Arc<View<P>> {
        self.inner
            .view
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The write-side state.
    pub(crate) fn lock_writer(&self) -> MutexGuard<'_, Writer<P>> {
        // Every update of `Writer` leaves it usable (a failed seal keeps the pending pack
        // or drops it whole), so a poisoned lock is still safe to use.
        self.inner
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Makes `manifest`, read as `version`, this handle's view; the packs of `sealed`, just
    /// sealed by this handle, are taken as they are (a pack named as one listed before has
    /// its bytes now).
    pub(crate) fn install(
        &self,
        manifest: Manifest,
        version: P::Version,
        sealed: &[Arc<SealedPack<P>>],
    ) {
        let current = self.view();
        let view = View::new(manifest, version, &self.inner.place, Some(&current), sealed);
        *self
            .inner
            .view
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(view);
    }

    /// Forgets every pack this handle opened (what it read of their files), so the next
    /// lookups open them afresh: after a repair rewrote files in place.
    pub(crate) fn forget_opened_packs(&self) {
        let current = self.view();
        let view = View::new(
            current.manifest.clone(),
            current.version.clone(),
            &self.inner.place,
            None,
            &[],
        );
        *self
            .inner
            .view
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(view);
    }

    /// Reads the manifest again (`force`: past the place's "not changed" shortcut) and
    /// installs it. Returns whether its content changed.
    pub(crate) fn refresh(&self, force: bool) -> StoreResult<bool> {
        let current = self.view();
        let Some((manifest, version)) =
            self.inner
                .place
                .reread_manifest(&current.manifest, &current.version, force)?
        else {
            return Ok(false);
        };
        let changed = manifest != current.manifest;
        if changed || version != current.version {
            self.install(manifest, version, &[]);
        }
        Ok(changed)
    }

    /// Takes what a writer must hold before it publishes, and then reads the manifest
    /// afresh when it was just taken (another writer may have replaced it before).
    pub(crate) fn hold_for_writing(&self) -> StoreResult<()> {
        if self.inner.place.hold_for_writing()? {
            self.refresh(false)?;
        }
        Ok(())
    }
}
