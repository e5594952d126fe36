//! The rough edges a new user met in the first hour (issue 30), each pinned
//! through the adapter where it was met.

use crate::common::{BIN, Root, assert_exit, run};
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use std::time::Duration;

const HELLO: &str = "id: hello\nparams:\n  name: { type: string }\nsteps:\n  - id: greet\n    call: prompt.say\n    input_template: { text: \"hi <<params.name>>\" }\n";

/// A JSON-encoded string as params: refused, and the help is the exact fix.
#[test]
fn params_as_a_json_string_get_the_exact_fix() {
    let root = Root::with_workflows("params-string", &[("hello", HELLO)]);
    let input = json!({"workflow": "hello", "params": "{\"name\": \"Ada\"}"}).to_string();
    let r = run(&root.path, &["call", "think_plan", "--input", &input]);
    assert_exit(&r, 1);
    let e = r.json();
    assert_eq!(e["error"], "INVALID_PARAMS", "{e}");
    let help = e["details"][0]["help"].as_str().unwrap();
    assert!(help.contains(r#""params": {"name":"Ada"}"#), "{help}");
}

/// Arguments a tool does not take are refused by name, with a did-you-mean,
/// instead of running with the defaults.
#[test]
fn unknown_tool_arguments_are_refused_by_name() {
    let root = Root::with_workflows("unknown-args", &[("hello", HELLO)]);
    let input = json!({"workflow": "hello", "params": {"name": "Ada"}, "runId": "r1"}).to_string();
    let r = run(&root.path, &["call", "think_plan", "--input", &input]);
    assert_exit(&r, 1);
    let e = r.json();
    assert_eq!(e["error"], "INVALID_PARAMS", "{e}");
    assert!(e["details"]["message"].as_str().unwrap().contains("did you mean `run_id`?"), "{e}");
    assert!(
        !root.path.join(".savant/state").exists()
            || std::fs::read_dir(root.path.join(".savant/state")).unwrap().count() == 0,
        "no run was started"
    );
    // The documented alias still works.
    let input = json!({"workflow": "hello", "params": {"name": "Ada"}, "run_id": "r1", "start_fresh": true})
        .to_string();
    assert_exit(&run(&root.path, &["call", "think_plan", "--input", &input]), 0);
}

/// Over MCP: the tool schemas are standard JSON Schema (no schemars
/// `format`s such as `uint64`), and an unknown argument is an error result.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_tool_schemas_are_standard_and_unknown_arguments_fail() {
    let root = Root::with_workflows("mcp-std", &[("hello", HELLO)]);
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(&root.path).env("LOG_LEVEL", "warn");
    }))
    .unwrap();
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await.unwrap().unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let text = serde_json::to_string(&tools).unwrap();
    for bad in ["\"uint", "\"int64\"", "\"double\"", "\"float\"", "\"int32\""] {
        assert!(!text.contains(&format!("\"format\":{bad}")), "non-standard format {bad} in tools/list");
    }
    let (is_error, out) = crate::mcp_support::call(
        &client,
        "think_plan",
        json!({"workflow": "hello", "runId": "x", "params": {"name": "A"}}),
    )
    .await;
    assert!(is_error, "{out}");
    assert_eq!(out["error"], "INVALID_PARAMS", "{out}");
    assert!(out.to_string().contains("run_id"), "{out}");
    let _: Value = out;
    client.cancel().await.unwrap();
}

/// Every environment variable the binary reads is in docs/config.md's
/// table, and the commands that open run state say so in their `--help`.
#[test]
fn every_environment_variable_is_documented_and_in_help() {
    let crate_dir = std::path::Path::new(crate::common::CRATE);
    let mut sources = String::new();
    for dir in ["src/cli"] {
        for e in std::fs::read_dir(crate_dir.join(dir)).unwrap() {
            sources.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
        }
    }
    sources.push_str(&std::fs::read_to_string(crate_dir.join("src/main.rs")).unwrap());
    let re = regex::Regex::new(
        r#"(?:env|var|var_os|set|env_number)\("([A-Z][A-Z0-9_]+)"|env = "([A-Z][A-Z0-9_]+)""#,
    )
    .unwrap();
    let mut read: Vec<String> =
        re.captures_iter(&sources).map(|c| c.get(1).or(c.get(2)).unwrap().as_str().to_owned()).collect();
    read.extend(["SAVANT_STATE_URL".into(), "SAVANT_STATE_FSYNC".into()]); // through state::{URL_ENV, FSYNC_ENV}
    read.sort();
    read.dedup();
    assert!(read.len() >= 15, "{read:?}");
    let docs = std::fs::read_to_string(crate_dir.join("docs/config.md")).unwrap();
    let table = &docs[docs.find("## Environment").unwrap()..];
    let missing: Vec<&String> = read.iter().filter(|v| !table.contains(&format!("`{v}`"))).collect();
    assert!(missing.is_empty(), "not in docs/config.md's table: {missing:?}");
    let dir = Root::new("help-env");
    for command in [
        &["serve", "--help"][..],
        &["plan", "--help"],
        &["next", "--help"],
        &["exec", "--help"],
        &["state", "--help"],
    ] {
        let r = run(&dir.path, command);
        assert_exit(&r, 0);
        for var in ["SAVANT_STATE_URL", "SAVANT_PATH"] {
            assert!(r.stdout.contains(var), "{command:?} --help does not mention {var}");
        }
    }
    let r = run(&dir.path, &["run", "--help"]);
    assert!(r.stdout.contains("OLLAMA_HOST") && r.stdout.contains("OPENAI_BASE_URL"), "{r:?}");
}

