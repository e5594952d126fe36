//! Durable run state: a snapshot of the materialized run plus a journal of
//! events recorded after it, behind the [`StateStore`] trait.
//!
//! The store treats both as opaque JSON. It knows two things about them: each
//! carries an unsigned integer `version` at the top level, and may carry a
//! `generation` (any JSON value) naming the incarnation of the run. The
//! snapshot is the full state at its version; journal events have strictly
//! increasing versions and the engine replays the ones newer than the snapshot
//! and of its generation (a missing `generation` on both counts as equal, so
//! files written before generations existed load as before).
//!
//! [`FileStore`] keeps one run in three files under `<root>/.savant/state/`:
//!
//! * `<workflow>__<run_id>.json` — the snapshot, compact JSON, replaced
//!   atomically (write `….json.tmp`, fsync, rename, fsync the directory).
//! * `<workflow>__<run_id>.journal` — NDJSON, one event per line (with its
//!   sequence number and a CRC32C: `journal.rs` says the format and what a
//!   damaged line does), each line written with one `write` and fsync'd
//!   before `append` returns. Writing a
//!   snapshot truncates it after the rename, so a crash at any point leaves
//!   either the old snapshot with its whole journal or the new snapshot.
//!   Events whose version is not above the snapshot's, or whose generation is
//!   not the snapshot's (left by a crash between the rename and the
//!   truncation), are dropped on load, and the next `append` cuts away the
//!   latter; so is a torn final line. (A snapshot with a lower version and
//!   the *same* generation as the journal's events, which nothing would tell
//!   apart after the rename, has them cut before it.)
//! * `<workflow>__<run_id>.lock` — the advisory lock file of [`StateStore::lock`].
//!
//! A run exists when its snapshot exists: a journal without a snapshot is
//! debris of an interrupted delete and is never loaded.
//!
//! [`PgStore`] (feature `postgres`) keeps the same two parts in PostgreSQL,
//! for several replicas on one database; [`open`] picks the store from the
//! state URL (`SAVANT_STATE_URL` or `[state] url`).
//!
//! Beside the runs: `archive.rs` (`ArchiveStore`: a run's snapshot and
//! journal put aside under `v<version>-<generation>`, listed, loaded,
//! restored atomically) and `objects.rs` (`ObjectStore`: bytes under their
//! sha256, written once, checked on read), each with its crash argument in
//! its docs; `journal.rs` the line format and the torn-tail rule, and
//! [`EventJson`], an event the engine serialised straight into the text the
//! file store writes ([`StateStore::takes_json`]); `file_read.rs` the file
//! store's optimistic read of a run;
//! `repair.rs` `state repair`'s store half; `timers.rs` the timer index
//! (`TimerIndex`: runs by their earliest deadline, which `serve` polls);
//! `usage.rs` a store's connection pool as `/metrics` shows it;
//! `turns.rs` the in-process queue
//! every store takes a run's lock through first (at most `[state]
//! max_lock_waiters` waiters, none past `[state] lock_timeout`:
//! `StoreError::Busy`), before the cross-process half; `lock.rs` the file
//! lock; `memory.rs` `MemStore`; `retention.rs` the `[state] keep` policy.
//! The engine compacts a journal into a snapshot when it reaches half the
//! history, so a long run costs linear total time; a fresh start gets a new
//! `generation`. A store keeps a run's journal open after its own append,
//! with the run's stamp: the next append trusts the journal's end it
//! remembers only while the stamp is unchanged. The state directory is
//! confined to the project root (`FileStore::check_confined`, at open and
//! before every lock) unless `[state] dir` names an absolute directory.

mod archive;
#[cfg(test)]
mod archive_tests;
mod file;
mod journal;
#[cfg(test)]
mod journal_tests;
mod lock;
mod memory;
mod objects;
#[cfg(feature = "postgres")]
pub mod pg;
mod repair;
mod retention;
#[cfg(test)]
mod tests;
mod timers;
mod turns;
mod usage;

use std::fmt;
use std::path::PathBuf;

pub use archive::{ArchiveStore, ArchivedRun, archive_id};
pub use file::FileStore;
pub use journal::EventJson;
pub use memory::MemStore;
pub use objects::{ObjectStore, StoredObject, sha256_hex, valid_object_hash};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
pub use repair::JournalCheck;
pub use retention::{DEFAULT_PRUNE_STATUSES, Keep, KeepError, PRUNE_STATUSES};
pub use timers::{DueTimers, TimerIndex};
pub use turns::{Busy, DEFAULT_LOCK_TIMEOUT, DEFAULT_MAX_WAITERS, LockPolicy};
pub use usage::{PoolUsage, StoreUsage};

