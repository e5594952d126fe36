//! Two `savant-think serve --http --stateless` replicas on one PostgreSQL
//! database (a throwaway cluster; skipped with a note when PostgreSQL is not
//! installed, unless `SAVANT_REQUIRE_PG=1`): concurrent clients spread every
//! call of every run over both, race the same `think_next` on both, and one
//! replica is killed with SIGKILL mid-way. Every run must finish exactly
//! once, with one history that both replicas (and a restarted one) agree on.

use crate::common::Root;
use crate::common::j;
use crate::mcp_http::start_with;
use crate::mcp_support::{call, populate};
use crate::support::Server;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use savant_think::state::pg::cluster;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const RUNS: usize = 8;
/// Replica B is killed once this many transitions were applied (the odd
/// runs alone make 16; the even ones wait half-way for the kill).
const KILL_AFTER: usize = 12;

async fn connect(addr: &str) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

/// A tool call that reports a transport failure (a dead replica) as `None`
/// instead of panicking.
async fn try_call(client: &Client, name: &str, args: Value) -> Option<(bool, Value)> {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let params = rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(args);
    let r = tokio::time::timeout(Duration::from_secs(30), client.call_tool(params)).await.ok()?.ok()?;
    Some((r.is_error == Some(true), r.structured_content.expect("structuredContent")))
}

struct Replicas {
    a: Client,
    b: Client,
    b_dead: AtomicBool,
    applied: AtomicUsize,
    /// Set once B is dead: the even runs wait for it half-way, so that the
    /// kill always comes with runs unfinished, however the threads are
    /// scheduled.
    killed: tokio::sync::watch::Sender<bool>,
}

impl Replicas {
    /// Calls replica B when `prefer_b` and it is alive, else A; a call B
    /// fails to answer is made again on A (it may or may not have been
    /// applied on B: the engine's idempotent replay makes that safe).
    async fn call(&self, prefer_b: bool, name: &str, args: Value) -> (bool, Value) {
        if prefer_b && !self.b_dead.load(Ordering::SeqCst) {
            if let Some(out) = try_call(&self.b, name, args.clone()).await {
                return out;
            }
            assert!(self.b_dead.load(Ordering::SeqCst), "replica B failed while alive");
        }
        call(&self.a, name, args).await
    }
}

/// The result a step's instruction asks for.
fn result_for(instruction: &Value) -> Value {
    match instruction["call"].as_str().unwrap() {
        "gitlab.list_merge_requests" => json!({"items": [
            {"iid": 1, "title": "Add dark mode", "labels": []},
            {"iid": 2, "title": "Bump CI image", "labels": ["ci"]},
            {"iid": 3, "title": "Faster search", "labels": ["feature"]}
        ]}),
        "think" => json!({"sentence": format!("{} is better now.", instruction["step_id"])}),
        "prompt.say" => json!({"said": true}),
        other => panic!("unexpected call {other}"),
    }
}

