//! The per-run lock: a process-wide table of held lock paths serialises
//! threads, and an advisory exclusive lock on `<stem>.lock` serialises
//! processes.

use std::collections::HashSet;
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

fn held() -> MutexGuard<'static, HashSet<PathBuf>> {
    // A panic while holding this mutex cannot leave the set inconsistent.
    TABLE.held.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when some thread of this process holds the lock at `path`.
pub(super) fn is_held(path: &Path) -> bool {
    held().contains(path)
}

/// Both halves of a held run lock. The file is closed (releasing the file
/// lock) before the path leaves the table.
pub(super) struct Guard {
    _file: File,
    _thread: ThreadGuard,
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
/// exist).
pub(super) fn acquire(path: &Path) -> Result<Guard, StoreError> {
    let thread = {
        let mut set = held();
        while set.contains(path) {
            set = TABLE.released.wait(set).unwrap_or_else(|e| e.into_inner());
        }
        set.insert(path.to_path_buf());
        ThreadGuard { path: path.to_path_buf() }
    };
    loop {
        let file = crate::fsx::open_nofollow(
            path,
            OpenOptions::new().read(true).write(true).create(true).truncate(false),
        )
        .map_err(|e| StoreError::io(path, e))?;
        file.lock().map_err(|e| StoreError::io(path, e))?;
        // `delete` unlinks the lock file while holding it; a process that
        // opened the old file before that must not trust the lock it got.
        if still_at(&file, path)? {
            return Ok(Guard { _file: file, _thread: thread });
        }
    }
}

#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> Result<bool, StoreError> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata().map_err(|e| StoreError::io(path, e))?;
    match std::fs::metadata(path) {
        Ok(now) => Ok(now.dev() == open.dev() && now.ino() == open.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

#[cfg(not(unix))]
fn still_at(_file: &File, _path: &Path) -> Result<bool, StoreError> {
    // Lock files are never unlinked off Unix (see `FileStore::delete`).
    Ok(true)
}
