//! What `exec` reports as it goes: [`ExecEvent`]s, printed as NDJSON
//! (`--json`, one object per line on stdout) or drawn as a progress bar
//! (stderr, on a terminal only). The schema is documented in docs/exec.md.

use crate::agent::exec::{ExecReport, ExecStatus};
use crate::runtime::reply::ProgressStatus;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::Value;
use std::io::{IsTerminal, Write};

/// How a step's call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// The result was accepted.
    Done,
    /// The result failed its success schema; the step runs again (or, out of
    /// retries, the run failed).
    Invalid,
    /// The tool failed (or the engine refused the result); nothing was submitted.
    Failed,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ExecEvent {
    RunStarted {
        workflow: String,
        run_id: String,
        /// The run existed: it continues where it stopped.
        resumed: bool,
        dry_run: bool,
        jobs: usize,
        /// Steps already finished.
        completed: u64,
        pending: u64,
    },
    StepStarted {
        step_id: String,
        call: Option<String>,
        attempt: u64,
    },
    StepFinished {
        step_id: String,
        call: Option<String>,
        attempt: u64,
        status: StepStatus,
        duration_ms: u64,
        /// `{error, details}` unless done.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
    },
    Summary {
        status: ExecStatus,
        workflow: String,
        run_id: String,
        steps_run: usize,
        duration_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<Value>,
        /// The engine's summary and artifacts (when done).
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        artifacts: Option<Value>,
        /// The command that resumes the run (when stopped).
        #[serde(skip_serializing_if = "Option::is_none")]
        resume: Option<String>,
        /// A dry run: what of the workflow it exercised.
        #[serde(skip_serializing_if = "Option::is_none")]
        exercised: Option<Box<super::Exercised>>,
        /// The waits the run parked on (status `waiting`), each with `how` to end it.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        waiting: Vec<crate::runtime::reply::WaitView>,
    },
}

impl ExecEvent {
    pub fn summary(r: &ExecReport) -> ExecEvent {
        let done = r.last.as_ref().and_then(|p| match &p.status {
            ProgressStatus::Done { summary, artifacts, .. } => Some((summary, artifacts)),
            ProgressStatus::Running { .. } => None,
        });
        ExecEvent::Summary {
            status: r.status,
            workflow: r.workflow.clone(),
            run_id: r.run_id.clone(),
            steps_run: r.steps_run,
            duration_ms: r.duration_ms,
            reason: r.reason.clone(),
            summary: done.and_then(|(s, _)| serde_json::to_value(s).ok()),
            artifacts: done.map(|(_, a)| Value::Object(a.clone())),
            resume: r.resume.clone(),
            exercised: r.exercised.clone().map(Box::new),
            waiting: r.waiting.clone(),
        }
    }
}

/// Prints each event as one JSON line on stdout.
pub fn ndjson() -> impl FnMut(&ExecEvent) + Send {
    let mut line = Vec::new();
    move |e: &ExecEvent| {
        line.clear();
        if serde_json::to_writer(&mut line, e).is_ok() {
            line.push(b'\n');
            let mut out = std::io::stdout().lock();
            // A closed pipe is not worth a panic.
            let _ = out.write_all(&line);
            let _ = out.flush();
        }
    }
}

/// A progress bar on stderr (hidden unless stderr is a terminal), and a
/// human-readable summary at the end.
pub fn progress() -> impl FnMut(&ExecEvent) + Send {
    progress_with(true)
}

/// [`progress`] for a caller that prints its own answer (`run` handing a
/// goal to a workflow): the last line goes to stderr with the rest, so
/// stdout holds the answer once.
pub fn progress_quiet() -> impl FnMut(&ExecEvent) + Send {
    progress_with(false)
}

