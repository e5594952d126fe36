//! Running one test: the real engine, in memory, driven with the mocks.
//!
//! `plan`, then for each instruction the engine hands out (in its order) the
//! mock's answer is submitted with `next`, until the run is done or failed,
//! or a mocked tool fails (`error:`): as with `exec`, nothing is submitted
//! for it and the run stops there, `waiting`. A result that fails
//! `success_schema` is retried by the engine as usual (`results` gives one
//! per attempt). The engine is not changed or bypassed: what a test sees is
//! what a client driving `plan` / `next` would see.
//!
//! Steps inside a `uses:` step's child runs are answered the same way: their
//! instructions come through the parent (`review_each[1]/read`), and a mock
//! may name the item's path, the path of every item (`review_each/read`),
//! or the tool (`call:local_read`), at any depth ([`mock_for`]).

use crate::runtime::args::{AnswerArgs, NextArgs, SignalArgs};
use crate::runtime::reply::WaitView;
use crate::runtime::reply::{FullState, Instruction, Progress};
use crate::runtime::run::{RunStatus, StepStatus};
use crate::runtime::work_id::WorkId;
use crate::runtime::{Engine, EngineError, ErrorCode};
use crate::testing::children::{self, ChildOutcome, without_items};
pub use crate::testing::children::{StepOutcome, step_outcomes};
use crate::testing::format::Waits;
use crate::testing::format::{Mock, MockTarget, Reply, TestCase};
use crate::testing::matching::contains;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Past this many engine calls a test stops (a guard, not a limit a real
/// test reaches: retries are bounded by `retry.max`).
const MAX_CALLS: usize = 1_000_000;

/// Why a test could not be run to its end (not an expectation that failed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestError {
    /// A stable code: `NO_MOCK`, `MOCK_EXHAUSTED`, or the engine's code
    /// (`INVALID_PARAMS`, `UNKNOWN_WORKFLOW`, …).
    pub code: String,
    /// What went wrong.
    pub message: String,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The step (or item) it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
}

impl TestError {
    /// An engine error as a test's: its code, message and help.
    pub fn engine(e: &EngineError) -> TestError {
        let help = e.help_text().map(str::to_owned);
        TestError { code: e.code.as_str().to_owned(), message: e.describe(), help, step_id: None }
    }

    /// For a person: `CODE: message`, then `help: …` on its own line.
    pub fn human(&self) -> String {
        match &self.help {
            Some(help) => format!("{}: {}\n  help: {help}", self.code, self.message),
            None => format!("{}: {}", self.code, self.message),
        }
    }

    /// The run of a test panicked (its message went to stderr).
    pub fn panicked() -> TestError {
        TestError {
            code: crate::runtime::ErrorCode::Internal.as_str().to_owned(),
            message: "the run of this test stopped on an internal error (a panic; its message is above)"
                .into(),
            help: Some("this is a bug in savant-think: please report it with the test file".into()),
            step_id: None,
        }
    }
}

/// A step whose mocked tool failed (`error:`): nothing was submitted for it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolFailure {
    /// The step or item.
    pub step_id: String,
    /// The mock's `error`.
    pub error: Value,
}

/// What happened in a test's run: what `expect` is compared with.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// `done`, `failed` or `waiting`.
    pub status: String,
    /// The steps that ran, in declaration order.
    pub ran: Vec<String>,
    /// The steps that were skipped, in declaration order.
    pub skipped: Vec<String>,
    /// Each step's rendered input (a foreach step: the list of its items'
    /// inputs, `null` for an item never rendered; see [`Outcome::input`]).
    pub inputs: Map<String, Value>,
    /// The captures.
    pub captures: Map<String, Value>,
    /// Why the run failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Value>,
    /// The step whose mocked tool failed (the run stopped there).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_failures: Vec<ToolFailure>,
    /// Every step's status.
    #[serde(skip)]
    pub steps: Vec<StepOutcome>,
    /// Every result submitted, in order (what `--from-run` and replay compare).
    #[serde(skip)]
    pub submitted: Vec<(String, Value)>,
    /// The child runs of its `uses:` steps, at any depth (for coverage).
    #[serde(skip)]
    pub children: Vec<ChildOutcome>,
    /// The waits left when the run stopped (`step (what it waits for)`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<String>,
    /// How each wait the test ended, ended: step path → `answered`,
    /// `timed_out`, `event`, `slept` (for coverage).
    #[serde(skip)]
    pub waits_ended: Ended,
}

