use std::cell::Cell;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

thread_local! {
    static CRASH_AFTER_RENAME: Cell<bool> = const { Cell::new(false) };
    static CRASH_BEFORE_RENAME: Cell<bool> = const { Cell::new(false) };
}

/// Read by `write_snapshot`: when set, it stops right before the rename
/// (the new snapshot written to its temporary file), as if the process died.
pub(super) fn crash_before_rename() -> bool {
    CRASH_BEFORE_RENAME.get()
}

/// Read by `write_snapshot`: when set, it stops right after the rename, as
/// if the process died there.
pub(super) fn crash_after_rename() -> bool {
    CRASH_AFTER_RENAME.get()
}

/// Runs `write_snapshot` with a simulated crash after its rename.
fn write_snapshot_then_crash(store: &FileStore, k: &RunKey, snapshot: Value) {
    CRASH_AFTER_RENAME.set(true);
    let result = store.write_snapshot(k, &snapshot);
    CRASH_AFTER_RENAME.set(false);
    assert!(matches!(result, Err(StoreError::Io { message, .. }) if message == "simulated crash"));
}

/// A scratch project root, removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> TestDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("savant-state-{name}-{}-{nanos}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        TestDir(dir)
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn key(workflow: &str, run_id: &str) -> RunKey {
    RunKey::new(workflow, run_id).unwrap()
}

fn event(version: u64) -> Value {
    json!({"version": version, "kind": "step_done", "note": "line\nbreak"})
}

fn state_file(store: &FileStore, key: &RunKey, ext: &str) -> PathBuf {
    store.dir().join(format!("{}__{}.{ext}", key.workflow, key.run_id))
}

fn raw_append(path: &Path, bytes: &[u8]) {
    OpenOptions::new().append(true).open(path).unwrap().write_all(bytes).unwrap();
}

fn versions(loaded: &Loaded) -> Vec<u64> {
    loaded.journal.iter().map(|e| e["version"].as_u64().unwrap()).collect()
}

/// A store with run `k` at snapshot version 1 and events 2..=last.
fn seeded(dir: &TestDir, k: &RunKey, last: u64) -> FileStore {
    let store = FileStore::new(&dir.0, true);
    let _lock = store.lock(k).unwrap();
    store.write_snapshot(k, &json!({"version": 1, "params": {"x": 1}})).unwrap();
    for v in 2..=last {
        store.append(k, &event(v)).unwrap();
    }
    store
}

#[test]
fn round_trip() {
    let dir = TestDir::new("round-trip");
    let k = key("review", "run-1");
    let store = seeded(&dir, &k, 3);
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!(loaded.snapshot, json!({"version": 1, "params": {"x": 1}}));
    assert_eq!(loaded.journal, vec![event(2), event(3)]);
    assert_eq!(Some(loaded.stamp), store.stamp(&k).unwrap());
    let journal = fs::read_to_string(state_file(&store, &k, "journal")).unwrap();
    assert_eq!(journal.lines().count(), 2, "one line per event: {journal:?}");

    let _lock = store.lock(&k).unwrap();
    store.write_snapshot(&k, &json!({"version": 3, "done": true})).unwrap();
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!(loaded.snapshot, json!({"version": 3, "done": true}));
    assert!(loaded.journal.is_empty());
    assert_eq!(fs::metadata(state_file(&store, &k, "journal")).unwrap().len(), 0);
    assert!(!state_file(&store, &k, "json.tmp").exists());
}

#[test]
fn missing_run() {
    let dir = TestDir::new("missing");
    let store = FileStore::new(&dir.0, true);
    let k = key("review", "nope");
    assert_eq!(store.load(&k).unwrap(), None);
    assert_eq!(store.stamp(&k).unwrap(), None);
    assert_eq!(store.list(None).unwrap(), vec![]);
    assert!(!store.dir().exists(), "reads create nothing");
}

