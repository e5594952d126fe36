//! The waits of a recorded run, for `test --replay` and `--from-run`
//! (`replay.rs`): how each wait ended — a person's answer (`answered`), an
//! event (`signal`, also one kept in the inbox before its wait started),
//! a deadline (`timer_fired`) — read from the journal, given again to the
//! replay through the engine's own calls when it waits, and written as a
//! test's `answers:`, `events:` and `timeouts:`.
//!
//! A replay ends a wait with the first unused recorded end that fits it:
//! an answer or a timeout for the same step (or item, or child path), an
//! event of the same name and key. A recorded end that no wait of the
//! replay took is a divergence (`NOT_REACHED`).

use crate::runtime::Engine;
use crate::runtime::args::{AnswerArgs, SignalArgs};
use crate::runtime::reply::{Instruction, WaitView};
use crate::source::Span;
use crate::testing::format::{Spanned, TestEvent, Waits};
use crate::testing::run::TestError;
use serde_json::{Map, Value, json};

/// How one wait of a recorded run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitEnd {
    /// A person's answer to step (or item, or child path) `step_id`.
    Answered { step_id: String, value: Value },
    /// An event, as sent (before its wait started or after).
    Event { event: String, key: Option<String>, payload: Value },
    /// The deadline of `step_id` passed (a sleep's end, or a timeout).
    TimedOut { step_id: String },
}

impl WaitEnd {
    /// The end a journal event records, if it is one; `prefix` is the
    /// path of the child run it belongs to (`review_each[1]/`, or empty).
    /// An event delivered from the inbox was recorded when it was sent.
    pub fn of_event(e: &Value, prefix: &str) -> Option<WaitEnd> {
        let step = || Some(format!("{prefix}{}", e.get("step_id")?.as_str()?));
        match e.get("type")?.as_str()? {
            "answered" => Some(WaitEnd::Answered { step_id: step()?, value: e.get("value")?.clone() }),
            "timer_fired" => Some(WaitEnd::TimedOut { step_id: step()? }),
            "signal" if e.get("from_inbox").is_none() => Some(WaitEnd::Event {
                event: e.get("event")?.as_str()?.to_owned(),
                key: e.get("key").and_then(Value::as_str).map(str::to_owned),
                payload: e.get("payload").cloned().unwrap_or_else(|| json!({})),
            }),
            _ => None,
        }
    }

    /// Whether this end ends wait `w`.
    fn ends(&self, w: &WaitView) -> bool {
        match self {
            WaitEnd::Answered { step_id, .. } => w.wait == "answer" && *step_id == w.step_id,
            WaitEnd::TimedOut { step_id } => *step_id == w.step_id,
            WaitEnd::Event { event, key, .. } => {
                w.wait == "event" && w.event.as_ref() == Some(event) && (w.key.is_none() || w.key == *key)
            }
        }
    }

    /// The step it is about, for a divergence (the event's name for an event).
    pub fn step(&self) -> &str {
        match self {
            WaitEnd::Answered { step_id, .. } | WaitEnd::TimedOut { step_id } => step_id,
            WaitEnd::Event { event, .. } => event,
        }
    }
}

/// What ending a wait of the replay came to.
pub enum Ended {
    /// The run goes on: its next instruction, if any.
    Next(Option<Box<Instruction>>),
    /// The run does not wait, or no recorded end fits its waits.
    Nothing,
}

