//! The answers about stored runs as a whole (listing, deleting, restoring,
//! pruning), re-exported by `reply`: typed like every reply.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// think_state_list's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunList {
    /// Each run: {workflow, run_id, status, version, updated_at}.
    pub runs: Vec<RunEntry>,
}

/// One stored run.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunEntry {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// running, done, failed, or unreadable.
    pub status: Option<String>,
    /// The state version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// When it last changed (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Why the status may be stale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the run cannot be read: an error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the run cannot be read: the details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// An archived run: which copy (give it to state get / restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// An archived run: when it was archived (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
}

impl RunEntry {
    pub(crate) fn new(key: &crate::state::RunKey, status: Option<String>) -> RunEntry {
        RunEntry {
            workflow: key.workflow.clone(),
            run_id: key.run_id.clone(),
            status,
            version: None,
            updated_at: None,
            note: None,
            error: None,
            details: None,
            archive_id: None,
            archived_at: None,
        }
    }
}

/// think_state_delete's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Deleted {
    /// Always true: a missing run is UNKNOWN_RUN.
    pub deleted: bool,
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// Where the run went: its archived copy (see think_state_list with
    /// archived: true); absent when it was purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
}

/// think_state_restore's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Restored {
    /// Always true: a missing archived run is UNKNOWN_RUN.
    pub restored: bool,
    /// The workflow id.
    pub workflow: String,
    /// The run id, live again.
    pub run_id: String,
    /// The archived copy it came from (now out of the archive).
    pub archive_id: String,
}

/// think_state_prune's answer: what was removed (or, with dry_run, would be).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Pruned {
    /// True when nothing was removed: the lists say what would be.
    pub dry_run: bool,
    /// The runs and archived copies removed.
    pub runs: Vec<PrunedRun>,
    /// The objects (pinned workflow and schema versions) no run uses any more, removed.
    pub objects: Vec<String>,
    /// Why objects were not collected, if they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One run or archived copy `state prune` removed.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct PrunedRun {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// An archived copy: which.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// done, failed, running or archived.
    pub status: Option<String>,
    /// When it last changed (an archived copy: when it was archived).
    pub updated_at: Option<String>,
}

impl PrunedRun {
    pub(crate) fn of(entry: RunEntry) -> PrunedRun {
        PrunedRun {
            workflow: entry.workflow,
            run_id: entry.run_id,
            archive_id: entry.archive_id,
            status: entry.status,
            updated_at: entry.updated_at,
        }
    }
}
