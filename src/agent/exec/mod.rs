//! `savant-think exec`: runs a workflow to the end with no LLM client in the
//! loop. The engine's own plan → next loop, each `instruction.call` made
//! through the [`Multiplexer`].
//!
//! - Start or resume: with a run id that exists, the run is resumed where it
//!   stopped (`plan` with `start_fresh: false`); a done step is never run
//!   again. Every accepted result is durable before `next` answers, so a
//!   kill at any point loses nothing acknowledged; the steps that were in
//!   flight are run again on resume (at least once for those).
//! - `--jobs N`: up to N ready steps run at once; their results are
//!   submitted in the engine's ready order, whatever order they finish in.
//! - A result that fails its success schema (VALIDATION_FAILED) leaves the
//!   step ready: it is run again until the engine's retry budget
//!   (`retry.max`, default 3) fails the run — unless the call's result is
//!   refused for the very same reasons twice in a row (no model is in the
//!   loop to answer otherwise; `prompt.say` only echoes): a retry would be
//!   refused again, so exec stops at once (VALIDATION_FAILED, the run
//!   resumable).
//! - A step that needs a model — `think` or `prompt.say` with a success
//!   schema (a question for a model or a person), `model.generate` — runs on
//!   the configured model (the mux's, [`Multiplexer::with_model`]): the
//!   thought or message is the prompt, the success schema the answer's. With
//!   no model, exec refuses before the first step (`MODEL_NOT_CONFIGURED`),
//!   naming every such step, in the workflow and the ones it uses.
//! - A tool failure (not found, server offline, timeout, tool error) is not
//!   submitted: the step stays ready, the failure is recorded as a thought in
//!   the run's history, the other results of the batch are submitted, and
//!   exec stops with the reason. Re-running with the same run id retries it.
//! - `--dry-run`: every call other than the engine's safe built-ins (`think`,
//!   `prompt_say`, read-only `think_*`) is answered with an instance of its
//!   output type — the step's success schema, else the tool's `outputSchema`
//!   in `tools.lock.json` — made to exercise the workflow ([`sample::exercise`]:
//!   a list has an item, so every `foreach` runs one and every child workflow
//!   below it starts), or `{}`; missing params are generated the same way.
//!
//! - A run that waits (`await:`, `sleep:`, `wait_for:`) with no step
//!   ready: see `wait.rs` — a dry run ends each wait at once, a question is
//!   asked on a terminal, a deadline within `max_wait` is slept, else the
//!   run parks (status `waiting`, each wait and how to end it listed).
//!
//! Engine calls are synchronous and short (a file append), so they run on the
//! calling task; tool calls are async (child processes, HTTP).

pub mod events;
pub mod sample;
mod wait;

pub use wait::StopCheck;

use crate::agent::ToolOutcome;
use crate::agent::Tools;
use crate::agent::mux::{Multiplexer, failure};
use crate::runtime::ErrorCode;
use crate::runtime::catalog::ToolName;
use crate::runtime::engine::{NextArgs, new_run_id};
use crate::runtime::reply::{Instruction, Progress, WaitView};
use crate::runtime::{Engine, EngineError};
use events::{ExecEvent, StepStatus};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// What to run.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// A workflow id (under `<root>/workflows`) or a path.
    pub workflow: String,
    /// Params (an object, or null for none).
    pub params: Value,
    /// Resume this run if it exists, else start it under this id.
    pub run_id: Option<String>,
    pub dry_run: bool,
    /// Ready steps run at once (at least 1).
    pub jobs: usize,
    /// A deadline (a sleep's end, a timeout) at most this far off is waited
    /// for in process; a later one parks the run. Default: a minute.
    pub max_wait: std::time::Duration,
    /// Ask a person's question (`await:`) on the terminal: stdin and stderr
    /// are one. Default: false (the run parks).
    pub ask_on_tty: bool,
    /// Asked before each batch: stop there when it says so.
    pub stop: Option<StopCheck>,
}

