//! The run lock on PostgreSQL: a session advisory lock on a connection
//! held for the guard's life, taken with the run's stamp read in the same
//! round trip ([`try_lock`]).

use sha2::{Digest, Sha256};

use super::offload;
use super::pool::{Conn, PgError, Pooled};
use crate::state::RunKey;
use crate::state::turns::Turn;

const TRY_LOCK: &str = "SELECT pg_try_advisory_lock($1)";
const UNLOCK: &str = "SELECT pg_advisory_unlock($1)";

/// The advisory lock id of a run: the first 8 bytes of a SHA-256 of its
/// key, the same in every replica.
pub(super) fn lock_id(key: &RunKey) -> i64 {
    let digest = Sha256::digest(format!("savant-think run\0{}\0{}", key.workflow, key.run_id));
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

/// One attempt at a run's advisory lock: whether it was had and, for
/// `existing`'s run, the run's stamp read right after it (pipelined: one
/// round trip; `None` when the run does not exist).
pub(super) fn try_lock(
    conn: &mut Conn,
    id: i64,
    existing: Option<&RunKey>,
) -> Result<(bool, Option<(i64, i64)>), PgError> {
    let lock = conn.statement(TRY_LOCK)?;
    let Some(key) = existing else {
        return Ok((conn.query_one(&lock, &[&id])?.get(0), None));
    };
    let stamp = conn.statement(super::STAMP)?;
    let (locked, stamped) = conn.query_pair((&lock, &[&id]), (&stamp, &[&key.workflow, &key.run_id]))?;
    let locked = locked.first().is_some_and(|row| row.get::<_, bool>(0));
    Ok((locked, stamped.first().map(|row| (row.get(0), row.get(1)))))
}

/// The run lock: the connection that holds the advisory lock, and this
/// process's turn on the run, given up after the unlock.
pub(super) struct PgLock {
    conn: Option<Pooled>,
    id: i64,
    _turn: Turn<RunKey>,
}

impl PgLock {
    pub(super) fn new(conn: Pooled, id: i64, turn: Turn<RunKey>) -> PgLock {
        PgLock { conn: Some(conn), id, _turn: turn }
    }
}

impl Drop for PgLock {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else { return };
        let id = self.id;
        offload(move || {
            let unlocked = conn.statement(UNLOCK).and_then(|s| conn.query_one(&s, &[&id]));
            // Unless the lock is known released, the connection is closed,
            // which releases it.
            if !matches!(unlocked.map(|row| row.get::<_, bool>(0)), Ok(true)) {
                conn.discard = true;
            }
            drop(conn);
        });
    }
}
