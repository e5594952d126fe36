//! `next` without the run's lock (`runtime/engine/unlocked.rs`): on a
//! store that appends conditionally, an engine that holds the run in its
//! cache writes without taking the lock, only while no one holds it and the
//! run is unchanged. Two engines on one store stand for two replicas; each
//! test runs on the memory store and on PostgreSQL (when a throwaway cluster
//! can be started; skipped with a note otherwise, as in `replicas.rs`).

use crate::common::Root;
use crate::support::{generate, next_args, next_json};
use savant_think::runtime::args::IfExists;
use savant_think::runtime::{Engine, ErrorCode};
use savant_think::state::{LockPolicy, MemStore, RunKey, StateStore};
use serde_json::{Value, json};
use std::time::Duration;

const ITEMS: usize = 6;

/// A lock wait short enough for a test that expects it to time out.
fn short_wait() -> LockPolicy {
    LockPolicy { timeout: Duration::from_millis(300), ..LockPolicy::default() }
}

/// Three handles on one store's runs, per store: engine A's, engine B's,
/// and one for the test itself. `wait` is how A and B wait for a lock.
fn stores(name: &str, wait: LockPolicy) -> Vec<(&'static str, [Box<dyn StateStore>; 3])> {
    let mem = MemStore::new().with_lock_policy(wait);
    let mut out: Vec<(&'static str, [Box<dyn StateStore>; 3])> =
        vec![("memory", [Box::new(mem.clone()), Box::new(mem.clone()), Box::new(mem)])];
    #[cfg(feature = "postgres")]
    if let Some(cluster) =
        savant_think::state::pg::cluster::for_test(&format!("unlocked_next::{name} on postgres"))
    {
        let url = cluster.fresh_schema(name).unwrap();
        let options = savant_think::state::StoreOptions { lock: wait, ..Default::default() };
        let open = || {
            Box::new(savant_think::state::PgStore::open_with(&url, &options).unwrap()) as Box<dyn StateStore>
        };
        out.push(("postgres", [open(), open(), open()]));
    }
    #[cfg(not(feature = "postgres"))]
    let _ = name;
    out
}

fn engines(root: &Root, [a, b, raw]: [Box<dyn StateStore>; 3]) -> (Engine, Engine, Box<dyn StateStore>) {
    let engine = |store| Engine::with_store(root.path.clone(), Default::default(), store);
    (engine(a), engine(b), raw)
}

/// Plans run `run` of `loop`. Each test has its own run id: the tests run
/// at once, and PostgreSQL's advisory locks are per database, not per schema.
fn plan(engine: &Engine, run: &str) {
    plan_of(engine, run, ITEMS);
}

fn plan_of(engine: &Engine, run: &str, items: usize) {
    let params = json!({"items": (0..items).map(|i| format!("i{i}")).collect::<Vec<_>>()});
    engine.plan("loop", params, Some(run), IfExists::Error).unwrap();
}

/// The run's results, `(step_id, result)`, in history order.
fn results(engine: &Engine, run: &str) -> Vec<(String, Value)> {
    let state = serde_json::to_value(engine.state_get("loop", run).unwrap()).unwrap();
    let history = state["history"].as_array().cloned().unwrap_or_default();
    history
        .iter()
        .filter(|e| e["type"] == "result")
        .map(|e| (e["step_id"].as_str().unwrap_or_default().to_owned(), e["result"].clone()))
        .collect()
}

fn item(i: usize) -> String {
    format!("each[{i}]")
}

/// Results sent to A and B in turn: each engine's cached run is stale at
/// every other call, so every such call finds the run changed and answers
/// under the lock. Each result is applied once, and the engines' answers
/// are those of one engine driving the run alone.
#[test]
fn replicas_taking_turns_apply_each_result_once() {
    let run = "turns";
    let root = Root::with_workflows("unlocked-turns", &[("loop", &generate::foreach("loop"))]);
    for (name, handles) in stores("it_unlocked_turns", LockPolicy::default()) {
        let (a, b, _) = engines(&root, handles);
        plan(&a, run);
        for i in 0..ITEMS {
            let engine = if i % 2 == 0 { &a } else { &b };
            let reply = next_json(engine, "loop", run, &item(i), json!({"mark": i})).unwrap();
            let expected = if i + 1 < ITEMS { "running" } else { "done" };
            assert_eq!(reply["state"]["status"], expected, "{name}, item {i}: {reply}");
            assert_eq!(reply["state"]["version"], json!(i + 1), "{name}, item {i}: {reply}");
            // The other engine's cache is stale now: the same result again
            // is accepted as a repeat, another one refused.
            let other = if i % 2 == 0 { &b } else { &a };
            next_json(other, "loop", run, &item(i), json!({"mark": i})).unwrap();
            let e = next_json(other, "loop", run, &item(i), json!({"mark": "other"})).unwrap_err();
            assert_eq!(e["error"], "STATE_CONFLICT", "{name}, item {i}: {e}");
        }
        let expected: Vec<(String, Value)> = (0..ITEMS).map(|i| (item(i), json!({"mark": i}))).collect();
        assert_eq!(results(&a, run), expected, "{name}");
        assert_eq!(results(&b, run), expected, "{name}");
    }
}

/// While someone else holds the run's lock, an engine that holds the run
/// in its cache writes nothing: it waits for the lock (here past its
/// timeout: RUN_BUSY), and the run is as the lock holder left it.
#[test]
fn a_held_lock_keeps_out_a_cached_engine() {
    let run = "held";
    let root = Root::with_workflows("unlocked-held", &[("loop", &generate::foreach("loop"))]);
    let key = RunKey::new("loop", run).unwrap();
    for (name, handles) in stores("it_unlocked_held", short_wait()) {
        let (a, _, raw) = engines(&root, handles);
        plan(&a, run);
        next_json(&a, "loop", run, &item(0), json!({"mark": 0})).unwrap();
        let before = raw.load(&key).unwrap().unwrap();
        {
            let _lock = raw.lock(&key).unwrap();
            let e = a.next(next_args("loop", run, item(1), json!({"mark": 1}))).map(|_| ()).unwrap_err();
            assert_eq!(e.code, ErrorCode::RunBusy, "{name}: {e:?}");
            assert_eq!(
                raw.load(&key).unwrap().unwrap(),
                before,
                "{name}: nothing written under another's lock"
            );
        }
        next_json(&a, "loop", run, &item(1), json!({"mark": 1})).unwrap();
        assert_eq!(results(&a, run).len(), 2, "{name}");
    }
}

/// Four threads on two engines send every item's result at once: each is
/// applied exactly once, whoever wins, and every sender is told it was
/// taken (the winner) or is a repeat (the others).
#[test]
fn racing_replicas_apply_each_result_exactly_once() {
    let run = "race";
    let root = Root::with_workflows("unlocked-race", &[("loop", &generate::foreach("loop"))]);
    for (name, handles) in stores("it_unlocked_race", LockPolicy::default()) {
        let (a, b, _) = engines(&root, handles);
        plan(&a, run);
        // B has the run cached too (it read it), so both start without the lock.
        b.state_get("loop", run).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let engine = if t % 2 == 0 { &a } else { &b };
                s.spawn(move || {
                    for k in 0..ITEMS {
                        let i = (k + t) % ITEMS;
                        let reply = loop {
                            match next_json(engine, "loop", run, &item(i), json!({"mark": i})) {
                                Err(e) if e["error"] == "RUN_BUSY" => continue,
                                other => break other,
                            }
                        };
                        assert!(reply.is_ok(), "{name}, thread {t}, item {i}: {reply:?}");
                    }
                });
            }
        });
        let mut got = results(&b, run);
        got.sort_by(|x, y| x.0.cmp(&y.0));
        let expected: Vec<(String, Value)> = (0..ITEMS).map(|i| (item(i), json!({"mark": i}))).collect();
        assert_eq!(got, expected, "{name}: each item once");
        assert_eq!(
            serde_json::to_value(a.state_get("loop", run).unwrap()).unwrap()["status"],
            "done",
            "{name}"
        );
    }
}

