//! Engine errors: a stable [`ErrorCode`] and typed details
//! ([`ErrorDetails`]), made JSON once, the same for the CLI (`{"error":
//! CODE, "details": …}`) and MCP tool results ([`EngineError::to_json`]).
//! The generic constructors are here (a message, field errors, a typed
//! shape, the did-you-mean ones); `run_errors.rs` has those of runs over
//! time.

use crate::runtime::error_details::UnknownWorkflow;
use crate::runtime::error_details::{Details, ErrorDetails, FieldError, Message, UnknownStep, UnknownTool};
use crate::runtime::record::RunStatus;
use crate::runtime::reply_next::{Instruction, ResetNote, StateSummary};
use serde_json::{Map, Value, json};

/// The stable code of an engine error. docs/runtime.md has a row for each
/// (a test keeps it so).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// no workflow by that id or path, or its file cannot be read.
    UnknownWorkflow,
    /// the workflow has `check` errors, so runs are refused.
    YamlSchemaViolation,
    /// params are not an object, miss or add a key, or break a param's schema;
    /// or a tool was given an argument it does not take.
    InvalidParams,
    /// a run or workflow id does not match the id pattern.
    InvalidId,
    /// no state for this workflow and run id.
    UnknownRun,
    /// plan was given the id of a run that exists, without resume or replace.
    RunExists,
    /// an upgrade would break a run: its diagnostics point into the new file.
    IncompatibleUpgrade,
    /// no step (or item) by that id in the workflow.
    UnknownStep,
    /// the step is not one of the ready ones.
    StepNotReady,
    /// a result does not match its success schema.
    ValidationFailed,
    /// a ready step's input cannot be rendered; the run failed.
    TemplateRenderError,
    /// a stale expected_version, or a different result for a done step.
    StateConflict,
    /// reset to a step that has not completed.
    CheckpointNotFound,
    /// the reset would discard results and force is not set.
    ResetNotAllowed,
    /// the workflow file changed since the run started.
    WorkflowChanged,
    /// no driver prompt by that version.
    PromptNotFound,
    /// a named schema is missing, or a schema is not valid JSON Schema.
    UnknownSchema,
    /// a tool argument is missing or has the wrong type.
    InvalidInput,
    /// no engine tool by that name.
    UnknownTool,
    /// savant-think.toml cannot be read or parsed.
    InvalidConfig,
    /// stored run state cannot be read as a run.
    StateCorrupt,
    /// the state store refused an operation.
    StateIo,
    /// the run's lock could not be had in time, or too many calls wait for it (retryable).
    RunBusy,
    /// the server is at its limit of calls in flight (retryable).
    Busy,
    /// the state directory leads out of the project root through a symlink.
    StateOutsideRoot,
    /// `SAVANT_STATE_URL` / `[state] url` is malformed or names an unknown store.
    StateUrlInvalid,
    /// the configured state database cannot be reached or used.
    StateUnavailable,
    /// the state database was migrated by a newer savant-think.
    StateSchemaNewer,
    /// the state database's schema is missing or older, and the user may not migrate it.
    StateSchemaOlder,
    /// the run failed (fallback when no reason was recorded).
    RunFailed,
    /// exec: the run is not done but no step is ready.
    NoReadyStep,
    /// exec: a step needs a model and none is configured.
    ModelNotConfigured,
    /// an answer or event for a step that is not waiting for one.
    StepNotWaiting,
    /// a waiting step reached its deadline with no `on_timeout`; the run failed.
    WaitTimedOut,
    /// an event not declared in savant-think.toml (`[events.NAME]`).
    UnknownEvent,
    /// no run waits, or will wait, for the event with that key.
    NoWaitingRun,
    /// MCP: an engine call did not complete.
    Internal,
    /// MCP: a bad workflow:// or run:// URI.
    UnknownResource,
    /// MCP tasks: a task id that names no run of this project.
    UnknownTask,
    /// MCP tasks: the run's task was cancelled (`tasks/cancel`).
    TaskCancelled,
    /// MCP: a `requestState` echoed on a retry that was forged, tampered
    /// with, expired, already used, or for another call.
    RequestStateRefused,
}

