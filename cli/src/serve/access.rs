//! Who may do what. A server on 127.0.0.1 or ::1 may run without tokens; any other address
//! needs `--token-file`, whose lines are `read TOKEN` or `write TOKEN`, and then every
//! request carries one (`Authorization: Bearer TOKEN`, any case of `Bearer`; the Postgres
//! password). The writing server's own secret (in its entry, see `entry`) is a write token.
//!
//! On a server without tokens, HTTP reads are open to every local program, and HTTP writes
//! (`/api/cli` included) need the entry's secret: a web page cannot send an `Authorization`
//! header without a preflight, and the cross-site checks refuse what it can send. An
//! unknown token gets nothing. The Postgres protocol stays open there (no browser speaks
//! it; an HTTP request sent to its port fails the startup packet's length check).

use rnt_db::DbError;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// What a token allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Reads only.
    Read,
    /// Reads and writes.
    Write,
}

/// The tokens a server accepts (`None`: every request is allowed, on loopback only).
#[derive(Debug)]
pub struct Tokens {
    tokens: Option<BTreeMap<String, Access>>,
}

/// The shortest token accepted in a token file (a guessable token is no protection).
const TOKEN_CHARS_MIN: usize = 16;

impl Tokens {
    /// The tokens for a server on `address`: those of `file`, or none on loopback; any
    /// other address without a file is refused.
    pub fn for_address(address: SocketAddr, file: Option<&Path>) -> anyhow::Result<Tokens> {
        match file {
            Some(file) => Ok(Tokens {
                tokens: Some(read_token_file(file)?),
            }),
            None if is_loopback_exempt(address.ip()) => Ok(Tokens { tokens: None }),
            None => Err(DbError::user(format!(
                "refusing to serve on {address} without --token-file: only 127.0.0.1 and ::1 may go without tokens"
            ))
            .into()),
        }
    }

    /// What `presented` (a bearer token, if any) allows over HTTP; `secret` is the writing
    /// server's own (see `entry`), which allows writing. Without a token file, no token
    /// allows reading and an unknown token allows nothing.
    pub fn access(&self, presented: Option<&str>, secret: Option<&str>) -> Option<Access> {
        if let (Some(presented), Some(secret)) = (presented, secret) {
            if super::identity::same_secret(presented, secret) {
                return Some(Access::Write);
            }
        }
        match (&self.tokens, presented) {
            (None, None) => Some(Access::Read),
            (None, Some(_)) => None,
            (Some(tokens), presented) => presented.and_then(|token| tokens.get(token).copied()),
        }
    }

    /// What a Postgres connection whose password is `presented` may do (`None` when no
    /// password was asked for): on a server without tokens, everything.
    pub fn postgres_access(&self, presented: Option<&str>, secret: Option<&str>) -> Option<Access> {
        match (&self.tokens, presented) {
            (None, None) => Some(Access::Write),
            _ => self.access(presented, secret),
        }
    }

    /// Whether every connection must present a token.
    pub fn required(&self) -> bool {
        self.tokens.is_some()
    }
}

/// Only these two may go without tokens (127.0.0.2 is loopback too, but a second address
/// is easy to expose by mistake).
fn is_loopback_exempt(ip: IpAddr) -> bool {
    ip == IpAddr::from([127, 0, 0, 1]) || ip == IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
}

/// The tokens of a token file: `read TOKEN` or `write TOKEN` a line; blank lines and `#`
/// comments skipped.
fn read_token_file(path: &Path) -> anyhow::Result<BTreeMap<String, Access>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| DbError::user(format!("cannot read {}: {e}", path.display())))?;
    let mut tokens = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}, line {}", path.display(), index + 1);
        let (kind, token) = line
            .split_once(char::is_whitespace)
            .map(|(k, t)| (k, t.trim()))
            .ok_or_else(|| {
                DbError::user(format!("{}: write `read TOKEN` or `write TOKEN`", at()))
            })?;
        let access = match kind {
            "read" => Access::Read,
            "write" => Access::Write,
            other => {
                return Err(DbError::user(format!(
                    "{}: `{}` is neither read nor write",
                    at(),
                    rnt_db::diagnostic::clip(other)
                ))
                .into())
            }
        };
        if token.chars().count() < TOKEN_CHARS_MIN || token.contains(char::is_whitespace) {
            return Err(DbError::user(format!(
                "{}: a token is one word of at least {TOKEN_CHARS_MIN} characters",
                at()
            ))
            .into());
        }
        tokens.insert(token.to_string(), access);
    }
    if tokens.is_empty() {
        return Err(DbError::user(format!("{} holds no token", path.display())).into());
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_two_loopback_addresses_go_without_tokens() {
        for exempt in ["127.0.0.1:1", "[::1]:1"] {
            assert!(Tokens::for_address(exempt.parse().unwrap(), None).is_ok());
        }
        for exposed in ["127.0.0.2:1", "0.0.0.0:1", "[::]:1", "10.1.2.3:1"] {
            assert!(Tokens::for_address(exposed.parse().unwrap(), None).is_err());
        }
    }

    #[test]
    fn a_token_allows_what_its_line_says_and_nothing_else_is_let_in() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(
            &file,
            "# who\nread rrrrrrrrrrrrrrrr\nwrite wwwwwwwwwwwwwwww\n",
        )
        .unwrap();
        let tokens = Tokens::for_address("0.0.0.0:1".parse().unwrap(), Some(&file)).unwrap();
        assert_eq!(
            tokens.access(Some("rrrrrrrrrrrrrrrr"), None),
            Some(Access::Read)
        );
        assert_eq!(
            tokens.access(Some("wwwwwwwwwwwwwwww"), None),
            Some(Access::Write)
        );
        assert_eq!(tokens.access(Some("nope"), None), None);
        assert_eq!(tokens.access(None, None), None);
        assert_eq!(tokens.access(Some("e"), Some("e")), Some(Access::Write));
        assert_eq!(tokens.access(Some("e"), Some("f")), None);
        std::fs::write(&file, "admin xxxxxxxxxxxxxxxxxxxx\n").unwrap();
        assert!(Tokens::for_address("0.0.0.0:1".parse().unwrap(), Some(&file)).is_err());
        std::fs::write(&file, "read short\n").unwrap();
        assert!(Tokens::for_address("0.0.0.0:1".parse().unwrap(), Some(&file)).is_err());
    }

    #[test]
    fn without_tokens_anyone_reads_and_only_the_secret_writes_over_http() {
        let open = Tokens::for_address("127.0.0.1:1".parse().unwrap(), None).unwrap();
        assert_eq!(open.access(None, Some("secret")), Some(Access::Read));
        assert_eq!(
            open.access(Some("secret"), Some("secret")),
            Some(Access::Write)
        );
        assert_eq!(open.access(Some("guess"), Some("secret")), None);
        assert_eq!(open.access(Some("guess"), None), None);
        assert_eq!(
            open.postgres_access(None, Some("secret")),
            Some(Access::Write)
        );
        assert!(!open.required());
    }
}
