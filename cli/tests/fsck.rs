//! Guards `rnt fsck [--repair [--from REMOTE]]`: it reads exactly the chunks gc keeps, exit
//! 0 on a clean store and 3 naming each damaged chunk with its file, refs and states;
//! bytes appended to a pack, a missing index and unlisted files are reported beside,
//! without failing; `--repair` drops the appended bytes, rebuilds the index, and with
//! `--from` fetches damaged and missing chunks from a clean remote until the store is
//! clean and verifies.

mod common;

use common::{Shop, SHOP};
use serde_json::Value;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// A store with a view, history on two branches, a tag, and a remote `origin` holding a
/// clone of it (fetched, so remote-tracking refs exist).
fn shop_with_remote() -> (Shop, Shop) {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        &format!("{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n"),
    );
    shop.ok(&["define", "p.rnt"]);
    let mut csv = String::from("id,customer,amount\n");
    for id in 0..2_000 {
        let _ = writeln!(csv, "{id},{},{}", id % 40, (id * 37) % 1000);
    }
    shop.write("orders.csv", &csv);
    shop.ok(&["import", "orders", "orders.csv", "-m", "load"]);
    shop.ok(&["tag", "loaded"]);
    shop.ok(&["branch", "side"]);
    for round in 0..3 {
        let id = 5_000 + round;
        shop.commit(
            &format!("round {round}"),
            &[&format!("+orders({id}, 1, 5)")],
        );
    }
    let remote = Shop::bare();
    let remote_store = remote.dir().join("store");
    shop.ok(&[
        "clone",
        shop.store().to_str().unwrap(),
        remote_store.to_str().unwrap(),
    ]);
    shop.ok(&["remote", "add", "origin", remote_store.to_str().unwrap()]);
    shop.ok(&["fetch", "origin"]);
    (shop, remote)
}

fn fsck_json(shop: &Shop, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["fsck", "--format", "json"];
    all.extend_from_slice(args);
    let run = shop.run(&all);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    (run.code, json)
}

/// The pack files' paths, and `packs/NAME.pack` as the manifest lists them, oldest first.
fn listed_packs(store: &Path) -> Vec<(String, u64)> {
    fs::read_to_string(store.join("manifest"))
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            (fields[0] == "pack").then(|| (fields[1].to_string(), fields[2].parse().unwrap()))
        })
        .collect()
}

/// The pack file holding the record of chunk `hex`, and the record's offset.
fn find_record(store: &Path, hex: &str) -> (PathBuf, usize) {
    let mut needle = vec![0xc5u8];
    needle.extend((0..32).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()));
    for (name, _) in listed_packs(store) {
        let path = store.join("packs").join(format!("{name}.pack"));
        let bytes = fs::read(&path).unwrap();
        if let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) {
            return (path, at);
        }
    }
    panic!("no record of {hex}");
}

fn flip(path: &Path, at: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[at] ^= 0x10;
    fs::write(path, bytes).unwrap();
}

