//! The alter benchmark (issue 24): `rnt alter orders add` and `drop` on the reference
//! 1M-order relation with the W1–W4 program defined, next to a fresh import of the same
//! orders into the same program, each a new `rnt` process on the packs backend, in one
//! run. Also `type amount decimal(12, 2)`, which changes values and so recomputes the
//! views that read `orders`, for contrast.
//!
//! An add or a drop rewrites `orders` (O(n) tuples re-encoded, its tree and indexes
//! built) and keeps every view's trees, unread: the rules over `orders` match the same
//! tuples one for one. The views and relations that do not read `orders` (`reach` over
//! `edge`, and `customers`) keep their roots in every case: the benchmark checks it.
//!
//! Then an add and a drop once more, in process on the same store opened cold (an empty node
//! cache), recording every chunk the alter reads: none of them is a node of a tree of the
//! relations that do not read `orders` (the bench asserts it), so those cost nothing.
//!
//! `cargo bench -p rnt-cli --bench alter`. Knobs: `RNT_BENCH_SCALE=0.1` shrinks the data.

mod common;

use common::env_or;
use common::reference::{self, Data};
use rnt_db::{Alteration, Database};
use rnt_merkle::{Node, State};
use rnt_store::{open_store, Address, Chunk, ChunkStore, GcReport, OpenMode, StoreResult};
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The relations that do not read `orders`.
const UNRELATED: [&str; 3] = ["customers", "edge", "reach"];

/// Runs `rnt --store STORE args` in `dir`; panics on failure; returns its wall time (s) and
/// its standard output.
fn rnt(dir: &Path, store: &Path, args: &[&str]) -> (f64, String) {
    let (stdout, ms) = common::rnt(dir, store, args);
    (ms / 1e3, stdout)
}

/// The roots of the relations that do not read `orders`, from `rnt status --format json`.
fn unrelated_roots(dir: &Path, store: &Path) -> Vec<String> {
    let (_, status) = rnt(dir, store, &["status", "--format", "json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    status["relations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| UNRELATED.contains(&r["name"].as_str().unwrap()))
        .map(|r| format!("{}={}", r["name"], r["root"]))
        .collect()
}

/// A store with W1–W4 defined, customers and edges imported; returns the time of the
/// orders import that follows.
fn fresh(dir: &Path, store: &Path) -> f64 {
    rnt(dir, store, &["init"]);
    rnt(dir, store, &["define", "program.rnt"]);
    rnt(dir, store, &["import", "customers", "customers.csv"]);
    rnt(dir, store, &["import", "edge", "edge.csv"]);
    rnt(dir, store, &["import", "orders", "orders.csv"]).0
}

fn main() {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    // A row count times the scale, rounded toward zero: the truncation is the point.
    #[allow(clippy::cast_possible_truncation)]
    let scaled = |n: f64| ((n * scale) as i64).max(1000);
    let data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    data.write_csv(dir);
    let program = format!("{}{}", reference::BASE, reference::VIEWS);
    std::fs::write(dir.join("program.rnt"), program).unwrap();
    eprintln!(
        "data: {} orders, {} customers, {} nodes; program W1–W4",
        data.orders.len(),
        data.plans.len(),
        data.parent.len()
    );
    let store = dir.join("store");
    let import_s = fresh(dir, &store);
    let before = unrelated_roots(dir, &store);
    let steps: [(&str, &[&str]); 5] = [
        (
            "alter orders add note str?",
            &["alter", "orders", "add", "note", "str?"],
        ),
        (
            "alter orders drop note",
            &["alter", "orders", "drop", "note"],
        ),
        (
            "alter orders add qty int --default 1",
            &["alter", "orders", "add", "qty", "int", "--default", "1"],
        ),
        ("alter orders drop qty", &["alter", "orders", "drop", "qty"]),
        (
            "alter orders type amount decimal(12, 2)",
            &["alter", "orders", "type", "amount", "decimal(12, 2)"],
        ),
    ];
    println!();
    println!("| command | wall (s) | / fresh import of orders |");
    println!("|---|---:|---:|");
    println!("| fresh import of orders (W1–W4 defined) | {import_s:.2} | 1 |");
    for (name, args) in steps {
        let (seconds, _) = rnt(dir, &store, args);
        println!("| {name} | {seconds:.2} | {:.2} |", seconds / import_s);
        assert_eq!(
            unrelated_roots(dir, &store),
            before,
            "{name}: a relation that does not read orders changed its tree"
        );
    }
    let (verify_s, _) = rnt(dir, &store, &["verify"]);
    println!(
        "| verify after the alters | {verify_s:.2} | {:.2} |",
        verify_s / import_s
    );
    println!();
    println!("roots kept by every alter: {}", before.join(", "));
    reads_in_process(&store);
}

/// A store that records the address of every chunk read through it.
struct Recording {
    inner: Arc<dyn ChunkStore>,
    read: Mutex<HashSet<Address>>,
}

impl Recording {
    fn note(&self, addresses: &[Address]) {
        self.read.lock().unwrap().extend(addresses.iter().copied());
    }

    fn take(&self) -> HashSet<Address> {
        std::mem::take(&mut *self.read.lock().unwrap())
    }
}

impl ChunkStore for Recording {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        self.note(&[*address]);
        self.inner.get(address)
    }
    fn get_many(&self, addresses: &[Address]) -> StoreResult<Vec<Chunk>> {
        self.note(addresses);
        self.inner.get_many(addresses)
    }
    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        self.inner.put_addressed(chunks)
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
    fn compare_and_swap_ref_durably(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        self.inner.compare_and_swap_ref_durably(name, expected, new)
    }
    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        self.inner.list_refs()
    }
    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        self.inner.collect_garbage(live)
    }
}

