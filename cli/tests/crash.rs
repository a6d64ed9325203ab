//! Guards durability under SIGKILL: a stream of commits, imports, defines and gcs is killed
//! at random
//! moments; after every kill the store opens, `status` works, HEAD is a complete commit,
//! every relation reads back, every commit that reported success is still in the log, and
//! the tuples are exactly those of the commits in the log (no half commit is visible).
//!
//! Packs stay few without gc: after every command that finished and published, each
//! listed pack is at least 4 times the pack 3 places newer (so a store of B pack bytes
//! whose newest pack is b bytes holds at most 3 × (1 + log4(B / b)) packs), and once a
//! commit has run
//! after the last kill the packs folder holds no file the manifest does not list.
//!
//! 30 kills by default; `RNT_CRASH_KILLS=1000` runs the full count.

mod common;

use common::{Rng, Shop, SHOP};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Kills in a default run (fast enough for every `cargo test`).
const KILLS_DEFAULT: usize = 30;

/// The longest delay between starting a command and killing it. A commit in a test build
/// takes a few tens of milliseconds, so kills land before, during and after its writes.
const KILL_DELAY_MAX_MS: u64 = 20;

/// Every third attempt is an import of this many rows (a longer write).
const IMPORT_ROWS: i64 = 3_000;

/// One attempted commit: its message and the order ids it inserts.
struct Attempt {
    message: String,
    ids: Vec<i64>,
}

