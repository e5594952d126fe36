//! The one line each tool call logs, and its count in `/metrics`: the
//! tool, how long it took, the workflow, run and step it named, and for an
//! error its code and cause (`code`, `cause`). A store failure
//! (`STATE_UNAVAILABLE`, `STATE_IO`, `STATE_CORRUPT`, `STATE_OUTSIDE_ROOT`)
//! is a `WARN`, every other line an `INFO`. Arguments and results are never
//! logged (they may hold secrets), nor is the bearer token.

use crate::runtime::EngineError;
use crate::tools::Reply;
use serde_json::Value;
use std::time::Duration;

/// What a call named, read from its arguments before they were handed on.
pub(super) struct Named {
    workflow: Option<String>,
    run_id: Option<String>,
    step: Option<String>,
}

impl Named {
    pub(super) fn of(args: &Value) -> Named {
        let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
        Named { workflow: arg("workflow"), run_id: arg("run_id"), step: arg("step_id") }
    }

    /// The `workflow` argument.
    pub(super) fn workflow(&self) -> Option<&str> {
        self.workflow.as_deref()
    }

    /// The `run_id` argument.
    pub(super) fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }
}

/// Logs and counts a finished call of `tool` (a known tool's name).
pub(super) fn finished(
    tool: &str,
    read_only: bool,
    named: &Named,
    took: Duration,
    out: Result<&Reply, &EngineError>,
) {
    let code = out.err().map(|e| e.code.as_str());
    super::metrics::observe_call(tool, read_only, took, code);
    let ms = took.as_millis() as u64;
    let (workflow, run_id, step) =
        (named.workflow.as_deref(), named.run_id.as_deref(), named.step.as_deref());
    match out {
        Ok(reply) => {
            // The run a `think_plan` without `run_id` created.
            let created = if run_id.is_none() { reply.ids().run_id } else { None };
            let run_id = run_id.or(created.as_deref());
            tracing::info!(tool, ms, workflow, run_id, step, "ok");
        }
        Err(e) => {
            let (code, cause) = (e.code.as_str(), e.describe());
            if super::metrics::store_error(code) {
                tracing::warn!(tool, ms, workflow, run_id, step, code, cause, "store error");
            } else {
                tracing::info!(tool, ms, workflow, run_id, step, code, cause, "tool error");
            }
        }
    }
}