/// The environment variable that overrides the `state.fsync` setting (read by the binary).
pub const FSYNC_ENV: &str = "SAVANT_STATE_FSYNC";

/// The environment variable that overrides the `state.url` setting (read by the binary).
pub const URL_ENV: &str = "SAVANT_STATE_URL";

/// Identifies one run: the workflow id and the run id, both validated.
///
/// Both ids must match `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`; a run id may
/// also not contain `__`, the separator in file names, so that no two keys
/// share a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunKey {
    pub workflow: String,
    pub run_id: String,
}

impl RunKey {
    /// Builds a key, refusing ids that could escape the state directory or
    /// collide with another key.
    pub fn new(workflow: impl Into<String>, run_id: impl Into<String>) -> Result<RunKey, StoreError> {
        let key = RunKey { workflow: workflow.into(), run_id: run_id.into() };
        key.validate()?;
        Ok(key)
    }

    /// Checks both ids again (the fields are public, so a key may have been
    /// built without [`RunKey::new`]). Every store method calls this.
    pub fn validate(&self) -> Result<(), StoreError> {
        check_workflow_id(&self.workflow)?;
        if !is_valid_id(&self.run_id) || self.run_id.contains("__") {
            return Err(StoreError::InvalidId { what: "run id", value: self.run_id.clone() });
        }
        Ok(())
    }

    /// Parses a file name stem back into a key; the separator is the last
    /// `__`, since run ids never contain one.
    fn from_stem(stem: &str) -> Option<RunKey> {
        let at = stem.rfind("__")?;
        RunKey::new(&stem[..at], &stem[at + 2..]).ok()
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.workflow, self.run_id)
    }
}

/// True when `id` matches `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`.
pub fn is_valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn check_workflow_id(id: &str) -> Result<(), StoreError> {
    if is_valid_id(id) {
        Ok(())
    } else {
        Err(StoreError::InvalidId { what: "workflow id", value: id.to_string() })
    }
}

/// A run as stored: the snapshot and the journal events newer than it, in
/// order, with the [`Stamp`] of exactly these bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub snapshot: serde_json::Value,
    pub journal: Vec<serde_json::Value>,
    pub stamp: Stamp,
}

/// A cheap identity of a run's stored state, read from file metadata only.
///
/// Any change to the state changes the stamp, so an engine holding a loaded
/// state with stamp `s` may skip reloading while `stamp()` still returns `s`.
/// (The snapshot's modification time is set explicitly and strictly grows
/// per run, so a reused inode with the same length still gives a new stamp.)
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Stamp {
    snapshot: FileId,
    journal: FileId,
}

impl Stamp {
    /// The stamp of a store that numbers its writes: `n` is the value of a
    /// counter that grows with every write to any run (PostgreSQL's
    /// `savant_stamp` sequence). It never equals a file store's stamp of an
    /// existing run, whose snapshot identity is never all zero.
    fn counter(n: u64) -> Stamp {
        Stamp::counter_with_nonce(n, 0)
    }

    /// [`Stamp::counter`] with a random `nonce` drawn for the write: two
    /// writes with the same counter (a sequence a restore rolled back) still
    /// differ by their nonce.
    fn counter_with_nonce(n: u64, nonce: u64) -> Stamp {
        Stamp { snapshot: FileId::default(), journal: FileId { len: n, ino: nonce, ..FileId::default() } }
    }

    /// The counter and nonce of a [`Stamp::counter_with_nonce`] stamp.
    #[cfg(feature = "postgres")]
    fn counter_value(&self) -> (u64, u64) {
        (self.journal.len, self.journal.ino)
    }
}

/// Identity and size of one file; all zero for a missing file.
type FileId = crate::fsx::FileIdentity;

/// Holds a run's exclusive lock; dropping it releases the lock.
///
/// Other backends wrap their own guard with [`RunLock::new`].
#[must_use = "the run is unlocked as soon as the RunLock is dropped"]
pub struct RunLock {
    _guard: Box<dyn Send>,
    stamp: Option<Stamp>,
}

impl RunLock {
    /// Wraps a backend's guard; the lock lasts as long as the guard lives.
    pub fn new(guard: impl Send + 'static) -> RunLock {
        RunLock { _guard: Box::new(guard), stamp: None }
    }

