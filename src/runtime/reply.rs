//! What the engine's tools answer, as types. The engine returns these; JSON
//! is made once, at the edge (the tool table for MCP, `call` and the
//! executor; the CLI's printers), and the MCP output schemas are generated
//! from them (descriptions from the doc comments).

use crate::runtime::record::{Checkpoint, Event, RunStatus, StepStatus, Truncation};
pub use crate::runtime::reply_runs::{
    CutLine, Deleted, EntryStatus, JournalReport, Pruned, PrunedRun, Repaired, Restored, RunEntry, RunList,
    RunUpgrade, TestReply, UpgradeDiagnostic, UpgradeReply,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::runtime::reply_next::{Instruction, ResetNote, StateSummary};
pub use crate::runtime::reply_waits::{LongestWait, SubRun, WaitView};

/// The answer of think_plan, think_next and think_reset: the next
/// instruction, or done.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Progress {
    /// The run's id: pass it to every later call.
    pub run_id: String,
    /// The workflow id.
    pub workflow: String,
    /// Running (with the next instruction) or done (with the results).
    #[serde(flatten)]
    pub status: ProgressStatus,
    /// Why something given was not used (think_plan resuming a run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// After think_reset: what was reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<ResetNote>,
}

/// A running run's next instruction, or a finished run's results.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProgressStatus {
    /// The run goes on.
    Running {
        /// The next step to carry out: call the tool `call` with `input`,
        /// then submit its result with think_next(step_id). Absent when done.
        instruction: Option<Box<Instruction>>,
        /// Ready step ids (at most 50).
        ready: Vec<String>,
        /// How many steps are ready.
        ready_total: usize,
        /// True when the run is finished: stop calling think_next.
        done: bool,
        /// {version, status, completed, pending}.
        state: StateSummary,
        /// Steps waiting for a person's answer, a time or an event (absent
        /// when none): with no instruction, the run goes on when one ends.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        waiting: Vec<WaitView>,
    },
    /// The run is finished.
    Done {
        /// True when the run is finished: stop calling think_next.
        done: bool,
        /// When done: {message, ran, skipped, truncated}.
        summary: Summary,
        /// When done: every captured result by name.
        artifacts: Map<String, Value>,
        /// {version, status, completed, pending}.
        state: StateSummary,
    },
}

impl Progress {
    /// Whether the run is finished.
    pub fn is_done(&self) -> bool {
        matches!(self.status, ProgressStatus::Done { .. })
    }

    /// The steps waiting (empty when done).
    pub fn waiting(&self) -> &[WaitView] {
        match &self.status {
            ProgressStatus::Running { waiting, .. } => waiting,
            ProgressStatus::Done { .. } => &[],
        }
    }

    /// The instruction to carry out next, if any.
    pub fn instruction(&self) -> Option<&Instruction> {
        match &self.status {
            ProgressStatus::Running { instruction, .. } => instruction.as_deref(),
            ProgressStatus::Done { .. } => None,
        }
    }

    /// Moves the instruction out (a caller that carries it out and then
    /// replaces this answer), leaving none.
    pub fn take_instruction(&mut self) -> Option<Instruction> {
        match &mut self.status {
            ProgressStatus::Running { instruction, .. } => instruction.take().map(|i| *i),
            ProgressStatus::Done { .. } => None,
        }
    }

    /// The run's state after the call.
    pub fn state(&self) -> &StateSummary {
        match &self.status {
            ProgressStatus::Running { state, .. } | ProgressStatus::Done { state, .. } => state,
        }
    }
}

/// A finished run in brief.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Summary {
    /// "N step(s) ran, M skipped[, K result(s) truncated]".
    pub message: String,
    /// The steps that ran.
    pub ran: Vec<String>,
    /// The steps skipped (their `when` was false).
    pub skipped: Vec<String>,
    /// The steps whose result was cut to the payload caps.
    pub truncated: Vec<String>,
}