fn progress_with(summary_to_stdout: bool) -> impl FnMut(&ExecEvent) + Send {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} steps  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let tty = std::io::stderr().is_terminal();
    // A hidden bar prints nothing: without a terminal, notes go to stderr as lines.
    let note = move |bar: &ProgressBar, line: String| {
        if tty {
            bar.println(line);
        } else {
            eprintln!("{line}");
        }
    };
    move |e: &ExecEvent| match e {
        ExecEvent::RunStarted { workflow, run_id, resumed, completed, pending, .. } => {
            bar.set_length(completed + pending);
            bar.set_position(*completed);
            let verb = if *resumed { "resuming" } else { "running" };
            note(&bar, format!("{verb} {workflow}, run {run_id}"));
        }
        ExecEvent::StepStarted { step_id, call, .. } => {
            bar.set_message(format!("{step_id} ({})", call.as_deref().unwrap_or("no call")));
        }
        ExecEvent::StepFinished { step_id, status, error, .. } => match status {
            StepStatus::Done => {
                // Foreach items are not counted in the length: stay within it.
                if !step_id.contains('[') && bar.position() < bar.length().unwrap_or(0) {
                    bar.inc(1);
                }
            }
            _ => note(&bar, format!("{step_id}: {}", one_line(error.as_ref()))),
        },
        ExecEvent::Summary {
            status, workflow, run_id, reason, summary, resume, exercised, waiting, ..
        } => {
            bar.finish_and_clear();
            let mut out: Box<dyn std::io::Write> = if summary_to_stdout {
                Box::new(std::io::stdout().lock())
            } else {
                Box::new(std::io::stderr().lock())
            };
            let _ = match status {
                ExecStatus::Done => writeln!(
                    out,
                    "done: {workflow} run {run_id}: {}",
                    summary.as_ref().and_then(|s| s["message"].as_str()).unwrap_or("")
                ),
                ExecStatus::Failed => {
                    writeln!(out, "failed: {workflow} run {run_id}: {}", one_line(reason.as_ref()))
                }
                ExecStatus::Stopped => writeln!(
                    out,
                    "stopped: {workflow} run {run_id}: {}\nresume with: {}",
                    one_line(reason.as_ref()),
                    resume.as_deref().unwrap_or("")
                ),
                ExecStatus::Waiting => writeln!(
                    out,
                    "waiting: {workflow} run {run_id}\n{}then resume with: {}",
                    waits_text(waiting),
                    resume.as_deref().unwrap_or("")
                ),
            };
            if let Some(e) = exercised {
                let _ = writeln!(out, "dry run exercised: {}", e.describe());
            }
        }
    }
}

/// Each wait a run parked on, as lines: what it waits for and how to end it.
fn waits_text(waiting: &[crate::runtime::reply::WaitView]) -> String {
    let mut text = String::new();
    for w in waiting {
        let what = match (w.ask.as_deref(), w.event.as_deref()) {
            (Some(ask), _) => format!("asks {ask:?}"),
            (None, Some(event)) => format!("waits for event {event}"),
            _ => "sleeps".to_owned(),
        };
        let until = w.deadline.as_deref().map(|d| format!(" (until {d})")).unwrap_or_default();
        text.push_str(&format!("  {}: {what}{until}\n    {}\n", w.step_id, w.how));
    }
    text
}

/// `{error, details: {message, url?, hint?|help?}}` as `CODE: message (url)`,
/// then `help: …` on its own line when the details have one.
fn one_line(error: Option<&Value>) -> String {
    let Some(e) = error else { return String::new() };
    let code = e["error"].as_str().unwrap_or("ERROR");
    let step = e["step_id"].as_str().map(|s| format!(" (step {s})")).unwrap_or_default();
    let d = &e["details"];
    let mut message = crate::runtime::error_details::details_message(d);
    if let Some(url) = d["url"].as_str().filter(|u| !message.contains(u)) {
        message.push_str(&format!(" ({url})"));
    }
    let help = d["hint"].as_str().or_else(|| d["help"].as_str()).filter(|h| !h.is_empty());
    match help {
        Some(h) => format!("{code}{step}: {message}\n  help: {h}"),
        None => format!("{code}{step}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use serde_json::json;

    #[test]
    fn a_stop_line_keeps_the_url_and_the_hint() {
        let e = json!({"error": "BACKEND_UNREACHABLE", "step_id": "pick",
                       "details": {"url": "http://127.0.0.1:9/api/chat", "message": "cannot connect: refused",
                                   "hint": "is Ollama running?"}});
        assert_eq!(
            one_line(Some(&e)),
            "BACKEND_UNREACHABLE (step pick): cannot connect: refused (http://127.0.0.1:9/api/chat)\n  help: is Ollama running?"
        );
        let e = json!({"error": "INVALID_PARAMS", "details": [{"path": "/n", "message": "not an integer"}]});
        assert_eq!(one_line(Some(&e)), "INVALID_PARAMS: at /n: not an integer");
        assert_eq!(one_line(None), "");
    }
}
