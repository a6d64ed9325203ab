//! Guards the `ChunkStore` contract: every backend passes the same checks, and random
//! sequences of operations (with reopens) agree with a `BTreeMap` model.
//!
//! A new backend is one new file in `src/backend/` plus one `conformance_suite!` line here.

use object_store::memory::InMemory;
use proptest::prelude::*;
use rnt_store::{
    commit_ref, Address, Chunk, ChunkStore, MemoryStore, ObjectChunkStore, PackStore, SledStore,
    StoreError,
};
use rnt_store_testkit::s3;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// Random cases of the model test per backend (each sled case opens a database on disk).
const MODEL_CASES: u32 = 128;

/// Operations per model case, at most.
const MODEL_OPS_MAX: usize = 40;

// ----------------------------------------------------------------------------------------
// Harness

/// How a backend is opened, reopened and damaged in tests.
struct Backend<S> {
    /// Opens a fresh store; `dir` is an empty temporary folder the store may use.
    open: fn(&Path) -> S,
    /// Closes the store and opens it again from `dir`; what was written must still be there.
    reopen: fn(S, &Path) -> S,
    /// Replaces a stored chunk's bytes without re-hashing; false when nothing is stored.
    corrupt: fn(&S, &Address, &[u8]) -> bool,
    /// Whether chunks put after the last flush or ref move survive a clean close (sled's
    /// close flushes; packs drop them, as a refused commit wants).
    keeps_unflushed_on_close: bool,
    /// Whether the backend can be tested here (false only for the S3 server when its
    /// tests are skipped, loudly, with `RNT_SKIP_S3_TESTS=1`; an absent server panics).
    available: fn() -> bool,
}

/// Always available.
fn local() -> bool {
    true
}

/// The S3 test server: there (true), skipped loudly (false), or a panic saying how to
/// start it.
fn s3_server() -> bool {
    s3::fresh_location("probe").is_some()
}

/// A fresh object-store-backed store on object_store's in-memory store.
fn object_in_memory() -> ObjectChunkStore {
    let objects = Arc::new(InMemory::new());
    ObjectChunkStore::create_in(objects.clone(), "store/prefix", "memory:store/prefix").unwrap();
    ObjectChunkStore::open_in(objects, "store/prefix", "memory:store/prefix").unwrap()
}

/// A fresh object-store-backed store on the S3 test server.
fn object_on_s3() -> ObjectChunkStore {
    let url = s3::fresh_location("conformance").expect("checked by `available`");
    ObjectChunkStore::create(&url, &s3::config()).unwrap();
    ObjectChunkStore::open(&url, &s3::options()).unwrap()
}

/// The object-store backend closed and opened again (a new handle, as another process).
fn reopen_object(store: ObjectChunkStore, _dir: &Path) -> ObjectChunkStore {
    let reopened = store.reopen_for_test().unwrap();
    drop(store);
    reopened
}

/// A store under test, with the folder it lives in.
struct Fixture<S> {
    backend: Backend<S>,
    store: Option<S>,
    dir: tempfile::TempDir,
}

impl<S: ChunkStore> Fixture<S> {
    fn new(backend: Backend<S>) -> Fixture<S> {
        let dir = tempfile::tempdir().unwrap();
        let store = (backend.open)(dir.path());
        Fixture {
            backend,
            store: Some(store),
            dir,
        }
    }

    fn store(&self) -> &S {
        self.store.as_ref().unwrap()
    }

    fn reopen(&mut self) {
        let store = self.store.take().unwrap();
        self.store = Some((self.backend.reopen)(store, self.dir.path()));
    }

    fn corrupt(&self, address: &Address, bytes: &[u8]) -> bool {
        (self.backend.corrupt)(self.store(), address, bytes)
    }
}

