//! The schema of [`super::PgStore`]: migrated by `savant-think state
//! migrate`, or on open when the role may.
//!
//! `savant_schema_version` records each migration applied. Opening a store
//! first reads that version without any DDL: a current schema needs
//! nothing more, so a role with only DML grants serves. An older (or
//! missing) one is migrated: under a transaction-scoped advisory lock, so
//! replicas starting together migrate one at a time (the others then find
//! nothing to do), the missing migrations in order in that one transaction
//! (a failure leaves the schema as it was). A role that may not create
//! tables gets `STATE_SCHEMA_OLDER` then. A database migrated by a newer
//! savant-think (a version above the last one known here) is refused
//! rather than used.

use super::pool::{Outcome, PgError, Pool};
use crate::state::OpenError;

/// The advisory lock id that serializes migrations (`savant-think schema`
/// in ASCII; run lock ids come from SHA-256 and are not chosen).
const MIGRATION_LOCK: i64 = 0x7361_7661_6e74_0001;

/// Migration `i + 1` is `MIGRATIONS[i]`. Append only: never edit one that
/// has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: runs, their journals, and the stamp sequence.
    "CREATE SEQUENCE savant_stamp;
     CREATE TABLE savant_runs (
         workflow   text NOT NULL,
         run_id     text NOT NULL,
         snapshot   text NOT NULL,
         version    bigint NOT NULL,
         generation text,
         stamp      bigint NOT NULL,
         updated_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (workflow, run_id)
     );
     CREATE TABLE savant_events (
         workflow text NOT NULL,
         run_id   text NOT NULL,
         version  bigint NOT NULL,
         body     text NOT NULL,
         PRIMARY KEY (workflow, run_id, version),
         FOREIGN KEY (workflow, run_id) REFERENCES savant_runs ON DELETE CASCADE
     );",
    // 2: archived runs and the content-addressed objects runs are pinned to.
    "CREATE TABLE savant_archive (
         workflow    text NOT NULL,
         run_id      text NOT NULL,
         archive_id  text NOT NULL,
         archived_at text NOT NULL,
         snapshot    text NOT NULL,
         journal     text NOT NULL,
         PRIMARY KEY (workflow, run_id, archive_id)
     );
     CREATE TABLE savant_objects (
         hash       text PRIMARY KEY,
         bytes      bytea NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now()
     );",
    // 3: a random nonce drawn with each write's stamp, so that a stamp a
    // restore rolled the sequence back to never passes for another write.
    "ALTER TABLE savant_runs ADD COLUMN nonce bigint NOT NULL DEFAULT 0;",
    // 4: the timer index (`timers.rs`): each waiting run's earliest
    // deadline, polled by every replica by the database's clock.
    "CREATE TABLE savant_timers (
         workflow      text NOT NULL,
         run_id        text NOT NULL,
         deadline      timestamptz NOT NULL,
         claimed_until timestamptz,
         PRIMARY KEY (workflow, run_id),
         FOREIGN KEY (workflow, run_id) REFERENCES savant_runs ON DELETE CASCADE
     );
     CREATE INDEX savant_timers_deadline ON savant_timers (deadline);",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// What [`super::PgStore::migrate`] did: the schema version found, the one left, and the
/// migrations applied in between (none when it was already current).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Migration {
    /// The database, without its password.
    pub database: String,
    /// The version found (0: no savant-think schema).
    pub from: i32,
    /// The version left: [`SCHEMA_VERSION`].
    pub to: i32,
    /// The migrations applied, in order.
    pub applied: Vec<i32>,
}

/// The schema version recorded in the database (0 when there is none),
/// read without any DDL: a role with `SELECT` on `savant_schema_version`
/// (or on nothing, when the table is missing) may ask.
fn version(conn: &mut super::pool::Conn) -> Result<i32, PgError> {
    let exists: bool =
        conn.query_one_sql("SELECT to_regclass('savant_schema_version') IS NOT NULL", &[])?.get(0);
    if !exists {
        return Ok(0);
    }
    Ok(conn.query_one_sql("SELECT coalesce(max(version), 0) FROM savant_schema_version", &[])?.get(0))
}

