//! Retries of transient backend failures (connection refused, timeouts, 5xx,
//! 429) with exponential backoff, abandoned as soon as the run is canceled.

use super::{Backend, BackendError, ChatRequest, Reply};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Why a request produced no reply.
#[derive(Debug)]
pub enum Failure {
    Canceled,
    Backend(BackendError),
}

/// One retry about to happen: which attempt failed, why, and the wait.
pub struct RetryNote<'a> {
    pub attempt: u32,
    pub error: &'a BackendError,
    pub delay: Duration,
}

/// Sends `request`, retrying transient failures `backend.retries()` times
/// after `backoff`, `2 × backoff`, `4 × backoff`, … — or after the server's
/// `Retry-After` when it asks for longer. Calls `on_retry` before each wait.
pub async fn complete(
    backend: &impl Backend,
    request: &ChatRequest,
    backoff: Duration,
    cancel: &CancellationToken,
    mut on_retry: impl FnMut(RetryNote<'_>),
) -> Result<Reply, Failure> {
    let retries = backend.retries();
    let mut attempt = 0;
    loop {
        let result = tokio::select! {
            _ = cancel.cancelled() => return Err(Failure::Canceled),
            r = backend.complete(request) => r,
        };
        match result {
            Ok(reply) => return Ok(reply),
            Err(e) if e.transient && attempt < retries => {
                let delay =
                    backoff.saturating_mul(1 << attempt.min(16)).max(e.retry_after.unwrap_or_default());
                attempt += 1;
                on_retry(RetryNote { attempt, error: &e, delay });
                tokio::select! {
                    _ = cancel.cancelled() => return Err(Failure::Canceled),
                    _ = tokio::time::sleep(delay) => {}
                }
            }
            Err(e) => return Err(Failure::Backend(e)),
        }
    }
}
