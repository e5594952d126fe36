//! [`FileStore`]: runs as files under `<project root>/.savant/state/`.

use std::collections::HashMap;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::journal::{self, EventJson, TailError};
use super::lock::IfMissing;
use super::{
    FileId, Loaded, LockPolicy, RunKey, RunLock, Stamp, StateStore, StoreError, check_workflow_id, lock,
};
use read::Attempt;

#[path = "file_read.rs"]
mod read;
#[path = "file_timers.rs"]
mod timers;

/// How many times `load` rereads a run that changed while it was read (only
/// possible without the lock) before giving up.
const LOAD_ATTEMPTS: u32 = 200;

/// How many journals a store keeps open between appends.
const OPEN_JOURNALS: usize = 64;

/// The file-backed [`StateStore`].
#[derive(Clone, Debug)]
pub struct FileStore {
    /// `<project root>/.savant/state`.
    root: PathBuf,
    /// The project root the state directory must stay inside (symlinks
    /// followed), or `None` for a directory named on purpose (`[state] dir`).
    confine_to: Option<PathBuf>,
    fsync: bool,
    /// How long and how many may wait for one run's lock.
    lock_policy: LockPolicy,
    /// Journals this store appended to last, kept open (see [`Appended`]):
    /// at most [`OPEN_JOURNALS`], so a fast hasher is safe.
    journals: Arc<Mutex<Journals>>,
    /// The timer markers as this process last listed them (`file_timers.rs`).
    timers: Arc<Mutex<timers::Listing>>,
}

/// A journal as this store's last `append` left it: the open file, the
/// run's stamp right after that append, and the journal's end. While the
/// run's stamp is still `after`, nobody wrote to the run since (every write
/// changes the stamp), so the next append writes through `file` without
/// opening the journal or reading its tail again. Another process, replica
/// or store that appended or snapshotted in between changes the stamp, and
/// the journal is opened and its tail read as usual.
#[derive(Debug)]
struct Appended {
    file: File,
    after: Stamp,
    last_version: u64,
    last_generation: Option<Value>,
    /// The sequence number of the journal's next line.
    next_seq: u64,
}

/// The open journals of a store, by path.
type Journals = HashMap<PathBuf, Appended, rustc_hash::FxBuildHasher>;

/// The files of one run.
struct Paths {
    snapshot: PathBuf,
    journal: PathBuf,
    lock: PathBuf,
    tmp: PathBuf,
}

impl FileStore {
    /// A store for the project at `project_root`. With `fsync` off, writes
    /// survive a crash of the process but not of the machine.
    pub fn new(project_root: impl AsRef<Path>, fsync: bool) -> FileStore {
        FileStore {
            root: project_root.as_ref().join(".savant").join("state"),
            confine_to: Some(project_root.as_ref().to_path_buf()),
            fsync,
            lock_policy: LockPolicy::default(),
            journals: Arc::default(),
            timers: Arc::default(),
        }
    }

    /// This store, waiting for a run's lock as `policy` says.
    pub fn with_lock_policy(mut self, policy: LockPolicy) -> FileStore {
        self.lock_policy = policy;
        self
    }

    /// A store in `dir`, a state directory named on purpose (`[state] dir`):
    /// not confined to a project root.
    pub fn at_dir(dir: impl Into<PathBuf>, fsync: bool) -> FileStore {
        FileStore {
            root: dir.into(),
            confine_to: None,
            fsync,
            lock_policy: LockPolicy::default(),
            journals: Arc::default(),
            timers: Arc::default(),
        }
    }

    /// Refuses a state directory that leads out of the project root: when
    /// `.savant`, `.savant/state` or its `archive/` or `objects/` is a
    /// symlink (or a dangling one) resolving outside, nothing is read,
    /// written or deleted through it. Called when the store is opened and
    /// before every archive or object access (and the state directory's
    /// part before every lock and directory creation), so a link planted
    /// later is refused too.
    pub(super) fn check_confined(&self) -> Result<(), StoreError> {
        self.confine(&[".savant", ".savant/state", ".savant/state/archive", ".savant/state/objects"])
    }

    /// [`FileStore::check_confined`] for what a lock, and the reads and
    /// writes made under it, reach: the state directory and its parent, not
    /// `archive/` or `objects/` (their own accesses check those).
    fn check_state_confined(&self) -> Result<(), StoreError> {
        self.confine(&[".savant", ".savant/state"])
    }

