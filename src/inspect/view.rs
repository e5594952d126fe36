//! The inspector's views of runs — one typed model for two renderers: the
//! page's JSON API (`inspect::http`) and the terminal (`inspect::term`).
//! Everything here is read through the engine's public calls: the same
//! runs, statuses and errors `state list` and `state get` give.

use super::layout::{self, Sizes};
use crate::runtime::engine::RunSnapshot;
use crate::runtime::record::ForkedFrom;
use crate::runtime::reply::{EntryStatus, FullState, RunEntry, StepView, WaitView};
use crate::runtime::run::{RunStatus, StepStatus};
use crate::runtime::workflow::CompiledWorkflow;
use crate::runtime::{Engine, EngineError};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// What the runs page asks for.
#[derive(Clone, Debug, Default)]
pub struct RunsQuery {
    /// Only runs of this workflow.
    pub workflow: Option<String>,
    /// Only runs with this status (running, waiting, done, failed, unreadable).
    pub status: Option<String>,
    /// Only run ids containing this (case-insensitive).
    pub search: Option<String>,
    /// The page, from 1.
    pub page: usize,
    /// Runs per page (0 means [`DEFAULT_PER_PAGE`]; the page caps it at [`MAX_PER_PAGE`]).
    pub per_page: usize,
    /// The archived runs instead of the live ones.
    pub archived: bool,
}

/// Runs per page unless asked.
pub const DEFAULT_PER_PAGE: usize = 50;
/// The most runs one page shows.
pub const MAX_PER_PAGE: usize = 500;

/// One page of runs, newest change first.
#[derive(Clone, Debug, Serialize)]
pub struct RunsPage {
    /// The runs of this page.
    pub runs: Vec<RunRow>,
    /// How many runs match the filters, on every page.
    pub total: usize,
    /// This page (from 1).
    pub page: usize,
    /// Runs per page.
    pub per_page: usize,
    /// How many pages there are.
    pub pages: usize,
    /// The archived runs, if those were asked for.
    pub archived: bool,
    /// Every workflow id of the project and of the runs (for the filter).
    pub workflows: Vec<String>,
    /// How many matching runs have each status (before the status filter).
    pub statuses: BTreeMap<String, usize>,
}

/// One run of the list.
#[derive(Clone, Debug, Serialize)]
pub struct RunRow {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// running, done, failed or unreadable.
    pub status: String,
    /// The state version.
    pub version: Option<u64>,
    /// When it started (RFC 3339), when it could be read.
    pub created_at: Option<String>,
    /// When it last changed (RFC 3339).
    pub updated_at: Option<String>,
    /// The ready steps (the first 50).
    pub ready: Vec<String>,
    /// How many steps are ready.
    pub ready_total: usize,
    /// An archived copy: its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// Why the status may be stale, or why the run cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A sub-workflow's run: the run and the `uses:` step that started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<crate::runtime::record::ParentRun>,
    /// How far below its parent (listed just before it) the row is; 0 at the top.
    pub depth: usize,
    /// What its steps wait for: the question and the deadline (absent when none waits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<WaitView>,
}

/// A page of runs (see [`RunsQuery`]). Filtering and counting read the
/// listing `state list` makes; only the page's own runs are opened for
/// their start time and ready steps.
pub fn runs_page(engine: &Engine, query: &RunsQuery) -> Result<RunsPage, EngineError> {
    let workflow = query.workflow.as_deref().filter(|w| !w.is_empty());
    let listed =
        if query.archived { engine.state_list_archived(workflow)? } else { engine.state_list(workflow)? };
    let search = query.search.as_deref().map(str::to_lowercase).filter(|s| !s.is_empty());
    let mut matching: Vec<RunEntry> = listed
        .runs
        .into_iter()
        .filter(|r| search.as_deref().is_none_or(|s| r.run_id.to_lowercase().contains(s)))
        .collect();
    let mut statuses = BTreeMap::new();
    for r in &matching {
        *statuses.entry(status_of(r)).or_insert(0) += 1;
    }
    if let Some(want) = query.status.as_deref().filter(|s| !s.is_empty()) {
        matching.retain(|r| status_of(r) == want);
    }
    // Newest change first; the run id breaks ties, so pages are stable.
    // A child run follows its parent.
    matching.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.run_id.cmp(&b.run_id)));
    let depths = crate::runtime::reply_runs::group_children(&mut matching);
    let per_page = match query.per_page {
        0 => DEFAULT_PER_PAGE,
        n => n,
    };
    let total = matching.len();
    let pages = total.div_ceil(per_page).max(1);
    let page = query.page.clamp(1, pages);
    let mut workflows: Vec<String> = engine.project().ids();
    workflows.extend(engine.run_keys(None).unwrap_or_default().into_iter().map(|k| k.workflow));
    workflows.sort();
    workflows.dedup();
    let runs = matching
        .into_iter()
        .zip(depths)
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|(r, depth)| RunRow { depth, ..row(engine, r, query.archived) })
        .collect();
    Ok(RunsPage { runs, total, page, per_page, pages, archived: query.archived, workflows, statuses })
}