/// Instantiates every check for one backend, in a module named after it.
macro_rules! conformance_suite {
    ($name:ident, $backend:expr) => {
        mod $name {
            use super::*;

            conformance_suite!(@store $backend;
                check_put_get_round_trip,
                check_put_returns_address_of,
                check_put_is_idempotent,
                check_put_shared_round_trip,
                check_put_batch_keeps_order,
                check_get_of_missing_is_not_found,
                check_contains,
                check_contains_many_agrees_with_contains,
                check_get_many_agrees_with_get,
                check_prefix_lookup,
                check_prefix_lookup_of_bad_text_finds_nothing,
                check_ref_create_move_delete,
                check_ref_conflict_changes_nothing,
                check_invalid_ref_names_are_rejected,
                check_list_refs_is_sorted,
                check_empty_chunk,
                check_large_chunk,
                check_commit_ref,
                check_racing_cas_has_one_winner,
            );
            conformance_suite!(@fixture $backend;
                check_corruption_is_detected,
                check_data_survives_reopen,
            );

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(MODEL_CASES))]
                #[test]
                fn model(ops in prop::collection::vec(op_strategy(), 1..MODEL_OPS_MAX)) {
                    if !($backend.available)() {
                        return Ok(());
                    }
                    check_against_model(&mut Fixture::new($backend), &ops)?;
                }
            }
        }
    };
    (@store $backend:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                if !($backend.available)() {
                    return;
                }
                let fixture = Fixture::new($backend);
                super::$check(fixture.store());
            }
        )*
    };
    (@fixture $backend:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                if !($backend.available)() {
                    return;
                }
                super::$check(&mut Fixture::new($backend));
            }
        )*
    };
}

// The backends under test, one invocation each.
conformance_suite!(
    memory,
    Backend {
        open: |_dir| MemoryStore::new(),
        reopen: |store, _dir| store,
        corrupt: |store, address, bytes| store.overwrite_raw_for_test(address, bytes),
        keeps_unflushed_on_close: true,
        available: local,
    }
);

conformance_suite!(
    sled,
    Backend {
        open: |dir| SledStore::open(dir).unwrap(),
        reopen: |store, dir| {
            drop(store);
            SledStore::open(dir).unwrap()
        },
        corrupt: |store, address, bytes| store.overwrite_raw_for_test(address, bytes).unwrap(),
        keeps_unflushed_on_close: true,
        available: local,
    }
);

conformance_suite!(
    packs,
    Backend {
        open: |dir| {
            PackStore::create(dir).unwrap();
            PackStore::open(dir).unwrap()
        },
        reopen: |store, dir| {
            drop(store);
            PackStore::open(dir).unwrap()
        },
        corrupt: |store, address, bytes| store.overwrite_raw_for_test(address, bytes).unwrap(),
        keeps_unflushed_on_close: false,
        available: local,
    }
);

conformance_suite!(
    object_memory,
    Backend {
        open: |_dir| object_in_memory(),
        reopen: reopen_object,
        corrupt: |store, address, bytes| store.overwrite_raw_for_test(address, bytes).unwrap(),
        keeps_unflushed_on_close: false,
        available: local,
    }
);

conformance_suite!(
    object_s3,
    Backend {
        open: |_dir| object_on_s3(),
        reopen: reopen_object,
        corrupt: |store, address, bytes| store.overwrite_raw_for_test(address, bytes).unwrap(),
        keeps_unflushed_on_close: false,
        available: s3_server,
    }
);

// ----------------------------------------------------------------------------------------
// Checks on a fresh store

fn check_put_get_round_trip(store: &impl ChunkStore) {
    for bytes in [&b"a"[..], b"hello, world", &[0u8, 255, 0, 1]] {
        let address = store.put(bytes).unwrap();
        assert_eq!(&*store.get(&address).unwrap(), bytes);
    }
}

fn check_put_returns_address_of(store: &impl ChunkStore) {
    let bytes = b"content addressed";
    assert_eq!(store.put(bytes).unwrap(), Address::of(bytes));
}

fn check_put_is_idempotent(store: &impl ChunkStore) {
    let first = store.put(b"twice").unwrap();
    let second = store.put(b"twice").unwrap();
    assert_eq!(first, second);
    assert_eq!(&*store.get(&first).unwrap(), b"twice");
    assert_eq!(
        store.addresses_with_prefix(&first.to_hex()).unwrap(),
        vec![first]
    );
}

fn check_put_shared_round_trip(store: &impl ChunkStore) {
    let chunks: Vec<(Address, Chunk)> = [&b"shared"[..], b"", &[7u8; 5000]]
        .iter()
        .map(|bytes| (Address::of(bytes), Chunk::from(*bytes)))
        .collect();
    store.put_shared(&chunks).unwrap();
    // Again: already there, changes nothing.
    store.put_shared(&chunks[..1]).unwrap();
    for (address, bytes) in &chunks {
        assert!(store.contains(address).unwrap());
        assert_eq!(store.get(address).unwrap(), *bytes);
    }
}

