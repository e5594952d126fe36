//! Command-line glue of the binary, per command: clap types, the process
//! environment (read here and handed to the library as values), logging, the
//! async runtime, output and exit status. The library below knows none of it.

pub mod check;
pub mod complete;
pub mod dispatch;
pub mod env;
#[cfg(feature = "agent")]
pub mod exec;
pub mod init;
pub mod inspect;
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
