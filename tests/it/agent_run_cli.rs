//! `savant-think run` end to end: the real binary, the engine's real tools,
//! and a fake Ollama on 127.0.0.1 (OLLAMA_HOST).

use crate::agent_support::{Answer, FakeModel, Flavor, closed_port, events, finish, reason, tool, trace};
use crate::common::{Root, Run, assert_exit, cmd, run_cmd};
use serde_json::json;

/// The binary in `root` with a clean agent environment plus `envs`.
fn agent(root: &Root, args: &[&str], envs: &[(&str, &str)]) -> std::process::Command {
    let mut c = cmd(&root.path, args);
    for var in [
        "OLLAMA_HOST",
        "SLM_MODEL",
        "LLM_MODEL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_MODEL",
        "REASONING_API_URL",
        "REASONING_API_TOKEN",
        "SAVANT_DISABLE_TOOLS",
        "SAVANT_ALLOW_TOOLS",
        "SAVANT_DENY_TOOLS",
        "SAVANT_DISABLE_WORKFLOW_AUTODETECT",
        "SAVANT_BACKEND_TIMEOUT_MS",
    ] {
        c.env_remove(var);
    }
    c.envs(envs.iter().copied());
    c
}

async fn run_blocking(c: std::process::Command) -> Run {
    tokio::task::spawn_blocking(move || run_cmd(c)).await.unwrap()
}

