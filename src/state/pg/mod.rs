//! [`PgStore`]: runs in PostgreSQL, shared by every replica that points at
//! the same database (docs/deploy.md).
//!
//! Two tables (created by `savant-think state migrate`, or on open when the
//! role may, see `schema`):
//!
//! * `savant_runs(workflow, run_id, snapshot, version, generation, stamp)`:
//!   one row per run, the snapshot as JSON text (text, not `jsonb`, so that
//!   the engine reads back exactly the document it wrote, key order
//!   included).
//! * `savant_events(workflow, run_id, version, body)`: the journal since the
//!   snapshot, one row per event, removed with the run (`ON DELETE CASCADE`).
//!
//! The semantics are the file store's: `append` and `write_snapshot` are
//! each one statement, so one transaction, committed (and so durable, with
//! the server's default `synchronous_commit`) before they return;
//! `write_snapshot` replaces the snapshot and drops the journal together;
//! [`StateStore::lock`] is a session advisory lock on a connection held for
//! the guard's life, so it excludes every thread of every replica, and a
//! replica that dies releases it with its connection. Every write takes the
//! next value of the database-wide sequence `savant_stamp` and a random
//! nonce as the run's stamp, so a stamp never repeats, whichever replica
//! wrote, even after a restore rolled the sequence back (see
//! `fresh_nonce`).
//! [`StateStore::append_unlocked`] appends without the session lock, in one
//! statement that tries the same advisory lock for its transaction and
//! checks the stamp (see `APPEND_UNLOCKED`, and docs/runtime.md).
//!
//! Calls block. Inside an async runtime they move off its worker threads
//! (see `offload`): the synchronous `postgres` client drives its own
//! runtime, which may not run on a worker thread.

mod archive;
pub mod cluster;
mod lock;
mod pool;
mod schema;
mod timers;
mod usage;
pub use schema::{Migration, SCHEMA_VERSION};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::journal::{generation_of, version_of};
use super::turns::{Busy, LockPolicy, Turns, back_off};
use super::{Loaded, OpenError, RunKey, RunLock, Stamp, StateStore, StoreError, check_workflow_id};
use lock::{PgLock, lock_id, try_lock};
use pool::{Conn, Kind, PgError, Pool};

/// The PostgreSQL-backed [`StateStore`].
pub struct PgStore {
    pool: Arc<Pool>,
    /// This process's callers of each run lock, and their waiters.
    turns: Arc<Turns<RunKey>>,
    lock_policy: LockPolicy,
    /// The database without the password, for messages:
    /// `postgres://user@host:port/dbname`.
    label: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("database", &self.label).finish()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://…` or
    /// `postgresql://…`), then creates or migrates the schema. With `fsync`
    /// off, commits do not wait for the server's WAL flush
    /// (`synchronous_commit = off`): a crash of the database may lose the
    /// last writes, never corrupt a run.
    pub fn open(url: &str, fsync: bool) -> Result<PgStore, OpenError> {
        PgStore::open_with(url, &super::StoreOptions { fsync, ..Default::default() })
    }

    /// [`PgStore::open`] with every store setting.
    pub fn open_with(url: &str, options: &super::StoreOptions) -> Result<PgStore, OpenError> {
        let store = PgStore::connect(url, options)?;
        offload(|| schema::ensure(&store.pool, &store.label))?;
        Ok(store)
    }

    /// Applies the schema migrations the database at `url` lacks
    /// (`savant-think state migrate`): idempotent, one transaction.
    pub fn migrate(url: &str, options: &super::StoreOptions) -> Result<Migration, OpenError> {
        let store = PgStore::connect(url, options)?;
        offload(|| schema::migrate(&store.pool, &store.label))
    }