fn check_put_batch_keeps_order(store: &impl ChunkStore) {
    let present = store.put(b"already here").unwrap();
    let chunks: [&[u8]; 5] = [b"zebra", b"apple", b"already here", b"zebra", b""];
    let addresses = store.put_batch(&chunks).unwrap();
    let expected: Vec<Address> = chunks.iter().map(|bytes| Address::of(bytes)).collect();
    assert_eq!(addresses, expected);
    assert_eq!(addresses[2], present);
    for (address, bytes) in addresses.iter().zip(chunks) {
        assert_eq!(&*store.get(address).unwrap(), bytes);
    }
    assert_eq!(store.put_batch(&[]).unwrap(), Vec::<Address>::new());
}

fn check_get_of_missing_is_not_found(store: &impl ChunkStore) {
    let missing = Address::of(b"never stored");
    match store.get(&missing) {
        Err(StoreError::NotFound(address)) => assert_eq!(address, missing),
        other => panic!("expected NotFound, got {other:?}"),
    }
}

fn check_contains(store: &impl ChunkStore) {
    let address = Address::of(b"soon");
    assert!(!store.contains(&address).unwrap());
    store.put(b"soon").unwrap();
    assert!(store.contains(&address).unwrap());
}

fn check_contains_many_agrees_with_contains(store: &impl ChunkStore) {
    assert_eq!(store.contains_many(&[]).unwrap(), Vec::<bool>::new());
    let durable = store.put_batch(&[b"many 1", b"many 2"]).unwrap();
    store.flush().unwrap();
    let buffered = store.put(b"many 3").unwrap();
    let absent = [Address::of(b"many absent 1"), Address::of(b"many absent 2")];
    let asked = [
        absent[0], durable[1], buffered, absent[1], durable[0], absent[0], durable[1],
    ];
    let answers = store.contains_many(&asked).unwrap();
    assert_eq!(answers, [false, true, true, false, true, false, true]);
    for (address, answer) in asked.iter().zip(&answers) {
        assert_eq!(store.contains(address).unwrap(), *answer, "{address}");
    }
}

fn check_get_many_agrees_with_get(store: &impl ChunkStore) {
    assert!(store.get_many(&[]).unwrap().is_empty());
    let durable = store.put_batch(&[b"get many 1", b"get many 2"]).unwrap();
    store.flush().unwrap();
    let buffered = store.put(b"get many 3").unwrap();
    let asked = [durable[1], buffered, durable[0], durable[1]];
    let chunks = store.get_many(&asked).unwrap();
    assert_eq!(chunks.len(), asked.len());
    for (address, chunk) in asked.iter().zip(&chunks) {
        assert_eq!(&**chunk, &*store.get(address).unwrap(), "{address}");
    }
    let missing = Address::of(b"get many absent");
    assert!(matches!(
        store.get_many(&[durable[0], missing]),
        Err(StoreError::NotFound(address)) if address == missing
    ));
}