impl ErrorCode {
    /// Every code, in the order docs/runtime.md lists them.
    pub const ALL: &[ErrorCode] = &[
        ErrorCode::UnknownWorkflow,
        ErrorCode::YamlSchemaViolation,
        ErrorCode::InvalidParams,
        ErrorCode::InvalidId,
        ErrorCode::UnknownRun,
        ErrorCode::RunExists,
        ErrorCode::IncompatibleUpgrade,
        ErrorCode::UnknownStep,
        ErrorCode::StepNotReady,
        ErrorCode::ValidationFailed,
        ErrorCode::TemplateRenderError,
        ErrorCode::StateConflict,
        ErrorCode::CheckpointNotFound,
        ErrorCode::ResetNotAllowed,
        ErrorCode::WorkflowChanged,
        ErrorCode::PromptNotFound,
        ErrorCode::UnknownSchema,
        ErrorCode::InvalidInput,
        ErrorCode::UnknownTool,
        ErrorCode::InvalidConfig,
        ErrorCode::StateCorrupt,
        ErrorCode::StateIo,
        ErrorCode::RunBusy,
        ErrorCode::Busy,
        ErrorCode::StateOutsideRoot,
        ErrorCode::StateUrlInvalid,
        ErrorCode::StateUnavailable,
        ErrorCode::StateSchemaNewer,
        ErrorCode::StateSchemaOlder,
        ErrorCode::RunFailed,
        ErrorCode::NoReadyStep,
        ErrorCode::ModelNotConfigured,
        ErrorCode::StepNotWaiting,
        ErrorCode::WaitTimedOut,
        ErrorCode::UnknownEvent,
        ErrorCode::NoWaitingRun,
        ErrorCode::Internal,
        ErrorCode::UnknownResource,
        ErrorCode::UnknownTask,
        ErrorCode::TaskCancelled,
        ErrorCode::RequestStateRefused,
    ];

