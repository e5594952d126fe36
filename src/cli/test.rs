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
    #[arg(conflicts_with = "replay")]
    pub paths: Vec<PathBuf>,
    /// The project root (default: discovered as for the other commands).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// Run only the tests whose name contains TEXT (case-insensitive). A
    /// filter that selects no test is a failure (exit 1), not a pass.
    #[arg(long, value_name = "TEXT", conflicts_with = "replay")]
    pub filter: Option<String>,
    /// Threads to run tests on; 0, the default, is one per core.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Rewrite the `expect` of each failing test (and of each test with none)
    /// from what actually happened, leaving the rest of the file as it is;
    /// then run the tests again and report.
    #[arg(long)]
    pub update: bool,
    /// Also report coverage per workflow: steps run and skipped, `when` seen
    /// true and false, `foreach` with zero and several items (after the
    /// human report; a `coverage` key in JSON).
    #[arg(long)]
    pub coverage: bool,
    /// With `lcov`, also write the coverage as lcov (the workflow files' line
    /// numbers) to --coverage-out. Implies --coverage.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub coverage_format: Option<CoverageFormat>,
    /// Replay a recorded run (--run-id) of WORKFLOW from the state store
    /// against the workflow as it is now, and report where it diverges (exit
    /// 1 when it does). Test files are not run.
    #[arg(long, value_name = "WORKFLOW", requires = "run_id", conflicts_with_all = ["update", "coverage", "coverage_format"])]
    pub replay: Option<String>,
    /// The run to replay (with --replay).
    #[arg(long, value_name = "ID", requires = "replay")]
    pub run_id: Option<String>,
    /// With --replay: print the run as a test file (its params, its results
    /// as mocks, what the workflow does with them as `expect`) instead.
    #[arg(long, requires = "replay")]
    pub from_run: bool,
    /// Where the lcov tracefile goes (default: lcov.info in the working
    /// directory). Implies --coverage-format lcov.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub coverage_out: Option<PathBuf>,
}

/// `--coverage-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageFormat {
    /// lcov tracefile (genhtml, Codecov, editors' coverage gutters).
    Lcov,
}

const AFTER_HELP: &str = "\
Each test drives the real engine in memory with the mocked tool results: no
server, no model, no network. A step that is reached with no mock is an error
naming it; a test with no `expect` is an error. Output is in file order, then
test order, whatever order the tests ran in. See docs/testing.md.

Exit status: 0 when every test passed; 1 when a test failed or could not run,
a test file has errors or cannot be read, or --filter selected no test; 2 on
a usage error (bad root, unreadable savant-think.toml, an unknown workflow or
run for --replay).

Examples:
  savant-think test
  savant-think test tests/hello.test.yaml --filter greets
  savant-think test --format junit > junit.xml
  savant-think test --coverage-format lcov --coverage-out lcov.info
  savant-think test --replay hello --run-id r1";

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
    if let (Some(workflow), Some(run_id)) = (&args.replay, &args.run_id) {
        if args.format == FormatArg::Junit {
            return usage("--replay reports as human or json, not junit (it runs no test)");
        }
        return replay(&root, workflow, run_id, args.from_run, args.format);
    }
    let options = Options { root, paths: args.paths.clone(), filter: args.filter.clone(), jobs: args.jobs };
    let mut report = match suite::run(&options) {
        Ok(r) => r,
        Err(e) => return usage(e.human()),
    };
    if args.update {
        let mut changed = 0;
        for (fi, f) in report.files.iter().enumerate() {
            let mine: Vec<_> = report.results.iter().filter(|r| r.file_index == fi).collect();
            let Some((text, n)) = savant_think::testing::update::update_file(f, &mine) else { continue };
            if let Err(e) = savant_think::fsx::replace_file(&f.path, text.as_bytes(), "savant-update") {
                return usage(format!("cannot write {}: {e}", f.path.display()));
            }
            let _ = writeln!(std::io::stderr(), "updated {n} test(s) in {}", f.source.path);
            changed += 1;
        }
        if changed > 0 {
            report = match suite::run(&options) {
                Ok(r) => r,
                Err(e) => return usage(e.human()),
            };
        }
    }
    let format = match args.format {
        FormatArg::Human => TestFormat::Human,
        FormatArg::Json => TestFormat::Json,
        FormatArg::Junit => TestFormat::Junit,
    };
    let lcov_out = match (args.coverage_format, &args.coverage_out) {
        (Some(CoverageFormat::Lcov), out) => Some(out.clone().unwrap_or_else(|| PathBuf::from("lcov.info"))),
        (None, Some(out)) => Some(out.clone()),
        (None, None) => None,
    };
    let coverage =
        (args.coverage || lcov_out.is_some()).then(|| savant_think::testing::coverage::collect(&report));
    let mut text = match (&coverage, format) {
        (Some(c), TestFormat::Json) => {
            let mut v = report::json_value(&report);
            v["coverage"] = serde_json::to_value(c).unwrap_or_default();
            let mut t = serde_json::to_string_pretty(&v).unwrap_or_default();
            t.push('\n');
            t
        }
        _ => report::render(&report, format, &HumanOptions::default()),
    };
    if let (Some(c), TestFormat::Human) = (&coverage, format) {
        text.push_str(&savant_think::testing::coverage::human(c));
    }
    if let (Some(c), Some(path)) = (&coverage, &lcov_out) {
        let lcov = savant_think::testing::coverage::lcov(c);
        if let Err(e) = std::fs::write(path, lcov) {
            return usage(format!("cannot write {}: {e}", path.display()));
        }
        let _ = writeln!(std::io::stderr(), "wrote the lcov coverage to {}", path.display());
    }
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if let Some(filter) = report.unmatched_filter() {
        let tests = report.test_count();
        let _ = writeln!(
            std::io::stderr(),
            "error: no test name contains `{filter}` ({tests} test(s) in {} file(s)); \
             a filter that selects nothing is not a pass",
            report.files.len()
        );
    }
    if report.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

