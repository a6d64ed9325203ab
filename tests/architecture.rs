//! Guards the layers docs/design.md draws (`docs/design.md`, "Layers"), from what Cargo itself
//! says: `cargo metadata` lists each workspace crate's dependencies, and every one points
//! down — `lang` depends on no crate of ours, `sql` (the SQL compiler) on `lang` alone,
//! `engine` on `lang` and `merkle`, `db` on `engine`, `lang`, `merkle` and `store`,
//! `sql-run` (running SQL) on `db`, `lang`, `sql` and `store`, and only `cli` (and this
//! facade) above them.
//! Dev-dependencies may reach sideways for test data, never up.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each crate of ours, its layer (dependencies go to lower layers only), and the crates of
/// ours it may depend on (its normal dependencies must be exactly these).
const LAYERS: [(&str, u32, &[&str]); 10] = [
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
    // The SQL compiler knows the rule language, never the database (issue 37).
    ("rnt-sql", 1, &["rnt-lang"]),
    (
        "rnt-sql-run",
        4,
        &["rnt-db", "rnt-lang", "rnt-sql", "rnt-store"],
    ),
    (
        "rnt-cli",
        5,
        &[
            "rnt-db",
            "rnt-engine",
            "rnt-lang",
            "rnt-merkle",
            "rnt-sql-run",
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
const SOURCES: [&str; 8] = [
    "src",
    "store/src",
    "merkle/src",
    "maintain/lang/src",
    "maintain/engine/src",
    "maintain/db/src",
    "maintain/sql-run/src",
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

/// Functions over [`FUNCTION_LINES_MAX`] lines that predate the check of their folder, by
/// path suffix and name: the SQL front end's four (issue 37 replaces them). The list may
/// only shrink: a function that got short must leave it.
const LONG_FUNCTIONS_KNOWN: [(&str, &str); 4] = [
    ("maintain/sql/src/expr.rs", "lower"),
    ("maintain/sql/src/aggregate.rs", "aggregate_call"),
    ("maintain/sql/src/aggregate.rs", "aggregate"),
    ("maintain/sql/src/aggregate.rs", "layer_above"),
];

/// Source folders measured with [`LONG_FUNCTIONS_KNOWN`] allowed.
const SOURCES_WITH_KNOWN_DEBT: [&str; 1] = ["maintain/sql/src"];

/// The SQL front end is measured too; its four long functions are the only ones allowed,
/// and each must still be long (else it leaves the list).
#[test]
fn the_sql_front_end_adds_no_long_function_or_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in SOURCES_WITH_KNOWN_DEBT {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(!files.is_empty(), "the SQL sources are where the list says");
    let (mut long, mut seen) = (Vec::new(), BTreeSet::new());
    for (path, text) in &files {
        let lines = code_lines(text);
        if lines.len() > FILE_LINES_MAX {
            long.push(format!("{path}: {} lines", lines.len()));
        }
        for (name, line, length) in functions(&lines) {
            if length <= FUNCTION_LINES_MAX {
                continue;
            }
            let known = LONG_FUNCTIONS_KNOWN
                .iter()
                .find(|(suffix, known)| path.ends_with(suffix) && *known == name);
            match known {
                Some(entry) => {
                    seen.insert(*entry);
                }
                None => long.push(format!("{path}:{line}: fn {name} is {length} lines")),
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
    let gone: Vec<_> = LONG_FUNCTIONS_KNOWN
        .iter()
        .filter(|entry| !seen.contains(*entry))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer long (or gone): take them off LONG_FUNCTIONS_KNOWN: {gone:?}"
    );
}

/// The top-level module a source file belongs to, under its crate's `src` folder
/// (`select.rs` → `select`, `plan/lower.rs` → `plan`; `lib.rs` and `main.rs` → none).
fn module_of(src: &std::path::Path, file: &std::path::Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The top-level modules `code` names through `crate::` paths (`crate::a::b`, `crate::{a,
/// b::c}`).
fn modules_named(code: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            for item in split_top_level(group) {
                let name = ident(&item);
                if !name.is_empty() {
                    named.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                named.insert(name);
            }
        }
    }
    named
}

/// The items of a `{…}` group up to its closing brace, split at its top-level commas.
fn split_top_level(group: &str) -> Vec<String> {
    let (mut items, mut current, mut depth) = (Vec::new(), String::new(), 0);
    for c in group.chars() {
        match c {
            '{' => {
                depth += 1;
                current.push(c);
            }
            '}' if depth == 0 => break,
            '}' => {
                depth -= 1;
                current.push(c);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    items.push(current);
    items
}

/// The import graph of the crate whose sources are in `src`: each top-level module and the
/// modules it names (test modules and tests excluded).
fn module_graph(src: &std::path::Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in &files {
        let Some(module) = module_of(src, std::path::Path::new(path)) else {
            continue;
        };
        let code: Vec<String> = code_lines(text).iter().map(|line| bare(line)).collect();
        let named = modules_named(&code.join("\n"));
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(named.into_iter().filter(|n| *n != module));
    }
    graph
}

/// The modules of `graph` that lie on a circle, grouped by strongly connected component
/// (each component of more than one module).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let (mut seen, mut stack) = (BTreeSet::new(), vec![from.clone()]);
        while let Some(module) = stack.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut components: Vec<BTreeSet<String>> = Vec::new();
    for (module, reached) in &reaches {
        let component: BTreeSet<String> = reached
            .iter()
            .filter(|other| {
                reaches
                    .get(other)
                    .is_some_and(|back| back.contains(*module))
            })
            .cloned()
            .collect();
        if component.len() > 1 && !components.contains(&component) {
            components.push(component);
        }
    }
    components
}

/// The import circles that predate this check, by source folder: the SQL front end's
/// (issue 37 removes it) and three small ones. Each may only shrink.
const CIRCLES_KNOWN: [(&str, &[&str]); 4] = [
    (
        "maintain/sql/src",
        &[
            "clock",
            "conjunct",
            "dml",
            "expr",
            "from",
            "grouped_window",
            "history",
            "outer",
            "query",
            "select",
            "top",
            "window",
        ],
    ),
    // `diagnostic` names `syntax::Span`, which `syntax` and `conform` report with.
    ("maintain/lang/src", &["conform", "diagnostic", "syntax"]),
    // `commit` reads `history::refs`; `history` and `alter` commit.
    ("maintain/db/src", &["alter", "commit", "define", "history"]),
    // `output` prints `cmd::sql::SqlFailure`.
    ("cli/src", &["breakdown", "cmd", "output"]),
];

/// Modules import one another without circles, so each can be read (and moved) after the
/// ones it uses; the known circles may only shrink.
#[test]
fn no_crate_has_an_import_circle() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in SOURCES.iter().chain(SOURCES_WITH_KNOWN_DEBT.iter()) {
        let known: BTreeSet<String> = CIRCLES_KNOWN
            .iter()
            .filter(|(folder, _)| folder == dir)
            .flat_map(|(_, modules)| modules.iter().map(|m| m.to_string()))
            .collect();
        for circle in circles(&module_graph(&root.join(dir))) {
            if !circle.is_subset(&known) {
                found.push(format!("{dir}: {circle:?}"));
            }
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The circle finder itself: a circle is found whole, a chain is none.
#[test]
fn the_circle_finder_finds_circles_and_only_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            graph
                .entry(from.to_string())
                .or_default()
                .insert(to.to_string());
            graph.entry(to.to_string()).or_default();
        }
        graph
    };
    assert!(circles(&graph(&[("a", "b"), ("b", "c")])).is_empty());
    let found = circles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]));
    let expected: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, vec![expected]);
    assert_eq!(
        modules_named("use crate::{a::X, b, c::{d, e}}; crate::f::g(); x::crate_y"),
        ["a", "b", "c", "f"].iter().map(|s| s.to_string()).collect()
    );
}
