//! Real MCP clients against `savant-think serve` (issue 45, point 2; the
//! client half of issue 43's elicitation): the official Python SDK
//! (`tests/python/*.py`) on both revisions — a 2025-11-25 session client and
//! a 2026-07-28 stateless one (`server/discover`, no session) — over stdio
//! and over Streamable HTTP, running a workflow to the end and answering a
//! wait through its elicitation callback; and the MCP Inspector CLI
//! (`tests/mcp_inspector/`) listing the tools and calling `think_plan`.
//!
//! The Python interpreter is `$MCP_PYTHON`, else `python3`; the Inspector is
//! `tests/mcp_inspector/node_modules/.bin/mcp-inspector` (with the Node 22
//! installed beside it). `.ci/run` installs both; without them a test skips
//! itself with a note, and fails instead in CI or when `MCP_PYTHON` is set
//! (`tests/support/skip.rs`).

use crate::common::{BIN, CRATE, Root, run_cmd_within};
use crate::support::{Server, skip::skip};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long one client program may take before it counts as hung (it
/// drives whole sessions, each starting the debug binary, on a busy machine).
const CLIENT_WATCHDOG: Duration = Duration::from_secs(300);

/// The token of the HTTP servers these tests start.
const TOKEN: &str = "clients-token";

/// The Python with the `mcp` SDK, or `None` when the test should skip.
///
/// # Panics
/// When `MCP_PYTHON` is set (as `.ci/run` does) and it cannot import `mcp`.
fn python(test: &str) -> Option<String> {
    let required = std::env::var_os("MCP_PYTHON").is_some();
    let python = std::env::var("MCP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let has_sdk = Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if has_sdk {
        return Some(python);
    }
    assert!(!required, "MCP_PYTHON={python} is set but `{python} -c \"import mcp\"` fails");
    let why = format!(
        "`{python} -c \"import mcp\"` failed (set MCP_PYTHON to a venv with `pip install mcp==2.3.0`, as .ci/run does)"
    );
    skip(test, &why, None);
    None
}

/// Runs `tests/python/<script>` with `args`; checks it succeeded and said
/// `ok_line`.
fn run_python(python: &str, script: &str, args: &[&str], ok_line: &str) {
    let mut c = Command::new(python);
    // No __pycache__ beside the scripts in the source tree.
    c.arg(Path::new(CRATE).join("tests/python").join(script)).args(args).env("PYTHONDONTWRITEBYTECODE", "1");
    let r = run_cmd_within(c, CLIENT_WATCHDOG);
    assert_eq!(r.code, Some(0), "{script} {args:?} failed: {r:?}");
    assert!(r.stdout.contains(ok_line), "{script} {args:?}: no `{ok_line}`: {r:?}");
}

/// A scratch project with the bundled workflows, schemas and prompts.
fn project(name: &str) -> Root {
    Root::new(name).bundled()
}

/// `serve --http 127.0.0.1:0 --token TOKEN` on `root`; its `/mcp` URL.
fn serve_http(root: &Root) -> (Server, String) {
    let mut command = Server::command(&root.path);
    command.args(["--token", TOKEN]).env("LOG_LEVEL", "warn");
    let server = Server::start(command, true);
    let url = format!("http://{}/mcp", server.addr);
    (server, url)
}

/// The official Python SDK drives a full loop (catalog, prompts, a
/// validation failure, `think` and `prompt_say`) through
/// `tests/python/test_stdio.py`.
#[test]
fn python_sdk_drives_a_full_loop() {
    let Some(python) = python("python_sdk_drives_a_full_loop") else { return };
    let root = project("py-loop");
    run_python(&python, "test_stdio.py", &[BIN, root.path.to_str().unwrap()], "python mcp sdk: ok");
}

/// `release_notes` from think_plan to done over stdio, as a 2025-11-25
/// session client (`legacy`) and as a 2026-07-28 client (`auto`: discover,
/// then stateless requests), each checking the negotiated revision, the
/// instructions and the final state's captures.
#[test]
fn python_sdk_runs_a_workflow_to_the_end_over_stdio_on_both_revisions() {
    let Some(python) = python("python_sdk_runs_a_workflow_to_the_end_over_stdio_on_both_revisions") else {
        return;
    };
    let root = project("py-stdio-run");
    let dir = root.path.to_str().unwrap();
    for mode in ["legacy", "auto"] {
        let ok = format!("python mcp sdk: stdio {mode}: ok");
        run_python(&python, "test_run_to_end.py", &["stdio", mode, BIN, dir], &ok);
    }
    // Both runs are on disk, done, as the engine sees them.
    for run in ["py-stdio-legacy", "py-stdio-auto"] {
        let state = root.ok(&["state", "get", "release_notes", "--run-id", run]);
        assert_eq!(state["status"], "done", "{state}");
    }
}

/// The same over Streamable HTTP with a bearer token; the script also checks
/// the wire: the session client initializes and carries one
/// `Mcp-Session-Id`, the 2026-07-28 client sends `server/discover` first and
/// no request or answer has a session id.
#[test]
fn python_sdk_runs_a_workflow_to_the_end_over_http_on_both_revisions() {
    let Some(python) = python("python_sdk_runs_a_workflow_to_the_end_over_http_on_both_revisions") else {
        return;
    };
    let root = project("py-http-run");
    let (_server, url) = serve_http(&root);
    for mode in ["legacy", "auto"] {
        let ok = format!("python mcp sdk: http {mode}: ok");
        run_python(&python, "test_run_to_end.py", &["http", mode, &url, TOKEN], &ok);
    }
    let listed = root.ok(&["state", "list", "release_notes"]);
    let text = listed.to_string();
    assert!(text.contains("py-http-legacy") && text.contains("py-http-auto"), "{listed}");
}

/// `merge_when_approved`'s `await:` answered through the SDK's elicitation
/// callback on a 2025-11-25 session (accept records and continues; decline,
/// cancel and an answer outside the schema leave the step waiting), and
/// through an input-required result on 2026-07-28 requests (never
/// `elicitation/create`; a replayed or tampered request state refused); over
/// stdio and over HTTP. The state's key is made once, readable by the owner
/// only.
#[test]
fn python_sdk_answers_a_wait_through_its_elicitation_callback() {
    let Some(python) = python("python_sdk_answers_a_wait_through_its_elicitation_callback") else { return };
    let stdio = project("py-elicit-stdio");
    let ok = "python mcp sdk elicitation: stdio: ok";
    run_python(&python, "test_elicitation.py", &["stdio", BIN, stdio.path.to_str().unwrap()], ok);
    let state = stdio.ok(&["state", "get", "merge_when_approved", "--run-id", "declined"]);
    assert_eq!(state["captures"]["approval"], json!({"approved": false, "note": "not before the release"}));
    let waiting = stdio.ok(&["state", "get", "merge_when_approved", "--run-id", "cancelled"]);
    assert_eq!(waiting["steps"][1]["status"], "waiting", "{waiting}");

    let http = project("py-elicit-http");
    let (_server, url) = serve_http(&http);
    run_python(
        &python,
        "test_elicitation.py",
        &["http", &url, TOKEN],
        "python mcp sdk elicitation: http: ok",
    );
    let state = http.ok(&["state", "get", "merge_when_approved", "--run-id", "yes"]);
    assert_eq!(state["status"], "done", "{state}");
    for (root, run_id) in [(&stdio, "modern"), (&http, "replay")] {
        let state = root.ok(&["state", "get", "merge_when_approved", "--run-id", run_id]);
        assert_eq!(state["captures"]["approval"], json!({"approved": true}), "{state}");
        let key = root.path.join(".savant/mcp-request-state.key");
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600, "{}", key.display());
        assert_eq!(std::fs::read_to_string(&key).unwrap().len(), 64, "{}", key.display());
    }
}

