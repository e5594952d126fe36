//! `savant-think test`: its arguments, output and exit status. The work is
//! `savant_think::testing`.

use savant_think::report::HumanOptions;
use savant_think::testing::report::{self, TestFormat};
use savant_think::testing::suite::{self, Options};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `savant-think test` (its help text is below).
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct TestArgs {
    /// Test files or directories (searched for *.test.yaml). Default: <root>/tests.
    pub paths: Vec<PathBuf>,
    /// The project root (default: discovered as for the other commands).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// Run only the tests whose name contains TEXT (case-insensitive).
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Threads to run tests on (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub jobs: usize,
}

const AFTER_HELP: &str = "\
Each test drives the real engine in memory with the mocked tool results: no
server, no model, no network. A step that is reached with no mock is an error
naming it; a test with no `expect` is an error. Output is in file order, then
test order, whatever order the tests ran in. See docs/testing.md.

Exit status: 0 when every test passed; 1 when a test failed or could not run,
or a test file has errors; 2 on a usage error (bad root, unreadable
savant-think.toml).

Examples:
  savant-think test
  savant-think test tests/bundled/release_notes.test.yaml --filter draft
  savant-think test --format junit > junit.xml";

/// `--format` of `test`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// PASS / FAIL / ERROR per test; each failing expectation as a diff with its JSON path.
    Human,
    /// One JSON object: {version, files, diagnostics, io_errors, tests, summary}.
    Json,
    /// JUnit XML (one testsuite per test file), for CI dashboards.
    Junit,
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(2)
}

/// Runs the command.
pub fn main(args: TestArgs) -> ExitCode {
    let root = match crate::cli::env::root(args.root.as_deref()) {
        Ok(r) => r,
        Err(m) => return usage(m),
    };
    let options = Options { root, paths: args.paths.clone(), filter: args.filter.clone(), jobs: args.jobs };
    let report = match suite::run(&options) {
        Ok(r) => r,
        Err(e) => return usage(e.to_json()),
    };
    let format = match args.format {
        FormatArg::Human => TestFormat::Human,
        FormatArg::Json => TestFormat::Json,
        FormatArg::Junit => TestFormat::Junit,
    };
    let text = report::render(&report, format, &HumanOptions::default());
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if report.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
