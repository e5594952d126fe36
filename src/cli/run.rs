//! `savant-think run`: flags, the environment, the backend, the tools,
//! Ctrl-C, and what is printed. The loop (`savant_think::agent::run`) takes
//! plain structs; this is the only place of `run` that reads environment
//! variables.

use super::env::var as env;
use savant_think::agent::backend::AnyBackend;
use savant_think::agent::backend::ollama::{self, Ollama, OllamaConfig};
use savant_think::agent::backend::openai::{self, OpenAi, OpenAiConfig};
use savant_think::agent::backend::reasoning_api::{ReasoningApi, ReasoningApiConfig};
use savant_think::agent::exec::events as exec_events;
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::agent::run::policy::ToolPolicy;
use savant_think::agent::run::{self as agent_run, ForcedTool, RunOptions, RunResult, RunStatus};
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Pursue a goal with a model: one action per step (call a tool, reason,
/// finish), up to --max-steps.
#[derive(clap::Args, Debug)]
#[command(after_help = "Environment:\n  \
OLLAMA_HOST (http://127.0.0.1:11434), SLM_MODEL (phi3.5), LLM_MODEL (llama3:latest)\n  \
OPENAI_BASE_URL (https://api.openai.com), OPENAI_API_KEY, OPENAI_MODEL (gpt-4o-mini)\n  \
REASONING_API_URL, REASONING_API_TOKEN, REASONING_API_TIMEOUT_MS (5000), REASONING_API_RETRIES (2)\n  \
SAVANT_BACKEND_TIMEOUT_MS (120000, Ollama and OpenAI requests)\n  \
SAVANT_DISABLE_TOOLS=1, SAVANT_ALLOW_TOOLS=a,b, SAVANT_DENY_TOOLS=c (patterns: name or prefix*)\n  \
SAVANT_DISABLE_WORKFLOW_AUTODETECT=1\n\n\
Exit status: 0 finished, 1 error or step cap, 2 usage error, 130 canceled (Ctrl-C).\n\
Files: <root>/.savant/session.json (memory), <root>/logs/agent_trace.log (NDJSON), <root>/logs/agent_runtime.log.\n\n\
Examples:\n  savant-think run \"List the workflows and say which has the most steps\"\n  \
savant-think run \"Which workflows need a milestone param?\" --backend openai --model llama3.1 --json\n  \
SAVANT_ALLOW_TOOLS='think_workflows_*' savant-think run \"What workflows exist?\" --dry-run\n\n\
More: docs/agent.md.")]
pub struct RunArgs {
    /// The goal in plain words; `-` reads it from stdin, `@FILE` from a file.
    pub goal: String,
    /// Where the model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Ollama)]
    pub backend: BackendKind,
    /// The model for ordinary steps (Ollama: default $SLM_MODEL or phi3.5;
    /// OpenAI-compatible: default $OPENAI_MODEL or gpt-4o-mini).
    #[arg(long)]
    pub model: Option<String>,
    /// Treat every step as heavy: use the large model ($LLM_MODEL) throughout.
    #[arg(long)]
    pub heavy: bool,
    /// Stop after this many steps without a finish (exit 1). 1 to 1000.
    #[arg(long, default_value_t = agent_run::DEFAULT_MAX_STEPS as u32, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_steps: u32,
    /// The prompt budget in estimated tokens (characters / 4). At least 500.
    #[arg(long, default_value_t = agent_run::prompt::DEFAULT_BUDGET_TOKENS as u32, value_parser = clap::value_parser!(u32).range(500..))]
    pub budget_tokens: u32,
    /// The most tokens one answer may have (OpenAI max_tokens, Ollama
    /// num_predict), raised to the longest answer the step's schema admits
    /// (an answer under the schema is never cut off). 16 to 100000, and
    /// below --context-tokens.
    #[arg(long, default_value_t = agent_run::DEFAULT_ANSWER_TOKENS as u32, value_parser = clap::value_parser!(u32).range(16..=100_000))]
    pub answer_tokens: u32,
    /// How many tools a step offers the model, ranked for the goal and the
    /// last tool output (default 4; 0 offers every tool the policy allows).
    #[arg(long, default_value_t = agent_run::rank::DEFAULT_OFFERED_TOOLS as u32, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub offer_tools: u32,
    /// The model's context in tokens (default: what the server says, Ollama
    /// /api/show or llama.cpp /props); prompt and answer are budgeted inside
    /// it. At least 1024.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1024..))]
    pub context_tokens: Option<u32>,
    /// Call no tool: every tool call gets a stub output that says so.
    #[arg(long)]
    pub dry_run: bool,
    /// Print {status, final, steps, run_id, stop_reason, trace} as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the runtime log as the run goes (on stderr): prompts, each
    /// answer, the structured-output dialect, retries, tool calls.
    #[arg(long, short)]
    pub verbose: bool,
    /// Call this tool first, before asking the model.
    #[arg(long, value_name = "TOOL")]
    pub force_tool: Option<String>,
    /// Arguments of --force-tool as a JSON object.
    #[arg(long, value_name = "JSON", requires = "force_tool")]
    pub force_args: Option<String>,
    /// Finish right after --force-tool (its output is the answer), or at once.
    #[arg(long)]
    pub force_finish: bool,
    /// Params for a workflow the goal names (auto-detect), as JSON or @FILE.
    #[arg(long, value_name = "JSON|@FILE")]
    pub params: Option<String>,
    /// Let local_exec run any shell command (otherwise only the programs in
    /// [local] exec_allow of savant-think.toml).
    #[arg(long)]
    pub allow_exec: bool,
    /// The run id (default: a new one).
    #[arg(long)]
    pub run_id: Option<String>,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml or workflows/.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// The backend kinds `--backend` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    Ollama,
    Openai,
    ReasoningApi,
}

fn env_number(name: &str, default: u64) -> Result<u64, String> {
    match env(name) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| format!("{name} must be a whole number, got `{v}`")),
    }
}