/// think_explain's answer: a workflow, a step, or a run (and one of its steps).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // one answer per call, serialized at once: not worth a box
pub enum Explanation {
    /// The workflow: params, steps, graph.
    Workflow(WorkflowExplanation),
    /// One step of the workflow.
    Step(StepExplanation),
    /// A run's state (and one of its steps).
    Run(RunExplanation),
}

/// A workflow: its steps, order and rules.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WorkflowExplanation {
    /// The workflow id.
    pub workflow: String,
    /// The workflow's name.
    pub name: Option<String>,
    /// The workflow's description.
    pub description: Option<String>,
    /// The workflow's rules.
    pub rules: Vec<String>,
    /// Step ids in execution order.
    pub order: Vec<String>,
    /// Each step: call, deps, when, foreach, capture_as, success_schema, rationale.
    pub steps: Vec<StepExplanation>,
    /// The longest the workflow can wait along any path of its plan.
    pub longest_wait: LongestWait,
}

/// One step: what it does, and in a run, its status and why.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct StepExplanation {
    /// The step explained (`id`, or `id[3]` for a foreach item).
    pub step_id: String,
    /// The tool it calls (empty for a `uses:` step).
    pub call: String,
    /// The workflow a `uses:` step runs (each item's run is a child run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uses: Option<String>,
    /// What a wait step waits for, as written (`await`, `sleep`, `wait_for`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    /// The steps it waits for (written and inferred).
    pub deps: Vec<String>,
    /// The dependencies inferred from the variables it reads.
    pub inferred_deps: Vec<String>,
    /// Its `when:` condition.
    pub when: Option<String>,
    /// Its `foreach:` expression.
    pub foreach: Option<String>,
    /// The name its result is stored under.
    pub capture_as: Option<String>,
    /// The schema its result must match (a name or an inline schema).
    pub success_schema: Option<Value>,
    /// Why the step exists.
    pub rationale: Option<String>,
    /// How many failed validations it may retry.
    pub retry_max: u32,
    /// The foreach item explained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    /// In a run: its status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<StepStatus>,
    /// In a run: how many results were refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// In a run: why it has its status (what it waits for, why it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// In a run that failed at this step: the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<crate::runtime::failure::RunFailure>,
    /// In a run, when the step is ready: its instruction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<Instruction>,
}

/// A run: its state, what is ready, why it failed.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunExplanation {
    /// The workflow id.
    pub workflow: String,
    /// The run explained.
    pub run_id: String,
    /// The run's {version, status, completed, pending}.
    pub state: StateSummary,
    /// Why the run failed, if it did.
    pub failure: Option<crate::runtime::failure::RunFailure>,
    /// Ready step ids (at most 50).
    pub ready: Vec<String>,
    /// The step explained, with its status and `why`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<StepExplanation>,
}

/// think_debug's answer: a run's history replayed.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Replay {
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// How many events were replayed.
    pub events: usize,
    /// Per event: {event, status_changes, captures_set, run_status}.
    pub replay: Vec<ReplayedEvent>,
    /// True when the replay rebuilds the stored state and every event is
    /// one the workflow could have recorded.
    pub consistent: bool,
    /// Events the workflow could not have recorded where they stand (a
    /// result for a skipped or already done step), each in a sentence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub impossible: Vec<String>,
}

/// One event of a replay and what it changed.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ReplayedEvent {
    /// The event.
    pub event: Event,
    /// Steps and items whose status changed: {id: {from, to}}.
    pub status_changes: Map<String, Value>,
    /// Captures set by the event.
    pub captures_set: Map<String, Value>,
    /// The run's status after the event.
    pub run_status: RunStatus,
}

/// think's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Thought {
    /// The thought recorded.
    pub thought: String,
    /// run or session_log.
    pub recorded_in: String,
    /// The run, when recorded in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// When (RFC 3339).
    pub timestamp: String,
    /// The thought for display.
    pub formatted: String,
}

/// prompt_say's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Said {
    /// The message: show it to the user.
    pub message: String,
    /// Always true.
    pub display: bool,
    /// When (RFC 3339).
    pub timestamp: String,
}