    /// A store over the database at `url`, its schema not checked yet.
    fn connect(url: &str, options: &super::StoreOptions) -> Result<PgStore, OpenError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| {
            // The cause names the option or value (`unknown option `bogus``), never the password.
            let why = match std::error::Error::source(&e) {
                Some(cause) => format!("{e}: {cause}"),
                None => e.to_string(),
            };
            OpenError::new(
                "STATE_URL_INVALID",
                format!("the state URL is not a valid PostgreSQL URL: {why}"),
                "write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE (see docs/deploy.md)",
            )
        })?;
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(OpenError::new(
                "STATE_URL_INVALID",
                "the state URL names no host",
                "write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE; for a Unix socket give its \
                 directory: postgres://USER@%2Fvar%2Frun%2Fpostgresql/DATABASE (see docs/deploy.md)",
            ));
        }
        // The whole connect has the call deadline; the socket-level attempt
        // (per address) no longer than that either.
        if config.get_connect_timeout().is_none_or(|t| *t > options.db_timeout) {
            config.connect_timeout(options.db_timeout);
        }
        // A peer that vanished (host down, network cut) is noticed by TCP too.
        config.keepalives(true).keepalives_idle(Duration::from_secs(30));
        if config.get_application_name().is_none() {
            config.application_name("savant-think");
        }
        // Server-side bounds behind the client's: no statement, and no
        // transaction left idle by a client that died, outlives them long.
        let server_timeouts = format!(
            "-c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms}",
            ms = options.db_timeout.as_millis().max(1)
        );
        let existing = config.get_options().map(str::to_owned);
        config.options(match existing {
            Some(o) if !o.trim().is_empty() => format!("{o} {server_timeouts}"),
            _ => server_timeouts,
        });
        let label = label(&config);
        let pool = Pool::new(config, options.pool_size, options.db_timeout, !options.fsync);
        Ok(PgStore { pool, turns: Arc::default(), lock_policy: options.lock, label })
    }

    /// The database, without its password: `postgres://user@host:port/db`.
    pub fn label(&self) -> &str {
        &self.label
    }

    fn io(&self, key: Option<&RunKey>, e: &PgError) -> StoreError {
        match e {
            // The database is going away, not there yet, or out of
            // connections: retryable, like a connection that failed.
            PgError::Db(db) if db.code().is_some_and(|c| pool::connection_class(c.code())) => {
                StoreError::Unavailable { place: self.label.clone(), message: self.unavailable(e) }
            }
            PgError::Db(db) if db.as_db_error().is_some() => {
                StoreError::Io { path: self.place(key), message: error_message(db) }
            }
            _ => StoreError::Unavailable { place: self.label.clone(), message: self.unavailable(e) },
        }
    }

    /// Why the database is unavailable, in a sentence.
    fn unavailable(&self, e: &PgError) -> String {
        match e {
            PgError::Db(db) if db.as_db_error().is_some() => format!("the database refused the call: {e}"),
            PgError::Db(_) => format!("the connection failed: {e}"),
            _ => e.to_string(),
        }
    }

    fn corrupt(&self, key: &RunKey, message: impl Into<String>) -> StoreError {
        StoreError::Corrupt { path: self.place(Some(key)), message: message.into() }
    }

    /// Where a run lives, for messages: `postgres://…/db (run wf/r1)`.
    fn place(&self, key: Option<&RunKey>) -> PathBuf {
        match key {
            Some(key) => PathBuf::from(format!("{} (run {key})", self.label)),
            None => PathBuf::from(&self.label),
        }
    }

    /// Runs `f` on a pooled connection. A connection the database closed
    /// (it restarted, or dropped idle sessions) is thrown away with every
    /// other idle one, and `f` runs once more on a new connection when
    /// `retry` allows it: only for calls that are safe to repeat, since a
    /// write whose connection broke may or may not have committed.
    fn with_conn<R>(
        &self,
        key: Option<&RunKey>,
        retry: bool,
        mut f: impl FnMut(&mut Conn) -> Result<R, PgError>,
    ) -> Result<R, StoreError> {
        let deadline = Instant::now() + self.pool.timeout();
        let mut conn = self.pool.get(Kind::Work, deadline).map_err(|e| self.io(key, &e))?;
        match f(&mut conn) {
            Ok(r) => Ok(r),
            // A broken connection (not a timeout: the database is there but
            // slow, and a second try would double the wait).
            Err(e @ PgError::Db(_)) if conn.is_broken() => {
                drop(conn);
                self.pool.clear();
                if !retry {
                    return Err(self.io(key, &e));
                }
                let mut conn = self.pool.get(Kind::Work, deadline).map_err(|e| self.io(key, &e))?;
                f(&mut conn).map_err(|e| self.io(key, &e))
            }
            Err(e) => Err(self.io(key, &e)),
        }
    }
}