impl Default for ExecOptions {
    fn default() -> ExecOptions {
        ExecOptions {
            workflow: String::new(),
            params: Value::Null,
            run_id: None,
            dry_run: false,
            jobs: 1,
            max_wait: std::time::Duration::from_secs(60),
            ask_on_tty: false,
            stop: None,
        }
    }
}

/// What a dry run exercised: the steps of the run and of every child run
/// below it that ran, the foreach items, the child runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Exercised {
    /// Steps (and foreach items) answered, in the run and its children.
    pub steps: usize,
    /// Foreach items that ran (not skipped), at any depth.
    pub items: usize,
    /// Child runs started by `uses:` steps, at any depth.
    pub child_runs: usize,
    /// The workflows those child runs ran.
    pub workflows: Vec<String>,
}

impl Exercised {
    /// `5 step(s), 3 foreach item(s), 2 child run(s) (m_child)`.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} step(s), {} foreach item(s), {} child run(s)",
            self.steps, self.items, self.child_runs
        );
        if !self.workflows.is_empty() {
            text.push_str(&format!(" of {}", self.workflows.join(", ")));
        }
        text
    }

    /// What run `run_id` of `workflow` and its child runs exercised.
    fn run(engine: &Engine, workflow: &str, run_id: &str) -> Exercised {
        let mut out = Exercised::default();
        Exercised::of(engine, workflow, run_id, 0, &mut out);
        out
    }

    /// Counts run `run_id` of `workflow` and its child runs, at any depth.
    fn of(engine: &Engine, workflow: &str, run_id: &str, depth: usize, out: &mut Exercised) {
        let (Ok(cw), Ok(steps)) = (engine.workflow(workflow), engine.step_statuses(workflow, run_id)) else {
            return;
        };
        let ran = |s: &crate::runtime::run::StepStatus| *s == crate::runtime::run::StepStatus::Done;
        for (step, view) in cw.wf.steps.iter().zip(&steps) {
            let n = match &view.items {
                Some(items) => items.iter().filter(|s| ran(s)).count(),
                None => usize::from(ran(&view.status)),
            };
            out.steps += n;
            if view.items.is_some() {
                out.items += n;
            }
            let Some(uses) = &step.uses else { continue };
            if depth >= 16 {
                continue;
            }
            let works: Vec<String> = match &view.items {
                Some(items) => items
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| ran(s))
                    .map(|(j, _)| format!("{}[{j}]", view.id))
                    .collect(),
                None if ran(&view.status) => vec![view.id.clone()],
                None => Vec::new(),
            };
            for work in works {
                out.child_runs += 1;
                if !out.workflows.iter().any(|w| w == uses.value.as_str()) {
                    out.workflows.push(uses.value.to_string());
                }
                let child = crate::runtime::engine::child_run_id(run_id, &work);
                Exercised::of(engine, uses.value.as_str(), &child, depth + 1, out);
            }
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecStatus {
    /// The run is done.
    Done,
    /// The run failed (a step exhausted its retries, a template did not render).
    Failed,
    /// Exec stopped on a tool failure or an engine error; the run is still
    /// running and can be resumed with the same run id.
    Stopped,
    /// The run waits for a person, a time or an event that exec cannot
    /// give it here: it parked; answer it, then resume with the same run id.
    Waiting,
}

/// The outcome of [`exec`] (also the final `summary` event).
#[derive(Clone, Debug)]
pub struct ExecReport {
    pub status: ExecStatus,
    /// The workflow's id.
    pub workflow: String,
    /// The workflow as it was given (an id or a path).
    pub workflow_arg: String,
    pub run_id: String,
    /// Tool calls made (retries included).
    pub steps_run: usize,
    /// Why the run failed or exec stopped: `{error, details, step_id?}`.
    pub reason: Option<Value>,
    /// The engine's answer that finished the run (its summary and artifacts).
    pub last: Option<Progress>,
    /// The command that continues the run (when stopped).
    pub resume: Option<String>,
    pub duration_ms: u64,
    /// A dry run: what it exercised.
    pub exercised: Option<Exercised>,
    /// The waits the run parked on (status `waiting`).
    pub waiting: Vec<WaitView>,
}

/// Where events go: NDJSON, a progress bar, or nowhere.
pub type EventSink<'a> = &'a mut (dyn FnMut(&ExecEvent) + Send);

/// Engine tools that change nothing a dry run cares about: they really run
/// (those that read, and those that ask: a thought, a message).
fn safe_in_dry_run(call: &str) -> bool {
    ToolName::parse(call).map(ToolName::def).is_some_and(|t| t.mcp && (t.read_only() || t.asks))
}

/// Runs one instruction's call (or, in a dry run, answers it).
async fn perform(
    mux: &Multiplexer,
    instruction: &Instruction,
    dry_run: bool,
    workflow: &str,
    run_id: &str,
) -> ToolOutcome {
    let started = Instant::now();
    let call = instruction.call.as_deref();
    let answered =
        |output| ToolOutcome { ok: true, output, duration_ms: started.elapsed().as_millis() as u64 };
    // A `think` step with a success schema is a question for a model: in a
    // dry run it is answered from the schema, as the other calls are.
    // So is a `prompt.say` step with one: the person shown it answers.
    let thought_with_schema =
        |c: &str| ToolName::parse(c).is_some_and(|t| t.def().asks) && !instruction.success_schema.is_null();
    match call {
        // A question for a model, outside a dry run: the configured model answers.
        Some(c) if !dry_run && thought_with_schema(c) && mux.has_model() => {
            let input = &instruction.input;
            let prompt = ["thought", "message", "text"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .map_or_else(|| input.to_string(), str::to_owned);
            let schema = mux.engine().success_schema_of(instruction);
            mux.call("model.generate", json!({"prompt": prompt, "schema": schema})).await
        }
        Some(c) if !dry_run || (safe_in_dry_run(c) && !thought_with_schema(c)) => {
            let mut args = instruction.input.clone();
            // A thought of a step belongs to its run.
            if ToolName::parse(c).is_some_and(|t| t.as_str() == "think")
                && let Some(obj) = args.as_object_mut()
                && !obj.contains_key("run_id")
            {
                obj.insert("workflow".into(), json!(workflow));
                obj.insert("run_id".into(), json!(run_id));
            }
            mux.call(c, args).await
        }
        _ if dry_run => {
            let mut schema = mux.engine().output_type_of(instruction);
            if schema == json!({})
                && let Some(local) = call.and_then(crate::agent::mux::local::Local::output_schema)
            {
                schema = local;
            }
            answered(sample::exercise(&schema))
        }
        _ => ToolOutcome {
            ok: false,
            output: failure(
                "NO_CALL",
                json!({"step_id": instruction.step_id, "message": "the step names no tool to call",
                       "help": "give the step a `call:`, or run the workflow with an LLM client"}),
            ),
            duration_ms: 0,
        },
    }
}

/// The steps of `workflow` and of every workflow it uses that need a model:
/// `think` or `prompt.say` with a success schema, `model.generate`. Each as
/// `` `judge` (think with a success schema) `` (`of WORKFLOW` below the top).
pub fn steps_needing_a_model(engine: &Engine, workflow: &str) -> Vec<String> {
    let Ok(top) = engine.workflow(workflow) else { return Vec::new() };
    let mut out = Vec::new();
    for cw in engine.with_callees(&top) {
        for s in &cw.wf.steps {
            let call = s.call.as_ref().map(|c| c.value.as_str()).unwrap_or("");
            let asks = ToolName::parse(call).is_some_and(|t| t.def().asks);
            let why = if asks && s.success_schema.is_some() {
                Some(format!("{call} with a success schema"))
            } else if crate::agent::mux::model::NAMES.contains(&call) {
                Some(call.to_owned())
            } else {
                None
            };
            if let Some(why) = why {
                let of = if cw.wf.id == top.wf.id { String::new() } else { format!(" of `{}`", cw.wf.id) };
                out.push(format!("`{}`{of} ({why})", s.id.value));
            }
        }
    }
    out
}

/// A failure before the run starts (bad workflow, params, config): a usage error.
#[derive(Debug)]
pub struct UsageError(pub EngineError);

/// Fills missing params that have no default with samples of their
/// schemas (dry runs need no input: an optional param left null would stop
/// the first template that reads it).
fn dry_run_params(engine: &Engine, workflow: &str, params: Value) -> Result<Value, EngineError> {
    let cw = engine.workflow(workflow)?;
    let mut params = match params {
        Value::Null => serde_json::Map::new(),
        Value::Object(m) => m,
        other => return Ok(other),
    };
    for p in cw.wf.params.iter().filter(|p| p.required || p.schema.get("default").is_none()) {
        params.entry(p.name.value.clone()).or_insert_with(|| sample::exercise(&p.schema));
    }
    Ok(Value::Object(params))
}

/// Runs (or resumes) a workflow to the end, a failure, or a stop.
pub async fn exec(
    mux: Arc<Multiplexer>,
    options: &ExecOptions,
    events: EventSink<'_>,
) -> Result<ExecReport, UsageError> {
    let started = Instant::now();
    let engine = mux.engine().clone();
    let workflow = options.workflow.as_str();
    let jobs = options.jobs.max(1);
    let run_id = options.run_id.clone().unwrap_or_else(new_run_id);
    let resumed = options.run_id.is_some() && engine.run_exists(workflow, &run_id);
    if resumed && !options.params.is_null() {
        tracing::warn!(run_id, "--params is ignored: a resumed run keeps the params it started with");
    }
    if !options.dry_run && !mux.has_model() {
        refuse_without_a_model(&engine, workflow)?;
    }
    let params = if options.dry_run && !resumed {
        dry_run_params(&engine, workflow, options.params.clone()).map_err(UsageError)?
    } else {
        options.params.clone()
    };
    let mut report = ExecReport::new(workflow, &run_id);
    let response = match engine.plan(workflow, params, Some(&run_id), false) {
        Ok(r) => r,
        Err(e)
            if e.run_failed()
                || matches!(
                    e.code,
                    ErrorCode::StateConflict | ErrorCode::StateCorrupt | ErrorCode::StateIo
                ) =>
        {
            report.status = if e.run_failed() { ExecStatus::Failed } else { ExecStatus::Stopped };
            report.reason = Some(e.to_json());
            return Ok(finish(report, started, events));
        }
        Err(e) => return Err(UsageError(e)),
    };
    report.workflow = response.workflow.clone();
    events(&ExecEvent::RunStarted {
        workflow: report.workflow.clone(),
        run_id: run_id.clone(),
        resumed,
        dry_run: options.dry_run,
        jobs,
        completed: response.state().completed as u64,
        pending: response.state().pending as u64,
    });
    let mut drive = Drive { mux: &mux, engine: &engine, options, run_id: &run_id, refused: HashMap::new() };
    Ok(drive.run(report, response, started, events).await)
}

/// A run exec drives, batch by batch, and why each step's last result was
/// refused: the same again stops exec.
struct Drive<'a> {
    mux: &'a Arc<Multiplexer>,
    engine: &'a Engine,
    options: &'a ExecOptions,
    run_id: &'a str,
    refused: HashMap<String, crate::runtime::error_details::ErrorDetails>,
}

impl Drive<'_> {
    /// Runs batches until the run is done, parks, fails or stops.
    async fn run(
        &mut self,
        mut report: ExecReport,
        mut response: Progress,
        started: Instant,
        events: EventSink<'_>,
    ) -> ExecReport {
        let (engine, options, run_id) = (self.engine, self.options, self.run_id);
        let workflow = options.workflow.as_str();
        loop {
            if response.is_done() {
                report.status = ExecStatus::Done;
                report.last = Some(response);
                if options.dry_run {
                    report.exercised = Some(Exercised::run(engine, &report.workflow, run_id));
                }
                return finish(report, started, events);
            }
            let batch = match wait::next_batch(engine, options, &mut response, run_id).await {
                wait::Batch::Run(b) => b,
                wait::Batch::Again(r) => {
                    response = r;
                    continue;
                }
                wait::Batch::Park(r) => return wait::parked(report, &r, started, events),
                wait::Batch::Stop(e) => return stop(report, e, started, events),
            };
            for i in &batch {
                events(&ExecEvent::StepStarted {
                    step_id: i.step_id.clone(),
                    call: i.call.clone(),
                    attempt: u64::from(i.attempt),
                });
            }
            let outcomes = run_batch(self.mux, &batch, options.dry_run, workflow, run_id).await;
            report.steps_run += outcomes.len();
            let (tool_failure, refresh) = match self.submit(&batch, outcomes, &mut response, events) {
                Ok(next) => next,
                Err(e) => return stop(report, e, started, events),
            };
            if let Some(reason) = tool_failure {
                report.reason = Some(reason);
                return finish(report, started, events);
            }
            if refresh {
                response = match engine.plan(workflow, Value::Null, Some(run_id), false) {
                    Ok(r) => r,
                    Err(e) => return stop(report, e, started, events),
                };
            }
        }
    }

    /// A batch's outcomes handed to the engine in order: a failed tool
    /// recorded (the first one's reason returned, the run ends with it), a
    /// result submitted (`response` follows), a refused one remembered
    /// (`true`: ask for the run again). `Err` stops the run.
    fn submit(
        &mut self,
        batch: &[Instruction],
        outcomes: Vec<ToolOutcome>,
        response: &mut Progress,
        events: &mut (dyn FnMut(&ExecEvent) + Send),
    ) -> Result<(Option<Value>, bool), EngineError> {
        let (engine, workflow, run_id) = (self.engine, self.options.workflow.as_str(), self.run_id);
        let mut tool_failure = None;
        let mut refresh = false;
        for (instruction, outcome) in batch.iter().zip(outcomes) {
            let step_id = instruction.step_id.clone();
            let finished = |status, error: Option<&Value>| ExecEvent::StepFinished {
                step_id: step_id.clone(),
                call: instruction.call.clone(),
                attempt: u64::from(instruction.attempt),
                status,
                duration_ms: outcome.duration_ms,
                error: error.cloned(),
            };
            if !outcome.ok {
                events(&finished(StepStatus::Failed, Some(&outcome.output)));
                record_failure(engine, workflow, run_id, &step_id, &outcome.output);
                let mut reason = outcome.output.clone();
                reason["step_id"] = json!(step_id);
                tool_failure.get_or_insert(reason);
                continue;
            }
            let submitted = engine.next(NextArgs {
                workflow: workflow.to_owned(),
                run_id: run_id.to_owned(),
                step_id: step_id.clone(),
                result_snapshot: Some(outcome.output),
                ..NextArgs::default()
            });
            match submitted {
                Ok(r) => {
                    events(&finished(StepStatus::Done, None));
                    *response = r;
                }
                Err(e) if e.code == ErrorCode::ValidationFailed && !e.run_failed() => {
                    events(&finished(StepStatus::Invalid, Some(&e.to_json())));
                    if self.refused.get(&step_id) == Some(&*e.details) {
                        return Err(same_answer_again(instruction));
                    }
                    self.refused.insert(step_id.clone(), *e.details.clone());
                    refresh = true;
                }
                Err(e) => {
                    let status = if e.run_failed() { StepStatus::Invalid } else { StepStatus::Failed };
                    events(&finished(status, Some(&e.to_json())));
                    return Err(e);
                }
            }
        }
        Ok((tool_failure, refresh))
    }
}

