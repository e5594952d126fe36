//! Test doubles for `savant-think run`: a scripted fake model server on
//! 127.0.0.1 that speaks Ollama, OpenAI-compatible and Reasoning API, and a
//! fake `Tools` that records its calls and checks `.savant/session.json`
//! is valid JSON whenever a tool runs.
#![allow(dead_code)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::routing::post;
use savant_think::agent::{ToolInfo, ToolOutcome, Tools};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// The model's text, wrapped as the flavour's success body.
    Text(String),
    /// An HTTP error with this status and body.
    Status(u16, String),
    /// HTTP 429 with `Retry-After: N` seconds.
    RateLimited(u64),
    /// No answer for a minute (then HTTP 504): a model that is still thinking.
    Hang,
}

/// A valid action as the model's text.
pub fn action(action: &str, tool: &str, args: Value, final_text: &str, reasoning: &str) -> Answer {
    Answer::Text(
        json!({"action": action, "tool_name": tool, "args": args, "final": final_text, "reasoning": reasoning})
            .to_string(),
    )
}

pub fn tool(name: &str, args: Value) -> Answer {
    action("tool", name, args, "", &format!("calling {name}"))
}

pub fn finish(text: &str) -> Answer {
    action("finish", "", json!({}), text, "done")
}

pub fn reason(text: &str) -> Answer {
    action("reason", "", json!({}), "", text)
}

/// An OpenAI-compatible success body with this text and `finish_reason`
/// (`"length"`: the answer was cut off at `max_tokens`).
pub fn openai_answer(text: &str, finish_reason: &str) -> Answer {
    let body = json!({"model": "fake", "choices": [{"index": 0, "finish_reason": finish_reason,
                      "message": {"role": "assistant", "content": text}}],
                      "usage": {"prompt_tokens": 321, "completion_tokens": 17}});
    Answer::Status(200, body.to_string())
}