/// A run's status as the runs list shows and filters it: a running run
/// with a step waiting is `waiting`.
fn status_of(r: &RunEntry) -> String {
    if r.status == Some(EntryStatus::Run(RunStatus::Running)) && !r.waiting.is_empty() {
        return "waiting".to_owned();
    }
    r.status.as_ref().map_or("unreadable", EntryStatus::as_str).to_owned()
}

fn row(engine: &Engine, r: RunEntry, archived: bool) -> RunRow {
    let brief =
        (!archived && r.error.is_none()).then(|| engine.run_brief(&r.workflow, &r.run_id).ok()).flatten();
    let note = match (&r.error, &r.details) {
        (Some(code), Some(details)) => {
            Some(format!("{code}: {}", details.get("message").and_then(Value::as_str).unwrap_or("")))
        }
        (Some(code), None) => Some(code.clone()),
        _ => r.note.clone(),
    };
    RunRow {
        status: status_of(&r),
        version: r.version,
        created_at: brief.as_ref().map(|b| b.created_at.clone()),
        updated_at: r.updated_at.or(r.archived_at),
        ready: brief.as_ref().map(|b| b.ready.clone()).unwrap_or_default(),
        ready_total: brief.map_or(0, |b| b.ready_total),
        archive_id: r.archive_id,
        note,
        parent: r.parent,
        depth: 0,
        waiting: r.waiting,
        workflow: r.workflow,
        run_id: r.run_id,
    }
}

/// A run as its page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RunView {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// running, done or failed.
    pub status: RunStatus,
    /// The state version.
    pub version: u64,
    /// When it started (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// The run's params.
    pub params: Value,
    /// Why it failed, if it did.
    pub failure: Option<crate::runtime::failure::RunFailure>,
    /// The version (sha256) the run is pinned to.
    pub workflow_hash: String,
    /// Whether the file on disk differs from that version.
    pub file_differs: bool,
    /// The run it was forked from.
    pub forked_from: Option<ForkedFrom>,
    /// The run whose `uses:` step started it (a sub-workflow's run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<crate::runtime::record::ParentRun>,
    /// The ready steps and items.
    pub ready: Vec<String>,
    /// How many steps have each status.
    pub counts: BTreeMap<String, usize>,
    /// How many events the history holds.
    pub events: usize,
    /// The steps the run can be reset to (each checkpoint's step).
    pub checkpoints: Vec<String>,
    /// The DAG, laid out, with each step's status.
    pub graph: GraphView,
    /// The run's events on a time axis.
    pub timeline: Timeline,
    /// What its steps wait for: a question and its schema, a timer's or a
    /// timeout's deadline, an event and its key (absent when none waits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<WaitView>,
}

/// A workflow's DAG, laid out (pixels).
#[derive(Clone, Debug, Serialize)]
pub struct GraphView {
    /// The drawing's size.
    pub width: f64,
    /// The drawing's size.
    pub height: f64,
    /// A node's box size.
    pub node_w: f64,
    /// A node's box size.
    pub node_h: f64,
    /// The steps, in declaration order.
    pub nodes: Vec<GraphNode>,
    /// The dependencies.
    pub edges: Vec<GraphEdge>,
}

/// One step of the DAG.
#[derive(Clone, Debug, Serialize)]
pub struct GraphNode {
    /// The step id.
    pub id: String,
    /// The tool it calls (empty for a `uses:` step).
    pub call: String,
    /// The workflow a `uses:` step runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uses: Option<String>,
    /// Its status in the run (pending for a workflow without a run).
    pub status: StepStatus,
    /// Results refused by validation so far.
    pub attempts: u32,
    /// Its layer (0: the entry steps).
    pub layer: usize,
    /// Its centre.
    pub x: f64,
    /// Its centre.
    pub y: f64,
    /// A foreach step's items by status, once expanded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<BTreeMap<String, usize>>,
    /// Whether it has a `when`.
    pub conditional: bool,
    /// Whether it has a `foreach`.
    pub foreach: bool,
}

/// One dependency, labelled as `check` labels it.
#[derive(Clone, Debug, Serialize)]
pub struct GraphEdge {
    /// The step that runs first.
    pub from: String,
    /// The step that waits for it.
    pub to: String,
    /// Whether it comes from reading a capture or `steps.<id>` (not `deps`).
    pub inferred: bool,
    /// `deps`, or the name read (`mr_data`, `steps.fetch`).
    pub label: String,
    /// The polyline: `[x, y]` points.
    pub points: Vec<[f64; 2]>,
}

