//! `rnt serve`: one process holds the store open and warm, and answers over HTTP — the API
//! (the CLI's JSON shapes), the web view of history at `/`, subscriptions to a relation's
//! changes — and the `rnt` commands other processes send it (see `forward`).
//!
//! Rooms: `access` (who may do what: tokens, loopback), `identity` (a server proves it is
//! the one its entry names), `entry` (the file in the store that names the writing server),
//! `cross_site` (requests browsers send for other sites), `connections` (the cap, the
//! phases and timeouts of every connection), `http` (the HTTP listener), `gate` (one writer
//! at a time, the store's writer lock held only while writing), `invoke` (a command line
//! run in-process on the warm database), `api` (the HTTP API), `subscribe` (server-sent
//! events), `web` (the HTML pages), `forward` (the client side: a command sent to the
//! server), `pg` (the Postgres protocol).
//!
//! *Invariant: a write goes through the same commit path and ref compare-and-swap as the
//! CLI, under the store's writer lock, which the server lets go of after each write, so a
//! CLI writer beside the server is safe.*

mod access;
mod api;
mod connections;
mod cross_site;
mod entry;
pub mod forward;
mod gate;
mod http;
mod identity;
mod invoke;
mod pg;
mod subscribe;
mod web;

pub use invoke::Served;

use crate::Context;
use access::Tokens;
use anyhow::Context as _;
use clap::Args;
use connections::{Connections, Limits};
use cross_site::Hosts;
use rnt_db::{Database, DbError};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The address the HTTP server binds by default.
pub const HTTP_DEFAULT: &str = "127.0.0.1:7878";

/// The address the Postgres protocol binds by default (when it is free: see `run`).
pub const PG_DEFAULT: &str = "127.0.0.1:5433";

/// The stack of each thread that runs a command (evaluation recurses per link of a chain
/// of ephemeral relations; reserved, not used, until a computation goes that deep).
const COMMAND_STACK_BYTES: usize = 256 << 20;

/// The most commands that run at once (the rest wait for a thread).
const COMMAND_THREADS_MAX: usize = 64;

/// The most connections held at once, HTTP and Postgres together, by default.
const CONNECTIONS_DEFAULT: u32 = 512;

/// Descriptors kept for the store's files and the listeners when the connection cap is
/// fitted under the process's limit on open files.
const DESCRIPTORS_RESERVED: usize = 128;

/// How long a connection may take to send its first request's headers, or on Postgres its
/// startup packet and password.
const OPENING_LIMIT: Duration = Duration::from_secs(10);

/// How long a request body or a Postgres message may stall without a byte.
const STALL_LIMIT: Duration = Duration::from_secs(30);

/// How often the registry looks for connections that overstay.
const SWEEP_EVERY: Duration = Duration::from_millis(500);

/// Arguments of `rnt serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The HTTP address (port 0: any free port; the first line printed names it).
    #[arg(long, value_name = "ADDR", default_value = HTTP_DEFAULT)]
    http: String,
    /// The Postgres protocol address (port 0: any free port; the second line printed
    /// names it). Default 127.0.0.1:5433, skipped with a note when that port is taken.
    #[arg(long, value_name = "ADDR")]
    pg: Option<String>,
    /// Tokens, one a line: `read TOKEN` or `write TOKEN`; every request must then carry one
    /// (`Authorization: Bearer TOKEN`). Needed to bind any address but 127.0.0.1 and ::1.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Refuse every write. A read-only server may serve a store another server serves (a
    /// replica: on this machine, or another over the same bucket), following its head.
    #[arg(long)]
    read_only: bool,
    /// A name HTTP requests may give as their Host besides the address listened on (and
    /// `localhost` on loopback): `NAME` or `NAME:PORT`; may be repeated.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    /// The most connections held at once, HTTP and Postgres together (when full, the one
    /// idle longest is closed; when all are running commands, the new one is refused).
    #[arg(long, value_name = "N", default_value_t = CONNECTIONS_DEFAULT,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// Seconds a connection may do nothing (between requests or statements, in or out of a
    /// transaction) before it is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
}

/// What every request shares: the warm database and the rules of access.
pub struct Server {
    /// The store folder (or object-store URL) served.
    pub store: PathBuf,
    /// The id of the store served (see `store_id`).
    pub store_id: String,
    /// The secret made at this start, named in the entry (`None`: a read-only server,
    /// which keeps no entry).
    pub secret: Option<String>,
    /// The warm database: decoded nodes stay cached between requests.
    pub db: Database,
    /// One writer at a time.
    pub gate: gate::Gate,
    /// Who may read and write.
    pub tokens: Tokens,
    /// Whether every write is refused.
    pub read_only: bool,
    /// Every connection held, HTTP and Postgres.
    pub connections: Arc<Connections>,
}

