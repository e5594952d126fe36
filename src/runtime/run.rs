//! The run state machine: a run's state is a pure function of the workflow,
//! its params and the sequence of accepted events. `apply` is the only way
//! state changes, so replaying the journal rebuilds exactly the same state.

use crate::ir::Step;
use crate::runtime::eval::{Scope, as_bool, eval};
use crate::runtime::render::render;
use crate::runtime::workflow::CompiledWorkflow;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Done,
    Failed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Waiting for dependencies.
    Pending,
    /// An instruction can be handed out.
    Ready,
    /// A foreach step whose items are being worked on.
    Running,
    Done,
    Skipped,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
        }
    }
}

impl StepStatus {
    pub fn is_finished(self) -> bool {
        matches!(self, StepStatus::Done | StepStatus::Skipped)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemState {
    /// The item's status.
    pub status: StepStatus,
    /// Validation failures so far.
    pub attempts: u32,
    /// The rendered input, once ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The accepted result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepState {
    /// The step id.
    pub id: String,
    /// pending, ready, running (a foreach with items under way), done, skipped or failed.
    pub status: StepStatus,
    /// Validation failures so far (for a foreach step, see its items).
    pub attempts: u32,
    /// The rendered input, once ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The accepted result (a foreach step's results are its items').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// A foreach step's items, once expanded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemState>>,
}

/// Something that happened to a run; the journal is a list of these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// The state version this event made.
    pub version: u64,
    /// When (RFC 3339).
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A result accepted for a ready step (or foreach item `id[i]`). When
    /// the payload caps shortened it, `truncated` says how: it is part of
    /// the event so that replaying the journal rebuilds `truncations`.
    Result {
        step_id: String,
        result: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        truncated: Option<TruncationNote>,
    },
    /// A result that failed its success schema.
    ValidationFailed { step_id: String, errors: Value },
    /// A thought recorded with the think tool.
    Thought { thought: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Checkpoint {
    /// The step whose completion this checkpoint follows.
    pub step_id: String,
    /// The state version at that point.
    pub version: u64,
    /// How many history events the checkpoint keeps.
    pub history_len: usize,
}

/// How a result was shortened (recorded on its `Result` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TruncationNote {
    /// The result's size as submitted.
    pub original_bytes: usize,
    /// What was cut.
    pub what: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Truncation {
    /// The step whose result was cut.
    pub step_id: String,
    /// The result's size as submitted.
    pub original_bytes: usize,
    /// What was cut.
    pub what: String,
}

/// The materialized state of one run (what `.savant/state/*.json` holds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunState {
    /// The state version (use as think_next's expected_version).
    pub version: u64,
    /// Names this incarnation of the run: a fresh start gets a new one, and
    /// every journal event carries it, so that after a crash the store never
    /// mixes the old run's events into the new one (see `crate::state`).
    /// Absent in runs written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// sha256 of the workflow file the run started with.
    pub workflow_hash: String,
    /// The run's params.
    pub params: Value,
    /// running, done or failed.
    pub status: RunStatus,
    /// Why the run failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Value>,
    /// Each step's status, attempts and result.
    pub steps: Vec<StepState>,
    /// Captured results by name.
    pub captures: Map<String, Value>,
    /// Every accepted event.
    pub history: Vec<Event>,
    /// Where think_reset can go back to.
    pub checkpoints: Vec<Checkpoint>,
    /// The results cut to the payload caps.
    #[serde(default)]
    pub truncations: Vec<Truncation>,
    /// When the run started (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// The workflow file's absolute path when the run was started from a
    /// path rather than an id of `<root>/workflows/`: how a listing finds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A ready unit of work: a step, or one item of a foreach step.
pub type WorkRef = (usize, Option<usize>);

/// The state machine for one workflow. Holds derived indexes (the ready set,
/// dependency counters) that are rebuilt from the state, never stored.
pub struct Machine {
    pub cw: Arc<CompiledWorkflow>,
    pub state: RunState,
    ready: BTreeSet<WorkRef>,
}

impl Machine {
    /// A fresh run: every step pending, then the first ready steps activated.
    pub fn start(cw: Arc<CompiledWorkflow>, run_id: &str, params: Value, now: &str) -> Machine {
        let steps = cw
            .wf
            .steps
            .iter()
            .map(|s| StepState {
                id: s.id.value.clone(),
                status: StepStatus::Pending,
                attempts: 0,
                input: None,
                result: None,
                items: None,
            })
            .collect();
        let state = RunState {
            version: 0,
            generation: None,
            workflow: cw.wf.id.clone(),
            run_id: run_id.to_owned(),
            workflow_hash: cw.hash.clone(),
            params,
            status: RunStatus::Running,
            failure: None,
            steps,
            captures: Map::new(),
            history: Vec::new(),
            checkpoints: Vec::new(),
            truncations: Vec::new(),
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
            source: None,
        };
        let roots: Vec<usize> =
            (0..cw.plan.steps.len()).filter(|&i| cw.plan.steps[i].deps.is_empty()).collect();
        let mut m = Machine { cw, state, ready: BTreeSet::new() };
        m.activate_all(roots);
        m
    }

    /// Resumes from a stored state, rebuilding the ready set.
    pub fn resume(cw: Arc<CompiledWorkflow>, state: RunState) -> Machine {
        let mut ready = BTreeSet::new();
        for (i, s) in state.steps.iter().enumerate() {
            if s.status == StepStatus::Ready {
                ready.insert((i, None));
            }
            for (j, it) in s.items.iter().flatten().enumerate() {
                if it.status == StepStatus::Ready {
                    ready.insert((i, Some(j)));
                }
            }
        }
        Machine { cw, state, ready }
    }

    pub fn ready(&self) -> impl Iterator<Item = WorkRef> + '_ {
        self.ready.iter().copied()
    }

    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    pub fn work_id(&self, w: WorkRef) -> String {
        let id = &self.state.steps[w.0].id;
        match w.1 {
            Some(j) => format!("{id}[{j}]"),
            None => id.clone(),
        }
    }

    /// Resolves `id` or `id[i]` to a step (and item) that exists.
    pub fn resolve(&self, step_id: &str) -> Option<WorkRef> {
        let (name, index) = match step_id.strip_suffix(']').and_then(|s| s.split_once('[')) {
            Some((name, idx)) => (name, Some(idx.parse::<usize>().ok()?)),
            None => (step_id, None),
        };
        let i = self.state.steps.iter().position(|s| s.id == name)?;
        match (index, &self.state.steps[i].items) {
            (None, _) => Some((i, None)),
            (Some(j), Some(items)) if j < items.len() => Some((i, Some(j))),
            _ => None,
        }
    }

    pub fn status_of(&self, w: WorkRef) -> StepStatus {
        let s = &self.state.steps[w.0];
        match w.1 {
            Some(j) => s.items.as_ref().map_or(StepStatus::Pending, |items| items[j].status),
            None => s.status,
        }
    }

    pub fn result_of(&self, w: WorkRef) -> Option<&Value> {
        let s = &self.state.steps[w.0];
        match w.1 {
            Some(j) => s.items.as_ref().and_then(|items| items[j].result.as_ref()),
            None => s.result.as_ref(),
        }
    }

    pub fn input_of(&self, w: WorkRef) -> Option<&Value> {
        let s = &self.state.steps[w.0];
        match w.1 {
            Some(j) => s.items.as_ref().and_then(|items| items[j].input.as_ref()),
            None => s.input.as_ref(),
        }
    }

    pub fn attempts_of(&self, w: WorkRef) -> u32 {
        let s = &self.state.steps[w.0];
        match w.1 {
            Some(j) => s.items.as_ref().map_or(0, |items| items[j].attempts),
            None => s.attempts,
        }
    }

    pub fn step(&self, i: usize) -> &Step {
        &self.cw.wf.steps[i]
    }

    /// Applies an event: the only way a run changes. The caller validated it
    /// (the step is ready, the result matches its schema).
    pub fn apply(&mut self, event: Event) {
        self.state.version = event.version;
        self.state.updated_at = event.at.clone();
        match &event.kind {
            EventKind::Result { step_id, result, truncated } => {
                if let Some(w) = self.resolve(step_id) {
                    if let Some(t) = truncated {
                        self.state.truncations.push(Truncation {
                            step_id: step_id.clone(),
                            original_bytes: t.original_bytes,
                            what: t.what.clone(),
                        });
                    }
                    self.accept(w, result.clone());
                    if self.state.steps[w.0].status.is_finished() {
                        self.state.checkpoints.push(Checkpoint {
                            step_id: self.state.steps[w.0].id.clone(),
                            version: event.version,
                            history_len: self.state.history.len() + 1,
                        });
                    }
                }
            }
            EventKind::ValidationFailed { step_id, errors } => {
                if let Some(w) = self.resolve(step_id) {
                    let max = self.step(w.0).retry_max.unwrap_or(3);
                    let attempts = self.bump_attempts(w);
                    if attempts >= max.max(1) {
                        self.fail(json!({
                            "error": "VALIDATION_FAILED",
                            "step_id": step_id,
                            "message": format!("`{step_id}` failed its success schema {attempts} times (retry.max = {max})"),
                            "errors": errors,
                        }));
                    }
                }
            }
            EventKind::Thought { .. } => {}
        }
        self.state.history.push(event);
        if self.state.status == RunStatus::Running && self.state.steps.iter().all(|s| s.status.is_finished())
        {
            self.state.status = RunStatus::Done;
        }
    }

    fn bump_attempts(&mut self, w: WorkRef) -> u32 {
        let s = &mut self.state.steps[w.0];
        match (w.1, s.items.as_mut()) {
            (Some(j), Some(items)) => {
                items[j].attempts += 1;
                items[j].attempts
            }
            _ => {
                s.attempts += 1;
                s.attempts
            }
        }
    }

    fn fail(&mut self, failure: Value) {
        self.state.status = RunStatus::Failed;
        self.state.failure = Some(failure);
        self.ready.clear();
    }

    fn accept(&mut self, w: WorkRef, result: Value) {
        self.ready.remove(&w);
        let (i, item) = w;
        match item {
            None => {
                let s = &mut self.state.steps[i];
                s.status = StepStatus::Done;
                s.result = Some(result.clone());
                self.finish(i, result);
            }
            Some(j) => {
                let Some(items) = self.state.steps[i].items.as_mut() else { return };
                items[j].status = StepStatus::Done;
                items[j].result = Some(result);
                if items.iter().all(|it| it.status.is_finished()) {
                    let all: Vec<Value> =
                        items.iter().map(|it| it.result.clone().unwrap_or(Value::Null)).collect();
                    self.state.steps[i].status = StepStatus::Done;
                    self.finish(i, Value::Array(all));
                }
            }
        }
    }

    /// A step is done or skipped: publish its capture, wake its dependents.
    fn finish(&mut self, i: usize, capture: Value) {
        let cw = self.cw.clone();
        if let Some(c) = &cw.wf.steps[i].capture_as {
            self.state.captures.insert(c.value.clone(), capture);
        }
        let woken: Vec<usize> = cw.plan.steps[i]
            .dependents
            .iter()
            .copied()
            .filter(|&d| {
                self.state.steps[d].status == StepStatus::Pending
                    && cw.plan.steps[d].deps.iter().all(|&p| self.state.steps[p].status.is_finished())
            })
            .collect();
        self.activate_all(woken);
    }

    /// Activates steps in declaration order; skipping one may wake more.
    fn activate_all(&mut self, steps: Vec<usize>) {
        let cw = self.cw.clone();
        let mut queue: BTreeSet<usize> = steps.into_iter().collect();
        while let Some(i) = queue.pop_first() {
            if self.state.status != RunStatus::Running || self.state.steps[i].status != StepStatus::Pending {
                continue;
            }
            if let Some(done) = self.activate(i) {
                if let Some(c) = &cw.wf.steps[i].capture_as {
                    self.state.captures.insert(c.value.clone(), done);
                }
                for &d in &cw.plan.steps[i].dependents {
                    if self.state.steps[d].status == StepStatus::Pending
                        && cw.plan.steps[d].deps.iter().all(|&p| self.state.steps[p].status.is_finished())
                    {
                        queue.insert(d);
                    }
                }
            }
        }
    }

    /// Evaluates `when` / `foreach` and renders input. Returns the capture when
    /// the step finishes at once (skipped, or a foreach with nothing to do).
    fn activate(&mut self, i: usize) -> Option<Value> {
        let cw = self.cw.clone();
        let step = &cw.wf.steps[i];
        if let Some(f) = &step.foreach {
            let collection = f.expr.as_ref().map_or(Value::Null, |e| eval(e, &RunScope::new(self, None)));
            let items = match collection {
                Value::Array(items) => items,
                _ => Vec::new(),
            };
            let mut states = Vec::with_capacity(items.len());
            for (j, item) in items.iter().enumerate() {
                let scope = RunScope::new(self, Some((step.loop_var_name(), item, j)));
                let go = step
                    .when
                    .as_ref()
                    .and_then(|w| w.expr.as_ref())
                    .is_none_or(|e| as_bool(&eval(e, &scope)));
                if !go {
                    states.push(ItemState {
                        status: StepStatus::Skipped,
                        attempts: 0,
                        input: None,
                        result: None,
                    });
                    continue;
                }
                match self.render_input(step, &scope) {
                    Ok(input) => states.push(ItemState {
                        status: StepStatus::Ready,
                        attempts: 0,
                        input: Some(input),
                        result: None,
                    }),
                    Err(failure) => {
                        self.fail(failure);
                        return None;
                    }
                }
            }
            let ready: Vec<usize> =
                (0..states.len()).filter(|&j| states[j].status == StepStatus::Ready).collect();
            let s = &mut self.state.steps[i];
            if ready.is_empty() {
                let capture = Value::Array(states.iter().map(|_| Value::Null).collect());
                s.items = Some(states);
                s.status = StepStatus::Done;
                return Some(capture);
            }
            s.items = Some(states);
            s.status = StepStatus::Running;
            self.ready.extend(ready.into_iter().map(|j| (i, Some(j))));
            return None;
        }
        let scope = RunScope::new(self, None);
        let go = step.when.as_ref().and_then(|w| w.expr.as_ref()).is_none_or(|e| as_bool(&eval(e, &scope)));
        if !go {
            self.state.steps[i].status = StepStatus::Skipped;
            return Some(Value::Null);
        }
        match self.render_input(step, &scope) {
            Ok(input) => {
                let s = &mut self.state.steps[i];
                s.input = Some(input);
                s.status = StepStatus::Ready;
                self.ready.insert((i, None));
            }
            Err(failure) => self.fail(failure),
        }
        None
    }

    fn render_input(&self, step: &Step, scope: &RunScope) -> Result<Value, Value> {
        let Some(t) = &step.input_template else { return Ok(json!({})) };
        render(t, scope).map_err(|e| {
            json!({
                "error": "TEMPLATE_RENDER_ERROR",
                "step_id": step.id.value,
                "expression": e.expr,
                "message": e.message,
            })
        })
    }

    pub fn completed(&self) -> usize {
        self.state.steps.iter().filter(|s| s.status.is_finished()).count()
    }
}

/// The names an expression sees while the run is at some point.
pub struct RunScope<'m> {
    m: &'m Machine,
    loop_var: Option<(&'m str, &'m Value, usize)>,
}

impl<'m> RunScope<'m> {
    pub fn new(m: &'m Machine, loop_var: Option<(&'m str, &'m Value, usize)>) -> RunScope<'m> {
        RunScope { m, loop_var }
    }
}

impl Scope for RunScope<'_> {
    fn lookup(&self, name: &str) -> Option<Value> {
        if let Some((var, value, index)) = self.loop_var {
            if name == var {
                return Some(value.clone());
            }
            if name == "loop" {
                return Some(json!({ "index": index }));
            }
        }
        let wf = &self.m.cw.wf;
        match name {
            "params" => Some(self.m.state.params.clone()),
            "workflow" => Some(json!({ "id": wf.id, "name": wf.name, "version": wf.version })),
            "run" => Some(json!({ "id": self.m.state.run_id })),
            "steps" => Some(Value::Object(
                self.m
                    .state
                    .steps
                    .iter()
                    .map(|s| {
                        let status = match s.status {
                            StepStatus::Done => "done",
                            StepStatus::Skipped => "skipped",
                            StepStatus::Failed => "failed",
                            StepStatus::Ready | StepStatus::Running => "ready",
                            StepStatus::Pending => "pending",
                        };
                        (s.id.clone(), json!({ "status": status }))
                    })
                    .collect(),
            )),
            _ => Some(self.m.state.captures.get(name).cloned().unwrap_or(Value::Null)),
        }
    }
}