impl ExecReport {
    /// A run not started yet: stopped, nothing run.
    fn new(workflow: &str, run_id: &str) -> ExecReport {
        ExecReport {
            status: ExecStatus::Stopped,
            workflow: workflow.to_owned(),
            workflow_arg: workflow.to_owned(),
            run_id: run_id.to_owned(),
            steps_run: 0,
            reason: None,
            last: None,
            resume: None,
            duration_ms: 0,
            exercised: None,
            waiting: Vec::new(),
        }
    }
}

/// Steps only a model can answer, and no model: refused before anything
/// runs (`MODEL_NOT_CONFIGURED`), every such step named.
fn refuse_without_a_model(engine: &Engine, workflow: &str) -> Result<(), UsageError> {
    let needing = steps_needing_a_model(engine, workflow);
    if needing.is_empty() {
        return Ok(());
    }
    let (who, verb) = if needing.len() == 1 { ("a step", "needs") } else { ("these steps", "need") };
    Err(UsageError(EngineError::message_help(
        ErrorCode::ModelNotConfigured,
        format!("{who} {verb} a model to answer, and no model is configured: {}", needing.join(", ")),
        Some(
            "give exec a model: --backend ollama|openai and --model NAME (or OLLAMA_HOST / \
             OPENAI_BASE_URL), as for `run`; or try it with --dry-run, which answers them from \
             their schemas; or drive the run with an LLM client (`savant-think serve`)"
                .into(),
        ),
    )))
}

