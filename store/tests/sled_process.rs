//! Guards `SledStore` across processes: a second process waits for the store, then fails
//! with `Locked`; a process killed in the middle of commits leaves a complete, readable head.
//!
//! The other process is this test binary run again on one `#[ignore]`d helper test, with
//! the store folder in an environment variable.

use rnt_store::{commit_ref, Address, ChunkStore, SledOptions, SledStore, StoreError};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Names the store folder for a helper test running as a child process.
const CHILD_DIR_ENV: &str = "RNT_STORE_TEST_CHILD_DIR";

/// Printed by the holder once it has the store open and a commit made.
const READY: &str = "RNT-CHILD-READY";

/// Printed by the committer after each durable commit, followed by its number.
const DURABLE: &str = "RNT-CHILD-DURABLE";

/// Durable commits the parent waits for before it kills the committer.
const COMMITS_BEFORE_KILL: u64 = 40;

/// Runs helper test `name` of this binary in a child process on store folder `dir`.
fn spawn_helper(name: &str, dir: &Path) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR_ENV, dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdout)
}

/// Reads the child's output until a line holding `marker`; returns what follows it.
fn wait_for(stdout: &mut BufReader<ChildStdout>, marker: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let read = stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "the child exited before printing {marker}");
        if let Some(at) = line.find(marker) {
            return line[at + marker.len()..].trim().to_string();
        }
    }
}

/// The store folder, when this process is a helper child.
fn child_dir() -> Option<std::path::PathBuf> {
    std::env::var_os(CHILD_DIR_ENV).map(Into::into)
}

// ----------------------------------------------------------------------------------------
// Helpers run as child processes

/// Opens the store, makes a commit, and holds the store until stdin closes.
#[test]
#[ignore = "helper: run in a child process by another_process_waits_then_reports_locked"]
fn helper_hold_store() {
    let Some(dir) = child_dir() else { return };
    let store = SledStore::open(&dir).unwrap();
    let address = store.put(b"from the child").unwrap();
    commit_ref(&store, "HEAD", None, Some(address)).unwrap();
    println!("{READY}");
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest).unwrap();
    drop(store);
}

/// Makes commits until killed: each commit is a batch of data chunks plus a commit chunk
/// naming them and its parent, published by `commit_ref`.
#[test]
#[ignore = "helper: run in a child process by killed_process_leaves_a_complete_head"]
fn helper_commit_until_killed() {
    let Some(dir) = child_dir() else { return };
    let store = SledStore::open(&dir).unwrap();
    let mut parent: Option<Address> = None;
    for number in 0..1_000_000u64 {
        let data: Vec<Vec<u8>> = (0..4)
            .map(|i| format!("data {number}.{i} {}", "x".repeat(100 * i)).into_bytes())
            .collect();
        let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let data_addresses = store.put_batch(&slices).unwrap();
        let commit = encode_commit(number, parent, &data_addresses);
        let address = store.put(commit.as_bytes()).unwrap();
        commit_ref(&store, "HEAD", parent, Some(address)).unwrap();
        // Only now is the commit durable; the parent kills at any moment after this line.
        println!("{DURABLE} {number}");
        parent = Some(address);
    }
}

fn encode_commit(number: u64, parent: Option<Address>, data: &[Address]) -> String {
    let parent = parent.map_or("none".to_string(), |a| a.to_hex());
    let data: Vec<String> = data.iter().map(Address::to_hex).collect();
    format!(
        "commit {number}\nparent {parent}\ndata {}\n",
        data.join(" ")
    )
}

/// Reads a commit chunk: its number, parent and data addresses.
fn decode_commit(bytes: &[u8]) -> (u64, Option<Address>, Vec<Address>) {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut lines = text.lines();
    let number = lines
        .next()
        .unwrap()
        .strip_prefix("commit ")
        .unwrap()
        .parse()
        .unwrap();
    let parent = match lines.next().unwrap().strip_prefix("parent ").unwrap() {
        "none" => None,
        hex => Some(Address::from_hex(hex).unwrap()),
    };
    let data = lines
        .next()
        .unwrap()
        .strip_prefix("data ")
        .unwrap()
        .split(' ')
        .map(|hex| Address::from_hex(hex).unwrap())
        .collect();
    (number, parent, data)
}

