//! The auto-detect path of `run`: a goal that names a known workflow runs it
//! through `exec` (deterministic, no model), and the exec report becomes the
//! run's result. The same files are written as for a loop run: the session
//! (with the workflow's summary as `final`) and both logs.

use super::memory::{Session, StepRecord, cut};
use super::telemetry::Telemetry;
use super::{RunOptions, RunResult, RunStatus, StopReason};
use crate::agent::exec::{self, EventSink, ExecOptions, ExecReport, ExecStatus, UsageError};
use crate::agent::mux::Multiplexer;
use crate::runtime::reply::ProgressStatus;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// The ids of the workflows under the root that compile.
pub fn known_ids(engine: &crate::runtime::Engine) -> Vec<String> {
    engine.workflows_list(None).map(|l| l.valid_ids()).unwrap_or_default()
}

/// Runs `workflow` for `goal` through exec and reports it as a [`RunResult`]
/// (`stop_reason: "workflow"`; `final` is the workflow's summary or why it stopped).
/// What a workflow run that did not finish says: why, then what to do.
fn not_done(workflow: &str, run_id: &str, status: ExecStatus, reason: &Value) -> String {
    // `CODE: message` when the reason is an engine error, else its JSON.
    let said = match reason["error"].as_str() {
        Some(code) => {
            format!("{code}: {}", crate::runtime::error_details::details_message(&reason["details"]))
        }
        None if reason.is_null() => "see `savant-think state list --waiting`".to_owned(),
        None => reason.to_string(),
    };
    let next = if status == ExecStatus::Failed {
        // A failed run does not resume: it is reset, or the model takes the goal.
        format!(
            "reset it with `savant-think reset {workflow} --run-id {run_id}`, or set \
             SAVANT_DISABLE_WORKFLOW_AUTODETECT=1 to let the model pursue the goal"
        )
    } else {
        format!("resume with `savant-think exec {workflow} --run-id {run_id}`")
    };
    let how = match status {
        ExecStatus::Failed => "failed",
        ExecStatus::Waiting => "waits (for a person, a time or an event)",
        _ => "stopped",
    };
    format!("workflow `{workflow}` {how}: {}; {next}", cut(&said, 300))
}

pub async fn run_workflow(
    workflow: &str,
    goal: &str,
    params: Value,
    options: &RunOptions,
    mux: Arc<Multiplexer>,
    events: EventSink<'_>,
) -> RunResult {
    let started = Instant::now();
    let run_id = options.run_id.clone().unwrap_or_else(crate::runtime::engine::new_run_id);
    let mut telemetry = Telemetry::open(&options.root, &run_id, options.log_rotation).ok();
    let note = format!("the goal names the workflow `{workflow}`: running it through exec");
    if let Some(t) = telemetry.as_mut() {
        t.event(
            "run_started",
            json!({"goal": goal, "workflow": workflow, "mode": "workflow", "dry_run": options.dry_run}),
        );
        t.log(&format!("run started: {note} (SAVANT_DISABLE_WORKFLOW_AUTODETECT=1 turns this off)"));
    }
    let exec_options = ExecOptions {
        workflow: workflow.to_owned(),
        params,
        run_id: Some(run_id.clone()),
        dry_run: options.dry_run,
        jobs: 1,
        ..ExecOptions::default()
    };
    let (status, final_text, steps, error) =
        outcome(workflow, &run_id, exec::exec(mux, &exec_options, events).await);
    let record = StepRecord {
        step: 1,
        action: "tool".into(),
        tool_name: format!("exec {workflow}"),
        ok: Some(status == RunStatus::Ok),
        output: error.clone().unwrap_or(Value::Null),
        final_text: final_text.clone(),
        model: "workflow".into(),
        duration_ms: started.elapsed().as_millis() as u64,
        ..StepRecord::default()
    };
    let saved = save_session(&run_id, goal, &record, status, &final_text, options);
    if let Some(t) = telemetry.as_mut() {
        if let Err(e) = saved {
            t.log(&format!("cannot write {}: {e}", options.session_path().display()));
        }
        t.event(
            "run_finished",
            json!({"status": status.as_str(), "stop_reason": StopReason::Workflow.as_str(), "workflow": workflow,
                                       "steps": steps, "duration_ms": started.elapsed().as_millis() as u64}),
        );
        t.log(&format!(
            "run finished: {} (workflow {workflow}) after {steps} tool calls: {}",
            status.as_str(),
            cut(&final_text, 300)
        ));
    }
    RunResult {
        status,
        final_text,
        steps,
        run_id,
        stop_reason: StopReason::Workflow,
        error,
        transcript: vec![record],
    }
}

/// What the workflow's exec came to, as a run: its status, final text,
/// steps run and error.
fn outcome(
    workflow: &str,
    run_id: &str,
    result: Result<ExecReport, UsageError>,
) -> (RunStatus, String, usize, Option<Value>) {
    match result {
        Ok(report) => {
            let summary = report.last.as_ref().and_then(|p| match &p.status {
                ProgressStatus::Done { summary, .. } => Some(summary.message.clone()),
                ProgressStatus::Running { .. } => None,
            });
            match report.status {
                ExecStatus::Done => (
                    RunStatus::Ok,
                    summary.unwrap_or_else(|| format!("workflow `{workflow}` is done")),
                    report.steps_run,
                    None,
                ),
                other => {
                    let reason = report.reason.clone().unwrap_or(Value::Null);
                    let text = not_done(workflow, run_id, other, &reason);
                    (RunStatus::Error, text, report.steps_run, Some(reason))
                }
            }
        }
        Err(UsageError(e)) => {
            let text = format!(
                "the goal names the workflow `{workflow}`, which could not start ({}: {}); run it with \
                 `savant-think run … --params JSON` or `savant-think exec {workflow} --params JSON`, or set SAVANT_DISABLE_WORKFLOW_AUTODETECT=1 to let \
                 the model pursue the goal",
                e.code,
                e.describe()
            );
            (RunStatus::Error, text, 0, Some(e.to_json()))
        }
    }
}

/// The run's session file: the one exec step and how the run ended.
fn save_session(
    run_id: &str,
    goal: &str,
    record: &StepRecord,
    status: RunStatus,
    final_text: &str,
    options: &RunOptions,
) -> std::io::Result<()> {
    let mut session = Session::new(
        run_id,
        goal,
        humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
    );
    session.push(record, options.memory_tokens);
    session.status = status.as_str().into();
    session.final_text = Some(final_text.to_owned());
    session.save(&options.session_path())
}
