//! Waits in the state machine. A wait step (or item) that activates is
//! `waiting`, its input the rendered wait: `{wait, ask?, event?, key?,
//! deadline?}` (`wait` is `answer`, `timer` or `event`; the deadline is
//! computed from the time of the event that started it, so a replay
//! computes the same one). It completes with an `answered`, `signal` or
//! `timer_fired` event, whose value is its result; a `timer_fired` with
//! no value on an `await:` or `wait_for:` fails it (`WAIT_TIMED_OUT`).

use super::*;
use crate::ir::{Wait, WaitKind};
use crate::runtime::clock;
use crate::runtime::render::render_string;

/// The history indexes of the events kept in the inbox (a `signal` with
/// no step) that no later `signal` delivered (`from_inbox`), oldest first.
pub(super) fn undelivered(history: &[Event]) -> Vec<usize> {
    let taken: BTreeSet<u64> = history
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Signal { from_inbox, .. } => *from_inbox,
            _ => None,
        })
        .collect();
    let kept =
        |e: &Event| matches!(e.kind, EventKind::Signal { step_id: None, .. }) && !taken.contains(&e.version);
    history.iter().enumerate().filter(|(_, e)| kept(e)).map(|(k, _)| k).collect()
}

impl Machine {
    /// The events in the run's inbox, not yet delivered, oldest first
    /// (an index kept as events apply: no scan of the history).
    pub fn inbox(&self) -> impl Iterator<Item = &Event> + '_ {
        self.inbox.iter().map(|&k| &self.state.history[k])
    }

    /// The units waiting, in declaration order.
    pub fn waiting(&self) -> impl Iterator<Item = WorkRef> + '_ {
        self.waiting.iter().copied()
    }

    /// The wait of step `i`, if it is a wait step.
    pub fn wait_of(&self, i: usize) -> Option<&Wait> {
        self.cw.wf.steps[i].wait.as_deref()
    }

    /// A waiting unit's deadline (RFC 3339), when it has one.
    pub fn deadline_of(&self, w: WorkRef) -> Option<&str> {
        self.input_of(w)?.get("deadline")?.as_str()
    }

    /// The earliest deadline among the waiting units.
    pub fn next_deadline(&self) -> Option<(WorkRef, &str)> {
        self.waiting()
            .filter_map(|w| Some((w, self.deadline_of(w)?)))
            .min_by_key(|(_, d)| clock::parse_time(d))
    }

    /// The earliest deadline a wait not started yet could get from an
    /// event recorded at `at` (the timer index's intent, `engine/timers.rs`):
    /// `at` plus its `sleep:` or `timeout:`, or `at` itself for a
    /// `sleep_until:` (its time is known once rendered); `None` when no
    /// wait with a deadline is left to start.
    pub fn earliest_new_deadline(&self, at: &str) -> Option<std::time::SystemTime> {
        let pending = self.state.steps.iter().enumerate().filter(|(_, s)| s.status == StepStatus::Pending);
        let deadlines = pending.filter_map(|(i, _)| {
            let deadline = match &self.wait_of(i)?.kind {
                WaitKind::Sleep { secs, .. } => clock::deadline_after(at, *secs)?,
                WaitKind::Answer { timeout, .. } | WaitKind::Event { timeout, .. } => {
                    clock::deadline_after(at, timeout.and_then(|t| t.secs())?)?
                }
                WaitKind::SleepUntil { .. } => at.to_owned(),
            };
            clock::parse_time(&deadline)
        });
        deadlines.min()
    }

    /// The event and key waiting unit `w` waits for, if it waits for one.
    pub fn awaited_event(&self, w: WorkRef) -> Option<(&str, Option<&str>)> {
        let input = self.input_of(w)?;
        let event = input.get("event")?.as_str()?;
        Some((event, input.get("key").and_then(Value::as_str)))
    }

    /// Whether pending `wait_for:` step `i` may wait for key `key`: its
    /// `match:` reads only what is known now (params, the run, captures of
    /// finished steps) and renders to `key`, or reads what is not known yet
    /// (the loop variable, a capture to come). A step without `match:`
    /// takes any key.
    pub fn key_can_be(&self, i: usize, key: Option<&str>) -> bool {
        let Some(WaitKind::Event { key: Some(template), .. }) = self.wait_of(i).map(|w| &w.kind) else {
            return true;
        };
        let step = &self.cw.wf.steps[i];
        let mut known = true;
        for seg in &template.template.segments {
            let crate::syntax::ast::Segment::Interp { expr, .. } = seg else { continue };
            crate::syntax::ast::walk(expr, &mut |e| {
                if let crate::syntax::ast::ExprKind::Var(name) = &e.kind {
                    let name = name.as_str();
                    let set = matches!(name, "params" | "run" | "workflow")
                        || self
                            .cw
                            .capture_steps
                            .get(name)
                            .is_some_and(|&s| self.state.steps[s].status.is_finished());
                    known &= set && step.foreach.is_none();
                }
            });
        }
        if !known {
            return true;
        }
        match render_string(template, &RunScope::new(self, None)) {
            Ok(Value::String(s)) => key == Some(s.as_str()),
            Ok(other) => key == Some(crate::runtime::text::stringify(&other).as_str()),
            Err(_) => true,
        }
    }

    /// The rendered wait of `wait` in `scope`, started at the run's current
    /// time (the time of the event being applied).
    pub(super) fn wait_input(&self, step: &Step, wait: &Wait, scope: &RunScope) -> Result<Value, RunFailure> {
        let failure = |expression: &str, message: String| RunFailure::TemplateRender {
            step_id: step.id.value.to_string(),
            expression: expression.to_owned(),
            message,
        };
        let text = |t: &crate::ir::TemplateString| -> Result<String, RunFailure> {
            match render_string(t, scope) {
                Ok(Value::String(s)) => Ok(s),
                Ok(other) => Ok(crate::runtime::text::stringify(&other)),
                Err(e) => Err(failure(&e.expr, e.message)),
            }
        };
        let now = &self.state.updated_at;
        let after = |secs: u64| clock::deadline_after(now, secs).map(Value::String);
        let mut out = Map::new();
        out.insert("wait".into(), json!(wait.reason()));
        let deadline = match &wait.kind {
            WaitKind::Answer { ask, timeout, .. } => {
                out.insert("ask".into(), json!(text(ask)?));
                timeout.and_then(|t| t.secs()).and_then(after)
            }
            WaitKind::Sleep { secs, .. } => after(*secs),
            WaitKind::SleepUntil { at } => {
                let written = text(at)?;
                let Some(t) = clock::parse_time(&written) else {
                    return Err(failure(
                        &at.text,
                        format!("`{written}` is not an RFC 3339 time (like `2026-11-29T10:00:00Z`)"),
                    ));
                };
                Some(Value::String(clock::format_time(t)))
            }
            WaitKind::Event { event, key, timeout, .. } => {
                out.insert("event".into(), json!(event.value.as_str()));
                if let Some(k) = key {
                    out.insert("key".into(), json!(text(k)?));
                }
                timeout.and_then(|t| t.secs()).and_then(after)
            }
        };
        if let Some(d) = deadline {
            out.insert("deadline".into(), d);
        }
        Ok(Value::Object(out))
    }

    /// Applies history event `k` when it ends a wait (`answered`, a
    /// delivered `signal`, `timer_fired`). An event for a unit that is not
    /// waiting changes nothing (the engine refuses those before recording).
    pub(super) fn apply_wait_event(&mut self, k: usize) {
        if let EventKind::Signal { step_id, from_inbox, .. } = &self.state.history[k].kind {
            match (step_id, *from_inbox) {
                (None, _) => self.inbox.push(k),
                (Some(_), Some(v)) => {
                    let history = &self.state.history;
                    self.inbox.retain(|&i| history[i].version != v);
                }
                (Some(_), None) => {}
            }
        }
        let (step_id, timed_out) = match &self.state.history[k].kind {
            EventKind::Answered { step_id, .. } | EventKind::Signal { step_id: Some(step_id), .. } => {
                (step_id.clone(), false)
            }
            EventKind::TimerFired { step_id, value } => (step_id.clone(), value.is_none()),
            _ => return,
        };
        let Some(w) = self.resolve(&step_id) else { return };
        if !self.waiting.remove(&w) {
            return;
        }
        let sleeps = self.wait_of(w.step).is_some_and(|wt| wt.reason() == "timer");
        if timed_out && !sleeps {
            let deadline = self.deadline_of(w).unwrap_or_default().to_owned();
            self.mark_failed(w);
            self.fail(RunFailure::WaitTimedOut {
                message: format!(
                    "`{step_id}` waited until {deadline} and got no answer (it has no `on_timeout:`)"
                ),
                step_id,
                deadline,
            });
            return;
        }
        self.accept(w, k);
        self.checkpoint_after(w, k);
    }
}