/// The memory store, counting the calls that are round trips on
/// PostgreSQL: locks taken and appends tried without the lock.
#[derive(Clone, Default)]
struct Counting {
    inner: MemStore,
    locks: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    unlocked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The runs appended to without the lock.
    unlocked_runs: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Counting {
    fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::SeqCst;
        (self.locks.load(SeqCst), self.unlocked.load(SeqCst))
    }
}

mod counting {
    use super::Counting;
    use savant_think::state::*;
    use serde_json::Value;
    use std::sync::atomic::Ordering::SeqCst;

    impl ObjectStore for Counting {
        fn put_object(&self, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
            self.inner.put_object(hash, bytes)
        }
        fn get_object(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
            self.inner.get_object(hash)
        }
        fn objects(&self) -> Result<Vec<StoredObject>, StoreError> {
            self.inner.objects()
        }
        fn delete_object(&self, hash: &str) -> Result<bool, StoreError> {
            self.inner.delete_object(hash)
        }
    }

    impl ArchiveStore for Counting {
        fn archive_loaded(
            &self,
            k: &RunKey,
            l: Option<Loaded>,
            at: &str,
        ) -> Result<Option<ArchivedRun>, StoreError> {
            self.inner.archive_loaded(k, l, at)
        }
        fn archived(&self, workflow: Option<&str>) -> Result<Vec<ArchivedRun>, StoreError> {
            self.inner.archived(workflow)
        }
        fn load_archived(&self, key: &RunKey, id: &str) -> Result<Option<Loaded>, StoreError> {
            self.inner.load_archived(key, id)
        }
        fn restore(&self, key: &RunKey, id: &str) -> Result<bool, StoreError> {
            self.inner.restore(key, id)
        }
        fn delete_archived(&self, key: &RunKey, id: &str) -> Result<bool, StoreError> {
            self.inner.delete_archived(key, id)
        }
    }

