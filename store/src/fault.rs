//! Fault injection for crash tests: a process that reaches a named write point for the
//! n-th time aborts there, as a power cut or a `kill -9` at that instant would stop it, or
//! pauses there (a writer caught in the middle of a commit, for tests of readers beside
//! it).
//!
//! The points are compiled in only with the cargo feature `fault-injection` (off by
//! default; `scripts/test` turns it on through `rnt-cli/fault-injection`): without it every
//! [`point`] is an empty inline function and a release binary holds none of this. The
//! store reads no environment variable: the `rnt` binary reads [`FAULT_ENV`] (e.g.
//! `RNT_FAULT_AT=manifest-rename:2` aborts at the second manifest rename) and
//! [`PAUSE_ENV`] (e.g. `RNT_PAUSE_AT=manifest-write:1:3000` sleeps 3 s there) and hands
//! the store what they say with `arm`.
//!
//! The named points, in the order a commit passes them: [`RECORD_APPEND`], [`GC_COPY`]
//! (when it folds the newest packs into its own), [`INDEX_WRITE`], [`PACK_SEAL`],
//! [`PACK_FSYNC`] (before [`PACK_SEAL`] when the pack's name is taken), [`MANIFEST_WRITE`],
//! [`MANIFEST_RENAME`], [`GC_DELETE`] (the folded
//! packs); and for `gc` and pack merging [`GC_COPY`], [`GC_DELETE`]. On an object store:
//! [`OBJECT_PACK_UPLOAD`], [`OBJECT_INDEX_UPLOAD`], [`OBJECT_MANIFEST_CREATE`],
//! [`OBJECT_POINTER_UPDATE`] (and [`GC_COPY`] while merging); and [`PUSH_MOVE`] where a
//! push, its chunks copied, is about to move the remote's branch.

/// Whether this build has the fault points (the `fault-injection` feature).
pub const ENABLED: bool = cfg!(feature = "fault-injection");

/// The environment variable the `rnt` binary reads for the point and pass to abort at:
/// `POINT:N` (N ≥ 1); see `Fault::abort_at`.
pub const FAULT_ENV: &str = "RNT_FAULT_AT";

/// The environment variable the `rnt` binary reads for a point, a pass and milliseconds
/// to sleep there: `POINT:N:MS`; see `Fault::pause_at`.
pub const PAUSE_ENV: &str = "RNT_PAUSE_AT";

/// A chunk record was appended to the pack being written (before it is synced).
pub const RECORD_APPEND: &str = "record-append";
/// The sealed pack (and its index, beside it) is about to be fsynced: after its renames,
/// the syncs then running beside the manifest's write.
pub const PACK_FSYNC: &str = "pack-fsync";
/// A pack's index file was written (before it is synced).
pub const INDEX_WRITE: &str = "index-write";
/// A pack and its written index are about to be renamed to their final names (not yet
/// synced, unless a file already has that name).
pub const PACK_SEAL: &str = "pack-seal";
/// A new manifest was written to its temporary file (before it is synced).
pub const MANIFEST_WRITE: &str = "manifest-write";
/// A synced temporary manifest is about to replace the manifest.
pub const MANIFEST_RENAME: &str = "manifest-rename";
/// A live chunk was copied into the pack gc (or a pack merge) is writing.
pub const GC_COPY: &str = "gc-copy";
/// A pack no manifest names any more is about to be deleted.
pub const GC_DELETE: &str = "gc-delete";

/// The object-store backend is about to upload a sealed pack object.
pub const OBJECT_PACK_UPLOAD: &str = "object-pack-upload";
/// The object-store backend uploaded a pack and is about to upload its index.
pub const OBJECT_INDEX_UPLOAD: &str = "object-index-upload";
/// The object-store backend is about to create the next manifest generation (its
/// compare-and-swap).
pub const OBJECT_MANIFEST_CREATE: &str = "object-manifest-create";
/// The object-store backend created a manifest generation and is about to move the
/// `manifest` pointer.
pub const OBJECT_POINTER_UPDATE: &str = "object-pointer-update";
/// A push copied its chunks to the remote and is about to move the remote's branch.
pub const PUSH_MOVE: &str = "push-move";

/// Every named point of the local backends, for tests that visit each.
pub const ALL_POINTS: [&str; 8] = [
    RECORD_APPEND,
    PACK_FSYNC,
    INDEX_WRITE,
    PACK_SEAL,
    MANIFEST_WRITE,
    MANIFEST_RENAME,
    GC_COPY,
    GC_DELETE,
];

/// The object-store backend's points in the order a publish passes them, and the push's.
pub const OBJECT_POINTS: [&str; 5] = [
    PUSH_MOVE,
    OBJECT_PACK_UPLOAD,
    OBJECT_INDEX_UPLOAD,
    OBJECT_MANIFEST_CREATE,
    OBJECT_POINTER_UPDATE,
];

#[cfg(feature = "fault-injection")]
pub use armed::{arm, point, Fault};

/// Marks one pass of the write point `name`: nothing in a build without the
/// `fault-injection` feature.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn point(_name: &str) {}

/// The armed points and what a pass of one does.
#[cfg(feature = "fault-injection")]
mod armed {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    use std::time::Duration;

    /// A fault to inject: at which point, at which pass, and what to do there.
    #[derive(Debug)]
    pub struct Fault {
        point: String,
        pass: u64,
        seen: AtomicU64,
        /// Sleep this long instead of aborting.
        pause: Option<Duration>,
    }

    /// The faults of this process, armed once.
    static ARMED: OnceLock<Vec<Fault>> = OnceLock::new();

    impl Fault {
        /// An abort at the `N`-th pass of a point, from `POINT:N` (N ≥ 1); `None` when the
        /// text says something else.
        pub fn abort_at(text: &str) -> Option<Fault> {
            Fault::parse(text, false)
        }

        /// A pause of `MS` milliseconds at the `N`-th pass of a point, from `POINT:N:MS`.
        pub fn pause_at(text: &str) -> Option<Fault> {
            Fault::parse(text, true)
        }

        fn parse(text: &str, with_pause: bool) -> Option<Fault> {
            let mut parts = text.split(':');
            let point = parts.next()?.to_string();
            let pass = parts
                .next()?
                .parse::<u64>()
                .ok()
                .filter(|pass| *pass >= 1)?;
            let pause = if with_pause {
                Some(Duration::from_millis(parts.next()?.parse().ok()?))
            } else {
                None
            };
            parts.next().is_none().then_some(Fault {
                point,
                pass,
                seen: AtomicU64::new(0),
                pause,
            })
        }

        fn hit(&self, name: &str) -> bool {
            self.point == name && self.seen.fetch_add(1, Ordering::Relaxed) + 1 == self.pass
        }
    }

    /// Arms `faults` for the rest of the process (the first call wins; later ones change
    /// nothing and return false).
    pub fn arm(faults: Vec<Fault>) -> bool {
        ARMED.set(faults).is_ok()
    }

    /// Marks one pass of the write point `name`; aborts the process (or pauses it) when an
    /// armed fault names this point and pass. The abort skips destructors and buffered
    /// output on purpose: it must leave the disk exactly as a crash would.
    pub fn point(name: &str) {
        for fault in ARMED.get().map_or(&[][..], Vec::as_slice) {
            if fault.hit(name) {
                match fault.pause {
                    Some(pause) => std::thread::sleep(pause),
                    None => {
                        eprintln!("fault injected: abort at {name} pass {}", fault.pass);
                        std::process::abort();
                    }
                }
            }
        }
    }
}