    /// This lock, knowing the run's stamp as it was read under the lock,
    /// in the same round trip that took it (PostgreSQL).
    pub fn with_stamp(mut self, stamp: Stamp) -> RunLock {
        self.stamp = Some(stamp);
        self
    }

    /// The run's stamp read under this lock as it was taken, when the
    /// store read it then (saving the holder a [`StateStore::stamp`]);
    /// stale once the holder writes.
    pub fn stamp(&self) -> Option<Stamp> {
        self.stamp
    }
}

impl fmt::Debug for RunLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunLock")
    }
}

/// Why a store operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// A workflow id or run id does not match the id pattern.
    InvalidId { what: &'static str, value: String },
    /// The file system refused an operation.
    Io { path: PathBuf, message: String },
    /// Stored bytes are not a valid state, or a write would make them invalid
    /// (an event or snapshot without an integer `version`, a version that
    /// does not grow, an event for a run that has no snapshot).
    Corrupt { path: PathBuf, message: String },
    /// The run's lock could not be had in time ([`LockPolicy`]): another
    /// call holds it, or too many wait for it. Retryable.
    Busy { run: String, message: String },
    /// The state database did not answer in time, or the connection to it
    /// broke. Retryable: the call may or may not have taken effect.
    Unavailable { place: String, message: String },
    /// The state directory (`.savant`, `.savant/state` or one below it)
    /// resolves outside the project root through a symlink: nothing is
    /// read, written or deleted there.
    OutsideRoot { path: PathBuf, message: String },
}

impl StoreError {
    fn io(path: impl Into<PathBuf>, error: std::io::Error) -> StoreError {
        StoreError::Io { path: path.into(), message: error.to_string() }
    }

