//! Guards what each kind of damage to a pack store's files loses (`docs/format.md` §11.5):
//! bytes appended to a pack lose nothing, a pack cut short loses only the records past the
//! cut, a missing or damaged index loses nothing (the pack is scanned), a missing pack
//! loses its own records only — and every error names its file relative to the store. The
//! files report what is wrong (`StoreFiles::findings`), a repair rewrites what it can, and
//! the next writer deletes the pack files no manifest lists.

use rnt_store::{Address, ChunkStore, FindingKind, PackOptions, PackStore, StoreError};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// A store of two packs (600 and 200 chunks: the older more than twice the newer, so no
/// merge joins them) and every chunk it holds.
struct Fixture {
    dir: tempfile::TempDir,
    chunks: Vec<(Address, Vec<u8>)>,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let store = PackStore::open(dir.path()).unwrap();
        let mut chunks = Vec::new();
        let mut head = None;
        // 600, then 200: the older pack stays at least twice the newer, so both stay.
        for (round, n) in [600u32, 200].into_iter().enumerate() {
            for i in 0..n {
                let bytes = format!("round {round} chunk {i} ")
                    .repeat(1 + i as usize % 20)
                    .into_bytes();
                let address = store.put(&bytes).unwrap();
                chunks.push((address, bytes));
            }
            let new = chunks.last().unwrap().0;
            store
                .compare_and_swap_ref_durably("main", head, Some(new))
                .unwrap();
            head = Some(new);
        }
        assert_eq!(store.packs().unwrap().len(), 2, "two packs");
        Fixture { dir, chunks }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The packs' names, oldest first.
    fn packs(&self) -> Vec<String> {
        let store = PackStore::open(self.path()).unwrap();
        store.packs().unwrap().into_iter().map(|p| p.0).collect()
    }

    fn file(&self, name: &str, extension: &str) -> PathBuf {
        self.path()
            .join("packs")
            .join(format!("{name}.{extension}"))
    }

    /// Which chunks read back (a fresh handle), and the errors of the others.
    fn readable(&self) -> (BTreeSet<Address>, Vec<String>) {
        let store = PackStore::open(self.path()).unwrap();
        let mut good = BTreeSet::new();
        let mut errors = Vec::new();
        for (address, bytes) in &self.chunks {
            match store.get(address) {
                Ok(read) => {
                    assert_eq!(&*read, bytes.as_slice(), "wrong data for {address}");
                    good.insert(*address);
                }
                Err(error) => {
                    assert!(error.is_corruption(), "{error}");
                    errors.push(error.to_string());
                }
            }
        }
        (good, errors)
    }

    /// The records of pack `name` in file order: (address, offset, length), by scanning
    /// its bytes as format.md §11.1 describes them.
    fn records(&self, name: &str) -> Vec<(Address, u64, u64)> {
        let bytes = fs::read(self.file(name, "pack")).unwrap();
        let mut at = 8usize;
        let mut out = Vec::new();
        while at < bytes.len() {
            let address = Address::from_slice(&bytes[at + 1..at + 33]).unwrap();
            let stored = u32::from_le_bytes(bytes[at + 38..at + 42].try_into().unwrap()) as usize;
            out.push((address, at as u64, (42 + stored) as u64));
            at += 42 + stored;
        }
        out
    }

    fn findings(&self) -> Vec<(String, FindingKind)> {
        let store = PackStore::open(self.path()).unwrap();
        let files = store.files().unwrap();
        let mut found: Vec<(String, FindingKind)> = files
            .findings()
            .unwrap()
            .into_iter()
            .map(|f| (f.file, f.kind))
            .collect();
        found.sort();
        found
    }

    fn repair(&self) -> Vec<String> {
        let store = PackStore::open_with(self.path(), PackOptions::default().writer(true)).unwrap();
        let files = store.files().unwrap();
        let none = BTreeSet::new();
        files.repair(&none, &none).unwrap().actions
    }

    fn all(&self) -> BTreeSet<Address> {
        self.chunks.iter().map(|(a, _)| *a).collect()
    }
}

#[test]
fn appended_bytes_are_ignored_reported_and_dropped_by_a_repair() {
    let fixture = Fixture::new();
    let name = &fixture.packs()[0];
    let path = fixture.file(name, "pack");
    let before = fs::read(&path).unwrap();
    let mut bytes = before.clone();
    bytes.extend_from_slice(b"\xc5 appended garbage");
    fs::write(&path, &bytes).unwrap();
    assert_eq!(fixture.readable().0, fixture.all());
    assert_eq!(
        fixture.findings(),
        vec![(format!("packs/{name}.pack"), FindingKind::TrailingBytes)]
    );
    let actions = fixture.repair();
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(
        fs::read(&path).unwrap(),
        before,
        "the same records, the same name"
    );
    assert!(fixture.findings().is_empty());
    assert_eq!(fixture.readable().0, fixture.all());
}