fn project() -> Root {
    let s = Root::new("agent-cli");
    let wf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/workflows/release_notes.yaml"))
        .unwrap();
    s.write("workflows/release_notes.yaml", wf);
    let schema =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/MergeRequestListV1.json"))
            .unwrap();
    s.write("schemas/MergeRequestListV1.json", schema);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_calls_a_real_engine_tool_and_finishes() {
    let root = project();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![tool("think_workflows_list", json!({})), finish("There is one workflow.")],
    )
    .await;
    let url = fake.url();
    let r = run_blocking(agent(
        &root,
        &["run", "How many workflows are there?", "--json", "--verbose"],
        &[("OLLAMA_HOST", &url)],
    ))
    .await;
    assert_exit(&r, 0);
    // --verbose: the runtime log on stderr, with the structured-output dialect and each answer.
    assert!(r.stderr.contains("structured output: trying format first"), "{}", r.stderr);
    assert!(r.stderr.contains("step 1: action answer via format"), "{}", r.stderr);
    let out = r.json();
    assert_eq!(out["status"], "ok");
    // --json's trace: each step's raw answers.
    assert!(out["trace"][1]["answers"][0]["raw"].as_str().unwrap().contains("There is one workflow."));
    assert_eq!(out["final"], "There is one workflow.");
    assert_eq!(out["steps"], 2);
    assert!(out["run_id"].as_str().unwrap().starts_with("r-"));
    // The second prompt carries the engine's real answer.
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    let user = seen[1].body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("release_notes"), "{user}");
    let first = seen[0].body["messages"][1]["content"].as_str().unwrap();
    // The 4 tools ranked best for the goal are offered, the list among them.
    let tools = first.split("## Tools\n").nth(1).unwrap().split("\n\n").next().unwrap();
    assert!(tools.contains("- think_workflows_list:"), "{tools}");
    assert_eq!(tools.lines().filter(|l| l.starts_with("- ")).count(), 4, "{tools}");
    let events_ = trace(&root.path);
    assert_eq!(events(&events_, "reasoning_step").len(), 2);
    assert_eq!(events(&events_, "tool_call_completed")[0]["ok"], true);
    let session: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.path.join(".savant/session.json")).unwrap())
            .unwrap();
    assert_eq!(session["run_id"], out["run_id"]);
    assert!(root.path.join("logs/agent_runtime.log").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_exits_1_and_the_policy_comes_from_the_environment() {
    let root = project();
    let fake =
        FakeModel::start_with(Flavor::Ollama, vec![], Some(Box::new(|n| reason(&format!("hmm {n}"))))).await;
    let url = fake.url();
    let r = run_blocking(agent(
        &root,
        &["run", "Think forever", "--max-steps", "2", "--json"],
        &[
            ("OLLAMA_HOST", &url),
            ("SAVANT_ALLOW_TOOLS", "think_workflows_*"),
            ("SAVANT_DENY_TOOLS", "think_workflows_graph"),
        ],
    ))
    .await;
    assert_exit(&r, 1);
    assert_eq!(r.json()["status"], "cap");
    assert_eq!(r.json()["steps"], 2);
    let user = fake.seen()[0].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(user.contains("- think_workflows_list:") && user.contains("- think_workflows_read:"), "{user}");
    assert!(!user.contains("- think_plan:") && !user.contains("- think_workflows_graph:"), "{user}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_ollama_exits_1_naming_the_url_and_what_to_check() {
    let root = project();
    let host = format!("127.0.0.1:{}", closed_port());
    let r = run_blocking(agent(&root, &["run", "Anything"], &[("OLLAMA_HOST", &host)])).await;
    assert_exit(&r, 1);
    assert!(r.stderr.contains(&format!("http://{host}/api/chat")), "{r:?}");
    assert!(r.stderr.contains("ollama serve"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2() {
    let root = project();
    let r = run_blocking(agent(&root, &["run", "x", "--backend", "reasoning-api"], &[])).await;
    assert_exit(&r, 2);
    assert!(r.stderr.contains("REASONING_API_URL"), "{r:?}");
    let r =
        run_blocking(agent(&root, &["run", "x", "--force-tool", "echo", "--force-args", "[1]"], &[])).await;
    assert_exit(&r, 2);
    assert!(r.stderr.contains("--force-args must be a JSON object"), "{r:?}");
    let r = run_blocking(agent(&root, &["run", "   "], &[])).await;
    assert_exit(&r, 2);
    assert!(r.stderr.contains("the goal is empty"), "{r:?}");
    let r =
        run_blocking(agent(&root, &["run", "x", "--context-tokens", "1024", "--answer-tokens", "2000"], &[]))
            .await;
    assert_exit(&r, 2);
    assert!(r.stderr.contains("--answer-tokens 2000 does not fit in --context-tokens 1024"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_error_status_is_reported_with_its_hint() {
    let root = project();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![Answer::Status(404, r#"{"error":"model \"tiny\" not found"}"#.into())],
    )
    .await;
    let url = fake.url();
    let r = run_blocking(agent(&root, &["run", "x", "--model", "tiny"], &[("OLLAMA_HOST", &url)])).await;
    assert_exit(&r, 1);
    assert!(r.stderr.contains("ollama pull tiny"), "{r:?}");
    assert_eq!(fake.seen()[0].body["model"], "tiny");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_naming_a_workflow_runs_it_through_exec_without_the_model() {
    let root = project();
    // Nothing listens here: asking the model would fail the run.
    let host = format!("127.0.0.1:{}", closed_port());
    let r = run_blocking(agent(
        &root,
        &[
            "run",
            "Please run release-notes for the next milestone",
            "--params",
            r#"{"milestone": "1.2"}"#,
            "--dry-run",
            "--json",
        ],
        &[("OLLAMA_HOST", &host)],
    ))
    .await;
    assert_exit(&r, 0);
    let out = r.json();
    assert_eq!(
        (out["status"].as_str(), out["stop_reason"].as_str()),
        (Some("ok"), Some("workflow")),
        "{r:?}"
    );
    let run_id = out["run_id"].as_str().unwrap();
    // The workflow's run is the engine's, under the same id.
    let state = run_blocking(cmd(&root.path, &["state", "get", "release_notes", "--run-id", run_id])).await;
    assert_exit(&state, 0);
    assert_eq!(state.json()["status"], "done", "{state:?}");
    let log = std::fs::read_to_string(root.path.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("names the workflow `release_notes`"), "{log}");
    // In human mode stdout is the answer, once: exec's own last line goes to stderr.
    let args = ["run", "run release-notes", "--params", r#"{"milestone": "1.2"}"#, "--dry-run"];
    let r = run_blocking(agent(&root, &args, &[("OLLAMA_HOST", &host)])).await;
    assert_exit(&r, 0);
    assert_eq!(r.stdout.lines().count(), 1, "{r:?}");
    assert!(r.stderr.contains("done: release_notes run "), "{r:?}");

    // Missing params: a usage-like error that says what to do.
    let r = run_blocking(agent(&root, &["run", "run release_notes"], &[("OLLAMA_HOST", &host)])).await;
    assert_exit(&r, 1);
    assert!(
        r.stderr.contains("--params") && r.stderr.contains("SAVANT_DISABLE_WORKFLOW_AUTODETECT"),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_detect_can_be_turned_off() {
    let root = project();
    let fake = FakeModel::start(Flavor::Ollama, vec![finish("I was asked.")]).await;
    let url = fake.url();
    let r = run_blocking(agent(
        &root,
        &["run", "Tell me about release_notes", "--json"],
        &[("OLLAMA_HOST", &url), ("SAVANT_DISABLE_WORKFLOW_AUTODETECT", "1")],
    ))
    .await;
    assert_exit(&r, 0);
    assert_eq!(r.json()["stop_reason"], "finish");
    assert_eq!(fake.seen().len(), 1);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_a_model_call_ends_the_run_as_canceled() {
    use std::process::Stdio;
    let root = project();
    let fake = FakeModel::start(Flavor::Ollama, vec![Answer::Hang]).await;
    let url = fake.url();
    let mut c = agent(&root, &["run", "Wait for me", "--json"], &[("OLLAMA_HOST", &url)]);
    let child = c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Wait (under the watchdog) until the model call is in flight.
    let waiting = std::time::Instant::now();
    while fake.seen().is_empty() {
        assert!(waiting.elapsed() < crate::common::WATCHDOG, "the binary never called the model");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = tokio::time::timeout(
        crate::common::WATCHDOG,
        tokio::task::spawn_blocking(move || child.wait_with_output()),
    )
    .await
    .expect("the run ended after Ctrl-C")
    .unwrap()
    .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (result["status"].as_str(), result["final"].as_str()),
        (Some("canceled"), Some("Canceled by user"))
    );
    let session: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.path.join(".savant/session.json")).unwrap())
            .unwrap();
    assert_eq!(session["status"], "canceled");
}

/// The branches (`action` values, tools by name) of a step's schema.
fn branches(schema: &serde_json::Value) -> Vec<String> {
    schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match b["properties"]["tool_name"]["const"].as_str() {
            Some(t) if !t.is_empty() => t.to_owned(),
            _ => b["properties"]["action"]["const"].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_of_a_missing_file_is_not_made_and_the_hint_names_the_goals_file() {
    let root = project();
    root.write("notes.txt", "Release notes for 1.2: the checker now reports unknown tools.\n");
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![
            tool("local_read", json!({"path": "file.txt"})),
            tool("local_read", json!({"path": "notes.txt"})),
            finish("The checker now reports unknown tools in 1.2."),
        ],
    )
    .await;
    let url = fake.url();
    let r = run_blocking(agent(
        &root,
        &["run", "Summarise the file notes.txt", "--json"],
        &[("OLLAMA_HOST", &url)],
    ))
    .await;
    assert_exit(&r, 0);
    let out = r.json();
    assert_eq!((out["status"].as_str(), out["steps"].as_u64()), (Some("ok"), Some(2)), "{out}");
    assert_eq!(out["final"], "The checker now reports unknown tools in 1.2.");
    let seen = fake.seen();
    assert_eq!(seen.len(), 3);
    // Nothing read yet: the first step may only call a tool (or give up),
    // and the tool that takes a path is the one offered.
    assert_eq!(branches(&seen[0].body["format"]), ["local_read", "error"]);
    let policy = seen[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(policy.contains("call a tool now"), "{policy}");
    // `file.txt` is not there: not read, the model asked again in the step.
    let note = seen[1].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap();
    assert!(note.contains("was not made: there is no file `file.txt` under the project root"), "{note}");
    assert!(note.contains("call `local_read` with the path the goal names: `notes.txt`"), "{note}");
    // … and allowed only the files the goal names that are there.
    let path = &seen[1].body["format"]["anyOf"][0]["properties"]["args"]["properties"]["path"];
    assert_eq!(path, &json!({"type": "string", "enum": ["notes.txt"]}));
    // After the read, finish is offered again.
    assert!(branches(&seen[2].body["format"]).contains(&"finish".to_owned()));
    let completed = events(&trace(&root.path), "tool_call_completed").len();
    assert_eq!(completed, 1, "only the read of notes.txt was made");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_call_naming_no_workflow_or_no_run_is_not_made() {
    let root = project();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![
            tool("think_workflows_read", json!({"workflow": "notes"})),
            tool(
                "think_answer",
                json!({"workflow": "release_notes", "run_id": "r-invented", "step_id": "s",
                                         "value": "x"}),
            ),
        ],
    )
    .await;
    let url = fake.url();
    let r = run_blocking(agent(
        &root,
        &[
            "run",
            "Read the workflow called notes, then answer its waiting step",
            "--json",
            "--max-steps",
            "1",
        ],
        &[("OLLAMA_HOST", &url)],
    ))
    .await;
    assert_exit(&r, 1);
    let out = r.json();
    let seen = fake.seen();
    let last = |i: usize| {
        seen[i].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned()
    };
    let note = last(1);
    assert!(
        note.contains("`notes` is not a workflow of this project (the workflows: release_notes)"),
        "{note}"
    );
    assert!(note.contains("give `think_workflows_read` one of the workflows named"), "{note}");
    // The re-ask allowed only the project's workflows.
    let pinned = seen[1].body["format"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["tool_name"]["const"] == "think_workflows_read")
        .map(|b| b["properties"]["args"]["properties"]["workflow"].clone());
    assert_eq!(pinned, Some(json!({"type": "string", "enum": ["release_notes"]})));
    // The second hopeless call of the step is its output, as a refusal.
    let session: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.path.join(".savant/session.json")).unwrap())
            .unwrap();
    let step1 = &session["steps"][0];
    assert_eq!(step1["output"]["error"], "INVALID_INPUT", "{step1}");
    let message = step1["output"]["details"]["message"].as_str().unwrap();
    assert!(message.contains("no run `r-invented` of `release_notes` is stored"), "{message}");
    assert!(events(&trace(&root.path), "tool_call_completed").is_empty(), "no call was made");
    assert_eq!((out["status"].as_str(), out["steps"].as_u64()), (Some("cap"), Some(1)), "{out}");
}
