//! Prolly tree benchmark: bulk build (memory and sled), warm point lookup, 100-key batch
//! edits and diffs against a 1M-entry tree.
//!
//! Run with `cargo bench -p rnt-merkle`. `RNT_BENCH_KEYS=100000 cargo bench -p rnt-merkle`
//! runs on fewer keys for a quick check. Before the criterion groups run, the bench prints
//! the facts that are not timings (depth, node sizes, nodes written per edit, nodes read per
//! diff) and checks them against the targets:
//!
//! - a batch edit of `B` keys writes at most `B × depth` nodes;
//! - a diff of two trees differing in `B` keys reads at most `2 × B × depth` nodes.
//!
//! Data: `N` distinct random 24-byte keys from a seeded `SmallRng` (so every run builds the
//! same trees), each with an 8-byte value. An edit batch holds 100 distinct keys, each an
//! update of an existing key, a delete of an existing key or an insert of a new random key
//! (one third each on average), and is applied to the untouched base tree.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

use criterion::{black_box, BatchSize, Criterion, SamplingMode, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rnt_merkle::{Edit, NodeStore, Tree};
use rnt_store::{MemoryStore, SledStore};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEYS_DEFAULT: usize = 1_000_000;
const KEY_BYTES: usize = 24;
const VALUE_BYTES: usize = 8;
/// Keys per edit batch.
const EDIT_KEYS: usize = 100;
/// Edit batches (and diffs) averaged over for the node counts, and cycled through by the
/// timed edit and diff benches.
const EDIT_BATCHES: usize = 20;
/// Random existing keys cycled through by the lookup benches: a small pool (its leaves
/// stay in the CPU caches, about 14 MB at 1M keys) and a large one (most leaves of the
/// tree, so most lookups miss the CPU caches).
const LOOKUP_POOLS: [usize; 2] = [4096, 65536];

type Key = [u8; KEY_BYTES];
type Value = [u8; VALUE_BYTES];

/// Everything the benches share: the data, the base tree in memory, the edit batches and
/// the edited trees.
struct Context {
    entries: Vec<(Key, Value)>,
    nodes: NodeStore,
    base: Tree,
    depth: u32,
    batches: Vec<Vec<Edit>>,
    edited: Vec<Tree>,
    /// One pool of random existing keys per entry of [`LOOKUP_POOLS`].
    lookups: Vec<Vec<Key>>,
}

fn key_count() -> usize {
    match std::env::var("RNT_BENCH_KEYS") {
        Ok(text) => text
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("RNT_BENCH_KEYS={text} is not a number")),
        Err(_) => KEYS_DEFAULT,
    }
}

