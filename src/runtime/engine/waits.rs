//! Waits at the engine (docs/runtime.md, "Waiting"): a person's answer
//! (`answer`), an event (`signal`) and a timer each end a wait, recorded
//! once, under the run's lock, as one journal event.
//!
//! - Timers are applied by any call that works on the run under its lock
//!   ([`Engine::settle_waits`], called by `advance`): a due deadline is a
//!   `timer_fired` event before anything else happens. `serve` also fires
//!   them in the background ([`Engine::fire_due_timers`]).
//! - An event for a run that will wait for it, but does not yet, is kept
//!   in the run's inbox (a `signal` event with no step) and delivered
//!   when the wait starts. An event no running run waits for, nor will,
//!   is refused (`NO_WAITING_RUN`): the sender retries, nothing is kept.
//! - An answer or event that fails its schema is refused
//!   (`VALIDATION_FAILED`, naming the field) and nothing is recorded; a
//!   second, different answer to an answered wait is `STATE_CONFLICT`.

use super::children::ChildRoute;
use super::*;
use crate::ir::WaitKind;
use crate::runtime::args::{AnswerArgs, SignalArgs};
use crate::runtime::clock;
use crate::runtime::error_details::{NoWaitingRun, StepNotWaiting, UnknownEvent};
use crate::runtime::reply::WaitView;
pub use crate::runtime::reply_waits::{Delivery, Signalled};

/// How many timers and inbox deliveries one call applies before it goes
/// on (each is an event; a run has at most this many waiting units due).
const MAX_SETTLED_PER_CALL: usize = 10_000;

impl Engine {
    /// Records a person's answer to a waiting `await:` step and returns the
    /// run's progress (see the module).
    pub fn answer(&self, args: AnswerArgs) -> EngineResult<Progress> {
        let (key, _lock, mut cached) = self.open_run(&args.workflow, &args.run_id)?;
        let out = self.answer_locked(&key, &mut cached, args);
        self.put(&key, cached);
        out
    }

    fn answer_locked(&self, key: &RunKey, cached: &mut Cached, args: AnswerArgs) -> EngineResult<Progress> {
        self.settle_waits(key, cached)?;
        let m = &cached.machine;
        expect_version(m, args.expected_version)?;
        let Some(w) = m.resolve(&args.step_id) else {
            // `USES_STEP/STEP`: an answer for the child of a `uses:` step.
            let child = |engine: &Engine, to: ChildRoute| {
                let AnswerArgs { value, .. } = &args;
                engine.answer(AnswerArgs {
                    workflow: to.workflow,
                    run_id: to.run_id,
                    step_id: to.rest,
                    value: value.clone(),
                    expected_version: None,
                })
            };
            if let Some(out) = self.in_child(key, cached, &args.step_id, true, child) {
                return out;
            }
            let m = &cached.machine;
            return Err(EngineError::unknown_step(
                &args.step_id,
                format!("no step `{}` in this run", args.step_id),
                m.cw.wf.steps.iter().map(|s| s.id.value.as_str()),
                None,
            ));
        };
        let asks = m.wait_of(w.step).is_some_and(|wt| matches!(wt.kind, WaitKind::Answer { .. }));
        match m.status_of(w) {
            StepStatus::Waiting if asks && m.state.status == RunStatus::Running => {}
            StepStatus::Done if asks => {
                let what = "answered, with a different answer";
                return self.done_again(key, cached, w, args.value, args.step_id, what);
            }
            _ if m.state.status == RunStatus::Failed => return Err(self.failed(m)),
            status => return Err(self.not_waiting(m, &args.step_id, status, asks)),
        }
        if let Some(schema) = &m.step(w.step).success_schema {
            let errors = self.validate_pinned(key, m, schema, &args.value)?;
            if !errors.is_empty() {
                return Err(EngineError::fields(ErrorCode::ValidationFailed, &errors)
                    .with_state(self.state_summary(m)));
            }
        }
        let mut value = args.value;
        let caps = self.caps();
        payload::truncate(&mut value, caps.0, caps.1);
        let kind = EventKind::Answered { step_id: args.step_id, value };
        let event = Event { version: m.state.version + 1, at: now(), kind };
        self.commit(key, cached, event)?;
        self.advance(key, cached)
    }