    fn confine(&self, dirs: &[&str]) -> Result<(), StoreError> {
        let Some(root) = &self.confine_to else { return Ok(()) };
        for &rel in dirs {
            // One lstat each on the way of every lock: a directory that is
            // no symlink keeps what is below it inside (its parent was
            // checked first); only a symlink is resolved and confined.
            match fs::symlink_metadata(root.join(rel)) {
                Ok(meta) if !meta.file_type().is_symlink() => continue,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io(root.join(rel), e)),
                Ok(_) => {}
            }
            match crate::fsx::confine(root, Path::new(rel)) {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) if e.is_outside() => {
                    return Err(StoreError::OutsideRoot { path: root.join(rel), message: e.reason() });
                }
                Err(e) => return Err(StoreError::Io { path: root.join(rel), message: e.reason() }),
            }
        }
        Ok(())
    }

    fn journals(&self) -> MutexGuard<'_, Journals> {
        // A panic while holding this mutex cannot leave the map inconsistent.
        self.journals.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state directory, `<project root>/.savant/state`.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// Whether writes are fsync'd.
    pub(super) fn fsync(&self) -> bool {
        self.fsync
    }

    /// Drops what this store remembers of a journal's end (it is about to
    /// be replaced).
    pub(super) fn forget_journal(&self, path: &Path) {
        self.journals().remove(path);
    }

    fn paths(&self, key: &RunKey) -> Result<Paths, StoreError> {
        key.validate()?;
        // `<root>/<workflow>__<run>.` once, then each extension on a copy:
        // this is on every call's path (three times per `next`).
        let mut base = self.root.join(&key.workflow).into_os_string();
        base.push("__");
        base.push(&key.run_id);
        base.push(".");
        let file = |ext: &str| {
            let mut name = std::ffi::OsString::with_capacity(base.len() + ext.len());
            name.push(&base);
            name.push(ext);
            PathBuf::from(name)
        };
        Ok(Paths {
            snapshot: file("json"),
            journal: file("journal"),
            lock: file("lock"),
            tmp: file("json.tmp"),
        })
    }

    /// Creates the state directory if needed, making the new directory
    /// entries durable.
    pub(super) fn ensure_dir(&self) -> Result<(), StoreError> {
        self.check_state_confined()?;
        if self.root.is_dir() {
            return Ok(());
        }
        fs::create_dir_all(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        if self.fsync {
            for dir in self.root.ancestors().take(3) {
                sync_dir(dir)?;
            }
        }
        Ok(())
    }

    /// [`StateStore::append`], from the run's stamp when the caller knows
    /// it (it holds the lock and read or wrote the run last), else read.
    fn append_at(
        &self,
        key: &RunKey,
        event: &EventJson,
        current: Option<&Stamp>,
    ) -> Result<Stamp, StoreError> {
        let p = self.paths(key)?;
        debug_assert!(lock::is_held(&p.lock), "StateStore::append on {key} without holding its lock");
        let version = event.version();
        let before = match current {
            Some(stamp) => *stamp,
            None => self.stamp_of(&p)?.ok_or_else(|| {
                StoreError::corrupt(&p.snapshot, "cannot append to a run that has no snapshot")
            })?,
        };
        let io = |e| StoreError::io(&p.journal, e);
        let kept = self.journals().remove(&p.journal).filter(|a| a.after == before);
        let (mut file, cut, seq) = match kept {
            // Unchanged since our own append, of the same incarnation: its
            // end is known and whole.
            Some(a) if a.last_generation.as_ref() == event.generation() => {
                if version <= a.last_version {
                    return Err(StoreError::corrupt(
                        &p.journal,
                        format!("refusing to append version {version} after version {}", a.last_version),
                    ));
                }
                (a.file, TailCut::Whole, a.next_seq)
            }
            _ => self.open_journal(&p, event, version)?,
        };
        let line = journal::encode_json(seq, event);
        let created = before.journal == FileId::default();
        file.write_all(&line).map_err(io)?;
        if let TailCut::Cut(previous) = cut {
            // The length may now equal the torn length; a fresh mtime keeps
            // the stamp distinct. Best effort: it needs file ownership.
            let _ = file.set_modified(next_mtime(previous));
        }
        if self.fsync {
            file.sync_data().map_err(io)?;
            if created {
                sync_dir(&self.root)?;
            }
        }
        // Only this append changed the run (we hold its lock): the snapshot
        // is the one just seen, the journal is the open file.
        let after = Stamp { snapshot: before.snapshot, journal: file_id(&file.metadata().map_err(io)?) };
        let appended = Appended {
            file,
            after,
            last_version: version,
            last_generation: event.generation().cloned(),
            next_seq: seq + 1,
        };
        let mut journals = self.journals();
        if journals.len() >= OPEN_JOURNALS {
            journals.clear();
        }
        journals.insert(p.journal.clone(), appended);
        Ok(after)
    }

    /// `event` serialised for `key`'s journal, or why it cannot be appended.
    fn event_json(&self, key: &RunKey, event: &Value) -> Result<EventJson, StoreError> {
        EventJson::from_value(event).map_err(|m| match self.paths(key) {
            Ok(p) => StoreError::corrupt(p.journal, m),
            Err(e) => e,
        })
    }

    fn stamp_of(&self, p: &Paths) -> Result<Option<Stamp>, StoreError> {
        let Some(snapshot) = metadata(&p.snapshot)? else { return Ok(None) };
        let journal = metadata(&p.journal)?.map_or_else(FileId::default, |m| file_id(&m));
        Ok(Some(Stamp { snapshot: file_id(&snapshot), journal }))
    }
}

