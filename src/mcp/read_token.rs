//! `serve --read-token-file`: a second bearer token that may only read.
//! An outer layer around every route: a request carrying the read token is
//! let through, as if it carried the token, only when it reads — `GET` (and
//! `HEAD`) of `/ui/…`, `/metrics` and the probes, `GET` and `DELETE` of `/mcp` (the
//! session's stream, its end), and a `POST /mcp` whose JSON-RPC request
//! reads: `initialize`, notifications, `ping`, the `*/list` methods,
//! `resources/read`, `resources/subscribe` and `unsubscribe`, `prompts/get`,
//! `completion/complete`, `logging/setLevel`, and `tools/call` of a tool
//! annotated read-only. Anything else with the read token is `403`: a
//! transition, an answer, an inspector action, a webhook event. Every
//! other request passes unchanged, to the guard behind (which wants the
//! token itself).

use crate::runtime::catalog;
use crate::web_guard;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Duration;

/// The two tokens (read-only, operating) and the body bounds of `/mcp`.
pub(super) struct ReadToken {
    tokens: (String, String),
    max_body: usize,
    body_timeout: Duration,
}

/// `app` behind the layer, when `options` has a read-only token.
pub(super) fn wrap(options: &super::ServeOptions, app: axum::Router, body_timeout: Duration) -> axum::Router {
    let Some(tokens) = options.read_token.clone().zip(options.token.clone()) else { return app };
    let state = Arc::new(ReadToken { tokens, max_body: options.max_message_bytes, body_timeout });
    app.layer(axum::middleware::from_fn_with_state(state, layer))
}

/// Methods a read-only client may send (besides `tools/call` of a
/// read-only tool and any notification).
const READS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// Whether the JSON-RPC message in `bytes` only reads.
fn reads(bytes: &[u8]) -> bool {
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(bytes) else { return false };
    let Some(method) = message.get("method").and_then(|m| m.as_str()) else { return false };
    if method == "tools/call" {
        let name = message.pointer("/params/name").and_then(|n| n.as_str()).unwrap_or("");
        return catalog::find(name).is_some_and(|t| t.mcp && t.annotations.read_only);
    }
    method.starts_with("notifications/") || READS.contains(&method)
}

fn forbidden(message: &str) -> Response {
    tracing::warn!(message, "refused a request with the read-only token");
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
    (StatusCode::FORBIDDEN, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// The layer (see the module's docs).
pub(super) async fn layer(State(limits): State<Arc<ReadToken>>, req: Request, next: Next) -> Response {
    let (read, token) = &limits.tokens;
    let given = web_guard::bearer(req.headers());
    if !given.is_some_and(|g| web_guard::same_secret(g, read)) {
        return next.run(req).await;
    }
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let reading = matches!(method, Method::GET | Method::HEAD);
    let allowed = match path.as_str() {
        "/metrics" | "/healthz" | "/readyz" => reading,
        "/mcp" => reading || method == Method::DELETE || method == Method::POST,
        p => reading && (p == "/ui" || p.starts_with("/ui/")),
    };
    if !allowed {
        return forbidden("Forbidden: the read-only token may read, not act (use the operating token)");
    }
    let (mut parts, body) = req.into_parts();
    let body =
        if method == Method::POST {
            let bytes =
                match tokio::time::timeout(limits.body_timeout, axum::body::to_bytes(body, limits.max_body))
                    .await
                {
                    Ok(Ok(b)) => b,
                    // Too large or too slow.
                    _ => return forbidden("Forbidden: the read-only token's request could not be read"),
                };
            if !reads(&bytes) {
                return forbidden(
                    "Forbidden: the read-only token may call read-only tools and read resources only",
                );
            }
            axum::body::Body::from(bytes)
        } else {
            body
        };
    match HeaderValue::from_str(&format!("Bearer {token}")) {
        Ok(v) => {
            parts.headers.insert(header::AUTHORIZATION, v);
        }
        Err(_) => return forbidden("Forbidden: the token cannot be passed on"),
    }
    next.run(Request::from_parts(parts, body)).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_reads_pass() {
        let call = |name: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#)
        };
        assert!(super::reads(call("think_state_list").as_bytes()));
        assert!(super::reads(call("think_explain").as_bytes()));
        assert!(!super::reads(call("think_next").as_bytes()));
        assert!(!super::reads(call("think_state_delete").as_bytes()));
        assert!(!super::reads(call("no_such_tool").as_bytes()));
        assert!(super::reads(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#));
        assert!(super::reads(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#));
        assert!(
            !super::reads(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            "no answers to the server's requests"
        );
        assert!(!super::reads(b"[]"));
        assert!(!super::reads(b"not json"));
    }
}
