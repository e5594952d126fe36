//! The run engine through its library API, on a temporary root.

use crate::common::j;
use crate::support::{Root, drive_to_done, next_args, next_json as next};
use savant_think::runtime::engine::NextArgs;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

/// A temporary project root with the given workflows (and the crate's schemas and prompts).
fn root(name: &str, workflows: &[(&str, &str)]) -> Root {
    Root::with_workflows(name, workflows).crate_files()
}

const FOREACH: &str = r#"
id: loop
params:
  items: { type: array, items: { type: string } }
required: [items]
steps:
  - id: each
    call: think
    foreach: params.items
    as: it
    when: "it != 'skip'"
    input_template: { thought: "item <<it>> #<<loop.index>>" }
    capture_as: out
  - id: after
    call: prompt.say
    input_template: { text: "<<len(out)>> results" }
"#;

#[test]
fn foreach_expands_skips_and_collects_in_index_order() {
    let root = root("foreach", &[("loop", FOREACH)]);
    let e = root.engine();
    let r = j(e.plan("loop", json!({"items": ["a", "skip", "c"]}), Some("r1"), true).unwrap());
    assert_eq!(r["instruction"]["step_id"], "each[0]");
    assert_eq!(r["instruction"]["input"], json!({"thought": "item a #0"}));
    assert_eq!(r["ready"], json!(["each[0]", "each[2]"]));
    // Results may arrive in any ready order.
    let r = next(&e, "loop", "r1", "each[2]", json!("C")).unwrap();
    assert_eq!(r["instruction"]["step_id"], "each[0]");
    let r = next(&e, "loop", "r1", "each[0]", json!("A")).unwrap();
    assert_eq!(r["instruction"]["step_id"], "after");
    assert_eq!(r["instruction"]["input"], json!({"text": "3 results"}));
    let r = next(&e, "loop", "r1", "after", json!({})).unwrap();
    assert_eq!(r["done"], true);
    assert_eq!(r["artifacts"]["out"], json!(["A", null, "C"]));
}

#[test]
fn errors_are_data_with_stable_codes() {
    let root = root("errors", &[("loop", FOREACH)]);
    let e = root.engine();
    let err = e.plan("loop", json!({}), Some("r1"), true).unwrap_err().to_json();
    assert_eq!(err["error"], "INVALID_PARAMS");
    let err = e.plan("nope", json!({}), None, true).unwrap_err().to_json();
    assert_eq!(err["error"], "UNKNOWN_WORKFLOW");
    e.plan("loop", json!({"items": ["a"]}), Some("r1"), true).unwrap();
    assert_eq!(next(&e, "loop", "r1", "ghost", json!({})).unwrap_err()["error"], "UNKNOWN_STEP");
    assert_eq!(next(&e, "loop", "r1", "after", json!({})).unwrap_err()["error"], "STEP_NOT_READY");
    assert_eq!(next(&e, "loop", "missing", "after", json!({})).unwrap_err()["error"], "UNKNOWN_RUN");
    let v1 = next(&e, "loop", "r1", "each[0]", json!("x")).unwrap();
    // Same result again: idempotent, same version.
    let again = next(&e, "loop", "r1", "each[0]", json!("x")).unwrap();
    assert_eq!(again["state"]["version"], v1["state"]["version"]);
    assert_eq!(next(&e, "loop", "r1", "each[0]", json!("y")).unwrap_err()["error"], "STATE_CONFLICT");
    let stale = e.next(NextArgs { expected_version: Some(0), ..next_args("loop", "r1", "after", json!({})) });
    assert_eq!(stale.unwrap_err().code, "STATE_CONFLICT");
    assert_eq!(e.plan("loop", json!({"items": []}), Some("../etc"), true).unwrap_err().code, "INVALID_ID");
}

