//! The per-run lock: a process-wide table of held lock paths serialises
//! threads, and an advisory exclusive lock on `<stem>.lock` serialises
//! processes.
//!
//! On Unix a released lock file stays open (unlocked) in a small table, so
//! that taking the same run's lock again is a `flock` and a `stat`, not an
//! open, two `fstat`s, a `stat` and a close. Whoever takes it checks that the
//! path still names that file (`delete` unlinks it), as for a fresh open.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard};

use super::StoreError;

/// Lock paths held by some thread of this process.
struct Table {
    held: Mutex<HashSet<PathBuf>>,
    released: Condvar,
}

static TABLE: LazyLock<Table> =
    LazyLock::new(|| Table { held: Mutex::new(HashSet::new()), released: Condvar::new() });

/// How many released lock files stay open (beyond it, they are closed).
const OPEN_CAP: usize = 64;

/// Released lock files, still open and unlocked, with their identity.
static OPEN: LazyLock<Mutex<HashMap<PathBuf, Opened>>> = LazyLock::new(Mutex::default);

struct Opened {
    file: File,
    /// Device and inode of `file`.
    id: (u64, u64),
}

fn held() -> MutexGuard<'static, HashSet<PathBuf>> {
    // A panic while holding this mutex cannot leave the set inconsistent.
    TABLE.held.lock().unwrap_or_else(|e| e.into_inner())
}

fn open_files() -> MutexGuard<'static, HashMap<PathBuf, Opened>> {
    OPEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when some thread of this process holds the lock at `path`.
pub(super) fn is_held(path: &Path) -> bool {
    held().contains(path)
}

/// Both halves of a held run lock. The file lock is released (and the file
/// kept open for the next holder, or closed) before the path leaves the table.
pub(super) struct Guard {
    opened: Option<Opened>,
    thread: ThreadGuard,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Some(opened) = self.opened.take() else { return };
        // Kept open only if it is surely unlocked; else closing unlocks it.
        if cfg!(unix) && opened.file.unlock().is_ok() {
            let mut open = open_files();
            if open.len() < OPEN_CAP {
                open.insert(self.thread.path.clone(), opened);
            }
        }
    }
}

struct ThreadGuard {
    path: PathBuf,
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        held().remove(&self.path);
        TABLE.released.notify_all();
    }
}

/// Blocks until this thread holds the lock at `path` (whose directory must
/// exist). A missing lock file is created when `create` is true; otherwise
/// (and when the directory is missing) the answer is `None`.
pub(super) fn acquire(path: &Path, create: bool) -> Result<Option<Guard>, StoreError> {
    let thread = {
        let mut set = held();
        while set.contains(path) {
            set = TABLE.released.wait(set).unwrap_or_else(|e| e.into_inner());
        }
        set.insert(path.to_path_buf());
        ThreadGuard { path: path.to_path_buf() }
    };
    loop {
        let kept = open_files().remove(path);
        let opened = match kept {
            Some(opened) => opened,
            None => {
                let file = match crate::fsx::open_nofollow(
                    path,
                    OpenOptions::new().read(true).write(true).create(create).truncate(false),
                ) {
                    Ok(file) => file,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(StoreError::io(path, e)),
                };
                let id = identity(&file.metadata().map_err(|e| StoreError::io(path, e))?);
                Opened { file, id }
            }
        };
        opened.file.lock().map_err(|e| StoreError::io(path, e))?;
        // `delete` unlinks the lock file while holding it; a process that
        // opened the old file before that must not trust the lock it got.
        if still_at(opened.id, path)? {
            return Ok(Some(Guard { opened: Some(opened), thread }));
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
