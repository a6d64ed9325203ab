//! [`NodeStore`]: reads and writes tree nodes through a [`ChunkStore`], with a cache of
//! decoded nodes and counters of the work done.
//!
//! Every chunk the cache holds was verified (re-hashed and decoded) when it was read or
//! written, so a cache hit is as trustworthy as a fresh read. The counters count logical
//! node visits, hit or miss, so the cost an operation reports does not depend on what
//! happened to be cached.

use crate::chunker::ClosedNode;
use crate::hashing::HashBatch;
use crate::{MerkleResult, Node};
use rnt_store::meter::{self, Work};
use rnt_store::{Address, AddressMap, Chunk, ChunkStore};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Default bytes of decoded nodes kept in memory: what a long-lived process needs to keep a
/// 1M-row store's working set warm. At 256 MiB, a warm process's W5 commit (1M orders) went
/// from 2.7 to 7.1 ms after 1 000 commits, and its in-process durable W1–W4 commit fetched
/// 221 nodes instead of 59 after 400; at 1 GiB, 2.7 ms and 59. The CLI's one-shot commands
/// take less (`cli/src/settings.rs`).
pub const NODE_CACHE_BYTES_DEFAULT: usize = 1024 * 1024 * 1024;

/// Nodes written per batch put during a long build.
const WRITE_BATCH_NODES: usize = 256;

/// A snapshot of the work counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Nodes visited by reads (cache hits included).
    pub nodes_read: u64,
    /// Nodes visited that were not cached and came from the chunk store.
    pub nodes_fetched: u64,
    /// Nodes produced by builds and edits (including ones the store already held).
    pub nodes_written: u64,
    /// Their bytes (encoded, uncompressed: what the nodes' addresses hash).
    pub bytes_written: u64,
    /// Leaf entries returned by lookups, scans and diffs.
    pub entries_read: u64,
}

impl std::ops::Sub for Counters {
    type Output = Counters;
    fn sub(self, earlier: Counters) -> Counters {
        Counters {
            nodes_read: self.nodes_read - earlier.nodes_read,
            nodes_fetched: self.nodes_fetched - earlier.nodes_fetched,
            nodes_written: self.nodes_written - earlier.nodes_written,
            bytes_written: self.bytes_written - earlier.bytes_written,
            entries_read: self.entries_read - earlier.entries_read,
        }
    }
}

impl std::ops::Add for Counters {
    type Output = Counters;
    fn add(self, other: Counters) -> Counters {
        Counters {
            nodes_read: self.nodes_read + other.nodes_read,
            nodes_fetched: self.nodes_fetched + other.nodes_fetched,
            nodes_written: self.nodes_written + other.nodes_written,
            bytes_written: self.bytes_written + other.bytes_written,
            entries_read: self.entries_read + other.entries_read,
        }
    }
}

#[derive(Default)]
struct AtomicCounters {
    nodes_read: AtomicU64,
    nodes_fetched: AtomicU64,
    nodes_written: AtomicU64,
    bytes_written: AtomicU64,
    entries_read: AtomicU64,
}

/// Two generations approximate LRU cheaply: hits in the old generation move to the new
/// one; when the new one fills half the budget, the old one is dropped.
#[derive(Default)]
struct NodeCache {
    young: AddressMap<Arc<Node>>,
    old: AddressMap<Arc<Node>>,
    young_bytes: usize,
    budget_bytes: usize,
}

impl NodeCache {
    fn get(&mut self, address: &Address) -> Option<Arc<Node>> {
        if let Some(node) = self.young.get(address) {
            return Some(node.clone());
        }
        let node = self.old.remove(address)?;
        self.insert(node.clone());
        Some(node)
    }

    fn insert(&mut self, node: Arc<Node>) {
        if self.budget_bytes == 0 {
            return;
        }
        self.young_bytes += node.bytes().len();
        self.young.insert(node.address(), node);
        if self.young_bytes > self.budget_bytes / 2 {
            self.old = std::mem::take(&mut self.young);
            self.young_bytes = 0;
        }
    }

    /// A cached node, without refreshing its generation.
    fn peek(&self, address: &Address) -> Option<&Node> {
        self.young
            .get(address)
            .or_else(|| self.old.get(address))
            .map(|node| &**node)
    }

    fn contains(&self, address: &Address) -> bool {
        self.young.contains_key(address) || self.old.contains_key(address)
    }

    fn clear(&mut self) {
        self.young.clear();
        self.old.clear();
        self.young_bytes = 0;
    }
}