/// The DAG of `cw`, with the statuses of `state` (a run of it) if given.
pub fn graph_view(cw: &CompiledWorkflow, state: Option<&FullState>) -> GraphView {
    let wf = &cw.wf;
    let step_index: HashMap<&str, usize> =
        wf.steps.iter().enumerate().map(|(i, s)| (s.id.value.as_str(), i)).collect();
    let captures: HashMap<&str, usize> =
        cw.capture_steps.iter().map(|(name, &i)| (name.as_str(), i)).collect();
    let deps = crate::check::graph::DepGraph::build(wf, &step_index, &captures);
    let mut edges: Vec<(usize, usize, bool, String)> = deps
        .graph
        .edge_weights()
        .filter(|e| e.from() != e.to())
        .map(|e| match e.inferred_from(wf) {
            Some((name, ..)) => {
                let status = matches!(e.kind, crate::check::graph::EdgeKind::Inferred { status: true, .. });
                let label = if status { format!("steps.{name}") } else { name.to_owned() };
                (e.from(), e.to(), true, label)
            }
            None => (e.from(), e.to(), false, "deps".to_owned()),
        })
        .collect();
    edges.sort_by_key(|e| (e.1, e.0));
    let pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.0, e.1)).collect();
    let sizes = Sizes::default();
    let laid = layout::layout(wf.steps.len(), &pairs, &cw.plan.order, sizes);
    let by_id: HashMap<&str, &StepView> =
        state.map(|s| s.steps.iter().map(|v| (v.id.as_str(), v)).collect()).unwrap_or_default();
    let nodes = wf
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let view = by_id.get(s.id.value.as_str());
            GraphNode {
                id: s.id.value.to_string(),
                call: cw.plan.steps[i].call.clone(),
                uses: cw.plan.steps[i].uses.clone(),
                status: view.map_or(StepStatus::Pending, |v| v.status),
                attempts: view.map_or(0, |v| v.attempts),
                layer: laid.layer[i],
                x: laid.centre[i].0,
                y: laid.centre[i].1,
                items: view.and_then(|v| v.items.as_ref()).map(|items| {
                    let mut counts = BTreeMap::new();
                    for it in items {
                        *counts.entry(it.status.as_str().to_owned()).or_insert(0) += 1;
                    }
                    counts
                }),
                conditional: s.when.is_some(),
                foreach: s.foreach.is_some(),
            }
        })
        .collect();
    let edges = edges
        .into_iter()
        .zip(laid.edge_points)
        .map(|((from, to, inferred, label), points)| GraphEdge {
            from: wf.steps[from].id.value.to_string(),
            to: wf.steps[to].id.value.to_string(),
            inferred,
            label,
            points: points.into_iter().map(|(x, y)| [x, y]).collect(),
        })
        .collect();
    GraphView {
        width: laid.width,
        height: laid.height,
        node_w: sizes.node_w,
        node_h: sizes.node_h,
        nodes,
        edges,
    }
}

/// A run's page: its state, its DAG and its timeline (see [`run_view_of`]).
pub fn run_view(snapshot: &RunSnapshot) -> RunView {
    RunView {
        waiting: snapshot.waiting.clone(),
        ..run_view_of(&snapshot.state, Some(&snapshot.workflow), &snapshot.ready)
    }
}

/// A run's page from its state and the workflow version to draw it with
/// (none for an archived run whose workflow no longer compiles: no DAG).
pub fn run_view_of(st: &FullState, cw: Option<&CompiledWorkflow>, ready: &[String]) -> RunView {
    let mut counts = BTreeMap::new();
    for s in &st.steps {
        *counts.entry(s.status.as_str().to_owned()).or_insert(0) += 1;
    }
    RunView {
        workflow: st.workflow.clone(),
        run_id: st.run_id.clone(),
        status: st.status,
        version: st.version,
        created_at: st.created_at.clone(),
        updated_at: st.updated_at.clone(),
        params: st.params.clone(),
        failure: st.failure.clone(),
        workflow_hash: st.workflow_hash.clone(),
        file_differs: st.file_differs,
        forked_from: st.forked_from.clone(),
        parent: st.parent.clone(),
        ready: ready.to_vec(),
        counts,
        events: st.history.len(),
        checkpoints: st.checkpoints.iter().map(|c| c.step_id.clone()).collect(),
        graph: match cw {
            Some(cw) => graph_view(cw, Some(st)),
            None => GraphView {
                width: 0.0,
                height: 0.0,
                node_w: 0.0,
                node_h: 0.0,
                nodes: Vec::new(),
                edges: Vec::new(),
            },
        },
        timeline: timeline(cw, st),
        waiting: Vec::new(),
    }
}

