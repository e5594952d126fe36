//! The async runtime of the commands that need one (`serve`, `exec`, `run`).

/// Runs `future` on a multi-threaded tokio runtime (the one set-up of
/// `serve`, `exec` and `run`); blocking work left over afterwards (an engine
/// call for a vanished client) gets 5 s, then the process moves on.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let output = runtime.block_on(future);
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    Ok(output)
}
