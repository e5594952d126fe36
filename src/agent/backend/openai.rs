//! OpenAI-compatible servers (OpenAI, llama.cpp server, vLLM, LM Studio,
//! llama-cpp-python): `POST {OPENAI_BASE_URL}/v1/chat/completions`.
//!
//! Structured output is negotiated once per run ([`Format`]): first
//! `response_format: {type: json_schema, json_schema: {name, schema, strict:
//! false}}`; a server that refuses it (HTTP 400/422/500 naming
//! `response_format` or `json_schema`, as llama-cpp-python's 500 does) gets
//! `{type: json_object, schema}`; one that refuses that too gets no
//! `response_format` at all (the schema is in the prompt anyway). A refused
//! format is never sent again in the same run.
//!
//! `strict` is false because the action's `args` is a free-form object, which
//! OpenAI's strict mode cannot express (it demands `additionalProperties:
//! false` on every object); the loop parses and validates every answer anyway.

use super::http::{self, field_str};
use super::{Backend, BackendError, ChatRequest, Reply};
use crate::agent::error::ErrorCode;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How the answer's shape is asked for, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `response_format: {type: "json_schema", json_schema: {name, schema, strict: false}}`.
    JsonSchema,
    /// `response_format: {type: "json_object", schema}` (llama-cpp-python).
    JsonObject,
    /// No `response_format`: the schema is only in the prompt.
    Plain,
}

const FORMATS: [Format; 3] = [Format::JsonSchema, Format::JsonObject, Format::Plain];

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::JsonSchema => "json_schema",
            Format::JsonObject => "json_object",
            Format::Plain => "plain",
        }
    }

    /// The `response_format` for `schema`, or `None` (plain).
    pub fn response_format(self, schema: &serde_json::Value) -> Option<serde_json::Value> {
        match self {
            Format::JsonSchema => Some(json!({
                "type": "json_schema",
                "json_schema": { "name": "agent_action", "schema": schema, "strict": false },
            })),
            Format::JsonObject => Some(json!({ "type": "json_object", "schema": schema })),
            Format::Plain => None,
        }
    }
}

/// Whether a failed request was the server refusing the `response_format`
/// (not worth retrying as it was): HTTP 400, 422 or 500 whose body names it.
pub fn refuses_format(e: &BackendError) -> bool {
    let message = e.message.to_lowercase();
    matches!(e.status, Some(400 | 422 | 500))
        && ["response_format", "json_schema", "json_object"].iter().any(|w| message.contains(w))
}

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// `OPENAI_BASE_URL`, with or without the trailing `/v1`.
    pub base_url: String,
    /// `OPENAI_API_KEY`; optional for local servers.
    pub api_key: Option<String>,
    /// `--model` or `OPENAI_MODEL`.
    pub model: String,
    /// `LLM_MODEL` for heavy steps, when set; else `model`.
    pub large_model: Option<String>,
    pub timeout: Duration,
    pub temperature: f64,
}

impl Default for OpenAiConfig {
    fn default() -> OpenAiConfig {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.into(),
            api_key: None,
            model: DEFAULT_MODEL.into(),
            large_model: None,
            timeout: Duration::from_secs(120),
            temperature: 0.1,
        }
    }
}

pub struct OpenAi {
    config: OpenAiConfig,
    url: String,
    client: http::Client,
    /// The index in [`FORMATS`] of the format in use: only ever moves on.
    format: AtomicUsize,
}

/// `{base}/v1/chat/completions`, whether or not `base` already ends in `/v1`.
pub fn completions_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") {
        http::join(base, "chat/completions")
    } else {
        http::join(base, "v1/chat/completions")
    }
}

