//! The step panel (a step of a run: its rendered instruction, result,
//! captures, every attempt, its YAML with `check`'s diagnostics) and the
//! workflow source (the file with its diagnostics, and the diff to the file
//! on disk when the run is pinned to an older version).

use crate::diagnostic::Diagnostic;
use crate::runtime::engine::RunSnapshot;
use crate::runtime::reply::{Explanation, ItemView, WaitView};
use crate::runtime::run::{EventKind, RunStatus, StepStatus};
use crate::runtime::workflow::CompiledWorkflow;
use crate::runtime::{Engine, EngineError};
use crate::source::{SourceFile, Span};
use serde::Serialize;
use serde_json::{Map, Value};

/// One step of a run, everything about it.
#[derive(Clone, Debug, Serialize)]
pub struct StepPanel {
    /// The step id.
    pub id: String,
    /// The tool it calls (empty for a `uses:` step).
    pub call: String,
    /// The workflow a `uses:` step runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uses: Option<String>,
    /// Its status.
    pub status: StepStatus,
    /// Results refused by validation so far.
    pub attempts: u32,
    /// Why it has its status (what it waits for, why it failed), as `explain` says.
    pub why: Option<String>,
    /// The steps it waits for (written and inferred).
    pub deps: Vec<String>,
    /// Those inferred from what it reads.
    pub inferred_deps: Vec<String>,
    /// Its `when`.
    pub when: Option<String>,
    /// Its `foreach`.
    pub foreach: Option<String>,
    /// The capture its result is stored under.
    pub capture_as: Option<String>,
    /// The rendered input, once ready.
    pub input: Option<Value>,
    /// The instruction a driver gets for it, while it is ready.
    pub instruction: Option<Value>,
    /// The accepted result.
    pub result: Option<Value>,
    /// The captures it set: `{name: value}`.
    pub captures: Map<String, Value>,
    /// A foreach step's items.
    pub items: Option<Vec<ItemView>>,
    /// Its results and refused results, oldest first; for a `uses:` step,
    /// its child runs' too (`each[1]/ask`).
    pub events: Vec<StepEvent>,
    /// A `uses:` step's child runs, one per item (or one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildLink>,
    /// When it could start (its last dependency's result) and when its
    /// (last) result came, in milliseconds from the run's start.
    pub timing: Timing,
    /// What the step (or its items) waits for: the question and its
    /// schema, the deadline, the event (absent when it does not wait).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<WaitView>,
    /// The step's YAML in the version the run is pinned to.
    pub yaml: SourceExcerpt,
}

/// A step's place on the run's time axis (milliseconds from its start).
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// When its dependencies were done.
    pub from_ms: Option<u64>,
    /// When its (last) result was accepted.
    pub to_ms: Option<u64>,
}

/// A child run of a `uses:` step, as the parent's panel links it.
#[derive(Clone, Debug, Serialize)]
pub struct ChildLink {
    /// The parent's work it is the result of: `each` or `each[1]`.
    pub step_id: String,
    /// The workflow it runs.
    pub workflow: String,
    /// Its run id.
    pub run_id: String,
    /// Its status.
    pub status: RunStatus,
}

/// A result or refused result of a step (or of one of its items).
#[derive(Clone, Debug, Serialize)]
pub struct StepEvent {
    /// When (RFC 3339).
    pub at: String,
    /// The state version it made.
    pub version: u64,
    /// The step or item (`id[3]`).
    pub step_id: String,
    /// result or validation_failed.
    pub kind: &'static str,
    /// The validation errors: `[{path, message}]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
    /// How the payload caps shortened the result, if they did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Value>,
}

/// Some lines of a file, with the diagnostics inside them.
#[derive(Clone, Debug, Serialize)]
pub struct SourceExcerpt {
    /// The number of the first line shown (from 1).
    pub first_line: usize,
    /// The lines.
    pub text: String,
    /// `check`'s diagnostics within them.
    pub diagnostics: Vec<DiagView>,
}

