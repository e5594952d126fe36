//! The run state machine: a run's state is a pure function of the workflow,
//! its params and the sequence of accepted events. `apply` is the only way
//! state changes, so replaying the journal rebuilds exactly the same state.

use crate::ir::Step;
use crate::runtime::eval::{Scope, as_bool, eval};
use crate::runtime::failure::RunFailure;
pub use crate::runtime::record::{
    Checkpoint, Event, EventKind, ItemState, RunState, RunStatus, StepState, StepStatus, Truncation,
    TruncationNote,
};
use crate::runtime::render::render;
use crate::runtime::reply::{FullState, ItemView, StepView};
use crate::runtime::work_id::WorkId;
pub use crate::runtime::work_id::WorkRef;
use crate::runtime::workflow::CompiledWorkflow;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

#[path = "run_wait.rs"]
mod wait;
pub use wait::{wait_summary, wait_text};

/// The state machine for one workflow. Holds derived indexes (the ready set,
/// dependency counters) that are rebuilt from the state, never stored.
pub struct Machine {
    /// The workflow it runs.
    pub cw: Arc<CompiledWorkflow>,
    /// The stored state.
    pub state: RunState,
    ready: BTreeSet<WorkRef>,
    /// The units waiting for an answer, a time or an event (derived, like `ready`).
    waiting: BTreeSet<WorkRef>,
    /// The inbox: history indexes of events kept for a wait not started yet,
    /// not yet delivered (derived, like `ready`).
    inbox: Vec<usize>,
}

impl Machine {
    /// A fresh run: every step pending, then the first ready steps activated.
    pub fn start(cw: Arc<CompiledWorkflow>, run_id: &str, params: Value, now: &str) -> Machine {
        let steps = cw
            .wf
            .steps
            .iter()
            .map(|s| StepState {
                id: s.id.value.as_str().to_owned(),
                status: StepStatus::Pending,
                attempts: 0,
                input: None,
                result_at: None,
                items: None,
            })
            .collect();
        let state = RunState {
            version: 0,
            generation: None,
            workflow: cw.wf.id.clone(),
            run_id: run_id.to_owned(),
            workflow_hash: cw.hash.clone(),
            schemas: Default::default(),
            params,
            status: RunStatus::Running,
            failure: None,
            steps,
            capture_order: Vec::new(),
            legacy_captures: None,
            history: Vec::new(),
            checkpoints: Vec::new(),
            truncations: Vec::new(),
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
            source: None,
            forked_from: None,
            parent: None,
        };
        let roots: Vec<usize> =
            (0..cw.plan.steps.len()).filter(|&i| cw.plan.steps[i].deps.is_empty()).collect();
        let mut m =
            Machine { cw, state, ready: BTreeSet::new(), waiting: BTreeSet::new(), inbox: Vec::new() };
        m.activate_all(roots);
        // Every step may finish at once (each `when:` false, an empty
        // `foreach` upstream): such a run is done before its first call.
        m.settle();
        m
    }

    /// A running run whose steps are all finished is done.
    fn settle(&mut self) {
        if self.state.status == RunStatus::Running && self.state.steps.iter().all(|s| s.status.is_finished())
        {
            self.state.status = RunStatus::Done;
        }
    }

    /// Resumes from a stored state, rebuilding the ready set and where
    /// each result is.
    pub fn resume(cw: Arc<CompiledWorkflow>, mut state: RunState) -> Machine {
        if let Some(legacy) = state.legacy_captures.take()
            && state.capture_order.is_empty()
        {
            state.capture_order = legacy.keys().filter_map(|k| cw.capture_steps.get(k).copied()).collect();
        }
        let (mut ready, mut waiting) = (BTreeSet::new(), BTreeSet::new());
        // A finished run has nothing ready (a failed run's ready steps stay as
        // they were when it failed).
        let steps = if state.status == RunStatus::Running { &state.steps[..] } else { &[] };
        for (i, s) in steps.iter().enumerate() {
            let units = std::iter::once((WorkRef::new(i, None), s.status)).chain(
                s.items.iter().flatten().enumerate().map(|(j, it)| (WorkRef::new(i, Some(j)), it.status)),
            );
            for (w, status) in units {
                match status {
                    StepStatus::Ready => _ = ready.insert(w),
                    StepStatus::Waiting => _ = waiting.insert(w),
                    _ => {}
                }
            }
        }
        let inbox = wait::undelivered(&state.history);
        let mut m = Machine { cw, state, ready, waiting, inbox };
        for k in 0..m.state.history.len() {
            if let Some(step_id) = m.state.history[k].kind.result_step()
                && let Some(w) = m.resolve(step_id)
            {
                m.set_result_at(w, k);
            }
        }
        m
    }

