//! The `savant-think exec` command: its arguments and the process around
//! `savant_think::agent::exec::exec` (runtime, logging, output, exit status).

use savant_think::agent::exec::{self, ExecOptions, ExecStatus, UsageError, events};
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::runtime::{EngineError, ErrorCode};
use savant_think::workspace;
use std::path::PathBuf;
use std::sync::Arc;

/// Exit status: the run is done.
pub const EXIT_DONE: u8 = 0;
/// Exit status: the run failed, or exec stopped on a tool failure.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: bad arguments, workflow, params or config.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: the run waits for a person, a time or an event (it parked:
/// answer it, then resume with --run-id).
pub const EXIT_WAITING: u8 = 3;
/// Exit status: interrupted with Ctrl-C (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Run a workflow to the end with no LLM client, calling each step's tool.
///
/// Each step's `call` goes to the engine's tools, `local_read` / `local_exec`,
/// or an MCP server declared as [servers.NAME] in savant-think.toml.
///
/// Exit status: 0 when the run is done, 1 when it failed or exec stopped on a
/// tool failure (the run stays resumable with --run-id), 2 on a usage error,
/// 3 when the run waits (`await:`, `sleep:`, `wait_for:`) beyond --max-wait
/// and no one at a terminal answers: it parked, answer it and resume it with
/// --run-id; 130 when interrupted (resumable too).
#[derive(clap::Args, Debug)]
#[command(
    after_help = concat!("Examples:\n  savant-think exec review_v1 --params '{\"project\": \"g/app\", \"mr_iid\": \"!7\"}'\n  savant-think exec review_v1 --dry-run\n  savant-think exec review_v1 --params @params.json --run-id nightly-42 --json --jobs 4\n\n", state_env!(traces), "\n  LOG_LEVEL           log level on stderr (default warn)\n\nFull documentation: docs/exec.md in the savant-think repository.")
)]
pub struct ExecArgs {
    /// A workflow id (resolved in <root>/workflows/) or a path to a file.
    pub workflow: String,
    /// Params as JSON, or @FILE (validated against the workflow's params).
    #[arg(long, value_name = "JSON|@FILE")]
    pub params: Option<String>,
    /// Resume this run if it exists (never repeating a done step), else start
    /// it under this id. Default: a new id, printed at the start.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Let local_exec run any shell command (otherwise only the programs in
    /// [local] exec_allow, run without a shell).
    #[arg(long)]
    pub allow_exec: bool,
    /// Call no external tool: answer each from its output type (the step's
    /// success schema, else the locked tool's outputSchema), with a list
    /// item so every foreach and child workflow runs; missing params are
    /// generated. The engine's think and prompt_say still run (answered
    /// from the schema when they have one). The summary says what ran.
    #[arg(long)]
    pub dry_run: bool,
    /// Print NDJSON events on stdout (run_started, step_started,
    /// step_finished, summary) instead of a progress bar.
    #[arg(long)]
    pub json: bool,
    /// Run up to N ready steps at once; results are submitted in a fixed order.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Wait in process for a deadline (a `sleep:`, a wait's timeout) at most
    /// this far off (`30s`, `10m`); a later one parks the run (exit 3).
    /// A question (`await:`) is asked when stdin is a terminal.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = max_wait)]
    pub max_wait: std::time::Duration,
    /// Where the steps that need a model run — `model.generate`, and `think`
    /// or `prompt.say` with a success schema (the same backends and
    /// environment as `run`: OLLAMA_HOST, OPENAI_BASE_URL, …). Without
    /// --backend, --model or one of those variables, a workflow with such a
    /// step is refused before it starts (MODEL_NOT_CONFIGURED).
    #[arg(long, value_enum)]
    pub backend: Option<super::run::BackendKind>,
    /// The model for `model.generate` steps (as `run --model`).
    #[arg(long)]
    pub model: Option<String>,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml or workflows/.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// A person is at a terminal to answer questions: stdin and stderr are one.
fn at_a_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// The exit status of a run that exec finished, stopped or parked.
fn exit_code(status: ExecStatus) -> u8 {
    match status {
        ExecStatus::Done => EXIT_DONE,
        ExecStatus::Waiting => EXIT_WAITING,
        ExecStatus::Failed | ExecStatus::Stopped => EXIT_FAILED,
    }
}

/// `--max-wait`: `30s`, `10m`, `1h`, `0s`.
fn max_wait(text: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("not a duration like 30s, 10m or 1h: {e}"))
}

