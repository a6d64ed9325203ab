//! The work meter: how long a process spent on each kind of storage work (hashing,
//! compression, reads, writes, fsyncs, …), on every thread, for the commit-cost breakdown
//! of `rnt commit --stats --format json` and the benchmarks.
//!
//! The meter is process-wide and off by default: while it is off, [`measure`] costs one
//! relaxed load and reads no clock. A caller turns it on ([`enable`]), takes a
//! [`snapshot`] before and after the work it wants to see, and subtracts.
//!
//! Each kind is *leaf* work: nothing measured as one kind runs inside another, so the
//! kinds add up without counting a nanosecond twice (on one thread; work on the second
//! core is added too, so the total may exceed the wall time it ran in).
//!
//! *Invariant: the meter only observes; nothing reads it to decide anything, so results
//! and addresses never depend on whether it is on.*

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A kind of storage work the meter tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Work {
    /// BLAKE3 of new chunks, to name them (node writes).
    Hash,
    /// BLAKE3 of chunks read, to check them against their address.
    Verify,
    /// Encoding a tree node's bytes as it closes (and the cache's view of them).
    Encode,
    /// Decoding a tree node read from the store.
    Decode,
    /// Compressing new chunks into pack records.
    Compress,
    /// Decompressing records read.
    Decompress,
    /// Finding a chunk in the packs' indexes (index files read and checked included).
    Locate,
    /// Reading records from pack files.
    Read,
    /// Writing pack and index files (appends and the sealed index; not their fsync).
    Write,
    /// `fsync` of files and folders.
    Fsync,
    /// Replacing the manifest: the ref compare-and-swap (not its fsyncs).
    Manifest,
}

impl Work {
    /// Every kind, in report order.
    pub const ALL: [Work; 11] = [
        Work::Hash,
        Work::Verify,
        Work::Encode,
        Work::Decode,
        Work::Compress,
        Work::Decompress,
        Work::Locate,
        Work::Read,
        Work::Write,
        Work::Fsync,
        Work::Manifest,
    ];

    /// The kind's name in reports (`hash`, `fsync`, …).
    pub fn name(self) -> &'static str {
        match self {
            Work::Hash => "hash",
            Work::Verify => "verify",
            Work::Encode => "encode",
            Work::Decode => "decode",
            Work::Compress => "compress",
            Work::Decompress => "decompress",
            Work::Locate => "locate",
            Work::Read => "read",
            Work::Write => "write",
            Work::Fsync => "fsync",
            Work::Manifest => "manifest",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

const KINDS: usize = Work::ALL.len();

/// Totals of one kind of work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkTotal {
    /// Time spent, on every thread.
    pub time: Duration,
    /// Operations (chunks hashed, records read, fsyncs, …).
    pub count: u64,
    /// Bytes the operations took in (hashed, compressed, read, written; 0 for fsyncs).
    pub bytes: u64,
}

/// The meter's totals at one moment; subtract two to get the work in between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkSnapshot {
    totals: [WorkTotal; KINDS],
}

impl WorkSnapshot {
    /// The totals of `work`.
    pub fn get(&self, work: Work) -> WorkTotal {
        self.totals[work.index()]
    }

    /// Every kind with its totals, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (Work, WorkTotal)> + '_ {
        Work::ALL.iter().map(|&work| (work, self.get(work)))
    }
}

impl std::ops::Sub for WorkSnapshot {
    type Output = WorkSnapshot;
    fn sub(self, earlier: WorkSnapshot) -> WorkSnapshot {
        let mut totals = self.totals;
        for (total, before) in totals.iter_mut().zip(earlier.totals) {
            total.time = total.time.saturating_sub(before.time);
            total.count = total.count.saturating_sub(before.count);
            total.bytes = total.bytes.saturating_sub(before.bytes);
        }
        WorkSnapshot { totals }
    }
}

struct Meter {
    on: AtomicBool,
    nanos: [AtomicU64; KINDS],
    counts: [AtomicU64; KINDS],
    bytes: [AtomicU64; KINDS],
}

static METER: Meter = Meter {
    on: AtomicBool::new(false),
    nanos: [const { AtomicU64::new(0) }; KINDS],
    counts: [const { AtomicU64::new(0) }; KINDS],
    bytes: [const { AtomicU64::new(0) }; KINDS],
};

/// Turns the meter on for the rest of the process (or off again).
pub fn enable(on: bool) {
    METER.on.store(on, Ordering::Relaxed);
}

/// Whether the meter is on.
pub fn is_enabled() -> bool {
    METER.on.load(Ordering::Relaxed)
}

/// Runs `work`, counting its time as `kind` over `bytes` bytes when the meter is on.
#[inline]
pub fn measure<T>(kind: Work, bytes: usize, work: impl FnOnce() -> T) -> T {
    if !is_enabled() {
        return work();
    }
    let started = Instant::now();
    let result = work();
    record(kind, started.elapsed(), bytes);
    result
}

/// Adds `time` spent on `kind` over `bytes` bytes (for work timed by its caller).
pub fn record(kind: Work, time: Duration, bytes: usize) {
    let i = kind.index();
    let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
    METER.nanos[i].fetch_add(nanos, Ordering::Relaxed);
    METER.counts[i].fetch_add(1, Ordering::Relaxed);
    METER.bytes[i].fetch_add(bytes as u64, Ordering::Relaxed);
}

/// The meter's totals now.
pub fn snapshot() -> WorkSnapshot {
    let mut totals = [WorkTotal::default(); KINDS];
    for (i, total) in totals.iter_mut().enumerate() {
        *total = WorkTotal {
            time: Duration::from_nanos(METER.nanos[i].load(Ordering::Relaxed)),
            count: METER.counts[i].load(Ordering::Relaxed),
            bytes: METER.bytes[i].load(Ordering::Relaxed),
        };
    }
    WorkSnapshot { totals }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_counted_only_while_the_meter_is_on() {
        // Other tests may run metered work meanwhile: look only at `Manifest` work done
        // here, counted by its bytes, which no other test of this crate's unit tests meters.
        enable(false);
        let before = snapshot();
        measure(Work::Manifest, 7, || ());
        assert_eq!((snapshot() - before).get(Work::Manifest).bytes, 0);
        enable(true);
        let before = snapshot();
        let value = measure(Work::Manifest, 7, || 42);
        assert_eq!(value, 42);
        let spent = (snapshot() - before).get(Work::Manifest);
        assert!(spent.count >= 1 && spent.bytes >= 7, "{spent:?}");
        enable(false);
    }
}
