//! Whether a stored run is a run of the workflow version it is pinned to,
//! checked before it is resumed: a snapshot that lost its steps, names steps
//! the workflow does not have, or claims a version below its own history is
//! `STATE_CORRUPT`, never resumed (where it would show as healthy and then
//! answer a misleading `UNKNOWN_STEP`).

use crate::runtime::record::{EventKind, RunState};
use crate::runtime::workflow::CompiledWorkflow;

/// The first way `state` does not fit `cw`, as a message.
pub(crate) fn check_snapshot(cw: &CompiledWorkflow, state: &RunState) -> Result<(), String> {
    let steps = &cw.wf.steps;
    if state.steps.len() != steps.len() {
        return Err(format!(
            "the snapshot lists {} steps, but the workflow version it is pinned to ({}) has {}",
            state.steps.len(),
            short(&cw.hash),
            steps.len()
        ));
    }
    for (i, (stored, step)) in state.steps.iter().zip(steps).enumerate() {
        if stored.id != step.id.value.as_str() {
            return Err(format!(
                "step {} of the snapshot is `{}`, which the workflow version it is pinned to ({}) does not have there (it has `{}`)",
                i + 1,
                stored.id,
                short(&cw.hash),
                step.id.value
            ));
        }
    }
    if let Some(last) = state.history.last()
        && last.version > state.version
    {
        return Err(format!(
            "the snapshot's version {} is below its own history (an event at version {})",
            state.version, last.version
        ));
    }
    if let Some(&bad) = state.capture_order.iter().find(|&&i| i >= steps.len()) {
        return Err(format!("the snapshot's capture order names step {bad}, which does not exist"));
    }
    if let Some(c) = state.checkpoints.iter().find(|c| c.history_len > state.history.len()) {
        return Err(format!(
            "checkpoint after `{}` keeps {} history events, but the history has {}",
            c.step_id,
            c.history_len,
            state.history.len()
        ));
    }
    Ok(())
}

/// The step a journal event is about, for events about one.
pub(crate) fn event_step(kind: &EventKind) -> Option<&str> {
    kind.step_id()
}

fn short(hash: &str) -> &str {
    let hex = hash.strip_prefix("sha256:").unwrap_or(hash);
    &hex[..hex.len().min(12)]
}
