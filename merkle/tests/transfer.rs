//! Guards `copy_reachable`, the walk push and fetch send: after any sequence of transfers
//! between stores the receiver holds every chunk every transferred root reaches (walked and
//! read back); a transfer sends exactly the chunks the receiver lacked; a second transfer
//! sends nothing; a one-key change sends a path's worth of nodes, bounded by the tree's
//! depth; and a transfer stopped half way leaves the receiver holding no chunk without
//! everything below it (the skip rule stays true).
//!
//! Case counts: `RNT_PROPTEST_CASES` (default 24).

// Test data: small generated numbers cast freely.
#![allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]

use proptest::prelude::*;
use rnt_merkle::{
    copy_reachable, reachable_chunks, BranchRecord, Commit, KindCode, NodeStore, RelationEntry,
    State, Tree,
};
use rnt_store::{Address, Chunk, ChunkStore, GcReport, MemoryStore, StoreError, StoreResult};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn cases(default: u32) -> u32 {
    std::env::var("RNT_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A line of history: its newest commit and the contents behind it.
type Line = (Option<Address>, BTreeMap<Vec<u8>, Vec<u8>>);

/// A history in one store: commits whose states hold two relations, edited commit by
/// commit, on two lines of history that may merge.
struct History {
    nodes: NodeStore,
    chunks: MemoryStore,
    /// Every commit made, oldest first.
    commits: Vec<Address>,
    /// The contents behind each line's newest commit.
    lines: [Line; 2],
}

impl History {
    fn new() -> History {
        let chunks = MemoryStore::new();
        History {
            nodes: NodeStore::new(Arc::new(chunks.clone())),
            chunks,
            commits: Vec::new(),
            lines: [(None, BTreeMap::new()), (None, BTreeMap::new())],
        }
    }

    /// Commits on `line`: keys `from..from + count` set to `value` (or deleted when `value`
    /// is 0), with the other line as a second parent when `merge`.
    fn commit(&mut self, line: usize, from: u32, count: u32, value: u8, merge: bool) {
        let contents = &mut self.lines[line].1;
        for key in from..from + count {
            let key = key.to_be_bytes().to_vec();
            if value == 0 {
                contents.remove(&key);
            } else {
                contents.insert(key, vec![value; 3]);
            }
        }
        let tree = Tree::build(&self.nodes, contents.clone()).unwrap();
        let small = Tree::build(&self.nodes, [(vec![value], vec![])]).unwrap();
        let relation = |name: &str, root: Address| RelationEntry {
            name: name.to_string(),
            kind: KindCode(0),
            root: Some(*root.as_bytes()),
            count: Some(1),
            aux: vec![],
        };
        let state = State {
            program: "p".to_string(),
            relations: vec![
                relation("big", tree.root()),
                relation("small", small.root()),
            ],
            clock: None,
        }
        .write(&self.chunks)
        .unwrap();
        let mut parents: Vec<[u8; 32]> = self.lines[line].0.iter().map(|a| *a.as_bytes()).collect();
        if merge {
            parents.extend(self.lines[1 - line].0.map(|a| *a.as_bytes()));
        }
        let commit = Commit {
            parents,
            state: *state.as_bytes(),
            message: format!("commit {}", self.commits.len()),
            time: 1_790_000_000 + self.commits.len() as i64,
            changes: vec![],
            stats: vec![],
        }
        .write(&self.chunks)
        .unwrap();
        self.lines[line].0 = Some(commit);
        self.commits.push(commit);
    }
}

/// Every address `store` holds.
fn held(store: &MemoryStore) -> HashSet<Address> {
    store
        .addresses_with_prefix("")
        .unwrap()
        .into_iter()
        .collect()
}

/// Asserts the skip rule of `store`: every chunk it holds, it holds with everything the
/// chunk reaches (read back and re-hashed).
fn assert_closed(store: &MemoryStore) {
    let all: Vec<Address> = held(store).into_iter().collect();
    for address in all {
        let bytes = store.get(&address).unwrap();
        let reached = match bytes.first() {
            Some(b'C') => reachable_chunks(store, &[address]),
            Some(b'B') => {
                let record = BranchRecord::decode(&address, &bytes).unwrap();
                reachable_chunks(store, &[record.commit_address()])
            }
            _ => continue,
        };
        assert!(reached.is_ok(), "{address} reaches a missing chunk");
    }
}

#[test]
fn a_second_transfer_sends_nothing_and_a_one_key_change_sends_a_path() {
    let mut history = History::new();
    history.commit(0, 0, 20_000, 1, false);
    let to = MemoryStore::new();
    let first = copy_reachable(&history.chunks, &to, &history.commits).unwrap();
    assert_eq!(first.chunks as usize, held(&history.chunks).len());
    assert!(first.bytes > 100_000, "{first:?}");
    let again = copy_reachable(&history.chunks, &to, &history.commits).unwrap();
    assert_eq!((again.chunks, again.bytes, again.skipped), (0, 0, 1));

    history.commit(0, 777, 1, 9, false);
    let head = *history.commits.last().unwrap();
    let depth = Tree::from_root(Address::from_bytes(
        State::read(
            &history.chunks,
            &Commit::read(&history.chunks, &head)
                .unwrap()
                .state_address(),
        )
        .unwrap()
        .relations[0]
            .root
            .unwrap(),
    ))
    .depth(&history.nodes)
    .unwrap();
    assert!(
        depth >= 2,
        "the test wants a tree of several levels: {depth}"
    );
    let one = copy_reachable(&history.chunks, &to, &[head]).unwrap();
    // The commit, its state, the small relation's one-node tree, and the big tree's path
    // from root to leaf (a re-chunked boundary may add a neighbour per level).
    let bound = 3 + 2 * u64::from(depth);
    assert!(
        (3..=bound).contains(&one.chunks),
        "one key changed sent {one:?} (depth {depth}, bound {bound})"
    );
    assert_eq!(
        reachable_chunks(&to, &[head]).unwrap(),
        reachable_chunks(&history.chunks, &[head]).unwrap()
    );
}

#[test]
fn branch_records_carry_their_commits_and_their_log() {
    let mut history = History::new();
    history.commit(0, 0, 50, 1, false);
    history.commit(0, 10, 5, 2, false);
    let first = BranchRecord {
        commit: *history.commits[0].as_bytes(),
        previous: None,
        time: 1,
        action: "commit: one".to_string(),
    }
    .write(&history.chunks)
    .unwrap();
    let second = BranchRecord {
        commit: *history.commits[1].as_bytes(),
        previous: Some(*first.as_bytes()),
        time: 2,
        action: "commit: two".to_string(),
    }
    .write(&history.chunks)
    .unwrap();
    let to = MemoryStore::new();
    copy_reachable(&history.chunks, &to, &[second]).unwrap();
    assert!(to.contains(&first).unwrap());
    assert_eq!(
        reachable_chunks(&to, &history.commits).unwrap(),
        reachable_chunks(&history.chunks, &history.commits).unwrap()
    );
    assert_closed(&to);
}

#[test]
fn a_damaged_or_unknown_chunk_stops_the_transfer() {
    let from = MemoryStore::new();
    let odd = from.put(b"\xEEnot an object").unwrap();
    let to = MemoryStore::new();
    let error = copy_reachable(&from, &to, &[odd]).unwrap_err();
    assert!(error.to_string().contains("no kind of object"), "{error}");
    assert!(!to.contains(&odd).unwrap());

    let mut history = History::new();
    history.commit(0, 0, 10, 1, false);
    let head = history.commits[0];
    history
        .chunks
        .overwrite_raw_for_test(&head, b"C\x01garbage");
    let error = copy_reachable(&history.chunks, &to, &[head]).unwrap_err();
    assert!(error.to_string().contains(&head.to_hex()), "{error}");
    assert!(!to.contains(&head).unwrap());
}

/// A receiver that stops accepting writes after a number of chunks, as a transfer killed
/// half way leaves a store whose writes are visible one by one (sled).
struct Stopping {
    inner: MemoryStore,
    left: AtomicUsize,
}

impl ChunkStore for Stopping {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        self.inner.get(address)
    }
    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        for chunk in chunks {
            if self
                .left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_err()
            {
                return Err(StoreError::Backend("killed".to_string()));
            }
            self.inner.put_addressed(&[*chunk])?;
        }
        Ok(())
    }
    fn contains(&self, address: &Address) -> StoreResult<bool> {
        self.inner.contains(address)
    }
    fn addresses_with_prefix(&self, prefix: &str) -> StoreResult<Vec<Address>> {
        self.inner.addresses_with_prefix(prefix)
    }
    fn flush(&self) -> StoreResult<()> {
        self.inner.flush()
    }
    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        self.inner.get_ref(name)
    }
    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        self.inner.compare_and_swap_ref(name, expected, new)
    }
    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        self.inner.list_refs()
    }
    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        self.inner.collect_garbage(live)
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Commit on a line: (line, first key, key count, value, merge the other line).
    Commit(usize, u32, u32, u8, bool),
    /// Transfer a commit (by index into the commits made so far) between stores.
    Transfer {
        from: usize,
        to: usize,
        commit: usize,
    },
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..2, 0u32..3_000, 1u32..400, 0u8..4, any::<bool>())
            .prop_map(|(line, from, count, value, merge)| Op::Commit(line, from, count, value, merge)),
        3 => (0usize..3, 0usize..3, any::<prop::sample::Index>())
            .prop_map(|(from, to, commit)| Op::Transfer { from, to, commit: commit.index(1 << 20) }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// Three stores; commits are made in the first, and transfers copy any commit any store
    /// holds to any other. After each transfer the receiver holds every chunk the commit
    /// reaches, and the transfer sent exactly the chunks it lacked.
    #[test]
    fn any_transfer_sequence_leaves_receivers_complete(ops in prop::collection::vec(op_strategy(), 1..14)) {
        let mut history = History::new();
        let others = [MemoryStore::new(), MemoryStore::new()];
        let mut held_by: [Vec<Address>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for op in ops {
            match op {
                Op::Commit(line, from, count, value, merge) => {
                    history.commit(line, from, count, value, merge);
                    held_by[0].push(*history.commits.last().unwrap());
                }
                Op::Transfer { from, to, commit } => {
                    if from == to || held_by[from].is_empty() {
                        continue;
                    }
                    let root = held_by[from][commit % held_by[from].len()];
                    let stores: [&MemoryStore; 3] = [&history.chunks, &others[0], &others[1]];
                    let before = held(stores[to]);
                    let wanted = reachable_chunks(stores[from], &[root]).unwrap();
                    let lacked = wanted.iter().filter(|a| !before.contains(a)).count();
                    let report = copy_reachable(stores[from], stores[to], &[root]).unwrap();
                    prop_assert_eq!(report.chunks as usize, lacked);
                    let now = reachable_chunks(stores[to], &[root]).unwrap();
                    prop_assert_eq!(now, wanted);
                    held_by[to].push(root);
                }
            }
        }
        for store in &others {
            assert_closed(store);
        }
    }

    /// A transfer stopped after any number of written chunks leaves the receiver closed:
    /// every chunk it holds, it holds with everything below it. (The second transfer sends
    /// 8 to 12 chunks, so every stopping point is visited.)
    #[test]
    fn a_transfer_stopped_half_way_leaves_no_chunk_without_its_children(
        stop_after in 0usize..14,
        first in 1u32..2_000,
    ) {
        let mut history = History::new();
        history.commit(0, 0, first, 1, false);
        history.commit(0, first / 2, 50, 2, false);
        history.commit(1, 7, 300, 3, true);
        let receiver = Stopping { inner: MemoryStore::new(), left: AtomicUsize::new(usize::MAX) };
        copy_reachable(&history.chunks, &receiver, &history.commits[..1]).unwrap();
        receiver.left.store(stop_after, Ordering::SeqCst);
        let _ = copy_reachable(&history.chunks, &receiver, &history.commits);
        assert_closed(&receiver.inner);
        // And a transfer run again completes it.
        receiver.left.store(usize::MAX, Ordering::SeqCst);
        copy_reachable(&history.chunks, &receiver, &history.commits).unwrap();
        prop_assert_eq!(
            reachable_chunks(&receiver.inner, &history.commits).unwrap(),
            reachable_chunks(&history.chunks, &history.commits).unwrap()
        );
    }
}