impl OpenAi {
    pub fn new(config: OpenAiConfig) -> Result<OpenAi, String> {
        let url = completions_url(&http::with_scheme(&config.base_url));
        Ok(OpenAi { client: http::Client::new(config.timeout), url, config, format: AtomicUsize::new(0) })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The structured-output format in use (it only falls back, never returns).
    pub fn format(&self) -> Format {
        FORMATS[self.format.load(Ordering::Relaxed).min(FORMATS.len() - 1)]
    }

    /// `e` with what to check.
    fn explain(&self, e: BackendError) -> BackendError {
        let hint = match (e.code, e.status) {
            (ErrorCode::BackendUnreachable, _) => {
                "is the server running? check OPENAI_BASE_URL (a llama.cpp server, vLLM or LM Studio listens locally)"
                    .into()
            }
            (_, Some(400 | 413)) if e.message.to_lowercase().contains("context") => {
                "the request does not fit the model's context: pass --context-tokens with the server's \
                 context size (llama-cpp-python --n_ctx), or lower --budget-tokens / --answer-tokens"
                    .into()
            }
            (_, Some(401 | 403)) => "check OPENAI_API_KEY".into(),
            (_, Some(404)) => format!(
                "check OPENAI_BASE_URL and that the server serves the model `{}` (--model or OPENAI_MODEL)",
                self.config.model
            ),
            (_, Some(429)) => "rate limited: wait, or lower the request rate".into(),
            (ErrorCode::BackendTimeout, _) => "the server did not answer in time; is the model loaded?".into(),
            (_, Some(400 | 422 | 500)) if self.format() == Format::Plain => {
                "the server refused every structured-output dialect (response_format json_schema, json_object) \
                 and the request without one: check the server's log, or another server (llama.cpp's, vLLM, \
                 Ollama)"
                    .into()
            }
            _ => "check the server's log".into(),
        };
        e.with_hint(hint)
    }
}

impl Backend for OpenAi {
    fn name(&self) -> &str {
        "openai"
    }

    fn model(&self, heavy: bool) -> String {
        match (&self.config.large_model, heavy) {
            (Some(large), true) => large.clone(),
            _ => self.config.model.clone(),
        }
    }

    fn endpoint(&self) -> String {
        self.url.clone()
    }

    fn dialect(&self) -> Option<&'static str> {
        Some(self.format().as_str())
    }

    /// Only the two structured dialects are taken: `plain` is negotiated
    /// again each run (the server may have learnt better).
    fn start_with_dialect(&self, dialect: &str) -> bool {
        let Some(index) = FORMATS.iter().position(|f| f.as_str() == dialect && *f != Format::Plain) else {
            return false;
        };
        self.format.fetch_max(index, Ordering::Relaxed);
        true
    }

    /// llama.cpp's `GET /props`: `default_generation_settings.n_ctx` (or a
    /// top-level `n_ctx`). Other servers do not say; `None`.
    async fn context_tokens(&self, _heavy: bool) -> Option<usize> {
        let base = http::with_scheme(&self.config.base_url);
        let base = base.trim_end_matches('/');
        let url = http::join(base.strip_suffix("/v1").unwrap_or(base), "/props");
        let props = http::fetch_optional(&self.client, &url, None).await?;
        props
            .pointer("/default_generation_settings/n_ctx")
            .or_else(|| props.get("n_ctx"))
            .and_then(serde_json::Value::as_u64)
            .map(|n| n as usize)
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Reply, BackendError> {
        let model = self.model(request.heavy);
        let mut notes = Vec::new();
        let (answer, format) = loop {
            let format = self.format();
            let mut body = json!({
                "model": model,
                "messages": request.messages,
                "temperature": self.config.temperature,
                "max_tokens": request.max_tokens,
            });
            if let Some(rf) = format.response_format(&request.schema) {
                body["response_format"] = rf;
            }
            match http::post_json(&self.client, &self.url, self.config.api_key.as_deref(), &body).await {
                Ok(answer) => break (answer, format),
                Err(e) if format != Format::Plain && refuses_format(&e) => {
                    let index = FORMATS.iter().position(|f| *f == format).unwrap_or(0);
                    let next = FORMATS[index + 1];
                    // Another request of the run may have moved on already: only ever forward.
                    self.format.fetch_max(index + 1, Ordering::Relaxed);
                    notes.push(format!(
                        "the server refused response_format {} ({}); using {} for the rest of the run",
                        format.as_str(),
                        http::snippet(&e.message),
                        next.as_str()
                    ));
                }
                Err(e) => return Err(self.explain(e)),
            }
        };
        let text = field_str(&answer, "/choices/0/message/content", &self.url)?.to_owned();
        let mut reply =
            Reply::from_answer(&answer, text, &model, "/usage/prompt_tokens", "/usage/completion_tokens");
        reply.cut_off = answer.pointer("/choices/0/finish_reason").and_then(|r| r.as_str()) == Some("length");
        reply.structured = Some(format.as_str());
        reply.notes = notes;
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::completions_url;

    #[test]
    fn base_url_with_or_without_v1() {
        assert_eq!(completions_url("http://h:8080"), "http://h:8080/v1/chat/completions");
        assert_eq!(completions_url("http://h:8080/"), "http://h:8080/v1/chat/completions");
        assert_eq!(completions_url("http://h:8080/v1"), "http://h:8080/v1/chat/completions");
        assert_eq!(completions_url("http://h:8080/v1/"), "http://h:8080/v1/chat/completions");
    }
}
