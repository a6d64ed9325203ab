//! `rnt` commands through a running server: when the store's `server` entry names a server
//! that answers, a command that can run there (see `invoke::route`) is sent to it —
//! the command line, the input files it names (read here, sent as bytes), the commit time
//! setting — and what it prints and its exit code come back, identical to a run here.
//! `--no-server` runs here; an entry whose server does not answer is ignored.
//!
//! The wire format (`POST /api/cli`): a JSON header line, then the inputs' bytes one after
//! another. Request header: `{"argv", "inputs": [[PATH, BYTES], …], "commit_time"}`.
//! Answer header: `{"code", "stdout": BYTES, "stderr": BYTES}`, then the two outputs.

use super::api::{error, run_command, AppState};
use super::entry::{Entry, Found};
use super::identity::{self, Answer};
use super::invoke::{route, Outcome, Request, Route};
use crate::{Cli, Command};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The variable whose value a forwarded command takes along (the time commits record).
const COMMIT_TIME_ENV: &str = "RNT_COMMIT_TIME";

/// How long the client waits to connect before it runs the command itself.
const CONNECT_WAIT: Duration = Duration::from_millis(500);

/// Set to a store folder, a command on that store that could run through a server but finds
/// none answering fails (exit 70) instead of running here: the test suite run through a
/// server sets it, to show that its commands really went through one.
pub const REQUIRE_SERVER_ENV: &str = "RNT_REQUIRE_SERVER";

/// Runs `cli` through the store's server when one answers; returns the exit code, or `None`
/// when the command is to run here.
pub fn through_server(cli: &Cli) -> Option<u8> {
    if cli.no_server || cli.memory_budget.is_some() || route(&cli.command) == Route::Here {
        return None;
    }
    match send(cli) {
        Ok(code) => Some(code),
        Err(Unsent::NoServer(store, why)) if required_for(&store) => {
            eprintln!(
                "error: {REQUIRE_SERVER_ENV} is set, and no server answered for this store{}",
                why.map(|why| format!(" ({why})")).unwrap_or_default()
            );
            Some(crate::EXIT_INTERNAL)
        }
        Err(_) => None,
    }
}

/// Whether [`REQUIRE_SERVER_ENV`] names `store`.
fn required_for(store: &std::path::Path) -> bool {
    let Some(required) = std::env::var_os(REQUIRE_SERVER_ENV) else {
        return false;
    };
    let canonical = |path: &std::path::Path| path.canonicalize().ok();
    canonical(std::path::Path::new(&required)).is_some_and(|r| Some(r) == canonical(store))
}

/// Why a command was not sent.
enum Unsent {
    /// No server answers for the store (why not, when an entry named one).
    NoServer(PathBuf, Option<String>),
    /// The command runs here (an input the client cannot read reports itself here; a
    /// read-only server takes no writes).
    Here,
}

/// Sends `cli` to the store's server, if one answers and proves it serves this store.
fn send(cli: &Cli) -> Result<u8, Unsent> {
    let route = route(&cli.command);
    let store = crate::store_open::locate(cli.store.as_deref()).map_err(|_| Unsent::Here)?;
    let (entry, store_id) =
        read_entry(&store).ok_or_else(|| Unsent::NoServer(store.clone(), None))?;
    // A write learns the head too, so a cut-off answer can say whether it landed.
    let head_before = match entry.judge(&store_id, route == Route::Write) {
        Found::Serving(head) => head,
        Found::Stale(why) => {
            // Its server is gone, or another answers there: this store's commands run here.
            entry.remove();
            return Err(Unsent::NoServer(store, Some(why)));
        }
        Found::Elsewhere => {
            let why = format!("the entry names a server on machine {}", entry.machine);
            return Err(Unsent::NoServer(store, Some(why)));
        }
        Found::Silent => {
            let why = format!("the server at http://{} did not answer in time", entry.http);
            return Err(Unsent::NoServer(store, Some(why)));
        }
    };
    let argv = std::env::args_os()
        .map(|arg| arg.into_string().ok())
        .collect::<Option<Vec<_>>>()
        .ok_or(Unsent::Here)?;
    let request = Request {
        argv,
        inputs: read_inputs(&cli.command).ok_or(Unsent::Here)?,
        commit_time: std::env::var(COMMIT_TIME_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok()),
    };
    let mut stream = std::net::TcpStream::connect_timeout(&entry.http, CONNECT_WAIT)
        .map_err(|e| Unsent::NoServer(store.clone(), Some(e.to_string())))?;
    let outcome = exchange(&mut stream, &entry, &request).unwrap_or_else(|e| {
        let cut = CutOff {
            entry: &entry,
            store: &store,
            store_id: &store_id,
            head_before: head_before.as_deref(),
        };
        Outcome::refused(&cut.explain(&e, route))
    });
    let _ = std::io::stdout().write_all(&outcome.stdout);
    let _ = std::io::stdout().flush();
    eprint!("{}", outcome.stderr);
    Ok(outcome.code)
}