fn check_prefix_lookup(store: &impl ChunkStore) {
    // More chunks than two hex digits have values, so some share a 2-digit prefix.
    let chunks: Vec<Vec<u8>> = (0..300u32)
        .map(|i| format!("chunk {i}").into_bytes())
        .collect();
    let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    let all: BTreeSet<Address> = store.put_batch(&slices).unwrap().into_iter().collect();
    let matching = |prefix: &str| -> BTreeSet<Address> {
        all.iter()
            .filter(|a| a.has_hex_prefix(prefix))
            .copied()
            .collect()
    };
    let found = |prefix: &str| -> BTreeSet<Address> {
        let list = store.addresses_with_prefix(prefix).unwrap();
        let set: BTreeSet<Address> = list.iter().copied().collect();
        assert_eq!(set.len(), list.len(), "duplicates for prefix {prefix}");
        set
    };

    // Unique: the whole address, and its prefixes of every length down to the minimum
    // (odd lengths exercise the half-byte filter).
    let one = *all.iter().next().unwrap();
    let hex = one.to_hex();
    for len in 1..=64 {
        let prefix = &hex[..len];
        assert_eq!(found(prefix), matching(prefix), "prefix {prefix}");
        assert_eq!(
            found(&prefix.to_uppercase()),
            matching(prefix),
            "prefix {prefix} uppercase"
        );
    }
    assert_eq!(found(&hex), BTreeSet::from([one]));

    // Ambiguous: a 2-digit prefix (and its 3-digit extensions) shared by several chunks.
    let shared = all
        .iter()
        .map(|a| a.short_hex(2))
        .find(|p| matching(p).len() > 1)
        .expect("300 chunks share some 2-digit prefix");
    assert!(found(&shared).len() > 1);
    assert_eq!(found(&shared), matching(&shared));
    for digit in "0123456789abcdef".chars() {
        let prefix = format!("{shared}{digit}");
        assert_eq!(found(&prefix), matching(&prefix), "prefix {prefix}");
    }

    // None: a 4-digit prefix that no chunk has.
    let absent = (0..=0xffffu32)
        .map(|n| format!("{n:04x}"))
        .find(|p| matching(p).is_empty())
        .unwrap();
    assert!(found(&absent).is_empty());

    // The empty prefix matches everything (callers enforce the minimum).
    assert_eq!(found(""), all);
}

fn check_prefix_lookup_of_bad_text_finds_nothing(store: &impl ChunkStore) {
    let address = store.put(b"x").unwrap();
    let hex = address.to_hex();
    for text in [
        "zzzz",
        "abcg",
        &format!("{hex}0"),
        &format!("{}é", &hex[..4]),
    ] {
        assert_eq!(
            store.addresses_with_prefix(text).unwrap(),
            Vec::<Address>::new(),
            "{text}"
        );
    }
}

fn check_ref_create_move_delete(store: &impl ChunkStore) {
    let a = store.put(b"a").unwrap();
    let b = store.put(b"b").unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), None);
    // None -> None on an absent ref succeeds and creates nothing.
    store.compare_and_swap_ref("HEAD", None, None).unwrap();
    assert_eq!(store.list_refs().unwrap(), vec![]);
    // Create.
    store.compare_and_swap_ref("HEAD", None, Some(a)).unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), Some(a));
    // Move.
    store
        .compare_and_swap_ref("HEAD", Some(a), Some(b))
        .unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), Some(b));
    // Same value: succeeds, changes nothing.
    store
        .compare_and_swap_ref("HEAD", Some(b), Some(b))
        .unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), Some(b));
    // Delete.
    store.compare_and_swap_ref("HEAD", Some(b), None).unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), None);
    assert_eq!(store.list_refs().unwrap(), vec![]);
}

fn check_ref_conflict_changes_nothing(store: &impl ChunkStore) {
    let a = store.put(b"a").unwrap();
    let b = store.put(b"b").unwrap();
    let c = store.put(b"c").unwrap();
    store.compare_and_swap_ref("main", None, Some(a)).unwrap();

    let conflicts = [
        (Some(b), Some(c)), // wrong expected value
        (None, Some(c)),    // "create" of a present ref
        (Some(b), None),    // delete with a wrong expected value
    ];
    for (expected, new) in conflicts {
        match store.compare_and_swap_ref("main", expected, new) {
            Err(StoreError::RefConflict {
                name,
                expected: wanted,
                actual,
            }) => {
                assert_eq!(name, "main");
                assert_eq!(wanted, expected.map_or("none".to_string(), |x| x.to_hex()));
                assert_eq!(actual, a.to_hex());
            }
            other => panic!("expected RefConflict, got {other:?}"),
        }
        assert_eq!(store.get_ref("main").unwrap(), Some(a));
    }

    // Expecting a value of an absent ref conflicts too, and creates nothing.
    match store.compare_and_swap_ref("other", Some(a), Some(b)) {
        Err(StoreError::RefConflict { actual, .. }) => assert_eq!(actual, "none"),
        other => panic!("expected RefConflict, got {other:?}"),
    }
    assert_eq!(store.get_ref("other").unwrap(), None);
    assert_eq!(store.list_refs().unwrap(), vec![("main".to_string(), a)]);
}