const STAMP: &str = "SELECT stamp, nonce FROM savant_runs WHERE workflow = $1 AND run_id = $2";
const LOAD: &str = "SELECT r.snapshot, r.stamp, r.nonce, \
     ARRAY(SELECT e.body FROM savant_events e \
           WHERE e.workflow = r.workflow AND e.run_id = r.run_id ORDER BY e.version) \
     FROM savant_runs r WHERE r.workflow = $1 AND r.run_id = $2";
/// The appends' one statement: bump the run's stamp (which also row-locks
/// it), then insert the event only if it is of the run's generation and
/// above the last event's version. `$free` and `$cond` add the unlocked
/// append's checks (see [`APPEND_UNLOCKED`]).
macro_rules! append_sql {
    ($free:literal, $cond:literal) => {
        concat!(
            "WITH ",
            $free,
            "run AS ( \
               UPDATE savant_runs SET stamp = nextval('savant_stamp'), nonce = $6, updated_at = now() \
               WHERE workflow = $1 AND run_id = $2",
            $cond,
            " RETURNING stamp, nonce, generation), \
             last AS (SELECT max(version) AS version FROM savant_events WHERE workflow = $1 AND run_id = $2), \
             ins AS ( \
               INSERT INTO savant_events (workflow, run_id, version, body) \
               SELECT $1, $2, $3, $4 FROM run, last \
               WHERE run.generation IS NOT DISTINCT FROM $5::text \
                 AND (last.version IS NULL OR last.version < $3) \
               RETURNING 1) \
             SELECT run.stamp, run.nonce, run.generation, last.version, (SELECT count(*) FROM ins) FROM run, last"
        )
    };
}
const APPEND: &str = append_sql!("", "");
/// [`APPEND`] by a caller without the run's lock: only while no session
/// holds it (the transaction's own try of the same advisory lock, `$6`,
/// held to the commit) and the stamp and its nonce are still `$8`, `$9`.
/// No row when either fails.
const APPEND_UNLOCKED: &str = append_sql!(
    "free AS (SELECT pg_try_advisory_xact_lock($7) AS ok), ",
    " AND stamp = $8 AND nonce = $9 AND (SELECT ok FROM free)"
);
/// One statement: drop the journal and upsert the snapshot.
const WRITE_SNAPSHOT: &str = "WITH gone AS (DELETE FROM savant_events WHERE workflow = $1 AND run_id = $2) \
     INSERT INTO savant_runs (workflow, run_id, snapshot, version, generation, stamp, nonce, updated_at) \
     VALUES ($1, $2, $3, $4, $5, nextval('savant_stamp'), $6, now()) \
     ON CONFLICT (workflow, run_id) DO UPDATE SET snapshot = excluded.snapshot, \
       version = excluded.version, generation = excluded.generation, \
       stamp = excluded.stamp, nonce = excluded.nonce, updated_at = excluded.updated_at \
     RETURNING stamp, nonce";
const LIST: &str = "SELECT workflow, run_id FROM savant_runs WHERE $1::text IS NULL OR workflow = $1 \
     ORDER BY workflow COLLATE \"C\", run_id COLLATE \"C\"";
const DELETE: &str = "DELETE FROM savant_runs WHERE workflow = $1 AND run_id = $2";

/// The stamp of a write: the sequence's value and the write's nonce.
fn stamp_of(value: i64, nonce: i64) -> Stamp {
    Stamp::counter_with_nonce(value as u64, nonce as u64)
}