/// The store's server entry and the store's own id (`None`: no entry, or a store that
/// cannot be opened, which reports itself when the command runs here).
fn read_entry(store: &Path) -> Option<(Entry, String)> {
    match crate::store_open::object_store_url(store) {
        // Two requests: the entry and the id.
        Some(_) => {
            let db = crate::store_open::open_at(store, false).ok()?;
            let entry = Entry::read_note(std::sync::Arc::clone(db.chunks()))?;
            let id = crate::store_open::store_id(store, &db).unwrap_or_default();
            Some((entry, id))
        }
        None => {
            let entry = Entry::read(store)?;
            let id = crate::store_id::read(&crate::store_id::Holder::Folder(store));
            Some((entry, id.unwrap_or_default()))
        }
    }
}

/// A command whose server stopped answering mid-way, and what can be told of it.
struct CutOff<'a> {
    entry: &'a Entry,
    store: &'a Path,
    store_id: &'a str,
    /// The branch's commit the server saw just before a write was sent.
    head_before: Option<&'a str>,
}

impl CutOff<'_> {
    /// What the user is told: for a write whose server is gone, whether the store's head
    /// moved since it was sent.
    fn explain(&self, error: &std::io::Error, route: Route) -> String {
        let http = self.entry.http;
        let unsure = format!(
            "the server at http://{http} stopped answering ({error}); the command may or may not have taken effect: see `rnt log`"
        );
        if route != Route::Write {
            return format!(
                "the server at http://{http} stopped answering ({error}); run the command again"
            );
        }
        let gone = !super::entry::process_lives(self.entry.pid)
            || !matches!(
                identity::ask(self.entry, self.store_id, false).0,
                Answer::Proven | Answer::Silent
            );
        let Some(before) = self.head_before.filter(|_| gone) else {
            return unsure;
        };
        let Some(now) = crate::store_open::open_at(self.store, false)
            .ok()
            .and_then(|db| identity::head_commit(&db))
        else {
            return unsure;
        };
        let short = |hex: &str| {
            hex.chars()
                .take(crate::output::SHORT_HEX_DIGITS)
                .collect::<String>()
        };
        if now == before {
            format!(
                "the server at http://{http} stopped ({error}) before the command committed: HEAD is still {}, nothing changed; run it again",
                short(&now)
            )
        } else {
            format!(
                "the server at http://{http} stopped ({error}) after HEAD moved from {} to {}: that is this command's commit unless another writer made it; see `rnt log`",
                short(before),
                short(&now)
            )
        }
    }
}

/// The input files `command` names, read here (`None`: one cannot be read, so the command
/// runs here and reports it as it always does).
fn read_inputs(command: &Command) -> Option<std::collections::BTreeMap<String, Vec<u8>>> {
    let files: Vec<PathBuf> = match command {
        Command::Commit(args) => args.input_file().map(PathBuf::from).into_iter().collect(),
        Command::Define(args) => vec![args.input_file().to_path_buf()],
        Command::Sql(args) => args.input_file().map(PathBuf::from).into_iter().collect(),
        Command::Merge(args) => args.input_file().map(PathBuf::from).into_iter().collect(),
        _ => Vec::new(),
    };
    let mut inputs = std::collections::BTreeMap::new();
    for file in files {
        let bytes = crate::cmd::read_local_input(&file).ok()?;
        inputs.insert(file.to_string_lossy().into_owned(), bytes);
    }
    Some(inputs)
}

/// Sends `request` and reads the answer.
fn exchange(
    stream: &mut std::net::TcpStream,
    entry: &Entry,
    request: &Request,
) -> std::io::Result<Outcome> {
    let body = encode_request(request);
    let head = format!(
        "POST /api/cli HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        entry.http,
        entry.secret,
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&body)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    decode_answer(&answer)
}

