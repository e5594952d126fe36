//! The engine's timer index: for each run this engine has seen with a
//! deadline, its earliest one, ordered, so that the next due timer is found
//! without reading every run. It is filled as runs pass through the engine
//! (every call puts its run back, [`Engine::note_timers`]) and by a scan at
//! `serve`'s start and once a minute ([`Engine::scan_timers`]), which also
//! finds runs parked by another replica. A run whose workflow has no wait
//! costs nothing here.

use super::*;
use std::collections::BTreeSet;
use std::time::SystemTime;

/// Runs by their earliest deadline.
#[derive(Default)]
pub(super) struct Timers {
    by_run: HashMap<(String, String), SystemTime>,
    queue: BTreeSet<(SystemTime, String, String)>,
}

impl Timers {
    fn set(&mut self, workflow: &str, run_id: &str, at: Option<SystemTime>) {
        let id = (workflow.to_owned(), run_id.to_owned());
        if let Some(old) = self.by_run.remove(&id) {
            self.queue.remove(&(old, id.0.clone(), id.1.clone()));
        }
        if let Some(at) = at {
            self.queue.insert((at, id.0.clone(), id.1.clone()));
            self.by_run.insert(id, at);
        }
    }
}

impl Engine {
    /// Records the earliest deadline of a run this engine just worked on.
    pub(super) fn note_timers(&self, key: &RunKey, m: &Machine) {
        if !m.cw.has_waits {
            return;
        }
        let at = match m.state.status {
            RunStatus::Running => m.next_deadline().and_then(|(_, d)| crate::runtime::clock::parse_time(d)),
            _ => None,
        };
        self.timers.lock().unwrap_or_else(|p| p.into_inner()).set(&key.workflow, &key.run_id, at);
    }

    /// Reads every live run whose workflow has a wait, to learn its deadlines
    /// (and applies those already due); returns how many runs wait on a timer.
    pub fn scan_timers(&self) -> usize {
        let Ok(keys) = self.store.list(None) else { return 0 };
        let mut waiting = 0;
        for key in keys {
            if !self.workflow(&key.workflow).is_ok_and(|cw| cw.has_waits) {
                continue;
            }
            let timed = self.with_run(&key.workflow, &key.run_id, |engine, key, cached| {
                engine.settle_waits(key, cached)?;
                Ok(cached.machine.next_deadline().is_some())
            });
            waiting += usize::from(timed.unwrap_or(false));
        }
        waiting
    }

    /// How many runs this engine knows to wait on a deadline (`/metrics`).
    pub fn timers_pending(&self) -> usize {
        self.timers.lock().unwrap_or_else(|p| p.into_inner()).by_run.len()
    }

    /// The earliest deadline this engine knows of.
    pub fn next_timer(&self) -> Option<SystemTime> {
        self.timers.lock().unwrap_or_else(|p| p.into_inner()).queue.first().map(|(at, _, _)| *at)
    }

    /// Fires the timers due at `now` (each run under its lock, once);
    /// returns how many runs changed.
    pub fn fire_timers_due(&self, now: SystemTime) -> usize {
        let due: Vec<RunKey> = {
            let timers = self.timers.lock().unwrap_or_else(|p| p.into_inner());
            timers
                .queue
                .iter()
                .take_while(|(at, _, _)| *at <= now)
                .filter_map(|(_, wf, run)| RunKey::new(wf, run).ok())
                .collect()
        };
        if due.is_empty() {
            return 0;
        }
        let changed = self.fire_due_timers(&due);
        // A run that could not be read (deleted, say) leaves the index.
        let mut timers = self.timers.lock().unwrap_or_else(|p| p.into_inner());
        for k in &due {
            if timers.by_run.get(&(k.workflow.clone(), k.run_id.clone())).is_some_and(|at| *at <= now) {
                timers.set(&k.workflow, &k.run_id, None);
            }
        }
        changed
    }
}
