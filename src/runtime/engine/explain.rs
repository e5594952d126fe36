//! `explain` (a workflow, a run or a step in words and data) and `debug`
//! (a run's history replayed).

use super::*;
use crate::runtime::reply::{
    Explanation, Replay, ReplayedEvent, RunExplanation, StepExplanation, WorkflowExplanation,
};
use crate::runtime::work_id::{WorkId, WorkIdError};

impl Engine {
    /// Explains a workflow, a run, or one step of either.
    pub fn explain(
        &self,
        workflow: &str,
        run_id: Option<&str>,
        step_id: Option<&str>,
    ) -> EngineResult<Explanation> {
        let Some(run_id) = run_id else {
            let cw = self.workflow(workflow)?;
            return match step_id {
                Some(id) => {
                    let (i, item) = find_step(&cw, id)?;
                    let mut d = describe(&cw, i);
                    d.item = item;
                    Ok(Explanation::Step(d))
                }
                None => {
                    let steps = (0..cw.wf.steps.len()).map(|i| describe(&cw, i)).collect();
                    Ok(Explanation::Workflow(workflow_explanation(&cw, steps)))
                }
            };
        };
        // A run is explained through the version it is pinned to.
        self.with_run(workflow, run_id, |engine, _, cached| {
            let m = &cached.machine;
            Ok(Explanation::Run(RunExplanation {
                workflow: m.cw.wf.id.clone(),
                run_id: run_id.to_owned(),
                state: engine.state_summary(m),
                failure: m.state.failure.clone(),
                ready: engine.ready_ids(m),
                step: step_id.map(|id| engine.explain_run_step(m, id)).transpose()?,
            }))
        })
    }

    /// Step (or item) `id` of the run `m`: as the workflow describes it,
    /// with its status, attempts, why it stands there, the run's failure
    /// when it concerns the step and, when ready, its instruction.
    fn explain_run_step(&self, m: &Machine, id: &str) -> EngineResult<StepExplanation> {
        let cw = &m.cw;
        let (i, item) = find_step(cw, id)?;
        let mut d = describe(cw, i);
        let s = &m.state.steps[i];
        let (status, attempts) = match item {
            None => (s.status, s.attempts),
            Some(n) => match s.items.as_ref().and_then(|items| items.get(n)) {
                Some(it) => (it.status, it.attempts),
                None => {
                    let message = match &s.items {
                        Some(items) => format!(
                            "`{}` has {} item(s) in this run; items are numbered from 0",
                            s.id,
                            items.len()
                        ),
                        None => format!("`{}` has not been expanded into items yet", s.id),
                    };
                    return Err(unknown_in(cw, id, message));
                }
            },
        };
        if item.is_some() {
            d.step_id = id.to_owned();
            d.item = item;
        }
        d.status = Some(status);
        d.attempts = Some(attempts);
        let failure = m.state.failure.as_ref();
        // The run's failure concerns this step (or one of its items).
        let concerns_step = failure.and_then(RunFailure::step_id).is_some_and(|f| WorkId::base(f) == s.id);
        d.why = Some(why(m, WorkRef::new(i, item), status, concerns_step));
        if let Some(f) = failure
            && concerns_step
        {
            d.failure = Some(f.clone());
        }
        // A ready step (or foreach item `id[i]`) comes with its
        // rendered instruction, so a client can run every id of
        // `ready` in parallel, not only the one `plan`/`next` gave.
        if m.state.status == RunStatus::Running
            && let Some(w) = m.resolve(id)
            && m.status_of(w) == StepStatus::Ready
        {
            d.instruction = Some(self.instruction(m, w));
        }
        Ok(d)
    }

    /// Replays a run's history: the state changes after each event.
    pub fn debug(&self, workflow: &str, run_id: &str) -> EngineResult<Replay> {
        self.with_run(workflow, run_id, |_, _, cached| {
            let state = &cached.machine.state;
            let mut replay = Machine::start(
                cached.machine.cw.clone(),
                &state.run_id,
                state.params.clone(),
                &state.created_at,
            );
            let mut steps = Vec::new();
            let mut impossible = Vec::new();
            for e in &state.history {
                impossible.extend(impossible_event(&replay, e));
                let before = statuses(&replay);
                let captures_before = replay.captures();
                replay.apply(e.clone());
                let after = statuses(&replay);
                let changed: Map<String, Value> = after
                    .iter()
                    .filter(|(k, v)| before.get(*k) != Some(v))
                    .map(|(k, v)| (k.clone(), json!({"from": before.get(k), "to": v})))
                    .collect();
                let captures: Map<String, Value> = replay
                    .captures()
                    .into_iter()
                    .filter(|(k, v)| captures_before.get(k) != Some(v))
                    .collect();
                steps.push(ReplayedEvent {
                    event: e.clone(),
                    status_changes: changed,
                    captures_set: captures,
                    run_status: replay.state.status,
                });
            }
            Ok(Replay {
                workflow: state.workflow.clone(),
                run_id: state.run_id.clone(),
                events: steps.len(),
                consistent: impossible.is_empty()
                    && replay.state.steps == state.steps
                    && replay.state.capture_order == state.capture_order,
                impossible,
                replay: steps,
            })
        })
    }
}

