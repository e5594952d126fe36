//! Background work while `serve` runs. `[state] keep`: a thread prunes at
//! start and then once a minute (`Engine::prune_kept`), logging what it
//! removed; nothing runs when the setting is absent. Timers: a thread polls
//! the store's timer index every half second and fires the due waits
//! (`Engine::fire_timers_due`: on PostgreSQL the runs due by the
//! database's clock, claimed across replicas; on the file store the
//! markers every process on the directory sees), so any `serve` fires a
//! timer within a second of its deadline, whichever replica parked the
//! run. At start it reads every waiting run once (`Engine::scan_timers`:
//! runs parked before the index existed, or whose entry a crash lost); on
//! a store without an index (memory) it does so once a minute.

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
        let mut failing = false;
        loop {
            let rescan = !engine.timers_shared() && scanned.is_some_and(|at| at.elapsed() >= EVERY);
            if scanned.is_none() || rescan {
                let waiting = engine.scan_timers();
                tracing::debug!(waiting, "timers scanned");
                scanned = Some(std::time::Instant::now());
            }
            match engine.fire_timers_due(crate::runtime::clock::now()) {
                Ok(fired) => {
                    if failing {
                        tracing::info!("the timer index answers again");
                    }
                    failing = false;
                    if fired > 0 {
                        super::metrics::timers_fired(fired);
                        tracing::info!(runs = fired, "timers fired");
                    }
                }
                // Said once, not every tick, until it answers again.
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(code = e.code.as_str(), error = %e.human(), "cannot read the timer index");
                }
                Err(_) => {}
            }
            // Idle: one look at the index every tick, no run read.
            std::thread::sleep(TIMER_TICK);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the timer thread; waits end when a call reads their run");
    }
}
