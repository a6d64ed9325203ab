//! Guards the rooms of `maintain/src` (see `ARCHITECTURE.md`): each imports only from the
//! rooms below it — `lang` → `eval` → `delta` → `db` — and `lang` nothing from merkle or
//! store, so the import graph between rooms has no cycles.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn check_room(room: &str, forbidden: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(room);
    let mut files = Vec::new();
    sources(&dir, &mut files);
    assert!(!files.is_empty(), "room {room} has no sources");
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable source");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for pattern in forbidden {
                if code.contains(pattern) {
                    found.push(format!("{}:{}: {pattern}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "{room} imports from above it:\n{}",
        found.join("\n")
    );
}

#[test]
fn lang_needs_no_store() {
    check_room(
        "lang",
        &[
            "rnt_merkle",
            "rnt_store",
            "crate::eval",
            "crate::delta",
            "crate::db",
            "crate::DbError",
            "crate::DbResult",
            "crate::{Db",
        ],
    );
}

#[test]
fn eval_reads_only_lang() {
    check_room("eval", &["crate::delta", "crate::db"]);
}

#[test]
fn delta_reads_no_db() {
    check_room("delta", &["crate::db"]);
}
