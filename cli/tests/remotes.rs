//! Remotes end to end — `remote`, `clone`, `fetch`, `push`, `pull` — with the remote a store
//! folder and (module `s3`) a store on the S3 test server (SeaweedFS): a round trip of
//! clone, commit, push, fetch, pull with a merge (every side verifies and reaches the same
//! state hash); transfers that cost the difference (a second fetch or push sends nothing, a
//! one-row commit's push sends what the commit wrote); non-fast-forward pushes refused
//! unless `--force`; two pushes racing from one remote head (one lands, the other reports
//! it); kills at every write point of a push (the remote's branch is at the old commit or
//! the new one, and verifies); readers beside a pushing writer; 16 `rnt commit` processes
//! racing on one s3:// branch (every acknowledged commit is in the final history); and bad
//! input (unknown remote, bad URL, a folder that is no store, missing branch, the store
//! itself) as one-line errors that leave nothing behind.

mod common;

use common::{assert_one_line_error, Shop};
use rnt_store::fault::{FAULT_ENV, PAUSE_ENV};
use serde_json::Value as JsonValue;
use std::process::{Child, Command, Stdio};

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation orders(id: int, customer: int, amount: int).
view plan_total(plan: str, total: int).
plan_total(p, sum(a)) :- orders(_, c, a), customers(c, p).
";

/// The store remotes are cloned from, with its program defined and a few rows: a folder
/// (`rnt init` in a folder of its own) or an `s3://` location.
struct Origin {
    /// Where `rnt` runs for it (for a folder: the folder holding `.rnt/`).
    shop: Shop,
    /// What `--store` names and `clone` takes.
    url: String,
}

impl Origin {
    fn folder() -> Origin {
        let shop = Shop::bare();
        let url = shop.store().to_str().unwrap().to_string();
        Origin::seeded(shop, url)
    }

    fn s3(name: &str) -> Option<Origin> {
        let url = rnt_store_testkit::s3::fresh_location(name)?;
        Some(Origin::seeded(Shop::bare(), url))
    }

    fn seeded(shop: Shop, url: String) -> Origin {
        let origin = Origin { shop, url };
        origin.ok(&["init"]);
        origin.shop.write("shop.rnt", PROGRAM);
        origin.ok(&["define", "shop.rnt"]);
        origin.ok(&[
            "commit",
            "-m",
            "seed",
            "+customers(1, \"gold\")",
            "+customers(2, \"basic\")",
            "+orders(10, 1, 30)",
            "+orders(11, 2, 5)",
        ]);
        origin
    }