/// An Ollama success body with this text and `done_reason`.
pub fn ollama_answer(text: &str, done_reason: &str) -> Answer {
    let body = json!({"model": "fake", "message": {"role": "assistant", "content": text}, "done": true,
                      "done_reason": done_reason, "prompt_eval_count": 321, "eval_count": 17});
    Answer::Status(200, body.to_string())
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Flavor {
    Ollama,
    OpenAi,
    ReasoningApi,
}

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

type Fallback = Box<dyn Fn(usize) -> Answer + Send + Sync>;
/// Answers a request from its index and body (e.g. refuses a `response_format`).
pub type Responder = Box<dyn Fn(usize, &Value) -> Answer + Send + Sync>;

struct Inner {
    flavor: Flavor,
    script: Mutex<VecDeque<Answer>>,
    fallback: Option<Fallback>,
    responder: Option<Responder>,
    /// The body of `GET /props` (llama.cpp) and `POST /api/show` (Ollama); 404 when `None`.
    info: Option<Value>,
    seen: Mutex<Vec<Seen>>,
    /// The paths of `/props` and `/api/show` requests (not in `seen`).
    probes: Mutex<Vec<String>>,
}

/// A fake model server: answers from the script in order, then from the
/// fallback (given the request's index), else HTTP 500 "script exhausted".
pub struct FakeModel {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
    stop: CancellationToken,
}

impl FakeModel {
    pub async fn start(flavor: Flavor, script: Vec<Answer>) -> FakeModel {
        FakeModel::start_with(flavor, script, None).await
    }

    pub async fn start_with(flavor: Flavor, script: Vec<Answer>, fallback: Option<Fallback>) -> FakeModel {
        FakeModel::serve(Inner {
            flavor,
            script: Mutex::new(script.into()),
            fallback,
            responder: None,
            info: None,
            seen: Mutex::default(),
            probes: Mutex::default(),
        })
        .await
    }

    /// A fake that answers every request with `responder`, and serves `info`
    /// (when given) as llama.cpp's `GET /props` and Ollama's `POST /api/show`.
    pub async fn start_responder(flavor: Flavor, responder: Responder, info: Option<Value>) -> FakeModel {
        FakeModel::serve(Inner {
            flavor,
            script: Mutex::default(),
            fallback: None,
            responder: Some(responder),
            info,
            seen: Mutex::default(),
            probes: Mutex::default(),
        })
        .await
    }

    async fn serve(inner: Inner) -> FakeModel {
        let inner = Arc::new(inner);
        let app = Router::new()
            .route("/api/chat", post(handle))
            .route("/v1/chat/completions", post(handle))
            .route("/agent_intent", post(handle))
            .route("/props", axum::routing::get(info))
            .route("/api/show", post(info))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let s = stop.clone();
        tokio::spawn(async move {
            let _ =
                axum::serve(listener, app).with_graceful_shutdown(async move { s.cancelled().await }).await;
        });
        FakeModel { addr, inner, stop }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The paths of the context probes (`/props`, `/api/show`) received.
    pub fn probes(&self) -> Vec<String> {
        self.inner.probes.lock().unwrap().clone()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.seen.lock().unwrap().clone()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, HeaderMap, String) {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let index = {
        let mut seen = inner.seen.lock().unwrap();
        seen.push(Seen {
            path: uri.path().to_owned(),
            authorization: headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            body: body.clone(),
        });
        seen.len() - 1
    };
    let next = inner.script.lock().unwrap().pop_front();
    let answer = match (next, &inner.fallback, &inner.responder) {
        (_, _, Some(r)) => r(index, &body),
        (Some(a), _, _) => a,
        (None, Some(f), _) => f(index),
        (None, None, _) => Answer::Status(500, "script exhausted".into()),
    };
    let mut json_type = HeaderMap::new();
    json_type.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    match answer {
        Answer::RateLimited(secs) => {
            json_type.insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
            (StatusCode::TOO_MANY_REQUESTS, json_type, r#"{"error":"rate limited"}"#.into())
        }
        Answer::Hang => {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
            (StatusCode::GATEWAY_TIMEOUT, json_type, "hung".into())
        }
        Answer::Status(code, text) => (StatusCode::from_u16(code).unwrap(), json_type, text),
        Answer::Text(text) => {
            let model = body.get("model").cloned().unwrap_or(json!("fake"));
            let out = match inner.flavor {
                Flavor::Ollama => json!({"model": model, "message": {"role": "assistant", "content": text},
                                          "done": true, "prompt_eval_count": 321, "eval_count": 17}),
                Flavor::OpenAi => {
                    json!({"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                                          "usage": {"prompt_tokens": 321, "completion_tokens": 17}})
                }
                Flavor::ReasoningApi => serde_json::from_str(&text).unwrap_or(Value::String(text)),
            };
            (StatusCode::OK, json_type, out.to_string())
        }
    }
}

async fn info(State(inner): State<Arc<Inner>>, uri: Uri) -> (StatusCode, String) {
    inner.probes.lock().unwrap().push(uri.path().to_owned());
    match &inner.info {
        Some(v) => (StatusCode::OK, v.to_string()),
        None => (StatusCode::NOT_FOUND, "not found".into()),
    }
}

/// A port nothing listens on.
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Fake tools: `echo` returns its args, `big` a large output, `slow` takes a
/// minute, `fail` an error. Every call records its name and args, reads
/// `<root>/.savant/session.json` (which must parse), and records the step
/// the session was at; `cancel_on` cancels the run's token when that tool runs.
pub struct FakeTools {
    pub root: PathBuf,
    pub calls: Mutex<Vec<(String, Value)>>,
    pub session_steps: Mutex<Vec<u64>>,
    /// The estimated tokens (compact JSON characters / 4) of the session at each call.
    pub session_tokens: Mutex<Vec<usize>>,
    pub cancel_on: Option<(String, CancellationToken)>,
}

impl FakeTools {
    pub fn new(root: PathBuf) -> FakeTools {
        FakeTools {
            root,
            calls: Mutex::default(),
            session_steps: Mutex::default(),
            session_tokens: Mutex::default(),
            cancel_on: None,
        }
    }

    pub fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl Tools for FakeTools {
    async fn list(&self) -> Vec<ToolInfo> {
        ["echo", "big", "slow", "fail"]
            .iter()
            .map(|n| ToolInfo {
                name: (*n).into(),
                description: format!("The {n} tool."),
                input_schema: json!({"type": "object"}),
            })
            .collect()
    }

    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        self.calls.lock().unwrap().push((name.into(), args.clone()));
        let text =
            std::fs::read_to_string(self.root.join(".savant/session.json")).expect("session.json exists");
        let session: Value = serde_json::from_str(&text).expect("session.json is valid JSON");
        self.session_steps.lock().unwrap().push(session["state"]["step"].as_u64().unwrap());
        self.session_tokens.lock().unwrap().push(session.to_string().chars().count().div_ceil(4));
        if let Some((tool, token)) = &self.cancel_on
            && tool == name
        {
            token.cancel();
        }
        match name {
            "echo" => ToolOutcome { ok: true, output: json!({"echo": args}), duration_ms: 1 },
            "slow" => {
                tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                ToolOutcome { ok: true, output: json!({"slow": "finally"}), duration_ms: 60_000 }
            }
            "big" => ToolOutcome { ok: true, output: json!({"text": "word ".repeat(4_000)}), duration_ms: 1 },
            _ => ToolOutcome {
                ok: false,
                output: json!({"error": "TOOL_FAILED", "details": "boom"}),
                duration_ms: 1,
            },
        }
    }
}

/// The NDJSON events of `<root>/logs/agent_trace.log`.
pub fn trace(root: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(root.join("logs/agent_trace.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every trace line is JSON"))
        .collect()
}

pub fn events<'a>(trace: &'a [Value], kind: &str) -> Vec<&'a Value> {
    trace.iter().filter(|e| e["type"] == kind).collect()
}
