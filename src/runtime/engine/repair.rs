//! `state repair`: what is damaged in a stored run, and a damaged journal
//! cut back to its last good event when asked.

use super::*;
use crate::runtime::reply_runs::{CutLine, JournalReport, Repaired};

impl Engine {
    /// think_state_repair: checks the run's journal line by line and whether
    /// the run loads; with `apply`, cuts the journal back to its last good
    /// event first (the whole journal kept in a backup file beside it).
    /// Nothing else is ever changed: a snapshot that does not load stays as
    /// it is, reported.
    pub fn state_repair(&self, workflow: &str, run_id: &str, apply: bool) -> EngineResult<Repaired> {
        let key = RunKey::new(workflow, run_id).map_err(store_error)?;
        let _lock = self.lock_existing(&key)?;
        self.forget(&key);
        let check = self.store.check_journal(&key, apply).map_err(store_error)?;
        let current = self.workflow(&key.workflow).ok();
        let problem = match self.load(&key, current.as_ref()) {
            Ok(Some(cached)) => {
                self.put(&key, cached);
                None
            }
            Ok(None) => return Err(self.unknown_run(&key)),
            Err(e) => Some(e.to_json()),
        };
        let journal = check.map(|c| JournalReport {
            file: c.path.display().to_string(),
            bytes: c.bytes,
            good_lines: c.good_lines,
            damaged_line: c.damage.as_ref().map(|d| d.0),
            damage: c.damage.map(|d| d.1),
            cut_bytes: c.cut_bytes,
            cut_lines: c.cut_lines.into_iter().map(|(line, text)| CutLine { line, text }).collect(),
            backup: c.backup.map(|b| b.display().to_string()),
        });
        Ok(Repaired {
            workflow: workflow.to_owned(),
            run_id: run_id.to_owned(),
            applied: journal.as_ref().is_some_and(|j| j.backup.is_some()),
            journal,
            healthy: problem.is_none(),
            problem,
        })
    }
}
