//! Sub-workflows in tests. A step inside the child run of a `uses:` step is
//! named by its path from the workflow under test: `review_each[1]/read`
//! (one item's child), `review_each/read` (the child of every item),
//! `triage/again/ask` (two levels down). This module resolves such paths
//! against the workflows (for `check`), lists the tools called anywhere
//! below a workflow (for `call:TOOL` mocks), and reads a finished test
//! run's child runs (for `expect.inputs` and coverage), each step as a run
//! left it ([`StepOutcome`]).

use crate::runtime::Engine;
use crate::runtime::engine::child_run_id;
use crate::runtime::reply::FullState;
use crate::runtime::run::StepStatus;
use crate::runtime::workflow::CompiledWorkflow;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// How deep a path or a walk below a workflow goes (the engine's own limit
/// on nested runs is lower; this only stops a cycle of `uses:`).
const MAX_DEPTH: usize = 16;

/// `id` without its item indexes: `review_each[1]/read[0]` → `review_each/read`.
pub fn without_items(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    let mut depth = 0usize;
    for c in id.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Why a step path names no step.
#[derive(Debug)]
pub enum PathError {
    /// `workflow` has no step `step`; the steps it has.
    NoSuchStep { workflow: String, step: String, known: Vec<String> },
    /// `step` of `workflow` has no `uses:`, yet the path goes below it.
    NotUses { workflow: String, step: String },
    /// The workflow a `uses:` step names cannot be loaded.
    Callee { step: String, uses: String },
}

impl PathError {
    /// The message, after `what` (`a mock for`, `` `expect.inputs` names ``).
    pub fn message(&self, what: &str, path: &str) -> String {
        match self {
            PathError::NoSuchStep { workflow, step, .. } if step == path => {
                format!("{what} `{path}`: the workflow `{workflow}` has no such step")
            }
            PathError::NoSuchStep { workflow, step, .. } => {
                format!("{what} `{path}`: the workflow `{workflow}` has no step `{step}`")
            }
            PathError::NotUses { workflow, step } => format!(
                "{what} `{path}`: `{step}` of `{workflow}` calls a tool, it does not run a sub-workflow \
                 (no `uses:`), so nothing is below it"
            ),
            PathError::Callee { step, uses } => {
                format!("{what} `{path}`: `{step}` uses `{uses}`, which cannot be loaded")
            }
        }
    }
}

/// The step `path` names, below `cw`: the workflow it belongs to and its index.
pub fn resolve(
    engine: &Engine,
    cw: &Arc<CompiledWorkflow>,
    path: &str,
) -> Result<(Arc<CompiledWorkflow>, usize), PathError> {
    let plain = without_items(path);
    let mut at = cw.clone();
    let segments: Vec<&str> = plain.split('/').collect();
    for (n, segment) in segments.iter().enumerate() {
        let Some(index) = at.wf.steps.iter().position(|s| s.id.value == *segment) else {
            let known = at.wf.steps.iter().map(|s| s.id.value.to_string()).collect();
            return Err(PathError::NoSuchStep {
                workflow: at.wf.id.clone(),
                step: (*segment).to_owned(),
                known,
            });
        };
        if n + 1 == segments.len() || n >= MAX_DEPTH {
            return Ok((at, index));
        }
        let Some(uses) = at.wf.steps[index].uses.as_ref().map(|u| u.value.to_string()) else {
            return Err(PathError::NotUses { workflow: at.wf.id.clone(), step: (*segment).to_owned() });
        };
        at = engine
            .workflow(&uses)
            .map_err(|_| PathError::Callee { step: (*segment).to_owned(), uses: uses.clone() })?;
    }
    Ok((at, 0))
}

/// Every tool called by a step of `cw` or of a workflow it uses, at any depth.
pub fn tools_below(engine: &Engine, cw: &Arc<CompiledWorkflow>) -> BTreeSet<String> {
    let all = engine.with_callees(cw);
    all.iter()
        .flat_map(|w| w.wf.steps.iter().filter_map(|s| s.call.as_ref()).map(|c| c.value.to_string()))
        .collect()
}

/// One step as the run left it (for coverage).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepOutcome {
    /// The step id.
    pub id: String,
    /// Its status.
    pub status: StepStatus,
    /// A foreach step's items' statuses, once expanded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<StepStatus>>,
}

