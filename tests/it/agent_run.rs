//! The `run` loop against scripted fake model servers on 127.0.0.1 and fake
//! tools: finishing, correction, the cap, retries, unreachable backends,
//! memory, tool policy, unknown tools, stuck detection, dry run, cancel,
//! forced steps and model switches.

use crate::agent_support::*;
use crate::common::Root;
use savant_think::agent::backend::ollama::{Ollama, OllamaConfig};
use savant_think::agent::backend::openai::{OpenAi, OpenAiConfig};
use savant_think::agent::backend::reasoning_api::{ReasoningApi, ReasoningApiConfig};
use savant_think::agent::run::action;
use savant_think::agent::run::policy::ToolPolicy;
use savant_think::agent::run::{ForcedTool, RunOptions, RunResult, RunStatus, run};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub(crate) fn ollama(url: &str) -> Ollama {
    Ollama::new(OllamaConfig { host: url.into(), ..OllamaConfig::default() }).unwrap()
}

pub(crate) fn options(root: &Path) -> RunOptions {
    let mut o = RunOptions::new(root);
    o.backoff = Duration::from_millis(1);
    o
}

pub(crate) async fn run_ollama(fake: &FakeModel, root: &Path, o: &RunOptions) -> (RunResult, FakeTools) {
    let tools = FakeTools::new(root.to_path_buf());
    let result =
        run("Echo something, then finish.", o, &ollama(&fake.url()), &tools, &CancellationToken::new()).await;
    (result, tools)
}

/// What `FakeTools` lists, for the expected per-step schema.
pub(crate) fn fake_tool_infos() -> Vec<savant_think::agent::ToolInfo> {
    ["echo", "big", "slow", "fail"]
        .iter()
        .map(|n| savant_think::agent::ToolInfo {
            name: (*n).into(),
            description: format!("The {n} tool."),
            input_schema: json!({"type": "object"}),
        })
        .collect()
}

pub(crate) fn session(root: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(".savant/session.json")).unwrap()).unwrap()
}

#[tokio::test]
async fn ollama_tool_then_finish() {
    let tmp = Root::new("ollama-finish");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![tool("echo", json!({"x": 1})), tool("echo", json!({"x": 2})), finish("all echoed")],
    )
    .await;
    let (result, tools) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    assert_eq!(
        (result.final_text.as_str(), result.steps, result.stop_reason.as_str()),
        ("all echoed", 3, "finish")
    );
    assert_eq!(tools.calls(), [("echo".into(), json!({"x": 1})), ("echo".into(), json!({"x": 2}))]);

    let seen = fake.seen();
    assert_eq!(seen.len(), 3);
    for s in &seen {
        assert_eq!(s.path, "/api/chat");
        assert_eq!(s.body["model"], "phi3.5");
        assert_eq!(s.body["stream"], false);
        assert_eq!(s.body["options"]["temperature"], 0.1);
        // The tools ranked for the goal ("Echo something"): `echo` alone.
        let echo: Vec<_> = fake_tool_infos().into_iter().filter(|t| t.name == "echo").collect();
        assert_eq!(s.body["format"], action::step_schema(&echo));
        assert_eq!(s.body["messages"][0]["role"], "system");
    }
    // The tool output is in memory, so in the next prompt.
    let user = seen[1].body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains(r#"{"echo":{"x":1}}"#), "{user}");

    // session.json was valid at every tool call (steps 0 and 1 done), and at the end.
    assert_eq!(*tools.session_steps.lock().unwrap(), [0, 1]);
    let s = session(&root);
    assert_eq!((s["status"].as_str(), s["final"].as_str()), (Some("ok"), Some("all echoed")));
    assert_eq!(s["steps"].as_array().unwrap().len(), 3);

    let trace = trace(&root);
    let steps = events(&trace, "reasoning_step");
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0]["action"], "tool");
    assert_eq!(steps[0]["tool_name"], "echo");
    assert_eq!(steps[0]["model"], "phi3.5");
    assert_eq!(steps[0]["prompt_tokens"], 321);
    assert_eq!(steps[0]["output_tokens"], 17);
    assert!(steps[0]["metadata"]["decision_summary"].as_str().unwrap().contains("echo"));
    assert!(steps[0]["metadata"]["prompt_hash"].as_str().unwrap().starts_with("sha256:"));
    assert!(steps[0]["timestamp"].is_u64());
    assert_eq!(steps[2]["action"], "finish");
    assert_eq!(events(&trace, "tool_call_started").len(), 2);
    assert_eq!(events(&trace, "tool_call_completed").len(), 2);
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("run finished: ok (finish) after 3 steps"), "{log}");
}

