//! A server proves that it is the one its entry names, before a command sends it anything.
//!
//! The entry (see `entry`) names the store's id, the machine, the server's pid and a secret
//! made at each start. A command asks `GET /api/identity?challenge=C` with a fresh random
//! `C`; the server answers with the id of the store it serves and a proof, a BLAKE3 keyed
//! hash of `C` and that id under a key derived from its secret. Only the server that wrote
//! the entry can make the proof, and the secret never crosses the wire until it has: a
//! command whose entry is stale (its server killed, another store's server or any other
//! program now on the port) runs in its own process instead, on its own store.

use super::api::{error, AppState, Params};
use super::entry::Entry;
use crate::output::Json;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::io::{Read as _, Write as _};
use std::time::Duration;

/// How long a command waits for a server's answer to the identity question.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The BLAKE3 context of the proof's key (a key derived for this use only).
const PROOF_CONTEXT: &str = "rnt 2026-12 serve: a server's proof of its entry's secret";

/// The longest challenge a server takes (a command sends 32 hex digits).
const CHALLENGE_CHARS_MAX: usize = 128;

/// The proof that the holder of `secret` serves store `store_id`, for `challenge`.
pub fn proof(secret: &str, challenge: &str, store_id: &str) -> String {
    let key = blake3::derive_key(PROOF_CONTEXT, secret.as_bytes());
    let mut hasher = blake3::Hasher::new_keyed(&key);
    hasher.update(challenge.as_bytes());
    hasher.update(&[0]);
    hasher.update(store_id.as_bytes());
    hasher.finalize().to_hex().to_string()
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// This machine's name for entries: `/etc/machine-id`, else the host name. A command goes
/// through a server only on the machine its entry names (an entry in a bucket names a
/// loopback address that means nothing elsewhere).
pub fn this_machine() -> String {
    ["/etc/machine-id", "/proc/sys/kernel/hostname"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .map(|text| text.trim().to_string())
        .find(|text| !text.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_string())
}

/// `GET /api/identity?challenge=C[&head=1]`: `{"store_id", "pid", "read_only", "proof",
/// "head"}` (`proof` null for a server that keeps no entry: a read-only one; `head` the
/// current branch's commit when asked, so a command cut off later can tell whether it
/// landed). Answered without a token: it tells nothing a token guards.
pub async fn identity(State(state): State<AppState>, Query(params): Params) -> Response {
    let challenge = params.get("challenge").map_or("", String::as_str);
    if challenge.is_empty() || challenge.len() > CHALLENGE_CHARS_MAX {
        return error(
            StatusCode::BAD_REQUEST,
            "ask with ?challenge=TEXT (at most 128 characters)",
        );
    }
    let server = &state.server;
    let proof = server.secret.as_deref().map_or(Json::Null, |secret| {
        Json::Str(proof(secret, challenge, &server.store_id))
    });
    let head = if params.contains_key("head") {
        let server = std::sync::Arc::clone(server);
        let head = tokio::task::spawn_blocking(move || head_commit(&server.db)).await;
        head.ok().flatten().map_or(Json::Null, Json::Str)
    } else {
        Json::Null
    };
    let body = Json::object([
        ("store_id", Json::Str(server.store_id.clone())),
        ("pid", Json::UInt(u64::from(std::process::id()))),
        ("read_only", Json::Bool(server.read_only)),
        ("proof", proof),
        ("head", head),
    ]);
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.pretty(),
    )
        .into_response()
}

/// What asking the entry's server came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// It is the server the entry names, serving store `store_id`.
    Proven,
    /// Something answered, and it is not that server (the reason, for a note).
    Other(String),
    /// Nothing accepts connections at the address.
    Nobody,
    /// Something accepted and said nothing in time (a busy server, or another program).
    Silent,
}

/// The current branch's commit in `db`, as hex (`None`: no commit yet, or unreadable).
pub fn head_commit(db: &rnt_db::Database) -> Option<String> {
    let branch = db.current_branch().ok()?;
    db.branch(&branch).ok()?.map(|commit| commit.to_hex())
}

/// Asks the server `entry` names whether it holds the entry's secret and serves
/// `store_id`; with `with_head`, also the current branch's commit it sees.
pub fn ask(entry: &Entry, store_id: &str, with_head: bool) -> (Answer, Option<String>) {
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&entry.http, ANSWER_WAIT) else {
        return (Answer::Nobody, None);
    };
    let challenge = crate::store_id::random_hex(16);
    let asked = format!(
        "GET /api/identity?challenge={challenge}{} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        if with_head { "&head=1" } else { "" },
        entry.http
    );
    let _ = stream.set_read_timeout(Some(ANSWER_WAIT));
    let _ = stream.set_write_timeout(Some(ANSWER_WAIT));
    if stream.write_all(asked.as_bytes()).is_err() {
        return (Answer::Silent, None);
    }
    let mut answer = Vec::new();
    // A body of a few hundred bytes; more is not an rnt server's answer.
    match stream.take(64 << 10).read_to_end(&mut answer) {
        Ok(_) => {}
        Err(e) if answer.is_empty() && is_timeout(&e) => return (Answer::Silent, None),
        Err(_) if answer.is_empty() => {
            return (Answer::Other("it closed the connection".into()), None)
        }
        Err(_) => {}
    }
    judge(&answer, entry, &challenge, store_id)
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Whether `answer` (a whole HTTP answer) proves the entry's server serves `store_id`.
fn judge(
    answer: &[u8],
    entry: &Entry,
    challenge: &str,
    store_id: &str,
) -> (Answer, Option<String>) {
    let not_rnt = || {
        (
            Answer::Other("it does not answer as an rnt server".into()),
            None,
        )
    };
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return not_rnt();
    };
    if !head.starts_with("HTTP/1.1 200") {
        return not_rnt();
    }
    let Ok(claim) = serde_json::from_str::<serde_json::Value>(body) else {
        return not_rnt();
    };
    let served = claim["store_id"].as_str().unwrap_or("");
    if served != store_id {
        let why = format!(
            "it serves another store (id {})",
            rnt_db::diagnostic::clip(served)
        );
        return (Answer::Other(why), None);
    }
    let expected = proof(&entry.secret, challenge, store_id);
    match claim["proof"].as_str() {
        Some(given) if same_secret(given, &expected) => {
            (Answer::Proven, claim["head"].as_str().map(str::to_string))
        }
        _ => (
            Answer::Other("it is not the server the entry names".into()),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_binds_the_secret_the_challenge_and_the_store() {
        let p = proof("s", "c", "id");
        assert_eq!(p, proof("s", "c", "id"));
        assert_ne!(p, proof("t", "c", "id"));
        assert_ne!(p, proof("s", "d", "id"));
        assert_ne!(p, proof("s", "c", "other"));
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }
}
