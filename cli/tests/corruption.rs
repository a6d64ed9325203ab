//! Guards what damage to a store's files does: every kind of file (marker, manifest, lock,
//! packs, indexes) is flipped, zeroed, truncated, appended to or deleted at random offsets
//! (`fsck_damage.rs` counts, chunk by chunk, what each kind of damage to a pack loses), and then
//! `status`, `log`, `show`, `verify` and `show --at` an older state each give their
//! correct output or exit 3 naming the damaged object — never a panic, a hang or wrong
//! data. And damage is confined: a damaged chunk does not stop commands on states that
//! never reach it.
//!
//! 48 damaged stores by default; `RNT_CORRUPTION_TRIALS=N` runs N.

mod common;

use common::{Rng, Shop, SHOP};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Damaged stores per default run.
const TRIALS_DEFAULT: usize = 48;

/// A command that runs longer than this on a tiny store is hung.
const COMMAND_TIME_MAX: Duration = Duration::from_secs(20);

/// A store with history: a big import, then small commits (so there are several packs).
fn build_store() -> (Shop, String) {
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
    let older = shop.head().unwrap();
    for round in 0..4 {
        let base = 10_000 + round * 10;
        let changes: Vec<String> = (base..base + 10)
            .map(|id| format!("+orders({id}, {}, 5)", id % 50))
            .collect();
        let changes: Vec<&str> = changes.iter().map(String::as_str).collect();
        shop.commit(&format!("round {round}"), &changes);
    }
    (shop, older)
}

/// The commands run on each damaged store.
fn commands(older: &str) -> Vec<Vec<String>> {
    [
        vec!["status", "--format", "json"],
        vec!["log", "--format", "json"],
        vec!["show", "orders", "--format", "csv"],
        vec!["show", "per_customer", "--format", "csv"],
        vec!["verify"],
        vec!["show", "orders", "--at", older, "--format", "csv"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(String::from).collect())
    .collect()
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `rnt --store STORE args`, killing it (and failing) when it hangs.
fn run(store: &Path, args: &[String]) -> Outcome {
    let mut child = std::process::Command::new(common::RNT)
        .arg("--store")
        .arg(store)
        .args(args)
        .env_remove("RNT_LOCK_WAIT_MS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > COMMAND_TIME_MAX {
            let _ = child.kill();
            panic!("`rnt {}` hung on a damaged store", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = child.wait_with_output().unwrap();
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn files_under(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Damages `file` one way, chosen by `rng`; returns what was done.
fn damage(file: &Path, rng: &mut Rng) -> String {
    let mut bytes = std::fs::read(file).unwrap();
    let len = bytes.len();
    match rng.below(5) {
        0 if len > 0 => {
            let at = rng.index(len);
            let flip = 1u8 << rng.below(8);
            bytes[at] ^= flip;
            std::fs::write(file, &bytes).unwrap();
            format!("flipped bit {flip:#04x} at {at}")
        }
        1 if len > 0 => {
            let at = rng.index(len);
            let run = (1 + rng.index(64)).min(len - at);
            bytes[at..at + run].fill(0);
            std::fs::write(file, &bytes).unwrap();
            format!("zeroed {run} bytes at {at}")
        }
        2 => {
            let keep = rng.index(len.max(1));
            std::fs::write(file, &bytes[..keep]).unwrap();
            format!("truncated to {keep} bytes")
        }
        3 => {
            // Bytes appended, record marks among them: a pack reads as before.
            let extra: Vec<u8> = (0..1 + rng.index(64))
                .map(|i| if i % 3 == 0 { 0xc5 } else { 0x2a })
                .collect();
            bytes.extend_from_slice(&extra);
            std::fs::write(file, &bytes).unwrap();
            format!("appended {} bytes", extra.len())
        }
        _ => {
            std::fs::remove_file(file).unwrap();
            "deleted".to_string()
        }
    }
}

#[test]
fn damaged_files_give_correct_output_or_exit_3() {
    let trials: usize = std::env::var("RNT_CORRUPTION_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TRIALS_DEFAULT);
    let (shop, older) = build_store();
    let pristine = shop.store();
    let commands = commands(&older);
    let good: Vec<String> = commands
        .iter()
        .map(|args| {
            let outcome = run(&pristine, args);
            assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
            outcome.stdout
        })
        .collect();
    let files = files_under(&pristine);
    assert!(
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "pack"))
            .count()
            >= 2
    );
    let mut rng = Rng(0xc0ffee);
    let (mut correct, mut refused) = (0, 0);
    for trial in 0..trials {
        let copy = tempfile::tempdir().unwrap();
        let store = copy.path().join("store");
        copy_folder(&pristine, &store);
        // Every kind of file in turn, then a random one of its kind.
        let relative = files[trial % files.len()].strip_prefix(&pristine).unwrap();
        let what = damage(&store.join(relative), &mut rng);
        let context = format!("trial {trial}: {} {what}", relative.display());
        for (args, expected) in commands.iter().zip(&good) {
            let outcome = run(&store, args);
            match outcome.code {
                Some(0) => {
                    assert_eq!(
                        &outcome.stdout,
                        expected,
                        "{context}: `{}` gave wrong data",
                        args.join(" ")
                    );
                    correct += 1;
                }
                Some(3) => {
                    let line = outcome.stderr.lines().next().unwrap_or("");
                    assert!(line.starts_with("error: "), "{context}: {line}");
                    assert!(line.contains("corrupt"), "{context}: {line}");
                    let names_object = line.contains("chunk ")
                        || line.contains("manifest")
                        || line.contains("pack ")
                        || line.contains("marker");
                    assert!(names_object, "{context}: the error names no object: {line}");
                    refused += 1;
                }
                other => panic!(
                    "{context}: `rnt {}` exited {other:?}: {}",
                    args.join(" "),
                    outcome.stderr
                ),
            }
        }
    }
    eprintln!(
        "corruption: {trials} damaged stores, {correct} correct outputs, {refused} exit-3 refusals"
    );
}

/// Finds the record of chunk `address` (hex) in the store's packs: (pack path, offset).
fn find_record(store: &Path, address_hex: &str) -> (PathBuf, usize) {
    let address: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&address_hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut needle = vec![0xc5u8];
    needle.extend_from_slice(&address);
    for file in files_under(store) {
        if file.extension().is_some_and(|e| e == "pack") {
            let bytes = std::fs::read(&file).unwrap();
            if let Some(at) = bytes
                .windows(needle.len())
                .position(|w| w == needle.as_slice())
            {
                return (file, at);
            }
        }
    }
    panic!("no record of {address_hex}");
}

#[test]
fn damage_is_confined_to_the_states_that_reach_it() {
    let (shop, older) = build_store();
    let older_orders = shop.ok(&["show", "orders", "--at", &older, "--format", "csv"]);
    let head = shop.head().unwrap();
    // Damage the head commit's record: its last byte (inside the compressed or raw body).
    let (pack, at) = find_record(&shop.store(), &head);
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[at + 42] ^= 0x20;
    std::fs::write(&pack, &bytes).unwrap();
    for args in [&["status"][..], &["log"], &["show", "orders"], &["verify"]] {
        let err = shop.fails(args, 3);
        assert!(err.contains(&head[..12]), "{err}");
        assert!(err.contains("at offset"), "{err}");
    }
    // An older state never reaches the damaged commit object.
    assert_eq!(
        shop.ok(&["show", "orders", "--at", &older, "--format", "csv"]),
        older_orders
    );
    shop.ok(&["verify", "--at", &older]);
}
