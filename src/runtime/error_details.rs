//! The typed details of engine errors (issue 22.3): each shape of `details`
//! is a struct here, built by one constructor on [`EngineError`], so no
//! call site assembles JSON by hand. Field order is the JSON's order.
//! (`run_errors.rs` has the errors of runs over time, `error.rs` the
//! did-you-mean ones: `UNKNOWN_TOOL`, `UNKNOWN_STEP`.)

use crate::runtime::error::typed;
use crate::runtime::record::StepStatus;
use crate::runtime::{EngineError, ErrorCode};
use serde::Serialize;
use serde_json::Value;

/// Details that are a message and, when there is one, what helps.
#[derive(Clone, Debug, Serialize)]
pub struct Message {
    /// What went wrong, for a person.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// One entry of `INVALID_PARAMS` / `VALIDATION_FAILED`'s list (and of
/// think_validate's `errors`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct PromptNotFound {
    /// The version asked for.
    pub version: String,
    /// What happened.
    pub message: String,
    /// The versions there are.
    pub available: Vec<String>,
}

/// `CHECKPOINT_NOT_FOUND`.
#[derive(Clone, Debug, Serialize)]
pub struct CheckpointNotFound {
    /// The step asked for.
    pub checkpoint: String,
    /// What happened.
    pub message: String,
    /// The steps the run has checkpoints for.
    pub available: Vec<String>,
}

/// `RESET_NOT_ALLOWED`.
#[derive(Clone, Debug, Serialize)]
pub struct ResetNotAllowed {
    /// What happened.
    pub message: String,
    /// How many accepted results the reset would discard.
    pub discarded: usize,
}

/// `STEP_NOT_READY`.
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Default, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct UnknownArgument {
    /// Its name.
    pub argument: String,
    /// A did-you-mean among the tool's arguments (`null` when none is close).
    pub help: Option<String>,
}

/// A workflow with `check` errors (`YAML_SCHEMA_VIOLATION`).
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct StoreOpen {
    /// What happened.
    pub message: String,
    /// What to check.
    pub hint: String,
}

/// `UNKNOWN_RESOURCE`.
#[derive(Clone, Debug, Serialize)]
pub struct UnknownResource {
    /// The URI asked for.
    pub uri: String,
    /// What happened.
    pub message: String,
}

/// An MCP resource's run that is not there (`UNKNOWN_RUN`).
#[derive(Clone, Debug, Serialize)]
pub struct MissingRun {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// What happened.
    pub message: String,
}

/// A path argument refused by the confinement (`INVALID_INPUT`).
#[derive(Clone, Debug, Serialize)]
pub struct BadPath {
    /// Why.
    pub message: String,
    /// The path as given.
    pub path: String,
}

/// An MCP `tasks/*` request refused (`UNKNOWN_TASK`, `STEP_NOT_WAITING`,
/// `INVALID_INPUT`): the task, why, what to do.
#[derive(Clone, Debug, Serialize)]
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

/// A typed shape of `details` (implemented here, for this module's structs).
pub trait Details: Serialize {}

macro_rules! details {
    ($($t:ty),*) => { $(impl Details for $t {})* };
}
details!(
    Message,
    UnknownWorkflow,
    UnknownSchema,
    PromptNotFound,
    CheckpointNotFound,
    ResetNotAllowed,
    StepNotReady,
    StepNotWaiting,
    UnknownEvent,
    NoWaitingRun,
    Conflict,
    UnknownArguments,
    WorkflowErrors,
    InvalidConfig,
    StoreOpen,
    UnknownResource,
    MissingRun,
    BadPath,
    TaskRefused
);

impl EngineError {
    /// `code` with a message (no help).
    pub fn message(code: ErrorCode, message: impl Into<String>) -> EngineError {
        typed(code, Message { message: message.into(), help: None })
    }

