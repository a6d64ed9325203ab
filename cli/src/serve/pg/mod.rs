//! The Postgres protocol (`rnt serve --pg ADDR`): `psql` and drivers connect and speak the
//! SQL of `rnt sql`, in the simple and the extended query protocols. A DML statement
//! outside a transaction is a commit, `BEGIN … COMMIT` is one commit, `SET rnt.at = 'REF'`
//! reads a past state. With `--token-file`, the password is the token (any user and
//! database name). Errors carry SQLSTATE codes: 42601 syntax, 23000 a violated constraint
//! or denial, 40001 a lost race, 0A000 not supported.
//!
//! One thread per connection, blocking IO: a connection is a conversation, and the
//! statements it runs are blocking calls on the warm database anyway.

mod conversation;
mod values;
mod wire;

use super::access::Access;
use super::Server;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use wire::{Message, Reader};

/// The stack of a connection's thread (evaluation may recurse deeply).
const CONNECTION_STACK_BYTES: usize = 256 << 20;

/// Binds `address` and answers connections on a thread of their own each; returns the
/// address bound.
pub fn listen(
    server: Arc<Server>,
    address: SocketAddr,
    entry_token: Option<String>,
) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(address)
        .map_err(|e| rnt_db::DbError::user(format!("cannot listen on {address} (--pg): {e}")))?;
    let bound = listener.local_addr()?;
    let entry_token = Arc::new(entry_token);
    std::thread::Builder::new()
        .name("rnt-pg".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let server = Arc::clone(&server);
                let entry_token = Arc::clone(&entry_token);
                let _ = std::thread::Builder::new()
                    .name("rnt-pg-connection".into())
                    .stack_size(CONNECTION_STACK_BYTES)
                    .spawn(move || {
                        // A connection that breaks the protocol is dropped; nothing else is
                        // touched by it.
                        let _ = serve_connection(&server, stream, entry_token.as_deref());
                    });
            }
        })?;
    Ok(bound)
}

/// One connection: startup, authentication, then the conversation.
fn serve_connection(
    server: &Server,
    mut stream: TcpStream,
    entry_token: Option<&str>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let parameters = loop {
        let (code, body) = wire::read_startup(&mut stream)?;
        match code {
            wire::SSL_REQUEST | wire::GSS_REQUEST => {
                std::io::Write::write_all(&mut stream, b"N")?;
            }
            wire::PROTOCOL_3 => break body,
            // A cancel request (or anything else) gets no answer.
            _ => return Ok(()),
        }
    };
    let _ = parameters;
    let access = authenticate(server, &mut stream, entry_token)?;
    let Some(access) = access else {
        return Ok(());
    };
    for (name, value) in [
        ("server_version", "15.0 (rnt)"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("TimeZone", "UTC"),
    ] {
        Message::new(b'S')
            .string(name)
            .string(value)
            .write_to(&mut stream)?;
    }
    Message::new(b'K')
        .i32(i32::try_from(std::process::id()).unwrap_or(0))
        .i32(0)
        .write_to(&mut stream)?;
    conversation::Conversation::new(server, access).run(stream)
}

/// Asks for the password when tokens are required; returns what it allows (`None`: refused,
/// the error sent).
fn authenticate(
    server: &Server,
    stream: &mut TcpStream,
    entry_token: Option<&str>,
) -> std::io::Result<Option<Access>> {
    let open = server.tokens.access(None, entry_token);
    let access = match open {
        Some(access) => Some(access),
        None => {
            Message::new(b'R').i32(3).write_to(stream)?;
            let (kind, body) = wire::read_message(stream)?;
            if kind != b'p' {
                return Ok(None);
            }
            let password = Reader::new(&body).string()?;
            server.tokens.access(Some(&password), entry_token)
        }
    };
    match access {
        Some(access) => {
            Message::new(b'R').i32(0).write_to(stream)?;
            Ok(Some(access))
        }
        None => {
            conversation::error_message(
                "28P01",
                "password authentication failed: the password is a token",
            )
            .write_to(stream)?;
            Ok(None)
        }
    }
}
