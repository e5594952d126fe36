//! Retention: `state prune` and `[state] keep` (applied by `serve`). Runs
//! and archived copies whose status is among those named (by default
//! `done`, `failed` and archived copies; a `running` run only when named),
//! older than `older_than` and beyond each workflow's `keep_last` newest,
//! are removed; then the objects no run or archived copy is pinned to,
//! and that were not stored in the last [`OBJECT_GRACE`], are collected.
//!
//! A live run is removed under its lock, after its status is read again;
//! a crash between two removals leaves some of them done, each whole.

use super::*;
use crate::runtime::reply::{Pruned, PrunedRun};
use crate::state::Keep;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, SystemTime};

/// Objects stored more recently than this are never collected: a run may
/// be being pinned to them (see `pins.rs`).
pub(super) const OBJECT_GRACE: Duration = Duration::from_secs(600);

/// One run or archived copy that may be removed.
struct Candidate {
    entry: PrunedRun,
    at: SystemTime,
}

impl Engine {
    /// `state prune`: removes what `keep` selects (nothing with `dry_run`)
    /// and says what.
    pub fn prune(&self, keep: &Keep, dry_run: bool) -> EngineResult<Pruned> {
        let statuses = prune_statuses(keep)?;
        let cutoff =
            parse_age(keep)?.map(|age| SystemTime::now().checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH));
        let mut candidates = Vec::new();
        for key in self.store.list(None).map_err(store_error)? {
            let Some(entry) = self.list_entry(&key).ok().flatten() else { continue };
            let status = entry.status.as_ref().map_or("", EntryStatus::as_str);
            if statuses.contains(status) {
                let at = parse_time(entry.updated_at.as_deref());
                candidates.push(Candidate { entry: PrunedRun::of(entry), at });
            }
        }
        if statuses.contains("archived") {
            for a in self.store.archived(None).map_err(store_error)? {
                let mut entry = RunEntry::new(&a.key, Some(EntryStatus::Archived));
                entry.archive_id = Some(a.archive_id.clone());
                entry.updated_at = Some(a.archived_at.clone());
                let at = parse_time(Some(&a.archived_at));
                candidates.push(Candidate { entry: PrunedRun::of(entry), at });
            }
        }
        candidates.retain(|c| cutoff.is_none_or(|cut| c.at < cut));
        let mut candidates = beyond_keep_last(candidates, keep.keep_last.unwrap_or(0));
        candidates.sort_by(|a, b| {
            let key = |c: &Candidate| {
                (c.entry.workflow.clone(), c.entry.run_id.clone(), c.entry.archive_id.clone())
            };
            key(a).cmp(&key(b))
        });
        let mut runs = Vec::new();
        for c in candidates {
            if dry_run || self.remove(&c.entry, &statuses)? {
                runs.push(c.entry);
            }
        }
        let (objects, note) = self.collect_objects(dry_run, &runs)?;
        Ok(Pruned { dry_run, runs, objects, note })
    }

    /// `[state] keep`, if set: what `serve` calls at most once a minute.
    pub fn prune_kept(&self) -> Option<EngineResult<Pruned>> {
        let keep = self.config.state.keep.clone()?;
        Some(self.prune(&keep, false))
    }

    /// Removes one candidate; false when it changed meanwhile (a live run
    /// whose status is no longer one to prune, a copy already gone).
    fn remove(&self, entry: &PrunedRun, statuses: &HashSet<&str>) -> Result<bool, EngineError> {
        let key = RunKey::new(&entry.workflow, &entry.run_id).map_err(store_error)?;
        let _lock = self.lock_run(&key)?;
        if let Some(archive_id) = &entry.archive_id {
            return self.store.delete_archived(&key, archive_id).map_err(store_error);
        }
        let now = self.entry_locked(&key)?;
        if !now.and_then(|e| e.status).is_some_and(|s| statuses.contains(s.as_str())) {
            return Ok(false);
        }
        self.forget(&key);
        self.store.delete(&key).map_err(store_error)
    }

    /// Collects the objects nothing is pinned to any more (all of them
    /// that are old enough). When a remaining run cannot be read, what it
    /// is pinned to is unknown: nothing is collected, and the note says so.
    fn collect_objects(
        &self,
        dry_run: bool,
        removed: &[PrunedRun],
    ) -> Result<(Vec<String>, Option<String>), EngineError> {
        let gone: HashSet<(&str, &str, Option<&str>)> = removed
            .iter()
            .map(|r| (r.workflow.as_str(), r.run_id.as_str(), r.archive_id.as_deref()))
            .collect();
        let mut pinned = HashSet::new();
        let mut add = |snapshot: &Value| {
            if let Some(h) = snapshot.get("workflow_hash").and_then(Value::as_str) {
                pinned.insert(h.to_owned());
            }
            for h in snapshot.get("schemas").and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
                pinned.extend(h.as_str().map(str::to_owned));
            }
        };
        let unreadable =
            |what: String| Ok((Vec::new(), Some(format!("no object was collected: {what} cannot be read"))));
        for key in self.store.list(None).map_err(store_error)? {
            if dry_run && gone.contains(&(key.workflow.as_str(), key.run_id.as_str(), None)) {
                continue;
            }
            match self.store.load(&key) {
                Ok(Some(l)) => add(&l.snapshot),
                Ok(None) => {}
                Err(_) => return unreadable(format!("run {key}")),
            }
        }
        for a in self.store.archived(None).map_err(store_error)? {
            if dry_run
                && gone.contains(&(
                    a.key.workflow.as_str(),
                    a.key.run_id.as_str(),
                    Some(a.archive_id.as_str()),
                ))
            {
                continue;
            }
            match self.store.load_archived(&a.key, &a.archive_id) {
                Ok(Some(l)) => add(&l.snapshot),
                Ok(None) => {}
                Err(_) => return unreadable(format!("archived run {} ({})", a.key, a.archive_id)),
            }
        }
        let young = SystemTime::now() - OBJECT_GRACE;
        let mut collected = Vec::new();
        for object in self.store.objects().map_err(store_error)? {
            if pinned.contains(&object.hash) || object.stored_at > young {
                continue;
            }
            if !dry_run {
                self.pins().forget_stored(&object.hash);
                if !self.store.delete_object(&object.hash).map_err(store_error)? {
                    continue;
                }
            }
            collected.push(object.hash);
        }
        Ok((collected, None))
    }
}

