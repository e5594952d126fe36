//! Model backends for `savant-think run`: each turns a chat request into the
//! text of one action. The loop sees only the [`Backend`] trait, so tests
//! drive it with fakes and the CLI picks a backend at run time
//! ([`AnyBackend`]).
//!
//! - [`ollama`]: `POST {OLLAMA_HOST}/api/chat`, structured output via `format`.
//! - [`openai`]: `POST {OPENAI_BASE_URL}/v1/chat/completions`, `response_format`.
//! - [`reasoning_api`]: `POST {REASONING_API_URL}/agent_intent`.
//!
//! Transport helpers (client, error mapping) live in [`http`]; retries with
//! exponential backoff in [`retry`].

pub mod http;
pub mod ollama;
pub mod openai;
pub mod reasoning_api;
pub mod retry;

use serde::Serialize;
use serde_json::{Value, json};
use std::future::Future;

/// One chat message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: &'static str,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message { role: "system", content: content.into() }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message { role: "user", content: content.into() }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message { role: "assistant", content: content.into() }
    }
}

/// What the loop asks a backend for: one action.
#[derive(Clone, Debug)]
pub struct ChatRequest {
    /// The prompt as chat messages (system, user; plus the correction round).
    pub messages: Vec<Message>,
    /// The action JSON Schema (Ollama `format`, OpenAI `response_format`).
    pub schema: Value,
    /// Use the large model for this step (see docs/agent.md, "Heavy steps").
    pub heavy: bool,
    /// The step's context as structured data: the Reasoning API's request body.
    pub context: Value,
    /// The most tokens the answer may have: OpenAI `max_tokens`, Ollama
    /// `options.num_predict`. A model that reaches it is cut off
    /// ([`Reply::cut_off`]).
    pub max_tokens: u32,
    /// The context the request needs (prompt budget + answer): Ollama's
    /// `options.num_ctx`, so its default window does not cut the prompt.
    pub num_ctx: Option<u32>,
}

/// A backend's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The raw text of the answer; the loop parses it as an action.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// Token counts when the backend reports them.
    pub prompt_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The server stopped the answer at `max_tokens` (OpenAI
    /// `finish_reason: "length"`, Ollama `done_reason: "length"`).
    pub cut_off: bool,
    /// How the answer's shape was asked for (`json_schema`, `json_object`,
    /// `plain`, `format`), when the backend negotiates it.
    pub structured: Option<&'static str>,
    /// What the backend had to do to get this answer (a refused format and
    /// the fallback), for the run's log.
    pub notes: Vec<String>,
}

impl Reply {
    /// A reply from a JSON answer: `text`, the answer's `model` (else
    /// `default_model`), and the token counts at two JSON pointers.
    pub fn from_answer(
        answer: &Value,
        text: String,
        default_model: &str,
        prompt: &str,
        output: &str,
    ) -> Reply {
        Reply {
            text,
            model: answer.get("model").and_then(Value::as_str).unwrap_or(default_model).to_owned(),
            prompt_tokens: answer.pointer(prompt).and_then(Value::as_u64),
            output_tokens: answer.pointer(output).and_then(Value::as_u64),
            cut_off: false,
            structured: None,
            notes: Vec::new(),
        }
    }
}

/// A backend failure: which URL, what went wrong, what to check.
#[derive(Clone, Debug, PartialEq)]
pub struct BackendError {
    /// `BACKEND_UNREACHABLE`, `BACKEND_TIMEOUT`, `BACKEND_HTTP_ERROR` or `BACKEND_BAD_RESPONSE`.
    pub code: crate::agent::error::ErrorCode,
    pub url: String,
    /// The HTTP status, for `BACKEND_HTTP_ERROR`.
    pub status: Option<u16>,
    pub message: String,
    /// What the user should check, e.g. "is Ollama running? `ollama serve`".
    pub hint: String,
    /// Worth retrying: connection refused, timeouts, 5xx, 429.
    pub transient: bool,
    /// The server's `Retry-After` (seconds), when it sent one with a 429 or 503.
    pub retry_after: Option<std::time::Duration>,
}

impl BackendError {
    pub fn with_hint(mut self, hint: impl Into<String>) -> BackendError {
        self.hint = hint.into();
        self
    }

