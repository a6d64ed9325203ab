//! Guards that damage stays confined and that `rnt fsck` finds all of it: each trial copies
//! a store, damages one pack file or index one way (a flipped byte, a zeroed run, bytes
//! appended, the tail cut off, the index deleted or damaged, the pack deleted), and then
//! - every chunk whose record bytes the damage did not touch still reads back, and no
//!   chunk reads back wrong (chunks are read in-process, one by one);
//! - `rnt fsck` names exactly the unreadable chunks a walk from the refs meets (computed
//!   here from the undamaged store's graph: a walk stops at a chunk it cannot read), exit
//!   3 when there is one and 0 otherwise;
//! - `rnt fsck --repair --from origin` (a clean clone) leaves a store that `fsck` finds
//!   clean, with no file finding left, that verifies and shows the same data — cutting
//!   the reflog at a damaged entry (reflogs do not travel) — unless the damage hit what
//!   no repair can mend: the remote's own record (which names the remote) or a branch's
//!   newest record (which names its commit); then it exits 3.
//!
//! 14 trials by default (two of each kind); `RNT_FSCK_TRIALS=N` runs N.

mod common;

use common::{Rng, Shop, SHOP};
use rnt_merkle::objects::{object_kind, BranchRecord, Commit, ObjectKind, State};
use rnt_merkle::Node;
use rnt_store::{Address, ChunkStore, PackStore};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// Trials per default run.
const TRIALS_DEFAULT: usize = 14;

/// The kinds of damage, in turn.
const KINDS: [&str; 7] = [
    "flip",
    "zero",
    "append",
    "cut tail",
    "delete index",
    "damage index",
    "delete pack",
];

/// One record of a pack: its chunk, offset and length.
type Record = (Address, u64, u64);

/// The undamaged store and what is known of it.
struct Pristine {
    shop: Shop,
    /// Keeps the remote's folder alive.
    _remote: Shop,
    /// Each listed pack's records, in file order.
    packs: BTreeMap<String, Vec<Record>>,
    /// The refs' targets, and the remote record's address.
    roots: Vec<Address>,
    remote_record: Address,
    /// What each reachable chunk names.
    children: HashMap<Address, Vec<Address>>,
    /// The reachable chunks the remote holds too.
    on_remote: BTreeSet<Address>,
    /// The reachable branch records (reflog entries), and the refs' targets among them.
    records: BTreeSet<Address>,
    heads: BTreeSet<Address>,
    orders: String,
}

fn build() -> Pristine {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        &format!("{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n"),
    );
    shop.ok(&["define", "p.rnt"]);
    let mut csv = String::from("id,customer,amount\n");
    for id in 0..3_000 {
        let _ = writeln!(csv, "{id},{},{}", id % 50, (id * 37) % 1000);
    }
    shop.write("orders.csv", &csv);
    shop.ok(&["import", "orders", "orders.csv", "-m", "load"]);
    for round in 0..4 {
        let changes: Vec<String> = (0..10)
            .map(|i| format!("+orders({}, {i}, 5)", 10_000 + round * 10 + i))
            .collect();
        let changes: Vec<&str> = changes.iter().map(String::as_str).collect();
        shop.commit(&format!("round {round}"), &changes);
    }
    let remote = Shop::bare();
    let remote_store = remote.dir().join("store");
    let remote_path = remote_store.to_str().unwrap();
    shop.ok(&["clone", shop.store().to_str().unwrap(), remote_path]);
    shop.ok(&["remote", "add", "origin", remote_path]);
    let store = PackStore::open(&shop.store()).unwrap();
    let packs: BTreeMap<String, Vec<Record>> = store
        .packs()
        .unwrap()
        .into_iter()
        .map(|(name, _, _)| {
            let records = records(&shop.store().join("packs").join(format!("{name}.pack")));
            (name, records)
        })
        .collect();
    assert!(packs.len() >= 2, "several packs to damage: {packs:?}");
    let refs = store.list_refs().unwrap();
    let remote_record = refs
        .iter()
        .find(|(name, _)| name == "remotes/origin")
        .unwrap()
        .1;
    let roots: Vec<Address> = refs.into_iter().map(|(_, address)| address).collect();
    let children = graph(&store, &roots);
    let remote_chunks = PackStore::open(&remote_store.join(".rnt")).unwrap();
    let on_remote = children
        .keys()
        .copied()
        .filter(|a| remote_chunks.contains(a).unwrap())
        .collect();
    let records: BTreeSet<Address> = children
        .keys()
        .copied()
        .filter(|a| object_kind(&store.get(a).unwrap()) == ObjectKind::BranchRecord)
        .collect();
    let heads = roots
        .iter()
        .copied()
        .filter(|a| records.contains(a))
        .collect();
    let orders = shop.ok(&["show", "orders", "--format", "csv"]);
    Pristine {
        shop,
        _remote: remote,
        packs,
        roots,
        remote_record,
        children,
        on_remote,
        records,
        heads,
        orders,
    }
}