fn replay(
    root: &std::path::Path,
    workflow: &str,
    run_id: &str,
    from_run: bool,
    format: FormatArg,
) -> ExitCode {
    use savant_think::testing::replay;
    let (engine, rec) = match recorded_run(root, workflow, run_id) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    if from_run {
        return match replay::test_file_from_run(&engine, workflow, &rec) {
            Ok((text, _)) => {
                let _ = stdout.write_all(text.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => usage(e.human()),
        };
    }
    let report = match replay::replay(&engine, workflow, &rec) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {}", e.human());
            return ExitCode::from(1);
        }
    };
    if format == FormatArg::Human {
        print_replay(&mut stdout, &report);
    } else {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        let _ = writeln!(stdout, "{text}");
    }
    if report.divergences.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The in-memory engine a replay runs in, and the run as recorded in the
/// root's state (with every input the real engine can read); a failure is
/// the usage error's exit code.
fn recorded_run(
    root: &std::path::Path,
    workflow: &str,
    run_id: &str,
) -> Result<(savant_think::Engine, savant_think::testing::replay::Recorded), ExitCode> {
    use savant_think::testing::replay;
    let config = savant_think::config::EngineConfig::load_with(root, &crate::cli::env::overrides())
        .map_err(|e| usage(format!("INVALID_CONFIG: {e}")))?;
    let store = config.state.clone().open_store(root).map_err(|e| usage(e.human()))?;
    let engine = suite::memory_engine(root).map_err(|e| usage(e.human()))?;
    let id = engine.workflow(workflow).map(|cw| cw.wf.id.clone()).map_err(|e| usage(e.human()))?;
    let mut rec = replay::read_run(&*store, &engine, &id, run_id).map_err(|e| usage(e.human()))?;
    // The engine reads the whole run (every input) through the workflow
    // version it is pinned to; failing that, the stored snapshot's inputs are all there is.
    if let Ok(real) = config.open_engine(root.to_path_buf()) {
        replay::add_inputs(&mut rec, &real, &id, run_id);
    }
    Ok((engine, rec))
}

/// A replay's report for a person: what was replayed, each divergence
/// with the recorded and the new value, and where a running run ends.
fn print_replay(out: &mut impl Write, report: &savant_think::testing::replay::ReplayReport) {
    let _ = writeln!(
        out,
        "replay of run {} of {}: {} result(s) replayed",
        report.run_id, report.workflow, report.replayed
    );
    for (n, d) in report.divergences.iter().enumerate() {
        let first = if n == 0 { " (first divergence)" } else { "" };
        let _ = writeln!(out, "  {}: {}{first}", d.code, d.message);
        for (sign, v) in [("-", &d.recorded), ("+", &d.now)] {
            if let Some(v) = v {
                let _ = writeln!(out, "      {sign} {v}");
            }
        }
    }
    if let Some(step) = &report.open_at {
        let _ = writeln!(
            out,
            "  the run is still running: its recording ends at `{step}`, which has no result yet"
        );
    }
    if report.divergences.is_empty() {
        let _ = writeln!(out, "  no divergence: the workflow as it is now does the same with these results");
    }
}