#[test]
fn validation_failures_retry_then_fail_the_run() {
    let wf = r#"
id: strict
steps:
  - id: a
    call: think
    retry: { max: 2 }
    success_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
"#;
    let root = root("strict", &[("strict", wf)]);
    let e = root.engine();
    e.plan("strict", json!({}), Some("r"), true).unwrap();
    let err = next(&e, "strict", "r", "a", json!({"ok": "yes"})).unwrap_err();
    assert_eq!(err["error"], "VALIDATION_FAILED");
    assert_eq!(err["details"][0]["path"], "/ok");
    assert_eq!(err["instruction"]["attempt"], 2);
    let err = next(&e, "strict", "r", "a", json!({})).unwrap_err();
    assert_eq!(err["error"], "VALIDATION_FAILED");
    assert_eq!(err["state"]["status"], "failed");
    let why = j(e.explain("strict", Some("r"), Some("a")).unwrap());
    assert!(why["failure"]["message"].as_str().unwrap().contains("2 times"), "{why}");
}

#[test]
fn state_survives_a_new_engine_and_reset_needs_force() {
    let root = root("resume", &[("loop", FOREACH)]);
    {
        let e = root.engine();
        e.plan("loop", json!({"items": ["a", "b"]}), Some("r"), true).unwrap();
        next(&e, "loop", "r", "each[0]", json!(1)).unwrap();
    }
    let e = root.engine();
    let r = j(e.plan("loop", json!(null), Some("r"), false).unwrap());
    assert_eq!(r["instruction"]["step_id"], "each[1]");
    assert_eq!(e.reset("loop", "r", None, false).unwrap_err().code, "RESET_NOT_ALLOWED");
    let r = j(e.reset("loop", "r", None, true).unwrap());
    assert_eq!(r["instruction"]["step_id"], "each[0]");
    let state = j(e.state_get("loop", "r").unwrap());
    assert!(state["version"].as_u64().unwrap() > 1, "versions never go back");
}

#[test]
fn the_bundled_review_workflow_runs_to_done() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(crate_dir.join("workflows/review_v1.yaml")).unwrap();
    let root = root("review", &[("review_v1", &text)]);
    let e = root.engine();
    let mr = json!({"iid": 1, "title": "Fix", "source_branch": "fix", "changes": [
        {"new_path": "a.rs", "diff": "+x"}, {"new_path": "Cargo.lock", "diff": "+y"}]});
    let mut seen = Vec::new();
    let params = json!({"mr_iid": "!1", "project": "g/app"});
    let done = drive_to_done(&e, "review_v1", "run1", params, |i| {
        seen.push(i.step_id.clone());
        match i.step_id.as_str() {
            "fetch_mr" => mr.clone(),
            s if s.starts_with("review_file") => json!({"path": "a.rs", "findings": []}),
            "lint" => json!({"ok": true}),
            _ => json!({}),
        }
    });
    let r = j(done.unwrap());
    assert_eq!(seen, ["fetch_mr", "review_file[0]", "lint", "tests", "summarize"]);
    assert_eq!(r["artifacts"]["reviews"][1], Value::Null, "the lock file was skipped");
}

/// The compiled workflow is cached by the file's identity, but a rewrite of
/// the same size right after a read (same clock tick, same inode) is still
/// seen: a recently modified file is always read again.
#[test]
fn a_same_size_rewrite_right_after_a_read_is_seen() {
    let a = "steps:\n  - id: a\n    call: prompt.say\n";
    let b = "steps:\n  - id: b\n    call: prompt.say\n";
    let root = root("identity", &[("flip", a)]);
    let e = root.engine();
    let first = e.workflow("flip").unwrap();
    assert_eq!(first.wf.steps[0].id.value, "a");
    let path = root.join("workflows/flip.yaml");
    // In place (same inode), same length.
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().write_all(b.as_bytes()).unwrap();
    let second = e.workflow("flip").unwrap();
    assert_eq!(second.wf.steps[0].id.value, "b", "the rewrite was not seen");
    assert_ne!(first.hash, second.hash);
    // Unchanged: the same compiled workflow comes back.
    let third = e.workflow("flip").unwrap();
    assert!(std::sync::Arc::ptr_eq(&second, &third));
}