    fn set_result_at(&mut self, w: WorkRef, k: usize) {
        let s = &mut self.state.steps[w.step];
        match (w.item, s.items.as_mut()) {
            (Some(j), Some(items)) => items[j].result_at = Some(k),
            (Some(_), None) => {}
            (None, _) => s.result_at = Some(k),
        }
    }

    /// The result of history event `k` (a `result`, or the event that
    /// ended a wait).
    fn result_in(&self, k: Option<usize>) -> Option<&Value> {
        match &self.state.history.get(k?)?.kind {
            EventKind::Result { result, .. } => Some(result),
            EventKind::Answered { value, .. } => Some(value),
            EventKind::Signal { payload, .. } => Some(payload),
            EventKind::TimerFired { value, .. } => value.as_ref(),
            _ => None,
        }
    }

    /// What step `i` captures, once it is finished: its result, a foreach
    /// step's item results in index order (null for a skipped item), null
    /// for a skipped step.
    pub fn capture_of(&self, i: usize) -> Option<Value> {
        let s = &self.state.steps[i];
        match s.status {
            StepStatus::Skipped => Some(Value::Null),
            StepStatus::Done => Some(match &s.items {
                Some(items) => Value::Array(
                    items
                        .iter()
                        .map(|it| self.result_in(it.result_at).cloned().unwrap_or(Value::Null))
                        .collect(),
                ),
                None => self.result_in(s.result_at).cloned().unwrap_or(Value::Null),
            }),
            _ => None,
        }
    }

    /// Every capture set so far, by name, in the order they were set.
    pub fn captures(&self) -> Map<String, Value> {
        self.state
            .capture_order
            .iter()
            .filter_map(|&i| {
                let name = self.cw.wf.steps[i].capture_as.as_ref()?.value.as_str().to_owned();
                Some((name, self.capture_of(i)?))
            })
            .collect()
    }

    /// The run's full state as a client sees it: every result also on its
    /// step and under its capture name.
    pub fn full_state(&self) -> FullState {
        let st = &self.state;
        let steps = st
            .steps
            .iter()
            .map(|s| StepView {
                id: s.id.clone(),
                status: s.status,
                attempts: s.attempts,
                input: s.input.clone(),
                result: self.result_in(s.result_at).cloned(),
                items: s.items.as_ref().map(|items| {
                    items
                        .iter()
                        .map(|it| ItemView {
                            status: it.status,
                            attempts: it.attempts,
                            input: it.input.clone(),
                            result: self.result_in(it.result_at).cloned(),
                        })
                        .collect()
                }),
            })
            .collect();
        FullState {
            version: st.version,
            generation: st.generation.clone(),
            workflow: st.workflow.clone(),
            run_id: st.run_id.clone(),
            workflow_hash: st.workflow_hash.clone(),
            schemas: st.schemas.clone(),
            file_hash: None,
            file_differs: false,
            params: st.params.clone(),
            status: st.status,
            failure: st.failure.clone(),
            steps,
            captures: self.captures(),
            history: st.history.clone(),
            checkpoints: st.checkpoints.clone(),
            truncations: st.truncations.clone(),
            created_at: st.created_at.clone(),
            updated_at: st.updated_at.clone(),
            source: st.source.clone(),
            forked_from: st.forked_from.clone(),
            parent: st.parent.clone(),
        }
    }