    fn corrupt(path: impl Into<PathBuf>, message: impl Into<String>) -> StoreError {
        StoreError::Corrupt { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::InvalidId { what, value } => {
                write!(
                    f,
                    "invalid {what} {value:?}: expected 1 to 128 characters from A-Z a-z 0-9 _ . -, \
                     starting with a letter or digit"
                )?;
                if *what == "run id" {
                    f.write_str(", and no `__`")?;
                }
                Ok(())
            }
            StoreError::Io { path, message } => write!(f, "state I/O error on {}: {message}", path.display()),
            StoreError::Corrupt { path, message } => {
                write!(f, "corrupt run state in {}: {message}", path.display())
            }
            StoreError::Busy { run, message } => write!(f, "run {run} is busy: {message}; retry later"),
            StoreError::Unavailable { place, message } => {
                write!(f, "the state database {place} is unavailable: {message}; retry later")
            }
            StoreError::OutsideRoot { path, message } => write!(
                f,
                "refusing the state directory {}: {message} (set `[state] dir` to an absolute directory \
                 to keep run state elsewhere on purpose)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StoreError {}

/// Where runs live. Mutating calls (`append`, `write_snapshot`, `delete`)
/// must be made while holding the run's [`RunLock`]; reads may be made
/// without it and still see a consistent state.
pub trait StateStore: ArchiveStore + ObjectStore + TimerIndex + StoreUsage + Send + Sync {
    /// Blocks until this caller holds the run's exclusive lock, against other
    /// threads and other processes. Not reentrant: locking a run twice from
    /// one thread deadlocks.
    fn lock(&self, key: &RunKey) -> Result<RunLock, StoreError>;

    /// [`StateStore::lock`] for a run that should exist: `None`, leaving
    /// nothing behind (no lock file), when it does not. A store may hand out
    /// the lock of a run that was just deleted; the caller's
    /// [`StateStore::stamp`] or [`StateStore::load`] under the lock tells.
    fn lock_existing(&self, key: &RunKey) -> Result<Option<RunLock>, StoreError> {
        if self.stamp(key)?.is_none() {
            return Ok(None);
        }
        self.lock(key).map(Some)
    }

    /// The identity of the stored state, or `None` if the run does not exist.
    fn stamp(&self, key: &RunKey) -> Result<Option<Stamp>, StoreError>;

    /// Reads the run, or `None` if it does not exist.
    fn load(&self, key: &RunKey) -> Result<Option<Loaded>, StoreError>;

    /// Appends one event (an object with an integer `version` above the
    /// last event's, and the snapshot's `generation`) to an existing run;
    /// durable before returning.
    fn append(&self, key: &RunKey, event: &serde_json::Value) -> Result<Stamp, StoreError>;

    /// [`StateStore::append`] by a holder of the lock that knows the run's
    /// `current` stamp (it read the run under this lock, or this is what its
    /// last write returned), so a store may skip reading it again. A wrong
    /// `current` is a caller's bug: the file store trusts it to reuse its
    /// open journal. The default reads it anyway.
    fn append_after(
        &self,
        key: &RunKey,
        event: &serde_json::Value,
        current: &Stamp,
    ) -> Result<Stamp, StoreError> {
        let _ = current;
        self.append(key, event)
    }

    /// Whether [`StateStore::append_json_after`] takes the event's JSON text
    /// as it is (the file store writes it into the journal line), so that a
    /// caller serialises its typed event straight into an [`EventJson`]
    /// rather than through a `serde_json::Value`. Off by default: the
    /// default `append_json_after` parses the text back.
    fn takes_json(&self) -> bool {
        false
    }

    /// [`StateStore::append_after`] of an event already serialised.
    fn append_json_after(
        &self,
        key: &RunKey,
        event: &EventJson,
        current: &Stamp,
    ) -> Result<Stamp, StoreError> {
        let value = serde_json::from_slice(event.json())
            .map_err(|e| StoreError::Corrupt { path: key.to_string().into(), message: e.to_string() })?;
        self.append_after(key, &value, current)
    }

    /// Whether [`StateStore::append_unlocked`] can succeed. A store says so
    /// when its lock costs more than the check that replaces it: on
    /// PostgreSQL, taking and releasing the lock are a round trip each.
    fn appends_unlocked(&self) -> bool {
        false
    }

    /// [`StateStore::append`] without the run's lock, by a caller whose view
    /// of the run is the state stamped `expected`: the event is appended
    /// only if no one holds the run's lock and its stamp is still
    /// `expected`, checked and written at once (on PostgreSQL one
    /// statement). `None`, nothing written, when either does not hold or the
    /// run is gone; the caller then takes the lock and reads the run again.
    /// So a lock holder never sees a write it did not make, and two callers
    /// with the same view never both append. The default: always `None`.
    fn append_unlocked(
        &self,
        key: &RunKey,
        event: &serde_json::Value,
        expected: &Stamp,
    ) -> Result<Option<Stamp>, StoreError> {
        let _ = (key, event, expected);
        Ok(None)
    }

    /// Atomically replaces the run's whole state with `snapshot` (creating
    /// the run if needed) and empties the journal. A snapshot may carry a
    /// lower version than the run had (a fresh start); it should then carry
    /// a new `generation`, so that a crash at any point leaves the old run
    /// whole or the new one in place, never a mix.
    fn write_snapshot(&self, key: &RunKey, snapshot: &serde_json::Value) -> Result<Stamp, StoreError>;

    /// All runs, or those of one workflow, sorted by workflow then run id.
    fn list(&self, workflow: Option<&str>) -> Result<Vec<RunKey>, StoreError>;

    /// Removes the run; true if it existed. The lock stops excluding other
    /// processes once its file is gone, so drop the `RunLock` right after.
    fn delete(&self, key: &RunKey) -> Result<bool, StoreError>;

    /// Copies the run as it is now (snapshot and journal) into the archive,
    /// under [`archive_id`] of its state, stamped `archived_at`; `None` when
    /// there is no run. The live run is untouched: the caller then replaces
    /// or deletes it, so that a crash in between leaves the old run whole
    /// (and at worst an extra copy). Archiving the same state twice writes
    /// the same entry. Made under the run's lock.
    fn archive(&self, key: &RunKey, archived_at: &str) -> Result<Option<ArchivedRun>, StoreError> {
        let loaded = self.load(key)?;
        self.archive_loaded(key, loaded, archived_at)
    }

    /// Checks the run's journal line by line (`state repair`) and, with
    /// `apply`, cuts it back to its last good line after copying it whole to
    /// a backup file. `None` from a store whose journal is not a file of
    /// lines (PostgreSQL keeps each event in a row, the memory store in
    /// memory). Made under the run's lock.
    fn check_journal(&self, key: &RunKey, apply: bool) -> Result<Option<JournalCheck>, StoreError> {
        key.validate()?;
        let _ = apply;
        Ok(None)
    }
}

/// Why a store could not be opened: a stable code, a message and a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenError {
    /// `STATE_URL_INVALID`, `STATE_UNAVAILABLE`, `STATE_SCHEMA_NEWER`,
    /// `STATE_SCHEMA_OLDER` or `STATE_OUTSIDE_ROOT`.
    pub code: &'static str,
    pub message: String,
    pub hint: String,
}

impl OpenError {
    pub fn new(code: &'static str, message: impl Into<String>, hint: impl Into<String>) -> OpenError {
        OpenError { code, message: message.into(), hint: hint.into() }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} (hint: {})", self.code, self.message, self.hint)
    }
}

impl std::error::Error for OpenError {}

/// How a store is opened (`[state]` of savant-think.toml).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// fsync (file store) or wait for the WAL flush (PostgreSQL) on each write.
    pub fsync: bool,
    /// Waiting for a run's lock.
    pub lock: LockPolicy,
    /// PostgreSQL: the longest one database call may take, connecting included.
    pub db_timeout: std::time::Duration,
    /// PostgreSQL: connections for reads and writes (as many more may hold run locks).
    pub pool_size: usize,
}

/// The default `[state] db_timeout`.
pub const DEFAULT_DB_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// The default `[state] pool_size`.
pub const DEFAULT_POOL_SIZE: usize = 16;

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            fsync: true,
            lock: LockPolicy::default(),
            db_timeout: DEFAULT_DB_TIMEOUT,
            pool_size: DEFAULT_POOL_SIZE,
        }
    }
}