/// The base step id of `id` or `id[i]`.
pub fn base_id(step_id: &str) -> &str {
    WorkId::base(step_id)
}

/// The mock answering for an instruction: the item's own (`id[i]`,
/// `review_each[1]/read`), the step's for every item (`id`,
/// `review_each/read`), else its tool's (`call:TOOL`, at any depth).
pub fn mock_for<'t>(mocks: &'t [Mock], instruction: &Instruction) -> Option<&'t Mock> {
    let step = |id: &str| mocks.iter().find(|m| matches!(&m.target, MockTarget::Step(s) if s == id));
    step(&instruction.step_id).or_else(|| step(&without_items(&instruction.step_id))).or_else(|| {
        let call = instruction.call.as_deref()?;
        mocks.iter().find(|m| m.target == MockTarget::Call(call.to_owned()))
    })
}

enum Answer {
    Submit(Value),
    ToolFailed(Value),
}

fn answer(mocks: &[Mock], i: &Instruction) -> Result<Answer, TestError> {
    let step = without_items(&i.step_id);
    let err = |code: &str, message: String, help: String| TestError {
        code: code.to_owned(),
        message,
        help: Some(help),
        step_id: Some(i.step_id.clone()),
    };
    let Some(mock) = mock_for(mocks, i) else {
        let tool = i.call.as_deref().unwrap_or("?");
        return Err(err(
            "NO_MOCK",
            format!("step `{}` (tool `{tool}`) was reached but has no mock", i.step_id),
            if step == i.step_id {
                format!("add `{step}: {{result: …}}` (or `call:{tool}: {{result: …}}`) under `mocks`")
            } else {
                format!(
                    "add `{step}: {{result: …}}` (every item), `{}: {{result: …}}` (this one) or \
                     `call:{tool}: {{result: …}}` under `mocks`",
                    i.step_id
                )
            },
        ));
    };
    let Some(case) = mock.cases.iter().find(|c| c.when_input.as_ref().is_none_or(|w| contains(w, &i.input)))
    else {
        return Err(err(
            "NO_MOCK",
            format!("no case of the mock for `{step}` matches the input of `{}`: {}", i.step_id, i.input),
            "add a case without `when_input` as the default, or one whose `when_input` matches".into(),
        ));
    };
    match &case.reply {
        Reply::Result(v) => Ok(Answer::Submit(v.clone())),
        Reply::Results(list) => match list.get(i.attempt.saturating_sub(1) as usize) {
            Some(v) => Ok(Answer::Submit(v.value.clone())),
            None => Err(err(
                "MOCK_EXHAUSTED",
                format!(
                    "`{}` was asked for attempt {}, but its mock gives {} result(s)",
                    i.step_id,
                    i.attempt,
                    list.len()
                ),
                "add a result to `results` for each attempt (a result failing success_schema is retried)"
                    .into(),
            )),
        },
        Reply::Error(e) => Ok(Answer::ToolFailed(e.clone())),
        Reply::ResultFile(f) => Err(err(
            "MOCK_EXHAUSTED",
            format!("the result file `{}` was not loaded", f.value),
            "run the test through `savant-think test`, which reads result files".into(),
        )),
    }
}

/// Runs one test against `workflow` (an id or a path the engine resolves)
/// as run `run_id`, deleting the run afterwards.
pub fn run_test(
    engine: &Engine,
    workflow: &str,
    test: &TestCase,
    run_id: &str,
) -> Result<Outcome, TestError> {
    let out = drive(engine, workflow, test, run_id);
    if let Ok(o) = &out {
        children::delete(engine, &o.children, run_id);
    }
    let _ = engine.state_delete(workflow, run_id, true);
    out
}