#[test]
fn a_clean_store_reads_exactly_the_chunks_gc_keeps() {
    let (shop, _remote) = shop_with_remote();
    let gc: Value = serde_json::from_str(&shop.ok(&["gc", "--format", "json"])).unwrap();
    let (code, json) = fsck_json(&shop, &[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["clean"], true);
    assert_eq!(json["chunks"], gc["chunks_kept"], "{json}");
    assert_eq!(json["damaged"], Value::Array(vec![]));
    assert_eq!(json["files"], Value::Array(vec![]));
    assert_eq!(json["repair"], Value::Null);
    // Two branches, a tag, the remote and its two tracking refs (HEAD is `main`: no ref).
    assert_eq!(json["refs"], 6, "{json}");
    let text = shop.ok(&["fsck"]);
    assert!(
        text.starts_with(&format!("checked {} chunks (", gc["chunks_kept"])),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("reached by 6 refs: all good"),
        "{text}"
    );
    let err = shop.fails(&["fsck", "--from", "origin"], 1);
    assert!(err.contains("--repair"), "{err}");
}

#[test]
fn a_damaged_node_is_named_with_its_file_refs_and_states() {
    let (shop, _remote) = shop_with_remote();
    let status = shop.status();
    let orders = status["relations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "orders")
        .unwrap();
    let root = orders["root"].as_str().unwrap().to_string();
    let (pack, at) = find_record(&shop.store(), &root);
    flip(&pack, at + 50);
    let (code, json) = fsck_json(&shop, &[]);
    assert_eq!(code, 3, "{json}");
    assert_eq!(json["clean"], false);
    let damaged = json["damaged"].as_array().unwrap();
    assert_eq!(damaged.len(), 1, "{json}");
    let chunk = &damaged[0];
    assert_eq!(chunk["chunk"], root.as_str());
    assert_eq!(chunk["missing"], false);
    let pack_name = pack.file_name().unwrap().to_str().unwrap();
    assert_eq!(chunk["file"], format!("packs/{pack_name}").as_str());
    assert_eq!(chunk["offset"], at);
    let refs: Vec<&str> = chunk["refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    // The branch `side` and the tag stay at the import, whose state holds fewer orders.
    assert_eq!(refs, ["heads/main", "remotes/origin/main"], "{json}");
    let head_state = status["state"].as_str().unwrap();
    let states: Vec<&str> = chunk["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        [head_state],
        "only the head's state holds this root"
    );
    let run = shop.run(&["fsck"]);
    assert_eq!(run.code, 3);
    assert!(
        run.stdout.contains(&format!(
            "damaged chunk {root}: in pack file packs/{pack_name} at offset {at}"
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("  reached by refs: "), "{}", run.stdout);
    assert!(
        run.stdout
            .contains(&format!("  in states: {}", &head_state[..12])),
        "{}",
        run.stdout
    );
    common::assert_one_line_error(
        &run.stderr,
        &["fsck found 1 damaged chunk", "--repair --from"],
    );
    // An older state never reaches it.
    shop.ok(&["verify", "--at", "loaded"]);
}

#[test]
fn repair_from_a_clean_remote_restores_a_verified_store() {
    let (shop, _remote) = shop_with_remote();
    let head = shop.head().unwrap();
    let (pack, at) = find_record(&shop.store(), &head);
    flip(&pack, at + 45);
    shop.fails(&["verify"], 3);
    let without = shop.run(&["fsck", "--repair"]);
    assert_eq!(without.code, 3, "{without:?}");
    assert!(
        without.stdout.contains("repair: kept"),
        "{}",
        without.stdout
    );
    let (code, json) = fsck_json(&shop, &["--repair", "--from", "origin"]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["repair"]["fetched"], 1, "{json}");
    assert_eq!(json["clean"], true);
    assert_eq!(json["files"], Value::Array(vec![]), "{json}");
    shop.ok(&["verify"]);
    assert_eq!(shop.head().unwrap(), head);
    let text = shop.ok(&["fsck"]);
    assert!(text.contains("all good"), "{text}");
}

#[test]
fn a_deleted_pack_is_fetched_back_and_dropped() {
    let (shop, _remote) = shop_with_remote();
    let packs = listed_packs(&shop.store());
    assert!(packs.len() >= 2, "{packs:?}");
    // Not a pack holding a ref's own record (the remote's, or a branch's newest reflog
    // entry): those do not travel, so no remote can give them back.
    let manifest = fs::read_to_string(shop.store().join("manifest")).unwrap();
    let holding: Vec<PathBuf> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("ref "))
        .map(|rest| find_record(&shop.store(), rest.split(' ').nth(1).unwrap()).0)
        .collect();
    let (victim, _) = packs
        .iter()
        .find(|(name, _)| {
            !holding
                .iter()
                .any(|path| path.ends_with(format!("{name}.pack")))
        })
        .unwrap()
        .clone();
    fs::remove_file(shop.store().join("packs").join(format!("{victim}.pack"))).unwrap();
    let (code, json) = fsck_json(&shop, &[]);
    assert_eq!(code, 3, "{json}");
    for chunk in json["damaged"].as_array().unwrap() {
        assert_eq!(
            chunk["file"],
            format!("packs/{victim}.pack").as_str(),
            "{chunk}"
        );
        assert!(
            chunk["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("packs/{victim}.pack is missing")),
            "{chunk}"
        );
    }
    assert_eq!(json["files"][0]["kind"], "pack-missing", "{json}");
    let (code, json) = fsck_json(&shop, &["--repair", "--from", "origin"]);
    assert_eq!(code, 0, "{json}");
    assert!(json["repair"]["fetched"].as_u64().unwrap() >= 1);
    assert!(!listed_packs(&shop.store())
        .iter()
        .any(|(name, _)| *name == victim));
    shop.ok(&["verify"]);
}

#[test]
fn appended_bytes_and_a_missing_index_are_reported_and_repaired() {
    let (shop, _remote) = shop_with_remote();
    let packs = listed_packs(&shop.store());
    let (first, bytes) = packs[0].clone();
    let pack = shop.store().join("packs").join(format!("{first}.pack"));
    let mut content = fs::read(&pack).unwrap();
    content.extend_from_slice(&[0xc5; 17]);
    fs::write(&pack, &content).unwrap();
    let (last, _) = packs.last().unwrap().clone();
    let index = shop.store().join("packs").join(format!("{last}.idx"));
    fs::remove_file(&index).unwrap();
    let before = shop.ok(&["show", "orders", "--format", "csv"]);
    let (code, json) = fsck_json(&shop, &[]);
    assert_eq!(code, 0, "reachable chunks all read: {json}");
    let kinds: Vec<(&str, &str)> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap(), f["kind"].as_str().unwrap()))
        .collect();
    let trailing = format!("packs/{first}.pack");
    let missing = format!("packs/{last}.idx");
    assert!(
        kinds.contains(&(trailing.as_str(), "trailing-bytes")),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(missing.as_str(), "index-missing")),
        "{kinds:?}"
    );
    let text = shop.ok(&["fsck"]);
    assert!(
        text.contains(&format!(
            "file packs/{first}.pack: 17 bytes after the last record"
        )),
        "{text}"
    );
    let (code, json) = fsck_json(&shop, &["--repair"]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["files"], Value::Array(vec![]), "{json}");
    assert_eq!(
        fs::metadata(&pack).unwrap().len(),
        bytes,
        "the appended bytes are gone"
    );
    assert!(index.exists(), "the index is written again");
    assert_eq!(shop.ok(&["show", "orders", "--format", "csv"]), before);
    shop.ok(&["verify"]);
}
