//! [`MemStore`]: runs kept in memory only, for `savant-think test` (a
//! workflow's unit tests need no durable state) and anything else that runs
//! the engine without a disk. It keeps the [`StateStore`] contract — a
//! snapshot plus a journal of newer events, exclusive run locks, a stamp that
//! changes with every write — so the engine behaves exactly as over files.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use super::archive::{ArchiveStore, ArchivedRun, archive_id};
use super::objects::{ObjectStore, StoredObject, check_hash, verify};
use super::turns::Turns;
use super::{Loaded, LockPolicy, RunKey, RunLock, Stamp, StateStore, StoreError};

#[derive(Default)]
struct Runs {
    runs: BTreeMap<RunKey, Stored>,
    /// Grows with every write to any run: the stamps.
    writes: u64,
    /// Content-addressed objects by hash.
    objects: BTreeMap<String, (Vec<u8>, std::time::SystemTime)>,
    /// Archived runs by key and archive id: when, and the run as it was.
    archive: BTreeMap<(RunKey, String), (String, Loaded)>,
}

struct Stored {
    snapshot: Value,
    journal: Vec<Value>,
    stamp: Stamp,
}

/// The in-memory [`StateStore`]. Cloning shares the runs.
#[derive(Clone, Default)]
pub struct MemStore {
    runs: Arc<Mutex<Runs>>,
    locks: Arc<Turns<RunKey>>,
    lock_policy: LockPolicy,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn corrupt(key: &RunKey, message: &str) -> StoreError {
    StoreError::Corrupt { path: PathBuf::from(format!("memory:{key}")), message: message.to_owned() }
}

fn version_of(value: &Value) -> Option<u64> {
    value.get("version").and_then(Value::as_u64)
}

impl MemStore {
    /// An empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// This store, waiting for a run's lock as `policy` says.
    pub fn with_lock_policy(mut self, policy: LockPolicy) -> MemStore {
        self.lock_policy = policy;
        self
    }

    fn next_stamp(runs: &mut Runs) -> Stamp {
        runs.writes += 1;
        Stamp::counter(runs.writes)
    }

    /// Appends `event` to the run's journal: the body of both appends.
    fn push(runs: &mut Runs, key: &RunKey, event: &Value) -> Result<Stamp, StoreError> {
        let Some(version) = version_of(event) else {
            return Err(corrupt(key, "an event without an integer version"));
        };
        let stamp = MemStore::next_stamp(runs);
        let Some(stored) = runs.runs.get_mut(key) else {
            return Err(corrupt(key, "an event for a run that has no snapshot"));
        };
        let last = stored.journal.last().or(Some(&stored.snapshot)).and_then(version_of).unwrap_or(0);
        if version <= last && !stored.journal.is_empty() {
            return Err(corrupt(key, "an event whose version does not grow"));
        }
        stored.journal.push(event.clone());
        stored.stamp = stamp;
        Ok(stamp)
    }
}

impl ObjectStore for MemStore {
    fn put_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
        check_hash(hash)?;
        verify(hash, bytes, format!("memory:{hash}"))?;
        // Stored again: the time is refreshed (see `StoredObject`).
        let now = std::time::SystemTime::now();
        relock(&self.runs).objects.entry(hash.to_owned()).or_insert_with(|| (bytes.to_vec(), now)).1 = now;
        Ok(())
    }

    fn get_object(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_hash(hash)?;
        Ok(relock(&self.runs).objects.get(hash).map(|(bytes, _)| bytes.clone()))
    }

    fn objects(&self) -> Result<Vec<StoredObject>, StoreError> {
        let runs = relock(&self.runs);
        Ok(runs
            .objects
            .iter()
            .map(|(hash, (_, at))| StoredObject { hash: hash.clone(), stored_at: *at })
            .collect())
    }

    fn delete_object(&self, hash: &str) -> Result<bool, StoreError> {
        check_hash(hash)?;
        Ok(relock(&self.runs).objects.remove(hash).is_some())
    }
}

