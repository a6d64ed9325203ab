//! [`CommitTimings`]: where a commit's wall time went, step by step, for the commit-cost
//! breakdown (`rnt commit --stats --format json`, the storage benchmark). Never stored:
//! a commit records the work its operators did (entries and nodes), which does not depend
//! on the machine; times do.

use std::time::{Duration, Instant};

/// Wall time of each step of one commit, on the committing thread; the steps do not
/// overlap, so they add up to at most the commit's time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommitTimings {
    /// Checking the change set and applying it to the base relations: edits, tuple deltas,
    /// change counts and base-relation indexes.
    pub base: Duration,
    /// Each operator that ran, in stratum order: operator, relation (or stratum) and time.
    pub operators: Vec<(String, String, Duration)>,
    /// Writing the new state and commit objects (the maintained trees' nodes are written
    /// as the operators build them, so their time is the operators').
    pub write: Duration,
    /// Making it durable and moving the branch: the pending pack sealed and synced, the
    /// manifest swapped (the ref's compare-and-swap), small packs merged.
    pub publish: Duration,
}

impl CommitTimings {
    /// The operators' time together.
    pub fn maintain(&self) -> Duration {
        self.operators.iter().map(|(_, _, time)| *time).sum()
    }

    /// Every step together.
    pub fn total(&self) -> Duration {
        self.base + self.maintain() + self.write + self.publish
    }
}

/// Runs `work` and adds its wall time to `into`.
pub(crate) fn timed<T>(into: &mut Duration, work: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = work();
    *into += started.elapsed();
    result
}
