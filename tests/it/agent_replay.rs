//! Replays of a real small model: the answers and errors SmolLM2-135M gave
//! through llama-cpp-python 0.3.36 and llama.cpp's `llama-server`, recorded
//! in `../shared/agent-replay/` (see its README), served by a fake
//! OpenAI-compatible server on 127.0.0.1 to the real loop and the real
//! multiplexer. Each test pins how the loop handles one real failure.
//!
//! The records live beside the clone (`$CARGO_MANIFEST_DIR/../shared`);
//! when they are absent every test says so and passes.

use crate::agent_support::*;
use crate::common::Root;
use savant_think::agent::backend::openai::{OpenAi, OpenAiConfig};
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::agent::run::{RunOptions, RunResult, RunStatus, action, run};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Every record, in file order, or `None` (with a note) when absent.
fn records() -> Option<Vec<Value>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/agent-replay/smollm2_real_answers.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        crate::support::skip::skip(
            "the replay tests",
            &format!("{} is absent (../shared/agent-replay beside the crate)", path.display()),
            None,
        );
        return None;
    };
    Some(text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect())
}

/// A record as the server sent it: the completion (with its real
/// `finish_reason` and `usage`) or the error status and body.
fn served(record: &Value) -> Answer {
    let status = record["http_status"].as_u64().unwrap() as u16;
    if status != 200 {
        return Answer::Status(status, record["error_body"].to_string());
    }
    let body = json!({"model": "smollm2", "choices": [{"index": 0, "finish_reason": record["finish_reason"],
                      "message": {"role": "assistant", "content": record["content"]}}], "usage": record["usage"]});
    Answer::Status(200, body.to_string())
}

/// Runs `goal` against a fake that serves `records[i]` for the i-th chat
/// request, with the real multiplexer over an empty project.
async fn replay(name: &str, answers: Vec<Answer>) -> (RunResult, FakeModel, Root) {
    let tmp = Root::new(name);
    let fake = FakeModel::start(Flavor::OpenAi, answers).await;
    let result = run_against(&fake, &tmp).await;
    (result, fake, tmp)
}

