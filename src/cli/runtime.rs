//! The async runtime of the commands that need one (`serve`, `exec`, `run`).

/// The most threads engine calls may hold at once: every engine call runs
/// blocking (`tools::blocking`), so a crowd of callers on one run
/// would otherwise cost a thread each, up to tokio's 512. Past this, calls
/// queue (they are still answered: a lock wait ends after `lock_timeout`).
/// With the workers, the timer and retention threads and the logging, the
/// process stays under 64 threads (docs/threat-model.md).
pub const MAX_BLOCKING_THREADS: usize = 40;

/// The most async worker threads: tokio's default is one per core (and
/// `TOKIO_WORKER_THREADS`), which on a 96-core host alone broke the 64
/// (issue 46.2: 137 threads). The workers only move bytes and wait; the
/// engine's work is on the blocking threads above.
pub const MAX_WORKER_THREADS: usize = 8;

/// One worker per core, at most [`MAX_WORKER_THREADS`].
fn worker_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let asked = std::env::var("TOKIO_WORKER_THREADS").ok().and_then(|n| n.trim().parse().ok());
    asked.unwrap_or(cores).clamp(1, MAX_WORKER_THREADS)
}

/// Runs `future` on a multi-threaded tokio runtime (the one set-up of
/// `serve`, `exec` and `run`); blocking work left over afterwards (an engine
/// call for a vanished client) gets 5 s, then the process moves on.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(worker_threads())
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_keep_alive(std::time::Duration::from_secs(2))
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let output = runtime.block_on(future);
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    Ok(output)
}