#[tokio::test]
async fn openai_compatible_tool_then_finish_with_or_without_v1() {
    for suffix in ["", "/v1"] {
        let tmp = Root::new("openai-finish");
        let root = tmp.path.clone();
        let fake =
            FakeModel::start(Flavor::OpenAi, vec![tool("echo", json!({"q": "hi"})), finish("said hi")]).await;
        let backend = OpenAi::new(OpenAiConfig {
            base_url: format!("{}{suffix}", fake.url()),
            api_key: Some("sk-test".into()),
            model: "local-model".into(),
            ..OpenAiConfig::default()
        })
        .unwrap();
        let tools = FakeTools::new(root.clone());
        let result = run("Say hi.", &options(&root), &backend, &tools, &CancellationToken::new()).await;
        assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "said hi"), "{result:?}");
        assert_eq!(tools.calls(), [("echo".into(), json!({"q": "hi"}))]);
        let seen = fake.seen();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].path, "/v1/chat/completions");
        assert_eq!(seen[0].authorization.as_deref(), Some("Bearer sk-test"));
        assert_eq!(seen[0].body["model"], "local-model");
        let rf = &seen[0].body["response_format"];
        assert_eq!(rf["type"], "json_schema");
        assert_eq!(rf["json_schema"]["name"], "agent_action");
        assert_eq!(rf["json_schema"]["schema"], action::step_schema(&fake_tool_infos()));
        assert_eq!(rf["json_schema"]["strict"], false);
    }
}

#[tokio::test]
async fn reasoning_api_answers_intents() {
    let tmp = Root::new("reasoning-api");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::ReasoningApi,
        vec![
            Answer::Text(
                json!({"intent": {"action": "tool", "tool_name": "echo", "args": {"n": 1}}}).to_string(),
            ),
            Answer::Text(json!({"action": "finish", "finish": "intent done", "reasoning": "r"}).to_string()),
        ],
    )
    .await;
    let backend = ReasoningApi::new(ReasoningApiConfig {
        url: fake.url(),
        token: Some("tok".into()),
        ..ReasoningApiConfig::default()
    })
    .unwrap();
    let tools = FakeTools::new(root.clone());
    let result = run("Do the thing.", &options(&root), &backend, &tools, &CancellationToken::new()).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "intent done"), "{result:?}");
    let seen = fake.seen();
    assert_eq!(seen[0].path, "/agent_intent");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer tok"));
    assert_eq!(seen[0].body["goal"], "Do the thing.");
    assert_eq!(seen[0].body["step"], 1);
    assert_eq!(seen[0].body["tools"][0]["name"], "echo");
    assert_eq!(seen[1].body["memory"]["steps"][0]["output"], json!({"echo": {"n": 1}}));
}

#[tokio::test]
async fn a_malformed_answer_gets_exactly_one_correction_within_the_same_step() {
    let tmp = Root::new("correction");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start(Flavor::Ollama, vec![Answer::Text("Sure! I'll echo.".into()), finish("fixed")])
            .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!((result.status, result.final_text.as_str(), result.steps), (RunStatus::Ok, "fixed", 1));
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    let messages = seen[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2], json!({"role": "assistant", "content": "Sure! I'll echo."}));
    let correction = messages[3]["content"].as_str().unwrap();
    assert!(
        correction.contains("Answer with JSON only") && correction.contains("not valid JSON"),
        "{correction}"
    );
    let trace = trace(&root);
    let steps = events(&trace, "reasoning_step");
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["metadata"]["corrected"], true);
    assert_eq!(steps[0]["prompt_tokens"], 642);
}

