//! Each shape of an engine error's `details` as a struct (issue 22.3):
//! plain data, below the replies, so no call site assembles JSON by hand.
//! Field order is the JSON's order. [`crate::runtime::error_details`] makes
//! them one enum, [`ErrorDetails`](crate::runtime::error_details::ErrorDetails);
//! `error.rs` and `run_errors.rs` have the constructors.

use crate::runtime::record::StepStatus;
use crate::runtime::reply_runs::RunUpgrade;
use serde::Serialize;
use serde_json::Value;

/// Details that are a message and, when there is one, what helps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message {
    /// What went wrong, for a person.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// One entry of `INVALID_PARAMS` / `VALIDATION_FAILED`'s list (and of
/// think_validate's `errors`).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FieldError {
    /// JSON pointer to the value at fault (`""` for the whole value).
    pub path: String,
    /// What is wrong with it.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// `UNKNOWN_WORKFLOW`: a workflow that cannot be found or read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownWorkflow {
    /// The id or path asked for.
    pub workflow: String,
    /// The file, when one was found but could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What happened.
    pub message: String,
    /// What helps (a did-you-mean, the checker's help).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The workflow ids there are, when the id matched none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Vec<String>>,
}

impl UnknownWorkflow {
    /// `workflow` with `message`, nothing else.
    pub fn new(workflow: &str, message: String) -> UnknownWorkflow {
        UnknownWorkflow { workflow: workflow.to_owned(), path: None, message, help: None, available: None }
    }
}

/// `UNKNOWN_SCHEMA`: a named schema that is missing or not JSON Schema.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownSchema {
    /// The name (or the inline schema's key).
    pub schema: String,
    /// What happened.
    pub message: String,
    /// The named schemas there are, when the name matched none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Vec<String>>,
}

/// `PROMPT_NOT_FOUND` for a version.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PromptNotFound {
    /// The version asked for.
    pub version: String,
    /// What happened.
    pub message: String,
    /// The versions there are.
    pub available: Vec<String>,
}

/// `CHECKPOINT_NOT_FOUND`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckpointNotFound {
    /// The step asked for.
    pub checkpoint: String,
    /// What happened.
    pub message: String,
    /// The steps the run has checkpoints for.
    pub available: Vec<String>,
}

/// `RESET_NOT_ALLOWED`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResetNotAllowed {
    /// What happened.
    pub message: String,
    /// How many accepted results the reset would discard.
    pub discarded: usize,
}

/// `STEP_NOT_READY`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepNotReady {
    /// The step submitted.
    pub step_id: String,
    /// Its status.
    pub status: StepStatus,
    /// What happened.
    pub message: String,
    /// The ready steps.
    pub ready: Vec<String>,
}

/// `STEP_NOT_WAITING`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepNotWaiting {
    /// The step answered.
    pub step_id: String,
    /// Its status.
    pub status: StepStatus,
    /// What happened.
    pub message: String,
    /// The units of the run that wait for an answer.
    pub waiting: Vec<String>,
}

/// `UNKNOWN_EVENT`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownEvent {
    /// The event sent.
    pub event: String,
    /// What happened.
    pub message: String,
    /// Did you mean …, or how to declare it.
    pub help: String,
    /// The events savant-think.toml declares.
    pub declared: Vec<String>,
}

/// `NO_WAITING_RUN`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NoWaitingRun {
    /// The event sent.
    pub event: String,
    /// Its key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What happened.
    pub message: String,
}

/// `STATE_CONFLICT`: what was expected against what the run holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Conflict {
    /// The step whose stored result differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// What happened.
    pub message: String,
    /// The run another call made first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The version the caller expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<u64>,
    /// The run's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
}

/// `INVALID_PARAMS` for a tool's arguments it does not take.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownArguments {
    /// What happened.
    pub message: String,
    /// The arguments refused, each with a did-you-mean.
    pub unknown: Vec<UnknownArgument>,
    /// The arguments the tool takes.
    pub arguments: Vec<String>,
    /// What helps.
    pub help: String,
}

/// One argument a tool does not take.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownArgument {
    /// Its name.
    pub argument: String,
    /// A did-you-mean among the tool's arguments (`null` when none is close).
    pub help: Option<String>,
}