async fn run_against(fake: &FakeModel, tmp: &Root) -> RunResult {
    let backend = OpenAi::new(OpenAiConfig {
        base_url: fake.url(),
        model: "smollm2".into(),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let engine = Arc::new(savant_think::runtime::Engine::new(&tmp.path).unwrap());
    let mux = Multiplexer::new(engine, MuxOptions::default());
    let mut o = RunOptions::new(&tmp.path);
    o.backoff = Duration::from_millis(1);
    o.max_steps = 4;
    run("List the available workflows", &o, &backend, &mux, &CancellationToken::new()).await
}

#[test]
fn every_recorded_answer_parses_or_fails_as_pinned() {
    let Some(records) = records() else { return };
    let mut outcome = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(text) = r["content"].as_str() {
            outcome.push((i, action::parse(text).is_ok()));
        }
    }
    let parsed: Vec<usize> = outcome.iter().filter(|(_, ok)| *ok).map(|(i, _)| *i).collect();
    // 0, 1, 4, 5, 18, 19 carry raw control characters inside strings: they
    // parse because those are escaped. Cut-off answers, prose and wrong
    // fields (27) do not.
    assert_eq!(parsed, [0, 1, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 18, 19]);
}

#[tokio::test]
async fn llama_cpp_python_refuses_json_schema_and_the_loop_falls_back_to_json_object() {
    let Some(records) = records() else { return };
    let refused = served(&records[36]);
    // The goal asks for a list: the answer comes from the tool's (empty) output.
    let responder: Responder = Box::new(move |i, body| match body["response_format"]["type"].as_str() {
        Some("json_schema") => refused.clone(),
        _ if i == 1 => tool("think_workflows_list", json!({})),
        _ => finish("There are no workflows in this project."),
    });
    let tmp = Root::new("replay-500");
    let fake = FakeModel::start_responder(Flavor::OpenAi, responder, None).await;
    let result = run_against(&fake, &tmp).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    let formats: Vec<Value> = fake.seen().iter().map(|s| s.body["response_format"]["type"].clone()).collect();
    // The 500 is not retried as it was: once json_schema, then json_object.
    assert_eq!(formats, [json!("json_schema"), json!("json_object"), json!("json_object")]);
    assert!(fake.seen()[1].body["response_format"]["schema"]["anyOf"].is_array());
}

#[tokio::test]
async fn an_answer_cut_off_at_the_limit_is_answer_cut_off_and_the_correction_fits() {
    let Some(records) = records() else { return };
    // llama-server: 817 tokens of schema copies, cut off; then the same from llama-cpp-python.
    let (result, fake, _tmp) = replay("replay-cut", vec![served(&records[28]), served(&records[2])]).await;
    assert_eq!(result.status, RunStatus::Error, "{result:?}");
    assert_eq!(result.error.as_ref().unwrap()["error"], "ANSWER_CUT_OFF");
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    // At least --answer-tokens (512): more when the step schema bounds its longest answer.
    assert!(seen.iter().all(|s| s.body["max_tokens"].as_u64().unwrap() >= 512));
    assert_eq!(seen[0].body["max_tokens"], seen[1].body["max_tokens"], "the correction has the same limit");
    // The real correction round re-sent the whole ~3,000-character answer (HTTP 400 at 4,172 of
    // 4,096 tokens); the echo is now bounded.
    let echoed = seen[1].body["messages"][2]["content"].as_str().unwrap();
    assert!(echoed.chars().count() < action::ECHO_CHARS + 100);
}

#[tokio::test]
async fn a_context_length_400_is_a_clear_error_that_is_not_retried() {
    let Some(records) = records() else { return };
    for (name, first, error) in [("replay-ctx-py", 2, 3), ("replay-ctx-server", 28, 29)] {
        let (result, fake, _tmp) = replay(name, vec![served(&records[first]), served(&records[error])]).await;
        assert_eq!(result.status, RunStatus::Error, "{result:?}");
        let e = result.error.as_ref().unwrap();
        assert_eq!((&e["error"], &e["details"]["status"]), (&json!("BACKEND_HTTP_ERROR"), &json!(400)));
        assert!(e["details"]["hint"].as_str().unwrap().contains("--context-tokens"), "{e}");
        assert_eq!(fake.seen().len(), 2, "a 400 is not retried");
    }
}

#[tokio::test]
async fn an_invented_dashed_name_resolves_and_junk_args_come_back_as_invalid_input() {
    let Some(records) = records() else { return };
    // `think-plan` with args copied from a tool schema, raw newlines inside strings.
    let answers = vec![
        served(&records[0]),
        served(&records[9]),
        tool("think_workflows_list", json!({})),
        finish("No workflows."),
    ];
    let (result, _fake, _tmp) = replay("replay-junk", answers).await;
    assert_eq!(result.status, RunStatus::Ok, "{result:?}");
    let t = &result.transcript;
    assert_eq!((t[0].tool_name.as_str(), t[0].ok), ("think_plan", Some(false)));
    assert_eq!(t[0].output["error"], "INVALID_INPUT", "{}", t[0].output);
    assert_eq!((t[1].tool_name.as_str(), t[1].ok), ("think_workflows_list", Some(false)));
    assert_eq!(t[1].output["error"], "INVALID_INPUT", "{}", t[1].output);
}

#[tokio::test]
async fn an_unknown_tool_gets_one_more_chance() {
    let Some(records) = records() else { return };
    // `think-plan-tool` twice: returned to the model once, then the end.
    let (result, fake, _tmp) = replay("replay-unknown", vec![served(&records[4]), served(&records[5])]).await;
    assert_eq!(result.status, RunStatus::Error, "{result:?}");
    assert_eq!(result.error.as_ref().unwrap()["error"], "UNKNOWN_TOOL");
    assert_eq!(result.steps, 2);
    let second = fake.seen()[1].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(second.contains("unknown tool `think-plan-tool`"), "the model read the refusal");
}

#[tokio::test]
async fn prose_instead_of_json_gets_one_correction_then_invalid_action() {
    let Some(records) = records() else { return };
    let (result, fake, _tmp) = replay("replay-prose", vec![served(&records[20]), served(&records[21])]).await;
    assert_eq!(result.status, RunStatus::Error, "{result:?}");
    assert_eq!(result.error.as_ref().unwrap()["error"], "INVALID_ACTION");
    assert_eq!(fake.seen().len(), 2);
}
