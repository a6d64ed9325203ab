//! Guards the layers DESIGN.md draws (`docs/design.md`, "Layers"), from what Cargo itself
//! says: `cargo metadata` lists each workspace crate's dependencies, and every one points
//! down — `lang` depends on no crate of ours, `engine` on `lang` and `merkle`, `db` on
//! `engine`, `lang`, `merkle` and `store`, and only `cli` (and this facade) above them.
//! Dev-dependencies may reach sideways for test data, never up.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each crate of ours, its layer (dependencies go to lower layers only), and the crates of
/// ours it may depend on (its normal dependencies must be exactly these).
const LAYERS: [(&str, u32, &[&str]); 8] = [
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
    (
        "rnt-cli",
        5,
        &[
            "rnt-db",
            "rnt-engine",
            "rnt-lang",
            "rnt-merkle",
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
