//! Streamable HTTP at `/mcp` (axum + rmcp's `StreamableHttpService`), served
//! on hyper directly so that every connection gets `TCP_NODELAY` and a header
//! read timeout.
//!
//! Security, in the order a request meets it: the connection must send its
//! request head within [`HEADER_READ_TIMEOUT`] (else it is closed); an
//! absolute-form target or a missing, repeated or malformed `Host` is 400; a
//! repeated or malformed `Origin` is 403; then the optional bearer token
//! (401); a `Host` outside loopback names plus `--allowed-host` is 403
//! (against DNS rebinding), as is an `Origin` outside loopback origins plus
//! `--allowed-origin` (requests without `Origin` pass); a declared
//! `Content-Length` over the body cap is 413 at once (a streamed body is cut
//! at the cap, also 413); an unknown `Mcp-Session-Id` is 404 (`DELETE` too;
//! a `DELETE` of a live session is 204). A new session past `--max-sessions`
//! is 503 with `Retry-After`; idle sessions close after `--session-idle`. A
//! POST body must arrive within [`BODY_READ_TIMEOUT`] (408), be
//! `application/json` (415), JSON (400, -32700), no costlier to parse than
//! 29× its size + 48 MB (413, -32600: `lean_json::check_cost`) and
//! JSON-RPC 2.0 (400, -32600): each refusal a JSON-RPC error object. Only `/mcp`
//! is served, and `POST /events/{name}`, `GET /metrics` behind the same guard
//! (its checks up to the body are `http_guard.rs`). A non-loopback bind
//! without a token is refused unless `--insecure`.

use crate::mcp::http_guard::{Guard, jsonrpc_error, refuse, room_for, who_and_where};
use crate::mcp::{SavantServer, ServeOptions};
use crate::web_guard::{LOOPBACK_HOSTS, LOOPBACK_ORIGINS, parse_authority};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::{Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a connection may take to send a request head (the request line
/// and headers); a slower client is disconnected. Also bounds how long an
/// idle keep-alive connection is held.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Refuses a bind anyone on the network could reach without a token.
pub fn check_bind(addr: SocketAddr, token: Option<&str>, insecure: bool) -> Result<(), String> {
    if token.is_some_and(|t| t.trim().is_empty()) {
        return Err("the token is empty; give a non-empty --token or SAVANT_THINK_TOKEN".into());
    }
    if addr.ip().is_loopback() || token.is_some() || insecure {
        return Ok(());
    }
    Err(format!(
        "refusing to serve on {addr} without a token: {} is not a loopback address, so anyone who can reach it \
         could run workflows and read the workflows and run state under the root. Pass --token TOKEN (or set \
         SAVANT_THINK_TOKEN), bind 127.0.0.1, or pass --insecure to accept the risk.",
        addr.ip()
    ))
}

/// One request in flight: counted from the guard until its response body
/// is sent (or dropped, when the client goes away).
struct InFlight(Arc<std::sync::atomic::AtomicUsize>);

/// Calls (POSTs) received since the server started, for [`when_idle`].
static SERVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl InFlight {
    fn new(count: &Arc<std::sync::atomic::AtomicUsize>) -> InFlight {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        SERVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `response` with its request counted in flight until its body is sent.
fn tracked(response: Response, flight: InFlight) -> Response {
    response.map(|inner| axum::body::Body::new(Tracked { inner, _flight: flight }))
}

/// A response body that keeps its request counted in flight until sent.
struct Tracked {
    inner: axum::body::Body,
    _flight: InFlight,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// How long a request body may take to arrive once its head is in (a
/// slow-body client holds a connection no longer).
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The members of a JSON-RPC message that say it is one. The rest (a tool's
/// arguments: megabytes, maybe) is skipped, never built: rmcp parses the
/// message once, and this check adds no second copy of it.
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default, deserialize_with = "version")]
    jsonrpc: Option<bool>,
    #[serde(default, deserialize_with = "text")]
    method: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::Deserialize::deserialize(d).map(|_: serde::de::IgnoredAny| true)
}

/// `Some(true)` for the string "2.0", `Some(false)` for any other value.
fn version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    d.deserialize_any(Member(|s| s == "2.0")).map(Some)
}

/// `Some(true)` for a string, `Some(false)` for any other value.
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    d.deserialize_any(Member(|_| true)).map(Some)
}

/// A member's value read for one test of a string; anything else is
/// skipped (`false`) without being built.
struct Member(fn(&str) -> bool);

impl<'de> serde::de::Visitor<'de> for Member {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok((self.0)(v))
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

/// What the body is: not JSON, a batch, another JSON value, or one JSON-RPC
/// 2.0 message (the error to answer, or `None`).
fn jsonrpc_refusal(bytes: &[u8]) -> Option<Response> {
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        let message = format!("Parse error: the body is not JSON ({e})");
        return Some(jsonrpc_error(StatusCode::BAD_REQUEST, -32700, &message));
    }
    // rmcp parses the message into a `Value` of its own: refused first
    // when that would cost more than the bound for its size.
    if let Err(e) = crate::lean_json::check_cost(bytes, crate::lean_json::Layout::Grown) {
        let message = format!("Payload Too Large: the message was not read: {e}");
        return Some(jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &message));
    }
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Some(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18): \
             send one message per request",
        ));
    }
    let one = |m: Envelope| m.jsonrpc == Some(true) && (m.method == Some(true) || m.result || m.error);
    if serde_json::from_slice::<Envelope>(bytes).is_ok_and(one) {
        return None;
    }
    Some(jsonrpc_error(
        StatusCode::BAD_REQUEST,
        -32600,
        "Invalid Request: not a JSON-RPC 2.0 message (it needs \"jsonrpc\": \"2.0\" and a method, result or error)",
    ))
}

