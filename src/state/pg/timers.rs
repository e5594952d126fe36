//! [`PgStore`]'s timer index (`state/timers.rs` says what it is for): the
//! table `savant_timers(workflow, run_id, deadline, claimed_until)`, one
//! row per run with a deadline, indexed on `deadline` and removed with its
//! run (`ON DELETE CASCADE`).
//!
//! A row is set in one statement that first checks the run's stamp, so a
//! writer that lost a race does not overwrite the entry of the state that
//! replaced its own. Every `serve` polls with [`DUE`]: the rows whose
//! deadline has come by the database's clock (`deadline <= now()`, one
//! index range), not claimed by another replica, are claimed for a short
//! lease (`FOR UPDATE SKIP LOCKED`, so two replicas polling together take
//! different rows) and returned with the database's `now()`. Setting a row
//! ends its claim; a claimer that died loses it when the lease ends.

use std::time::{Duration, SystemTime};

use super::{PgStore, offload};
use crate::state::timers::{DueTimers, TimerIndex};
use crate::state::{RunKey, Stamp, StoreError};

/// Sets a run's row, only while the run's stamp is still `$4`, `$5`.
const SET: &str = "INSERT INTO savant_timers (workflow, run_id, deadline) \
     SELECT workflow, run_id, $3 FROM savant_runs \
     WHERE workflow = $1 AND run_id = $2 AND stamp = $4 AND nonce = $5 \
     ON CONFLICT (workflow, run_id) DO UPDATE SET deadline = excluded.deadline, claimed_until = NULL";
/// Moves a run's row to `$3` unless it is earlier (an intent, under the
/// run's lock); nothing for a run not written yet. Whether the run has a
/// row now.
const INTEND: &str = "WITH run AS (SELECT workflow, run_id FROM savant_runs \
       WHERE workflow = $1 AND run_id = $2), \
     moved AS (INSERT INTO savant_timers (workflow, run_id, deadline) SELECT workflow, run_id, $3 FROM run \
       ON CONFLICT (workflow, run_id) DO UPDATE SET deadline = excluded.deadline, claimed_until = NULL \
       WHERE savant_timers.deadline > excluded.deadline) \
     SELECT EXISTS (SELECT 1 FROM run)";
/// Removes a run's row, only while the run's stamp is still `$3`, `$4`;
/// whether it was.
const UNSET: &str = "WITH run AS (SELECT 1 FROM savant_runs \
       WHERE workflow = $1 AND run_id = $2 AND stamp = $3 AND nonce = $4), \
     gone AS (DELETE FROM savant_timers WHERE workflow = $1 AND run_id = $2 AND EXISTS (SELECT 1 FROM run)) \
     SELECT EXISTS (SELECT 1 FROM run)";
const CLEAR: &str = "DELETE FROM savant_timers WHERE workflow = $1 AND run_id = $2";
/// Claims at most `$1` due rows for `$2` seconds.
const DUE: &str = "WITH due AS ( \
       SELECT workflow, run_id FROM savant_timers \
       WHERE deadline <= now() AND (claimed_until IS NULL OR claimed_until <= now()) \
       ORDER BY deadline LIMIT $1 FOR UPDATE SKIP LOCKED) \
     UPDATE savant_timers t SET claimed_until = now() + make_interval(secs => $2) \
     FROM due WHERE t.workflow = due.workflow AND t.run_id = due.run_id \
     RETURNING t.workflow, t.run_id, t.deadline, now()";
const STATS: &str = "SELECT count(*), min(deadline) FROM savant_timers";

impl TimerIndex for PgStore {
    fn keeps_timers(&self) -> bool {
        true
    }

    fn set_timer(
        &self,
        key: &RunKey,
        stamp: &Stamp,
        deadline: Option<SystemTime>,
    ) -> Result<bool, StoreError> {
        key.validate()?;
        let (counter, nonce) = stamp.counter_value();
        let (counter, nonce) = (counter as i64, nonce as i64);
        let done = offload(|| {
            self.with_conn(Some(key), true, |c| match deadline {
                Some(at) => {
                    let s = c.statement(SET)?;
                    Ok(c.execute(&s, &[&key.workflow, &key.run_id, &at, &counter, &nonce])? > 0)
                }
                None => {
                    let s = c.statement(UNSET)?;
                    Ok(c.query_one(&s, &[&key.workflow, &key.run_id, &counter, &nonce])?.get(0))
                }
            })
        });
        match done {
            // The run was deleted between the check and the insert.
            Err(StoreError::Io { message, .. }) if message.contains("SQLSTATE 23503") => Ok(false),
            other => other,
        }
    }

    fn intend_timer(&self, key: &RunKey, deadline: SystemTime) -> Result<bool, StoreError> {
        key.validate()?;
        let done = offload(|| {
            self.with_conn(Some(key), true, |c| {
                let s = c.statement(INTEND)?;
                Ok(c.query_one(&s, &[&key.workflow, &key.run_id, &deadline])?.get(0))
            })
        });
        match done {
            // The run was deleted between the check and the insert.
            Err(StoreError::Io { message, .. }) if message.contains("SQLSTATE 23503") => Ok(false),
            other => other,
        }
    }

    fn clear_timer(&self, key: &RunKey) -> Result<(), StoreError> {
        key.validate()?;
        offload(|| {
            self.with_conn(Some(key), true, |c| {
                let s = c.statement(CLEAR)?;
                c.execute(&s, &[&key.workflow, &key.run_id]).map(drop)
            })
        })
    }

    fn due_timers(&self, limit: usize, lease: Duration) -> Result<DueTimers, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let lease = lease.as_secs_f64();
        let rows = offload(|| {
            self.with_conn(None, false, |c| {
                let s = c.statement(DUE)?;
                c.query(&s, &[&limit, &lease])
            })
        })?;
        let mut due: Vec<(SystemTime, RunKey)> = Vec::with_capacity(rows.len());
        let mut now = None;
        for row in &rows {
            now = Some(row.get::<_, SystemTime>(3));
            if let Ok(key) = RunKey::new(row.get::<_, String>(0), row.get::<_, String>(1)) {
                due.push((row.get(2), key));
            }
        }
        due.sort();
        Ok(DueTimers { now, runs: due.into_iter().map(|(_, k)| k).collect() })
    }

    fn timer_stats(&self) -> Result<(usize, Option<SystemTime>), StoreError> {
        let row = offload(|| {
            self.with_conn(None, true, |c| {
                let s = c.statement(STATS)?;
                c.query_one(&s, &[])
            })
        })?;
        Ok((row.get::<_, i64>(0) as usize, row.get(1)))
    }
}
