//! The agent loop against its model servers, continued from
//! `agent_run.rs` (its helpers): retries, timeouts, bounded requests, the
//! negotiated JSON dialect and the context budget.

use crate::agent_run::*;
use crate::agent_support::*;
use crate::common::Root;
use savant_think::agent::backend::ollama::{Ollama, OllamaConfig};
use savant_think::agent::backend::openai::{OpenAi, OpenAiConfig};
use savant_think::agent::backend::reasoning_api::{ReasoningApi, ReasoningApiConfig};
use savant_think::agent::run::action;
use savant_think::agent::run::{RunStatus, run};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn transient_errors_are_retried_then_succeed() {
    let tmp = Root::new("retry");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![
            Answer::Status(500, "overloaded".into()),
            Answer::Status(429, "slow down".into()),
            finish("after retries"),
        ],
    )
    .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "after retries"), "{result:?}");
    assert_eq!(fake.seen().len(), 3);
    let steps = trace(&root);
    assert_eq!(events(&steps, "reasoning_step")[0]["metadata"]["retries"], 2);
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("retry 1/2") && log.contains("retry 2/2"), "{log}");
}

#[tokio::test]
async fn a_retry_after_header_is_honoured() {
    let tmp = Root::new("retry-after");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::OpenAi, vec![Answer::RateLimited(1), finish("patience")]).await;
    let backend = OpenAi::new(OpenAiConfig { base_url: fake.url(), ..OpenAiConfig::default() }).unwrap();
    let tools = FakeTools::new(root.clone());
    let result = run("x", &options(&root), &backend, &tools, &CancellationToken::new()).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "patience"), "{result:?}");
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("retry 1/2 in 1000 ms"), "{log}");
}

