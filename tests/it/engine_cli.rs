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
pub(crate) struct Cli(Root);

impl std::ops::Deref for Cli {
    type Target = Root;
    fn deref(&self) -> &Root {
        &self.0
    }
}

impl Cli {
    pub(crate) fn new(name: &str) -> Cli {
        let root = Root::new(&format!("engine-cli-{name}")).crate_files().env("SAVANT_STATE_FSYNC", "0");
        root.write("workflows/review_v1.yaml", review_yaml());
        Cli(root)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Out {
        Out::of(self.command(args).output().unwrap(), args)
    }

    pub(crate) fn run_stdin(&self, args: &[&str], stdin: &str) -> Out {
        let mut child = self.command(args).stdin(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        Out::of(child.wait_with_output().unwrap(), args)
    }

    /// Runs a command that must fail with `code` and returns its JSON.
    pub(crate) fn err(&self, args: &[&str], code: &str) -> Value {
        let out = self.run(args);
        assert_eq!(out.code, 1, "{out:?}");
        let v = out.json();
        assert_eq!(v["error"], code, "{out:?}");
        assert!(v.get("details").is_some(), "{out:?}");
        v
    }

    /// Every file under the root, relative, sorted.
    pub(crate) fn files(&self) -> Vec<String> {
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
pub(crate) struct Out {
    /// Shown by `Debug` in assertion messages.
    #[allow(dead_code)]
    args: Vec<String>,
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
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

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

pub(crate) fn review_yaml() -> String {
    std::fs::read_to_string(Path::new(CRATE).join("workflows/review_v1.yaml")).unwrap()
}

pub(crate) const PARAMS: &str = r#"{"mr_iid": "!7", "project": "group/app"}"#;

pub(crate) fn mr() -> Value {
    json!({"iid": 7, "title": "Fix the parser", "source_branch": "fix-parser", "changes": [
        {"new_path": "src/parser.rs", "diff": "@@ -1 +1 @@\n-a\n+b"},
        {"new_path": "Cargo.lock", "diff": "+y"}]})
}

pub(crate) fn review() -> Value {
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