/// `n` distinct random keys in increasing order, each with its index as value.
fn sorted_entries(n: usize, rng: &mut SmallRng) -> Vec<(Key, Value)> {
    let mut keys: Vec<Key> = (0..n).map(|_| rng.gen()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .enumerate()
        .map(|(i, key)| (key, (i as u64).to_le_bytes()))
        .collect()
}

fn memory_nodes() -> NodeStore {
    NodeStore::new(Arc::new(MemoryStore::new()))
}

fn build(nodes: &NodeStore, entries: &[(Key, Value)]) -> Tree {
    Tree::build(nodes, entries.iter().map(|(k, v)| (k, v))).expect("bulk build")
}

/// A batch of `EDIT_KEYS` distinct edits in key order: updates, deletes and inserts.
fn edit_batch(entries: &[(Key, Value)], rng: &mut SmallRng) -> Vec<Edit> {
    let mut batch: Vec<Edit> = Vec::with_capacity(EDIT_KEYS);
    while batch.len() < EDIT_KEYS {
        let edit = match rng.gen_range(0..3) {
            0 => {
                let (key, value) = entries[rng.gen_range(0..entries.len())];
                let new = (u64::from_le_bytes(value) ^ 0xdead_beef).to_le_bytes();
                (key.to_vec(), Some(new.to_vec()))
            }
            1 => (entries[rng.gen_range(0..entries.len())].0.to_vec(), None),
            _ => {
                let key: Key = rng.gen();
                if entries.binary_search_by(|(k, _)| k.cmp(&key)).is_ok() {
                    continue;
                }
                (key.to_vec(), Some(rng.gen::<Value>().to_vec()))
            }
        };
        if batch.iter().all(|(k, _)| *k != edit.0) {
            batch.push(edit);
        }
    }
    batch.sort_by(|a, b| a.0.cmp(&b.0));
    batch
}

/// Runs a diff to the end, failing on any error, and returns how many entries it yielded.
fn count_diff(nodes: &NodeStore, from: &Tree, to: &Tree) -> usize {
    let mut count = 0;
    for entry in from.diff(nodes, to).expect("diff") {
        entry.expect("diff entry");
        count += 1;
    }
    count
}

fn percentile(sorted: &[usize], p: f64) -> usize {
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn median(sorted: &[usize]) -> usize {
    percentile(sorted, 0.5)
}

fn pass(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

/// Prints the node size distribution of `tree`, walking it level by level.
fn print_node_sizes(nodes: &NodeStore, tree: &Tree) {
    // (level, encoded bytes, entries) of every node.
    let mut facts: Vec<(u8, usize, usize)> = Vec::new();
    let mut level_nodes = vec![tree.root()];
    while !level_nodes.is_empty() {
        let mut next = Vec::new();
        for address in &level_nodes {
            let node = nodes.read(address).expect("read node");
            if !node.is_leaf() {
                next.extend((0..node.len()).map(|i| node.child(i).address));
            }
            facts.push((node.level(), node.bytes().len(), node.len()));
        }
        level_nodes = next;
    }
    let mut all: Vec<usize> = facts.iter().map(|f| f.1).collect();
    all.sort_unstable();
    println!();
    println!("Node sizes (encoded bytes), {} nodes in all", all.len());
    println!();
    println!("| level | nodes | entries/node (median) | min B | median B | p99 B | max B |");
    println!("|------:|------:|----------------------:|------:|---------:|------:|------:|");
    let top = facts.iter().map(|f| f.0).max().unwrap_or(0);
    for level in (0..=top).rev() {
        let mut sizes: Vec<usize> = facts.iter().filter(|f| f.0 == level).map(|f| f.1).collect();
        let mut fanout: Vec<usize> = facts.iter().filter(|f| f.0 == level).map(|f| f.2).collect();
        sizes.sort_unstable();
        fanout.sort_unstable();
        println!(
            "| {level} | {} | {} | {} | {} | {} | {} |",
            sizes.len(),
            median(&fanout),
            sizes[0],
            median(&sizes),
            percentile(&sizes, 0.99),
            sizes[sizes.len() - 1]
        );
    }
    println!(
        "| all | {} | | {} | {} | {} | {} |",
        all.len(),
        all[0],
        median(&all),
        percentile(&all, 0.99),
        all[all.len() - 1]
    );
}

impl Context {
    fn new() -> Context {
        let n = key_count();
        let mut rng = SmallRng::seed_from_u64(0x726e_745f_6265_6e63);
        let started = Instant::now();
        let entries = sorted_entries(n, &mut rng);
        let generated = started.elapsed();

        let nodes = memory_nodes();
        let started = Instant::now();
        let base = build(&nodes, &entries);
        let built = started.elapsed();
        let depth = base.depth(&nodes).expect("depth");
        assert_eq!(base.count(&nodes).expect("count"), entries.len() as u64);

        let batches: Vec<Vec<Edit>> = (0..EDIT_BATCHES)
            .map(|_| edit_batch(&entries, &mut rng))
            .collect();
        let mut edited = Vec::new();
        let mut written = Vec::new();
        let mut edit_times = Vec::new();
        for batch in &batches {
            let before = nodes.counters();
            let started = Instant::now();
            let tree = base.edit(&nodes, batch.clone()).expect("edit");
            edit_times.push(started.elapsed());
            written.push((nodes.counters() - before).nodes_written as usize);
            edited.push(tree);
        }
        let mut read = Vec::new();
        let mut diff_entries = Vec::new();
        for tree in &edited {
            let before = nodes.counters();
            let count = count_diff(&nodes, &base, tree);
            read.push((nodes.counters() - before).nodes_read as usize);
            diff_entries.push(count);
        }
        // The edited trees are the trees a bulk build of the edited sets gives.
        {
            let check_nodes = memory_nodes();
            let mut model: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = entries
                .iter()
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect();
            for (key, value) in &batches[0] {
                match value {
                    Some(value) => model.insert(key.clone(), value.clone()),
                    None => model.remove(key),
                };
            }
            let rebuilt = Tree::build(&check_nodes, model.iter()).expect("rebuild");
            assert_eq!(
                rebuilt.root(),
                edited[0].root(),
                "edit differs from rebuild"
            );
        }

        let lookups: Vec<Vec<Key>> = LOOKUP_POOLS
            .iter()
            .map(|&pool| {
                (0..pool)
                    .map(|_| entries[rng.gen_range(0..entries.len())].0)
                    .collect()
            })
            .collect();

        let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
        let max = |v: &[usize]| v.iter().copied().max().unwrap_or(0);
        let min = |v: &[usize]| v.iter().copied().min().unwrap_or(0);
        let mean_time = |v: &[Duration]| v.iter().sum::<Duration>() / v.len() as u32;
        let edit_limit = EDIT_KEYS * depth as usize;
        let diff_limit = 2 * EDIT_KEYS * depth as usize;

        println!();
        println!("== rnt-merkle prolly bench: facts (not timings) ==");
        println!();
        println!("| fact | value |");
        println!("|------|------:|");
        println!("| entries | {} |", entries.len());
        println!("| key / value bytes | {KEY_BYTES} / {VALUE_BYTES} |");
        println!("| depth (levels, leaves included) | {depth} |");
        println!("| root | {} |", base.root().short_hex(16));
        println!("| data generation + sort (one run) | {generated:.2?} |");
        println!(
            "| bulk build into memory (one run, cold) | {built:.2?} ({:.2} M entries/s) |",
            entries.len() as f64 / built.as_secs_f64() / 1e6
        );
        println!("| edit batches averaged | {EDIT_BATCHES} × {EDIT_KEYS} keys |");
        println!(
            "| nodes written per edit: mean / min / max | {:.1} / {} / {} |",
            mean(&written),
            min(&written),
            max(&written)
        );
        println!(
            "| edit time (one run each, mean) | {:.2?} |",
            mean_time(&edit_times)
        );
        println!(
            "| nodes read per diff: mean / min / max | {:.1} / {} / {} |",
            mean(&read),
            min(&read),
            max(&read)
        );
        println!(
            "| diff entries per diff: min / max | {} / {} |",
            min(&diff_entries),
            max(&diff_entries)
        );
        print_node_sizes(&nodes, &base);
        println!();
        println!("Targets (node counts)");
        println!();
        println!("| target | limit | measured (worst of {EDIT_BATCHES}) | result |");
        println!("|--------|------:|------:|:------:|");
        println!(
            "| edit of {EDIT_KEYS} keys: nodes written ≤ {EDIT_KEYS} × depth | {edit_limit} | {} | {} |",
            max(&written),
            pass(max(&written) <= edit_limit)
        );
        println!(
            "| diff of {EDIT_KEYS} keys: nodes read ≤ 2 × {EDIT_KEYS} × depth | {diff_limit} | {} | {} |",
            max(&read),
            pass(max(&read) <= diff_limit)
        );
        println!();
        println!(
            "Timing targets (check against criterion below): build ≥ 2M entries/s in memory, \
             ≥ 1M entries/s into sled; warm point lookup < 1 µs."
        );
        println!();

        Context {
            entries,
            nodes,
            base,
            depth,
            batches,
            edited,
            lookups,
        }
    }
}

fn bench_build(c: &mut Criterion, ctx: &Context) {
    let mut group = c.benchmark_group("build");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(ctx.entries.len() as u64));
    group.bench_function("memory", |b| {
        b.iter_batched(
            memory_nodes,
            |nodes| {
                let tree = build(&nodes, &ctx.entries);
                (nodes, tree)
            },
            BatchSize::PerIteration,
        )
    });
    // Build and flush (the chunks are durable when the routine returns). Opening the store
    // and removing it afterwards are not timed.
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("sled", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().expect("tempdir");
                let store = SledStore::open(dir.path()).expect("open sled");
                (dir, store)
            },
            |(dir, store)| {
                let nodes = NodeStore::new(Arc::new(store.clone()));
                let tree = build(&nodes, &ctx.entries);
                rnt_store::ChunkStore::flush(&store).expect("flush");
                (tree, nodes, store, dir)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn bench_lookup(c: &mut Criterion, ctx: &Context) {
    let mut group = c.benchmark_group("lookup");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    for pool in &ctx.lookups {
        // Warm the node cache on every lookup path (it holds the whole tree anyway).
        for key in pool {
            assert!(ctx.base.get(&ctx.nodes, key).expect("get").is_some());
        }
        group.bench_function(format!("warm_hit_pool_{}", pool.len()), |b| {
            let mut i = 0;
            b.iter(|| {
                let key = &pool[i % pool.len()];
                i += 1;
                black_box(ctx.base.get(&ctx.nodes, key).expect("get"))
            })
        });
    }
    group.finish();
}

fn bench_edit_and_diff(c: &mut Criterion, ctx: &Context) {
    let mut group = c.benchmark_group(format!("batch_{EDIT_KEYS}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("edit", |b| {
        let mut i = 0;
        b.iter_batched(
            || {
                i += 1;
                ctx.batches[i % EDIT_BATCHES].clone()
            },
            |batch| ctx.base.edit(&ctx.nodes, batch).expect("edit"),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("diff", |b| {
        let mut i = 0;
        b.iter(|| {
            let other = &ctx.edited[i % EDIT_BATCHES];
            i += 1;
            let count = count_diff(&ctx.nodes, &ctx.base, other);
            black_box(count)
        })
    });
    group.finish();
}

fn main() {
    let ctx = Context::new();
    debug_assert!(ctx.depth >= 1);
    let mut c = Criterion::default().configure_from_args();
    bench_build(&mut c, &ctx);
    bench_lookup(&mut c, &ctx);
    bench_edit_and_diff(&mut c, &ctx);
    c.final_summary();
}