/// Ends one wait of run `run_id` of `workflow` on `engine` with the first
/// unused end of `ends` that fits it (marking it used).
pub fn end_recorded(
    engine: &Engine,
    workflow: &str,
    run_id: &str,
    ends: &[WaitEnd],
    used: &mut [bool],
) -> Result<Ended, TestError> {
    let progress = match engine.plan(workflow, Value::Null, Some(run_id), false) {
        Ok(p) => p,
        Err(e) if e.run_failed() => return Ok(Ended::Nothing),
        Err(e) => return Err(TestError::engine(&e)),
    };
    if let Some(i) = progress.instruction() {
        return Ok(Ended::Next(Some(Box::new(i.clone()))));
    }
    for w in progress.waiting() {
        let Some(n) = (0..ends.len()).find(|&n| !used[n] && ends[n].ends(w)) else { continue };
        used[n] = true;
        let result = match &ends[n] {
            WaitEnd::Answered { value, .. } => engine.answer(AnswerArgs {
                workflow: workflow.into(),
                run_id: run_id.to_owned(),
                step_id: w.step_id.clone(),
                value: value.clone(),
                expected_version: None,
            }),
            WaitEnd::TimedOut { .. } => engine.fire_wait_now(workflow, run_id, &w.step_id),
            WaitEnd::Event { event, key, payload } => {
                let (wf, run) = match &w.sub_run {
                    Some(sub) => (sub.workflow.clone(), sub.run_id.clone()),
                    None => (workflow.to_owned(), run_id.to_owned()),
                };
                let args = SignalArgs {
                    event: event.clone(),
                    key: key.clone(),
                    payload: Some(payload.clone()),
                    workflow: Some(wf),
                    run_id: Some(run),
                    ..SignalArgs::default()
                };
                engine.signal(args).and_then(|_| engine.plan(workflow, Value::Null, Some(run_id), false))
            }
        };
        return match result {
            Ok(p) => Ok(Ended::Next(p.instruction().cloned().map(Box::new))),
            Err(e) if e.run_failed() => Ok(Ended::Next(None)),
            Err(e) => Err(TestError::engine(&e)),
        };
    }
    Ok(Ended::Nothing)
}

/// A test's wait keys that end the run's waits as recorded.
pub fn test_waits(ends: &[WaitEnd]) -> Waits {
    let spanned = |s: &str| Spanned { value: s.to_owned(), span: Span::point(0) };
    let mut w = Waits::default();
    for end in ends {
        match end {
            WaitEnd::Answered { step_id, value } => w.answers.push((spanned(step_id), value.clone())),
            WaitEnd::TimedOut { step_id } => w.timeouts.push(spanned(step_id)),
            WaitEnd::Event { event, key, payload } => {
                w.events.push(TestEvent { event: spanned(event), key: key.clone(), payload: payload.clone() })
            }
        }
    }
    w
}

/// `answers:`, `timeouts:` and `events:` of a test reproducing `ends`, into `test`.
pub fn write_waits(ends: &[WaitEnd], test: &mut Map<String, Value>) {
    let mut answers = Map::new();
    let (mut timeouts, mut events) = (Vec::new(), Vec::new());
    for end in ends {
        match end {
            WaitEnd::Answered { step_id, value } => {
                answers.insert(step_id.clone(), value.clone());
            }
            WaitEnd::TimedOut { step_id } => timeouts.push(json!(step_id)),
            WaitEnd::Event { event, key, payload } => {
                let mut e = json!({"event": event});
                if let Some(k) = key {
                    e["key"] = json!(k);
                }
                e["payload"] = payload.clone();
                events.push(e);
            }
        }
    }
    if !answers.is_empty() {
        test.insert("answers".into(), Value::Object(answers));
    }
    if !timeouts.is_empty() {
        test.insert("timeouts".into(), Value::Array(timeouts));
    }
    if !events.is_empty() {
        test.insert("events".into(), Value::Array(events));
    }
}

/// A wait's rendered input without its deadline (a time of the run, not
/// of the workflow): what a generated test expects of it. A `foreach`
/// step's inputs (one per item) lose each item's deadline.
pub fn without_deadline(input: &Value) -> Value {
    if let Value::Array(items) = input {
        return Value::Array(items.iter().map(without_deadline).collect());
    }
    let mut v = input.clone();
    if let Some(o) = v.as_object_mut().filter(|o| o.contains_key("wait")) {
        o.remove("deadline");
    }
    v
}
