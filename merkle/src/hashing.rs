//! Node addresses computed beside an edit: BLAKE3 of every written node is about a third of
//! a tree edit's work, and nothing but the level above needs an address before the level
//! ends. So an edit hands each new node's bytes to a [`HashBatch`] as the node closes and
//! goes on chunking; one background thread, shared by the process and parked when idle,
//! hashes what it can meanwhile, and the editing thread hashes whatever is left when it
//! asks for the addresses at the level's end. The thread is woken only once
//! [`WAKE_AFTER_NODES`] nodes wait untaken, never once per node: a wake-up is a system
//! call that costs about what hashing a node does (measured: waking per node took 12 % of
//! a W9 commit).
//!
//! *Invariant: an address is `Address::of` the bytes submitted, whichever thread computed
//! it; so results, their order and the counters do not depend on the thread's progress.*

use rnt_store::meter::{self, Work};
use rnt_store::{Address, Chunk};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// Nodes that wait untaken before the hashing thread is woken for them.
pub(crate) const WAKE_AFTER_NODES: usize = 8;

/// The nodes of one edit waiting for their addresses, and those computed.
#[derive(Default)]
struct Jobs {
    /// Bytes submitted, by index; `None` once a thread took them.
    bytes: Vec<Option<Chunk>>,
    /// Addresses computed, by index.
    addresses: Vec<Option<Address>>,
    /// The first index no thread has taken yet.
    next: usize,
    /// Whether the batch waits in the worker's queue.
    queued: bool,
    /// Whether the editing thread waits for an address (only then is it signalled).
    waiting: bool,
}

#[derive(Default)]
struct Shared {
    jobs: Mutex<Jobs>,
    /// Signalled when the worker stores an address.
    computed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Jobs> {
        // Hashing cannot fail half-way through an update of `Jobs`, so a poisoned lock
        // still guards consistent data.
        self.jobs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes the next untaken job, if any.
    fn take(jobs: &mut Jobs) -> Option<(usize, Chunk)> {
        while jobs.next < jobs.bytes.len() {
            let index = jobs.next;
            jobs.next += 1;
            if let Some(bytes) = jobs.bytes[index].take() {
                return Some((index, bytes));
            }
        }
        None
    }
}

/// The addresses of one edit's new nodes, computed by the shared worker or by the caller.
pub(crate) struct HashBatch {
    shared: Arc<Shared>,
}

impl HashBatch {
    /// An empty batch.
    pub(crate) fn new() -> HashBatch {
        HashBatch {
            shared: Arc::new(Shared::default()),
        }
    }

    /// Queues `bytes` for hashing and returns its index in the batch; wakes the hashing
    /// thread when [`WAKE_AFTER_NODES`] nodes wait untaken and it is not at this batch yet.
    pub(crate) fn submit(&self, bytes: Chunk) -> usize {
        let mut jobs = self.shared.lock();
        let index = jobs.bytes.len();
        jobs.bytes.push(Some(bytes));
        jobs.addresses.push(None);
        if !jobs.queued && jobs.bytes.len() - jobs.next >= WAKE_AFTER_NODES {
            jobs.queued = true;
            drop(jobs);
            worker().push(Arc::clone(&self.shared));
        }
        index
    }

    /// The address of the bytes submitted as `index`: computed here when no thread has
    /// taken them yet (and so is every job before them), else waited for.
    pub(crate) fn address(&self, index: usize) -> Address {
        let mut jobs = self.shared.lock();
        loop {
            if let Some(address) = jobs.addresses[index] {
                return address;
            }
            match Shared::take(&mut jobs) {
                Some((taken, bytes)) => {
                    drop(jobs);
                    let address = meter::measure(Work::Hash, bytes.len(), || Address::of(&bytes));
                    jobs = self.shared.lock();
                    jobs.addresses[taken] = Some(address);
                }
                None => {
                    jobs.waiting = true;
                    jobs = self
                        .shared
                        .computed
                        .wait(jobs)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    jobs.waiting = false;
                }
            }
        }
    }
}

/// The process's hashing thread: batches with untaken jobs, in the order they asked.
struct Worker {
    queue: Mutex<VecDeque<Arc<Shared>>>,
    wake: Condvar,
}

impl Worker {
    fn push(&self, batch: Arc<Shared>) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.push_back(batch);
        drop(queue);
        self.wake.notify_one();
    }

    fn run(&self) {
        loop {
            let batch = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(batch) = queue.pop_front() {
                        break batch;
                    }
                    queue = self.wake.wait(queue).unwrap_or_else(|p| p.into_inner());
                }
            };
            let mut jobs = batch.lock();
            while let Some((index, bytes)) = Shared::take(&mut jobs) {
                drop(jobs);
                let address = meter::measure(Work::Hash, bytes.len(), || Address::of(&bytes));
                jobs = batch.lock();
                jobs.addresses[index] = Some(address);
                if jobs.waiting {
                    batch.computed.notify_all();
                }
            }
            // Nothing left to take: a later submit queues the batch again.
            jobs.queued = false;
        }
    }
}

/// The shared worker, started on first use. `None` when the thread cannot be started: then
/// every batch is hashed by its own thread, at its level's end.
fn worker() -> &'static Worker {
    static WORKER: OnceLock<&'static Worker> = OnceLock::new();
    WORKER.get_or_init(|| {
        let worker: &'static Worker = Box::leak(Box::new(Worker {
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
        }));
        // A thread that cannot start leaves the queue unserved: callers hash their own
        // jobs when they ask for addresses, so nothing waits on it.
        let _ = std::thread::Builder::new()
            .name("rnt-hash".into())
            .spawn(move || worker.run());
        worker
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_the_hashes_of_what_was_submitted_in_any_order_of_asking() {
        let batch = HashBatch::new();
        let chunks: Vec<Chunk> = (0..200u32)
            .map(|i| Chunk::from(vec![(i % 251) as u8; 100 + i as usize * 13]))
            .collect();
        let indexes: Vec<usize> = chunks.iter().map(|c| batch.submit(c.clone())).collect();
        assert_eq!(indexes, (0..200).collect::<Vec<_>>());
        for i in (0..200).rev().step_by(3).chain(0..200) {
            assert_eq!(batch.address(i), Address::of(&chunks[i]));
        }
    }

    #[test]
    fn many_batches_on_many_threads_each_get_their_own_addresses() {
        std::thread::scope(|scope| {
            for t in 0..4u8 {
                scope.spawn(move || {
                    for round in 0..20u8 {
                        let batch = HashBatch::new();
                        let chunks: Vec<Chunk> = (0..30u8)
                            .map(|i| Chunk::from(vec![t ^ round ^ i; 4096]))
                            .collect();
                        for chunk in &chunks {
                            batch.submit(chunk.clone());
                        }
                        for (i, chunk) in chunks.iter().enumerate() {
                            assert_eq!(batch.address(i), Address::of(chunk));
                        }
                    }
                });
            }
        });
    }
}
