//! The step loop behind [`super::run`]: one step asks for a decision
//! ([`decide`]: the request, the parse, the correction round, validation),
//! built by [`request`] (budget, prompt, schema), and carries it out.

mod decide;
mod guard;
mod request;

use super::action::{self, Action, ActionKind};
use super::memory::{ModelAnswer, Session, StepRecord, cut};
use super::prompt::estimate_tokens;
use super::telemetry::Telemetry;
use super::{RunOptions, RunResult, RunStatus, StopReason};
use crate::agent::backend::Backend;
use crate::agent::error::ErrorCode;
use crate::agent::{ToolInfo, ToolOutcome, Tools};

use serde_json::{Value, json};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

pub const CANCELED: &str = "Canceled by user";

/// How the loop ended, before it becomes a [`RunResult`].
struct End {
    status: RunStatus,
    final_text: String,
    stop_reason: StopReason,
    error: Option<Value>,
}

impl End {
    fn canceled() -> End {
        End {
            status: RunStatus::Canceled,
            final_text: CANCELED.into(),
            stop_reason: StopReason::Canceled,
            error: None,
        }
    }

    fn error(code: ErrorCode, message: String, details: Value) -> End {
        let mut d = json!({"message": message});
        if let (Some(m), Value::Object(extra)) = (d.as_object_mut(), details) {
            m.extend(extra);
        }
        End {
            status: RunStatus::Error,
            final_text: message,
            stop_reason: StopReason::Error,
            error: Some(json!({"error": code, "details": d})),
        }
    }
}

/// What the model (or the loop for it) decided in one step.
struct Decision {
    action: Action,
    /// What the loop made of the action.
    verdict: Verdict,
    model: String,
    prompt_tokens: u64,
    output_tokens: u64,
    metadata: Value,
}

/// What the loop made of a decision's action.
#[derive(Clone, Debug, PartialEq)]
enum Verdict {
    /// Carried out as it is (an `error` action is the model giving up).
    AsIs,
    /// A tool call refused before it was made (an unknown tool, a hopeless
    /// call): this error is the step's tool output, so the model gets one
    /// more chance.
    Refused(Value),
    /// The loop turned the answer into the `error` action: the run ends
    /// with `code`, `details` (`hint`, …) in the result, `Stuck` as the
    /// stop reason when the model was stuck.
    Stopped { code: ErrorCode, details: Value, stuck: bool },
}

impl Verdict {
    /// How the run ends on an `error` action: its message (the answer's
    /// `final`, else its reasoning), the loop's code (else the model gave
    /// up) and details (`{tool}` when the action names one), stopped as
    /// stuck when the model was.
    fn gave_up(&self, message: &str, reasoning: &str, tool: Option<&str>) -> End {
        let message = [message, reasoning]
            .into_iter()
            .find(|t| !t.trim().is_empty())
            .map_or_else(|| "the model gave up (action error) without saying why".into(), str::to_owned);
        let (code, details, stuck) = match self {
            Verdict::Stopped { code, details, stuck } => (*code, details.clone(), *stuck),
            Verdict::AsIs | Verdict::Refused(_) => (ErrorCode::ModelGaveUp, Value::Null, false),
        };
        let details = match tool {
            Some(tool) => json!({"tool": tool}),
            None => details,
        };
        let mut end = End::error(code, message, details);
        if stuck {
            end.stop_reason = StopReason::Stuck;
        }
        end
    }
}

impl Decision {
    /// A step decided without the model (`--force-tool`, `--force-finish`).
    fn forced(action: Action) -> Decision {
        Decision {
            action,
            verdict: Verdict::AsIs,
            model: "forced".into(),
            prompt_tokens: 0,
            output_tokens: 0,
            metadata: json!({"forced": true}),
        }
    }
}

