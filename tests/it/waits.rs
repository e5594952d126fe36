//! Waits: `await:` answered, `sleep:` fired, `wait_for:` matched (also an
//! event that arrives before its wait), inside `foreach` and `uses:`, with
//! every refusal recording nothing — through the library and the CLI.

use crate::support::Root;
use crate::support::drive::next_json;
use savant_think::runtime::args::{AnswerArgs, SignalArgs};
use savant_think::runtime::{Engine, ErrorCode};
use serde_json::{Value, json};

const APPROVE: &str = r#"
id: approve
params:
  mr: {type: integer}
steps:
  - id: summary
    call: think
    input_template: {thought: "summarise <<params.mr>>"}
    capture_as: summary
  - id: approve
    await:
      ask: "Merge MR <<params.mr>>?"
      schema: {type: object, properties: {approved: {type: boolean}, note: {type: string}}, required: [approved]}
      timeout: 24h
    capture_as: approval
    deps: [summary]
  - id: merge
    call: think
    when: approval.approved
    input_template: {thought: "merging <<params.mr>>: <<approval.note>>"}
"#;

const PIPELINE: &str = r#"
id: pipeline
params:
  id: {type: string}
steps:
  - id: start
    call: think
    input_template: {thought: "start <<params.id>>"}
  - id: finished
    wait_for:
      event: pipeline.finished
      match: "<<params.id>>"
      timeout: never
    capture_as: result
    deps: [start]
  - id: report
    call: think
    input_template: {thought: "pipeline <<params.id>> is <<result.status>>"}
"#;

const CONFIG: &str = r#"
[events."pipeline.finished"]
description = "CI finished a pipeline"
schema = { type = "object", properties = { status = { type = "string" } }, required = ["status"] }
"#;

pub fn root(name: &str) -> Root {
    let root = Root::with_workflows(name, &[("approve", APPROVE), ("pipeline", PIPELINE)])
        .crate_files()
        .env("SAVANT_STATE_FSYNC", "0");
    root.write("savant-think.toml", CONFIG);
    root
}

fn answer(e: &Engine, run: &str, step: &str, value: Value) -> Result<Value, Value> {
    let args = AnswerArgs {
        workflow: "approve".into(),
        run_id: run.into(),
        step_id: step.into(),
        value,
        expected_version: None,
    };
    e.answer(args).map(|p| serde_json::to_value(p).unwrap()).map_err(|e| e.to_json())
}

fn signal(e: &Engine, key: &str, payload: Value) -> Result<Value, Value> {
    let args = SignalArgs {
        event: "pipeline.finished".into(),
        key: Some(key.into()),
        payload: Some(payload),
        ..Default::default()
    };
    e.signal(args).map(|s| serde_json::to_value(s).unwrap()).map_err(|e| e.to_json())
}

#[test]
fn an_await_lists_its_question_refuses_a_wrong_answer_and_goes_on_with_a_right_one() {
    let root = root("await");
    let e = root.engine();
    e.plan("approve", json!({"mr": 7}), Some("r1"), true).unwrap();
    let r = next_json(&e, "approve", "r1", "summary", json!({"thought": "ok"})).unwrap();
    assert_eq!(r["instruction"], Value::Null, "{r}");
    let w = &r["waiting"][0];
    assert_eq!(w["step_id"], "approve");
    assert_eq!(w["wait"], "answer");
    assert_eq!(w["ask"], "Merge MR 7?");
    assert_eq!(w["schema"]["required"], json!(["approved"]));
    assert!(w["deadline"].as_str().is_some_and(|d| d.ends_with('Z')), "{w}");
    let version = r["state"]["version"].clone();

    // A wrong answer names the field and records nothing.
    let err = answer(&e, "r1", "approve", json!({"approved": "yes"})).unwrap_err();
    assert_eq!(err["error"], "VALIDATION_FAILED", "{err}");
    assert_eq!(err["details"][0]["path"], "/approved");
    let state = e.state_get("approve", "r1").unwrap();
    assert_eq!(json!(state.version), version);
    assert_eq!(state.steps[1].status.as_str(), "waiting");

    // An answer for a step that does not wait for one.
    let err = answer(&e, "r1", "merge", json!({"approved": true})).unwrap_err();
    assert_eq!(err["error"], "STEP_NOT_WAITING", "{err}");
    assert_eq!(err["details"]["waiting"], json!(["approve"]));

    // The right answer: the capture is typed and read by the next step.
    let r = answer(&e, "r1", "approve", json!({"approved": true, "note": "lgtm"})).unwrap();
    assert_eq!(r["instruction"]["step_id"], "merge", "{r}");
    assert_eq!(r["instruction"]["input"]["thought"], "merging 7: lgtm");
    // The same answer again is harmless; another one is a conflict.
    assert!(answer(&e, "r1", "approve", json!({"approved": true, "note": "lgtm"})).is_ok());
    let err = answer(&e, "r1", "approve", json!({"approved": false})).unwrap_err();
    assert_eq!(err["error"], "STATE_CONFLICT", "{err}");
    let history = e.state_get("approve", "r1").unwrap().history;
    let answered: Vec<_> = history.iter().filter(|h| h.kind.name() == "answered").collect();
    assert_eq!(answered.len(), 1, "one answer recorded: {history:?}");
}

