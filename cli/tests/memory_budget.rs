//! Guards the memory budget: work that cannot fit stops with exit 1, a message naming the
//! relation and how far it got, and the store untouched — the head where it was, `verify`
//! still passing, the next command working — instead of growing until it is killed. And
//! the budget bounds what the system sees: a closure and an import at a budget are
//! sampled for their peak resident set (`VmHWM`), which stays within the budget plus the
//! overshoot between two checks (measured; see the README).

mod common;

use common::Shop;
use std::fmt::Write as _;

/// A chain of this many edges has a closure of about n²/2 tuples: far more than the
/// budgets below allow.
const CHAIN_EDGES: i64 = 4_000;

fn chain_shop() -> Shop {
    let shop = Shop::init();
    shop.write("edges.rnt", "relation edge(src: int, dst: int).\n");
    shop.ok(&["define", "edges.rnt"]);
    let mut csv = String::from("src,dst\n");
    for i in 0..CHAIN_EDGES {
        let _ = writeln!(csv, "{i},{}", i + 1);
    }
    shop.write("chain.csv", &csv);
    shop.ok(&["import", "edge", "chain.csv"]);
    shop
}

#[test]
fn a_closure_that_cannot_fit_stops_at_the_budget_and_commits_nothing() {
    let shop = chain_shop();
    let head = shop.head();
    shop.write(
        "reach.rnt",
        "relation edge(src: int, dst: int).\nview reach(x: int, y: int).\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n",
    );
    let err = shop.fails(&["--memory-budget", "48M", "define", "reach.rnt"], 1);
    assert!(err.contains("out of memory budget while"), "{err}");
    assert!(err.contains("reach"), "{err}");
    assert!(err.contains("round"), "{err}");
    assert!(err.contains("the budget is 48 MiB"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(shop.head(), head, "nothing was committed");
    shop.ok(&["verify"]);
    // The same budget from the environment.
    let run = shop
        .command(&["define", "reach.rnt"])
        .env("RNT_MEMORY_BUDGET", "48M")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(shop.head(), head);
}

#[test]
fn an_import_over_the_budget_names_the_relation_and_the_rows_read() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation orders(id: int, customer: int, amount: int).\nview per_customer(c: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n",
    );
    shop.ok(&["define", "p.rnt"]);
    let head = shop.head();
    let mut csv = String::from("id,customer,amount\n");
    for i in 0..200_000 {
        let _ = writeln!(csv, "{i},{},{}", i % 1000, i % 77);
    }
    shop.write("orders.csv", &csv);
    let err = shop.fails(
        &["--memory-budget", "8M", "import", "orders", "orders.csv"],
        1,
    );
    assert!(err.contains("out of memory budget while"), "{err}");
    assert!(err.contains("orders"), "{err}");
    assert_eq!(shop.head(), head);
    // With room, the same import lands.
    let out = shop.ok(&["--memory-budget", "1G", "import", "orders", "orders.csv"]);
    assert!(out.starts_with("committed "), "{out}");
    shop.ok(&["verify"]);
}

#[test]
fn a_bad_budget_is_a_clear_error() {
    let shop = Shop::init();
    let err = shop.fails(&["--memory-budget", "lots", "status"], 1);
    assert!(err.contains("`lots` is not a size"), "{err}");
}

/// What a measured run did: its exit code, stderr, and peak resident set in bytes.
struct Measured {
    code: Option<i32>,
    stderr: String,
    peak: u64,
}

/// Runs `rnt args`, sampling its peak resident set (`VmHWM`, which only grows) every
/// millisecond until it exits.
fn measured(shop: &Shop, args: &[&str]) -> Measured {
    let mut child = shop.spawn(args);
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kib) = text
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kib| kib.parse::<u64>().ok())
            {
                peak = peak.max(kib * 1024);
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let output = child.wait_with_output().unwrap();
    Measured {
        code: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        peak,
    }
}

/// The budget of the measured runs.
const MEASURED_BUDGET: u64 = 96 << 20;

/// A budget the measured import cannot fit.
const TIGHT_BUDGET: u64 = 64 << 20;