/// Reads and writes nodes for every tree in one chunk store. Cheap to clone (shared).
#[derive(Clone)]
pub struct NodeStore {
    chunks: Arc<dyn ChunkStore>,
    cache: Arc<Mutex<NodeCache>>,
    counters: Arc<AtomicCounters>,
}

impl NodeStore {
    /// A node store over `chunks` with the default cache budget.
    pub fn new(chunks: Arc<dyn ChunkStore>) -> NodeStore {
        NodeStore::with_cache_bytes(chunks, NODE_CACHE_BYTES_DEFAULT)
    }

    /// A node store with a cache of at most about `cache_bytes` bytes (0 disables it).
    pub fn with_cache_bytes(chunks: Arc<dyn ChunkStore>, cache_bytes: usize) -> NodeStore {
        let cache = NodeCache {
            budget_bytes: cache_bytes,
            ..NodeCache::default()
        };
        NodeStore {
            chunks,
            cache: Arc::new(Mutex::new(cache)),
            counters: Arc::new(AtomicCounters::default()),
        }
    }

    /// A node store over the same chunks and cache whose work counters start at zero and
    /// are its own: work done on another thread that may be thrown away, counted only
    /// when kept ([`NodeStore::add_counters`]), so what a commit reports does not depend on
    /// which thread got there first.
    pub fn with_own_counters(&self) -> NodeStore {
        NodeStore {
            chunks: Arc::clone(&self.chunks),
            cache: Arc::clone(&self.cache),
            counters: Arc::new(AtomicCounters::default()),
        }
    }

    /// Adds `work` (done through a [`NodeStore::with_own_counters`] store) to the counters.
    pub fn add_counters(&self, work: Counters) {
        let c = &self.counters;
        c.nodes_read.fetch_add(work.nodes_read, Ordering::Relaxed);
        c.nodes_fetched
            .fetch_add(work.nodes_fetched, Ordering::Relaxed);
        c.nodes_written
            .fetch_add(work.nodes_written, Ordering::Relaxed);
        c.bytes_written
            .fetch_add(work.bytes_written, Ordering::Relaxed);
        c.entries_read
            .fetch_add(work.entries_read, Ordering::Relaxed);
    }

    /// The underlying chunk store.
    pub fn chunks(&self) -> &Arc<dyn ChunkStore> {
        &self.chunks
    }

    /// The work counters so far.
    pub fn counters(&self) -> Counters {
        let c = &self.counters;
        Counters {
            nodes_read: c.nodes_read.load(Ordering::Relaxed),
            nodes_fetched: c.nodes_fetched.load(Ordering::Relaxed),
            nodes_written: c.nodes_written.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            entries_read: c.entries_read.load(Ordering::Relaxed),
        }
    }

    /// Forgets every cached node (the next reads come from the chunk store).
    pub fn clear_cache(&self) {
        self.lock_cache().clear();
    }

    pub(crate) fn count_entries_read(&self, n: u64) {
        self.counters.entries_read.fetch_add(n, Ordering::Relaxed);
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, NodeCache> {
        // The cache holds only verified nodes; a panic mid-update leaves at worst a
        // missing entry, so a poisoned lock is safe to reuse.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reads node `address`, from the cache or the chunk store (verified and decoded).
    pub fn read(&self, address: &Address) -> MerkleResult<Arc<Node>> {
        self.counters.nodes_read.fetch_add(1, Ordering::Relaxed);
        self.warm(address)
    }

    /// Brings node `address` into the cache ahead of a read that will want it, without
    /// counting a visit (the read that follows counts it): a prefetch running beside an
    /// edit. A node fetched here still counts as fetched from the chunk store.
    pub(crate) fn warm(&self, address: &Address) -> MerkleResult<Arc<Node>> {
        if let Some(node) = self.lock_cache().get(address) {
            return Ok(node);
        }
        self.counters.nodes_fetched.fetch_add(1, Ordering::Relaxed);
        let bytes = self.chunks.get(address)?;
        let size = bytes.len();
        let node = Arc::new(meter::measure(Work::Decode, size, || {
            Node::decode(*address, bytes)
        })?);
        self.lock_cache().insert(node.clone());
        Ok(node)
    }

    /// Point lookup entirely within the cache, under one lock and without reference-count
    /// traffic. `None` when a node on the path is not cached (the caller falls back).
    pub(crate) fn get_cached(&self, root: &Address, key: &[u8]) -> Option<Option<Vec<u8>>> {
        let cache = self.lock_cache();
        let mut node: &Node = cache.peek(root)?;
        let mut visited = 1u64;
        let result = loop {
            if node.is_leaf() {
                break match node.search(key) {
                    Ok(i) => Some(node.value(i).to_vec()),
                    Err(_) => None,
                };
            }
            let index = match node.search(key) {
                Ok(i) => i,
                Err(i) if i < node.len() => i,
                Err(_) => break None,
            };
            let child = node.child_address(index);
            node = cache.peek(&child)?;
            visited += 1;
        };
        drop(cache);
        self.counters
            .nodes_read
            .fetch_add(visited, Ordering::Relaxed);
        if result.is_some() {
            self.count_entries_read(1);
        }
        Some(result)
    }

    /// Starts a batch of node writes.
    pub(crate) fn writer(&self) -> NodeWriter<'_> {
        NodeWriter {
            store: self,
            pending: Vec::new(),
            hashes: None,
        }
    }

    /// Starts a batch of node writes whose addresses [`NodeWriter::submit`] has computed
    /// beside the caller (`crate::hashing`), for an edit that writes many nodes.
    pub(crate) fn hashing_writer(&self) -> NodeWriter<'_> {
        NodeWriter {
            store: self,
            pending: Vec::new(),
            hashes: Some(HashBatch::new()),
        }
    }
}