    fn not_waiting(&self, m: &Machine, step_id: &str, status: StepStatus, asks: bool) -> EngineError {
        let message = match (asks, status) {
            (false, _) => format!("`{step_id}` does not wait for an answer (it is not an `await:` step)"),
            (true, StepStatus::Pending) => {
                format!("`{step_id}` does not wait yet: its dependencies have not finished")
            }
            (true, status) => format!("`{step_id}` is {status}, not waiting for an answer"),
        };
        let waiting = m
            .waiting()
            .filter(|&w| m.wait_of(w.step).is_some_and(|wt| matches!(wt.kind, WaitKind::Answer { .. })))
            .take(READY_LIST_CAP)
            .map(|w| m.work_id(w))
            .collect();
        EngineError::with(
            ErrorCode::StepNotWaiting,
            StepNotWaiting { step_id: step_id.to_owned(), status, message, waiting },
        )
    }

    /// Ends the wait of step `step_id` now, as if its deadline had passed
    /// (`timer_fired`: its `on_timeout`, else WAIT_TIMED_OUT), and returns
    /// the run's progress. `uses_step/id` reaches a wait in a child run.
    ///
    /// For tests only: the fake clock of `savant-think test` (`timeouts:`)
    /// and `exec --dry-run`. A real run's timers fire at their deadlines.
    pub fn fire_wait_now(&self, workflow: &str, run_id: &str, step_id: &str) -> EngineResult<Progress> {
        self.with_run(workflow, run_id, |engine, key, cached| {
            let m = &cached.machine;
            let Some(w) = m.resolve(step_id) else {
                let child = |engine: &Engine, to: ChildRoute| {
                    engine.fire_wait_now(&to.workflow, &to.run_id, &to.rest)
                };
                if let Some(out) = engine.in_child(key, cached, step_id, false, child) {
                    return out;
                }
                let steps = cached.machine.cw.wf.steps.iter().map(|s| s.id.value.as_str());
                return Err(EngineError::unknown_step(
                    step_id,
                    format!("no step `{step_id}` in this run"),
                    steps,
                    None,
                ));
            };
            if m.status_of(w) != StepStatus::Waiting || m.state.status != RunStatus::Running {
                let asks = m.wait_of(w.step).is_some();
                return Err(engine.not_waiting(m, step_id, m.status_of(w), asks));
            }
            let value = m.wait_of(w.step).and_then(|wt| wt.on_timeout()).map(|o| o.value.clone());
            let kind = EventKind::TimerFired { step_id: m.work_id(w), value };
            let event = Event { version: m.state.version + 1, at: now(), kind };
            engine.commit(key, cached, event)?;
            engine.advance(key, cached)
        })
    }

    /// The payload schema of event `name`, as savant-think.toml declares it
    /// (`None`: undeclared, or declared without one).
    pub fn event_schema(&self, name: &str) -> Option<Value> {
        self.config.events.get(name).and_then(|e| e.schema.clone())
    }

    /// The answer schema of a waiting step as JSON Schema (a named schema
    /// resolved; `{}` when it has none).
    pub fn answer_schema_of(&self, view: &WaitView) -> Value {
        match &view.schema {
            Some(Value::String(name)) => self.project.schema(name).unwrap_or_else(|_| json!({})),
            Some(inline) => inline.clone(),
            None => json!({}),
        }
    }

    /// Applies what is due before a call works on the run: each waiting
    /// unit whose deadline has passed (`timer_fired`), and each event in
    /// the inbox that a wait now takes.
    pub(super) fn settle_waits(&self, key: &RunKey, cached: &mut Cached) -> Result<(), EngineError> {
        self.settle_waits_at(key, cached, clock::now())
    }

    /// [`Engine::settle_waits`] with the deadlines due at `due_at` at least
    /// (the store's clock, when `serve` fires a timer from its index).
    pub(super) fn settle_waits_at(
        &self,
        key: &RunKey,
        cached: &mut Cached,
        due_at: std::time::SystemTime,
    ) -> Result<(), EngineError> {
        for _ in 0..MAX_SETTLED_PER_CALL {
            let m = &cached.machine;
            if m.state.status != RunStatus::Running || m.waiting().next().is_none() {
                return Ok(());
            }
            let at = clock::now().max(due_at);
            let due = m.waiting().find(|&w| m.deadline_of(w).is_some_and(|d| clock::is_due(d, at)));
            let kind = match due {
                Some(w) => {
                    let value = m.wait_of(w.step).and_then(|wt| wt.on_timeout()).map(|o| o.value.clone());
                    EventKind::TimerFired { step_id: m.work_id(w), value }
                }
                None => match inbox_delivery(m) {
                    Some(kind) => kind,
                    None => return Ok(()),
                },
            };
            let event = Event { version: m.state.version + 1, at: now(), kind };
            self.commit(key, cached, event)?;
        }
        Ok(())
    }

