//! The timer index's intent: a process that dies right after the write
//! that parks a run (before the exact entry is set) loses no wake-up,
//! because the intent was written first. The "crash" is a panic at the
//! point (see [`maybe_crash`]): the engine that made it is dropped, and
//! another engine on the same state directory, which never read the run,
//! fires it from the index (the file store; PostgreSQL when a test
//! cluster is installed).

use super::super::Engine;
use crate::runtime::args::NextArgs;
use serde_json::{Value, json};
use std::cell::Cell;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

thread_local! {
    static CRASH: Cell<bool> = const { Cell::new(false) };
}

/// Read right after a run's durable write (a `commit`'s append, a new
/// run's first snapshot): when set, the process "dies" there.
pub(in crate::runtime::engine) fn maybe_crash() {
    if CRASH.replace(false) {
        panic!("simulated crash after the write");
    }
}

/// Runs `f`, which must crash at the next durable write.
fn crashing(f: impl FnOnce()) {
    CRASH.set(true);
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CRASH.set(false);
    assert!(out.is_err(), "no write was made");
}

struct Root(PathBuf);

impl Root {
    fn new(name: &str, workflow: &str) -> Root {
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("savant-intent-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(dir.join("workflows")).unwrap();
        std::fs::write(dir.join("workflows/nap.yaml"), workflow).unwrap();
        Root(dir)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// After the crash: a fresh engine (no start-up scan, no call on the run)
/// finds the run in the index and fires it once its deadline has passed;
/// the run then holds one `timer_fired`.
fn fires_after_the_crash(root: &Root, run: &str, secs: u64) {
    let engine = Engine::new(&root.0).unwrap();
    assert_eq!(engine.timers_pending(), 1, "the intent is in the index");
    let at = engine.next_timer().expect("an entry");
    assert!(at <= SystemTime::now() + Duration::from_secs(secs + 1), "the entry is not after the deadline");
    // The store compares with its clock: wait for the deadline.
    std::thread::sleep(at.duration_since(SystemTime::now()).unwrap_or_default() + Duration::from_millis(50));
    assert_eq!(engine.fire_timers_due(SystemTime::now()).unwrap(), 1);
    let state = serde_json::to_string(&engine.state_get("nap", run).unwrap()).unwrap();
    assert_eq!(state.matches("\"timer_fired\"").count(), 1, "{state}");
}

const EVENT_PARKS: &str = "id: nap\nsteps:\n  - id: first\n    call: prompt.say\n    input_template: { text: hi }\n  - id: nap\n    sleep: 1s\n    deps: [first]\n";

/// Plans run `run`, then submits the result that parks it and "crashes"
/// right after the append.
fn park_and_crash(root: &Root, run: &str) {
    let engine = Engine::new(&root.0).unwrap();
    engine.plan("nap", Value::Null, Some(run), false).unwrap();
    assert_eq!(engine.timers_pending(), 0, "no wait started yet");
    let args: NextArgs =
        serde_json::from_value(json!({"workflow": "nap", "run_id": run, "step_id": "first"})).unwrap();
    crashing(|| drop(engine.next(args)));
}

#[test]
fn a_crash_after_the_event_that_parks_a_run_loses_no_wake_up() {
    let root = Root::new("event", EVENT_PARKS);
    park_and_crash(&root, "r1");
    let journal = std::fs::read_to_string(root.0.join(".savant/state/nap__r1.journal")).unwrap();
    assert!(journal.contains("\"result\"") && !journal.contains("timer_fired"), "{journal}");
    fires_after_the_crash(&root, "r1", 1);
}

#[cfg(feature = "postgres")]
#[test]
fn a_crash_after_the_event_that_parks_a_run_loses_no_wake_up_on_postgres() {
    let test = "runtime::engine::timers::tests::a_crash_after_the_event_that_parks_a_run_loses_no_wake_up_on_postgres";
    let Some(cluster) = crate::state::pg::cluster::for_test(test) else { return };
    let url = cluster.fresh_schema("intent_event").unwrap();
    let root = Root::new("event-pg", EVENT_PARKS);
    std::fs::write(root.0.join("savant-think.toml"), format!("[state]\nurl = \"{url}\"\n")).unwrap();
    park_and_crash(&root, "r1");
    assert!(!root.0.join(".savant/state").exists(), "the run is in the database");
    fires_after_the_crash(&root, "r1", 1);
}

#[test]
fn a_crash_after_a_run_starts_parked_loses_no_wake_up() {
    let root = Root::new("start", "id: nap\nsteps:\n  - id: nap\n    sleep: 1s\n");
    let engine = Engine::new(&root.0).unwrap();
    crashing(|| drop(engine.plan("nap", Value::Null, Some("r2"), false)));
    drop(engine);
    assert!(root.0.join(".savant/state/nap__r2.json").exists(), "the run was written");
    fires_after_the_crash(&root, "r2", 1);
}