#[test]
fn an_event_that_arrives_before_its_wait_is_kept_and_one_no_run_wants_is_refused() {
    let root = root("events");
    let e = root.engine();
    e.plan("pipeline", json!({"id": "p1"}), Some("a"), true).unwrap();
    e.plan("pipeline", json!({"id": "p2"}), Some("b"), true).unwrap();
    // Before either waits: kept in the runs that will wait for it.
    let got = signal(&e, "p1", json!({"status": "green"})).unwrap();
    assert!(got["delivered"].as_array().unwrap().iter().all(|d| d.get("step_id").is_none()), "{got}");
    // Run a reaches its wait: the event kept is delivered at once.
    let r = next_json(&e, "pipeline", "a", "start", json!({})).unwrap();
    assert_eq!(r["instruction"]["step_id"], "report", "{r}");
    assert_eq!(r["instruction"]["input"]["thought"], "pipeline p1 is green");
    // Run b waits for p2; an event with another key does not end its wait.
    let r = next_json(&e, "pipeline", "b", "start", json!({})).unwrap();
    assert_eq!(r["waiting"][0]["event"], "pipeline.finished", "{r}");
    assert_eq!(r["waiting"][0]["key"], "p2");
    let err = signal(&e, "p3", json!({"status": "red"})).unwrap_err();
    assert_eq!(err["error"], "NO_WAITING_RUN", "{err}");
    // A payload that breaks the event's schema, an undeclared event.
    let err = signal(&e, "p2", json!({"state": "red"})).unwrap_err();
    assert_eq!(err["error"], "VALIDATION_FAILED", "{err}");
    let args = SignalArgs { event: "pipeline.finishd".into(), ..Default::default() };
    let err = e.signal(args).unwrap_err();
    assert_eq!(err.code, ErrorCode::UnknownEvent);
    assert!(err.to_json()["details"]["help"].as_str().unwrap().contains("pipeline.finished"));
    // The right one, twice with one id: recorded once.
    let args = || SignalArgs {
        event: "pipeline.finished".into(),
        key: Some("p2".into()),
        payload: Some(json!({"status": "red"})),
        id: Some("delivery-1".into()),
        ..Default::default()
    };
    let got = e.signal(args()).unwrap();
    assert_eq!(got.delivered[0].step_id.as_deref(), Some("finished"));
    let again = e.signal(args()).unwrap();
    assert!(again.delivered[0].duplicate);
    let r = next_json(&e, "pipeline", "b", "report", json!({"thought": "x"}));
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn an_event_kept_for_a_wait_is_delivered_once_by_an_engine_that_reads_the_run_again() {
    let root = root("inbox");
    let e = root.engine();
    e.plan("pipeline", json!({"id": "p1"}), Some("a"), true).unwrap();
    signal(&e, "p1", json!({"status": "green"})).unwrap();
    signal(&e, "p1", json!({"status": "red"})).unwrap();
    // Another engine reads the run from the store: its inbox is rebuilt
    // from the history, and the first event kept is the one delivered.
    let fresh = root.engine();
    let r = next_json(&fresh, "pipeline", "a", "start", json!({})).unwrap();
    assert_eq!(r["instruction"]["input"]["thought"], "pipeline p1 is green", "{r}");
    let r = next_json(&root.engine(), "pipeline", "a", "report", json!({"thought": "x"})).unwrap();
    assert_eq!(r["done"], true, "{r}");
    let history = root.engine().state_get("pipeline", "a").unwrap().history;
    let signals: Vec<_> = history.iter().filter(|h| h.kind.name() == "signal").collect();
    assert_eq!(signals.len(), 3, "two kept, one delivered: {history:?}");
}

#[test]
fn a_sleep_ends_by_itself_and_a_timeout_takes_on_timeout_or_fails_the_run() {
    let root = Root::with_workflows(
        "sleep",
        &[(
            "nap",
            r#"
id: nap
steps:
  - id: nap
    sleep: 1s
  - id: ask
    await: {ask: "still there?", timeout: 1s, on_timeout: {here: false}}
    capture_as: reply
    deps: [nap]
  - id: after
    call: think
    input_template: {thought: "here: <<reply.here>>"}
  - id: strict
    await: {ask: "really?", timeout: 1s}
    deps: [after]
"#,
        )],
    )
    .crate_files();
    let e = root.engine();
    let r = serde_json::to_value(e.plan("nap", json!({}), Some("n1"), true).unwrap()).unwrap();
    assert_eq!(r["waiting"][0]["wait"], "timer", "{r}");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    // Any call on the run applies the due timer: the sleep ends, the ask starts.
    let explained = e.explain("nap", Some("n1"), Some("nap")).unwrap();
    assert_eq!(serde_json::to_value(&explained).unwrap()["step"]["status"], "done");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let r = serde_json::to_value(e.plan("nap", json!({}), Some("n1"), false).unwrap()).unwrap();
    assert_eq!(r["instruction"]["input"]["thought"], "here: false", "{r}");
    let r = next_json(&e, "nap", "n1", "after", json!({})).unwrap();
    assert_eq!(r["waiting"][0]["step_id"], "strict", "{r}");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let err = next_json(&e, "nap", "n1", "after", json!({})).unwrap_err();
    assert_eq!(err["error"], "WAIT_TIMED_OUT", "{err}");
    assert_eq!(err["details"]["step_id"], "strict");
}

#[test]
fn waits_in_foreach_items_and_in_a_child_are_answered_by_their_paths() {
    let root = Root::with_workflows(
        "paths",
        &[
            (
                "each",
                r#"
id: each
steps:
  - id: ask
    foreach: "[1, 2]"
    await: {ask: "ok <<item>>?", schema: {type: boolean}, timeout: never}
    capture_as: oks
  - id: child
    uses: confirm
    with: {what: "all"}
    deps: [ask]
"#,
            ),
            (
                "confirm",
                r#"
id: confirm
params:
  what: {type: string}
steps:
  - id: sure
    await: {ask: "sure about <<params.what>>?", schema: {type: boolean}, timeout: never}
    capture_as: sure
outputs:
  sure: "<<sure>>"
"#,
            ),
        ],
    )
    .crate_files();
    let e = root.engine();
    let r = serde_json::to_value(e.plan("each", json!({}), Some("e1"), true).unwrap()).unwrap();
    let ids: Vec<&str> =
        r["waiting"].as_array().unwrap().iter().map(|w| w["step_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["ask[0]", "ask[1]"], "{r}");
    assert_eq!(r["waiting"][1]["ask"], "ok 2?");
    let ans = |step: &str, value: Value| {
        let args = AnswerArgs {
            workflow: "each".into(),
            run_id: "e1".into(),
            step_id: step.into(),
            value,
            expected_version: None,
        };
        e.answer(args).map(|p| serde_json::to_value(p).unwrap()).map_err(|e| e.to_json())
    };
    ans("ask[1]", json!(true)).unwrap();
    let r = ans("ask[0]", json!(false)).unwrap();
    // The child waits: listed by its path from the parent, with its run.
    assert_eq!(r["waiting"][0]["step_id"], "child/sure", "{r}");
    assert_eq!(r["waiting"][0]["ask"], "sure about all?");
    assert_eq!(r["waiting"][0]["sub_run"]["run_id"], "e1.child");
    let r = ans("child/sure", json!(true)).unwrap();
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["artifacts"]["oks"], json!([false, true]));
}

#[test]
fn the_cli_answers_and_signals() {
    let root = root("cli");
    root.ok(&["plan", "approve", "--run-id", "r1", "--params", r#"{"mr": 3}"#]);
    root.ok(&["next", "approve", "--run-id", "r1", "--step", "summary", "--result", "{}"]);
    let out = root
        .command(&[
            "answer",
            "approve",
            "--run-id",
            "r1",
            "--step",
            "approve",
            "--value",
            r#"{"approved": 1}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r = root.ok(&[
        "answer",
        "approve",
        "--run-id",
        "r1",
        "--step",
        "approve",
        "--value",
        r#"{"approved": false}"#,
    ]);
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["summary"]["skipped"], json!(["merge"]));
    root.ok(&["plan", "pipeline", "--run-id", "p", "--params", r#"{"id": "x9"}"#]);
    let r = root.ok(&["signal", "pipeline.finished", "--key", "x9", "--payload", r#"{"status": "ok"}"#]);
    assert_eq!(r["delivered"][0]["run_id"], "p", "{r}");
    let out = root
        .command(&["signal", "pipeline.finished", "--key", "nobody", "--payload", r#"{"status": "ok"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("NO_WAITING_RUN"));
}

#[test]
fn explain_gives_a_workflows_longest_wait_along_any_path() {
    let root = root("longest");
    root.write(
        "workflows/sleepy.yaml",
        r#"
id: sleepy
steps:
  - id: nap
    sleep: 10m
  - id: each
    foreach: "[1, 2, 3]"
    sleep: 1h
    deps: [nap]
  - id: short
    sleep: 30s
"#,
    );
    let e = root.engine();
    let longest = |wf: &str| {
        let x = serde_json::to_value(e.explain(wf, None, None).unwrap()).unwrap();
        x["longest_wait"].clone()
    };
    // 10m, then three items of 1h each; `short` runs beside them.
    assert_eq!(longest("sleepy"), json!({"secs": 600 + 3 * 3600, "text": "3h 10m"}));
    assert_eq!(longest("approve"), json!({"secs": 86_400, "text": "1d"}));
    let pipeline = longest("pipeline");
    assert_eq!(pipeline["secs"], Value::Null);
    assert_eq!(pipeline["text"], "unbounded: step `finished` waits for ever (`timeout: never`)");
}
