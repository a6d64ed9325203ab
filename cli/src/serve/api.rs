//! The HTTP API: each endpoint runs the CLI command that answers it, in JSON, so the shapes
//! are the CLI's (DESIGN: Serving). A failed command answers 4xx or 5xx with
//! `{"error", "exit_code"}`; every request is checked against the tokens first.
//!
//! Values from the request never become options: they are passed as `--opt=VALUE` or after
//! `--`, so no query string can point a command at another store or file.

use super::access::Access;
use super::invoke::{invoke, Outcome, Request};
use super::Server;
use crate::output::Json;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The largest request body: a change file, SQL text, or a forwarded command's inputs.
pub const BODY_BYTES_MAX: usize = 256 << 20;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The server.
    pub server: Arc<Server>,
    /// The server's own token (in its entry), if it has one.
    pub entry_token: Arc<Option<String>>,
}

/// A request's query parameters.
pub type Params = Query<BTreeMap<String, String>>;

/// Every route of the server.
pub fn router(server: Arc<Server>, entry_token: Option<String>) -> Router {
    let state = AppState {
        server,
        entry_token: Arc::new(entry_token),
    };
    Router::new()
        .route("/api/status", get(status))
        .route("/api/log", get(log))
        .route("/api/relations/{name}", get(relation))
        .route("/api/diff", get(diff))
        .route("/api/program", get(program))
        .route("/api/explain/{name}", get(explain))
        .route("/api/verify", get(verify))
        .route("/api/commit", post(commit))
        .route("/api/sql", post(sql))
        .route("/api/cli", post(super::forward::serve_command))
        .route("/api/subscribe/{name}", get(super::subscribe::subscribe))
        .merge(super::web::routes())
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), authorize))
        .layer(DefaultBodyLimit::max(BODY_BYTES_MAX))
        .with_state(state)
}

/// A JSON error answer.
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = Json::object([("error", Json::Str(message.to_string()))]);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.pretty(),
    )
        .into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page")
}

/// The token a request carries: `Authorization: Bearer TOKEN`, or the `rnt_token` cookie
/// (a browser's way).
fn presented_token(headers: &HeaderMap) -> Option<&str> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        return value.to_str().ok()?.strip_prefix("Bearer ").map(str::trim);
    }
    let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
    cookies
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == "rnt_token")
        .map(|(_, value)| value)
}

/// Lets a request through when its token allows it: reads need a read or write token,
/// anything else a write token.
async fn authorize(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: Next,
) -> Response {
    let needed = match *request.method() {
        Method::GET | Method::HEAD => Access::Read,
        _ => Access::Write,
    };
    let presented = presented_token(request.headers());
    match state
        .server
        .tokens
        .access(presented, state.entry_token.as_deref())
    {
        None => {
            let mut answer = error(
                StatusCode::UNAUTHORIZED,
                "a token is needed: Authorization: Bearer TOKEN",
            );
            answer.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            answer
        }
        Some(access) if access < needed => error(StatusCode::FORBIDDEN, "this token may only read"),
        Some(_) => next.run(request).await,
    }
}

/// Runs a command line in the server, off the async threads.
pub async fn run_command(state: &AppState, request: Request) -> Outcome {
    let server = Arc::clone(&state.server);
    tokio::task::spawn_blocking(move || invoke(&server, request))
        .await
        .unwrap_or_else(|_| Outcome {
            code: crate::EXIT_INTERNAL,
            stdout: Vec::new(),
            stderr: "error: internal error: the command panicked (this is a bug in rnt)\n"
                .to_string(),
        })
}

/// The HTTP status of a command's exit code.
pub fn status_of(code: u8) -> StatusCode {
    match code {
        0 => StatusCode::OK,
        1 => StatusCode::BAD_REQUEST,
        2 | 4 => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A command's answer: its output with `content_type`, or its error as JSON.
fn answer(outcome: Outcome, content_type: &'static str) -> Response {
    if outcome.code == 0 {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, content_type)],
            outcome.stdout,
        )
            .into_response();
    }
    let message = outcome
        .stderr
        .trim()
        .trim_start_matches("error: ")
        .to_string();
    let body = Json::object([
        ("error", Json::Str(message)),
        ("exit_code", Json::UInt(u64::from(outcome.code))),
    ]);
    (
        status_of(outcome.code),
        [(header::CONTENT_TYPE, "application/json")],
        body.pretty(),
    )
        .into_response()
}

/// The argument list of `rnt WORDS…`.
fn argv(words: &[&str]) -> Vec<String> {
    std::iter::once("rnt")
        .chain(words.iter().copied())
        .map(str::to_string)
        .collect()
}

