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

pub(super) fn key(workflow: &str, run_id: &str) -> RunKey {
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
    seed(&store, k, last);
    store
}

pub(super) fn seed(store: &dyn StateStore, k: &RunKey, last: u64) {
    let _lock = store.lock(k).unwrap();
    store.write_snapshot(k, &json!({"version": 1, "params": {"x": 1}})).unwrap();
    for v in 2..=last {
        store.append(k, &event(v)).unwrap();
    }
}

/// One store under test, and how to open another on the same state (a
/// second process or replica).
pub(super) struct Backend {
    pub name: &'static str,
    pub store: Arc<dyn StateStore>,
    pub open: Box<dyn Fn(bool) -> Arc<dyn StateStore>>,
    /// The file store's state directory.
    pub files: Option<PathBuf>,
    _dir: Option<TestDir>,
}

/// The stores every behaviour test runs against: the file store, and
/// PostgreSQL (a schema of its own in the shared throwaway cluster) when it
/// is installed; see `pg::cluster::for_test` for the skip rule.
pub(super) fn backends(test: &str) -> Vec<Backend> {
    let dir = TestDir::new(test);
    let root = dir.0.clone();
    let open = move |fsync| Arc::new(FileStore::new(&root, fsync)) as Arc<dyn StateStore>;
    #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
    let mut out = vec![Backend {
        name: "file",
        store: open(true),
        files: Some(dir.0.join(".savant").join("state")),
        open: Box::new(open),
        _dir: Some(dir),
    }];
    #[cfg(feature = "postgres")]
    if let Some(cluster) = pg::cluster::for_test(&format!("state::tests::{test} on postgres")) {
        let url = cluster.fresh_schema(&format!("t_{}", test.replace('-', "_"))).unwrap();
        let open = move |fsync| Arc::new(PgStore::open(&url, fsync).unwrap()) as Arc<dyn StateStore>;
        out.push(Backend {
            name: "postgres",
            store: open(true),
            open: Box::new(open),
            files: None,
            _dir: None,
        });
    }
    out
}

#[test]
fn round_trip() {
    let k = key("review", "run-1");
    for b in backends("round-trip") {
        let store = &*b.store;
        seed(store, &k, 3);
        let loaded = store.load(&k).unwrap().unwrap();
        assert_eq!(loaded.snapshot, json!({"version": 1, "params": {"x": 1}}), "{}", b.name);
        assert_eq!(loaded.journal, vec![event(2), event(3)], "{}", b.name);
        assert_eq!(Some(loaded.stamp), store.stamp(&k).unwrap(), "{}", b.name);

        let _lock = store.lock(&k).unwrap();
        // Key order and odd strings come back as written.
        let done = json!({"version": 3, "z": 1, "a": "é\n\u{0}", "done": true});
        store.write_snapshot(&k, &done).unwrap();
        let loaded = store.load(&k).unwrap().unwrap();
        assert_eq!(serde_json::to_string(&loaded.snapshot).unwrap(), done.to_string(), "{}", b.name);
        assert!(loaded.journal.is_empty(), "{}", b.name);
    }
}

#[test]
fn file_layout() {
    let dir = TestDir::new("layout");
    let k = key("review", "run-1");
    let store = seeded(&dir, &k, 3);
    let journal = fs::read_to_string(state_file(&store, &k, "journal")).unwrap();
    assert_eq!(journal.lines().count(), 2, "one line per event: {journal:?}");
    let _lock = store.lock(&k).unwrap();
    store.write_snapshot(&k, &json!({"version": 3, "done": true})).unwrap();
    assert_eq!(fs::metadata(state_file(&store, &k, "journal")).unwrap().len(), 0);
    assert!(!state_file(&store, &k, "json.tmp").exists());
}

