//! The engine tools' arguments, as types: what `call`, the MCP server and
//! the executor deserialize, and what the MCP input schemas are generated
//! from (descriptions from the doc comments). Unknown fields are refused by
//! the schemas (`additionalProperties: false`); the deserializers ignore
//! them, as the engine always has.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A workflow id from think_workflows_list (e.g. "release_notes").
type WorkflowId = String;

/// think_plan's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PlanArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The workflow's params (see think_explain or think_workflows_read); defaults are applied, unknown keys are refused.
    #[serde(default, deserialize_with = "crate::lean_json::deserialize_option")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub params: Option<Value>,
    /// Optional run id (`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`). Default: a new one (never an existing run's).
    pub run_id: Option<String>,
    /// What to do when run_id names an existing run: error (default: RUN_EXISTS, naming its status, version and updated_at), resume (return its current instruction) or replace (archive it and start over).
    #[schemars(extend("default" = "error"))]
    pub if_exists: Option<IfExists>,
    /// Older form of if_exists, still accepted: false = resume, true = replace. Give one of the two.
    pub start_fresh: Option<bool>,
}

impl PlanArgs {
    /// What to do with an existing run: `if_exists`, else `start_fresh`,
    /// else `error`; both given and disagreeing is the message of an
    /// `INVALID_INPUT`.
    pub fn if_exists(&self) -> Result<IfExists, String> {
        match (self.if_exists, self.start_fresh.map(IfExists::from)) {
            (Some(a), Some(b)) if a != b => Err(format!(
                "if_exists: {} and start_fresh: {} disagree; give only if_exists",
                a.as_str(),
                self.start_fresh.unwrap_or_default()
            )),
            (Some(a), _) | (None, Some(a)) => Ok(a),
            (None, None) => Ok(IfExists::Error),
        }
    }
}

/// What think_plan does when the run id names an existing run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the field's doc says each (variant docs would change its JSON Schema)
pub enum IfExists {
    #[default]
    Error,
    Resume,
    Replace,
}

impl IfExists {
    /// The wire form (`error`, `resume`, `replace`).
    pub fn as_str(self) -> &'static str {
        match self {
            IfExists::Error => "error",
            IfExists::Resume => "resume",
            IfExists::Replace => "replace",
        }
    }
}

/// The older `start_fresh` flag: `true` replaces, `false` resumes.
impl From<bool> for IfExists {
    fn from(start_fresh: bool) -> IfExists {
        if start_fresh { IfExists::Replace } else { IfExists::Resume }
    }
}

/// think_next's arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NextArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
    /// instruction.step_id from the previous response (`id`, or `id[3]` for a foreach item).
    pub step_id: String,
    /// The result of the tool call, as JSON (usually an object). Default: {}.
    #[serde(default, deserialize_with = "crate::lean_json::deserialize_option")]
    pub result_snapshot: Option<Value>,
    /// Alias of result_snapshot.
    #[serde(default, deserialize_with = "crate::lean_json::deserialize_option")]
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

/// think_answer's arguments: a person's answer to a waiting `await:` step.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AnswerArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
    /// The waiting step (`waiting[].step_id` of the last response: `id`, `id[3]`, or `uses_step/id` inside a sub-workflow).
    pub step_id: String,
    /// The answer, as JSON valid against the wait's schema (e.g. {"approved": true}).
    pub value: Value,
    /// Optional: refuse with STATE_CONFLICT unless the run is at this state.version.
    pub expected_version: Option<u64>,
}

/// think_signal's arguments: an event for the runs that wait for it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SignalArgs {
    /// The event's name, declared in savant-think.toml under [events.NAME] (e.g. "pipeline.finished").
    pub event: String,
    /// Its correlation key: the `match:` a waiting step rendered (e.g. "4711").
    pub key: Option<String>,
    /// Its payload, valid against the event's schema. Default: {}.
    pub payload: Option<Value>,
    /// Optional: the sender's id for this event; an event whose id a run has already received is not recorded again (webhook retries).
    pub id: Option<String>,
    /// Optional: deliver only to this workflow's runs.
    pub workflow: Option<WorkflowId>,
    /// Optional: deliver only to this run (with workflow).
    pub run_id: Option<String>,
}

/// think_explain's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
}

