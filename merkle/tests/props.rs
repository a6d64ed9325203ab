//! Property tests of the prolly tree's invariants: history independence (any order,
//! batching or detour reaching a set gives the bulk-built root), diff correctness, node
//! size bounds, scans against a model, and corruption detection. Adversarial keys (long
//! shared prefixes, very long keys, entries near the node size limits) are in the mix.
//!
//! Case counts: `RNT_PROPTEST_CASES` (default 48 per property) scales them all.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use common::{bulk, contents, memory_nodes, walk, Model};
use proptest::prelude::*;
use proptest::sample::SizeRange;
use rnt_merkle::chunker::{NODE_BYTES_MIN, NODE_SPLIT_BYTES_MAX};
use rnt_merkle::{DiffEntry, NodeStore, Tree, KEY_BYTES_MAX};
use rnt_store::ChunkStore;
use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

fn cases(default: u32) -> u32 {
    std::env::var("RNT_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Keys of several shapes: short random, long shared prefixes, numeric-like, and huge.
fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => proptest::collection::vec(any::<u8>(), 0..24),
        3 => (0u32..50_000).prop_map(|i| format!("{:0>200}{i}", "p").into_bytes()),
        3 => (0u32..1_000_000).prop_map(|i| i.to_be_bytes().to_vec()),
        1 => (1usize..=KEY_BYTES_MAX, any::<u8>()).prop_map(|(n, b)| {
            let mut k = vec![b'L'; n];
            k[n - 1] = b;
            k
        }),
    ]
}

/// Values mostly small, sometimes large enough to make nodes hold few entries.
fn value_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..12),
        2 => (0usize..2_000).prop_map(|n| vec![0xAB; n]),
        1 => (3_000usize..=4_096).prop_map(|n| vec![0xCD; n]),
    ]
}

fn model_strategy(size: impl Into<SizeRange>) -> impl Strategy<Value = Model> {
    proptest::collection::btree_map(key_strategy(), value_strategy(), size)
}