    fn args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["--store", self.url.as_str()];
        all.extend_from_slice(args);
        all
    }

    fn ok(&self, args: &[&str]) -> String {
        self.shop.ok(&self.args(args))
    }

    fn state(&self) -> String {
        json(&self.ok(&["status", "--format", "json"]))["state"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn head(&self) -> String {
        json(&self.ok(&["status", "--format", "json"]))["commit"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// A clone of `origin` in a folder of its own (`rnt` runs there and finds `.rnt/`).
fn clone(origin: &Origin) -> Shop {
    let shop = Shop::bare();
    let out = shop.ok(&["clone", &origin.url, "."]);
    assert!(out.starts_with("cloned "), "{out}");
    shop
}

fn json(text: &str) -> JsonValue {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `rnt push origin --format json` (plus `extra`), parsed.
fn push(shop: &Shop, extra: &[&str]) -> JsonValue {
    let mut args = vec!["push", "origin", "--format", "json"];
    args.extend_from_slice(extra);
    json(&shop.ok(&args))
}

/// `KEY=N` of `rnt commit --stats` (`nodes_written`, `bytes_written`).
fn stat(stats: &str, key: &str) -> u64 {
    stats
        .split_whitespace()
        .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {stats}"))
}

/// Clone, commit, push, fetch into a second clone, pull with a three-way merge, push back,
/// pull a fast-forward: every side verifies and all reach the same state hash; a second
/// fetch and push send nothing.
fn round_trip(origin: &Origin) {
    let b = clone(origin);
    let c = clone(origin);
    assert_eq!(b.state(), origin.state());
    assert_eq!(
        b.ok(&["remote", "-v"]).split_whitespace().next(),
        Some("origin")
    );

    b.commit("b: order 12", &["+orders(12, 1, 7)"]);
    let pushed = push(&b, &[]);
    assert_eq!(pushed["kind"], "fast-forward", "{pushed}");
    assert!(pushed["chunks"].as_u64().unwrap() >= 3, "{pushed}");
    assert_eq!(origin.head(), b.head().unwrap());

    c.commit("c: order 13", &["+orders(13, 2, 8)"]);
    let pulled = c.ok(&["pull", "origin"]);
    assert!(pulled.contains("fetched"), "{pulled}");
    assert!(pulled.contains("committed"), "a three-way merge: {pulled}");
    let merge = c.log();
    assert_eq!(
        merge[0]["parents"].as_array().unwrap().len(),
        2,
        "{merge:?}"
    );
    assert_eq!(push(&c, &[])["kind"], "fast-forward");

    let pulled = b.ok(&["pull", "origin"]);
    assert!(pulled.contains("fast-forward"), "{pulled}");
    for shop in [&b, &c] {
        shop.ok(&["verify"]);
        assert_eq!(shop.state(), origin.state());
        assert_eq!(
            shop.rows("plan_total", None),
            [
                vec![JsonValue::from("basic"), JsonValue::from(13)],
                vec![JsonValue::from("gold"), JsonValue::from(37)]
            ]
        );
    }
    origin.ok(&["verify"]);

    // Nothing new: nothing sent either way.
    let fetched = json(&b.ok(&["fetch", "origin", "--format", "json"]));
    assert_eq!(
        (fetched["chunks"].as_u64(), fetched["bytes"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(fetched["refs"], JsonValue::Array(vec![]));
    let again = push(&b, &[]);
    assert_eq!(again["kind"], "up-to-date");
    assert_eq!(again["chunks"], 0);
    // The tracking ref is a REF like any other.
    let log = b.ok(&["log", "origin/main", "-n", "1", "--format", "json"]);
    assert_eq!(json(&log)[0]["commit"].as_str().unwrap(), origin.head());
    b.ok(&["verify", "--at", "origin/main~1"]);
}

/// A one-row commit's push sends the chunks the commit wrote (at most its nodes written,
/// plus its state and commit): a handful, a path per touched tree, whatever the store's
/// size.
fn one_row_push_costs_what_the_commit_wrote(origin: &Origin) {
    let mut csv = String::from("id,customer,amount\n");
    for id in 1_000..6_000 {
        csv.push_str(&format!("{id},{},{}\n", 1 + id % 2, id % 97));
    }
    let file = origin.shop.write("orders.csv", &csv);
    origin.ok(&[
        "import",
        "orders",
        file.to_str().unwrap(),
        "-m",
        "5000 orders",
    ]);
    let b = Shop::bare();
    let cloned = json(&b.ok(&["clone", &origin.url, ".", "--format", "json"]));
    let whole = cloned["chunks"].as_u64().unwrap();
    assert!(whole > 50, "the store is more than a few chunks: {cloned}");
    let stats = b.ok(&["commit", "--stats", "-m", "one row", "+orders(7000, 1, 1)"]);
    let written = stat(&stats, "nodes_written");
    let pushed = push(&b, &[]);
    let sent = pushed["chunks"].as_u64().unwrap();
    assert!(
        (3..=written + 2).contains(&sent),
        "a one-row push sent {sent} chunks; the commit wrote {written} nodes (+ state, commit)"
    );
    // In bytes: under twice the nodes the commit wrote (the rest is its state and commit).
    let sent_bytes = pushed["bytes"].as_u64().unwrap();
    let written_bytes = stat(&stats, "bytes_written");
    assert!(
        sent_bytes < 2 * written_bytes,
        "sent {sent_bytes} bytes; the commit wrote {written_bytes} bytes of nodes"
    );
    assert!(sent * 10 < whole, "sent {sent} of {whole}");
    // The receiving side fetches just as little.
    let c = Shop::bare();
    c.ok(&["clone", &origin.url, "."]);
    b.commit("another row", &["+orders(7001, 2, 1)"]);
    let pushed = push(&b, &[]);
    let fetched = json(&c.ok(&["fetch", "origin", "--format", "json"]));
    assert_eq!(fetched["chunks"], pushed["chunks"], "{fetched} / {pushed}");
    c.ok(&["merge", "origin/main"]);
    assert_eq!(c.state(), origin.state());
    c.ok(&["verify"]);
}

/// A push that is not a fast-forward is refused (exit 1, nothing moves) unless `--force`.
fn non_fast_forward_needs_force(origin: &Origin) {
    let b = clone(origin);
    let c = clone(origin);
    b.commit("b", &["+orders(20, 1, 1)"]);
    push(&b, &[]);
    c.commit("c", &["+orders(21, 2, 1)"]);
    let head = origin.head();
    let err = c.fails(&["push", "origin"], 1);
    assert_one_line_error(
        &err,
        &["not a fast-forward", "rnt pull origin main", "--force"],
    );
    assert_eq!(origin.head(), head, "a refused push moves nothing");
    let forced = push(&c, &["--force"]);
    assert_eq!(forced["kind"], "forced", "{forced}");
    assert_eq!(origin.head(), c.head().unwrap());
    origin.ok(&["verify"]);
    let reflog = origin.ok(&["reflog", "-n", "2"]);
    assert!(reflog.contains("push --force"), "{reflog}");
}

/// `shop`'s `rnt args` started with `env` set, not waited for.
fn spawn_with(shop: &Shop, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut command: Command = shop.command(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rnt")
}

fn finish(child: Child) -> (i32, String, String) {
    let output = child.wait_with_output().expect("wait for rnt");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Two clones at the same remote head push at once (both paused after copying their chunks,
/// so both read the same remote head): exactly one lands, the other reports it and changes
/// nothing there. `lost_race` is what the loser must say.
fn racing_pushes_have_one_winner(origin: &Origin, lost_race: &[&str]) {
    let b = clone(origin);
    let c = clone(origin);
    b.commit("b", &["+orders(30, 1, 1)"]);
    c.commit("c", &["+orders(31, 2, 1)"]);
    let pause = [(PAUSE_ENV, "push-move:1:1500")];
    let first = spawn_with(&b, &["push", "origin"], &pause);
    let second = spawn_with(&c, &["push", "origin"], &pause);
    let results = [finish(first), finish(second)];
    let winners: Vec<usize> = (0..2).filter(|&i| results[i].0 == 0).collect();
    assert_eq!(winners.len(), 1, "exactly one push lands: {results:?}");
    let winner = winners[0];
    let (code, _, err) = &results[1 - winner];
    assert_eq!(*code, 1, "{results:?}");
    assert!(
        lost_race.iter().any(|needle| err.contains(needle)),
        "the loser says why: {err}"
    );
    let heads = [b.head().unwrap(), c.head().unwrap()];
    assert_eq!(origin.head(), heads[winner]);
    origin.ok(&["verify"]);
}

/// A push killed at `point` (pass 1) leaves the remote's branch at the old commit or the new
/// one, every chunk it reaches readable; pushing again lands it.
fn killed_push_leaves_old_or_new(origin: &Origin, b: &Shop, point: &str, row: usize) {
    let old = origin.head();
    let change = format!("+orders({row}, 1, 1)");
    b.commit(&format!("row {row}"), &[&change]);
    let new = b.head().unwrap();
    let fault = format!("{point}:1");
    let (code, out, err) = finish(spawn_with(b, &["push", "origin"], &[(FAULT_ENV, &fault)]));
    assert_ne!(code, 0, "the push was to die at {point}: {out}{err}");
    let now = origin.head();
    assert!(
        now == old || now == new,
        "{point}: the remote's main is {now}"
    );
    origin.ok(&["verify"]);
    origin.ok(&["show", "orders", "--format", "csv"]);
    let pushed = push(b, &[]);
    assert!(
        pushed["kind"] == "fast-forward" || pushed["kind"] == "up-to-date",
        "{point}: {pushed}"
    );
    assert_eq!(origin.head(), new);
    origin.ok(&["verify"]);
}

// ---------------------------------------------------------------------------------------
// Folder remotes

#[test]
fn a_round_trip_between_folders() {
    round_trip(&Origin::folder());
}

#[test]
fn a_one_row_push_between_folders_costs_what_the_commit_wrote() {
    one_row_push_costs_what_the_commit_wrote(&Origin::folder());
}

#[test]
fn a_non_fast_forward_push_to_a_folder_needs_force() {
    non_fast_forward_needs_force(&Origin::folder());
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
)]
fn racing_pushes_to_a_folder_have_one_winner() {
    // The folder's writer lock serializes the two pushes, so the second sees the first's
    // commit and is refused as not a fast-forward (or, if it read the head first, loses
    // the compare-and-swap).
    racing_pushes_have_one_winner(&Origin::folder(), &["not a fast-forward", "lost a race"]);
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
)]
fn a_push_to_a_folder_killed_at_each_write_point_leaves_old_or_new() {
    let origin = Origin::folder();
    let b = clone(&origin);
    for (row, point) in [
        "push-move",
        "pack-seal",
        "manifest-write",
        "manifest-rename",
    ]
    .iter()
    .enumerate()
    {
        killed_push_leaves_old_or_new(&origin, &b, point, 100 + row);
    }
}

#[test]
fn remotes_are_listed_added_and_removed() {
    let origin = Origin::folder();
    let b = Shop::init();
    assert_eq!(b.ok(&["remote"]), "");
    // A folder holding `.rnt/` counts as its store; the absolute path is recorded.
    let out = b.ok(&["remote", "add", "up", origin.shop.dir().to_str().unwrap()]);
    let recorded = origin.shop.store().canonicalize().unwrap();
    assert_eq!(out, format!("added remote up: {}\n", recorded.display()));
    b.ok(&["remote", "add", "s3one", "s3://bucket/some/prefix/"]);
    assert_eq!(b.ok(&["remote"]), "s3one\nup\n");
    assert_eq!(
        json(&b.ok(&["remote", "--format", "json"])),
        serde_json::json!([
            {"name": "s3one", "url": "s3://bucket/some/prefix"},
            {"name": "up", "url": recorded.to_str().unwrap()},
        ])
    );
    let fetched = json(&b.ok(&["fetch", "up", "--format", "json"]));
    assert_eq!(fetched["refs"][0]["branch"], "main");
    assert!(fetched["refs"][0]["old"].is_null());
    // The fetched commits are kept by gc (the tracking ref reaches them).
    b.ok(&["gc"]);
    b.ok(&["verify", "--at", "up/main"]);
    assert_eq!(
        b.rows("orders", Some("up/main")).len(),
        2,
        "the remote's rows, read through its tracking ref"
    );
    b.ok(&["remote", "remove", "up"]);
    assert_eq!(b.ok(&["remote"]), "s3one\n");
    let err = b.fails(&["log", "up/main"], 1);
    assert_one_line_error(&err, &["unknown reference `up/main`"]);
}

#[test]
fn bad_remote_input_is_a_clear_one_line_error() {
    let origin = Origin::folder();
    let b = clone(&origin);
    // A folder holding something else (an empty one, or none, is where a first push
    // creates the store: tests/first_push.rs).
    let not_a_store = Shop::bare();
    not_a_store.write("notes.txt", "not a store");
    let path = not_a_store.dir().to_str().unwrap().to_string();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["fetch", "nope"], vec!["no remote named `nope`"]),
        (vec!["push", "nope"], vec!["no remote named `nope`"]),
        (vec!["pull", "nope"], vec!["no remote named `nope`"]),
        (
            vec!["remote", "remove", "nope"],
            vec!["no remote named `nope`"],
        ),
        (
            vec!["remote", "add", "x", "ftp://host/x"],
            vec!["neither a store folder nor"],
        ),
        (vec!["remote", "add", "x", "s3://"], vec!["names no bucket"]),
        (vec!["remote", "add", "x", &path], vec!["no rnt store at"]),
        (
            vec!["remote", "add", "a/b", "s3://b/p"],
            vec!["invalid remote name"],
        ),
        (
            vec!["remote", "add", "origin", "s3://b/p"],
            vec!["remote `origin` already exists"],
        ),
        (
            vec!["push", "origin", "nosuch"],
            vec!["no branch named `nosuch`"],
        ),
        (
            vec!["pull", "origin", "nosuch"],
            vec!["has no branch `nosuch`"],
        ),
        (vec!["log", "origin/nosuch"], vec!["unknown reference"]),
        (vec!["clone", &path, "elsewhere"], vec!["no rnt store at"]),
    ];
    let refs_before = b.ok(&["remote", "-v"]);
    for (args, needles) in cases {
        let err = b.fails(&args, 1);
        assert_one_line_error(&err, &needles);
    }
    assert_eq!(b.ok(&["remote", "-v"]), refs_before, "nothing was recorded");
    assert!(
        !b.dir().join("elsewhere").exists(),
        "a failed clone leaves nothing"
    );

    // The store itself as its own remote.
    b.ok(&["remote", "add", "me", b.dir().to_str().unwrap()]);
    let err = b.fails(&["fetch", "me"], 1);
    assert_one_line_error(&err, &["is this store itself"]);

    // A remote whose store went away.
    let gone = Origin::folder();
    b.ok(&["remote", "add", "gone", gone.shop.dir().to_str().unwrap()]);
    std::fs::remove_dir_all(gone.shop.store()).unwrap();
    let err = b.fails(&["fetch", "gone"], 1);
    assert_one_line_error(&err, &["no rnt store at"]);

    // Cloning into a folder that already holds a store.
    let err = b.fails(&["clone", &origin.url, "."], 1);
    assert_one_line_error(&err, &["already exists"]);
    b.ok(&["verify"]);
}

#[test]
fn an_unreachable_object_store_is_a_clear_one_line_error() {
    let b = Shop::init();
    b.ok(&["remote", "add", "far", "s3://bucket/shop"]);
    let unreachable = [
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "nobody"),
        ("AWS_SECRET_ACCESS_KEY", "nothing"),
    ];
    for args in [
        &["fetch", "far"][..],
        &["push", "far"],
        &["clone", "s3://bucket/shop", "copy"],
    ] {
        let (code, out, err) = finish(spawn_with(&b, args, &unreachable));
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert_one_line_error(&err, &["s3://bucket/shop"]);
    }
    assert!(
        !b.dir().join("copy").exists(),
        "a failed clone leaves nothing"
    );
    assert_eq!(b.ok(&["remote"]), "far\n");
}

#[test]
fn a_pull_that_conflicts_exits_as_merge_does_and_keeps_the_fetch() {
    let origin = Origin::folder();
    let b = clone(&origin);
    let c = clone(&origin);
    b.commit("b: gold to silver", &["+customers(1, \"silver\")"]);
    push(&b, &[]);
    c.commit("c: gold to bronze", &["+customers(1, \"bronze\")"]);
    let head = c.head();
    let err = c.fails(&["pull", "origin"], 4);
    assert!(err.contains("id=1"), "{err}");
    assert_eq!(c.head(), head, "a refused merge moves nothing");
    // The fetch happened: origin/main is the pushed commit.
    let log = json(&c.ok(&["log", "origin/main", "-n", "1", "--format", "json"]));
    assert_eq!(log[0]["commit"].as_str().unwrap(), origin.head());
}

#[test]
fn clone_takes_every_branch_and_the_current_one() {
    let origin = Origin::folder();
    origin.ok(&["branch", "feature"]);
    origin.ok(&["switch", "feature"]);
    origin.ok(&["commit", "-m", "on feature", "+orders(40, 1, 1)"]);
    let b = Shop::bare();
    let cloned = json(&b.ok(&["clone", &origin.url, "copy", "--format", "json"]));
    assert_eq!(cloned["branch"], "feature", "{cloned}");
    let names: Vec<&str> = cloned["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["feature", "main"]);
    let copy = b.dir().join("copy/.rnt");
    let copy = copy.to_str().unwrap();
    let status = json(&b.ok(&["--store", copy, "status", "--format", "json"]));
    assert_eq!(status["branch"], "feature");
    assert_eq!(status["commit"].as_str().unwrap(), origin.head());
    b.ok(&["--store", copy, "verify"]);
    let reflog = b.ok(&["--store", copy, "reflog"]);
    assert!(reflog.contains("clone: from"), "{reflog}");
    // A branch deleted on the remote loses its tracking ref at the next fetch.
    origin.ok(&["switch", "main"]);
    origin.ok(&["branch", "-d", "feature"]);
    let fetched = json(&b.ok(&["--store", copy, "fetch", "origin", "--format", "json"]));
    assert_eq!(fetched["refs"][0]["branch"], "feature");
    assert!(fetched["refs"][0]["new"].is_null(), "{fetched}");
}

// ---------------------------------------------------------------------------------------
// Remotes on the S3 test server

mod s3 {
    use super::*;

    #[test]
    fn a_round_trip_through_s3() {
        let Some(origin) = Origin::s3("remote-round-trip") else {
            return;
        };
        round_trip(&origin);
    }

    #[test]
    fn a_one_row_push_to_s3_costs_what_the_commit_wrote() {
        let Some(origin) = Origin::s3("remote-one-row") else {
            return;
        };
        one_row_push_costs_what_the_commit_wrote(&origin);
    }

    #[test]
    fn a_location_without_a_store_is_a_clear_error() {
        let Some(url) = rnt_store_testkit::s3::fresh_location("remote-empty") else {
            return;
        };
        let b = Shop::init();
        b.ok(&["remote", "add", "empty", &url]);
        let err = b.fails(&["fetch", "empty"], 1);
        assert_one_line_error(&err, &["no rnt store at", &url]);
        let err = b.fails(&["clone", &url, "copy"], 1);
        assert_one_line_error(&err, &["no rnt store at", &url]);
        assert!(!b.dir().join("copy").exists());
    }

    #[test]
    fn a_non_fast_forward_push_to_s3_needs_force() {
        let Some(origin) = Origin::s3("remote-force") else {
            return;
        };
        non_fast_forward_needs_force(&origin);
    }

    #[test]
    #[cfg_attr(
        not(feature = "fault-injection"),
        ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
    )]
    fn racing_pushes_to_s3_have_one_winner() {
        let Some(origin) = Origin::s3("remote-race") else {
            return;
        };
        racing_pushes_have_one_winner(&origin, &["lost a race"]);
    }

    #[test]
    #[cfg_attr(
        not(feature = "fault-injection"),
        ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
    )]
    fn a_push_to_s3_killed_at_each_write_point_leaves_old_or_new() {
        let Some(origin) = Origin::s3("remote-kill") else {
            return;
        };
        let b = clone(&origin);
        for (row, point) in rnt_store::fault::OBJECT_POINTS.iter().enumerate() {
            killed_push_leaves_old_or_new(&origin, &b, point, 100 + row);
        }
        // A real SIGKILL in the middle of an upload (or wherever the push has got to).
        let old = origin.head();
        b.commit("killed", &["+orders(199, 1, 1)"]);
        let new = b.head().unwrap();
        let mut child = spawn_with(
            &b,
            &["push", "origin"],
            &[(PAUSE_ENV, "object-index-upload:1:4000")],
        );
        std::thread::sleep(std::time::Duration::from_millis(1500));
        child.kill().unwrap();
        let _ = child.wait();
        let now = origin.head();
        assert!(now == old || now == new, "the remote's main is {now}");
        origin.ok(&["verify"]);
        push(&b, &[]);
        assert_eq!(origin.head(), new);
    }

    /// Pushes go through the object backend's publish, which merges small packs: however
    /// many pushes land, the remote keeps O(log n) packs, two objects each.
    #[test]
    fn many_pushes_keep_the_remote_object_count_bounded() {
        let Some(origin) = Origin::s3("remote-objects") else {
            return;
        };
        let b = clone(&origin);
        let pushes: usize = 16;
        for i in 0..pushes {
            b.commit(
                &format!("push {i}"),
                &[&format!("+orders({}, 1, 1)", 300 + i)],
            );
            push(&b, &[]);
            let remote =
                rnt_store::ObjectChunkStore::open(&origin.url, &rnt_store_testkit::s3::options())
                    .unwrap();
            let objects = remote.pack_objects().unwrap().len();
            let packs = remote.packs().unwrap().len();
            assert_eq!(
                objects,
                2 * packs,
                "two objects per listed pack, nothing left over"
            );
            // The binary-counter policy: at most one pack per bit of the push count, plus the
            // seed's.
            let bound = 2 + (usize::BITS - (i + 2).leading_zeros()) as usize;
            assert!(packs <= bound, "after {} pushes: {packs} packs", i + 1);
        }
        origin.ok(&["verify"]);
    }

    /// Readers in other processes see the old state, then the new one, each whole, while a
    /// push is between its uploads and its manifest swap.
    #[test]
    #[cfg_attr(
        not(feature = "fault-injection"),
        ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
    )]
    fn readers_see_whole_states_while_a_push_runs() {
        let Some(origin) = Origin::s3("remote-readers") else {
            return;
        };
        let b = clone(&origin);
        b.commit("big", &["+orders(50, 1, 1000)", "+customers(3, \"gold\")"]);
        let old = (origin.head(), origin.state());
        let writer = spawn_with(
            &b,
            &["push", "origin"],
            &[(PAUSE_ENV, "object-manifest-create:1:2500")],
        );
        let mut seen = Vec::new();
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(30) {
            let reader = Shop::bare();
            let status = json(&reader.ok(&["--store", &origin.url, "status", "--format", "json"]));
            let commit = status["commit"].as_str().unwrap().to_string();
            reader.ok(&["--store", &origin.url, "verify", "--at", &commit]);
            let totals = reader.ok(&[
                "--store",
                &origin.url,
                "show",
                "plan_total",
                "--at",
                &commit,
                "--format",
                "csv",
            ]);
            seen.push((commit.clone(), totals));
            if commit != old.0 {
                break;
            }
        }
        let (code, out, err) = finish(writer);
        assert_eq!(code, 0, "{out}{err}");
        let new = b.head().unwrap();
        assert!(seen.len() >= 2, "a reader ran during the push: {seen:?}");
        for (commit, totals) in &seen {
            assert!(*commit == old.0 || *commit == new, "{commit}");
            let expected = if *commit == old.0 {
                "plan,total\nbasic,5\ngold,30\n"
            } else {
                "plan,total\nbasic,5\ngold,1030\n"
            };
            assert_eq!(totals, expected);
        }
        assert_eq!(origin.head(), new);
    }

    /// Processes racing to commit on one s3:// branch (`RNT_RACE_PROCESSES`, default 16):
    /// each commit lands (re-run on the new head after a lost race) or fails with a clear
    /// conflict; every acknowledged commit is in the final history and its row in the
    /// final state; the history verifies.
    #[test]
    fn sixteen_processes_committing_on_s3_lose_no_acknowledged_commit() {
        let Some(origin) = Origin::s3("remote-commit-race") else {
            return;
        };
        let processes: u32 = std::env::var("RNT_RACE_PROCESSES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(16);
        let children: Vec<(u32, Child)> = (0..processes)
            .map(|i| {
                let change = format!("+orders({}, 1, {})", 1_000 + i, i + 1);
                let message = format!("racer {i}");
                let args = origin.args(&["commit", "-m", &message, &change]);
                let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                (i, spawn_with(&origin.shop, &args, &[]))
            })
            .collect();
        let mut landed = Vec::new();
        for (i, child) in children {
            let (code, out, err) = finish(child);
            match code {
                0 => {
                    assert!(out.starts_with("committed "), "{out}");
                    landed.push((i, out.split_whitespace().nth(1).unwrap().to_string()));
                }
                1 => assert!(err.contains("kept moving"), "racer {i}: {err}"),
                _ => panic!("racer {i} exited {code}: {out}{err}"),
            }
        }
        eprintln!("race: {} of {processes} landed", landed.len());
        assert!(!landed.is_empty(), "some commit landed");
        let log = json(&origin.ok(&["log", "--format", "json"]));
        let ids: Vec<&str> = log
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["commit"].as_str().unwrap())
            .collect();
        let rows = json(&origin.ok(&["show", "orders", "--format", "json"]));
        for (i, short) in &landed {
            assert!(
                ids.iter().any(|id| id.starts_with(short.as_str())),
                "racer {i} {short}"
            );
            let id = JsonValue::from(1_000 + i);
            assert!(
                rows.as_array().unwrap().iter().any(|row| row[0] == id),
                "racer {i}'s row"
            );
        }
        assert_eq!(
            rows.as_array().unwrap().len(),
            2 + landed.len(),
            "exactly the acknowledged rows were added"
        );
        assert_eq!(
            ids.len(),
            2 + landed.len(),
            "one commit per acknowledged racer"
        );
        origin.ok(&["verify"]);
        for at in 1..=landed.len() {
            origin.ok(&["verify", "--at", &format!("HEAD~{at}")]);
        }
    }
}
