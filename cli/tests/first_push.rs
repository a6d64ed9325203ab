//! End to end: the first push creates the remote's store (issue 26, item 8), as Dolt's
//! first push creates its remote — at a folder that does not exist or is empty, and at an
//! `s3://` prefix without objects — and is refused, writing nothing there, where something
//! that is not an rnt store is in the way. `remote add` records such a place; fetching from
//! it before any push is still "no rnt store".

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::Value;

fn shop() -> Shop {
    let shop = Shop::defined();
    shop.commit("first", &["+customers(1, \"pro\")", "+orders(1, 1, 30)"]);
    shop
}

#[test]
fn a_first_push_to_a_vacant_folder_creates_the_store() {
    let shop = shop();
    let places = tempfile::tempdir().unwrap();
    let missing = places.path().join("new/backup");
    let empty = places.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (name, place) in [("missing", &missing), ("empty", &empty)] {
        let location = place.to_str().unwrap();
        shop.ok(&["remote", "add", name, location]);
        let stderr = shop.fails(&["fetch", name], 1);
        assert_one_line_error(&stderr, &["no rnt store at"]);
        let run = shop.run(&["push", name, "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stderr,
            format!("note: created an empty rnt store at {location} for the first push\n")
        );
        let pushed: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(pushed["kind"], "created");
        assert_eq!(pushed["new"].as_str(), shop.head().as_deref());
        // The second push finds the store: nothing to create, nothing to send.
        let again = shop.run(&["push", name]);
        assert_eq!(again.code, 0);
        assert_eq!(again.stderr, "");
        assert_eq!(
            again.stdout,
            format!("{name}/main is up to date; sent nothing\n")
        );
        // It is a store like any other: clone it.
        let copy = places.path().join(format!("copy-{name}"));
        shop.ok(&["clone", location, copy.to_str().unwrap()]);
        let status = shop.ok(&[
            "--store",
            copy.join(".rnt").to_str().unwrap(),
            "status",
            "--format",
            "json",
        ]);
        let status: Value = serde_json::from_str(&status).unwrap();
        assert_eq!(status["commit"].as_str(), shop.head().as_deref());
    }
}

#[test]
fn something_in_the_way_is_refused() {
    let shop = shop();
    let places = tempfile::tempdir().unwrap();
    let full = places.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("notes.txt"), "mine").unwrap();
    let stderr = shop.fails(&["remote", "add", "full", full.to_str().unwrap()], 1);
    assert_one_line_error(&stderr, &["no rnt store at", "not an empty folder"]);
    // A place that filled up after `remote add`.
    let later = places.path().join("later");
    shop.ok(&["remote", "add", "later", later.to_str().unwrap()]);
    std::fs::create_dir(&later).unwrap();
    std::fs::write(later.join("notes.txt"), "mine").unwrap();
    let stderr = shop.fails(&["push", "later"], 1);
    assert_one_line_error(&stderr, &["is not an rnt store and not an empty folder"]);
    let files: Vec<_> = std::fs::read_dir(&later).unwrap().collect();
    assert_eq!(files.len(), 1, "nothing was written beside the file");
    // A file where the folder would be.
    let file = places.path().join("file");
    shop.ok(&["remote", "add", "file", file.to_str().unwrap()]);
    std::fs::write(&file, "not a folder").unwrap();
    let stderr = shop.fails(&["push", "file"], 1);
    assert_one_line_error(&stderr, &["is not an rnt store"]);
    // A push that cannot go on creates nothing.
    let unused = places.path().join("unused");
    shop.ok(&["remote", "add", "unused", unused.to_str().unwrap()]);
    let stderr = shop.fails(&["push", "unused", "nosuch"], 1);
    assert_one_line_error(&stderr, &["unused"]);
    assert!(!unused.exists());
}

#[test]
fn a_first_push_to_an_empty_s3_prefix_creates_the_store() {
    let Some(url) = rnt_store_testkit::s3::fresh_location("first-push") else {
        return;
    };
    let shop = shop();
    shop.ok(&["remote", "add", "cloud", &url]);
    let run = shop.run(&["push", "cloud"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("created an empty rnt store"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("(created)"), "{}", run.stdout);
    let status = shop.ok(&["--store", &url, "status", "--format", "json"]);
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["commit"].as_str(), shop.head().as_deref());
    // A prefix holding objects that are no store (here, another store below it).
    let Some(busy) = rnt_store_testkit::s3::fresh_location("first-push-busy") else {
        return;
    };
    let below = format!("{busy}/inner");
    shop.ok(&["--store", &below, "init"]);
    shop.ok(&["remote", "add", "busy", &busy]);
    let stderr = shop.fails(&["push", "busy"], 1);
    assert_one_line_error(&stderr, &["holds objects that are not an rnt store"]);
    let stderr = shop.fails(&["--store", &busy, "status"], 1);
    assert_one_line_error(&stderr, &["no rnt store at"]);
}
