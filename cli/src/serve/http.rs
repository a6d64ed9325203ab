//! The HTTP listener: each accepted connection is held in the server's registry (see
//! `connections`: the cap, eviction, the sweep) and served by hyper's HTTP/1.1 with a
//! header read timeout and a bounded read buffer; its bytes in and out count as activity.
//! A connection the registry cannot hold is answered 503 and closed. At a signal, the
//! listener stops, each connection finishes the request it is in, and what still streams
//! (a subscription) is closed after a grace period.

use super::connections::{Activity, Connections, Full};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};

/// The most bytes hyper buffers while it reads a request's headers (its minimum is 8 KiB).
const READ_BUFFER_BYTES: usize = 64 << 10;

/// How long connections still open at shutdown may finish before they are closed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How long accepting waits after the system refuses (out of descriptors, say).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);

/// Serves `app` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    registry: Arc<Connections>,
    shutdown: impl Future<Output = ()>,
) {
    let (stop, stopping) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => accept(stream, &app, &registry, stopping.clone()),
                // Out of descriptors or memory: wait, as the peers' timeouts free some.
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
        }
    }
    drop(listener);
    let _ = stop.send(true);
    drop(stopping);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, stop.closed()).await;
}

/// Holds and serves one connection, or refuses it when the registry is full.
fn accept(
    stream: TcpStream,
    app: &Router,
    registry: &Arc<Connections>,
    stopping: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let closing = Arc::new(Notify::new());
    let closer = {
        let closing = Arc::clone(&closing);
        Box::new(move || closing.notify_one())
    };
    let held = match registry.admit(closer) {
        Ok(held) => held,
        Err(full) => {
            tokio::spawn(refuse(stream, full));
            return;
        }
    };
    let opening = registry.limits().opening;
    let app = app.clone();
    tokio::spawn(async move {
        let activity = Arc::clone(&held.activity);
        let io = TokioIo::new(Tracked {
            inner: stream,
            activity: Arc::clone(&activity),
        });
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(Arc::clone(&activity));
            tower_service::Service::call(&mut app.clone(), request)
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(opening)
            .max_buf_size(READ_BUFFER_BYTES)
            .keep_alive(true);
        let connection = builder.serve_connection(io, service);
        run(connection, &closing, stopping).await;
        drop(held);
    });
}

/// Drives `connection` until it ends, the registry closes it, or the server stops (then it
/// finishes its request first).
async fn run<C>(
    connection: hyper::server::conn::http1::Connection<TokioIo<Tracked>, C>,
    closing: &Notify,
    mut stopping: watch::Receiver<bool>,
) where
    C: hyper::service::HttpService<Incoming>,
    C::ResBody: 'static,
    <C::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut connection = pin!(connection);
    let mut stop_asked = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            () = closing.notified() => return,
            changed = stopping.changed(), if !stop_asked => {
                stop_asked = true;
                if changed.is_ok() {
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Answers 503 on a connection the registry cannot hold, and closes it.
async fn refuse(mut stream: TcpStream, full: Full) {
    let body = crate::output::Json::object([("error", crate::output::Json::Str(full.to_string()))])
        .pretty();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// A connection's stream whose bytes in and out count as its activity.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
