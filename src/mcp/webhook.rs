//! `POST /events/{name}?key=K&id=ID` on `serve --http`: an event delivered
//! from a webhook (issue 43), the body its JSON payload, as
//! `think_signal` delivers it ([`crate::runtime::Engine::signal`]).
//!
//! It sits behind `/mcp`'s guard (`http.rs`): the same bearer token, `Host`
//! rule, body cap (`--max-message-bytes`, 413) and cap of calls in flight
//! (`--max-in-flight`, 503 with `Retry-After`). Here: an `Origin`, when
//! sent, must be one `/mcp` allows (403: a page in a browser cannot post
//! events), the body must be `application/json` (415) and JSON (400), and
//! arrive within the guard's time (408). The answer is JSON: the
//! `Signalled` reply (200), or `{error, details, message}` with the status
//! of its code — 404 `UNKNOWN_EVENT`, 409 `NO_WAITING_RUN` (no run waits
//! for it, nor will: the sender retries later), 422 `VALIDATION_FAILED`
//! (the payload breaks the event's schema; nothing recorded), 400
//! `INVALID_INPUT`.

use crate::runtime::args::SignalArgs;
use crate::runtime::{Engine, EngineError, ErrorCode};
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// What the handler needs: the engine, the body cap, the allowed `Origin`s.
pub(crate) struct Webhook {
    pub(crate) engine: Arc<Engine>,
    pub(crate) max_body: usize,
    pub(crate) origins: Vec<String>,
    pub(crate) body_timeout: Duration,
}

/// `{error, details, message}` with `status`.
fn error(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")],
        body.to_string(),
    )
        .into_response()
}

fn refuse(status: StatusCode, message: &str) -> Response {
    tracing::warn!(%status, message, "refused an event");
    error(status, json!({"error": "INVALID_INPUT", "details": {"message": message}, "message": message}))
}

/// The HTTP status of an engine error here.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::UnknownEvent | ErrorCode::UnknownWorkflow | ErrorCode::UnknownRun => StatusCode::NOT_FOUND,
        ErrorCode::NoWaitingRun | ErrorCode::StateConflict => StatusCode::CONFLICT,
        ErrorCode::ValidationFailed => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::InvalidInput | ErrorCode::InvalidId | ErrorCode::InvalidParams => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn engine_error(e: &EngineError) -> Response {
    let mut body = e.to_json();
    body["message"] = json!(e.describe());
    error(status_of(e.code), body)
}

/// One query parameter, percent-decoded.
fn param(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == name).then(|| crate::inspect::http::percent_decode(v))
    })
}

/// `POST /events/{name}`: see the module.
pub(crate) async fn deliver(
    State(hook): State<Arc<Webhook>>,
    Path(event): Path<String>,
    req: Request,
) -> Response {
    if let Ok(Some(origin)) = crate::web_guard::origin(req.headers())
        && !hook.origins.iter().any(|o| o == origin)
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: events are not taken from this Origin (--allowed-origin)",
        );
    }
    let json_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json_type {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the payload as Content-Type: application/json",
        );
    }
    let uri = req.uri().clone();
    let read = axum::body::to_bytes(req.into_body(), hook.max_body);
    let bytes = match tokio::time::timeout(hook.body_timeout, read).await {
        Err(_) => return refuse(StatusCode::REQUEST_TIMEOUT, "the body did not arrive in time"),
        Ok(Err(_)) => {
            let message = format!("the body may hold at most {} bytes (--max-message-bytes)", hook.max_body);
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, &message);
        }
        Ok(Ok(b)) => b,
    };
    let payload: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        // Dense JSON costs many times its size once parsed: refused before
        // it is built (the bound of `/mcp`, docs/threat-model.md).
        match crate::lean_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(crate::lean_json::Refused::TooDense(e)) => {
                return refuse(StatusCode::PAYLOAD_TOO_LARGE, &format!("the payload was not read: {e}"));
            }
            Err(crate::lean_json::Refused::Json(e)) => {
                return refuse(StatusCode::BAD_REQUEST, &format!("the body is not JSON ({e})"));
            }
        }
    };
    let args = SignalArgs {
        event,
        key: param(&uri, "key"),
        payload: Some(payload),
        id: param(&uri, "id"),
        workflow: param(&uri, "workflow"),
        run_id: param(&uri, "run_id"),
    };
    tracing::info!(event = %args.event, key = ?args.key, "an event from a webhook");
    let engine = hook.engine.clone();
    match tokio::task::spawn_blocking(move || engine.signal(args)).await {
        Ok(Ok(signalled)) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")],
            serde_json::to_string(&signalled).unwrap_or_default(),
        )
            .into_response(),
        Ok(Err(e)) => engine_error(&e),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, &format!("the delivery failed: {e}")),
    }
}