/// Why `event` is one the workflow could not have recorded where it stands
/// in the history `m` has replayed so far: a result for a step that was
/// skipped or already done. (Two writers that each trusted a different
/// copy of the run would leave such a history; the engine never does.)
/// A workflow explained (no run): its steps as `describe` gives them.
fn workflow_explanation(cw: &CompiledWorkflow, steps: Vec<StepExplanation>) -> WorkflowExplanation {
    WorkflowExplanation {
        workflow: cw.wf.id.clone(),
        name: cw.wf.name.clone(),
        description: cw.wf.description.clone(),
        rules: cw.wf.rules.clone(),
        order: cw.plan.order.iter().map(|&i| cw.plan.steps[i].id.clone()).collect(),
        steps,
        longest_wait: super::longest_wait::longest_wait(&cw.wf, &cw.plan),
    }
}

fn impossible_event(m: &Machine, event: &Event) -> Option<String> {
    let (EventKind::Result { step_id, .. } | EventKind::ValidationFailed { step_id, .. }) = &event.kind
    else {
        return None;
    };
    let at = event.version;
    let Some(w) = m.resolve(step_id) else {
        return Some(format!("version {at}: a result for `{step_id}`, which the run does not have"));
    };
    match m.status_of(w) {
        StepStatus::Skipped => {
            Some(format!("version {at}: a result for `{step_id}`, which was skipped (its `when` was false)"))
        }
        StepStatus::Done => Some(format!("version {at}: a second result for `{step_id}`, which was done")),
        _ => None,
    }
}

/// Step `i` as the workflow describes it (no run: no status, no item).
fn describe(cw: &CompiledWorkflow, i: usize) -> StepExplanation {
    let s = &cw.wf.steps[i];
    let p = &cw.plan.steps[i];
    let ids = |of: &[usize]| of.iter().map(|&d| cw.plan.steps[d].id.clone()).collect();
    StepExplanation {
        step_id: s.id.value.to_string(),
        call: p.call.clone(),
        uses: p.uses.clone(),
        wait: s.wait.as_deref().map(crate::runtime::run::wait_summary),
        deps: ids(&p.deps),
        inferred_deps: ids(&p.inferred),
        when: s.when.as_ref().map(|w| w.text.clone()),
        foreach: s.foreach.as_ref().map(|f| f.text.clone()),
        capture_as: s.capture_as.as_ref().map(|c| c.value.to_string()),
        success_schema: s.success_schema.as_ref().map(|sc| match sc {
            SchemaRef::Named(n) => Value::String(n.value.to_string()),
            SchemaRef::Inline { schema, .. } => Value::clone(schema),
        }),
        rationale: s.rationale.as_ref().map(|r| r.text.clone()),
        retry_max: s.retry_max.unwrap_or(3),
        item: None,
        status: None,
        attempts: None,
        why: None,
        failure: None,
        instruction: None,
    }
}

/// `UNKNOWN_STEP` for `id` among `cw`'s steps.
fn unknown_in(cw: &CompiledWorkflow, id: &str, message: String) -> EngineError {
    EngineError::unknown_step(id, message, cw.wf.steps.iter().map(|s| s.id.value.as_str()), None)
}

/// `id` or `id[N]`: the step's index and the item's, if any. An item
/// index needs a foreach step (its range is checked against the run).
/// One segment: a `/` is part of the name looked for.
fn find_step(cw: &CompiledWorkflow, id: &str) -> Result<(usize, Option<usize>), EngineError> {
    let (base, item) = match WorkId::parse_segment(id) {
        Ok(parts) => parts,
        Err(WorkIdError::EmptyStep) => (WorkId::base(id), None),
        Err(_) => return Err(unknown_in(cw, id, format!("`{id}` is not a step id or `id[N]` item"))),
    };
    let i = cw
        .wf
        .steps
        .iter()
        .position(|s| s.id.value == base)
        .ok_or_else(|| unknown_in(cw, id, format!("no step `{base}` in `{}`", cw.wf.id)))?;
    if item.is_some() && cw.wf.steps[i].foreach.is_none() {
        return Err(unknown_in(
            cw,
            id,
            format!("`{base}` has no `foreach`, so it has no items; explain `{base}`"),
        ));
    }
    Ok((i, item))
}

/// Why work `w` of the run `m` stands at `status`, in words.
fn why(m: &Machine, w: WorkRef, status: StepStatus, concerns_step: bool) -> String {
    let plan = &m.cw.plan.steps;
    let waiting: Vec<&str> = plan[w.step]
        .deps
        .iter()
        .filter(|&&p| !m.state.steps[p].status.is_finished())
        .map(|&p| plan[p].id.as_str())
        .collect();
    let failed = m.state.status == RunStatus::Failed;
    let failure_message = m.state.failure.as_ref().and_then(RunFailure::message).unwrap_or("the run failed");
    match status {
        _ if failed && concerns_step => format!(
            "the run failed at this step: {failure_message}; reset the run (reset, with force to discard results) or start it again with plan"
        ),
        StepStatus::Pending | StepStatus::Ready | StepStatus::Running if failed => format!(
            "the run has failed ({failure_message}), so no step runs any more; reset it or start it again with plan"
        ),
        StepStatus::Pending if waiting.is_empty() => {
            "its dependencies are finished; it becomes ready when the run next advances".to_owned()
        }
        StepStatus::Pending => format!("waiting for {}", waiting.join(", ")),
        StepStatus::Ready => "ready: its dependencies are done; submit its result with next".to_owned(),
        StepStatus::Running => "its foreach items are being worked on".to_owned(),
        StepStatus::Waiting => crate::runtime::run::wait_text(m.input_of(w)),
        StepStatus::Skipped => "skipped: its `when` was false".to_owned(),
        StepStatus::Done | StepStatus::Failed => status.to_string(),
    }
}
