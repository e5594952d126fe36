//! Runs over time (docs/runtime.md, "Runs over time"): nothing is discarded
//! unasked. `plan` on an existing run id is RUN_EXISTS unless told to
//! resume or replace; a replaced or deleted run is archived and can be read
//! and restored; `next` needs an explicit result.

use crate::common::{j, run_cmd};
use crate::support::Root;
use serde_json::{Value, json};

const HELLO: &str = "id: hello
params:
  who: { type: string, default: world }
steps:
  - id: greet
    call: prompt.say
    input_template: { text: \"hello <<params.who>>\" }
    capture_as: greeting
  - id: wrap
    call: prompt.say
    deps: [greet]
    input_template: { text: \"<<greeting.text>>!\" }
";

fn root(name: &str) -> Root {
    Root::with_workflows(name, &[("hello", HELLO)])
}

/// Runs the binary: (exit code, JSON on stdout or null, stderr).
fn run(root: &Root, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = run_cmd(root.command(args));
    (out.code, serde_json::from_str(&out.stdout).unwrap_or(Value::Null), out.stderr)
}

fn err(root: &Root, args: &[&str], code: &str) -> Value {
    let (exit, v, stderr) = run(root, args);
    assert_eq!((exit, v["error"].as_str()), (Some(1), Some(code)), "{args:?}: {v} {stderr}");
    v
}

#[test]
fn plan_on_an_existing_run_is_run_exists_until_told_what_to_do() {
    let root = root("exists");
    root.ok(&["plan", "hello", "--run-id", "r1"]);
    root.ok(&["next", "hello", "--run-id", "r1", "--step", "greet", "--result", r#"{"text": "hi"}"#]);
    let e = err(&root, &["plan", "hello", "--run-id", "r1", "--params", r#"{"who": "x"}"#], "RUN_EXISTS");
    let d = &e["details"];
    assert_eq!((&d["status"], &d["version"]), (&json!("running"), &json!(1)), "{e}");
    assert!(d["updated_at"].is_string(), "{e}");
    let help = d["help"].as_str().unwrap();
    assert!(help.contains("--resume") && help.contains("--replace"), "{help}");
    // Nothing changed.
    assert_eq!(root.ok(&["state", "get", "hello", "--run-id", "r1"])["version"], 1);

    // --resume (and its old name --no-fresh) continue it, params unchanged.
    for flag in ["--resume", "--no-fresh"] {
        let r = root.ok(&["plan", "hello", "--run-id", "r1", flag]);
        assert_eq!(r["instruction"]["step_id"], "wrap", "{r}");
    }
    // --replace archives it and starts over.
    let r = root.ok(&["plan", "hello", "--run-id", "r1", "--replace", "--params", r#"{"who": "x"}"#]);
    assert_eq!((&r["instruction"]["step_id"], &r["state"]["version"]), (&json!("greet"), &json!(0)));
    let list = root.ok(&["state", "list", "--archived"]);
    assert_eq!(list["runs"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!((&list["runs"][0]["run_id"], &list["runs"][0]["version"]), (&json!("r1"), &json!(1)));
    let old = root.ok(&["state", "get", "hello", "--run-id", "r1", "--archived"]);
    assert_eq!(old["captures"]["greeting"], json!({"text": "hi"}), "{old}");
    assert_eq!(old["params"], json!({"who": "world"}));
    // --resume and --replace together are a usage error.
    let (exit, _, stderr) = run(&root, &["plan", "hello", "--run-id", "r1", "--resume", "--replace"]);
    assert_eq!(exit, Some(2), "{stderr}");
}

#[test]
fn delete_archives_restore_brings_back_and_purge_removes() {
    let root = root("archive");
    root.ok(&["plan", "hello", "--run-id", "r1"]);
    root.ok(&["next", "hello", "--run-id", "r1", "--step", "greet", "--result", r#"{"text": "hi"}"#]);
    let before = root.ok(&["state", "get", "hello", "--run-id", "r1"]);
    let d = root.ok(&["state", "delete", "hello", "--run-id", "r1"]);
    let archive_id = d["archive_id"].as_str().unwrap().to_owned();
    err(&root, &["state", "get", "hello", "--run-id", "r1"], "UNKNOWN_RUN");
    let got =
        root.ok(&["state", "get", "hello", "--run-id", "r1", "--archived", "--archive-id", &archive_id]);
    assert_eq!(got, before);

    // Unknown ids get a did-you-mean.
    let e = err(&root, &["state", "restore", "hello", "--run-id", "r2"], "UNKNOWN_RUN");
    assert_eq!(e["details"]["help"], "did you mean `r1`?", "{e}");
    let wrong = format!("{archive_id}x");
    let e =
        err(&root, &["state", "restore", "hello", "--run-id", "r1", "--archive-id", &wrong], "UNKNOWN_RUN");
    assert_eq!(e["details"]["help"], format!("did you mean `{archive_id}`?"), "{e}");

    let r = root.ok(&["state", "restore", "hello", "--run-id", "r1"]);
    assert_eq!(r["archive_id"], archive_id.as_str());
    assert_eq!(root.ok(&["state", "get", "hello", "--run-id", "r1"]), before);
    assert_eq!(root.ok(&["state", "list", "--archived"])["runs"], json!([]));
    // A restore over a live run is RUN_EXISTS.
    root.ok(&["state", "delete", "hello", "--run-id", "r1"]);
    root.ok(&["plan", "hello", "--run-id", "r1"]);
    err(&root, &["state", "restore", "hello", "--run-id", "r1"], "RUN_EXISTS");
    // The restored run goes on.
    let r = root.ok(&["plan", "hello", "--run-id", "r1", "--replace"]);
    assert_eq!(r["state"]["version"], 0);

    // --purge removes at once: nothing archived.
    let archived = root.ok(&["state", "list", "--archived"])["runs"].as_array().unwrap().len();
    let d = root.ok(&["state", "delete", "hello", "--run-id", "r1", "--purge"]);
    assert!(d.get("archive_id").is_none(), "{d}");
    assert_eq!(root.ok(&["state", "list", "--archived"])["runs"].as_array().unwrap().len(), archived);
    err(&root, &["state", "get", "hello", "--run-id", "r1"], "UNKNOWN_RUN");
}

#[test]
fn commands_need_their_payload_and_record_nothing_without_it() {
    let root = root("payload");
    root.ok(&["plan", "hello", "--run-id", "r1"]);
    let (exit, out, stderr) = run(&root, &["next", "hello", "--run-id", "r1", "--step", "greet"]);
    assert_eq!(exit, Some(2), "{out} {stderr}");
    assert!(stderr.contains("--result"), "{stderr}");
    assert_eq!(root.ok(&["state", "get", "hello", "--run-id", "r1"])["version"], 0, "nothing recorded");
    let (exit, _, stderr) = run(&root, &["validate", "--schema", r#"{"type": "object"}"#]);
    assert_eq!(exit, Some(2), "{stderr}");
    assert!(stderr.contains("--response"), "{stderr}");
}

#[test]
fn generated_run_ids_never_name_an_existing_run() {
    let root = root("fresh");
    let engine = root.engine();
    let mut ids = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let p =
            j(engine.plan("hello", Value::Null, None, savant_think::runtime::args::IfExists::Error).unwrap());
        assert!(ids.insert(p["run_id"].as_str().unwrap().to_owned()), "{p}");
    }
    assert_eq!(engine.state_list(None).unwrap().runs.len(), 50);
}

#[test]
fn mcp_plan_takes_if_exists_and_the_older_start_fresh() {
    use savant_think::tools::call;
    let root = root("mcp-plan");
    let engine = root.engine();
    let plan = |args: Value| call(&engine, "think_plan", args);
    plan(json!({"workflow": "hello", "run_id": "r"})).unwrap();
    let e = plan(json!({"workflow": "hello", "run_id": "r"})).unwrap_err();
    assert_eq!(e.code, "RUN_EXISTS");
    assert_eq!(
        plan(json!({"workflow": "hello", "run_id": "r", "if_exists": "error"})).unwrap_err().code,
        "RUN_EXISTS"
    );
    call(
        &engine,
        "think_next",
        json!({"workflow": "hello", "run_id": "r", "step_id": "greet", "result": {"text": "a"}}),
    )
    .unwrap();
    for resume in [json!({"if_exists": "resume"}), json!({"start_fresh": false})] {
        let mut args = json!({"workflow": "hello", "run_id": "r"});
        args.as_object_mut().unwrap().extend(resume.as_object().unwrap().clone());
        assert_eq!(plan(args).unwrap()["instruction"]["step_id"], "wrap");
    }
    let r = plan(json!({"workflow": "hello", "run_id": "r", "start_fresh": true})).unwrap();
    assert_eq!(r["instruction"]["step_id"], "greet");
    let e = plan(json!({"workflow": "hello", "run_id": "r", "start_fresh": true, "if_exists": "resume"}))
        .unwrap_err();
    assert_eq!(e.code, "INVALID_INPUT", "{e}");
    let e = plan(json!({"workflow": "hello", "run_id": "r", "if_exists": "keep"})).unwrap_err();
    assert_eq!(e.code, "INVALID_INPUT", "{e}");
    let listed = call(&engine, "think_state_list", json!({"archived": true})).unwrap();
    assert_eq!(listed["runs"].as_array().unwrap().len(), 1, "{listed}");
    let restored =
        call(&engine, "think_state_restore", json!({"workflow": "hello", "run_id": "r"})).unwrap_err();
    assert_eq!(restored.code, "RUN_EXISTS");
}

const CHAIN: &str = "id: chain
params:
  topic: { type: string, default: rust }
steps:
  - id: fetch
    call: web.search
    input_template: { q: \"<<params.topic>>\" }
    capture_as: found
  - id: other
    call: web.search
    input_template: { q: fixed }
    capture_as: fixed
  - id: draft
    call: llm.write
    input_template: { from: \"<<found>>\", also: \"<<fixed>>\" }
    capture_as: text
  - id: publish
    call: cms.post
    input_template: { body: \"<<text>>\" }
";

fn chain_run(name: &str) -> Root {
    let root = Root::with_workflows(name, &[("chain", CHAIN)]);
    root.ok(&["plan", "chain", "--run-id", "r1"]);
    for (step, result) in [("fetch", r#"{"hits": 1}"#), ("other", r#"{"f": 1}"#), ("draft", r#"{"t": "x"}"#)]
    {
        root.ok(&["next", "chain", "--run-id", "r1", "--step", step, "--result", result]);
    }
    root
}

#[test]
fn fork_keeps_what_does_not_depend_on_the_step_and_leaves_the_source_alone() {
    let root = chain_run("fork");
    let source = root.ok(&["state", "get", "chain", "--run-id", "r1"]);
    let f = root.ok(&["fork", "chain", "--run-id", "r1", "--from", "draft", "--new-run-id", "f1"]);
    assert_eq!((&f["run_id"], &f["ready"]), (&json!("f1"), &json!(["draft"])), "{f}");
    let s = root.ok(&["state", "get", "chain", "--run-id", "f1"]);
    assert_eq!(s["forked_from"], json!({"run_id": "r1", "version": 3, "step": "draft"}));
    assert_eq!(s["captures"], json!({"found": {"hits": 1}, "fixed": {"f": 1}}), "{s}");
    assert_eq!(s["workflow_hash"], source["workflow_hash"]);
    assert_eq!(root.ok(&["state", "get", "chain", "--run-id", "r1"]), source, "the source is untouched");
    // The fork goes on by itself.
    let r = root.ok(&["next", "chain", "--run-id", "f1", "--step", "draft", "--result", r#"{"t": "y"}"#]);
    assert_eq!(r["instruction"]["input"], json!({"body": {"t": "y"}}), "{r}");

    // New params: every step whose input changes runs again, with its dependents.
    let f =
        root.ok(&["fork", "chain", "--run-id", "r1", "--from", "other", "--params", r#"{"topic": "go"}"#]);
    assert_eq!(f["ready"], json!(["fetch", "other"]), "{f}");
    assert_ne!(f["run_id"], "r1");
    // The same params: only the step and what follows.
    let f =
        root.ok(&["fork", "chain", "--run-id", "r1", "--from", "other", "--params", r#"{"topic": "rust"}"#]);
    assert_eq!(f["ready"], json!(["other"]), "{f}");

    // Bad input.
    let e = err(&root, &["fork", "chain", "--run-id", "r1", "--from", "drft"], "UNKNOWN_STEP");
    assert_eq!(e["details"]["help"], "did you mean `draft`?", "{e}");
    let e = err(&root, &["fork", "chain", "--run-id", "r1", "--from", "draft[0]"], "UNKNOWN_STEP");
    assert!(e["details"]["message"].as_str().unwrap().contains("not an item"), "{e}");
    assert_eq!(e["details"]["help"], "did you mean the step `draft`?", "{e}");
    // The same fork asked for again: a conflict that says the fork is there.
    let e = err(
        &root,
        &["fork", "chain", "--run-id", "r1", "--from", "draft", "--new-run-id", "f1"],
        "STATE_CONFLICT",
    );
    let message = e["details"]["message"].as_str().unwrap();
    assert!(message.contains("already a fork of `r1` at `draft`") && message.contains("earlier"), "{e}");
    // Another run at the new id: RUN_EXISTS, with a help fit for a fork.
    let e = err(
        &root,
        &["fork", "chain", "--run-id", "r1", "--from", "other", "--new-run-id", "f1"],
        "RUN_EXISTS",
    );
    let help = e["details"]["help"].as_str().unwrap();
    assert!(help.contains("--new-run-id") && !help.contains("--resume"), "{e}");
    let e = err(&root, &["fork", "chain", "--run-id", "r2", "--from", "draft"], "UNKNOWN_RUN");
    assert_eq!(e["details"]["help"], "did you mean `r1`?", "{e}");
    err(&root, &["fork", "chain", "--run-id", "r1", "--from", "draft", "--new-run-id", "r1"], "RUN_EXISTS");
    err(
        &root,
        &["fork", "chain", "--run-id", "r1", "--from", "draft", "--expected-version", "2"],
        "STATE_CONFLICT",
    );
    err(
        &root,
        &["fork", "chain", "--run-id", "r1", "--from", "draft", "--params", r#"{"nope": 1}"#],
        "INVALID_PARAMS",
    );
}

#[test]
fn two_forks_into_one_id_at_once_one_wins_the_other_is_a_conflict() {
    let root = chain_run("fork-race");
    for round in 0..4 {
        let id = format!("race{round}");
        let args = ["fork", "chain", "--run-id", "r1", "--from", "draft", "--new-run-id", id.as_str()];
        let outs = crate::common::race(&root, &args);
        let errors: Vec<&Value> = outs.iter().filter_map(|o| o.get("error")).collect();
        assert_eq!(errors, [&json!("STATE_CONFLICT")], "{outs:?}");
    }
}

#[test]
fn mcp_fork_is_a_tool() {
    use savant_think::tools::call;
    let root = chain_run("fork-mcp");
    let engine = root.engine();
    let f = call(
        &engine,
        "think_fork",
        json!({"workflow": "chain", "run_id": "r1", "from": "draft", "new_run_id": "m"}),
    )
    .unwrap();
    assert_eq!(f["ready"], json!(["draft"]));
    let s = j(engine.state_get("chain", "m").unwrap());
    assert_eq!(s["forked_from"]["step"], "draft");
}

/// Makes every stored object look stored an hour ago (past the
/// collector's grace).
fn age_objects(root: &Root) {
    let dir = root.join(".savant/state/objects");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = std::fs::File::options().write(true).open(entry.unwrap().path()).unwrap();
        file.set_modified(old).unwrap();
    }
}

fn pruned_ids(v: &Value) -> Vec<String> {
    let runs = v["runs"].as_array().unwrap();
    runs.iter()
        .map(|r| match r["archive_id"].as_str() {
            Some(a) => format!("{}@archived:{}", r["run_id"].as_str().unwrap(), &a[..2]),
            None => r["run_id"].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[test]
fn prune_removes_finished_runs_and_unused_versions_never_unfinished_ones() {
    let root = root("prune");
    let done = |id: &str| {
        root.ok(&["plan", "hello", "--run-id", id]);
        root.ok(&["next", "hello", "--run-id", id, "--step", "greet", "--result", r#"{"text": "a"}"#]);
        root.ok(&["next", "hello", "--run-id", id, "--step", "wrap", "--result", "{}"]);
    };
    done("d1");
    done("d2");
    done("d3");
    root.ok(&["plan", "hello", "--run-id", "live"]);
    root.ok(&["plan", "hello", "--run-id", "gone"]);
    root.ok(&["state", "delete", "hello", "--run-id", "gone"]);
    // An edit: the old version stays pinned by the runs above.
    root.workflow("hello", &HELLO.replace("hello <<", "hi <<"));
    root.ok(&["plan", "hello", "--run-id", "new"]);
    age_objects(&root);

    // A dry run removes nothing.
    let dry = root.ok(&["state", "prune", "--keep-last", "1", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(pruned_ids(&dry), ["d1", "d2"], "{dry}");
    assert_eq!(root.ok(&["state", "list"])["runs"].as_array().unwrap().len(), 5);
    // Too young to prune.
    let none = root.ok(&["state", "prune", "--older-than", "1h"]);
    assert_eq!(pruned_ids(&none), Vec::<String>::new());
    // --keep-last 1: the newest done run stays, the archived copy is its workflow's only one.
    let p = root.ok(&["state", "prune", "--keep-last", "1"]);
    assert_eq!(pruned_ids(&p), ["d1", "d2"], "{p}");
    assert!(
        p["objects"].as_array().unwrap().is_empty(),
        "the old version is still pinned by d3, live and gone: {p}"
    );
    // Everything finished and archived: the old version is then unused.
    let p = root.ok(&["state", "prune"]);
    assert_eq!(pruned_ids(&p), ["d3", "gone@archived:v0"], "{p}");
    assert_eq!(p["objects"].as_array().unwrap().len(), 0, "`live` still pins it: {p}");
    let listed: Vec<String> = root.ok(&["state", "list"])["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, ["live", "new"], "unfinished runs are never pruned unless named");
    let p = root.ok(&["state", "prune", "--status", "running", "--keep-last", "1"]);
    assert_eq!(pruned_ids(&p), ["live"], "{p}");
    assert_eq!(p["objects"].as_array().unwrap().len(), 1, "the old version is collected: {p}");
    assert_eq!(std::fs::read_dir(root.join(".savant/state/objects")).unwrap().count(), 1);
    root.ok(&["next", "hello", "--run-id", "new", "--step", "greet", "--result", r#"{"text": "a"}"#]);

    let e = err(&root, &["state", "prune", "--status", "runing"], "INVALID_INPUT");
    assert_eq!(e["details"]["help"], "did you mean `running`?");
    err(&root, &["state", "prune", "--older-than", "soon"], "INVALID_INPUT");
}

#[test]
fn serve_applies_state_keep_in_the_background() {
    let root = root("keep");
    root.write("savant-think.toml", "[state.keep]\nstatus = [\"done\"]\n");
    root.ok(&["plan", "hello", "--run-id", "d"]);
    root.ok(&["next", "hello", "--run-id", "d", "--step", "greet", "--result", r#"{"text": "a"}"#]);
    root.ok(&["next", "hello", "--run-id", "d", "--step", "wrap", "--result", "{}"]);
    root.ok(&["plan", "hello", "--run-id", "r"]);
    let mut child = root
        .command(&["serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let mut left = Vec::new();
    while started.elapsed() < std::time::Duration::from_secs(15) {
        left = root.ok(&["state", "list"])["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].clone())
            .collect();
        if left.len() == 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(left, [json!("r")], "the done run is pruned, the running one kept");
}
