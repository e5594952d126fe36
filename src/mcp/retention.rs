//! Background work while `serve` runs. `[state] keep`: a thread prunes at
//! start and then once a minute (`Engine::prune_kept`), logging what it
//! removed; nothing runs when the setting is absent. Timers: a thread fires
//! due waits within a second of their deadline (`Engine::fire_timers_due`,
//! over the engine's timer index), and reads every waiting run at start
//! and once a minute (`Engine::scan_timers`: runs parked by another
//! replica, or before this one started).

use crate::runtime::Engine;
use std::sync::Arc;
use std::time::Duration;

/// How often the retention policy is applied.
pub const EVERY: Duration = Duration::from_secs(60);

/// Starts the background pruning, if `[state] keep` is set.
pub fn spawn(engine: Arc<Engine>) {
    if engine.config().state.keep.is_none() {
        return;
    }
    let spawned = std::thread::Builder::new().name("savant-retention".into()).spawn(move || {
        loop {
            match engine.prune_kept() {
                Some(Ok(p)) if !p.runs.is_empty() || !p.objects.is_empty() => {
                    super::metrics::pruned(p.runs.len(), p.objects.len());
                    tracing::info!(runs = p.runs.len(), objects = p.objects.len(), "pruned ([state] keep)")
                }
                Some(Err(e)) => tracing::warn!(error = %e, "pruning ([state] keep) failed"),
                _ => {}
            }
            std::thread::sleep(EVERY);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the retention thread; [state] keep is not applied");
    }
}

/// How often the timer thread looks at the index of deadlines.
pub const TIMER_TICK: Duration = Duration::from_millis(500);

/// Starts the timer thread.
pub fn spawn_timers(engine: Arc<Engine>) {
    let spawned = std::thread::Builder::new().name("savant-timers".into()).spawn(move || {
        let mut scanned: Option<std::time::Instant> = None;
        loop {
            if scanned.is_none_or(|at| at.elapsed() >= EVERY) {
                let waiting = engine.scan_timers();
                tracing::debug!(waiting, "timers scanned");
                scanned = Some(std::time::Instant::now());
            }
            let fired = engine.fire_timers_due(crate::runtime::clock::now());
            if fired > 0 {
                super::metrics::timers_fired(fired);
                tracing::info!(runs = fired, "timers fired");
            }
            // Idle: one look at the index every tick, no run read.
            std::thread::sleep(TIMER_TICK);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the timer thread; waits end when a call reads their run");
    }
}
