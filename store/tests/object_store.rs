//! Guards the object-store backend beyond the conformance suite: many writers racing one
//! ref on the S3 test server (exactly one wins, every round), writers of different refs
//! all landing, packs merged so the object count stays bounded, readers holding an old
//! manifest across merges, and gc refused clearly.

use object_store::memory::InMemory;
use rnt_store::{Address, ChunkStore, ObjectChunkStore, StoreError};
use rnt_store_testkit::s3;
use std::sync::{Arc, Barrier};

/// Writers in the race.
const RACERS: usize = 16;

/// Rounds of the race.
const ROUNDS: usize = 20;

fn in_memory() -> ObjectChunkStore {
    let objects = Arc::new(InMemory::new());
    ObjectChunkStore::create_in(objects.clone(), "s", "memory:s").unwrap();
    ObjectChunkStore::open_in(objects, "s", "memory:s").unwrap()
}

/// `RACERS` handles (each its own client, as separate processes are), all opened on the
/// same manifest, swap `main` from the same expected value each round: exactly one wins,
/// the rest get `RefConflict`, and the ref holds the winner's value.
#[test]
fn sixteen_writers_racing_one_ref_on_s3_have_exactly_one_winner_every_round() {
    let Some(url) = s3::fresh_location("race") else {
        return;
    };
    ObjectChunkStore::create(&url, &s3::config()).unwrap();
    let first = ObjectChunkStore::open(&url, &s3::options()).unwrap();
    let base = first.put(b"round 0").unwrap();
    first
        .compare_and_swap_ref_durably("main", None, Some(base))
        .unwrap();
    let mut expected = base;
    for round in 0..ROUNDS {
        // Every racer reads the manifest (and its ETag) before any of them writes.
        let racers: Vec<ObjectChunkStore> = (0..RACERS)
            .map(|_| ObjectChunkStore::open(&url, &s3::options()).unwrap())
            .collect();
        let barrier = Barrier::new(RACERS);
        let outcomes: Vec<(Address, Result<(), StoreError>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = racers
                .iter()
                .enumerate()
                .map(|(racer, store)| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        let proposal = store
                            .put(format!("round {round} racer {racer}").as_bytes())
                            .unwrap();
                        barrier.wait();
                        let outcome = store.compare_and_swap_ref_durably(
                            "main",
                            Some(expected),
                            Some(proposal),
                        );
                        (proposal, outcome)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<Address> = outcomes
            .iter()
            .filter(|(_, outcome)| outcome.is_ok())
            .map(|(proposal, _)| *proposal)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {outcomes:?}");
        for (_, outcome) in &outcomes {
            assert!(
                matches!(outcome, Ok(()) | Err(StoreError::RefConflict { .. })),
                "round {round}: {outcome:?}"
            );
        }
        let reader = ObjectChunkStore::open(&url, &s3::options()).unwrap();
        assert_eq!(reader.get_ref("main").unwrap(), Some(winners[0]));
        // The winner's chunk was durable before its ref moved.
        let winner = outcomes
            .iter()
            .position(|(_, outcome)| outcome.is_ok())
            .expect("one winner");
        assert_eq!(
            &*reader.get(&winners[0]).unwrap(),
            format!("round {round} racer {winner}").as_bytes()
        );
        expected = winners[0];
    }
}

/// Writers moving different refs from the same manifest all land: a lost manifest swap
/// re-checks only the ref being moved and tries again.
#[test]
fn writers_of_different_refs_all_land_on_s3() {
    let Some(url) = s3::fresh_location("refs") else {
        return;
    };
    ObjectChunkStore::create(&url, &s3::config()).unwrap();
    let writers: Vec<ObjectChunkStore> = (0..8)
        .map(|_| ObjectChunkStore::open(&url, &s3::options()).unwrap())
        .collect();
    let barrier = Barrier::new(writers.len());
    std::thread::scope(|scope| {
        for (i, store) in writers.iter().enumerate() {
            let barrier = &barrier;
            scope.spawn(move || {
                let address = store.put(format!("branch {i}").as_bytes()).unwrap();
                barrier.wait();
                store
                    .compare_and_swap_ref_durably(&format!("b{i}"), None, Some(address))
                    .unwrap();
            });
        }
    });
    let reader = ObjectChunkStore::open(&url, &s3::options()).unwrap();
    let refs = reader.list_refs().unwrap();
    assert_eq!(refs.len(), 8, "{refs:?}");
    for (i, (name, address)) in refs.iter().enumerate() {
        assert_eq!(name, &format!("b{i}"));
        assert_eq!(
            &*reader.get(address).unwrap(),
            format!("branch {i}").as_bytes()
        );
    }
}

/// Many small commits keep few packs (merged as in the pack backend), and exactly the
/// listed packs' objects remain.
#[test]
fn many_small_commits_keep_the_object_count_bounded() {
    let store = in_memory();
    let mut head = None;
    let mut all = Vec::new();
    for i in 0..200u32 {
        let address = store.put(format!("commit {i}").as_bytes()).unwrap();
        all.push(address);
        store
            .compare_and_swap_ref_durably("main", head, Some(address))
            .unwrap();
        head = Some(address);
    }
    let packs = store.packs().unwrap();
    assert!(packs.len() <= 9, "{} packs after 200 commits", packs.len());
    assert_eq!(store.pack_objects().unwrap().len(), packs.len() * 2);
    let reopened = store.reopen_for_test().unwrap();
    for address in &all {
        assert!(reopened.get(address).is_ok());
    }
}

/// A reader that read the manifest before merges deleted the packs it lists still reads
/// every chunk (it re-reads the manifest when a pack is gone).
#[test]
fn a_reader_holding_an_old_manifest_follows_merges() {
    let writer = in_memory();
    let first = writer.put(b"first").unwrap();
    writer
        .compare_and_swap_ref_durably("main", None, Some(first))
        .unwrap();
    let reader = writer.reopen_for_test().unwrap();
    assert_eq!(reader.get_ref("main").unwrap(), Some(first));
    let mut head = first;
    let mut all = vec![first];
    for i in 0..20u32 {
        let next = writer.put(format!("next {i}").as_bytes()).unwrap();
        writer
            .compare_and_swap_ref_durably("main", Some(head), Some(next))
            .unwrap();
        all.push(next);
        head = next;
    }
    for address in &all {
        assert!(reader.get(address).is_ok(), "{address}");
    }
    assert_eq!(reader.get_ref("main").unwrap(), Some(head));
}

/// Chunks buffered but never published are not seen by another handle, and a refused
/// ref move publishes nothing.
#[test]
fn a_refused_move_publishes_nothing() {
    let store = in_memory();
    let a = store.put(b"a").unwrap();
    store
        .compare_and_swap_ref_durably("main", None, Some(a))
        .unwrap();
    let packs = store.packs().unwrap();
    let b = store.put(b"b").unwrap();
    let refused = store.compare_and_swap_ref_durably("main", None, Some(b));
    assert!(matches!(refused, Err(StoreError::RefConflict { .. })));
    let other = store.reopen_for_test().unwrap();
    assert!(!other.contains(&b).unwrap());
    assert_eq!(other.packs().unwrap(), packs);
}

#[test]
fn gc_is_refused_clearly_and_deletes_nothing() {
    let store = in_memory();
    let a = store.put(b"a").unwrap();
    store
        .compare_and_swap_ref_durably("main", None, Some(a))
        .unwrap();
    let error = store.collect_garbage(&|_| false).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("gc is not supported on object stores yet"),
        "{error}"
    );
    assert_eq!(&*store.get(&a).unwrap(), b"a");
}

#[test]
fn a_second_create_and_a_missing_store_are_reported() {
    let objects = Arc::new(InMemory::new());
    ObjectChunkStore::create_in(objects.clone(), "x", "memory:x").unwrap();
    let again = ObjectChunkStore::create_in(objects.clone(), "x", "memory:x").unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");
    let missing = ObjectChunkStore::open_in(objects, "y", "memory:y").unwrap_err();
    assert!(
        missing.to_string().contains("no rnt store at memory:y"),
        "{missing}"
    );
}

/// A batched `contains` sees chunks another handle published after this one read the
/// manifest (it re-reads the manifest once for the misses), and still says no to the
/// chunks nobody published.
#[test]
fn contains_many_sees_what_another_writer_published_since() {
    let reader = in_memory();
    let writer = reader.reopen_for_test().unwrap();
    let early = writer.put(b"early").unwrap();
    writer
        .compare_and_swap_ref_durably("main", None, Some(early))
        .unwrap();
    let late = writer.put(b"late").unwrap();
    writer
        .compare_and_swap_ref_durably("main", Some(early), Some(late))
        .unwrap();
    let buffered_elsewhere = writer.put(b"buffered by the writer only").unwrap();
    let asked = [late, Address::of(b"nobody"), early, buffered_elsewhere];
    assert_eq!(
        reader.contains_many(&asked).unwrap(),
        [true, false, true, false]
    );
}

/// `get_many` reads chunks of a pack too large to be fetched whole with coalesced ranged
/// reads, and returns exactly what `get` does, in the order asked, from a handle that never
/// saw the pack being written.
#[test]
fn get_many_reads_a_large_pack_by_ranges() {
    let store = in_memory();
    // Incompressible chunks, more of them than a pack read whole may hold.
    let mut seed = Address::of(b"seed");
    let mut chunks = Vec::new();
    while (chunks.len() as u64) * 4096 <= rnt_store::backend::object::WHOLE_PACK_BYTES_MAX + 8192 {
        let mut bytes = Vec::with_capacity(4096);
        while bytes.len() < 4096 {
            seed = Address::of(seed.as_bytes());
            bytes.extend_from_slice(seed.as_bytes());
        }
        chunks.push(bytes);
    }
    let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    let addresses = store.put_batch(&refs).unwrap();
    store
        .compare_and_swap_ref_durably("main", None, Some(addresses[0]))
        .unwrap();
    let (_, pack_bytes, _) = store.packs().unwrap()[0].clone();
    assert!(pack_bytes > rnt_store::backend::object::WHOLE_PACK_BYTES_MAX);
    let reader = store.reopen_for_test().unwrap();
    // Every third chunk, backwards, and one twice.
    let mut asked: Vec<Address> = addresses.iter().rev().step_by(3).copied().collect();
    asked.push(addresses[5]);
    let read = reader.get_many(&asked).unwrap();
    for (address, chunk) in asked.iter().zip(&read) {
        assert_eq!(Address::of(chunk), *address);
    }
}