/// The statuses to prune, checked (`INVALID_INPUT` with a did-you-mean).
fn prune_statuses(keep: &Keep) -> Result<HashSet<&'static str>, EngineError> {
    keep.statuses().map_err(keep_error)
}

/// `older_than` (humantime), or `INVALID_INPUT`.
fn parse_age(keep: &Keep) -> Result<Option<Duration>, EngineError> {
    keep.age().map_err(keep_error)
}

fn keep_error(e: crate::state::KeepError) -> EngineError {
    EngineError::message_help(ErrorCode::InvalidInput, e.message, e.help)
}

/// An RFC 3339 time; a missing or unreadable one counts as now (never old).
fn parse_time(text: Option<&str>) -> SystemTime {
    text.and_then(|t| humantime::parse_rfc3339_weak(t).ok()).unwrap_or_else(SystemTime::now)
}

/// The candidates beyond the `keep` newest of each workflow (live runs and
/// archived copies counted apart).
fn beyond_keep_last(candidates: Vec<Candidate>, keep: usize) -> Vec<Candidate> {
    let mut groups: BTreeMap<(String, bool), Vec<Candidate>> = BTreeMap::new();
    for c in candidates {
        groups.entry((c.entry.workflow.clone(), c.entry.archive_id.is_some())).or_default().push(c);
    }
    let mut out = Vec::new();
    for (_, mut group) in groups {
        group.sort_by_key(|c| std::cmp::Reverse(c.at));
        out.extend(group.into_iter().skip(keep));
    }
    out
}
