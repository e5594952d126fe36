//! Sub-workflows (`uses:`) end to end: a multi-file project checked by the
//! CLI, its runs driven through the engine (one loop for parent and
//! children), `exec`, and MCP `plan`/`next`.

use crate::common::j;
use crate::support::{Root, next_json as next};
use serde_json::{Value, json};

/// A reviewer: asks for a verdict on one file, declares `verdict` and `line`.
const REVIEW_FILE: &str = r#"
params:
  path: { type: string }
  strict: { type: boolean, default: false }
required: [path]
steps:
  - id: ask
    call: prompt.say
    input_template: { text: "Review <<params.path>> (strict: <<params.strict>>); answer {verdict}" }
    capture_as: answer
    success_schema: { type: object, properties: { verdict: { type: string } }, required: [verdict] }
outputs:
  verdict: <<answer.verdict>>
  line: "<<params.path>>: <<answer.verdict>>"
"#;

/// Uses the reviewer once per file, then once more through `triage`.
const REVIEW: &str = r#"
params:
  files: { type: array, items: { type: string } }
required: [files]
steps:
  - id: each
    uses: review_file
    foreach: params.files
    as: f
    with: { path: "<<f>>", strict: true }
    capture_as: reviews
  - id: report
    call: prompt.say
    input_template: { text: "<<reviews[0].line>> and <<len(reviews)>> in all" }
  - id: deeper
    uses: triage
    with: { first: "<<reviews[0].verdict>>" }
    capture_as: triaged
outputs:
  count: <<len(reviews)>>
  triage: <<triaged.decision>>
"#;

/// A child that itself uses the reviewer (a grandchild of `review`).
const TRIAGE: &str = r#"
params:
  first: { type: string }
required: [first]
steps:
  - id: again
    uses: review_file
    with: { path: "triage-<<params.first>>" }
    capture_as: second
outputs:
  decision: "<<params.first>>/<<second.verdict>>"
"#;

fn project(name: &str) -> Root {
    Root::with_workflows(name, &[("review_file", REVIEW_FILE), ("review", REVIEW), ("triage", TRIAGE)])
        .crate_files()
}

