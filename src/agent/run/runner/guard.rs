//! What the loop refuses or stops without the model's help: a hopeless
//! tool call (re-asked once in the same step, see docs/agent.md "Hopeless
//! calls"), a final answer not grounded in the tools' outputs (re-asked once
//! per run, then `UNGROUNDED_ANSWER`), and a loop that repeats itself (the
//! same call with the same arguments returning the same output
//! `stuck_repeats` times: `STUCK`).

use super::{Decision, End, Runner, Verdict};
use crate::agent::backend::{Backend, ChatRequest, Message};
use crate::agent::error::ErrorCode;
use crate::agent::run::action::{self, Action};
use crate::agent::run::ground;
use crate::agent::run::memory::cut;
use crate::agent::run::prompt::estimate_tokens;
use crate::agent::{Hopeless, ToolInfo, Tools};
use serde_json::{Value, json};

/// The most characters of the tools' outputs a grounding check reads.
const OBSERVED_CHARS: usize = 50_000;
/// The most characters of the last output quoted in the grounding re-ask.
const QUOTED_CHARS: usize = 600;
/// The most ids a list answer chooses from (a longer list: a sentence).
const MAX_LISTED: usize = 50;

impl<B: Backend, T: Tools> Runner<'_, B, T> {
    /// A tool call that cannot work (a required argument missing or empty,
    /// or what [`Tools::precheck`] refuses) is not made: the model is told
    /// why, with a hint, and asked again in the same step (no step of
    /// `--max-steps` spent), the argument at fault allowed only its known
    /// values when there are some (the project's workflow ids; the files
    /// the goal names that exist), or left out when it is optional (a
    /// list filter that matches nothing). A second hopeless call in the step is
    /// the step's output, as a refusal the model reads.
    pub(super) async fn refuse_hopeless(
        &mut self,
        mut d: Decision,
        all: &[ToolInfo],
        request: &ChatRequest,
    ) -> Result<Decision, End> {
        let Some((tool, refused)) = self.hopeless(&d, all) else { return Ok(d) };
        let reason = refused.reason;
        let hint = ground::hopeless_hint(&tool, &reason, self.goal);
        let mut again = request.clone();
        if !refused.arg.is_empty() {
            action::pin_arg(&mut again.schema, &tool, &refused.arg, &refused.choices);
        }
        again.messages.push(Message::assistant(serde_json::to_string(&d.action).unwrap_or_default()));
        again.messages.push(Message::user(format!(
            "The call of `{tool}` was not made: {reason}. Hint: {hint}. Answer with the next action."
        )));
        let reply = self.ask(&again, &mut 0, "hopeless").await?;
        d.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
        d.output_tokens += reply.output_tokens.unwrap_or(estimate_tokens(&reply.text) as u64);
        let mut outcome = "refused";
        if let Ok(a) = action::parse(&reply.text) {
            outcome = a.kind().as_str();
            d.action = a;
            d = self.validate(d, all, self.unknown_streak == 0).await;
        }
        self.telemetry.log(&format!(
            "step {}: hopeless call of {tool} not made ({reason}); asked again → {outcome}",
            self.step
        ));
        d.metadata["hopeless"] = json!({"tool": tool, "reason": reason, "outcome": outcome});
        if let Some((tool, again)) = self.hopeless(&d, all) {
            let again_reason = again.reason;
            let hint = ground::hopeless_hint(&tool, &again_reason, self.goal);
            d.metadata["hopeless"]["refused"] = json!(true);
            d.verdict = Verdict::Refused(json!({"error": "INVALID_INPUT", "details": {"tool": tool,
                "message": format!("not called: {again_reason}"), "hint": hint}}));
        }
        Ok(d)
    }

    /// The tool a call names and why it cannot work, when it cannot. A
    /// `path` refused without known values gets the files the goal names
    /// that the tools would not refuse.
    fn hopeless(&self, d: &Decision, all: &[ToolInfo]) -> Option<(String, Hopeless)> {
        let Action::Tool { tool, args, .. } = &d.action else { return None };
        if d.verdict != Verdict::AsIs {
            return None;
        }
        let info = all.iter().find(|t| t.name == *tool)?;
        if let Some(reason) = ground::hopeless(&info.input_schema, args) {
            return Some((tool.clone(), Hopeless { reason, ..Hopeless::default() }));
        }
        let mut refused = self.tools.precheck(tool, args)?;
        if refused.arg == "path" && refused.choices.is_empty() {
            refused.choices = crate::agent::run::rank::file_words(self.goal)
                .into_iter()
                .filter(|f| self.tools.precheck(tool, &json!({"path": f})).is_none())
                .map(str::to_owned)
                .collect();
        }
        Some((tool.clone(), refused))
    }

    /// Whether a run id is known: a tool output that worked had a
    /// `run_id`, or the goal names one (`r-…`).
    pub(super) fn run_known(&self) -> bool {
        let in_goal = self.goal.split(|c: char| c.is_whitespace() || c == '`').any(|w| w.starts_with("r-"));
        in_goal || self.transcript.iter().any(|r| r.ok == Some(true) && names_key(&r.output, "run_id"))
    }

    /// Whether any tool call of the run has worked (what [`Self::observed`]
    /// would quote, without building the text).
    pub(super) fn any_call_worked(&self) -> bool {
        self.transcript.iter().any(|r| r.action == "tool" && r.ok == Some(true))
    }

    /// The text of every successful tool output of the run (bounded);
    /// `None` when no tool call has worked.
    pub(super) fn observed(&self) -> Option<String> {
        let mut text = None;
        for r in self.transcript.iter().filter(|r| r.action == "tool" && r.ok == Some(true)) {
            let t: &mut String = text.get_or_insert_default();
            ground::observed_text(&r.output, t);
            if t.len() > OBSERVED_CHARS {
                break;
            }
        }
        text
    }

    /// A final answer to a goal that needs a tool's output (see
    /// [`ground`]) must be grounded in it. The first ungrounded one of a run
    /// is re-asked in the same step: quoting the last output as plain text
    /// and asking for the answer alone, as one JSON string (or an action)
    /// when there is one; asking for the tool first when there is none. The
    /// next is an `UNGROUNDED_ANSWER` error action: the run does not end `ok`.
    pub(super) async fn ground(
        &mut self,
        mut d: Decision,
        all: &[ToolInfo],
        request: &ChatRequest,
    ) -> Result<Decision, End> {
        let Action::Finish { answer: said, .. } = &d.action else { return Ok(d) };
        if !ground::needs_grounding(self.goal) {
            return Ok(d);
        }
        let said = said.clone();
        let observed = self.observed();
        let observed = observed.as_deref();
        let Some(why) = ground::ungrounded(self.goal, &said, observed) else { return Ok(d) };
        if !self.ground_asked {
            self.ground_asked = true;
            let answer = if observed.is_some() {
                self.ask_answer(&mut d, request, "grounding").await?
            } else {
                let again = self.grounding_request(request, &said, &why);
                let reply = self.ask(&again, &mut 0, "grounding").await?;
                d.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
                d.output_tokens += reply.output_tokens.unwrap_or(estimate_tokens(&reply.text) as u64);
                action::parse(&reply.text).ok()
            };
            let outcome = answer.as_ref().map_or("ignored", |a| a.kind().as_str());
            d.metadata["grounding"] = json!({"reason": why, "outcome": outcome});
            self.telemetry.log(&format!(
                "step {}: ungrounded final answer ({why}); asked again → {outcome}",
                self.step
            ));
            match answer {
                Some(a @ Action::Tool { .. }) => {
                    d.action = a;
                    return Ok(self.validate(d, all, self.unknown_streak == 0).await);
                }
                Some(Action::Finish { answer, reasoning }) => {
                    let Some(again_why) = ground::ungrounded(self.goal, &answer, observed) else {
                        d.action = Action::Finish { answer, reasoning };
                        return Ok(d);
                    };
                    return Ok(ungrounded(d, again_why, &answer));
                }
                Some(a @ Action::Error { .. }) => {
                    d.action = a;
                    return Ok(d);
                }
                _ => {}
            }
        }
        Ok(ungrounded(d, why, &said))
    }

    /// The re-ask of an ungrounded final answer `said` when no tool call
    /// has worked yet (see [`Self::ground`]): the tool asked for first.
    fn grounding_request(&self, request: &ChatRequest, said: &str, why: &str) -> ChatRequest {
        let mut again = request.clone();
        again.messages.push(Message::user(format!(
            "Your final answer \"{}\" cannot be used: {why}. Call the tool that brings it first.",
            cut(said, 160)
        )));
        again
    }

    /// A fresh, short request for the final answer, from the last tool
    /// output that worked: the goal, that output as plain text
    /// ([`ground::quoted_text`]: `key: value` pairs, one `- ` line per
    /// listed item) and one JSON string asked for — for a goal that asks for
    /// a list over an output that lists items with ids, a JSON array of
    /// those ids instead (at most [`MAX_LISTED`]): the final answer names
    /// only what the tool listed; `None` when no tool call has worked. In the whole step prompt (persona,
    /// tools, memory, JSON) a small model repeats the prompt's own words;
    /// with the output right above its answer it copies from the output
    /// (docs/agent.md, "Grounded answers").
    pub(super) fn answer_request(&self, request: &ChatRequest) -> Option<ChatRequest> {
        let (tool, output) = self
            .transcript
            .iter()
            .rev()
            .find(|r| r.action == "tool" && r.ok == Some(true))
            .map(|r| (r.tool_name.clone(), &r.output))?;
        let text = ground::quoted_text(output);
        // A list goal over a listed output: the items' ids to choose from.
        let ids = ground::asks_for_list(self.goal).then(|| ground::listed_ids(output)).flatten();
        let (ask, answer) = match ids.filter(|ids| ids.len() <= MAX_LISTED) {
            Some(ids) => (
                "Answer with a JSON array of the ids of the items the goal asks for.",
                json!({"type": "array", "items": {"type": "string", "enum": ids}, "minItems": 1,
                       "maxItems": ids.len()}),
            ),
            None => (
                "Answer the goal in one or two sentences, with the words of this output. Answer with one JSON \
                 string.",
                json!({"type": "string", "minLength": 1,
                       "maxLength": crate::agent::run::bound::DEFAULT_CAPS.final_chars}),
            ),
        };
        let mut again = request.clone();
        again.messages = vec![
            Message::system(ANSWER_SYSTEM.to_owned()),
            Message::user(format!(
                "Goal: {}\n\nThe tool `{tool}` returned:\n{}\n\n{ask}",
                cut(self.goal, 500),
                cut(text.trim(), QUOTED_CHARS)
            )),
        ];
        with_schema(&mut again, answer);
        Some(again)
    }

    /// Asks [`Self::answer_request`] (as `purpose`) and reads the reply as
    /// a final answer: a JSON string, an action, or prose. `Ok(None)` when
    /// no tool call has worked or the reply is none of those.
    pub(super) async fn ask_answer(
        &mut self,
        d: &mut Decision,
        request: &ChatRequest,
        purpose: &str,
    ) -> Result<Option<Action>, End> {
        let Some(again) = self.answer_request(request) else { return Ok(None) };
        let reply = self.ask(&again, &mut 0, purpose).await?;
        d.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
        d.output_tokens += reply.output_tokens.unwrap_or(estimate_tokens(&reply.text) as u64);
        Ok(read_answer(&reply.text))
    }

    /// After a tool call: the same call with the same arguments has now
    /// returned the same output `stuck_repeats` times in this run (in a row
    /// or not): the loop repeats itself, and ends `STUCK`.
    pub(super) fn repeated_observation(&mut self, d: &Decision, output: &Value) -> Option<End> {
        let n = self.options.stuck_repeats;
        let Action::Tool { tool, args, .. } = &d.action else { return None };
        if n == 0 {
            return None;
        }
        let key = format!("{}\0{output}", d.action.fingerprint());
        let count = self.observations.entry(key).or_insert(0);
        *count += 1;
        if *count < n {
            return None;
        }
        let message = format!(
            "Stopped: the call of `{tool}` with args {args} returned the same output {n} times; the loop repeats itself."
        );
        let details = json!({"repeats": n, "repeated": d.action.fingerprint(), "same_output": true,
            "hint": "the model does not use what the tool returned: try a more capable --model or a narrower goal"});
        let mut end = End::error(ErrorCode::Stuck, message, details);
        end.stop_reason = crate::agent::run::StopReason::Stuck;
        Some(end)
    }
}