/// A POST's body read (within [`BODY_READ_TIMEOUT`] and the cap) and checked
/// as JSON-RPC: the request rebuilt for rmcp, or the JSON-RPC error to send.
async fn checked_post(guard: &Guard, req: Request) -> Result<Request, Response> {
    let json_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json_type {
        return Err(jsonrpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32600,
            "Invalid Request: send a JSON-RPC message with Content-Type: application/json",
        ));
    }
    let (parts, body) = req.into_parts();
    let bytes =
        match tokio::time::timeout(BODY_READ_TIMEOUT, axum::body::to_bytes(body, guard.max_body)).await {
            Err(_) => {
                return Err(jsonrpc_error(
                    StatusCode::REQUEST_TIMEOUT,
                    -32600,
                    "Request Timeout: the body did not arrive in time",
                ));
            }
            Ok(Err(_)) => {
                let message = format!(
                    "Payload Too Large: the body may hold at most {} bytes (--max-message-bytes)",
                    guard.max_body
                );
                return Err(jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &message));
            }
            Ok(Ok(b)) => b,
        };
    if let Some(refusal) = jsonrpc_refusal(&bytes) {
        return Err(refusal);
    }
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}

/// The checks of the module's docs, for `/mcp` and `/events/{name}`
/// (`webhook.rs` reads its own body: a payload, not JSON-RPC).
async fn guard(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    if let Some(refusal) = who_and_where(&guard, &req) {
        return refusal;
    }
    let post = req.method() == Method::POST;
    if let Some(refusal) = room_for(&guard, post, post && !req.headers().contains_key("mcp-session-id")).await
    {
        return refusal;
    }
    // A POST (a call) counts as in flight until its answer is sent: a
    // graceful shutdown waits for it.
    let flight = (req.method() == Method::POST).then(|| InFlight::new(&guard.in_flight));
    let req = if req.method() == Method::POST && req.uri().path() == "/mcp" {
        match checked_post(&guard, req).await {
            Ok(r) => r,
            Err(response) => return response,
        }
    } else {
        req
    };
    let delete = req.method() == Method::DELETE;
    if delete
        && let Some(id) = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        && !guard.sessions.has_session(&id.to_owned().into()).await.unwrap_or(false)
    {
        return refuse(StatusCode::NOT_FOUND, "Not Found: no such session");
    }
    let mut response = next.run(req).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        // The session is closed; 202 would promise work still to come.
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    match flight {
        Some(flight) => tracked(response, flight),
        None => response,
    }
}

