//! Taking a run's lock, timed: every lock the engine takes goes through
//! [`Engine::lock_run`] or [`Engine::lock_run_existing`], which report how
//! long it took and whether it was refused (`RUN_BUSY`) to the hook `serve`
//! installs for `/metrics` ([`observe_lock_waits`]). Also the state
//! database's connection pool as `/metrics` shows it.

use super::*;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Told of each lock taken or refused: how long it took, and whether it
/// was refused as busy.
pub type LockWaitHook = fn(Duration, bool);

static HOOK: OnceLock<LockWaitHook> = OnceLock::new();

/// Installs the hook told of every run lock taken or refused (once per
/// process; a second call is ignored).
pub fn observe_lock_waits(hook: LockWaitHook) {
    let _ = HOOK.set(hook);
}

fn report<T>(started: Instant, out: &Result<T, StoreError>) {
    if let Some(hook) = HOOK.get() {
        hook(started.elapsed(), matches!(out, Err(StoreError::Busy { .. })));
    }
}

impl Engine {
    /// The run's lock ([`StateStore::lock`]), timed.
    pub(super) fn lock_run(&self, key: &RunKey) -> Result<RunLock, EngineError> {
        let started = Instant::now();
        let out = self.store.lock(key);
        report(started, &out);
        out.map_err(store_error)
    }

    /// [`StateStore::lock_existing`], timed.
    pub(super) fn lock_run_existing(&self, key: &RunKey) -> Result<Option<RunLock>, StoreError> {
        let started = Instant::now();
        let out = self.store.lock_existing(key);
        report(started, &out);
        out
    }

    /// The state database's connection pool now, when the store has one.
    pub fn pool_usage(&self) -> Option<crate::state::PoolUsage> {
        self.store.pool_usage()
    }
}