/// A pack file's records, read as `docs/format.md` §11.1 describes them.
fn records(pack: &Path) -> Vec<Record> {
    let bytes = fs::read(pack).unwrap();
    let mut at = 8usize;
    let mut out = Vec::new();
    while at < bytes.len() {
        assert_eq!(bytes[at], 0xc5, "a record mark at {at}");
        let address = Address::from_slice(&bytes[at + 1..at + 33]).unwrap();
        let stored = u32::from_le_bytes(bytes[at + 38..at + 42].try_into().unwrap()) as usize;
        out.push((address, at as u64, (42 + stored) as u64));
        at += 42 + stored;
    }
    out
}

/// Every chunk the roots reach, with the chunks it names (decoded here, by kind).
fn graph(store: &PackStore, roots: &[Address]) -> HashMap<Address, Vec<Address>> {
    let mut children: HashMap<Address, Vec<Address>> = HashMap::new();
    let mut stack: Vec<(Address, Option<ObjectKind>)> = roots.iter().map(|r| (*r, None)).collect();
    while let Some((address, kind)) = stack.pop() {
        if children.contains_key(&address) {
            continue;
        }
        let bytes = store.get(&address).unwrap();
        let named: Vec<(Address, ObjectKind)> = match kind.unwrap_or_else(|| object_kind(&bytes)) {
            ObjectKind::BranchRecord => {
                let record = BranchRecord::decode(&address, &bytes).unwrap();
                let mut named = vec![(record.commit_address(), ObjectKind::Commit)];
                named.extend(
                    record
                        .previous_address()
                        .map(|p| (p, ObjectKind::BranchRecord)),
                );
                named
            }
            ObjectKind::Commit => {
                let commit = Commit::decode(&address, &bytes).unwrap();
                let mut named = vec![(commit.state_address(), ObjectKind::State)];
                named.extend(
                    commit
                        .parent_addresses()
                        .into_iter()
                        .map(|p| (p, ObjectKind::Commit)),
                );
                named
            }
            ObjectKind::State => {
                let state = State::decode(&address, &bytes).unwrap();
                let mut named = Vec::new();
                for relation in &state.relations {
                    named.extend(
                        relation
                            .root
                            .map(|r| (Address::from_bytes(r), ObjectKind::Node)),
                    );
                    named.extend(
                        relation
                            .aux
                            .iter()
                            .map(|a| (Address::from_bytes(a.root), ObjectKind::Node)),
                    );
                }
                named
            }
            ObjectKind::Node => {
                let node = Node::decode(address, bytes).unwrap();
                match node.is_leaf() {
                    true => Vec::new(),
                    false => (0..node.len())
                        .map(|i| (node.child(i).address, ObjectKind::Node))
                        .collect(),
                }
            }
            _ => Vec::new(),
        };
        children.insert(address, named.iter().map(|(a, _)| *a).collect());
        stack.extend(named.into_iter().map(|(a, k)| (a, Some(k))));
    }
    children
}

/// The unreadable chunks a walk from the roots meets (it stops at each).
fn met(pristine: &Pristine, unreadable: &BTreeSet<Address>) -> BTreeSet<Address> {
    let mut seen = BTreeSet::new();
    let mut found = BTreeSet::new();
    let mut stack = pristine.roots.clone();
    while let Some(address) = stack.pop() {
        if !seen.insert(address) {
            continue;
        }
        if unreadable.contains(&address) {
            found.insert(address);
        } else {
            stack.extend(pristine.children[&address].iter().copied());
        }
    }
    found
}