/// A workflow with `check` errors (`YAML_SCHEMA_VIOLATION`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkflowErrors {
    /// The file.
    pub path: String,
    /// What happened.
    pub message: String,
    /// The checker's diagnostics, as `check --format json` writes them.
    pub diagnostics: Value,
    /// The workflow's `name`, when it has one (`null` when not).
    pub name: Option<String>,
    /// Its `description` (`null` when none).
    pub description: Option<String>,
}

/// `INVALID_CONFIG`: `savant-think.toml` cannot be used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InvalidConfig {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The `[servers.NAME]` at fault, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// A state store that cannot be opened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreOpen {
    /// What happened.
    pub message: String,
    /// What to check.
    pub hint: String,
}

/// `UNKNOWN_RESOURCE`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownResource {
    /// The URI asked for.
    pub uri: String,
    /// What happened.
    pub message: String,
}

/// An MCP resource's run that is not there (`UNKNOWN_RUN`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MissingRun {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// What happened.
    pub message: String,
}

/// A path argument refused by the confinement (`INVALID_INPUT`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BadPath {
    /// Why.
    pub message: String,
    /// The path as given.
    pub path: String,
}

/// An MCP `tasks/*` request refused (`UNKNOWN_TASK`, `STEP_NOT_WAITING`,
/// `INVALID_INPUT`): the task, why, what to do.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskRefused {
    /// The task id asked for.
    pub task_id: String,
    /// The task's status, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// What happened.
    pub message: String,
    /// What to do.
    pub help: String,
}

/// `UNKNOWN_TOOL`'s details.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownTool {
    /// The name asked for.
    pub tool: String,
    /// What happened.
    pub message: String,
    /// A did-you-mean among the tools there are, if one is close.
    pub help: Option<String>,
    /// The tools there are.
    pub tools: Vec<String>,
}

/// `UNKNOWN_STEP`'s details.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownStep {
    /// The step id asked for (`id` or `id[N]`).
    pub step_id: String,
    /// What happened.
    pub message: String,
    /// A did-you-mean among the workflow's step ids, if one is close.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The ready steps, when the call was a submission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<Vec<String>>,
}

/// `RUN_EXISTS`: plan was given the id of a run that exists.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunExists {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// The existing run's status (running, done, failed or unreadable).
    pub status: Option<String>,
    /// Its state version.
    pub version: Option<u64>,
    /// When it last changed (RFC 3339).
    pub updated_at: Option<String>,
    /// What happened.
    pub message: String,
    /// How to go on.
    pub help: String,
}

/// `UNKNOWN_RUN`: no such run (or no such archived copy).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownRun {
    /// The workflow id.
    pub workflow: String,
    /// The run id asked for.
    pub run_id: String,
    /// The archived copy asked for, if one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_id: Option<String>,
    /// What happened.
    pub message: String,
    /// A did-you-mean among the ids there are, if one is close.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// `RUN_BUSY`, `BUSY` and a `STATE_UNAVAILABLE` met mid-call: retryable.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retryable {
    /// The run whose lock was busy (`workflow/run_id`), for `RUN_BUSY`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// What happened.
    pub message: String,
    /// Always true: the same call may succeed later.
    pub retryable: bool,
    /// How long to wait before trying again, in milliseconds.
    pub retry_after_ms: u64,
}

/// The wait a busy answer suggests before a retry.
pub const RETRY_AFTER_MS: u64 = 1000;

/// `WORKFLOW_CHANGED`: the workflow version (or schema) a run is pinned to
/// is missing from the state store, or no longer has its bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PinnedMissing {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// What happened.
    pub message: String,
    /// How to go on.
    pub help: String,
    /// The object the run is pinned to.
    pub run_hash: String,
    /// The workflow file's hash now, when it can be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_hash: Option<String>,
}

/// `INCOMPATIBLE_UPGRADE`: what the upgrade would do, and why it cannot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IncompatibleUpgrade {
    /// The workflow id.
    pub workflow: String,
    /// What happened.
    pub message: String,
    /// Each run checked: its plan and diagnostics.
    pub runs: Vec<RunUpgrade>,
    /// How to go on.
    pub help: String,
}
