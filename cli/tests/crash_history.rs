//! Guards the history commands under SIGKILL and at every named write point: branch,
//! switch, tag, reset, revert, merge and commits on two branches, killed at random moments
//! (and aborted at each write point of the pack store, as a power cut would stop them).
//! After each, the store opens without repair; every branch's history walks to the first
//! commit and verifies; the current branch's newest reflog entry is where the branch
//! points; and every acknowledged commit is still reachable (by its id), so nothing a user
//! was told happened is lost.
//!
//! 24 kills by default; `RNT_CRASH_HISTORY_KILLS=N` runs N.

mod common;

use common::{Rng, Shop, SHOP};
use rnt_store::fault::{ALL_POINTS, FAULT_ENV};
use serde_json::Value;
use std::time::Duration;

/// Kills in a default run.
const KILLS_DEFAULT: usize = 24;

/// The longest delay before a kill (a command in a test build takes tens of ms).
const KILL_DELAY_MAX_MS: u64 = 25;

/// A store with a view, a second branch `feature` and a commit on each branch.
fn setup() -> Shop {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        &format!("{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n"),
    );
    shop.ok(&["define", "p.rnt"]);
    shop.commit("main 0", &["+orders(1, 1, 10)"]);
    shop.ok(&["branch", "feature"]);
    shop.commit("main 1", &["+orders(2, 1, 20)"]);
    shop
}

/// The command of attempt `k`: one of the history commands, or a commit.
fn command(k: usize, rng: &mut Rng) -> Vec<String> {
    let id = 100 + k;
    let args: Vec<String> = match rng.below(9) {
        0 | 1 => vec![
            "commit".into(),
            "-m".into(),
            format!("attempt {k}"),
            format!("+orders({id}, {}, {id})", k % 5),
        ],
        2 => vec!["branch".into(), format!("b{k}")],
        3 => vec![
            "switch".into(),
            if rng.below(2) == 0 { "main" } else { "feature" }.into(),
        ],
        4 => vec![
            "merge".into(),
            if rng.below(2) == 0 { "main" } else { "feature" }.into(),
        ],
        5 => vec!["reset".into(), "HEAD~1".into()],
        6 => vec!["revert".into(), "HEAD".into()],
        7 => vec!["tag".into(), format!("t{k}")],
        _ => vec!["gc".into()],
    };
    args
}

/// The checks after each interruption; `acknowledged` holds the commit ids commands
/// reported.
fn check(shop: &Shop, acknowledged: &[String], context: &str) {
    let status = shop.status();
    let branches: Value = serde_json::from_str(&shop.ok(&["branch", "--format", "json"])).unwrap();
    for branch in branches.as_array().unwrap() {
        let name = branch["name"].as_str().unwrap();
        let log: Value =
            serde_json::from_str(&shop.ok(&["log", name, "--format", "json"])).unwrap();
        let log = log.as_array().unwrap();
        assert_eq!(log[0]["commit"], branch["commit"], "{context}: {name}");
        assert!(
            log.last().unwrap()["parents"]
                .as_array()
                .unwrap()
                .is_empty(),
            "{context}: {name}'s history does not reach a root"
        );
        let verify = shop.run(&["verify", "--at", name]);
        assert_eq!(verify.code, 0, "{context}: {name}: {verify:?}");
        if branch["current"] == true {
            assert_eq!(branch["commit"], status["commit"], "{context}");
        }
    }
    let reflog: Value =
        serde_json::from_str(&shop.ok(&["reflog", "-n", "1", "--format", "json"])).unwrap();
    assert_eq!(reflog[0]["commit"], status["commit"], "{context}");
    for id in acknowledged {
        shop.ok(&["log", id, "-n", "1"]);
    }
}

/// The commit id a finished command reported, if it made one.
fn reported_commit(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("committed "))
        .and_then(|rest| rest.split(' ').next())
        .map(str::to_string)
}

#[test]
fn killed_history_commands_leave_consistent_refs() {
    let kills: usize = std::env::var("RNT_CRASH_HISTORY_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(KILLS_DEFAULT);
    let mut rng = Rng(0xb4a7c4);
    let shop = setup();
    let mut acknowledged = Vec::new();
    let mut killed = 0;
    for k in 0..kills {
        let args = command(k, &mut rng);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = shop.spawn(&args);
        std::thread::sleep(Duration::from_millis(rng.below(KILL_DELAY_MAX_MS + 1)));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        match out.status.code() {
            None => killed += 1,
            Some(0) => acknowledged.extend(reported_commit(&stdout)),
            // A command may refuse cleanly (a merge of a branch into itself's ancestor
            // is fine, but a reset past the root, or a revert a denial refuses, is exit 1).
            Some(1) => {}
            Some(code) => panic!(
                "attempt {k} {args:?}: exit {code}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
        check(&shop, &acknowledged, &format!("after attempt {k} {args:?}"));
    }
    eprintln!("history crash test: {kills} attempts, {killed} killed mid-way");
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
)]
fn an_abort_at_any_write_point_of_a_history_command_leaves_consistent_refs() {
    let shop = setup();
    let mut acknowledged = Vec::new();
    let mut k = 0;
    for point in ALL_POINTS {
        for action in [
            &["branch", "x"][..],
            &["switch", "feature"],
            &["merge", "main"],
            &["switch", "main"],
            &["merge", "feature"],
            &["tag", "y"],
            &["reset", "HEAD~1"],
            &["revert", "HEAD"],
            &["gc"],
        ] {
            k += 1;
            let mut args: Vec<String> = action.iter().map(|a| (*a).to_string()).collect();
            if matches!(action[0], "branch" | "tag") {
                args[1] = format!("{}{k}", action[1]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = shop
                .command(&args)
                .env(FAULT_ENV, format!("{point}:1"))
                .output()
                .expect("run rnt");
            let stdout = String::from_utf8_lossy(&output.stdout);
            match output.status.code() {
                None | Some(1) => {}
                Some(0) => acknowledged.extend(reported_commit(&stdout)),
                Some(code) => panic!(
                    "{args:?} at {point}: exit {code}: {}",
                    String::from_utf8_lossy(&output.stderr)
                ),
            }
            check(
                &shop,
                &acknowledged,
                &format!("{args:?} aborted at {point}"),
            );
            // And the store still takes commits.
            shop.commit(
                &format!("after {k}"),
                &[&format!("+orders({}, 1, 1)", 1000 + k)],
            );
        }
    }
}
