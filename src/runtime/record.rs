//! What a run records: its stored state (`RunState`, each step's status),
//! and the events of its history. Both the state machine (`run`) and the
//! replies (`reply`) read these; this module depends on neither.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::runtime::failure::RunFailure;

/// A run's status: `running`, `done` or `failed` (a step failed its validation `retry.max` times).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the enum's doc says each (variant docs would change its JSON Schema)
pub enum RunStatus {
    Running,
    Done,
    Failed,
}

/// A step's (or foreach item's) status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Waiting for dependencies.
    Pending,
    /// An instruction can be handed out.
    Ready,
    /// A foreach step whose items are being worked on.
    Running,
    /// A wait (`await:`, `sleep:`, `sleep_until:`, `wait_for:`) under way:
    /// its `input` says what it waits for and until when.
    Waiting,
    /// Its result was accepted.
    Done,
    /// Its `when` was not `true` (its dependents still run).
    Skipped,
    /// It failed validation `retry.max` times; the run failed with it.
    Failed,
}

impl RunStatus {
    /// The status as the replies write it (its JSON: the one name table).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StepStatus {
    /// The status as the replies write it (its JSON: the one name table).
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Ready => "ready",
            StepStatus::Running => "running",
            StepStatus::Waiting => "waiting",
            StepStatus::Done => "done",
            StepStatus::Skipped => "skipped",
            StepStatus::Failed => "failed",
        }
    }

    /// Done or skipped: its dependents may go on.
    pub fn is_finished(self) -> bool {
        matches!(self, StepStatus::Done | StepStatus::Skipped)
    }
}

impl std::fmt::Display for StepStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One item of a foreach step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemState {
    /// The item's status.
    pub status: StepStatus,
    /// Validation failures so far.
    pub attempts: u32,
    /// The rendered input, once ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Where the accepted result is: its event's index in the history (the
    /// result is stored once, there; rebuilt from the history on load).
    #[serde(skip)]
    pub result_at: Option<usize>,
}

/// One step of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepState {
    /// The step id.
    pub id: String,
    /// pending, ready, running (a foreach with items under way), done, skipped or failed.
    pub status: StepStatus,
    /// Validation failures so far (for a foreach step, see its items).
    pub attempts: u32,
    /// The rendered input, once ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Where the accepted result is (see [`ItemState::result_at`]); a
    /// foreach step's results are its items'.
    #[serde(skip)]
    pub result_at: Option<usize>,
    /// A foreach step's items, once expanded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemState>>,
}

/// Something that happened to a run; the journal is a list of these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// The state version this event made.
    pub version: u64,
    /// When (RFC 3339).
    pub at: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What an [`Event`] records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A result accepted for a ready step (or foreach item `id[i]`). When
    /// the payload caps shortened it, `truncated` says how: it is part of
    /// the event so that replaying the journal rebuilds `truncations`.
    Result {
        /// The step (or item `id[i]`) the result is for.
        step_id: String,
        /// The result, after the payload caps.
        result: Value,
        /// How the caps shortened it, if they did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        truncated: Option<TruncationNote>,
    },
    /// A result that failed its success schema.
    ValidationFailed {
        /// The step (or item) the result was for.
        step_id: String,
        /// The schema errors: `{path, message}`.
        errors: Value,
        /// The result refused, within the payload caps (so a replay can
        /// submit it again); absent in runs recorded before it was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
    },
    /// A thought recorded with the think tool.
    Thought {
        /// The thought.
        thought: String,
    },
    /// The sub-workflow run a `uses:` step (or item) started failed: the
    /// step fails, and with it the run.
    ChildFailed {
        /// The `uses:` step (or item `id[i]`).
        step_id: String,
        /// The child run's id.
        child_run_id: String,
        /// Why it failed (the child's failure, or why it could not start).
        failure: RunFailure,
    },
    /// A person's answer to a waiting `await:` step (or item), accepted
    /// against its schema: the step's result.
    Answered {
        /// The step (or item `id[i]`).
        step_id: String,
        /// The answer.
        value: Value,
    },
    /// An event (`signal`) the run received: delivered to the waiting
    /// `wait_for:` step `step_id` (its payload is the step's result), or,
    /// with no `step_id`, kept in the run's inbox until a wait on it starts.
    Signal {
        /// The event's name.
        event: String,
        /// Its correlation key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// Its payload, valid against the event's declared schema.
        payload: Value,
        /// The waiting step (or item) it went to; none while in the inbox.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        /// The sender's id for it: an event with an id the run has seen is
        /// not recorded again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Delivered from the inbox: the version of the `signal` event that
        /// kept it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_inbox: Option<u64>,
    },
    /// A waiting step's (or item's) deadline passed: a sleep ends; an
    /// `await:` or `wait_for:` takes its `on_timeout:` value, or with none
    /// fails (`WAIT_TIMED_OUT`).
    TimerFired {
        /// The step (or item `id[i]`).
        step_id: String,
        /// The `on_timeout:` value taken, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
    },
    /// The run moved to another version of its workflow (`upgrade`). The
    /// events before it are kept with their steps' new ids (`renames`
    /// applied), so replaying the history on the version it names rebuilds
    /// the run.
    Upgraded {
        /// The version it left (sha256 of the workflow's bytes).
        from: String,
        /// The version it runs now.
        to: String,
        /// Old step id → new step id.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        renames: std::collections::BTreeMap<String, String>,
    },
}