/// A step whose call's result was refused twice for the same reasons:
/// retrying would only be refused again.
fn same_answer_again(instruction: &Instruction) -> EngineError {
    let call = instruction.call.as_deref().unwrap_or("its tool");
    EngineError::message_help(
        ErrorCode::ValidationFailed,
        format!(
            "`{}`: what `{call}` returned was refused by its success schema twice, for the same \
             reasons; a retry would be refused again, so exec stops here",
            instruction.step_id
        ),
        Some(format!(
            "a step with a success schema needs a call that can answer it: fix what `{call}` returns \
             (or the schema), or run the workflow with an LLM client; then resume with the same run id"
        )),
    )
}

/// Runs a batch of instructions, concurrently when there are several; the
/// outcomes come back in the batch's order.
async fn run_batch(
    mux: &Arc<Multiplexer>,
    batch: &[Instruction],
    dry_run: bool,
    workflow: &str,
    run_id: &str,
) -> Vec<ToolOutcome> {
    if let [one] = batch {
        return vec![perform(mux, one, dry_run, workflow, run_id).await];
    }
    let handles: Vec<_> = batch
        .iter()
        .map(|i| {
            let (mux, i, workflow, run_id) = (mux.clone(), i.clone(), workflow.to_owned(), run_id.to_owned());
            tokio::spawn(async move { perform(&mux, &i, dry_run, &workflow, &run_id).await })
        })
        .collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap_or_else(|e| ToolOutcome {
            ok: false,
            output: failure("INTERNAL", json!({"message": format!("the call did not complete: {e}")})),
            duration_ms: 0,
        }));
    }
    out
}

