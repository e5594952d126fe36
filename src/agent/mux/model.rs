//! `model.generate`: a workflow step that asks the configured model for one
//! value of a given JSON Schema, so `exec` runs workflows that mix tool
//! calls and model calls headless.
//!
//! Input: `{prompt, schema?, system?, max_tokens?}`. The answer is asked
//! for as `{"result": <schema>}` (an object at the root suits every
//! structured-output dialect), made [`enforceable`](crate::agent::run::grammar::enforceable)
//! so the server's grammar holds the model to it; the output is the
//! `result`, checked against `schema` itself. A malformed answer gets one
//! correction round; a second is `MODEL_INVALID_OUTPUT`. Without `schema`
//! the result is a string, and a prose answer is that string. The step's
//! `success_schema` then validates the result like any tool's.

use super::failure;
use crate::agent::backend::{AnyBackend, ChatRequest, Message, Reply};
use crate::agent::run::action::{echo, escape_control_chars};
use crate::agent::run::grammar;
use serde_json::{Value, json};

/// The names the multiplexer routes here.
pub const NAMES: [&str; 2] = ["model.generate", "model_generate"];
/// The inputs it takes; `prompt` is required.
pub const INPUTS: [&str; 4] = crate::check::manifest::MODEL_GENERATE_INPUTS;
/// The answer bound when `max_tokens` is not given.
pub const DEFAULT_MAX_TOKENS: u32 = 512;

const SYSTEM: &str = "You answer with one JSON object {\"result\": …} whose result matches the schema given. \
No prose, no code fence.";

/// Calls the model once (twice with the correction round) for `args`.
pub async fn generate(backend: Option<&AnyBackend>, args: &Value) -> (bool, Value) {
    let Some(backend) = backend else {
        return (
            false,
            failure(
                "MODEL_NOT_CONFIGURED",
                json!({"tool": "model.generate", "message": "no model is configured for model.generate",
                       "hint": "give exec a backend: --backend ollama|openai (and --model), as for `run`"}),
            ),
        );
    };
    let input = match Input::parse(args) {
        Ok(i) => i,
        Err(message) => {
            return (false, failure("INVALID_INPUT", json!({"tool": "model.generate", "message": message})));
        }
    };
    let wrapped = json!({"type": "object", "properties": {"result": input.schema}, "required": ["result"],
                         "additionalProperties": false});
    let mut request = ChatRequest {
        messages: vec![
            Message::system(input.system.clone().unwrap_or_else(|| SYSTEM.to_owned())),
            Message::user(format!("{}\n\nThe schema of result:\n{}", input.prompt, input.schema)),
        ],
        schema: grammar::enforceable(&wrapped),
        heavy: false,
        context: json!({"tool": "model.generate", "prompt": input.prompt}),
        max_tokens: input.max_tokens,
        num_ctx: None,
    };
    let mut answers = Vec::new();
    loop {
        let reply = match ask(backend, &request).await {
            Ok(r) => r,
            Err(e) => return (false, e),
        };
        answers.push(json!({"raw": crate::agent::run::memory::cut(&reply.text, 2_000),
                            "response_format": reply.structured.unwrap_or("none"),
                            "prompt_tokens": reply.prompt_tokens, "output_tokens": reply.output_tokens}));
        match input.read(&reply.text) {
            Ok(value) => return (true, value),
            Err(problem) if answers.len() == 1 => {
                request.messages.push(Message::assistant(echo(&reply.text)));
                request.messages.push(Message::user(format!(
                    "Your answer could not be used: {problem}. Answer with JSON only: {{\"result\": …}} matching \
                     the schema."
                )));
            }
            Err(problem) => {
                let message = format!(
                    "the model's answer does not match the schema, even after a correction: {problem}"
                );
                return (
                    false,
                    failure(
                        "MODEL_INVALID_OUTPUT",
                        json!({"tool": "model.generate", "message": message, "answers": answers,
                               "hint": "use a more capable --model, or a simpler schema"}),
                    ),
                );
            }
        }
    }
}

async fn ask(backend: &AnyBackend, request: &ChatRequest) -> Result<Reply, Value> {
    let no_cancel = tokio_util::sync::CancellationToken::new();
    let backoff = crate::agent::run::DEFAULT_BACKOFF;
    match crate::agent::backend::retry::complete(backend, request, backoff, &no_cancel, |_| {}).await {
        Ok(reply) => Ok(reply),
        Err(crate::agent::backend::retry::Failure::Backend(e)) => Err(e.to_json()),
        Err(crate::agent::backend::retry::Failure::Canceled) => {
            Err(failure("CANCELED", json!({"tool": "model.generate", "message": "canceled"})))
        }
    }
}

