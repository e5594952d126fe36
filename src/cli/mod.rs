//! Command-line glue of the binary, per command: clap types, the process
//! environment (read here and handed to the library as values), logging, the
//! async runtime, output and exit status. The library below knows none of it.
//!
//! `dispatch.rs` turns the engine commands into engine tool calls (their
//! JSON output and exit codes) and answers `root`; `output.rs` is the leaf
//! every command prints through (colour from `--color`, `NO_COLOR`,
//! `FORCE_COLOR` / `CLICOLOR_FORCE` and the terminal; width from
//! `COLUMNS`; text or a tool's JSON reply); `env.rs` reads the environment
//! once (`SAVANT_PATH`, the state overrides, the multiplexer's lookup) and
//! opens engines with it; `logging.rs` the stderr subscriber (`LOG_LEVEL`)
//! plus the MCP client layer; `runtime.rs` the one tokio runtime set-up of
//! `serve`, `exec` and `run`. Per command: `check.rs` `check` (inputs
//! including stdin, suppressions, colour, statistics, exit status) and
//! `rule`; `migrate.rs`, `exec.rs`, `run.rs` (the model backends from
//! their environment variables), `test.rs`, `tools.rs` (`tools sync`: the
//! servers' listings into `tools.lock.json`), `upgrade.rs`, `serve.rs`,
//! `ui.rs` (`savant-think ui`: 127.0.0.1, a random token per start),
//! `state.rs` (`state get|list|delete|restore|prune|repair`), `inspect.rs`
//! the terminal side of the inspector (`state list` as a table,
//! `state get --format human`, `graph --run-id`), `init.rs` the scaffold
//! (never overwrites without `--force`; MCP client snippets), and
//! `complete.rs` dynamic shell completion (`COMPLETE=bash savant-think`).
//! This file holds `FormatArg`, `--format` as a clap value over
//! `report::Format::ALL`. Every command that opens run state ends its
//! `--help` with the environment it reads (`state_env!` in `main.rs`), and
//! every command's `--help` has an example and its doc page
//! (`tests/it/first_hour.rs`).

pub mod check;
pub mod complete;
pub mod dispatch;
pub mod env;
#[cfg(feature = "agent")]
pub mod exec;
pub mod init;
pub mod inspect;
#[cfg(feature = "mcp")]
pub mod log_json;
#[cfg(feature = "mcp")]
pub mod logging;
pub mod migrate;
pub mod output;
#[cfg(feature = "agent")]
pub mod run;
#[cfg(feature = "mcp")]
pub mod runtime;
#[cfg(feature = "mcp")]
pub mod serve;
pub mod state;
pub mod state_migrate;
pub mod test;
#[cfg(feature = "agent")]
pub mod tools;
#[cfg(feature = "mcp")]
pub mod ui;
pub mod upgrade;

use savant_think::report::Format;
use serde_json::Value;
use std::path::PathBuf;

/// A tool's arguments as the JSON `tools::call` takes: the CLI fills the
/// same typed structs the MCP tools deserialize, so both adapters share the
/// field names, the validation and the error text.
pub(crate) fn typed<A: serde::Serialize>(args: A) -> Value {
    serde_json::to_value(args).unwrap_or(Value::Null)
}

/// A workflow id or file, and the project root (most commands take both).
#[derive(clap::Args)]
pub struct WorkflowArg {
    /// A workflow id (resolved in <root>/workflows/) or a path to a file.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(complete::workflows))]
    pub workflow: String,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml, else one holding workflows/, else the current directory (see `savant-think root`).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// `--format` of `check`: [`Format`] as a clap value (names and help from
/// [`Format::name`] and [`Format::description`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatArg(pub Format);

const FORMAT_ARGS: [FormatArg; Format::ALL.len()] = {
    let mut out = [FormatArg(Format::Human); Format::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = FormatArg(Format::ALL[i]);
        i += 1;
    }
    out
};

impl clap::ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [FormatArg] {
        &FORMAT_ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.description()))
    }
}
