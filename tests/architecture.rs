//! Guards the layers docs/design.md draws (`docs/design.md`, "Layers"), from what Cargo itself
//! says: `cargo metadata` lists each workspace crate's dependencies, and every one points
//! down — `lang` depends on no crate of ours, `engine` on `lang` and `merkle`, `db` on
//! `engine`, `lang`, `merkle` and `store`, and only `cli` (and this facade) above them.
//! Dev-dependencies may reach sideways for test data, never up.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each crate of ours, its layer (dependencies go to lower layers only), and the crates of
/// ours it may depend on (its normal dependencies must be exactly these).
const LAYERS: [(&str, u32, &[&str]); 9] = [
    ("rnt-store", 0, &[]),
    // Test support (the S3 test server): only ever a dev-dependency, of any crate.
    ("rnt-store-testkit", 1, &["rnt-store"]),
    ("rnt-lang", 0, &[]),
    ("rnt-merkle", 1, &["rnt-store"]),
    ("rnt-engine", 2, &["rnt-lang", "rnt-merkle"]),
    (
        "rnt-db",
        3,
        &["rnt-engine", "rnt-lang", "rnt-merkle", "rnt-store"],
    ),
    ("rnt-sql", 4, &["rnt-db", "rnt-lang", "rnt-store"]),
    (
        "rnt-cli",
        5,
        &[
            "rnt-db",
            "rnt-engine",
            "rnt-lang",
            "rnt-merkle",
            "rnt-sql",
            "rnt-store",
        ],
    ),
    (
        "rnt",
        6,
        &[
            "rnt-db",
            "rnt-engine",
            "rnt-lang",
            "rnt-merkle",
            "rnt-store",
        ],
    ),
];

/// The crate of test support, which no library or binary may depend on.
const TESTKIT: &str = "rnt-store-testkit";

/// Every workspace package's dependencies on packages of the workspace, normal and dev.
fn workspace_edges() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
    let packages = metadata["packages"].as_array().expect("a package list");
    let ours: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    let mut edges = BTreeMap::new();
    for package in packages {
        let name = package["name"].as_str().expect("a name").to_string();
        let (mut normal, mut dev) = (BTreeSet::new(), BTreeSet::new());
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let target = dependency["name"].as_str().expect("a dependency name");
            if !ours.contains(target) {
                continue;
            }
            match dependency["kind"].as_str() {
                Some("dev") => dev.insert(target.to_string()),
                _ => normal.insert(target.to_string()),
            };
        }
        edges.insert(name, (normal, dev));
    }
    edges
}

#[test]
fn every_dependency_between_our_crates_points_down() {
    let edges = workspace_edges();
    let layer: BTreeMap<&str, u32> = LAYERS.iter().map(|(n, l, _)| (*n, *l)).collect();
    let known: BTreeSet<&str> = layer.keys().copied().collect();
    let found: BTreeSet<&str> = edges.keys().map(String::as_str).collect();
    assert_eq!(
        found, known,
        "the workspace's crates are the ones the layers name"
    );
    for (name, rank, allowed) in LAYERS {
        let (normal, dev) = &edges[name];
        if name != "rnt-cli" && name != "rnt" {
            let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
            assert_eq!(
                normal, &allowed,
                "{name} depends on exactly these crates of ours"
            );
        }
        for target in normal {
            assert!(
                layer[target.as_str()] < rank && allowed.contains(&target.as_str()),
                "{name} (layer {rank}) depends on {target}, which is not below it"
            );
        }
        for target in dev {
            assert!(
                layer[target.as_str()] <= rank || name == "rnt" || target == TESTKIT,
                "{name}'s tests reach up to {target}"
            );
        }
        assert!(
            !normal.contains(TESTKIT),
            "{name} depends on the test support crate outside its tests"
        );
    }
}

/// The source folders of our crates (tests, benches and test support excluded: they are
/// not what a newcomer reads to find a concept).
const SOURCES: [&str; 7] = [
    "src",
    "store/src",
    "merkle/src",
    "maintain/lang/src",
    "maintain/engine/src",
    "maintain/db/src",
    "cli/src",
];

/// The longest a source file may be (its code before an inline `#[cfg(test)]` module).
const FILE_LINES_MAX: usize = 800;

/// The longest a function may be, from its `fn` line to its closing brace.
const FUNCTION_LINES_MAX: usize = 100;

/// Every `.rs` file under `dir`, with its text.
fn rust_files(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a readable source");
            out.push((path.display().to_string(), text));
        }
    }
}

/// The lines of a file before its inline test module.
fn code_lines(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
        .collect()
}

/// A line with string and char literals emptied and its `//` comment cut, for counting
/// braces.
fn bare(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' if chars.clone().nth(1) == Some('\'') => {
                chars.nth(1);
            }
            '\'' if chars.peek() == Some(&'\\') => {
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// Each function of `lines`: its name, first line (from 1) and length in lines.
fn functions(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let after = [
            "pub fn ",
            "fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
        ]
        .iter()
        .find_map(|prefix| code.strip_prefix(prefix));
        let Some(after) = after else { continue };
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened) = (0i64, false);
        for (offset, text) in lines[start..].iter().enumerate() {
            let text = bare(text);
            if !opened && text.contains(';') && !text.contains('{') {
                break;
            }
            for c in text.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth == 0 {
                out.push((name.clone(), start + 1, offset + 1));
                break;
            }
        }
    }
    out
}

fn all_sources() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "the source folders hold our code");
    files
}

/// Files hold one concept, and functions read at once (issue 20): counted here, so the
/// numbers cannot drift. A file's size is its code before an inline test module.
#[test]
fn files_and_functions_stay_short() {
    let mut long = Vec::new();
    for (path, text) in all_sources() {
        let lines = code_lines(&text);
        if lines.len() > FILE_LINES_MAX {
            long.push(format!("{path}: {} lines", lines.len()));
        }
        for (name, line, length) in functions(&lines) {
            if length > FUNCTION_LINES_MAX {
                long.push(format!("{path}:{line}: fn {name} is {length} lines"));
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
}

/// The counter itself: a function's lines run from `fn` to its closing brace, braces in
/// strings and comments not counted.
#[test]
fn the_function_counter_counts_lines_to_the_closing_brace() {
    let text = "fn a() {\n    let s = \"}\"; // }\n    if x { y() }\n}\nfn b();\npub fn c() {}\n";
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        functions(&lines),
        vec![("a".to_string(), 1, 4), ("c".to_string(), 6, 1)]
    );
}

/// Only the CLI reads the environment: the libraries take their configuration from their
/// caller (issue 20, item 5).
#[test]
fn only_the_cli_reads_the_environment() {
    let mut reads = Vec::new();
    for (path, text) in all_sources() {
        if path.contains("/cli/src/") {
            continue;
        }
        for (n, line) in code_lines(&text).iter().enumerate() {
            let code = bare(line);
            if code.contains("std::env")
                || code.contains("env::var")
                || code.contains("option_env!")
            {
                reads.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        reads.is_empty(),
        "environment read outside cli:\n{}",
        reads.join("\n")
    );
}