#[tokio::test]
async fn a_second_malformed_answer_is_an_error_not_a_second_correction() {
    let tmp = Root::new("correction-fails");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![Answer::Text("nope".into()), Answer::Text(r#"{"action":"dance"}"#.into()), finish("never")],
    )
    .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(result.error.as_ref().unwrap()["error"], "INVALID_ACTION");
    assert!(result.final_text.contains("`action` must be"), "{}", result.final_text);
    assert_eq!(fake.seen().len(), 2);
    assert_eq!(events(&trace(&root), "reasoning_step").len(), 1);
}

#[tokio::test]
async fn endless_reasoning_stops_at_the_cap_with_one_event_per_step() {
    let tmp = Root::new("cap");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start_with(Flavor::Ollama, vec![], Some(Box::new(|n| reason(&format!("thought {n}")))))
            .await;
    let mut o = options(&root);
    o.max_steps = 7;
    let (result, _) = run_ollama(&fake, &root, &o).await;
    assert_eq!((result.status, result.steps, result.stop_reason.as_str()), (RunStatus::Cap, 7, "cap"));
    assert!(result.final_text.contains("--max-steps"));
    assert_eq!(fake.seen().len(), 7);
    let trace = trace(&root);
    let steps = events(&trace, "reasoning_step");
    assert_eq!(steps.len(), 7);
    let numbers: Vec<u64> = steps.iter().map(|e| e["step"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(session(&root)["status"], "cap");
}

#[tokio::test]
async fn an_unknown_tool_is_returned_to_the_model_once_then_ends_the_run() {
    let tmp = Root::new("unknown-tool");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![tool("ecko", json!({})), tool("ekko", json!({})), finish("never")],
    )
    .await;
    let (result, tools) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(result.error.as_ref().unwrap()["error"], "UNKNOWN_TOOL");
    assert!(result.final_text.contains("did you mean `echo`?"), "{}", result.final_text);
    assert!(tools.calls().is_empty());
    // Step 1's refusal is the tool output the model read at step 2.
    let user = fake.seen()[1].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(user.contains("UNKNOWN_TOOL") && user.contains("did you mean `echo`?"), "{user}");
    assert_eq!(result.transcript[0].ok, Some(false));
    let trace = trace(&root);
    let steps = events(&trace, "reasoning_step");
    assert_eq!(steps.len(), 2);
    assert_eq!((&steps[0]["action"], &steps[0]["metadata"]["unknown_tool"]), (&json!("tool"), &json!(true)));
    assert_eq!(steps[1]["action"], "error");
    assert_eq!(steps[1]["metadata"]["requested_tool"], "ekko");
    assert!(events(&trace, "tool_call_started").is_empty(), "an unknown tool is never called");
}

#[tokio::test]
async fn after_an_unknown_tool_the_model_can_recover_and_dashed_names_resolve() {
    let tmp = Root::new("unknown-recover");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![tool("ecko", json!({})), tool(" echo ", json!({"n": 1})), finish("recovered")],
    )
    .await;
    let (result, tools) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "recovered"), "{result:?}");
    assert_eq!(tools.calls(), [("echo".into(), json!({"n": 1}))]);
    // `-`, `.` and `_` variants name the same tool, everywhere names are compared.
    use savant_think::agent::normalize_tool_name as n;
    assert_eq!(n("think-plan"), n("think.plan"));
    assert_eq!(n(" think_plan "), "think_plan");
    let p = ToolPolicy::from_env_values(None, Some("think-*"), None);
    assert!(p.permits("think.plan").is_ok() && p.permits("local_read").is_err());
}

#[tokio::test]
async fn the_tool_policy_filters_what_is_offered_and_refuses_the_rest() {
    let tmp = Root::new("policy");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::Ollama, vec![tool("echo", json!({})), tool("echo", json!({}))]).await;
    let mut o = options(&root);
    o.policy = ToolPolicy::from_env_values(None, None, Some("echo"));
    let (result, tools) = run_ollama(&fake, &root, &o).await;
    let user = fake.seen()[0].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(!user.contains("- echo:") && user.contains("- big:"), "{user}");
    assert_eq!(result.status, RunStatus::Error);
    assert!(result.final_text.contains("SAVANT_DENY_TOOLS"), "{}", result.final_text);
    assert!(tools.calls().is_empty());

    let tmp = Root::new("policy-disabled");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::Ollama, vec![finish("no tools needed")]).await;
    let mut o = options(&root);
    o.policy = ToolPolicy::from_env_values(Some("1"), None, None);
    let (result, _) = run_ollama(&fake, &root, &o).await;
    assert_eq!(result.status, RunStatus::Ok);
    let user = fake.seen()[0].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(user.contains("Tools are disabled") && user.contains("(none)"), "{user}");
}