impl StateStore for FileStore {
    fn lock(&self, key: &RunKey) -> Result<RunLock, StoreError> {
        let p = self.paths(key)?;
        self.check_state_confined()?;
        // The directory is made only when the lock file cannot be created.
        if let Some(guard) = lock::acquire(&p.lock, IfMissing::Create, &self.lock_policy, key)? {
            return Ok(RunLock::new(guard));
        }
        self.ensure_dir()?;
        match lock::acquire(&p.lock, IfMissing::Create, &self.lock_policy, key)? {
            Some(guard) => Ok(RunLock::new(guard)),
            None => Err(StoreError::Io { path: p.lock, message: "the state directory vanished".into() }),
        }
    }

    fn lock_existing(&self, key: &RunKey) -> Result<Option<RunLock>, StoreError> {
        let p = self.paths(key)?;
        self.check_state_confined()?;
        // A run's lock file exists while the run does (the snapshot's stamp
        // under the lock tells the rest): no need to look first. That stamp
        // goes with the lock, so the holder need not make the paths again.
        if let Some(guard) = lock::acquire(&p.lock, IfMissing::Absent, &self.lock_policy, key)? {
            let lock = RunLock::new(guard);
            return Ok(Some(match self.stamp_of(&p)? {
                Some(stamp) => lock.with_stamp(stamp),
                None => lock,
            }));
        }
        if self.stamp_of(&p)?.is_none() {
            return Ok(None);
        }
        self.lock(key).map(Some)
    }

    fn stamp(&self, key: &RunKey) -> Result<Option<Stamp>, StoreError> {
        self.stamp_of(&self.paths(key)?)
    }

    fn load(&self, key: &RunKey) -> Result<Option<Loaded>, StoreError> {
        let p = self.paths(key)?;
        for attempt in 0..LOAD_ATTEMPTS {
            let (snapshot_bytes, journal_bytes, stamp) = match self.read_once(&p)? {
                Attempt::Missing => return Ok(None),
                Attempt::Changed => {
                    // Only possible while a writer that is not us holds the
                    // lock; let it finish.
                    std::thread::sleep(Duration::from_millis(u64::from(attempt.min(10))));
                    continue;
                }
                Attempt::Read { snapshot, journal, stamp } => (snapshot, journal, stamp),
            };
            let snapshot: Value = serde_json::from_slice(&snapshot_bytes)
                .map_err(|e| StoreError::corrupt(&p.snapshot, format!("snapshot is not JSON: {e}")))?;
            let version = journal::version_of(&snapshot)
                .ok_or_else(|| StoreError::corrupt(&p.snapshot, "snapshot has no integer `version`"))?;
            let generation = journal::generation_of(&snapshot).cloned();
            let events = journal::parse(&journal_bytes).map_err(|m| StoreError::corrupt(&p.journal, m))?;
            // Events of another generation belong to another incarnation of
            // the run, and events not above the snapshot predate it: either
            // way a crash came between the snapshot's rename and the
            // journal's truncation.
            let journal = events
                .into_iter()
                .filter(|(v, e)| *v > version && journal::generation_of(e) == generation.as_ref())
                .map(|(_, e)| e)
                .collect();
            return Ok(Some(Loaded { snapshot, journal, stamp }));
        }
        Err(StoreError::Io { path: p.snapshot, message: "the run kept changing while being read".into() })
    }

    fn append(&self, key: &RunKey, event: &Value) -> Result<Stamp, StoreError> {
        self.append_at(key, &self.event_json(key, event)?, None)
    }