/// Damages one file of `store` as `kind` says; returns what was done and the chunks whose
/// record bytes changed or went.
fn damage(
    store: &Path,
    pristine: &Pristine,
    kind: &str,
    rng: &mut Rng,
) -> (String, BTreeSet<Address>) {
    // A pack chosen by its share of the bytes: damage lands anywhere in the files alike.
    let sizes: Vec<(&String, u64)> = pristine
        .packs
        .iter()
        .map(|(name, records)| (name, records.last().map_or(8, |r| r.1 + r.2)))
        .collect();
    let mut at = rng.below(sizes.iter().map(|s| s.1).sum());
    let name = sizes
        .iter()
        .find(|(_, size)| {
            let here = at < *size;
            at = at.saturating_sub(*size);
            here
        })
        .unwrap()
        .0;
    let records = &pristine.packs[name];
    let pack = store.join("packs").join(format!("{name}.pack"));
    let index = store.join("packs").join(format!("{name}.idx"));
    let mut bytes = fs::read(&pack).unwrap();
    let len = bytes.len() as u64;
    let overlapping = |from: u64, to: u64| -> BTreeSet<Address> {
        records
            .iter()
            .filter(|(_, o, l)| *o < to && o + l > from)
            .map(|r| r.0)
            .collect()
    };
    let done = match kind {
        "flip" => {
            let at = rng.below(len);
            bytes[us(at)] ^= 1 << rng.below(8);
            fs::write(&pack, &bytes).unwrap();
            (format!("flipped a bit at {at}"), overlapping(at, at + 1))
        }
        "zero" => {
            let at = rng.below(len);
            let run = (1 + rng.below(64)).min(len - at);
            bytes[us(at)..us(at + run)].fill(0);
            fs::write(&pack, &bytes).unwrap();
            (
                format!("zeroed {run} bytes at {at}"),
                overlapping(at, at + run),
            )
        }
        "append" => {
            let extra: Vec<u8> = (0..1 + rng.below(64))
                .map(|_| [0xc5, 0, 7][rng.index(3)])
                .collect();
            bytes.extend_from_slice(&extra);
            fs::write(&pack, &bytes).unwrap();
            (format!("appended {} bytes", extra.len()), BTreeSet::new())
        }
        "cut tail" => {
            let keep = rng.below(len);
            fs::write(&pack, &bytes[..us(keep)]).unwrap();
            (format!("cut to {keep} bytes"), overlapping(keep, u64::MAX))
        }
        "delete index" => {
            fs::remove_file(&index).unwrap();
            ("deleted its index".to_string(), BTreeSet::new())
        }
        "damage index" => {
            let mut index_bytes = fs::read(&index).unwrap();
            let at = rng.index(index_bytes.len());
            if rng.below(2) == 0 {
                index_bytes[at] ^= 1 << rng.below(8);
            } else {
                index_bytes.truncate(at);
            }
            fs::write(&index, &index_bytes).unwrap();
            (format!("damaged its index at {at}"), BTreeSet::new())
        }
        _ => {
            fs::remove_file(&pack).unwrap();
            (
                "deleted it".to_string(),
                records.iter().map(|r| r.0).collect(),
            )
        }
    };
    (format!("pack {name}: {}", done.0), done.1)
}

/// An offset as an index.
fn us(offset: u64) -> usize {
    usize::try_from(offset).unwrap()
}