#[test]
fn missing_run() {
    let k = key("review", "nope");
    for b in backends("missing") {
        let store = &*b.store;
        assert_eq!(store.load(&k).unwrap(), None, "{}", b.name);
        assert_eq!(store.stamp(&k).unwrap(), None, "{}", b.name);
        assert_eq!(store.list(None).unwrap(), vec![], "{}", b.name);
        if let Some(files) = &b.files {
            assert!(!files.exists(), "reads create nothing");
        }
    }
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
    let k = RunKey { workflow: "..".into(), run_id: "x".into() };
    for b in backends("by-hand") {
        let store = &*b.store;
        assert!(matches!(store.load(&k), Err(StoreError::InvalidId { .. })), "{}", b.name);
        assert!(matches!(store.stamp(&k), Err(StoreError::InvalidId { .. })), "{}", b.name);
        assert!(matches!(store.lock(&k), Err(StoreError::InvalidId { .. })), "{}", b.name);
        assert!(matches!(store.list(Some("../x")), Err(StoreError::InvalidId { .. })), "{}", b.name);
        if let Some(files) = &b.files {
            assert!(!files.exists());
        }
    }
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
    let k = key("wf", "r1");
    for b in backends("refused") {
        let store = &*b.store;
        let _lock = store.lock(&k).unwrap();
        assert!(matches!(store.append(&k, &event(1)), Err(StoreError::Corrupt { .. })), "no snapshot yet");
        if let Some(files) = &b.files {
            assert!(!files.join("wf__r1.journal").exists());
        }
        assert!(matches!(store.write_snapshot(&k, &json!({"v": 1})), Err(StoreError::Corrupt { .. })));
        assert_eq!(store.load(&k).unwrap(), None, "{}: a refused snapshot creates no run", b.name);
        store.write_snapshot(&k, &json!({"version": 1})).unwrap();
        assert!(matches!(store.append(&k, &json!({"kind": "x"})), Err(StoreError::Corrupt { .. })));
        store.append(&k, &event(5)).unwrap();
        for stale in [5, 4] {
            let refused = store.append(&k, &event(stale));
            assert!(matches!(refused, Err(StoreError::Corrupt { .. })), "{}: {refused:?}", b.name);
        }
        assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![5], "{}", b.name);
    }
}

/// Starting a run afresh (a lower version, a new generation) replaces the
/// old run and its journal at once.
#[test]
fn a_new_generation_replaces_the_whole_run() {
    let k = key("wf", "r1");
    for b in backends("new-generation") {
        let store = &*b.store;
        let _lock = store.lock(&k).unwrap();
        store.write_snapshot(&k, &json!({"version": 1, "generation": "a"})).unwrap();
        for v in 2..=5 {
            store.append(&k, &gen_event(v, "a")).unwrap();
        }
        let new = json!({"version": 0, "generation": "b"});
        store.write_snapshot(&k, &new).unwrap();
        let loaded = store.load(&k).unwrap().unwrap();
        assert_eq!((&loaded.snapshot, loaded.journal.len()), (&new, 0), "{}", b.name);
        store.append(&k, &gen_event(1, "b")).unwrap();
        store.append(&k, &gen_event(2, "b")).unwrap();
        assert_eq!(versions(&store.load(&k).unwrap().unwrap()), vec![1, 2], "{}", b.name);
    }
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
    let k = key("wf", "r1");
    for b in backends("stamps") {
        let store = &*b.store;
        seed(store, &k, 1);
        let other = (b.open)(true);
        let _lock = store.lock(&k).unwrap();
        let mut seen = vec![store.stamp(&k).unwrap().unwrap()];
        for v in 2..6 {
            // Same bytes every time: the stamp must still move.
            seen.push(store.write_snapshot(&k, &json!({"version": 1})).unwrap());
            seen.push(store.append(&k, &event(v)).unwrap());
            assert_eq!(store.stamp(&k).unwrap(), seen.last().copied(), "{}", b.name);
            // Another process or replica sees the same stamp.
            assert_eq!(other.stamp(&k).unwrap(), seen.last().copied(), "{}", b.name);
        }
        // Deleted and created again: still a new stamp.
        assert!(store.delete(&k).unwrap());
        seen.push(store.write_snapshot(&k, &json!({"version": 1})).unwrap());
        for (i, a) in seen.iter().enumerate() {
            assert!(!seen[i + 1..].contains(a), "{}: stamp {i} repeats", b.name);
        }
    }
}

