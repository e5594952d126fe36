//! The `savant-think` command line: clap definitions, dispatch, exit codes.
//! No workflow semantics live here.

/// The environment every command that opens run state reads: its `--help`
/// ends with it (docs/config.md has the whole table).
macro_rules! state_env {
    (traces) => {
        concat!(
            state_env!(),
            "\n  OTEL_EXPORTER_OTLP_ENDPOINT  OTLP/HTTP collector to send run traces to (overrides [telemetry] otlp_endpoint)\n  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_SDK_DISABLED  as OpenTelemetry defines them"
        )
    };
    () => {
        "Environment:\n  SAVANT_PATH         the project root when --root is not given\n  SAVANT_STATE_URL    postgres://… keeps runs in PostgreSQL (overrides [state] url; docs/deploy.md)\n  SAVANT_STATE_FSYNC  0|1: fsync run-state writes (overrides [state] fsync)"
    };
}

mod cli;

use cli::WorkflowArg;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Compiler, static checker and deterministic run engine for declarative LLM workflows.
#[derive(Parser)]
#[command(name = "savant-think", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a working project here: a first workflow, its test, settings, pre-commit.
    ///
    /// Writes workflows/hello.yaml, tests/hello.test.yaml, savant-think.toml
    /// (common settings, commented), .pre-commit-config.yaml and .gitignore,
    /// refusing to overwrite anything that exists (unless --force), then prints
    /// the next commands and the MCP client snippets for this project's root.
    /// More: README.md (Quick start), docs/mcp.md.
    #[command(
        after_help = "Examples:\n  savant-think init\n  savant-think init --root my-project\n  savant-think init --mcp-client claude-code\n\nMore: README.md (Quick start), docs/config.md."
    )]
    Init(cli::init::InitArgs),
    /// Check workflow files for errors without running them.
    ///
    /// Exit status: 0 when no errors were found (warnings are allowed), 1 when
    /// errors were found (or warnings, with --deny-warnings), 2 on a usage or
    /// I/O error.
    #[command(
        after_help = "Examples:\n  savant-think check\n  savant-think check workflows/review.yaml --format json\n  savant-think check --format github --deny-warnings\n  savant-think check --tools tools.json workflows/\n\nMore: docs/checks.md (every code: savant-think rule CODE)."
    )]
    Check(cli::check::CheckArgs),
    /// Print a diagnostic code's documentation: what it does, why, an example, the fix.
    #[command(
        after_help = "Examples:\n  savant-think rule UNRESOLVED_VAR\n  savant-think rule --all\n\nMore: docs/checks.md."
    )]
    Rule(cli::check::RuleArgs),
    /// Compile a workflow to its plan: {workflow, graph:{nodes, entry}, order, v}.
    #[command(
        after_help = "Examples:\n  savant-think compile review_v1\n  savant-think compile workflows/review_v1.yaml --params '{\"project\": \"g/app\", \"mr_iid\": \"7\"}'\n\nMore: docs/runtime.md."
    )]
    Compile {
        #[command(flatten)]
        wf: WorkflowArg,
        /// Params as JSON, or @FILE (validated against the workflow's params).
        #[arg(long, value_name = "JSON|@FILE")]
        params: Option<String>,
    },
    /// Draw a workflow's dependency graph (inferred edges dashed), or a run's with each step's status.
    #[command(
        after_help = "Examples:\n  savant-think graph review_v1\n  savant-think graph review_v1 --format dot | dot -Tsvg > review.svg\n  savant-think graph review_v1 --run-id r1\n\nMore: docs/runtime.md, docs/inspector.md."
    )]
    Graph {
        #[command(flatten)]
        wf: WorkflowArg,
        /// Mermaid or DOT text, the plan as JSON, or text: Unicode boxes (the default with --run-id).
        #[arg(long, value_enum)]
        format: Option<cli::inspect::GraphFormat>,
        /// Draw this run: each step with its status (text or json).
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: Option<String>,
    },
    /// Start a run and print its first instruction.
    ///
    /// A --run-id that names an existing run is RUN_EXISTS (exit 1), unless
    /// --resume or --replace says what to do with it.
    #[command(
        after_help = concat!("Examples:\n  savant-think plan review --params '{\"mr\": \"!12\"}'\n  savant-think plan review --run-id r1 --resume\n  savant-think plan review --run-id r1 --replace\n\n", state_env!(), "\n\nMore: docs/runtime.md.")
    )]
    Plan {
        #[command(flatten)]
        wf: WorkflowArg,
        /// Params as JSON, or @FILE.
        #[arg(long, value_name = "JSON|@FILE")]
        params: Option<String>,
        /// The run id (default: a new one, never an existing run's). Ids match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: Option<String>,
        /// If the run exists, continue it (its own params are kept).
        #[arg(long, visible_alias = "no-fresh", conflicts_with = "replace")]
        resume: bool,
        /// If the run exists, archive it and start over (see `state list --archived`).
        #[arg(long)]
        replace: bool,
    },
    /// Submit a step's result and print the next instruction (or done).
    #[command(after_help = concat!("Examples:\n  savant-think next review --run-id r1 --step fetch_mr --result '{\"title\": \"Fix\"}'\n  tool | savant-think next review --run-id r1 --step fetch_mr --result -\n\n", state_env!(), "\n\nMore: docs/runtime.md."))]
    Next {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to submit to (the run_id plan printed).
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: String,
        /// The step id from the instruction (`id` or `id[3]` for a foreach item).
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::steps))]
        step: String,
        /// The tool's result as JSON, @FILE, or - for stdin (required: write '{}' for an empty result).
        #[arg(long, value_name = "JSON|@FILE|-")]
        result: String,
        /// Refuse (STATE_CONFLICT) unless the run is at this version.
        #[arg(long)]
        expected_version: Option<u64>,
    },
    /// Answer a step that waits for a person (`await:`) and print the next instruction (or done).
    #[command(after_help = concat!("Examples:\n  savant-think answer review --run-id r1 --step approve --value '{\"approved\": true}'\n  savant-think answer review --run-id r1 --step 'review_each[2]/approve' --value @answer.json\n\nA wrong answer is VALIDATION_FAILED naming the field, and nothing is recorded.\n`explain --run-id` and `state list --waiting` show what runs wait for.\n\n", state_env!(), "\n\nMore: docs/runtime.md (Waiting)."))]
    Answer {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run that waits.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: String,
        /// The waiting step (`id`, `id[3]` for a foreach item, `uses_step/id` inside a sub-workflow).
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::steps))]
        step: String,
        /// The answer as JSON, @FILE, or - for stdin; valid against the wait's schema.
        #[arg(long, value_name = "JSON|@FILE|-")]
        value: String,
        /// Refuse (STATE_CONFLICT) unless the run is at this version.
        #[arg(long)]
        expected_version: Option<u64>,
    },
    /// Send an event to the runs that wait for it (`wait_for:`), or will.
    #[command(after_help = concat!("Examples:\n  savant-think signal pipeline.finished --key 4711 --payload '{\"status\": \"success\"}'\n  savant-think signal deploy.approved --key prod --id webhook-delivery-42\n\nThe event must be declared in savant-think.toml ([events.NAME]) and its payload match\nthe schema there. An event for a run whose wait has not started yet is kept in that\nrun until it does; one that no running run waits for, nor will, is refused\n(NO_WAITING_RUN, exit 1) and not kept.\n\n", state_env!(), "\n\nMore: docs/runtime.md (Waiting)."))]
    Signal {
        /// The event's name, as declared under [events.NAME].
        event: String,
        /// The correlation key a waiting step's `match:` rendered.
        #[arg(long)]
        key: Option<String>,
        /// The payload as JSON, @FILE, or - for stdin (default: {}).
        #[arg(long, value_name = "JSON|@FILE|-")]
        payload: Option<String>,
        /// The sender's id for this event: sent again (a webhook's retry), it is not recorded twice.
        #[arg(long)]
        id: Option<String>,
        /// Deliver only to this workflow's runs.
        #[arg(long)]
        workflow: Option<String>,
        /// Deliver only to this run (with --workflow).
        #[arg(long, requires = "workflow")]
        run_id: Option<String>,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Explain a workflow, a run, or a step of either.
    #[command(after_help = concat!("Examples:\n  savant-think explain review\n  savant-think explain review --run-id r1 --step summarize\n\n", state_env!(), "\n\nMore: docs/runtime.md."))]
    Explain {
        #[command(flatten)]
        wf: WorkflowArg,
        /// Explain this run: its progress, why a step waits, why it failed.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: Option<String>,
        /// Explain this step (`id`, or `id[3]` for an item of a foreach step).
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::steps))]
        step: Option<String>,
    },
    /// Reset a run to the start or to a step's checkpoint.
    #[command(after_help = concat!("Examples:\n  savant-think reset review --run-id r1 --checkpoint fetch_mr --force\n\n", state_env!(), "\n\nMore: docs/runtime.md (Runs over time)."))]
    Reset {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to reset.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: String,
        /// Go back to the state right after this step completed.
        #[arg(long, value_name = "STEP")]
        checkpoint: Option<String>,
        /// Allow discarding accepted results (completed steps after the checkpoint).
        #[arg(long)]
        force: bool,
    },
    /// Start a new run from a step of an existing one (the source is not changed).
    ///
    /// Every result that does not depend on STEP is kept and STEP is ready
    /// again; with --params, every step whose rendered input changes runs
    /// again too. The new run records forked_from {run_id, version, step}.
    #[command(
        after_help = "Examples:\n  savant-think fork review --run-id r1 --from summarize\n  savant-think fork review --run-id r1 --from fetch --new-run-id r1b --params '{\"mr\": \"!13\"}'\n\nMore: docs/runtime.md (Runs over time)."
    )]
    Fork {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to fork.
        #[arg(long, add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: String,
        /// The step to run again (a step id, not an item).
        #[arg(long, value_name = "STEP", add = clap_complete::engine::ArgValueCompleter::new(cli::complete::steps))]
        from: String,
        /// The new run's id (default: a new one).
        #[arg(long)]
        new_run_id: Option<String>,
        /// New params as JSON, or @FILE (default: the source run's).
        #[arg(long, value_name = "JSON|@FILE")]
        params: Option<String>,
        /// Refuse (STATE_CONFLICT) unless the source run is at this version.
        #[arg(long)]
        expected_version: Option<u64>,
    },
    /// Move runs onto the workflow file as it is now, checked before it happens.
    ///
    /// Results carry over; steps that did not run may change freely. An
    /// incompatible change (a done step's call changed, a kept result no
    /// longer matches its schema, a done step now depends on one that had
    /// not run) is INCOMPATIBLE_UPGRADE with diagnostics in the new file,
    /// exit 1, and nothing changes.
    #[command(
        after_help = concat!("Examples:\n  savant-think upgrade review --run-id r1 --dry-run\n  savant-think upgrade review --all --rename fetch=fetch_mr\n\n", state_env!(), "\n\nMore: docs/runtime.md (Upgrade in flight).")
    )]
    Upgrade {
        #[command(flatten)]
        wf: WorkflowArg,
        /// The run to upgrade.
        #[arg(long, required_unless_present = "all", conflicts_with = "all", add = clap_complete::engine::ArgValueCompleter::new(cli::complete::runs))]
        run_id: Option<String>,
        /// Every unfinished run of the workflow (all checked first: one incompatible run changes nothing).
        #[arg(long)]
        all: bool,
        /// A step renamed in the new file: OLD=NEW (repeatable).
        #[arg(long, value_name = "OLD=NEW")]
        rename: Vec<String>,
        /// Print the plan and the diagnostics; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Allow upgrading a finished (done or failed) run.
        #[arg(long)]
        force: bool,
        /// Refuse (STATE_CONFLICT) unless the run is at this version.
        #[arg(long)]
        expected_version: Option<u64>,
        /// Output format: json (the reply, default) or, for people and CI, the plan and a refusal's diagnostics as `check` prints them (human, concise, sarif, github).
        #[arg(long, value_enum, default_value = "json")]
        format: cli::FormatArg,
    },
    /// Read, list, delete, restore, prune or repair run state.
    #[command(after_help = concat!("Examples:\n  savant-think state list\n  savant-think state get review --run-id r1\n  savant-think state repair review --run-id r1 --apply\n\n", state_env!(), "\n\nMore: docs/runtime.md, docs/deploy.md."))]
    State {
        #[command(subcommand)]
        command: cli::state::StateCommand,
    },
    /// Validate a response against a named or inline schema, or a workflow file.
    #[command(
        after_help = "Examples:\n  savant-think validate --schema MergeRequestV1 --response @mr.json\n  savant-think validate --schema '{\"type\": \"object\"}' --response '{}'\n  savant-think validate --workflow review_v1\n\nMore: docs/runtime.md."
    )]
    Validate {
        /// A schema name (schemas/<Name>.json) or an inline JSON Schema.
        #[arg(long, required_unless_present = "workflow")]
        schema: Option<String>,
        /// The response as JSON, @FILE or - (required with --schema).
        #[arg(long, value_name = "JSON|@FILE|-", required_unless_present = "workflow")]
        response: Option<String>,
        /// A workflow id or file: print its diagnostics as JSON.
        #[arg(long, conflicts_with = "schema")]
        workflow: Option<String>,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Print a driver prompt (default: the latest).
    ///
    /// The bundled prompts are built in; a project's prompts/prompts.yml adds
    /// versions and overrides bundled ones by name.
    #[command(
        after_help = "Examples:\n  savant-think prompt\n  savant-think prompt code_review\n  savant-think prompt --list\n\nMore: docs/mcp.md (driver prompts)."
    )]
    Prompt {
        /// The version (e.g. stable, code_review). Default: the latest.
        #[arg(conflicts_with = "list")]
        version: Option<String>,
        /// List the versions and where each comes from (bundled or project).
        #[arg(long)]
        list: bool,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// List, read or graph the workflows under <root>/workflows.
    #[command(
        after_help = "Examples:\n  savant-think workflows list\n  savant-think workflows read review_v1\n\nMore: docs/runtime.md."
    )]
    Workflows {
        #[command(subcommand)]
        command: WorkflowsCommand,
    },
    /// Serve the engine as an MCP server: stdio (default) or Streamable HTTP at /mcp.
    ///
    /// Logs go to stderr, at the level in LOG_LEVEL (default `info,rmcp=warn`: one line per call).
    #[command(
        after_help = concat!("Examples:\n  savant-think serve\n  savant-think serve --http 127.0.0.1:7331\n  SAVANT_THINK_TOKEN=s3cret savant-think serve --http 0.0.0.0:7331 --allowed-host myhost\n\n", state_env!(traces), "\n  SAVANT_THINK_TOKEN  the bearer token of --http (same as --token)\n  LOG_LEVEL           log level on stderr (default info,rmcp=warn)\n  LOG_FORMAT          text or json log lines (same as --log-format)\n\nMore: docs/mcp.md, docs/deploy.md.")
    )]
    #[cfg(feature = "mcp")]
    Serve(cli::serve::ServeArgs),
    /// Open the run inspector: runs as live DAGs in a browser, on 127.0.0.1 (docs/inspector.md).
    #[command(visible_alias = "inspect", after_help = concat!("Examples:\n  savant-think ui --open\n  savant-think ui --port 0 --read-only\n\n", state_env!(), "\n\nMore: docs/inspector.md."))]
    #[cfg(feature = "mcp")]
    Ui(cli::ui::UiArgs),
    #[cfg(feature = "agent")]
    Exec(cli::exec::ExecArgs),
    /// Pursue a goal with a model (Ollama, OpenAI-compatible, Reasoning API), one action per step.
    ///
    /// Each step the model answers one JSON action: call a tool, reason, finish or give up.
    #[cfg(feature = "agent")]
    Run(cli::run::RunArgs),
    #[cfg(feature = "agent")]
    Tools(cli::tools::ToolsArgs),
    /// Rewrite the original system's workflows into the current language (docs/migrating.md in the savant-think repository).
    Migrate(cli::migrate::MigrateArgs),
    /// Run a workflow's unit tests (`tests/**/*.test.yaml`): mocked tool results, expected outcomes.
    ///
    /// Exit status: 0 when every test passed, 1 when one failed or could not
    /// run, 2 on a usage error.
    Test(cli::test::TestArgs),
    /// Print the JSON Schema (draft-07) of the workflow format, for editors.
    ///
    /// Point yaml-language-server at it with a modeline:
    /// `# yaml-language-server: $schema=<path>/editor/workflow.schema.json`.
    #[command(
        after_help = "Examples:\n  savant-think schema > workflow.schema.json\n  savant-think schema --test-file > test.schema.json\n\nMore: docs/editors.md."
    )]
    Schema {
        /// The schema of test files (`*.test.yaml`, editor/test.schema.json) instead.
        #[arg(long)]
        test_file: bool,
    },
    /// Run the language server on stdin/stdout (diagnostics, hover, definition, completion, quick fixes).
    ///
    /// Editors start it themselves; see docs/editors.md in the savant-think repository.
    #[command(
        after_help = "Examples:\n  savant-think lsp   # started by the editor, not by hand\n\nMore: docs/editors.md."
    )]
    Lsp,
    /// Print the project root and how it was found.
    ///
    /// The root is --root, else $SAVANT_PATH, else the nearest directory at or
    /// above PATH (default: the current directory) that holds savant-think.toml,
    /// else the nearest that holds a workflows/ directory, else the current
    /// directory. workflows/, schemas/, prompts/ and .savant/state/ live there.
    #[command(
        after_help = "Examples:\n  savant-think root\n  savant-think root workflows/team/review.yaml\n\nMore: README.md (The project root)."
    )]
    Root {
        /// Start the search here (a file or directory). Default: the current directory.
        path: Option<PathBuf>,
        /// Use this root (it must be a directory): the command then only confirms it.
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// These complete subcommands and flags. Dynamic completions also offer
    /// the project's workflow ids, run ids and step ids: register them with
    /// `source <(COMPLETE=bash savant-think)` (or COMPLETE=zsh / fish) instead.
    #[command(
        after_help = "Examples:\n  savant-think completions bash > ~/.local/share/bash-completion/completions/savant-think\n  savant-think completions zsh > \"${fpath[1]}/_savant-think\"\n  savant-think completions fish > ~/.config/fish/completions/savant-think.fish\n  echo 'source <(COMPLETE=bash savant-think)' >> ~/.bashrc   # dynamic: workflow, run and step ids\n\nMore: README.md."
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `savant-think man > savant-think.1`.
    #[command(
        after_help = "Examples:\n  savant-think man > savant-think.1 && man ./savant-think.1\n\nMore: README.md."
    )]
    Man,
    /// Call any engine tool by name (`think_plan` or `think.plan`) with JSON input.
    #[command(
        after_help = "Examples:\n  savant-think call think_workflows_list --input '{}'\n  savant-think call think.debug --input '{\"workflow\": \"review_v1\", \"run_id\": \"r1\"}'\n\nMore: docs/mcp.md (every tool)."
    )]
    Call {
        /// The tool's name, e.g. think_plan (think.plan works too).
        tool: String,
        /// The tool's arguments as a JSON object, @FILE, or - for stdin.
        #[arg(long, value_name = "JSON|@FILE|-", default_value = "{}")]
        input: String,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum WorkflowsCommand {
    /// List workflows with their names and whether they check clean.
    List {
        /// Only ids containing this text.
        #[arg(long)]
        filter: Option<String>,
        /// Project root (default: discovered, see `savant-think root`).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Print a workflow's YAML.
    Read {
        #[command(flatten)]
        wf: WorkflowArg,
    },
    /// The plan graph as JSON.
    Graph {
        #[command(flatten)]
        wf: WorkflowArg,
    },
}

/// `check` alone, parsed with its own arguments only: building every
/// subcommand's parser touches several MiB of code, a large part of a
/// small `check`'s peak memory (issue 48.3). Used only when it parses;
/// anything else (`--help`, a usage error) goes through [`Cli`], so what
/// is printed is the whole command line's.
#[derive(Parser)]
#[command(name = "savant-think")]
struct CheckCli {
    #[command(subcommand)]
    command: CheckOnly,
}

#[derive(Subcommand)]
enum CheckOnly {
    Check(cli::check::CheckArgs),
}

/// `savant-think check …` as [`Cli`] would read it, when the check's own
/// parser accepts it.
fn check_args() -> Option<cli::check::CheckArgs> {
    std::env::args_os().nth(1).filter(|a| a == "check")?;
    let CheckOnly::Check(args) = CheckCli::try_parse().ok()?.command;
    Some(args)
}

/// `exec` alone, as [`CheckCli`] is `check` alone: building every
/// subcommand's parser costs an `exec` more instructions than a step
/// (issue 48.1). Used only when it parses.
#[cfg(feature = "agent")]
#[derive(Parser)]
#[command(name = "savant-think")]
struct ExecCli {
    #[command(subcommand)]
    command: ExecOnly,
}

#[cfg(feature = "agent")]
#[derive(Subcommand)]
enum ExecOnly {
    Exec(cli::exec::ExecArgs),
}

/// `savant-think exec …` as [`Cli`] would read it, when the exec's own
/// parser accepts it.
#[cfg(feature = "agent")]
fn exec_args() -> Option<cli::exec::ExecArgs> {
    std::env::args_os().nth(1).filter(|a| a == "exec")?;
    let ExecOnly::Exec(args) = ExecCli::try_parse().ok()?.command;
    Some(args)
}

fn main() -> ExitCode {
    // `COMPLETE=bash savant-think` (the shell's registration): complete and exit.
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command).complete();
    if let Some(args) = check_args() {
        cli::env::test_clock();
        return cli::check::run(args);
    }
    #[cfg(feature = "agent")]
    if let Some(args) = exec_args() {
        cli::env::test_clock();
        return ExitCode::from(cli::exec::main(args));
    }
    let cli = Cli::parse();
    cli::env::test_clock();
    match cli.command {
        Command::Check(args) => cli::check::run(args),
        Command::Init(args) => match std::env::current_dir() {
            Ok(cwd) => cli::init::run(args, &cwd),
            Err(e) => fail(format!("cannot read the working directory: {e}")),
        },
        Command::Rule(args) => cli::check::rule(args),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            // Into memory first: a closed pipe (`| head`) must not panic.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "savant-think", &mut script);
            let _ = std::io::stdout().lock().write_all(&script);
            ExitCode::SUCCESS
        }
        Command::Man => {
            let command = <Cli as clap::CommandFactory>::command();
            let mut page = Vec::new();
            match clap_mangen::Man::new(command).render(&mut page) {
                Ok(()) => {
                    let _ = std::io::stdout().lock().write_all(&page);
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format!("cannot render the man page: {e}")),
            }
        }
        #[cfg(feature = "mcp")]
        Command::Serve(args) => cli::serve::run(args),
        #[cfg(feature = "mcp")]
        Command::Ui(args) => cli::ui::run(args),
        Command::Migrate(args) => ExitCode::from(args.run()),
        Command::Test(args) => cli::test::main(args),
        #[cfg(feature = "agent")]
        Command::Exec(args) => ExitCode::from(cli::exec::main(args)),
        #[cfg(feature = "agent")]
        Command::Run(args) => ExitCode::from(cli::run::main(args)),
        #[cfg(feature = "agent")]
        Command::Tools(args) => ExitCode::from(cli::tools::main(args)),
        Command::Lsp => match savant_think::lsp::run_stdio(cli::env::savant_path(), cli::env::overrides()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => fail(m),
        },
        Command::Schema { test_file } => {
            if test_file {
                print!("{}", savant_think::testing::schema::test_file_schema_text());
                return ExitCode::SUCCESS;
            }
            print!("{}", savant_think::schema::workflow_schema_text());
            ExitCode::SUCCESS
        }
        other => cli::dispatch::run_engine(other),
    }
}

