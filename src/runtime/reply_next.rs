//! The pieces of think_next's answer that a run's error carries too (see
//! [`crate::runtime::ErrorContext`]): the instruction to carry out, the
//! run's state in brief, what a reset did. Below both the replies and the
//! errors, re-exported by `reply`.

use crate::runtime::record::RunStatus;
use crate::runtime::reply_waits::SubRun;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A run's state in brief.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct StateSummary {
    /// The state version (use as think_next's expected_version).
    pub version: u64,
    /// running, done or failed.
    pub status: RunStatus,
    /// How many steps are finished (done or skipped).
    pub completed: usize,
    /// How many steps are not.
    pub pending: usize,
}

/// The next step to carry out: call the tool `call` with `input`, then
/// submit its result with think_next(step_id).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Instruction {
    /// The step to submit with think_next (`id`, or `id[3]` for a foreach item).
    pub step_id: String,
    /// The tool to call (e.g. "gitlab.get_merge_request", "think", "prompt.say").
    pub call: Option<String>,
    /// The tool's arguments, already rendered.
    pub input: Value,
    /// The raw template the input was rendered from.
    pub input_template: Value,
    /// The name the result is stored under.
    pub capture_as: Option<String>,
    /// The schema the result must match (a name or an inline JSON Schema), or null.
    pub success_schema: Value,
    /// Why this step exists.
    pub rationale: Option<String>,
    /// The step's time limit in seconds, if any.
    pub timeout: Option<f64>,
    /// 1 on the first try, more after a validation failure.
    pub attempt: u32,
    /// Always false on an instruction.
    pub done: bool,
    /// The workflow's rules to respect.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// The sub-workflow run the step belongs to, when a `uses:` step handed
    /// out its child's instruction: submit the result to the run you
    /// called (its `step_id` routes it to the child).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_run: Option<SubRun>,
}

/// What think_reset did.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ResetNote {
    /// The step the run went back to (null: the start).
    pub checkpoint: Option<String>,
    /// How many accepted results were discarded.
    pub discarded: usize,
}