/// Calls `hook` once the server is idle after calls (checked every 2 s),
/// and once more 12 s later if it stayed idle (the runtime's extra threads
/// have ended by then): the binary hands the memory the calls freed back to
/// the system there.
async fn when_idle(in_flight: Arc<std::sync::atomic::AtomicUsize>, hook: fn()) {
    let mut seen = 0;
    let mut again: Option<tokio::time::Instant> = None;
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tick.tick().await;
        let served = SERVED.load(std::sync::atomic::Ordering::Relaxed);
        let idle = in_flight.load(std::sync::atomic::Ordering::SeqCst) == 0;
        if served != seen && idle {
            seen = served;
            hook();
            again = Some(tokio::time::Instant::now() + Duration::from_secs(12));
        } else if served == seen && idle && again.is_some_and(|at| tokio::time::Instant::now() >= at) {
            again = None;
            hook();
        }
    }
}

/// The `Host` entries accepted: loopback names, a specific bind address and `--allowed-host`.
fn allowed_hosts(options: &ServeOptions) -> Vec<String> {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    if let Some(addr) = options.http
        && !addr.ip().is_unspecified()
        && !addr.ip().is_loopback()
    {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    hosts
}

/// The axum router: `/mcp` exactly, and the inspector under `/ui` (`crate::inspect::http`).
pub fn router(server: SavantServer, options: &ServeOptions, cancel: CancellationToken) -> Router {
    router_counting(server, options, cancel, Arc::default())
}

/// [`router`], counting the requests in flight in `in_flight`.
fn router_counting(
    server: SavantServer,
    options: &ServeOptions,
    cancel: CancellationToken,
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
) -> Router {
    let hosts = allowed_hosts(options);
    let parsed: Vec<(String, Option<u16>)> = hosts
        .iter()
        .filter_map(|h| match h.parse::<Ipv6Addr>() {
            Ok(ip) => Some((ip.to_string(), None)),
            Err(_) => parse_authority(h).or_else(|| {
                tracing::warn!(host = %h, "ignoring an --allowed-host that is not host[:port]");
                None
            }),
        })
        .collect();
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
    origins.extend(options.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_message_bytes)
        .with_legacy_session_mode(!options.stateless)
        // Stateless: a tool's answer as one JSON body, not an SSE stream
        // of one event (rmcp falls back to SSE when the handler sends a
        // notification first): less work per call (issue 29).
        .with_json_response(options.stateless)
        .with_cancellation_token(cancel);
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.session_idle);
    let sessions = Arc::new(manager);
    let engine = server.shared_engine();
    let server_engine = engine.clone();
    let service: StreamableHttpService<SavantServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.session()), sessions.clone(), config);
    let ui = crate::inspect::http::UiOptions {
        token: options.token.clone(),
        read_only: options.ui_read_only,
        hosts: parsed.clone(),
        origins: origins.clone(),
    };
    let guard_state = Guard {
        token: options.token.clone(),
        hosts: parsed,
        max_body: options.max_message_bytes,
        sessions,
        max_sessions: options.max_sessions,
        stateless: options.stateless,
        in_flight,
        max_in_flight: options.max_in_flight,
    };
    // The inspector at /ui/ has its own guard (same token, Host and Origin
    // rules); its actions (POSTs) count as in flight too, so a graceful
    // shutdown lets a reset or an upgrade under way finish.
    let counted = guard_state.in_flight.clone();
    let webhook = Arc::new(super::webhook::Webhook {
        engine: engine.clone(),
        max_body: options.max_message_bytes,
        origins: origins.clone(),
        body_timeout: BODY_READ_TIMEOUT,
    });
    let inspector =
        crate::inspect::http::router(engine, ui).layer(middleware::from_fn_with_state(counted, count_posts));
    Router::new()
        .route_service("/mcp", service)
        .route("/events/{name}", axum::routing::post(super::webhook::deliver).with_state(webhook))
        .merge(super::metrics::router(server_engine.clone(), guard_state.in_flight.clone()))
        .layer(middleware::from_fn_with_state(Arc::new(guard_state), guard))
        .merge(inspector)
        .merge(probes(server_engine))
}

