//! The engine's tool table: every tool's name, description (telling the
//! model what to do next), input schema (every field described), output
//! schema and annotations, and whether MCP serves it. Built once. The MCP
//! tool list, the agent's tool offers and argument checks, and the names
//! `call` accepts all come from here; the behaviour lives in
//! `runtime::tools`, whose dispatcher a test holds to this table.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::LazyLock;

/// One engine tool as a client sees it.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input: Value,
    pub output: Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Served over MCP (`think_state_delete` is CLI only: a model should not
    /// delete runs).
    pub mcp: bool,
    /// Touches no file and no state (`prompt_say`): a server may answer it
    /// without a trip to a blocking thread.
    pub pure: bool,
}

fn s(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// An output schema: the success properties plus the error shape, which an
/// `isError: true` result carries instead.
fn output(properties: Value) -> Value {
    let mut props: Map<String, Value> = properties.as_object().cloned().unwrap_or_default();
    props.insert(
        "error".into(),
        s("Only on an isError result: the error code (UNKNOWN_WORKFLOW, INVALID_PARAMS, VALIDATION_FAILED, STATE_CONFLICT, UNKNOWN_STEP, STEP_NOT_READY, UNKNOWN_RUN, …)."),
    );
    props.insert(
        "details".into(),
        json!({ "description": "Only on an isError result: what went wrong (a message, or a list of {path, message})." }),
    );
    json!({ "type": "object", "properties": props })
}

const WORKFLOW: &str = "A workflow id from think_workflows_list (e.g. \"release_notes\").";
const RUN_ID: &str = "The run id returned by think_plan.";

/// The input of the tools that take exactly a run: `{workflow, run_id}`.
fn run_input() -> Value {
    object(json!({ "workflow": s(WORKFLOW), "run_id": s(RUN_ID) }), &["workflow", "run_id"])
}

fn progress_output() -> Value {
    output(json!({
        "run_id": s("The run's id: pass it to every later call."),
        "workflow": s("The workflow id."),
        "instruction": {
            "type": ["object", "null"],
            "description": "The next step to carry out: call the tool `call` with `input`, then submit its result with think_next(step_id). Absent when done.",
            "properties": {
                "step_id": s("The step to submit with think_next (`id`, or `id[3]` for a foreach item)."),
                "call": s("The tool to call (e.g. \"gitlab.get_merge_request\", \"think\", \"prompt.say\")."),
                "input": { "description": "The tool's arguments, already rendered." },
                "input_template": { "description": "The raw template the input was rendered from." },
                "capture_as": { "type": ["string", "null"], "description": "The name the result is stored under." },
                "success_schema": { "description": "The schema the result must match (a name or an inline JSON Schema), or null." },
                "rationale": { "type": ["string", "null"], "description": "Why this step exists." },
                "timeout": { "description": "The step's time limit, if any." },
                "attempt": { "type": "integer", "description": "1 on the first try, more after a validation failure." },
                "rules": { "type": "array", "description": "The workflow's rules to respect." },
                "done": { "type": "boolean", "description": "Always false on an instruction." }
            }
        },
        "ready": { "type": "array", "items": { "type": "string" }, "description": "Ready step ids (at most 50)." },
        "ready_total": { "type": "integer", "description": "How many steps are ready." },
        "done": { "type": "boolean", "description": "True when the run is finished: stop calling think_next." },
        "summary": { "type": "object", "description": "When done: {message, ran, skipped, truncated}." },
        "artifacts": { "type": "object", "description": "When done: every captured result by name." },
        "state": { "type": "object", "description": "{version, status, completed, pending}." },
        "reset": { "type": "object", "description": "After think_reset: {checkpoint, discarded}." }
    }))
}

static ALL: LazyLock<Vec<ToolSpec>> = LazyLock::new(build);

/// Each tool's input schema, compiled once.
static VALIDATORS: LazyLock<HashMap<&'static str, jsonschema::Validator>> = LazyLock::new(|| {
    ALL.iter().filter_map(|t| Some((t.name, jsonschema::validator_for(&t.input).ok()?))).collect()
});

