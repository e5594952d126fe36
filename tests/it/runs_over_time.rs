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
    use savant_think::runtime::tools::call;
    let root = root("mcp-plan");
    let engine = root.engine();
    let plan = |args: Value| call(&engine, "think_plan", &args);
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
        &json!({"workflow": "hello", "run_id": "r", "step_id": "greet", "result": {"text": "a"}}),
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
    let listed = call(&engine, "think_state_list", &json!({"archived": true})).unwrap();
    assert_eq!(listed["runs"].as_array().unwrap().len(), 1, "{listed}");
    let restored =
        call(&engine, "think_state_restore", &json!({"workflow": "hello", "run_id": "r"})).unwrap_err();
    assert_eq!(restored.code, "RUN_EXISTS");
}