/// think_driver_prompt's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DriverPromptArgs {
    /// Optional prompt version (e.g. "stable", "code_review", or a workflow's driver_version). Default: the latest.
    pub version: Option<String>,
}

/// think_workflows_list's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListArgs {
    /// Optional: only ids containing this text (case-insensitive).
    pub filter: Option<String>,
}

/// The tools that take exactly a workflow (think_workflows_read).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WorkflowArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
}

/// How think_workflows_graph draws the graph: json ({workflow, graph,
/// order, v}), mermaid or dot (text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the enum's doc says each (variant docs would change its JSON Schema)
pub enum GraphFormat {
    #[default]
    Json,
    Mermaid,
    Dot,
}

/// think_workflows_graph's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// json (default): {workflow, graph, order, v}; mermaid or dot: {format, graph} with the graph as text.
    #[schemars(extend("default" = "json"))]
    pub format: Option<GraphFormat>,
}

/// think_state_list's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StateListArgs {
    /// Optional: only runs of this workflow id.
    pub workflow: Option<WorkflowId>,
    /// List the archived runs (replaced or deleted, kept until pruned) instead of the live ones.
    #[schemars(extend("default" = false))]
    pub archived: Option<bool>,
    /// Only runs with a step waiting for an answer, a time or an event.
    #[schemars(extend("default" = false))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<bool>,
}

/// think_state_get's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StateGetArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
    /// Read an archived copy of the run (the latest, or archive_id) instead of the live run.
    #[schemars(extend("default" = false))]
    pub archived: Option<bool>,
    /// With archived: which archived copy (from think_state_list with archived: true). Default: the latest.
    pub archive_id: Option<String>,
}

/// think_state_delete's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DeleteArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run id returned by think_plan.
    pub run_id: String,
    /// Remove the run at once instead of archiving it (default false).
    #[schemars(extend("default" = false))]
    pub purge: Option<bool>,
}

/// think_state_repair's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RepairArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run to check.
    pub run_id: String,
    /// Cut a damaged journal back to its last good event, keeping a backup
    /// (default false: only say what is damaged and what would be cut).
    #[schemars(extend("default" = false))]
    pub apply: Option<bool>,
}

/// think_state_restore's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RestoreArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The archived run's id.
    pub run_id: String,
    /// Which archived copy (from think_state_list with archived: true). Default: the latest.
    pub archive_id: Option<String>,
}

/// think_validate's arguments: `schema` and `response`, or `workflow`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ValidateArgs {
    /// A schema name (e.g. "MergeRequestV1", from the instruction's success_schema) or an inline JSON Schema object.
    pub schema: Option<Value>,
    /// The response to check against schema.
    #[serde(default, deserialize_with = "crate::lean_json::deserialize_option")]
    pub response: Option<Value>,
    /// Instead of schema: a workflow id whose diagnostics to return.
    pub workflow: Option<WorkflowId>,
}

/// think's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(extend("anyOf" = [{"required": ["thought"]}, {"required": ["thoughts"]}]))]
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(extend("anyOf" = [{"required": ["message"]}, {"required": ["text"]}]))]
pub struct SayArgs {
    /// The message to show.
    pub message: Option<String>,
    /// Alias of message.
    pub text: Option<String>,
}

/// think_fork's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ForkArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run to fork (it is not changed).
    pub run_id: String,
    /// The step to run again: it and every step that depends on it lose their results in the fork.
    pub from: String,
    /// Optional id of the new run. Default: a new one.
    pub new_run_id: Option<String>,
    /// Optional: the fork's params, complete (they replace the source run's, they are not merged; copy the source's from think_state_get and change what you need). Every step whose rendered input changes runs again too. Default: the source run's params.
    #[serde(default, deserialize_with = "crate::lean_json::deserialize_option")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub params: Option<Value>,
    /// Optional: refuse with STATE_CONFLICT unless the source run is at this state.version.
    pub expected_version: Option<u64>,
}

/// think_state_prune's arguments (also `[state] keep` in savant-think.toml).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PruneArgs {
    /// Only runs and archived copies last changed longer ago than this (30d, 12h, 90m). Default: any age.
    pub older_than: Option<String>,
    /// Statuses to remove: done, failed, archived (archived copies), running (unfinished runs are removed only when named). Default: done, failed, archived.
    pub status: Option<Vec<String>>,
    /// Keep the N newest of each workflow's candidates (live runs and archived copies counted apart).
    pub keep_last: Option<usize>,
    /// Say what would be removed, removing nothing.
    #[schemars(extend("default" = false))]
    pub dry_run: Option<bool>,
}