#[test]
fn a_cut_pack_loses_only_the_records_past_the_cut() {
    let fixture = Fixture::new();
    let name = &fixture.packs()[0];
    let records = fixture.records(name);
    let path = fixture.file(name, "pack");
    let bytes = fs::read(&path).unwrap();
    for cut in [bytes.len() as u64 - 1, records[300].1 + 20, records[1].1, 9] {
        fs::write(&path, &bytes[..usize::try_from(cut).unwrap()]).unwrap();
        let lost: BTreeSet<Address> = records
            .iter()
            .filter(|(_, offset, len)| offset + len > cut)
            .map(|(address, _, _)| *address)
            .collect();
        let (good, errors) = fixture.readable();
        let expected: BTreeSet<Address> = fixture.all().difference(&lost).copied().collect();
        assert_eq!(good, expected, "cut at {cut}");
        assert_eq!(errors.len(), lost.len());
        for error in &errors {
            assert!(error.contains(&format!("packs/{name}.pack")), "{error}");
            assert!(error.contains("cut short"), "{error}");
        }
        assert_eq!(
            fixture.findings(),
            vec![(format!("packs/{name}.pack"), FindingKind::CutShort)]
        );
    }
    fs::write(&path, &bytes).unwrap();
}

#[test]
fn a_missing_or_damaged_index_loses_nothing_and_a_repair_rebuilds_it() {
    let fixture = Fixture::new();
    let name = &fixture.packs()[0];
    let index = fixture.file(name, "idx");
    let good = fs::read(&index).unwrap();
    let flips = [3usize, 20, 1000, 3095, 3100 + 44 * 17 + 5, good.len() - 1];
    for damage in 0..=flips.len() {
        match flips.get(damage) {
            Some(&at) => {
                let mut bytes = good.clone();
                bytes[at] ^= 0x40;
                fs::write(&index, &bytes).unwrap();
            }
            None => fs::remove_file(&index).unwrap(),
        }
        assert_eq!(fixture.readable().0, fixture.all(), "damage {damage}");
        let kind = match flips.get(damage) {
            Some(_) => FindingKind::IndexDamaged,
            None => FindingKind::IndexMissing,
        };
        assert_eq!(
            fixture.findings(),
            vec![(format!("packs/{name}.idx"), kind)]
        );
        fixture.repair();
        assert_eq!(
            fs::read(&index).unwrap(),
            good,
            "the index is written again"
        );
        assert!(fixture.findings().is_empty());
    }
}

/// Bytes of an index header and of one entry (format.md §11.2).
const INDEX_HEADER_BYTES: usize = 3100;
const INDEX_ENTRY_BYTES: usize = 44;

/// Reads search a whole index's entries before checking their bucket's sum; a flip in any
/// byte of an entry (its address, offset or length) must still lose nothing and give no
/// wrong data: a record found through it fails its checks and the checked lookup follows,
/// and an entry hidden by it is looked up again through checked buckets.
#[test]
fn a_flip_in_any_byte_of_an_index_entry_loses_nothing() {
    let fixture = Fixture::new();
    let name = &fixture.packs()[0];
    let index = fixture.file(name, "idx");
    let good = fs::read(&index).unwrap();
    let entries = (good.len() - INDEX_HEADER_BYTES) / INDEX_ENTRY_BYTES;
    for entry in [0, 17, entries - 1] {
        let start = INDEX_HEADER_BYTES + entry * INDEX_ENTRY_BYTES;
        for at in start..start + INDEX_ENTRY_BYTES {
            let mut bytes = good.clone();
            bytes[at] ^= 0x10;
            fs::write(&index, &bytes).unwrap();
            let (readable, errors) = fixture.readable();
            assert_eq!(
                readable,
                fixture.all(),
                "entry {entry}, byte {at}: {errors:?}"
            );
            // The batched read too (records grouped by pack and read together).
            let store = PackStore::open(fixture.path()).unwrap();
            let addresses: Vec<Address> = fixture.chunks.iter().map(|(a, _)| *a).collect();
            let read = store.get_many(&addresses).unwrap();
            for ((address, bytes), chunk) in fixture.chunks.iter().zip(read) {
                assert_eq!(
                    &*chunk,
                    bytes.as_slice(),
                    "entry {entry}, byte {at}: {address}"
                );
            }
        }
    }
}

