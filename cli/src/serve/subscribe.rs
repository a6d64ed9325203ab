//! `GET /api/subscribe/NAME?since=COMMIT[&branch=B]`: server-sent events, one per commit of
//! the branch after COMMIT (first-parent order, oldest first), each `id: COMMIT` and
//! `data: {"commit", "state", "relation", "changes": [["+" or "-", [values…]], …]}` — the
//! relation's change in that commit, views included. A subscriber resumes from the last id
//! it saw (`Last-Event-ID` or `since`): the change of any span is a diff, so nothing needs
//! to be retained for it. When the branch moves to a state that does not descend from the
//! last commit sent (a reset), an `error` event says so and the stream ends.

use super::api::{error, AppState, Params};
use crate::output::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use rnt_db::{Database, DbError, DiffScope, Snapshot};
use rnt_store::Address;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;

/// How often a subscription looks for commits made by other processes (the server's own
/// commits wake it at once).
const POLL_EVERY: Duration = Duration::from_millis(250);

/// Events buffered for a slow subscriber before its stream waits.
const EVENTS_BUFFERED: usize = 64;

/// What a subscription follows.
struct Subscription {
    db: Database,
    relation: String,
    branch: String,
    /// The last commit sent (or the one to start after).
    last: Address,
}

/// One event: a commit's change of the relation, or the end of the stream.
enum Step {
    Commit(Address, Json),
    Gone(String),
}

/// Starts a subscription.
pub async fn subscribe(
    State(state): State<AppState>,
    Path(relation): Path<String>,
    Query(params): Params,
    headers: HeaderMap,
) -> Response {
    let since = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| params.get("since").cloned());
    let Some(since) = since else {
        return error(
            StatusCode::BAD_REQUEST,
            "name the commit to start after: ?since=COMMIT (or Last-Event-ID)",
        );
    };
    let server = Arc::clone(&state.server);
    let branch = params.get("branch").cloned();
    let start = tokio::task::spawn_blocking(move || {
        start(&server.db, &relation, &since, branch.as_deref())
    })
    .await;
    let subscription = match start {
        Ok(Ok(subscription)) => subscription,
        Ok(Err(e)) => {
            return error(
                StatusCode::BAD_REQUEST,
                &crate::output::one_line(&e.to_string()),
            )
        }
        Err(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "internal error"),
    };
    let (sender, receiver) = tokio::sync::mpsc::channel(EVENTS_BUFFERED);
    let writes = state.server.gate.watch();
    tokio::spawn(follow(subscription, sender, writes));
    Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// Checks the request: the branch, the commit to start after, the relation.
fn start(
    db: &Database,
    relation: &str,
    since: &str,
    branch: Option<&str>,
) -> anyhow::Result<Subscription> {
    let branch = match branch {
        Some(name) => name.to_string(),
        None => db.current_branch()?,
    };
    let head = db
        .branch(&branch)?
        .ok_or_else(|| DbError::user(format!("no branch named {branch}")))?;
    let last = db
        .resolve(since)?
        .commit
        .ok_or_else(|| DbError::user(format!("`{since}` names no commit")))?;
    let head_state = db.snapshot_of_commit(head)?;
    if head_state.entry(relation).is_none()
        && db.snapshot_of_commit(last)?.entry(relation).is_none()
    {
        return Err(DbError::user(format!("no relation named {relation}")).into());
    }
    let subscription = Subscription {
        db: db.clone(),
        relation: relation.to_string(),
        branch,
        last,
    };
    if subscription.commits_after()?.is_none() {
        return Err(DbError::user(format!(
            "{} is not on branch {}'s first-parent history",
            last.to_hex(),
            subscription.branch
        ))
        .into());
    }
    Ok(subscription)
}

impl Subscription {
    /// The branch's commits after `last`, oldest first; `None` when `last` is not on the
    /// branch's first-parent history.
    fn commits_after(&self) -> anyhow::Result<Option<Vec<Address>>> {
        let Some(head) = self.db.branch(&self.branch)? else {
            return Ok(None);
        };
        let mut after = Vec::new();
        let mut at = Some(head);
        while let Some(commit) = at {
            if commit == self.last {
                after.reverse();
                return Ok(Some(after));
            }
            after.push(commit);
            let record = rnt_merkle::Commit::read(self.db.chunks().as_ref(), &commit)?;
            at = record.parent_addresses().first().copied();
        }
        Ok(None)
    }

    /// The events of every commit since the last one sent.
    fn next_steps(&self) -> Vec<Step> {
        match self.commits_after() {
            Ok(Some(commits)) => commits
                .into_iter()
                .map(|commit| match self.event_of(commit) {
                    Ok(json) => Step::Commit(commit, json),
                    Err(e) => Step::Gone(e.to_string()),
                })
                .collect(),
            Ok(None) => vec![Step::Gone(format!(
                "branch {} no longer descends from {}",
                self.branch,
                self.last.to_hex()
            ))],
            Err(e) => vec![Step::Gone(e.to_string())],
        }
    }

    /// The relation's change in `commit`, from its first parent.
    fn event_of(&self, commit: Address) -> anyhow::Result<Json> {
        let to = self.db.snapshot_of_commit(commit)?;
        let from = self.db.first_parent(&to)?;
        let changes = if from.entry(&self.relation).is_none() && to.entry(&self.relation).is_none()
        {
            Vec::new()
        } else {
            self.db
                .diff(&from, &to, &DiffScope::Relation(self.relation.clone()))?
        };
        Ok(event_json(&to, commit, &self.relation, &changes))
    }
}

/// An event's data.
fn event_json(
    to: &Snapshot,
    commit: Address,
    relation: &str,
    changes: &[rnt_db::TupleChange],
) -> Json {
    let changes = changes
        .iter()
        .map(|change| {
            Json::Array(vec![
                Json::Str(change.sign.to_string()),
                Json::Array(change.tuple.iter().map(Json::of_value).collect()),
            ])
        })
        .collect();
    Json::object([
        ("commit", Json::Str(commit.to_hex())),
        ("state", Json::Str(to.state_address.to_hex())),
        ("relation", Json::Str(relation.to_string())),
        ("changes", Json::Array(changes)),
    ])
}

/// Sends the events of each new commit until the subscriber goes away or the branch stops
/// descending from what was sent.
async fn follow(
    mut subscription: Subscription,
    sender: tokio::sync::mpsc::Sender<Result<Event, Infallible>>,
    mut writes: tokio::sync::watch::Receiver<u64>,
) {
    loop {
        let step = tokio::task::spawn_blocking(move || {
            let steps = subscription.next_steps();
            (subscription, steps)
        })
        .await;
        // A panic is reported by the hook; the subscriber sees its stream end.
        let Ok((returned, steps)) = step else {
            return;
        };
        subscription = returned;
        for step in steps {
            match step {
                Step::Commit(commit, json) => {
                    let event = Event::default().id(commit.to_hex()).data(json.compact());
                    if sender.send(Ok(event)).await.is_err() {
                        return;
                    }
                    subscription.last = commit;
                }
                Step::Gone(message) => {
                    let data = Json::object([("error", Json::Str(message))]).compact();
                    let _ = sender
                        .send(Ok(Event::default().event("error").data(data)))
                        .await;
                    return;
                }
            }
        }
        tokio::select! {
            () = sender.closed() => return,
            _ = writes.changed() => {},
            () = tokio::time::sleep(POLL_EVERY) => {},
        }
    }
}
