//! A test suite: finding test files (`tests/**/*.test.yaml` under the root,
//! or the paths given), reading and checking them, running their tests in
//! parallel over one in-memory engine, and comparing each outcome with its
//! `expect`. Results come back in file order, then test order, whatever
//! order the threads finished in.

use crate::config::EngineConfig;
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::runtime::workflow::CompiledWorkflow;
use crate::runtime::{Engine, EngineError};
use crate::source::{Limits, SourceFile, Span};
use crate::state::MemStore;
use crate::testing::format::{self, Reply, TestCase, TestFile};
use crate::testing::matching::{Mismatch, diff};
use crate::testing::run::{Outcome, TestError, run_test};
use crate::testing::{check, check::workflow_of};
use crate::workspace;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The project root (workflows/, schemas/, savant-think.toml).
    pub root: PathBuf,
    /// Test files or directories; none: `<root>/tests`.
    pub paths: Vec<PathBuf>,
    /// Only tests whose name contains this (case-insensitive).
    pub filter: Option<String>,
    /// Threads; 0: one per core.
    pub jobs: usize,
}

/// One test file as read: its text, tests, diagnostics and workflow.
pub struct LoadedFile {
    /// The file, its path as shown.
    pub source: SourceFile,
    /// Its path on disk.
    pub path: PathBuf,
    /// What could be read.
    pub file: TestFile,
    /// Its problems (format, workflow, checks), sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// The workflow argument the engine resolves (a path made absolute).
    pub workflow: Option<String>,
    /// The workflow, compiled.
    pub compiled: Option<Arc<CompiledWorkflow>>,
}

impl LoadedFile {
    /// True when a diagnostic of error severity lies outside every test (the
    /// whole file is unusable) or inside `test`'s mapping.
    fn blocks(&self, test: Option<&TestCase>) -> Option<&Diagnostic> {
        // A test with nothing to assert still runs (`--update` writes its expect); it is an error after.
        let blocking = |d: &&Diagnostic| d.severity == Severity::Error && d.code != Code::TestNoExpect;
        self.diagnostics.iter().filter(blocking).find(|d| {
            let inside =
                |t: &TestCase| t.span.start <= d.span.start && d.span.end <= t.span.end.max(t.span.start + 1);
            let in_any = self.file.tests.iter().any(inside);
            !in_any || test.is_some_and(inside)
        })
    }
}

/// How a test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every expectation held.
    Passed,
    /// An expectation did not hold.
    Failed,
    /// The test could not be run (a broken test file, a missing mock, bad params).
    Error,
}

/// One test's result.
#[derive(Clone, Debug, Serialize)]
pub struct TestResult {
    /// The test file, as shown.
    pub file: String,
    /// The test's name.
    pub name: String,
    /// Its line in the test file.
    pub line: usize,
    /// Passed, failed or error.
    pub verdict: Verdict,
    /// Each expectation that did not hold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<Mismatch>,
    /// Why it could not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TestError>,
    /// What happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Wall time, microseconds (not in the JSON: it would make reports differ).
    #[serde(skip)]
    pub micros: u128,
    /// Index of its file in the report's files.
    #[serde(skip)]
    pub file_index: usize,
    /// Index of the test in its file.
    #[serde(skip)]
    pub test_index: usize,
}

/// Everything a run of the suite found.
pub struct Report {
    /// The test files read, in order.
    pub files: Vec<LoadedFile>,
    /// Files or directories that could not be read.
    pub io_errors: Vec<workspace::IoError>,
    /// The results of the tests selected, in file then test order.
    pub results: Vec<TestResult>,
    /// The `--filter` the tests were selected with, if any.
    pub filter: Option<String>,
}

impl Report {
    /// True when every selected test passed and no file had an error.
    pub fn passed(&self) -> bool {
        let file_error = |f: &LoadedFile| f.diagnostics.iter().any(|d| d.severity == Severity::Error);
        self.unmatched_filter().is_none()
            && self.io_errors.is_empty()
            && self.results.iter().all(|r| r.verdict == Verdict::Passed)
            && !self.files.iter().any(file_error)
    }