    impl TimerIndex for Counting {}

    impl StoreUsage for Counting {}

    impl StateStore for Counting {
        fn lock(&self, key: &RunKey) -> Result<RunLock, StoreError> {
            self.locks.fetch_add(1, SeqCst);
            self.inner.lock(key)
        }
        fn stamp(&self, key: &RunKey) -> Result<Option<Stamp>, StoreError> {
            self.inner.stamp(key)
        }
        fn load(&self, key: &RunKey) -> Result<Option<Loaded>, StoreError> {
            self.inner.load(key)
        }
        fn append(&self, key: &RunKey, event: &Value) -> Result<Stamp, StoreError> {
            self.inner.append(key, event)
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
            self.unlocked.fetch_add(1, SeqCst);
            self.unlocked_runs.lock().unwrap().push(key.to_string());
            self.inner.append_unlocked(key, event, expected)
        }
        fn write_snapshot(&self, key: &RunKey, snapshot: &Value) -> Result<Stamp, StoreError> {
            self.inner.write_snapshot(key, snapshot)
        }
        fn list(&self, workflow: Option<&str>) -> Result<Vec<RunKey>, StoreError> {
            self.inner.list(workflow)
        }
        fn delete(&self, key: &RunKey) -> Result<bool, StoreError> {
            self.inner.delete(key)
        }
    }
}

/// What makes it one round trip: an engine driving its run alone takes no
/// lock after `plan`, each result one conditional append. Two engines that
/// take turns on a run (replicas behind a round-robin balancer) find it
/// changed at every call; after the first such miss each takes the lock
/// at once rather than trying without it and failing every time.
#[test]
fn a_run_driven_alone_takes_no_lock_and_replicas_taking_turns_stop_trying() {
    let run = "count";
    let root = Root::with_workflows("unlocked-count", &[("loop", &generate::foreach("loop"))]);
    let store = Counting::default();
    let engine =
        |store: &Counting| Engine::with_store(root.path.clone(), Default::default(), Box::new(store.clone()));
    let (a, b) = (engine(&store), engine(&store));
    const N: usize = 16;
    plan_of(&a, run, N);
    let planned = store.counts();
    for i in 0..4 {
        next_json(&a, "loop", run, &item(i), json!({"mark": i})).unwrap();
    }
    let alone = store.counts();
    assert_eq!(alone.0, planned.0, "no lock taken: {planned:?} -> {alone:?}");
    assert_eq!(alone.1 - planned.1, 4, "one conditional append per result");

    for i in 4..N {
        let engine = if i % 2 == 0 { &a } else { &b };
        next_json(engine, "loop", run, &item(i), json!({"mark": i})).unwrap();
    }
    let turns = store.counts();
    // A's first turn finds its cache current (one try, made); then each
    // engine fails one try and takes the lock from there on.
    assert!(turns.1 - alone.1 <= 3, "at most one failed try per engine: {alone:?} -> {turns:?}");
    let expected: Vec<(String, Value)> = (0..N).map(|i| (item(i), json!({"mark": i}))).collect();
    assert_eq!(results(&a, run), expected);
}

/// A workflow with `uses:` steps takes the lock for every `next` (a child's
/// completion reads and writes other runs): driven on a store that appends
/// unlocked, the parent and its child finish with each result once.
#[test]
fn a_workflow_with_uses_steps_runs_under_the_lock() {
    const CHILD: &str = "params:\n  n: { type: string }\nrequired: [n]\nsteps:\n  - id: ask\n    call: think\n    \
                         capture_as: a\noutputs:\n  said: <<a.thought>>\n";
    const PARENT: &str = "steps:\n  - id: sub\n    uses: child\n    with: { n: \"x\" }\n    capture_as: s\n  \
                          - id: after\n    call: think\n    deps: [sub]\n";
    let root = Root::with_workflows("unlocked-uses", &[("child", CHILD), ("parent", PARENT)]);
    let store = Counting::default();
    let engine = Engine::with_store(root.path.clone(), Default::default(), Box::new(store.clone()));
    engine.plan("parent", Value::Null, Some("r"), IfExists::Error).unwrap();
    let reply = next_json(&engine, "parent", "r", "sub/ask", json!({"thought": "hi"})).unwrap();
    assert_eq!(reply["instruction"]["step_id"], "after", "{reply}");
    let reply = next_json(&engine, "parent", "r", "after", json!({"thought": "done"})).unwrap();
    assert_eq!(reply["state"]["status"], "done", "{reply}");
    // The child's result is routed to the child run, whose workflow has no
    // `uses:`: that append may go without the child's lock; the parent's never.
    let runs = store.unlocked_runs.lock().unwrap().clone();
    assert!(runs.iter().all(|r| !r.starts_with("parent/")), "{runs:?}");
    let state = serde_json::to_value(engine.state_get("parent", "r").unwrap()).unwrap();
    assert_eq!(state["captures"]["s"], json!({"said": "hi"}), "{state}");
}
