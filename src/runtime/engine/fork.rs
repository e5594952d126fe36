//! `fork`: a new run from a step of an existing one (see `runtime::fork`
//! for what it keeps). The source is locked while it is read and the new
//! run written, so two forks of one run into one new id are serialized:
//! the second finds the first's fork there and gets `STATE_CONFLICT`.

use super::*;
use crate::runtime::error_details::Conflict;
use crate::runtime::record::ParentRun;
use crate::runtime::run_errors::Making;

impl Engine {
    /// Forks run `run_id` of `workflow` from step `from` into `new_run_id`
    /// (default: a new id), with `params` (default: the source's), and
    /// returns the fork's first instruction. `expected_version` refuses
    /// with `STATE_CONFLICT` unless the source is at that version.
    pub fn fork(
        &self,
        workflow: &str,
        run_id: &str,
        from: &str,
        new_run_id: Option<&str>,
        params: Option<Value>,
        expected_version: Option<u64>,
    ) -> EngineResult<Progress> {
        let (source_key, _source_lock, source) = self.open_run(workflow, run_id)?;
        let out = self.fork_locked(&source_key, &source, from, new_run_id, params, expected_version);
        self.put(&source_key, source);
        out
    }

    fn fork_locked(
        &self,
        source_key: &RunKey,
        source: &Cached,
        from: &str,
        new_run_id: Option<&str>,
        params: Option<Value>,
        expected_version: Option<u64>,
    ) -> EngineResult<Progress> {
        let m = &source.machine;
        expect_version(m, expected_version)?;
        let cw = m.cw.clone();
        let Some(step) = cw.wf.steps.iter().position(|s| s.id.value == from) else {
            let message = format!("no step `{from}` in this workflow (fork from a step id, not an item)");
            return Err(EngineError::unknown_step(
                from,
                message,
                cw.wf.steps.iter().map(|s| s.id.value.as_str()),
                None,
            ));
        };
        let params = match params {
            Some(p) => self.check_params(&cw, p)?,
            None => m.state.params.clone(),
        };
        let (key, _lock) = match new_run_id {
            Some(id) if id == source_key.run_id => {
                let entry = RunEntry::new(source_key, Some(m.state.status.into()));
                return Err(EngineError::run_exists(source_key, &entry, Making::Fork));
            }
            Some(id) => {
                let key = self.key(&cw, id)?;
                let lock = self.lock_run(&key)?;
                if self.store.stamp(&key).map_err(store_error)?.is_some() {
                    return Err(self.fork_target_taken(&key, source_key, from));
                }
                (key, lock)
            }
            None => {
                let (key, lock, _) = self.fresh_key(&cw)?;
                (key, lock)
            }
        };
        let mut fork = Machine::fork(m, step, &key.run_id, params, &now());
        fork.state.generation = Some(new_generation());
        self.forget(&key);
        self.intend_timer(&key, super::timers::deadline_of(&fork), false)?;
        let snapshot = serde_json::to_value(&fork.state).unwrap_or(Value::Null);
        let stamp = self.store.write_snapshot(&key, &snapshot).map_err(store_error)?;
        self.fork_children(m, &fork)?;
        let mut cached = Cached::new(stamp, fork, 0);
        let out = self.advance(&key, &mut cached);
        self.put(&key, cached);
        out
    }

    /// The children follow the fork: each `uses:` unit the fork kept
    /// finished gets a copy of the source's child run (and of its own
    /// children), under the fork's id and linked to the fork, so a kept
    /// result keeps the run that made it. Units run again start their
    /// children afresh when they run.
    fn fork_children(&self, source: &Machine, fork: &Machine) -> Result<(), EngineError> {
        let depth = fork.state.parent.as_ref().map_or(0, |p| p.depth) + 1;
        for (w, uses) in super::children::uses_work(fork) {
            if !fork.status_of(w).is_finished() {
                continue;
            }
            let from = Self::child_run_id(source, w);
            let parent = super::children::parent_of(fork, w, depth);
            self.copy_child(uses, &from, parent)?;
        }
        Ok(())
    }

    /// Copies child run `from` of workflow `workflow` (when it exists) as
    /// the child `parent` names, then its own children below the copy.
    fn copy_child(&self, workflow: &str, from: &str, parent: ParentRun) -> Result<(), EngineError> {
        if parent.depth > super::children::MAX_CHILD_DEPTH {
            return Ok(());
        }
        let Ok((from_key, _from_lock, cached)) = self.open_run(workflow, from) else { return Ok(()) };
        let to = super::children::child_run_id(&parent.run_id, &parent.step_id);
        let key = RunKey::new(from_key.workflow.clone(), to.clone()).map_err(store_error)?;
        let _lock = self.store.lock(&key).map_err(store_error)?;
        if self.store.stamp(&key).map_err(store_error)?.is_some() {
            return Ok(());
        }
        let depth = parent.depth + 1;
        let mut copy = cached.machine.state.clone();
        copy.run_id = to.clone();
        copy.parent = Some(parent);
        copy.generation = Some(new_generation());
        self.forget(&key);
        let snapshot = serde_json::to_value(&copy).unwrap_or(Value::Null);
        self.store.write_snapshot(&key, &snapshot).map_err(store_error)?;
        let m = &cached.machine;
        // Its own children hang under the copy's run span, as the fork's children under the fork's.
        let trace = super::observe::parent_trace_of(&copy);
        for (w, uses) in super::children::uses_work(m) {
            let below = ParentRun {
                workflow: copy.workflow.clone(),
                run_id: to.clone(),
                step_id: m.work_id(w),
                depth,
                trace: Some(trace.clone()),
            };
            self.copy_child(uses, &Self::child_run_id(m, w), below)?;
        }
        Ok(())
    }

    /// The new run id of a fork is taken: by a fork of the same run from
    /// the same step (a concurrent fork won, or the same fork was asked
    /// for again: `STATE_CONFLICT`), or by another run (`RUN_EXISTS`).
    fn fork_target_taken(&self, key: &RunKey, source: &RunKey, from: &str) -> EngineError {
        let loaded = self.store.load(key).ok().flatten();
        let forked = loaded.as_ref().and_then(|l| l.snapshot.get("forked_from"));
        let same = forked.is_some_and(|f| f["run_id"] == source.run_id.as_str() && f["step"] == from);
        if same {
            return EngineError::with(
                ErrorCode::StateConflict,
                Conflict {
                    message: format!(
                        "run `{}` is already a fork of `{}` at `{from}`, made by an earlier or concurrent call: \
                         see it with `savant-think state get {} --run-id {}`, or give another --new-run-id for \
                         another fork",
                        key.run_id, source.run_id, key.workflow, key.run_id
                    ),
                    run_id: Some(key.run_id.clone()),
                    ..Conflict::default()
                },
            );
        }
        let entry = self.entry_locked(key).ok().flatten().unwrap_or_else(|| RunEntry::new(key, None));
        EngineError::run_exists(key, &entry, Making::Fork)
    }
}