fn check_invalid_ref_names_are_rejected(store: &impl ChunkStore) {
    let a = store.put(b"a").unwrap();
    let long_bad = "x".repeat(256);
    for name in ["", "a b", "HEAD\n", "é", "a:b", "a\0b", long_bad.as_str()] {
        let rejected = |result: Result<(), StoreError>| {
            assert!(
                matches!(result, Err(StoreError::InvalidRefName(ref n)) if n == name),
                "{name:?}: {result:?}"
            );
        };
        rejected(store.get_ref(name).map(|_| ()));
        rejected(store.compare_and_swap_ref(name, None, Some(a)));
        rejected(commit_ref(store, name, None, Some(a)));
    }
    assert_eq!(store.list_refs().unwrap(), vec![]);

    let long_good = "x".repeat(255);
    for name in [
        "HEAD",
        "refs/heads/main",
        "a-b_c.d",
        "0",
        long_good.as_str(),
    ] {
        store.compare_and_swap_ref(name, None, Some(a)).unwrap();
        assert_eq!(store.get_ref(name).unwrap(), Some(a), "{name}");
    }
}

fn check_list_refs_is_sorted(store: &impl ChunkStore) {
    let names = [
        "main",
        "HEAD",
        "feature/b",
        "feature/a",
        "Zed",
        "alpha",
        "feature-x",
    ];
    let mut expected = Vec::new();
    for name in names {
        let address = store.put(name.as_bytes()).unwrap();
        store
            .compare_and_swap_ref(name, None, Some(address))
            .unwrap();
        expected.push((name.to_string(), address));
    }
    expected.sort();
    assert_eq!(store.list_refs().unwrap(), expected);
}

fn check_empty_chunk(store: &impl ChunkStore) {
    let address = store.put(b"").unwrap();
    assert_eq!(address, Address::of(b""));
    assert!(store.contains(&address).unwrap());
    assert!(store.get(&address).unwrap().is_empty());
}

fn check_large_chunk(store: &impl ChunkStore) {
    let bytes: Vec<u8> = (0..1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let address = store.put(&bytes).unwrap();
    store.flush().unwrap();
    assert_eq!(&*store.get(&address).unwrap(), &bytes[..]);
}

fn check_commit_ref(store: &impl ChunkStore) {
    let a = store.put(b"commit a").unwrap();
    let b = store.put(b"commit b").unwrap();
    commit_ref(store, "HEAD", None, Some(a)).unwrap();
    commit_ref(store, "HEAD", Some(a), Some(b)).unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), Some(b));
    assert!(matches!(
        commit_ref(store, "HEAD", Some(a), Some(a)),
        Err(StoreError::RefConflict { .. })
    ));
    // A ref never names a chunk the store does not hold.
    let missing = Address::of(b"not stored");
    assert!(matches!(
        commit_ref(store, "HEAD", Some(b), Some(missing)),
        Err(StoreError::NotFound(address)) if address == missing
    ));
    assert_eq!(store.get_ref("HEAD").unwrap(), Some(b));
    // Through a trait object too.
    let dynamic: &dyn ChunkStore = store;
    commit_ref(dynamic, "HEAD", Some(b), None).unwrap();
    assert_eq!(store.get_ref("HEAD").unwrap(), None);
}