/// Drives one run to done, alternating replicas per call; the second step
/// is raced on both replicas at once.
async fn drive(replicas: Arc<Replicas>, n: usize) -> Value {
    let run_id = format!("rep-{n}");
    let (err, mut out) = replicas
        .call(
            n % 2 == 1,
            "think_plan",
            json!({"workflow": "release_notes", "params": {"milestone": format!("v{n}")}, "run_id": run_id}),
        )
        .await;
    assert!(!err, "{out}");
    let mut turn = n;
    while out["done"] != true {
        turn += 1;
        assert!(turn < n + 30, "run {run_id} does not end: {out}");
        if n.is_multiple_of(2) && turn == n + 3 {
            let mut killed = replicas.killed.subscribe();
            killed.wait_for(|k| *k).await.unwrap();
        }
        let i = &out["instruction"];
        let step = i["step_id"].as_str().unwrap().to_owned();
        let mut args = json!({"workflow": "release_notes", "run_id": run_id, "step_id": step,
                              "result_snapshot": result_for(i)});
        if turn == n + 2 && !replicas.b_dead.load(Ordering::SeqCst) {
            // The same submission on both replicas at once; with the version
            // the caller saw on odd runs, without it on even ones.
            if n % 2 == 1 {
                args["expected_version"] = out["state"]["version"].clone();
                assert!(args["expected_version"].is_u64(), "{out}");
            }
            let (x, y) = tokio::join!(
                try_call(&replicas.a, "think_next", args.clone()),
                try_call(&replicas.b, "think_next", args.clone())
            );
            let answers: Vec<(bool, Value)> = [x, y].into_iter().flatten().collect();
            assert!(!answers.is_empty());
            for (err, v) in &answers {
                assert!(!err || v["error"] == "STATE_CONFLICT", "{run_id}: {v}");
            }
            let ok: Vec<&Value> = answers.iter().filter(|(err, _)| !err).map(|(_, v)| v).collect();
            if answers.len() == 2 && n.is_multiple_of(2) {
                // Without a version, the loser gets the idempotent reply.
                assert_eq!(ok.len(), 2, "{run_id}: {answers:?}");
                assert_eq!(ok[0]["instruction"], ok[1]["instruction"], "{run_id}");
            }
            if answers.len() == 2 && n % 2 == 1 {
                // With it, the loser is told the run moved on.
                assert_eq!(ok.len(), 1, "{run_id}: {answers:?}");
            }
            out = match ok.first() {
                Some(v) => (*v).clone(),
                // Both lost (B died mid-race and A saw B's commit): read back.
                None => replicas.call(false, "think_next", args_without_version(&args)).await.1,
            };
            replicas.applied.fetch_add(1, Ordering::SeqCst);
            continue;
        }
        let (err, next) = replicas.call(turn.is_multiple_of(2), "think_next", args).await;
        assert!(!err, "{run_id}: {next}");
        replicas.applied.fetch_add(1, Ordering::SeqCst);
        out = next;
    }
    out
}

fn args_without_version(args: &Value) -> Value {
    let mut args = args.clone();
    args.as_object_mut().unwrap().remove("expected_version");
    args
}

