//! The `savant-think` command line: clap definitions, dispatch, exit codes.
//! No workflow semantics live here.

use clap::{Parser, Subcommand};
use savant_think::check::{Config, ToolManifest};
use savant_think::report::{self, FileReport, Format, HumanOptions, Summary};
use savant_think::workspace;
use std::io::{IsTerminal, Write};
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
    /// Check workflow files for errors without running them.
    ///
    /// Exit status: 0 when no errors were found (warnings are allowed), 1 when
    /// errors were found (or warnings, with --deny-warnings), 2 on a usage or
    /// I/O error.
    #[command(
        after_help = "Examples:\n  savant-think check\n  savant-think check workflows/review.yaml --format json\n  savant-think check --format github --deny-warnings\n  savant-think check --tools tools.json workflows/"
    )]
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to check; directories are searched recursively
    /// for *.yaml and *.yml. Default: <root>/workflows.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Exit with status 1 when there are warnings, not only errors.
    #[arg(long)]
    deny_warnings: bool,
    /// A tool manifest (JSON or YAML: an MCP tools/list result, a list of
    /// tool names, or a mapping name → input schema). Enables UNKNOWN_TOOL.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// Directory of named success schemas (<Name>.json). Default: <root>/schemas.
    #[arg(long, value_name = "DIR")]
    schemas: Option<PathBuf>,
    /// Project root. Default: $SAVANT_PATH, else the current directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Refuse files larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    max_file_size: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => run_check(args),
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

fn run_check(args: CheckArgs) -> ExitCode {
    let root = workspace::root(args.root.as_deref());
    let mut config = Config::default();
    config.limits.max_file_bytes = args.max_file_size;
    config.schemas = workspace::load_schemas(&args.schemas.clone().unwrap_or_else(|| root.join("schemas")));
    if let Some(path) = &args.tools {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return fail(format!("cannot read tool manifest {}: {e}", path.display())),
        };
        match ToolManifest::parse(&text) {
            Ok(m) => config.tools = Some(m),
            Err(e) => return fail(format!("tool manifest {}: {e}", path.display())),
        }
    }
    let paths = if args.paths.is_empty() { vec![root.join("workflows")] } else { args.paths.clone() };
    let (files, mut io_errors) = workspace::collect_files(&paths);
    let mut checked = Vec::new();
    for f in &files {
        match workspace::check_file(f, &config) {
            Ok(r) => checked.push(r),
            Err(e) => io_errors.push(e),
        }
    }
    let reports: Vec<FileReport> =
        checked.iter().map(|(source, diagnostics)| FileReport { source, diagnostics }).collect();
    let color = args.format == Format::Human
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let width = terminal_width();
    // With nothing checked because of I/O errors, a human summary would only mislead.
    if !(args.format == Format::Human && checked.is_empty() && !io_errors.is_empty()) {
        let out = report::render(args.format, &reports, &HumanOptions { color, width });
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`| head`) is not an error worth a panic.
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
    for e in &io_errors {
        eprintln!("error: {e}");
    }
    if !io_errors.is_empty() {
        return ExitCode::from(2);
    }
    if files.is_empty() {
        eprintln!("warning: no *.yaml or *.yml files found in {}", display_paths(&paths));
    }
    let summary = Summary::from_reports(&reports);
    if summary.errors > 0 || (args.deny_warnings && summary.warnings > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&w: &usize| w >= 40).unwrap_or(100)
}
