//! Operating a deployment on PostgreSQL (docs/deploy.md): a backup restored
//! under running replicas, a database restart under load. Each test starts
//! from a fresh schema of the shared throwaway cluster (skipped with a note
//! when PostgreSQL is not installed, unless `SAVANT_REQUIRE_PG=1`).

use crate::common::{Root, j};
use savant_think::runtime::engine::NextArgs;
use savant_think::runtime::{Engine, EngineConfig};
use savant_think::state::pg::cluster;
use serde_json::{Value, json};
use std::process::Command;

/// `kickoff → decide (capture d) → yes (when d.go) / no (when !d.go)`.
const BRANCH: &str = "id: branch
steps:
  - id: kickoff
    call: prompt.say
    input_template: { text: go }
  - id: decide
    call: prompt.say
    deps: [kickoff]
    input_template: { text: decide }
    capture_as: d
  - id: 'yes'
    call: prompt.say
    when: d.go == true
    input_template: { text: 'yes' }
  - id: 'no'
    call: prompt.say
    when: d.go == false
    input_template: { text: 'no' }
";

fn next(engine: &Engine, step: &str, result: Value) -> Result<Value, String> {
    engine
        .next(NextArgs {
            workflow: "branch".into(),
            run_id: "r1".into(),
            step_id: step.into(),
            result_snapshot: Some(result),
            result: None,
            expected_version: None,
        })
        .map(j)
        .map_err(|e| e.code.to_string())
}

