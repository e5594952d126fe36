//! Issue 43: timers are durable across `serve` processes. Two replicas on
//! one store (a state directory; a PostgreSQL database when installed):
//! replica A parks a run on a short sleep and is killed with SIGKILL, and
//! replica B, started before the run existed (so its start-up scan never
//! saw it), fires it from the store's timer index, long before any minute
//! scan; and with both alive, every timer is recorded exactly once.
//! Firing is watched in the store itself, never through a call on the run
//! (which would apply the timer on its own).

use crate::common::Root;
use crate::support::Server;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

use crate::observing::TOKEN;

/// A 3-second sleep, then a step.
const NAP: &str = "id: nap
steps:
  - id: nap
    sleep: 3s
  - id: after
    call: prompt.say
    deps: [nap]
    input_template: { text: awake }
";

/// Long enough for a loaded machine, far below the old once-a-minute scan.
const PATIENCE: Duration = Duration::from_secs(40);

fn serve(root: &Root, env: &[(&str, &str)]) -> Server {
    let mut command = Server::command(&root.path);
    command.args(["--token", TOKEN, "--stateless"]).env("SAVANT_STATE_FSYNC", "0").envs(env.iter().copied());
    Server::start(command, true)
}

/// A `tools/call` answered (`observing.rs`'s): its structured content.
fn call(addr: &str, name: &str, arguments: Value) -> Value {
    let body = crate::observing::call(addr, 1, name, &arguments.to_string());
    let text = body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&body);
    let message: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {body}"));
    message["result"]["structuredContent"].clone()
}

fn park(addr: &str, run: &str) {
    let planned = call(addr, "think_plan", json!({"workflow": "nap", "run_id": run}));
    assert_eq!(planned["waiting"][0]["wait"], "timer", "{planned}");
}

/// How many `timer_fired` events the run's history holds, read through `addr`.
fn fired_in_history(addr: &str, run: &str) -> usize {
    let state = call(addr, "think_state_get", json!({"workflow": "nap", "run_id": run}));
    let history = state["history"].as_array().unwrap_or_else(|| panic!("{state}"));
    history.iter().filter(|e| e.to_string().contains("\"timer_fired\"")).count()
}

/// Polls `fired` until it says yes; how long that took, or `None` after
/// [`PATIENCE`].
fn waited(fired: impl Fn() -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < PATIENCE {
        if fired() {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// Whether the file store holds a `timer_fired` event of run `run`.
fn fired_on_disk(root: &Root, run: &str) -> bool {
    ["journal", "json"].iter().any(|ext| {
        std::fs::read_to_string(root.join(&format!(".savant/state/nap__{run}.{ext}")))
            .is_ok_and(|text| text.contains("timer_fired"))
    })
}

fn root(name: &str) -> Root {
    let root = Root::new(name);
    root.write("workflows/nap.yaml", NAP);
    root
}

/// The two checks over one store; `fired` looks in the store.
fn killed_replica_then_both_alive(root: &Root, env: &[(&str, &str)], fired: &dyn Fn(&str) -> bool) {
    let mut a = serve(root, env);
    let b = serve(root, env);
    park(&a.addr, "k1");
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let took = waited(|| fired("k1"));
    assert!(took.is_some(), "replica B never fired the timer replica A parked");
    assert_eq!(fired_in_history(&b.addr, "k1"), 1);

    // Both alive: each run's timer recorded once, whichever fired it.
    let a = serve(root, env);
    let runs: Vec<String> = (0..6).map(|i| format!("both{i}")).collect();
    for (i, run) in runs.iter().enumerate() {
        park(if i % 2 == 0 { &a.addr } else { &b.addr }, run);
    }
    for run in &runs {
        assert!(waited(|| fired(run)).is_some(), "{run} never fired");
    }
    for run in &runs {
        assert_eq!(fired_in_history(&a.addr, run), 1, "{run}");
        assert_eq!(fired_in_history(&b.addr, run), 1, "{run}");
    }
}

#[test]
fn a_timer_parked_by_a_killed_replica_fires_on_another_once_on_the_file_store() {
    let root = root("timers-file");
    killed_replica_then_both_alive(&root, &[], &|run| fired_on_disk(&root, run));
    // One marker per waiting run, none left once they fired.
    let markers = std::fs::read_dir(root.join(".savant/state/timers")).map_or(0, |d| d.count());
    assert_eq!(markers, 0, "markers left behind");
}

#[test]
fn a_timer_parked_by_a_killed_replica_fires_on_another_once_on_postgres() {
    use savant_think::state::pg::cluster;
    let Some(cluster) =
        cluster::for_test("timers::a_timer_parked_by_a_killed_replica_fires_on_another_once_on_postgres")
    else {
        return;
    };
    let url = cluster.fresh_schema("it_timers").unwrap();
    let root = root("timers-pg");
    let client = std::sync::Mutex::new(postgres::Client::connect(&url, postgres::NoTls).unwrap());
    let fired = |run: &str| -> bool {
        let mut c = client.lock().unwrap();
        let row = c
            .query_one(
                "SELECT (SELECT count(*) FROM savant_events WHERE workflow = 'nap' AND run_id = $1 \
                   AND body LIKE '%timer_fired%') \
                 + (SELECT count(*) FROM savant_runs WHERE workflow = 'nap' AND run_id = $1 \
                   AND snapshot LIKE '%timer_fired%')",
                &[&run],
            )
            .unwrap();
        row.get::<_, i64>(0) > 0
    };
    killed_replica_then_both_alive(&root, &[("SAVANT_STATE_URL", url.as_str())], &fired);
    let left: i64 =
        client.lock().unwrap().query_one("SELECT count(*) FROM savant_timers", &[]).unwrap().get(0);
    assert_eq!(left, 0, "timer rows left behind");
    assert!(!root.join(".savant/state").exists(), "nothing on the file store");
}

/// The file store's index compares its markers with the runs' clock: a
/// `serve` under the test clock (`SAVANT_TEST_CLOCK`, debug builds) fires
/// an hour's sleep from the index once the clock file moves two hours on,
/// with no call on the run.
#[test]
fn a_serve_under_the_test_clock_fires_from_the_index_by_that_clock() {
    let root = Root::new("timers-test-clock");
    root.write("workflows/nap.yaml", NAP.replace("sleep: 3s", "sleep: 1h"));
    let clock = root.join("clock");
    std::fs::write(&clock, "0\n").unwrap();
    let clock_env = clock.to_str().unwrap();
    let server = serve(&root, &[("SAVANT_TEST_CLOCK", clock_env)]);
    park(&server.addr, "c1");
    // The sleep has not ended by the clock: nothing fires for a few ticks.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!fired_on_disk(&root, "c1"), "fired before the clock moved");
    std::fs::write(&clock, format!("0\n{}\n", 2 * 3600 * 1000)).unwrap();
    assert!(waited(|| fired_on_disk(&root, "c1")).is_some(), "never fired by the test clock");
}