#[tokio::test]
async fn the_same_action_three_times_in_a_row_stops_the_run() {
    let tmp = Root::new("stuck");
    let root = tmp.path.clone();
    let fake = FakeModel::start_with(
        Flavor::Ollama,
        vec![],
        Some(Box::new(|_| tool("echo", json!({"same": true})))),
    )
    .await;
    let (result, tools) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!((result.status, result.stop_reason.as_str(), result.steps), (RunStatus::Error, "stuck", 3));
    assert!(result.final_text.contains("repeated the same action 3 times"), "{}", result.final_text);
    assert_eq!(result.error.as_ref().unwrap()["error"], "STUCK");
    assert_eq!(result.error.as_ref().unwrap()["details"]["repeats"], 3);
    assert_eq!(tools.calls().len(), 2, "the third repeat is not carried out");
    let trace = trace(&root);
    let steps = events(&trace, "reasoning_step");
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[2]["action"], "error");
    assert!(steps[2]["metadata"]["stuck"].is_object());
    // Each repeat was asked again once for the answer from the output (the short answer
    // request), which this model ignored; the trace has every raw answer.
    assert_eq!(steps[1]["metadata"]["narrowed"]["outcome"], "ignored");
    let answers = steps[1]["metadata"]["answers"].as_array().unwrap();
    assert_eq!(
        answers.iter().map(|a| a["purpose"].as_str().unwrap()).collect::<Vec<_>>(),
        ["action", "narrowed"]
    );
    assert!(answers[0]["raw"].as_str().unwrap().contains("\"echo\""));
    assert_eq!(answers[0]["response_format"], "format");
    let narrowed = &fake.seen()[2].body;
    assert_eq!(narrowed["format"]["type"], "string", "one JSON string: the answer");
    assert_eq!(
        narrowed["messages"].as_array().unwrap().len(),
        2,
        "a fresh prompt of the goal and the output"
    );
}

#[tokio::test]
async fn a_repeated_call_is_asked_again_and_the_narrowed_answer_finishes_in_prose_or_json() {
    for (name, narrowed) in [
        ("repeat-json", finish("The echo said same.")),
        ("repeat-prose", ollama_answer("The echo said same.", "stop")),
    ] {
        let tmp = Root::new(name);
        let root = tmp.path.clone();
        let script = vec![tool("echo", json!({"same": true})), tool("echo", json!({"same": true})), narrowed];
        let fake = FakeModel::start(Flavor::Ollama, script).await;
        let (result, tools) = run_ollama(&fake, &root, &options(&root)).await;
        assert_eq!(
            (result.status, result.stop_reason.as_str(), result.steps),
            (RunStatus::Ok, "finish", 2),
            "{name}"
        );
        assert_eq!(result.final_text, "The echo said same.", "{name}");
        assert_eq!(tools.calls().len(), 1, "{name}: the repeat is not carried out");
        let steps = events(&trace(&root), "reasoning_step").into_iter().cloned().collect::<Vec<_>>();
        assert_eq!(steps[1]["metadata"]["narrowed"]["outcome"], "finish", "{name}");
    }
}

#[tokio::test]
async fn dry_run_calls_no_tool_and_says_so() {
    let tmp = Root::new("dry-run");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::Ollama, vec![tool("fail", json!({"a": 1})), finish("dry")]).await;
    let mut o = options(&root);
    o.dry_run = true;
    let (result, tools) = run_ollama(&fake, &root, &o).await;
    assert_eq!(result.status, RunStatus::Ok);
    assert!(tools.calls().is_empty());
    let out = &result.transcript[0].output;
    assert_eq!(out["dry_run"], true);
    assert!(out["note"].as_str().unwrap().contains("was not called"));
    assert_eq!(events(&trace(&root), "tool_call_started")[0]["dry_run"], true);
}

#[tokio::test]
async fn cancel_finishes_with_canceled_by_user() {
    let tmp = Root::new("cancel");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start_with(Flavor::Ollama, vec![], Some(Box::new(|n| tool("echo", json!({"n": n})))))
            .await;
    let cancel = CancellationToken::new();
    let mut tools = FakeTools::new(root.clone());
    tools.cancel_on = Some(("echo".into(), cancel.clone()));
    let result = run("x", &options(&root), &ollama(&fake.url()), &tools, &cancel).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Canceled, "Canceled by user"));
    assert_eq!(tools.calls().len(), 1);
    assert_eq!(fake.seen().len(), 1);
    let s = session(&root);
    assert_eq!((s["status"].as_str(), s["final"].as_str()), (Some("canceled"), Some("Canceled by user")));
    assert_eq!(events(&trace(&root), "reasoning_step").len(), result.steps);
}