#[test]
fn check_types_a_multi_file_project_and_reports_across_files() {
    let root = project("subwf_check");
    let out = root.command(&["check", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // A mistake against the callee: an unknown param, a mistyped one, an undeclared output.
    root.workflow(
        "bad",
        "steps:\n  - id: r\n    uses: review_file\n    with: {pth: a.rs, strict: \"yes\"}\n    capture_as: r\n  - id: s\n    call: prompt.say\n    input_template: {text: \"<<r.verdit>>\"}\n",
    );
    // A cycle across files: ping uses pong uses ping.
    root.workflow("ping", "steps:\n  - id: to_pong\n    uses: pong\n");
    root.workflow("pong", "steps:\n  - id: to_ping\n    uses: ping\n");
    let out = root.command(&["check", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    for want in [
        "workflow `review_file` has no param `pth`",
        "`strict` of `review_file` takes a bool, found a string",
        "workflow `review_file` has no output `verdit`",
        "workflow cycle: `ping` → `pong` → `ping`",
        "`pong` uses `ping` at workflows/pong.yaml:3:11 (step `to_ping`)",
        "workflow cycle: `pong` → `ping` → `pong`",
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
    // One file checked alone still finds its callee in the project.
    let out = root.command(&["check", "workflows/bad.yaml"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("has no param `pth`"));
}

#[test]
fn a_parent_and_its_children_run_in_one_loop() {
    let root = project("subwf_run");
    let e = root.engine();
    let r = j(e.plan("review", json!({"files": ["a.rs", "b.rs"]}), Some("r1"), true).unwrap());
    // The child's instruction, handed out by the parent, tagged with the child run.
    assert_eq!(r["run_id"], "r1");
    assert_eq!(r["instruction"]["step_id"], "each[0]/ask");
    assert_eq!(r["instruction"]["sub_run"], json!({"workflow": "review_file", "run_id": "r1.each.0"}));
    assert_eq!(r["instruction"]["input"]["text"], "Review a.rs (strict: true); answer {verdict}");
    // A result that fails the child's schema is refused as the child says, prefixed.
    let err = next(&e, "review", "r1", "each[0]/ask", json!({"nope": 1})).unwrap_err();
    assert_eq!(err["error"], "VALIDATION_FAILED");
    assert_eq!(err["instruction"]["step_id"], "each[0]/ask");
    let r = next(&e, "review", "r1", "each[0]/ask", json!({"verdict": "ok"})).unwrap();
    assert_eq!(r["instruction"]["step_id"], "each[1]/ask");
    let r = next(&e, "review", "r1", "each[1]/ask", json!({"verdict": "bad"})).unwrap();
    assert_eq!(r["instruction"]["step_id"], "report");
    assert_eq!(r["instruction"]["input"]["text"], "a.rs: ok and 2 in all");
    let r = next(&e, "review", "r1", "report", json!({})).unwrap();
    // A grandchild: review → triage → review_file.
    assert_eq!(r["instruction"]["step_id"], "deeper/again/ask");
    assert_eq!(r["instruction"]["sub_run"]["run_id"], "r1.deeper.again");
    assert_eq!(r["instruction"]["input"]["text"], "Review triage-ok (strict: false); answer {verdict}");
    let r = next(&e, "review", "r1", "deeper/again/ask", json!({"verdict": "fine"})).unwrap();
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["artifacts"]["reviews"][1], json!({"verdict": "bad", "line": "b.rs: bad"}));
    assert_eq!(r["artifacts"]["triaged"], json!({"decision": "ok/fine"}));

    // The children are real runs: listed, pinned, linked to their parent.
    let list = j(e.state_list(None).unwrap());
    let ids: Vec<&str> =
        list["runs"].as_array().unwrap().iter().filter_map(|r| r["run_id"].as_str()).collect();
    for id in ["r1", "r1.each.0", "r1.each.1", "r1.deeper", "r1.deeper.again"] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    let child = j(e.state_get("review_file", "r1.each.1").unwrap());
    assert_eq!(child["status"], "done");
    let mut parent = child["parent"].clone();
    // Where its spans join the parent's trace (tests/it/telemetry.rs).
    let trace = parent.as_object_mut().unwrap().remove("trace").unwrap_or_default();
    assert_eq!(parent, json!({"workflow": "review", "run_id": "r1", "step_id": "each[1]", "depth": 1}));
    assert_eq!(trace["trace_id"].as_str().map(str::len), Some(32), "{trace}");
    assert_eq!(trace["span_id"].as_str().map(str::len), Some(16), "{trace}");
    let grandchild = j(e.state_get("review_file", "r1.deeper.again").unwrap());
    assert_eq!(grandchild["parent"]["depth"], 2);
    // Pinned to the version it started with, as any run.
    assert!(grandchild["workflow_hash"].as_str().is_some_and(|h| !h.is_empty()));
    assert_eq!(grandchild["workflow_hash"], child["workflow_hash"]);
}

#[test]
fn a_failed_child_fails_its_parent_step() {
    let root = project("subwf_fail");
    root.workflow("strict_review", "steps:\n  - id: r\n    uses: review_file\n    with: {path: x.rs}\n");
    // review_file's `ask` fails its schema three times (retry.max default 3).
    let e = root.engine();
    let r = j(e.plan("strict_review", json!({}), Some("f1"), true).unwrap());
    assert_eq!(r["instruction"]["step_id"], "r/ask");
    let mut last = json!(null);
    for _ in 0..3 {
        last = next(&e, "strict_review", "f1", "r/ask", json!({})).unwrap_err();
    }
    assert_eq!(last["error"], "RUN_FAILED", "{last}");
    assert_eq!(last["details"]["error"], "CHILD_FAILED");
    assert_eq!(last["details"]["child_run_id"], "f1.r");
    assert_eq!(last["details"]["child"]["error"], "VALIDATION_FAILED");
    let child = j(e.state_get("review_file", "f1.r").unwrap());
    assert_eq!(child["status"], "failed");
    // Outputs the step's success_schema refuses fail it too.
    root.workflow(
        "picky",
        "steps:\n  - id: r\n    uses: review_file\n    with: {path: y.rs}\n    success_schema: {type: object, required: [score]}\n",
    );
    e.plan("picky", json!({}), Some("p1"), true).unwrap();
    let err = next(&e, "picky", "p1", "r/ask", json!({"verdict": "ok"})).unwrap_err();
    assert_eq!(err["details"]["child"]["error"], "VALIDATION_FAILED", "{err}");
    // A `uses:` of a workflow that is not there: refused at plan (check's UNKNOWN_WORKFLOW).
    root.workflow("lost", "steps:\n  - id: r\n    uses: nowhere\n");
    let err = e.plan("lost", json!({}), Some("l1"), true).unwrap_err().to_json();
    assert_eq!(err["error"], "YAML_SCHEMA_VIOLATION", "{err}");
    assert_eq!(err["details"]["diagnostics"][0]["code"], "UNKNOWN_WORKFLOW");
}

#[test]
fn plan_refuses_what_check_refuses_across_files() {
    let root = project("subwf_plan");
    root.workflow("bad", "steps:\n  - id: r\n    uses: review_file\n    with: {pth: a.rs}\n");
    root.workflow("loop_a", "steps:\n  - id: s\n    uses: loop_a\n");
    let e = root.engine();
    for (wf, want) in [("bad", "has no param `pth`"), ("loop_a", "uses itself")] {
        let err = e.plan(wf, json!({}), Some("p1"), true).unwrap_err().to_json();
        assert_eq!(err["error"], "YAML_SCHEMA_VIOLATION", "{err}");
        assert!(err.to_string().contains(want), "{want}: {err}");
    }
}

#[test]
fn a_cycle_made_while_a_run_goes_on_stops_at_the_depth_limit() {
    // `outer` runs `inner` once per item; `inner` is edited into a cycle
    // between the first item and the second: the check at plan could not
    // see it, the engine stops it 16 deep.
    let inner = "steps:\n  - id: x\n    call: prompt.say\n    input_template: {text: hi}\n";
    let outer = "steps:\n  - id: each\n    uses: inner\n    foreach: \"[1, 2]\"\n";
    let root = Root::with_workflows("subwf_cycle", &[("inner", inner), ("outer", outer)]).crate_files();
    let e = root.engine();
    let r = j(e.plan("outer", json!({}), Some("c1"), true).unwrap());
    assert_eq!(r["instruction"]["step_id"], "each[0]/x");
    root.workflow("inner", "steps:\n  - id: back\n    uses: outer\n");
    let err = next(&e, "outer", "c1", "each[0]/x", json!({})).unwrap_err();
    assert_eq!(err["details"]["error"], "CHILD_FAILED", "{err}");
    let text = err.to_string();
    assert!(text.contains("WORKFLOW_TOO_DEEP") && text.contains("the limit is 16"), "{text}");
    // The reason is said once, at the top, with where it happened: not one
    // copy of the message per level.
    let message = err["details"]["message"].as_str().unwrap_or_default();
    assert_eq!(message.matches("runs a sub-workflow").count(), 1, "{message}");
    assert!(
        message.contains("(at `each[") && message.contains("/back/") && message.contains("the limit is 16"),
        "{message}"
    );
}

/// A parent whose callee (at any depth) does not compile is refused at
/// `plan`, naming the step and the callee, as `check` refuses it; nothing
/// is started.
#[test]
fn plan_refuses_a_parent_whose_callee_has_errors() {
    let root = project("subwf_callee_errors");
    root.workflow(
        "broken",
        "steps:
  - id: a
    call: prompt.say
    deps: [nope]
",
    );
    root.workflow(
        "middle",
        "steps:
  - id: m
    uses: broken
",
    );
    root.workflow(
        "top",
        "steps:
  - id: t
    uses: middle
",
    );
    let e = root.engine();
    for wf in ["middle", "top"] {
        let err = e.plan(wf, json!({}), Some("p1"), true).unwrap_err().to_json();
        assert_eq!(err["error"], "YAML_SCHEMA_VIOLATION", "{err}");
        assert_eq!(err["details"]["uses"], "broken", "{err}");
        let message = err["details"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("`m` of `middle` uses `broken`, which cannot run"), "{message}");
        assert_eq!(err["details"]["diagnostics"][0]["code"], "UNKNOWN_DEP", "{err}");
        assert!(e.state_get(wf, "p1").is_err(), "{wf}: no run was started");
    }
}

/// A parent and child for `exec --dry-run`: the child's tool is answered
/// with a sample of its success schema.
const LINT_FILE: &str = r#"
params:
  path: { type: string }
required: [path]
steps:
  - id: lint
    call: linter.run
    input_template: { path: "<<params.path>>" }
    capture_as: lint
    success_schema: { type: object, properties: { verdict: { type: string } }, required: [verdict] }
outputs:
  verdict: <<lint.verdict>>
"#;

const LINT_ALL: &str = r#"
steps:
  - id: each
    uses: lint_file
    foreach: "['a.rs', 'b.rs', 'c.rs']"
    with: { path: "<<item>>" }
    capture_as: lints
outputs:
  count: <<len(lints)>>
"#;

#[test]
fn exec_runs_the_children_too_one_job_or_several() {
    let root =
        Root::with_workflows("subwf_exec", &[("lint_file", LINT_FILE), ("lint_all", LINT_ALL)]).crate_files();
    for (run_id, jobs) in [("e1", "1"), ("e4", "4")] {
        let out = root
            .command(&["exec", "lint_all", "--dry-run", "--json", "--run-id", run_id, "--jobs", jobs])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        for i in 0..3 {
            assert!(stdout.contains(&format!("each[{i}]/lint")), "{stdout}");
        }
        let e = root.engine();
        let parent = j(e.state_get("lint_all", run_id).unwrap());
        assert_eq!(parent["status"], "done", "{parent}");
        for i in 0..3 {
            let child = j(e.state_get("lint_file", &format!("{run_id}.each.{i}")).unwrap());
            assert_eq!(child["status"], "done");
            assert_eq!(child["parent"]["step_id"], format!("each[{i}]"));
        }
    }
}

/// MCP: one `think_plan`/`think_next` loop drives the parent and its children.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_plan_and_next_drive_parent_and_children_in_one_loop() {
    use crate::mcp_support::{call, connect_stdio};
    let root = project("subwf_mcp");
    let client = connect_stdio(&root.path, "0").await;
    let (is_error, mut r) = call(
        &client,
        "think_plan",
        json!({"workflow": "review", "params": {"files": ["x.rs"]}, "run_id": "m1"}),
    )
    .await;
    assert!(!is_error, "{r}");
    let mut seen = Vec::new();
    while r["done"] != true {
        let i = &r["instruction"];
        let step = i["step_id"].as_str().unwrap().to_owned();
        let result = if i["sub_run"].is_object() { json!({"verdict": "ok"}) } else { json!({}) };
        seen.push((step.clone(), i["sub_run"]["run_id"].clone()));
        let (is_error, next) = call(
            &client,
            "think_next",
            json!({"workflow": "review", "run_id": "m1", "step_id": step, "result": result}),
        )
        .await;
        assert!(!is_error, "{next}");
        r = next;
    }
    assert_eq!(
        seen,
        vec![
            ("each[0]/ask".to_owned(), json!("m1.each.0")),
            ("report".to_owned(), Value::Null),
            ("deeper/again/ask".to_owned(), json!("m1.deeper.again")),
        ]
    );
    assert_eq!(r["artifacts"]["triaged"], json!({"decision": "ok/ok"}));
    let (_, list) = call(&client, "think_state_list", json!({"workflow": "review_file"})).await;
    let ids: Vec<&str> =
        list["runs"].as_array().unwrap().iter().filter_map(|r| r["run_id"].as_str()).collect();
    assert!(ids.contains(&"m1.each.0") && ids.contains(&"m1.deeper.again"), "{list}");
    client.cancel().await.unwrap();
}

#[test]
fn a_reset_past_a_uses_step_starts_a_fresh_child_and_archives_the_old_one() {
    let root = project("subwf_reset");
    let e = root.engine();
    e.plan("review", json!({"files": ["a.rs"]}), Some("r2"), true).unwrap();
    let r = next(&e, "review", "r2", "each[0]/ask", json!({"verdict": "ok"})).unwrap();
    assert_eq!(r["instruction"]["step_id"], "report");
    let r = j(e.reset("review", "r2", None, true).unwrap());
    assert_eq!(r["instruction"]["step_id"], "each[0]/ask", "{r}");
    let child = j(e.state_get("review_file", "r2.each.0").unwrap());
    assert_eq!(child["status"], "running", "{child}");
    let archived = j(e.state_list_archived(Some("review_file")).unwrap());
    assert!(archived.to_string().contains("r2.each.0"), "{archived}");
    let r = next(&e, "review", "r2", "each[0]/ask", json!({"verdict": "again"})).unwrap();
    assert_eq!(r["instruction"]["input"]["text"], "a.rs: again and 1 in all");
}

/// A `uses:` step says what it runs wherever a step says what it calls:
/// `compile`'s nodes, `graph` in mermaid and dot, and `explain` (issue 42).
#[test]
fn a_uses_step_says_what_it_runs_everywhere() {
    let root = project("subwf_face");
    let r = root.ok(&["compile", "review"]);
    let each = &r["graph"]["nodes"][0];
    assert_eq!(
        (&each["id"], &each["uses"], &each["call"]),
        (&json!("each"), &json!("review_file"), &json!(""))
    );
    assert!(r["graph"]["nodes"][1].get("uses").is_none(), "{r}");
    let out = root.command(&["graph", "review", "--format", "mermaid"]).output().unwrap();
    let mermaid = String::from_utf8_lossy(&out.stdout);
    assert!(mermaid.contains(r#"s0["each<br/><small>uses review_file</small>"]"#), "{mermaid}");
    assert!(mermaid.contains(r#"s2["deeper<br/><small>uses triage</small>"]"#), "{mermaid}");
    assert!(mermaid.contains(r#"s1["report<br/><small>prompt.say</small>"]"#), "{mermaid}");
    let out = root.command(&["graph", "review", "--format", "dot"]).output().unwrap();
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(dot.contains(r#""each" [label="each\nuses review_file"];"#), "{dot}");
    let ex = j(root.engine().explain("review", None, None).unwrap());
    let steps = ex["steps"].as_array().unwrap();
    assert_eq!(steps[0]["uses"], "review_file", "{ex}");
    assert_eq!(steps[2]["uses"], "triage", "{ex}");
    assert!(steps[1].get("uses").is_none(), "{ex}");
}

/// pre-commit checks only the changed files: a parent whose callee (not on
/// the command line) has an error is refused at its `uses:` line, naming
/// the callee's first error, followed down through a clean middle.
#[test]
fn check_of_one_file_refuses_a_parent_whose_callee_has_errors() {
    let root = project("subwf_check_callee");
    root.workflow("broken", "steps:\n  - id: a\n    call: prompt.say\n    deps: [nope]\n");
    root.workflow("middle", "steps:\n  - id: m\n    uses: broken\n");
    root.workflow("top", "steps:\n  - id: t\n    uses: middle\n");
    let out = root.command(&["check", "--format", "json", "workflows/top.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diags = v["diagnostics"].as_array().cloned().unwrap_or_default();
    assert_eq!(diags.len(), 1, "one mistake, one diagnostic here: {v}");
    let d = &diags[0];
    assert_eq!(d["code"], "CALLEE_ERROR", "{v}");
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(3), Some(11)), "at the `uses:` value: {d}");
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("`middle` cannot run: it uses `broken`, which has an error: UNKNOWN_DEP"),
        "{message}"
    );
    assert!(d["help"].as_str().unwrap().contains("at workflows/broken.yaml:4:12"), "{d}");
    // An error silenced in the callee is not one for its callers.
    root.workflow(
        "broken",
        "steps:\n  - id: a\n    call: prompt.say\n    deps: [nope] # savant-think: ignore[UNKNOWN_DEP]\n",
    );
    let out = root.command(&["check", "workflows/top.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // Fixed for real: the parent checks clean and plans.
    root.workflow("broken", "steps:\n  - id: a\n    call: prompt.say\n");
    let out = root.command(&["check", "workflows/top.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(root.engine().plan("top", json!({}), Some("t1"), true).is_ok());
}
