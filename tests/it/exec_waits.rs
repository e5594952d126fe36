//! `exec` and waits: a short sleep is waited in process, a question with
//! no terminal parks the run (exit 3, how to answer and resume printed),
//! `answer` then `exec --run-id` finishes it, and a dry run passes through
//! every wait (a sampled answer, a sampled event, a timer fired now).

use crate::support::Root;
use serde_json::Value;

const APPROVE: &str = r#"
id: approve
steps:
  - id: nap
    sleep: 1s
  - id: approve
    await:
      ask: "Post it?"
      schema: {type: object, properties: {approved: {type: boolean}}, required: [approved]}
      timeout: 24h
    capture_as: approval
    deps: [nap]
  - id: post
    call: think
    when: approval.approved
    input_template: {thought: "posting"}
  - id: ci
    wait_for: {event: ci.done, match: "x1", timeout: 2h}
    capture_as: ci
    deps: [approve]
"#;

const CONFIG: &str = r#"
[events."ci.done"]
schema = { type = "object", properties = { status = { type = "string" } }, required = ["status"] }
"#;

#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
}

fn run(root: &Root, args: &[&str]) -> Out {
    let out = root.command(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    Out { code: out.status.code(), stdout: format!("{}{stderr}", String::from_utf8_lossy(&out.stdout)) }
}

fn events(stdout: &str) -> Vec<Value> {
    stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[test]
fn a_run_that_waits_parks_with_exit_3_and_resumes_after_its_answer() {
    let root = Root::with_workflows("exec_waits", &[("approve", APPROVE)]).crate_files();
    root.write("savant-think.toml", CONFIG);
    // The 1s sleep is within --max-wait (1m): waited in process. The
    // question has no terminal: the run parks.
    let out = run(&root, &["exec", "approve", "--run-id", "r1", "--json"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    let summary = events(&out.stdout).pop().unwrap();
    assert_eq!(summary["status"], "waiting", "{summary}");
    assert_eq!(summary["resume"], "savant-think exec approve --run-id r1", "{summary}");
    assert_eq!(summary["waiting"][0]["step_id"], "approve", "{summary}");
    assert_eq!(summary["waiting"][0]["ask"], "Post it?", "{summary}");
    let how = summary["waiting"][0]["how"].as_str().unwrap();
    assert!(how.contains("savant-think answer approve --run-id r1 --step approve --value JSON"), "{how}");
    // Without --json, the same for a person on stdout.
    let out = run(&root, &["exec", "approve", "--run-id", "r1"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stdout.contains("waiting: approve run r1\n  approve: asks \"Post it?\""), "{out:?}");
    assert!(out.stdout.contains("then resume with: savant-think exec approve --run-id r1"), "{out:?}");
    root.ok(&[
        "answer",
        "approve",
        "--run-id",
        "r1",
        "--step",
        "approve",
        "--value",
        r#"{"approved": true}"#,
    ]);
    // Resumed: `post` runs, then the event wait (2h, beyond --max-wait) parks it again.
    let out = run(&root, &["exec", "approve", "--run-id", "r1", "--json", "--max-wait", "5s"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    let all = events(&out.stdout);
    assert!(all.iter().any(|e| e["event"] == "step_finished" && e["step_id"] == "post"), "{out:?}");
    let summary = all.last().unwrap();
    assert_eq!(summary["waiting"][0]["event"], "ci.done", "{summary}");
    root.ok(&["signal", "ci.done", "--key", "x1", "--payload", r#"{"status": "green"}"#]);
    let out = run(&root, &["exec", "approve", "--run-id", "r1", "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let summary = events(&out.stdout).pop().unwrap();
    assert_eq!(summary["artifacts"]["ci"]["status"], "green", "{summary}");
    // A bad --max-wait is a usage error.
    let out = run(&root, &["exec", "approve", "--max-wait", "soon"]);
    assert_eq!(out.code, Some(2), "{out:?}");
}

#[test]
fn a_dry_run_passes_through_every_wait() {
    let root = Root::with_workflows("exec_waits_dry", &[("approve", APPROVE)]).crate_files();
    root.write("savant-think.toml", CONFIG);
    let out = run(&root, &["exec", "approve", "--run-id", "d1", "--json", "--dry-run", "--max-wait", "0s"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let summary = events(&out.stdout).pop().unwrap();
    assert_eq!(summary["status"], "done", "{summary}");
    assert!(summary["artifacts"]["approval"]["approved"].is_boolean(), "{summary}");
    assert!(summary["artifacts"]["ci"]["status"].is_string(), "{summary}");
    let skipped = u64::from(summary["artifacts"]["approval"]["approved"] == false);
    assert_eq!(summary["exercised"]["steps"].as_u64(), Some(4 - skipped), "{summary}");
}
