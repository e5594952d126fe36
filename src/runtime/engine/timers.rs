//! The engine's side of the timer index (`state/timers.rs`): each run's
//! earliest deadline, kept where every `serve` on the store finds it, so
//! that the next due timer is found without reading every run, whichever
//! replica or process parked the run.
//!
//! - Before a write that may park a run on a deadline, under the run's
//!   lock, an *intent* ([`Engine::intend_timer`]): the entry moved no later
//!   than any deadline the write can make (for an event, the earliest its
//!   waits still to start could get; for a whole new state, its own), so a
//!   crash right after the write loses no wake-up. Skipped when this
//!   engine's entry for the run is already as early.
//! - After every call, a run whose workflow has a wait has its entry set
//!   ([`Engine::note_timers`], from `put`, under the run's lock or, without
//!   it, conditional on the run's stamp): when its deadline changed, or
//!   when someone else wrote the run since this engine last did (the entry
//!   may then be theirs). Reads of an unchanged run cost nothing here.
//! - `serve` polls the store ([`Engine::fire_timers_due`], every tick):
//!   the runs due by the store's clock (the database's, on PostgreSQL),
//!   each fired under its lock by the ordinary append, once; a run that
//!   was not due after all (a stale entry) has its entry set right.
//! - At `serve`'s start, [`Engine::scan_timers`] reads every run of a
//!   workflow with a wait once and sets its entry: runs parked before the
//!   index existed, or whose entry a crash lost.
//!
//! A store that keeps no index (the memory store) gets one here, in
//! memory, filled by the same calls; `serve` then rescans once a minute.

use super::*;
use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};

/// How many due runs one poll of the store takes.
const POLL_LIMIT: usize = 256;
/// How many polls one tick makes at most while each returns a full batch.
const MAX_POLLS: usize = 16;
/// How long a replica's claim on a due run lasts (PostgreSQL).
pub const CLAIM_LEASE: Duration = Duration::from_secs(5);
/// How long a run whose firing failed is left alone by this engine.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// Entries kept of runs with no deadline before they are forgotten.
const KNOWN_CAP: usize = 100_000;

/// What this engine knows of the index.
#[derive(Default)]
pub(super) struct Timers {
    /// Per run: the deadline this engine last put in the index.
    known: HashMap<(String, String), Option<SystemTime>>,
    /// Runs by deadline, when the store keeps no index.
    queue: BTreeSet<(SystemTime, String, String)>,
    /// Runs whose firing failed, and until when they are left alone.
    failed: HashMap<RunKey, Instant>,
}

impl Timers {
    fn remember(&mut self, id: (String, String), at: Option<SystemTime>, queued: bool) {
        if queued && let Some(Some(old)) = self.known.get(&id) {
            self.queue.remove(&(*old, id.0.clone(), id.1.clone()));
        }
        if queued && let Some(at) = at {
            self.queue.insert((at, id.0.clone(), id.1.clone()));
        }
        if self.known.len() >= KNOWN_CAP {
            self.known.retain(|_, at| at.is_some());
        }
        self.known.insert(id, at);
    }

    fn forget(&mut self, id: &(String, String)) {
        if let Some(Some(old)) = self.known.remove(id) {
            self.queue.remove(&(old, id.0.clone(), id.1.clone()));
        }
    }
}

/// The run's earliest deadline, while it runs and its workflow has waits:
/// its entry in the index.
pub(super) fn deadline_of(m: &Machine) -> Option<SystemTime> {
    match m.state.status {
        RunStatus::Running if m.cw.has_waits => {
            m.next_deadline().and_then(|(_, d)| crate::runtime::clock::parse_time(d))
        }
        _ => None,
    }
}

fn id(key: &RunKey) -> (String, String) {
    (key.workflow.clone(), key.run_id.clone())
}