#[test]
fn id_validation() {
    for good in ["a", "A9", "review_v2.1-beta", &"x".repeat(128)] {
        assert!(RunKey::new(good, good).is_ok(), "{good}");
    }
    let long = "x".repeat(129);
    for bad in ["", "../x", "a/b", "..", ".hidden", "_a", "-a", "a b", "a\\b", "é", "a\0", &long] {
        assert!(
            matches!(RunKey::new(bad, "r"), Err(StoreError::InvalidId { what: "workflow id", .. })),
            "{bad:?}"
        );
        assert!(
            matches!(RunKey::new("w", bad), Err(StoreError::InvalidId { what: "run id", .. })),
            "{bad:?}"
        );
    }
    // `__` separates the ids in file names, so only workflow ids may hold it.
    assert!(RunKey::new("a__b", "c").is_ok());
    let err = RunKey::new("a", "b__c").unwrap_err();
    assert!(err.to_string().contains("no `__`"), "{err}");
}

#[test]
fn keys_built_by_hand_are_checked() {
    let dir = TestDir::new("by-hand");
    let store = FileStore::new(&dir.0, true);
    let k = RunKey { workflow: "..".into(), run_id: "x".into() };
    assert!(matches!(store.load(&k), Err(StoreError::InvalidId { .. })));
    assert!(matches!(store.lock(&k), Err(StoreError::InvalidId { .. })));
    assert!(matches!(store.list(Some("../x")), Err(StoreError::InvalidId { .. })));
    assert!(!store.dir().exists());
}

#[test]
fn torn_final_line_is_ignored_then_cut() {
    let dir = TestDir::new("torn");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 2);
    let path = state_file(&store, &k, "journal");
    raw_append(&path, br#"{"version":3,"kind":"st"#);
    let torn = store.load(&k).unwrap().unwrap();
    assert_eq!(versions(&torn), vec![2]);

    let _lock = store.lock(&k).unwrap();
    let stamp = store.append(&k, &event(3)).unwrap();
    assert_ne!(stamp, torn.stamp);
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!(versions(&loaded), vec![2, 3]);
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.ends_with('\n') && text.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "{text:?}"
    );
    assert_eq!(text.lines().count(), 2, "torn bytes were cut: {text:?}");
}

#[test]
fn invalid_final_line_with_newline_is_torn_too() {
    let dir = TestDir::new("torn-nl");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 3);
    let path = state_file(&store, &k, "journal");
    raw_append(&path, b"{\"version\":4,\0\0\0\n\0\0");
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![2, 3]);
    let _lock = store.lock(&k).unwrap();
    store.append(&k, &event(4)).unwrap();
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![2, 3, 4]);
}

#[test]
fn torn_line_longer_than_a_read_chunk() {
    let dir = TestDir::new("torn-long");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 1);
    let _lock = store.lock(&k).unwrap();
    let big = json!({"version": 2, "result": "y".repeat(20_000)});
    store.append(&k, &big).unwrap();
    raw_append(&state_file(&store, &k, "journal"), &[b'z'; 30_000]);
    store.append(&k, &event(3)).unwrap();
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!(loaded.journal, vec![big, event(3)]);
}

#[test]
fn corrupt_lines_and_snapshots_are_errors() {
    let dir = TestDir::new("corrupt");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 3);
    let journal = state_file(&store, &k, "journal");
    let good = fs::read(&journal).unwrap();
    fs::write(&journal, [b"garbage\n".as_slice(), &good].concat()).unwrap();
    let err = store.load(&k).unwrap_err();
    assert!(matches!(&err, StoreError::Corrupt { path, .. } if *path == journal), "{err}");
    let _lock = store.lock(&k).unwrap();
    fs::write(&journal, [good.as_slice(), b"garbage\n{\"version\":9}\n"].concat()).unwrap();
    assert!(matches!(store.load(&k), Err(StoreError::Corrupt { .. })));
    fs::write(&journal, [good.as_slice(), b"garbage\nmore garbage\n"].concat()).unwrap();
    assert!(matches!(store.append(&k, &event(4)), Err(StoreError::Corrupt { .. })));
    fs::write(&journal, [good.as_slice(), b"{\"no_version\":1}\n"].concat()).unwrap();
    assert!(matches!(store.load(&k), Err(StoreError::Corrupt { .. })));
    assert!(matches!(store.append(&k, &event(4)), Err(StoreError::Corrupt { .. })));
    fs::write(&journal, &good).unwrap();

    let snapshot = state_file(&store, &k, "json");
    for bad in [&b""[..], b"{\"version\":", b"[1,2]", b"{\"version\":\"1\"}", b"\xff\xfe"] {
        fs::write(&snapshot, bad).unwrap();
        let err = store.load(&k).unwrap_err();
        assert!(matches!(&err, StoreError::Corrupt { path, .. } if *path == snapshot), "{err}");
        assert!(err.to_string().starts_with("corrupt run state in "), "{err}");
    }
}