/// `/healthz` (the process serves) and `/readyz` (the project loads and the
/// store answers), for load balancers: no token, any Host, and an answer
/// that reveals nothing (`ok`, `ready`, `not ready`); why a replica is not
/// ready goes to its log.
fn probes(engine: Arc<crate::runtime::Engine>) -> Router {
    use axum::routing::get;
    Router::new().route("/healthz", get(|| async { "ok\n" })).route(
        "/readyz",
        get(move || {
            let engine = engine.clone();
            async move {
                match tokio::task::spawn_blocking(move || engine.ready()).await {
                    Ok(Ok(())) => (StatusCode::OK, "ready\n"),
                    Ok(Err(why)) => {
                        tracing::warn!(error = %why, "not ready (/readyz)");
                        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
                    }
                    Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "not ready\n"),
                }
            }
        }),
    )
}

/// Counts a POST in flight until its response is sent (see [`InFlight`]).
async fn count_posts(
    State(in_flight): State<Arc<std::sync::atomic::AtomicUsize>>,
    req: Request,
    next: Next,
) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let flight = InFlight::new(&in_flight);
    tracked(next.run(req).await, flight)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves until SIGINT / SIGTERM.
pub async fn serve(server: SavantServer, addr: SocketAddr, options: &ServeOptions) -> Result<(), String> {
    let cancel = CancellationToken::new();
    let root = server.engine().root().display().to_string();
    let in_flight: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
    let app = router_counting(server, options, cancel.child_token(), in_flight.clone());
    let app = super::read_token::wrap(options, app, BODY_READ_TIMEOUT);
    if let Some(hook) = options.when_idle {
        tokio::spawn(when_idle(in_flight.clone(), hook));
    }
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;
    // Tests and scripts read this line to find the port of `--http 127.0.0.1:0`.
    eprintln!("savant-think: serving MCP on http://{local}/mcp (root {root})");
    eprintln!("savant-think: the run inspector is at http://{local}/ui/ (docs/inspector.md)");
    tracing::info!(%local, auth = options.token.is_some(), "serving MCP over Streamable HTTP");
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait for connections to close.
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Without it every response waits ~40 ms for the client's delayed ACK (Nagle).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "an HTTP connection ended with an error");
            }
        });
    }
    // Stop accepting (the listener is dropped), let what is in flight
    // finish, then close every session. A second signal exits at once.
    drop(listener);
    let pending = in_flight.load(std::sync::atomic::Ordering::SeqCst);
    tracing::info!(in_flight = pending, grace = ?options.shutdown_grace, "shutting down");
    let drained = async {
        while in_flight.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::select! {
        _ = drained => tracing::info!("every in-flight request finished"),
        _ = tokio::time::sleep(options.shutdown_grace) => {
            let left = in_flight.load(std::sync::atomic::Ordering::SeqCst);
            tracing::warn!(left, "the shutdown grace ran out; exiting with requests still in flight");
        }
        _ = shutdown_signal() => {
            tracing::warn!("a second signal: exiting at once");
            std::process::exit(130);
        }
    }
    cancel.cancel();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_public_bind_needs_a_token_or_insecure() {
        let public: SocketAddr = "0.0.0.0:7331".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:7331".parse().unwrap();
        assert!(check_bind(local, None, false).is_ok());
        assert!(check_bind(public, None, false).unwrap_err().contains("--token"));
        assert!(check_bind(public, Some("s3cret"), false).is_ok());
        assert!(check_bind(public, None, true).is_ok());
        assert!(check_bind(local, Some(" "), false).is_err());
    }
}
