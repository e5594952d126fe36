//! The engine tools' arguments, as types: what `call`, the MCP server and
//! the executor deserialize, and what the MCP input schemas are generated
//! from (descriptions from the doc comments). Unknown fields are refused by
//! the schemas (`additionalProperties: false`); the deserializers ignore
//! them, as the engine always has.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// A workflow id from think_workflows_list (e.g. "release_notes").
type WorkflowId = String;

/// think_plan's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PlanArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The workflow's params (see think_explain or think_workflows_read); defaults are applied, unknown keys are refused.
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub params: Option<Value>,
    /// Optional run id (`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`). Default: a new one.
    pub run_id: Option<String>,
    /// true (default): start the run over; false: resume it if it exists and return its current instruction.
    #[schemars(extend("default" = true))]
    pub start_fresh: Option<bool>,
}

/// think_next's arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NextArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
    /// instruction.step_id from the previous response (`id`, or `id[3]` for a foreach item).
    pub step_id: String,
    /// The result of the tool call, as JSON (usually an object). Default: {}.
    pub result_snapshot: Option<Value>,
    /// Alias of result_snapshot.
    pub result: Option<Value>,
    /// Optional: refuse with STATE_CONFLICT unless the run is at this state.version.
    pub expected_version: Option<u64>,
}

impl NextArgs {
    /// The result submitted (`result_snapshot`, else `result`, else `{}`).
    pub fn take_result(&mut self) -> Value {
        self.result_snapshot
            .take()
            .or_else(|| self.result.take())
            .unwrap_or_else(|| Value::Object(Default::default()))
    }
}

/// think_explain's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExplainArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// Optional: explain this run's state.
    pub run_id: Option<String>,
    /// Optional: explain this step.
    pub step_id: Option<String>,
}

/// think_reset's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResetArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
    /// Optional: a completed step id to go back to. Default: the start.
    pub checkpoint: Option<String>,
    /// Allow discarding accepted results (default false).
    #[schemars(extend("default" = false))]
    pub force: Option<bool>,
}

/// The tools that take exactly a run.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
}

/// think_driver_prompt's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DriverPromptArgs {
    /// Optional prompt version (e.g. "stable", "code_review", or a workflow's driver_version). Default: the latest.
    pub version: Option<String>,
}

/// think_workflows_list's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListArgs {
    /// Optional: only ids containing this text (case-insensitive).
    pub filter: Option<String>,
}

/// The tools that take exactly a workflow (think_workflows_read).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WorkflowArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
}

/// How think_workflows_graph draws the graph: json ({workflow, graph,
/// order, v}), mermaid or dot (text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the enum's doc says each (variant docs would change its JSON Schema)
pub enum GraphFormat {
    #[default]
    Json,
    Mermaid,
    Dot,
}

/// think_workflows_graph's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// json (default): {workflow, graph, order, v}; mermaid or dot: {format, graph} with the graph as text.
    #[schemars(extend("default" = "json"))]
    pub format: Option<GraphFormat>,
}

/// think_state_list's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StateListArgs {
    /// Optional: only runs of this workflow id.
    pub workflow: Option<WorkflowId>,
}

/// think_validate's arguments: `schema` and `response`, or `workflow`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ValidateArgs {
    /// A schema name (e.g. "MergeRequestV1", from the instruction's success_schema) or an inline JSON Schema object.
    pub schema: Option<Value>,
    /// The response to check against schema.
    pub response: Option<Value>,
    /// Instead of schema: a workflow id whose diagnostics to return.
    pub workflow: Option<WorkflowId>,
}

/// think's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ThinkArgs {
    /// The thought (non-empty).
    pub thought: Option<String>,
    /// Alias of thought.
    pub thoughts: Option<String>,
    /// Optional, with run_id: record the thought in this workflow's run.
    pub workflow: Option<WorkflowId>,
    /// Optional, with workflow: the run to record the thought in.
    pub run_id: Option<String>,
}

/// prompt_say's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SayArgs {
    /// The message to show.
    pub message: Option<String>,
    /// Alias of message.
    pub text: Option<String>,
}