#[test]
fn writes_that_would_corrupt_are_refused() {
    let dir = TestDir::new("refused");
    let store = FileStore::new(&dir.0, true);
    let k = key("wf", "r1");
    let _lock = store.lock(&k).unwrap();
    assert!(matches!(store.append(&k, &event(1)), Err(StoreError::Corrupt { .. })), "no snapshot yet");
    assert!(!state_file(&store, &k, "journal").exists());
    assert!(matches!(store.write_snapshot(&k, &json!({"v": 1})), Err(StoreError::Corrupt { .. })));
    store.write_snapshot(&k, &json!({"version": 1})).unwrap();
    assert!(matches!(store.append(&k, &json!({"kind": "x"})), Err(StoreError::Corrupt { .. })));
    store.append(&k, &event(5)).unwrap();
    for stale in [5, 4] {
        assert!(matches!(store.append(&k, &event(stale)), Err(StoreError::Corrupt { .. })));
    }
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![5]);
}

#[test]
fn journal_older_than_the_snapshot_is_dropped() {
    let dir = TestDir::new("stale");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 5);
    let journal = state_file(&store, &k, "journal");
    let _lock = store.lock(&k).unwrap();
    write_snapshot_then_crash(&store, &k, json!({"version": 5}));
    assert_eq!(fs::read_to_string(&journal).unwrap().lines().count(), 4, "the crash left events 2..=5");
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), Vec::<u64>::new());
    store.append(&k, &event(6)).unwrap();
    store.append(&k, &event(7)).unwrap();
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![6, 7]);
    assert_eq!(fs::read_to_string(&journal).unwrap().lines().count(), 6, "appends cut nothing valid");
    store.write_snapshot(&k, &json!({"version": 7})).unwrap();
    assert_eq!(fs::metadata(&journal).unwrap().len(), 0);
}

#[test]
fn a_fresh_start_never_revives_old_events() {
    let dir = TestDir::new("fresh");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 5);
    let lock = store.lock(&k).unwrap();
    // Starting the run afresh writes a lower version over it.
    write_snapshot_then_crash(&store, &k, json!({"version": 1, "fresh": true}));
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!((&loaded.snapshot, loaded.journal.len()), (&json!({"version": 1, "fresh": true}), 0));

    // A delete interrupted after the snapshot went leaves a journal behind.
    let journal = state_file(&store, &k, "journal");
    store.append(&k, &event(2)).unwrap();
    let events = fs::read(&journal).unwrap();
    assert!(store.delete(&k).unwrap());
    drop(lock);
    fs::write(&journal, events).unwrap();
    assert_eq!(store.load(&k).unwrap(), None);
    let _lock = store.lock(&k).unwrap();
    write_snapshot_then_crash(&store, &k, json!({"version": 0}));
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), Vec::<u64>::new());
}

fn gen_event(version: u64, generation: &str) -> Value {
    json!({"version": version, "generation": generation, "kind": "step_done"})
}