/// Runs `rnt WORDS…` and answers with its JSON.
async fn json_command(state: &AppState, words: Vec<String>) -> Response {
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let request = Request {
        argv: argv(&words),
        ..Request::default()
    };
    answer(run_command(state, request).await, "application/json")
}

/// `--NAME=VALUE` for each of `names` the query holds.
fn options(params: &BTreeMap<String, String>, names: &[(&str, &str)]) -> Vec<String> {
    names
        .iter()
        .filter_map(|(param, option)| params.get(*param).map(|v| format!("--{option}={v}")))
        .collect()
}

async fn status(State(state): State<AppState>) -> Response {
    json_command(&state, vec!["status".into(), "--format=json".into()]).await
}

async fn log(State(state): State<AppState>, Query(params): Params) -> Response {
    let mut words = vec!["log".to_string(), "--format=json".to_string()];
    words.extend(options(&params, &[("n", "max-count")]));
    if let Some(reference) = params.get("ref") {
        words.extend(["--".to_string(), reference.clone()]);
    }
    json_command(&state, words).await
}

async fn relation(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Params,
) -> Response {
    let mut words = vec!["show".to_string(), "--format=json".to_string()];
    words.extend(options(
        &params,
        &[
            ("at", "at"),
            ("limit", "limit"),
            ("offset", "offset"),
            ("order", "order"),
        ],
    ));
    words.extend(["--".to_string(), name]);
    json_command(&state, words).await
}

async fn diff(State(state): State<AppState>, Query(params): Params) -> Response {
    let Some(from) = params.get("from") else {
        return error(
            StatusCode::BAD_REQUEST,
            "name the state to diff from: ?from=REF",
        );
    };
    let to = params.get("to").map_or("HEAD", String::as_str);
    let mut words = vec!["diff", "--format=json"];
    if params.contains_key("relation") {
        words.extend(["--", from, to, &params["relation"]]);
    } else {
        words.extend(["--all", "--", from, to]);
    }
    json_command(&state, words.into_iter().map(str::to_string).collect()).await
}

async fn program(State(state): State<AppState>, Query(params): Params) -> Response {
    let mut words = vec!["program".to_string(), "--format=json".to_string()];
    words.extend(options(&params, &[("at", "at")]));
    json_command(&state, words).await
}

async fn explain(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Params,
) -> Response {
    let mut words = vec!["explain".to_string(), "--format=json".to_string()];
    words.extend(options(&params, &[("at", "at")]));
    words.extend(["--".to_string(), name]);
    json_command(&state, words).await
}

/// `{"ok", "report"}`: whether every view equals its recomputation, and verify's report.
async fn verify(State(state): State<AppState>, Query(params): Params) -> Response {
    let mut words = vec!["verify".to_string()];
    words.extend(options(&params, &[("at", "at")]));
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let outcome = run_command(
        &state,
        Request {
            argv: argv(&words),
            ..Request::default()
        },
    )
    .await;
    if outcome.code != 0 && outcome.code != 3 {
        return answer(outcome, "application/json");
    }
    let report = String::from_utf8_lossy(&outcome.stdout).into_owned() + &outcome.stderr;
    let body = Json::object([
        ("ok", Json::Bool(outcome.code == 0)),
        ("report", Json::Str(report)),
    ]);
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.pretty(),
    )
        .into_response()
}

/// `POST /api/commit?message=MSG`, the body a change file: the commit's JSON.
async fn commit(State(state): State<AppState>, Query(params): Params, body: Bytes) -> Response {
    let Some(message) = params.get("message") else {
        return error(
            StatusCode::BAD_REQUEST,
            "say what the commit does: ?message=MSG",
        );
    };
    let message = format!("--message={message}");
    let mut request = Request {
        argv: argv(&["commit", "--format=json", &message, "--file=-"]),
        ..Request::default()
    };
    request.inputs.insert("-".to_string(), body.to_vec());
    answer(run_command(&state, request).await, "application/json")
}

/// `POST /api/sql`, the body SQL: what `rnt sql --format json` prints.
async fn sql(State(state): State<AppState>, Query(params): Params, body: Bytes) -> Response {
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return error(StatusCode::BAD_REQUEST, "the SQL is not valid UTF-8");
    };
    let mut words = vec!["sql".to_string(), "--format=json".to_string()];
    words.extend(options(&params, &[("at", "at"), ("message", "message")]));
    words.extend(["--".to_string(), text]);
    json_command(&state, words).await
}
