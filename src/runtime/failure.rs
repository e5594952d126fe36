//! Why a run failed (`RunState::failure`): one enum for the failures the
//! run's state machine records, serialized to the JSON object it has always
//! had, `{"error": CODE, …}`.
//!
//! Any other shape — a child's reason that is an engine error, a run
//! stored by an older version — is kept as it was (`Other`), so every stored
//! run still loads and is written back byte for byte.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Why a run failed.
#[derive(Clone, Debug, PartialEq)]
pub enum RunFailure {
    /// `TEMPLATE_RENDER_ERROR`: a step's (or item's) input template could not
    /// be rendered.
    TemplateRender {
        /// The step (or item `id[i]`).
        step_id: String,
        /// The expression that failed.
        expression: String,
        /// Why it failed.
        message: String,
    },
    /// `VALIDATION_FAILED`: a step (or item) failed its success schema
    /// `retry.max` times.
    Validation {
        /// The step (or item `id[i]`).
        step_id: String,
        /// For a person: which step, how many times.
        message: String,
        /// The last schema errors: `{path, message}`.
        errors: Value,
    },
    /// `CHILD_FAILED`: the sub-workflow run of a `uses:` step (or item) failed.
    Child {
        /// The `uses:` step (or item `id[i]`).
        step_id: String,
        /// The child run's id.
        child_run_id: String,
        /// For a person: where, deep down, and why.
        message: String,
        /// The child's own failure (or why it could not start).
        child: Box<RunFailure>,
    },
    /// `WAIT_TIMED_OUT`: a waiting step (or item) reached its deadline with
    /// no `on_timeout:` to take instead.
    WaitTimedOut {
        /// The step (or item `id[i]`).
        step_id: String,
        /// For a person: which wait, since when.
        message: String,
        /// The deadline it reached (RFC 3339).
        deadline: String,
    },
    /// Any other shape, kept as recorded.
    Other(Value),
}

/// The recorded shapes, as serde reads them.
#[derive(Deserialize)]
#[serde(tag = "error")]
enum Known {
    #[serde(rename = "TEMPLATE_RENDER_ERROR")]
    TemplateRender { step_id: String, expression: String, message: String },
    #[serde(rename = "VALIDATION_FAILED")]
    Validation { step_id: String, message: String, errors: Value },
    #[serde(rename = "CHILD_FAILED")]
    Child { step_id: String, child_run_id: String, message: String, child: Box<RunFailure> },
    #[serde(rename = "WAIT_TIMED_OUT")]
    WaitTimedOut { step_id: String, message: String, deadline: String },
}