fn check_racing_cas_has_one_winner(store: &impl ChunkStore) {
    const RACERS: usize = 8;
    let base = store.put(b"base").unwrap();
    store
        .compare_and_swap_ref("HEAD", None, Some(base))
        .unwrap();
    let proposals: Vec<Address> = (0..RACERS)
        .map(|i| store.put(format!("racer {i}").as_bytes()).unwrap())
        .collect();
    let outcomes: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = proposals
            .iter()
            .map(|proposal| {
                scope.spawn(move || {
                    match store.compare_and_swap_ref("HEAD", Some(base), Some(*proposal)) {
                        Ok(()) => true,
                        Err(StoreError::RefConflict { .. }) => false,
                        Err(other) => panic!("unexpected error {other}"),
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(outcomes.iter().filter(|won| **won).count(), 1);
    let winner = proposals[outcomes.iter().position(|won| *won).unwrap()];
    assert_eq!(store.get_ref("HEAD").unwrap(), Some(winner));
}

// ----------------------------------------------------------------------------------------
// Checks that need the fixture

fn check_corruption_is_detected<S: ChunkStore>(fixture: &mut Fixture<S>) {
    let bytes = b"precious data".to_vec();
    let address = fixture.store().put(&bytes).unwrap();
    let mut flipped = bytes.clone();
    flipped[3] ^= 0x01;
    assert!(fixture.corrupt(&address, &flipped));
    let error = fixture.store().get(&address).unwrap_err();
    assert!(error.is_corruption());
    match &error {
        StoreError::Corrupted {
            address: named,
            detail,
        } => {
            assert_eq!(*named, address);
            assert!(detail.contains(&Address::of(&flipped).to_hex()), "{detail}");
        }
        other => panic!("expected Corrupted, got {other:?}"),
    }
    assert!(error.to_string().contains(&address.to_hex()), "{error}");
    // Corruption is not absence.
    assert!(fixture.store().contains(&address).unwrap());
    // Nothing to damage under a missing address.
    assert!(!fixture.corrupt(&Address::of(b"absent"), b"x"));
    // Other chunks are unaffected.
    let other = fixture.store().put(b"neighbour").unwrap();
    assert_eq!(&*fixture.store().get(&other).unwrap(), b"neighbour");
}

fn check_data_survives_reopen<S: ChunkStore>(fixture: &mut Fixture<S>) {
    let chunks: Vec<Vec<u8>> = (0..50u32)
        .map(|i| format!("kept {i}").into_bytes())
        .collect();
    let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    let addresses = fixture.store().put_batch(&slices).unwrap();
    commit_ref(fixture.store(), "HEAD", None, Some(addresses[0])).unwrap();
    // A plain ref move is durable too.
    fixture
        .store()
        .compare_and_swap_ref("main", None, Some(addresses[1]))
        .unwrap();
    // Chunks written after a ref move survive once flushed. (Chunks never flushed may be
    // dropped at close: the pack backend drops what a refused commit wrote.)
    let late = fixture.store().put(b"after the flush").unwrap();
    fixture.store().flush().unwrap();

    for _ in 0..2 {
        fixture.reopen();
        let store = fixture.store();
        for (address, bytes) in addresses.iter().zip(&chunks) {
            assert_eq!(&*store.get(address).unwrap(), &bytes[..]);
        }
        assert_eq!(&*store.get(&late).unwrap(), b"after the flush");
        assert_eq!(
            store.list_refs().unwrap(),
            vec![
                ("HEAD".to_string(), addresses[0]),
                ("main".to_string(), addresses[1])
            ]
        );
    }
}

// ----------------------------------------------------------------------------------------
// Model test

/// Chunks from a tiny alphabet, so that random operations often name the same chunk.
fn chunk_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0u8..3, 0..4)
}

const REF_NAMES: [&str; 3] = ["HEAD", "main", "refs/heads/x"];

#[derive(Clone, Debug)]
enum Expected {
    /// What the model says the ref holds (the CAS should succeed).
    Current,
    /// Absent.
    Absent,
    /// The address of these bytes (usually a conflict).
    Of(Vec<u8>),
}

#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>),
    PutBatch(Vec<Vec<u8>>),
    Get(Vec<u8>),
    Prefix {
        of: Vec<u8>,
        hex_digits: usize,
    },
    Cas {
        name: usize,
        expected: Expected,
        new: Option<Vec<u8>>,
    },
    Flush,
    Reopen,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let expected = prop_oneof![
        3 => Just(Expected::Current),
        1 => Just(Expected::Absent),
        1 => chunk_strategy().prop_map(Expected::Of),
    ];
    prop_oneof![
        4 => chunk_strategy().prop_map(Op::Put),
        2 => prop::collection::vec(chunk_strategy(), 0..5).prop_map(Op::PutBatch),
        4 => chunk_strategy().prop_map(Op::Get),
        2 => (chunk_strategy(), 1..=64usize).prop_map(|(of, hex_digits)| Op::Prefix { of, hex_digits }),
        4 => (0..REF_NAMES.len(), expected, prop::option::of(chunk_strategy()))
            .prop_map(|(name, expected, new)| Op::Cas { name, expected, new }),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

/// The obviously-correct store.
#[derive(Default)]
struct Model {
    chunks: BTreeMap<Address, Vec<u8>>,
    /// Chunks put since the last flush or successful ref move, not already durable.
    unflushed: BTreeSet<Address>,
    refs: BTreeMap<String, Address>,
}

impl Model {
    fn put(&mut self, address: Address, bytes: &[u8]) {
        if self.chunks.insert(address, bytes.to_vec()).is_none() {
            self.unflushed.insert(address);
        }
    }
}

fn check_against_model<S: ChunkStore>(
    fixture: &mut Fixture<S>,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Put(bytes) => {
                let address = fixture.store().put(bytes).unwrap();
                prop_assert_eq!(address, Address::of(bytes));
                model.put(address, bytes);
            }
            Op::PutBatch(chunks) => {
                let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                let addresses = fixture.store().put_batch(&slices).unwrap();
                prop_assert_eq!(addresses.len(), chunks.len());
                for (address, bytes) in addresses.into_iter().zip(chunks) {
                    prop_assert_eq!(address, Address::of(bytes));
                    model.put(address, bytes);
                }
            }
            Op::Get(bytes) => {
                let address = Address::of(bytes);
                let got = fixture.store().get(&address);
                match model.chunks.get(&address) {
                    Some(expected) => prop_assert_eq!(&*got.unwrap(), &expected[..]),
                    None => {
                        prop_assert!(matches!(got, Err(StoreError::NotFound(a)) if a == address))
                    }
                }
                prop_assert_eq!(
                    fixture.store().contains(&address).unwrap(),
                    model.chunks.contains_key(&address)
                );
            }
            Op::Prefix { of, hex_digits } => {
                let prefix = Address::of(of).short_hex(*hex_digits);
                let found: BTreeSet<Address> = fixture
                    .store()
                    .addresses_with_prefix(&prefix)
                    .unwrap()
                    .into_iter()
                    .collect();
                let expected: BTreeSet<Address> = model
                    .chunks
                    .keys()
                    .filter(|a| a.has_hex_prefix(&prefix))
                    .copied()
                    .collect();
                prop_assert_eq!(found, expected);
            }
            Op::Cas {
                name,
                expected,
                new,
            } => {
                let name = REF_NAMES[*name];
                let current = model.refs.get(name).copied();
                let expected = match expected {
                    Expected::Current => current,
                    Expected::Absent => None,
                    Expected::Of(bytes) => Some(Address::of(bytes)),
                };
                let new = new.as_ref().map(|bytes| Address::of(bytes));
                let result = fixture.store().compare_and_swap_ref(name, expected, new);
                if expected == current {
                    prop_assert!(result.is_ok(), "{:?}", result);
                    model.unflushed.clear();
                    match new {
                        Some(address) => model.refs.insert(name.to_string(), address),
                        None => model.refs.remove(name),
                    };
                } else {
                    prop_assert!(
                        matches!(result, Err(StoreError::RefConflict { .. })),
                        "{:?}",
                        result
                    );
                }
                prop_assert_eq!(
                    fixture.store().get_ref(name).unwrap(),
                    model.refs.get(name).copied()
                );
            }
            Op::Flush => {
                fixture.store().flush().unwrap();
                model.unflushed.clear();
            }
            Op::Reopen => {
                if !fixture.backend.keeps_unflushed_on_close {
                    for address in std::mem::take(&mut model.unflushed) {
                        model.chunks.remove(&address);
                    }
                }
                model.unflushed.clear();
                fixture.reopen();
                check_whole_store(fixture.store(), &model)?;
            }
        }
    }
    check_whole_store(fixture.store(), &model)
}

/// Every chunk and ref of the model is in the store, and the store lists no other ref.
fn check_whole_store(store: &impl ChunkStore, model: &Model) -> Result<(), TestCaseError> {
    for (address, bytes) in &model.chunks {
        prop_assert_eq!(&*store.get(address).unwrap(), &bytes[..]);
    }
    let all: BTreeSet<Address> = store
        .addresses_with_prefix("")
        .unwrap()
        .into_iter()
        .collect();
    prop_assert_eq!(all, model.chunks.keys().copied().collect::<BTreeSet<_>>());
    let refs: Vec<(String, Address)> = model.refs.iter().map(|(n, a)| (n.clone(), *a)).collect();
    prop_assert_eq!(store.list_refs().unwrap(), refs);
    Ok(())
}