#[tokio::test]
async fn retries_are_bounded_and_client_errors_are_not_retried() {
    let tmp = Root::new("no-retry");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start(Flavor::Ollama, vec![Answer::Status(404, r#"{"error":"model not found"}"#.into())])
            .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(fake.seen().len(), 1);
    assert!(result.final_text.contains("ollama pull phi3.5"), "{}", result.final_text);

    let tmp = Root::new("retries-exhausted");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start_with(Flavor::Ollama, vec![], Some(Box::new(|_| Answer::Status(503, "down".into()))))
            .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(fake.seen().len(), 3, "one try and two retries");
    assert_eq!(result.error.as_ref().unwrap()["details"]["status"], 503);
}

#[tokio::test]
async fn an_unreachable_backend_is_a_clear_error_naming_the_url() {
    let tmp = Root::new("refused");
    let root = tmp.path.clone();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let tools = FakeTools::new(root.clone());
    let result = run("x", &options(&root), &ollama(&url), &tools, &CancellationToken::new()).await;
    assert_eq!(result.status, RunStatus::Error);
    let error = result.error.unwrap();
    assert_eq!(error["error"], "BACKEND_UNREACHABLE");
    assert_eq!(error["details"]["url"], format!("{url}/api/chat"));
    assert!(result.final_text.contains(&format!("{url}/api/chat")), "{}", result.final_text);
    assert!(result.final_text.contains("ollama serve"), "{}", result.final_text);
    assert_eq!(events(&trace(&root), "reasoning_step").len(), 1);
    assert_eq!(session(&root)["status"], "error");
}

#[tokio::test]
async fn a_model_that_does_not_answer_in_time_is_a_timeout_after_retries() {
    let tmp = Root::new("timeout");
    let root = tmp.path.clone();
    let fake = FakeModel::start_with(Flavor::Ollama, vec![], Some(Box::new(|_| Answer::Hang))).await;
    let backend = Ollama::new(OllamaConfig {
        host: fake.url(),
        timeout: Duration::from_millis(200),
        ..OllamaConfig::default()
    })
    .unwrap();
    let tools = FakeTools::new(root.clone());
    let result = run("x", &options(&root), &backend, &tools, &CancellationToken::new()).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(result.error.as_ref().unwrap()["error"], "BACKEND_TIMEOUT");
    assert!(result.final_text.contains("may still be loading"), "{}", result.final_text);
    assert_eq!(fake.seen().len(), 3, "one try and two retries");
}

#[tokio::test]
async fn the_reasoning_api_retry_count_is_configurable() {
    let tmp = Root::new("reasoning-retries");
    let root = tmp.path.clone();
    let fake = FakeModel::start_with(
        Flavor::ReasoningApi,
        vec![],
        Some(Box::new(|_| Answer::Status(502, "bad".into()))),
    )
    .await;
    let backend = ReasoningApi::new(ReasoningApiConfig {
        url: fake.url(),
        retries: 0,
        ..ReasoningApiConfig::default()
    })
    .unwrap();
    let tools = FakeTools::new(root.clone());
    let result = run("x", &options(&root), &backend, &tools, &CancellationToken::new()).await;
    assert_eq!(result.status, RunStatus::Error);
    assert_eq!(fake.seen().len(), 1);
    assert!(result.final_text.contains("/agent_intent"), "{}", result.final_text);
}

#[tokio::test]
async fn a_model_that_gives_up_ends_the_run_with_its_reason() {
    let tmp = Root::new("gave-up");
    let root = tmp.path.clone();
    let fake = FakeModel::start(
        Flavor::Ollama,
        vec![Answer::Text(r#"{"action":"error","reasoning":"no tool reads PDFs"}"#.into())],
    )
    .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Error, "no tool reads PDFs"));
    assert_eq!(result.error.as_ref().unwrap()["error"], "MODEL_GAVE_UP");
    assert_eq!(session(&root)["final"], "no tool reads PDFs");
}

#[tokio::test]
async fn every_request_is_bounded_and_a_cut_off_answer_is_answer_cut_off_with_a_hint() {
    let tmp = Root::new("cut-off");
    let root = tmp.path.clone();
    // A model that fills `args` until it is cut off, twice.
    let long = format!(r#"{{"action":"tool","tool_name":"echo","args":{{"x":"{}"#, "y".repeat(5_000));
    let fake = FakeModel::start(
        Flavor::OpenAi,
        vec![openai_answer(&long, "length"), openai_answer(&long, "length"), finish("never")],
    )
    .await;
    let backend = OpenAi::new(OpenAiConfig { base_url: fake.url(), ..OpenAiConfig::default() }).unwrap();
    let mut o = options(&root);
    o.answer_tokens = 300;
    let tools = FakeTools::new(root.clone());
    let result = run("Echo.", &o, &backend, &tools, &CancellationToken::new()).await;
    assert_eq!(result.status, RunStatus::Error, "{result:?}");
    let error = result.error.as_ref().unwrap();
    assert_eq!(error["error"], "ANSWER_CUT_OFF");
    assert!(error["details"]["hint"].as_str().unwrap().contains("--answer-tokens"), "{error}");
    assert!(result.final_text.contains("cut off at the limit of 300 tokens"), "{}", result.final_text);
    let seen = fake.seen();
    assert_eq!(seen.len(), 2, "one correction round, no more");
    assert!(seen.iter().all(|s| s.body["max_tokens"] == 300), "every request carries the bound");
    // The correction round echoes only a bounded slice of the 5,000-character answer.
    let echoed = seen[1].body["messages"][2]["content"].as_str().unwrap();
    assert!(echoed.chars().count() < action::ECHO_CHARS + 100, "{} chars", echoed.len());
    assert!(echoed.contains("more characters not shown"));
    assert!(seen[1].body["messages"][3]["content"].as_str().unwrap().contains("cut off"));
}

#[tokio::test]
async fn ollama_gets_num_predict_and_a_cut_off_answer_is_corrected() {
    let tmp = Root::new("num-predict");
    let root = tmp.path.clone();
    let fake =
        FakeModel::start(Flavor::Ollama, vec![ollama_answer(r#"{"action":"fin"#, "length"), finish("ok")])
            .await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "ok"), "{result:?}");
    let seen = fake.seen();
    assert_eq!(seen[0].body["options"]["num_predict"], savant_think::agent::run::DEFAULT_ANSWER_TOKENS);
    let steps = events(&trace(&root), "reasoning_step").into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(steps[0]["metadata"]["cut_off"], true);
}

/// llama-cpp-python's answer to `response_format: json_schema`: HTTP 500.
fn refuses_json_schema() -> Answer {
    Answer::Status(
        500,
        r#"{"error":{"message":"response_format: Input should be 'text' or 'json_object'"}}"#.into(),
    )
}

#[tokio::test]
async fn a_server_that_refuses_json_schema_gets_json_object_then_plain_remembered_for_the_run() {
    let tmp = Root::new("negotiate");
    let root = tmp.path.clone();
    // Refuses json_schema (HTTP 500, as llama-cpp-python) and json_object (HTTP 400), answers plain.
    let responder: Responder = Box::new(|i, body| match body["response_format"]["type"].as_str() {
        Some("json_schema") => refuses_json_schema(),
        Some(_) => Answer::Status(400, r#"{"error":"unsupported response_format json_object"}"#.into()),
        None if i < 3 => tool("echo", json!({"n": i})),
        None => finish("negotiated"),
    });
    let fake = FakeModel::start_responder(Flavor::OpenAi, responder, None).await;
    let backend = OpenAi::new(OpenAiConfig { base_url: fake.url(), ..OpenAiConfig::default() }).unwrap();
    let tools = FakeTools::new(root.clone());
    let result = run("Echo.", &options(&root), &backend, &tools, &CancellationToken::new()).await;
    assert_eq!((result.status, result.final_text.as_str()), (RunStatus::Ok, "negotiated"), "{result:?}");
    let formats: Vec<Value> = fake.seen().iter().map(|s| s.body["response_format"]["type"].clone()).collect();
    // Each refused format is sent once, never retried as it was; later steps start plain.
    assert_eq!(formats, [json!("json_schema"), json!("json_object"), Value::Null, Value::Null]);
    assert_eq!(
        fake.seen()[1].body["response_format"]["schema"],
        fake.seen()[0].body["response_format"]["json_schema"]["schema"]
    );
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("refused response_format json_schema"), "{log}");
    let steps = events(&trace(&root), "reasoning_step").into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(steps[0]["metadata"]["structured_output"], "plain");
    // `plain` is not remembered across runs: the next run negotiates again.
    assert!(savant_think::agent::run::dialects::load(&root).is_empty());
}

#[tokio::test]
async fn the_negotiated_dialect_is_remembered_for_the_next_run_and_reported() {
    let tmp = Root::new("dialect-cache");
    let root = tmp.path.clone();
    let responder: Responder = Box::new(|_, body| match body["response_format"]["type"].as_str() {
        Some("json_schema") => refuses_json_schema(),
        _ => finish("done"),
    });
    let fake = FakeModel::start_responder(Flavor::OpenAi, responder, None).await;
    for _ in 0..2 {
        let backend = OpenAi::new(OpenAiConfig { base_url: fake.url(), ..OpenAiConfig::default() }).unwrap();
        let result =
            run("Go.", &options(&root), &backend, &FakeTools::new(root.clone()), &CancellationToken::new())
                .await;
        assert_eq!(result.status, RunStatus::Ok, "{result:?}");
        let session: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(".savant/session.json")).unwrap())
                .unwrap();
        assert_eq!(session["structured_output"], "json_object");
    }
    let formats: Vec<Value> = fake.seen().iter().map(|s| s.body["response_format"]["type"].clone()).collect();
    // The second run starts where the first ended: no refused request.
    assert_eq!(formats, [json!("json_schema"), json!("json_object"), json!("json_object")]);
    let cache = savant_think::agent::run::dialects::load(&root);
    assert_eq!(cache.values().collect::<Vec<_>>(), ["json_object"]);
    assert!(cache.keys().next().unwrap().starts_with("openai http://127.0.0.1:"), "{cache:?}");
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("structured output: json_object, remembered from an earlier run"), "{log}");
    let finished = events(&trace(&root), "run_finished").into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(
        finished.iter().map(|e| e["structured_output"].clone()).collect::<Vec<_>>(),
        ["json_object", "json_object"]
    );
}

#[tokio::test]
async fn the_prompt_and_answer_are_budgeted_inside_the_context_the_server_reports() {
    let tmp = Root::new("context");
    let root = tmp.path.clone();
    // A llama.cpp server with a 4k context; the `big` tool's output is ~5,000 tokens.
    let responder: Responder = Box::new(|i, _| if i == 0 { tool("big", json!({})) } else { finish("fits") });
    let props = json!({"default_generation_settings": {"n_ctx": 4096}});
    let fake = FakeModel::start_responder(Flavor::OpenAi, responder, Some(props)).await;
    let backend =
        OpenAi::new(OpenAiConfig { base_url: format!("{}/v1", fake.url()), ..OpenAiConfig::default() })
            .unwrap();
    let tools = FakeTools::new(root.clone());
    let result = run("Use big.", &options(&root), &backend, &tools, &CancellationToken::new()).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    let seen = fake.seen();
    assert_eq!(fake.probes(), ["/props"], "asked once per model");
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    // 4096 less a tenth as margin, less the answer (512) and the correction reserve (300).
    assert!(log.contains("context of 4096 tokens (the server): prompt budget 2875"), "{log}");
    let chat: Vec<_> = seen.iter().filter(|s| s.path.ends_with("/completions")).collect();
    let chars: usize = chat[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().len())
        .sum();
    assert!(chars.div_ceil(4) <= 2875, "the prompt after the big output is ~{} tokens", chars / 4);
    let steps = events(&trace(&root), "reasoning_step").into_iter().cloned().collect::<Vec<_>>();
    assert!(!steps[1]["metadata"]["trimmed"].as_array().unwrap().is_empty());

    // Ollama: the context from /api/show (`num_ctx` in parameters), and `num_ctx` sent back.
    let tmp = Root::new("context-ollama");
    let root = tmp.path.clone();
    let show = json!({"parameters": "temperature 0.1\nnum_ctx 2048", "model_info": {"llama.context_length": 131072}});
    let fake = FakeModel::start_responder(Flavor::Ollama, Box::new(|_, _| finish("ok")), Some(show)).await;
    let (result, _) = run_ollama(&fake, &root, &options(&root)).await;
    assert_eq!(result.status, RunStatus::Ok);
    assert_eq!(fake.probes(), ["/api/show"]);
    assert_eq!(fake.seen()[0].body["options"]["num_ctx"], 2048 - 204 - 812 + 812);

    // --context-tokens wins over the server.
    let tmp = Root::new("context-flag");
    let root = tmp.path.clone();
    let fake = FakeModel::start(Flavor::Ollama, vec![finish("ok")]).await;
    let mut o = options(&root);
    o.context_tokens = Some(3000);
    let (result, _) = run_ollama(&fake, &root, &o).await;
    assert_eq!(result.status, RunStatus::Ok);
    let log = std::fs::read_to_string(root.join("logs/agent_runtime.log")).unwrap();
    assert!(log.contains("context of 3000 tokens (--context-tokens)"), "{log}");
    assert!(fake.probes().is_empty());
}