fn usage(message: impl std::fmt::Display) -> u8 {
    eprintln!("error: {message}");
    EXIT_USAGE
}

/// A usage error before the run starts: with --json, the one `error` event
/// the stream promises too (the message still goes to stderr).
fn refused(json: bool, e: &EngineError) -> u8 {
    if json {
        println!("{}", serde_json::json!({"event": "error", "error": e.code, "details": e.details}));
    }
    usage(e.human())
}

/// Runs the command; returns the exit status.
pub fn main(args: ExecArgs) -> u8 {
    super::logging::init("warn");
    let invalid = |m: String| refused(args.json, &EngineError::message(ErrorCode::InvalidInput, m));
    let params = match args.params.as_deref().map(|p| workspace::json_arg(p, "--params")) {
        None => serde_json::Value::Null,
        Some(Ok(v)) => v,
        Some(Err(m)) => return invalid(m),
    };
    let root = match super::env::root(args.root.as_deref()) {
        Ok(r) => r,
        Err(m) => return invalid(m),
    };
    let (engine, _traces) = match super::env::traced_engine(root) {
        Ok((e, traces)) => (Arc::new(e), traces),
        Err(e) => return refused(args.json, &e),
    };
    // The run id is known before the run starts, so an interrupt can say how to resume it.
    let run_id = args.run_id.unwrap_or_else(savant_think::runtime::engine::new_run_id);
    let resume = format!("savant-think exec {} --run-id {run_id}", args.workflow);
    let interrupted = serde_json::json!({
        "event": "summary", "status": "interrupted", "workflow": args.workflow, "run_id": run_id, "resume": resume,
    });
    let options = ExecOptions {
        workflow: args.workflow,
        params,
        run_id: Some(run_id),
        dry_run: args.dry_run,
        jobs: usize::from(args.jobs),
        max_wait: args.max_wait,
        ask_on_tty: at_a_terminal(),
        stop: None,
    };
    let mut mux =
        Multiplexer::new(engine, MuxOptions { allow_exec: args.allow_exec, env: super::env::lookup() });
    // The model for the steps that need one (`model.generate`, `think` or
    // `prompt.say` with a success schema), when one is given: --backend,
    // --model, or the backend's address in the environment (OLLAMA_HOST, or
    // OPENAI_BASE_URL for openai). Building it contacts nothing. Without
    // one, exec refuses such a workflow before its first step.
    let from_env = super::env::var("OPENAI_BASE_URL")
        .map(|_| super::run::BackendKind::Openai)
        .or_else(|| super::env::var("OLLAMA_HOST").map(|_| super::run::BackendKind::Ollama));
    let given = args.backend.or(from_env).or(args.model.as_ref().map(|_| super::run::BackendKind::Ollama));
    if let Some(kind) = given {
        match super::run::backend_from_env(kind, args.model.as_deref()) {
            Ok(backend) => mux = mux.with_model(Arc::new(backend)),
            Err(m) => return invalid(m),
        }
    }
    let mux = Arc::new(mux);
    let json = args.json;
    let code = super::runtime::block_on(async {
        let run = async {
            if json {
                exec::exec(mux.clone(), &options, &mut events::ndjson()).await
            } else {
                exec::exec(mux.clone(), &options, &mut events::progress()).await
            }
        };
        // Ctrl-C: stop at once. Every acknowledged step is already durable;
        // the calls in flight run again when the run is resumed.
        let result = tokio::select! {
            r = run => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        };
        mux.shutdown().await;
        match result {
            None => {
                if json {
                    println!("{interrupted}");
                }
                eprintln!("interrupted: resume with `{resume}`");
                EXIT_INTERRUPTED
            }
            Some(Ok(r)) => exit_code(r.status),
            Some(Err(UsageError(e))) => refused(json, &e),
        }
    });
    code.unwrap_or_else(usage)
}
