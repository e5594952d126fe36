//! Bounded waits under hostile load (issue 24.2, docs/threat-model.md): a
//! run whose lock stays held answers `RUN_BUSY` within `[state]
//! lock_timeout`, past `max_lock_waiters` at once, and other runs are served
//! meanwhile; nothing is recorded by a refused call.

use crate::common::run_cmd;
use crate::support::Root;
use serde_json::Value;
use std::fs::File;

const SAY: &str = "id: say
steps:
  - id: a
    call: prompt.say
    input_template: { text: hi }
  - id: b
    call: prompt.say
    deps: [a]
    input_template: { text: bye }
";

fn root(name: &str, toml: &str) -> Root {
    let root = Root::with_workflows(name, &[("say", SAY)]);
    root.write("savant-think.toml", toml);
    root
}

/// Holds `run`'s file lock from this (another) process, as a stuck replica would.
pub(crate) fn hold(root: &Root, run: &str) -> File {
    let file = File::options()
        .read(true)
        .write(true)
        .open(root.join(&format!(".savant/state/say__{run}.lock")))
        .unwrap();
    file.lock().unwrap();
    file
}

#[test]
fn a_run_locked_elsewhere_is_run_busy_after_the_lock_timeout_and_nothing_is_recorded() {
    let root = root("busy", "[state]\nlock_timeout = \"300ms\"\n");
    root.ok(&["plan", "say", "--run-id", "r1"]);
    root.ok(&["plan", "say", "--run-id", "r2"]);
    let held = hold(&root, "r1");

    let out = run_cmd(root.command(&["next", "say", "--run-id", "r1", "--step", "a", "--result", "{}"]));
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
    assert_eq!((out.code, v["error"].as_str()), (Some(1), Some("RUN_BUSY")), "{v} {}", out.stderr);
    let d = &v["details"];
    assert_eq!(d["run"], "say/r1", "{v}");
    assert_eq!(d["retryable"], true, "{v}");
    assert!(d["message"].as_str().unwrap().contains("lock_timeout"), "{v}");

    // Another run is served meanwhile.
    root.ok(&["next", "say", "--run-id", "r2", "--step", "a", "--result", "{}"]);

    // Once the holder lets go, nothing was recorded and the same call goes through.
    drop(held);
    assert_eq!(root.ok(&["state", "get", "say", "--run-id", "r1"])["version"], 0);
    let r = root.ok(&["next", "say", "--run-id", "r1", "--step", "a", "--result", "{}"]);
    assert_eq!(r["instruction"]["step_id"], "b", "{r}");
}

#[test]
fn a_zero_lock_timeout_answers_at_once_and_a_bad_setting_is_invalid_config() {
    let root = root("busy-zero", "[state]\nlock_timeout = \"0s\"\n");
    root.ok(&["plan", "say", "--run-id", "r1"]);
    let _held = hold(&root, "r1");
    let out = run_cmd(root.command(&["next", "say", "--run-id", "r1", "--step", "a", "--result", "{}"]));
    assert!(out.stdout.contains("RUN_BUSY"), "{}", out.stdout);

    root.write("savant-think.toml", "[state]\nlock_timeout = \"soon\"\n");
    let out = run_cmd(root.command(&["state", "list"]));
    assert!(out.stdout.contains("INVALID_CONFIG") || out.stderr.contains("INVALID_CONFIG"), "{out:?}");
}

/// `serve --http --max-in-flight 1`: a call stuck on a held run lock fills
/// the server; the next call (any call, even to another run) is 503
/// `BUSY` with Retry-After at once, not queued; once the lock is free the
/// stuck calls are answered and the server takes calls again.
#[test]
fn past_max_in_flight_calls_are_refused_at_once_with_busy() {
    use crate::http_protocol::{INIT, post};
    let root = root("in-flight", "[state]\nlock_timeout = \"60s\"\n");
    root.ok(&["plan", "say", "--run-id", "r1"]);
    let mut command = crate::support::Server::command(&root.path);
    command.args(["--stateless", "--max-in-flight", "1"]).env("LOG_LEVEL", "error");
    let server = crate::support::Server::start(command, false);
    let addr = server.addr.clone();
    let held = hold(&root, "r1");

    let next = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"think_next","arguments":{"workflow":"say","run_id":"r1","step_id":"a","result":{}}}}"#;
    let stuck: Vec<_> = (0..1)
        .map(|_| {
            let addr = addr.clone();
            // Refused itself while a probe below was in flight: sent again.
            std::thread::spawn(move || {
                loop {
                    let answer = post(&addr, "application/json", next, &[]);
                    if answer.0 != 503 {
                        return answer;
                    }
                }
            })
        })
        .collect();
    // Once it is in flight, the next call is refused without waiting.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let (status, head, body) = loop {
        let answer = post(&addr, "application/json", INIT, &[]);
        if answer.0 == 503 || std::time::Instant::now() > deadline {
            break answer;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(head.to_ascii_lowercase().contains("retry-after:"), "{head}");
    let v: Value = serde_json::from_str(body.trim()).unwrap();
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("--max-in-flight"), "{v}");

    drop(held);
    for call in stuck {
        let (status, _, body) = call.join().unwrap();
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"b\"") || body.contains("STATE_CONFLICT"), "{body}");
    }
    let (status, _, body) = post(&addr, "application/json", INIT, &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(root.ok(&["state", "get", "say", "--run-id", "r1"])["version"], 1);
}

