//! `ON_TIMEOUT_MISMATCH`
//!
//! *What it does*: validates a wait's `on_timeout:` value against the
//! schema of what it stands for: an `await:` answer's `schema`, or a
//! `wait_for:` event's payload schema (`[events.NAME] schema`).
//!
//! *Why is this bad?* At the deadline the run takes `on_timeout:` as the
//! answer: the steps after it read its fields as the schema types them,
//! and a value that does not match takes the wrong branch or fails a day
//! after the run started.

use crate::check::{Cx, waits};
use crate::diagnostic::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (_, step) in cx.steps() {
        let Some(on_timeout) = step.wait.as_deref().and_then(|w| w.on_timeout()) else { continue };
        let Some((schema, what)) = waits::received_schema(cx, step) else { continue };
        // An invalid schema is UNKNOWN_SCHEMA's to report.
        let Ok(validator) = jsonschema::validator_for(schema) else { continue };
        let Some(e) = validator.iter_errors(&on_timeout.value).next() else { continue };
        let at = e.instance_path().to_string();
        let at = if at.is_empty() { String::new() } else { format!(" at `{at}`") };
        out.push(
            Diagnostic::new(
                Code::OnTimeoutMismatch,
                on_timeout.span,
                format!("`on_timeout` does not match the schema of {what}{at}: {e}"),
            )
            .with_help(
                "at the deadline the run takes this value instead: give it the shape the schema requires",
            ),
        );
    }
}
