//! The details of an engine error as one typed value, [`ErrorDetails`]:
//! a variant per shape (the structs of `error_shapes.rs`, re-exported
//! here), a list of field errors, a callee's error, or JSON recorded in a
//! run's history. It is serialized once, at the edge
//! ([`EngineError::to_json`](crate::runtime::EngineError::to_json), its
//! `Display`); a person's line is read from the typed value
//! ([`ErrorDetails::describe`]).

pub use crate::runtime::error_shapes::*;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// What every struct shape has: a message (its `message` field).
trait Shape {
    fn message(&self) -> &str;
    fn message_mut(&mut self) -> &mut String;
}

/// A typed shape of `details`: the structs of `error_shapes.rs`, never free
/// JSON (see [`EngineError::with`](crate::runtime::EngineError::with)).
pub trait Details: Into<ErrorDetails> {}

/// The enum of details, one variant per struct shape (named as its
/// struct), and what each struct is: [`Details`], [`Shape`], a variant.
macro_rules! details {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// An engine error's details: one variant per shape, serialized as
        /// the shape's own JSON (untagged).
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum ErrorDetails {
            $($(#[$doc])* $name($name),)*
            /// `INVALID_PARAMS` / `VALIDATION_FAILED`: a list of field errors.
            Fields(Vec<FieldError>),
            /// The error of a workflow that a `uses:` step calls.
            Callee(CalleeError),
            /// Details that were recorded as JSON (a run's failure, as the
            /// run has it): kept as they are.
            Recorded(Value),
        }

        impl ErrorDetails {
            fn shape(&self) -> Option<&dyn Shape> {
                match self {
                    $(ErrorDetails::$name(d) => Some(d),)*
                    _ => None,
                }
            }

            fn shape_mut(&mut self) -> Option<&mut dyn Shape> {
                match self {
                    $(ErrorDetails::$name(d) => Some(d),)*
                    _ => None,
                }
            }
        }

        $(
            impl From<$name> for ErrorDetails {
                fn from(d: $name) -> ErrorDetails {
                    ErrorDetails::$name(d)
                }
            }

            impl Details for $name {}

            impl Shape for $name {
                fn message(&self) -> &str {
                    &self.message
                }

                fn message_mut(&mut self) -> &mut String {
                    &mut self.message
                }
            }
        )*
    };
}

details!(
    /// A message and, when there is one, what helps.
    Message,
    /// `UNKNOWN_WORKFLOW`.
    UnknownWorkflow,
    /// `UNKNOWN_SCHEMA`.
    UnknownSchema,
    /// `PROMPT_NOT_FOUND`.
    PromptNotFound,
    /// `CHECKPOINT_NOT_FOUND`.
    CheckpointNotFound,
    /// `RESET_NOT_ALLOWED`.
    ResetNotAllowed,
    /// `STEP_NOT_READY`.
    StepNotReady,
    /// `STEP_NOT_WAITING`.
    StepNotWaiting,
    /// `UNKNOWN_EVENT`.
    UnknownEvent,
    /// `NO_WAITING_RUN`.
    NoWaitingRun,
    /// `STATE_CONFLICT`.
    Conflict,
    /// `INVALID_PARAMS` for arguments a tool does not take.
    UnknownArguments,
    /// `YAML_SCHEMA_VIOLATION` with the checker's diagnostics.
    WorkflowErrors,
    /// `INVALID_CONFIG`.
    InvalidConfig,
    /// A state store that cannot be opened.
    StoreOpen,
    /// `UNKNOWN_RESOURCE`.
    UnknownResource,
    /// An MCP resource's run that is not there.
    MissingRun,
    /// A path the confinement refused.
    BadPath,
    /// An MCP `tasks/*` request refused.
    TaskRefused,
    /// `UNKNOWN_TOOL`.
    UnknownTool,
    /// `UNKNOWN_STEP`.
    UnknownStep,
    /// `RUN_EXISTS`.
    RunExists,
    /// `UNKNOWN_RUN`.
    UnknownRun,
    /// `RUN_BUSY`, `BUSY`, a `STATE_UNAVAILABLE` met mid-call.
    Retryable,
    /// `WORKFLOW_CHANGED`: a pinned version missing from the store.
    PinnedMissing,
    /// `INCOMPATIBLE_UPGRADE`.
    IncompatibleUpgrade,
);

/// The error of a workflow that a `uses:` step calls, as the caller reports
/// it: the callee's details, their message saying which step uses it, and
/// `uses` (the callee) after their own fields.
#[derive(Clone, Debug, PartialEq)]
pub struct CalleeError {
    /// The callee's details (their message already says where).
    pub details: Box<ErrorDetails>,
    /// The workflow the step uses.
    pub uses: String,
}

impl Serialize for CalleeError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(&self.details).map_err(serde::ser::Error::custom)?;
        if let Value::Object(fields) = &mut value {
            fields.insert("uses".into(), self.uses.clone().into());
        }
        value.serialize(s)
    }
}

impl ErrorDetails {
    /// The details as JSON (for an edge that embeds them in its own JSON).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Their `message`, when they have one.
    pub fn message(&self) -> Option<&str> {
        match self {
            ErrorDetails::Callee(c) => c.details.message(),
            ErrorDetails::Recorded(v) => v.get("message").and_then(Value::as_str),
            d => d.shape().map(Shape::message),
        }
    }

