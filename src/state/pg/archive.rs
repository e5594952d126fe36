//! [`super::PgStore`]'s archived runs and objects (see `crate::state::archive`
//! and `crate::state::objects` for what they are): rows of `savant_archive`
//! and `savant_objects` (migration 2). A restore is one transaction: the run
//! and its journal appear, and the archive row goes, together.

use serde_json::Value;

use super::pool::Outcome;
use super::{PgStore, generation_text, offload, version_param};
use crate::state::archive::{self, check_archive_id, entry_json, parse_entry};
use crate::state::objects::{check_hash, verify};
use crate::state::{
    ArchiveStore, ArchivedRun, Loaded, ObjectStore, RunKey, Stamp, StoreError, StoredObject,
    check_workflow_id,
};

const ARCHIVE: &str = "INSERT INTO savant_archive (workflow, run_id, archive_id, archived_at, snapshot, journal) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workflow, run_id, archive_id) DO NOTHING";
const ARCHIVED: &str = "SELECT workflow, run_id, archive_id, archived_at FROM savant_archive \
     WHERE $1::text IS NULL OR workflow = $1 \
     ORDER BY workflow COLLATE \"C\", run_id COLLATE \"C\", archived_at, archive_id";
const LOAD_ARCHIVED: &str = "SELECT archived_at, snapshot, journal FROM savant_archive \
     WHERE workflow = $1 AND run_id = $2 AND archive_id = $3";
const DELETE_ARCHIVED: &str =
    "DELETE FROM savant_archive WHERE workflow = $1 AND run_id = $2 AND archive_id = $3";
const TAKE_ARCHIVED: &str = "DELETE FROM savant_archive WHERE workflow = $1 AND run_id = $2 AND archive_id = $3 \
     RETURNING archived_at, snapshot, journal";
const INSERT_RUN: &str = "INSERT INTO savant_runs (workflow, run_id, snapshot, version, generation, stamp, updated_at) \
     VALUES ($1, $2, $3, $4, $5, nextval('savant_stamp'), now())";
const INSERT_EVENT: &str =
    "INSERT INTO savant_events (workflow, run_id, version, body) VALUES ($1, $2, $3, $4)";
const PUT_OBJECT: &str = "INSERT INTO savant_objects (hash, bytes) VALUES ($1, $2) \
     ON CONFLICT (hash) DO UPDATE SET created_at = now()";
const GET_OBJECT: &str = "SELECT bytes FROM savant_objects WHERE hash = $1";
const OBJECTS: &str = "SELECT hash, created_at FROM savant_objects ORDER BY hash COLLATE \"C\"";
const DELETE_OBJECT: &str = "DELETE FROM savant_objects WHERE hash = $1";
impl ArchiveStore for PgStore {
    fn archive_loaded(
        &self,
        key: &RunKey,
        loaded: Option<Loaded>,
        archived_at: &str,
    ) -> Result<Option<ArchivedRun>, StoreError> {
        let Some(loaded) = loaded else { return Ok(None) };
        let archive_id = archive::archive_id(&loaded);
        let entry = entry_json(&loaded, archived_at);
        let snapshot = entry["snapshot"].to_string();
        let journal = entry["journal"].to_string();
        offload(|| {
            self.with_conn(Some(key), true, |c| {
                let s = c.statement(ARCHIVE)?;
                c.execute(&s, &[&key.workflow, &key.run_id, &archive_id, &archived_at, &snapshot, &journal])
            })
        })?;
        Ok(Some(ArchivedRun { key: key.clone(), archive_id, archived_at: archived_at.to_owned() }))
    }