struct Runner<'a, B, T> {
    goal: &'a str,
    options: &'a RunOptions,
    backend: &'a B,
    tools: &'a T,
    cancel: &'a CancellationToken,
    run_id: String,
    telemetry: Telemetry,
    session: Session,
    transcript: Vec<StepRecord>,
    last_output: Option<String>,
    fingerprints: Vec<String>,
    model: Option<String>,
    step: usize,
    /// The steps in a row that asked for an unknown tool.
    unknown_streak: usize,
    /// The model answers of the step under way, for its record and event.
    answers: Vec<ModelAnswer>,
    /// Each model's context size, as its server said (asked once per model).
    contexts: std::collections::HashMap<String, Option<usize>>,
    /// Whether the run's one grounding re-ask was spent.
    ground_asked: bool,
    /// How often each call (fingerprint and output) was made.
    observations: std::collections::HashMap<String, usize>,
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Runs the loop for `goal` until the model finishes, gives up, gets stuck,
/// the cap is reached or `cancel` fires. Never panics on model output; every
/// failure is in the result.
pub async fn run(
    goal: &str,
    options: &RunOptions,
    backend: &impl Backend,
    tools: &impl Tools,
    cancel: &CancellationToken,
) -> RunResult {
    let run_id = options.run_id.clone().unwrap_or_else(crate::runtime::engine::new_run_id);
    let telemetry = match Telemetry::open(&options.root, &run_id, options.log_rotation) {
        Ok(t) => t.echo(options.verbose),
        Err(message) => {
            return RunResult {
                status: RunStatus::Error,
                final_text: message.clone(),
                steps: 0,
                run_id,
                stop_reason: StopReason::Error,
                error: Some(json!({"error": ErrorCode::AgentIo, "details": {"message": message}})),
                transcript: Vec::new(),
            };
        }
    };
    let mut r = Runner {
        goal,
        options,
        backend,
        tools,
        cancel,
        session: Session::new(&run_id, goal, now()),
        run_id,
        telemetry,
        transcript: Vec::new(),
        last_output: None,
        fingerprints: Vec::new(),
        model: None,
        step: 0,
        unknown_streak: 0,
        answers: Vec::new(),
        contexts: std::collections::HashMap::new(),
        ground_asked: false,
        observations: std::collections::HashMap::new(),
    };
    r.telemetry.event(
        "run_started",
        json!({"goal": goal, "backend": backend.name(), "max_steps": options.max_steps,
               "dry_run": options.dry_run, "policy": options.policy.note()}),
    );
    r.telemetry.log(&format!(
        "run started: backend {} (model {}), max {} steps{}, goal: {}",
        backend.name(),
        backend.model(options.heavy),
        options.max_steps,
        if options.dry_run { ", dry run" } else { "" },
        cut(goal, 200)
    ));
    r.recall_dialect();
    let started = Instant::now();
    // The memory exists from the start: a reader never finds a stale one.
    let end = match r.save() {
        Ok(()) => r.drive().await,
        Err(end) => end,
    };
    r.finish(end, started).await
}