/// Applies `ops` in batches of the given sizes (each batch sorted, last write wins).
fn apply_in_batches(
    nodes: &NodeStore,
    mut tree: Tree,
    ops: &[(Vec<u8>, Option<Vec<u8>>)],
    cuts: &[usize],
) -> Tree {
    let mut start = 0;
    let mut cut = cuts.iter().cycle();
    while start < ops.len() {
        let len = (*cut.next().unwrap_or(&1)).max(1);
        let end = (start + len).min(ops.len());
        let batch: std::collections::BTreeMap<_, _> = ops[start..end].iter().cloned().collect();
        tree = tree.edit(nodes, batch).expect("edit");
        start = end;
    }
    tree
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    /// Starting from any set, reaching `target` by shuffled puts and deletes, in random
    /// batches, with detours (keys inserted then deleted, values written wrong then
    /// right), gives the root a bulk build of `target` gives.
    #[test]
    fn any_history_reaching_a_set_gives_one_root(
        start in model_strategy(0..400),
        target in model_strategy(0..900),
        detours in model_strategy(0..100),
        seed in any::<u64>(),
        cuts in proptest::collection::vec(1usize..300, 1..6),
    ) {
        let (nodes, _) = memory_nodes();
        let expected = bulk(&nodes, &target);
        let mut rng = seed;
        let mut shuffle = |ops: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>| {
            for i in (1..ops.len()).rev() {
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
                ops.swap(i, (rng % (i as u64 + 1)) as usize);
            }
        };
        // Phase 1: detour keys and wrong values go in, in random order.
        let mut first: Vec<_> = detours.iter()
            .filter(|(k, _)| !target.contains_key(*k))
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        first.extend(target.keys().take(target.len() / 3).map(|k| (k.clone(), Some(b"wrong".to_vec()))));
        shuffle(&mut first);
        // Phase 2: the target set's entries, and deletes of everything else.
        let mut second: Vec<_> = target.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect();
        second.extend(start.keys().chain(detours.keys())
            .filter(|k| !target.contains_key(*k))
            .map(|k| (k.clone(), None)));
        shuffle(&mut second);
        let tree = bulk(&nodes, &start);
        let tree = apply_in_batches(&nodes, tree, &first, &cuts);
        let tree = apply_in_batches(&nodes, tree, &second, &cuts);
        prop_assert_eq!(contents(&nodes, &tree), target);
        prop_assert_eq!(tree, expected);
    }

    /// `diff(a, b)` is exactly the difference of the two maps, in key order, and applying
    /// it to `a` gives `b`'s root.
    #[test]
    fn diff_is_the_map_difference_and_applies(
        base in model_strategy(0..1500),
        changes in proptest::collection::vec((key_strategy(), proptest::option::of(value_strategy())), 0..60),
    ) {
        let (nodes, _) = memory_nodes();
        let a_model = base;
        let mut b_model = a_model.clone();
        for (k, v) in &changes {
            match v { Some(v) => { b_model.insert(k.clone(), v.clone()); } None => { b_model.remove(k); } }
        }
        let a = bulk(&nodes, &a_model);
        let b = bulk(&nodes, &b_model);
        let got: Vec<DiffEntry> = a.diff(&nodes, &b).unwrap().map(Result::unwrap).collect();
        let keys: BTreeSet<&Vec<u8>> = a_model.keys().chain(b_model.keys()).collect();
        let want: Vec<DiffEntry> = keys.into_iter().filter_map(|k| match (a_model.get(k), b_model.get(k)) {
            (Some(x), None) => Some(DiffEntry::Removed { key: k.clone(), value: x.clone() }),
            (None, Some(y)) => Some(DiffEntry::Added { key: k.clone(), value: y.clone() }),
            (Some(x), Some(y)) if x != y => Some(DiffEntry::Changed { key: k.clone(), old: x.clone(), new: y.clone() }),
            _ => None,
        }).collect();
        prop_assert_eq!(&got, &want);
        let applied = a.edit(&nodes, got.iter().map(DiffEntry::to_edit)).unwrap();
        prop_assert_eq!(applied, b);
        let back: Vec<DiffEntry> = b.diff(&nodes, &a).unwrap().map(Result::unwrap).collect();
        prop_assert_eq!(back.len(), want.len());
    }

    /// `edit_reporting` gives the tree `edit` gives, and flags exactly the edits that
    /// change the map: puts of absent keys or of other values, deletes of present keys —
    /// over trees of one leaf and of several levels, with no-ops (equal puts, deletes of
    /// absent keys) in the mix.
    #[test]
    fn reported_edits_are_the_ones_that_change_the_map(
        base in model_strategy(0..1500),
        fresh in proptest::collection::vec((key_strategy(), proptest::option::of(value_strategy())), 0..60),
        again in proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 0..30),
    ) {
        let (nodes, _) = memory_nodes();
        let tree = bulk(&nodes, &base);
        let mut edits: std::collections::BTreeMap<Vec<u8>, Option<Vec<u8>>> =
            fresh.into_iter().collect();
        // Edits of present keys: deletes, and puts of the value the key already holds.
        if !base.is_empty() {
            let keys: Vec<&Vec<u8>> = base.keys().collect();
            for (index, delete) in again {
                let key = keys[index.index(keys.len())];
                let value = (!delete).then(|| base[key].clone());
                edits.insert(key.clone(), value);
            }
        }
        let edits: Vec<(Vec<u8>, Option<Vec<u8>>)> = edits.into_iter().collect();
        let want: Vec<bool> = edits
            .iter()
            .map(|(key, value)| match value {
                Some(value) => base.get(key) != Some(value),
                None => base.contains_key(key),
            })
            .collect();
        let (reported, changed) = tree.edit_reporting(&nodes, &edits).unwrap();
        prop_assert_eq!(reported, tree.edit(&nodes, edits).unwrap());
        prop_assert_eq!(changed, want);
    }

    /// Every node respects the stated bounds: measured size at least NODE_BYTES_MIN unless
    /// it is its level's last node; below NODE_SPLIT_BYTES_MAX before its last entry;
    /// internal nodes hold at least two entries.
    #[test]
    fn nodes_stay_within_bounds(model in model_strategy(0..3000)) {
        let (nodes, _) = memory_nodes();
        let tree = bulk(&nodes, &model);
        for facts in walk(&nodes, &tree) {
            if !facts.last_at_level {
                prop_assert!(facts.measured_bytes >= NODE_BYTES_MIN, "{facts:?}");
            }
            // Below the split size before its last entry (§6.5) — except an internal node's
            // first two entries (it never splits with one), and at a level's end the lone
            // trailing entry that joined the node before it (§6.6).
            let (last, before_last) = facts.last_entries;
            let before = facts.measured_bytes - last;
            let merged = facts.level > 0 && facts.last_at_level;
            prop_assert!(
                before < NODE_SPLIT_BYTES_MAX
                    || (facts.level > 0 && facts.entries <= 2)
                    || (merged && (facts.entries <= 3 || before - before_last < NODE_SPLIT_BYTES_MAX)),
                "{facts:?}"
            );
            if facts.level > 0 {
                prop_assert!(facts.entries >= 2, "{facts:?}");
            }
        }
    }

    /// Range scans and rank agree with the model for arbitrary bounds.
    #[test]
    fn ranges_agree_with_the_model(
        model in model_strategy(0..1500),
        lo in key_strategy(),
        hi in key_strategy(),
        lo_inclusive in any::<bool>(),
        hi_inclusive in any::<bool>(),
    ) {
        let (nodes, _) = memory_nodes();
        let tree = bulk(&nodes, &model);
        let lo_bound = if lo_inclusive { Bound::Included(lo.as_slice()) } else { Bound::Excluded(lo.as_slice()) };
        let hi_bound = if hi_inclusive { Bound::Included(hi.as_slice()) } else { Bound::Excluded(hi.as_slice()) };
        let got: Vec<_> = tree.range(&nodes, lo_bound, hi_bound).map(Result::unwrap).collect();
        let want: Vec<_> = model.iter()
            .filter(|(k, _)| RangeBounds::<&[u8]>::contains(&(lo_bound, hi_bound), &k.as_slice()) )
            .map(|(k, v)| (k.clone(), v.clone())).collect();
        prop_assert_eq!(got, want);
        let rank = model.keys().filter(|k| k.as_slice() < lo.as_slice()).count() as u64;
        prop_assert_eq!(tree.rank(&nodes, &lo).unwrap(), rank);
        for (k, v) in model.iter().take(20) {
            prop_assert_eq!(tree.get(&nodes, k).unwrap(), Some(v.clone()));
        }
    }

    /// A backward prefix scan yields the forward one's entries in reverse, for prefixes
    /// of present keys, absent ones and the empty prefix.
    #[test]
    fn backward_prefix_scans_reverse_the_forward_ones(
        model in model_strategy(0..1500),
        pick in any::<u64>(),
        cut in 0usize..6,
        other in key_strategy(),
    ) {
        let (nodes, _) = memory_nodes();
        let tree = bulk(&nodes, &model);
        let keys: Vec<&Vec<u8>> = model.keys().collect();
        let mut prefixes = vec![Vec::new(), other];
        if !keys.is_empty() {
            let key = keys[(pick % keys.len() as u64) as usize];
            prefixes.push(key[..key.len().min(cut)].to_vec());
            prefixes.push(key.clone());
        }
        for prefix in prefixes {
            let forward: Vec<_> = tree.scan_prefix(&nodes, &prefix).map(Result::unwrap).collect();
            let mut backward = Vec::new();
            let mut cursor = tree.prefix_cursor_back(&nodes, &prefix).unwrap();
            while let Some((k, v)) = cursor.entry() {
                backward.push((k.to_vec(), v.to_vec()));
                cursor.advance().unwrap();
            }
            backward.reverse();
            prop_assert_eq!(backward, forward);
        }
    }

    /// A flipped byte in any stored node is reported as corruption by a fresh reader,
    /// never returned as data.
    #[test]
    fn flipped_bytes_are_corruption(model in model_strategy(1..800), pick in any::<u64>(), bit in 0u8..8) {
        let (nodes, chunks) = memory_nodes();
        let tree = bulk(&nodes, &model);
        let all = walk(&nodes, &tree);
        let victim = &all[(pick % all.len() as u64) as usize];
        let mut bytes = chunks.get(&victim.address).unwrap().to_vec();
        let at = (pick / 7 % bytes.len() as u64) as usize;
        bytes[at] ^= 1 << bit;
        prop_assert!(chunks.overwrite_raw_for_test(&victim.address, &bytes));
        let fresh = NodeStore::new(Arc::new(chunks.clone()));
        let errors: Vec<_> = tree.entries(&fresh).filter_map(Result::err).collect();
        prop_assert_eq!(errors.len(), 1);
        prop_assert!(errors[0].is_corruption(), "{}", errors[0]);
    }

    /// Tall trees (large values make small nodes, so several internal levels) edited at
    /// their tail, where a level's last node may absorb a lone entry: edits still give the
    /// bulk-built root.
    #[test]
    fn tail_edits_on_tall_trees_match_the_bulk_build(
        n in 1000u32..3000,
        value_len in 700usize..1500,
        edits in proptest::collection::vec((0u32..3000, any::<bool>()), 1..40),
        batches in 1usize..4,
    ) {
        let (nodes, _) = memory_nodes();
        let key = |i: u32| format!("k{i:06}").into_bytes();
        let mut model: Model = (0..n).map(|i| (key(i), vec![(i % 251) as u8; value_len])).collect();
        let mut tree = bulk(&nodes, &model);
        prop_assume!(tree.depth(&nodes).unwrap() >= 3);
        let per_batch = edits.len().div_ceil(batches);
        for chunk in edits.chunks(per_batch) {
            let mut batch = std::collections::BTreeMap::new();
            for &(offset, insert) in chunk {
                // Aim at the last few hundred keys and just past the end.
                let i = n.saturating_sub(offset % 400) + offset % 3;
                if insert {
                    batch.insert(key(i), Some(vec![7u8; value_len / 2]));
                } else {
                    batch.insert(key(i), None);
                }
            }
            for (k, v) in &batch {
                match v { Some(v) => { model.insert(k.clone(), v.clone()); } None => { model.remove(k); } }
            }
            tree = tree.edit(&nodes, batch).unwrap();
            prop_assert_eq!(tree, bulk(&nodes, &model));
        }
    }

    /// Updates that keep each entry's size (a value rewritten at its length, or a key
    /// replaced by another of its length in the same place, as an update of a tuple's
    /// last column does), in large trees: the edited leaves re-chunk by runs once they
    /// are back in step with the old chunking, and still give the bulk-built root.
    #[test]
    fn size_keeping_updates_match_the_bulk_build(
        n in 2_000u32..20_000,
        updates in proptest::collection::vec((any::<u32>(), any::<u8>(), any::<bool>()), 1..120),
        batches in 1usize..4,
    ) {
        let (nodes, _) = memory_nodes();
        // Keys `id ‖ amount`: replacing the amount keeps the key's place and size.
        let key = |id: u32, amount: u8| {
            let mut k = id.to_be_bytes().to_vec();
            k.push(amount);
            k
        };
        let mut amounts: Vec<u8> = (0..n).map(|i| (i % 200) as u8).collect();
        let mut model: Model = (0..n).map(|i| (key(i, amounts[i as usize]), vec![(i % 7) as u8; 6])).collect();
        let mut tree = bulk(&nodes, &model);
        let per_batch = updates.len().div_ceil(batches);
        for chunk in updates.chunks(per_batch) {
            let mut batch = std::collections::BTreeMap::new();
            for &(pick, to, rekey) in chunk {
                let id = pick % n;
                let old = key(id, amounts[id as usize]);
                if batch.contains_key(&old) {
                    continue;
                }
                if rekey && to != amounts[id as usize] && !batch.contains_key(&key(id, to)) {
                    batch.insert(old, None);
                    batch.insert(key(id, to), Some(vec![to % 7; 6]));
                    amounts[id as usize] = to;
                } else {
                    batch.insert(old, Some(vec![to; 6]));
                }
            }
            for (k, v) in &batch {
                match v { Some(v) => { model.insert(k.clone(), v.clone()); } None => { model.remove(k); } }
            }
            tree = tree.edit(&nodes, batch).unwrap();
            prop_assert_eq!(contents(&nodes, &tree), model.clone());
            prop_assert_eq!(tree, bulk(&nodes, &model));
        }
    }
}