/// Every step's result was recorded exactly once, in contiguous versions.
fn check_history(run_id: &str, state: &Value) {
    assert_eq!(state["status"], "done", "{run_id}: {state}");
    let history = state["history"].as_array().unwrap();
    let mut steps: Vec<&str> =
        history.iter().filter(|e| e["type"] == "result").map(|e| e["step_id"].as_str().unwrap()).collect();
    let total = steps.len();
    steps.sort();
    steps.dedup();
    assert_eq!(steps.len(), total, "{run_id}: a step was applied twice: {history:?}");
    assert_eq!(
        steps,
        ["describe_change[0]", "describe_change[2]", "list_changes", "publish"],
        "{run_id}: {history:?}"
    );
    let versions: Vec<u64> = history.iter().map(|e| e["version"].as_u64().unwrap()).collect();
    assert_eq!(versions, (1..=versions.len() as u64).collect::<Vec<_>>(), "{run_id}");
    assert_eq!(state["version"].as_u64(), versions.last().copied(), "{run_id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_race_and_survive_a_kill() {
    let Some(cluster) = cluster::for_test("replicas::two_replicas_race_and_survive_a_kill") else { return };
    let url = cluster.fresh_schema("it_replicas").unwrap();
    let scratch = Root::new("replicas");
    populate(&scratch.path);
    let env = [("SAVANT_STATE_URL", url.as_str())];
    let server_a = start_with(&scratch.path, &["--stateless"], &env);
    let mut server_b: Server = start_with(&scratch.path, &["--stateless"], &env);
    let replicas = Arc::new(Replicas {
        a: connect(&server_a.addr).await,
        b: connect(&server_b.addr).await,
        b_dead: AtomicBool::new(false),
        applied: AtomicUsize::new(0),
        killed: tokio::sync::watch::channel(false).0,
    });
    let drivers: Vec<_> = (0..RUNS).map(|n| tokio::spawn(drive(Arc::clone(&replicas), n))).collect();
    // Kill B once some transitions went through, while runs are in flight.
    while replicas.applied.load(Ordering::SeqCst) < KILL_AFTER {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    replicas.b_dead.store(true, Ordering::SeqCst);
    server_b.child.kill().unwrap();
    replicas.killed.send_replace(true);
    server_b.child.wait().unwrap();
    let mut finals = Vec::new();
    for d in drivers {
        finals.push(d.await.unwrap());
    }
    assert!(finals.iter().all(|f| f["done"] == true));

    // A replica started afresh on the same database sees the same runs.
    let server_c = start_with(&scratch.path, &["--stateless"], &env);
    let c = connect(&server_c.addr).await;
    let (err, listed) = call(&c, "think_state_list", json!({"workflow": "release_notes"})).await;
    assert!(!err, "{listed}");
    assert_eq!(listed["runs"].as_array().unwrap().len(), RUNS, "{listed}");
    for n in 0..RUNS {
        let run_id = format!("rep-{n}");
        let args = json!({"workflow": "release_notes", "run_id": run_id});
        let (err, on_a) = call(&replicas.a, "think_state_get", args.clone()).await;
        assert!(!err, "{on_a}");
        let (_, on_c) = call(&c, "think_state_get", args).await;
        assert_eq!(on_a, on_c, "{run_id}: the replicas disagree");
        check_history(&run_id, &on_a);
    }
    // Nothing was written to the file store.
    assert!(!scratch.path.join(".savant/state").exists());
    drop(server_a);
}

/// Two engines in one process on one database, as two replicas: each sees
/// the other's transitions, fresh starts, resets and deletes at once (the
/// stamp changes), however its own cache stood.
#[test]
fn engines_on_one_database_see_each_others_writes() {
    use savant_think::runtime::engine::NextArgs;
    use savant_think::runtime::{Engine, EngineConfig};
    let Some(cluster) = cluster::for_test("replicas::engines_on_one_database_see_each_others_writes") else {
        return;
    };
    let url = cluster.fresh_schema("it_engines").unwrap();
    let scratch = Root::new("replica-engines");
    populate(&scratch.path);
    let engine = || {
        let store = savant_think::state::PgStore::open(&url, true).unwrap();
        Engine::with_store(scratch.path.clone(), EngineConfig::default(), Box::new(store))
    };
    let (a, b) = (engine(), engine());
    let params = json!({"milestone": "v1"});
    let next = |e: &Engine, out: &Value, expected: Option<u64>| {
        e.next(NextArgs {
            workflow: "release_notes".into(),
            run_id: "e1".into(),
            step_id: out["instruction"]["step_id"].as_str().unwrap().into(),
            result_snapshot: Some(result_for(&out["instruction"])),
            result: None,
            expected_version: expected,
        })
        .map(j)
    };
    let first = j(a.plan("release_notes", params.clone(), Some("e1"), true).unwrap());
    // B advances the run that A has cached.
    let second = next(&b, &first, None).unwrap();
    // A, with the version it last saw, is told the run moved on.
    let stale = next(&a, &first, first["state"]["version"].as_u64()).unwrap_err();
    assert_eq!(stale.code, "STATE_CONFLICT", "{stale}");
    // Without it, the same submission is the idempotent replay.
    assert_eq!(next(&a, &first, None).unwrap()["instruction"], second["instruction"]);
    let third = next(&a, &second, None).unwrap();
    assert_eq!(b.state_get("release_notes", "e1").unwrap(), a.state_get("release_notes", "e1").unwrap());

    // A fresh start on B (a new generation, a lower version) replaces the
    // run A has cached.
    let fresh = j(b.plan("release_notes", params, Some("e1"), true).unwrap());
    assert_eq!(fresh["instruction"]["step_id"], "list_changes");
    let state = j(a.state_get("release_notes", "e1").unwrap());
    assert!(state["history"].as_array().unwrap().is_empty(), "{state}");
    assert!(next(&a, &third, None).is_err(), "the old run's step is gone");

    // The replaced run was archived, and either replica reads it.
    let archived = j(b.state_get_archived("release_notes", "e1", None).unwrap());
    assert_eq!(archived["version"], third["state"]["version"], "{archived}");

    // A delete on A (archiving the run) is seen by B, and so is a restore on B.
    let deleted = a.state_delete("release_notes", "e1", false).unwrap();
    assert_eq!(b.state_get("release_notes", "e1").unwrap_err().code, "UNKNOWN_RUN");
    let archive_id = deleted.archive_id.unwrap();
    b.state_restore("release_notes", "e1", Some(&archive_id)).unwrap();
    assert_eq!(j(a.state_get("release_notes", "e1").unwrap())["version"], fresh["state"]["version"]);
    a.state_delete("release_notes", "e1", true).unwrap();
    assert_eq!(
        b.state_get_archived("release_notes", "e1", Some(&archive_id)).unwrap_err().code,
        "UNKNOWN_RUN"
    );
}

/// A run is pinned in the database: a replica whose own copy of the
/// workflow differs (a rolling deploy) runs the version the run started
/// with, read back from `savant_objects`.
#[test]
fn a_replica_with_another_file_runs_the_pinned_version_from_the_database() {
    let Some(cluster) =
        cluster::for_test("replicas::a_replica_with_another_file_runs_the_pinned_version_from_the_database")
    else {
        return;
    };
    let url = cluster.fresh_schema("it_pinned").unwrap();
    let (old, new) = (
        Root::with_workflows("pin-old", &[("w", &two_steps("old"))]),
        Root::with_workflows("pin-new", &[("w", &two_steps("new"))]),
    );
    let engine = |root: &Root| pg_engine(&url, root);
    let (a, b) = (engine(&old), engine(&new));
    a.plan("w", Value::Null, Some("p"), savant_think::runtime::args::IfExists::Error).unwrap();
    let out = j(crate::support::next_json(&b, "w", "p", "a", json!({})).unwrap());
    assert_eq!(out["instruction"]["input"]["text"], "old b", "{out}");
    let state = j(b.state_get("w", "p").unwrap());
    assert_eq!(state["file_differs"], true, "{state}");
    // A new run on the other replica takes its own file.
    let fresh = j(b.plan("w", Value::Null, Some("q"), savant_think::runtime::args::IfExists::Error).unwrap());
    assert_eq!(fresh["instruction"]["input"]["text"], "new");
}

/// Two replicas forking one run into one new id at once: one fork is
/// made, the other is told `STATE_CONFLICT`; the source is unchanged.
#[test]
fn two_replicas_forking_one_run_at_once_one_wins() {
    let Some(cluster) = cluster::for_test("replicas::two_replicas_forking_one_run_at_once_one_wins") else {
        return;
    };
    let url = cluster.fresh_schema("it_fork").unwrap();
    let root = Root::with_workflows(
        "fork-replicas",
        &[(
            "w",
            "id: w\nsteps:\n  - id: a\n    call: prompt.say\n  - id: b\n    call: prompt.say\n    deps: [a]\n",
        )],
    );
    let engine = || pg_engine(&url, &root);
    let (a, b) = (engine(), engine());
    a.plan("w", Value::Null, Some("p"), savant_think::runtime::args::IfExists::Error).unwrap();
    crate::support::next_json(&a, "w", "p", "a", json!({})).unwrap();
    let source = j(a.state_get("w", "p").unwrap());
    for round in 0..4 {
        let id = format!("f{round}");
        one_wins(&a, &b, |e| e.fork("w", "p", "b", Some(&id), None, None).map(j).map_err(|e| e.code));
    }
    assert_eq!(j(b.state_get("w", "p").unwrap()), source);
}

/// Retention on PostgreSQL: finished runs and archived copies go, and the
/// versions no run is pinned to any more are collected from `savant_objects`.
#[test]
fn prune_on_postgres_removes_runs_and_unused_versions() {
    let Some(cluster) = cluster::for_test("replicas::prune_on_postgres_removes_runs_and_unused_versions")
    else {
        return;
    };
    let url = cluster.fresh_schema("it_prune").unwrap();
    let text = |t: &str| {
        format!("id: w\nsteps:\n  - id: a\n    call: prompt.say\n    input_template: {{ text: \"{t}\" }}\n")
    };
    let root = Root::with_workflows("prune-pg", &[("w", &text("one"))]);
    let e = pg_engine(&url, &root);
    let error = savant_think::runtime::args::IfExists::Error;
    e.plan("w", Value::Null, Some("old"), error).unwrap();
    crate::support::next_json(&e, "w", "old", "a", json!({})).unwrap();
    root.workflow("w", &text("two"));
    e.plan("w", Value::Null, Some("new"), error).unwrap();
    e.state_delete("w", "new", false).unwrap();
    e.plan("w", Value::Null, Some("new"), error).unwrap();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.execute("UPDATE savant_objects SET created_at = now() - interval '1 hour'", &[]).unwrap();
    let keep = savant_think::state::Keep::default();
    let p = j(e.prune(&keep, false).unwrap());
    let runs: Vec<&str> =
        p["runs"].as_array().unwrap().iter().map(|r| r["run_id"].as_str().unwrap()).collect();
    assert_eq!(runs, ["new", "old"], "the archived copy and the done run: {p}");
    assert_eq!(p["objects"].as_array().unwrap().len(), 1, "version one is no run's now: {p}");
    let n: i64 = client.query_one("SELECT count(*) FROM savant_objects", &[]).unwrap().get(0);
    assert_eq!(n, 1);
    crate::support::next_json(&e, "w", "new", "a", json!({})).unwrap();
}

/// Two replicas upgrading one run at once: one upgrade is made, the other
/// is told `STATE_CONFLICT`.
#[test]
fn two_replicas_upgrading_one_run_at_once_one_wins() {
    use savant_think::runtime::args::UpgradeRequest;
    let Some(cluster) = cluster::for_test("replicas::two_replicas_upgrading_one_run_at_once_one_wins") else {
        return;
    };
    let url = cluster.fresh_schema("it_upgrade").unwrap();
    let root = Root::with_workflows("upgrade-replicas", &[("w", &two_steps("v0"))]);
    let engine = || pg_engine(&url, &root);
    let (a, b) = (engine(), engine());
    a.plan("w", Value::Null, Some("p"), savant_think::runtime::args::IfExists::Error).unwrap();
    crate::support::next_json(&a, "w", "p", "a", json!({})).unwrap();
    let req = UpgradeRequest { run_id: Some("p".into()), ..UpgradeRequest::default() };
    for round in 1..4 {
        root.workflow("w", &two_steps(&format!("v{round}")));
        one_wins(&a, &b, |e| e.upgrade("w", &req).map(j).map_err(|e| e.code));
        let s = j(b.state_get("w", "p").unwrap());
        assert_eq!(s["steps"][1]["input"]["text"], format!("v{round} b"), "{s}");
    }
}

/// Runs `call` on two engines at once: exactly one succeeds, the other is
/// `STATE_CONFLICT`.
fn one_wins<F>(a: &savant_think::runtime::Engine, b: &savant_think::runtime::Engine, call: F)
where
    F: Fn(&savant_think::runtime::Engine) -> Result<Value, savant_think::runtime::ErrorCode> + Sync,
{
    let results: Vec<_> = std::thread::scope(|s| {
        let (ha, hb) = (s.spawn(|| call(a)), s.spawn(|| call(b)));
        vec![ha.join().unwrap(), hb.join().unwrap()]
    });
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "{results:?}");
    assert_eq!(*errors[0], "STATE_CONFLICT", "{results:?}");
}

/// An engine over `root` whose runs live in the database at `url`.
fn pg_engine(url: &str, root: &Root) -> savant_think::runtime::Engine {
    let store = savant_think::state::PgStore::open(url, true).unwrap();
    savant_think::runtime::Engine::with_store(root.path.clone(), Default::default(), Box::new(store))
}

/// A two-step workflow `w` whose steps say `text`.
fn two_steps(text: &str) -> String {
    format!(
        "id: w\nsteps:\n  - id: a\n    call: prompt.say\n    input_template: {{ text: \"{text}\" }}\n  - id: b\n    call: prompt.say\n    deps: [a]\n    input_template: {{ text: \"{text} b\" }}\n"
    )
}