// ----------------------------------------------------------------------------------------
// Tests

#[test]
fn another_process_waits_then_reports_locked() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut stdout) = spawn_helper("helper_hold_store", dir.path());
    wait_for(&mut stdout, READY);

    // What sled 0.34.7 itself does: it fails at once with an I/O error of kind `Other`
    // that wraps the `WouldBlock` from `flock`. `SledStore` relies on that message.
    let raw = sled::Config::new().path(dir.path()).open();
    match raw {
        Err(sled::Error::Io(e)) => {
            let message = e.to_string();
            eprintln!("sled 0.34.7 on a second open: {message}");
            assert_eq!(e.kind(), std::io::ErrorKind::Other, "{message}");
            assert!(message.contains("could not acquire lock"), "{message}");
            assert!(message.contains("WouldBlock"), "{message}");
        }
        Err(other) => panic!("sled failed in an unexpected way: {other:?}"),
        Ok(_) => panic!("sled opened a database another process holds"),
    }

    // `SledStore` waits for `lock_wait`, then reports `Locked`.
    let lock_wait = Duration::from_millis(300);
    let started = Instant::now();
    let error = SledStore::open_with(dir.path(), SledOptions::default().with_lock_wait(lock_wait))
        .unwrap_err();
    assert!(started.elapsed() >= lock_wait);
    match &error {
        StoreError::Locked { path, waited_ms } => {
            assert_eq!(path, &dir.path().display().to_string());
            assert!(*waited_ms >= 300, "{waited_ms}");
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    assert!(
        error.to_string().contains("in use by another process"),
        "{error}"
    );

    // With a long wait, opening succeeds as soon as the other process lets go.
    let release_after = Duration::from_millis(300);
    let opener = std::thread::spawn({
        let dir = dir.path().to_path_buf();
        move || {
            let started = Instant::now();
            let store = SledStore::open_with(
                &dir,
                SledOptions::default().with_lock_wait(Duration::from_secs(60)),
            );
            (store, started.elapsed())
        }
    });
    std::thread::sleep(release_after);
    drop(child.stdin.take()); // the child drops its store and exits
    let (store, waited) = opener.join().unwrap();
    let store = store.unwrap();
    assert!(
        waited >= release_after,
        "opened after {waited:?} while the child held the store"
    );
    assert!(child.wait().unwrap().success());
    let head = store.get_ref("HEAD").unwrap().unwrap();
    assert_eq!(&*store.get(&head).unwrap(), b"from the child");
}

#[test]
fn killed_process_leaves_a_complete_head() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut stdout) = spawn_helper("helper_commit_until_killed", dir.path());
    let mut last_durable = 0;
    while last_durable < COMMITS_BEFORE_KILL {
        last_durable = wait_for(&mut stdout, DURABLE).parse().unwrap();
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no final flush
    assert!(!child.wait().unwrap().success());

    // The head is the last commit reported durable or a later one, and its whole history
    // reads back (every get re-hashes the chunk).
    let store = SledStore::open(dir.path()).unwrap();
    let head = store
        .get_ref("HEAD")
        .unwrap()
        .expect("HEAD survives the kill");
    let (head_number, _, _) = decode_commit(&store.get(&head).unwrap());
    assert!(
        head_number >= last_durable,
        "head {head_number} is older than durable commit {last_durable}"
    );
    let mut next = Some(head);
    let mut expected_number = head_number + 1;
    while let Some(address) = next {
        let (number, parent, data) = decode_commit(&store.get(&address).unwrap());
        assert_eq!(number + 1, expected_number, "history skips a commit");
        for chunk in data {
            store.get(&chunk).unwrap();
        }
        expected_number = number;
        next = parent;
    }
    assert_eq!(expected_number, 0, "history ends at commit 0");
}
