//! Run state as tools see it: get, list, delete and reset.

use super::*;
use crate::runtime::error_details::{CheckpointNotFound, ResetNotAllowed};
use crate::runtime::reply::{Deleted, EntryStatus, FullState, ResetNote, RunEntry, RunList};

/// A step's status and, for a foreach step once expanded, its items'
/// ([`Engine::step_statuses`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepStatuses {
    /// The step id.
    pub id: String,
    /// The step's status.
    pub status: crate::runtime::run::StepStatus,
    /// The foreach items' statuses, in order (`None`: not a foreach step,
    /// or not expanded yet).
    pub items: Option<Vec<crate::runtime::run::StepStatus>>,
}

impl Engine {
    // ---- the other tools --------------------------------------------------

    /// A run's full state, each result shown on its step and capture.
    pub fn state_get(&self, workflow: &str, run_id: &str) -> EngineResult<FullState> {
        let mut state = self.with_run(workflow, run_id, |_, _, c| Ok(c.machine.full_state()))?;
        self.compare_with_file(workflow, &mut state);
        Ok(state)
    }

    /// Each step's status and its foreach items' (as [`Engine::state_get`]
    /// shows them, a due timer applied first), without copying inputs,
    /// results or history: what `exec --dry-run` counts at the end.
    pub fn step_statuses(&self, workflow: &str, run_id: &str) -> EngineResult<Vec<StepStatuses>> {
        self.with_run(workflow, run_id, |_, _, c| {
            let steps = c.machine.state.steps.iter().map(|s| StepStatuses {
                id: s.id.clone(),
                status: s.status,
                items: s.items.as_ref().map(|items| items.iter().map(|i| i.status).collect()),
            });
            Ok(steps.collect())
        })
    }

    /// Whether the run `run_id` of `workflow` is stored: a look at its files,
    /// without loading it or listing the other runs.
    pub fn run_exists(&self, workflow: &str, run_id: &str) -> bool {
        self.run_key(workflow, run_id).is_ok_and(|(key, _)| matches!(self.store.stamp(&key), Ok(Some(_))))
    }

    /// Fills in how the workflow file on disk compares with the version
    /// `state` is pinned to.
    pub(super) fn compare_with_file(&self, workflow: &str, state: &mut FullState) {
        let path = state.source.clone();
        let current =
            self.workflow(workflow).or_else(|e| path.as_deref().map_or(Err(e), |p| self.workflow(p)));
        state.file_hash = current.ok().map(|cw| cw.hash.clone());
        state.file_differs = state.file_hash.as_deref() != Some(state.workflow_hash.as_str());
    }

    /// think_state_list: the stored runs (of one workflow, if given).
    pub fn state_list(&self, workflow: Option<&str>) -> EngineResult<RunList> {
        self.state_list_where(workflow, false)
    }

    /// [`Engine::state_list`], only the runs with a step waiting when `waiting`.
    pub fn state_list_where(&self, workflow: Option<&str>, waiting: bool) -> EngineResult<RunList> {
        let keys = self.store.list(workflow).map_err(store_error)?;
        let runs: Vec<RunEntry> = keys
            .iter()
            .map(|k| match self.list_entry(k) {
                Ok(Some(entry)) => entry,
                Ok(None) => RunEntry::new(k, Some(EntryStatus::Unreadable)),
                Err(e) => RunEntry {
                    error: Some(e.code.as_str().to_owned()),
                    details: Some(e.details.to_json()),
                    ..RunEntry::new(k, Some(EntryStatus::Unreadable))
                },
            })
            .collect();
        let mut runs = runs;
        if waiting {
            runs.retain(|r| !r.waiting.is_empty());
        }
        crate::runtime::reply_runs::group_children(&mut runs);
        Ok(RunList { runs })
    }

    /// The absolute path of a workflow file that is not `<root>/workflows/<id>.y(a)ml`.
    pub(super) fn source_of(&self, cw: &CompiledWorkflow) -> Option<String> {
        if self.project.is_by_id(cw) {
            return None;
        }
        crate::fsx::canonical(&cw.path).ok().map(|p| p.display().to_string())
    }

    /// One run as `state_list` shows it: replayed through its workflow (the
    /// snapshot alone lags behind the journal), or, when the workflow no
    /// longer compiles or has changed, from the stored files as they are.
    pub(super) fn list_entry(&self, key: &RunKey) -> Result<Option<RunEntry>, EngineError> {
        let _lock = self.lock_run(key)?;
        self.entry_locked(key)
    }