pub(crate) fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every argument of subcommand `name` as clap holds it (names,
    /// defaults, value parsers, conflicts), the subcommand built as in a parse.
    fn args_of(mut top: clap::Command, name: &str) -> Vec<String> {
        top.build();
        let sub = top.find_subcommand(name).expect("the subcommand");
        sub.get_arguments().map(|a| format!("{a:?}")).collect()
    }

    #[test]
    fn the_check_parser_has_exactly_the_check_subcommands_arguments() {
        let full = args_of(Cli::command(), "check");
        assert!(full.iter().any(|a| a.contains("deny_warnings")), "{full:?}");
        assert_eq!(args_of(CheckCli::command(), "check"), full);
    }

    #[cfg(feature = "agent")]
    #[test]
    fn the_exec_parser_has_exactly_the_exec_subcommands_arguments() {
        let full = args_of(Cli::command(), "exec");
        assert!(full.iter().any(|a| a.contains("dry_run")), "{full:?}");
        assert_eq!(args_of(ExecCli::command(), "exec"), full);
        let parse = |argv: &[&str]| ExecCli::try_parse_from(argv).map(|c| c.command);
        let Ok(ExecOnly::Exec(args)) = parse(&["savant-think", "exec", "cri", "--dry-run", "--json"]) else {
            panic!("a plain exec is the exec parser's");
        };
        assert!(args.dry_run && args.json && args.workflow == "cri");
        for argv in [&["savant-think", "exec", "--help"][..], &["savant-think", "exec", "w", "--jobs", "0"]] {
            assert!(parse(argv).is_err(), "{argv:?}");
        }
    }

    #[test]
    fn what_the_check_parser_refuses_is_left_to_the_whole_command_line() {
        let parse = |argv: &[&str]| CheckCli::try_parse_from(argv).map(|c| c.command);
        let Ok(CheckOnly::Check(_)) = parse(&["savant-think", "check", "--format", "json", "w.yaml"]) else {
            panic!("a plain check is the check parser's");
        };
        // Help, usage errors and other commands print what `Cli` prints.
        for argv in [
            &["savant-think", "check", "--help"][..],
            &["savant-think", "check", "--nope"],
            &["savant-think", "next"],
        ] {
            assert!(parse(argv).is_err(), "{argv:?}");
        }
        assert!(matches!(
            Cli::try_parse_from(["savant-think", "check", "w.yaml"]).map(|c| c.command),
            Ok(Command::Check(_))
        ));
    }
}