    /// The capture named `name`, if set.
    pub fn capture(&self, name: &str) -> Option<Value> {
        let &i = self.cw.capture_steps.get(name)?;
        self.capture_of(i)
    }

    /// The ready units of work, in declaration order.
    pub fn ready(&self) -> impl Iterator<Item = WorkRef> + '_ {
        self.ready.iter().copied()
    }

    /// How many units are ready.
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// The id a unit has in replies: `step` or `step[i]`.
    pub fn work_id(&self, w: WorkRef) -> String {
        // `work_name(w).to_string()` without the id's copy and the formatter.
        let step = &self.state.steps[w.step].id;
        let Some(i) = w.item else { return step.clone() };
        let mut buf = itoa::Buffer::new();
        let i = buf.format(i);
        let mut id = String::with_capacity(step.len() + i.len() + 2);
        id.push_str(step);
        id.push('[');
        id.push_str(i);
        id.push(']');
        debug_assert_eq!(id, self.work_name(w).to_string());
        id
    }

    /// A unit's [`WorkId`] (no child).
    pub fn work_name(&self, w: WorkRef) -> WorkId {
        WorkId { step: self.state.steps[w.step].id.clone(), item: w.item, child: None }
    }

    /// Resolves `id` or `id[i]` to a step (and item) that exists.
    pub fn resolve(&self, step_id: &str) -> Option<WorkRef> {
        self.resolve_id(&step_id.parse().ok()?)
    }

    /// Resolves a [`WorkId`] without a child to a step (and item) that exists.
    pub fn resolve_id(&self, id: &WorkId) -> Option<WorkRef> {
        if id.child.is_some() {
            return None;
        }
        let i = self.state.steps.iter().position(|s| s.id == id.step)?;
        match (id.item, &self.state.steps[i].items) {
            (None, _) => Some(WorkRef::new(i, None)),
            (Some(j), Some(items)) if j < items.len() => Some(WorkRef::new(i, Some(j))),
            _ => None,
        }
    }

    /// A unit's status.
    pub fn status_of(&self, w: WorkRef) -> StepStatus {
        let s = &self.state.steps[w.step];
        match w.item {
            Some(j) => s.items.as_ref().map_or(StepStatus::Pending, |items| items[j].status),
            None => s.status,
        }
    }

    /// A unit's accepted result (read from its history event).
    pub fn result_of(&self, w: WorkRef) -> Option<&Value> {
        let s = &self.state.steps[w.step];
        self.result_in(match w.item {
            Some(j) => s.items.as_ref().and_then(|items| items[j].result_at),
            None => s.result_at,
        })
    }

    /// A unit's rendered input, once ready.
    pub fn input_of(&self, w: WorkRef) -> Option<&Value> {
        let s = &self.state.steps[w.step];
        match w.item {
            Some(j) => s.items.as_ref().and_then(|items| items[j].input.as_ref()),
            None => s.input.as_ref(),
        }
    }

    /// A unit's failed validations so far.
    pub fn attempts_of(&self, w: WorkRef) -> u32 {
        let s = &self.state.steps[w.step];
        match w.item {
            Some(j) => s.items.as_ref().map_or(0, |items| items[j].attempts),
            None => s.attempts,
        }
    }

    /// The workflow's step `i`.
    pub fn step(&self, i: usize) -> &Step {
        &self.cw.wf.steps[i]
    }

    /// Applies an event: the only way a run changes. The caller validated it
    /// (the step is ready, the result matches its schema).
    pub fn apply(&mut self, event: Event) {
        self.state.version = event.version;
        self.state.updated_at = event.at.clone();
        // The event goes into the history first: an accepted result is
        // stored there, once, and the steps it wakes read it from there.
        self.state.history.push(event);
        let k = self.state.history.len() - 1;
        match &self.state.history[k].kind {
            EventKind::Result { step_id, truncated, .. } => {
                let (step_id, truncated) = (step_id.clone(), truncated.clone());
                if let Some(w) = self.resolve(&step_id) {
                    if let Some(t) = truncated {
                        self.state.truncations.push(Truncation {
                            step_id,
                            original_bytes: t.original_bytes,
                            what: t.what,
                        });
                    }
                    self.accept(w, k);
                    self.checkpoint_after(w, k);
                }
            }
            EventKind::Answered { .. } | EventKind::Signal { .. } | EventKind::TimerFired { .. } => {
                self.apply_wait_event(k)
            }
            EventKind::ValidationFailed { step_id, errors, .. } => {
                let (step_id, errors) = (step_id.clone(), errors.clone());
                if let Some(w) = self.resolve(&step_id) {
                    let max = self.step(w.step).retry_max.unwrap_or(3);
                    let attempts = self.bump_attempts(w);
                    if attempts >= max.max(1) {
                        self.mark_failed(w);
                        self.fail(RunFailure::Validation {
                            step_id: step_id.clone(),
                            message: format!(
                                "`{step_id}` failed its success schema {attempts} times (retry.max = {max})"
                            ),
                            errors,
                        });
                    }
                }
            }
            EventKind::ChildFailed { step_id, child_run_id, failure } => {
                let failure = RunFailure::child_failed(step_id, child_run_id, failure);
                if let Some(w) = self.resolve(step_id) {
                    self.mark_failed(w);
                }
                self.fail(failure);
            }
            EventKind::Thought { .. } | EventKind::Upgraded { .. } => {}
        }
        self.settle();
    }

    /// A checkpoint after history event `k`, when it finished `w`'s step.
    fn checkpoint_after(&mut self, w: WorkRef, k: usize) {
        if self.state.steps[w.step].status.is_finished() {
            let version = self.state.history[k].version;
            self.state.checkpoints.push(Checkpoint {
                step_id: self.state.steps[w.step].id.clone(),
                version,
                history_len: k + 1,
            });
        }
    }

    fn bump_attempts(&mut self, w: WorkRef) -> u32 {
        let s = &mut self.state.steps[w.step];
        match (w.item, s.items.as_mut()) {
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

    /// The step (and item) the run failed at: failed, not ready.
    fn mark_failed(&mut self, w: WorkRef) {
        let s = &mut self.state.steps[w.step];
        s.status = StepStatus::Failed;
        if let (Some(j), Some(items)) = (w.item, s.items.as_mut())
            && let Some(item) = items.get_mut(j)
        {
            item.status = StepStatus::Failed;
        }
    }

    fn fail(&mut self, failure: RunFailure) {
        self.state.status = RunStatus::Failed;
        self.state.failure = Some(failure);
        self.ready.clear();
        self.waiting.clear();
    }

    /// Accepts the result of history event `at` (where it is stored, once).
    fn accept(&mut self, w: WorkRef, at: usize) {
        self.ready.remove(&w);
        self.set_result_at(w, at);
        let WorkRef { step: i, item } = w;
        match item {
            None => {
                self.state.steps[i].status = StepStatus::Done;
                self.finish(i);
            }
            Some(j) => {
                let Some(items) = self.state.steps[i].items.as_mut() else { return };
                items[j].status = StepStatus::Done;
                if items.iter().all(|it| it.status.is_finished()) {
                    self.state.steps[i].status = StepStatus::Done;
                    self.finish(i);
                }
            }
        }
    }

    /// A step is done or skipped: publish its capture, wake its dependents.
    fn finish(&mut self, i: usize) {
        let cw = self.cw.clone();
        if cw.wf.steps[i].capture_as.is_some() {
            self.state.capture_order.push(i);
        }
        let woken = self.woken_by(i);
        self.activate_all(woken);
    }

    /// The dependents of step `i` (just finished) that may start now: still
    /// pending, and every one of their dependencies finished.
    fn woken_by(&self, i: usize) -> Vec<usize> {
        let plan = &self.cw.plan;
        let steps = &self.state.steps;
        plan.steps[i]
            .dependents
            .iter()
            .copied()
            .filter(|&d| {
                steps[d].status == StepStatus::Pending
                    && plan.steps[d].deps.iter().all(|&p| steps[p].status.is_finished())
            })
            .collect()
    }

    /// Activates steps in declaration order; skipping one may wake more.
    fn activate_all(&mut self, steps: Vec<usize>) {
        let cw = self.cw.clone();
        let mut queue: BTreeSet<usize> = steps.into_iter().collect();
        while let Some(i) = queue.pop_first() {
            if self.state.status != RunStatus::Running || self.state.steps[i].status != StepStatus::Pending {
                continue;
            }
            if self.activate(i) {
                if cw.wf.steps[i].capture_as.is_some() {
                    self.state.capture_order.push(i);
                }
                queue.extend(self.woken_by(i));
            }
        }
    }

    /// Evaluates `when` / `foreach` and renders input. True when the step
    /// finishes at once (skipped, or a foreach with nothing to do).
    fn activate(&mut self, i: usize) -> bool {
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
                        result_at: None,
                    });
                    continue;
                }
                match self.render_input(step, &scope) {
                    Ok(input) => states.push(ItemState {
                        status: start_status(step),
                        attempts: 0,
                        input: Some(input),
                        result_at: None,
                    }),
                    Err(failure) => {
                        self.fail(failure);
                        return false;
                    }
                }
            }
            let ready: Vec<usize> =
                (0..states.len()).filter(|&j| states[j].status == start_status(step)).collect();
            let s = &mut self.state.steps[i];
            if ready.is_empty() {
                s.items = Some(states);
                s.status = StepStatus::Done;
                return true;
            }
            s.items = Some(states);
            s.status = StepStatus::Running;
            let units = ready.into_iter().map(|j| WorkRef::new(i, Some(j)));
            match step.wait {
                Some(_) => self.waiting.extend(units),
                None => self.ready.extend(units),
            }
            return false;
        }
        let scope = RunScope::new(self, None);
        let go = step.when.as_ref().and_then(|w| w.expr.as_ref()).is_none_or(|e| as_bool(&eval(e, &scope)));
        if !go {
            self.state.steps[i].status = StepStatus::Skipped;
            return true;
        }
        match self.render_input(step, &scope) {
            Ok(input) => {
                let s = &mut self.state.steps[i];
                s.input = Some(input);
                s.status = start_status(step);
                match step.wait {
                    Some(_) => self.waiting.insert(WorkRef::new(i, None)),
                    None => self.ready.insert(WorkRef::new(i, None)),
                };
            }
            Err(failure) => self.fail(failure),
        }
        false
    }

    fn render_input(&self, step: &Step, scope: &RunScope) -> Result<Value, RunFailure> {
        if let Some(wait) = &step.wait {
            return self.wait_input(step, wait, scope);
        }
        let Some(t) = &step.input_template else { return Ok(json!({})) };
        render(t, scope).map_err(|e| RunFailure::TemplateRender {
            step_id: step.id.value.as_str().to_owned(),
            expression: e.expr,
            message: e.message,
        })
    }

    /// How many steps are done or skipped.
    pub fn completed(&self) -> usize {
        self.state.steps.iter().filter(|s| s.status.is_finished()).count()
    }
}

/// The status a step (or item) starts in once activated: ready, or
/// waiting for a wait step.
fn start_status(step: &Step) -> StepStatus {
    match step.wait {
        Some(_) => StepStatus::Waiting,
        None => StepStatus::Ready,
    }
}

/// The names an expression sees while the run is at some point.
pub struct RunScope<'m> {
    m: &'m Machine,
    loop_var: Option<(&'m str, &'m Value, usize)>,
}

impl<'m> RunScope<'m> {
    /// The names seen at `m`'s current point, with the loop variable (name, value, index) inside a foreach.
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
                        // A foreach step whose items are being worked on
                        // reads as `ready` here, as it always has.
                        let status = match s.status {
                            StepStatus::Running => StepStatus::Ready,
                            other => other,
                        };
                        (s.id.clone(), json!({ "status": status.as_str() }))
                    })
                    .collect(),
            )),
            _ => Some(self.m.capture(name).unwrap_or(Value::Null)),
        }
    }
}
