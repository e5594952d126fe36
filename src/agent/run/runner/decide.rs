//! Turning the model's answer into a [`Decision`]: the request with its
//! retries, the strict parse and its one correction round, the tool name's
//! validation and stuck detection.

use super::request::section_sizes;
use super::{Decision, End, Runner, Verdict, action};
use crate::agent::ToolInfo;
use crate::agent::Tools;
use crate::agent::backend::retry::{self, Failure};
use crate::agent::backend::{Backend, ChatRequest, Message, Reply};
use crate::agent::error::ErrorCode;
use crate::agent::run::action::Action;
use crate::agent::run::memory::{ANSWER_CHARS, ModelAnswer, cut};
use crate::agent::run::prompt::{Prompt, estimate_tokens};
use serde_json::{Value, json};

impl<B: Backend, T: Tools> Runner<'_, B, T> {
    /// Asks for the action and parses it, with exactly one correction round
    /// when the answer is malformed; a second malformed answer becomes an
    /// `INVALID_ACTION` error action. `Err` when the backend fails or the run
    /// is canceled.
    pub(super) async fn decide(
        &mut self,
        request: &ChatRequest,
        built: &Prompt,
        heavy: bool,
    ) -> Result<Decision, End> {
        let mut retries = 0;
        let first = self.ask(request, &mut retries, "action").await?;
        let mut prompt_tokens = first.prompt_tokens.unwrap_or(built.tokens as u64);
        let mut output_tokens = first.output_tokens.unwrap_or(estimate_tokens(&first.text) as u64);
        let mut metadata = json!({
            "prompt_hash": built.hash, "prompt_estimated_tokens": built.tokens,
            "prompt_sections": section_sizes(built), "trimmed": built.trimmed, "heavy": heavy, "corrected": false,
        });
        if let Some(format) = first.structured {
            metadata["structured_output"] = json!(format);
        }
        let max = self.options.answer_tokens;
        let cut_note = |cut: bool, e: String| {
            if cut { format!("the answer was cut off at the limit of {max} tokens ({e})") } else { e }
        };
        let (action, verdict) = match action::parse(&first.text) {
            Ok(a) => (a, Verdict::AsIs),
            Err(e) => {
                let e = cut_note(first.cut_off, e);
                self.telemetry
                    .log(&format!("step {}: malformed answer ({e}); one correction round", self.step));
                metadata["corrected"] = json!(true);
                metadata["parse_error"] = json!(e);
                if first.cut_off {
                    metadata["cut_off"] = json!(true);
                }
                let correction = action::correction(&e);
                // The bad answer is echoed only in part: the correction round must fit the context.
                let echoed = action::echo(&first.text);
                let again_tokens = built.tokens + estimate_tokens(&echoed) + estimate_tokens(&correction);
                let mut again = request.clone();
                again.messages.push(Message::assistant(echoed));
                again.messages.push(Message::user(correction));
                let second = self.ask(&again, &mut retries, "correction").await?;
                prompt_tokens += second.prompt_tokens.unwrap_or(again_tokens as u64);
                output_tokens += second.output_tokens.unwrap_or(estimate_tokens(&second.text) as u64);
                after_correction(&second.text, second.cut_off, max, &mut metadata)
            }
        };
        metadata["retries"] = json!(retries);
        Ok(Decision { action, verdict, model: first.model, prompt_tokens, output_tokens, metadata })
    }

    /// Asks the backend, with retries; an `End` on cancel or failure. The
    /// answer (or the failure) is recorded for the step's trace as `purpose`.
    pub(super) async fn ask(
        &mut self,
        request: &ChatRequest,
        retries: &mut u32,
        purpose: &str,
    ) -> Result<Reply, End> {
        let started = std::time::Instant::now();
        let result = self.ask_once(request, retries).await;
        let schema = request.schema.to_string();
        let mut answer = ModelAnswer {
            purpose: purpose.into(),
            schema_hash: crate::runtime::workflow::sha256_hex(schema.as_bytes()),
            schema_bytes: schema.len(),
            duration_ms: started.elapsed().as_millis() as u64,
            response_format: "none".into(),
            ..ModelAnswer::default()
        };
        if let Ok(reply) = &result {
            answer.raw = cut(&reply.text, ANSWER_CHARS);
            answer.response_format = reply.structured.unwrap_or("none").into();
            answer.prompt_tokens = reply.prompt_tokens;
            answer.output_tokens = reply.output_tokens;
            answer.cut_off = reply.cut_off;
            self.telemetry.log(&format!(
                "step {}: {purpose} answer via {} in {} ms ({} → {} tokens): {}",
                self.step,
                answer.response_format,
                answer.duration_ms,
                answer.prompt_tokens.map_or("?".into(), |n| n.to_string()),
                answer.output_tokens.map_or("?".into(), |n| n.to_string()),
                cut(&reply.text, 300)
            ));
        }
        self.answers.push(answer);
        result
    }

    async fn ask_once(&mut self, request: &ChatRequest, retries: &mut u32) -> Result<Reply, End> {
        let (step, max) = (self.step, self.backend.retries());
        let telemetry = &mut self.telemetry;
        let result = retry::complete(self.backend, request, self.options.backoff, self.cancel, |note| {
            *retries += 1;
            telemetry.log(&format!(
                "step {step}: backend error, retry {}/{max} in {} ms: {}",
                note.attempt,
                note.delay.as_millis(),
                note.error
            ));
        })
        .await;
        match result {
            Ok(reply) => {
                for note in &reply.notes {
                    self.telemetry.log(&format!("step {step}: {note}"));
                }
                Ok(reply)
            }
            Err(Failure::Canceled) => Err(End::canceled()),
            Err(Failure::Backend(e)) => {
                let message = format!("the {} backend failed: {e}", self.backend.name());
                let mut end = End::error(e.code, message, Value::Null);
                end.error = Some(e.to_json());
                Err(end)
            }
        }
    }

    /// Resolves the tool name (`-`, `.` and `_` alike). An unknown or refused
    /// tool is, with `second_chance`, the step's tool output (an error the
    /// model reads next step); without it (a second one in a row, or a forced
    /// tool), an `error` action with the reason that ends the run.
    pub(super) async fn validate(
        &self,
        mut d: Decision,
        offered: &[ToolInfo],
        second_chance: bool,
    ) -> Decision {
        use crate::agent::normalize_tool_name as normal;
        let Action::Tool { tool, .. } = &mut d.action else { return d };
        let wanted = tool.clone();
        let same = |a: &str, b: &str| a == b || normal(a) == normal(b);
        if let Some(t) = offered.iter().find(|t| same(&t.name, &wanted)) {
            *tool = t.name.clone();
            return d;
        }
        let message = match self.options.policy.permits(&wanted) {
            Err(reason) if self.tools.list().await.iter().any(|t| same(&t.name, &wanted)) => {
                format!("the tool `{wanted}` may not be called: {reason}")
            }
            _ if offered.is_empty() => format!("unknown tool `{wanted}`: no tool is available"),
            _ => {
                let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
                let help = crate::diagnostic::suggest(&wanted, names.iter().copied())
                    .map(|h| format!("; {h}"))
                    .unwrap_or_default();
                let shown: Vec<&str> = names.iter().take(20).copied().collect();
                let more =
                    if names.len() > 20 { format!(" and {} more", names.len() - 20) } else { String::new() };
                format!("unknown tool `{wanted}`{help} (the tools are {}{more})", shown.join(", "))
            }
        };
        d.metadata["requested_tool"] = json!(wanted);
        if second_chance {
            d.metadata["unknown_tool"] = json!(true);
            d.verdict = Verdict::Refused(json!({"error": ErrorCode::UnknownTool, "details": {"tool": wanted,
                "message": message, "hint": "call one of the tools listed, by its exact name"}}));
            return d;
        }
        let message = if self.unknown_streak > 0 {
            format!("{message}; the second unknown tool in a row")
        } else {
            message
        };
        d.action = Action::Error { message: message.clone(), reasoning: message, tool: Some(wanted) };
        d.verdict = Verdict::Stopped { code: ErrorCode::UnknownTool, details: Value::Null, stuck: false };
        d
    }

    /// A tool call identical to the one of the step before gets one narrowed
    /// re-ask in the same step (a second constrained call): after a call
    /// that worked, the answer from its output; after one that failed, the
    /// other tools, finish or error. An
    /// answer outside that (a server that ignores the schema) keeps the
    /// repeat, which stuck detection then counts. A prose answer is the
    /// final answer when only a final answer was allowed. After a call that
    /// worked, the re-ask is the short answer request
    /// ([`Runner::answer_request`]): the goal and that output alone, one
    /// JSON string asked for (a list goal: the listed ids).
    pub(super) async fn steer_repeat(
        &mut self,
        mut d: Decision,
        offered: &[ToolInfo],
        request: &ChatRequest,
    ) -> Result<Decision, End> {
        let Action::Tool { tool, .. } = &d.action else { return Ok(d) };
        let repeat = d.verdict == Verdict::AsIs && self.fingerprints.last() == Some(&d.action.fingerprint());
        if !repeat {
            return Ok(d);
        }
        let tool = tool.clone();
        let last_ok = self.transcript.last().and_then(|r| r.ok) == Some(true);
        // After a call that worked, its output holds the answer: the short answer request.
        let steered = if last_ok {
            self.ask_answer(&mut d, request, "narrowed").await?.filter(|a| matches!(a, Action::Finish { .. }))
        } else {
            let others: Vec<ToolInfo> = offered.iter().filter(|t| t.name != tool).cloned().collect();
            self.narrowed(&mut d, &others, request, &tool).await?
        };
        d.metadata["narrowed"] = json!({"repeat_of": tool, "last_ok": last_ok,
            "outcome": steered.as_ref().map_or("ignored", |a| a.kind().as_str())});
        self.telemetry.log(&format!(
            "step {}: the same call of {tool} as the step before; asked again with {} → {}",
            self.step,
            if last_ok { "the answer from its output only" } else { "the other tools, finish or error" },
            steered.as_ref().map_or("ignored (the repeat stands)", |a| a.kind().as_str())
        ));
        if let Some(a) = steered {
            d.action = a;
        }
        Ok(d)
    }

    /// The narrowed re-ask of a repeated call of `tool` that failed:
    /// `others` (the tools but the repeated one), a finish or an error;
    /// `None` when the answer is none of those.
    async fn narrowed(
        &mut self,
        d: &mut Decision,
        others: &[ToolInfo],
        request: &ChatRequest,
        tool: &str,
    ) -> Result<Option<Action>, End> {
        let mut again = request.clone();
        super::guard::with_schema(&mut again, action::narrowed_schema(others));
        again.messages.push(Message::assistant(serde_json::to_string(&d.action).unwrap_or_default()));
        again.messages.push(Message::user(action::repeat_note(tool)));
        let mut retries = 0;
        let reply = self.ask(&again, &mut retries, "narrowed").await?;
        d.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
        d.output_tokens += reply.output_tokens.unwrap_or(estimate_tokens(&reply.text) as u64);
        let allowed = |a: &Action| match a {
            Action::Finish { .. } | Action::Error { .. } => true,
            Action::Tool { tool, .. } => others.iter().any(|t| t.name == *tool),
            Action::Reason { .. } => false,
        };
        Ok(match action::parse(&reply.text) {
            Ok(a) if allowed(&a) => Some(a),
            Ok(_) | Err(_) => None,
        })
    }

    /// The same action `stuck_repeats` times in a row ends the run.
    pub(super) fn check_stuck(&mut self, mut d: Decision) -> Decision {
        let n = self.options.stuck_repeats;
        if n == 0 || !matches!(d.action, Action::Tool { .. } | Action::Reason { .. }) {
            self.fingerprints.clear();
            return d;
        }
        let fp = d.action.fingerprint();
        if self.fingerprints.last() != Some(&fp) {
            self.fingerprints.clear();
        }
        self.fingerprints.push(fp);
        if self.fingerprints.len() >= n {
            let what = match &d.action {
                Action::Tool { tool, args, .. } => format!("tool `{tool}` with args {args}"),
                a => format!("reasoning \"{}\"", cut(a.reasoning(), 80)),
            };
            let text = format!(
                "Stopped: the model repeated the same action {n} times in a row ({what}); it is stuck."
            );
            let stuck = json!({"repeats": n, "repeated": d.action.fingerprint()});
            d.metadata["stuck"] = stuck.clone();
            d.verdict = Verdict::Stopped { code: ErrorCode::Stuck, details: stuck, stuck: true };
            d.action =
                Action::Error { message: text, reasoning: d.action.reasoning().to_owned(), tool: None };
        }
        d
    }
}