    /// The waits of a run, as replies list them (at most 50).
    pub(super) fn wait_views(&self, m: &Machine) -> Vec<WaitView> {
        m.waiting().take(READY_LIST_CAP).map(|w| wait_view(m, w)).collect()
    }

    /// Delivers an event to the runs that wait for it, or will (see the module).
    pub fn signal(&self, args: SignalArgs) -> EngineResult<Signalled> {
        let Some(declared) = self.config.events.get(&args.event) else {
            let names: Vec<String> = self.config.events.keys().cloned().collect();
            let help = crate::diagnostic::suggest(&args.event, names.iter().map(String::as_str))
                .unwrap_or_else(|| format!("declare it in savant-think.toml: [events.{}]", args.event));
            return Err(EngineError::with(
                ErrorCode::UnknownEvent,
                UnknownEvent {
                    message: format!("no event `{}` is declared in savant-think.toml", args.event),
                    event: args.event,
                    help,
                    declared: names,
                },
            ));
        };
        let payload = args.payload.clone().unwrap_or_else(|| json!({}));
        let bytes = payload::json_len(&payload);
        if bytes > self.config.max_snapshot_bytes {
            return Err(EngineError::message_help(
                ErrorCode::InvalidInput,
                format!(
                    "the payload of `{}` is {bytes} bytes; an event's payload may be at most {} (max_snapshot_bytes)",
                    args.event, self.config.max_snapshot_bytes
                ),
                Some("send a reference (an id, a URL) rather than the data itself".into()),
            ));
        }
        if let Some(schema) = &declared.schema {
            let errors = self.inline_errors(schema, &payload)?;
            if !errors.is_empty() {
                return Err(EngineError::fields(ErrorCode::ValidationFailed, &errors));
            }
        }
        let keys = match (&args.workflow, &args.run_id) {
            (Some(wf), Some(run)) => vec![self.run_key(wf, run)?.0],
            (wf, _) => self.store.list(wf.as_deref()).map_err(store_error)?,
        };
        let mut delivered = Vec::new();
        for k in keys {
            // Only runs of a workflow that waits for the event (the file as
            // it is now: a run pinned to another version is checked below).
            let waits_for = |cw: &CompiledWorkflow| cw.wf.steps.iter().any(|s| waits_for(s, &args.event));
            if !self.workflow(&k.workflow).is_ok_and(|cw| waits_for(&cw)) {
                continue;
            }
            let got = self.with_run(&k.workflow, &k.run_id, |engine, key, cached| {
                engine.deliver(key, cached, &args, &payload)
            });
            match got {
                Ok(Some(d)) => delivered.push(d),
                Ok(None) => {}
                // A run named explicitly says why; others that cannot be read are passed over.
                Err(e) if args.run_id.is_some() => return Err(e),
                Err(_) => {}
            }
        }
        if delivered.is_empty() {
            let key_text = args.key.as_ref().map(|k| format!(" with key `{k}`")).unwrap_or_default();
            return Err(EngineError::with(
                ErrorCode::NoWaitingRun,
                NoWaitingRun {
                    message: format!(
                        "no running run waits, or will wait, for `{}`{key_text}; the event was not kept",
                        args.event
                    ),
                    event: args.event,
                    key: args.key,
                },
            ));
        }
        Ok(Signalled { event: args.event, key: args.key, delivered })
    }

