//! `savant-think run "GOAL"`: the autonomous loop. Each step builds a prompt
//! ([`prompt`]), asks a [`Backend`](crate::agent::backend::Backend) for one action ([`action`]), validates it
//! against the tools a [`Tools`](crate::agent::Tools) offers under the [`policy`], carries it out,
//! appends the result to memory ([`memory`], `.savant/session.json`) and
//! logs it ([`telemetry`]). The loop itself is in `runner`; the command's
//! glue (flags, environment, backends, Ctrl-C, output) is the binary's
//! `src/cli/run.rs`, which hands [`RunOptions`] here.
//!
//! A step of `runner.rs`: tools → budget inside the model's context →
//! prompt → ask with retries → parse, one bounded correction → resolve the
//! tool name (an unknown one is returned to the model once) → stuck check →
//! act → record (`runner/request.rs` the budget, prompt and schema;
//! `runner/decide.rs` the ask, parse, correction, validation and stuck
//! check; a step's `Decision` is the action and the loop's verdict on it:
//! as is, a tool call refused, or the run stopped with a code). `action.rs`
//! holds the action (a sum type: `Tool`, `Reason`, `Finish`, `Error`,
//! serialized as the schema's five fields), its general JSON Schema, the tight
//! per-step schema (`anyOf` per offered tool, sent as the structured-output
//! constraint) and the strict parser; `grammar.rs` rewrites any schema into
//! what grammar converters enforce; `dialects.rs` remembers the
//! structured-output dialect per endpoint (`.savant/dialects.json`);
//! `tokens.rs` the token estimate; `detect.rs` and `workflow.rs` hand a goal
//! that names a workflow to `exec`.

pub mod action;
pub mod bound;
pub mod detect;
pub mod dialects;
pub mod grammar;
pub mod ground;
pub mod memory;
pub mod policy;
pub mod prompt;
pub mod rank;
mod runner;
pub use runner::run;
pub mod telemetry;
pub mod tokens;
pub mod workflow;

use memory::StepRecord;
use policy::ToolPolicy;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

pub const DEFAULT_MAX_STEPS: usize = 25;
/// The memory budget of `.savant/session.json`, in estimated tokens.
pub const DEFAULT_MEMORY_TOKENS: usize = 4_000;
/// The same action this many times in a row means the model is stuck.
pub const DEFAULT_STUCK_REPEATS: usize = 3;
/// A last tool output larger than this (estimated tokens) makes the next step heavy.
pub const DEFAULT_HEAVY_OUTPUT_TOKENS: usize = 2_000;
/// The answer bound (OpenAI `max_tokens`, Ollama `num_predict`), in tokens.
/// One action with the tight per-step schema needs far less; the bound stops
/// a small model that fills `args` until the context is full.
pub const DEFAULT_ANSWER_TOKENS: usize = 512;
/// The first retry's wait; each later one doubles it.
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);

/// The persona that opens every system prompt.
pub const PERSONA: &str = "You are the savant-think agent. You pursue the user's goal one action at a time: \
call a tool when it brings you information or does work you need, reason when you must think, and finish as \
soon as you can answer. Never invent tool names or tool results.";

/// A tool to call before the model is asked anything.
#[derive(Clone, Debug, PartialEq)]
pub struct ForcedTool {
    pub name: String,
    pub args: Value,
}

