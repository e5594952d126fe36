//! Driving runs through the engine's library API.

use savant_think::runtime::engine::NextArgs;
use savant_think::runtime::reply::{Instruction, Progress};
use savant_think::runtime::{Engine, EngineResult};
use serde_json::Value;

/// `next` arguments submitting `result` for `step_id`.
pub fn next_args(workflow: &str, run_id: &str, step_id: impl Into<String>, result: Value) -> NextArgs {
    NextArgs {
        workflow: workflow.into(),
        run_id: run_id.into(),
        step_id: step_id.into(),
        result_snapshot: Some(result),
        ..Default::default()
    }
}

/// `next` with `result` for `step`, the reply or the error as the JSON a
/// client sees.
pub fn next_json(
    e: &Engine,
    workflow: &str,
    run_id: &str,
    step: &str,
    result: Value,
) -> Result<Value, Value> {
    e.next(next_args(workflow, run_id, step, result))
        .map(|r| serde_json::to_value(r).expect("engine replies serialize"))
        .map_err(|e| e.to_json())
}

/// Plans a fresh run `run_id` with `params`, then answers each instruction
/// with `result(instruction)` until the run is done; returns the done reply
/// or the first error.
pub fn drive_to_done(
    e: &Engine,
    workflow: &str,
    run_id: &str,
    params: Value,
    mut result: impl FnMut(&Instruction) -> Value,
) -> EngineResult<Progress> {
    let mut r = e.plan(workflow, params, Some(run_id), true)?;
    while !r.is_done() {
        let i = r.instruction().expect("a running run has an instruction");
        let answer = result(i);
        let args = next_args(workflow, run_id, i.step_id.as_str(), answer);
        r = e.next(args)?;
    }
    Ok(r)
}