/// Serves until SIGINT or SIGTERM.
pub fn run(context: &Context, args: ServeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if context.served.is_some() {
        return Err(DbError::user("`rnt serve` cannot run inside a server").into());
    }
    let address = socket_address(&args.http, "--http")?;
    let pg = Pg {
        address: socket_address(args.pg.as_deref().unwrap_or(PG_DEFAULT), "--pg")?,
        asked: args.pg.is_some(),
    };
    let tokens = Tokens::for_address(address, args.token_file.as_deref())?;
    Tokens::for_address(pg.address, args.token_file.as_deref())?;
    let limits = connection_limits(&args);
    // A panic in one request is a bug to report, not a reason to stop serving the others.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error: {info} (this is a bug in rnt; please report it)");
    }));
    let store = crate::store_open::locate(context.store.as_deref())?;
    let db = crate::store_open::open_at(&store, false)?
        .with_node_cache_bytes(crate::settings::serving_node_cache_bytes());
    crate::memory::tune_for_a_long_life();
    // A store that cannot be read is refused now, not at the first request.
    db.head()?;
    // A store made before stores had ids gets one now.
    let store_id = crate::store_id::ensure(&crate::store_open::id_holder(&store, &db))?;
    let server = Arc::new(Server {
        store,
        store_id,
        secret: (!args.read_only).then(|| crate::store_id::random_hex(16)),
        db,
        gate: gate::Gate::new(),
        tokens,
        read_only: args.read_only,
        connections: Connections::new(limits),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(COMMAND_THREADS_MAX)
        .thread_stack_size(COMMAND_STACK_BYTES)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    // This handle outlives the runtime, so the server (and an object store's client, which
    // owns a runtime of its own) is dropped outside any async context.
    let keep = Arc::clone(&server);
    let served = runtime.block_on(serve(server, address, pg, &args.allow_host, out));
    drop(runtime);
    drop(keep);
    served
}

/// Where the Postgres protocol listens, and whether `--pg` asked for it (the default
/// address, when taken, is skipped with a note; an address asked for must be had).
#[derive(Clone, Copy)]
struct Pg {
    address: SocketAddr,
    asked: bool,
}

/// An address to listen on, from option `option`'s text.
fn socket_address(text: &str, option: &str) -> anyhow::Result<SocketAddr> {
    text.parse().map_err(|_| {
        DbError::user(format!(
            "{option}: `{}` is not an address to listen on (write IP:PORT, e.g. {HTTP_DEFAULT})",
            rnt_db::diagnostic::clip(text)
        ))
        .into()
    })
}

/// The connection limits `args` ask for, the cap fitted under the open-files limit.
fn connection_limits(args: &ServeArgs) -> Limits {
    let room = connections::descriptor_room(DESCRIPTORS_RESERVED).unwrap_or(usize::MAX);
    Limits {
        max: usize::try_from(args.max_connections)
            .unwrap_or(usize::MAX)
            .min(room),
        opening: OPENING_LIMIT,
        stalled: STALL_LIMIT,
        idle: Duration::from_secs(args.idle_timeout),
    }
}

/// Binds, records the server in the store, answers until a signal, then removes the record.
async fn serve(
    server: Arc<Server>,
    address: SocketAddr,
    pg: Pg,
    allow_host: &[String],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| DbError::user(format!("cannot listen on {address}: {e}")))?;
    let bound = listener.local_addr()?;
    // The entry is written (and removed) off the async threads: an object store's client
    // blocks on a runtime of its own.
    let recording = Arc::clone(&server);
    let entry = tokio::task::spawn_blocking(move || entry::Entry::record(&recording, bound))
        .await
        .context("recording the server in the store")??;
    writeln!(out, "serving {} at http://{bound}", server.store.display())?;
    match pg::listen(Arc::clone(&server), pg.address) {
        Ok(bound) => writeln!(out, "postgres at {bound}")?,
        Err(error) if !pg.asked => eprintln!(
            "note: Postgres not served: {} (give --pg ADDR)",
            crate::output::one_line(&error.to_string())
        ),
        Err(error) => {
            if let Some(entry) = entry {
                let _ = tokio::task::spawn_blocking(move || entry.remove()).await;
            }
            return Err(error);
        }
    }
    out.flush()?;
    let sweeping = tokio::spawn(sweep(Arc::clone(&server.connections)));
    let app = api::router(Arc::clone(&server), Hosts::new(bound, allow_host));
    http::serve(
        listener,
        app,
        Arc::clone(&server.connections),
        shutdown_signal(),
    )
    .await;
    sweeping.abort();
    if let Some(entry) = entry {
        let _ = tokio::task::spawn_blocking(move || entry.remove()).await;
    }
    Ok(())
}

/// Closes connections that overstay their phase, every [`SWEEP_EVERY`].
async fn sweep(connections: Arc<Connections>) {
    let mut ticks = tokio::time::interval(SWEEP_EVERY);
    loop {
        ticks.tick().await;
        connections.sweep(std::time::Instant::now());
    }
}

/// Completes at SIGINT, SIGTERM or SIGHUP (its terminal closed).
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut terminate), Ok(mut hangup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return std::future::pending::<()>().await;
        };
        tokio::select! {
            _ = terminate.recv() => {},
            _ = hangup.recv() => {},
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
