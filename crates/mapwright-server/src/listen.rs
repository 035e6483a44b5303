//! The HTTP server: the accept loop and the connections, with the bounds `axum::serve` lacks.
//!
//! - **Connections are capped** ([`Config::max_connections`], below the process's file
//!   limit). At the cap a new connection takes the place of the one idle the longest (no
//!   request in flight: a keep-alive connection, or one still sending its headers); when every
//!   connection has a request in flight, the new one is answered 503 and closed. So idle and
//!   slow connections can never keep a new client, or `/healthz`, out.
//! - **Connections are capped per client** ([`Config::max_connections_per_client`], keyed as
//!   the rate limits are: an IPv4 address, an IPv6 /64): a client at its cap gives up its own
//!   connection idle the longest, or is answered 503 when all its connections are busy, so one
//!   client cannot take the places of everyone else's connections.
//! - **Headers must arrive in time** ([`Config::header_timeout`], HTTP/1: counted from when
//!   the connection starts waiting for a request, so it is also the keep-alive idle time), and
//!   a request body may not pause longer than that between chunks.
//! - **Idle connections close** ([`Config::idle_timeout`]): no request in flight for that long
//!   (HTTP/2 connections, which have no header timeout, included).
//! - **Requests end** ([`Config::request_timeout`]): reading the body and making the response
//!   take at most that long (tower-http's timeout: 408 after); a response body then streams
//!   at the client's pace.
//!
//! Bodies are limited by [`crate::app`] on every route ([`crate::MAX_BODY`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tower::ServiceExt;
use tower_http::timeout::TimeoutLayer;

/// The bounds of the server (see the module documentation).
#[derive(Debug, Clone)]
pub struct Config {
    /// Connections open at once.
    pub max_connections: usize,
    /// Connections open at once from one client (an IPv4 address, an IPv6 /64).
    pub max_connections_per_client: usize,
    /// Time to receive a request's headers (and the longest pause inside a request body).
    pub header_timeout: Duration,
    /// A connection without a request in flight for this long is closed.
    pub idle_timeout: Duration,
    /// Time to read a request and make its response.
    pub request_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_connections: 1024,
            max_connections_per_client: 64,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(120),
        }
    }
}

/// File descriptors kept free for the database, outbound fetches and the listener.
const RESERVED_FDS: u64 = 128;

/// `max_connections` lowered to fit the process's open-file limit (less what the rest of the
/// service needs), with a warning when it had to be; unchanged where the limit is unknown.
pub fn fit_to_file_limit(max_connections: usize) -> usize {
    let Some(limit) = open_file_limit() else { return max_connections };
    let fits = limit.saturating_sub(RESERVED_FDS).max(16) as usize;
    if max_connections > fits {
        tracing::warn!(
            max_connections,
            open_file_limit = limit,
            "the open-file limit allows {fits} connections: using that (raise it with ulimit -n)"
        );
        return fits;
    }
    max_connections
}

/// The soft limit on open files, from `/proc/self/limits` (Linux); `None` elsewhere.
fn open_file_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..].split_whitespace().next()?.parse().ok()
}

/// Serves `router` on `listener` until `shutdown` resolves, then stops accepting, lets the
/// requests in flight finish (`grace` at most) and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
    grace: Duration,
) {
    let service = tower::ServiceBuilder::new()
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, config.request_timeout))
        .service(router);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(config.header_timeout);
    builder.http2().timer(TokioTimer::new()).max_concurrent_streams(32);
    let builder = Arc::new(builder);
    let registry = Arc::new(Registry::new(config.max_connections, config.max_connections_per_client));
    let (stop, stopping) = watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, remote) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors (or another transient failure): wait for some to
                // close rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(conn) = registry.admit(crate::ratelimit::client_key(remote.ip())) else {
            refuse(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (service, builder, registry) = (service.clone(), builder.clone(), registry.clone());
        let (config, stopping) = (config.clone(), stopping.clone());
        connections.spawn(async move {
            let counted = conn.clone();
            let pause = config.header_timeout;
            let hyper_service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let mut request = request.map(|body| PausedBody { body, pause, sleep: None });
                request.extensions_mut().insert(ConnectInfo(remote));
                let active = Active::start(counted.clone());
                let service = service.clone();
                async move {
                    let response = service.oneshot(request).await?;
                    Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, _active: active })))
                }
            });
            serve_connection(&builder, stream, hyper_service, &conn, &config, stopping).await;
            registry.remove(conn.id);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    if tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await.is_err() {
        tracing::warn!("connections still open after the grace period: closed");
        connections.abort_all();
    }
}