/// think_upgrade's arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpgradeArgs {
    /// A workflow id from think_workflows_list (e.g. "release_notes").
    pub workflow: WorkflowId,
    /// The run to upgrade; or give all: true.
    pub run_id: Option<String>,
    /// Upgrade every unfinished run of the workflow (checked together: one incompatible run changes nothing).
    #[schemars(extend("default" = false))]
    pub all: Option<bool>,
    /// Step renames, each "OLD=NEW" (the old version's id, the new file's id).
    pub rename: Option<Vec<String>>,
    /// Check and say what would happen (steps kept, added, removed, re-issued, now ready); change nothing.
    #[schemars(extend("default" = false))]
    pub dry_run: Option<bool>,
    /// Allow upgrading a finished (done or failed) run.
    #[schemars(extend("default" = false))]
    pub force: Option<bool>,
    /// Optional: refuse with STATE_CONFLICT unless the run is at this state.version.
    pub expected_version: Option<u64>,
}

/// think_test's arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TestArgs {
    /// Optional: test files or directories inside the project root (e.g. "tests/release_notes.test.yaml"). Default: every tests/**/*.test.yaml.
    pub paths: Option<Vec<String>>,
    /// Optional: only tests whose name contains this text (case-insensitive).
    pub filter: Option<String>,
}

/// What `Engine::upgrade` is asked to do (think_upgrade's arguments, read).
#[derive(Clone, Debug, Default)]
pub struct UpgradeRequest {
    /// One run, or (`None`) every unfinished run of the workflow.
    pub run_id: Option<String>,
    /// `OLD=NEW` step renames.
    pub renames: Vec<String>,
    /// Check and say what would happen; change nothing.
    pub dry_run: bool,
    /// Allow upgrading a finished (done or failed) run.
    pub force: bool,
    /// Refuse with STATE_CONFLICT unless the run is at this version.
    pub expected_version: Option<u64>,
}

/// Arguments that carry a client's JSON payload (a result, a response,
/// params): the tool table moves those members in after reading the rest,
/// so a value of megabytes is never rebuilt on its way to the engine.
pub trait Payloads: Sized {
    /// The members moved in whole.
    const PAYLOADS: &'static [&'static str] = &[];

    /// Puts the payload `value` of member `name` (one of [`Self::PAYLOADS`]).
    fn put(&mut self, name: &str, value: Value) {
        let _ = (name, value);
    }
}

macro_rules! payload_free {
    ($($t:ty),* $(,)?) => { $(impl Payloads for $t {})* };
}

payload_free!(
    ExplainArgs,
    ResetArgs,
    DriverPromptArgs,
    ListArgs,
    WorkflowArgs,
    GraphArgs,
    StateGetArgs,
    StateListArgs,
    DeleteArgs,
    RepairArgs,
    PruneArgs,
    UpgradeArgs,
    RestoreArgs,
    RunArgs,
    ThinkArgs,
    SayArgs,
    TestArgs,
    // An answer is a person's, small and required: read with the rest.
    AnswerArgs,
);

impl Payloads for PlanArgs {
    const PAYLOADS: &'static [&'static str] = &["params"];
    fn put(&mut self, _: &str, value: Value) {
        self.params = Some(value);
    }
}

impl Payloads for ForkArgs {
    const PAYLOADS: &'static [&'static str] = &["params"];
    fn put(&mut self, _: &str, value: Value) {
        self.params = Some(value);
    }
}

impl Payloads for NextArgs {
    const PAYLOADS: &'static [&'static str] = &["result_snapshot", "result"];
    fn put(&mut self, name: &str, value: Value) {
        match name {
            "result" => self.result = Some(value),
            _ => self.result_snapshot = Some(value),
        }
    }
}

impl Payloads for SignalArgs {
    const PAYLOADS: &'static [&'static str] = &["payload"];
    fn put(&mut self, _: &str, value: Value) {
        self.payload = Some(value);
    }
}

impl Payloads for ValidateArgs {
    const PAYLOADS: &'static [&'static str] = &["response"];
    fn put(&mut self, _: &str, value: Value) {
        self.response = Some(value);
    }
}