/// On open: nothing to do when the schema is current (no DDL, so a role
/// with only `SELECT, INSERT, UPDATE, DELETE` serves); an older or missing
/// schema is migrated when the role may, and refused
/// (`STATE_SCHEMA_OLDER`) when it may not; a newer one is refused.
pub(super) fn ensure(pool: &Pool, label: &str) -> Result<(), OpenError> {
    let mut conn = pool.connect().map_err(|e| unavailable(label, e))?;
    let current = version(&mut conn).map_err(|e| unavailable(label, e))?;
    drop(conn);
    if current > SCHEMA_VERSION {
        return Err(newer(label, current));
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    match apply(pool) {
        Ok((from, _)) if from > SCHEMA_VERSION => Err(newer(label, from)),
        Ok(_) => Ok(()),
        Err(PgError::Db(e)) if e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
            let found = match current {
                0 => "has no savant-think schema".to_owned(),
                n => format!("has schema version {n}"),
            };
            Err(OpenError::new(
                "STATE_SCHEMA_OLDER",
                format!(
                    "the state database {label} {found}, this savant-think needs version {SCHEMA_VERSION}, \
                     and its user may not create tables ({}): run `savant-think state migrate` as its owner",
                    super::error_message(&e)
                ),
                "run `savant-think state migrate` once as the database's owner (the same URL with the \
                 owner's user), then start this replica again (docs/deploy.md, Migrations and grants)",
            ))
        }
        Err(e) => Err(unavailable(label, e)),
    }
}

fn unavailable(label: &str, e: PgError) -> OpenError {
    OpenError::new(
        "STATE_UNAVAILABLE",
        format!("cannot use the state database {label}: {e}"),
        "check that PostgreSQL runs at that address, that the user, password and database in the \
         URL are right, and that the user may create tables or the schema is migrated (docs/deploy.md)",
    )
}

fn newer(label: &str, current: i32) -> OpenError {
    OpenError::new(
        "STATE_SCHEMA_NEWER",
        format!(
            "the state database {label} has schema version {current}, newer than this \
             savant-think knows ({SCHEMA_VERSION})"
        ),
        "upgrade savant-think on this replica to the version the others run",
    )
}

/// Creates or migrates the schema (`savant-think state migrate`, and
/// [`ensure`] when the role may); `label` names the database in errors.
pub(super) fn migrate(pool: &Pool, label: &str) -> Result<Migration, OpenError> {
    let (from, applied) = apply(pool).map_err(|e| unavailable(label, e))?;
    if from > SCHEMA_VERSION {
        return Err(newer(label, from));
    }
    Ok(Migration { database: label.to_owned(), from, to: SCHEMA_VERSION, applied })
}

/// The version found and the migrations applied, in one transaction under
/// the migration lock (nothing applied when the version is newer).
fn apply(pool: &Pool) -> Result<(i32, Vec<i32>), PgError> {
    let mut conn = pool.connect()?;
    conn.transaction(|tx| {
        tx.execute_sql("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS savant_schema_version (
                 version    integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )?;
        let current: i32 =
            tx.query_one_sql("SELECT coalesce(max(version), 0) FROM savant_schema_version", &[])?.get(0);
        if current > SCHEMA_VERSION {
            return Ok(Outcome::Rollback((current, Vec::new())));
        }
        let mut applied = Vec::new();
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            tx.batch_execute(sql)?;
            let v = i as i32 + 1;
            tx.execute_sql("INSERT INTO savant_schema_version (version) VALUES ($1)", &[&v])?;
            applied.push(v);
        }
        Ok(Outcome::Commit((current, applied)))
    })
}
