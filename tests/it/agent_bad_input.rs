//! `run` against backends that fail in the ways a real one does — one that
//! refuses every structured-output dialect, one that dies mid-run — ends
//! with a clear, stable error and the partial trace saved, never a hang.

use crate::agent_support::*;
use crate::common::Root;
use savant_think::agent::backend::openai::{OpenAi, OpenAiConfig};
use savant_think::agent::run::{RunOptions, RunStatus, run};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn options(root: &std::path::Path) -> RunOptions {
    let mut o = RunOptions::new(root);
    o.backoff = Duration::from_millis(1);
    o.max_steps = 5;
    o
}

fn session(root: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(".savant/session.json")).unwrap()).unwrap()
}

#[tokio::test]
async fn a_server_that_refuses_every_dialect_ends_with_a_clear_error() {
    let tmp = Root::new("every-dialect");
    let root = tmp.path.clone();
    let responder: Responder = Box::new(|_, body| match body["response_format"]["type"].as_str() {
        Some(kind) => Answer::Status(400, format!(r#"{{"error":"unsupported response_format {kind}"}}"#)),
        None => Answer::Status(400, r#"{"error":"this server needs a response_format"}"#.into()),
    });
    let fake = FakeModel::start_responder(Flavor::OpenAi, responder, None).await;
    let backend = OpenAi::new(OpenAiConfig { base_url: fake.url(), ..OpenAiConfig::default() }).unwrap();
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        run("Go.", &options(&root), &backend, &FakeTools::new(root.clone()), &CancellationToken::new()),
    )
    .await
    .expect("no hang");
    assert_eq!((result.status, result.stop_reason.as_str()), (RunStatus::Error, "error"), "{result:?}");
    let e = result.error.clone().unwrap();
    assert_eq!(e["error"], "BACKEND_HTTP_ERROR");
    assert!(
        e["details"]["hint"].as_str().unwrap().contains("refused every structured-output dialect"),
        "{e}"
    );
    // json_schema, json_object, then plain: each once (a 400 is not retried).
    assert_eq!(fake.seen().len(), 3);
    assert_eq!(session(&root)["status"], "error");
    assert_eq!(events(&trace(&root), "reasoning_step").len(), 1);
}

/// A one-shot OpenAI-compatible server: answers one request with `body`,
/// then closes its port, as a server that died after its first answer.
fn one_shot_server(body: String) -> (String, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        // Read the headers and the body (Content-Length) of one request.
        loop {
            let n = stream.read(&mut chunk).unwrap_or(0);
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                    })
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if buf.len() >= end + 4 + length {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes());
        // The listener drops here: the port is closed for every later request.
    });
    (url, handle)
}

#[tokio::test]
async fn a_server_that_dies_mid_run_ends_with_backend_unreachable_and_the_partial_trace() {
    let tmp = Root::new("dies");
    let root = tmp.path.clone();
    let action =
        json!({"action": "tool", "tool_name": "echo", "args": {"n": 1}, "final": "", "reasoning": "r"});
    let body = json!({"model": "fake", "choices": [{"index": 0, "finish_reason": "stop",
                      "message": {"role": "assistant", "content": action.to_string()}}]});
    let (url, server) = one_shot_server(body.to_string());
    let backend = OpenAi::new(OpenAiConfig { base_url: url, ..OpenAiConfig::default() }).unwrap();
    let tools = FakeTools::new(root.clone());
    let mut o = options(&root);
    // No `/props` probe: the one request the server answers is the first step's.
    o.context_tokens = Some(8192);
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        run("Go.", &o, &backend, &tools, &CancellationToken::new()),
    )
    .await
    .expect("no hang");
    server.join().unwrap();
    assert_eq!(result.status, RunStatus::Error, "{result:?}");
    let e = result.error.clone().unwrap();
    assert_eq!(e["error"], "BACKEND_UNREACHABLE", "{e}");
    assert!(e["details"]["hint"].as_str().unwrap().contains("is the server running?"), "{e}");
    // Step 1 was carried out and is kept; step 2 is the failure.
    assert_eq!(tools.calls().len(), 1);
    let steps = events(&trace(&root), "reasoning_step").into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(steps.len(), 2);
    assert_eq!((steps[0]["action"].as_str(), steps[1]["action"].as_str()), (Some("tool"), Some("error")));
    let s = session(&root);
    assert_eq!(s["status"], "error");
    assert_eq!(s["steps"].as_array().unwrap().len(), 2);
    assert_eq!(s["steps"][0]["output"], json!({"echo": {"n": 1}}));
    assert_eq!(events(&trace(&root), "run_finished")[0]["error"]["error"], "BACKEND_UNREACHABLE");
}