/// `serve` in a directory that is no project says so on stderr (which root,
/// and how discovery works); in a project it says nothing of the kind.
#[test]
fn serve_outside_a_project_warns_with_the_root_it_chose() {
    use std::io::Read;
    let serve_stderr = |dir: &std::path::Path| {
        let mut child = crate::common::cmd(dir, &["serve"])
            .stdin(std::process::Stdio::null()) // EOF: the stdio server stops at once
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        child.wait().unwrap();
        err
    };
    let empty = Root::new("not-a-project");
    let err = serve_stderr(&empty.path);
    assert!(err.contains("is not a project"), "{err}");
    let shown = savant_think::fsx::canonical(&empty.path).unwrap();
    assert!(err.contains(&shown.display().to_string()), "names the root: {err}");
    assert!(err.contains("--root") && err.contains("SAVANT_PATH"), "{err}");
    let project = Root::with_workflows("a-project", &[("hello", HELLO)]);
    let err = serve_stderr(&project.path);
    assert!(!err.contains("is not a project"), "{err}");
}

/// Every MCP tool name the docs mention is a tool the server lists, or the
/// line that names it says it is CLI only.
#[test]
fn docs_and_the_mcp_server_agree_on_tool_names() {
    use savant_think::runtime::catalog;
    let crate_dir = std::path::Path::new(crate::common::CRATE);
    let re = regex::Regex::new(r"\b(think_[a-z_]*[a-z]|prompt_say)\b").unwrap();
    let mut problems = Vec::new();
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(crate_dir.join("docs")).unwrap().map(|e| e.unwrap().path()).collect();
    files.push(crate_dir.join("README.md"));
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for m in re.find_iter(line) {
                let name = m.as_str();
                // `think_workflows_list|read|graph`, a typo shown on purpose,
                // and think_exec: the server's own (mcp/exec_tool.rs, behind
                // `[mcp] exec = true`), not the engine's (mcp_tasks.rs lists it).
                if name == "think_workflows" || name == "think_plann" || name == "think_exec" {
                    continue;
                }
                match catalog::find(name) {
                    Some(t) if t.mcp => {}
                    Some(_) if line.contains("CLI only") || line.contains("does not offer") => {}
                    Some(_) => problems.push(format!(
                        "{}:{}: `{name}` is not served over MCP; say CLI only",
                        path.display(),
                        n + 1
                    )),
                    None => problems.push(format!("{}:{}: `{name}` is no tool", path.display(), n + 1)),
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A workflow named like a bundled driver prompt (`stable`) wins over MCP:
/// the project's own is what `prompts/list` and `prompts/get` serve, and
/// `check` says so once.
#[tokio::test(flavor = "multi_thread")]
async fn a_project_workflow_wins_over_a_bundled_prompt_of_its_name() {
    use rmcp::model::GetPromptRequestParams;
    let root =
        Root::with_workflows("shadow", &[("stable", HELLO.replace("id: hello", "id: stable").as_str())]);
    let r = run(&root.path, &["check"]);
    assert_exit(&r, 0);
    assert_eq!(r.stderr.matches("shadows the bundled driver prompt `stable`").count(), 1, "{r:?}");
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(&root.path).env("LOG_LEVEL", "warn");
    }))
    .unwrap();
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await.unwrap().unwrap();
    let prompts = client.list_all_prompts().await.unwrap();
    let stable: Vec<_> = prompts.iter().filter(|p| p.name == "stable").collect();
    assert_eq!(stable.len(), 1, "{prompts:?}");
    assert!(stable[0].title.as_deref().unwrap_or("").starts_with("Run workflow"), "{:?}", stable[0]);
    let mut args = serde_json::Map::new();
    args.insert("name".into(), json!("Ada"));
    let got = client.get_prompt(GetPromptRequestParams::new("stable").with_arguments(args)).await.unwrap();
    let text = serde_json::to_string(&got.messages).unwrap();
    assert!(text.contains("think_plan") && text.contains("stable"), "{text}");
    // The other bundled prompts are still served.
    assert!(
        prompts
            .iter()
            .any(|p| p.name != "stable" && p.title.as_deref().unwrap_or("").starts_with("Driver prompt"))
    );
    client.cancel().await.unwrap();
}

