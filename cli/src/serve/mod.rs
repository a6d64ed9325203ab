//! `rnt serve`: one process holds the store open and warm, and answers over HTTP — the API
//! (the CLI's JSON shapes), the web view of history at `/`, subscriptions to a relation's
//! changes — and the `rnt` commands other processes send it (see `forward`).
//!
//! Rooms: `access` (who may do what: tokens, loopback), `entry` (the file in the store that
//! names the running server), `gate` (one writer at a time, the store's writer lock held
//! only while writing), `invoke` (a command line run in-process on the warm database),
//! `api` (the HTTP API), `subscribe` (server-sent events), `web` (the HTML pages),
//! `forward` (the client side: a command sent to the server).
//!
//! *Invariant: a write goes through the same commit path and ref compare-and-swap as the
//! CLI, under the store's writer lock, which the server lets go of after each write, so a
//! CLI writer beside the server is safe.*

mod access;
mod api;
mod entry;
pub mod forward;
mod gate;
mod invoke;
mod pg;
mod subscribe;
mod web;

pub use invoke::Served;

use crate::Context;
use access::Tokens;
use anyhow::Context as _;
use clap::Args;
use rnt_db::{Database, DbError};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The address the HTTP server binds by default.
pub const HTTP_DEFAULT: &str = "127.0.0.1:7878";

/// The address the Postgres protocol binds by default (when it is free: see `run`).
pub const PG_DEFAULT: &str = "127.0.0.1:5433";

/// The stack of each thread that runs a command (evaluation recurses per link of a chain
/// of ephemeral relations; reserved, not used, until a computation goes that deep).
const COMMAND_STACK_BYTES: usize = 256 << 20;

/// The most commands that run at once (the rest wait for a thread).
const COMMAND_THREADS_MAX: usize = 64;

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
    /// Refuse every write.
    #[arg(long)]
    read_only: bool,
}

/// What every request shares: the warm database and the rules of access.
pub struct Server {
    /// The store folder (or object-store URL) served.
    pub store: PathBuf,
    /// The warm database: decoded nodes stay cached between requests.
    pub db: Database,
    /// One writer at a time.
    pub gate: gate::Gate,
    /// Who may read and write.
    pub tokens: Tokens,
    /// Whether every write is refused.
    pub read_only: bool,
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
    let server = Arc::new(Server {
        store,
        db,
        gate: gate::Gate::new(),
        tokens,
        read_only: args.read_only,
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
    let served = runtime.block_on(serve(server, address, pg, out));
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

/// Binds, records the server in the store, answers until a signal, then removes the record.
async fn serve(
    server: Arc<Server>,
    address: SocketAddr,
    pg: Pg,
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
    let token = entry.as_ref().map(|e| e.token.clone());
    match pg::listen(Arc::clone(&server), pg.address, token) {
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
    let app = api::router(Arc::clone(&server), entry.as_ref().map(|e| e.token.clone()));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await;
    if let Some(entry) = entry {
        let _ = tokio::task::spawn_blocking(move || entry.remove()).await;
    }
    served.context("the server stopped")?;
    Ok(())
}

/// Completes at SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
