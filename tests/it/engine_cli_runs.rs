//! The engine's command line, continued from `engine_cli.rs` (its
//! harness): payload caps, the error codes, and what a run's records say
//! between processes.

use crate::engine_cli::{Cli, PARAMS, mr, review_yaml};
use serde_json::{Value, json};

// ------------------------------------------------------------ payload caps

const TWO_STEPS: &str = "id: big
steps:
  - id: a
    call: think
    capture_as: a_out
  - id: b
    call: think
    deps: [a]
    capture_as: b_out
";

#[test]
fn oversized_results_are_truncated_with_a_marker_and_listed_in_the_summary() {
    let root = Cli::new("caps");
    root.write("savant-think.toml", "max_string_bytes = 16\nmax_snapshot_bytes = 300\n");
    root.write("workflows/big.yaml", TWO_STEPS);

    // A string over max_string_bytes: cut at a character boundary, marked.
    root.ok(&["plan", "big", "--run-id", "s"]);
    root.ok(&["next", "big", "--run-id", "s", "--step", "a", "--result", r#"{"n": 1}"#]);
    let long = json!({"text": format!("{}{}", "x".repeat(15), "é".repeat(40)), "short": "ok"});
    let r = root.ok(&["next", "big", "--run-id", "s", "--step", "b", "--result", &long.to_string()]);
    assert_eq!(r["done"], true, "{r}");
    // 15 + 80 bytes; the cut falls inside an `é` at 16, so 15 bytes stay and 80 go.
    assert_eq!(
        r["artifacts"]["b_out"],
        json!({"text": format!("{}…(truncated 80 bytes)", "x".repeat(15)), "short": "ok"})
    );
    assert_eq!(r["summary"]["truncated"], json!(["b"]));
    assert_eq!(r["summary"]["message"], "2 step(s) ran, 0 skipped, 1 result(s) truncated");
    // Resending the same oversized result is still idempotent.
    let again = root.ok(&["next", "big", "--run-id", "s", "--step", "b", "--result", &long.to_string()]);
    assert_eq!(again["artifacts"], r["artifacts"]);

    // A result over max_snapshot_bytes: replaced by a preview, marked.
    root.ok(&["plan", "big", "--run-id", "t"]);
    root.ok(&["next", "big", "--run-id", "t", "--step", "a", "--result", "{}"]);
    let items: Vec<u32> = (1..=200).collect();
    let big = serde_json::to_string(&items).unwrap();
    let r = root.ok(&["next", "big", "--run-id", "t", "--step", "b", "--result", &big]);
    let out = &r["artifacts"]["b_out"];
    assert_eq!(out["truncated"], true, "{r}");
    let preview = out["preview"].as_str().unwrap();
    let cut = 300 - 64;
    assert_eq!(preview, format!("{}…(truncated {} bytes)", &big[..cut], big.len() - cut));
    assert_eq!(r["summary"]["truncated"], json!(["b"]));

    // Small results are untouched.
    root.ok(&["plan", "big", "--run-id", "u"]);
    root.ok(&["next", "big", "--run-id", "u", "--step", "a", "--result", r#""0123456789abcdef""#]);
    let r = root.ok(&["next", "big", "--run-id", "u", "--step", "b", "--result", "[1,2,3]"]);
    assert_eq!(r["artifacts"], json!({"a_out": "0123456789abcdef", "b_out": [1, 2, 3]}));
    assert_eq!(r["summary"]["truncated"], json!([]));
    assert_eq!(r["summary"]["message"], "2 step(s) ran, 0 skipped");
}

// ------------------------------------------------------------ the error codes

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn the_run_errors_have_their_codes() {
    let root = Cli::new("codes");
    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    let next = |step: &str, result: &str| -> Vec<String> {
        ["next", "review_v1", "--run-id", "r", "--step", step, "--result", result].map(str::to_owned).to_vec()
    };

    let e = root.err(&args(&next("ghost", "{}")), "UNKNOWN_STEP");
    assert_eq!(e["details"]["ready"], json!(["fetch_mr"]));
    let e = root.err(&args(&next("lint", "{}")), "STEP_NOT_READY");
    assert_eq!(e["details"]["status"], "pending");
    root.err(&args(&next("review_file[0]", "{}")), "UNKNOWN_STEP");
    root.err(
        &["next", "review_v1", "--run-id", "nope", "--step", "fetch_mr", "--result", "{}"],
        "UNKNOWN_RUN",
    );
    root.err(&["next", "nope", "--run-id", "r", "--step", "fetch_mr", "--result", "{}"], "UNKNOWN_WORKFLOW");

    // A result that fails its success schema: VALIDATION_FAILED with the
    // instruction again (next attempt); the run stays at its version + 1.
    let e = root.err(&args(&next("fetch_mr", r#"{"iid": 7}"#)), "VALIDATION_FAILED");
    assert_eq!(e["instruction"]["step_id"], "fetch_mr");
    assert_eq!(e["instruction"]["attempt"], 2);
    assert_eq!(e["state"]["status"], "running");
    assert!(
        e["details"].as_array().unwrap().iter().any(|d| d["message"].as_str().unwrap().contains("title"))
    );

    let mr = mr().to_string();
    let r = root.ok(&args(&next("fetch_mr", &mr)));
    let version = r["state"]["version"].as_u64().unwrap();
    // Resending the same result: the same response, no new version.
    assert_eq!(root.ok(&args(&next("fetch_mr", &mr))), r);
    // A different result for a done step: STATE_CONFLICT.
    let other = json!({"iid": 8, "title": "x", "source_branch": "b", "changes": []}).to_string();
    root.err(&args(&next("fetch_mr", &other)), "STATE_CONFLICT");
    // A stale expected_version: STATE_CONFLICT; the current one is accepted.
    let mut stale = next("lint", r#"{"ok": true}"#);
    stale.extend(["--expected-version".to_owned(), (version - 1).to_string()]);
    let e = root.err(&args(&stale), "STATE_CONFLICT");
    assert_eq!(e["details"]["version"], version);
    let mut current = next("lint", r#"{"ok": true}"#);
    current.extend(["--expected-version".to_owned(), version.to_string()]);
    let r = root.ok(&args(&current));
    assert_eq!(r["state"]["version"], version + 1);

    // Foreach items: `id[i]`; the foreach step itself is not submitted.
    let e = root.err(&args(&next("review_file", "{}")), "STEP_NOT_READY");
    assert_eq!(e["details"]["status"], "running");
    root.err(&args(&next("review_file[2]", "{}")), "UNKNOWN_STEP");
    let e = root.err(&args(&next("review_file[1]", "{}")), "STEP_NOT_READY");
    assert_eq!(e["details"]["status"], "skipped", "Cargo.lock is skipped by `when`");
}

#[test]
fn validation_retries_run_out_and_fail_the_run() {
    let root = Cli::new("retries");
    root.write(
        "workflows/strict.yaml",
        "id: strict\nsteps:\n  - id: a\n    call: think\n    retry: { max: 2 }\n    \
         success_schema: { type: object, required: [ok] }\n  - id: b\n    call: think\n    deps: [a]\n",
    );
    root.ok(&["plan", "strict", "--run-id", "r"]);
    let e =
        root.err(&["next", "strict", "--run-id", "r", "--step", "a", "--result", "{}"], "VALIDATION_FAILED");
    assert_eq!(e["state"]["status"], "running");
    let e =
        root.err(&["next", "strict", "--run-id", "r", "--step", "a", "--result", "{}"], "VALIDATION_FAILED");
    assert_eq!(e["state"]["status"], "failed");
    assert!(e["details"]["message"].as_str().unwrap().contains("2 times"), "{e}");
    // The run is over: every call says why.
    let again = root.err(
        &["next", "strict", "--run-id", "r", "--step", "a", "--result", r#"{"ok": 1}"#],
        "VALIDATION_FAILED",
    );
    assert_eq!(again["details"], e["details"]);
    root.err(&["plan", "strict", "--run-id", "r", "--no-fresh"], "VALIDATION_FAILED");
    let why = root.ok(&["explain", "strict", "--run-id", "r", "--step", "a"]);
    assert_eq!(why["step"]["failure"]["error"], "VALIDATION_FAILED");
    // A reset brings it back.
    let r = root.ok(&["reset", "strict", "--run-id", "r"]);
    assert_eq!(r["ready"], json!(["a"]));
    assert_eq!(r["instruction"]["attempt"], 1);
}

#[test]
fn a_text_template_reading_null_is_template_render_error() {
    let root = Cli::new("render");
    root.write(
        "workflows/render.yaml",
        "id: render\nsteps:\n  - id: fetch\n    call: jira.get_issue\n    capture_as: issue\n  \
         - id: say\n    call: prompt.say\n    input_template: { text: \"Title: <<issue.title>>\" }\n",
    );
    root.ok(&["plan", "render", "--run-id", "r"]);
    let e = root.err(
        &["next", "render", "--run-id", "r", "--step", "fetch", "--result", "{}"],
        "TEMPLATE_RENDER_ERROR",
    );
    assert_eq!(e["details"]["step_id"], "say");
    assert_eq!(e["details"]["expression"], "issue.title");
    assert_eq!(e["state"]["status"], "failed");
}

#[test]
fn broken_files_have_their_codes() {
    let root = Cli::new("broken");
    root.write("workflows/bad.yaml", "id: bad\nsteps:\n  - id: a\n    cal: think\n");
    let e = root.err(&["plan", "bad"], "YAML_SCHEMA_VIOLATION");
    assert!(e["details"]["diagnostics"].as_array().is_some_and(|d| !d.is_empty()), "{e}");

    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    std::fs::write(root.join(".savant/state/review_v1__r.json"), "{ not json").unwrap();
    root.err(&["state", "get", "review_v1", "--run-id", "r"], "STATE_CORRUPT");
    root.err(
        &["next", "review_v1", "--run-id", "r", "--step", "fetch_mr", "--result", "{}"],
        "STATE_CORRUPT",
    );
    let list = root.ok(&["state", "list"]);
    assert_eq!(list["runs"][0]["status"], "unreadable");
    // A corrupt run can be deleted or started over (it cannot be archived: it is unreadable).
    let r = root.ok(&["plan", "review_v1", "--run-id", "r", "--replace", "--params", PARAMS]);
    assert!(r["warnings"][0].as_str().unwrap().contains("STATE_CORRUPT"), "{r}");

    root.write("savant-think.toml", "max_string_byte = 3\n");
    let e = root.err(&["plan", "review_v1", "--params", PARAMS], "INVALID_CONFIG");
    assert!(e["details"]["message"].as_str().unwrap().contains("max_string_byte"), "{e}");
    root.err(&["state", "list"], "INVALID_CONFIG");
}

#[test]
fn state_list_get_and_delete() {
    let root = Cli::new("state");
    root.ok(&["plan", "review_v1", "--run-id", "b", "--params", PARAMS]);
    root.ok(&["plan", "review_v1", "--run-id", "a", "--params", PARAMS]);
    root.ok(&["next", "review_v1", "--run-id", "a", "--step", "fetch_mr", "--result", &mr().to_string()]);
    let list = root.ok(&["state", "list"]);
    let runs = list["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0]["run_id"].as_str(), runs[0]["version"].as_u64()), (Some("a"), Some(1)));
    assert_eq!((runs[1]["run_id"].as_str(), runs[1]["version"].as_u64()), (Some("b"), Some(0)));
    assert_eq!(root.ok(&["state", "list", "review_v1"]), list);
    assert_eq!(root.ok(&["state", "list", "other"])["runs"], json!([]));
    for f in ["review_v1__a.json", "review_v1__a.journal", "review_v1__a.lock"] {
        assert!(root.join(".savant/state").join(f).is_file(), "{f}");
    }
    let state = root.ok(&["state", "get", "review_v1", "--run-id", "a"]);
    for key in [
        "version",
        "workflow",
        "run_id",
        "workflow_hash",
        "params",
        "status",
        "steps",
        "captures",
        "history",
        "checkpoints",
        "created_at",
        "updated_at",
    ] {
        assert!(state.get(key).is_some(), "{key} in {state}");
    }
    assert_eq!(
        state["params"],
        json!({"mr_iid": "!7", "project": "group/app", "run_tests": true, "max_files": 50})
    );
    root.ok(&["state", "delete", "review_v1", "--run-id", "a"]);
    root.err(&["state", "delete", "review_v1", "--run-id", "a"], "UNKNOWN_RUN");
    assert!(!root.join(".savant/state/review_v1__a.json").exists());
    assert!(!root.join(".savant/state/review_v1__a.journal").exists());
    let r = root.ok(&["workflows", "read", "review_v1"]);
    assert_eq!(r["yaml"], review_yaml());
}

// ------------------------------------------------------------ records survive between processes

#[test]
fn a_truncation_is_recorded_in_the_state_and_the_final_summary() {
    let root = Cli::new("caps-kept");
    root.write("savant-think.toml", "max_string_bytes = 10\n");
    root.write("workflows/big.yaml", TWO_STEPS);
    root.ok(&["plan", "big", "--run-id", "k"]);
    // The truncating result is not the last one: each command is a new
    // process, so the record must come from the stored run.
    root.ok(&["next", "big", "--run-id", "k", "--step", "a", "--result", r#"{"t": "0123456789abcdef"}"#]);
    let state = root.ok(&["state", "get", "big", "--run-id", "k"]);
    assert_eq!(state["truncations"][0]["step_id"], "a", "{state}");
    let done = root.ok(&["next", "big", "--run-id", "k", "--step", "b", "--result", "{}"]);
    assert_eq!(done["summary"]["truncated"], json!(["a"]), "{done}");
    // Re-sending the last result changes nothing, the record included.
    let again = root.ok(&["next", "big", "--run-id", "k", "--step", "b", "--result", "{}"]);
    assert_eq!(again["summary"], done["summary"]);
}

#[test]
fn state_list_shows_the_status_after_the_last_event() {
    let root = Cli::new("list-status");
    root.write("workflows/big.yaml", TWO_STEPS);
    root.ok(&["plan", "big", "--run-id", "l"]);
    root.ok(&["next", "big", "--run-id", "l", "--step", "a", "--result", "{}"]);
    root.ok(&["next", "big", "--run-id", "l", "--step", "b", "--result", "{}"]);
    let list = root.ok(&["state", "list"]);
    assert_eq!(
        list["runs"],
        json!([{"workflow": "big", "run_id": "l", "status": "done", "version": 2,
        "updated_at": list["runs"][0]["updated_at"]}])
    );
}

#[test]
fn reading_an_unknown_run_or_refusing_params_leaves_no_file() {
    let root = Cli::new("no-litter");
    let before = root.files();
    root.err(&["state", "get", "review_v1", "--run-id", "ghost"], "UNKNOWN_RUN");
    root.err(&["explain", "review_v1", "--run-id", "ghost"], "UNKNOWN_RUN");
    root.err(
        &["next", "review_v1", "--run-id", "ghost", "--step", "fetch_mr", "--result", "{}"],
        "UNKNOWN_RUN",
    );
    root.err(&["state", "delete", "review_v1", "--run-id", "ghost"], "UNKNOWN_RUN");
    root.err(&["plan", "review_v1", "--run-id", "ghost", "--params", "{}"], "INVALID_PARAMS");
    assert_eq!(root.files(), before);
}

const RENDER_FAILS: &str = "id: render
steps:
  - id: a
    call: think
    capture_as: x
    success_schema: { type: object }
  - id: b
    call: think
    input_template: { thought: \"n is <<x.n>>\" }
";

#[test]
fn a_run_that_cannot_render_fails_and_says_so_everywhere() {
    let root = Cli::new("render-fails");
    root.write("workflows/render.yaml", RENDER_FAILS);
    root.ok(&["plan", "render", "--run-id", "f"]);
    root.err(&["next", "render", "--run-id", "f", "--step", "a", "--result", "{}"], "TEMPLATE_RENDER_ERROR");
    let explained = root.ok(&["explain", "render", "--run-id", "f", "--step", "b"]);
    let why = explained["step"]["why"].as_str().unwrap();
    assert!(why.starts_with("the run failed at this step"), "{explained}");
    // Resetting to `a` re-renders `b`, which fails again: an error object, exit 1.
    let reset = root.err(&["reset", "render", "--run-id", "f", "--checkpoint", "a"], "TEMPLATE_RENDER_ERROR");
    assert_eq!(reset["reset"], json!({"checkpoint": "a", "discarded": 0}), "{reset}");
}

#[test]
fn explain_gives_the_instruction_of_any_ready_step() {
    let root = Cli::new("parallel");
    root.write(
        "workflows/par.yaml",
        "id: par\nsteps:\n  - { id: a, call: think, input_template: { thought: one } }\n  - { id: b, call: think, input_template: { thought: two } }\n",
    );
    let plan = root.ok(&["plan", "par", "--run-id", "p"]);
    assert_eq!(plan["ready"], json!(["a", "b"]));
    assert_eq!(plan["instruction"]["step_id"], "a");
    let b = root.ok(&["explain", "par", "--run-id", "p", "--step", "b"]);
    assert_eq!(b["step"]["instruction"]["input"], json!({"thought": "two"}), "{b}");
    // b's result first: the clients may finish ready steps in any order.
    root.ok(&["next", "par", "--run-id", "p", "--step", "b", "--result", "{}"]);
    let done_b = root.ok(&["explain", "par", "--run-id", "p", "--step", "b"]);
    assert!(done_b["step"].get("instruction").is_none(), "a done step has no instruction: {done_b}");
}

#[test]
fn resuming_with_other_params_warns_that_they_are_ignored() {
    let root = Cli::new("resume-params");
    root.ok(&["plan", "review_v1", "--run-id", "w", "--params", PARAMS]);
    // The same params (defaults not spelled out): no warning.
    let same = root.ok(&["plan", "review_v1", "--run-id", "w", "--no-fresh", "--params", PARAMS]);
    assert!(same.get("warnings").is_none(), "{same}");
    let other = r#"{"mr_iid": "!8", "project": "group/app"}"#;
    let resumed = root.ok(&["plan", "review_v1", "--run-id", "w", "--no-fresh", "--params", other]);
    assert!(resumed["warnings"][0].as_str().unwrap().contains("ignored"), "{resumed}");
    assert_eq!(resumed["instruction"]["input"]["mr_iid"], "!7", "the run keeps its own params");
}

/// A run in which no step runs — every `when:` false, or everything left
/// skipped behind an empty `foreach` — is done at `plan`, with the summary
/// saying so; `exec` ends it `done` too (it stopped with `NO_READY_STEP`).
#[test]
fn a_run_in_which_no_step_runs_is_done_at_once() {
    let root = Cli::new("nothing-runs");
    root.write(
        "workflows/one.yaml",
        "params:\n  go: {type: boolean}\nrequired: [go]\nsteps:\n  - id: only\n    call: prompt.say\n    when: params.go\n",
    );
    root.write(
        "workflows/empty.yaml",
        "params:\n  files: {type: array, items: {type: string}}\nrequired: [files]\nsteps:\n  \
         - id: each\n    call: prompt.say\n    foreach: params.files\n    input_template: {message: \"<<item>>\"}\n    \
         capture_as: said\n  - id: after\n    call: prompt.say\n    deps: [each]\n    when: said[0] != null\n",
    );
    let r = root.ok(&["plan", "one", "--run-id", "no", "--params", r#"{"go": false}"#]);
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["summary"]["message"], "0 step(s) ran, 1 skipped", "{r}");
    let state = root.ok(&["state", "get", "one", "--run-id", "no"]);
    assert_eq!(state["status"], "done", "{state}");
    let r = root.ok(&["plan", "empty", "--run-id", "e", "--params", r#"{"files": []}"#]);
    assert_eq!(r["done"], true, "{r}");
    // The same run with work to do is not done.
    let r = root.ok(&["plan", "one", "--run-id", "yes", "--params", r#"{"go": true}"#]);
    assert_eq!(r["done"], false, "{r}");
    assert_eq!(r["instruction"]["step_id"], "only", "{r}");
    for (wf, params) in [("one", r#"{"go": false}"#), ("empty", r#"{"files": []}"#)] {
        let out = root.run(&["exec", wf, "--params", params, "--run-id", "x", "--json"]);
        assert_eq!(out.code, 0, "{wf}: {out:?}");
        assert!(out.stdout.contains(r#""status":"done""#), "{wf}: {out:?}");
    }
}

/// Statuses say what happened: an archived run that finished lists as
/// `done` (its snapshot alone said `running`), and the step a run failed
/// at is `failed`, not `ready`, in `state get` for a person and in JSON.
#[test]
fn finished_and_failed_runs_list_with_their_true_status() {
    let root = Cli::new("true-status");
    root.write("workflows/big.yaml", TWO_STEPS);
    root.ok(&["plan", "big", "--run-id", "d"]);
    root.ok(&["next", "big", "--run-id", "d", "--step", "a", "--result", "{}"]);
    let r = root.ok(&["next", "big", "--run-id", "d", "--step", "b", "--result", "{}"]);
    assert_eq!(r["done"], true, "{r}");
    root.ok(&["state", "delete", "big", "--run-id", "d"]);
    let list = root.ok(&["state", "list", "--archived"]);
    assert_eq!(list["runs"][0]["status"], "done", "{list}");

    root.write(
        "workflows/picky.yaml",
        "steps:\n  - id: a\n    call: prompt.say\n    success_schema: {type: object, required: [ok]}\n    retry: {max: 1}\n",
    );
    root.ok(&["plan", "picky", "--run-id", "f"]);
    let out = root.run(&["next", "picky", "--run-id", "f", "--step", "a", "--result", "{}"]);
    assert_eq!(out.code, 1, "{out:?}");
    let state = root.ok(&["state", "get", "picky", "--run-id", "f"]);
    assert_eq!(state["status"], "failed", "{state}");
    assert_eq!(state["steps"][0]["status"], "failed", "{state}");
    let human = root.run(&["state", "get", "picky", "--run-id", "f", "--format", "human"]);
    assert_eq!(human.code, 0, "{human:?}");
    assert!(human.stdout.contains("1 steps: 1 failed"), "{human:?}");
    assert!(!human.stdout.contains("ready"), "{human:?}");
}

/// `exec` of a step whose call answers the same result its success schema
/// refused stops after the second refusal, saying why (issue 42): a third
/// identical try could only be refused again.
#[test]
fn exec_stops_when_a_step_is_refused_the_same_result_twice() {
    let root = Cli::new("same-answer");
    root.write("notes.txt", "no verdict here\n");
    root.write(
        "workflows/ask.yaml",
        "steps:\n  - id: ask\n    call: local_read\n    input_template: {path: notes.txt}\n    \
         success_schema: {type: object, required: [verdict]}\n",
    );
    let out = root.run(&["exec", "ask", "--run-id", "s", "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let events: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let finished = events.iter().filter(|e| e["event"] == "step_finished").count();
    assert_eq!(finished, 2, "{out:?}");
    let summary = events.last().unwrap();
    assert_eq!(summary["status"], "stopped", "{summary}");
    assert_eq!(summary["reason"]["error"], "VALIDATION_FAILED", "{summary}");
    let message = summary["reason"]["details"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`ask`: what `local_read` returned was refused by its success schema twice"),
        "{summary}"
    );
    let state = root.ok(&["state", "get", "ask", "--run-id", "s"]);
    assert_eq!(state["status"], "running", "{state}");
}