/// think_driver_prompt's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct DriverPrompt {
    /// The prompt version returned.
    pub version: String,
    /// sha256 of the markdown.
    pub hash: String,
    /// Where the prompt came from (embedded, project, file).
    pub source: String,
    /// The driver prompt (markdown): follow it.
    pub prompt_md: String,
}

/// `prompt --list`: every driver prompt version.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct PromptList {
    /// The version `think_driver_prompt` returns when none is asked for.
    pub latest: Option<String>,
    /// Every version, in registry order.
    pub versions: Vec<PromptVersion>,
}

/// One driver prompt version of a [`PromptList`].
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct PromptVersion {
    /// The version's name.
    pub version: String,
    /// `bundled` (compiled in) or `project` (`prompts/prompts.yml`).
    pub source: String,
    /// Where its text is read from: `bundled:x.md` or `prompts/x.md`.
    pub file: String,
}

/// think_workflows_list's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WorkflowList {
    /// Each workflow: {id, name, description, version, steps, valid} (or {id, valid: false, error}).
    pub workflows: Vec<WorkflowEntry>,
}

/// One workflow of the list.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum WorkflowEntry {
    /// A workflow that checks clean.
    Valid {
        /// The workflow id: pass it to think_plan.
        id: String,
        /// Its name.
        name: Option<String>,
        /// Its description.
        description: Option<String>,
        /// Its version.
        version: Option<String>,
        /// How many steps it has.
        steps: usize,
        /// True: it checks clean.
        valid: bool,
    },
    /// A workflow with errors.
    Invalid {
        /// The workflow id.
        id: String,
        /// False: it does not check clean.
        valid: bool,
        /// The first error's code.
        error: String,
        /// Its name, when the file could be read that far.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Its description, when the file could be read that far.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// What is wrong.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<Value>,
    },
}

impl WorkflowList {
    /// The ids of the workflows that check clean.
    pub fn valid_ids(&self) -> Vec<String> {
        self.workflows.iter().filter(|w| w.is_valid()).map(|w| w.id().to_owned()).collect()
    }
}

impl WorkflowEntry {
    /// The workflow id.
    pub fn id(&self) -> &str {
        match self {
            WorkflowEntry::Valid { id, .. } | WorkflowEntry::Invalid { id, .. } => id,
        }
    }

    /// Whether it checks clean.
    pub fn is_valid(&self) -> bool {
        matches!(self, WorkflowEntry::Valid { .. })
    }

    /// Its name, if known.
    pub fn name(&self) -> Option<&str> {
        match self {
            WorkflowEntry::Valid { name, .. } | WorkflowEntry::Invalid { name, .. } => name.as_deref(),
        }
    }

    /// Its description, if known.
    pub fn description(&self) -> Option<&str> {
        match self {
            WorkflowEntry::Valid { description, .. } | WorkflowEntry::Invalid { description, .. } => {
                description.as_deref()
            }
        }
    }
}

/// think_workflows_read's answer.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WorkflowSource {
    /// The workflow asked for.
    pub workflow: String,
    /// The file read.
    pub path: String,
    /// The YAML source.
    pub yaml: String,
}

/// think_workflows_graph's answer: the plan (json), or the graph as text.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Graph {
    /// {workflow, graph: {nodes, entry}, order, v}.
    Plan(#[schemars(with = "PlanShape")] Value),
    /// The graph as mermaid or dot text.
    Text {
        /// mermaid or dot.
        format: String,
        /// The graph as text.
        graph: String,
    },
}

/// The schema of [`Graph::Plan`] (the value is built by `Plan::to_json`):
/// clients that check structured content against the output schema need it.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct PlanShape {
    /// The workflow id.
    workflow: String,
    /// The dependency graph.
    graph: PlanGraph,
    /// The step ids in execution order.
    order: Vec<String>,
    /// The workflow's version.
    v: String,
}