    pub fn to_json(&self) -> Value {
        json!({"error": self.code, "details": {"url": self.url, "status": self.status,
               "message": self.message, "hint": self.hint}})
    }
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.code, self.message, self.url)?;
        if !self.hint.is_empty() {
            write!(f, "; {}", self.hint)?;
        }
        Ok(())
    }
}

/// Something that answers a [`ChatRequest`] with one action's text.
pub trait Backend: Send + Sync {
    /// `ollama`, `openai`, `reasoning-api`, or a fake's name.
    fn name(&self) -> &str;
    /// The model a step would use (the large one when `heavy`).
    fn model(&self, heavy: bool) -> String;
    /// How many times a transient failure is retried (default 2).
    fn retries(&self) -> u32 {
        2
    }
    /// The model's context size in tokens, when the server says it (Ollama
    /// `/api/show`, llama.cpp `/props`); `None` when it does not.
    fn context_tokens(&self, _heavy: bool) -> impl Future<Output = Option<usize>> + Send {
        std::future::ready(None)
    }
    /// Where the backend sends requests (its URL), naming it in the
    /// dialect cache; default its name.
    fn endpoint(&self) -> String {
        self.name().to_owned()
    }
    /// The structured-output dialect in use (`json_schema`, `json_object`,
    /// `plain`, Ollama's `format`), when the backend has one.
    fn dialect(&self) -> Option<&'static str> {
        None
    }
    /// Starts from `dialect` (one an earlier run negotiated) instead of
    /// negotiating from the top; whether the backend took it.
    fn start_with_dialect(&self, _dialect: &str) -> bool {
        false
    }
    /// One request, no retries (the loop retries through [`retry::complete`]).
    fn complete(&self, request: &ChatRequest) -> impl Future<Output = Result<Reply, BackendError>> + Send;
}

/// Any of the real backends, chosen at run time.
pub enum AnyBackend {
    Ollama(ollama::Ollama),
    OpenAi(openai::OpenAi),
    ReasoningApi(reasoning_api::ReasoningApi),
}

impl Backend for AnyBackend {
    fn name(&self) -> &str {
        match self {
            AnyBackend::Ollama(b) => b.name(),
            AnyBackend::OpenAi(b) => b.name(),
            AnyBackend::ReasoningApi(b) => b.name(),
        }
    }

    fn model(&self, heavy: bool) -> String {
        match self {
            AnyBackend::Ollama(b) => b.model(heavy),
            AnyBackend::OpenAi(b) => b.model(heavy),
            AnyBackend::ReasoningApi(b) => b.model(heavy),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            AnyBackend::Ollama(b) => b.retries(),
            AnyBackend::OpenAi(b) => b.retries(),
            AnyBackend::ReasoningApi(b) => b.retries(),
        }
    }

    async fn context_tokens(&self, heavy: bool) -> Option<usize> {
        match self {
            AnyBackend::Ollama(b) => b.context_tokens(heavy).await,
            AnyBackend::OpenAi(b) => b.context_tokens(heavy).await,
            AnyBackend::ReasoningApi(b) => b.context_tokens(heavy).await,
        }
    }

    fn endpoint(&self) -> String {
        match self {
            AnyBackend::Ollama(b) => b.endpoint(),
            AnyBackend::OpenAi(b) => b.endpoint(),
            AnyBackend::ReasoningApi(b) => b.endpoint(),
        }
    }

    fn dialect(&self) -> Option<&'static str> {
        match self {
            AnyBackend::Ollama(b) => b.dialect(),
            AnyBackend::OpenAi(b) => b.dialect(),
            AnyBackend::ReasoningApi(b) => b.dialect(),
        }
    }

    fn start_with_dialect(&self, dialect: &str) -> bool {
        match self {
            AnyBackend::Ollama(b) => b.start_with_dialect(dialect),
            AnyBackend::OpenAi(b) => b.start_with_dialect(dialect),
            AnyBackend::ReasoningApi(b) => b.start_with_dialect(dialect),
        }
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Reply, BackendError> {
        match self {
            AnyBackend::Ollama(b) => b.complete(request).await,
            AnyBackend::OpenAi(b) => b.complete(request).await,
            AnyBackend::ReasoningApi(b) => b.complete(request).await,
        }
    }
}