    /// Their `help`, when they have one (of a list of field errors, the
    /// first that has one).
    pub fn help(&self) -> Option<&str> {
        match self {
            ErrorDetails::Message(Message { help, .. })
            | ErrorDetails::UnknownWorkflow(UnknownWorkflow { help, .. })
            | ErrorDetails::UnknownTool(UnknownTool { help, .. })
            | ErrorDetails::UnknownStep(UnknownStep { help, .. })
            | ErrorDetails::UnknownRun(UnknownRun { help, .. }) => help.as_deref(),
            ErrorDetails::UnknownEvent(UnknownEvent { help, .. })
            | ErrorDetails::UnknownArguments(UnknownArguments { help, .. })
            | ErrorDetails::TaskRefused(TaskRefused { help, .. })
            | ErrorDetails::RunExists(RunExists { help, .. })
            | ErrorDetails::PinnedMissing(PinnedMissing { help, .. })
            | ErrorDetails::IncompatibleUpgrade(IncompatibleUpgrade { help, .. }) => Some(help.as_str()),
            ErrorDetails::Fields(fields) => fields.iter().find_map(|f| f.help.as_deref()),
            ErrorDetails::Callee(c) => c.details.help(),
            ErrorDetails::Recorded(Value::Array(fields)) => {
                fields.iter().find_map(|f| f.get("help").and_then(Value::as_str))
            }
            ErrorDetails::Recorded(v) => v.get("help").and_then(Value::as_str),
            _ => None,
        }
    }

    /// One line for a person: the message; of field errors, each as
    /// `at PATH: message`, joined; recorded JSON as [`details_message`]
    /// reads it.
    pub fn describe(&self) -> String {
        match self {
            ErrorDetails::Recorded(v) => details_message(v),
            ErrorDetails::Fields(fields) if !fields.is_empty() => {
                let line = |f: &FieldError| match f.path.as_str() {
                    "" => f.message.clone(),
                    path => format!("at {path}: {}", f.message),
                };
                fields.iter().map(line).collect::<Vec<_>>().join("; ")
            }
            d => d.message().map_or_else(|| d.to_string(), str::to_owned),
        }
    }

    /// The details of a callee's error as its caller reports them: the
    /// message replaced, `uses` added (details with no message of their
    /// own, a list or a recorded scalar, are kept as they are).
    pub(crate) fn in_callee(self, message: String, uses: &str) -> ErrorDetails {
        match self {
            ErrorDetails::Recorded(Value::Object(mut fields)) => {
                fields.insert("message".into(), message.into());
                fields.insert("uses".into(), uses.into());
                ErrorDetails::Recorded(Value::Object(fields))
            }
            mut d => match d.message_mut() {
                Some(m) => {
                    *m = message;
                    ErrorDetails::Callee(CalleeError { details: Box::new(d), uses: uses.to_owned() })
                }
                None => d,
            },
        }
    }

    fn message_mut(&mut self) -> Option<&mut String> {
        match self {
            ErrorDetails::Callee(c) => c.details.message_mut(),
            d => d.shape_mut().map(Shape::message_mut),
        }
    }
}

/// As JSON, compact (`{"message":"…"}`).
impl std::fmt::Display for ErrorDetails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_json())
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

/// Recorded details as one line for a person: their `message`; of a list
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_shape_reads_as_its_own_json_and_a_callee_adds_uses_after_it() {
        let message = |help: Option<&str>| {
            ErrorDetails::from(Message { message: "m".into(), help: help.map(Into::into) })
        };
        assert_eq!(message(None).to_json(), json!({"message": "m"}));
        assert_eq!(message(Some("h")).help(), Some("h"));
        assert_eq!(message(None).to_string(), r#"{"message":"m"}"#);
        let callee = message(Some("h")).in_callee("`s` of `w` uses `c`, which cannot run: m".into(), "c");
        assert_eq!(
            callee.to_string(),
            r#"{"message":"`s` of `w` uses `c`, which cannot run: m","help":"h","uses":"c"}"#
        );
        assert_eq!(
            (callee.message(), callee.help()),
            (Some("`s` of `w` uses `c`, which cannot run: m"), Some("h"))
        );
        // Field errors have no message of their own: kept as they are.
        let f = |path: &str, help: Option<&str>| FieldError {
            path: path.into(),
            message: "bad".into(),
            help: help.map(Into::into),
        };
        let fields = ErrorDetails::Fields(vec![f("", None), f("/n", Some("fix n"))]);
        assert_eq!(fields.describe(), "bad; at /n: bad");
        assert_eq!(fields.help(), Some("fix n"));
        assert_eq!(fields.clone().in_callee("x".into(), "c"), fields);
        assert_eq!(ErrorDetails::Fields(vec![]).describe(), "[]");
        // Recorded JSON is read as JSON, and a callee's note goes into it.
        let recorded = ErrorDetails::Recorded(json!({"error": "WAIT_TIMED_OUT", "message": "late"}));
        assert_eq!((recorded.message(), recorded.describe()), (Some("late"), "late".to_owned()));
        assert_eq!(
            recorded.in_callee("now".into(), "c").to_json(),
            json!({"error": "WAIT_TIMED_OUT", "message": "now", "uses": "c"})
        );
        assert_eq!(ErrorDetails::Recorded(json!("plain")).describe(), "plain");
    }
}
