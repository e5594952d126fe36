//! The schema of [`super::PgStore`], created and migrated on open.
//!
//! `savant_schema_version` records each migration applied. Opening a store
//! takes a transaction-scoped advisory lock, so replicas starting together
//! migrate one at a time (the others then find nothing to do), and applies
//! the missing migrations in order in that one transaction: a failure
//! leaves the schema as it was. A database migrated by a newer savant-think
//! (a version above the last one known here) is refused rather than used.

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
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// Creates or migrates the schema; `label` names the database in errors.
pub(super) fn migrate(pool: &Pool, label: &str) -> Result<(), OpenError> {
    let unavailable = |e: PgError| {
        OpenError::new(
            "STATE_UNAVAILABLE",
            format!("cannot use the state database {label}: {e}"),
            "check that PostgreSQL runs at that address, that the user, password and database in the \
             URL are right, and that the user may create tables (docs/deploy.md)",
        )
    };
    let mut conn = pool.connect().map_err(unavailable)?;
    let newer = conn
        .transaction(|tx| {
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
                return Ok(Outcome::Rollback(Some(current)));
            }
            for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
                tx.batch_execute(sql)?;
                tx.execute_sql(
                    "INSERT INTO savant_schema_version (version) VALUES ($1)",
                    &[&(i as i32 + 1)],
                )?;
            }
            Ok(Outcome::Commit(None))
        })
        .map_err(unavailable)?;
    if let Some(current) = newer {
        return Err(OpenError::new(
            "STATE_SCHEMA_NEWER",
            format!(
                "the state database {label} has schema version {current}, newer than this \
                 savant-think knows ({SCHEMA_VERSION})"
            ),
            "upgrade savant-think on this replica to the version the others run",
        ));
    }
    Ok(())
}
