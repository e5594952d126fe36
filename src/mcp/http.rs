//! Streamable HTTP at `/mcp` (axum + rmcp's `StreamableHttpService`).
//!
//! Security, in the order a request meets it: an optional bearer token (401),
//! then rmcp's `Host` check against loopback names plus `--allowed-host` (403,
//! against DNS rebinding), its `Origin` check against loopback origins plus
//! `--allowed-origin` (403; requests without `Origin` pass), the body cap (413)
//! and the session check (404 for an unknown `Mcp-Session-Id`). A non-loopback
//! bind without a token is refused unless `--insecure`.

use crate::mcp::{SavantServer, ServeOptions};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Hosts always accepted in `Host` (any port).
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// Origins always accepted (any port).
pub const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

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

/// Compares without an early exit, so timing does not leak the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_token(State(token): State<Arc<Option<String>>>, req: Request, next: Next) -> Response {
    if let Some(want) = token.as_deref() {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
            .map(str::trim);
        if !given.is_some_and(|g| same(g.as_bytes(), want.as_bytes())) {
            tracing::warn!(path = %req.uri().path(), "rejected a request without a valid bearer token");
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "Unauthorized: send Authorization: Bearer <token> (see --token / SAVANT_THINK_TOKEN)\n",
            )
                .into_response();
        }
    }
    next.run(req).await
}

/// The axum router: `/mcp` and nothing else (404).
pub fn router(server: SavantServer, options: &ServeOptions, cancel: CancellationToken) -> Router {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    if let Some(addr) = options.http
        && !addr.ip().is_unspecified()
        && !addr.ip().is_loopback()
    {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
    origins.extend(options.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_message_bytes)
        .with_cancellation_token(cancel);
    let service: StreamableHttpService<SavantServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.session()), Default::default(), config);
    Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(Arc::new(options.token.clone()), require_token))
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
    let app = router(server, options, cancel.child_token());
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;
    // Tests and scripts read this line to find the port of `--http 127.0.0.1:0`.
    eprintln!("savant-think: serving MCP on http://{local}/mcp (root {root})");
    tracing::info!(%local, auth = options.token.is_some(), "serving MCP over Streamable HTTP");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            tracing::info!("shutting down");
            cancel.cancel();
        })
        .await
        .map_err(|e| format!("the HTTP server failed: {e}"))
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

    #[test]
    fn tokens_compare_exactly() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }
}