    /// The filter, when it selected no test of files that have some: a
    /// typo in CI is a failure, not a pass of nothing.
    pub fn unmatched_filter(&self) -> Option<&str> {
        self.filter.as_deref().filter(|_| self.results.is_empty() && self.test_count() > 0)
    }

    /// How many tests the files have, selected or not.
    pub fn test_count(&self) -> usize {
        self.files.iter().map(|f| f.file.tests.len()).sum()
    }

    /// How many tests passed, failed, and could not run.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |v| self.results.iter().filter(|r| r.verdict == v).count();
        (n(Verdict::Passed), n(Verdict::Failed), n(Verdict::Error))
    }
}

/// An engine over `root` with its `savant-think.toml` and runs kept in memory.
pub fn memory_engine(root: &Path) -> Result<Engine, EngineError> {
    let config = EngineConfig::load(root)?;
    Ok(Engine::with_store(root.to_path_buf(), config, Box::new(MemStore::new())))
}

/// True for `*.test.yaml` / `*.test.yml`.
pub fn is_test_file(p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.ends_with(".test.yaml") || name.ends_with(".test.yml")
}

/// The test files: the paths given (directories searched), or `<root>/tests`.
pub fn discover(root: &Path, paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<workspace::IoError>) {
    let default = [root.join("tests")];
    let given = if paths.is_empty() { &default[..] } else { paths };
    if paths.is_empty() && !default[0].is_dir() {
        return (Vec::new(), Vec::new());
    }
    let (files, errors) = workspace::collect_files(given);
    let explicit = |f: &PathBuf| paths.iter().any(|p| p == f);
    (files.into_iter().filter(|f| is_test_file(f) || explicit(f)).collect(), errors)
}

/// The workflow argument for the engine: a path from the test file's
/// directory when one is there, else as written (an id, or a path from the root).
fn workflow_arg(test_file: &Path, written: &str) -> String {
    let looks_like_path = written.ends_with(".yaml") || written.ends_with(".yml") || written.contains('/');
    if looks_like_path && let Some(dir) = test_file.parent() {
        let candidate = dir.join(written);
        if candidate.is_file() {
            return std::path::absolute(&candidate).unwrap_or(candidate).display().to_string();
        }
    }
    written.to_owned()
}

/// Reads, parses and checks one test file (result files read, confined to
/// the root). Suppression comments are not applied: the caller does, as
/// `check` does for workflows.
pub fn load_file(engine: &Engine, path: &Path, display: String) -> Result<LoadedFile, workspace::IoError> {
    let (mut source, read_diags) = workspace::read_source(path, &Limits::default())?;
    source.path = display;
    Ok(load_source(engine, path, source, read_diags))
}

/// [`load_file`] of a text already read (an editor's buffer): `path` is
/// where the file is (relative paths in it are from its directory).
pub fn load_source(
    engine: &Engine,
    path: &Path,
    source: SourceFile,
    read_diags: Vec<Diagnostic>,
) -> LoadedFile {
    let limits = Limits::default();
    let mut diagnostics = read_diags;
    let mut loaded = LoadedFile {
        source,
        path: path.to_path_buf(),
        file: TestFile::default(),
        diagnostics: Vec::new(),
        workflow: None,
        compiled: None,
    };
    if diagnostics.is_empty() {
        let (mut file, parse_diags) = format::parse(&loaded.source, &limits);
        diagnostics.extend(parse_diags);
        read_result_files(engine.root(), path, &mut file, &mut diagnostics);
        if let Some(name) = &file.workflow {
            let arg = workflow_arg(path, &name.value);
            match workflow_of(engine, name, &arg) {
                Ok(cw) => {
                    diagnostics.extend(check::check(&file, &cw, engine));
                    loaded.compiled = Some(cw);
                }
                Err(d) => diagnostics.push(d),
            }
            loaded.workflow = Some(arg);
        }
        loaded.file = file;
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.code));
    loaded.diagnostics = diagnostics;
    loaded
}