    /// The stable name (`UNKNOWN_WORKFLOW`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownWorkflow => "UNKNOWN_WORKFLOW",
            ErrorCode::YamlSchemaViolation => "YAML_SCHEMA_VIOLATION",
            ErrorCode::InvalidParams => "INVALID_PARAMS",
            ErrorCode::InvalidId => "INVALID_ID",
            ErrorCode::UnknownRun => "UNKNOWN_RUN",
            ErrorCode::RunExists => "RUN_EXISTS",
            ErrorCode::IncompatibleUpgrade => "INCOMPATIBLE_UPGRADE",
            ErrorCode::UnknownStep => "UNKNOWN_STEP",
            ErrorCode::StepNotReady => "STEP_NOT_READY",
            ErrorCode::ValidationFailed => "VALIDATION_FAILED",
            ErrorCode::TemplateRenderError => "TEMPLATE_RENDER_ERROR",
            ErrorCode::StateConflict => "STATE_CONFLICT",
            ErrorCode::CheckpointNotFound => "CHECKPOINT_NOT_FOUND",
            ErrorCode::ResetNotAllowed => "RESET_NOT_ALLOWED",
            ErrorCode::WorkflowChanged => "WORKFLOW_CHANGED",
            ErrorCode::PromptNotFound => "PROMPT_NOT_FOUND",
            ErrorCode::UnknownSchema => "UNKNOWN_SCHEMA",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidConfig => "INVALID_CONFIG",
            ErrorCode::StateCorrupt => "STATE_CORRUPT",
            ErrorCode::StateIo => "STATE_IO",
            ErrorCode::RunBusy => "RUN_BUSY",
            ErrorCode::Busy => "BUSY",
            ErrorCode::StateOutsideRoot => "STATE_OUTSIDE_ROOT",
            ErrorCode::StateUrlInvalid => "STATE_URL_INVALID",
            ErrorCode::StateUnavailable => "STATE_UNAVAILABLE",
            ErrorCode::StateSchemaNewer => "STATE_SCHEMA_NEWER",
            ErrorCode::StateSchemaOlder => "STATE_SCHEMA_OLDER",
            ErrorCode::RunFailed => "RUN_FAILED",
            ErrorCode::NoReadyStep => "NO_READY_STEP",
            ErrorCode::ModelNotConfigured => "MODEL_NOT_CONFIGURED",
            ErrorCode::StepNotWaiting => "STEP_NOT_WAITING",
            ErrorCode::WaitTimedOut => "WAIT_TIMED_OUT",
            ErrorCode::UnknownEvent => "UNKNOWN_EVENT",
            ErrorCode::NoWaitingRun => "NO_WAITING_RUN",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::UnknownResource => "UNKNOWN_RESOURCE",
            ErrorCode::UnknownTask => "UNKNOWN_TASK",
            ErrorCode::TaskCancelled => "TASK_CANCELLED",
            ErrorCode::RequestStateRefused => "REQUEST_STATE_REFUSED",
        }
    }

    /// One line on when the code is returned.
    pub fn summary(self) -> &'static str {
        match self {
            ErrorCode::UnknownWorkflow => "No workflow by that id or path, or its file cannot be read.",
            ErrorCode::YamlSchemaViolation => "The workflow has `check` errors, so runs are refused.",
            ErrorCode::InvalidParams => {
                "Params are not an object, miss or add a key, or break a param's schema; or a tool got an argument it does not take."
            }
            ErrorCode::InvalidId => "A run or workflow id does not match the id pattern.",
            ErrorCode::UnknownRun => "No state for this workflow and run id.",
            ErrorCode::RunExists => "Plan was given the id of a run that exists, without resume or replace.",
            ErrorCode::IncompatibleUpgrade => {
                "An upgrade would break a run; its diagnostics point into the new file."
            }
            ErrorCode::UnknownStep => "No step (or item) by that id in the workflow.",
            ErrorCode::StepNotReady => "The step is not one of the ready ones.",
            ErrorCode::ValidationFailed => "A result does not match its success schema.",
            ErrorCode::TemplateRenderError => "A ready step's input cannot be rendered; the run failed.",
            ErrorCode::StateConflict => "A stale expected_version, or a different result for a done step.",
            ErrorCode::CheckpointNotFound => "Reset to a step that has not completed.",
            ErrorCode::ResetNotAllowed => "The reset would discard results and force is not set.",
            ErrorCode::WorkflowChanged => "The workflow file changed since the run started.",
            ErrorCode::PromptNotFound => "No driver prompt by that version.",
            ErrorCode::UnknownSchema => "A named schema is missing, or a schema is not valid JSON Schema.",
            ErrorCode::InvalidInput => "A tool argument is missing or has the wrong type.",
            ErrorCode::UnknownTool => "No engine tool by that name.",
            ErrorCode::InvalidConfig => "Savant-think.toml cannot be read or parsed.",
            ErrorCode::StateCorrupt => "Stored run state cannot be read as a run.",
            ErrorCode::StateIo => "The state store refused an operation.",
            ErrorCode::RunBusy => {
                "The run's lock could not be had in time, or too many calls wait for it; retry."
            }
            ErrorCode::Busy => "The server is at its limit of calls in flight; retry.",
            ErrorCode::StateOutsideRoot => {
                "The state directory leads out of the project root through a symlink."
            }
            ErrorCode::StateUrlInvalid => "The state URL is malformed or names an unknown store.",
            ErrorCode::StateUnavailable => {
                "The state database cannot be reached or used, or did not answer in time; retry."
            }
            ErrorCode::StateSchemaNewer => "The state database was migrated by a newer savant-think.",
            ErrorCode::StateSchemaOlder => {
                "The state database's schema is missing or older, and its user may not migrate it."
            }
            ErrorCode::RunFailed => "The run failed (fallback when no reason was recorded).",
            ErrorCode::NoReadyStep => "Exec: the run is not done but no step is ready.",
            ErrorCode::ModelNotConfigured => "Exec: a step needs a model and none is configured.",
            ErrorCode::StepNotWaiting => "An answer or event for a step that is not waiting for one.",
            ErrorCode::WaitTimedOut => {
                "A waiting step reached its deadline with no `on_timeout`; the run failed."
            }
            ErrorCode::UnknownEvent => "An event not declared in savant-think.toml (`[events.NAME]`).",
            ErrorCode::NoWaitingRun => "No run waits, or will wait, for the event with that key.",
            ErrorCode::Internal => "MCP: an engine call did not complete.",
            ErrorCode::UnknownResource => "MCP: a bad workflow:// or run:// URI.",
            ErrorCode::UnknownTask => "MCP: a task id that names no run of this project.",
            ErrorCode::TaskCancelled => {
                "MCP: the run's task was cancelled; the run stopped after the step in flight and can be resumed."
            }
            ErrorCode::RequestStateRefused => {
                "MCP: a requestState that was forged, tampered with, expired, already used or for another call."
            }
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the wire form (`e.code == "STATE_CONFLICT"`).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorCode> for &str {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.as_str()
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A failure the engine reports as data: `{ "error": CODE, "details": … }`,
/// and, when the failure is about a run, what the client needs to go on
/// (see [`ErrorContext`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineError {
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong, typed (boxed: errors stay small); as JSON
    /// `{message, help?, …}`, or a list of `{path, message}` (validation).
    pub details: Box<ErrorDetails>,
    /// The run's state around the failure, if any (boxed: errors stay small).
    pub context: Option<Box<ErrorContext>>,
}

/// What a run's failure carries beside its details, as top-level fields of
/// the error's JSON (in this order).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ErrorContext {
    /// `VALIDATION_FAILED`: the instruction to carry out again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<Instruction>,
    /// A failed run: its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The run's state after the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateSummary>,
    /// `think_reset` whose run cannot go on: what the reset did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<ResetNote>,
}