/// The recorded shapes, as serde writes them (field order is the order of
/// the JSON object).
#[derive(Serialize)]
#[serde(tag = "error")]
enum KnownRef<'a> {
    #[serde(rename = "TEMPLATE_RENDER_ERROR")]
    TemplateRender { step_id: &'a str, expression: &'a str, message: &'a str },
    #[serde(rename = "VALIDATION_FAILED")]
    Validation { step_id: &'a str, message: &'a str, errors: &'a Value },
    #[serde(rename = "CHILD_FAILED")]
    Child { step_id: &'a str, child_run_id: &'a str, message: &'a str, child: &'a RunFailure },
    #[serde(rename = "WAIT_TIMED_OUT")]
    WaitTimedOut { step_id: &'a str, message: &'a str, deadline: &'a str },
}

impl RunFailure {
    /// The failure's code (`"error"`), if it has one.
    pub fn code(&self) -> Option<&str> {
        match self {
            RunFailure::TemplateRender { .. } => Some("TEMPLATE_RENDER_ERROR"),
            RunFailure::Validation { .. } => Some("VALIDATION_FAILED"),
            RunFailure::Child { .. } => Some("CHILD_FAILED"),
            RunFailure::WaitTimedOut { .. } => Some("WAIT_TIMED_OUT"),
            RunFailure::Other(v) => v.get("error").and_then(Value::as_str),
        }
    }

    /// The step (or item, `id[i]`) the run failed at, if it says.
    pub fn step_id(&self) -> Option<&str> {
        match self {
            RunFailure::TemplateRender { step_id, .. }
            | RunFailure::Validation { step_id, .. }
            | RunFailure::Child { step_id, .. }
            | RunFailure::WaitTimedOut { step_id, .. } => Some(step_id),
            RunFailure::Other(v) => v.get("step_id").and_then(Value::as_str),
        }
    }

    /// The failure's message for a person, if it has one.
    pub fn message(&self) -> Option<&str> {
        match self {
            RunFailure::TemplateRender { message, .. }
            | RunFailure::Validation { message, .. }
            | RunFailure::Child { message, .. }
            | RunFailure::WaitTimedOut { message, .. } => Some(message),
            RunFailure::Other(v) => v.get("message").and_then(Value::as_str),
        }
    }

    /// The failure of a run whose `uses:` work `step_id` started child run
    /// `child_run_id`, which failed with `child`. A failure deep down is said
    /// once, where it happened: a child's own child failure is followed to
    /// its innermost reason, with the path it took (`failed (at ``each[1]/back/…``): …`).
    pub fn child_failed(step_id: &str, child_run_id: &str, child: &RunFailure) -> RunFailure {
        let (mut at, mut inner) = (Vec::new(), child);
        while let RunFailure::Child { step_id: at_step, child, .. } = inner {
            at.push(at_step.as_str());
            inner = &**child;
        }
        let details_message = match inner {
            RunFailure::Other(v) => v.get("details").and_then(|d| d.get("message")).and_then(Value::as_str),
            _ => None,
        };
        let reason =
            inner.message().or(details_message).or_else(|| inner.code()).unwrap_or("no reason given");
        let failed = format!("`{step_id}` runs a sub-workflow, and its run `{child_run_id}` failed");
        let message = match at.is_empty() {
            true => format!("{failed}: {reason}"),
            false => format!("{failed} (at `{step_id}/{}`): {reason}", at.join("/")),
        };
        RunFailure::Child {
            step_id: step_id.to_owned(),
            child_run_id: child_run_id.to_owned(),
            message,
            child: Box::new(child.clone()),
        }
    }

    /// The failure as its JSON object.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl From<Known> for RunFailure {
    fn from(k: Known) -> RunFailure {
        match k {
            Known::TemplateRender { step_id, expression, message } => {
                RunFailure::TemplateRender { step_id, expression, message }
            }
            Known::Validation { step_id, message, errors } => {
                RunFailure::Validation { step_id, message, errors }
            }
            Known::Child { step_id, child_run_id, message, child } => {
                RunFailure::Child { step_id, child_run_id, message, child }
            }
            Known::WaitTimedOut { step_id, message, deadline } => {
                RunFailure::WaitTimedOut { step_id, message, deadline }
            }
        }
    }
}

impl Serialize for RunFailure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RunFailure::TemplateRender { step_id, expression, message } => {
                KnownRef::TemplateRender { step_id, expression, message }.serialize(s)
            }
            RunFailure::Validation { step_id, message, errors } => {
                KnownRef::Validation { step_id, message, errors }.serialize(s)
            }
            RunFailure::Child { step_id, child_run_id, message, child } => {
                KnownRef::Child { step_id, child_run_id, message, child }.serialize(s)
            }
            RunFailure::WaitTimedOut { step_id, message, deadline } => {
                KnownRef::WaitTimedOut { step_id, message, deadline }.serialize(s)
            }
            RunFailure::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RunFailure {
    /// A known shape when the object is exactly one (it writes back the same
    /// object), else the value as it is.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunFailure, D::Error> {
        let v = Value::deserialize(d)?;
        let known = Known::deserialize(&v).ok().map(RunFailure::from);
        Ok(match known {
            Some(f) if f.to_json() == v => f,
            _ => RunFailure::Other(v),
        })
    }
}

/// Any JSON value, as the failure's schema has always been.
impl schemars::JsonSchema for RunFailure {
    fn inline_schema() -> bool {
        Value::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        Value::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        Value::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Value::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::RunFailure;
    use serde_json::json;

    fn round_trip(v: serde_json::Value) -> RunFailure {
        let f: RunFailure = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_string(&f).unwrap(), v.to_string(), "written back as read");
        f
    }

    #[test]
    fn known_shapes_are_typed_and_written_back_as_read() {
        let render =
            json!({"error": "TEMPLATE_RENDER_ERROR", "step_id": "a", "expression": "x.y", "message": "no x"});
        assert!(matches!(round_trip(render.clone()), RunFailure::TemplateRender { .. }));
        let child = json!({
            "error": "CHILD_FAILED", "step_id": "b[1]", "child_run_id": "r.b[1]", "message": "it failed",
            "child": render,
        });
        let f = round_trip(child);
        assert!(
            matches!(&f, RunFailure::Child { child, .. } if matches!(**child, RunFailure::TemplateRender { .. }))
        );
        assert_eq!(
            (f.code(), f.step_id(), f.message()),
            (Some("CHILD_FAILED"), Some("b[1]"), Some("it failed"))
        );
    }

    #[test]
    fn other_shapes_are_kept_as_they_are() {
        let extra =
            json!({"error": "VALIDATION_FAILED", "step_id": "a", "message": "m", "errors": [], "more": 1});
        assert!(matches!(round_trip(extra), RunFailure::Other(_)));
        let engine = json!({"error": "UNKNOWN_WORKFLOW", "details": {"message": "no such"}, "message": "m"});
        assert_eq!(round_trip(engine).code(), Some("UNKNOWN_WORKFLOW"));
        assert!(matches!(round_trip(json!(null)), RunFailure::Other(_)));
    }
}