/// What a waiting unit waits for, for a person, from its rendered wait:
/// "waiting for an answer to “Merge?” until 2026-11-30T10:00:00Z".
pub fn wait_text(input: Option<&Value>) -> String {
    let get = |k: &str| input.and_then(|i| i.get(k)).and_then(Value::as_str);
    let what = match (get("wait"), get("ask"), get("event")) {
        (Some("answer"), Some(ask), _) => format!("waiting for an answer to “{ask}”"),
        (Some("event"), _, Some(event)) => match get("key") {
            Some(key) => format!("waiting for event `{event}` with key `{key}`"),
            None => format!("waiting for event `{event}`"),
        },
        (Some("timer"), _, _) => "sleeping".to_owned(),
        _ => "waiting".to_owned(),
    };
    match get("deadline") {
        Some(d) if get("wait") == Some("timer") => format!("{what} until {d}"),
        Some(d) => format!("{what} until {d} (its timeout)"),
        None => format!("{what}, with no timeout"),
    }
}

/// A wait as written, for a person: "await an answer to “Merge?” (timeout
/// 24h, then {\"approved\":false})", "sleep 10m", "wait for event `x`
/// matching `<<id>>` (no timeout)".
pub fn wait_summary(wait: &Wait) -> String {
    let duration = |secs: u64| {
        let units = [(604_800, "w"), (86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
        let (n, unit) =
            units.iter().find(|(u, _)| secs.is_multiple_of(*u)).map_or((secs, "s"), |(u, n)| (secs / u, *n));
        format!("{n}{unit}")
    };
    let timeout = || match (wait.timeout(), wait.on_timeout()) {
        (None, _) => " (no timeout)".to_owned(),
        (Some(crate::ir::WaitTimeout::Never(_)), _) => " (timeout: never)".to_owned(),
        (Some(t), Some(v)) => format!(" (timeout {}, then {})", duration(t.secs().unwrap_or(0)), v.value),
        (Some(t), None) => format!(" (timeout {}, then WAIT_TIMED_OUT)", duration(t.secs().unwrap_or(0))),
    };
    match &wait.kind {
        WaitKind::Answer { ask, .. } => format!("await an answer to “{}”{}", ask.text, timeout()),
        WaitKind::Sleep { secs, .. } => format!("sleep {}", duration(*secs)),
        WaitKind::SleepUntil { at } => format!("sleep until {}", at.text),
        WaitKind::Event { event, key, .. } => match key {
            Some(k) => format!("wait for event `{}` matching `{}`{}", event.value, k.text, timeout()),
            None => format!("wait for event `{}`{}", event.value, timeout()),
        },
    }
}