    /// Records an event in one run: to the wait that takes it, or to the
    /// inbox when a wait on it has not started yet. `None` when the run
    /// has no use for it.
    fn deliver(
        &self,
        key: &RunKey,
        cached: &mut Cached,
        args: &SignalArgs,
        payload: &Value,
    ) -> Result<Option<Delivery>, EngineError> {
        self.settle_waits(key, cached)?;
        let m = &cached.machine;
        if m.state.status != RunStatus::Running {
            return Ok(None);
        }
        let delivery = |step_id: Option<String>, duplicate| Delivery {
            workflow: key.workflow.clone(),
            run_id: key.run_id.clone(),
            step_id,
            duplicate,
        };
        if let Some(id) = &args.id
            && let Some(step) = m.state.history.iter().find_map(|e| match &e.kind {
                EventKind::Signal { id: Some(seen), step_id, .. } if seen == id => Some(step_id.clone()),
                _ => None,
            })
        {
            return Ok(Some(delivery(step, true)));
        }
        let target = m.waiting().find(|&w| takes(m.awaited_event(w), &args.event, args.key.as_deref()));
        let pending = m.cw.wf.steps.iter().enumerate().any(|(i, s)| {
            waits_for(s, &args.event)
                && m.state.steps[i].status == StepStatus::Pending
                && m.key_can_be(i, args.key.as_deref())
        });
        let step_id = match target {
            Some(w) => Some(m.work_id(w)),
            None if pending => None,
            None => return Ok(None),
        };
        let kind = EventKind::Signal {
            event: args.event.clone(),
            key: args.key.clone(),
            payload: payload.clone(),
            step_id: step_id.clone(),
            id: args.id.clone(),
            from_inbox: None,
        };
        let event = Event { version: m.state.version + 1, at: now(), kind };
        self.commit(key, cached, event)?;
        Ok(Some(delivery(step_id, false)))
    }
}

/// Whether step `s` waits for event `event`.
fn waits_for(s: &crate::ir::Step, event: &str) -> bool {
    s.wait.as_ref().is_some_and(|w| matches!(&w.kind, WaitKind::Event { event: e, .. } if e.value == event))
}

/// Whether a wait on `awaited` (event, key) takes an event `event` with
/// `key`: the same name, and the same key when the wait has one.
fn takes(awaited: Option<(&str, Option<&str>)>, event: &str, key: Option<&str>) -> bool {
    match awaited {
        Some((e, wanted)) => e == event && wanted.is_none_or(|w| Some(w) == key),
        None => false,
    }
}

/// The first waiting unit that an event in the run's inbox is for, as the
/// `signal` event that delivers it.
fn inbox_delivery(m: &Machine) -> Option<EventKind> {
    if !m.waiting().any(|w| m.awaited_event(w).is_some()) {
        return None;
    }
    for e in m.inbox() {
        let EventKind::Signal { event, key, payload, step_id: None, .. } = &e.kind else { continue };
        if let Some(w) = m.waiting().find(|&w| takes(m.awaited_event(w), event, key.as_deref())) {
            return Some(EventKind::Signal {
                event: event.clone(),
                key: key.clone(),
                payload: payload.clone(),
                step_id: Some(m.work_id(w)),
                id: None,
                from_inbox: Some(e.version),
            });
        }
    }
    None
}

/// A waiting unit as replies show it.
fn wait_view(m: &Machine, w: WorkRef) -> WaitView {
    let input = m.input_of(w);
    let get = |k: &str| input.and_then(|i| i.get(k)).and_then(Value::as_str).map(str::to_owned);
    let step_id = m.work_id(w);
    let wait = get("wait").unwrap_or_else(|| "answer".into());
    let (workflow, run_id) = (&m.state.workflow, &m.state.run_id);
    let deadline = get("deadline");
    let how = match wait.as_str() {
        "answer" => format!(
            "ask a person, then think_answer {{workflow: {workflow:?}, run_id: {run_id:?}, step_id: {step_id:?}, value: …}} (CLI: savant-think answer {workflow} --run-id {run_id} --step {step_id} --value JSON)"
        ),
        "event" => {
            let event = get("event").unwrap_or_default();
            let key = get("key").map(|k| format!(" --key {k}")).unwrap_or_default();
            format!(
                "ends when the event arrives: think_signal, or savant-think signal {event}{key} --payload JSON"
            )
        }
        _ => format!(
            "ends by itself at {}; any call on the run after that goes on",
            deadline.as_deref().unwrap_or("its deadline")
        ),
    };
    let schema = match (&m.step(w.step).success_schema, wait.as_str()) {
        (Some(crate::ir::SchemaRef::Named(n)), "answer") => Some(Value::String(n.value.to_string())),
        (Some(crate::ir::SchemaRef::Inline { schema, .. }), "answer") => Some(Value::clone(schema)),
        _ => None,
    };
    WaitView {
        step_id,
        ask: get("ask"),
        schema,
        event: get("event"),
        key: get("key"),
        deadline,
        how,
        wait,
        sub_run: None,
    }
}
