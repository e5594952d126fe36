//! Ollama: `POST {OLLAMA_HOST}/api/chat` with `format` = the action JSON
//! Schema (structured output), `stream: false`, temperature 0.1, the answer
//! bounded by `options.num_predict`. A small
//! model routes every step; the large one answers heavy steps only.

use super::http::{self, field_str};
use super::{Backend, BackendError, ChatRequest, Reply};
use crate::agent::error::ErrorCode;
use serde_json::json;
use std::time::Duration;

pub const DEFAULT_HOST: &str = "http://127.0.0.1:11434";
pub const DEFAULT_SMALL_MODEL: &str = "phi3.5";
pub const DEFAULT_LARGE_MODEL: &str = "llama3:latest";

/// Where Ollama is and which models to use.
#[derive(Clone, Debug)]
pub struct OllamaConfig {
    /// `OLLAMA_HOST`, with or without a scheme.
    pub host: String,
    /// `SLM_MODEL` (or `--model`): every step that is not heavy.
    pub small_model: String,
    /// `LLM_MODEL`: heavy steps only.
    pub large_model: String,
    /// Per request (local models can be slow on first load).
    pub timeout: Duration,
    pub temperature: f64,
}

impl Default for OllamaConfig {
    fn default() -> OllamaConfig {
        OllamaConfig {
            host: DEFAULT_HOST.into(),
            small_model: DEFAULT_SMALL_MODEL.into(),
            large_model: DEFAULT_LARGE_MODEL.into(),
            timeout: Duration::from_secs(120),
            temperature: 0.1,
        }
    }
}

pub struct Ollama {
    config: OllamaConfig,
    url: String,
    client: http::Client,
}

impl Ollama {
    pub fn new(config: OllamaConfig) -> Result<Ollama, String> {
        let url = http::join(&http::with_scheme(&config.host), "/api/chat");
        Ok(Ollama { client: http::Client::new(config.timeout), url, config })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// `e` with what to check.
    fn explain(&self, e: BackendError, model: &str) -> BackendError {
        let hint = match (e.code, e.status) {
            (ErrorCode::BackendUnreachable, _) => format!(
                "is Ollama running? start it with `ollama serve`, or set OLLAMA_HOST (now {})",
                self.config.host
            ),
            (ErrorCode::BackendTimeout, _) => format!(
                "the model `{model}` may still be loading; try again, or pick a smaller one with --model"
            ),
            (_, Some(404)) => format!("is the model pulled? `ollama pull {model}`"),
            _ => {
                "check the Ollama server's log (`journalctl -u ollama` or the `ollama serve` console)".into()
            }
        };
        e.with_hint(hint)
    }
}

impl Backend for Ollama {
    fn name(&self) -> &str {
        "ollama"
    }

    fn endpoint(&self) -> String {
        self.url.clone()
    }

    /// Ollama has one dialect: `format: <schema>`.
    fn dialect(&self) -> Option<&'static str> {
        Some("format")
    }

    fn model(&self, heavy: bool) -> String {
        if heavy { self.config.large_model.clone() } else { self.config.small_model.clone() }
    }

    /// `POST /api/show {model}`: `num_ctx` from its `parameters` when set,
    /// else the model's `<arch>.context_length`.
    async fn context_tokens(&self, heavy: bool) -> Option<usize> {
        let url = http::join(&http::with_scheme(&self.config.host), "/api/show");
        let answer =
            http::fetch_optional(&self.client, &url, Some(&json!({"model": self.model(heavy)}))).await?;
        context_from_show(&answer)
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Reply, BackendError> {
        let model = self.model(request.heavy);
        let mut body = json!({
            "model": model,
            "messages": request.messages,
            "format": request.schema,
            "stream": false,
            "options": { "temperature": self.config.temperature, "num_predict": request.max_tokens },
        });
        if let Some(n) = request.num_ctx {
            body["options"]["num_ctx"] = json!(n);
        }
        let answer = http::post_json(&self.client, &self.url, None, &body)
            .await
            .map_err(|e| self.explain(e, &model))?;
        let text = field_str(&answer, "/message/content", &self.url)?.to_owned();
        let mut reply = Reply::from_answer(&answer, text, &model, "/prompt_eval_count", "/eval_count");
        reply.cut_off = answer.get("done_reason").and_then(|r| r.as_str()) == Some("length");
        reply.structured = Some("format");
        Ok(reply)
    }
}

/// The context size in an `/api/show` answer.
pub fn context_from_show(answer: &serde_json::Value) -> Option<usize> {
    let from_parameters = answer.get("parameters").and_then(|p| p.as_str()).and_then(|p| {
        p.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse().ok()).flatten()
        })
    });
    from_parameters.or_else(|| {
        answer.get("model_info")?.as_object()?.iter().find_map(|(k, v)| {
            k.ends_with(".context_length").then(|| v.as_u64().map(|n| n as usize)).flatten()
        })
    })
}
