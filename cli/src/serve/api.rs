//! The HTTP API: each endpoint runs the CLI command that answers it, in JSON, so the shapes
//! are the CLI's (DESIGN: Serving). A failed command answers 4xx or 5xx with
//! `{"error", "exit_code"}`; every request is checked against the tokens first.
//!
//! Values from the request never become options: they are passed as `--opt=VALUE` or after
//! `--`, so no query string can point a command at another store or file.

use super::access::Access;
use super::connections::{Activity, Phase};
use super::cross_site::{self, Hosts};
use super::invoke::{invoke, Outcome, Request};
use super::Server;
use crate::output::Json;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
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
    /// The names requests may give as their `Host`.
    pub hosts: Arc<Hosts>,
}

/// A request's query parameters.
pub type Params = Query<BTreeMap<String, String>>;

/// The page that answers without a token: a command asks it before it trusts the server.
const IDENTITY_PATH: &str = "/api/identity";

/// What the web view may load: its own inline stylesheet, nothing else (no scripts, no
/// frames around it, forms only to itself).
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Every route of the server, for requests sent to `hosts`.
pub fn router(server: Arc<Server>, hosts: Hosts) -> Router {
    let state = AppState {
        server,
        hosts: Arc::new(hosts),
    };
    Router::new()
        .route(IDENTITY_PATH, get(super::identity::identity))
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
        .layer(middleware::from_fn_with_state(state.clone(), guard))
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

/// The token a request carries: `Authorization: Bearer TOKEN` (the scheme in any case,
/// RFC 9110 §11.1), or the `rnt_token` cookie (a browser's way).
fn presented_token(headers: &HeaderMap) -> Option<&str> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let (scheme, token) = value.to_str().ok()?.trim().split_once(' ')?;
        return scheme.eq_ignore_ascii_case("bearer").then(|| token.trim());
    }
    let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
    cookies
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == "rnt_token")
        .map(|(_, value)| value)
}

/// The answer refusing a request (boxed: a response is large, and refusals are rare).
type Refused = Box<Response>;

/// A JSON error answer, boxed as a refusal.
fn refuse(status: StatusCode, message: &str) -> Refused {
    Box::new(error(status, message))
}

/// Every request passes here first: its `Host` and, for a change, its origin (see
/// `cross_site`), then its token (reads need a read or write token, anything else a write
/// token; the identity page none); its body is taken whole before a command runs for it.
/// The connection's phase follows (see `connections`), and every answer carries the
/// security headers.
async fn guard(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: Next,
) -> Response {
    let activity = request.extensions().get::<Arc<Activity>>().cloned();
    let mut answer = match admit(&state, request).await {
        Ok(request) => {
            if let Some(activity) = &activity {
                activity.enter(Phase::Busy);
            }
            next.run(request).await
        }
        Err(refused) => *refused,
    };
    if let Some(activity) = &activity {
        activity.enter(Phase::Idle);
    }
    let headers = answer.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    answer
}

/// The request, its body taken whole, when it may go on; else the answer refusing it.
async fn admit(
    state: &AppState,
    request: axum::extract::Request,
) -> Result<axum::extract::Request, Refused> {
    let host = match request.headers().get(header::HOST).map(HeaderValue::to_str) {
        None => None,
        Some(Ok(host)) => Some(host.to_string()),
        Some(Err(_)) => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "the Host header is not text",
            ))
        }
    };
    if !state.hosts.accepts(host.as_deref()) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            &format!(
                "this server does not answer for host {} (give it --allow-host NAME to answer to a name)",
                rnt_db::diagnostic::clip(host.as_deref().unwrap_or(""))
            ),
        ));
    }
    if let Some(why) = cross_site::refusal(request.method(), request.headers(), host.as_deref()) {
        return Err(refuse(StatusCode::FORBIDDEN, &why));
    }
    if request.uri().path() != IDENTITY_PATH {
        authorize(state, &request)?;
    }
    take_body(request).await
}

/// Refuses a request whose token does not allow what it asks.
fn authorize(state: &AppState, request: &axum::extract::Request) -> Result<(), Refused> {
    let needed = match *request.method() {
        Method::GET | Method::HEAD => Access::Read,
        _ => Access::Write,
    };
    let presented = presented_token(request.headers());
    let server = &state.server;
    if needed == Access::Write && server.read_only {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "this server is read-only (a replica): send changes to the store's writing server",
        ));
    }
    match server.tokens.access(presented, server.secret.as_deref()) {
        None => {
            let mut answer = error(
                StatusCode::UNAUTHORIZED,
                "a token is needed: Authorization: Bearer TOKEN",
            );
            answer.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer"),
            );
            Err(Box::new(answer))
        }
        Some(access) if access < needed && presented.is_none() => Err(refuse(
            StatusCode::UNAUTHORIZED,
            "a change needs a write token: Authorization: Bearer TOKEN (a server without --token-file takes the secret in its entry, .rnt/server)",
        )),
        Some(access) if access < needed => Err(refuse(StatusCode::FORBIDDEN, "this token may only read")),
        Some(_) => Ok(()),
    }
}

/// The request with its body read whole (the connection is *reading* meanwhile, so a body
/// that stalls is cut off; see `connections`).
async fn take_body(request: axum::extract::Request) -> Result<axum::extract::Request, Refused> {
    let has_body = request.headers().contains_key(header::TRANSFER_ENCODING)
        || request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0");
    if !has_body {
        return Ok(request);
    }
    if let Some(activity) = request.extensions().get::<Arc<Activity>>() {
        activity.enter(Phase::Reading);
    }
    let (parts, body) = request.into_parts();
    match axum::body::to_bytes(body, BODY_BYTES_MAX).await {
        Ok(bytes) => Ok(axum::extract::Request::from_parts(
            parts,
            axum::body::Body::from(bytes),
        )),
        Err(_) => Err(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the body was cut short or is over {} MiB",
                BODY_BYTES_MAX >> 20
            ),
        )),
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

/// `--internal` when the query asks for the SQL compiler's helper relations (`internal=1`).
fn internal_flag(params: &BTreeMap<String, String>) -> Option<String> {
    super::web::internal(params).then(|| "--internal".to_string())
}

async fn status(State(state): State<AppState>, Query(params): Params) -> Response {
    let mut words = vec!["status".to_string(), "--format=json".to_string()];
    words.extend(internal_flag(&params));
    json_command(&state, words).await
}

async fn log(State(state): State<AppState>, Query(params): Params) -> Response {
    let mut words = vec!["log".to_string(), "--format=json".to_string()];
    words.extend(options(&params, &[("n", "max-count")]));
    words.extend(internal_flag(&params));
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
    if internal_flag(&params).is_some() {
        words.push("--internal");
    }
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
    words.extend(internal_flag(&params));
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
    words.extend(internal_flag(&params));
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