/// A frozen database (every PostgreSQL process stopped with SIGSTOP): a
/// call of a warm engine and a fresh CLI each fail with `STATE_UNAVAILABLE`
/// (retryable) after `[state] db_timeout`, instead of hanging; once the
/// database resumes, the same engine recovers by itself and the step is
/// recorded exactly once.
#[test]
fn a_frozen_database_is_state_unavailable_in_time_and_the_engine_recovers() {
    use savant_think::state::pg::cluster::{self, Cluster};
    use std::time::Duration;
    if cluster::for_test(
        "hostile_load::a_frozen_database_is_state_unavailable_in_time_and_the_engine_recovers",
    )
    .is_none()
    {
        return;
    }
    let own = Cluster::start(&cluster::find_bin().unwrap(), &[]).unwrap();
    let url = own.fresh_schema("frozen").unwrap();
    let root = root("frozen", "[state]\ndb_timeout = \"1s\"\n");
    let options =
        savant_think::state::StoreOptions { db_timeout: Duration::from_secs(1), ..Default::default() };
    let store = savant_think::state::PgStore::open_with(&url, &options).unwrap();
    let engine = std::sync::Arc::new(savant_think::runtime::Engine::with_store(
        root.path.clone(),
        Default::default(),
        Box::new(store),
    ));
    engine.plan("say", Value::Null, Some("r1"), savant_think::runtime::args::IfExists::Error).unwrap();

    own.freeze(true).unwrap();
    struct Thaw<'a>(&'a Cluster);
    impl Drop for Thaw<'_> {
        fn drop(&mut self) {
            let _ = self.0.freeze(false);
        }
    }
    let thaw = Thaw(&own);
    // A warm engine: the call ends (a watchdog, not a timing assertion:
    // without the deadline it would hang for good).
    let (tx, rx) = std::sync::mpsc::channel();
    let e = engine.clone();
    std::thread::spawn(move || {
        let _ = tx.send(crate::support::next_json(&e, "say", "r1", "a", serde_json::json!({})));
    });
    let answer = rx.recv_timeout(Duration::from_secs(60)).expect("a call on a frozen database must end");
    let err = answer.expect_err("the database is frozen");
    assert_eq!(err["error"], "STATE_UNAVAILABLE", "{err}");
    assert_eq!(err["details"]["retryable"], true, "{err}");
    assert!(err["details"]["message"].as_str().unwrap().contains("db_timeout"), "{err}");

    // A fresh process: connecting times out too.
    let mut cli = root.command(&["state", "list"]);
    cli.env("SAVANT_STATE_URL", &url);
    let out = crate::common::run_cmd(cli);
    assert!(out.stdout.contains("STATE_UNAVAILABLE") || out.stderr.contains("STATE_UNAVAILABLE"), "{out:?}");

    drop(thaw);
    // The same engine recovers by itself (a connection that timed out is
    // thrown away; the next call opens a new one).
    let mut last = None;
    for _ in 0..20 {
        match crate::support::next_json(&engine, "say", "r1", "a", serde_json::json!({})) {
            Ok(_) => {
                last = None;
                break;
            }
            Err(e) => {
                last = Some(e);
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
    assert_eq!(last, None, "the engine did not recover");
    let state = engine.state_get("say", "r1").unwrap();
    assert_eq!(serde_json::to_value(state).unwrap()["version"], 1, "recorded exactly once");
}