/// The diagnostics of a test file's text (an editor's buffer) in the
/// project at `root`, over an engine made for the call.
pub fn check_text(root: &Path, path: &Path, source: SourceFile) -> Vec<Diagnostic> {
    match memory_engine(root) {
        Ok(engine) => load_source(&engine, path, source, Vec::new()).diagnostics,
        Err(e) => vec![Diagnostic::new(
            Code::TestUnknownWorkflow,
            Span::point(0),
            format!("the project cannot be loaded: {e}"),
        )],
    }
}

fn read_result_files(root: &Path, test_file: &Path, file: &mut TestFile, out: &mut Vec<Diagnostic>) {
    let dir = test_file.parent().unwrap_or(Path::new("."));
    for test in &mut file.tests {
        for case in test.mocks.iter_mut().flat_map(|m| m.cases.iter_mut()) {
            let Reply::ResultFile(f) = &case.reply else { continue };
            let span = f.span;
            match read_result_file(root, &dir.join(&f.value)) {
                Ok(v) => case.reply = Reply::Result(v),
                Err(message) => out.push(
                    Diagnostic::new(
                        Code::IoError,
                        span,
                        format!("the result file `{}` cannot be used: {message}", f.value),
                    )
                    .with_help("give a JSON or YAML file inside the project root, relative to the test file"),
                ),
            }
        }
    }
}

fn read_result_file(root: &Path, path: &Path) -> Result<Value, String> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let path = crate::fsx::confine_file(root, &absolute).map_err(|e| e.reason())?;
    let limits = Limits::default();
    let (src, diags) = workspace::read_source(&path, &limits).map_err(|e| e.message)?;
    if let Some(d) = diags.first() {
        return Err(d.message.clone());
    }
    if let Ok(v) = serde_json::from_str::<Value>(&src.text) {
        return Ok(v);
    }
    let parsed = crate::syntax::yaml::parse(&src, &limits);
    match (parsed.root, parsed.diagnostics.first()) {
        (_, Some(d)) => Err(format!("not JSON, and not YAML: {}", d.message)),
        (Some(root), None) => Ok(root.to_json()),
        (None, None) => Ok(Value::Null),
    }
}

/// Compares an outcome with a test's `expect`: every difference, in the
/// order `expect` lists them.
pub fn evaluate(test: &TestCase, outcome: &Outcome) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let Some(e) = &test.expect else { return out };
    if let Some(s) = &e.status
        && s.value != outcome.status
    {
        let why = match (&outcome.failure, outcome.tool_failures.first()) {
            (Some(f), _) => format!(" (the run failed: {f})"),
            (None, Some(t)) => format!(" (the tool of `{}` failed: {})", t.step_id, t.error),
            _ if !outcome.waiting.is_empty() => format!(" (it waits: {})", outcome.waiting.join("; ")),
            _ => String::new(),
        };
        out.push(Mismatch {
            path: "status".into(),
            expected: Some(json!(s.value)),
            actual: Some(json!(outcome.status)),
            message: format!("the run is {}, not {}{why}", outcome.status, s.value),
        });
    }
    let status_of = |id: &str| {
        outcome.steps.iter().find(|s| s.id == id).map_or("unknown".to_owned(), |s| s.status.to_string())
    };
    for (list, actual, key, verb) in
        [(&e.ran, &outcome.ran, "ran", "run"), (&e.skipped, &outcome.skipped, "skipped", "been skipped")]
    {
        for s in list.iter().flatten().filter(|s| !actual.contains(&s.value)) {
            out.push(Mismatch {
                path: key.into(),
                expected: Some(json!(s.value)),
                actual: Some(json!(actual)),
                message: format!("`{}` should have {verb}, but it is {}", s.value, status_of(&s.value)),
            });
        }
    }
    for x in &e.inputs {
        let path = format!("inputs{}", crate::testing::matching::segment(&x.name));
        diff(&x.value, outcome.input(&x.name), x.exact, &path, &mut out);
    }
    for x in &e.captures {
        let path = format!("captures{}", crate::testing::matching::segment(&x.name));
        diff(&x.value, outcome.captures.get(&x.name), x.exact, &path, &mut out);
    }
    out
}