impl EngineError {
    /// An error with no run context, its details as given: every
    /// constructor goes through it.
    pub(super) fn new(code: ErrorCode, details: ErrorDetails) -> EngineError {
        EngineError { code, details: Box::new(details), context: None }
    }

    /// `code` with a message (no help).
    pub fn message(code: ErrorCode, message: impl Into<String>) -> EngineError {
        EngineError::message_help(code, message, None)
    }

    /// `code` with a message and what helps.
    pub fn message_help(code: ErrorCode, message: impl Into<String>, help: Option<String>) -> EngineError {
        EngineError::new(code, ErrorDetails::Message(Message { message: message.into(), help }))
    }

    /// `code` with a list of field errors (`INVALID_PARAMS`, `VALIDATION_FAILED`).
    pub fn fields(code: ErrorCode, errors: &[FieldError]) -> EngineError {
        EngineError::new(code, ErrorDetails::Fields(errors.to_vec()))
    }

    /// `code` with one of the typed shapes (never free JSON: [`Details`]
    /// is implemented by the shape structs alone).
    pub fn with(code: ErrorCode, details: impl Details) -> EngineError {
        EngineError::new(code, details.into())
    }

    /// `code` with details that are already JSON because they were
    /// recorded so: a stored run's failure, kept as the run has it.
    pub fn recorded(code: ErrorCode, details: Value) -> EngineError {
        EngineError::new(code, ErrorDetails::Recorded(details))
    }

    /// The details' `message`, when they have one.
    pub fn message_text(&self) -> Option<&str> {
        self.details.message()
    }

    /// The details' `help`, when they have one (of a list of field errors,
    /// the first that has one).
    pub fn help_text(&self) -> Option<&str> {
        self.details.help()
    }

    /// The message for a person ([`ErrorDetails::describe`]): one line for
    /// the CLI, `test`, the inspector.
    pub fn describe(&self) -> String {
        self.details.describe()
    }

    fn context_mut(&mut self) -> &mut ErrorContext {
        self.context.get_or_insert_with(Box::default)
    }

    /// With the instruction to carry out again.
    pub fn with_instruction(mut self, instruction: Instruction) -> EngineError {
        self.context_mut().instruction = Some(instruction);
        self
    }

    /// With the run's id.
    pub fn with_run_id(mut self, run_id: &str) -> EngineError {
        self.context_mut().run_id = Some(run_id.to_owned());
        self
    }

    /// With the run's state.
    pub fn with_state(mut self, state: StateSummary) -> EngineError {
        self.context_mut().state = Some(state);
        self
    }

    /// With what a reset did.
    pub fn with_reset(mut self, reset: ResetNote) -> EngineError {
        self.context_mut().reset = Some(reset);
        self
    }

    /// The run's state carried by the error, if any.
    pub fn state(&self) -> Option<&StateSummary> {
        self.context.as_ref()?.state.as_ref()
    }

    /// Whether the error says the run has failed (it carries the run's
    /// state, with status `failed`): the run cannot go on without a reset.
    pub fn run_failed(&self) -> bool {
        self.state().is_some_and(|s| s.status == RunStatus::Failed)
    }

    /// `{error, details}` and the context's fields, as the tools answer.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("error".into(), json!(self.code));
        m.insert("details".into(), self.details.to_json());
        if let Some(context) = &self.context
            && let Ok(Value::Object(fields)) = serde_json::to_value(context)
        {
            m.extend(fields);
        }
        Value::Object(m)
    }
}

impl EngineError {
    /// `UNKNOWN_TOOL` for `name`, with a did-you-mean among `names`, which
    /// it lists: the one constructor, whichever adapter (CLI `call`, MCP,
    /// the executor) met the name.
    pub fn unknown_tool<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> EngineError {
        let tools: Vec<String> = names.map(str::to_owned).collect();
        let help = crate::diagnostic::suggest(name, tools.iter().map(String::as_str));
        let message = format!("no engine tool `{name}`");
        EngineError::with(ErrorCode::UnknownTool, UnknownTool { tool: name.to_owned(), message, help, tools })
    }

