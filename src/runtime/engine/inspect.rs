//! What the run inspector (`crate::inspect`) reads beyond `state get`: a
//! run with the workflow version it is pinned to and its ready steps, and a
//! run's stored files as they are when it cannot be replayed.

use super::*;
use crate::runtime::reply::{FullState, WaitView};

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
    pub fn run_snapshot(&self, workflow: &str, run_id: &str) -> EngineResult<RunSnapshot> {
        let mut snapshot = self.with_run(workflow, run_id, |engine, _, c| {
            let m = &c.machine;
            Ok(RunSnapshot {
                state: m.full_state(),
                workflow: m.cw.clone(),
                ready: m.ready().map(|w| m.work_id(w)).collect(),
                waiting: engine.wait_views(m),
            })
        })?;
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