#[test]
fn list_and_delete() {
    for b in backends("list") {
        let store = &*b.store;
        let keys = [key("b", "r2"), key("a", "r1"), key("b", "r1"), key("a__x", "r1"), key("a_", "r1")];
        for k in &keys {
            let _lock = store.lock(k).unwrap();
            store.write_snapshot(k, &json!({"version": 1})).unwrap();
            store.append(k, &event(2)).unwrap();
        }
        if let Some(files) = &b.files {
            fs::write(files.join("c__r1.json.tmp"), b"{").unwrap();
            fs::write(files.join("notes.txt"), b"").unwrap();
            fs::write(files.join("x__bad id.json"), b"{}").unwrap();
        }
        let mut sorted = keys.to_vec();
        sorted.sort();
        assert_eq!(store.list(None).unwrap(), sorted, "{}", b.name);
        assert_eq!(store.list(Some("b")).unwrap(), vec![key("b", "r1"), key("b", "r2")], "{}", b.name);
        assert_eq!(store.list(Some("a_")).unwrap(), vec![key("a_", "r1")], "{}", b.name);
        assert_eq!(store.list(Some("zzz")).unwrap(), vec![], "{}", b.name);

        let k = key("b", "r1");
        {
            let _lock = store.lock(&k).unwrap();
            if let Some(files) = &b.files {
                fs::write(files.join("b__r1.json.tmp"), b"{").unwrap();
            }
            assert!(store.delete(&k).unwrap(), "{}", b.name);
            assert!(!store.delete(&k).unwrap(), "{}", b.name);
        }
        if let Some(files) = &b.files {
            for ext in ["json", "journal", "lock", "json.tmp"] {
                assert!(!files.join(format!("b__r1.{ext}")).exists(), "{ext}");
            }
        }
        assert_eq!(store.load(&k).unwrap(), None, "{}", b.name);
        assert_eq!(store.list(Some("b")).unwrap(), vec![key("b", "r2")], "{}", b.name);
        // The run can be created again, under a fresh lock.
        let _lock = store.lock(&k).unwrap();
        store.write_snapshot(&k, &json!({"version": 1})).unwrap();
        assert_eq!(versions(&store.load(&k).unwrap().unwrap()), Vec::<u64>::new(), "{}", b.name);
    }
}

#[test]
fn fsync_off_path() {
    let k = key("wf", "r1");
    for b in backends("nofsync") {
        let store = (b.open)(false);
        let _lock = store.lock(&k).unwrap();
        store.write_snapshot(&k, &json!({"version": 1})).unwrap();
        store.append(&k, &event(2)).unwrap();
        store.write_snapshot(&k, &json!({"version": 2})).unwrap();
        store.append(&k, &event(3)).unwrap();
        let loaded = b.store.load(&k).unwrap().unwrap();
        assert_eq!((&loaded.snapshot, versions(&loaded)), (&json!({"version": 2}), vec![3]), "{}", b.name);
        assert!(store.delete(&k).unwrap());
    }
}