fn drive(engine: &Engine, workflow: &str, test: &TestCase, run_id: &str) -> Result<Outcome, TestError> {
    let mut failures: Vec<ToolFailure> = Vec::new();
    let mut submitted = Vec::new();
    let mut current: Option<Instruction> =
        match engine.plan(workflow, test.params.clone(), Some(run_id), true) {
            Ok(p) => first(p),
            Err(e) if e.run_failed() => None,
            Err(e) => return Err(TestError::engine(&e)),
        };
    let mut delivered = vec![false; test.waits.events.len()];
    let mut ended = Vec::new();
    let mut waiting = Vec::new();
    for _ in 0..MAX_CALLS {
        let Some(instruction) = current.take() else {
            // No instruction: the run is over, or it waits (see run_waits).
            let Ok(now) = engine.plan(workflow, Value::Null, Some(run_id), false) else { break };
            if now.instruction().is_some() {
                current = first(now);
                continue;
            }
            let w = &test.waits;
            if !end_one(engine, workflow, run_id, w, &mut delivered, now.waiting(), &mut ended)
                .map_err(|(e, step)| TestError { step_id: Some(step), ..TestError::engine(&e) })?
            {
                waiting = left(now.waiting());
                break;
            }
            current = engine.plan(workflow, Value::Null, Some(run_id), false).ok().and_then(first);
            continue;
        };
        match answer(&test.mocks, &instruction)? {
            Answer::ToolFailed(error) => {
                // As `exec` does: a failed tool call is not submitted, and the run stops there.
                failures.push(ToolFailure { step_id: instruction.step_id.clone(), error });
                break;
            }
            Answer::Submit(result) => {
                submitted.push((instruction.step_id.clone(), result.clone()));
                let args = NextArgs {
                    workflow: workflow.into(),
                    run_id: run_id.to_owned(),
                    step_id: instruction.step_id.clone(),
                    result_snapshot: Some(result),
                    result: None,
                    expected_version: None,
                };
                current = match engine.next(args) {
                    Ok(p) => first(p),
                    Err(e) if e.run_failed() => None,
                    Err(e) if e.code == ErrorCode::ValidationFailed => {
                        e.context.and_then(|c| c.instruction).or_else(|| Some(instruction.clone()))
                    }
                    Err(e) => return Err(TestError::engine(&e)),
                };
            }
        }
    }
    let state = engine.state_get(workflow, run_id).map_err(|e| TestError::engine(&e))?;
    let mut out = outcome(state.clone(), failures, submitted);
    out.waiting = waiting;
    out.waits_ended = ended;
    if let Ok(cw) = engine.workflow(workflow) {
        children::collect(engine, &cw, &state, run_id, "", &mut out.inputs, &mut out.children);
    }
    Ok(out)
}

fn first(p: Progress) -> Option<Instruction> {
    p.instruction().cloned()
}

fn outcome(state: FullState, tool_failures: Vec<ToolFailure>, submitted: Vec<(String, Value)>) -> Outcome {
    let status = match state.status {
        RunStatus::Done => "done",
        RunStatus::Failed => "failed",
        RunStatus::Running => "waiting",
    };
    let with = |s: StepStatus| state.steps.iter().filter(|v| v.status == s).map(|v| v.id.clone()).collect();
    let mut inputs = Map::new();
    children::inputs_of(&state, "", &mut inputs);
    let steps = step_outcomes(&state);
    Outcome {
        status: status.to_owned(),
        ran: with(StepStatus::Done),
        skipped: with(StepStatus::Skipped),
        inputs,
        captures: state.captures,
        failure: state.failure.map(|f| f.to_json()),
        tool_failures,
        steps,
        submitted,
        children: Vec::new(),
        waiting: Vec::new(),
        waits_ended: Vec::new(),
    }
}

impl Outcome {
    /// A step's input (`id`), or a foreach item's (`id[i]`).
    pub fn input(&self, key: &str) -> Option<&Value> {
        if let Some(v) = self.inputs.get(key) {
            return Some(v);
        }
        let (base, n) = key.parse::<WorkId>().ok()?.without_leaf_item()?;
        self.inputs.get(&base.to_string())?.as_array()?.get(n).filter(|v| !v.is_null())
    }

    /// The outcome as the JSON report shows it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({}))
    }
}

