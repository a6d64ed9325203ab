//! Helpers for driving the `rnt` binary end to end: a store in a temporary folder, runs
//! with captured output, and checks on exit codes and messages.
#![allow(dead_code)] // Each test file uses a different part.

pub mod http;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The binary under test.
pub const RNT: &str = env!("CARGO_BIN_EXE_rnt");

/// The shop program most tests use.
pub const SHOP: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
";

/// What a run of `rnt` did.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    fn of(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// A working folder with a store at `.rnt/` inside it.
pub struct Shop {
    dir: tempfile::TempDir,
    /// The `rnt serve` holding the store, when the suite runs through a server.
    server: Option<Child>,
}

/// Set (to anything), every store a test makes is served by `rnt serve`, so that every
/// command the test runs goes through the server: the suite run both ways shows that
/// output, errors and exit codes are the same.
pub const THROUGH_SERVER_ENV: &str = "RNT_TEST_THROUGH_SERVER";

impl Drop for Shop {
    fn drop(&mut self) {
        if let Some(server) = &mut self.server {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

impl Shop {
    /// A working folder without a store.
    pub fn bare() -> Shop {
        Shop {
            dir: tempfile::tempdir().expect("temporary folder"),
            server: None,
        }
    }

    /// A working folder with an initialized store (no commits); served when
    /// [`THROUGH_SERVER_ENV`] is set.
    pub fn init() -> Shop {
        let mut shop = Shop::bare();
        shop.ok(&["init"]);
        if std::env::var_os(THROUGH_SERVER_ENV).is_some() {
            shop.server = Some(shop.serve(&[]).0);
        }
        shop
    }

    /// Starts `rnt serve --http 127.0.0.1:0 EXTRA…` on the store; returns the server and
    /// the address it listens on, once it does.
    pub fn serve(&self, extra: &[&str]) -> (Child, String) {
        let mut args = vec!["serve", "--http", "127.0.0.1:0"];
        if !extra.contains(&"--pg") {
            // Not the default port: tests run side by side.
            args.extend(["--pg", "127.0.0.1:0"]);
        }
        args.extend_from_slice(extra);
        let mut child = self
            .command(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn rnt serve");
        let stdout = child.stdout.take().expect("the server's stdout");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
            .expect("the server's first line");
        let address = line
            .trim()
            .rsplit_once("http://")
            .map(|(_, address)| address.to_string())
            .unwrap_or_else(|| panic!("the server did not start: {line:?}"));
        (child, address)
    }

    /// A store with the shop program defined.
    pub fn defined() -> Shop {
        let shop = Shop::init();
        shop.write("shop.rnt", SHOP);
        shop.ok(&["define", "shop.rnt"]);
        shop
    }

    /// The writing server's secret, from the entry it keeps in the store (`.rnt/server`):
    /// the write token HTTP changes need.
    pub fn server_secret(&self) -> String {
        let entry = std::fs::read_to_string(self.store().join("server")).expect("the server entry");
        let entry: serde_json::Value = serde_json::from_str(&entry).expect("the entry is JSON");
        entry["secret"].as_str().expect("a secret").to_string()
    }

    /// The working folder.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The store folder.
    pub fn store(&self) -> PathBuf {
        self.dir().join(".rnt")
    }

    /// Writes a file in the working folder and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir().join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// A command running `rnt args` in the working folder.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(RNT);
        command
            .args(args)
            .current_dir(self.dir())
            .env_remove("RNT_LOCK_WAIT_MS")
            .env_remove("RNT_REQUIRE_SERVER");
        if self.server.is_some() {
            command.env("RNT_REQUIRE_SERVER", self.store());
        }
        command
    }

    /// Runs `rnt args` in the working folder.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::of(self.command(args).output().expect("run rnt"))
    }

    /// Runs `rnt args` with `stdin` as standard input.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rnt");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        Run::of(child.wait_with_output().expect("wait for rnt"))
    }

    /// Starts `rnt args` without waiting.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rnt")
    }

    /// Runs `rnt args`, asserts success, returns its standard output.
    pub fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert_eq!(
            run.code, 0,
            "rnt {args:?} failed:\n{}{}",
            run.stdout, run.stderr
        );
        run.stdout
    }

    /// Runs `rnt args`, asserts it exits with `code`, returns its standard error.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let run = self.run(args);
        assert_eq!(
            run.code, code,
            "rnt {args:?}: expected exit {code}:\n{}{}",
            run.stdout, run.stderr
        );
        run.stderr
    }

    /// `rnt status --format json`, parsed.
    pub fn status(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["status", "--format", "json"])).expect("status prints JSON")
    }

    /// `rnt log --format json`, parsed (newest first).
    pub fn log(&self) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["log", "--format", "json"])).expect("log prints JSON")
    }

    /// The head's commit id (`None` before the first commit).
    pub fn head(&self) -> Option<String> {
        self.status()["commit"].as_str().map(str::to_string)
    }

    /// The head's state hash.
    pub fn state(&self) -> String {
        self.status()["state"]
            .as_str()
            .expect("state hash")
            .to_string()
    }

    /// `rnt show REL --format json [--at REF]` as rows of JSON values.
    pub fn rows(&self, relation: &str, at: Option<&str>) -> Vec<Vec<serde_json::Value>> {
        let mut args = vec!["show", relation, "--format", "json"];
        if let Some(at) = at {
            args.extend(["--at", at]);
        }
        serde_json::from_str(&self.ok(&args)).expect("show prints JSON")
    }

    /// Commits `changes` (arguments) with message `message`; returns the commit line.
    pub fn commit(&self, message: &str, changes: &[&str]) -> String {
        let mut args = vec!["commit", "-m", message];
        args.extend_from_slice(changes);
        self.ok(&args)
    }
}

/// Asserts that `stderr` is one line `error: ...` holding every one of `needles`.
pub fn assert_one_line_error(stderr: &str, needles: &[&str]) {
    assert!(
        stderr.starts_with("error: "),
        "expected `error: ...`, got {stderr:?}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "expected one line, got {stderr:?}"
    );
    for needle in needles {
        assert!(stderr.contains(needle), "expected {needle:?} in {stderr:?}");
    }
}

/// The seeded generator every test suite shares (the top-level `tests/common/rng.rs`).
#[path = "../../../tests/common/rng.rs"]
mod rng;
#[allow(unused_imports)] // Not every suite draws from it.
pub use rng::Rng;

/// Splits a command line into words as a POSIX shell does for single quotes, double
/// quotes (with `\"` and `\\`), bare words and a `#` comment that starts a word.
/// Returns the words and the file named by a trailing `< FILE`, if any.
pub fn split_words(line: &str) -> (Vec<String>, Option<String>) {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' if in_word => {
                words.push(std::mem::take(&mut word));
                in_word = false;
            }
            ' ' => {}
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\')) => {
                            word.extend(chars.next());
                        }
                        c => word.push(c),
                    }
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    let stdin = match words.iter().position(|w| w == "<") {
        Some(at) => {
            assert_eq!(at + 2, words.len(), "`< FILE` must end the command line");
            let file = words.pop();
            words.pop();
            file
        }
        None => None,
    };
    (words, stdin)
}