    fn archived(&self, workflow: Option<&str>) -> Result<Vec<ArchivedRun>, StoreError> {
        if let Some(workflow) = workflow {
            check_workflow_id(workflow)?;
        }
        let rows = offload(|| {
            self.with_conn(None, true, |c| {
                let s = c.statement(ARCHIVED)?;
                c.query(&s, &[&workflow])
            })
        })?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let key = RunKey::new(r.get::<_, String>(0), r.get::<_, String>(1)).ok()?;
                Some(ArchivedRun { key, archive_id: r.get(2), archived_at: r.get(3) })
            })
            .collect())
    }

    fn load_archived(&self, key: &RunKey, archive_id: &str) -> Result<Option<Loaded>, StoreError> {
        key.validate()?;
        check_archive_id(archive_id)?;
        let row = offload(|| {
            self.with_conn(Some(key), true, |c| {
                let s = c.statement(LOAD_ARCHIVED)?;
                let row = c.query_opt(&s, &[&key.workflow, &key.run_id, &archive_id])?;
                Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
            })
        })?;
        self.entry(key, row)
    }

    fn restore(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError> {
        key.validate()?;
        check_archive_id(archive_id)?;
        let restored = offload(|| {
            self.with_conn(Some(key), false, |c| {
                let (take, insert_run, insert_event) =
                    (c.statement(TAKE_ARCHIVED)?, c.statement(INSERT_RUN)?, c.statement(INSERT_EVENT)?);
                c.transaction(|tx| {
                    let Some(row) = tx.query_opt(&take, &[&key.workflow, &key.run_id, &archive_id])? else {
                        return Ok(Outcome::Rollback(None));
                    };
                    let row: (String, String, String) = (row.get(0), row.get(1), row.get(2));
                    let Ok(Some(loaded)) = self.entry(key, Some(row)) else {
                        return Ok(Outcome::Rollback(Some(false)));
                    };
                    let snapshot = loaded.snapshot.to_string();
                    let version =
                        version_param(crate::state::journal::version_of(&loaded.snapshot).unwrap_or(0));
                    let generation = generation_text(&loaded.snapshot);
                    tx.execute(&insert_run, &[&key.workflow, &key.run_id, &snapshot, &version, &generation])?;
                    for event in &loaded.journal {
                        let v = version_param(crate::state::journal::version_of(event).unwrap_or(0));
                        tx.execute(&insert_event, &[&key.workflow, &key.run_id, &v, &event.to_string()])?;
                    }
                    Ok(Outcome::Commit(Some(true)))
                })
            })
        })?;
        match restored {
            None => Ok(false),
            Some(true) => Ok(true),
            Some(false) => Err(self.corrupt(key, "an archived run cannot be read")),
        }
    }

    fn delete_archived(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError> {
        key.validate()?;
        check_archive_id(archive_id)?;
        offload(|| {
            self.with_conn(Some(key), false, |c| {
                let s = c.statement(DELETE_ARCHIVED)?;
                Ok(c.execute(&s, &[&key.workflow, &key.run_id, &archive_id])? > 0)
            })
        })
    }
}

impl PgStore {
    fn entry(
        &self,
        key: &RunKey,
        row: Option<(String, String, String)>,
    ) -> Result<Option<Loaded>, StoreError> {
        let Some((at, snapshot, journal)) = row else { return Ok(None) };
        let parse = |text: &str| serde_json::from_str::<Value>(text).ok();
        let value =
            serde_json::json!({"archived_at": at, "snapshot": parse(&snapshot), "journal": parse(&journal)});
        let (_, snapshot, journal) =
            parse_entry(value).ok_or_else(|| self.corrupt(key, "an archived run cannot be read"))?;
        Ok(Some(Loaded { snapshot, journal, stamp: Stamp::counter(0) }))
    }
}

impl ObjectStore for PgStore {
    fn put_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
        check_hash(hash)?;
        verify(hash, bytes, self.place(None))?;
        offload(|| {
            self.with_conn(None, true, |c| {
                let s = c.statement(PUT_OBJECT)?;
                c.execute(&s, &[&hash, &bytes]).map(drop)
            })
        })
    }

    fn get_object(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_hash(hash)?;
        let bytes: Option<Vec<u8>> = offload(|| {
            self.with_conn(None, true, |c| {
                let s = c.statement(GET_OBJECT)?;
                Ok(c.query_opt(&s, &[&hash])?.map(|r| r.get(0)))
            })
        })?;
        if let Some(bytes) = &bytes {
            verify(hash, bytes, self.place(None))?;
        }
        Ok(bytes)
    }

    fn objects(&self) -> Result<Vec<StoredObject>, StoreError> {
        let rows = offload(|| {
            self.with_conn(None, true, |c| {
                let s = c.statement(OBJECTS)?;
                c.query(&s, &[])
            })
        })?;
        Ok(rows.iter().map(|r| StoredObject { hash: r.get(0), stored_at: r.get(1) }).collect())
    }

    fn delete_object(&self, hash: &str) -> Result<bool, StoreError> {
        check_hash(hash)?;
        offload(|| {
            self.with_conn(None, false, |c| {
                let s = c.statement(DELETE_OBJECT)?;
                Ok(c.execute(&s, &[&hash])? > 0)
            })
        })
    }
}
