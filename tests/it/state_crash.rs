//! Kills writer processes in the middle of their work, many times: the run
//! must always load, and sit at a version boundary (a snapshot, then journal
//! events numbered one after another).
//!
//! The writers are this test binary itself, re-executed on this file's one
//! test with `WRITER_ENV` set: there the test is a writer instead
//! ([`writer_process`], not a test of its own), and writes until killed.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::Root;
use crate::support::generate::Rng;
use savant_think::state::{FileStore, Loaded, RunKey, StateStore};
use serde_json::json;

/// Set in a child: the project root to write into.
const WRITER_ENV: &str = "SAVANT_STATE_CRASH_WRITER";
/// Set in a child: `1` to fsync.
const WRITER_FSYNC_ENV: &str = "SAVANT_STATE_CRASH_FSYNC";
const ROUNDS: usize = 48;
const SNAPSHOT_EVERY: u64 = 10;

fn run_key() -> RunKey {
    RunKey::new("crash", "run-1").unwrap()
}

/// The version a run has reached, after checking that it sits at a version
/// boundary and that its snapshot is the one written for its version.
fn boundary_version(loaded: &Loaded) -> u64 {
    let base = loaded.snapshot["version"].as_u64().expect("snapshot version");
    assert_eq!(loaded.snapshot["count"].as_u64(), Some(base), "snapshot {} is whole", base);
    for (i, event) in loaded.journal.iter().enumerate() {
        assert_eq!(event["version"].as_u64(), Some(base + 1 + i as u64), "journal after snapshot {base}");
        let pad = event["pad"].as_str().expect("pad");
        assert_eq!(pad.len() as u64, event["pad_len"].as_u64().unwrap(), "event is whole");
    }
    base + loaded.journal.len() as u64
}

/// One `next`-like call, as the engine makes it.
fn write_once(store: &FileStore, key: &RunKey, rng: &mut Rng) -> u64 {
    let _lock = store.lock(key).unwrap();
    let next = match store.load(key).unwrap() {
        Some(loaded) => boundary_version(&loaded) + 1,
        None => {
            store.write_snapshot(key, &json!({"version": 0, "count": 0})).unwrap();
            1
        }
    };
    // Mostly small events, sometimes large ones that take several pages.
    let pad_len = if rng.below(16) == 0 { rng.below(64 * 1024) } else { rng.below(200) };
    let pad = "x".repeat(pad_len as usize);
    store.append(key, &json!({"version": next, "pad_len": pad_len, "pad": pad})).unwrap();
    if next.is_multiple_of(SNAPSHOT_EVERY) {
        let history = "h".repeat(rng.below(128 * 1024) as usize);
        store.write_snapshot(key, &json!({"version": next, "count": next, "history": history})).unwrap();
    }
    next
}

/// The body of a writer process (see [`spawn_writer`]): writes into the
/// project at `root` until killed.
fn writer_process(root: std::ffi::OsString) -> ! {
    let fsync = std::env::var(WRITER_FSYNC_ENV).as_deref() == Ok("1");
    let store = FileStore::new(PathBuf::from(root), fsync);
    let key = run_key();
    let mut rng = Rng::seeded();
    loop {
        write_once(&store, &key, &mut rng);
    }
}

/// Writer processes, killed on drop so that a failing test leaves none.
struct Writers(Vec<Child>);

impl Drop for Writers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn_writer(root: &Path, fsync: bool, log: &Path) -> Child {
    let log = File::create(log).unwrap();
    Command::new(std::env::current_exe().unwrap())
        .args([
            "state_crash::killed_writers_leave_a_loadable_state",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_ENV, root)
        .env(WRITER_FSYNC_ENV, if fsync { "1" } else { "0" })
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}

#[test]
fn killed_writers_leave_a_loadable_state() {
    // Re-executed by `spawn_writer`: this process is a writer, not the test.
    if let Some(root) = std::env::var_os(WRITER_ENV) {
        writer_process(root);
    }
    let dir = Root::new("crash");
    let store = FileStore::new(&dir.path, true);
    let key = run_key();
    let mut rng = Rng::seeded();
    eprintln!("rng seed {}", rng.0);
    let (mut reached, mut kills_mid_run) = (0, 0);
    let (mut torn, mut stale) = (0, 0);

    for round in 0..ROUNDS {
        let fsync = round % 2 == 0;
        // Every third round, two writers contend for the lock.
        let count = if round % 3 == 0 { 2 } else { 1 };
        let before = store.stamp(&key).unwrap();
        let logs: Vec<PathBuf> =
            (0..count).map(|i| dir.path.join(format!("writer-{round}-{i}.log"))).collect();
        let mut writers = Writers(logs.iter().map(|log| spawn_writer(&dir.path, fsync, log)).collect());
        // Wait until the writers are at work, then kill them a little later.
        let deadline = Instant::now() + Duration::from_secs(10);
        while store.stamp(&key).unwrap() == before && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_micros(rng.below(80_000)));
        for (child, log) in writers.0.iter_mut().zip(&logs) {
            let exited = child.try_wait().unwrap();
            assert!(exited.is_none(), "writer exited by itself ({exited:?}):\n{}", read(log));
            child.kill().unwrap();
            child.wait().unwrap();
        }
        drop(writers);

        let (is_torn, is_stale) = crash_window(&dir.path);
        torn += usize::from(is_torn);
        stale += usize::from(is_stale);
        let loaded = store.load(&key).unwrap().expect("the run exists");
        let version = boundary_version(&loaded);
        assert!(version >= reached, "round {round}: version went back from {reached} to {version}");
        if version > reached {
            kills_mid_run += 1;
        }
        reached = version;
    }
    eprintln!(
        "reached version {reached}; {kills_mid_run} of {ROUNDS} kills after progress; \
         left a torn journal line {torn} times, stale journal events {stale} times"
    );
    assert!(reached > 0 && kills_mid_run >= ROUNDS / 2, "the writers made too little progress");

    // The run carries on normally after all those crashes.
    let next = write_once(&store, &key, &mut rng);
    assert_eq!(next, reached + 1);
    assert_eq!(boundary_version(&store.load(&key).unwrap().unwrap()), next);
    assert_eq!(store.list(None).unwrap(), vec![key]);
}

/// Whether the kill left a torn journal line, or journal events that the
/// snapshot already holds (only reported: which windows a kill hits is luck).
fn crash_window(root: &Path) -> (bool, bool) {
    let state = root.join(".savant/state");
    let journal = fs::read(state.join("crash__run-1.journal")).unwrap_or_default();
    let torn = !journal.is_empty() && !journal.ends_with(b"\n");
    let snapshot = fs::read(state.join("crash__run-1.json")).unwrap_or_default();
    let snapshot = serde_json::from_slice::<serde_json::Value>(&snapshot).unwrap_or_default();
    let first = journal
        .split(|&b| b == b'\n')
        .next()
        .and_then(|l| serde_json::from_slice::<serde_json::Value>(l).ok());
    let stale = first.is_some_and(|e| e["version"].as_u64() <= snapshot["version"].as_u64());
    (torn, stale)
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}
