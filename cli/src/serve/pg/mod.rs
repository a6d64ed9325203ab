//! The Postgres protocol (`rnt serve --pg ADDR`): `psql` and drivers connect and speak the
//! SQL of `rnt sql`, in the simple and the extended query protocols. A DML statement
//! outside a transaction is a commit, `BEGIN … COMMIT` is one commit, `SET rnt.at = 'REF'`
//! reads a past state. With `--token-file`, the password is the token (any user and
//! database name). Errors carry PostgreSQL's SQLSTATE for their kind
//! (`conversation::sqlstate`: 23505 a duplicate key, 23502 NOT NULL, 23503 a foreign key,
//! 23514 CHECK, 42P01 an unknown table, 42703 an unknown column, 22012 a division by
//! zero, …); after an error inside a transaction, statements are refused with 25P02 until
//! ROLLBACK (or COMMIT, which rolls back), as PostgreSQL does.
//!
//! One thread per connection, blocking IO: a connection is a conversation, and the
//! statements it runs are blocking calls on the warm database anyway. Until its password is
//! taken a connection lives on a thread with a small stack and may send a few KB (the
//! startup packet at most 10,000 bytes, as PostgreSQL allows); every connection is held in
//! the server's registry (see `connections`), which closes one that overstays its phase by
//! shutting its socket down.

mod conversation;
mod copy;
mod values;
mod wire;

use super::access::Access;
use super::connections::{Activity, Held, Phase};
use super::Server;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use wire::{Message, Reader};

/// The stack of a connection's thread once authenticated (evaluation may recurse deeply).
const CONNECTION_STACK_BYTES: usize = 256 << 20;

/// The stack of a connection's thread before authentication.
const LOGIN_STACK_BYTES: usize = 256 << 10;

/// How long accepting waits after the system refuses (out of descriptors, say).
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(20);

/// Binds `address` and answers connections on a thread of their own each; returns the
/// address bound.
pub fn listen(server: Arc<Server>, address: SocketAddr) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(address)
        .map_err(|e| rnt_db::DbError::user(format!("cannot listen on {address} (--pg): {e}")))?;
    let bound = listener.local_addr()?;
    std::thread::Builder::new()
        .name("rnt-pg".into())
        .spawn(move || loop {
            match listener.accept() {
                Ok((stream, _)) => accept(&server, stream),
                Err(_) => std::thread::sleep(ACCEPT_BACKOFF),
            }
        })?;
    Ok(bound)
}

/// Holds one connection in the registry and starts its thread; refuses it when the
/// registry is full.
fn accept(server: &Arc<Server>, mut stream: TcpStream) {
    let Ok(handle) = stream.try_clone() else {
        return;
    };
    let closer = Box::new(move || {
        let _ = handle.shutdown(std::net::Shutdown::Both);
    });
    let held = match server.connections.admit(closer) {
        Ok(held) => held,
        Err(full) => {
            let _ = stream.set_write_timeout(Some(std::time::Duration::from_secs(1)));
            let _ = conversation::error_message("53300", &full.to_string()).write_to(&mut stream);
            return;
        }
    };
    let server = Arc::clone(server);
    let _ = std::thread::Builder::new()
        .name("rnt-pg-login".into())
        .stack_size(LOGIN_STACK_BYTES)
        .spawn(move || {
            // A connection that breaks the protocol is dropped; nothing else is touched by it.
            let Ok(Some(access)) = log_in(&server, &mut stream) else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("rnt-pg-connection".into())
                .stack_size(CONNECTION_STACK_BYTES)
                .spawn(move || {
                    let _ = converse(&server, stream, access, &held);
                });
        });
}

/// Startup and authentication: what the connection may do (`None`: refused, or it asked
/// for nothing more).
fn log_in(server: &Server, stream: &mut TcpStream) -> std::io::Result<Option<Access>> {
    stream.set_nodelay(true)?;
    loop {
        let (code, _parameters) = wire::read_startup(stream)?;
        match code {
            wire::SSL_REQUEST | wire::GSS_REQUEST => {
                std::io::Write::write_all(stream, b"N")?;
            }
            wire::PROTOCOL_3 => break,
            // A cancel request (or anything else) gets no answer.
            _ => return Ok(None),
        }
    }
    authenticate(server, stream)
}

/// After authentication: the parameters, then the conversation, its phases noted.
fn converse(
    server: &Server,
    mut stream: TcpStream,
    access: Access,
    held: &Held,
) -> std::io::Result<()> {
    held.activity.enter(Phase::Idle);
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
    conversation::Conversation::new(server, access).run(stream, &held.activity)
}

/// Asks for the password when tokens are required; returns what it allows (`None`: refused,
/// the error sent).
fn authenticate(server: &Server, stream: &mut TcpStream) -> std::io::Result<Option<Access>> {
    let secret = server.secret.as_deref();
    let access = if server.tokens.required() {
        Message::new(b'R').i32(3).write_to(stream)?;
        let (kind, body) = wire::read_message(stream, wire::LOGIN_BYTES_MAX, || {})?;
        if kind != b'p' {
            return Ok(None);
        }
        let password = Reader::new(&body).string()?;
        server.tokens.postgres_access(Some(&password), secret)
    } else {
        server.tokens.postgres_access(None, secret)
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

/// Marks `activity` as reading when a message has begun (for the registry's stall limit).
fn begun(activity: &Activity) -> impl FnOnce() + '_ {
    move || activity.enter(Phase::Reading)
}

/// A connection's socket whose bytes in and out count as its activity.
pub struct Tracked<'a> {
    stream: TcpStream,
    activity: &'a Activity,
}

impl<'a> Tracked<'a> {
    pub fn new(stream: TcpStream, activity: &'a Activity) -> Tracked<'a> {
        Tracked { stream, activity }
    }
}

impl std::io::Read for Tracked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.stream.read(buf)?;
        if read > 0 {
            self.activity.touch();
        }
        Ok(read)
    }
}

impl std::io::Write for Tracked<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.stream.write(buf)?;
        self.activity.touch();
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}