#[test]
fn killed_commits_leave_a_complete_head() {
    let kills: usize = std::env::var("RNT_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(KILLS_DEFAULT);
    let seed: u64 = std::env::var("RNT_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = Rng(seed);
    let shop = Shop::init();
    // A maintained view makes every commit also a maintenance run, checked after each kill.
    shop.write("crash.rnt", &format!("{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n"));
    shop.ok(&["define", "crash.rnt"]);
    let started = Instant::now();
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut confirmed: BTreeSet<String> = BTreeSet::new();
    let mut finished = 0;
    for k in 0..kills {
        let base = i64::try_from(k).expect("a kill count fits i64") * 10_000;
        let message = format!("attempt {k}");
        let writes_orders = !matches!(k % 6, 4 | 5);
        let (args, ids): (Vec<String>, Vec<i64>) = if k % 6 == 4 {
            // define: toggle an extra view (a backfill and a program change).
            let extra = if (k / 6) % 2 == 0 {
                "view big(id: int).\nbig(i) :- orders(i, _, a), a > 500.\n"
            } else {
                ""
            };
            shop.write("crash2.rnt", &format!("{SHOP}view per_customer(customer: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n{extra}"));
            (
                ["define", "crash2.rnt"].map(String::from).to_vec(),
                Vec::new(),
            )
        } else if k % 6 == 5 {
            (vec!["gc".to_string()], Vec::new())
        } else if k % 3 == 2 {
            let ids: Vec<i64> = (base..base + IMPORT_ROWS).collect();
            let mut csv = String::from("id,customer,amount\n");
            for id in &ids {
                let _ = writeln!(csv, "{id},{},{}", id % 97, id % 1000);
            }
            shop.write("batch.csv", &csv);
            (
                ["import", "orders", "batch.csv", "-m", &message]
                    .map(String::from)
                    .to_vec(),
                ids,
            )
        } else {
            let n = 1 + i64::try_from(rng.below(200)).expect("below 200");
            let ids: Vec<i64> = (base..base + n).collect();
            let text: String = ids
                .iter()
                .map(|id| format!("+orders({id}, {}, {})\n", id % 97, id % 1000))
                .collect();
            shop.write("batch.txt", &text);
            (
                ["commit", "-m", &message, "-f", "batch.txt"]
                    .map(String::from)
                    .to_vec(),
                ids,
            )
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = shop.spawn(&args);
        std::thread::sleep(Duration::from_millis(rng.below(KILL_DELAY_MAX_MS + 1)));
        let _ = child.kill(); // SIGKILL; fails only when the process already exited
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            finished += 1;
            if writes_orders {
                assert!(
                    String::from_utf8_lossy(&out.stdout).starts_with("committed "),
                    "{out:?}"
                );
                confirmed.insert(message.clone());
            }
        } else {
            // Killed (no exit code), never a clean failure.
            assert_eq!(
                out.status.code(),
                None,
                "attempt {k} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        attempts.push(Attempt { message, ids });
        check_store(&shop, &attempts, &confirmed, k);
        // A command that published merged what an earlier kill left unmerged.
        let published = !String::from_utf8_lossy(&out.stdout).contains("nothing to commit");
        if out.status.success() && published {
            let sizes = pack_sizes(&shop);
            assert!(
                balanced(&sizes),
                "after finished attempt {k}: packs {sizes:?}"
            );
        }
    }
    let before = pack_sizes(&shop);
    shop.commit("after the last kill", &["+customers(1, \"basic\")"]);
    let sizes = pack_sizes(&shop);
    let total: u64 = sizes.iter().sum();
    let bound = 3 * (1 + (total / sizes[sizes.len() - 1]).ilog(4) as usize);
    assert!(balanced(&sizes), "packs {sizes:?}");
    assert!(
        sizes.len() <= bound,
        "{} packs, over 3 × (1 + log4(B / b)) = {bound}",
        sizes.len()
    );
    assert_eq!(unlisted_files(&shop), Vec::<String>::new());
    eprintln!(
        "crash test: {kills} kills ({finished} commands finished first, {} killed mid-way) in {:.1?}; \
         {} packs before the last commit, {} after ({total} bytes; bound {bound})",
        kills - finished,
        started.elapsed(),
        before.len(),
        sizes.len(),
    );
}

/// The listed packs' sizes, oldest first.
fn pack_sizes(shop: &Shop) -> Vec<u64> {
    std::fs::read_to_string(shop.store().join("manifest"))
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("pack "))
        .map(|rest| rest.split(' ').nth(1).unwrap().parse().unwrap())
        .collect()
}

/// Whether each pack is at least 4 times the pack 3 places newer.
fn balanced(sizes: &[u64]) -> bool {
    sizes.windows(4).all(|band| band[0] >= 4 * band[3])
}

/// Files in `packs/` the manifest does not list.
fn unlisted_files(shop: &Shop) -> Vec<String> {
    let manifest = std::fs::read_to_string(shop.store().join("manifest")).unwrap();
    let listed: BTreeSet<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("pack "))
        .map(|rest| rest.split(' ').next().unwrap())
        .collect();
    let mut unlisted: Vec<String> = std::fs::read_dir(shop.store().join("packs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !listed.contains(name.split('.').next().unwrap()))
        .collect();
    unlisted.sort();
    unlisted
}

/// The checks after each kill.
fn check_store(shop: &Shop, attempts: &[Attempt], confirmed: &BTreeSet<String>, k: usize) {
    let status = shop.status();
    let log = shop.log();
    // HEAD is a complete commit: the log walks back to the first commit, each entry's
    // parent is the next one, and the newest entry is HEAD with HEAD's state.
    assert_eq!(log[0]["commit"], status["commit"], "after kill {k}");
    assert_eq!(log[0]["state"], status["state"], "after kill {k}");
    for pair in log.windows(2) {
        assert_eq!(
            pair[0]["parents"],
            Value::Array(vec![pair[1]["commit"].clone()]),
            "after kill {k}"
        );
    }
    let in_log: BTreeSet<&str> = log.iter().map(|c| c["message"].as_str().unwrap()).collect();
    for message in confirmed {
        assert!(
            in_log.contains(message.as_str()),
            "after kill {k}: confirmed `{message}` is not in the log"
        );
    }
    // The tuples are exactly those of the commits in the log: all of each, nothing else.
    let expected: BTreeSet<i64> = attempts
        .iter()
        .filter(|a| in_log.contains(a.message.as_str()))
        .flat_map(|a| a.ids.iter().copied())
        .collect();
    let rows = shop.rows("orders", None);
    let ids: BTreeSet<i64> = rows.iter().map(|row| row[0].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), rows.len());
    assert!(
        ids == expected,
        "after kill {k}: orders hold {} ids, the log's commits {}",
        ids.len(),
        expected.len()
    );
    let orders = status["relations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "orders")
        .unwrap();
    assert_eq!(orders["count"].as_u64(), Some(rows.len() as u64));
    assert!(shop.rows("customers", None).is_empty());
    let per_customer = shop.rows("per_customer", None);
    let total: i64 = per_customer
        .iter()
        .map(|row| row[1].as_i64().unwrap())
        .sum();
    assert_eq!(
        usize::try_from(total).ok(),
        Some(rows.len()),
        "after kill {k}"
    );
    let verify = shop.run(&["verify"]);
    assert_eq!(verify.code, 0, "after kill {k}: {verify:?}");
}