/// A diagnostic placed by line and column (in characters, from 1).
#[derive(Clone, Debug, Serialize)]
pub struct DiagView {
    /// The stable code (UNRESOLVED_VAR, …).
    pub code: &'static str,
    /// error or warning.
    pub severity: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Where it starts.
    pub line: usize,
    /// Where it starts.
    pub column: usize,
    /// Where it ends.
    pub end_line: usize,
    /// Where it ends (exclusive).
    pub end_column: usize,
}

fn diag_view(source: &SourceFile, d: &Diagnostic) -> DiagView {
    let start = source.line_col(d.span.start as usize);
    let end = source.line_col(d.span.end as usize);
    DiagView {
        code: d.code.as_str(),
        severity: d.severity.as_str(),
        message: d.message.clone(),
        help: d.help.clone(),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
    }
}

/// `check`'s diagnostics of a text, placed by line and column.
pub fn diagnostics(engine: &Engine, path: &str, text: &str) -> Vec<DiagView> {
    let checked = crate::check_str_with(path, text, &engine.project().check_config());
    checked.diagnostics.iter().map(|d| diag_view(&checked.source, d)).collect()
}

/// The whole lines of `source` that `span` touches.
fn excerpt(source: &SourceFile, span: Span, all: &[DiagView]) -> SourceExcerpt {
    let first = source.line_col(span.start as usize).line;
    let last = source.line_col((span.end as usize).saturating_sub(1).max(span.start as usize)).line;
    let text: Vec<&str> = source.text.lines().skip(first - 1).take(last + 1 - first).collect();
    let diagnostics = all.iter().filter(|d| d.line >= first && d.line <= last).cloned().collect();
    SourceExcerpt { first_line: first, text: text.join("\n"), diagnostics }
}

/// The panel of step `step_id` (a step id; `id[3]` shows its step) of a run.
pub fn step_panel(engine: &Engine, snapshot: &RunSnapshot, step_id: &str) -> Result<StepPanel, EngineError> {
    let st = &snapshot.state;
    let base = step_id.split('[').next().unwrap_or(step_id);
    // `explain` says why, renders the instruction and refuses an unknown
    // step with its did-you-mean.
    let explained = engine.explain(&st.workflow, Some(&st.run_id), Some(base))?;
    let Explanation::Run(run) = explained else {
        return Err(EngineError::unknown_step(step_id, format!("no step `{base}`"), [], None));
    };
    let Some(ex) = run.step else {
        return Err(EngineError::unknown_step(step_id, format!("no step `{base}`"), [], None));
    };
    let cw: &CompiledWorkflow = &snapshot.workflow;
    let i = cw.wf.steps.iter().position(|s| s.id.value == base).unwrap_or(0);
    let view = st.steps.get(i).cloned();
    let mut events = events_of(st, base, "");
    let mut children = Vec::new();
    if let Some(uses) = &cw.wf.steps[i].uses {
        let works = view.as_ref().map_or_else(|| vec![base.to_owned()], |v| v.work_ids());
        for work in works {
            let run_id = crate::runtime::engine::child_run_id(&st.run_id, &work);
            let Ok(child) = engine.run_snapshot(uses.value.as_str(), &run_id) else { continue };
            let prefix = format!("{work}/");
            for s in &child.workflow.wf.steps {
                events.extend(events_of(&child.state, &s.id.value, &prefix));
            }
            children.push(ChildLink {
                step_id: work,
                workflow: child.state.workflow.clone(),
                run_id,
                status: child.state.status,
            });
        }
        events.sort_by(|a, b| a.at.cmp(&b.at));
    }
    let captures = match &ex.capture_as {
        Some(name) => st.captures.get(name).map(|v| (name.clone(), v.clone())).into_iter().collect(),
        None => Map::new(),
    };
    let all = diagnostics(engine, &cw.source.path, &cw.source.text);
    let row = super::view::timeline(Some(cw), st).rows.into_iter().nth(i);
    let timing = Timing { from_ms: row.as_ref().and_then(|r| r.from_ms), to_ms: row.and_then(|r| r.to_ms) };
    Ok(StepPanel {
        id: base.to_owned(),
        call: ex.call,
        uses: ex.uses,
        status: view.as_ref().map_or(StepStatus::Pending, |v| v.status),
        attempts: view.as_ref().map_or(0, |v| v.attempts),
        why: ex.why,
        deps: ex.deps,
        inferred_deps: ex.inferred_deps,
        when: ex.when,
        foreach: ex.foreach,
        capture_as: ex.capture_as,
        input: view.as_ref().and_then(|v| v.input.clone()),
        instruction: ex.instruction.and_then(|i| serde_json::to_value(i).ok()),
        result: view.as_ref().and_then(|v| v.result.clone()),
        captures,
        items: view.and_then(|v| v.items),
        events,
        children,
        timing,
        waiting: snapshot
            .waiting
            .iter()
            .filter(|w| w.step_id == base || w.step_id.strip_prefix(base).is_some_and(|r| r.starts_with('[')))
            .cloned()
            .collect(),
        yaml: excerpt(&cw.source, cw.wf.steps[i].span, &all),
    })
}

