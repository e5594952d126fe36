//! The async runtime of the commands that need one (`serve`, `exec`, `run`).

/// The most threads engine calls may hold at once: every engine call runs
/// blocking (`mcp::calls::blocking`), so a crowd of callers on one run
/// would otherwise cost a thread each, up to tokio's 512. Past this, calls
/// queue (they are still answered: a lock wait ends after `lock_timeout`).
/// With the workers, the timer and retention threads and the logging, the
/// process stays under 64 threads (docs/threat-model.md).
pub const MAX_BLOCKING_THREADS: usize = 40;

/// Runs `future` on a multi-threaded tokio runtime (the one set-up of
/// `serve`, `exec` and `run`); blocking work left over afterwards (an engine
/// call for a vanished client) gets 5 s, then the process moves on.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_keep_alive(std::time::Duration::from_secs(2))
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let output = runtime.block_on(future);
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    Ok(output)
}
