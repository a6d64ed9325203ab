//! CLI output snapshots: every subcommand's table, CSV and JSON output and each error
//! message, pinned as transcripts.
//!
//! Each `tests/transcripts/NAME.t` is a session run in a fresh folder holding the files of
//! `examples/shop/` (and of `tests/transcripts/NAME.in/`, if it exists). A transcript is a
//! list of blocks separated by blank lines:
//!
//! ```text
//! # a comment, kept as written
//! $ rnt commit -m bad '+orders(10, 99, 5)'
//! ! error: denial orphan violated by orphan(10)
//! [exit 2]
//! ```
//!
//! A block's command line is split as a POSIX shell would split single- and double-quoted
//! words (`< FILE` feeds a file to standard input). Standard output follows as written,
//! standard error with `! ` in front of each line, and `[exit N]` closes a block whose
//! command failed. The folder's path prints as `[DIR]`. Commit times are fixed
//! (`RNT_COMMIT_TIME`), so commit ids are too.
//!
//! The test renders each transcript from what the commands really print and compares the
//! whole text; `UPDATE_SNAPSHOTS=1 cargo test -p rnt-cli --test transcripts` rewrites the
//! files instead (review the diff before committing it).

mod common;

use common::split_words;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The fixed commit time of every transcript: 2026-01-01T00:00:00Z.
const COMMIT_TIME: &str = "1767225600";

/// One block of a transcript: its comment lines and its command line.
struct Block {
    comments: Vec<String>,
    command: String,
}

/// The comments and command lines of a transcript; output lines are skipped (they are
/// rendered anew). A block's output ends at a blank line followed by a command, a comment
/// or the end of the file.
fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let starts_block = |line: &str| line.starts_with("$ ") || line.starts_with('#');
    let mut out = Vec::new();
    let mut comments = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with('#') {
            comments.push(line.to_string());
        } else if let Some(command) = line.strip_prefix("$ ") {
            out.push(Block {
                comments: std::mem::take(&mut comments),
                command: command.to_string(),
            });
            // Skip the output: up to a blank line that ends the block.
            while i < lines.len() {
                let end =
                    lines[i].is_empty() && lines.get(i + 1).is_none_or(|next| starts_block(next));
                i += 1;
                if end {
                    break;
                }
            }
        } else {
            assert!(line.is_empty(), "a stray line outside a block: {line:?}");
        }
    }
    assert!(comments.is_empty(), "comments after the last command");
    out
}

fn copy_files(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("a folder entry");
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy an input file");
        }
    }
}

/// Runs one command of a transcript in `dir` and renders its block.
fn run_block(dir: &Path, block: &Block) -> String {
    let (words, stdin) = split_words(&block.command);
    assert_eq!(
        words.first().map(String::as_str),
        Some("rnt"),
        "a transcript runs rnt only: {}",
        block.command
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_rnt"));
    command.args(&words[1..]).current_dir(dir);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RNT_") {
            command.env_remove(key);
        }
    }
    command.env("RNT_COMMIT_TIME", COMMIT_TIME);
    command.stdin(match &stdin {
        Some(file) => Stdio::from(std::fs::File::open(dir.join(file)).expect("a stdin file")),
        None => Stdio::null(),
    });
    let output = command.output().expect("run rnt");
    let dir_text = dir.display().to_string();
    let clean = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&dir_text, "[DIR]");
    let mut text = String::new();
    for comment in &block.comments {
        text.push_str(comment);
        text.push('\n');
    }
    text.push_str(&format!("$ {}\n", block.command));
    let stdout = clean(&output.stdout);
    text.push_str(&stdout);
    if !stdout.is_empty() && !stdout.ends_with('\n') {
        text.push_str("\n[no newline at the end]\n");
    }
    for line in clean(&output.stderr).lines() {
        text.push_str(&format!("! {line}\n"));
    }
    match output.status.code() {
        Some(0) => {}
        Some(code) => text.push_str(&format!("[exit {code}]\n")),
        None => text.push_str("[killed by a signal]\n"),
    }
    text
}

/// Renders a transcript by running its commands in a fresh folder.
fn render(path: &Path) -> String {
    let source = std::fs::read_to_string(path).expect("a readable transcript");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_files(&root.join("../examples/shop"), dir.path());
    copy_files(&path.with_extension("in"), dir.path());
    let rendered: Vec<String> = blocks(&source)
        .iter()
        .map(|block| run_block(dir.path(), block))
        .collect();
    rendered.join("\n")
}

fn transcripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/transcripts")
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "t"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn transcripts_match_what_the_cli_prints() {
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let mut stale = Vec::new();
    let paths = transcripts();
    assert!(paths.len() >= 2, "the transcripts are missing");
    for path in paths {
        let expected = std::fs::read_to_string(&path).expect("a readable transcript");
        let actual = render(&path);
        if actual == expected {
            continue;
        }
        if update {
            std::fs::write(&path, &actual).expect("rewrite a transcript");
            continue;
        }
        let first_difference = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        let context = |text: &str| -> String {
            text.lines()
                .skip(first_difference.saturating_sub(3))
                .take(8)
                .collect::<Vec<_>>()
                .join("\n")
        };
        stale.push(format!(
            "{}: first difference at line {}\n--- expected\n{}\n--- actual\n{}",
            path.display(),
            first_difference + 1,
            context(&expected),
            context(&actual)
        ));
    }
    assert!(
        stale.is_empty(),
        "{}\n(UPDATE_SNAPSHOTS=1 rewrites the transcripts)",
        stale.join("\n\n")
    );
}

#[test]
fn the_transcript_parser_reads_what_the_renderer_writes() {
    let text = "# c\n$ rnt a 'b c' \"d \\\"e\\\"\"\nout\n\nmore\n! err\n[exit 1]\n\n$ rnt x < f\n";
    let parsed = blocks(text);
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].comments, vec!["# c".to_string()]);
    let (words, stdin) = split_words(&parsed[0].command);
    assert_eq!(words, vec!["rnt", "a", "b c", "d \"e\""]);
    assert_eq!(stdin, None);
    let (words, stdin) = split_words(&parsed[1].command);
    assert_eq!(words, vec!["rnt", "x"]);
    assert_eq!(stdin.as_deref(), Some("f"));
}