    /// `UNKNOWN_STEP` for `step_id` (`message` says where it was looked
    /// for), with a did-you-mean among `known` step ids and, for a
    /// submission, the `ready` steps.
    pub fn unknown_step<'a>(
        step_id: &str,
        message: String,
        known: impl IntoIterator<Item = &'a str>,
        ready: Option<Vec<String>>,
    ) -> EngineError {
        let base = crate::runtime::work_id::WorkId::base(step_id);
        let known: Vec<&str> = known.into_iter().collect();
        let help = if base != step_id && known.contains(&base) {
            // An item id the call cannot take (an item where only a step
            // will do, or one the step does not have): name the step.
            Some(format!("did you mean the step `{base}`?"))
        } else if base.is_empty() {
            None
        } else {
            crate::diagnostic::suggest(base, known)
        };
        EngineError::with(
            ErrorCode::UnknownStep,
            UnknownStep { step_id: step_id.to_owned(), message, help, ready },
        )
    }
}

impl EngineError {
    /// The error for a person: `CODE: message` ([`EngineError::describe`]),
    /// then `help: …` on its own line when it has one.
    pub fn human(&self) -> String {
        match self.help_text() {
            Some(help) => format!("{}: {}\n  help: {help}", self.code, self.describe()),
            None => format!("{}: {}", self.code, self.describe()),
        }
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.details)
    }
}

impl EngineError {
    /// `STATE_CORRUPT`: stored state that is not a run (the message names
    /// the file, or the store's place, and what is wrong), with what to do.
    pub fn state_corrupt(message: impl Into<String>) -> EngineError {
        let help = "`savant-think state repair WORKFLOW --run-id RUN` shows the damage and, with --apply, \
                    cuts a damaged journal back to its last good event (keeping a backup); \
                    a damaged snapshot: `state restore` an archived copy, or `state delete` the run";
        EngineError::message_help(ErrorCode::StateCorrupt, message, Some(help.into()))
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_shows_the_message_and_the_help_never_raw_json_of_them() {
        let e = EngineError::state_corrupt("the journal of wf/r1 is cut short");
        let h = e.human();
        assert!(
            h.starts_with(
                "STATE_CORRUPT: the journal of wf/r1 is cut short\n  help: `savant-think state repair"
            ),
            "{h}"
        );
        let e = EngineError::recorded(ErrorCode::InvalidInput, json!({"field": "x"}));
        assert_eq!(e.human(), r#"INVALID_INPUT: {"field":"x"}"#);
        // Field errors: each with its place, the first help.
        let f = |path: &str, message: &str, help: Option<&str>| crate::runtime::error_details::FieldError {
            path: path.into(),
            message: message.into(),
            help: help.map(Into::into),
        };
        let e = EngineError::fields(
            ErrorCode::InvalidParams,
            &[f("", "'x' was unexpected", Some("did you mean `y`?")), f("/n", "not an integer", None)],
        );
        assert_eq!(
            e.human(),
            "INVALID_PARAMS: 'x' was unexpected; at /n: not an integer\n  help: did you mean `y`?"
        );
    }

    #[test]
    fn every_code_is_documented_and_serializes_as_its_name() {
        let doc = include_str!("../../docs/runtime.md");
        for code in ErrorCode::ALL {
            assert!(doc.contains(&format!("`{code}`")), "docs/runtime.md does not document `{code}`");
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
            assert!(code.summary().ends_with('.'));
        }
        let mut names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        let e = EngineError::message(ErrorCode::StateConflict, "m");
        assert_eq!(e.to_json(), json!({"error": "STATE_CONFLICT", "details": {"message": "m"}}));
        assert_eq!(e.code, "STATE_CONFLICT");
        assert!(!e.run_failed());
        let state = StateSummary { version: 3, status: RunStatus::Failed, completed: 1, pending: 2 };
        let e = e.with_run_id("r1").with_state(state);
        assert!(e.run_failed());
        let text = serde_json::to_string(&e.to_json()).unwrap();
        assert_eq!(
            text,
            r#"{"error":"STATE_CONFLICT","details":{"message":"m"},"run_id":"r1","state":{"version":3,"status":"failed","completed":1,"pending":2}}"#
        );
    }
}