/// `{{path}}` that resolves is a safe fix to `<<path>>` (not when the path
/// is unknown, a template block, or a read that would close a cycle), and
/// `--fix --diff` shows it without writing.
#[test]
fn legacy_interpolation_is_fixed_when_the_path_resolves() {
    let text = "id: leg\nparams:\n  ticket: { type: string }\nsteps:\n  - id: fetch\n    call: jira.get_issue\n    capture_as: issue\n    input_template: { key: \"{{params.ticket}}\", other: \"{{ nope.x }}\", later: \"{{note}}\" }\n  - id: say\n    call: prompt.say\n    deps: [fetch]\n    capture_as: note\n    input_template: { text: \"{{ issue.summary }} {{#each x}}\" }\n";
    let root = Root::with_workflows("legacy-fix", &[("leg", text)]);
    let path = root.path.join("workflows/leg.yaml");
    let r = run(&root.path, &["check", "--fix", "--diff"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("+    input_template: { key: \"<<params.ticket>>\""), "{r:?}");
    assert!(r.stdout.contains("\"<<issue.summary>> {{#each x}}\""), "{r:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "--fix --diff writes nothing");
    let r = run(&root.path, &["check", "--fix"]);
    assert_exit(&r, 0);
    let fixed = std::fs::read_to_string(&path).unwrap();
    assert!(fixed.contains("<<params.ticket>>") && fixed.contains("<<issue.summary>>"), "{fixed}");
    // Unknown, a block, and `{{note}}` (say depends on fetch: reading note in fetch would be a cycle) stay.
    assert!(
        fixed.contains("{{ nope.x }}") && fixed.contains("{{#each x}}") && fixed.contains("{{note}}"),
        "{fixed}"
    );
    assert!(!run(&root.path, &["check"]).stdout.contains("CYCLIC_DEPENDENCY"));
}

/// `[check] exclude` skips fixtures (also when named), and a
/// `per-file-ignores` pattern that matches nothing is a warning.
#[test]
fn check_exclude_and_unmatched_per_file_ignores() {
    let bad = "id: bad\nsteps:\n  - id: a\n    call: think\n    when: \"nope > 1\"\n";
    let root = Root::with_workflows("exclude", &[("good", HELLO)]);
    root.write("workflows/fixtures/bad.yaml", bad);
    assert_exit(&run(&root.path, &["check"]), 1);
    root.write(
        "savant-think.toml",
        "[check]\nexclude = [\"workflows/fixtures\"]\n[check.per-file-ignores]\n\"workflows/legacy/*.yaml\" = [\"UNUSED_CAPTURE\"]\n",
    );
    let r = run(&root.path, &["check"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("pattern `workflows/legacy/*.yaml` matches no file"), "{r:?}");
    let r = run(&root.path, &["check", "workflows/fixtures/bad.yaml"]);
    assert_exit(&r, 0);
    assert!(!r.stdout.contains("UNRESOLVED_VAR"), "{r:?}");
    // Said as what happened: the file is there, and skipped on purpose.
    assert!(r.stderr.contains("1 file(s) there are skipped by [check] exclude"), "{r:?}");
    assert!(!r.stderr.contains("no *.yaml"), "{r:?}");
}

/// pre-commit passes the staged files: a staged schema brings in the
/// workflows that use it — never an untracked draft, nor a workflow that
/// does not use the schema.
#[test]
fn a_staged_schema_checks_only_the_tracked_workflows_that_use_it() {
    let git = |dir: &std::path::Path, args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    };
    let uses = "id: uses\nsteps:\n  - id: a\n    call: gitlab.get_merge_request\n    capture_as: mr\n    success_schema: MergeRequestV1\n  - id: b\n    call: prompt.say\n    input_template: { text: \"<<mr.title>>\" }\n";
    let other_broken = "id: other\nsteps:\n  - id: a\n    call: think\n    when: \"nope > 1\"\n";
    let root = Root::with_workflows("precommit", &[("uses", uses), ("other", other_broken)]);
    root.write(
        "schemas/MergeRequestV1.json",
        r#"{"type": "object", "properties": {"title": {"type": "string"}}}"#,
    );
    git(&root.path, &["init", "-q"]);
    git(&root.path, &["add", "."]);
    git(&root.path, &["commit", "-qm", "start"]);
    // A half-written draft that is not part of any commit.
    root.write(
        "workflows/draft.yaml",
        "id: draft\nsteps:\n  - id: a\n    success_schema: MergeRequestV1\n    when: \"broken >\n",
    );
    let r = run(&root.path, &["check", "schemas/MergeRequestV1.json"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("1 file"), "only uses.yaml is checked: {r:?}");
    // A schema change that breaks the workflow using it is caught.
    root.write(
        "schemas/MergeRequestV1.json",
        r#"{"type": "object", "properties": {"iid": {"type": "string"}}, "additionalProperties": false}"#,
    );
    let r = run(&root.path, &["check", "schemas/MergeRequestV1.json"]);
    assert_exit(&r, 1);
    assert!(
        r.stdout.contains("uses.yaml")
            && !r.stdout.contains("draft.yaml")
            && !r.stdout.contains("other.yaml"),
        "{r:?}"
    );
}

/// Dynamic completion offers the project's workflow ids, run ids from the
/// store and step ids.
#[test]
fn shell_completion_offers_workflows_runs_and_steps() {
    let root = Root::with_workflows("complete", &[("hello", HELLO)]);
    assert_exit(
        &run(&root.path, &["plan", "hello", "--params", r#"{"name": "A"}"#, "--run-id", "nightly-1"]),
        0,
    );
    let complete = |words: &[&str]| {
        let mut c = crate::common::cmd(&root.path, &["--", "savant-think"]);
        c.args(words).env("COMPLETE", "fish");
        crate::common::run_cmd(c).stdout
    };
    assert!(complete(&["plan", "he"]).lines().any(|l| l.starts_with("hello")), "workflow ids");
    assert!(
        complete(&["next", "hello", "--run-id", "ni"]).lines().any(|l| l.starts_with("nightly-1")),
        "run ids"
    );
    assert!(
        complete(&["next", "hello", "--run-id", "nightly-1", "--step", "gr"])
            .lines()
            .any(|l| l.starts_with("greet")),
        "step ids"
    );
}

/// Every command's `--help` says what it does, shows an example and names
/// the page to read for more.
#[test]
fn every_command_help_has_an_example_and_a_doc_page() {
    let dir = Root::new("help-all");
    let top = run(&dir.path, &["--help"]);
    let commands: Vec<String> = top
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() > 20, "{commands:?}");
    let mut missing = Vec::new();
    for c in &commands {
        let r = run(&dir.path, &[c, "--help"]);
        let about = r.stdout.lines().next().unwrap_or("");
        if about.trim().is_empty()
            || !r.stdout.contains("Example")
            || !(r.stdout.contains("docs/") || r.stdout.contains("README"))
        {
            missing.push(c.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "commands whose --help lacks a one-line summary, an example or a doc page: {missing:?}"
    );
}

/// `--result @FILE` and `-` are capped before parsing (PAYLOAD_TOO_LARGE,
/// usage error, nothing recorded); a FIFO is refused, not waited on.
#[test]
fn oversized_cli_payloads_are_refused_before_parsing() {
    let root = Root::with_workflows("payload-cap", &[("hello", HELLO)]);
    assert_exit(&run(&root.path, &["plan", "hello", "--params", r#"{"name": "A"}"#, "--run-id", "r1"]), 0);
    let big = root.write("big.json", vec![b' '; (savant_think::workspace::MAX_JSON_ARG_BYTES + 1) as usize]);
    let arg = format!("@{}", big.display());
    let r = run(&root.path, &["next", "hello", "--run-id", "r1", "--step", "greet", "--result", &arg]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("PAYLOAD_TOO_LARGE"), "{r:?}");
    let r = run(&root.path, &["state", "get", "hello", "--run-id", "r1"]);
    assert!(r.json()["steps"][0]["status"] != "done", "nothing recorded: {r:?}");
    #[cfg(unix)]
    {
        let fifo = root.path.join("pipe.json");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let arg = format!("@{}", fifo.display());
        let r = run(&root.path, &["next", "hello", "--run-id", "r1", "--step", "greet", "--result", &arg]);
        assert_exit(&r, 2);
        assert!(r.stderr.contains("not a regular file"), "{r:?}");
    }
}

/// One code per mistake, whichever adapter met it: a workflow path outside
/// the root is UNKNOWN_WORKFLOW from the CLI, `exec` and MCP alike; an
/// unknown engine tool is UNKNOWN_TOOL from `call` and MCP alike.
#[tokio::test(flavor = "multi_thread")]
async fn the_same_mistake_has_the_same_code_in_every_adapter() {
    let root = Root::with_workflows("one-code", &[("hello", HELLO)]);
    let outside = Root::new("one-code-outside");
    let path = outside.write("elsewhere.yaml", HELLO);
    let path = path.display().to_string();
    let r = run(&root.path, &["plan", &path]);
    assert_eq!(r.json()["error"], "UNKNOWN_WORKFLOW", "{r:?}");
    let r = run(&root.path, &["exec", &path, "--json"]);
    assert!(r.stdout.contains("\"error\":\"UNKNOWN_WORKFLOW\""), "{r:?}");
    let r = run(&root.path, &["call", "think_plann", "--input", "{}"]);
    assert_eq!(r.json()["error"], "UNKNOWN_TOOL", "{r:?}");
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(&root.path).env("LOG_LEVEL", "error");
    }))
    .unwrap();
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await.unwrap().unwrap();
    let (is_error, out) = crate::mcp_support::call(&client, "think_plan", json!({"workflow": path})).await;
    assert!(is_error, "{out}");
    assert_eq!(out["error"], "UNKNOWN_WORKFLOW", "{out}");
    // Over MCP an unknown tool is a JSON-RPC error (-32602, as the spec
    // lists it), carrying the same code in its data.
    let err = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("think_plann").with_arguments(serde_json::Map::new()),
        )
        .await
        .unwrap_err();
    match err {
        rmcp::ServiceError::McpError(e) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            assert_eq!(e.data.unwrap()["error"], "UNKNOWN_TOOL");
        }
        other => panic!("an unknown tool must be a JSON-RPC error: {other:?}"),
    }
    client.cancel().await.unwrap();
}

/// `check --runs` warns (INCOMPATIBLE_UPGRADE, at the changed line, in every
/// format) when the file as it is now would strand an unfinished run;
/// without `--runs`, or with a compatible change, it says nothing.
#[test]
fn check_runs_warns_before_a_change_strands_a_run() {
    let v1 = "id: rev\nsteps:\n  - id: fetch\n    call: gitlab.get_mr\n    capture_as: mr\n  - id: say\n    call: prompt.say\n    input_template: { text: \"<<mr>>\" }\n";
    let root = Root::with_workflows("check-runs", &[("rev", v1)]);
    assert_exit(&run(&root.path, &["plan", "rev", "--run-id", "r1"]), 0);
    assert_exit(
        &run(&root.path, &["next", "rev", "--run-id", "r1", "--step", "fetch", "--result", r#"{"t": 1}"#]),
        0,
    );
    // Nothing changed: nothing to say.
    let r = run(&root.path, &["check", "--runs"]);
    assert!(!r.stderr.contains("can be upgraded"), "{r:?}");
    // A compatible change (a step not run yet) is fine, and check says the
    // run can take it (silence would not tell it from no run at all).
    root.write("workflows/rev.yaml", v1.replace("<<mr>>", "MR: <<mr>>"));
    let r = run(&root.path, &["check", "--runs", "--deny-warnings"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("rev.yaml: 1 run in flight can be upgraded to it"), "{r:?}");
    // The call of a step that ran changed: the run would be stranded.
    root.write("workflows/rev.yaml", v1.replace("gitlab.get_mr", "gitlab.get_merge_request"));
    assert_exit(&run(&root.path, &["check", "--deny-warnings"]), 0);
    let r = run(&root.path, &["check", "--runs", "--format", "concise"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("rev.yaml:4:11: warning[INCOMPATIBLE_UPGRADE] run `r1`"), "{r:?}");
    assert_exit(&run(&root.path, &["check", "--runs", "--deny-warnings"]), 1);
    let r = run(&root.path, &["check", "--runs", "--format", "sarif"]);
    assert!(r.stdout.contains("INCOMPATIBLE_UPGRADE"), "{r:?}");
    let r = run(&root.path, &["check", "--runs", "--format", "github"]);
    assert!(r.stdout.contains("::warning") && r.stdout.contains("INCOMPATIBLE_UPGRADE"), "{r:?}");
}
