//! The commit-cost breakdown of `rnt commit --stats --format json`: where one commit's time
//! went, from the process's start to its output — opening the store, parsing, the base
//! change, each operator, writing the state, publishing it durably — and, across those
//! steps, the storage work (`rnt_store::meter`): hashing, compression, reads, writes,
//! fsyncs, the manifest swap. Times are whole microseconds (no floats in the output); the
//! time before `main` (loading and starting the process) is what a caller's wall clock
//! measures beyond `command_us`.

use crate::output::Json;
use rnt_db::{CommitOutcome, CommitTimings, Database};
use rnt_merkle::Counters;
use rnt_store::meter::{self, WorkSnapshot};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// When `main` began.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Notes that `main` began (the first thing it does).
pub fn mark_start() {
    let _ = STARTED.set(Instant::now());
}

/// Time since `main` began (since the first call, if it was never marked).
pub fn since_start() -> Duration {
    STARTED.get_or_init(Instant::now).elapsed()
}

/// What a command measures around its commit for the breakdown.
pub struct Breakdown {
    /// Opening the store (finding it, the writer lock, the manifest, the head).
    pub open: Duration,
    /// Reading and parsing the change set.
    pub parse: Duration,
    work_before: WorkSnapshot,
    counters_before: Counters,
}

impl Breakdown {
    /// Starts measuring: turns the storage meter on.
    pub fn start() -> Breakdown {
        meter::enable(true);
        Breakdown {
            open: Duration::ZERO,
            parse: Duration::ZERO,
            work_before: meter::snapshot(),
            counters_before: Counters::default(),
        }
    }

    /// Notes the node counters once the store is open (the work before it is the open's).
    pub fn opened(&mut self, db: &Database) {
        self.counters_before = db.nodes().counters();
    }

    /// The breakdown of `outcome` as JSON: `{"commit", "state", "changes", "work",
    /// "operators", "timings_us", "storage"}`.
    pub fn json(&self, db: &Database, outcome: &CommitOutcome) -> Json {
        let work = db.nodes().counters() - self.counters_before;
        let storage = meter::snapshot() - self.work_before;
        let (commit, state, changes, timings) = match outcome {
            CommitOutcome::Committed {
                commit,
                state,
                changes,
                timings,
                ..
            } => (
                Json::Str(commit.to_hex()),
                Json::Str(state.to_hex()),
                changes
                    .iter()
                    .map(|c| {
                        let counts = Json::object([
                            ("inserted", Json::UInt(c.inserted)),
                            ("deleted", Json::UInt(c.deleted)),
                        ]);
                        (c.relation.clone(), counts)
                    })
                    .collect(),
                timings.clone(),
            ),
            CommitOutcome::NothingToCommit => {
                (Json::Null, Json::Null, Vec::new(), CommitTimings::default())
            }
        };
        Json::object([
            ("commit", commit),
            ("state", state),
            ("changes", Json::Object(changes)),
            ("work", work_json(&work)),
            ("operators", operators_json(outcome, &timings)),
            ("timings_us", self.timings_json(&timings)),
            ("storage", storage_json(&storage, work.nodes_fetched)),
        ])
    }

    /// `{"command", "open", "parse", "base", "maintain", "write", "publish"}` in µs:
    /// `command` from `main` to now, the others its steps.
    fn timings_json(&self, timings: &CommitTimings) -> Json {
        Json::object([
            ("command", micros(since_start())),
            ("open", micros(self.open)),
            ("parse", micros(self.parse)),
            ("base", micros(timings.base)),
            ("maintain", micros(timings.maintain())),
            ("write", micros(timings.write)),
            ("publish", micros(timings.publish)),
        ])
    }
}

/// The node-store totals of the commit.
fn work_json(work: &Counters) -> Json {
    Json::object([
        ("nodes_written", Json::UInt(work.nodes_written)),
        ("bytes_written", Json::UInt(work.bytes_written)),
        ("nodes_read", Json::UInt(work.nodes_read)),
        ("nodes_fetched", Json::UInt(work.nodes_fetched)),
        ("entries_read", Json::UInt(work.entries_read)),
    ])
}

/// Each operator's work and wall time.
fn operators_json(outcome: &CommitOutcome, timings: &CommitTimings) -> Json {
    let CommitOutcome::Committed { stats, .. } = outcome else {
        return Json::Array(Vec::new());
    };
    let time_of = |operator: &str, relation: &str| {
        timings
            .operators
            .iter()
            .find(|(o, r, _)| o == operator && r == relation)
            .map_or(Duration::ZERO, |(_, _, time)| *time)
    };
    let base = timings.base;
    Json::Array(
        stats
            .iter()
            .map(|stat| {
                let time = match stat.operator.as_str() {
                    "base" => base,
                    operator => time_of(operator, &stat.relation),
                };
                Json::object([
                    ("relation", Json::Str(stat.relation.clone())),
                    ("operator", Json::Str(stat.operator.clone())),
                    ("entries_read", Json::UInt(stat.entries_read)),
                    ("nodes_read", Json::UInt(stat.nodes_read)),
                    ("nodes_written", Json::UInt(stat.nodes_written)),
                    ("us", micros(time)),
                ])
            })
            .collect(),
    )
}

/// Each kind of storage work: `{"us", "count", "bytes"}`, then `fetch`: the cold node
/// fetches (their count, and the time of the kinds a fetch is made of).
fn storage_json(storage: &WorkSnapshot, nodes_fetched: u64) -> Json {
    use rnt_store::meter::Work;
    let mut fields: Vec<(&str, Json)> = storage
        .iter()
        .map(|(work, total)| {
            let json = Json::object([
                ("us", micros(total.time)),
                ("count", Json::UInt(total.count)),
                ("bytes", Json::UInt(total.bytes)),
            ]);
            (work.name(), json)
        })
        .collect();
    let fetch: Duration = [
        Work::Locate,
        Work::Read,
        Work::Decompress,
        Work::Verify,
        Work::Decode,
    ]
    .into_iter()
    .map(|work| storage.get(work).time)
    .sum();
    fields.push((
        "fetch",
        Json::object([("us", micros(fetch)), ("count", Json::UInt(nodes_fetched))]),
    ));
    Json::object(fields)
}

fn micros(time: Duration) -> Json {
    Json::UInt(u64::try_from(time.as_micros()).unwrap_or(u64::MAX))
}
