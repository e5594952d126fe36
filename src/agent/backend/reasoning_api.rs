//! The Reasoning API (seed 002): `POST {REASONING_API_URL}/agent_intent`
//! with the step's context as JSON; the answer is the next action,
//! `{action, tool_name, args, final | finish, reasoning}`, bare or under
//! `intent`. The service decides by itself, so the request carries structured
//! context (goal, tools, memory, last output) as well as the prompt.

use super::http;
use super::{Backend, BackendError, ChatRequest, Reply};
use crate::agent::error::ErrorCode;
use serde_json::{Map, Value, json};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct ReasoningApiConfig {
    /// `REASONING_API_URL`, e.g. `http://127.0.0.1:9000`.
    pub url: String,
    /// `REASONING_API_TOKEN`: sent as a bearer token when set.
    pub token: Option<String>,
    /// `REASONING_API_TIMEOUT_MS` (default 5000).
    pub timeout: Duration,
    /// `REASONING_API_RETRIES` (default 2).
    pub retries: u32,
}

impl Default for ReasoningApiConfig {
    fn default() -> ReasoningApiConfig {
        ReasoningApiConfig {
            url: String::new(),
            token: None,
            timeout: Duration::from_millis(5000),
            retries: 2,
        }
    }
}

pub struct ReasoningApi {
    config: ReasoningApiConfig,
    url: String,
    client: http::Client,
}

impl ReasoningApi {
    pub fn new(config: ReasoningApiConfig) -> Result<ReasoningApi, String> {
        if config.url.trim().is_empty() {
            return Err("REASONING_API_URL is not set (e.g. REASONING_API_URL=http://127.0.0.1:9000)".into());
        }
        let url = http::join(&http::with_scheme(&config.url), "/agent_intent");
        Ok(ReasoningApi { client: http::Client::new(config.timeout), url, config })
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

/// The action inside an `/agent_intent` answer, in the loop's field names:
/// `{intent: {...}}` is unwrapped; a string `finish` becomes `final`.
pub fn normalize_intent(answer: &Value) -> Value {
    let intent = answer.get("intent").filter(|i| i.is_object()).unwrap_or(answer);
    let Some(fields) = intent.as_object() else {
        return intent.clone();
    };
    let mut out = Map::new();
    for (key, value) in fields {
        match key.as_str() {
            // Service bookkeeping, not part of the action.
            "model" | "usage" | "id" | "request_id" => {}
            "finish" => {
                if let Value::String(s) = value
                    && !fields.contains_key("final")
                {
                    out.insert("final".into(), json!(s));
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

impl Backend for ReasoningApi {
    fn name(&self) -> &str {
        "reasoning-api"
    }

    fn model(&self, _heavy: bool) -> String {
        "reasoning-api".into()
    }

    fn retries(&self) -> u32 {
        self.config.retries
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Reply, BackendError> {
        let mut body = request.context.clone();
        if let Some(map) = body.as_object_mut() {
            map.insert("messages".into(), json!(request.messages));
            map.insert("action_schema".into(), request.schema.clone());
        }
        let answer = http::post_json(&self.client, &self.url, self.config.token.as_deref(), &body)
            .await
            .map_err(|e| {
                let hint = match (e.code, e.status) {
                    (ErrorCode::BackendUnreachable, _) => {
                        "is the Reasoning API running? check REASONING_API_URL"
                    }
                    (ErrorCode::BackendTimeout, _) => {
                        "raise REASONING_API_TIMEOUT_MS, or check the service's load"
                    }
                    (_, Some(401 | 403)) => "check REASONING_API_TOKEN",
                    (_, Some(404)) => {
                        "check REASONING_API_URL: it must be the base that serves /agent_intent"
                    }
                    _ => "check the Reasoning API's log",
                };
                e.with_hint(hint)
            })?;
        let text = normalize_intent(&answer).to_string();
        Ok(Reply::from_answer(&answer, text, "reasoning-api", "/usage/prompt_tokens", "/usage/output_tokens"))
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_intent;
    use serde_json::json;

    #[test]
    fn intent_is_unwrapped_and_finish_becomes_final() {
        let a =
            normalize_intent(&json!({"intent": {"action": "finish", "finish": "done", "reasoning": "r"}}));
        assert_eq!(a, json!({"action": "finish", "final": "done", "reasoning": "r"}));
        let b = normalize_intent(&json!({"action": "tool", "tool_name": "t", "args": {}, "model": "m"}));
        assert_eq!(b, json!({"action": "tool", "tool_name": "t", "args": {}}));
        // A boolean `finish` flag next to `final` is dropped, `final` kept.
        let c = normalize_intent(&json!({"action": "finish", "finish": true, "final": "x"}));
        assert_eq!(c, json!({"action": "finish", "final": "x"}));
    }
}