/// A workflow's source as a page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct SourceView {
    /// The workflow id.
    pub workflow: String,
    /// The file's path.
    pub path: String,
    /// The text shown: the version a run is pinned to, or the file as it is.
    pub text: String,
    /// `check`'s diagnostics of that text.
    pub diagnostics: Vec<DiagView>,
    /// Whether the file on disk differs from the text shown.
    pub differs: bool,
    /// The unified diff from the text shown to the file on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The file on disk's diagnostics, when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_diagnostics: Option<Vec<DiagView>>,
    /// Why the file on disk cannot be read, if it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_error: Option<Value>,
}

/// The source of a run's pinned version (`pinned`), or of the file as it
/// is (`None`), compared with the file on disk.
pub fn source_view(
    engine: &Engine,
    workflow: &str,
    pinned: Option<&CompiledWorkflow>,
) -> Result<SourceView, EngineError> {
    let current = engine.workflows_read(workflow);
    let (path, text) = match (pinned, &current) {
        (Some(cw), _) => (cw.path.display().to_string(), cw.source.text.clone()),
        (None, Ok(c)) => (c.path.clone(), c.yaml.clone()),
        (None, Err(e)) => return Err(e.clone()),
    };
    let diagnostics = diagnostics(engine, &path, &text);
    let mut view = SourceView {
        workflow: workflow.to_owned(),
        path,
        text,
        diagnostics,
        differs: false,
        diff: None,
        current_diagnostics: None,
        current_error: None,
    };
    match current {
        Ok(c) if c.yaml != view.text => {
            view.differs = true;
            let diff = similar::TextDiff::from_lines(&view.text, &c.yaml);
            view.diff = Some(
                diff.unified_diff().context_radius(3).header("pinned version", "file on disk").to_string(),
            );
            view.current_diagnostics = Some(self::diagnostics(engine, &c.path, &c.yaml));
        }
        Ok(_) => {}
        Err(e) => {
            view.differs = true;
            view.current_error = Some(e.to_json());
        }
    }
    Ok(view)
}

/// The results and refused results of step `base` (and its items) in `st`,
/// their ids under `prefix` (a child run's, `each[1]/`).
fn events_of(st: &crate::runtime::reply::FullState, base: &str, prefix: &str) -> Vec<StepEvent> {
    st.history
        .iter()
        .filter_map(|e| {
            let (id, kind, errors, truncated) = match &e.kind {
                EventKind::Result { step_id, truncated, .. } => {
                    (step_id, "result", None, truncated.as_ref().and_then(|t| serde_json::to_value(t).ok()))
                }
                EventKind::ValidationFailed { step_id, errors, .. } => {
                    (step_id, "validation_failed", Some(errors.clone()), None)
                }
                EventKind::ChildFailed { step_id, failure, .. } => {
                    (step_id, "child_failed", Some(failure.to_json()), None)
                }
                _ => return None,
            };
            let same = id == base || id.strip_prefix(base).is_some_and(|rest| rest.starts_with('['));
            same.then(|| StepEvent {
                at: e.at.clone(),
                version: e.version,
                step_id: format!("{prefix}{id}"),
                kind,
                errors,
                truncated,
            })
        })
        .collect()
}
