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

use crate::runtime::args::NextArgs;
use crate::runtime::reply::{FullState, Instruction, Progress};
use crate::runtime::run::{RunStatus, StepStatus};
use crate::runtime::{Engine, EngineError, ErrorCode};
use crate::testing::children::{self, ChildOutcome, without_items};
pub use crate::testing::children::{StepOutcome, step_outcomes};
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
}

/// The base step id of `id` or `id[i]`.
pub fn base_id(step_id: &str) -> &str {
    step_id.split_once('[').map_or(step_id, |(b, _)| b)
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
    for _ in 0..MAX_CALLS {
        let Some(instruction) = current.take() else { break };
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
    }
}

impl Outcome {
    /// A step's input (`id`), or a foreach item's (`id[i]`).
    pub fn input(&self, key: &str) -> Option<&Value> {
        if let Some(v) = self.inputs.get(key) {
            return Some(v);
        }
        let (base, rest) = key.rsplit_once('[')?;
        let n: usize = rest.strip_suffix(']')?.parse().ok()?;
        self.inputs.get(base)?.as_array()?.get(n).filter(|v| !v.is_null())
    }

    /// The outcome as the JSON report shows it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({}))
    }
}