/// Turns a connection away at the cap: a 503 if the socket takes it at once, then closed.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(
        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    );
}

/// Serves one connection until it ends, closing it gracefully when told to (taken over at
/// the cap, or the server stops) or when idle too long.
async fn serve_connection<S>(
    builder: &auto::Builder<TokioExecutor>,
    stream: TcpStream,
    service: S,
    conn: &Arc<Conn>,
    config: &Config,
    mut stopping: watch::Receiver<bool>,
) where
    S: hyper::service::Service<Request<Incoming>, Response = axum::response::Response, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let mut closing = false;
    let tick = (config.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    loop {
        let idle_check = tokio::time::sleep(tick);
        tokio::select! {
            _ = connection.as_mut() => return,
            () = conn.close.notified(), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            _ = stopping.wait_for(|s| *s), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            () = idle_check, if !closing => {
                if conn.idle_for() >= config.idle_timeout {
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// The open connections, to cap them and pick the one to close at the cap.
struct Registry {
    max: usize,
    per_client: usize,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    epoch: Instant,
}

/// One open connection.
struct Conn {
    id: u64,
    /// The client's key (see [`crate::ratelimit::client_key`]).
    client: String,
    /// Requests whose response is not yet fully sent.
    in_flight: AtomicUsize,
    /// When the last response ended (or the connection opened), in ms since the epoch.
    last_active_ms: AtomicU64,
    epoch: Instant,
    /// Told to close (taken over at the cap).
    close: Notify,
}

impl Conn {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// How long the connection has had no request in flight (zero while it has one).
    fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        Duration::from_millis(self.now_ms().saturating_sub(self.last_active_ms.load(Ordering::Acquire)))
    }
}

impl Registry {
    fn new(max: usize, per_client: usize) -> Self {
        Registry {
            max: max.max(1),
            per_client: per_client.max(1),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            epoch: Instant::now(),
        }
    }

    /// A place for a new connection of `client`: free, or taken from the connection idle the
    /// longest (told to close), the client's own when it is at its cap; `None` when every
    /// connection that could give way has a request in flight.
    fn admit(&self, client: String) -> Option<Arc<Conn>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let idle_longest = |only: Option<&str>| {
            open.values()
                .filter(|c| only.is_none_or(|client| c.client == client))
                .filter(|c| c.in_flight.load(Ordering::Acquire) == 0)
                .min_by_key(|c| c.last_active_ms.load(Ordering::Acquire))
                .map(|c| c.id)
        };
        let victim = if open.values().filter(|c| c.client == client).count() >= self.per_client {
            Some(idle_longest(Some(&client))?)
        } else if open.len() >= self.max {
            Some(idle_longest(None)?)
        } else {
            None
        };
        if let Some(victim) = victim.and_then(|id| open.remove(&id)) {
            victim.close.notify_one();
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            client,
            in_flight: AtomicUsize::new(0),
            last_active_ms: AtomicU64::new(self.epoch.elapsed().as_millis() as u64),
            epoch: self.epoch,
            close: Notify::new(),
        });
        open.insert(id, conn.clone());
        Some(conn)
    }

    fn remove(&self, id: u64) {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }
}

/// A request in flight on a connection, from its headers to the end of its response body.
struct Active(Arc<Conn>);

impl Active {
    fn start(conn: Arc<Conn>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Active(conn)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.0.last_active_ms.store(self.0.now_ms(), Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request body that may pause at most `pause` between chunks (an error after, which the
/// extractor reading it answers 400). Unlike tower-http's body timeout it keeps the size hint,
/// so a body announced over the route's limit is still refused (413) before it is read.
struct PausedBody {
    body: Incoming,
    pause: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl HttpBody for PausedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.sleep = None;
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let pause = this.pause;
                let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(pause)));
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        Poll::Ready(Some(Err("the request body paused longer than the header timeout".into())))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A response body that keeps its request counted as in flight until it is sent or dropped.
struct Tracked {
    body: Body,
    _active: Active,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