#[test]
fn a_new_generation_replaces_the_old_run_only_at_the_rename() {
    let dir = TestDir::new("generation");
    let store = FileStore::new(&dir.0, true);
    let k = key("wf", "r1");
    let _lock = store.lock(&k).unwrap();
    let old = json!({"version": 1, "generation": "a"});
    store.write_snapshot(&k, &old).unwrap();
    for v in 2..=5 {
        store.append(&k, &gen_event(v, "a")).unwrap();
    }
    // A fresh start (lower version, new generation) killed before its
    // rename: the old run is whole, journal included.
    CRASH_BEFORE_RENAME.set(true);
    let result = store.write_snapshot(&k, &json!({"version": 0, "generation": "b"}));
    CRASH_BEFORE_RENAME.set(false);
    assert!(matches!(result, Err(StoreError::Io { message, .. }) if message == "simulated crash"));
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!((&loaded.snapshot, versions(&loaded)), (&old, vec![2, 3, 4, 5]));
    // Killed after its rename: the new run, without the old events.
    let new = json!({"version": 0, "generation": "b"});
    write_snapshot_then_crash(&store, &k, new.clone());
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!((&loaded.snapshot, loaded.journal.len()), (&new, 0));
    // The new run's first event cuts the old ones away.
    store.append(&k, &gen_event(1, "b")).unwrap();
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![1]);
    let journal = state_file(&store, &k, "journal");
    assert_eq!(fs::read_to_string(&journal).unwrap().lines().count(), 1);
}

#[test]
fn stamps_change_with_every_write() {
    let dir = TestDir::new("stamps");
    let k = key("wf", "r1");
    let store = seeded(&dir, &k, 1);
    let _lock = store.lock(&k).unwrap();
    let mut seen = vec![store.stamp(&k).unwrap().unwrap()];
    for v in 2..6 {
        // Same bytes every time: the stamp must still move.
        seen.push(store.write_snapshot(&k, &json!({"version": 1})).unwrap());
        seen.push(store.append(&k, &event(v)).unwrap());
        assert_eq!(store.stamp(&k).unwrap(), seen.last().copied());
    }
    for (i, a) in seen.iter().enumerate() {
        assert!(!seen[i + 1..].contains(a), "stamp {i} repeats");
    }
}

#[test]
fn list_and_delete() {
    let dir = TestDir::new("list");
    let store = FileStore::new(&dir.0, true);
    let keys = [key("b", "r2"), key("a", "r1"), key("b", "r1"), key("a__x", "r1"), key("a_", "r1")];
    for k in &keys {
        let _lock = store.lock(k).unwrap();
        store.write_snapshot(k, &json!({"version": 1})).unwrap();
        store.append(k, &event(2)).unwrap();
    }
    fs::write(store.dir().join("c__r1.json.tmp"), b"{").unwrap();
    fs::write(store.dir().join("notes.txt"), b"").unwrap();
    fs::write(store.dir().join("x__bad id.json"), b"{}").unwrap();
    let mut sorted = keys.to_vec();
    sorted.sort();
    assert_eq!(store.list(None).unwrap(), sorted);
    assert_eq!(store.list(Some("b")).unwrap(), vec![key("b", "r1"), key("b", "r2")]);
    assert_eq!(store.list(Some("a_")).unwrap(), vec![key("a_", "r1")]);
    assert_eq!(store.list(Some("zzz")).unwrap(), vec![]);

    let k = key("b", "r1");
    {
        let _lock = store.lock(&k).unwrap();
        fs::write(state_file(&store, &k, "json.tmp"), b"{").unwrap();
        assert!(store.delete(&k).unwrap());
        assert!(!store.delete(&k).unwrap());
    }
    for ext in ["json", "journal", "lock", "json.tmp"] {
        assert!(!state_file(&store, &k, ext).exists(), "{ext}");
    }
    assert_eq!(store.load(&k).unwrap(), None);
    assert_eq!(store.list(Some("b")).unwrap(), vec![key("b", "r2")]);
    // The run can be created again, under a fresh lock file.
    let _lock = store.lock(&k).unwrap();
    store.write_snapshot(&k, &json!({"version": 1})).unwrap();
    assert_eq!(versions(&store.load(&k).unwrap().unwrap()), Vec::<u64>::new());
}