/// A timeout in milliseconds from the environment: a whole number above 0
/// (0 would time every request out at once).
fn env_millis(name: &str, default: u64) -> Result<Duration, String> {
    match env_number(name, default)? {
        0 => Err(format!("{name} must be above 0 milliseconds (default {default})")),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// The backend `kind`, configured from the environment and `--model`.
pub fn backend_from_env(kind: BackendKind, model: Option<&str>) -> Result<AnyBackend, String> {
    let timeout = env_millis("SAVANT_BACKEND_TIMEOUT_MS", 120_000)?;
    match kind {
        BackendKind::Ollama => Ok(AnyBackend::Ollama(Ollama::new(OllamaConfig {
            host: env("OLLAMA_HOST").unwrap_or_else(|| ollama::DEFAULT_HOST.into()),
            small_model: model
                .map(str::to_owned)
                .or_else(|| env("SLM_MODEL"))
                .unwrap_or_else(|| ollama::DEFAULT_SMALL_MODEL.into()),
            large_model: env("LLM_MODEL").unwrap_or_else(|| ollama::DEFAULT_LARGE_MODEL.into()),
            timeout,
            ..OllamaConfig::default()
        })?)),
        BackendKind::Openai => Ok(AnyBackend::OpenAi(OpenAi::new(OpenAiConfig {
            base_url: env("OPENAI_BASE_URL").unwrap_or_else(|| openai::DEFAULT_BASE_URL.into()),
            api_key: env("OPENAI_API_KEY"),
            model: model
                .map(str::to_owned)
                .or_else(|| env("OPENAI_MODEL"))
                .unwrap_or_else(|| openai::DEFAULT_MODEL.into()),
            large_model: env("LLM_MODEL"),
            timeout,
            ..OpenAiConfig::default()
        })?)),
        BackendKind::ReasoningApi => {
            let url = env("REASONING_API_URL").ok_or(
                "--backend reasoning-api needs REASONING_API_URL (e.g. REASONING_API_URL=http://127.0.0.1:9000)",
            )?;
            Ok(AnyBackend::ReasoningApi(ReasoningApi::new(ReasoningApiConfig {
                url,
                token: env("REASONING_API_TOKEN"),
                timeout: env_millis("REASONING_API_TIMEOUT_MS", 5_000)?,
                retries: env_number("REASONING_API_RETRIES", 2)?.min(10) as u32,
            })?))
        }
    }
}

/// The tool policy from `SAVANT_DISABLE_TOOLS`, `SAVANT_ALLOW_TOOLS`, `SAVANT_DENY_TOOLS`.
pub fn policy_from_env() -> ToolPolicy {
    ToolPolicy::from_env_values(
        env("SAVANT_DISABLE_TOOLS").as_deref(),
        env("SAVANT_ALLOW_TOOLS").as_deref(),
        env("SAVANT_DENY_TOOLS").as_deref(),
    )
}

/// Whether `SAVANT_DISABLE_WORKFLOW_AUTODETECT` turns auto-detect off.
pub fn autodetect_disabled() -> bool {
    matches!(
        env("SAVANT_DISABLE_WORKFLOW_AUTODETECT").as_deref().map(str::trim),
        Some("1" | "true" | "yes" | "on")
    )
}

fn read_goal(goal: &str) -> Result<String, String> {
    let text = if goal == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read the goal from stdin: {e}"))?;
        s
    } else if let Some(path) = goal.strip_prefix('@') {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read the goal from {path}: {e}"))?
    } else {
        goal.to_owned()
    };
    if text.trim().is_empty() {
        return Err("the goal is empty: say what the agent should do".into());
    }
    Ok(text.trim().to_owned())
}

/// The run's options from the flags and the environment.
pub fn options(args: &RunArgs, root: PathBuf) -> Result<RunOptions, String> {
    let mut o = RunOptions::new(root);
    o.run_id = args.run_id.clone();
    o.max_steps = args.max_steps as usize;
    o.budget_tokens = args.budget_tokens as usize;
    o.answer_tokens = args.answer_tokens as usize;
    o.offer_tools = args.offer_tools as usize;
    o.context_tokens = args.context_tokens.map(|n| n as usize);
    if let Some(context) = args.context_tokens
        && args.answer_tokens >= context
    {
        return Err(format!(
            "--answer-tokens {} does not fit in --context-tokens {context}: the answer shares the context \
             with the prompt (give it at most half)",
            args.answer_tokens
        ));
    }
    o.dry_run = args.dry_run;
    o.heavy = args.heavy;
    o.verbose = args.verbose;
    o.policy = policy_from_env();
    o.forced_finish = args.force_finish;
    if let Some(name) = &args.force_tool {
        let args_json = match &args.force_args {
            None => json!({}),
            Some(text) => serde_json::from_str::<Value>(text)
                .map_err(|e| format!("--force-args is not valid JSON: {e}"))?,
        };
        if !args_json.is_object() {
            return Err(format!("--force-args must be a JSON object, got {args_json}"));
        }
        o.forced_tool = Some(ForcedTool { name: name.clone(), args: args_json });
    }
    Ok(o)
}

/// The exit status for a run's result: 0 finished, 1 error or cap, 130 canceled.
pub fn exit_code(result: &RunResult) -> u8 {
    match result.status {
        RunStatus::Ok => 0,
        RunStatus::Error | RunStatus::Cap => 1,
        RunStatus::Canceled => 130,
    }
}

/// Prints a result: JSON (`--json`) or the final text, with a status line on stderr.
pub fn print(result: &RunResult, as_json: bool) {
    if as_json {
        let mut out = json!({"status": result.status, "final": result.final_text, "steps": result.steps,
                             "run_id": result.run_id, "stop_reason": result.stop_reason});
        if let Some(e) = &result.error {
            out["error"] = e.clone();
        }
        // Each step's raw model answers, with how they were asked for and what they cost.
        let trace: Vec<Value> = result
            .transcript
            .iter()
            .map(|s| json!({"step": s.step, "action": s.action, "tool_name": s.tool_name, "answers": s.answers}))
            .collect();
        out["trace"] = json!(trace);
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return;
    }
    match result.status {
        RunStatus::Ok => println!("{}", result.final_text),
        _ => eprintln!("error: {}", result.final_text),
    }
    eprintln!(
        "run {}: {}{} after {} step{}; trace in logs/agent_trace.log",
        result.run_id,
        result.status.as_str(),
        // `error (error)` says nothing twice.
        Some(result.stop_reason.as_str())
            .filter(|r| *r != result.status.as_str())
            .map(|r| format!(" ({r})"))
            .unwrap_or_default(),
        result.steps,
        if result.steps == 1 { "" } else { "s" }
    );
}

/// A cancel token fired by the first Ctrl-C.
pub fn ctrl_c_token() -> CancellationToken {
    let token = CancellationToken::new();
    let fire = token.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            fire.cancel();
        }
    });
    token
}