#[test]
fn fsync_setting() {
    assert_eq!(parse_fsync("0"), Some(false));
    assert_eq!(parse_fsync("false"), Some(false));
    assert_eq!(parse_fsync("1"), Some(true));
    assert_eq!(parse_fsync("true"), Some(true));
    assert_eq!(parse_fsync("maybe"), None);
    assert_eq!(parse_fsync(""), None);
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
fn step(store: &dyn StateStore, k: &RunKey) -> u64 {
    let _lock = store.lock(k).unwrap();
    let next = contiguous_version(&store.load(k).unwrap().unwrap()) + 1;
    store.append(k, &json!({"version": next, "by": format!("{:?}", std::thread::current().id())})).unwrap();
    if next.is_multiple_of(25) {
        store.write_snapshot(k, &json!({"version": next, "count": next})).unwrap();
    }
    next
}

/// Threads of two stores on the same state (two processes, two replicas)
/// take turns under the run lock: every call gets its own version.
#[test]
fn threads_appending_under_the_lock_lose_nothing() {
    let k = key("wf", "r1");
    for b in backends("threads") {
        let stores = [(b.open)(false), (b.open)(false)];
        {
            let _lock = stores[0].lock(&k).unwrap();
            stores[0].write_snapshot(&k, &json!({"version": 0, "count": 0})).unwrap();
        }
        let (threads, per_thread) = (8, 60);
        let workers: Vec<_> = (0..threads)
            .map(|i| {
                let (store, k) = (Arc::clone(&stores[i as usize % 2]), k.clone());
                std::thread::spawn(move || (0..per_thread).map(|_| step(&*store, &k)).collect::<Vec<_>>())
            })
            .collect();
        // A reader without the lock always sees a consistent state.
        let reader = {
            let (store, k) = (Arc::clone(&b.store), k.clone());
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
        assert_eq!(
            all,
            (1..=threads * per_thread).collect::<Vec<_>>(),
            "{}: every call its own version",
            b.name
        );
        let loaded = b.store.load(&k).unwrap().unwrap();
        assert_eq!(contiguous_version(&loaded), threads * per_thread, "{}", b.name);
        assert_eq!(step(&*b.store, &k), threads * per_thread + 1, "{}", b.name);
    }
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

/// A store keeps the journal it appended to open and remembers its end; a
/// write by anyone else in between (another process's append, bytes added
/// by hand, a new snapshot) changes the stamp, so the next append reads the
/// journal again and goes after that write (a torn tail still cut). Each
/// append is the engine's: with the stamp it read under the lock.
#[test]
fn an_append_after_another_writer_sees_its_write() {
    let dir = TestDir::new("kept");
    let k = key("wf", "r1");
    let (a, b) = (FileStore::new(&dir.0, false), FileStore::new(&dir.0, false));
    seed(&a, &k, 2);
    let append = |store: &FileStore, v: u64| {
        let _lock = store.lock(&k).unwrap();
        let after = store.append_after(&k, &event(v), &store.stamp(&k)?.unwrap())?;
        assert_eq!(store.stamp(&k).unwrap(), Some(after), "the stamp returned is the run's");
        Ok::<_, StoreError>(())
    };
    append(&b, 3).unwrap();
    let Err(StoreError::Corrupt { message, .. }) = append(&a, 3) else { panic!("not refused as corrupt") };
    assert!(message.contains("after version 3"), "{message}");
    append(&a, 4).unwrap();
    raw_append(&state_file(&a, &k, "journal"), b"{\"version\": 5, \"to");
    append(&a, 5).unwrap();
    assert_eq!(versions(&b.load(&k).unwrap().unwrap()), vec![2, 3, 4, 5]);
    {
        let _lock = b.lock(&k).unwrap();
        b.write_snapshot(&k, &json!({"version": 5})).unwrap();
    }
    append(&a, 6).unwrap();
    let loaded = b.load(&k).unwrap().unwrap();
    assert_eq!((loaded.snapshot["version"].as_u64(), versions(&loaded)), (Some(5), vec![6]));
    let text = fs::read_to_string(state_file(&a, &k, "journal")).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
}

/// A released lock file stays open for the next lock; if its file was
/// removed meanwhile, that open file excludes nobody and is not trusted.
#[test]
fn a_lock_file_removed_while_kept_open_is_not_trusted() {
    let dir = TestDir::new("lockfile");
    let k = key("wf", "r1");
    let store = FileStore::new(&dir.0, false);
    seed(&store, &k, 1);
    let lock_path = state_file(&store, &k, "lock");
    fs::remove_file(&lock_path).unwrap();
    {
        let _lock = store.lock_existing(&k).unwrap().expect("the run exists");
        assert!(lock_path.exists(), "held on a new lock file, the one others can see");
    }
    {
        let _lock = store.lock(&k).unwrap();
        assert!(store.delete(&k).unwrap());
    }
    assert!(store.lock_existing(&k).unwrap().is_none(), "the run is gone");
    assert!(!lock_path.exists(), "no lock file left for a run that is not there");
}
