//! A bounded connection pool for [`super::PgStore`], whose every database
//! call has a deadline.
//!
//! Each connection is a `tokio_postgres` client driven by its own
//! current-thread runtime (as the synchronous `postgres` crate does), so a
//! call is `block_on(timeout(db_timeout, query))`: a database that stops
//! answering (stopped, partitioned, overloaded) costs a caller at most
//! `db_timeout`, never a hang, and the connection that timed out is thrown
//! away (the server ends its session, releasing its locks, once it reads
//! the closed socket).
//!
//! Two budgets of `size` connections each: *work* connections, lent for
//! one statement or transaction and never held while waiting for anything
//! else, and *lock* connections, held for a run lock's life. A lock holder
//! that needs a work connection always gets one in time (work connections
//! are never held by waiters), so the bound cannot deadlock; a caller that
//! finds its budget spent waits for a free connection up to its deadline.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row, Statement};

/// Why a database call failed.
#[derive(Debug)]
pub(super) enum PgError {
    /// The database answered with an error, or the connection broke.
    Db(tokio_postgres::Error),
    /// No answer within the deadline; the connection is not reusable.
    Timeout(Duration),
    /// Every connection of the budget stayed lent for the whole deadline.
    Exhausted { size: usize, waited: Duration },
    /// The runtime that drives a connection could not be made.
    Io(std::io::Error),
}

/// Why, in words: the database's message (with its SQLSTATE), or which
/// setting's bound was met.
impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PgError::Db(db) => f.write_str(&super::error_message(db)),
            PgError::Timeout(t) => {
                write!(f, "no answer within {} ([state] db_timeout)", humantime::format_duration(*t))
            }
            PgError::Exhausted { size, waited } => write!(
                f,
                "all {size} connections stayed in use for {} ([state] pool_size)",
                humantime::format_duration(Duration::from_millis(waited.as_millis() as u64))
            ),
            PgError::Io(io) => write!(f, "cannot start a connection: {io}"),
        }
    }
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> PgError {
        PgError::Db(e)
    }
}

/// The two budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Work,
    Lock,
}

/// One connection, the runtime that drives it, and the statements prepared on it.
pub(super) struct Conn {
    client: tokio_postgres::Client,
    runtime: Option<tokio::runtime::Runtime>,
    statements: HashMap<&'static str, Statement>,
    timeout: Duration,
    /// Set once a call timed out or broke: the connection's state is unknown.
    broken: bool,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Never blocks (callers may be on an async worker): the connection
        // task is dropped and its socket closed.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Conn {
    /// Runs `call` on this connection's runtime within its timeout.
    fn block<T>(
        &mut self,
        call: impl AsyncFnOnce(&mut tokio_postgres::Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, PgError> {
        let timeout = self.timeout;
        let runtime = self.runtime.as_ref().expect("a connection has its runtime until drop");
        let answer = runtime.block_on(async { tokio::time::timeout(timeout, call(&mut self.client)).await });
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                if self.client.is_closed() || ends_the_session(&e) {
                    self.broken = true;
                }
                Err(PgError::Db(e))
            }
            Err(_) => {
                self.broken = true;
                Err(PgError::Timeout(timeout))
            }
        }
    }

    /// True when the connection cannot be used again.
    pub fn is_broken(&self) -> bool {
        self.broken || self.client.is_closed()
    }

