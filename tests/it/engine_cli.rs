//! The engine's command line: the real binary on a temporary project root
//! (the crate's schemas, prompts and `workflows/review_v1.yaml`), judged by
//! its exit status and its JSON on stdout.
//!
//! Exit status: 0 with a result object, 1 with an error object
//! `{ "error": CODE, "details": … }`, 2 on a usage error (message on stderr).

use crate::support::{CRATE, Root};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// A temporary project root (the crate's schemas, prompts and
/// `workflows/review_v1.yaml`) whose commands do not fsync, with the ways
/// these tests run the binary in it.
struct Cli(Root);

impl std::ops::Deref for Cli {
    type Target = Root;
    fn deref(&self) -> &Root {
        &self.0
    }
}

impl Cli {
    fn new(name: &str) -> Cli {
        let root = Root::new(&format!("engine-cli-{name}")).crate_files().env("SAVANT_STATE_FSYNC", "0");
        root.write("workflows/review_v1.yaml", review_yaml());
        Cli(root)
    }

    fn run(&self, args: &[&str]) -> Out {
        Out::of(self.command(args).output().unwrap(), args)
    }

    fn run_stdin(&self, args: &[&str], stdin: &str) -> Out {
        let mut child = self.command(args).stdin(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        Out::of(child.wait_with_output().unwrap(), args)
    }

    /// Runs a command that must fail with `code` and returns its JSON.
    fn err(&self, args: &[&str], code: &str) -> Value {
        let out = self.run(args);
        assert_eq!(out.code, 1, "{out:?}");
        let v = out.json();
        assert_eq!(v["error"], code, "{out:?}");
        assert!(v.get("details").is_some(), "{out:?}");
        v
    }

    /// Every file under the root, relative, sorted.
    fn files(&self) -> Vec<String> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, base, out);
                } else {
                    out.push(p.strip_prefix(base).unwrap().display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.path, &self.path, &mut out);
        out.sort();
        out
    }
}

