//! What exec does when the run waits and no step is ready (docs/exec.md,
//! "Waits"), one wait at a time:
//!
//! - `--dry-run`: every wait ends at once — an `await:` is answered with a
//!   sample of its schema, an event is sent with a sample of its declared
//!   payload, a sleep or timeout fires now ([`Engine::fire_wait_now`]).
//! - A person's question (`await:`), when stdin is a terminal: asked on it
//!   (the question on stderr, the answer read as one line of JSON; `y`/`n`
//!   for a yes/no schema; plain text for a string), checked by the engine's
//!   `answer`, asked again on VALIDATION_FAILED. An empty line or end of
//!   input leaves it waiting.
//! - The earliest deadline (a sleep's end, a timeout) within `--max-wait`:
//!   slept in process (jumped over on a test clock, `runtime::clock`); the
//!   next engine call applies the due timer.
//! - Otherwise the run parks: exec ends with status `waiting`, each wait
//!   listed with how to end it and how to resume.
//!
//! Before each batch, [`StopCheck`] (when given) is asked whether to stop:
//! the steps in flight have finished and their results are recorded, so
//! exec stops there (`TASK_CANCELLED`, the run resumable).

use super::{EventSink, ExecOptions, ExecReport, ExecStatus, finish, sample};
use crate::runtime::args::{AnswerArgs, SignalArgs};
use crate::runtime::clock;
use crate::runtime::reply::WaitView;
use crate::runtime::reply::{Instruction, Progress};
use crate::runtime::{Engine, EngineError, ErrorCode};
use serde_json::{Value, json};
use std::time::Duration;
use std::time::Instant;

/// Asked before each batch whether exec should stop there (an MCP task
/// cancelled): cooperative, the steps in flight have finished.
#[derive(Clone)]
pub struct StopCheck(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for StopCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopCheck(..)")
    }
}

/// What to do next in exec's loop.
pub(super) enum Batch {
    /// Run these instructions.
    Run(Vec<Instruction>),
    /// Look at this progress again (done, or steps ready after a wait).
    Again(Progress),
    /// The run waits and nothing here can end it: park.
    Park(Progress),
    /// Stop with this error.
    Stop(EngineError),
}

/// The next instructions to run: the response's, or up to `jobs` ready
/// ones; when none is ready, the run's waits are looked at (this module).
pub(super) async fn next_batch(
    engine: &Engine,
    options: &ExecOptions,
    response: &mut Progress,
    run_id: &str,
) -> Batch {
    let workflow = options.workflow.as_str();
    if options.stop.as_ref().is_some_and(|stop| (stop.0)()) {
        return Batch::Stop(EngineError::message_help(
            ErrorCode::TaskCancelled,
            "the run's task was cancelled: exec stopped after the steps in flight",
            Some("resume the run with the same run id (think_exec {workflow, run_id})".into()),
        ));
    }
    let batch = match options.jobs.max(1) {
        // Moved, not copied: the loop replaces `response` after the batch.
        1 => response.take_instruction().into_iter().collect(),
        jobs => match engine.ready_instructions(workflow, run_id, jobs) {
            Ok(b) => b,
            Err(e) => return Batch::Stop(e),
        },
    };
    if !batch.is_empty() {
        return Batch::Run(batch);
    }
    // Nothing ready: the run waits (or is stuck). Plan again to see it now.
    let now = match engine.plan(workflow, Value::Null, Some(run_id), false) {
        Ok(r) => r,
        Err(e) => return Batch::Stop(e),
    };
    if now.is_done() || now.instruction().is_some() {
        return Batch::Again(now);
    }
    if now.waiting().is_empty() {
        return Batch::Stop(EngineError::message(
            ErrorCode::NoReadyStep,
            "the run is not done but no step is ready",
        ));
    }
    match settle(engine, options, run_id, now.waiting()).await {
        Settled::Again => Batch::Again(now),
        Settled::Park => Batch::Park(now),
        Settled::Stop(e) => Batch::Stop(e),
    }
}