/// How a run behaves. The CLI fills it from flags and the environment; the
/// library reads no environment variable.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The project root: `.savant/session.json` and `logs/` go under it.
    pub root: PathBuf,
    /// The run id (default: a new `r-…` id).
    pub run_id: Option<String>,
    /// Hard cap on loop steps (default 25).
    pub max_steps: usize,
    /// The prompt budget in estimated tokens (default 8,000).
    pub budget_tokens: usize,
    /// The most tokens one answer may have (default 512): sent with every
    /// request; an answer cut off there is `ANSWER_CUT_OFF`.
    pub answer_tokens: usize,
    /// The model's context in tokens (`--context-tokens`); `None`: ask the
    /// server (Ollama `/api/show`, llama.cpp `/props`). Prompt + answer are
    /// budgeted inside it.
    pub context_tokens: Option<usize>,
    /// The memory budget in estimated tokens (default 4,000).
    pub memory_tokens: usize,
    /// Stop when the same action comes this many times in a row, or the same
    /// call returns the same output this many times in a run (default 3; 0 = never).
    pub stuck_repeats: usize,
    /// How many tools a step offers, ranked for the goal and the last output
    /// ([`rank`]; default 4; 0 = all the policy allows).
    pub offer_tools: usize,
    /// Call no tool: every tool call is answered with a stub that says so.
    pub dry_run: bool,
    pub policy: ToolPolicy,
    /// Call this tool first (step 1), without asking the model.
    pub forced_tool: Option<ForcedTool>,
    /// Finish right after the forced tool (its output is the final answer),
    /// or at once when there is none.
    pub forced_finish: bool,
    /// Every step is heavy: use the large model throughout.
    pub heavy: bool,
    /// A last tool output over this many estimated tokens makes the next step heavy.
    pub heavy_output_tokens: usize,
    /// The first retry's wait on a transient backend error (then doubled).
    pub backoff: Duration,
    pub persona: String,
    /// A driver prompt for the model (an extra, trimmed before tool schemas).
    pub driver: Option<String>,
    /// `--verbose`: the runtime log's lines also go to stderr.
    pub verbose: bool,
    /// How `logs/agent_trace.log` and `logs/agent_runtime.log` are capped
    /// and rotated (`[agent]` of `savant-think.toml`).
    pub log_rotation: crate::fsx::Rotation,
}

impl RunOptions {
    pub fn new(root: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            root: root.into(),
            run_id: None,
            max_steps: DEFAULT_MAX_STEPS,
            budget_tokens: prompt::DEFAULT_BUDGET_TOKENS,
            answer_tokens: DEFAULT_ANSWER_TOKENS,
            context_tokens: None,
            memory_tokens: DEFAULT_MEMORY_TOKENS,
            stuck_repeats: DEFAULT_STUCK_REPEATS,
            offer_tools: rank::DEFAULT_OFFERED_TOOLS,
            dry_run: false,
            policy: ToolPolicy::default(),
            forced_tool: None,
            forced_finish: false,
            heavy: false,
            heavy_output_tokens: DEFAULT_HEAVY_OUTPUT_TOKENS,
            backoff: DEFAULT_BACKOFF,
            persona: PERSONA.into(),
            driver: None,
            verbose: false,
            log_rotation: crate::config::AgentConfig::default().log_rotation(),
        }
    }

    /// `<root>/.savant/session.json`.
    pub fn session_path(&self) -> PathBuf {
        self.root.join(".savant").join("session.json")
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The model finished (or a forced finish, or stuck detection, stopped it).
    Ok,
    /// The model gave up, an action was invalid, or a backend failed.
    Error,
    /// Canceled (Ctrl-C or the cancel token): final is "Canceled by user".
    Canceled,
    /// The step cap was reached without a finish.
    Cap,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Error => "error",
            RunStatus::Canceled => "canceled",
            RunStatus::Cap => "cap",
        }
    }
}

/// Why the loop stopped, serialized as its name (`finish`, `stuck`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished.
    Finish,
    /// `--force-finish` (or the last step's forced finish) ended it.
    ForcedFinish,
    /// The model repeated the same action: stuck detection stopped it.
    Stuck,
    /// Canceled (Ctrl-C or the cancel token).
    Canceled,
    /// The step cap was reached without a finish.
    Cap,
    /// The model gave up, an action was invalid, or a backend failed.
    Error,
    /// A `--workflow` run: the workflow's run decided.
    Workflow,
}

impl StopReason {
    /// The reason's name: `finish`, `forced_finish`, `stuck`, `canceled`,
    /// `cap`, `error` or `workflow`.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Finish => "finish",
            StopReason::ForcedFinish => "forced_finish",
            StopReason::Stuck => "stuck",
            StopReason::Canceled => "canceled",
            StopReason::Cap => "cap",
            StopReason::Error => "error",
            StopReason::Workflow => "workflow",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What a run came to.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub status: RunStatus,
    /// The answer, or why there is none.
    #[serde(rename = "final")]
    pub final_text: String,
    /// Loop steps taken (each has one `reasoning_step` event).
    pub steps: usize,
    pub run_id: String,
    /// `finish`, `forced_finish`, `stuck`, `canceled`, `cap`, `error` or `workflow`.
    pub stop_reason: StopReason,
    /// On error: `{error: CODE, details}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Every step with its full tool output.
    pub transcript: Vec<StepRecord>,
}