/// The system message of [`Runner::answer_request`].
const ANSWER_SYSTEM: &str = "You answer the user's goal from what a tool returned. Use the output's own words; \
never invent what it does not say.";

/// A reply to [`Runner::answer_request`] as an action: a JSON string is the
/// final answer, a JSON array of strings the final answer one `- ` line
/// each, an action is itself, prose is the final answer.
fn read_answer(text: &str) -> Option<Action> {
    if let Ok(items) = serde_json::from_str::<Vec<String>>(text.trim()) {
        let lines: Vec<String> =
            items.iter().filter(|i| !i.trim().is_empty()).map(|i| format!("- {i}")).collect();
        return (!lines.is_empty()).then(|| Action::finish(lines.join("\n"), ""));
    }
    match action::parse(text) {
        Ok(a) => Some(a),
        // A small model puts raw newlines in the string: escaped, as in an action.
        Err(_) => match serde_json::from_str::<String>(&action::escape_control_chars(text.trim())) {
            Ok(t) => Some(t).filter(|t| !t.trim().is_empty()).map(|t| Action::finish(t, "")),
            Err(_) => action::prose_final(text).map(|t| Action::finish(t, "")),
        },
    }
}

/// `d` as the `UNGROUNDED_ANSWER` error action for `final_text`.
fn ungrounded(mut d: Decision, why: String, final_text: &str) -> Decision {
    let message = format!("the final answer is not grounded in the tools' outputs: {why}");
    let details = json!({"final": cut(final_text, 500),
        "hint": "the goal asks for what a tool returns: a more capable --model, or --max-steps high enough to \
                 read it and answer from it"});
    d.verdict = Verdict::Stopped { code: ErrorCode::UngroundedAnswer, details, stuck: false };
    d.action = Action::error(message);
    d
}

/// `request` asking with `schema`: its token limit raised, when needed, to
/// the longest answer `schema` admits (see [`bound`](crate::agent::run::bound)).
pub(super) fn with_schema(request: &mut ChatRequest, schema: Value) {
    if let Some(n) = crate::agent::run::bound::longest(&schema) {
        request.max_tokens = request.max_tokens.max(u32::try_from(n).unwrap_or(u32::MAX));
    }
    request.schema = schema;
}

/// Whether `key` is a key of an object anywhere in `v`.
fn names_key(v: &Value, key: &str) -> bool {
    match v {
        Value::Object(m) => m.contains_key(key) || m.values().any(|x| names_key(x, key)),
        Value::Array(a) => a.iter().any(|x| names_key(x, key)),
        _ => false,
    }
}