    /// `sql` prepared on this connection, once.
    pub fn statement(&mut self, sql: &'static str) -> Result<Statement, PgError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.block(async |c| c.prepare(sql).await)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }

    pub fn execute(&mut self, s: &Statement, params: &[&(dyn ToSql + Sync)]) -> Result<u64, PgError> {
        self.block(async |c| c.execute(s, params).await)
    }

    pub fn query(&mut self, s: &Statement, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, PgError> {
        self.block(async |c| c.query(s, params).await)
    }

    pub fn query_one(&mut self, s: &Statement, params: &[&(dyn ToSql + Sync)]) -> Result<Row, PgError> {
        self.block(async |c| c.query_one(s, params).await)
    }

    pub fn query_opt(
        &mut self,
        s: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, PgError> {
        self.block(async |c| c.query_opt(s, params).await)
    }

    /// Two prepared statements sent together, pipelined: one round trip.
    /// Each runs in its own implicit transaction, so the second's snapshot
    /// is taken after the first has run (a read after a lock sees every
    /// write committed before the lock was had).
    pub fn query_pair(
        &mut self,
        (a, a_params): (&Statement, &[&(dyn ToSql + Sync)]),
        (b, b_params): (&Statement, &[&(dyn ToSql + Sync)]),
    ) -> Result<(Vec<Row>, Vec<Row>), PgError> {
        self.block(async |c| {
            let (first, second) = tokio::join!(c.query(a, a_params), c.query(b, b_params));
            Ok((first?, second?))
        })
    }

    /// Unprepared SQL (`BEGIN`, `COMMIT`, migrations), perhaps several statements.
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), PgError> {
        self.block(async |c| c.batch_execute(sql).await)
    }

    /// An unprepared statement with parameters (used once, at open).
    pub fn execute_sql(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, PgError> {
        self.block(async |c| c.execute(sql, params).await)
    }

    /// An unprepared query with parameters (used once, at open).
    pub fn query_one_sql(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, PgError> {
        self.block(async |c| c.query_one(sql, params).await)
    }

    /// Runs `f` in a transaction, committed when it answers
    /// [`Outcome::Commit`], rolled back on [`Outcome::Rollback`]; on an
    /// error the connection is thrown away (which rolls back).
    pub fn transaction<T>(
        &mut self,
        f: impl FnOnce(&mut Conn) -> Result<Outcome<T>, PgError>,
    ) -> Result<T, PgError> {
        self.batch_execute("BEGIN")?;
        let (value, end) = match f(self) {
            Ok(Outcome::Commit(value)) => (value, "COMMIT"),
            Ok(Outcome::Rollback(value)) => (value, "ROLLBACK"),
            Err(e) => {
                self.broken = true;
                return Err(e);
            }
        };
        self.batch_execute(end).inspect_err(|_| self.broken = true)?;
        Ok(value)
    }
}

/// How a [`Conn::transaction`] ends.
pub(super) enum Outcome<T> {
    Commit(T),
    Rollback(T),
}

/// An error after which the server closes the session (an administrator's
/// `pg_terminate_backend`, a shutdown, a connection failure): the client
/// may not have seen the socket close yet, but the connection is gone.
fn ends_the_session(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        let code = c.code();
        code.starts_with("57P") || code.starts_with("08")
    })
}

/// Whether a SQLSTATE says the database is going away, not there yet or
/// out of resources, rather than that the statement is wrong: class 08
/// (connection exception), 57P (operator intervention: shutdown, crash,
/// cannot connect now, database dropped, idle session timeout), 53
/// (insufficient resources: too many connections, disk full, out of
/// memory), 57014 (a statement cancelled: the server's
/// `statement_timeout`, which is `[state] db_timeout`) and 25P03 (an idle
/// transaction timed out). A call that fails so may succeed when retried.
pub(super) fn connection_class(code: &str) -> bool {
    ["08", "57P", "53"].iter().any(|class| code.starts_with(class)) || matches!(code, "57014" | "25P03")
}

#[derive(Default)]
struct Lent {
    work: usize,
    lock: usize,
}

impl Lent {
    fn count(&mut self, kind: Kind) -> &mut usize {
        match kind {
            Kind::Work => &mut self.work,
            Kind::Lock => &mut self.lock,
        }
    }
}

pub(super) struct Pool {
    config: tokio_postgres::Config,
    idle: Mutex<Vec<Conn>>,
    lent: Mutex<Lent>,
    returned: Condvar,
    /// Connections of each budget.
    size: usize,
    /// The deadline of each call, connecting included.
    timeout: Duration,
    /// `SET synchronous_commit = off` on each new connection
    /// (`SAVANT_STATE_FSYNC=0`).
    async_commit: bool,
}

/// A connection out of the pool; back into it on drop unless it broke.
pub(super) struct Pooled {
    pool: Arc<Pool>,
    conn: Option<Conn>,
    kind: Kind,
    /// Set when the connection may be in an unknown state (an error in the
    /// middle of a lock release): it is closed instead of reused.
    pub discard: bool,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pool {
    pub fn new(
        config: tokio_postgres::Config,
        size: usize,
        timeout: Duration,
        async_commit: bool,
    ) -> Arc<Pool> {
        Arc::new(Pool {
            config,
            idle: Mutex::new(Vec::new()),
            lent: Mutex::default(),
            returned: Condvar::new(),
            size: size.max(1),
            timeout,
            async_commit,
        })
    }

    /// The deadline of one call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Opens a new connection, within the call deadline.
    pub fn connect(&self) -> Result<Conn, PgError> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(PgError::Io)?;
        let timeout = self.timeout;
        let connected =
            runtime.block_on(async { tokio::time::timeout(timeout, self.config.connect(NoTls)).await });
        let (client, connection) = match connected {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(PgError::Db(e)),
            Err(_) => {
                runtime.shutdown_background();
                return Err(PgError::Timeout(timeout));
            }
        };
        runtime.spawn(connection);
        let mut conn =
            Conn { client, runtime: Some(runtime), statements: HashMap::new(), timeout, broken: false };
        if self.async_commit {
            conn.batch_execute("SET synchronous_commit = off")?;
        }
        Ok(conn)
    }

    /// A connection of `kind`'s budget: an idle one or a new one, once the
    /// budget has room; waits for room until `deadline`.
    pub fn get(self: &Arc<Pool>, kind: Kind, deadline: Instant) -> Result<Pooled, PgError> {
        let started = Instant::now();
        {
            let mut lent = relock(&self.lent);
            while *lent.count(kind) >= self.size {
                let now = Instant::now();
                if now >= deadline {
                    return Err(PgError::Exhausted { size: self.size, waited: started.elapsed() });
                }
                lent = self.returned.wait_timeout(lent, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
            }
            *lent.count(kind) += 1;
        }
        // From here the slot is ours; `Pooled`'s drop gives it back.
        let mut pooled = Pooled { pool: Arc::clone(self), conn: None, kind, discard: false };
        let idle = relock(&self.idle).pop();
        pooled.conn = Some(match idle {
            Some(conn) if !conn.is_broken() => conn,
            _ => self.connect()?,
        });
        Ok(pooled)
    }

    /// Connections lent now for work and for locks, idle, and each
    /// budget's size (`/metrics`).
    pub fn usage(&self) -> (usize, usize, usize, usize) {
        let (work, lock) = {
            let lent = relock(&self.lent);
            (lent.work, lent.lock)
        };
        (work, lock, relock(&self.idle).len(), self.size)
    }

    /// Drops every idle connection (a database restart left them broken).
    pub fn clear(&self) {
        let stale = std::mem::take(&mut *relock(&self.idle));
        drop(stale);
    }
}

impl std::ops::Deref for Pooled {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn.as_ref().expect("a pooled connection is present until drop")
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn.as_mut().expect("a pooled connection is present until drop")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && !self.discard
            && !conn.is_broken()
        {
            let mut idle = relock(&self.pool.idle);
            if idle.len() < self.pool.size {
                idle.push(conn);
            }
        }
        *relock(&self.pool.lent).count(self.kind) -= 1;
        self.pool.returned.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_waits_until_its_deadline_then_says_so() {
        // Nothing listens on port 1: no connection is ever made, but the
        // budget is counted before connecting.
        let config: tokio_postgres::Config = "postgres://u@127.0.0.1:1/db".parse().unwrap();
        let pool = Pool::new(config, 1, Duration::from_millis(200), false);
        *relock(&pool.lent).count(Kind::Work) = 1;
        let deadline = Instant::now() + Duration::from_millis(30);
        match pool.get(Kind::Work, deadline) {
            Err(PgError::Exhausted { size: 1, .. }) => {}
            other => panic!("{:?}", other.err()),
        }
        // The other budget is separate: it gets as far as connecting.
        assert!(matches!(pool.get(Kind::Lock, deadline), Err(PgError::Db(_) | PgError::Timeout(_))));
        assert_eq!(relock(&pool.lent).lock, 0, "a failed get gives its slot back");
    }
}