/// A nonce for one write: random, so that a write never repeats the stamp
/// of another even when `savant_stamp` repeats a value. A restore
/// (`pg_restore --clean`, a point-in-time recovery) rolls the sequence
/// back, and the next write draws a value some replica may have cached for
/// a write the restore undid; the nonces of the two writes differ, so that
/// replica reads the run again instead of trusting its copy. A restored
/// row keeps the stamp and nonce it had, with exactly the content it had:
/// an equal pair still means an equal run.
fn fresh_nonce() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // `RandomState`'s keys come from the operating system's randomness.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish() as i64
}

/// A generation as stored: its compact JSON, or NULL.
fn generation_text(value: &Value) -> Option<String> {
    generation_of(value).map(Value::to_string)
}

fn version_param(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

impl PgStore {
    /// Takes the run's lock. With `existing`, the run's stamp is read in
    /// the same round trip, pipelined right after the lock (so under it):
    /// the lock then carries it ([`RunLock::stamp`]), and a run that does
    /// not exist is `None`, its lock released.
    fn take_lock(&self, key: &RunKey, existing: bool) -> Result<Option<RunLock>, StoreError> {
        key.validate()?;
        let id = lock_id(key);
        let deadline = self.lock_policy.deadline();
        let busy = |why: Busy| StoreError::Busy { run: key.to_string(), message: why.describe() };
        // One caller per run and process goes on to the database; the others
        // wait here, holding no connection.
        let turn = self.turns.take(key, &self.lock_policy, deadline).map_err(busy)?;
        let started = Instant::now();
        let (lock, stamp) = offload(|| {
            let mut attempt = 0;
            let mut broke = false;
            loop {
                // The lock's connection is lent only while trying: a caller
                // that waits for another replica holds none.
                let mut conn = match self.pool.get(Kind::Lock, deadline) {
                    Ok(conn) => conn,
                    Err(PgError::Exhausted { size, .. }) => {
                        return Err(StoreError::Busy {
                            run: key.to_string(),
                            message: format!(
                                "all {size} connections that hold run locks are in use ([state] pool_size)"
                            ),
                        });
                    }
                    Err(e) => return Err(self.io(Some(key), &e)),
                };
                match try_lock(&mut conn, id, existing.then_some(key)) {
                    Ok((true, stamp)) => return Ok((PgLock::new(conn, id, turn), stamp)),
                    Ok(_) => {}
                    // Taking a lock is safe to repeat: one taken on a
                    // connection that then broke was released with it.
                    Err(PgError::Db(_)) if conn.is_broken() && !broke => {
                        drop(conn);
                        self.pool.clear();
                        broke = true;
                        continue;
                    }
                    Err(e) => {
                        conn.discard = true;
                        return Err(self.io(Some(key), &e));
                    }
                }
                drop(conn);
                if !back_off(&mut attempt, deadline) {
                    let waited = started.elapsed().max(self.lock_policy.timeout);
                    return Err(busy(Busy::TimedOut { waited }));
                }
            }
        })?;
        // (Dropped out here, not inside `offload`: the drop offloads too.)
        match (existing, stamp) {
            (false, _) => Ok(Some(RunLock::new(lock))),
            (true, Some((stamp, nonce))) => Ok(Some(RunLock::new(lock).with_stamp(stamp_of(stamp, nonce)))),
            (true, None) => Ok(None),
        }
    }

    /// Both appends: [`APPEND`], or with `expected` [`APPEND_UNLOCKED`];
    /// `None` when no row came back (no run, or the unlocked append's
    /// checks failed).
    fn append_with(
        &self,
        key: &RunKey,
        event: &Value,
        expected: Option<&Stamp>,
    ) -> Result<Option<Stamp>, StoreError> {
        key.validate()?;
        let version = version_of(event)
            .ok_or_else(|| self.corrupt(key, "refusing to append an event without an integer `version`"))?;
        let body = serde_json::to_string(event).map_err(|e| self.corrupt(key, e.to_string()))?;
        let generation = generation_text(event);
        let v = version_param(version);
        let unlocked = expected.map(|stamp| {
            let (counter, nonce) = stamp.counter_value();
            (lock_id(key), version_param(counter), nonce as i64)
        });
        let nonce = fresh_nonce();
        let row = offload(|| {
            self.with_conn(Some(key), false, |c| match &unlocked {
                None => {
                    let s = c.statement(APPEND)?;
                    c.query_opt(&s, &[&key.workflow, &key.run_id, &v, &body, &generation, &nonce])
                }
                Some((id, stamp, was)) => {
                    let s = c.statement(APPEND_UNLOCKED)?;
                    c.query_opt(
                        &s,
                        &[&key.workflow, &key.run_id, &v, &body, &generation, &nonce, id, stamp, was],
                    )
                }
            })
        });
        let row = match row {
            Ok(Some(row)) => row,
            Ok(None) => return Ok(None),
            // Another writer appended this version first: a replica's
            // lock-free append (it checks that no one holds the lock, then
            // inserts, and the two can cross under READ COMMITTED) against
            // this one. Not damage: a race lost. Without the lock, the call
            // is made again under it (`None`); under the lock, the caller
            // retries and reads the run again (`RUN_BUSY`, retryable).
            Err(StoreError::Io { message, .. }) if message.contains("savant_events_pkey") => {
                if expected.is_some() {
                    return Ok(None);
                }
                return Err(StoreError::Busy {
                    run: key.to_string(),
                    message: format!(
                        "another replica appended version {version} of the run at the same moment; retry: the run is read again"
                    ),
                });
            }
            Err(e) => return Err(e),
        };
        let (stamp, nonce, run_generation, last, inserted): (i64, i64, Option<String>, Option<i64>, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        if inserted == 1 {
            return Ok(Some(stamp_of(stamp, nonce)));
        }
        if run_generation != generation {
            return Err(self.corrupt(
                key,
                format!(
                    "refusing to append an event of generation {} to a run of generation {}",
                    generation.as_deref().unwrap_or("(none)"),
                    run_generation.as_deref().unwrap_or("(none)")
                ),
            ));
        }
        Err(self.corrupt(
            key,
            format!("refusing to append version {version} after version {}", last.unwrap_or_default()),
        ))
    }
}

impl StateStore for PgStore {
    fn lock(&self, key: &RunKey) -> Result<RunLock, StoreError> {
        self.take_lock(key, false)?.ok_or_else(|| self.corrupt(key, "the lock was had but not kept"))
    }

    fn lock_existing(&self, key: &RunKey) -> Result<Option<RunLock>, StoreError> {
        self.take_lock(key, true)
    }

    fn stamp(&self, key: &RunKey) -> Result<Option<Stamp>, StoreError> {
        key.validate()?;
        offload(|| {
            self.with_conn(Some(key), true, |c| {
                let s = c.statement(STAMP)?;
                let row = c.query_opt(&s, &[&key.workflow, &key.run_id])?;
                Ok(row.map(|r| stamp_of(r.get(0), r.get(1))))
            })
        })
    }

    fn load(&self, key: &RunKey) -> Result<Option<Loaded>, StoreError> {
        key.validate()?;
        let row = offload(|| {
            self.with_conn(Some(key), true, |c| {
                let s = c.statement(LOAD)?;
                let row = c.query_opt(&s, &[&key.workflow, &key.run_id])?;
                Ok(row.map(|r| {
                    let stamp = stamp_of(r.get(1), r.get(2));
                    (r.get::<_, String>(0), stamp, r.get::<_, Vec<String>>(3))
                }))
            })
        })?;
        let Some((snapshot, stamp, events)) = row else { return Ok(None) };
        let snapshot: Value = serde_json::from_str(&snapshot)
            .map_err(|e| self.corrupt(key, format!("snapshot is not JSON: {e}")))?;
        let version =
            version_of(&snapshot).ok_or_else(|| self.corrupt(key, "snapshot has no integer `version`"))?;
        let generation = generation_of(&snapshot);
        let mut journal = Vec::with_capacity(events.len());
        for (i, body) in events.iter().enumerate() {
            let event: Value = serde_json::from_str(body)
                .map_err(|e| self.corrupt(key, format!("journal event {}: {e}", i + 1)))?;
            let v = version_of(&event)
                .ok_or_else(|| self.corrupt(key, format!("journal event {}: no integer `version`", i + 1)))?;
            // As in the file store: events not above the snapshot, or of
            // another generation, are not the run's.
            if v > version && generation_of(&event) == generation {
                journal.push(event);
            }
        }
        Ok(Some(Loaded { snapshot, journal, stamp }))
    }

    fn append(&self, key: &RunKey, event: &Value) -> Result<Stamp, StoreError> {
        let row = self.append_with(key, event, None)?;
        row.ok_or_else(|| self.corrupt(key, "cannot append to a run that has no snapshot"))
    }

    fn appends_unlocked(&self) -> bool {
        true
    }

    fn append_unlocked(
        &self,
        key: &RunKey,
        event: &Value,
        expected: &Stamp,
    ) -> Result<Option<Stamp>, StoreError> {
        self.append_with(key, event, Some(expected))
    }

    fn write_snapshot(&self, key: &RunKey, snapshot: &Value) -> Result<Stamp, StoreError> {
        key.validate()?;
        let version = version_of(snapshot)
            .ok_or_else(|| self.corrupt(key, "refusing to write a snapshot without an integer `version`"))?;
        let text = serde_json::to_string(snapshot).map_err(|e| self.corrupt(key, e.to_string()))?;
        let generation = generation_text(snapshot);
        let v = version_param(version);
        let nonce = fresh_nonce();
        offload(|| {
            self.with_conn(Some(key), false, |c| {
                let s = c.statement(WRITE_SNAPSHOT)?;
                let row = c.query_one(&s, &[&key.workflow, &key.run_id, &text, &v, &generation, &nonce])?;
                Ok(stamp_of(row.get(0), row.get(1)))
            })
        })
    }

    fn list(&self, workflow: Option<&str>) -> Result<Vec<RunKey>, StoreError> {
        if let Some(workflow) = workflow {
            check_workflow_id(workflow)?;
        }
        let rows = offload(|| {
            self.with_conn(None, true, |c| {
                let s = c.statement(LIST)?;
                c.query(&s, &[&workflow])
            })
        })?;
        let mut keys: Vec<RunKey> = rows
            .iter()
            .filter_map(|r| RunKey::new(r.get::<_, String>(0), r.get::<_, String>(1)).ok())
            .collect();
        keys.sort();
        Ok(keys)
    }

    fn delete(&self, key: &RunKey) -> Result<bool, StoreError> {
        key.validate()?;
        offload(|| {
            self.with_conn(Some(key), false, |c| {
                let s = c.statement(DELETE)?;
                Ok(c.execute(&s, &[&key.workflow, &key.run_id])? > 0)
            })
        })
    }
}

/// `postgres://user@host:port/db` for messages (never the password).
fn label(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = config.get_ports().get(i).or(config.get_ports().first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                #[cfg(unix)]
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let user = config.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    format!("postgres://{user}{}/{}", hosts.join(","), config.get_dbname().unwrap_or(""))
}

/// The message of a database error with its SQLSTATE and detail, or of a
/// connection error with its cause.
fn error_message(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut message = format!("{} (SQLSTATE {})", db.message(), db.code().code());
        if let Some(detail) = db.detail() {
            message.push_str(&format!(": {detail}"));
        }
        return message;
    }
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(&format!(": {text}"));
        }
        source = cause.source();
    }
    message
}

/// Runs the blocking `f` where blocking is allowed. The `postgres` client
/// drives its own runtime per connection, which would panic on a worker
/// thread of an async runtime: there `f` runs through `block_in_place`
/// (multi-thread runtime) or on a scoped thread (current-thread runtime).
pub(crate) fn offload<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Err(_) => f(),
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        Ok(_) => std::thread::scope(|s| s.spawn(f).join()).unwrap_or_else(|p| std::panic::resume_unwind(p)),
    }
}

#[cfg(test)]
mod tests;