/// Buffers closed nodes and writes them to the chunk store in batches.
pub(crate) struct NodeWriter<'a> {
    store: &'a NodeStore,
    pending: Vec<Arc<Node>>,
    /// Where submitted nodes are hashed, for a writer that hashes beside its caller.
    hashes: Option<HashBatch>,
}

/// A closed node submitted for writing, its address not yet asked for.
pub(crate) struct SubmittedNode {
    bytes: Chunk,
    count: u64,
    level: u8,
    /// Its index in the writer's hash batch; `None` when the writer hashes in place.
    hashing: Option<usize>,
}

impl SubmittedNode {
    /// The node's subtree entry count.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }
}

impl NodeWriter<'_> {
    /// Hands `node` over for writing; [`NodeWriter::complete`] gives its address and
    /// queues it for the store. A writer with a hash batch starts its hashing beside the
    /// caller.
    pub(crate) fn submit(&mut self, node: ClosedNode) -> SubmittedNode {
        let bytes: Chunk = Arc::from(node.bytes);
        let hashing = self
            .hashes
            .as_ref()
            .map(|batch| batch.submit(bytes.clone()));
        SubmittedNode {
            bytes,
            count: node.count,
            level: node.level,
            hashing,
        }
    }

    /// The address of a node [`NodeWriter::submit`] took, queued for writing.
    pub(crate) fn complete(&mut self, node: SubmittedNode) -> MerkleResult<Address> {
        let address = match (node.hashing, &self.hashes) {
            (Some(index), Some(batch)) => batch.address(index),
            _ => meter::measure(Work::Hash, node.bytes.len(), || Address::of(&node.bytes)),
        };
        debug_assert_eq!(address, Address::of(&node.bytes));
        self.queue(address, node.bytes, node.count, node.level)
    }

    /// Queues `node` for writing and returns its address.
    pub(crate) fn write(&mut self, node: ClosedNode) -> MerkleResult<Address> {
        let bytes: Chunk = Arc::from(node.bytes);
        let address = meter::measure(Work::Hash, bytes.len(), || Address::of(&bytes));
        self.queue(address, bytes, node.count, node.level)
    }

    /// Queues the node `bytes` encode, at `address`, and returns the address.
    fn queue(
        &mut self,
        address: Address,
        bytes: Chunk,
        count: u64,
        level: u8,
    ) -> MerkleResult<Address> {
        let decoded = meter::measure(Work::Encode, 0, || Node::from_built(address, bytes, count))?;
        debug_assert_eq!(decoded.level(), level);
        debug_assert_eq!(decoded.subtree_count(), count);
        self.store
            .counters
            .nodes_written
            .fetch_add(1, Ordering::Relaxed);
        self.store
            .counters
            .bytes_written
            .fetch_add(decoded.bytes().len() as u64, Ordering::Relaxed);
        self.pending.push(Arc::new(decoded));
        if self.pending.len() >= WRITE_BATCH_NODES {
            self.flush()?;
        }
        Ok(address)
    }

    /// Writes every queued node.
    pub(crate) fn flush(&mut self) -> MerkleResult<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut cache = self.store.lock_cache();
        let fresh: Vec<Arc<Node>> = self
            .pending
            .drain(..)
            .filter(|node| !cache.contains(&node.address()))
            .collect();
        drop(cache);
        let addressed: Vec<(Address, Chunk)> = fresh
            .iter()
            .map(|node| (node.address(), Arc::clone(node.chunk())))
            .collect();
        self.store.chunks.put_shared(&addressed)?;
        cache = self.store.lock_cache();
        for node in fresh {
            cache.insert(node);
        }
        Ok(())
    }
}