fn copy_folder(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `rnt --store STORE args` in the pristine shop's folder.
fn rnt(pristine: &Pristine, store: &Path, args: &[&str]) -> common::Run {
    let mut all = vec!["--store", store.to_str().unwrap()];
    all.extend_from_slice(args);
    pristine.shop.run(&all)
}

fn json_of(run: &common::Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

/// The chunks `fsck --format json` names.
fn named(json: &Value) -> BTreeSet<Address> {
    json["damaged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Address::from_hex(d["chunk"].as_str().unwrap()).unwrap())
        .collect()
}

/// Counts per kind: trials, records touched, touched but still read (another copy, or a
/// change the decoder ignores), chunks fsck named, repairs that left a clean store.
#[derive(Default)]
struct Tally {
    trials: usize,
    touched: usize,
    touched_readable: usize,
    untouched: usize,
    named: usize,
    repaired: usize,
    reflogs_cut: usize,
    beyond_repair: usize,
}

#[test]
fn damage_stays_confined_and_fsck_finds_and_repairs_all_of_it() {
    let trials: usize = std::env::var("RNT_FSCK_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TRIALS_DEFAULT);
    let pristine = build();
    let all: BTreeSet<Address> = pristine.packs.values().flatten().map(|r| r.0).collect();
    let mut rng = Rng(0xf5c4);
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    for trial in 0..trials {
        let kind = KINDS[trial % KINDS.len()];
        let copy = tempfile::tempdir().unwrap();
        let store = copy.path().join("store");
        copy_folder(&pristine.shop.store(), &store);
        let (what, touched) = damage(&store, &pristine, kind, &mut rng);
        let context = format!("trial {trial}, {kind}: {what}");
        let reader = PackStore::open(&store).unwrap();
        let readable: BTreeSet<Address> = all
            .iter()
            .copied()
            .filter(|a| reader.get(a).is_ok())
            .collect();
        drop(reader);
        let unreadable: BTreeSet<Address> = all.difference(&readable).copied().collect();
        assert!(
            unreadable.is_subset(&touched),
            "{context}: untouched chunks lost: {:?}",
            unreadable.difference(&touched).collect::<Vec<_>>()
        );
        let tally = tallies.entry(kind).or_default();
        tally.trials += 1;
        tally.touched += touched.len();
        tally.touched_readable += touched.intersection(&readable).count();
        tally.untouched += all.len() - touched.len();
        let run = rnt(&pristine, &store, &["fsck", "--format", "json"]);
        let json = json_of(&run);
        let expected = met(&pristine, &unreadable);
        assert_eq!(named(&json), expected, "{context}");
        assert_eq!(
            run.code,
            if expected.is_empty() { 0 } else { 3 },
            "{context}: {run:?}"
        );
        tally.named += expected.len();
        let repair = rnt(
            &pristine,
            &store,
            &["fsck", "--repair", "--from", "origin", "--format", "json"],
        );
        let reached: BTreeSet<Address> = unreadable
            .iter()
            .copied()
            .filter(|a| pristine.children.contains_key(a))
            .collect();
        let mendable = |a: &Address| {
            pristine.on_remote.contains(a)
                || (pristine.records.contains(a) && !pristine.heads.contains(a))
        };
        if unreadable.contains(&pristine.remote_record) || !reached.iter().all(mendable) {
            assert_eq!(repair.code, 3, "{context}: beyond repair: {repair:?}");
            tally.beyond_repair += 1;
            continue;
        }
        if repair.stdout.contains("cut the reflog") {
            tally.reflogs_cut += 1;
        }
        assert_eq!(repair.code, 0, "{context}: {repair:?}");
        let after = json_of(&rnt(&pristine, &store, &["fsck", "--format", "json"]));
        assert_eq!(after["clean"], true, "{context}: {after}");
        assert_eq!(after["files"], Value::Array(vec![]), "{context}: {after}");
        let verify = rnt(&pristine, &store, &["verify"]);
        assert_eq!(verify.code, 0, "{context}: {verify:?}");
        let orders = rnt(&pristine, &store, &["show", "orders", "--format", "csv"]);
        assert_eq!(orders.stdout, pristine.orders, "{context}");
        tally.repaired += 1;
    }
    for (kind, t) in &tallies {
        eprintln!(
            "fsck damage, {kind}: {} trials; {} records touched ({} of them still read: another copy or an ignored bit), {} untouched all read; fsck named {}; {} repaired to clean ({} by cutting a reflog), {} beyond repair (the remote's record or a branch's newest record)",
            t.trials, t.touched, t.touched_readable, t.untouched, t.named, t.repaired, t.reflogs_cut, t.beyond_repair
        );
    }
}