/// The run parked on the waits of `progress`: status `waiting`.
pub(super) fn parked(
    mut report: ExecReport,
    progress: &Progress,
    started: Instant,
    events: EventSink<'_>,
) -> ExecReport {
    report.status = ExecStatus::Waiting;
    report.waiting = progress.waiting().to_vec();
    finish(report, started, events)
}

/// What to do after a wait was looked at.
pub(super) enum Settled {
    /// Something changed (or time passed): plan again.
    Again,
    /// Nothing here can end these waits: exec ends, the run parked.
    Park,
    /// The engine refused: exec stops with it.
    Stop(EngineError),
}

/// Ends one of `waiting` (see the module), or says the run parks.
pub(super) async fn settle(
    engine: &Engine,
    options: &ExecOptions,
    run_id: &str,
    waiting: &[WaitView],
) -> Settled {
    let workflow = options.workflow.as_str();
    if options.dry_run {
        let Some(w) = waiting.first() else { return Settled::Park };
        return match end_now(engine, workflow, run_id, w) {
            Ok(()) => Settled::Again,
            Err(e) => Settled::Stop(e),
        };
    }
    if options.ask_on_tty
        && let Some(w) = waiting.iter().find(|w| w.wait == "answer")
    {
        return ask_on_tty(engine, workflow, run_id, w).await;
    }
    let now = clock::now();
    let earliest = waiting.iter().filter_map(|w| w.deadline.as_deref().and_then(clock::parse_time)).min();
    match earliest {
        Some(at) if at.duration_since(now).unwrap_or_default() <= options.max_wait => {
            // Deadlines are whole seconds: a little past it, the timer is due.
            // A test clock jumps over the wait rather than sleeping through it.
            if !clock::advance_to(at) {
                let left = at.duration_since(now).unwrap_or_default();
                tokio::time::sleep(left + Duration::from_millis(50)).await;
            }
            Settled::Again
        }
        _ => Settled::Park,
    }
}

/// A dry run's end of wait `w`: a sampled answer or event, or its timer now.
fn end_now(engine: &Engine, workflow: &str, run_id: &str, w: &WaitView) -> Result<(), EngineError> {
    match w.wait.as_str() {
        "answer" => {
            let value = sample::exercise(&engine.answer_schema_of(w));
            engine.answer(answer_args(workflow, run_id, w, value)).map(drop)
        }
        "event" => {
            let event = w.event.clone().unwrap_or_default();
            let payload = sample::exercise(&engine.event_schema(&event).unwrap_or_else(|| json!({})));
            let (wf, run) = match &w.sub_run {
                Some(sub) => (sub.workflow.clone(), sub.run_id.clone()),
                None => (workflow.to_owned(), run_id.to_owned()),
            };
            let args = SignalArgs {
                event,
                key: w.key.clone(),
                payload: Some(payload),
                workflow: Some(wf),
                run_id: Some(run),
                ..SignalArgs::default()
            };
            engine.signal(args).map(drop)
        }
        _ => engine.fire_wait_now(workflow, run_id, &w.step_id).map(drop),
    }
}