/// `savant-think run`: returns the exit status.
pub fn main(args: RunArgs) -> u8 {
    let usage = |m: String| {
        eprintln!("error: {m}");
        2
    };
    super::logging::init("warn");
    let root = match super::env::root(args.root.as_deref()) {
        Ok(r) => r,
        Err(m) => return usage(m),
    };
    let goal = match read_goal(&args.goal) {
        Ok(g) => g,
        Err(m) => return usage(m),
    };
    let mut options = match options(&args, root.clone()) {
        Ok(o) => o,
        Err(m) => return usage(m),
    };
    let backend = match backend_from_env(args.backend, args.model.as_deref()) {
        Ok(b) => b,
        Err(m) => return usage(m),
    };
    let engine = match super::env::engine(&root) {
        Ok(e) => Arc::new(e),
        Err(e) => return usage(e.to_string()),
    };
    options.driver = engine.driver_prompt(None).ok().map(|v| v.prompt_md);
    options.log_rotation = engine.config().agent.log_rotation();
    let workflow = if autodetect_disabled() || options.forced_tool.is_some() || options.forced_finish {
        None
    } else {
        agent_run::detect::detect_workflow(&goal, &agent_run::workflow::known_ids(&engine))
    };
    let params = match args.params.as_deref().map(|p| savant_think::workspace::json_arg(p, "--params")) {
        None => Value::Null,
        Some(Ok(v)) => v,
        Some(Err(m)) => return usage(m),
    };
    let mux = Arc::new(Multiplexer::new(
        engine,
        MuxOptions { allow_exec: args.allow_exec, env: super::env::lookup() },
    ));
    let code = super::runtime::block_on(async {
        let cancel = ctrl_c_token();
        let result = match workflow {
            Some(id) if args.json => {
                agent_run::workflow::run_workflow(&id, &goal, params, &options, mux.clone(), &mut |_| {})
                    .await
            }
            Some(id) => {
                let mut progress = exec_events::progress_quiet();
                agent_run::workflow::run_workflow(&id, &goal, params, &options, mux.clone(), &mut progress)
                    .await
            }
            None => agent_run::run(&goal, &options, &backend, mux.as_ref(), &cancel).await,
        };
        mux.shutdown().await;
        print(&result, args.json);
        exit_code(&result)
    });
    code.unwrap_or_else(usage)
}