/// Runs pg_dump or pg_restore (from the cluster's binaries) on database
/// `postgres` of `cluster`.
fn pg_tool(cluster: &cluster::Cluster, tool: &str, args: &[&str]) {
    let out = Command::new(cluster.bin().join(tool))
        .args(["-h", "127.0.0.1", "-p", &cluster.port().to_string(), "-U", "postgres"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    assert!(out.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// The stamp of run `r1` as stored (the `savant_stamp` value of its last write).
fn stored_stamp(url: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client.query_one("SELECT stamp FROM savant_runs WHERE run_id = 'r1'", &[]).unwrap().get(0)
}

/// Issue 47.1: `pg_restore --clean` rolls the run and the `savant_stamp`
/// sequence back under two running replicas, so the next write draws a
/// stamp value a replica has cached for a write the restore undid. That
/// replica must read the run again rather than trust its copy: the run
/// stays one the workflow can produce, and `think_debug` says so; a
/// history written by two diverging copies is one `think_debug` flags.
#[test]
fn a_restore_under_two_running_replicas_leaves_the_run_consistent() {
    let Some(cluster) = cluster::for_test("operating::a_restore_under_two_running_replicas") else { return };
    let schema = "it_restore";
    let url = cluster.fresh_schema(schema).unwrap();
    let root = Root::new("restore-replicas");
    std::fs::create_dir_all(root.path.join("workflows")).unwrap();
    std::fs::write(root.path.join("workflows/branch.yaml"), BRANCH).unwrap();
    let engine = || {
        let store = savant_think::state::PgStore::open(&url, true).unwrap();
        Engine::with_store(root.path.clone(), EngineConfig::default(), Box::new(store))
    };
    let (a, b) = (engine(), engine());
    let dump = root.path.join("backup.dump");
    let dump = dump.to_str().unwrap();

    a.plan("branch", json!({}), Some("r1"), true).unwrap();
    let after_kickoff = next(&a, "kickoff", json!({})).unwrap();
    assert_eq!(after_kickoff["instruction"]["step_id"], "decide");
    pg_tool(cluster, "pg_dump", &["-Fc", "-n", schema, "-f", dump, "postgres"]);
    let on_b = next(&b, "decide", json!({"go": false})).unwrap();
    assert_eq!(on_b["instruction"]["step_id"], "no", "{on_b}");
    let undone = stored_stamp(&url);
    pg_tool(cluster, "pg_restore", &["--clean", "--if-exists", "-d", "postgres", dump]);

    // A (whose copy is the restored run) decides the other way, and the
    // sequence hands out the stamp value B holds for its undone write.
    let on_a = next(&a, "decide", json!({"go": true})).unwrap();
    assert_eq!(on_a["instruction"]["step_id"], "yes", "{on_a}");
    assert_eq!(stored_stamp(&url), undone, "the restore rolled the sequence back");
    // B does not trust its copy: `no` was skipped in the stored run.
    assert_eq!(next(&b, "no", json!({})).unwrap_err(), "STEP_NOT_READY");
    let done = next(&b, "yes", json!({})).unwrap();
    assert_eq!(done["done"], true, "{done}");

    for replica in [&a, &b] {
        let state = j(replica.state_get("branch", "r1").unwrap());
        let status = |id: &str| {
            state["steps"].as_array().unwrap().iter().find(|s| s["id"] == id).unwrap()["status"].clone()
        };
        assert_eq!((status("yes"), status("no")), (json!("done"), json!("skipped")), "{state}");
        let debug = j(replica.debug("branch", "r1").unwrap());
        assert_eq!(debug["consistent"], true, "{debug}");
        assert!(debug.get("impossible").is_none(), "{debug}");
    }

    // The history two diverging copies would have left (a result for the
    // skipped `no`), written past the engine: think_debug flags it.
    let store = savant_think::state::PgStore::open(&url, true).unwrap();
    let key = savant_think::state::RunKey::new("branch", "r1").unwrap();
    let loaded = savant_think::state::StateStore::load(&store, &key).unwrap().unwrap();
    let mut forged = loaded
        .journal
        .last()
        .cloned()
        .unwrap_or_else(|| loaded.snapshot["history"].as_array().unwrap().last().unwrap().clone());
    let version = forged["version"].as_u64().unwrap() + 1;
    forged["version"] = json!(version);
    forged["step_id"] = json!("no");
    savant_think::state::StateStore::append(&store, &key, &forged).unwrap();
    let fresh = engine();
    let debug = j(fresh.debug("branch", "r1").unwrap());
    assert_eq!(debug["consistent"], false, "{debug}");
    let impossible = debug["impossible"].to_string();
    assert!(
        impossible.contains(&format!("version {version}: a result for `no`, which was skipped")),
        "{debug}"
    );
}

/// Issue 47.5: while PostgreSQL restarts under load, every failed call is a
/// retryable code (`STATE_UNAVAILABLE`, `RUN_BUSY`), never `STATE_IO`;
/// retrying each call until it is answered finishes every run once.
#[test]
fn a_database_restart_under_load_yields_only_retryable_codes() {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    const RUNS: usize = 3;
    const STEPS: usize = 40;
    if cluster::for_test("operating::a_database_restart_under_load").is_none() {
        return;
    }
    // A cluster of its own: the shared one serves the other tests meanwhile.
    let own = cluster::Cluster::start(&cluster::find_bin().unwrap(), &[]).unwrap();
    let url = own.url("postgres");
    let root = Root::new("restart-under-load");
    std::fs::create_dir_all(root.path.join("workflows")).unwrap();
    let mut chain = String::from("id: chain\nsteps:\n");
    for i in 0..STEPS {
        let deps = if i == 0 { String::new() } else { format!("\n    deps: [s{}]", i - 1) };
        chain.push_str(&format!(
            "  - id: s{i}\n    call: prompt.say{deps}\n    input_template: {{ text: s{i} }}\n"
        ));
    }
    std::fs::write(root.path.join("workflows/chain.yaml"), chain).unwrap();
    let store = savant_think::state::PgStore::open(&url, true).unwrap();
    let engine = Arc::new(Engine::with_store(root.path.clone(), EngineConfig::default(), Box::new(store)));
    for r in 0..RUNS {
        engine.plan("chain", json!({}), Some(&format!("r{r}")), true).unwrap();
    }
    let moved = Arc::new(AtomicUsize::new(0));
    let codes = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let drivers: Vec<_> = (0..RUNS)
        .map(|r| {
            let (engine, moved, codes) = (engine.clone(), moved.clone(), codes.clone());
            std::thread::spawn(move || {
                let mut step = 0;
                let mut tries = 0;
                while step < STEPS {
                    tries += 1;
                    assert!(tries < 20_000, "run r{r} did not finish: {:?}", codes.lock().unwrap());
                    let answer = engine.next(NextArgs {
                        workflow: "chain".into(),
                        run_id: format!("r{r}"),
                        step_id: format!("s{step}"),
                        result_snapshot: Some(json!({"n": step})),
                        result: None,
                        expected_version: None,
                    });
                    match answer {
                        Ok(_) => {
                            step += 1;
                            moved.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => {
                            *codes.lock().unwrap().entry(e.code.to_string()).or_default() += 1;
                            std::thread::sleep(std::time::Duration::from_millis(20));
                        }
                    }
                }
            })
        })
        .collect();
    // Restart twice, each time while the runs are moving.
    for at in [RUNS * STEPS / 4, RUNS * STEPS / 2] {
        while moved.load(Ordering::SeqCst) < at {
            std::thread::yield_now();
        }
        own.restart().unwrap();
    }
    for d in drivers {
        d.join().unwrap();
    }
    let codes = codes.lock().unwrap().clone();
    assert!(codes.keys().all(|c| c == "STATE_UNAVAILABLE" || c == "RUN_BUSY"), "{codes:?}");
    for r in 0..RUNS {
        let state = j(engine.state_get("chain", &format!("r{r}")).unwrap());
        assert_eq!(state["status"], "done", "{state}");
        assert_eq!(state["history"].as_array().unwrap().len(), STEPS, "each step once: {state}");
    }
}

/// Issue 47.6: a `[state.keep]` that cannot be applied stops `serve` at
/// start with `INVALID_CONFIG` and its did-you-mean, rather than a server
/// whose retention is silently off.
#[test]
fn serve_refuses_a_retention_policy_it_cannot_apply() {
    for (keep, needle) in [
        ("older_than = \"30x\"", "[state.keep] older_than `30x` is not a duration"),
        ("status = [\"runing\"]", "did you mean `running`?"),
    ] {
        let root = Root::new("serve-bad-keep");
        std::fs::create_dir_all(root.path.join("workflows")).unwrap();
        std::fs::write(root.path.join("savant-think.toml"), format!("[state.keep]\n{keep}\n")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_savant-think"))
            .args(["serve", "--http", "127.0.0.1:0", "--root"])
            .arg(&root.path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A liveness bound, not a timing assertion: a server that started
        // would never exit by itself.
        let mut waited = 0;
        while child.try_wait().unwrap().is_none() {
            if waited > 600 {
                let _ = child.kill();
                panic!("serve started with [state.keep] {keep}");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            waited += 1;
        }
        let out = child.wait_with_output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{text}");
        assert!(text.contains("INVALID_CONFIG") && text.contains(needle), "{keep}: {text}");
    }
}

/// Issue 47.2: `/healthz` and `/readyz` answer a load balancer without the
/// token and reveal nothing; `/readyz` turns `503` while the database is
/// frozen (within `[state] db_timeout`) and `200` again once it answers.
#[test]
fn probes_need_no_token_and_follow_the_database() {
    if cluster::for_test("operating::probes_need_no_token_and_follow_the_database").is_none() {
        return;
    }
    let own = cluster::Cluster::start(&cluster::find_bin().unwrap(), &[]).unwrap();
    let root = Root::new("probes");
    std::fs::create_dir_all(root.path.join("workflows")).unwrap();
    std::fs::write(root.path.join("workflows/branch.yaml"), BRANCH).unwrap();
    std::fs::write(root.path.join("savant-think.toml"), "[state]\ndb_timeout = \"1s\"\n").unwrap();
    let mut command = crate::support::Server::command(&root.path);
    command.args(["--token", "sekrit"]).env("SAVANT_STATE_URL", own.url("postgres"));
    let server = crate::support::Server::start(command, false);
    let get = |path: &str| {
        let reply = crate::inspect_http::request(&server.addr, "GET", path, &[("Host", "10.0.0.9")], "");
        (reply.status, reply.body)
    };
    assert_eq!(get("/healthz"), (200, "ok\n".to_owned()));
    assert_eq!(get("/readyz"), (200, "ready\n".to_owned()));
    let unauthorized = crate::inspect_http::request(&server.addr, "GET", "/mcp", &[], "");
    assert_eq!(unauthorized.status, 401, "the MCP endpoint still wants the token");

    own.freeze(true).unwrap();
    let frozen = get("/readyz");
    let alive = get("/healthz");
    own.freeze(false).unwrap();
    assert_eq!(frozen, (503, "not ready\n".to_owned()), "nothing about why");
    assert_eq!(alive, (200, "ok\n".to_owned()), "liveness does not touch the database");
    // Back once the database answers (a timed-out connection is replaced).
    let mut tries = 0;
    while get("/readyz").0 != 200 {
        tries += 1;
        assert!(tries < 100, "/readyz stayed 503 after the database came back");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