struct Input {
    prompt: String,
    schema: Value,
    system: Option<String>,
    max_tokens: u32,
}

impl Input {
    fn parse(args: &Value) -> Result<Input, String> {
        let Value::Object(map) = args else { return Err("the input must be an object".into()) };
        if let Some(extra) = map.keys().find(|k| !INPUTS.contains(&k.as_str())) {
            return Err(format!("unknown input `{extra}`; model.generate takes {}", INPUTS.join(", ")));
        }
        let prompt = match map.get("prompt") {
            Some(Value::String(p)) if !p.trim().is_empty() => p.clone(),
            _ => return Err("`prompt` (a non-empty string) is required".into()),
        };
        let schema = match map.get("schema") {
            None | Some(Value::Null) => json!({"type": "string"}),
            Some(s @ Value::Object(_)) => {
                jsonschema::validator_for(s)
                    .map_err(|e| format!("`schema` is not a valid JSON Schema: {e}"))?;
                s.clone()
            }
            Some(other) => return Err(format!("`schema` must be a JSON Schema object, got {other}")),
        };
        let system = match map.get("system") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(format!("`system` must be a string, got {other}")),
        };
        let max_tokens = match map.get("max_tokens") {
            None | Some(Value::Null) => DEFAULT_MAX_TOKENS,
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("`max_tokens` must be a positive whole number, got {v}"))?,
        };
        Ok(Input { prompt, schema, system, max_tokens })
    }

    /// The result in `text`, checked against the schema; a prose answer is
    /// the result when the schema is a plain string.
    fn read(&self, text: &str) -> Result<Value, String> {
        let body = text.trim();
        let parsed = serde_json::from_str::<Value>(&escape_control_chars(body));
        let value = match parsed {
            Ok(Value::Object(mut map)) if map.contains_key("result") => {
                map.remove("result").unwrap_or_default()
            }
            _ if self.schema == json!({"type": "string"}) && !body.is_empty() => {
                match crate::agent::run::action::prose_final(body) {
                    Some(prose) => Value::String(prose),
                    None => return Err("the answer is not {\"result\": …}".into()),
                }
            }
            Ok(_) => return Err("the answer is not an object with a `result`".into()),
            Err(e) => return Err(format!("the answer is not valid JSON: {e}")),
        };
        let validator = jsonschema::validator_for(&self.schema).map_err(|e| e.to_string())?;
        let errors: Vec<String> =
            validator.iter_errors(&value).take(3).map(|e| format!("{}: {e}", e.instance_path())).collect();
        if errors.is_empty() { Ok(value) } else { Err(errors.join("; ")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(schema: Value) -> Input {
        Input::parse(&json!({"prompt": "p", "schema": schema})).unwrap()
    }

    #[test]
    fn inputs_are_checked() {
        for (args, needle) in [
            (json!({}), "`prompt`"),
            (json!({"prompt": " "}), "`prompt`"),
            (json!({"prompt": "p", "promt": 1}), "unknown input `promt`"),
            (json!({"prompt": "p", "schema": "string"}), "`schema` must be"),
            (json!({"prompt": "p", "schema": {"type": 3}}), "not a valid JSON Schema"),
            (json!({"prompt": "p", "max_tokens": 0}), "`max_tokens`"),
            (json!([1]), "an object"),
        ] {
            let e = Input::parse(&args).err().unwrap_or_default();
            assert!(e.contains(needle), "{args}: {e}");
        }
        assert_eq!(Input::parse(&json!({"prompt": "p"})).unwrap().schema, json!({"type": "string"}));
    }

    #[test]
    fn answers_are_read_and_checked_against_the_schema() {
        let obj =
            input(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}));
        assert_eq!(obj.read(r#"{"result": {"n": 3}}"#).unwrap(), json!({"n": 3}));
        assert!(obj.read(r#"{"result": {"n": "three"}}"#).unwrap_err().contains("/n"));
        assert!(obj.read("three").unwrap_err().contains("not valid JSON"));
        assert!(obj.read(r#"{"n": 3}"#).unwrap_err().contains("`result`"));
        let text = Input::parse(&json!({"prompt": "p"})).unwrap();
        assert_eq!(text.read(r#"{"result": "hi"}"#).unwrap(), json!("hi"));
        assert_eq!(text.read("Hello there.").unwrap(), json!("Hello there."), "prose is a string result");
    }

    #[tokio::test]
    async fn without_a_backend_the_call_says_how_to_configure_one() {
        let (ok, out) = generate(None, &json!({"prompt": "p"})).await;
        assert!(!ok);
        assert_eq!(out["error"], "MODEL_NOT_CONFIGURED");
    }
}