/// The store for the project at `project_root`: the file store when `url` is
/// `None` or empty, PostgreSQL for `postgres://…` and `postgresql://…`
/// (which connects and migrates the schema now, so a wrong URL fails here).
/// The file store lives in `dir` when given (`[state] dir`, an absolute
/// directory named on purpose), else in `<project_root>/.savant/state`,
/// which must not lead out of the root through a symlink
/// (`STATE_OUTSIDE_ROOT`).
pub fn open(
    project_root: &std::path::Path,
    url: Option<&str>,
    options: &StoreOptions,
) -> Result<Box<dyn StateStore>, OpenError> {
    open_in(project_root, None, url, options)
}

/// [`open`], with the file store in `dir` when it is given.
pub fn open_in(
    project_root: &std::path::Path,
    dir: Option<&std::path::Path>,
    url: Option<&str>,
    options: &StoreOptions,
) -> Result<Box<dyn StateStore>, OpenError> {
    let url = url.map(str::trim).filter(|u| !u.is_empty());
    let Some(url) = url else {
        let store = match dir {
            Some(dir) => FileStore::at_dir(dir, options.fsync),
            None => FileStore::new(project_root, options.fsync),
        }
        .with_lock_policy(options.lock);
        // Only a directory out of the root is refused here; a directory that
        // cannot be looked at is the STATE_IO of the first call that needs it.
        if let Err(e @ StoreError::OutsideRoot { .. }) = store.check_confined() {
            return Err(OpenError::new(
                "STATE_OUTSIDE_ROOT",
                e.to_string(),
                "remove the symlink (or make it point inside the project), or set `[state] dir` in \
                 savant-think.toml to an absolute directory",
            ));
        }
        return Ok(Box::new(store));
    };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        let scheme = url.split_once("://").map_or("(none)", |(scheme, _)| scheme);
        return Err(OpenError::new(
            "STATE_URL_INVALID",
            format!("the state URL has scheme {scheme:?}; only postgres:// and postgresql:// are known"),
            "unset SAVANT_STATE_URL and [state] url for the file store, or give postgres://USER:PASSWORD@HOST:PORT/DATABASE",
        ));
    }
    #[cfg(feature = "postgres")]
    {
        Ok(Box::new(PgStore::open_with(url, options)?))
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = options;
        Err(OpenError::new(
            "STATE_URL_INVALID",
            "this savant-think was built without PostgreSQL support (the `postgres` feature)",
            "use a build with default features, or unset SAVANT_STATE_URL and [state] url for the file store",
        ))
    }
}

/// The value of `SAVANT_STATE_FSYNC` as a setting: `0`/`false` turn fsync
/// off, `1`/`true` on; anything else is no setting. The binary reads the
/// variable (see `runtime::config::Overrides`).
pub fn parse_fsync(value: &str) -> Option<bool> {
    match value {
        "0" | "false" => Some(false),
        "1" | "true" => Some(true),
        _ => None,
    }
}
