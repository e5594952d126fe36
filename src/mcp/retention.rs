//! `[state] keep` applied while `serve` runs: a background thread prunes
//! at start and then once a minute (`Engine::prune_kept`), logging what it
//! removed. Nothing runs when the setting is absent.

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
