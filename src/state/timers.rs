//! The timer index of a [`super::StateStore`]: for each run with a
//! deadline, its earliest one, kept by the store so that every `serve` on
//! it (every replica on one database, every process on one state
//! directory) finds the runs due without reading every run.
//!
//! The index is derived: a run's deadlines live in its own state. Before
//! a write that may park the run on a deadline, the engine, holding the
//! run's lock, writes an *intent* ([`TimerIndex::intend_timer`]): an entry
//! no later than any deadline the write can make, so that a crash right
//! after the write loses no wake-up. After the write it sets the exact
//! entry ([`TimerIndex::set_timer`], conditional on the run's stamp, so a
//! writer that lost a race never overwrites its successor's entry). An
//! entry may so be early or stale (a crash after an intent, a race):
//! firing a run that is not due records nothing and corrects its entry,
//! and `serve` rebuilds the entries of every waiting run at start. So the
//! index only decides when a run is looked at; a timer is recorded by the
//! ordinary append under the run's lock, once.
//!
//! - PostgreSQL: the table `savant_timers(workflow, run_id, deadline,
//!   claimed_until)`, indexed on `deadline`, its rows removed with their run.
//!   [`TimerIndex::due_timers`] claims the due rows by the database's clock
//!   (`deadline <= now()`), `FOR UPDATE SKIP LOCKED`, for a short lease: of
//!   replicas polling together one takes each run, and a replica that dies
//!   holding a claim loses it when the lease ends.
//! - File store: one marker file per run in `<state dir>/timers/`, named
//!   `<workflow>__<run_id>` and stamped with the deadline as its
//!   modification time (replaced by a rename). A process lists the
//!   directory only when its modification time changed, so an idle poll is
//!   one `stat`; due runs are compared with the local clock (`crate::clock`:
//!   a test clock moves it), and processes
//!   on one directory do not claim (the run's lock decides who records).
//! - The memory store keeps none: the engine keeps its own index in memory.

use std::time::{Duration, SystemTime};

use super::{RunKey, Stamp, StoreError};

/// Runs whose deadline has come, by the store's clock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DueTimers {
    /// The store's time when it looked (the database's `now()`): the runs'
    /// timers are due at it.
    pub now: Option<SystemTime>,
    /// The runs, earliest deadline first.
    pub runs: Vec<RunKey>,
}

/// The timer half of a [`super::StateStore`] (see the module).
pub trait TimerIndex {
    /// Whether this store keeps a timer index. Without one, the other
    /// methods do nothing and the engine keeps its own, in memory.
    fn keeps_timers(&self) -> bool {
        false
    }

    /// Sets run `key`'s entry to `deadline` (`None`: the run waits on no
    /// deadline, the entry goes) as of the run's state stamped `stamp`.
    /// `false`, nothing changed, when the run is gone or no longer at
    /// `stamp`: whoever wrote it since sets the entry.
    fn set_timer(
        &self,
        key: &RunKey,
        stamp: &Stamp,
        deadline: Option<SystemTime>,
    ) -> Result<bool, StoreError> {
        let _ = (key, stamp, deadline);
        Ok(false)
    }

    /// Moves run `key`'s entry to `deadline` unless it is already earlier,
    /// ahead of a write (under the run's lock) that may park the run at
    /// `deadline` or later: an intent, which an early entry only makes
    /// looked at sooner. Whether the entry is now at `deadline` or earlier:
    /// `false` from PostgreSQL for a run not written yet (its rows belong to
    /// runs), whose first write gets its entry after.
    fn intend_timer(&self, key: &RunKey, deadline: SystemTime) -> Result<bool, StoreError> {
        let _ = (key, deadline);
        Ok(false)
    }

    /// Removes run `key`'s entry whatever its state (a run that is gone or
    /// cannot be read). Made under the run's lock.
    fn clear_timer(&self, key: &RunKey) -> Result<(), StoreError> {
        let _ = key;
        Ok(())
    }

    /// At most `limit` runs due now by the store's clock, each claimed for
    /// `lease` where the store claims (PostgreSQL): another caller is not
    /// given it again before the lease ends or its entry is set.
    fn due_timers(&self, limit: usize, lease: Duration) -> Result<DueTimers, StoreError> {
        let _ = (limit, lease);
        Ok(DueTimers::default())
    }

    /// How many runs the index holds, and the earliest deadline among them.
    fn timer_stats(&self) -> Result<(usize, Option<SystemTime>), StoreError> {
        Ok((0, None))
    }
}

#[cfg(test)]
#[path = "timers_tests.rs"]
mod tests;
