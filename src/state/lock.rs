//! The per-run lock: a process-wide table of held lock paths serialises
//! threads (with bounded waiting, see `turns`), and an advisory exclusive
//! lock on `<stem>.lock`, polled until the same deadline, serialises
//! processes.
//!
//! On Unix a released lock file stays open (unlocked) in a small table, so
//! that taking the same run's lock again is a `flock` and a `stat`, not an
//! open, two `fstat`s, a `stat` and a close. Whoever takes it checks that the
//! path still names that file (`delete` unlinks it), as for a fresh open.

use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Instant;

use super::StoreError;
use super::turns::{Busy, LockPolicy, Turn, Turns, back_off};

/// Lock paths held by some thread of this process, and their waiters.
static TABLE: LazyLock<Arc<Turns<PathBuf>>> = LazyLock::new(Arc::default);

/// How many released lock files stay open (beyond it, they are closed).
const OPEN_CAP: usize = 64;

/// Released lock files, still open and unlocked, with their identity (at
/// most [`OPEN_CAP`]: a fast hasher is safe on so small a table).
static OPEN: LazyLock<Mutex<OpenFiles>> = LazyLock::new(Mutex::default);

type OpenFiles = HashMap<PathBuf, Opened, rustc_hash::FxBuildHasher>;

struct Opened {
    file: File,
    /// Device and inode of `file`.
    id: (u64, u64),
}

fn open_files() -> MutexGuard<'static, OpenFiles> {
    OPEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when some thread of this process holds the lock at `path`.
pub(super) fn is_held(path: &Path) -> bool {
    TABLE.is_held(&path.to_path_buf())
}

/// Both halves of a held run lock. The file lock is released (and the file
/// kept open for the next holder, or closed) before the path leaves the table.
pub(super) struct Guard {
    opened: Option<Opened>,
    path: PathBuf,
    _turn: Turn<PathBuf>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Some(opened) = self.opened.take() else { return };
        // Kept open only if it is surely unlocked; else closing unlocks it.
        if cfg!(unix) && opened.file.unlock().is_ok() {
            let mut open = open_files();
            if open.len() < OPEN_CAP {
                open.insert(self.path.clone(), opened);
            }
        }
    }
}

/// What [`acquire`] does when the lock file is not there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IfMissing {
    /// Create it (a run that may be new).
    Create,
    /// Answer `None` (a run that must exist already).
    Absent,
}

/// Waits until this thread holds the lock at `path` (whose directory must
/// exist), within `policy`: first its turn among this process's threads,
/// then the file lock against other processes, polled until the deadline.
/// A missing lock file is created with [`IfMissing::Create`]; otherwise (and
/// when the directory is missing) the answer is `None`. `run` names the run
/// in a [`StoreError::Busy`].
pub(super) fn acquire(
    path: &Path,
    if_missing: IfMissing,
    policy: &LockPolicy,
    run: &dyn std::fmt::Display,
) -> Result<Option<Guard>, StoreError> {
    let deadline = policy.deadline();
    let busy = |why: Busy| StoreError::Busy { run: run.to_string(), message: why.describe() };
    let turn = TABLE.take(&path.to_path_buf(), policy, deadline).map_err(busy)?;
    let started = Instant::now();
    loop {
        let kept = open_files().remove(path);
        let opened = match kept {
            Some(opened) => opened,
            None => {
                let file = match crate::fsx::open_nofollow(
                    path,
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .create(if_missing == IfMissing::Create)
                        .truncate(false),
                ) {
                    Ok(file) => file,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(StoreError::io(path, e)),
                };
                let id = identity(&file.metadata().map_err(|e| StoreError::io(path, e))?);
                Opened { file, id }
            }
        };
        let mut attempt = 0;
        loop {
            match opened.file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if !back_off(&mut attempt, deadline) {
                        let waited = started.elapsed().max(policy.timeout);
                        return Err(busy(Busy::TimedOut { waited }));
                    }
                }
                Err(TryLockError::Error(e)) => return Err(StoreError::io(path, e)),
            }
        }
        // `delete` unlinks the lock file while holding it; a process that
        // opened the old file before that must not trust the lock it got.
        if still_at(opened.id, path)? {
            return Ok(Some(Guard { opened: Some(opened), path: path.to_path_buf(), _turn: turn }));
        }
    }
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(unix)]
fn still_at(id: (u64, u64), path: &Path) -> Result<bool, StoreError> {
    match std::fs::metadata(path) {
        Ok(now) => Ok(identity(&now) == id),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

#[cfg(not(unix))]
fn still_at(_id: (u64, u64), _path: &Path) -> Result<bool, StoreError> {
    // Lock files are never unlinked off Unix (see `FileStore::delete`).
    Ok(true)
}