/// The request's bytes: the header line, then the inputs.
fn encode_request(request: &Request) -> Vec<u8> {
    let header = serde_json::json!({
        "argv": request.argv,
        "inputs": request
            .inputs
            .iter()
            .map(|(path, bytes)| serde_json::json!([path, bytes.len()]))
            .collect::<Vec<_>>(),
        "commit_time": request.commit_time,
    });
    let mut body = header.to_string().into_bytes();
    body.push(b'\n');
    for bytes in request.inputs.values() {
        body.extend_from_slice(bytes);
    }
    body
}

/// The request a body holds, or what is wrong with it.
fn decode_request(body: &[u8]) -> Result<Request, String> {
    let split = body
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no header line")?;
    let header: serde_json::Value =
        serde_json::from_slice(&body[..split]).map_err(|e| format!("bad header: {e}"))?;
    let argv = header["argv"]
        .as_array()
        .ok_or("no argv")?
        .iter()
        .map(|arg| {
            arg.as_str()
                .map(str::to_string)
                .ok_or("an argument is not text")
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut rest = &body[split + 1..];
    let mut inputs = std::collections::BTreeMap::new();
    for input in header["inputs"].as_array().ok_or("no inputs")? {
        let path = input[0].as_str().ok_or("an input has no path")?;
        let length = input[1]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= rest.len())
            .ok_or("an input's length is wrong")?;
        inputs.insert(path.to_string(), rest[..length].to_vec());
        rest = &rest[length..];
    }
    if !rest.is_empty() {
        return Err("bytes after the inputs".into());
    }
    Ok(Request {
        argv,
        inputs,
        commit_time: header["commit_time"].as_i64(),
    })
}

/// The outcome an HTTP answer holds.
fn decode_answer(answer: &[u8]) -> std::io::Result<Outcome> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no HTTP head"))?;
    let head = String::from_utf8_lossy(&answer[..end]);
    let body = &answer[end + 4..];
    if !head.starts_with("HTTP/1.1 200") {
        let message = String::from_utf8_lossy(body);
        return Ok(Outcome::refused(&format!(
            "the server refused the command: {}",
            crate::output::one_line(&message)
        )));
    }
    let split = body
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no answer header"))?;
    let header: serde_json::Value =
        serde_json::from_slice(&body[..split]).map_err(|_| bad("bad answer header"))?;
    let length = |name: &str| {
        header[name]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad("bad answer header"))
    };
    let (out_len, err_len) = (length("stdout")?, length("stderr")?);
    let rest = &body[split + 1..];
    if rest.len() != out_len + err_len {
        return Err(bad("the answer was cut short"));
    }
    Ok(Outcome {
        code: header["code"]
            .as_u64()
            .and_then(|c| u8::try_from(c).ok())
            .ok_or_else(|| bad("bad exit code"))?,
        stdout: rest[..out_len].to_vec(),
        stderr: String::from_utf8_lossy(&rest[out_len..]).into_owned(),
    })
}

/// `POST /api/cli`: runs a forwarded command line.
pub async fn serve_command(State(state): State<AppState>, body: Bytes) -> Response {
    let request = match decode_request(&body) {
        Ok(request) => request,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let outcome = run_command(&state, request).await;
    let header = serde_json::json!({
        "code": outcome.code,
        "stdout": outcome.stdout.len(),
        "stderr": outcome.stderr.len(),
    });
    let mut answer = header.to_string().into_bytes();
    answer.push(b'\n');
    answer.extend_from_slice(&outcome.stdout);
    answer.extend_from_slice(outcome.stderr.as_bytes());
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/octet-stream")],
        answer,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_it_was_sent() {
        let mut request = Request {
            argv: vec!["rnt".into(), "commit".into(), "-f".into(), "-".into()],
            commit_time: Some(7),
            ..Request::default()
        };
        request.inputs.insert("-".into(), b"+r(1)\n".to_vec());
        request
            .inputs
            .insert("p.rnt".into(), "relation r(x: int).\n\u{e9}".into());
        let back = decode_request(&encode_request(&request)).unwrap();
        assert_eq!(back.argv, request.argv);
        assert_eq!(back.inputs, request.inputs);
        assert_eq!(back.commit_time, Some(7));
        let mut cut = encode_request(&request);
        cut.pop();
        assert!(decode_request(&cut).is_err());
        cut.extend_from_slice(b"xx");
        assert!(decode_request(&cut).is_err());
        assert!(decode_request(b"{}").is_err());
    }
}
