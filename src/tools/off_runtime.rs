//! How async code (the MCP handler, `think_exec`, the executor's
//! multiplexer) makes an engine call: off the async runtime ([`blocking`])
//! or on the calling task ([`inline`]); a panic is an `INTERNAL` error
//! either way.

use crate::runtime::{EngineError, ErrorCode};

/// Runs blocking engine work off the async runtime; a panic becomes an error.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, EngineError> + Send + 'static,
) -> Result<T, EngineError> {
    // On a multi-threaded runtime the call runs on this thread (a worker
    // hands its other tasks to another thread meanwhile; in the runtime's
    // `block_on`, as `exec`'s loop is, it just runs): no wake-up of a pool
    // thread and back per call.
    if tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
        return tokio::task::block_in_place(|| inline(f));
    }
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| Err(did_not_complete(&e)))
}

/// Runs engine work on this task; a panic becomes an error.
pub fn inline<T>(f: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(did_not_complete(&"it panicked")))
}

fn did_not_complete(why: &dyn std::fmt::Display) -> EngineError {
    tracing::error!("engine call failed: {why}");
    EngineError::message(ErrorCode::Internal, "the engine call did not complete")
}
