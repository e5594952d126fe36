//! Archived runs: what `plan --replace` and `state delete` put aside
//! instead of discarding, readable (`state list --archived`, `state get
//! --archived`) and restorable (`state restore`) until retention removes it.
//!
//! An archived run is the run's snapshot and journal as they were stored,
//! under an archive id derived from its state (`v<version>-<generation>`):
//! versions grow within a generation, so the id names one state, and
//! archiving the same state twice (a retry after a crash) writes the same
//! entry.
//!
//! The file store keeps each in `<state>/archive/<workflow>__<run_id>.<archive id>.json`
//! (`{"archived_at", "snapshot", "journal"}`), written to a temporary file,
//! fsync'd and renamed into place. A restore writes the run's journal, then
//! renames its snapshot into place (the moment the run exists again, as for
//! every run), then removes the archive entry: a crash before the rename
//! leaves a journal without a snapshot, which is debris that is never
//! loaded; a crash after it leaves the run live and the entry still
//! archived, which `state prune` collects.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::PathBuf;

use serde_json::{Value, json};

use super::file::{file_names, next_mtime, remove, sync_dir};
use super::journal::{generation_of, version_of};
use super::{FileStore, Loaded, RunKey, Stamp, StoreError, check_workflow_id};

/// One archived run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchivedRun {
    /// The run it was.
    pub key: RunKey,
    /// Which of the run's archived states: `v<version>-<generation>`.
    pub archive_id: String,
    /// When it was archived (RFC 3339).
    pub archived_at: String,
}

/// The archive id of a run as loaded: `v<last version>-<generation>`.
pub fn archive_id(loaded: &Loaded) -> String {
    let version = loaded.journal.last().and_then(version_of).or_else(|| version_of(&loaded.snapshot));
    let generation = match generation_of(&loaded.snapshot) {
        None => "0".to_owned(),
        Some(Value::String(g)) if valid_archive_id(g) && g.len() <= 32 => g.clone(),
        Some(other) => super::sha256_hex(other.to_string().as_bytes())[7..23].to_owned(),
    };
    format!("v{}-{generation}", version.unwrap_or(0))
}

/// True for an archive id this store could have made: 1 to 64 characters
/// from `A-Z a-z 0-9 -`.
pub fn valid_archive_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

pub(super) fn check_archive_id(id: &str) -> Result<(), StoreError> {
    if valid_archive_id(id) {
        Ok(())
    } else {
        Err(StoreError::InvalidId { what: "archive id", value: id.to_owned() })
    }
}

/// An archive entry's body.
pub(super) fn entry_json(loaded: &Loaded, archived_at: &str) -> Value {
    json!({"archived_at": archived_at, "snapshot": loaded.snapshot, "journal": loaded.journal})
}

/// Reads an archive entry's body back.
pub(super) fn parse_entry(value: Value) -> Option<(String, Value, Vec<Value>)> {
    let Value::Object(mut m) = value else { return None };
    let at = m.remove("archived_at")?.as_str()?.to_owned();
    let snapshot = m.remove("snapshot")?;
    let Value::Array(journal) = m.remove("journal")? else { return None };
    version_of(&snapshot)?;
    Some((at, snapshot, journal))
}
/// The archive half of a [`super::StateStore`]: archived runs.
pub trait ArchiveStore {
    /// [`super::StateStore::archive`] of a run already loaded (under its
    /// lock); `None` when `loaded` is.
    fn archive_loaded(
        &self,
        key: &RunKey,
        loaded: Option<Loaded>,
        archived_at: &str,
    ) -> Result<Option<ArchivedRun>, StoreError>;

    /// The archived runs (of one workflow, if given), sorted by workflow,
    /// run id, then archive time.
    fn archived(&self, workflow: Option<&str>) -> Result<Vec<ArchivedRun>, StoreError>;

    /// One archived run as it was stored, or `None`.
    fn load_archived(&self, key: &RunKey, archive_id: &str) -> Result<Option<Loaded>, StoreError>;

