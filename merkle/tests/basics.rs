//! Guards the tree operations against a BTreeMap model on fixed cases: lookups, scans,
//! rank, edits, empty trees and input validation.

mod common;

use common::{bulk, contents, memory_nodes, Model};
use rnt_merkle::{MerkleError, Tree, KEY_BYTES_MAX};
use std::ops::Bound;

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

fn sample(n: u32) -> Model {
    (0..n).map(|i| (key(i), i.to_le_bytes().to_vec())).collect()
}

#[test]
fn empty_tree_is_one_leaf_with_no_entries() {
    let (nodes, _) = memory_nodes();
    let empty = Tree::empty(&nodes).unwrap();
    assert_eq!(
        Tree::build(&nodes, Vec::<(Vec<u8>, Vec<u8>)>::new()).unwrap(),
        empty
    );
    assert_eq!(empty.count(&nodes).unwrap(), 0);
    assert_eq!(empty.get(&nodes, b"x").unwrap(), None);
    assert_eq!(empty.entries(&nodes).count(), 0);
    assert_eq!(empty.depth(&nodes).unwrap(), 1);
}

#[test]
fn lookups_and_counts_match_the_model() {
    let (nodes, _) = memory_nodes();
    let model = sample(20_000);
    let tree = bulk(&nodes, &model);
    assert!(
        tree.depth(&nodes).unwrap() >= 2,
        "20k entries should need internal nodes"
    );
    assert_eq!(tree.count(&nodes).unwrap(), 20_000);
    for i in (0..20_000).step_by(97) {
        assert_eq!(
            tree.get(&nodes, &key(i)).unwrap(),
            Some(i.to_le_bytes().to_vec())
        );
        assert_eq!(tree.rank(&nodes, &key(i)).unwrap(), u64::from(i));
    }
    assert_eq!(tree.get(&nodes, b"key-").unwrap(), None);
    assert_eq!(tree.get(&nodes, b"zzz").unwrap(), None);
    assert_eq!(tree.rank(&nodes, b"zzz").unwrap(), 20_000);
    assert_eq!(tree.rank(&nodes, b"").unwrap(), 0);
    assert_eq!(contents(&nodes, &tree), model);
}

#[test]
fn ranges_and_prefixes_match_the_model() {
    let (nodes, _) = memory_nodes();
    let model = sample(5_000);
    let tree = bulk(&nodes, &model);
    let (lo, hi) = (key(1234), key(3210));
    let got: Vec<_> = tree
        .range(&nodes, Bound::Included(&lo), Bound::Excluded(&hi))
        .map(Result::unwrap)
        .collect();
    let want: Vec<_> = model
        .range(lo.clone()..hi.clone())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want);
    let got: Vec<_> = tree
        .range(&nodes, Bound::Excluded(&lo), Bound::Included(&hi))
        .map(Result::unwrap)
        .collect();
    let want: Vec<_> = model
        .range((Bound::Excluded(lo), Bound::Included(hi)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want);
    let prefix = b"key-0000012";
    let got: Vec<_> = tree
        .scan_prefix(&nodes, prefix)
        .map(|e| e.unwrap().0)
        .collect();
    let want: Vec<_> = model
        .keys()
        .filter(|k| k.starts_with(prefix))
        .cloned()
        .collect();
    assert_eq!(got.len(), 10);
    assert_eq!(got, want);
    assert_eq!(tree.scan_prefix(&nodes, b"nope").count(), 0);
}

#[test]
fn edits_match_the_model_and_the_bulk_build() {
    let (nodes, _) = memory_nodes();
    let mut model = sample(10_000);
    let mut tree = bulk(&nodes, &model);
    let mut edits = Vec::new();
    for i in (0..12_000).step_by(7) {
        let k = key(i);
        if i % 2 == 0 {
            model.remove(&k);
            edits.push((k, None));
        } else {
            model.insert(k.clone(), b"new".to_vec());
            edits.push((k, Some(b"new".to_vec())));
        }
    }
    tree = tree.edit(&nodes, edits).unwrap();
    assert_eq!(contents(&nodes, &tree), model);
    assert_eq!(tree, bulk(&nodes, &model));
    assert_eq!(tree.count(&nodes).unwrap(), model.len() as u64);
}

#[test]
fn deleting_everything_gives_the_empty_tree() {
    let (nodes, _) = memory_nodes();
    let model = sample(3_000);
    let tree = bulk(&nodes, &model);
    let emptied = tree
        .edit(&nodes, model.keys().map(|k| (k.clone(), None)))
        .unwrap();
    assert_eq!(emptied, Tree::empty(&nodes).unwrap());
}

#[test]
fn bad_input_is_refused() {
    let (nodes, _) = memory_nodes();
    let unsorted = vec![(b"b".to_vec(), vec![]), (b"a".to_vec(), vec![])];
    assert!(matches!(
        Tree::build(&nodes, unsorted),
        Err(MerkleError::Unsorted { position: 1 })
    ));
    let duplicate = vec![(b"a".to_vec(), vec![]), (b"a".to_vec(), vec![])];
    assert!(matches!(
        Tree::build(&nodes, duplicate),
        Err(MerkleError::Unsorted { .. })
    ));
    let long = vec![(vec![7u8; KEY_BYTES_MAX + 1], vec![])];
    assert!(matches!(
        Tree::build(&nodes, long),
        Err(MerkleError::KeyTooLong { .. })
    ));
    let tree = Tree::empty(&nodes).unwrap();
    let unsorted_edits = vec![(b"b".to_vec(), None), (b"a".to_vec(), None)];
    assert!(matches!(
        tree.edit(&nodes, unsorted_edits),
        Err(MerkleError::Unsorted { .. })
    ));
}