/// Asks wait `w`'s question on the terminal until the engine takes an answer.
async fn ask_on_tty(engine: &Engine, workflow: &str, run_id: &str, w: &WaitView) -> Settled {
    let schema = engine.answer_schema_of(w);
    let yes_no = yes_no_field(&schema);
    let hint = match &yes_no {
        Some(_) => "[y/n]".to_owned(),
        None => format!("(JSON for {})", one_line_schema(&schema)),
    };
    let question = w.ask.clone().unwrap_or_else(|| format!("answer for `{}`", w.step_id));
    let mut prompt = format!("{}: {question} {hint} ", w.step_id);
    loop {
        let shown = prompt.clone();
        let line = tokio::task::spawn_blocking(move || read_line(&shown)).await.ok().flatten();
        let Some(line) = line.filter(|l| !l.trim().is_empty()) else { return Settled::Park };
        let value = match parse_answer(line.trim(), &schema, yes_no.as_ref()) {
            Ok(v) => v,
            Err(why) => {
                prompt = format!("{why}; again: ");
                continue;
            }
        };
        match engine.answer(answer_args(workflow, run_id, w, value)) {
            Ok(_) => return Settled::Again,
            Err(e) if e.code == ErrorCode::ValidationFailed && !e.run_failed() => {
                let why = e.describe();
                prompt = format!("not a valid answer: {why}; again: ");
            }
            Err(e) if e.run_failed() => return Settled::Stop(e),
            // Its timeout passed meanwhile (the step is no longer waiting): plan again.
            Err(e) if e.code == ErrorCode::StepNotWaiting => return Settled::Again,
            Err(e) => return Settled::Stop(e),
        }
    }
}

/// `value` as the answer to wait `w` of the run.
fn answer_args(workflow: &str, run_id: &str, w: &WaitView, value: Value) -> AnswerArgs {
    AnswerArgs {
        workflow: workflow.into(),
        run_id: run_id.to_owned(),
        step_id: w.step_id.clone(),
        value,
        expected_version: None,
    }
}

/// Prints `prompt` on stderr and reads one line of stdin (`None` at its end).
fn read_line(prompt: &str) -> Option<String> {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// For a yes/no schema — `{type: boolean}`, or an object whose one
/// property is a boolean — the property's name (`""` for the boolean itself).
pub(super) fn yes_no_field(schema: &Value) -> Option<String> {
    if schema["type"] == "boolean" {
        return Some(String::new());
    }
    let props = schema["properties"].as_object()?;
    match props.iter().collect::<Vec<_>>().as_slice() {
        [(name, p)] if p["type"] == "boolean" => Some((*name).clone()),
        _ => None,
    }
}

/// A typed line as the answer: `y`/`n` for a yes/no schema, a JSON value,
/// or the text itself when the schema wants a string.
pub(super) fn parse_answer(line: &str, schema: &Value, yes_no: Option<&String>) -> Result<Value, String> {
    if let Some(field) = yes_no {
        let yes = match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Some(true),
            "n" | "no" | "false" => Some(false),
            _ => None,
        };
        if let Some(yes) = yes {
            return Ok(if field.is_empty() { json!(yes) } else { json!({ field.as_str(): yes }) });
        }
    }
    match serde_json::from_str::<Value>(line) {
        Ok(v) => Ok(v),
        Err(_) if schema["type"] == "string" => Ok(Value::String(line.to_owned())),
        Err(e) => Err(format!("not JSON ({e})")),
    }
}

/// A schema on one line, cut to 120 characters.
fn one_line_schema(schema: &Value) -> String {
    let text = schema.to_string();
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_no_answers_and_json_answers() {
        let approve = json!({"type": "object", "properties": {"approved": {"type": "boolean"}}});
        let field = yes_no_field(&approve);
        assert_eq!(field.as_deref(), Some("approved"));
        assert_eq!(parse_answer("Y", &approve, field.as_ref()), Ok(json!({"approved": true})));
        assert_eq!(parse_answer("no", &approve, field.as_ref()), Ok(json!({"approved": false})));
        let two =
            json!({"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "string"}}});
        assert_eq!(yes_no_field(&two), None);
        assert_eq!(parse_answer(r#"{"a": true}"#, &two, None), Ok(json!({"a": true})));
        assert!(parse_answer("y", &two, None).unwrap_err().starts_with("not JSON"));
        assert_eq!(yes_no_field(&json!({"type": "boolean"})).as_deref(), Some(""));
        assert_eq!(parse_answer("y", &json!({}), Some(&String::new())), Ok(json!(true)));
        assert_eq!(parse_answer("ship it", &json!({"type": "string"}), None), Ok(json!("ship it")));
    }
}