impl EventKind {
    /// The step (or item) the event is about, for events about one.
    pub fn step_id(&self) -> Option<&str> {
        match self {
            EventKind::Result { step_id, .. }
            | EventKind::ValidationFailed { step_id, .. }
            | EventKind::ChildFailed { step_id, .. }
            | EventKind::Answered { step_id, .. }
            | EventKind::TimerFired { step_id, .. }
            | EventKind::Signal { step_id: Some(step_id), .. } => Some(step_id),
            EventKind::Signal { step_id: None, .. }
            | EventKind::Thought { .. }
            | EventKind::Upgraded { .. } => None,
        }
    }

    /// The step (or item) whose result the event is, for events that are
    /// one: a `result`, or the event that ended a wait.
    pub fn result_step(&self) -> Option<&str> {
        match self {
            EventKind::Result { step_id, .. }
            | EventKind::Answered { step_id, .. }
            | EventKind::TimerFired { step_id, .. }
            | EventKind::Signal { step_id: Some(step_id), .. } => Some(step_id),
            _ => None,
        }
    }

    /// The event's type, as the journal writes it (`result`, `answered`, …).
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Result { .. } => "result",
            EventKind::ValidationFailed { .. } => "validation_failed",
            EventKind::Thought { .. } => "thought",
            EventKind::ChildFailed { .. } => "child_failed",
            EventKind::Answered { .. } => "answered",
            EventKind::Signal { .. } => "signal",
            EventKind::TimerFired { .. } => "timer_fired",
            EventKind::Upgraded { .. } => "upgraded",
        }
    }
}

/// A point a run can be reset to: after a step completed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Checkpoint {
    /// The step whose completion this checkpoint follows.
    pub step_id: String,
    /// The state version at that point.
    pub version: u64,
    /// How many history events the checkpoint keeps.
    pub history_len: usize,
}

/// How a result was shortened (recorded on its `Result` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TruncationNote {
    /// The result's size as submitted.
    pub original_bytes: usize,
    /// What was cut.
    pub what: String,
}

/// A result the payload caps shortened, as the run lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Truncation {
    /// The step whose result was cut.
    pub step_id: String,
    /// The result's size as submitted.
    pub original_bytes: usize,
    /// What was cut.
    pub what: String,
}

/// The materialized state of one run (what `.savant/state/*.json` holds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunState {
    /// The state version (use as think_next's expected_version).
    pub version: u64,
    /// Names this incarnation of the run: a fresh start gets a new one, and
    /// every journal event carries it, so that after a crash the store never
    /// mixes the old run's events into the new one (see `crate::state`).
    /// Absent in runs written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// sha256 of the workflow file the run started with: the version it is
    /// pinned to (its bytes are an object of the state store).
    pub workflow_hash: String,
    /// The named schemas the run is pinned to: name → sha256 of the
    /// schema's bytes (objects of the state store). Empty in runs started
    /// before pinning, which validate against `schemas/` as it is.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub schemas: std::collections::BTreeMap<String, String>,
    /// The run's params.
    pub params: Value,
    /// running, done or failed.
    pub status: RunStatus,
    /// Why the run failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<RunFailure>,
    /// Each step's status, attempts and result.
    pub steps: Vec<StepState>,
    /// The steps whose captures are set, in the order they were set. The
    /// captures themselves are a view of the results (`Machine::captures`).
    #[serde(default)]
    pub capture_order: Vec<usize>,
    /// The captures of a snapshot written before they were a view: read
    /// for their order only, never written.
    #[serde(default, rename = "captures", skip_serializing)]
    #[schemars(skip)]
    pub(crate) legacy_captures: Option<Map<String, Value>>,
    /// Every accepted event.
    pub history: Vec<Event>,
    /// Where think_reset can go back to.
    pub checkpoints: Vec<Checkpoint>,
    /// The results cut to the payload caps.
    #[serde(default)]
    pub truncations: Vec<Truncation>,
    /// When the run started (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// The workflow file's absolute path when the run was started from a
    /// path rather than an id of `<root>/workflows/`: how a listing finds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The run this one was forked from, if it was (see `runtime::fork`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
    /// The run whose `uses:` step started this one, if one did: this run is
    /// a sub-workflow's (see `runtime::engine::children`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentRun>,
}

/// The parent of a sub-workflow's run: the run and the `uses:` step (or
/// foreach item, `id[i]`) that started it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParentRun {
    /// The parent run's workflow id.
    pub workflow: String,
    /// The parent run's id.
    pub run_id: String,
    /// The parent's step (or item) this run is the result of.
    pub step_id: String,
    /// How deep this run is: 1 for a child of a run started with plan.
    pub depth: u32,
    /// The trace the parent's spans are in and the parent's run span (hex),
    /// so a child run's spans hang under its parent's in one trace (absent
    /// in runs started before children joined their parent's trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<ParentTrace>,
}

/// Where a child run's spans join its parent's trace (hex ids).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParentTrace {
    /// The trace id (32 hex digits): the top run's.
    pub trace_id: String,
    /// The parent's run span id (16 hex digits).
    pub span_id: String,
}

/// Where a forked run came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkedFrom {
    /// The source run's id.
    pub run_id: String,
    /// The source run's state version when it was forked.
    pub version: u64,
    /// The step the fork runs again from.
    pub step: String,
}