/// Records a tool failure in the run's history (best effort: the failure is
/// reported either way).
fn record_failure(engine: &Engine, workflow: &str, run_id: &str, step_id: &str, output: &Value) {
    let code = output["error"].as_str().unwrap_or("TOOL_FAILED");
    let message = output["details"]["message"].as_str().unwrap_or("");
    let thought = format!("exec: step `{step_id}` failed: {code} {message}");
    if let Err(e) = engine.think(thought.trim(), Some((workflow, run_id))) {
        tracing::warn!("cannot record the failure in the run: {e}");
    }
}

fn stop(mut report: ExecReport, e: EngineError, started: Instant, events: EventSink<'_>) -> ExecReport {
    report.status = if e.run_failed() { ExecStatus::Failed } else { ExecStatus::Stopped };
    report.reason = Some(e.to_json());
    finish(report, started, events)
}

fn finish(mut report: ExecReport, started: Instant, events: EventSink<'_>) -> ExecReport {
    report.duration_ms = started.elapsed().as_millis() as u64;
    if matches!(report.status, ExecStatus::Stopped | ExecStatus::Waiting) {
        report.resume = Some(format!(
            "savant-think exec {} --run-id {}",
            shell_word(&report.workflow_arg),
            report.run_id
        ));
    }
    events(&ExecEvent::summary(&report));
    report
}

/// `word` quoted for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