    /// `code` with a message and what helps.
    pub fn message_help(code: ErrorCode, message: impl Into<String>, help: Option<String>) -> EngineError {
        typed(code, Message { message: message.into(), help })
    }

    /// `code` with a list of field errors (`INVALID_PARAMS`, `VALIDATION_FAILED`).
    pub fn fields(code: ErrorCode, errors: &[FieldError]) -> EngineError {
        typed(code, errors)
    }

    /// `code` with one of this module's typed details (never free JSON:
    /// [`Details`] is implemented by the detail structs alone).
    pub fn with(code: ErrorCode, details: impl Details) -> EngineError {
        typed(code, details)
    }

    /// The details' `message`, when they have one.
    pub fn message_text(&self) -> Option<&str> {
        self.details.get("message").and_then(Value::as_str)
    }

    /// The details' `help`, when they have one (of a list of field errors,
    /// the first that has one).
    pub fn help_text(&self) -> Option<&str> {
        match &self.details {
            Value::Array(fields) => fields.iter().find_map(|f| f.get("help").and_then(Value::as_str)),
            d => d.get("help").and_then(Value::as_str),
        }
    }

    /// The message for a person ([`details_message`]): one line for the
    /// CLI, `test`, the inspector.
    pub fn describe(&self) -> String {
        details_message(&self.details)
    }
}

impl EngineError {
    /// `UNKNOWN_WORKFLOW` for a workflow path the confinement refused
    /// (outside the root, a symlink out, not a regular file): the one
    /// answer of every adapter (CLI, MCP, exec) to that mistake.
    pub fn workflow_refused(workflow: &str, e: &crate::fsx::PathError) -> EngineError {
        let help = "workflow files must be inside the project root; give a workflow id (think_workflows_list), or pass --root to use another project";
        EngineError::with(
            ErrorCode::UnknownWorkflow,
            UnknownWorkflow {
                help: Some(help.into()),
                ..UnknownWorkflow::new(workflow, format!("{workflow}: {}", e.reason()))
            },
        )
    }
}

/// Helps `INVALID_PARAMS` errors about a param `workflow` does not declare
/// (the schema's `'name' was unexpected`): the declared one it is close
/// to, or the ones there are.
pub(crate) fn help_unknown_params(
    errors: &mut [FieldError],
    params: &Value,
    workflow: &str,
    declared: &[&str],
) {
    let unknown: Vec<&String> = params
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .filter(|k| !declared.contains(&k.as_str()))
        .collect();
    for e in errors.iter_mut().filter(|e| e.path.is_empty() && e.help.is_none()) {
        let Some(name) = unknown.iter().find(|k| e.message.contains(&format!("'{k}'"))) else { continue };
        e.help = crate::diagnostic::suggest(name, declared.iter().copied()).or_else(|| {
            Some(if declared.is_empty() {
                format!("`{workflow}` declares no params")
            } else {
                format!("the params of `{workflow}` are: {}", declared.join(", "))
            })
        });
    }
}

/// An error's details as one line for a person: their `message`; of a list
/// of field errors, each as `at PATH: message`, joined; a string as it is;
/// else the details as JSON, so nothing is lost. Also what `exec` prints of
/// a recorded failure.
pub fn details_message(details: &Value) -> String {
    match details {
        Value::String(s) => s.clone(),
        Value::Array(fields) => {
            let lines: Option<Vec<String>> = fields
                .iter()
                .map(|f| {
                    let message = f.get("message").and_then(Value::as_str)?;
                    Some(match f.get("path").and_then(Value::as_str).filter(|p| !p.is_empty()) {
                        Some(path) => format!("at {path}: {message}"),
                        None => message.to_owned(),
                    })
                })
                .collect();
            lines.filter(|l| !l.is_empty()).map_or_else(|| details.to_string(), |l| l.join("; "))
        }
        d => d.get("message").and_then(Value::as_str).map_or_else(|| d.to_string(), str::to_owned),
    }
}