#[test]
fn a_missing_pack_loses_its_own_records_and_is_named() {
    let fixture = Fixture::new();
    let packs = fixture.packs();
    let lost: BTreeSet<Address> = fixture
        .records(&packs[1])
        .iter()
        .map(|(address, _, _)| *address)
        .collect();
    fs::remove_file(fixture.file(&packs[1], "pack")).unwrap();
    let (good, errors) = fixture.readable();
    assert_eq!(good, fixture.all().difference(&lost).copied().collect());
    assert_eq!(errors.len(), lost.len());
    for error in &errors {
        assert!(
            error.contains(&format!("packs/{}.pack is missing", packs[1])),
            "{error}"
        );
    }
    assert_eq!(
        fixture.findings(),
        vec![(format!("packs/{}.pack", packs[1]), FindingKind::PackMissing)]
    );
    // Its chunks are still needed: a repair keeps it listed.
    let store = PackStore::open_with(fixture.path(), PackOptions::default().writer(true)).unwrap();
    let report = store.files().unwrap().repair(&lost, &lost).unwrap();
    assert!(
        report.actions[0].starts_with("kept"),
        "{:?}",
        report.actions
    );
    drop(store);
    assert_eq!(fixture.packs().len(), 2);
    // Once nothing needs it, it leaves the manifest.
    fixture.repair();
    assert_eq!(fixture.packs(), vec![packs[0].clone()]);
    assert!(fixture.findings().is_empty());
}

#[test]
fn a_damaged_record_is_dropped_only_when_read_elsewhere() {
    let fixture = Fixture::new();
    let name = &fixture.packs()[0];
    let records = fixture.records(name);
    let path = fixture.file(name, "pack");
    let mut bytes = fs::read(&path).unwrap();
    let (victim, offset, _) = records[42];
    bytes[usize::try_from(offset).unwrap() + 45] ^= 0x08;
    fs::write(&path, &bytes).unwrap();
    let (good, errors) = fixture.readable();
    assert_eq!(good.len(), fixture.chunks.len() - 1);
    assert!(errors[0].contains(&format!(
        "in pack file packs/{name}.pack at offset {offset}"
    )));
    let damaged = BTreeSet::from([victim]);
    let store = PackStore::open_with(fixture.path(), PackOptions::default().writer(true)).unwrap();
    let files = store.files().unwrap();
    let kept = files.repair(&damaged, &damaged).unwrap();
    assert!(kept.actions[0].starts_with("kept"), "{:?}", kept.actions);
    // Fetched again from elsewhere, it is read from the new copy, and the pack rewritten.
    let original = &fixture.chunks.iter().find(|(a, _)| *a == victim).unwrap().1;
    files.put_over_damage(&[(victim, original)]).unwrap();
    assert_eq!(&*store.get(&victim).unwrap(), original.as_slice());
    let rewrote = files.repair(&damaged, &BTreeSet::new()).unwrap();
    assert!(
        rewrote.actions[0].starts_with("rewrote"),
        "{:?}",
        rewrote.actions
    );
    drop(store);
    assert_eq!(fixture.readable().0, fixture.all());
    assert!(fixture.findings().is_empty());
}

#[test]
fn the_next_writer_deletes_unlisted_pack_files() {
    let fixture = Fixture::new();
    let packs = fixture.packs();
    let stray = "0123456789abcdef0123456789abcdef";
    fs::copy(fixture.file(&packs[0], "pack"), fixture.file(stray, "pack")).unwrap();
    fs::copy(fixture.file(&packs[0], "idx"), fixture.file(stray, "idx")).unwrap();
    let unknown = fixture.path().join("packs").join("notes.txt");
    fs::write(&unknown, "not a pack").unwrap();
    assert_eq!(
        fixture.findings(),
        vec![
            (format!("packs/{stray}.idx"), FindingKind::Unlisted),
            (format!("packs/{stray}.pack"), FindingKind::Unlisted),
            ("packs/notes.txt".to_string(), FindingKind::Unlisted),
        ]
    );
    // A reader deletes nothing.
    PackStore::open(fixture.path()).unwrap();
    assert!(fixture.file(stray, "pack").exists());
    let writer = PackStore::open_with(fixture.path(), PackOptions::default().writer(true)).unwrap();
    assert!(!fixture.file(stray, "pack").exists());
    assert!(!fixture.file(stray, "idx").exists());
    assert!(unknown.exists(), "only pack files are deleted");
    drop(writer);
    assert_eq!(fixture.readable().0, fixture.all());
}

#[test]
fn a_damaged_manifest_is_named_relative_to_the_store() {
    let fixture = Fixture::new();
    let manifest = fixture.path().join("manifest");
    let mut bytes = fs::read(&manifest).unwrap();
    bytes[20] ^= 0x01;
    fs::write(&manifest, &bytes).unwrap();
    let error = PackStore::open(fixture.path()).unwrap_err();
    assert!(matches!(error, StoreError::CorruptedEntry { .. }));
    assert!(
        error
            .to_string()
            .starts_with("corrupted manifest file `manifest`: "),
        "{error}"
    );
}