    fn append_after(&self, key: &RunKey, event: &Value, current: &Stamp) -> Result<Stamp, StoreError> {
        self.append_at(key, &self.event_json(key, event)?, Some(current))
    }

    fn takes_json(&self) -> bool {
        true
    }

    fn append_json_after(
        &self,
        key: &RunKey,
        event: &EventJson,
        current: &Stamp,
    ) -> Result<Stamp, StoreError> {
        self.append_at(key, event, Some(current))
    }

    fn write_snapshot(&self, key: &RunKey, snapshot: &Value) -> Result<Stamp, StoreError> {
        let p = self.paths(key)?;
        debug_assert!(lock::is_held(&p.lock), "StateStore::write_snapshot on {key} without holding its lock");
        let version = journal::version_of(snapshot).ok_or_else(|| {
            StoreError::corrupt(&p.snapshot, "refusing to write a snapshot without an integer `version`")
        })?;
        let bytes =
            serde_json::to_vec(snapshot).map_err(|e| StoreError::corrupt(&p.snapshot, e.to_string()))?;
        self.journals().remove(&p.journal);
        self.ensure_dir()?;
        let previous = metadata(&p.snapshot)?.and_then(|m| m.modified().ok());
        let generation = journal::generation_of(snapshot);
        let journal = self
            .write_tmp(&p.tmp, &bytes, next_mtime(previous))
            .and_then(|()| self.clear_newer_events(&p.journal, version, generation))
            .and_then(|journal| {
                #[cfg(test)]
                if super::tests::crash_before_rename() {
                    return Err(StoreError::Io { path: p.tmp.clone(), message: "simulated crash".into() });
                }
                fs::rename(&p.tmp, &p.snapshot).map_err(|e| StoreError::io(&p.tmp, e))?;
                Ok(journal)
            });
        let journal = match journal {
            Ok(journal) => journal,
            #[cfg(test)]
            Err(e) if super::tests::crash_before_rename() => return Err(e),
            Err(e) => {
                let _ = fs::remove_file(&p.tmp);
                return Err(e);
            }
        };
        if self.fsync {
            sync_dir(&self.root)?;
        }
        #[cfg(test)]
        if super::tests::crash_after_rename() {
            return Err(StoreError::Io { path: p.snapshot, message: "simulated crash".into() });
        }
        // The snapshot is committed. The events left in the journal are not
        // newer than it or belong to another generation, so load drops them
        // even if this truncation fails.
        if let Some(journal) = journal {
            let _ = journal.set_len(0);
        }
        self.stamp_of(&p)?.ok_or_else(|| StoreError::corrupt(&p.snapshot, "snapshot vanished after rename"))
    }

    fn list(&self, workflow: Option<&str>) -> Result<Vec<RunKey>, StoreError> {
        if let Some(workflow) = workflow {
            check_workflow_id(workflow)?;
        }
        self.check_confined()?;
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&self.root, e)),
        };
        let mut keys = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io(&self.root, e))?;
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
            let Some(key) = RunKey::from_stem(stem) else { continue };
            if workflow.is_none_or(|w| w == key.workflow) {
                keys.push(key);
            }
        }
        keys.sort();
        Ok(keys)
    }

    fn delete(&self, key: &RunKey) -> Result<bool, StoreError> {
        let p = self.paths(key)?;
        debug_assert!(lock::is_held(&p.lock), "StateStore::delete on {key} without holding its lock");
        self.journals().remove(&p.journal);
        // The snapshot goes first: without it the run no longer exists.
        let existed = remove(&p.snapshot)?;
        remove(&p.journal)?;
        remove(&p.tmp)?;
        if self.fsync && existed {
            sync_dir(&self.root)?;
        }
        let _ = self.drop_marker(key);
        // Off Unix a held lock file cannot be removed, so it stays.
        if cfg!(unix) {
            remove(&p.lock)?;
        }
        Ok(existed)
    }

    fn check_journal(&self, key: &RunKey, apply: bool) -> Result<Option<super::JournalCheck>, StoreError> {
        self.check_journal_file(key, apply)
    }
}

/// What opening the journal for an append did to its end.
enum TailCut {
    /// Nothing: the journal ends whole, of this incarnation.
    Whole,
    /// A torn tail, or another generation's events, were cut; the journal's
    /// modification time before the cut, when it could be read.
    Cut(Option<SystemTime>),
}