/// The action in the answer to the correction round, else the run's error:
/// the answer cut off at `max` tokens, or still no valid action.
fn after_correction(text: &str, cut_off: bool, max: usize, metadata: &mut Value) -> (Action, Verdict) {
    match action::parse(text) {
        Ok(a) => (a, Verdict::AsIs),
        Err(e2) if cut_off => {
            let e2 = format!("the answer was cut off at the limit of {max} tokens ({e2})");
            metadata["parse_error_after_correction"] = json!(e2);
            let message = format!(
                "the model's answer was cut off at the limit of {max} tokens, even after one \
                 correction: {e2}"
            );
            let hint = format!(
                "raise the limit with --answer-tokens (now {max}), or use a more capable --model; \
                 a small model may fill args until it is cut off"
            );
            let details = json!({"hint": hint, "answer_tokens": max});
            (
                Action::error(message),
                Verdict::Stopped { code: ErrorCode::AnswerCutOff, details, stuck: false },
            )
        }
        Err(e2) => {
            metadata["parse_error_after_correction"] = json!(e2);
            let message =
                format!("the model did not answer with a valid action, even after one correction: {e2}");
            let hint = "use a more capable --model";
            let details = json!({"hint": hint});
            (
                Action::error(message),
                Verdict::Stopped { code: ErrorCode::InvalidAction, details, stuck: false },
            )
        }
    }
}
