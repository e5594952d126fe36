//! The checks a request to the MCP HTTP server meets before rmcp sees it
//! (the order of `http.rs`'s module docs): the request's form and who sends
//! it ([`who_and_where`]: 400, 401, 403, 413), then whether the server has
//! room for it ([`room_for`]: 503). Over `web_guard`, shared with the
//! inspector's guard.

use crate::web_guard::{self, HostError};
use axum::extract::Request;
use axum::http::HeaderMap;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;

/// What the guard checks before rmcp sees a request.
pub(super) struct Guard {
    pub(super) token: Option<String>,
    /// Allowed `Host`s: a name and, if given, the only port it may carry.
    pub(super) hosts: Vec<(String, Option<u16>)>,
    pub(super) max_body: usize,
    pub(super) sessions: Arc<LocalSessionManager>,
    pub(super) max_sessions: usize,
    pub(super) stateless: bool,
    /// Requests whose response has not been sent in full yet.
    pub(super) in_flight: Arc<std::sync::atomic::AtomicUsize>,
    pub(super) max_in_flight: usize,
}

/// The request's form, who is asking and what they may reach: the
/// refusal to send, if any.
pub(super) fn who_and_where(guard: &Guard, req: &Request) -> Option<Response> {
    // Syntax first (400/403), then who is asking (401), then what they may reach (403).
    if req.uri().scheme().is_some() || req.uri().authority().is_some() {
        return Some(refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: send the path (/mcp), not an absolute URL",
        ));
    }
    let host = match host_of(req.headers()) {
        Ok(h) => h,
        Err(response) => return Some(*response),
    };
    if web_guard::origin(req.headers()).is_err() {
        return Some(refuse(StatusCode::FORBIDDEN, "Forbidden: the Origin header is malformed or repeated"));
    }
    if let Some(want) = guard.token.as_deref() {
        let given = web_guard::bearer(req.headers());
        if !given.is_some_and(|g| web_guard::same_secret(g, want)) {
            tracing::warn!(path = %req.uri().path(), "rejected a request without a valid bearer token");
            let unauthorized = (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "Unauthorized: send Authorization: Bearer <token> (see --token / SAVANT_THINK_TOKEN)\n",
            );
            return Some(unauthorized.into_response());
        }
    }
    if !web_guard::host_allowed(&guard.hosts, &host) {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: the Host header is not allowed (loopback names and --allowed-host only)",
        ));
    }
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared.and_then(|v| v.trim().parse::<u64>().ok()).is_some_and(|n| n > guard.max_body as u64) {
        return Some(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "Payload Too Large: the body may hold at most {} bytes (--max-message-bytes)",
                guard.max_body
            ),
        ));
    }
    None
}

/// Whether the server has room for one more call (a POST), opening a new
/// session or not: the refusal to send when it has not.
pub(super) async fn room_for(guard: &Guard, post: bool, new_session: bool) -> Option<Response> {
    // A new session (a POST without one) past the cap: 503, try later.
    if !guard.stateless && new_session && guard.sessions.sessions.read().await.len() >= guard.max_sessions {
        return Some(busy(&format!(
            "BUSY: the server holds its most sessions ({}, --max-sessions); retry later",
            guard.max_sessions
        )));
    }
    // Past the cap of calls in flight, answered at once: no call queues
    // behind a full server (a thread, a lock wait) without bound.
    if post && guard.in_flight.load(std::sync::atomic::Ordering::SeqCst) >= guard.max_in_flight {
        return Some(busy(&format!(
            "BUSY: the server is answering its most calls at once ({}, --max-in-flight); retry later",
            guard.max_in_flight
        )));
    }
    None
}

/// A JSON-RPC error response (`id` null: the request could not be read)
/// with an HTTP status, for protocol errors before rmcp sees the request.
pub(super) fn jsonrpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    tracing::warn!(%status, code, message, "refused an MCP request");
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

pub(super) fn refuse(status: StatusCode, message: &str) -> Response {
    tracing::warn!(%status, message, "refused an HTTP request");
    (status, [(header::CONNECTION, "close")], format!("{message}\n")).into_response()
}

/// The one `Host` of a request, parsed; an error is the response to send.
fn host_of(headers: &HeaderMap) -> Result<(String, Option<u16>), Box<Response>> {
    web_guard::host(headers).map_err(|e| {
        let message = match e {
            HostError::NotOne => "Bad Request: send exactly one Host header",
            HostError::Malformed => "Bad Request: the Host header is not host[:port]",
        };
        Box::new(refuse(StatusCode::BAD_REQUEST, message))
    })
}

/// 503 with `Retry-After` and a JSON-RPC error `-32000` saying `message`.
fn busy(message: &str) -> Response {
    let mut response = jsonrpc_error(StatusCode::SERVICE_UNAVAILABLE, -32000, message);
    response.headers_mut().insert(header::RETRY_AFTER, axum::http::HeaderValue::from_static("5"));
    response
}