impl ArchiveStore for MemStore {
    fn archive_loaded(
        &self,
        key: &RunKey,
        loaded: Option<Loaded>,
        archived_at: &str,
    ) -> Result<Option<ArchivedRun>, StoreError> {
        key.validate()?;
        let Some(loaded) = loaded else { return Ok(None) };
        let id = archive_id(&loaded);
        relock(&self.runs).archive.insert((key.clone(), id.clone()), (archived_at.to_owned(), loaded));
        Ok(Some(ArchivedRun { key: key.clone(), archive_id: id, archived_at: archived_at.to_owned() }))
    }

    fn archived(&self, workflow: Option<&str>) -> Result<Vec<ArchivedRun>, StoreError> {
        let runs = relock(&self.runs);
        let mut out: Vec<ArchivedRun> = runs
            .archive
            .iter()
            .filter(|((k, _), _)| workflow.is_none_or(|w| k.workflow == w))
            .map(|((k, id), (at, _))| ArchivedRun {
                key: k.clone(),
                archive_id: id.clone(),
                archived_at: at.clone(),
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.key, &a.archived_at, &a.archive_id).cmp(&(&b.key, &b.archived_at, &b.archive_id))
        });
        Ok(out)
    }

    fn load_archived(&self, key: &RunKey, archive_id: &str) -> Result<Option<Loaded>, StoreError> {
        key.validate()?;
        Ok(relock(&self.runs).archive.get(&(key.clone(), archive_id.to_owned())).map(|(_, l)| l.clone()))
    }

    fn restore(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError> {
        key.validate()?;
        let mut runs = relock(&self.runs);
        let Some((_, loaded)) = runs.archive.remove(&(key.clone(), archive_id.to_owned())) else {
            return Ok(false);
        };
        let stamp = MemStore::next_stamp(&mut runs);
        runs.runs.insert(key.clone(), Stored { snapshot: loaded.snapshot, journal: loaded.journal, stamp });
        Ok(true)
    }

    fn delete_archived(&self, key: &RunKey, archive_id: &str) -> Result<bool, StoreError> {
        key.validate()?;
        Ok(relock(&self.runs).archive.remove(&(key.clone(), archive_id.to_owned())).is_some())
    }
}

/// No timer index: the engine keeps one in memory.
impl super::TimerIndex for MemStore {}

impl StateStore for MemStore {
    fn lock(&self, key: &RunKey) -> Result<RunLock, StoreError> {
        key.validate()?;
        let turn = self.locks.take(key, &self.lock_policy, self.lock_policy.deadline());
        let turn = turn.map_err(|why| StoreError::Busy { run: key.to_string(), message: why.describe() })?;
        Ok(RunLock::new(turn))
    }

    fn stamp(&self, key: &RunKey) -> Result<Option<Stamp>, StoreError> {
        key.validate()?;
        Ok(relock(&self.runs).runs.get(key).map(|s| s.stamp))
    }

    fn load(&self, key: &RunKey) -> Result<Option<Loaded>, StoreError> {
        key.validate()?;
        Ok(relock(&self.runs).runs.get(key).map(|s| Loaded {
            snapshot: s.snapshot.clone(),
            journal: s.journal.clone(),
            stamp: s.stamp,
        }))
    }

    fn append(&self, key: &RunKey, event: &Value) -> Result<Stamp, StoreError> {
        key.validate()?;
        MemStore::push(&mut relock(&self.runs), key, event)
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
        key.validate()?;
        // Both checked under the runs' mutex, which a lock holder's first
        // read of the run takes too: a lock taken after the check sees the
        // event.
        let mut runs = relock(&self.runs);
        if self.locks.is_held(key) || runs.runs.get(key).map(|s| s.stamp) != Some(*expected) {
            return Ok(None);
        }
        MemStore::push(&mut runs, key, event).map(Some)
    }

