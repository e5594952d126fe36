//! What the run inspector (`crate::inspect`) reads beyond `state get`: a
//! run with the workflow version it is pinned to and its ready steps, and a
//! run's stored files as they are when it cannot be replayed.

use super::*;
use crate::runtime::reply::{FullState, WaitView};
use crate::runtime::reply_waits::SubRun;

/// A run as the inspector shows it: its full state and the compiled
/// workflow version it runs (not the file as it is now).
pub struct RunSnapshot {
    /// The run's state, as `state get` returns it.
    pub state: FullState,
    /// The workflow version the run is pinned to.
    pub workflow: Arc<CompiledWorkflow>,
    /// Every ready step or foreach item (`id` or `id[i]`).
    pub ready: Vec<String>,
    /// What its steps wait for (at most 50): the question, the deadline.
    pub waiting: Vec<WaitView>,
}

/// A few facts about a run for a listing: when it started and what is ready.
pub struct RunBrief {
    /// When the run started (RFC 3339).
    pub created_at: String,
    /// The first ready ids (at most [`READY_LIST_CAP`]).
    pub ready: Vec<String>,
    /// How many are ready in all.
    pub ready_total: usize,
}

impl Engine {
    /// A run's full state with its pinned workflow version and ready steps.
    /// Its waits include its child runs' (by their path, `child/approve`),
    /// as `plan` lists them, so a child's question is answered from here.
    pub fn run_snapshot(&self, workflow: &str, run_id: &str) -> EngineResult<RunSnapshot> {
        let (mut snapshot, children) = self.with_run(workflow, run_id, |engine, _, c| {
            let m = &c.machine;
            let children: Vec<(String, String, String)> = m
                .ready()
                .filter_map(|w| {
                    let uses = m.step(w.step).uses.as_ref()?.value.to_string();
                    Some((m.work_id(w), uses, Self::child_run_id(m, w)))
                })
                .collect();
            let snapshot = RunSnapshot {
                state: m.full_state(),
                workflow: m.cw.clone(),
                ready: m.ready().map(|w| m.work_id(w)).collect(),
                waiting: engine.wait_views(m),
            };
            Ok((snapshot, children))
        })?;
        for (prefix, uses, child_run) in children {
            if snapshot.waiting.len() >= READY_LIST_CAP {
                break;
            }
            // A child that has not started (or cannot be read) waits for nothing yet.
            let Ok(child) = self.run_snapshot(&uses, &child_run) else { continue };
            snapshot.waiting.extend(child.waiting.into_iter().map(|mut v| {
                v.step_id = format!("{prefix}/{}", v.step_id);
                v.sub_run.get_or_insert(SubRun { workflow: uses.clone(), run_id: child_run.clone() });
                v
            }));
        }
        snapshot.waiting.truncate(READY_LIST_CAP);
        self.compare_with_file(workflow, &mut snapshot.state);
        Ok(snapshot)
    }

    /// When a run started and what is ready in it (cheap: no results copied).
    pub fn run_brief(&self, workflow: &str, run_id: &str) -> EngineResult<RunBrief> {
        self.with_run(workflow, run_id, |engine, _, c| {
            let m = &c.machine;
            Ok(RunBrief {
                created_at: m.state.created_at.clone(),
                ready: engine.ready_ids(m),
                ready_total: m.ready().count(),
            })
        })
    }

    /// A run's stored snapshot and journal as they are, unreplayed: what
    /// the inspector shows of a run that cannot be replayed (its pinned
    /// version is gone, or its files are corrupt: then the store's error).
    pub fn run_stored(&self, workflow: &str, run_id: &str) -> EngineResult<Option<Loaded>> {
        let key = RunKey::new(workflow, run_id).map_err(store_error)?;
        self.store.load(&key).map_err(store_error)
    }

    /// The ids of the stored runs (of one workflow, if given), unread.
    pub fn run_keys(&self, workflow: Option<&str>) -> EngineResult<Vec<RunKey>> {
        self.store.list(workflow).map_err(store_error)
    }
}