/// `tests/mcp_inspector/node_modules/.bin`, where `.ci/run` installs the
/// Inspector and its Node; `None` when the test should skip.
fn inspector_bin(test: &str) -> Option<PathBuf> {
    let bin = Path::new(CRATE).join("tests/mcp_inspector/node_modules/.bin");
    if bin.join("mcp-inspector").exists() && bin.join("node").exists() {
        return Some(bin);
    }
    let why = "the MCP Inspector is not installed (`cd tests/mcp_inspector && npm ci`, as .ci/run does)";
    skip(test, why, None);
    None
}

/// `mcp-inspector --cli <savant-think serve --root ROOT> ARGS…`, which must
/// exit with `code` (5 for a tool result with `isError`): its JSON and stderr.
fn inspector(bin: &Path, root: &Root, args: &[&str], code: i32) -> (Value, String) {
    let path = std::env::join_paths(
        std::iter::once(bin.to_owned())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut c = Command::new(bin.join("mcp-inspector"));
    c.arg("--cli")
        .args([BIN, "serve", "--root"])
        .arg(&root.path)
        .args(["-e", "LOG_LEVEL=error"])
        .args(args)
        .env("PATH", path)
        // Its catalog (~/.mcp-inspector) goes to the scratch project.
        .env("HOME", &root.path)
        .env_remove("SAVANT_PATH");
    let r = run_cmd_within(c, CLIENT_WATCHDOG);
    assert_eq!(r.code, Some(code), "mcp-inspector {args:?}: {r:?}");
    let v = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {r:?}"));
    (v, r.stderr)
}

/// The MCP Inspector CLI over stdio: `tools/list` names our tools with
/// their schemas, `tools/call think_plan` starts a run (its first
/// instruction, and the run on disk), and an unknown workflow is an
/// `isError` result with its code (the Inspector then exits 5).
#[test]
fn inspector_cli_lists_tools_and_calls_think_plan() {
    let Some(bin) = inspector_bin("inspector_cli_lists_tools_and_calls_think_plan") else { return };
    let root = project("inspector-cli");
    let (listed, _) = inspector(&bin, &root, &["--method", "tools/list"], 0);
    let tools = listed["tools"].as_array().unwrap_or_else(|| panic!("no tools: {listed}"));
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in ["think_plan", "think_next", "think_answer", "think_state_get", "think", "prompt_say"] {
        assert!(names.contains(&want), "{want} missing: {names:?}");
    }
    let plan = tools.iter().find(|t| t["name"] == "think_plan").unwrap();
    assert_eq!(plan["inputSchema"]["required"], json!(["workflow"]), "{plan}");
    assert_eq!(plan["annotations"]["openWorldHint"], false, "{plan}");
    assert!(plan["outputSchema"]["properties"]["instruction"].is_object(), "{plan}");
    // `--strict` rates every tool schema and exits 6 on a portability
    // error (it did on think_validate's `errors.items: true`); its
    // warnings (e.g. `type: [X, "null"]`) do not fail it.
    let (strict, _) = inspector(&bin, &root, &["--method", "tools/list", "--strict"], 0);
    assert_eq!(strict["tools"].as_array().map(Vec::len), Some(tools.len()), "{strict}");

    let call =
        ["--method", "tools/call", "--tool-name", "think_plan", "--tool-arg", "workflow=release_notes"];
    let args =
        [&call[..], &["--tool-arg", r#"params={"milestone": "v3"}"#, "--tool-arg", "run_id=from-inspector"]];
    let (planned, _) = inspector(&bin, &root, &args.concat(), 0);
    assert_eq!(planned["isError"], false, "{planned}");
    let out = &planned["structuredContent"];
    assert_eq!(out["run_id"], "from-inspector", "{planned}");
    assert_eq!(out["instruction"]["step_id"], "list_changes", "{planned}");
    assert_eq!(out["instruction"]["input"], json!({"milestone": "v3", "state": "merged"}), "{planned}");
    let text: Value = serde_json::from_str(planned["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, out, "the text copy differs");
    let state = root.ok(&["state", "get", "release_notes", "--run-id", "from-inspector"]);
    assert_eq!(state["params"]["milestone"], "v3", "{state}");

    let unknown = ["--method", "tools/call", "--tool-name", "think_plan", "--tool-arg", "workflow=nope"];
    let (refused, stderr) = inspector(&bin, &root, &unknown, 5);
    assert!(stderr.contains("tool_is_error"), "{stderr}");
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["structuredContent"]["error"], "UNKNOWN_WORKFLOW", "{refused}");
    assert_eq!(refused["structuredContent"]["details"]["workflow"], "nope", "{refused}");
}