    fn write_snapshot(&self, key: &RunKey, snapshot: &Value) -> Result<Stamp, StoreError> {
        key.validate()?;
        if version_of(snapshot).is_none() {
            return Err(corrupt(key, "a snapshot without an integer version"));
        }
        let mut runs = relock(&self.runs);
        let stamp = MemStore::next_stamp(&mut runs);
        runs.runs.insert(key.clone(), Stored { snapshot: snapshot.clone(), journal: Vec::new(), stamp });
        Ok(stamp)
    }

    fn list(&self, workflow: Option<&str>) -> Result<Vec<RunKey>, StoreError> {
        let runs = relock(&self.runs);
        Ok(runs.runs.keys().filter(|k| workflow.is_none_or(|w| k.workflow == w)).cloned().collect())
    }

    fn delete(&self, key: &RunKey) -> Result<bool, StoreError> {
        key.validate()?;
        Ok(relock(&self.runs).runs.remove(key).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_run_is_a_snapshot_and_its_journal_and_every_write_changes_the_stamp() {
        let store = MemStore::new();
        let key = RunKey::new("wf", "r1").unwrap();
        assert_eq!(store.stamp(&key).unwrap(), None);
        assert!(store.append(&key, &json!({"version": 1})).is_err(), "no snapshot yet");
        let _lock = store.lock(&key).unwrap();
        let s1 = store.write_snapshot(&key, &json!({"version": 0})).unwrap();
        let s2 = store.append(&key, &json!({"version": 1})).unwrap();
        assert_ne!(s1, s2);
        assert!(store.append(&key, &json!({"version": 1})).is_err(), "versions grow");
        assert!(store.append(&key, &json!({"no": "version"})).is_err());
        let loaded = store.load(&key).unwrap().unwrap();
        assert_eq!(loaded.journal, vec![json!({"version": 1})]);
        assert_eq!(loaded.stamp, s2);
        assert_eq!(store.list(Some("wf")).unwrap(), vec![key.clone()]);
        assert!(store.list(Some("other")).unwrap().is_empty());
        let archived = store.archive(&key, "2026-01-01T00:00:00Z").unwrap().unwrap();
        assert!(store.delete(&key).unwrap());
        assert_eq!(store.load(&key).unwrap(), None);
        assert_eq!(store.archived(Some("wf")).unwrap(), vec![archived.clone()]);
        assert!(store.restore(&key, &archived.archive_id).unwrap());
        assert_eq!(store.load(&key).unwrap().unwrap().journal, vec![json!({"version": 1})]);
        assert!(store.archived(None).unwrap().is_empty());
    }

    #[test]
    fn objects_are_stored_once_under_their_hash() {
        let store = MemStore::new();
        let hash = crate::state::sha256_hex(b"abc");
        assert!(store.put_object(&hash, b"abd").is_err(), "bytes that do not hash to the name");
        store.put_object(&hash, b"abc").unwrap();
        assert_eq!(store.get_object(&hash).unwrap().as_deref(), Some(&b"abc"[..]));
        assert_eq!(
            store.objects().unwrap().into_iter().map(|o| o.hash).collect::<Vec<_>>(),
            vec![hash.clone()]
        );
        assert!(store.delete_object(&hash).unwrap());
        assert!(store.get_object("nope").is_err());
    }

    #[test]
    fn a_lock_excludes_other_threads_until_dropped() {
        let store = MemStore::new();
        let key = RunKey::new("wf", "r1").unwrap();
        let lock = store.lock(&key).unwrap();
        let other = store.clone();
        let k = key.clone();
        let t = std::thread::spawn(move || {
            let _l = other.lock(&k).unwrap();
            other.write_snapshot(&k, &json!({"version": 7})).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(store.stamp(&key).unwrap(), None, "the other thread waits for the lock");
        drop(lock);
        t.join().unwrap();
        assert!(store.stamp(&key).unwrap().is_some());
    }
}