/// Every node of the trees (main and aux) of `relation`.
fn nodes_of(chunks: &dyn ChunkStore, state: &State, relation: &str) -> HashSet<Address> {
    let mut stack: Vec<Address> = Vec::new();
    for entry in state.relations.iter().filter(|r| r.name == relation) {
        stack.extend(entry.root.map(Address::from_bytes));
        stack.extend(entry.aux.iter().map(|aux| Address::from_bytes(aux.root)));
    }
    let mut seen = HashSet::new();
    while let Some(address) = stack.pop() {
        if !seen.insert(address) {
            continue;
        }
        let node = Node::decode(address, chunks.get(&address).unwrap()).unwrap();
        if !node.is_leaf() {
            stack.extend((0..node.len()).map(|i| node.child(i).address));
        }
    }
    seen
}

/// An add and a drop in process on `store` opened cold, every chunk read recorded:
/// prints how many were read and asserts that none is a node of an unrelated tree.
fn reads_in_process(store: &Path) {
    let mode = OpenMode {
        writer: true,
        ..OpenMode::default()
    };
    let inner = open_store(store, mode).unwrap();
    let recording = Arc::new(Recording {
        inner: inner.clone(),
        read: Mutex::new(HashSet::new()),
    });
    let state = Database::new(inner.clone()).head().unwrap().state;
    let nodes: Vec<(&str, HashSet<Address>)> = UNRELATED
        .iter()
        .map(|name| (*name, nodes_of(inner.as_ref(), &state, name)))
        .collect();
    let steps = [
        Alteration::Add {
            column: "again".into(),
            column_type: rnt_db::parse_column_type("int?").unwrap(),
        },
        Alteration::Drop {
            column: "again".into(),
        },
    ];
    let orders = nodes_of(inner.as_ref(), &state, "orders").len();
    println!();
    println!("`orders` holds {orders} nodes (its tree and indexes).");
    println!();
    let names: Vec<String> = nodes
        .iter()
        .map(|(name, set)| format!("{name} ({} nodes)", set.len()))
        .collect();
    println!(
        "| in process, cold cache | chunks read | of them, nodes of: {} |",
        names.join(" / ")
    );
    println!("|---|---:|---:|");
    for alteration in steps {
        let db = Database::new(recording.clone());
        recording.take();
        db.alter("orders", &alteration, None, "bench").unwrap();
        let read = recording.take();
        let touched: Vec<usize> = nodes
            .iter()
            .map(|(_, set)| read.intersection(set).count())
            .collect();
        assert!(
            touched.iter().all(|&n| n == 0),
            "{alteration} read a tree of a relation that does not read orders"
        );
        let shown: Vec<String> = touched.iter().map(ToString::to_string).collect();
        println!(
            "| alter orders {alteration} | {} | {} |",
            read.len(),
            shown.join(" / ")
        );
    }
}
