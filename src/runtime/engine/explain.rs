//! `explain` (a workflow, a run or a step in words and data) and `debug`
//! (a run's history replayed).

use super::*;

impl Engine {
    /// Explains a workflow, a run, or one step of either.
    pub fn explain(&self, workflow: &str, run_id: Option<&str>, step_id: Option<&str>) -> EngineResult {
        let cw = self.workflow(workflow)?;
        let describe = |i: usize| {
            let s = &cw.wf.steps[i];
            let p = &cw.plan.steps[i];
            json!({
                "step_id": s.id.value,
                "call": p.call,
                "deps": p.deps.iter().map(|&d| cw.plan.steps[d].id.as_str()).collect::<Vec<_>>(),
                "inferred_deps": p.inferred.iter().map(|&d| cw.plan.steps[d].id.as_str()).collect::<Vec<_>>(),
                "when": s.when.as_ref().map(|w| w.text.as_str()),
                "foreach": s.foreach.as_ref().map(|f| f.text.as_str()),
                "capture_as": s.capture_as.as_ref().map(|c| c.value.as_str()),
                "success_schema": s.success_schema.as_ref().map(|sc| match sc { SchemaRef::Named(n) => json!(n.value), SchemaRef::Inline { schema, .. } => Value::clone(schema) }),
                "rationale": s.rationale.as_ref().map(|r| r.text.as_str()),
                "retry_max": s.retry_max.unwrap_or(3),
            })
        };
        let unknown = |id: &str, message: String| {
            EngineError::new(ErrorCode::UnknownStep, json!({"step_id": id, "message": message}))
        };
        // `id` or `id[N]`: the step's index and the item's, if any. An item
        // index needs a foreach step (its range is checked against the run).
        let find = |id: &str| -> Result<(usize, Option<usize>), EngineError> {
            let (base, item) = match id.strip_suffix(']').and_then(|s| s.split_once('[')) {
                Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    (base, Some(n.parse::<usize>().unwrap_or(usize::MAX)))
                }
                Some(_) => return Err(unknown(id, format!("`{id}` is not a step id or `id[N]` item"))),
                None if id.contains('[') || id.contains(']') => {
                    return Err(unknown(id, format!("`{id}` is not a step id or `id[N]` item")));
                }
                None => (id, None),
            };
            let i = cw
                .wf
                .steps
                .iter()
                .position(|s| s.id.value == base)
                .ok_or_else(|| unknown(id, format!("no step `{base}` in `{}`", cw.wf.id)))?;
            if item.is_some() && cw.wf.steps[i].foreach.is_none() {
                return Err(unknown(
                    id,
                    format!("`{base}` has no `foreach`, so it has no items; explain `{base}`"),
                ));
            }
            Ok((i, item))
        };
        let Some(run_id) = run_id else {
            return match step_id {
                Some(id) => {
                    let (i, item) = find(id)?;
                    let mut d = describe(i);
                    if let Some(n) = item {
                        d["item"] = json!(n);
                    }
                    Ok(d)
                }
                None => Ok(json!({
                    "workflow": cw.wf.id, "name": cw.wf.name, "description": cw.wf.description, "rules": cw.wf.rules,
                    "order": cw.plan.order.iter().map(|&i| cw.plan.steps[i].id.as_str()).collect::<Vec<_>>(),
                    "steps": (0..cw.wf.steps.len()).map(describe).collect::<Vec<_>>(),
                })),
            };
        };
        self.with_run(workflow, run_id, |engine, _, cached| {
            let m = &cached.machine;
            let mut out = json!({
                "workflow": cw.wf.id, "run_id": run_id, "state": engine.state_summary(m),
                "failure": m.state.failure, "ready": engine.ready_ids(m),
            });
            if let Some(id) = step_id {
                let (i, item) = find(id)?;
                let mut d = describe(i);
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
                            return Err(unknown(id, message));
                        }
                    },
                };
                if let Some(n) = item {
                    d["step_id"] = json!(id);
                    d["item"] = json!(n);
                }
                d["status"] = json!(status);
                d["attempts"] = json!(attempts);
                let waiting: Vec<&str> = cw.plan.steps[i]
                    .deps
                    .iter()
                    .filter(|&&p| !m.state.steps[p].status.is_finished())
                    .map(|&p| cw.plan.steps[p].id.as_str())
                    .collect();
                let failure = m.state.failure.as_ref();
                // The run's failure concerns this step (or one of its items).
                let concerns_step = failure.is_some_and(|f| {
                    f.get("step_id").and_then(Value::as_str).is_some_and(|f| f.split('[').next() == Some(&s.id))
                });
                let failed = m.state.status == RunStatus::Failed;
                let failure_message =
                    failure.and_then(|f| f.get("message")).and_then(Value::as_str).unwrap_or("the run failed");
                d["why"] = json!(match status {
                    _ if failed && concerns_step => format!(
                        "the run failed at this step: {failure_message}; reset the run (reset, with force to discard results) or start it again with plan"
                    ),
                    StepStatus::Pending | StepStatus::Ready | StepStatus::Running if failed => format!(
                        "the run has failed ({failure_message}), so no step runs any more; reset it or start it again with plan"
                    ),
                    StepStatus::Pending if waiting.is_empty() =>
                        "its dependencies are finished; it becomes ready when the run next advances".to_owned(),
                    StepStatus::Pending => format!("waiting for {}", waiting.join(", ")),
                    StepStatus::Ready =>
                        "ready: its dependencies are done; submit its result with next".to_owned(),
                    StepStatus::Running => "its foreach items are being worked on".to_owned(),
                    StepStatus::Done => "done".to_owned(),
                    StepStatus::Skipped => "skipped: its `when` was false".to_owned(),
                    StepStatus::Failed => "failed".to_owned(),
                });
                if let Some(f) = failure
                    && concerns_step
                {
                    d["failure"] = f.clone();
                }
                // A ready step (or foreach item `id[i]`) comes with its
                // rendered instruction, so a client can run every id of
                // `ready` in parallel, not only the one `plan`/`next` gave.
                if m.state.status == RunStatus::Running
                    && let Some(w) = m.resolve(id)
                    && m.status_of(w) == StepStatus::Ready
                {
                    d["instruction"] = engine.instruction(m, w);
                }
                out["step"] = d;
            }
            Ok(out)
        })
    }

    /// Replays a run's history: the state changes after each event.
    pub fn debug(&self, workflow: &str, run_id: &str) -> EngineResult {
        self.with_run(workflow, run_id, |_, _, cached| {
            let state = &cached.machine.state;
            let mut replay =
                Machine::start(cached.machine.cw.clone(), &state.run_id, state.params.clone(), &state.created_at);
            let mut steps = Vec::new();
            for e in &state.history {
                let before = statuses(&replay);
                let captures_before = replay.state.captures.clone();
                replay.apply(e.clone());
                let after = statuses(&replay);
                let changed: Map<String, Value> = after
                    .iter()
                    .filter(|(k, v)| before.get(*k) != Some(v))
                    .map(|(k, v)| (k.clone(), json!({"from": before.get(k), "to": v})))
                    .collect();
                let captures: Map<String, Value> = replay
                    .state
                    .captures
                    .iter()
                    .filter(|(k, v)| captures_before.get(*k) != Some(v))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                steps.push(json!({ "event": e, "status_changes": changed, "captures_set": captures, "run_status": replay.state.status }));
            }
            Ok(json!({ "workflow": state.workflow, "run_id": state.run_id, "events": steps.len(), "replay": steps,
                       "consistent": replay.state.steps == state.steps && replay.state.captures == state.captures }))
        })
    }
}