fn error_result(d: &Diagnostic) -> TestError {
    TestError {
        code: d.code.as_str().to_owned(),
        message: d.message.clone(),
        help: d.help.clone(),
        step_id: None,
    }
}

/// Runs the suite: every test file found, the tests the filter selects.
pub fn run(options: &Options) -> Result<Report, EngineError> {
    let engine = memory_engine(&options.root)?;
    let (paths, io_errors) = discover(&options.root, &options.paths);
    let mut io_errors = io_errors;
    let mut files = Vec::new();
    for p in &paths {
        let display = p.strip_prefix(&options.root).unwrap_or(p).display().to_string();
        match load_file(&engine, p, display) {
            Ok(mut f) => {
                // `# savant-think: ignore[CODE]` comments work here as in workflows.
                f.diagnostics =
                    crate::check::suppress::apply(&f.source, std::mem::take(&mut f.diagnostics), &[]);
                files.push(f);
            }
            Err(e) => io_errors.push(e),
        }
    }
    let results = run_loaded(&engine, &files, options.filter.as_deref(), options.jobs);
    Ok(Report { files, io_errors, results, filter: options.filter.clone() })
}

/// Runs the selected tests of loaded files over `engine`, in parallel.
pub fn run_loaded(
    engine: &Engine,
    files: &[LoadedFile],
    filter: Option<&str>,
    jobs: usize,
) -> Vec<TestResult> {
    let filter = filter.map(str::to_lowercase);
    let mut work = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        for (ti, t) in f.file.tests.iter().enumerate() {
            if filter.as_ref().is_none_or(|needle| t.name.value.to_lowercase().contains(needle)) {
                // The test's number names its run (`test-N`).
                work.push((work.len(), fi, ti));
            }
        }
    }
    let jobs = if jobs == 0 { crate::parallel::cores() } else { jobs };
    crate::parallel::map_in_order(&work, jobs, |&(n, fi, ti)| run_one(engine, &files[fi], fi, ti, n))
}

fn run_one(engine: &Engine, f: &LoadedFile, fi: usize, ti: usize, n: usize) -> TestResult {
    let test = &f.file.tests[ti];
    let started = Instant::now();
    let mut r = TestResult {
        file: f.source.path.clone(),
        name: test.name.value.clone(),
        line: f.source.line_col(test.name.span.start as usize).line,
        verdict: Verdict::Error,
        mismatches: Vec::new(),
        error: None,
        outcome: None,
        micros: 0,
        file_index: fi,
        test_index: ti,
    };
    if let Some(d) = f.blocks(Some(test)) {
        r.error = Some(error_result(d));
    } else if let Some(workflow) = &f.workflow {
        // A panic is a bug of savant-think's, not of the test: the test
        // errs with INTERNAL and the others still run and report.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_test(engine, workflow, test, &format!("test-{n}"))
        }));
        match ran.unwrap_or_else(|_| Err(TestError::panicked())) {
            Ok(outcome) => {
                r.mismatches = evaluate(test, &outcome);
                r.verdict = if r.mismatches.is_empty() { Verdict::Passed } else { Verdict::Failed };
                if test.expect.as_ref().is_none_or(|e| e.is_empty()) {
                    r.verdict = Verdict::Error;
                    r.error = f.diagnostics.iter().find(|d| d.code == Code::TestNoExpect).map(error_result);
                }
                r.outcome = Some(outcome);
            }
            Err(e) => r.error = Some(e),
        }
    }
    r.micros = started.elapsed().as_micros();
    r
}

/// The span of a test's `expect` block, if it has one.
pub fn expect_span(test: &TestCase) -> Option<Span> {
    test.expect.as_ref().map(|e| e.span)
}