impl FileStore {
    /// Opens the journal for an append of `event` at `version`, applying the
    /// torn-tail rule to its end: a torn tail, or events of another
    /// generation, are cut (then the answer carries the journal's earlier
    /// modification time); a version that does not grow is refused. The
    /// answer's last part is the sequence number of the line to write.
    fn open_journal(
        &self,
        p: &Paths,
        event: &EventJson,
        version: u64,
    ) -> Result<(File, TailCut, u64), StoreError> {
        let io = |e| StoreError::io(&p.journal, e);
        let mut file =
            crate::fsx::open_nofollow(&p.journal, OpenOptions::new().read(true).append(true).create(true))
                .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        let tail = journal::tail(&mut file, meta.len()).map_err(|e| match e {
            TailError::Io(e) => io(e),
            TailError::Corrupt(m) => StoreError::corrupt(&p.journal, m),
        })?;
        // Events of another generation are debris of an earlier incarnation
        // of the run (a crash before the truncation of `write_snapshot`):
        // they are all cut.
        let stale = tail.last_version.is_some() && tail.last_generation.as_ref() != event.generation();
        if !stale
            && let Some(last) = tail.last_version
            && version <= last
        {
            return Err(StoreError::corrupt(
                &p.journal,
                format!("refusing to append version {version} after version {last}"),
            ));
        }
        let (keep, seq) = if stale { (0, 1) } else { (tail.valid_len, tail.next_seq) };
        if keep < meta.len() {
            file.set_len(keep).map_err(io)?;
            return Ok((file, TailCut::Cut(meta.modified().ok()), seq));
        }
        Ok((file, TailCut::Whole, seq))
    }

    /// Opens the journal before a snapshot at `version` replaces the current
    /// one. Events of another generation (a run started afresh over an old
    /// one, or debris of an interrupted delete) stay: they are the old run's
    /// until the rename commits the new one, and load ignores them after it.
    /// Events of the same generation newer than `version` (a caller that
    /// restarts a run without a new generation) are cut now, durably, since
    /// after the rename nothing would tell them from the new run's events.
    fn clear_newer_events(
        &self,
        path: &Path,
        version: u64,
        generation: Option<&Value>,
    ) -> Result<Option<File>, StoreError> {
        let io = |e| StoreError::io(path, e);
        let mut file = match crate::fsx::open_nofollow(path, OpenOptions::new().read(true).write(true)) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len();
        let newer = match journal::tail(&mut file, len) {
            Ok(tail) => {
                tail.last_version.is_some_and(|last| last > version)
                    && tail.last_generation.as_ref() == generation
            }
            Err(TailError::Corrupt(_)) => true,
            Err(TailError::Io(e)) => return Err(io(e)),
        };
        if newer {
            file.set_len(0).map_err(io)?;
            if self.fsync {
                file.sync_data().map_err(io)?;
            }
        }
        Ok(Some(file))
    }

    pub(super) fn write_tmp(&self, tmp: &Path, bytes: &[u8], mtime: SystemTime) -> Result<(), StoreError> {
        let io = |e| StoreError::io(tmp, e);
        // A symlink planted at the temp path is removed, never written through.
        if fs::symlink_metadata(tmp).is_ok_and(|m| !m.is_file()) {
            fs::remove_file(tmp).map_err(io)?;
        }
        let mut file =
            crate::fsx::open_nofollow(tmp, OpenOptions::new().write(true).create(true).truncate(true))
                .map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.set_modified(mtime).map_err(io)?;
        if self.fsync {
            file.sync_all().map_err(io)?;
        }
        Ok(())
    }
}

/// A modification time strictly after `previous` (so that snapshot stamps
/// never repeat), and normally the current time.
pub(super) fn next_mtime(previous: Option<SystemTime>) -> SystemTime {
    let now = SystemTime::now();
    match previous {
        Some(previous) => now.max(previous + Duration::from_nanos(1)),
        None => now,
    }
}

fn metadata(path: &Path) -> Result<Option<Metadata>, StoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// The names in directory `dir`; none when it does not exist.
pub(super) fn file_names(dir: &Path) -> Result<Vec<std::ffi::OsString>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    entries.map(|e| e.map(|e| e.file_name()).map_err(|e| StoreError::io(dir, e))).collect()
}

/// Removes a file; true if it was there.
pub(super) fn remove(path: &Path) -> Result<bool, StoreError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

fn file_id(meta: &Metadata) -> FileId {
    FileId::from_metadata(meta)
}

/// Makes a directory's entries (creations, renames, removals) durable.
#[cfg(unix)]
pub(super) fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StoreError::io(dir, e))
}

#[cfg(not(unix))]
pub(super) fn sync_dir(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}