// How a test ends its run's waits (docs/testing.md, "Waits"): when the
// run hands out no instruction but waits, the first wait the test can end
// is ended, through the engine's own calls —
//
// - an `answers:` entry for the step (`approve`, `ask[1]`, or `ask` for
//   every item; `child/sure` inside a `uses:` child): `Engine::answer`,
//   so a wrong answer fails the test with VALIDATION_FAILED;
// - a `timeouts:` entry: the wait's deadline passes now
//   (`Engine::fire_wait_now`, the fake clock): its `on_timeout`, or
//   WAIT_TIMED_OUT;
// - an event of `events:` it takes (same name, and key when the wait has
//   one), each delivered once: `Engine::signal`;
// - a `sleep:` / `sleep_until:` ends at once (the clock jumps to it).
//
// A wait none of these ends stays: the run ends `waiting`, and the
// outcome lists it (`waiting`), reported when `expect.status` differs.

/// How each wait of a test's run ended (for coverage): step path → `answered`,
/// `timed_out`, `event` or `slept`.
pub type Ended = Vec<(String, &'static str)>;

/// Ends the first of `waiting` the test can end; false when it can end none.
/// An engine's refusal comes back with the step it was about.
fn end_one(
    engine: &Engine,
    workflow: &str,
    run_id: &str,
    waits: &Waits,
    delivered: &mut [bool],
    waiting: &[WaitView],
    ended: &mut Ended,
) -> Result<bool, (crate::runtime::EngineError, String)> {
    let names = |w: &WaitView| [w.step_id.clone(), without_items(&w.step_id)];
    // A wait that times out with no `on_timeout` fails the run: an outcome
    // the test checks, not an error of the test.
    let done = |r: Result<_, crate::runtime::EngineError>, step: &str| match r {
        Ok(_) => Ok(()),
        Err(e) if e.run_failed() => Ok(()),
        Err(e) => Err((e, step.to_owned())),
    };
    for w in waiting {
        let [id, base] = names(w);
        let answer = waits.answers.iter().find(|(s, _)| s.value == id || s.value == base);
        if let Some((_, value)) = answer.filter(|_| w.wait == "answer") {
            let args = AnswerArgs {
                workflow: workflow.into(),
                run_id: run_id.to_owned(),
                step_id: id.clone(),
                value: value.clone(),
                expected_version: None,
            };
            done(engine.answer(args).map(drop), &id)?;
            ended.push((id, "answered"));
            return Ok(true);
        }
        if waits.timeouts.iter().any(|s| s.value == id || s.value == base) {
            done(engine.fire_wait_now(workflow, run_id, &id).map(drop), &id)?;
            ended.push((id, "timed_out"));
            return Ok(true);
        }
        if w.wait == "event"
            && let Some(i) = (0..waits.events.len()).find(|&i| !delivered[i] && takes(w, &waits.events[i]))
        {
            delivered[i] = true;
            let e = &waits.events[i];
            let (wf, run) = match &w.sub_run {
                Some(sub) => (sub.workflow.clone(), sub.run_id.clone()),
                None => (workflow.to_owned(), run_id.to_owned()),
            };
            let args = SignalArgs {
                event: e.event.value.clone(),
                key: e.key.clone(),
                payload: Some(e.payload.clone()),
                workflow: Some(wf),
                run_id: Some(run),
                ..SignalArgs::default()
            };
            done(engine.signal(args).map(drop), &id)?;
            ended.push((id, "event"));
            return Ok(true);
        }
        if w.wait == "timer" {
            done(engine.fire_wait_now(workflow, run_id, &id).map(drop), &id)?;
            ended.push((id, "slept"));
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether event `e` ends wait `w`: its name, and its key when `w` has one.
fn takes(w: &WaitView, e: &crate::testing::format::TestEvent) -> bool {
    w.event.as_deref() == Some(e.event.value.as_str()) && (w.key.is_none() || w.key == e.key)
}

/// The waits left at the end, as `step (what it waits for)`.
fn left(waiting: &[WaitView]) -> Vec<String> {
    waiting
        .iter()
        .map(|w| match (&w.ask, &w.event) {
            (Some(ask), _) => format!("{} (asks {ask:?}: give it under `answers`)", w.step_id),
            (None, Some(ev)) => format!("{} (waits for event {ev}: give it under `events`)", w.step_id),
            _ => format!("{} (waits)", w.step_id),
        })
        .collect()
}