/// A budget the measured import fits in, in steps of 32,768 rows (its peak without a
/// budget is ~190 MiB).
const IMPORT_BUDGET: u64 = 128 << 20;

/// How far a closure's peak resident set may pass the budget: the work of one round (or
/// 16,384 matches) between two checks. Measured: +1 to +2 MiB; with the budget counting
/// only the allocator's bytes (as before), +31 MiB.
const CLOSURE_OVERSHOOT_MAX: u64 = 8 << 20;

/// How far an import's peak may pass it: one maintained step between two checks (the step
/// is sized to a quarter of the budget). Measured: +0 to +10 MiB.
const IMPORT_OVERSHOOT_MAX: u64 = 16 << 20;

/// Rows of the measured import: its peak without a budget (~190 MiB in a debug build) is
/// well over the budget.
const IMPORT_ROWS: usize = 600_000;

/// Imports the measured rows into a fresh store at `budget`; returns the run and the state.
fn import_at(csv: &str, budget: &str) -> (Measured, Option<String>) {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation orders(id: int, customer: int, amount: int).\nview per_customer(c: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n",
    );
    shop.ok(&["define", "p.rnt"]);
    shop.write("orders.csv", csv);
    let run = measured(
        &shop,
        &["--memory-budget", budget, "import", "orders", "orders.csv"],
    );
    let state = (run.code == Some(0)).then(|| shop.state());
    (run, state)
}

/// Asserts `run` peaked within `overshoot` of `budget`.
fn assert_near(what: &str, run: &Measured, budget: u64, overshoot: u64) {
    assert!(run.peak > 0, "{what}: no sample");
    assert!(
        run.peak <= budget + overshoot,
        "{what}: peak {} MiB, over a budget of {} MiB by more than {} MiB",
        run.peak >> 20,
        budget >> 20,
        overshoot >> 20
    );
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads /proc")]
fn a_closure_and_an_import_at_a_budget_stay_near_it_in_resident_memory() {
    let shop = chain_shop();
    shop.write(
        "reach.rnt",
        "relation edge(src: int, dst: int).\nview reach(x: int, y: int).\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n",
    );
    let mib = |bytes: u64| format!("{}M", bytes >> 20);
    let closure = measured(
        &shop,
        &[
            "--memory-budget",
            &mib(MEASURED_BUDGET),
            "define",
            "reach.rnt",
        ],
    );
    assert_eq!(closure.code, Some(1), "{}", closure.stderr);
    assert!(
        closure.stderr.contains("out of memory budget while"),
        "{}",
        closure.stderr
    );
    let mut csv = String::from("id,customer,amount\n");
    for i in 0..IMPORT_ROWS {
        let _ = writeln!(csv, "{i},{},{}", i % 1000, i % 77);
    }
    let (refused, _) = import_at(&csv, &mib(TIGHT_BUDGET));
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    let (fitted, fitted_state) = import_at(&csv, &mib(IMPORT_BUDGET));
    assert_eq!(fitted.code, Some(0), "{}", fitted.stderr);
    let (roomy, roomy_state) = import_at(&csv, "4G");
    assert_eq!(
        fitted_state, roomy_state,
        "the budget changes how, not what"
    );
    eprintln!(
        "memory: closure at {} MiB: peak {} MiB (refused); import at {} MiB: peak {} MiB \
         (refused); at {} MiB: peak {} MiB (done); at 4 GiB: peak {} MiB (done)",
        MEASURED_BUDGET >> 20,
        closure.peak >> 20,
        TIGHT_BUDGET >> 20,
        refused.peak >> 20,
        IMPORT_BUDGET >> 20,
        fitted.peak >> 20,
        roomy.peak >> 20,
    );
    assert!(
        roomy.peak > IMPORT_BUDGET,
        "the import fits anyway: nothing measured"
    );
    assert_near("closure", &closure, MEASURED_BUDGET, CLOSURE_OVERSHOOT_MAX);
    assert_near(
        "refused import",
        &refused,
        TIGHT_BUDGET,
        IMPORT_OVERSHOOT_MAX,
    );
    assert_near("import", &fitted, IMPORT_BUDGET, IMPORT_OVERSHOOT_MAX);
}