    /// [`Engine::list_entry`] for a caller that holds the run's lock.
    pub(super) fn entry_locked(&self, key: &RunKey) -> Result<Option<RunEntry>, EngineError> {
        let current = self.workflow(&key.workflow).or_else(|e| {
            // A run started from a path: its snapshot says where the file is.
            let loaded = self.store.load(key).ok().flatten();
            let source = loaded.as_ref().and_then(|l| l.snapshot.get("source")).and_then(Value::as_str);
            match source {
                Some(path) => self.workflow(path),
                None => Err(e),
            }
        });
        let replayed = self.load(key, current.as_ref().ok());
        if let Ok(Some(mut cached)) = replayed {
            // A due timer is applied first, as by any call on the run.
            let settled = self.settle_waits(key, &mut cached);
            let st = &cached.machine.state;
            let entry = RunEntry {
                version: Some(st.version),
                updated_at: Some(st.updated_at.clone()),
                parent: st.parent.clone(),
                waiting: self.wait_views(&cached.machine),
                note: settled.err().map(|e| format!("a due timer could not be applied: {}", e.describe())),
                ..RunEntry::new(key, Some(st.status.into()))
            };
            self.put(key, cached);
            return Ok(Some(entry));
        }
        let Some(l) = self.store.load(key).map_err(store_error)? else { return Ok(None) };
        let mut entry = super::runs::raw_entry(key, &l);
        if let Err(e) = replayed {
            entry.note = Some(format!("status as of the last snapshot: {}", e.code.as_str()));
        }
        Ok(Some(entry))
    }

    /// The stored stamp of a run (it changes with every write by any
    /// process); `None` for a run that does not exist or cannot be read.
    pub fn run_stamp(&self, workflow: &str, run_id: &str) -> Option<crate::state::Stamp> {
        let key = RunKey::new(workflow, run_id).ok()?;
        self.store.stamp(&key).ok().flatten()
    }

    /// Whether this engine can serve calls (a readiness probe): the project
    /// loads and the store answers one read (within `[state] db_timeout`
    /// on PostgreSQL). The error says why not, for the server's log only.
    pub fn ready(&self) -> Result<(), String> {
        self.workflows_list(None).map_err(|e| format!("the project does not load: {e}"))?;
        let probe = RunKey::new("savant-readyz", "probe").map_err(|e| e.to_string())?;
        self.store.stamp(&probe).map_err(|e| format!("the state store does not answer: {e}"))?;
        Ok(())
    }

    /// `state delete`: archives a run (readable with `state get --archived`,
    /// back with `state restore`, until `state prune`), or with `purge`
    /// removes it at once.
    pub fn state_delete(&self, workflow: &str, run_id: &str, purge: bool) -> EngineResult<Deleted> {
        let key = RunKey::new(workflow, run_id).map_err(store_error)?;
        let _lock = self.lock_existing(&key)?;
        self.forget(&key);
        // Archived first: a crash before the delete leaves the run whole.
        let archived = if purge { None } else { self.archive_before_discard(&key)?.ok().flatten() };
        let deleted = self.store.delete(&key).map_err(store_error)?;
        if !deleted {
            return Err(self.unknown_run(&key));
        }
        Ok(Deleted {
            deleted: true,
            workflow: workflow.to_owned(),
            run_id: run_id.to_owned(),
            archive_id: archived.map(|a| a.archive_id),
        })
    }

    /// Resets a run to a checkpoint (the state right after that step
    /// completed) or to the start. Discarding completed steps needs `force`.
    pub fn reset(
        &self,
        workflow: &str,
        run_id: &str,
        checkpoint: Option<&str>,
        force: bool,
    ) -> EngineResult<Progress> {
        self.with_run(workflow, run_id, |engine, key, cached| {
            let state = &cached.machine.state;
            let keep = match checkpoint {
                None => 0,
                Some(step) => state
                    .checkpoints
                    .iter()
                    .rev()
                    .find(|c| c.step_id == step)
                    .map(|c| c.history_len)
                    .ok_or_else(|| {
                        EngineError::with(
                            ErrorCode::CheckpointNotFound,
                            CheckpointNotFound {
                                checkpoint: step.to_owned(),
                                message: format!("no checkpoint for step `{step}`"),
                                available: state.checkpoints.iter().map(|c| c.step_id.clone()).collect(),
                            },
                        )
                    })?,
            };
            let discarded = state.history[keep..]
                .iter()
                .filter(|e| matches!(e.kind, EventKind::Result { .. }))
                .count();
            if discarded > 0 && !force {
                return Err(EngineError::with(
                    ErrorCode::ResetNotAllowed,
                    ResetNotAllowed {
                        message: format!("the reset would discard {discarded} accepted result(s); pass force: true (on the command line, --force)"),
                        discarded,
                    },
                ));
            }
            let old_version = state.version;
            let history: Vec<Event> = state.history[..keep].to_vec();
            let mut machine = Machine::start(cached.machine.cw.clone(), &state.run_id, state.params.clone(), &state.created_at);
            for e in history {
                machine.apply(e);
            }
            machine.state.version = old_version + 1;
            machine.state.generation = state.generation.clone();
            machine.state.updated_at = now();
            machine.state.source = state.source.clone();
            // A sub-workflow's run stays linked to its parent.
            machine.state.parent = state.parent.clone();
            // Children of `uses:` work the reset took back start afresh.
            engine.archive_discarded_children(&cached.machine, &machine)?;
            cached.machine = machine;
            engine.snapshot(key, cached)?;
            // The reset is done either way; a run whose next instruction
            // cannot be rendered answers with that error (and the reset).
            let reset = ResetNote { checkpoint: checkpoint.map(str::to_owned), discarded };
            match engine.advance(key, cached) {
                Ok(mut out) => {
                    out.reset = Some(reset);
                    Ok(out)
                }
                Err(e) => Err(e.with_reset(reset)),
            }
        })
    }
}
