//! `next` without the run's lock, on a store that appends conditionally
//! ([`StateStore::appends_unlocked`]: PostgreSQL and the memory store).
//!
//! On PostgreSQL, taking the run's advisory lock and releasing it are a
//! round trip each, and the append a third. When this engine holds the run
//! in its cache (the state it last wrote or read), a `next` works on that
//! state without the lock and makes its write conditional
//! ([`StateStore::append_unlocked`]): appended only while no one holds the
//! run's lock and the run's stamp is still the cached one, checked and
//! written in one statement. So a transition is one round trip.
//!
//! When the condition fails, nothing was written: another caller (another
//! replica, or another call of this process under the lock) changed the run
//! or is changing it. The call then starts again under the lock, which reads
//! the run afresh, and answers as if it had taken the lock first. Exactly
//! once holds as with the lock: of two callers with the same view, one
//! appends and the other finds the run changed.
//!
//! Only for a call that can be answered this way:
//!
//! - the run is in the cache, and no other call of this process has it (the
//!   entry is taken out while the call works);
//! - the run is not shared: when the last call under the lock found that
//!   someone else had written it (another replica: replicas that take turns
//!   on a run behind a load balancer), trying without the lock would fail
//!   and cost a round trip, so the lock is taken until a call finds the
//!   cache current again;
//! - the step is the run's own, and the workflow has no `uses:` steps (their
//!   completion reads and writes other runs, which needs this one locked);
//! - the call writes. One that writes nothing (a refusal, a result sent
//!   again) was answered from a cache that may be stale, and is answered
//!   again under the lock.
//!
//! A journal due for compaction is compacted after the call, under the lock,
//! if the run is still as this call left it.

use super::*;

/// What a call without the lock wrote (see [`Cached::unlocked`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Writes {
    /// A write was attempted (whatever came of it).
    tried: bool,
    /// A write was made.
    written: bool,
    /// A write was refused: the run changed, or someone holds its lock.
    lost: bool,
}

impl Engine {
    /// [`Engine::next`] without the run's lock (see the module), or `None`
    /// when the call must take it.
    pub(super) fn next_unlocked(&self, args: &NextArgs) -> Option<EngineResult<Progress>> {
        if !self.store.appends_unlocked() {
            return None;
        }
        let (key, _) = self.run_key(&args.workflow, &args.run_id).ok()?;
        let mut cached = self.take_cached(&key)?;
        let m = &cached.machine;
        // A run with waits takes the lock: a due timer is applied first.
        if cached.shared
            || m.resolve(&args.step_id).is_none()
            || m.cw.has_uses
            || m.waiting().next().is_some()
        {
            self.put(&key, cached);
            return None;
        }
        cached.unlocked = Some(Writes::default());
        let out = self.next_locked(&key, &mut cached, args.clone());
        let writes = cached.unlocked.take().unwrap_or_default();
        if !writes.tried {
            // Answered from the cache alone: again under the lock, which
            // checks the cache against the store.
            self.put(&key, cached);
            return None;
        }
        if writes.lost {
            // Changed by someone else: the cache is stale, and kept only so
            // that the lock's reading of the run marks it shared. With
            // nothing written, the whole call again under the lock; after
            // a write (not made today: one `next` without `uses:` steps
            // writes once), the rest of it.
            self.put(&key, cached);
            return match writes.written {
                false => None,
                true => Some(self.with_run(&args.workflow, &args.run_id, |e, k, c| e.advance(k, c))),
            };
        }
        if !writes.written {
            // The write failed, and may or may not have been made: the
            // cache is dropped, the error is the answer.
            return Some(out);
        }
        if cached.compaction_due() {
            self.compact_locked(&key, cached);
        } else {
            self.put(&key, cached);
        }
        Some(out)
    }

    /// A write of a call without the lock: [`StateStore::append_unlocked`],
    /// noted in `writes`; refused, a conflict (which the caller never
    /// returns: it starts again under the lock).
    pub(super) fn append_unlocked(
        &self,
        key: &RunKey,
        event: &Value,
        expected: &Stamp,
        writes: &mut Writes,
    ) -> Result<Stamp, EngineError> {
        writes.tried = true;
        match self.store.append_unlocked(key, event, expected).map_err(store_error)? {
            Some(stamp) => {
                writes.written = true;
                Ok(stamp)
            }
            None => {
                writes.lost = true;
                let message = format!("run {key} changed while this call worked on it");
                Err(EngineError::with(ErrorCode::StateConflict, Conflict { message, ..Conflict::default() }))
            }
        }
    }

    /// Folds the journal into a snapshot under the lock, if the run is still
    /// as `cached` has it; else (or if that fails) the cache is dropped and
    /// the next call reads the run. The call's answer stands either way:
    /// its event is durable in the journal.
    fn compact_locked(&self, key: &RunKey, mut cached: Cached) {
        let Ok(Some(lock)) = self.lock_run_existing(key) else { return };
        let stamp = lock.stamp().or_else(|| self.store.stamp(key).ok().flatten());
        if stamp == Some(cached.stamp) && self.snapshot(key, &mut cached).is_ok() {
            self.put(key, cached);
        }
        drop(lock);
    }
}