/// When an edit leaves the last node of an internal level with a single entry, that entry
/// joins the node before it — as the bulk build does. Searches for trees whose last
/// level-1 node has exactly two children, then deletes the last child's keys.
#[test]
fn lone_trailing_internal_entry_joins_its_neighbour() {
    let (nodes, _) = memory_nodes();
    let value = vec![9u8; 900];
    let mut found = 0;
    for n in (600u32..2600).step_by(7) {
        let model: Model = (0..n).map(|i| (key(i), value.clone())).collect();
        let tree = bulk(&nodes, &model);
        let facts = common::walk(&nodes, &tree);
        let Some(last_level1) = facts.iter().rfind(|f| f.level == 1 && f.last_at_level) else {
            continue;
        };
        let level1_nodes = facts.iter().filter(|f| f.level == 1).count();
        if last_level1.entries != 2 || level1_nodes < 2 {
            continue;
        }
        found += 1;
        // The keys of the very last leaf.
        let last_leaf = facts.iter().rfind(|f| f.level == 0).unwrap();
        let doomed: Vec<Vec<u8>> = model
            .keys()
            .rev()
            .take(last_leaf.entries)
            .cloned()
            .collect();
        let mut after = model.clone();
        for k in &doomed {
            after.remove(k);
        }
        let edited = tree
            .edit(&nodes, doomed.into_iter().rev().map(|k| (k, None)))
            .unwrap();
        assert_eq!(edited, bulk(&nodes, &after), "n = {n}");
        if found >= 5 {
            break;
        }
    }
    assert!(
        found > 0,
        "no tree with a two-entry last internal node in the sweep"
    );
}

/// Edits and batch lookups large enough to read their leaves ahead on a second thread
/// (`prefetch`): the same tree as a bulk build of the edited model, the same values as one
/// `get` per key, and the same work counted (a prefetch counts no visit).
#[test]
fn large_edits_and_batch_lookups_read_ahead_without_changing_results_or_counts() {
    let model = sample(60_000);
    // Every seventh key deleted, every eleventh changed, and new keys between: ~19k edits,
    // spread over nearly every leaf.
    let mut edits: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    let mut edited = model.clone();
    for i in 0..60_000u32 {
        if i % 7 == 0 {
            edits.push((key(i), None));
            edited.remove(&key(i));
        } else if i % 11 == 0 {
            edits.push((key(i), Some(b"changed".to_vec())));
            edited.insert(key(i), b"changed".to_vec());
        }
        if i % 13 == 0 {
            let new = format!("key-{i:08}+").into_bytes();
            edits.push((new.clone(), Some(b"new".to_vec())));
            edited.insert(new, b"new".to_vec());
        }
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    let keys: Vec<Vec<u8>> = edits.iter().map(|(k, _)| k.clone()).collect();
    let (nodes, _) = memory_nodes();
    let tree = bulk(&nodes, &model);
    nodes.clear_cache();
    let before = nodes.counters();
    let values = tree.get_many(&nodes, &keys).unwrap();
    let batch_reads = nodes.counters() - before;
    let one_by_one: Vec<Option<Vec<u8>>> = keys.iter().map(|k| model.get(k).cloned()).collect();
    assert_eq!(values, one_by_one);
    let before = nodes.counters();
    for k in &keys {
        tree.get(&nodes, k).unwrap();
    }
    let single_reads = nodes.counters() - before;
    assert_eq!(batch_reads.nodes_read, single_reads.nodes_read);
    assert_eq!(batch_reads.entries_read, single_reads.entries_read);
    nodes.clear_cache();
    let edited_tree = tree.edit(&nodes, edits).unwrap();
    assert_eq!(edited_tree, bulk(&nodes, &edited));
    assert_eq!(contents(&nodes, &edited_tree), edited);
    // A diff read ahead beside it gives the same differences.
    nodes.clear_cache();
    let done = std::sync::atomic::AtomicBool::new(false);
    let differences = std::thread::scope(|scope| {
        scope.spawn(|| tree.read_ahead_diff(&nodes, &edited_tree, &done));
        let count = tree.diff(&nodes, &edited_tree).unwrap().count();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        count
    });
    assert_eq!(differences, keys.len());
}

/// Work through a store with its own counters shares the cache but counts only when added
/// back: a commit's stats do not depend on which thread did work that was thrown away.
#[test]
fn own_counters_count_only_what_is_added_back() {
    let (nodes, _) = memory_nodes();
    let tree = bulk(&nodes, &sample(2000));
    let before = nodes.counters();
    let own = nodes.with_own_counters();
    assert_eq!(own.counters(), rnt_merkle::Counters::default());
    let edited = tree
        .edit(&own, vec![(key(5), Some(b"changed".to_vec()))])
        .unwrap();
    assert_eq!(nodes.counters(), before, "the shared store counted nothing");
    let work = own.counters();
    assert!(work.nodes_read > 0 && work.nodes_written > 0, "{work:?}");
    nodes.add_counters(work);
    assert_eq!(nodes.counters() - before, work);
    // The edit's nodes are in the shared store's cache and chunks.
    assert_eq!(
        edited.get(&nodes, &key(5)).unwrap(),
        Some(b"changed".to_vec())
    );
}
