//! The agent runtime: everything that runs a workflow or a goal with no LLM
//! client in the loop. An adapter over `runtime::Engine`, like `mcp/`: no
//! workflow semantics live here.
//!
//! - [`Tools`] is the one interface between the loops and the tools they call.
//!   The multiplexer implements it (built-ins, `local_*`, external MCP
//!   servers); tests implement it with fakes.
//! - `savant-think exec` drives the engine's plan/next loop, calling each
//!   instruction through a [`Tools`].
//! - `savant-think run` is the autonomous loop: a backend (Ollama,
//!   OpenAI-compatible, Reasoning API) picks one action per step.

pub mod backend;
pub mod error;
pub mod exec;
pub mod mux;
pub mod run;

use serde::Serialize;
use serde_json::Value;
use std::future::Future;

/// The one normal form of a tool name, used wherever names are compared:
/// trimmed, with `-` and `.` read as `_`. So `think-plan`, `think.plan` and
/// `think_plan` name the same tool, and `github.search` is `github_search`.
pub fn normalize_tool_name(name: &str) -> String {
    name.trim().replace(['-', '.'], "_")
}

/// A tool as the loops see it: a name they may call, what it does, and the
/// JSON Schema of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// An engine tool as the loops see it: its row of the tool table.
impl From<&crate::runtime::catalog::ToolDef> for ToolInfo {
    fn from(t: &crate::runtime::catalog::ToolDef) -> ToolInfo {
        ToolInfo { name: t.name.into(), description: t.description.into(), input_schema: t.input().clone() }
    }
}

/// What one tool call came to. A failure is data, never a panic or an `Err`
/// that stops the loop: tool not found, server offline, timeout and the
/// tool's own error all end up here, with `ok: false` and
/// `output = {"error": CODE, "details": …}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolOutcome {
    pub ok: bool,
    /// The tool's result (`ok`), or `{"error": CODE, "details": …}`.
    pub output: Value,
    /// Wall-clock time of the call, retries included, in milliseconds.
    pub duration_ms: u64,
}

/// Something that lists and calls tools by name.
pub trait Tools: Send + Sync {
    /// Every tool that may be called, in a stable order.
    fn list(&self) -> impl Future<Output = Vec<ToolInfo>> + Send;
    /// Calls `name` with `args` (a JSON object).
    fn call(&self, name: &str, args: Value) -> impl Future<Output = ToolOutcome> + Send;
    /// Why a call of `name` with `args` cannot work, when the tools can
    /// tell without making it (an engine tool naming a workflow or a run
    /// that does not exist); `None` when it may work. The loop does not make
    /// such a call: it asks the model again with the reason (docs/agent.md,
    /// "Hopeless calls").
    fn precheck(&self, _name: &str, _args: &Value) -> Option<Hopeless> {
        None
    }
}

/// Why a tool call cannot work ([`Tools::precheck`]): the reason, the
/// argument at fault, and the values it could take when they are known
/// (the project's workflow ids); the loop's re-ask allows only those.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hopeless {
    pub reason: String,
    pub arg: String,
    pub choices: Vec<String>,
}
