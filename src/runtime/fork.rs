//! Forking a run from a step: a new run that keeps every result that does
//! not depend on the step, with the step ready again. The new run is built
//! the only way a run changes, by applying events: the source's history is
//! replayed into a fresh start, skipping the results of the step, of every
//! step that depends on it, and (when the params change) of every step
//! whose rendered input is no longer the same, with their dependents. So a
//! fork is as deterministic and replayable as any run.

use crate::runtime::record::{Event, EventKind, ForkedFrom, StepStatus};
use crate::runtime::run::Machine;
use serde_json::Value;
use std::collections::BTreeSet;

impl Machine {
    /// The fork of `source` from step `from` (an index into its steps) as
    /// run `run_id` with `params`, started at `now`. The source is untouched.
    pub fn fork(source: &Machine, from: usize, run_id: &str, params: Value, now: &str) -> Machine {
        let cw = source.cw.clone();
        let mut dropped: BTreeSet<usize> = BTreeSet::new();
        let drop_with_dependents = |dropped: &mut BTreeSet<usize>, i: usize| {
            let mut stack = vec![i];
            while let Some(s) = stack.pop() {
                if dropped.insert(s) {
                    stack.extend(cw.plan.steps[s].dependents.iter().copied());
                }
            }
        };
        drop_with_dependents(&mut dropped, from);
        let mut fork = Machine::start(cw.clone(), run_id, params, now);
        for event in &source.state.history {
            let step_id = match &event.kind {
                // A failed child failed the run: the fork runs the step again.
                EventKind::ChildFailed { .. } => None,
                kind => kind.step_id(),
            };
            if let Some(step_id) = step_id {
                let (Some(w), Some(was)) = (fork.resolve(step_id), source.resolve(step_id)) else { continue };
                if dropped.contains(&w.step) {
                    continue;
                }
                // Only a step the fork renders exactly as the source did
                // keeps its result; otherwise it, and what follows from
                // it, runs again.
                let ready = matches!(fork.status_of(w), StepStatus::Ready | StepStatus::Waiting);
                if !ready || !same_input(fork.input_of(w), source.input_of(was)) {
                    drop_with_dependents(&mut dropped, w.step);
                    continue;
                }
            }
            let version = fork.state.version + 1;
            fork.apply(Event { version, at: event.at.clone(), kind: event.kind.clone() });
        }
        fork.state.updated_at = now.to_owned();
        fork.state.schemas = source.state.schemas.clone();
        fork.state.source = source.state.source.clone();
        fork.state.forked_from = Some(ForkedFrom {
            run_id: source.state.run_id.clone(),
            version: source.state.version,
            step: cw.wf.steps[from].id.value.to_string(),
        });
        fork
    }
}

/// Whether a unit renders the same in the fork as in the source: the same
/// input, a wait's deadline aside (a wait that starts the fork starts at
/// the fork's time).
fn same_input(a: Option<&Value>, b: Option<&Value>) -> bool {
    let strip = |v: Option<&Value>| {
        v.cloned().map(|mut v| {
            if let Some(o) = v.as_object_mut().filter(|o| o.contains_key("wait")) {
                o.remove("deadline");
            }
            v
        })
    };
    strip(a) == strip(b)
}
