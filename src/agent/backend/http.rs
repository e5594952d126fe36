//! The HTTP transport every backend shares: a reqwest client (rustls) with
//! timeouts, one JSON POST, and the mapping of failures to [`BackendError`]s
//! that say which URL failed and whether a retry may help.

use super::BackendError;
use crate::agent::error::ErrorCode;
use serde_json::Value;
use std::sync::OnceLock;
use std::time::Duration;

/// How long to wait for a TCP connection before calling a backend unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest `Retry-After` honoured; a longer one is cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// A client with a connect timeout and an overall request timeout, built
/// when the first request is made: building one reads the system's root
/// certificates (milliseconds), which an `exec` that never asks the model
/// should not pay for.
pub struct Client {
    timeout: Duration,
    built: OnceLock<Result<reqwest::Client, String>>,
}

impl Client {
    pub fn new(timeout: Duration) -> Client {
        Client { timeout, built: OnceLock::new() }
    }

    /// The client, or `BACKEND_UNREACHABLE` (TLS set-up failed) naming `url`.
    fn get(&self, url: &str) -> Result<&reqwest::Client, BackendError> {
        let built = self.built.get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT.min(self.timeout))
                .timeout(self.timeout)
                .user_agent(concat!("savant-think/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| format!("cannot build the HTTP client: {e}"))
        });
        built.as_ref().map_err(|m| error(ErrorCode::BackendUnreachable, url, m.clone(), false))
    }
}

/// Joins a base URL and a path without doubling or dropping the slash.
pub fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// Adds `http://` to a host given without a scheme (`127.0.0.1:11434`), as
/// Ollama itself accepts in `OLLAMA_HOST`.
pub fn with_scheme(host: &str) -> String {
    if host.contains("://") { host.to_owned() } else { format!("http://{host}") }
}

fn error(code: ErrorCode, url: &str, message: String, transient: bool) -> BackendError {
    BackendError {
        code,
        url: url.to_owned(),
        status: None,
        message,
        hint: String::new(),
        transient,
        retry_after: None,
    }
}

/// POSTs `body` as JSON and returns the JSON answer. Connection failures,
/// timeouts, 5xx and 429 are transient; other statuses and bodies that are
/// not JSON are not.
pub async fn post_json(
    client: &Client,
    url: &str,
    bearer: Option<&str>,
    body: &Value,
) -> Result<Value, BackendError> {
    let mut request = client.get(url)?.post(url).json(body);
    if let Some(token) = bearer.filter(|t| !t.is_empty()) {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| send_error(url, &e))?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|secs| MAX_RETRY_AFTER.min(Duration::from_secs(secs)));
    let text = response.text().await.map_err(|e| send_error(url, &e))?;
    if !status.is_success() {
        let transient = status.is_server_error() || status.as_u16() == 429;
        let mut e =
            error(ErrorCode::BackendHttpError, url, format!("HTTP {status}: {}", snippet(&text)), transient);
        e.status = Some(status.as_u16());
        e.retry_after = retry_after.filter(|_| transient);
        return Err(e);
    }
    serde_json::from_str(&text).map_err(|e| {
        error(
            ErrorCode::BackendBadResponse,
            url,
            format!("the answer is not JSON ({e}): {}", snippet(&text)),
            false,
        )
        .with_hint("the URL may point at another service, or at a proxy's error page: check it")
    })
}

/// GETs (or POSTs `body`, when given) and returns the JSON answer, or `None`
/// on any failure: for optional facts a server may tell (its context size).
pub async fn fetch_optional(client: &Client, url: &str, body: Option<&Value>) -> Option<Value> {
    let client = client.get(url).ok()?;
    let request = match body {
        Some(b) => client.post(url).json(b),
        None => client.get(url),
    };
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

fn send_error(url: &str, e: &reqwest::Error) -> BackendError {
    if e.is_timeout() {
        error(ErrorCode::BackendTimeout, url, format!("no answer in time: {}", root_cause(e)), true)
    } else if e.is_connect() {
        error(ErrorCode::BackendUnreachable, url, format!("cannot connect: {}", root_cause(e)), true)
    } else {
        error(ErrorCode::BackendUnreachable, url, format!("request failed: {}", root_cause(e)), true)
    }
}

/// The innermost error message ("Connection refused (os error 111)").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The first 300 characters of a body, for error messages.
pub fn snippet(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_owned(),
    }
}

/// The text of a JSON field, or a bad-response error naming it.
pub fn field_str<'a>(value: &'a Value, pointer: &str, url: &str) -> Result<&'a str, BackendError> {
    value.pointer(pointer).and_then(Value::as_str).ok_or_else(|| {
        error(
            ErrorCode::BackendBadResponse,
            url,
            format!("the answer has no string at `{pointer}`: {}", snippet(&value.to_string())),
            false,
        )
        .with_hint(
            "the server is not answering in the API's shape: check the URL (an OpenAI-compatible \
             server under /v1, Ollama's /api/chat) and that the model answers with text, not only tool calls",
        )
    })
}
