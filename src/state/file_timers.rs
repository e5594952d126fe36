//! The file store's timer index (`state/timers.rs` says what it is for).
//!
//! `<state dir>/timers/` holds one empty marker file per run with a
//! deadline, named `<workflow>__<run_id>`, whose modification time is the
//! run's earliest deadline. Setting an entry writes `.<name>.tmp`, sets its
//! time and renames it over the marker, so a reader sees the old deadline
//! or the new one; clearing removes the marker. Markers are not fsync'd:
//! the index is derived from the runs, which `serve` reads at start to set
//! every waiting run's marker again.
//!
//! Each process keeps the listing in memory with the directory's
//! modification time, and lists again only when that time changed (any
//! marker set or cleared by any process renames or removes an entry), or
//! is so recent that a change in the same clock tick could hide behind it.
//! So a poll while nothing changes is one `stat` of the directory, and the
//! next deadline comes from the listing ordered by deadline.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::{FileStore, RunKey, Stamp, StateStore, StoreError};
use crate::state::timers::{DueTimers, TimerIndex};

/// A directory modified less than this before it was listed is listed
/// again (file times are coarser than the changes they stamp).
const RACY: Duration = Duration::from_secs(2);

/// One process's view of `timers/`.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// The directory's modification time when it was last listed.
    dir_mtime: Option<SystemTime>,
    /// When it was last listed.
    listed_at: Option<SystemTime>,
    /// Each run's deadline, and the runs by deadline.
    queue: BTreeSet<(SystemTime, RunKey)>,
}

impl Listing {
    fn stale(&self, mtime: SystemTime) -> bool {
        self.dir_mtime != Some(mtime) || self.listed_at.is_none_or(|at| at < mtime + RACY)
    }
}

impl FileStore {
    fn timers_dir(&self) -> Result<PathBuf, StoreError> {
        self.confine(&[".savant", ".savant/state", ".savant/state/timers"])?;
        Ok(self.dir().join("timers"))
    }

    fn marker(&self, key: &RunKey) -> Result<PathBuf, StoreError> {
        key.validate()?;
        Ok(self.timers_dir()?.join(format!("{}__{}", key.workflow, key.run_id)))
    }

    /// Removes run `key`'s marker, if any (the run was deleted).
    pub(super) fn drop_marker(&self, key: &RunKey) -> Result<(), StoreError> {
        let path = self.marker(key)?;
        match fs::remove_file(&path) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(StoreError::io(path, e)),
            _ => Ok(()),
        }
    }

    /// Sets run `key`'s marker at `path` to `deadline`: a temporary file
    /// with its time, renamed over the marker.
    fn write_marker(
        &self,
        key: &RunKey,
        path: &std::path::Path,
        deadline: SystemTime,
    ) -> Result<(), StoreError> {
        let dir = self.timers_dir()?;
        fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let tmp = dir.join(format!(".{}__{}.tmp", key.workflow, key.run_id));
        let written = fs::File::create(&tmp)
            .and_then(|f| f.set_modified(deadline))
            .and_then(|()| fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(StoreError::io(path, e));
        }
        Ok(())
    }

    /// Lists `timers/` again when it changed since this process last did.
    fn refresh(&self) -> Result<std::sync::MutexGuard<'_, Listing>, StoreError> {
        let dir = self.timers_dir()?;
        let mut listing = self.timers.lock().unwrap_or_else(|p| p.into_inner());
        let mtime = match fs::metadata(&dir) {
            Ok(meta) => meta.modified().map_err(|e| StoreError::io(&dir, e))?,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                *listing = Listing::default();
                return Ok(listing);
            }
            Err(e) => return Err(StoreError::io(&dir, e)),
        };
        if !listing.stale(mtime) {
            return Ok(listing);
        }
        let listed_at = SystemTime::now();
        let mut queue = BTreeSet::new();
        for entry in fs::read_dir(&dir).map_err(|e| StoreError::io(&dir, e))? {
            let entry = entry.map_err(|e| StoreError::io(&dir, e))?;
            let Some(key) = entry.file_name().to_str().and_then(RunKey::from_stem) else { continue };
            // A marker removed since the directory was read is no entry.
            let Ok(at) = entry.metadata().and_then(|m| m.modified()) else { continue };
            queue.insert((at, key));
        }
        *listing = Listing { dir_mtime: Some(mtime), listed_at: Some(listed_at), queue };
        Ok(listing)
    }
}

impl TimerIndex for FileStore {
    fn keeps_timers(&self) -> bool {
        true
    }

    fn set_timer(
        &self,
        key: &RunKey,
        stamp: &Stamp,
        deadline: Option<SystemTime>,
    ) -> Result<bool, StoreError> {
        if self.stamp(key)? != Some(*stamp) {
            return Ok(false);
        }
        let path = self.marker(key)?;
        let Some(deadline) = deadline else {
            self.drop_marker(key)?;
            return Ok(true);
        };
        if fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|at| at == deadline) {
            return Ok(true);
        }
        self.write_marker(key, &path, deadline)?;
        Ok(true)
    }

    fn intend_timer(&self, key: &RunKey, deadline: SystemTime) -> Result<bool, StoreError> {
        let path = self.marker(key)?;
        if !fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|at| at <= deadline) {
            self.write_marker(key, &path, deadline)?;
        }
        Ok(true)
    }

    fn clear_timer(&self, key: &RunKey) -> Result<(), StoreError> {
        self.drop_marker(key)
    }

    fn due_timers(&self, limit: usize, _lease: Duration) -> Result<DueTimers, StoreError> {
        let listing = self.refresh()?;
        // The runs' clock (a test clock moves it), as their deadlines were.
        let now = crate::clock::now();
        let runs = listing
            .queue
            .iter()
            .take_while(|(at, _)| *at <= now)
            .take(limit)
            .map(|(_, k)| k.clone())
            .collect();
        Ok(DueTimers { now: Some(now), runs })
    }

    fn timer_stats(&self) -> Result<(usize, Option<SystemTime>), StoreError> {
        let listing = self.refresh()?;
        Ok((listing.queue.len(), listing.queue.first().map(|(at, _)| *at)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_trusted_only_while_its_directory_is_unchanged_and_settled() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let settled = Listing {
            dir_mtime: Some(t0),
            listed_at: Some(t0 + Duration::from_secs(10)),
            queue: BTreeSet::new(),
        };
        assert!(!settled.stale(t0), "an idle poll lists nothing");
        assert!(settled.stale(t0 + Duration::from_millis(1)), "a change is seen");
        // Listed in the same moment as the change: a second change in that
        // clock tick would not move the time, so it is listed again.
        let racy = Listing { listed_at: Some(t0 + Duration::from_millis(500)), ..settled };
        assert!(racy.stale(t0));
        assert!(Listing::default().stale(t0));
    }
}
