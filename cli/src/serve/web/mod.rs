//! The web view at `/`: server-rendered HTML that reads without JavaScript. Every link
//! names a state by its full commit id, so a URL shows the same thing forever.
//!
//! Pages: `/` (branches, tags, the commit graph), `/commit/REF` (message, parents, base and
//! view changes, the program diff, the tuple changes), `/relation/NAME?at=REF` (paged,
//! sorted, filtered), `/diff?from=&to=` (views included), `/explain/NAME?at=`, `/verify?at=`.
//!
//! The SQL compiler's helper relations (names starting with `_`) are left out of every
//! list — change counts, tuple changes, the program diff, a state's relations, verify's
//! line — unless the page is asked with `?internal=1`; a page that left some out links to
//! itself with it. `/relation/_NAME` shows a helper by name.

mod history;
mod layout;
mod relation;

use super::api::{AppState, Params};
use super::invoke::{invoke, Request};
use super::Server;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;

/// The pages' routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/commit/{reference}", get(commit))
        .route("/relation/{name}", get(relation))
        .route("/diff", get(diff))
        .route("/explain/{name}", get(explain))
        .route("/verify", get(verify))
}

/// Builds a page off the async threads; an error becomes a page saying what went wrong.
async fn page<F>(state: &AppState, build: F) -> Response
where
    F: FnOnce(&Server) -> anyhow::Result<Markup> + Send + 'static,
{
    let server = Arc::clone(&state.server);
    let built = tokio::task::spawn_blocking(move || build(&server)).await;
    let (status, body) = match built {
        Ok(Ok(markup)) => (StatusCode::OK, markup),
        Ok(Err(error)) => {
            let code = crate::exit_code(&error);
            let message = crate::output::one_line(&error.to_string());
            (
                super::api::status_of(code),
                layout::page("Error", html! { p.error role="alert" { (message) } }),
            )
        }
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            layout::page(
                "Error",
                html! { p.error { "internal error (a bug in rnt)" } },
            ),
        ),
    };
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body.into_string(),
    )
        .into_response()
}

async fn index(State(state): State<AppState>, Query(params): Params) -> Response {
    page(&state, move |server| history::index(server, &params)).await
}

async fn commit(
    State(state): State<AppState>,
    Path(reference): Path<String>,
    Query(params): Params,
) -> Response {
    page(&state, move |server| {
        history::commit(server, &reference, internal(&params))
    })
    .await
}

/// Whether a page lists the SQL compiler's helper relations too (`?internal=1`).
pub(crate) fn internal(params: &std::collections::BTreeMap<String, String>) -> bool {
    params
        .get("internal")
        .is_some_and(|v| v == "1" || v == "true")
}

async fn relation(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Params,
) -> Response {
    page(&state, move |server| relation::page(server, &name, &params)).await
}

async fn diff(State(state): State<AppState>, Query(params): Params) -> Response {
    page(&state, move |server| history::diff(server, &params)).await
}

/// A page showing what a CLI command prints (`rnt explain`, `rnt verify`).
fn command_page(server: &Server, title: &str, words: &[&str]) -> anyhow::Result<Markup> {
    let argv = std::iter::once("rnt")
        .chain(words.iter().copied())
        .map(str::to_string)
        .collect();
    let outcome = invoke(
        server,
        Request {
            argv,
            ..Request::default()
        },
    );
    let text = String::from_utf8_lossy(&outcome.stdout).into_owned() + &outcome.stderr;
    let verdict = match outcome.code {
        0 => None,
        code => Some(format!("exit code {code}")),
    };
    Ok(layout::page(
        title,
        html! {
            h1 { (title) }
            @if let Some(verdict) = verdict { p.error role="alert" { (verdict) } }
            pre { (text) }
        },
    ))
}

async fn explain(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Params,
) -> Response {
    page(&state, move |server| {
        let at = params.get("at").map(|at| format!("--at={at}"));
        let mut words = vec!["explain"];
        words.extend(at.as_deref());
        words.extend(["--", &name]);
        command_page(server, &format!("explain {name}"), &words)
    })
    .await
}

async fn verify(State(state): State<AppState>, Query(params): Params) -> Response {
    page(&state, move |server| {
        let at = params.get("at").map(|at| format!("--at={at}"));
        let mut words = vec!["verify"];
        words.extend(at.as_deref());
        if internal(&params) {
            words.push("--internal");
        }
        command_page(server, "verify", &words)
    })
    .await
}