#[derive(Debug)]
struct Out {
    /// Shown by `Debug` in assertion messages.
    #[allow(dead_code)]
    args: Vec<String>,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn of(o: std::process::Output, args: &[&str]) -> Out {
        Out {
            args: args.iter().map(|a| a.to_string()).collect(),
            code: o.status.code().expect("exited normally"),
            stdout: String::from_utf8(o.stdout).unwrap(),
            stderr: String::from_utf8(o.stderr).unwrap(),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

fn review_yaml() -> String {
    std::fs::read_to_string(Path::new(CRATE).join("workflows/review_v1.yaml")).unwrap()
}

const PARAMS: &str = r#"{"mr_iid": "!7", "project": "group/app"}"#;

fn mr() -> Value {
    json!({"iid": 7, "title": "Fix the parser", "source_branch": "fix-parser", "changes": [
        {"new_path": "src/parser.rs", "diff": "@@ -1 +1 @@\n-a\n+b"},
        {"new_path": "Cargo.lock", "diff": "+y"}]})
}

fn review() -> Value {
    json!({"path": "src/parser.rs", "findings": [{"line": 1, "severity": "info", "message": "ok"}]})
}

/// Starts run `run` of review_v1 and submits fetch_mr, review_file[0] and lint.
fn review_up_to_tests(root: &Cli, run: &str) -> Value {
    root.ok(&["plan", "review_v1", "--run-id", run, "--params", PARAMS]);
    for (step, result) in [("fetch_mr", mr()), ("review_file[0]", review()), ("lint", json!({"ok": true}))] {
        root.ok(&["next", "review_v1", "--run-id", run, "--step", step, "--result", &result.to_string()]);
    }
    root.ok(&["plan", "review_v1", "--run-id", run, "--no-fresh"])
}

// ------------------------------------------------------------ exit codes

#[test]
fn exit_0_on_success_1_on_an_error_object_2_on_a_usage_error() {
    let root = Cli::new("exit");
    let r = root.run(&["plan", "review_v1", "--run-id", "r1", "--params", PARAMS]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["instruction"]["step_id"], "fetch_mr");
    assert!(r.stderr.is_empty(), "{r:?}");

    let e = root.err(&["plan", "review_v1", "--params", r#"{"mr_iid": 7}"#], "INVALID_PARAMS");
    let messages = e["details"].to_string();
    assert!(messages.contains("project") && messages.contains("/mr_iid"), "{e}");
    // A misspelled param says which one was meant; an unknown one lists those there are.
    let typo = r#"{"mr_iid": "!1", "project": "g/a", "max_file": 3}"#;
    let e = root.err(&["plan", "review_v1", "--params", typo], "INVALID_PARAMS");
    assert_eq!(e["details"][0]["help"], "did you mean `max_files`?", "{e}");
    let alien = r#"{"mr_iid": "!1", "project": "g/a", "zzz": 3}"#;
    let e = root.err(&["plan", "review_v1", "--params", alien], "INVALID_PARAMS");
    assert_eq!(
        e["details"][0]["help"], "the params of `review_v1` are: mr_iid, project, run_tests, max_files",
        "{e}"
    );

    let usage: &[&[&str]] = &[
        &["next", "review_v1", "--run-id", "r1", "--result", "{}"], // --step missing
        &["next", "review_v1", "--run-id", "r1", "--step", "fetch_mr", "--result", "{oops"],
        &["next", "review_v1", "--run-id", "r1", "--step", "fetch_mr", "--result", "@no/such/file.json"],
        &["plan", "review_v1", "--params", "[1,"],
        &["plan"],
        &["reset", "review_v1"],
        &["graph", "review_v1", "--format", "svg"],
        &["validate"],
        &["call", "think_plan", "--input", "nope"],
        &["frobnicate"],
        &["state"],
    ];
    for args in usage {
        let r = root.run(args);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stdout.is_empty(), "{r:?}");
        assert!(!r.stderr.is_empty(), "{r:?}");
    }
    // The failed usages changed nothing.
    let r = root.ok(&["plan", "review_v1", "--run-id", "r1", "--no-fresh"]);
    assert_eq!(r["state"]["version"], 0);
}

// ------------------------------------------------------------ --result sources

#[test]
fn next_reads_the_result_from_stdin_and_from_a_file() {
    let root = Cli::new("result-sources");
    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    let out = root.run_stdin(
        &["next", "review_v1", "--run-id", "r", "--step", "fetch_mr", "--result", "-"],
        &serde_json::to_string_pretty(&mr()).unwrap(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let r = out.json();
    assert_eq!(r["ready"], json!(["review_file[0]", "lint"]));
    assert_eq!(
        r["instruction"]["input"],
        json!({"q": "review src/parser.rs (file #0 of 2)", "diff": "@@ -1 +1 @@\n-a\n+b"})
    );

    root.write("review.json", review().to_string());
    let at = format!("@{}", root.join("review.json").display());
    let r = root.ok(&["next", "review_v1", "--run-id", "r", "--step", "review_file[0]", "--result", &at]);
    assert_eq!(r["ready"], json!(["lint"]));

    // No --result: `{}`.
    let r = root.ok(&["next", "review_v1", "--run-id", "r", "--step", "lint", "--result", "{}"]);
    assert_eq!(r["ready"], json!(["summarize"]), "`lint.ok` is null, so tests is skipped: {r}");
    let state = root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    assert_eq!(state["captures"]["mr"], mr());
    assert_eq!(state["captures"]["reviews"], json!([review(), null]));
    assert_eq!(state["captures"]["lint"], json!({}));
    assert_eq!(state["steps"][3]["status"], "skipped");
}

// ------------------------------------------------------------ call

#[test]
fn call_takes_dotted_and_underscored_tool_names() {
    let root = Cli::new("call");
    let input =
        json!({"workflow": "review_v1", "run_id": "c1", "params": {"mr_iid": "!1", "project": "g/a"}});
    let r = root.ok(&["call", "think.plan", "--input", &input.to_string()]);
    assert_eq!(r["instruction"]["step_id"], "fetch_mr");
    let next = json!({"workflow": "review_v1", "run_id": "c1", "step_id": "fetch_mr", "result": mr()});
    let r = root.ok(&["call", "think_next", "--input", &next.to_string()]);
    assert_eq!(r["state"]["version"], 1);
    let r = root.ok(&["call", "think.state.get", "--input", r#"{"workflow": "review_v1", "run_id": "c1"}"#]);
    assert_eq!(r["version"], 1);
    let r = root.ok(&["call", "prompt.say", "--input", r#"{"message": "hi"}"#]);
    assert_eq!(r["message"], "hi");
    let r = root.ok(&["call", "think.workflows.list"]);
    assert_eq!(r["workflows"][0]["id"], "review_v1");
    assert_eq!(r["workflows"][0]["valid"], true);

    let e = root.err(&["call", "think.plam"], "UNKNOWN_TOOL");
    assert!(e["details"]["help"].as_str().unwrap().contains("think_plan"), "{e}");
    root.err(&["call", "think.plan", "--input", "[1]"], "INVALID_INPUT");
    let e = root.err(&["call", "think.plan", "--input", "{}"], "INVALID_INPUT");
    assert!(e["details"]["message"].as_str().unwrap().contains("workflow"), "{e}");
    root.err(
        &[
            "call",
            "think.next",
            "--input",
            r#"{"workflow": "review_v1", "run_id": "c1", "step_id": "lint", "expected_version": -1}"#,
        ],
        "INVALID_INPUT",
    );
}

// ------------------------------------------------------------ compile / graph / explain

#[test]
fn compile_prints_workflow_graph_order_and_v() {
    let root = Cli::new("compile");
    let r = root.ok(&["compile", "review_v1"]);
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["workflow", "graph", "order", "v"]);
    assert_eq!(r["workflow"], "review_v1");
    assert_eq!(r["v"], "1.0");
    assert_eq!(r["order"], json!(["fetch_mr", "review_file", "lint", "tests", "summarize"]));
    assert_eq!(r["graph"]["entry"], json!(["fetch_mr"]));
    let nodes = r["graph"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    assert_eq!(
        nodes[1],
        json!({"id": "review_file", "call": "context.search", "deps": ["fetch_mr"], "inferred_deps": ["fetch_mr"]})
    );
    assert_eq!(nodes[2]["deps"], json!(["fetch_mr"]));
    assert_eq!(nodes[2]["inferred_deps"], json!([]));
    // The same document from `graph --format json` and `workflows graph`.
    assert_eq!(root.ok(&["graph", "review_v1", "--format", "json"]), r);
    assert_eq!(root.ok(&["workflows", "graph", "review_v1"]), r);
    // Params are checked when given.
    assert_eq!(root.ok(&["compile", "review_v1", "--params", PARAMS]), r);
    root.err(&["compile", "review_v1", "--params", r#"{"mr_iid": "!1"}"#], "INVALID_PARAMS");
    root.err(&["compile", "nope"], "UNKNOWN_WORKFLOW");
}

#[test]
fn graph_draws_inferred_edges_dashed() {
    let root = Cli::new("graph");
    let out = root.run(&["graph", "review_v1"]);
    assert_eq!(out.code, 0, "{out:?}");
    let mermaid = out.stdout;
    assert!(mermaid.starts_with("flowchart TD\n"), "{mermaid}");
    assert!(mermaid.contains("s0[\"fetch_mr<br/><small>gitlab.get_merge_request</small>\"]"), "{mermaid}");
    // review_file reads `mr` without listing fetch_mr in deps: inferred, dashed.
    assert!(mermaid.contains("  s0 -.-> s1\n"), "{mermaid}");
    // lint lists fetch_mr in deps: explicit, solid.
    assert!(mermaid.contains("  s0 --> s2\n"), "{mermaid}");
    assert_eq!(root.run(&["graph", "review_v1", "--format", "mermaid"]).stdout, mermaid);

    let dot = root.run(&["graph", "review_v1", "--format", "dot"]);
    assert_eq!(dot.code, 0, "{dot:?}");
    assert!(dot.stdout.starts_with("digraph \"review_v1\" {"), "{dot:?}");
    assert!(dot.stdout.contains("\"fetch_mr\" -> \"review_file\" [style=dashed];"), "{dot:?}");
    assert!(dot.stdout.contains("\"fetch_mr\" -> \"lint\";"), "{dot:?}");
    assert!(dot.stdout.trim_end().ends_with('}'), "{dot:?}");
    root.err(&["graph", "nope"], "UNKNOWN_WORKFLOW");
}

#[test]
fn explain_a_workflow_a_step_a_run_and_a_run_step() {
    let root = Cli::new("explain");
    let w = root.ok(&["explain", "review_v1"]);
    assert_eq!(w["workflow"], "review_v1");
    assert_eq!(w["rules"], json!(["no_force_push", "cite_file_and_line"]));
    assert_eq!(w["steps"].as_array().unwrap().len(), 5);
    let s = root.ok(&["explain", "review_v1", "--step", "tests"]);
    assert_eq!(s["when"], "params.run_tests && lint.ok");
    assert_eq!(s["deps"], json!(["fetch_mr", "lint"]));
    assert_eq!(s["inferred_deps"], json!(["fetch_mr"]));
    root.err(&["explain", "review_v1", "--step", "nope"], "UNKNOWN_STEP");

    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    let r = root.ok(&["explain", "review_v1", "--run-id", "r"]);
    assert_eq!(r["ready"], json!(["fetch_mr"]));
    assert_eq!(r["state"]["version"], 0);
    let r = root.ok(&["explain", "review_v1", "--run-id", "r", "--step", "summarize"]);
    assert_eq!(r["step"]["status"], "pending");
    assert_eq!(r["step"]["why"], "waiting for fetch_mr, review_file, lint, tests");
    let r = root.ok(&["explain", "review_v1", "--run-id", "r", "--step", "fetch_mr"]);
    assert_eq!(r["step"]["status"], "ready");
    root.err(&["explain", "review_v1", "--run-id", "ghost"], "UNKNOWN_RUN");
}

#[test]
fn explain_checks_item_indexes_and_shows_the_item() {
    let root = Cli::new("explain-items");
    // Without a run: an item of a foreach step is that step; of another step, unknown.
    let s = root.ok(&["explain", "review_v1", "--step", "review_file[0]"]);
    assert_eq!(s["item"], 0);
    root.err(&["explain", "review_v1", "--step", "lint[0]"], "UNKNOWN_STEP");
    root.err(&["explain", "review_v1", "--step", "review_file[x]"], "UNKNOWN_STEP");
    root.err(&["explain", "review_v1", "--step", "review_file[0"], "UNKNOWN_STEP");

    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    // Not expanded yet: no item exists.
    root.err(&["explain", "review_v1", "--run-id", "r", "--step", "review_file[0]"], "UNKNOWN_STEP");
    root.ok(&["next", "review_v1", "--run-id", "r", "--step", "fetch_mr", "--result", &mr().to_string()]);
    let r = root.ok(&["explain", "review_v1", "--run-id", "r", "--step", "review_file[0]"]);
    assert_eq!(r["step"]["step_id"], "review_file[0]");
    assert_eq!(r["step"]["status"], "ready", "{r}");
    assert_eq!(r["step"]["instruction"]["step_id"], "review_file[0]", "{r}");
    let e = root.err(&["explain", "review_v1", "--run-id", "r", "--step", "review_file[99]"], "UNKNOWN_STEP");
    assert!(e["details"]["message"].as_str().unwrap().contains("item(s)"), "{e}");
    root.err(&["explain", "review_v1", "--run-id", "r", "--step", "lint[0]"], "UNKNOWN_STEP");
    root.ok(&[
        "next",
        "review_v1",
        "--run-id",
        "r",
        "--step",
        "review_file[0]",
        "--result",
        &review().to_string(),
    ]);
    let r = root.ok(&["explain", "review_v1", "--run-id", "r", "--step", "review_file[0]"]);
    assert_eq!(r["step"]["status"], "done", "{r}");
}

// ------------------------------------------------------------ reset

#[test]
fn reset_to_a_checkpoint_needs_force_when_it_discards_results() {
    let root = Cli::new("reset");
    let before = review_up_to_tests(&root, "r");
    assert_eq!(before["ready"], json!(["tests"]));
    assert_eq!(before["state"]["version"], 3);

    let e =
        root.err(&["reset", "review_v1", "--run-id", "r", "--checkpoint", "fetch_mr"], "RESET_NOT_ALLOWED");
    assert_eq!(e["details"]["discarded"], 2, "review_file[0] and lint: {e}");
    let e =
        root.err(&["reset", "review_v1", "--run-id", "r", "--checkpoint", "nope"], "CHECKPOINT_NOT_FOUND");
    assert_eq!(e["details"]["available"], json!(["fetch_mr", "review_file", "lint"]));
    // Refusals change nothing.
    assert_eq!(root.ok(&["plan", "review_v1", "--run-id", "r", "--no-fresh"]), before);

    // The newest checkpoint discards nothing: no --force needed.
    let r = root.ok(&["reset", "review_v1", "--run-id", "r", "--checkpoint", "lint"]);
    assert_eq!(r["reset"], json!({"checkpoint": "lint", "discarded": 0}));
    assert_eq!(r["ready"], json!(["tests"]));
    assert_eq!(r["state"]["version"], 4, "a reset is a new version");

    let r = root.ok(&["reset", "review_v1", "--run-id", "r", "--checkpoint", "fetch_mr", "--force"]);
    assert_eq!(r["reset"], json!({"checkpoint": "fetch_mr", "discarded": 2}));
    assert_eq!(r["ready"], json!(["review_file[0]", "lint"]));
    assert_eq!(r["state"]["version"], 5);
    let state = root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    assert_eq!(state["captures"], json!({"mr": mr()}));
    assert_eq!(state["history"].as_array().unwrap().len(), 1);

    // To the start.
    root.err(&["reset", "review_v1", "--run-id", "r"], "RESET_NOT_ALLOWED");
    let r = root.ok(&["reset", "review_v1", "--run-id", "r", "--force"]);
    assert_eq!(r["ready"], json!(["fetch_mr"]));
    assert_eq!(r["state"]["version"], 6);
    root.err(&["reset", "review_v1", "--run-id", "ghost"], "UNKNOWN_RUN");
    // The run still goes on after resets.
    let r =
        root.ok(&["next", "review_v1", "--run-id", "r", "--step", "fetch_mr", "--result", &mr().to_string()]);
    assert_eq!(r["state"]["version"], 7);
}

// ------------------------------------------------------------ pinned versions

#[test]
fn a_run_keeps_its_pinned_version_when_the_file_is_edited_or_deleted() {
    let root = Cli::new("changed");
    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    root.ok(&["next", "review_v1", "--run-id", "r", "--step", "fetch_mr", "--result", &mr().to_string()]);
    let pinned = root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    assert_eq!((&pinned["file_differs"], &pinned["file_hash"]), (&json!(false), &pinned["workflow_hash"]));
    // An edit (a changed rationale, a comment) blocks nothing: the run goes on with its version.
    root.write("workflows/review_v1.yaml", format!("{}\n# edited\n", review_yaml()));
    let args = ["next", "review_v1", "--run-id", "r", "--step", "lint", "--result", r#"{"ok": true}"#];
    let r = root.ok(&args);
    assert_eq!(r["state"]["version"], 2);
    let s = root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    assert_eq!(s["workflow_hash"], pinned["workflow_hash"]);
    assert_eq!(s["file_differs"], true, "{s}");
    assert_ne!(s["file_hash"], s["workflow_hash"]);
    root.ok(&["explain", "review_v1", "--run-id", "r"]);
    // A new run takes the file as it is now.
    let fresh = root.ok(&["plan", "review_v1", "--run-id", "n", "--params", PARAMS]);
    let n = root.ok(&["state", "get", "review_v1", "--run-id", "n"]);
    assert_eq!((&n["workflow_hash"], &n["file_differs"]), (&s["file_hash"], &json!(false)), "{fresh}");
    // Deleted: still runs, and says the file is gone.
    std::fs::remove_file(root.join("workflows/review_v1.yaml")).unwrap();
    let s = root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    assert_eq!((&s["file_hash"], &s["file_differs"]), (&Value::Null, &json!(true)), "{s}");
    let r = root.ok(&["plan", "review_v1", "--run-id", "r", "--resume"]);
    assert!(r["instruction"].is_object(), "{r}");
    // A pinned object removed by hand: WORKFLOW_CHANGED naming the hash.
    root.write("workflows/review_v1.yaml", review_yaml());
    for entry in std::fs::read_dir(root.join(".savant/state/objects")).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let e = root.err(&["state", "get", "review_v1", "--run-id", "n"], "WORKFLOW_CHANGED");
    assert_eq!(e["details"]["run_hash"], n["workflow_hash"], "{e}");
    assert!(e["details"]["message"].as_str().unwrap().contains("not in the state store"), "{e}");
    assert!(e["details"]["help"].as_str().unwrap().contains("--replace"), "{e}");
    // The run whose bytes are the file's again is pinned afresh and goes on.
    root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    // A damaged object is WORKFLOW_CHANGED too, never run.
    let object =
        format!(".savant/state/objects/{}", pinned["workflow_hash"].as_str().unwrap().replace(':', "-"));
    root.write(&object, "id: review_v1\nsteps: []\n");
    root.write("workflows/review_v1.yaml", format!("# other\n{}", review_yaml()));
    let e = root.err(&["state", "get", "review_v1", "--run-id", "r"], "WORKFLOW_CHANGED");
    assert!(e["details"]["message"].as_str().unwrap().contains("damaged"), "{e}");
    // The state can always be deleted, whatever the file says.
    let r = root.ok(&["state", "delete", "review_v1", "--run-id", "n", "--purge"]);
    assert_eq!(r["deleted"], true);
    root.err(&["state", "get", "review_v1", "--run-id", "n"], "UNKNOWN_RUN");
}

// ------------------------------------------------------------ prompt

#[test]
fn prompt_returns_version_hash_and_markdown() {
    let root = Cli::new("prompt");
    let r = root.ok(&["prompt"]);
    assert_eq!(r["version"], "stable", "`latest: stable` in prompts.yml");
    let md = std::fs::read(Path::new(CRATE).join("prompts/driver_stable.md")).unwrap();
    assert_eq!(r["prompt_md"], String::from_utf8(md.clone()).unwrap());
    let hex: String = Sha256::digest(&md).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(r["hash"], format!("sha256:{hex}"));

    let r = root.ok(&["prompt", "code_review"]);
    assert_eq!(r["version"], "code_review");
    assert!(r["hash"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(root.ok(&["call", "think.driver_prompt", "--input", r#"{"version": "code_review"}"#]), r);

    let e = root.err(&["prompt", "v9"], "PROMPT_NOT_FOUND");
    assert_eq!(e["details"]["version"], "v9");
    assert_eq!(e["details"]["available"], json!(["stable", "code_review"]));
}

// ------------------------------------------------------------ think

#[test]
fn think_needs_a_non_empty_thought() {
    let root = Cli::new("think");
    for input in [r#"{"thought": ""}"#, r#"{"thought": "  \n "}"#] {
        let e = root.err(&["call", "think", "--input", input], "INVALID_INPUT");
        assert_eq!(e["details"]["message"], "a thought must not be empty");
    }
    root.err(&["call", "think", "--input", "{}"], "INVALID_INPUT");
    assert!(!root.join(".savant/session.log").exists(), "nothing recorded");

    let r = root.ok(&["call", "think", "--input", r#"{"thought": " plan first "}"#]);
    assert_eq!(r["thought"], "plan first");
    assert_eq!(r["recorded_in"], "session_log");
    let log = std::fs::read_to_string(root.join(".savant/session.log")).unwrap();
    assert!(log.contains(r#""thought":"plan first""#), "{log}");

    // Into a run's history: a new version.
    root.ok(&["plan", "review_v1", "--run-id", "r", "--params", PARAMS]);
    let input = json!({"thought": "the MR is small", "workflow": "review_v1", "run_id": "r"});
    let r = root.ok(&["call", "think", "--input", &input.to_string()]);
    assert_eq!(r["recorded_in"], "run");
    let state = root.ok(&["state", "get", "review_v1", "--run-id", "r"]);
    assert_eq!(state["version"], 1);
    assert_eq!(state["history"][0]["type"], "thought");
    assert_eq!(state["history"][0]["thought"], "the MR is small");
}

// ------------------------------------------------------------ validate

#[test]
fn validate_a_response_against_a_named_or_inline_schema() {
    let root = Cli::new("validate");
    let r = root.ok(&["validate", "--schema", "MergeRequestV1", "--response", &mr().to_string()]);
    assert_eq!(r, json!({"valid": true, "errors": []}));

    let bad = json!({"iid": "7", "title": "x", "source_branch": "b", "changes": []});
    let r = root.ok(&["validate", "--schema", "MergeRequestV1", "--response", &bad.to_string()]);
    assert_eq!(r["valid"], false);
    assert_eq!(r["errors"][0]["path"], "/iid");

    let out = root.run_stdin(&["validate", "--schema", "MergeRequestV1", "--response", "-"], "{}");
    assert_eq!(out.code, 0, "a failed validation is a result, not an error: {out:?}");
    assert_eq!(out.json()["errors"].as_array().unwrap().len(), 4, "{out:?}");

    let inline = r#"{"type": "integer", "minimum": 3}"#;
    assert_eq!(root.ok(&["validate", "--schema", inline, "--response", "5"])["valid"], true);
    assert_eq!(root.ok(&["validate", "--schema", inline, "--response", "2"])["valid"], false);

    let e = root.err(&["validate", "--schema", "NoSuchV1", "--response", "{}"], "UNKNOWN_SCHEMA");
    assert!(e["details"]["available"].to_string().contains("MergeRequestV1"), "{e}");
    root.err(&["validate", "--schema", r#"{"type": 12}"#, "--response", "{}"], "UNKNOWN_SCHEMA");

    let r = root.ok(&["validate", "--workflow", "review_v1"]);
    assert_eq!(r["valid"], true);
    assert_eq!(r["summary"]["errors"], 0);
}

// ------------------------------------------------------------ ids

#[test]
fn traversal_ids_are_refused_with_a_json_error() {
    let root = Cli::new("ids");
    root.ok(&["plan", "review_v1", "--run-id", "good", "--params", PARAMS]);
    let before = root.files();
    let bad_ids = ["../x", "a/b", "", "..", "/etc/passwd", "a__b", ".hidden", "a\\b"];
    for id in bad_ids {
        let cases: Vec<Vec<&str>> = vec![
            vec!["plan", "review_v1", "--run-id", id, "--params", PARAMS],
            vec!["plan", "review_v1", "--run-id", id, "--no-fresh", "--params", PARAMS],
            vec!["next", "review_v1", "--run-id", id, "--step", "fetch_mr", "--result", "{}"],
            vec!["state", "get", "review_v1", "--run-id", id],
            vec!["state", "delete", "review_v1", "--run-id", id],
            vec!["reset", "review_v1", "--run-id", id, "--force"],
            vec!["explain", "review_v1", "--run-id", id],
        ];
        for args in cases {
            let e = root.err(&args, "INVALID_ID");
            assert!(e["details"]["message"].as_str().unwrap().contains("invalid run id"), "{args:?}: {e}");
        }
        let input =
            json!({"workflow": "review_v1", "run_id": id, "params": {"mr_iid": "!1", "project": "p"}});
        root.err(&["call", "think.plan", "--input", &input.to_string()], "INVALID_ID");
    }
    // As workflow ids: not a workflow (nothing is resolved outside workflows/).
    for id in ["../x", "a/b", "", "..", "../workflows/review_v1", "workflows/../../x"] {
        for args in [
            vec!["plan", id, "--params", PARAMS],
            vec!["next", id, "--run-id", "good", "--step", "fetch_mr", "--result", "{}"],
            vec!["state", "get", id, "--run-id", "good"],
            vec!["explain", id],
            vec!["compile", id],
            vec!["reset", id, "--run-id", "good", "--force"],
        ] {
            let out = root.run(&args);
            assert_eq!(out.code, 1, "{out:?}");
            let e = out.json();
            assert!(e["error"] == "UNKNOWN_WORKFLOW" || e["error"] == "INVALID_ID", "{out:?}");
        }
        // Commands that take a workflow id without resolving a file check it as an id.
        root.err(&["state", "delete", id, "--run-id", "good"], "INVALID_ID");
        if !id.is_empty() {
            root.err(&["state", "list", id], "INVALID_ID");
        }
    }
    // A workflow file whose `id:` is not an id is refused before any state is written.
    root.write("elsewhere/evil.yaml", "id: ../evil\nsteps:\n  - id: a\n    call: think\n");
    let e = root.err(&["plan", "elsewhere/evil.yaml"], "YAML_SCHEMA_VIOLATION");
    assert!(e.to_string().contains("not a valid id"), "{e}");
    // A file name that is not an id (the default workflow id is the file stem).
    root.write("elsewhere/my flow.yaml", "steps:\n  - id: a\n    call: think\n");
    root.err(&["plan", "elsewhere/my flow.yaml"], "INVALID_ID");

    let mut after = root.files();
    after.retain(|f| !f.starts_with("elsewhere/"));
    assert_eq!(before, after, "no file was created or removed");
    assert_eq!(root.ok(&["state", "list"])["runs"].as_array().unwrap().len(), 1);
}

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
