//! A small connection pool for [`super::PgStore`]: idle connections in a
//! `Mutex<Vec<_>>`, a new one opened whenever none is idle (so a caller
//! holding a run lock on one connection can always get another for its
//! writes: the number of connections is bounded by the number of calls in
//! flight, not by a pool size that could deadlock), each with its prepared
//! statements cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use postgres::{Client, NoTls, Statement};

/// One connection and the statements prepared on it.
pub(super) struct Conn {
    pub client: Client,
    statements: HashMap<&'static str, Statement>,
}

impl Conn {
    /// `sql` prepared on this connection, once.
    pub fn statement(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }
}

pub(super) struct Pool {
    config: postgres::Config,
    idle: Mutex<Vec<Conn>>,
    max_idle: usize,
    /// `SET synchronous_commit = off` on each new connection
    /// (`SAVANT_STATE_FSYNC=0`).
    async_commit: bool,
}

/// A connection out of the pool; back into it on drop unless it broke.
pub(super) struct Pooled {
    pool: Arc<Pool>,
    conn: Option<Conn>,
    /// Set when the connection may be in an unknown state (an error in the
    /// middle of a lock release): it is closed instead of reused.
    pub discard: bool,
}

impl Pool {
    pub fn new(config: postgres::Config, max_idle: usize, async_commit: bool) -> Arc<Pool> {
        Arc::new(Pool { config, idle: Mutex::new(Vec::new()), max_idle, async_commit })
    }

    /// Opens a new connection.
    pub fn connect(&self) -> Result<Conn, postgres::Error> {
        let mut client = self.config.connect(NoTls)?;
        if self.async_commit {
            client.batch_execute("SET synchronous_commit = off")?;
        }
        Ok(Conn { client, statements: HashMap::new() })
    }

    /// An idle connection, or a new one.
    pub fn get(self: &Arc<Pool>) -> Result<Pooled, postgres::Error> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(conn) if !conn.client.is_closed() => conn,
            _ => self.connect()?,
        };
        Ok(Pooled { pool: Arc::clone(self), conn: Some(conn), discard: false })
    }

    /// Drops every idle connection (a database restart left them broken).
    pub fn clear(&self) {
        let stale = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        drop(stale);
    }
}

impl Drop for Pool {
    /// Closing a connection blocks on the client's runtime: never on an
    /// async worker thread (the server drops its engine inside the runtime).
    fn drop(&mut self) {
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(|e| e.into_inner()));
        super::offload(move || drop(idle));
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
        let Some(conn) = self.conn.take() else { return };
        if self.discard || conn.client.is_closed() {
            return;
        }
        let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < self.pool.max_idle {
            idle.push(conn);
        }
    }
}