#[tokio::test]
async fn cancel_during_a_tool_call_abandons_it_and_keeps_one_event_per_step() {
    let tmp = Root::new("cancel-tool");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::Ollama, vec![tool("slow", json!({}))]).await;
    let cancel = CancellationToken::new();
    let tools = std::sync::Arc::new(FakeTools::new(root.clone()));
    let (o, c, t, backend) = (options(&root), cancel.clone(), tools.clone(), ollama(&fake.url()));
    let running = tokio::spawn(async move { run("x", &o, &backend, t.as_ref(), &c).await });
    while tools.calls().is_empty() {
        tokio::task::yield_now().await;
    }
    cancel.cancel();
    let result = running.await.unwrap();
    assert_eq!(
        (result.status, result.steps, result.final_text.as_str()),
        (RunStatus::Canceled, 1, "Canceled by user")
    );
    assert_eq!(result.transcript[0].output["error"], "CANCELED");
    let trace = trace(&root);
    assert_eq!(events(&trace, "reasoning_step").len(), 1);
    assert_eq!(events(&trace, "tool_call_completed").len(), 0);
    assert_eq!(session(&root)["status"], "canceled");
}

#[tokio::test]
async fn a_forced_tool_and_finish_need_no_model() {
    let tmp = Root::new("forced");
    let root = tmp.path.clone();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let mut o = options(&root);
    o.forced_tool = Some(ForcedTool { name: "echo".into(), args: json!({"forced": 1}) });
    o.forced_finish = true;
    let tools = FakeTools::new(root.clone());
    let result = run("x", &o, &ollama(&url), &tools, &CancellationToken::new()).await;
    assert_eq!((result.status, result.stop_reason.as_str()), (RunStatus::Ok, "forced_finish"), "{result:?}");
    assert_eq!(result.final_text, r#"{"echo":{"forced":1}}"#);
    assert_eq!(tools.calls(), [("echo".into(), json!({"forced": 1}))]);
    assert_eq!(events(&trace(&root), "reasoning_step")[0]["model"], "forced");

    // A forced tool that fails is an error, not an answer.
    o.forced_tool = Some(ForcedTool { name: "fail".into(), args: json!({}) });
    let result = run("x", &o, &ollama(&url), &tools, &CancellationToken::new()).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(result.error.as_ref().unwrap()["error"], "TOOL_FAILED");
    assert!(
        result.final_text.contains("TOOL_FAILED") && result.final_text.contains("boom"),
        "{}",
        result.final_text
    );
}

#[tokio::test]
async fn a_large_tool_output_makes_the_next_step_heavy() {
    let tmp = Root::new("heavy");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::Ollama, vec![tool("big", json!({})), finish("read it")]).await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Ok);
    let models: Vec<Value> = fake.seen().iter().map(|s| s.body["model"].clone()).collect();
    assert_eq!(models, [json!("phi3.5"), json!("llama3:latest")]);
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("model switch phi3.5 → llama3:latest"), "{log}");
    // The big output was cut in memory, and the prompt stayed in budget.
    let steps = events(&trace(&root), "reasoning_step").into_iter().cloned().collect::<Vec<_>>();
    assert!(steps[1]["metadata"]["prompt_estimated_tokens"].as_u64().unwrap() <= 8_000);
}

#[tokio::test]
async fn memory_stays_under_its_budget_over_a_long_run() {
    let tmp = Root::new("memory-budget");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start_with(Flavor::Ollama, vec![], Some(Box::new(|n| tool("big", json!({"n": n}))))).await;
    let mut o = options(&root);
    o.max_steps = 20;
    let (result, tools) = run_ollama(&fake, &root, &o).await;
    assert_eq!((result.status, result.steps), (RunStatus::Cap, 20));
    let sizes = tools.session_tokens.lock().unwrap().clone();
    assert_eq!(sizes.len(), 20);
    assert!(sizes.iter().all(|&t| t <= 4_000), "{sizes:?}");
    let s = session(&root);
    assert!(!s["summaries"].as_array().unwrap().is_empty(), "older steps were summarised");
    assert_eq!(s["steps"].as_array().unwrap().last().unwrap()["step"], 20);
    // Every prompt stayed within the 8k budget, trimming memory first.
    let trace = trace(&root);
    for e in events(&trace, "reasoning_step") {
        assert!(e["metadata"]["prompt_estimated_tokens"].as_u64().unwrap() <= 8_000, "{e}");
    }
    // The transcript keeps every output whole.
    assert_eq!(result.transcript[0].output, json!({"text": "word ".repeat(4_000)}));
}
