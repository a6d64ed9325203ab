//! The random differential test of rnt's SQL against DuckDB (issue 37): random schemas
//! (keyed tables and keyless bags, NULLs, duplicate rows), queries, materialized views read
//! after each DML batch, and DML, each run on a fresh store through this `rnt` and on DuckDB
//! 2.0.1, the answers compared as multisets. The harness is Python
//! (`tests/sql/differential/run.py`, its README says what it generates and what each
//! verdict means); its counts of WRONG, INTERNAL and REFUSED statements may not rise above
//! `tests/sql/differential/baseline.txt`.
//!
//! Small by default (CI); `RNT_DIFF_CASES` and `RNT_DIFF_SEED` choose the size and seed of a
//! large run, `RNT_DIFF_JOBS` the cases run at once (default 2), `RNT_DIFF_SHOW=1` prints
//! each failure minimised. The Python package `duckdb` is required: scripts/test-clients
//! installs it, and without it the test fails saying so.

use std::path::Path;
use std::process::Command;

/// Cases in CI: about 2,300 statements; 6-14 s under `cargo test` on two cores, 26 s with
/// an unoptimised build while another build runs.
const CI_CASES: u32 = 48;
/// The seed of the CI run (baseline.txt has its line).
const CI_SEED: u32 = 1;

fn env_number(name: &str, default: u32) -> u32 {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, found {text:?}")),
        Err(_) => default,
    }
}

#[test]
fn rnt_sql_answers_as_duckdb_does_on_random_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    let harness = root.join("tests/sql/differential/run.py");
    let probe = Command::new("python3")
        .args(["-c", "import duckdb"])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "the Python package duckdb is missing (python3 -c 'import duckdb': {}): run \
             scripts/test-clients, which installs duckdb==2.0.1",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .rfind(|line| !line.trim().is_empty())
                .unwrap_or("")
                .trim()
        ),
        Err(error) => panic!(
            "python3 cannot run ({error}): install Python 3, then run scripts/test-clients, \
             which installs duckdb==2.0.1"
        ),
    }
    let cases = env_number("RNT_DIFF_CASES", CI_CASES);
    let seed = env_number("RNT_DIFF_SEED", CI_SEED);
    let jobs = env_number("RNT_DIFF_JOBS", 2);
    let mut command = Command::new("python3");
    command
        .arg(&harness)
        .args(["--rnt", env!("CARGO_BIN_EXE_rnt")])
        .args(["--seed", &seed.to_string()])
        .args(["--cases", &cases.to_string()])
        .args(["--jobs", &jobs.to_string()]);
    if std::env::var_os("RNT_DIFF_SHOW").is_some() {
        command.arg("--show");
    }
    let run = command.output().expect("python3 runs the harness");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the differential test against DuckDB failed (tests/sql/differential/README.md; \
         rerun with RNT_DIFF_SHOW=1 for minimised reproductions):\n{stdout}{stderr}"
    );
    println!("{stdout}");
}