/// Every engine tool, in a stable order.
pub fn all() -> &'static [ToolSpec] {
    &ALL
}

/// The tools served over MCP, in a stable order.
pub fn tools() -> impl Iterator<Item = &'static ToolSpec> {
    ALL.iter().filter(|t| t.mcp)
}

/// Every engine tool's name, canonical form (`think_plan`).
pub fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|t| t.name)
}

/// The compiled input schema of a tool.
pub fn input_validator(name: &str) -> Option<&'static jsonschema::Validator> {
    VALIDATORS.get(name)
}

fn build() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "think_plan",
            title: "Start a workflow run",
            description: "Start a run of a workflow and get its first instruction. Then call the tool named in instruction.call with instruction.input, and submit that tool's result with think_next (workflow, run_id, instruction.step_id). Repeat until the response has done: true. Get the workflow ids from think_workflows_list. Starting with an existing run_id and start_fresh: true (the default) restarts that run from scratch.",
            input: object(
                json!({
                    "workflow": s(WORKFLOW),
                    "params": { "type": "object", "description": "The workflow's params (see think_explain or think_workflows_read); defaults are applied, unknown keys are refused." },
                    "run_id": s("Optional run id (^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$). Default: a new one."),
                    "start_fresh": { "type": "boolean", "description": "true (default): start the run over; false: resume it if it exists and return its current instruction.", "default": true }
                }),
                &["workflow"],
            ),
            output: progress_output(),
            read_only: false,
            destructive: true,
            idempotent: false,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_next",
            title: "Submit a step's result",
            description: "Submit the result of the step you just carried out and get the next instruction. Call the tool in the new instruction.call with instruction.input, then think_next again, until done: true. On VALIDATION_FAILED the result did not match the step's success_schema: fix it and resubmit the same step_id (the instruction is repeated). Re-sending the same result for a done step is harmless.",
            input: object(
                json!({
                    "workflow": s(WORKFLOW),
                    "run_id": s(RUN_ID),
                    "step_id": s("instruction.step_id from the previous response (`id`, or `id[3]` for a foreach item)."),
                    "result_snapshot": { "description": "The result of the tool call, as JSON (usually an object). Default: {}." },
                    "result": { "description": "Alias of result_snapshot." },
                    "expected_version": { "type": "integer", "minimum": 0, "description": "Optional: refuse with STATE_CONFLICT unless the run is at this state.version." }
                }),
                &["workflow", "run_id", "step_id"],
            ),
            output: progress_output(),
            read_only: false,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_explain",
            title: "Explain a workflow, run or step",
            description: "Explain a workflow (its steps, order, params), a run (its state, what is ready, why it failed) or one step (what it does, why it is waiting). Use it when an instruction or an error is unclear; then carry on with think_next.",
            input: object(
                json!({
                    "workflow": s(WORKFLOW),
                    "run_id": s("Optional: explain this run's state."),
                    "step_id": s("Optional: explain this step.")
                }),
                &["workflow"],
            ),
            output: output(json!({
                "workflow": s("The workflow id."),
                "name": { "description": "The workflow's name." },
                "description": { "description": "The workflow's description." },
                "order": { "type": "array", "description": "Step ids in execution order." },
                "steps": { "type": "array", "description": "Each step: call, deps, when, foreach, capture_as, success_schema, rationale." },
                "run_id": s("The run explained."),
                "state": { "type": "object", "description": "The run's {version, status, completed, pending}." },
                "failure": { "description": "Why the run failed, if it did." },
                "ready": { "type": "array", "description": "Ready step ids." },
                "step": { "type": "object", "description": "The step explained, with its status and `why`." },
                "step_id": s("The step explained (without a run).")
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_reset",
            title: "Reset a run",
            description: "Reset a run to its start or to the state right after a step completed (checkpoint), and get the instruction to carry out from there. Discarding accepted results needs force: true. Then continue with think_next.",
            input: object(
                json!({
                    "workflow": s(WORKFLOW),
                    "run_id": s(RUN_ID),
                    "checkpoint": s("Optional: a completed step id to go back to. Default: the start."),
                    "force": { "type": "boolean", "description": "Allow discarding accepted results (default false).", "default": false }
                }),
                &["workflow", "run_id"],
            ),
            output: progress_output(),
            read_only: false,
            destructive: true,
            idempotent: false,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_driver_prompt",
            title: "Get the driver prompt",
            description: "Get the driver prompt: the instructions for driving savant-think workflows (call this first). Follow prompt_md, then pick a workflow with think_workflows_list and start it with think_plan.",
            input: object(
                json!({ "version": s("Optional prompt version (e.g. \"stable\", \"code_review\", or a workflow's driver_version). Default: the latest.") }),
                &[],
            ),
            output: output(json!({
                "version": s("The prompt version returned."),
                "hash": s("sha256 of the markdown."),
                "prompt_md": s("The driver prompt (markdown): follow it.")
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_workflows_list",
            title: "List workflows",
            description: "List the workflows available, with names, descriptions and whether they check clean. Then read one with think_explain or think_workflows_read, and start it with think_plan.",
            input: object(
                json!({ "filter": s("Optional: only ids containing this text (case-insensitive).") }),
                &[],
            ),
            output: output(json!({
                "workflows": { "type": "array", "description": "Each workflow: {id, name, description, version, steps, valid} (or {id, valid: false, error})." }
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_workflows_read",
            title: "Read a workflow's YAML",
            description: "Read a workflow's YAML source (its params, steps and rules). Then start it with think_plan.",
            input: object(json!({ "workflow": s(WORKFLOW) }), &["workflow"]),
            output: output(json!({
                "workflow": s("The workflow asked for."),
                "path": s("The file read."),
                "yaml": s("The YAML source.")
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_workflows_graph",
            title: "Get a workflow's dependency graph",
            description: "Get a workflow's compiled plan: its dependency graph (explicit and inferred edges) and execution order, as JSON, Mermaid or DOT. Use it to understand a workflow before think_plan.",
            input: object(
                json!({
                    "workflow": s(WORKFLOW),
                    "format": { "type": "string", "enum": ["json", "mermaid", "dot"], "default": "json", "description": "json (default): {workflow, graph, order, v}; mermaid or dot: {format, graph} with the graph as text." }
                }),
                &["workflow"],
            ),
            output: output(json!({
                "workflow": s("The workflow id (json format)."),
                "graph": { "description": "{nodes, entry} (json) or the graph text (mermaid, dot)." },
                "order": { "type": "array", "description": "Step ids in execution order (json format)." },
                "v": s("The workflow version (json format)."),
                "format": s("mermaid or dot.")
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_state_get",
            title: "Get a run's full state",
            description: "Get a run's full state: params, per-step status, attempts and results, captures, history and version. Use think_explain for a readable summary; continue the run with think_next.",
            input: run_input(),
            output: output(json!({
                "run_id": s("The run id."),
                "workflow": s("The workflow id."),
                "status": s("running, done or failed."),
                "version": { "type": "integer", "description": "The state version (use as think_next's expected_version)." },
                "params": { "description": "The run's params." },
                "steps": { "type": "array", "description": "Each step's status, attempts and result." },
                "captures": { "description": "Captured results by name." },
                "history": { "type": "array", "description": "Every accepted event." }
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_state_list",
            title: "List runs",
            description: "List the runs on disk (of one workflow, or all) with their status and version. Resume one with think_plan (start_fresh: false) or inspect it with think_explain.",
            input: object(json!({ "workflow": s("Optional: only runs of this workflow id.") }), &[]),
            output: output(json!({
                "runs": { "type": "array", "description": "Each run: {workflow, run_id, status, version, updated_at}." }
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_state_delete",
            title: "Delete a run",
            description: "Delete a run's stored state (snapshot and journal). It cannot be undone; the CLI's `state delete` and `call` use it, MCP does not offer it.",
            input: run_input(),
            output: output(json!({
                "deleted": { "type": "boolean", "description": "Always true: a missing run is UNKNOWN_RUN." },
                "workflow": s("The workflow id."),
                "run_id": s("The run id.")
            })),
            read_only: false,
            destructive: true,
            idempotent: false,
            mcp: false,
            pure: false,
        },
        ToolSpec {
            name: "think_validate",
            title: "Validate a response or a workflow",
            description: "Check a response against a schema before submitting it with think_next (give schema and response), or check a workflow file for errors (give workflow). Fix what the errors list, then continue.",
            input: object(
                json!({
                    "schema": { "description": "A schema name (e.g. \"MergeRequestV1\", from the instruction's success_schema) or an inline JSON Schema object." },
                    "response": { "description": "The response to check against schema." },
                    "workflow": s("Instead of schema: a workflow id whose diagnostics to return.")
                }),
                &[],
            ),
            output: output(json!({
                "valid": { "type": "boolean", "description": "True when there is nothing to fix." },
                "errors": { "type": "array", "description": "Schema errors: {path, message}." },
                "workflow": s("The workflow checked."),
                "diagnostics": { "type": "array", "description": "The workflow's diagnostics: {code, severity, message, line, column, …}." },
                "summary": { "type": "object", "description": "{files, errors, warnings}." }
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think_debug",
            title: "Replay a run",
            description: "Replay a run's history event by event: which steps changed status and which captures were set after each event, and whether the replay matches the stored state. Use it to understand how a run got where it is.",
            input: run_input(),
            output: output(json!({
                "workflow": s("The workflow id."),
                "run_id": s("The run id."),
                "events": { "type": "integer", "description": "How many events were replayed." },
                "replay": { "type": "array", "description": "Per event: {event, status_changes, captures_set, run_status}." },
                "consistent": { "type": "boolean", "description": "True when the replay rebuilds the stored state." }
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "think",
            title: "Think",
            description: "Record a thought: reason step by step about the current instruction before acting. With workflow and run_id the thought goes into that run's history; otherwise into the session log. When an instruction's call is \"think\", call this with its input, then submit the result with think_next.",
            input: object(
                json!({
                    "thought": s("The thought (non-empty)."),
                    "thoughts": s("Alias of thought."),
                    "workflow": s("Optional, with run_id: record the thought in this workflow's run."),
                    "run_id": s("Optional, with workflow: the run to record the thought in.")
                }),
                &[],
            ),
            output: output(json!({
                "thought": s("The thought recorded."),
                "recorded_in": s("run or session_log."),
                "run_id": s("The run, when recorded in one."),
                "timestamp": s("When (RFC 3339)."),
                "formatted": s("The thought for display.")
            })),
            read_only: false,
            destructive: false,
            idempotent: false,
            mcp: true,
            pure: false,
        },
        ToolSpec {
            name: "prompt_say",
            title: "Show a message to the user",
            description: "Show a message to the user: display the returned message verbatim. When an instruction's call is \"prompt.say\", call this with its input, then submit the result with think_next.",
            input: object(
                json!({ "message": s("The message to show."), "text": s("Alias of message.") }),
                &[],
            ),
            output: output(json!({
                "message": s("The message: show it to the user."),
                "display": { "type": "boolean", "description": "Always true." },
                "timestamp": s("When (RFC 3339).")
            })),
            read_only: true,
            destructive: false,
            idempotent: true,
            mcp: true,
            pure: true,
        },
    ]
}

/// Looks a tool up by name (dotted names accepted: `think.plan`).
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    let name = crate::runtime::tools::canonical(name);
    ALL.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_an_engine_tool_and_every_field_is_described() {
        for t in all() {
            assert!(input_validator(t.name).is_some(), "{}'s input schema does not compile", t.name);
            assert_eq!(t.input["type"], "object");
            assert_eq!(t.output["type"], "object");
            for (field, schema) in t.input["properties"].as_object().unwrap() {
                assert!(schema.get("description").is_some(), "{}.{field} has no description", t.name);
            }
        }
    }
}