impl Engine {
    fn timers(&self) -> std::sync::MutexGuard<'_, Timers> {
        self.timers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the intent of a write about to be made to run `key` (its lock
    /// held): its entry no later than `at` (see the module). `trusted`: this
    /// engine's own entry for the run may be relied on (no one else wrote
    /// the run since).
    pub(super) fn intend_timer(
        &self,
        key: &RunKey,
        at: Option<SystemTime>,
        trusted: bool,
    ) -> Result<(), EngineError> {
        let Some(at) = at.filter(|_| self.store.keeps_timers()) else { return Ok(()) };
        let id = id(key);
        if trusted && matches!(self.timers().known.get(&id), Some(Some(known)) if *known <= at) {
            return Ok(());
        }
        match self.store.intend_timer(key, at).map_err(store_error)? {
            true => self.timers().remember(id, Some(at), false),
            // No entry (a run PostgreSQL holds no row of yet): set after the write.
            false => self.timers().forget(&id),
        }
        Ok(())
    }

    /// Sets the index entry of a run this engine just worked on, when it
    /// may have changed (see the module).
    pub(super) fn note_timers(&self, key: &RunKey, cached: &Cached) {
        let m = &cached.machine;
        if !m.cw.has_waits {
            return;
        }
        let at = deadline_of(m);
        let id = id(key);
        if !cached.shared && self.timers().known.get(&id) == Some(&at) {
            return;
        }
        if !self.store.keeps_timers() {
            self.timers().forget(&id);
            self.timers().remember(id, at, true);
            return;
        }
        // Refused (the run moved on: its writer sets the entry) or failed:
        // the next call on the run tries again.
        match self.store.set_timer(key, &cached.stamp, at) {
            Ok(true) => self.timers().remember(id, at, false),
            _ => self.timers().forget(&id),
        }
    }

    /// Reads every live run whose workflow has a wait, applies the timers
    /// already due and sets its entry in the index; returns how many runs
    /// wait on a timer.
    pub fn scan_timers(&self) -> usize {
        let Ok(keys) = self.store.list(None) else { return 0 };
        let mut waiting = 0;
        for key in keys {
            if !self.workflow(&key.workflow).is_ok_and(|cw| cw.has_waits) {
                continue;
            }
            self.timers().forget(&id(&key));
            let timed = self.with_run(&key.workflow, &key.run_id, |engine, key, cached| {
                engine.settle_waits(key, cached)?;
                Ok(cached.machine.next_deadline().is_some())
            });
            waiting += usize::from(timed.unwrap_or(false));
        }
        waiting
    }

    /// Whether the store keeps the timer index (else this engine does, and
    /// only knows the runs it has seen: `serve` rescans).
    pub fn timers_shared(&self) -> bool {
        self.store.keeps_timers()
    }

    /// How many runs wait on a deadline, by the index (`/metrics`).
    pub fn timers_pending(&self) -> usize {
        match self.store.keeps_timers() {
            true => self.store.timer_stats().map_or(0, |(n, _)| n),
            false => self.timers().queue.len(),
        }
    }

    /// The earliest deadline in the index.
    pub fn next_timer(&self) -> Option<SystemTime> {
        match self.store.keeps_timers() {
            true => self.store.timer_stats().ok().and_then(|(_, at)| at),
            false => self.timers().queue.first().map(|(at, _, _)| *at),
        }
    }

    /// Fires the timers due at `now` (by the store's clock when it keeps
    /// the index), each run under its lock, once; returns how many runs
    /// changed, or the store's error when it could not be asked.
    pub fn fire_timers_due(&self, now: SystemTime) -> Result<usize, EngineError> {
        if !self.store.keeps_timers() {
            let due: Vec<RunKey> = {
                let timers = self.timers();
                let due = timers.queue.iter().take_while(|(at, _, _)| *at <= now);
                due.filter_map(|(_, wf, run)| RunKey::new(wf, run).ok()).collect()
            };
            return Ok(self.fire_runs(&due, now));
        }
        let mut changed = 0;
        // A store that does not claim returns the runs that failed again.
        for _ in 0..MAX_POLLS {
            let due = self.store.due_timers(POLL_LIMIT, CLAIM_LEASE).map_err(store_error)?;
            let at = due.now.unwrap_or(now).max(now);
            let mut runs = due.runs;
            let full = runs.len() >= POLL_LIMIT;
            {
                let mut timers = self.timers();
                let started = Instant::now();
                timers.failed.retain(|_, until| *until > started);
                runs.retain(|k| !timers.failed.contains_key(k));
            }
            changed += self.fire_runs(&runs, at);
            if !full || runs.is_empty() {
                break;
            }
        }
        Ok(changed)
    }

    /// Fires the due timers of `runs` at `at`; a run that is gone leaves
    /// the index, one that could not be read is left alone for a while.
    fn fire_runs(&self, runs: &[RunKey], at: SystemTime) -> usize {
        let mut changed = 0;
        for k in runs {
            // Its entry is set again whatever this engine knew of it.
            self.timers().forget(&id(k));
            match self.fire_run(k, at) {
                Ok(fired) => changed += usize::from(fired),
                Err(e) if e.code == ErrorCode::UnknownRun => {
                    let _ = self.store.clear_timer(k);
                }
                Err(_) => {
                    self.timers().failed.insert(k.clone(), Instant::now() + RETRY_AFTER);
                }
            }
        }
        changed
    }

    /// Fires run `k`'s timers due at `at` under its lock: whether it changed.
    fn fire_run(&self, k: &RunKey, at: SystemTime) -> Result<bool, EngineError> {
        let (key, _lock, mut cached) = self.open_run(&k.workflow, &k.run_id)?;
        let before = cached.machine.state.version;
        let out = self.settle_waits_at(&key, &mut cached, at);
        let changed = cached.machine.state.version != before;
        if !cached.machine.cw.has_waits {
            // An entry left by a version of the workflow that had waits.
            let _ = self.store.clear_timer(&key);
        }
        self.put(&key, cached);
        out.map(|()| changed)
    }
}

#[cfg(test)]
#[path = "timers_tests.rs"]
pub(super) mod tests;