/// Every step of `state` as the run left it.
pub fn step_outcomes(state: &FullState) -> Vec<StepOutcome> {
    state
        .steps
        .iter()
        .map(|s| StepOutcome {
            id: s.id.clone(),
            status: s.status,
            items: s.items.as_ref().map(|items| items.iter().map(|i| i.status).collect()),
        })
        .collect()
}

/// One child run of a test's run, as it ended.
#[derive(Clone)]
pub struct ChildOutcome {
    /// Its path from the run under test: `review_each[1]`, `deeper/again`.
    pub path: String,
    /// The workflow it ran.
    pub cw: Arc<CompiledWorkflow>,
    /// Its steps as the run left them.
    pub steps: Vec<StepOutcome>,
}

impl std::fmt::Debug for ChildOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildOutcome")
            .field("path", &self.path)
            .field("workflow", &self.cw.wf.id)
            .field("steps", &self.steps)
            .finish()
    }
}

impl PartialEq for ChildOutcome {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.cw.wf.id == other.cw.wf.id && self.steps == other.steps
    }
}

/// Each step's (and item's) rendered input of `state`, keyed by `prefix`
/// and its id: a foreach step's inputs as a list, `null` for an item never
/// rendered.
pub fn inputs_of(state: &FullState, prefix: &str, inputs: &mut Map<String, Value>) {
    for s in &state.steps {
        if let Some(items) = &s.items {
            let list: Vec<Value> = items.iter().map(|i| i.input.clone().unwrap_or(Value::Null)).collect();
            inputs.insert(format!("{prefix}{}", s.id), Value::Array(list));
        } else if let Some(input) = &s.input {
            inputs.insert(format!("{prefix}{}", s.id), input.clone());
        }
    }
}

/// The child runs below run `run_id` of `cw` (its state `state`), at any
/// depth: their outcomes, and their inputs into `inputs` under their paths
/// (`review_each[1]/read`).
pub fn collect(
    engine: &Engine,
    cw: &Arc<CompiledWorkflow>,
    state: &FullState,
    run_id: &str,
    prefix: &str,
    inputs: &mut Map<String, Value>,
    out: &mut Vec<ChildOutcome>,
) {
    if prefix.matches('/').count() >= MAX_DEPTH {
        return;
    }
    for (step, view) in cw.wf.steps.iter().zip(&state.steps) {
        let Some(uses) = &step.uses else { continue };
        let Ok(callee) = engine.workflow(uses.value.as_str()) else { continue };
        for work in view.work_ids() {
            let child_id = child_run_id(run_id, &work);
            let Ok(child) = engine.state_get(&callee.wf.id, &child_id) else { continue };
            let path = format!("{prefix}{work}");
            inputs_of(&child, &format!("{path}/"), inputs);
            out.push(ChildOutcome { path: path.clone(), cw: callee.clone(), steps: step_outcomes(&child) });
            collect(engine, &callee, &child, &child_id, &format!("{path}/"), inputs, out);
        }
    }
}

/// Deletes the child runs below a test's run (the test's own run is
/// deleted by its caller).
pub fn delete(engine: &Engine, children: &[ChildOutcome], run_id: &str) {
    for c in children {
        let _ = engine.state_delete(&c.cw.wf.id, &child_run_id(run_id, &c.path.replace('/', ".")), true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_indexes_go_from_every_segment() {
        assert_eq!(without_items("review_each[1]/read[0]"), "review_each/read");
        assert_eq!(without_items("a/b"), "a/b");
        assert_eq!(without_items("a[12]"), "a");
        assert_eq!(without_items("a[[1]]b"), "ab");
    }
}