    /// Makes an archived run the live run again and drops it from the
    /// archive, atomically: the live run appears whole or not at all. The
    /// caller holds the run's lock and has checked there is no live run.
    /// `false` when there is no such archived run.
    fn restore(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError>;

    /// Removes one archived run; true if it existed.
    fn delete_archived(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError>;
}

impl FileStore {
    fn archive_dir(&self) -> PathBuf {
        self.dir().join("archive")
    }

    fn archive_path(&self, key: &RunKey, archive_id: &str) -> Result<PathBuf, StoreError> {
        key.validate()?;
        self.check_confined()?;
        check_archive_id(archive_id)?;
        Ok(self.archive_dir().join(format!("{}__{}.{archive_id}.json", key.workflow, key.run_id)))
    }

    /// Writes `bytes` at `path` through a temporary file of its own, fsync'd
    /// and renamed into place (the directory made and synced as needed).
    pub(super) fn write_durably(&self, path: &std::path::Path, bytes: &[u8]) -> Result<(), StoreError> {
        self.check_confined()?;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = path.parent().unwrap_or(self.dir());
        if !dir.is_dir() {
            self.ensure_dir()?;
            fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
            if self.fsync() {
                sync_dir(self.dir())?;
            }
        }
        let tmp = path.with_extension(format!(
            "tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = self.write_tmp(&tmp, bytes, next_mtime(None)).and_then(|()| {
            fs::rename(&tmp, path).map_err(|e| StoreError::io(&tmp, e))?;
            if self.fsync() { sync_dir(dir) } else { Ok(()) }
        });
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }

    fn read_entry(&self, path: &std::path::Path) -> Result<Option<(String, Value, Vec<Value>)>, StoreError> {
        let mut file = match crate::fsx::open_nofollow(path, OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| StoreError::io(path, e))?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::corrupt(path, format!("archived run is not JSON: {e}")))?;
        parse_entry(value)
            .map(Some)
            .ok_or_else(|| StoreError::corrupt(path, "archived run has no archived_at, snapshot or journal"))
    }
}

impl ArchiveStore for FileStore {
    fn archive_loaded(
        &self,
        key: &RunKey,
        loaded: Option<Loaded>,
        archived_at: &str,
    ) -> Result<Option<ArchivedRun>, StoreError> {
        let Some(loaded) = loaded else { return Ok(None) };
        let archive_id = archive_id(&loaded);
        let path = self.archive_path(key, &archive_id)?;
        let bytes = serde_json::to_vec(&entry_json(&loaded, archived_at))
            .map_err(|e| StoreError::corrupt(&path, e.to_string()))?;
        self.write_durably(&path, &bytes)?;
        Ok(Some(ArchivedRun { key: key.clone(), archive_id, archived_at: archived_at.to_owned() }))
    }

    fn archived(&self, workflow: Option<&str>) -> Result<Vec<ArchivedRun>, StoreError> {
        if let Some(workflow) = workflow {
            check_workflow_id(workflow)?;
        }
        self.check_confined()?;
        let mut out = Vec::new();
        for entry in file_names(&self.archive_dir())? {
            let Some(stem) = entry.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
            let Some((run, archive_id)) = stem.rsplit_once('.') else { continue };
            let Some(key) = RunKey::from_stem(run) else { continue };
            if !valid_archive_id(archive_id) || workflow.is_some_and(|w| w != key.workflow) {
                continue;
            }
            let archived_at = match self.read_entry(&self.archive_dir().join(&entry))? {
                Some((at, _, _)) => at,
                None => continue,
            };
            out.push(ArchivedRun { key, archive_id: archive_id.to_owned(), archived_at });
        }
        out.sort_by(|a, b| {
            (&a.key, &a.archived_at, &a.archive_id).cmp(&(&b.key, &b.archived_at, &b.archive_id))
        });
        Ok(out)
    }

    fn load_archived(&self, key: &RunKey, archive_id: &str) -> Result<Option<Loaded>, StoreError> {
        let path = self.archive_path(key, archive_id)?;
        Ok(self.read_entry(&path)?.map(|(_, snapshot, journal)| Loaded {
            snapshot,
            journal,
            stamp: Stamp::counter(0),
        }))
    }

    fn restore(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError> {
        let path = self.archive_path(key, archive_id)?;
        let Some((_, snapshot, journal)) = self.read_entry(&path)? else { return Ok(false) };
        let stem = format!("{}__{}", key.workflow, key.run_id);
        let live = self.dir().join(format!("{stem}.json"));
        if fs::symlink_metadata(&live).is_ok() {
            return Err(StoreError::corrupt(&live, "refusing to restore over a live run"));
        }
        let lines = super::journal::encode_all(&journal).map_err(|m| StoreError::corrupt(&path, m))?;
        let journal_path = self.dir().join(format!("{stem}.journal"));
        self.forget_journal(&journal_path);
        // The journal first: without the snapshot it is debris, never loaded.
        self.write_durably(&journal_path, &lines)?;
        let bytes = serde_json::to_vec(&snapshot).map_err(|e| StoreError::corrupt(&path, e.to_string()))?;
        self.write_durably(&live, &bytes)?;
        remove(&path)?;
        if self.fsync() {
            sync_dir(&self.archive_dir())?;
        }
        Ok(true)
    }

    fn delete_archived(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError> {
        let path = self.archive_path(key, archive_id)?;
        let existed = remove(&path)?;
        if existed && self.fsync() {
            sync_dir(&self.archive_dir())?;
        }
        Ok(existed)
    }
}