/// [`PlanShape`]'s graph.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct PlanGraph {
    /// Each step: {id, call, deps, inferred_deps}.
    nodes: Vec<PlanNode>,
    /// The steps with no dependency.
    entry: Vec<String>,
}

/// A step of [`PlanGraph`].
#[derive(JsonSchema)]
#[allow(dead_code)]
struct PlanNode {
    /// The step id.
    id: String,
    /// The tool it calls.
    call: String,
    /// The steps it waits for (written and inferred).
    deps: Vec<String>,
    /// Of those, the ones inferred from what it reads.
    inferred_deps: Vec<String>,
}

/// think_validate's answer: a response against a schema, or a workflow's diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Validation {
    /// A response checked against a schema.
    Response {
        /// True when there is nothing to fix.
        valid: bool,
        /// Schema errors: {path, message}.
        #[schemars(with = "Vec<crate::runtime::error_details::FieldError>")]
        errors: Vec<Value>,
    },
    /// A workflow's diagnostics.
    Workflow {
        /// True when there is nothing to fix.
        valid: bool,
        /// The workflow checked.
        workflow: String,
        /// The workflow's diagnostics: {code, severity, message, line, column, …}.
        diagnostics: Value,
        /// {files, errors, warnings}.
        summary: Value,
    },
}

/// think_state_get's answer: a run's full state. Each result is stored
/// once (in its history event); here it is also shown on its step and under
/// its capture name.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct FullState {
    /// The state version (use as think_next's expected_version).
    pub version: u64,
    /// This incarnation of the run (a fresh start gets a new one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// The workflow id.
    pub workflow: String,
    /// The run id.
    pub run_id: String,
    /// sha256 of the workflow file the run started with.
    pub workflow_hash: String,
    /// The named schemas the run is pinned to: name → sha256 (absent in runs
    /// started before pinning).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub schemas: std::collections::BTreeMap<String, String>,
    /// sha256 of the workflow file as it is now, or null when it is gone or
    /// no longer compiles.
    pub file_hash: Option<String>,
    /// Whether the file on disk now differs from the version the run is
    /// pinned to (the run keeps executing its pinned version either way;
    /// see think_upgrade).
    pub file_differs: bool,
    /// The run's params.
    pub params: Value,
    /// running, done or failed.
    pub status: RunStatus,
    /// Why the run failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<crate::runtime::failure::RunFailure>,
    /// Each step's status, attempts and result.
    pub steps: Vec<StepView>,
    /// Captured results by name.
    pub captures: Map<String, Value>,
    /// Every accepted event.
    pub history: Vec<Event>,
    /// Where think_reset can go back to.
    pub checkpoints: Vec<Checkpoint>,
    /// The results cut to the payload caps.
    pub truncations: Vec<Truncation>,
    /// When the run started (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// The workflow file, when the run was started from a path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The run this one was forked from: {run_id, version, step}.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<crate::runtime::record::ForkedFrom>,
    /// The run whose `uses:` step started this one: {workflow, run_id, step_id, depth}.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<crate::runtime::record::ParentRun>,
}

/// One step of a run, with its result.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct StepView {
    /// The step id.
    pub id: String,
    /// pending, ready, running (a foreach with items under way), done, skipped or failed.
    pub status: StepStatus,
    /// Validation failures so far (for a foreach step, see its items).
    pub attempts: u32,
    /// The rendered input, once ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The accepted result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// A foreach step's items, once expanded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemView>>,
}

impl StepView {
    /// The work the step stands for: each foreach item (`id[3]`), or the
    /// step itself (`id`): what a `uses:` step starts a child run for.
    pub fn work_ids(&self) -> Vec<String> {
        match &self.items {
            Some(items) => (0..items.len()).map(|j| format!("{}[{j}]", self.id)).collect(),
            None => vec![self.id.clone()],
        }
    }
}

/// One item of a foreach step, with its result.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ItemView {
    /// The item's status.
    pub status: StepStatus,
    /// Validation failures so far.
    pub attempts: u32,
    /// The rendered input, once ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The accepted result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}