#[test]
fn fsync_off_path() {
    let dir = TestDir::new("nofsync");
    let store = FileStore::new(&dir.0, false);
    let k = key("wf", "r1");
    let _lock = store.lock(&k).unwrap();
    store.write_snapshot(&k, &json!({"version": 1})).unwrap();
    store.append(&k, &event(2)).unwrap();
    store.write_snapshot(&k, &json!({"version": 2})).unwrap();
    store.append(&k, &event(3)).unwrap();
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!((&loaded.snapshot, versions(&loaded)), (&json!({"version": 2}), vec![3]));
    assert!(store.delete(&k).unwrap());
}

#[test]
fn fsync_setting() {
    assert!(parse_fsync(None, true));
    assert!(!parse_fsync(None, false));
    assert!(!parse_fsync(Some("0"), true));
    assert!(!parse_fsync(Some("false"), true));
    assert!(parse_fsync(Some("1"), false));
    assert!(parse_fsync(Some("true"), false));
    assert!(parse_fsync(Some("maybe"), true));
}

/// The last version a loaded run has reached, after checking that versions
/// are contiguous from the snapshot's.
fn contiguous_version(loaded: &Loaded) -> u64 {
    let base = loaded.snapshot["version"].as_u64().unwrap();
    assert_eq!(loaded.snapshot["count"].as_u64(), Some(base), "snapshot materializes its version");
    for (i, v) in versions(loaded).into_iter().enumerate() {
        assert_eq!(v, base + 1 + i as u64, "journal follows snapshot {base}");
    }
    base + loaded.journal.len() as u64
}

/// One `next`-like call: lock, load, append the next version, sometimes
/// snapshot.
fn step(store: &FileStore, k: &RunKey) -> u64 {
    let _lock = store.lock(k).unwrap();
    let next = contiguous_version(&store.load(k).unwrap().unwrap()) + 1;
    store.append(k, &json!({"version": next, "by": format!("{:?}", std::thread::current().id())})).unwrap();
    if next.is_multiple_of(25) {
        store.write_snapshot(k, &json!({"version": next, "count": next})).unwrap();
    }
    next
}

#[test]
fn threads_appending_under_the_lock_lose_nothing() {
    let dir = TestDir::new("threads");
    let k = key("wf", "r1");
    let store = Arc::new(FileStore::new(&dir.0, false));
    {
        let _lock = store.lock(&k).unwrap();
        store.write_snapshot(&k, &json!({"version": 0, "count": 0})).unwrap();
    }
    let (threads, per_thread) = (8, 60);
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (store, k) = (Arc::clone(&store), k.clone());
            std::thread::spawn(move || (0..per_thread).map(|_| step(&store, &k)).collect::<Vec<_>>())
        })
        .collect();
    // A reader without the lock always sees a consistent state.
    let reader = {
        let (store, k) = (Arc::clone(&store), k.clone());
        std::thread::spawn(move || {
            let mut last = 0;
            for _ in 0..200 {
                let loaded = store.load(&k).unwrap().unwrap();
                let v = contiguous_version(&loaded);
                assert!(v >= last, "versions never go back");
                last = v;
            }
        })
    };
    let mut all: Vec<u64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    reader.join().unwrap();
    all.sort();
    assert_eq!(all, (1..=threads * per_thread).collect::<Vec<_>>(), "every call got its own version");
    let loaded = store.load(&k).unwrap().unwrap();
    assert_eq!(contiguous_version(&loaded), threads * per_thread);
    // A second store on the same root shares the lock.
    let other = FileStore::new(&dir.0, false);
    assert_eq!(step(&other, &k), threads * per_thread + 1);
}

#[test]
fn errors_display() {
    let e = StoreError::Io { path: "/x/y".into(), message: "denied".into() };
    assert_eq!(e.to_string(), "state I/O error on /x/y: denied");
    let e = RunKey::new("a/b", "r").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid workflow id \"a/b\": expected 1 to 128 characters from A-Z a-z 0-9 _ . -, \
         starting with a letter or digit"
    );
}