/// What the live updates send: each step's status, small enough to send
/// on every change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Statuses {
    /// The state version.
    pub version: u64,
    /// running, done or failed.
    pub status: RunStatus,
    /// When it last changed.
    pub updated_at: String,
    /// The ready steps and items.
    pub ready: Vec<String>,
    /// Each step: `[id, status, attempts]`.
    pub steps: Vec<(String, StepStatus, u32)>,
    /// A foreach step's items by status: `{step: {status: count}}`.
    pub items: BTreeMap<String, BTreeMap<String, usize>>,
}

/// The statuses of a run (see [`Statuses`]).
pub fn statuses(snapshot: &RunSnapshot) -> Statuses {
    let st = &snapshot.state;
    let mut items = BTreeMap::new();
    for s in &st.steps {
        if let Some(list) = &s.items {
            let mut counts = BTreeMap::new();
            for it in list {
                *counts.entry(it.status.as_str().to_owned()).or_insert(0) += 1;
            }
            items.insert(s.id.clone(), counts);
        }
    }
    Statuses {
        version: st.version,
        status: st.status,
        updated_at: st.updated_at.clone(),
        ready: snapshot.ready.clone(),
        steps: st.steps.iter().map(|s| (s.id.clone(), s.status, s.attempts)).collect(),
        items,
    }
}

/// A run's events on a time axis, one row per step.
#[derive(Clone, Debug, Serialize)]
pub struct Timeline {
    /// When the run started (RFC 3339): time 0.
    pub start: String,
    /// Milliseconds from the start to the last event.
    pub span_ms: u64,
    /// One row per step, in declaration order.
    pub rows: Vec<TimelineRow>,
    /// Events of no step (thoughts, upgrades).
    pub run_events: Vec<TimelineEvent>,
}

/// One step's row.
#[derive(Clone, Debug, Serialize)]
pub struct TimelineRow {
    /// The step id.
    pub step: String,
    /// When it could start: its last dependency's result (ms from the start).
    pub from_ms: Option<u64>,
    /// When its (last) result was accepted.
    pub to_ms: Option<u64>,
    /// Its results and refused results.
    pub events: Vec<TimelineEvent>,
}

/// One event on the axis.
#[derive(Clone, Debug, Serialize)]
pub struct TimelineEvent {
    /// Milliseconds from the start.
    pub at_ms: u64,
    /// result, validation_failed, thought or upgraded.
    pub kind: &'static str,
    /// The step or item (`id[3]`) it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The state version it made.
    pub version: u64,
}

fn ms_between(start: &str, at: &str) -> Option<u64> {
    let s = humantime::parse_rfc3339_weak(start).ok()?;
    let a = humantime::parse_rfc3339_weak(at).ok()?;
    Some(a.duration_since(s).map_or(0, |d| d.as_millis() as u64))
}

/// The timeline of run `st` of `cw`.
pub fn timeline(cw: Option<&CompiledWorkflow>, st: &FullState) -> Timeline {
    let index: HashMap<&str, usize> = st.steps.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let mut rows: Vec<TimelineRow> = st
        .steps
        .iter()
        .map(|s| TimelineRow { step: s.id.clone(), from_ms: None, to_ms: None, events: Vec::new() })
        .collect();
    let mut run_events = Vec::new();
    let mut span_ms = 0;
    for e in &st.history {
        let at_ms = ms_between(&st.created_at, &e.at).unwrap_or(0);
        span_ms = span_ms.max(at_ms);
        let (kind, step) = (e.kind.name(), e.kind.step_id());
        let event = TimelineEvent { at_ms, kind, step_id: step.map(str::to_owned), version: e.version };
        let row = step.and_then(|id| index.get(id.split('[').next().unwrap_or(id)).copied());
        match row {
            Some(i) => {
                if e.kind.result_step().is_some() {
                    rows[i].to_ms = Some(at_ms);
                }
                rows[i].events.push(event);
            }
            None => run_events.push(event),
        }
    }
    // A step could start once its last dependency finished (or at 0).
    let Some(cw) = cw else { return Timeline { start: st.created_at.clone(), span_ms, rows, run_events } };
    for &i in &cw.plan.order {
        let Some(id) = cw.wf.steps.get(i).map(|s| s.id.value.as_str()) else { continue };
        let Some(&r) = index.get(id) else { continue };
        if st.steps[r].status == StepStatus::Pending {
            continue;
        }
        let from = cw.plan.steps[i]
            .deps
            .iter()
            .filter_map(|&d| index.get(cw.plan.steps[d].id.as_str()).and_then(|&k| rows[k].to_ms))
            .max()
            .unwrap_or(0);
        rows[r].from_ms = Some(from);
    }
    Timeline { start: st.created_at.clone(), span_ms, rows, run_events }
}