impl<B: Backend, T: Tools> Runner<'_, B, T> {
    /// Starts the backend from the dialect an earlier run negotiated with
    /// the same endpoint (`.savant/dialects.json`), and says which it uses.
    fn recall_dialect(&mut self) {
        let Some(first) = self.backend.dialect() else { return };
        let key = super::dialects::key(self.backend);
        let remembered = super::dialects::load(&self.options.root).get(&key).cloned();
        let dialect = match remembered {
            Some(d) if self.backend.start_with_dialect(&d) => {
                self.telemetry.log(&format!(
                    "structured output: {d}, remembered from an earlier run with {}",
                    self.backend.endpoint()
                ));
                d
            }
            _ => {
                self.telemetry.log(&format!("structured output: trying {first} first"));
                first.to_owned()
            }
        };
        self.session.structured_output = Some(dialect);
    }

    /// Keeps the dialect the run ended with, for this run's record and the
    /// next run's start.
    fn keep_dialect(&mut self) {
        let Some(dialect) = self.backend.dialect() else { return };
        if self.session.structured_output.as_deref() != Some(dialect) {
            self.telemetry.log(&format!("structured output: {dialect} for the rest of the run"));
        }
        self.session.structured_output = Some(dialect.to_owned());
        let key = super::dialects::key(self.backend);
        if let Err(e) = super::dialects::remember(&self.options.root, &key, dialect) {
            self.telemetry
                .log(&format!("cannot write {}: {e}", super::dialects::path(&self.options.root).display()));
        }
    }

    async fn drive(&mut self) -> End {
        if let Some(end) = self.forced().await {
            return end;
        }
        while self.step < self.options.max_steps {
            self.step += 1;
            if self.cancel.is_cancelled() {
                return self.canceled();
            }
            if let Some(end) = self.one_step().await {
                return end;
            }
        }
        let message = format!(
            "Stopped after {} step{} without a finish (the step cap; raise it with --max-steps).",
            self.step,
            if self.step == 1 { "" } else { "s" }
        );
        End { status: RunStatus::Cap, final_text: message, stop_reason: StopReason::Cap, error: None }
    }

    /// The forced tool and forced finish options: steps without a model call.
    async fn forced(&mut self) -> Option<End> {
        let o = self.options;
        if let Some(forced) = &o.forced_tool {
            self.step += 1;
            let tools = self.offered().await;
            let decision = Decision::forced(Action::tool(&forced.name, forced.args.clone()));
            let decision = self.validate(decision, &tools, false).await;
            let output = self.act(decision, Instant::now()).await;
            if let Some(end) = output.end {
                return Some(end);
            }
            if o.forced_finish {
                let text = match output.tool_output {
                    Some(Value::String(s)) => s,
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                if !output.tool_ok {
                    let message = format!("the forced tool `{}` failed: {}", forced.name, cut(&text, 500));
                    return Some(End::error(ErrorCode::ToolFailed, message, json!({"tool": forced.name})));
                }
                return Some(End {
                    status: RunStatus::Ok,
                    final_text: text,
                    stop_reason: StopReason::ForcedFinish,
                    error: None,
                });
            }
        } else if o.forced_finish {
            self.step += 1;
            let decision =
                Decision::forced(Action::finish("Finished without asking the model (forced finish).", ""));
            let mut end = self.act(decision, Instant::now()).await.end?;
            end.stop_reason = StopReason::ForcedFinish;
            return Some(end);
        }
        None
    }

    /// The tools the model is offered this step.
    async fn offered(&mut self) -> Vec<ToolInfo> {
        let all = self.tools.list().await;
        if self.step == 1 {
            for pattern in self.options.policy.unmatched_allow(&all) {
                let warning = format!("SAVANT_ALLOW_TOOLS: `{pattern}` matches no tool");
                tracing::warn!("{warning}");
                self.telemetry.log(&format!("warning: {warning}"));
            }
        }
        self.options.policy.filter(all)
    }

    /// One step: the tools ranked for the goal (the top
    /// `offer_tools` offered, any the policy allows accepted), the ask, then
    /// the checks in order — the tool name, a hopeless call, a repeat, a
    /// grounded final answer, stuck — and the action.
    async fn one_step(&mut self) -> Option<End> {
        let started = Instant::now();
        let all = self.offered().await;
        let ranked = if self.options.offer_tools == 0 {
            all.clone()
        } else {
            super::rank::needing_no_unknown_run(all.clone(), self.run_known())
        };
        let tools =
            super::rank::top(ranked, self.goal, self.last_output.as_deref(), self.options.offer_tools);
        let heavy = self.heavy_step();
        let budget = self.budget(heavy).await;
        let must_call = super::ground::needs_grounding(self.goal) && !self.any_call_worked();
        let (request, built) = self.request(&tools, heavy, budget, must_call);
        let decision = match self.checked(&request, &built, heavy, &tools, &all).await {
            Ok(d) => d,
            Err(end) => {
                let model = self.backend.model(heavy);
                return Some(self.failed_step(end, &model, built.tokens, started));
            }
        };
        let decision = self.check_stuck(decision);
        self.act(decision, started).await.end
    }

    /// The step's decision, through every check that may ask the model again.
    async fn checked(
        &mut self,
        request: &crate::agent::backend::ChatRequest,
        built: &super::prompt::Prompt,
        heavy: bool,
        tools: &[ToolInfo],
        all: &[ToolInfo],
    ) -> Result<Decision, End> {
        let decision = self.decide(request, built, heavy).await?;
        let decision = self.validate(decision, all, self.unknown_streak == 0).await;
        let decision = self.refuse_hopeless(decision, all, request).await?;
        let refused = matches!(decision.verdict, Verdict::Refused(_));
        self.unknown_streak =
            if refused && decision.metadata.get("hopeless").is_none() { self.unknown_streak + 1 } else { 0 };
        let decision = self.steer_repeat(decision, tools, request).await?;
        self.ground(decision, all, request).await
    }

    /// Whether this step is heavy (`--heavy`, or a large last tool output),
    /// logging a model switch.
    fn heavy_step(&mut self) -> bool {
        let last_tokens = self.last_output.as_deref().map_or(0, estimate_tokens);
        let heavy = self.options.heavy || last_tokens > self.options.heavy_output_tokens;
        let model = self.backend.model(heavy);
        if self.model.as_deref() != Some(model.as_str()) {
            if let Some(old) = &self.model {
                let why = if heavy {
                    format!("heavy step: the last tool output is ~{last_tokens} tokens")
                } else {
                    "back to the small model".to_owned()
                };
                self.telemetry.log(&format!("step {}: model switch {old} → {model} ({why})", self.step));
            }
            self.model = Some(model);
        }
        heavy
    }

    /// A step whose model call failed or was canceled: recorded, then the end.
    fn failed_step(&mut self, end: End, model: &str, prompt_tokens: usize, started: Instant) -> End {
        let (kind, mut meta) = if end.status == RunStatus::Canceled {
            (ActionKind::Finish, json!({"canceled": true, "decision_summary": CANCELED}))
        } else {
            (ActionKind::Error, json!({"error": end.error, "decision_summary": cut(&end.final_text, 200)}))
        };
        let answers = std::mem::take(&mut self.answers);
        if !answers.is_empty() {
            meta["answers"] = json!(answers);
        }
        let record = StepRecord {
            step: self.step,
            action: kind.as_str().into(),
            final_text: end.final_text.clone(),
            model: model.into(),
            duration_ms: started.elapsed().as_millis() as u64,
            answers,
            ..StepRecord::default()
        };
        self.telemetry.event(
            "reasoning_step",
            json!({"step": self.step, "model": model, "prompt_tokens": prompt_tokens, "output_tokens": 0,
                   "action": kind.as_str(), "tool_name": "", "metadata": meta}),
        );
        if let Err(e) = self.remember(record) {
            return e;
        }
        end
    }

    /// A canceled step, before any model call.
    fn canceled(&mut self) -> End {
        let end = End::canceled();
        let model = self.model.clone().unwrap_or_else(|| "none".into());
        self.failed_step(end, &model, 0, Instant::now())
    }

    /// Emits the step's `reasoning_step` event, carries the action out,
    /// remembers the step, and says whether the run ends here.
    async fn act(&mut self, d: Decision, started: Instant) -> Acted {
        let summary = match &d.action {
            Action::Tool { tool, .. } => format!("call {tool}"),
            Action::Reason { reasoning } => format!("reason: {}", cut(reasoning, 160)),
            Action::Finish { answer, .. } => format!("finish: {}", cut(answer, 160)),
            Action::Error { message, .. } => format!("error: {}", cut(message, 160)),
        };
        let mut record = self.decided(&d, &summary);
        let mut acted = Acted { end: None, tool_output: None, tool_ok: false };
        match &d.action {
            Action::Tool { tool, args, .. } if let Verdict::Refused(output) = &d.verdict => {
                // Not called: the refusal is the output the model reads next step.
                let output = output.clone();
                record.args = args.clone();
                record.ok = Some(false);
                self.last_output = Some(output.to_string());
                self.telemetry.log(&format!("step {}: tool {tool} not called: {output}", self.step));
                record.output = output;
            }
            Action::Tool { tool, args, .. } => {
                record.args = args.clone();
                let Some(outcome) = self.call_tool(tool, args.clone()).await else {
                    // Canceled during the call: this step (its event is out) ends the run.
                    record.ok = Some(false);
                    record.output = json!({"error": "CANCELED", "details": "the tool call was abandoned"});
                    record.final_text = CANCELED.into();
                    record.duration_ms = started.elapsed().as_millis() as u64;
                    let end = End::canceled();
                    let end = self.remember(record).err().unwrap_or(end);
                    return Acted { end: Some(end), tool_output: None, tool_ok: false };
                };
                record.ok = Some(outcome.ok);
                record.output = outcome.output.clone();
                self.last_output = Some(match &outcome.output {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                acted.tool_ok = outcome.ok;
                acted.end = self.repeated_observation(&d, &outcome.output);
                acted.tool_output = Some(outcome.output);
            }
            Action::Reason { .. } => {}
            Action::Finish { answer, .. } => {
                record.final_text = answer.clone();
                acted.end = Some(End {
                    status: RunStatus::Ok,
                    final_text: answer.clone(),
                    stop_reason: StopReason::Finish,
                    error: None,
                });
            }
            Action::Error { message, reasoning, tool } => {
                let end = d.verdict.gave_up(message, reasoning, tool.as_deref());
                record.final_text = end.final_text.clone();
                acted.end = Some(end);
            }
        }
        record.duration_ms = started.elapsed().as_millis() as u64;
        self.telemetry
            .log(&format!("step {}: {} by {} in {} ms", self.step, summary, d.model, record.duration_ms));
        if let Err(end) = self.remember(record) {
            acted.end = Some(end);
        }
        acted
    }

    /// The decision's event (with its summary, reasoning and the answers
    /// it was given) sent, and its step record begun.
    fn decided(&mut self, d: &Decision, summary: &str) -> StepRecord {
        let a = &d.action;
        let mut metadata = d.metadata.clone();
        metadata["decision_summary"] = json!(summary);
        if !a.reasoning().is_empty() {
            metadata["reasoning"] = json!(cut(a.reasoning(), 500));
        }
        let answers = std::mem::take(&mut self.answers);
        if !answers.is_empty() {
            metadata["answers"] = json!(answers);
        }
        self.telemetry.event(
            "reasoning_step",
            json!({"step": self.step, "model": d.model, "prompt_tokens": d.prompt_tokens,
                   "output_tokens": d.output_tokens, "action": a.kind().as_str(),
                   "tool_name": a.tool_name().unwrap_or_default(), "metadata": metadata}),
        );
        StepRecord {
            step: self.step,
            action: a.kind().as_str().into(),
            tool_name: a.tool_name().unwrap_or_default().to_owned(),
            reasoning: a.reasoning().to_owned(),
            model: d.model.clone(),
            answers,
            ..StepRecord::default()
        }
    }

    /// Calls a tool (or its dry-run stub), with its two events; `None` when
    /// the run was canceled during the call.
    async fn call_tool(&mut self, name: &str, args: Value) -> Option<ToolOutcome> {
        let dry = self.options.dry_run;
        self.telemetry.event(
            "tool_call_started",
            json!({"step": self.step, "tool_name": name, "args": args, "dry_run": dry}),
        );
        let outcome = if dry {
            ToolOutcome {
                ok: true,
                output: json!({"dry_run": true, "tool_name": name, "args": args,
                               "note": format!("dry run: `{name}` was not called; this output is a stub")}),
                duration_ms: 0,
            }
        } else {
            tokio::select! {
                _ = self.cancel.cancelled() => None,
                o = self.tools.call(name, args) => Some(o),
            }?
        };
        let error = outcome.output.get("error").cloned().filter(|_| !outcome.ok);
        self.telemetry.event(
            "tool_call_completed",
            json!({"step": self.step, "tool_name": name, "ok": outcome.ok, "duration_ms": outcome.duration_ms,
                   "output_bytes": outcome.output.to_string().len(), "error": error, "dry_run": dry}),
        );
        self.telemetry.log(&format!(
            "step {}: tool {name} {} in {} ms{}",
            self.step,
            if outcome.ok { "ok" } else { "failed" },
            outcome.duration_ms,
            error.map(|e| format!(" ({e})")).unwrap_or_default()
        ));
        Some(outcome)
    }

    /// Appends a step to the transcript and memory and rewrites session.json.
    fn remember(&mut self, record: StepRecord) -> Result<(), End> {
        self.session.push(&record, self.options.memory_tokens);
        self.session.updated_at = now();
        self.transcript.push(record);
        self.save()
    }

    fn save(&mut self) -> Result<(), End> {
        let path = self.options.session_path();
        self.session.save(&path).map_err(|e| {
            let message = format!("cannot write {}: {e}", path.display());
            End::error(ErrorCode::AgentIo, message, json!({"path": path.display().to_string()}))
        })
    }

    async fn finish(mut self, end: End, started: Instant) -> RunResult {
        self.keep_dialect();
        self.session.status = end.status.as_str().into();
        self.session.final_text = Some(end.final_text.clone());
        self.session.updated_at = now();
        let mut end = end;
        if let Err(io) = self.save()
            && end.status != RunStatus::Error
        {
            end = io;
        }
        self.telemetry.event(
            "run_finished",
            json!({"status": end.status.as_str(), "stop_reason": end.stop_reason.as_str(), "steps": self.step,
                   "structured_output": self.session.structured_output,
                   "duration_ms": started.elapsed().as_millis() as u64, "error": end.error}),
        );
        self.telemetry.log(&format!(
            "run finished: {} ({}) after {} step{} in {} ms: {}",
            end.status.as_str(),
            end.stop_reason,
            self.step,
            if self.step == 1 { "" } else { "s" },
            started.elapsed().as_millis(),
            cut(&end.final_text, 300)
        ));
        RunResult {
            status: end.status,
            final_text: end.final_text,
            steps: self.step,
            run_id: self.run_id,
            stop_reason: end.stop_reason,
            error: end.error,
            transcript: self.transcript,
        }
    }
}

/// What carrying out an action came to.
struct Acted {
    end: Option<End>,
    tool_output: Option<Value>,
    tool_ok: bool,
}
