//! Guards durability at every named write point of the pack store: a command (commit,
//! import, define, gc) is aborted, as a power cut would stop it, at the n-th pass of each
//! point (`RNT_FAULT_AT=POINT:N`). After each abort the store opens without repair, the
//! head is the old or the new commit, every acknowledged commit is still in the log, the
//! tuples are exactly those of the logged commits, `verify` exits 0, the next commit lands,
//! and `gc` leaves only the packs the manifest lists.
//!
//! Passes 1..=3 of each point by default; `RNT_CRASH_POINT_PASSES=N` visits 1..=N.

mod common;

use common::{Shop, SHOP};
use rnt_store::fault::{ALL_POINTS, FAULT_ENV};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Passes of each point visited by default.
const PASSES_DEFAULT: u64 = 3;

/// Aborts the process on SIGABRT: no exit code.
const ABORTED: i32 = -1;

/// The program: a view so every commit is also maintenance, checked by verify.
fn program(extra_view: bool) -> String {
    let mut text = format!(
        "{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n"
    );
    if extra_view {
        text.push_str("view big(id: int).\nbig(i) :- orders(i, _, a), a > 500.\n");
    }
    text
}

/// The actions that write, each run under every armed point.
#[derive(Clone, Copy, Debug)]
enum Action {
    Commit,
    Import,
    Define,
    Gc,
}

struct Case {
    shop: Shop,
    /// Order ids of each acknowledged commit's message.
    ids_of: Vec<(String, Vec<i64>)>,
    next_id: i64,
}

impl Case {
    fn new() -> Case {
        let shop = Shop::init();
        shop.write("p.rnt", &program(false));
        shop.ok(&["define", "p.rnt"]);
        let mut case = Case {
            shop,
            ids_of: Vec::new(),
            next_id: 0,
        };
        // A little history, so merges and gc have packs to work on.
        for round in 0..3 {
            let (args, ids) = case.commit_args(&format!("setup {round}"), 20);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            case.shop.ok(&args);
            case.ids_of.push((format!("setup {round}"), ids));
        }
        case
    }

    fn commit_args(&mut self, message: &str, n: i64) -> (Vec<String>, Vec<i64>) {
        let ids: Vec<i64> = (self.next_id..self.next_id + n).collect();
        self.next_id += n;
        let text: String = ids
            .iter()
            .map(|id| format!("+orders({id}, {}, {})\n", id % 7, (id * 37) % 1000))
            .collect();
        self.shop.write("batch.txt", &text);
        let args = ["commit", "-m", message, "-f", "batch.txt"]
            .map(String::from)
            .to_vec();
        (args, ids)
    }

    fn import_args(&mut self, message: &str, n: i64) -> (Vec<String>, Vec<i64>) {
        let ids: Vec<i64> = (self.next_id..self.next_id + n).collect();
        self.next_id += n;
        let mut csv = String::from("id,customer,amount\n");
        for id in &ids {
            let _ = writeln!(csv, "{id},{},{}", id % 7, (id * 37) % 1000);
        }
        self.shop.write("batch.csv", &csv);
        let args = ["import", "orders", "batch.csv", "-m", message]
            .map(String::from)
            .to_vec();
        (args, ids)
    }

    /// Runs `action` with `point:pass` armed; returns whether it finished (acknowledged).
    fn run(&mut self, action: Action, point: &str, pass: u64) -> bool {
        let message = format!("{action:?} {point} {pass}");
        let (args, ids) = match action {
            Action::Commit => self.commit_args(&message, 30),
            Action::Import => self.import_args(&message, 2_000),
            Action::Define => {
                self.shop.write("p2.rnt", &program(true));
                (["define", "p2.rnt"].map(String::from).to_vec(), Vec::new())
            }
            Action::Gc => (vec!["gc".to_string()], Vec::new()),
        };
        let head_before = self.shop.head();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = self
            .shop
            .command(&args)
            .env(FAULT_ENV, format!("{point}:{pass}"))
            .output()
            .expect("run rnt");
        let code = output.status.code().unwrap_or(ABORTED);
        let finished = code == 0;
        assert!(
            finished || code == ABORTED,
            "{message}: exit {code}, {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let head_after = self.shop.head();
        if finished {
            if matches!(action, Action::Commit | Action::Import) {
                self.ids_of.push((message.clone(), ids));
                assert_ne!(head_after, head_before, "{message}");
            }
        } else if head_after != head_before {
            // Aborted after the manifest swap, in the pack merge that follows a publish:
            // the commit is durable though it was never acknowledged (`check` confirms
            // the new head holds all of it).
            if matches!(action, Action::Commit | Action::Import) {
                self.ids_of.push((message.clone(), ids));
            }
        }
        finished
    }

    fn check(&self, context: &str) {
        let status = self.shop.status();
        let log = self.shop.log();
        assert_eq!(log[0]["commit"], status["commit"], "{context}");
        let in_log: BTreeSet<&str> = log.iter().map(|c| c["message"].as_str().unwrap()).collect();
        let mut expected = BTreeSet::new();
        for (message, ids) in &self.ids_of {
            assert!(
                in_log.contains(message.as_str()),
                "{context}: `{message}` lost"
            );
            expected.extend(ids.iter().copied());
        }
        let rows = self.shop.rows("orders", None);
        let ids: BTreeSet<i64> = rows.iter().map(|row| row[0].as_i64().unwrap()).collect();
        assert_eq!(
            ids, expected,
            "{context}: orders differ from the logged commits"
        );
        let verify = self.shop.run(&["verify"]);
        assert_eq!(verify.code, 0, "{context}: {verify:?}");
    }

    /// The packs folder holds exactly the packs the manifest lists.
    fn check_packs_match_manifest(&self, context: &str) {
        let manifest = std::fs::read_to_string(self.shop.store().join("manifest")).unwrap();
        let listed: BTreeSet<String> = manifest
            .lines()
            .filter_map(|line| line.strip_prefix("pack "))
            .flat_map(|rest| {
                let name = rest.split(' ').next().unwrap();
                [format!("{name}.pack"), format!("{name}.idx")]
            })
            .collect();
        let present: BTreeSet<String> = std::fs::read_dir(self.shop.store().join("packs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(present, listed, "{context}");
    }
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
)]
fn an_abort_at_any_write_point_leaves_a_complete_store() {
    let passes: u64 = std::env::var("RNT_CRASH_POINT_PASSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PASSES_DEFAULT);
    let mut aborted = 0;
    let mut runs = 0;
    for point in ALL_POINTS {
        let aborted_before = aborted;
        let mut case = Case::new();
        for pass in 1..=passes {
            for action in [Action::Commit, Action::Import, Action::Define, Action::Gc] {
                let context = format!("{action:?} aborted at {point}:{pass}");
                runs += 1;
                if !case.run(action, point, pass) {
                    aborted += 1;
                }
                case.check(&context);
            }
        }
        // The store needs no repair: the next commit lands, and gc clears what the
        // aborted writers left.
        let (args, ids) = case.commit_args("after", 5);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        case.shop.ok(&args);
        case.ids_of.push(("after".to_string(), ids));
        case.shop.ok(&["gc"]);
        case.check(&format!("after the aborts at {point}"));
        case.check_packs_match_manifest(&format!("after gc, point {point}"));
        // The point is really on the write path: some run died there.
        assert!(aborted > aborted_before, "no run reached {point}");
    }
    eprintln!("crash points: {runs} runs, {aborted} aborted at their point");
}
