//! Archived runs as tools see them: list, get and restore. A run is
//! archived, not discarded, by `plan --replace` and `state delete` (see
//! `crate::state::archive` for how each store keeps it).

use super::*;
use crate::runtime::reply::{FullState, Restored, RunList};
use crate::runtime::run_errors::Making;
use crate::state::ArchivedRun;

impl Engine {
    /// `state list --archived`: the archived runs (of one workflow, if given).
    pub fn state_list_archived(&self, workflow: Option<&str>) -> EngineResult<RunList> {
        let archived = self.store.archived(workflow).map_err(store_error)?;
        let runs = archived
            .iter()
            .map(|a| {
                let loaded = self.store.load_archived(&a.key, &a.archive_id);
                let mut entry = match loaded {
                    Ok(Some(l)) => {
                        // Replayed, as `state list` does: the snapshot alone
                        // lags behind the journal (a finished run read "running").
                        let mut entry = raw_entry(&a.key, &l);
                        let current = self.workflow(&a.key.workflow).ok();
                        match self.replay(&a.key, current.as_ref(), l) {
                            Ok(m) => {
                                entry.status = Some(m.state.status.into());
                                entry.version = Some(m.state.version);
                                entry.updated_at = Some(m.state.updated_at.clone());
                            }
                            Err(e) => {
                                entry.note =
                                    Some(format!("status as of the last snapshot: {}", e.code.as_str()))
                            }
                        }
                        entry
                    }
                    Ok(None) => RunEntry::new(&a.key, Some(EntryStatus::Unreadable)),
                    Err(e) => RunEntry {
                        error: Some(ErrorCode::StateCorrupt.as_str().to_owned()),
                        details: Some(json!({"message": e.to_string()})),
                        ..RunEntry::new(&a.key, Some(EntryStatus::Unreadable))
                    },
                };
                entry.archive_id = Some(a.archive_id.clone());
                entry.archived_at = Some(a.archived_at.clone());
                entry
            })
            .collect();
        let mut runs = runs;
        crate::runtime::reply_runs::group_children(&mut runs);
        Ok(RunList { runs })
    }

    /// `state get --archived`: an archived copy's full state (the latest
    /// copy of the run unless `archive_id` names one).
    pub fn state_get_archived(
        &self,
        workflow: &str,
        run_id: &str,
        archive_id: Option<&str>,
    ) -> EngineResult<FullState> {
        let (key, current) = self.run_key(workflow, run_id)?;
        let archived = self.find_archived(&key, archive_id)?;
        let loaded = self
            .store
            .load_archived(&key, &archived.archive_id)
            .map_err(store_error)?
            .ok_or_else(|| EngineError::unknown_archive(&key, archive_id, []))?;
        let mut state = self.replay(&key, current.as_ref().ok(), loaded)?.full_state();
        self.compare_with_file(workflow, &mut state);
        Ok(state)
    }

    /// `state restore`: an archived run becomes the live run again (and
    /// leaves the archive). A live run of that id is `RUN_EXISTS`.
    pub fn state_restore(
        &self,
        workflow: &str,
        run_id: &str,
        archive_id: Option<&str>,
    ) -> EngineResult<Restored> {
        let (key, _) = self.run_key(workflow, run_id)?;
        let _lock = self.lock_run(&key)?;
        if self.store.stamp(&key).map_err(store_error)?.is_some() {
            let entry = self.entry_locked(&key)?.unwrap_or_else(|| RunEntry::new(&key, None));
            return Err(EngineError::run_exists(&key, &entry, Making::Restore));
        }
        let archived = self.find_archived(&key, archive_id)?;
        self.forget(&key);
        if !self.store.restore(&key, &archived.archive_id).map_err(store_error)? {
            return Err(EngineError::unknown_archive(&key, archive_id, []));
        }
        Ok(Restored {
            restored: true,
            workflow: key.workflow.clone(),
            run_id: key.run_id.clone(),
            archive_id: archived.archive_id,
        })
    }

    /// The archived copy `archive_id` of `key`, or its latest; else
    /// `UNKNOWN_RUN` with a did-you-mean (among the run's copies, or the
    /// workflow's archived runs).
    fn find_archived(&self, key: &RunKey, archive_id: Option<&str>) -> Result<ArchivedRun, EngineError> {
        let all = self.store.archived(Some(&key.workflow)).map_err(store_error)?;
        let of_run: Vec<&ArchivedRun> = all.iter().filter(|a| a.key == *key).collect();
        let found = match archive_id {
            Some(id) => of_run.iter().find(|a| a.archive_id == id),
            None => of_run.last(),
        };
        match (found, archive_id) {
            (Some(a), _) => Ok((*a).clone()),
            (None, Some(_)) => Err(EngineError::unknown_archive(
                key,
                archive_id,
                of_run.iter().map(|a| a.archive_id.as_str()),
            )),
            (None, None) => {
                Err(EngineError::unknown_archive(key, None, all.iter().map(|a| a.key.run_id.as_str())))
            }
        }
    }
}

impl Engine {
    /// Archives a run before it is replaced or deleted (the caller holds
    /// its lock): its archived copy, or, for a run too damaged to read (and
    /// so to archive), no copy and a warning saying so.
    pub(super) fn archive_before_discard(
        &self,
        key: &RunKey,
    ) -> Result<Result<Option<ArchivedRun>, String>, EngineError> {
        match self.store.archive(key, &now()) {
            Ok(archived) => Ok(Ok(archived)),
            Err(e @ StoreError::Corrupt { .. }) => Ok(Err(format!(
                "the old run could not be archived ({}: {e}); it was discarded",
                ErrorCode::StateCorrupt
            ))),
            Err(e) => Err(store_error(e)),
        }
    }
}

/// A stored run's listing from its bytes alone: the snapshot's status, the
/// last event's version and time.
pub(super) fn raw_entry(key: &RunKey, l: &Loaded) -> RunEntry {
    let version = l.journal.last().unwrap_or(&l.snapshot).get("version").and_then(Value::as_u64);
    let text = |k: &str| l.snapshot.get(k).and_then(Value::as_str).map(str::to_owned);
    let at = l.journal.last().and_then(|e| e.get("at")).and_then(Value::as_str).map(str::to_owned);
    let parent = l.snapshot.get("parent").and_then(|p| serde_json::from_value(p.clone()).ok());
    RunEntry {
        version,
        updated_at: at.or_else(|| text("updated_at")),
        parent,
        ..RunEntry::new(key, text("status").map(|s| EntryStatus::from_name(&s)))
    }
}
