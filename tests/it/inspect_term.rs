//! The inspector in the terminal (issue 26): `state list` as a table (JSON
//! when piped), `state get --format human`, and `graph --run-id` in boxes,
//! plain when piped. The workflow and run are the ones the page tests use.

use crate::common::Root;
use serde_json::Value;

/// A workflow with each kind of edge and status: an explicit dep, a capture
/// read, a `steps.x` read in a `when`, and a foreach.
pub const REVIEW: &str = r#"id: review
params:
  mr: { type: string }
steps:
  - id: fetch
    call: gitlab.get_mr
    input_template: { mr: "<<params.mr>>" }
    capture_as: mr_data
  - id: lint
    call: tools.lint
    deps: [fetch]
  - id: files
    call: gitlab.files
    input_template: { title: "<<mr_data.title>>" }
    capture_as: file_list
  - id: review_each
    call: ai.do
    foreach: file_list
    input_template: { file: "<<item>>" }
  - id: summarize
    call: prompt.say
    deps: [lint]
    when: "steps.review_each.status == 'done'"
    input_template: { message: "<<mr_data.title>>" }
"#;

/// A root with `review` and run `r1` two steps in: fetch and files done,
/// lint and the two items ready, summarize pending.
pub fn review_run(name: &str) -> Root {
    let root = Root::with_workflows(name, &[("review", REVIEW)]);
    root.ok(&["plan", "review", "--run-id", "r1", "--params", r#"{"mr": "!7"}"#]);
    root.ok(&[
        "next",
        "review",
        "--run-id",
        "r1",
        "--step",
        "fetch",
        "--result",
        r#"{"title": "Fix <b>it</b>"}"#,
    ]);
    root.ok(&["next", "review", "--run-id", "r1", "--step", "files", "--result", r#"["a.rs", "b.rs"]"#]);
    root
}

fn stdout(root: &Root, args: &[&str]) -> String {
    let out = root.command(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn state_list_is_a_table_for_a_person_and_json_when_piped() {
    let root = review_run("term-list");
    let table = stdout(&root, &["state", "list", "--format", "human"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("WORKFLOW  RUN  STATUS   VERSION  UPDATED"), "{table}");
    assert!(lines[1].starts_with("review    r1   running  2"), "{table}");
    assert!(lines[1].ends_with("lint, review_each[0] (+1)"), "{table}");
    assert_eq!(lines[2], "1 run");
    assert!(!table.contains('\x1b'), "no colour when piped: {table:?}");
    // Piped, the default stays JSON.
    let json: Value = serde_json::from_str(&stdout(&root, &["state", "list"])).unwrap();
    assert_eq!(json["runs"][0]["run_id"], "r1");
    let json: Value = serde_json::from_str(&stdout(&root, &["state", "list", "--format", "json"])).unwrap();
    assert_eq!(json["runs"][0]["status"], "running");
}

#[test]
fn state_get_human_summarises_a_run() {
    let root = review_run("term-get");
    let text = stdout(&root, &["state", "get", "review", "--run-id", "r1", "--format", "human"]);
    assert!(text.starts_with("review · run r1 · running · version 2\n"), "{text}");
    assert!(text.contains("5 steps: 2 done · 1 ready · 1 running · 1 pending"), "{text}");
    assert!(text.contains("ready: lint, review_each[0], review_each[1]"), "{text}");
    assert!(text.contains("  ✓ fetch        done      {\"title\":\"Fix <b>it</b>\"}"), "{text}");
    assert!(text.contains("  ◐ review_each  running   0/2 items"), "{text}");
    assert!(text.lines().all(|l| l == l.trim_end()), "{text:?}");
    // Without --format it is the JSON it always was.
    let json: Value =
        serde_json::from_str(&stdout(&root, &["state", "get", "review", "--run-id", "r1"])).unwrap();
    assert_eq!(json["version"], 2);
    // An unknown run is the engine's error, with its did-you-mean.
    let out =
        root.command(&["state", "get", "review", "--run-id", "r2", "--format", "human"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"], "UNKNOWN_RUN", "{e}");
}

#[test]
fn graph_with_a_run_draws_boxes_with_statuses() {
    let root = review_run("term-graph");
    let text = stdout(&root, &["graph", "review", "--run-id", "r1"]);
    assert!(!text.contains('\x1b'), "plain when piped: {text:?}");
    let expected = "review · run r1 · running · version 2
╭──────────────────────╮
│ ✓ fetch              │
│ done · gitlab.get_mr │
│ entry                │
╰──────────────────────╯
  ↓
╭────────────────────╮ ╭─────────────────────╮
│ ● lint             │ │ ✓ files             │
│ ready · tools.lint │ │ done · gitlab.files │
│ ← fetch            │ │ ← fetch (mr_data)   │
╰────────────────────╯ ╰─────────────────────╯
  ↓
";
    assert!(text.starts_with(expected), "{text}");
    assert!(text.contains("│ running · 0/2 items · ai.do │"), "{text}");
    // The laid-out graph as JSON: every step, each edge labelled as check labels it.
    let json: Value =
        serde_json::from_str(&stdout(&root, &["graph", "review", "--run-id", "r1", "--format", "json"]))
            .unwrap();
    assert_eq!(json["nodes"].as_array().unwrap().len(), 5);
    let labels: Vec<String> = json["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}->{}:{}",
                e["from"].as_str().unwrap(),
                e["to"].as_str().unwrap(),
                e["label"].as_str().unwrap()
            )
        })
        .collect();
    assert!(labels.contains(&"fetch->lint:deps".to_owned()), "{labels:?}");
    assert!(labels.contains(&"fetch->files:mr_data".to_owned()), "{labels:?}");
    assert!(labels.contains(&"review_each->summarize:steps.review_each".to_owned()), "{labels:?}");
    // Without a run: the same boxes, every step pending; Mermaid stays the default.
    let text = stdout(&root, &["graph", "review", "--format", "text"]);
    assert!(text.contains("│ ○ summarize"), "{text}");
    assert!(stdout(&root, &["graph", "review"]).starts_with("flowchart TD"));
    let out = root.command(&["graph", "review", "--run-id", "r1", "--format", "dot"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
