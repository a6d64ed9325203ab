//! Guards `now()` in SQL materialized views as the clock: as commits step the clock, each
//! time-window view holds exactly the rows its window admits at that clock (checked
//! against the arithmetic here), equals its SELECT run as a query, and passes `verify`.

use rnt_db::{Database, Value};
use rnt_sql_run::{Outcome, Session};
use rnt_store::MemoryStore;
use std::sync::Arc;

/// The clock of the first commits, Unix seconds (2023-11-14 22:13:20 UTC).
const START: i64 = 1_700_000_000;
const DAY: i64 = 86_400;
/// Events, one a day from `START` on.
const EVENTS: i64 = 20;

fn run(session: &mut Session<'_>, sql: &str) -> Vec<Outcome> {
    session
        .run(sql)
        .unwrap_or_else(|(_, e)| panic!("{sql}: {e}"))
}

/// The ids of a query's rows, sorted.
fn ids(session: &mut Session<'_>, sql: &str) -> Vec<i64> {
    let Some(Outcome::Rows { rows, .. }) = run(session, sql).pop() else {
        panic!("{sql} gave no rows")
    };
    let mut ids: Vec<i64> = rows
        .iter()
        .map(|row| match row[0] {
            Value::Int(i) => i,
            ref other => panic!("an id, not {other:?}"),
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// A TIMESTAMP literal of Unix seconds `s`.
fn timestamp(s: i64) -> String {
    let iso = rnt_lang::time::format_timestamp(s * 1_000_000);
    format!(
        "TIMESTAMP '{}'",
        iso.trim_end_matches('Z').replace('T', " ")
    )
}

#[test]
fn time_window_views_follow_the_clock() {
    let db = Database::new(Arc::new(MemoryStore::new())).with_commit_time(Arc::new(|| START));
    let mut session = Session::new(&db);
    run(
        &mut session,
        "CREATE TABLE ev (id INT PRIMARY KEY, ts TIMESTAMP, t BIGINT)",
    );
    let rows: Vec<String> = (0..EVENTS)
        .map(|k| {
            let s = START + k * DAY;
            format!("({k}, {}, {s})", timestamp(s))
        })
        .chain(["(100, NULL, NULL)".to_string()])
        .collect();
    run(
        &mut session,
        &format!("INSERT INTO ev VALUES {}", rows.join(", ")),
    );
    let views = [
        (
            "recent",
            "SELECT id FROM ev WHERE ts > now() - INTERVAL 7 DAY",
        ),
        (
            "recent_secs",
            "SELECT id FROM ev WHERE t > epoch(now()) - 604800",
        ),
        (
            "due",
            "SELECT id FROM ev WHERE ts <= now() + INTERVAL '36 hours'",
        ),
    ];
    for (name, select) in views {
        run(
            &mut session,
            &format!("CREATE MATERIALIZED VIEW {name} AS {select}"),
        );
    }
    for d in 0..=30 {
        let clock = START + d * DAY + 3_600;
        db.commit(Vec::new(), "tick", Some(clock))
            .expect("a clock step");
        let window: Vec<i64> = (0..EVENTS)
            .filter(|k| k * DAY > clock - START - 604_800)
            .collect();
        let due: Vec<i64> = (0..EVENTS)
            .filter(|k| k * DAY <= clock - START + 129_600)
            .collect();
        for (name, select) in views {
            let expected = if name == "due" { &due } else { &window };
            let held = ids(&mut session, &format!("SELECT id FROM {name}"));
            assert_eq!(&held, expected, "{name} at day {d}");
            assert_eq!(
                ids(&mut session, select),
                held,
                "{name}'s SELECT at day {d}"
            );
        }
        let report = db.verify(&db.head().expect("a head")).expect("verify runs");
        assert!(
            report.mismatches.is_empty(),
            "day {d}: {:?}",
            report.mismatches
        );
    }
}
