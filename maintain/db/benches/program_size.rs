//! How define and commit scale with the size of the program (issue 9): a chain of n views
//! (`v_i(x) :- v_{i-1}(x)`) defined at once, and a one-tuple commit through a chain of n
//! ephemeral relations read by one view. Each time should grow about linearly with n.
//!
//! `cargo bench -p rnt-maintain --bench program_size`; `RNT_BENCH_CHAIN` sets the largest n
//! (default 4000; the table doubles up to it from 1000).

use rnt_db::change::parse_changes;
use rnt_db::Database;
use rnt_store::MemoryStore;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn chain(n: usize, kind: &str, prefix: &str) -> String {
    let mut text =
        format!("relation base(x: int).\n{kind} {prefix}0(x: int).\n{prefix}0(x) :- base(x).\n");
    for i in 1..n {
        text.push_str(&format!(
            "{kind} {prefix}{i}(x: int).\n{prefix}{i}(x) :- {prefix}{}(x).\n",
            i - 1
        ));
    }
    text
}

fn define_views(n: usize) -> Duration {
    let db = Database::new(Arc::new(MemoryStore::new()));
    let program = chain(n, "view", "v");
    let started = Instant::now();
    db.define(&program, "chain.rnt", "define").expect("define");
    started.elapsed()
}

fn commit_through_ephemerals(n: usize) -> Duration {
    let db = Database::new(Arc::new(MemoryStore::new()));
    let mut program = chain(n, "ephemeral", "e");
    program.push_str(&format!("view top(x: int).\ntop(x) :- e{}(x).\n", n - 1));
    db.define(&program, "chain.rnt", "define").expect("define");
    let changes = parse_changes("+base(1)", None).expect("a change");
    let started = Instant::now();
    db.commit(changes, "one tuple", None).expect("commit");
    started.elapsed()
}

fn main() {
    let largest: usize = std::env::var("RNT_BENCH_CHAIN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    println!(
        "{:>6}  {:>14}  {:>26}",
        "n", "define views", "commit through ephemerals"
    );
    let mut n = 1000.min(largest);
    while n <= largest {
        let define = define_views(n);
        let commit = commit_through_ephemerals(n);
        println!(
            "{n:>6}  {:>12.3} s  {:>24.3} s",
            define.as_secs_f64(),
            commit.as_secs_f64()
        );
        n *= 2;
    }
}
