//! `plan`: start a run, or (asked to) resume or replace an existing one.
//! Nothing is discarded unasked: an existing run id is `RUN_EXISTS` unless
//! the caller says `resume` or `replace`, and a replaced run is archived
//! first (see `runs.rs`).

use super::*;
use crate::runtime::args::IfExists;
use crate::runtime::run_errors::Making;

/// How many fresh run ids `plan` tries before giving up (each is random;
/// a second try is already a one-in-2^48 event).
const FRESH_ID_ATTEMPTS: usize = 8;

impl Engine {
    /// Starts a run and returns its first instruction. When `run_id` names
    /// an existing run, `if_exists` decides: `Error` (`RUN_EXISTS`),
    /// `Resume` (its current instruction; the params given are ignored,
    /// with a warning) or `Replace` (archived, then started over). A `bool`
    /// is the older `start_fresh`: `true` replaces, `false` resumes. With
    /// no `run_id`, the new id never names an existing run.
    pub fn plan(
        &self,
        workflow: &str,
        params_arg: Value,
        run_id: Option<&str>,
        if_exists: impl Into<IfExists>,
    ) -> EngineResult<Progress> {
        let if_exists = if_exists.into();
        let cw = match (self.workflow(workflow), run_id) {
            (Ok(cw), _) => cw,
            // A run carries its own version: resuming it needs no file.
            (Err(_), Some(run_id)) if if_exists == IfExists::Resume => {
                let (key, _lock, mut cached) = self.open_run(workflow, run_id)?;
                let out = self.advance(&key, &mut cached);
                self.put(&key, cached);
                return out;
            }
            (Err(e), _) => return Err(e),
        };
        let given = !params_arg.is_null();
        let checked = self.check_params(&cw, params_arg);
        // Refused params leave nothing behind (not even a lock file).
        let checked = if if_exists == IfExists::Resume { checked } else { Ok(checked?) };
        // `uses:` checked across the project's files before a new run
        // starts, and before a replaced run is archived.
        if if_exists != IfExists::Resume {
            self.project.check_uses(&cw)?;
        }
        let (key, _lock, exists) = match run_id {
            Some(run_id) => {
                let key = self.key(&cw, run_id)?;
                let lock = self.lock_run(&key)?;
                let exists = self.store.stamp(&key).map_err(store_error)?.is_some();
                (key, lock, exists)
            }
            None => self.fresh_key(&cw)?,
        };
        let mut warning = None;
        if exists {
            match if_exists {
                IfExists::Error => {
                    let entry = self.entry_locked(&key)?.unwrap_or_else(|| RunEntry::new(&key, None));
                    return Err(EngineError::run_exists(&key, &entry, Making::Plan));
                }
                IfExists::Resume => {
                    if let Some(mut cached) = self.load(&key, Some(&cw))? {
                        // Resuming keeps the run's own params; say so rather
                        // than silently ignoring different ones.
                        let stored = &cached.machine.state.params;
                        let ignored = given && !checked.as_ref().is_ok_and(|p| p == stored);
                        let mut out = self.advance(&key, &mut cached);
                        self.put(&key, cached);
                        if ignored && let Ok(p) = &mut out {
                            p.warnings.push(
                                "the params given were ignored: the run exists and is resumed with the params it started with; start it over (if_exists: replace; on the command line, plan --replace) to use new params".into(),
                            );
                        }
                        return out;
                    }
                }
                IfExists::Replace => warning = self.archive_before_discard(&key)?.err(),
            }
        }
        let params = checked?;
        if if_exists == IfExists::Resume {
            // A resume that starts the run: checked now (see below).
            self.project.check_uses(&cw)?;
        }
        self.forget(&key);
        let mut cached = self.start_run(&key, cw, params, None)?;
        let mut out = self.advance(&key, &mut cached);
        self.put(&key, cached);
        if let (Ok(p), Some(w)) = (&mut out, warning) {
            p.warnings.push(w);
        }
        out
    }

    /// Starts run `key` (its lock held by the caller): pinned to the
    /// workflow and schema versions it starts with, its first snapshot
    /// written. `parent` links a sub-workflow's run to its parent.
    pub(super) fn start_run(
        &self,
        key: &RunKey,
        cw: Arc<CompiledWorkflow>,
        params: Value,
        parent: Option<crate::runtime::record::ParentRun>,
    ) -> Result<Cached, EngineError> {
        let schemas = self.pin(&cw)?;
        let mut machine = Machine::start(cw, &key.run_id, params, &now());
        machine.state.schemas = schemas;
        machine.state.source = self.source_of(&machine.cw);
        machine.state.generation = Some(new_generation());
        machine.state.parent = parent;
        // A run that starts parked: its intent first (see `timers.rs`).
        self.intend_timer(key, super::timers::deadline_of(&machine), false)?;
        let snapshot = serde_json::to_value(&machine.state).unwrap_or(Value::Null);
        let stamp = self.store.write_snapshot(key, &snapshot).map_err(store_error)?;
        #[cfg(test)]
        super::timers::tests::maybe_crash();
        self.observe_finished(&machine, &machine.state.created_at);
        Ok(Cached::new(stamp, machine, 0))
    }

    /// A new run id that names no run (live or archived), with its lock.
    pub(super) fn fresh_key(&self, cw: &CompiledWorkflow) -> Result<(RunKey, RunLock, bool), EngineError> {
        let archived = self.store.archived(Some(&cw.wf.id)).map_err(store_error)?;
        for _ in 0..FRESH_ID_ATTEMPTS {
            let key = self.key(cw, &new_run_id())?;
            if archived.iter().any(|a| a.key == key) {
                continue;
            }
            let lock = self.lock_run(&key)?;
            if self.store.stamp(&key).map_err(store_error)?.is_none() {
                return Ok((key, lock, false));
            }
        }
        Err(EngineError::message(
            ErrorCode::StateIo,
            format!("no unused run id found in {FRESH_ID_ATTEMPTS} attempts"),
        ))
    }

    /// Drops a run from the in-memory cache (it is being replaced or removed).
    pub(super) fn forget(&self, key: &RunKey) {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(key.workflow.clone(), key.run_id.clone()));
    }
}
