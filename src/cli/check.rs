//! `savant-think check` and `savant-think rule`: arguments, reading the
//! inputs (files, directories, stdin), suppressions, output and exit status.

use crate::cli::env::start_dir;
use crate::cli::output::{self, ColorChoice};
use crate::fail;
use savant_think::check::{self, Config, fix, rules, suppress};
use savant_think::diagnostic::{Code, Diagnostic};
use savant_think::report::{self, FileReport, Format, HumanOptions, Summary};
use savant_think::source::{SourceFile, Span};
use savant_think::workspace;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[path = "check_files.rs"]
mod files;

use files::{TestFiles, check_paths, given_schemas, is_test_file, uses_a_schema};

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  savant-think check\n  savant-think check workflows/review.yaml --format json\n  savant-think check --format github --deny-warnings\n  savant-think check --tools tools.json workflows/\n  cat flow.yaml | savant-think check - --stdin-filename workflows/flow.yaml --format concise\n  savant-think check --diff\n  savant-think check --fix\n\nSuppress a diagnostic with `# savant-think: ignore[CODE]` at the end of its line,\nor `# savant-think: ignore-file[CODE]` for the whole file; `[check]` in\nsavant-think.toml sets ignore, per-file-ignores and deny-warnings."
)]
pub struct CheckArgs {
    /// Files or directories to check; directories are searched recursively
    /// for *.yaml and *.yml. `-` reads one workflow from stdin. Default: <root>/workflows.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = super::FormatArg(Format::Human))]
    format: super::FormatArg,
    /// Exit with status 1 when there are warnings, not only errors.
    #[arg(long)]
    deny_warnings: bool,
    /// A tool manifest (JSON or YAML: an MCP tools/list result, a list of
    /// tool names, or a mapping name → input schema). Enables UNKNOWN_TOOL.
    /// Default: `[check] tools` in savant-think.toml, if set.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// Directory of named success schemas (<Name>.json). Default: <root>/schemas.
    #[arg(long, value_name = "DIR")]
    schemas: Option<PathBuf>,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml, else one holding workflows/, else the current directory (see `savant-think root`).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Refuse files larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    max_file_size: usize,
    /// With `-`: the path to report stdin as (and to find the project root from).
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    /// Colour: auto (a terminal; NO_COLOR off, FORCE_COLOR / CLICOLOR_FORCE on), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Print how many diagnostics of each code were found, instead of the diagnostics.
    #[arg(long)]
    statistics: bool,
    /// Apply the edits that diagnostics carry (every "did you mean `X`?") to
    /// the files in place, re-check, and report what remains. With `-`, the
    /// fixed text goes to stdout and the report to stderr. `--fix --diff`
    /// shows what `--fix` would change and writes nothing (as `--diff`).
    #[arg(long, conflicts_with = "statistics")]
    fix: bool,
    /// Print the edits `--fix` would make as a unified diff and change
    /// nothing (also with `--fix`); exit 1 when there is at least one.
    #[arg(long, conflicts_with = "statistics")]
    diff: bool,
    /// Also report each unfinished run of the checked workflows that the
    /// file as it is now could not be upgraded to (INCOMPATIBLE_UPGRADE,
    /// a warning): a change that would strand runs, seen before it lands.
    #[arg(long)]
    runs: bool,
}

#[derive(clap::Args)]
pub struct RuleArgs {
    /// The code, e.g. UNRESOLVED_VAR (case does not matter).
    #[arg(required_unless_present = "all")]
    code: Option<String>,
    /// List every code with its severity and summary.
    #[arg(long, conflicts_with = "code")]
    all: bool,
}

/// `savant-think rule CODE`: the code's section of docs/checks.md.
pub fn rule(args: RuleArgs) -> ExitCode {
    let mut out = String::new();
    if args.all {
        for &code in Code::ALL {
            out.push_str(&format!(
                "{:<22} {:<8} {}\n",
                code.as_str(),
                code.severity().as_str(),
                code.summary()
            ));
        }
    } else {
        let name = args.code.unwrap_or_default().trim().to_uppercase().replace('-', "_");
        let Some(&code) = Code::ALL.iter().find(|c| c.as_str() == name) else {
            let help = savant_think::diagnostic::suggest(&name, Code::ALL.iter().map(|c| c.as_str()))
                .unwrap_or_else(|| "`savant-think rule --all` lists them".to_owned());
            return fail(format!("`{name}` is not a diagnostic code; {help}"));
        };
        out.push_str(rules::doc(code));
        out.push('\n');
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

/// One input that could not be read.
struct Unreadable {
    path: String,
    message: String,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    let mut setup = match Setup::new(&args, stdin) {
        Ok(setup) => setup,
        Err(code) => return code,
    };
    let mut found = if stdin { setup.read_stdin(&args) } else { setup.read_files(&args) };
    if args.fix || args.diff {
        let fixed = setup.fix(&args, stdin, &mut found);
        if args.diff {
            return fixed.print_diff(&found.unreadable);
        }
        fixed.report();
    }
    if args.runs && !stdin {
        stranded_runs(&setup.root, &mut found.checked);
    }
    let (out, summary) = render(&args, &found);
    write_out(&args, stdin, &found, &out);
    for u in &found.unreadable {
        eprintln!("error: {}: {}", u.path, u.message);
    }
    if !found.unreadable.is_empty() {
        return ExitCode::from(2);
    }
    setup.warn(&args, stdin, &found);
    let deny_warnings = args.deny_warnings || setup.settings.deny_warnings;
    if summary.errors > 0 || (deny_warnings && summary.warnings > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What `check` reads its inputs with: the project root, its `[check]`
/// settings, the check configuration and the lock file's own report.
struct Setup {
    root: PathBuf,
    settings: suppress::CheckSettings,
    config: Config,
    /// `tools.lock.json` as a checked file, when there is one.
    lock_report: Option<(SourceFile, Vec<Diagnostic>)>,
}

/// What was checked, what could not be read, and (when nothing was found)
/// where `check` looked and how many files `[check] exclude` skipped.
#[derive(Default)]
struct Found {
    checked: Vec<(SourceFile, Vec<Diagnostic>)>,
    unreadable: Vec<Unreadable>,
    searched: Vec<PathBuf>,
    excluded: usize,
}

impl Setup {
    /// The arguments checked against each other, the root found and its
    /// savant-think.toml, schemas, tool manifest and lock file loaded; a
    /// failure is the exit code to return.
    fn new(args: &CheckArgs, stdin: bool) -> Result<Setup, ExitCode> {
        if stdin && args.paths.len() > 1 {
            return Err(fail("`-` (stdin) cannot be combined with other paths"));
        }
        if args.stdin_filename.is_some() && !stdin {
            return Err(fail("--stdin-filename needs `-` as the path"));
        }
        let start = match (&args.stdin_filename, args.paths.first()) {
            (Some(name), _) => Some(start_dir(name)),
            (None, Some(p)) if !stdin => Some(start_dir(p)),
            _ => None,
        };
        let root = super::env::root_from(args.root.as_deref(), start.as_deref()).map_err(fail)?.path;
        let (settings, events) = match savant_think::config::EngineConfig::load(&root) {
            Ok(c) => (c.check.clone(), Some(workspace::declared_events(&c))),
            // Every command stops on a broken savant-think.toml, `check` too.
            Err(e) => return Err(fail(format!("INVALID_CONFIG: {}", e.message))),
        };
        if let Some(problem) = settings.unknown_codes().first() {
            return Err(fail(format!("INVALID_CONFIG: {}/savant-think.toml: {problem}", root.display())));
        }
        let builtins = savant_think::runtime::contracts::builtin();
        let mut config = Config { builtins, select: settings.selected(), events, ..Config::default() };
        config.limits.max_file_bytes = args.max_file_size;
        config.schemas =
            workspace::load_schemas(&args.schemas.clone().unwrap_or_else(|| root.join("schemas")));
        // --tools, else `[check] tools` (relative to the root).
        if let Some(path) = args.tools.clone().or_else(|| settings.tools_path(&root)) {
            config.tools = Some(workspace::load_manifest(&path).map_err(fail)?);
        }
        // tools.lock.json at the root (`tools sync`): the locked servers' tools.
        let lock_report = workspace::load_lock(&root).map(|(table, src, diags)| {
            config.lock = Some(std::sync::Arc::new(table));
            (src, diags)
        });
        Ok(Setup { root, settings, config, lock_report })
    }

    /// `check -`: one file read from stdin, a workflow or (by
    /// `--stdin-filename`) a test file.
    fn read_stdin(&mut self, args: &CheckArgs) -> Found {
        let mut found = Found::default();
        let name = args.stdin_filename.as_deref().unwrap_or(Path::new("-")).display().to_string();
        let cap = self.config.limits.file_cap();
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().lock().take(cap as u64 + 1).read_to_end(&mut bytes) {
            found.unreadable.push(Unreadable { path: name, message: format!("cannot read stdin: {e}") });
            return found;
        }
        let (src, read_diags) = workspace::decode_source(name, bytes, &self.config.limits);
        match args.stdin_filename.as_deref().filter(|p| is_test_file(p)) {
            // A test file's buffer (an editor's): checked against its workflow.
            Some(path) if read_diags.is_empty() => {
                let diags = savant_think::testing::suite::check_text(&self.root, path, src.clone());
                let diags = suppressed(&self.settings, &self.root, &src, diags);
                found.checked.push((src, diags));
            }
            _ => {
                self.config.workflows = workspace::load_workflows(&self.root, &self.config, Some(&[&src]));
                let (src, diags) = workspace::check_decoded(src, read_diags, &self.config);
                let diags = suppressed(&self.settings, &self.root, &src, diags);
                found.checked.push((src, diags))
            }
        }
        found
    }

    /// The files named (or the root's workflows and test files), each
    /// checked once, in order.
    fn read_files(&mut self, args: &CheckArgs) -> Found {
        let mut found = Found::default();
        let root = &self.root;
        let paths = check_paths(&args.paths, root);
        let (mut files, io_errors) = workspace::collect_files(&paths);
        if given_schemas(&args.paths) {
            files.retain(|f| args.paths.contains(f) || uses_a_schema(f, &args.paths, root));
        }
        if args.paths.is_empty() {
            // By default the project's test files too (`savant-think test` finds the same).
            files.extend(savant_think::testing::suite::discover(root, &[]).0);
        }
        let all = files.len();
        files.retain(|f| !workspace::excluded_in(&self.settings, f, root));
        found.excluded = all - files.len();
        found.unreadable.extend(
            io_errors
                .into_iter()
                .map(|e| Unreadable { path: e.path.display().to_string(), message: e.message }),
        );
        // A workflow named directly and also found under workflows/ is checked once.
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| seen.insert(savant_think::fsx::canonical(f).unwrap_or_else(|_| f.clone())));
        // Only `--fix`, `--diff` and `--runs` read a clean file's text after its check.
        let keep_text = args.fix || args.diff || args.runs;
        self.check_files(&files, &mut found, keep_text);
        // A broken lock is reported once, as a diagnostic of the lock file.
        if let Some((src, diags)) = self.lock_report.take().filter(|(_, d)| !d.is_empty()) {
            let diags = suppressed(&self.settings, &self.root, &src, diags);
            found.checked.push((src, diags));
        }
        if files.is_empty() && found.unreadable.is_empty() {
            found.searched = paths;
        }
        found
    }

    /// Checks `files` in their order: the workflows together, the test
    /// files one by one (they share one engine). Each result is suppressed
    /// as it comes; unless `keep_text`, a workflow left with no diagnostic
    /// keeps only its path (its text let go on the thread that checked it,
    /// not held with every other file's until the report).
    fn check_files(&mut self, files: &[PathBuf], found: &mut Found, keep_text: bool) {
        let (root, settings) = (&self.root, &self.settings);
        let mut tests = TestFiles::new(root);
        // The project's workflows, for `uses:` (built when a file uses one).
        self.config.workflows = workspace::load_workflows(root, &self.config, Some(&[]));
        let workflows: Vec<PathBuf> = files.iter().filter(|f| !is_test_file(f)).cloned().collect();
        // Whether a file has a `uses:` is asked while its text is at hand.
        let limits = self.config.workflows.is_none().then_some(&self.config.limits);
        let settle = |r, limits| settle(settings, root, keep_text, limits, r);
        let mut results = workspace::check_files(&workflows, &self.config, |r| settle(r, limits));
        // A file outside workflows/ with a `uses:`, when none inside has
        // one: the table is built now, and every file checked against it.
        if let Some((src, _, _)) = results.iter().flatten().find(|(_, _, uses)| *uses) {
            let table = workspace::load_workflows(root, &self.config, Some(&[src]));
            self.config.workflows = table;
            results = workspace::check_files(&workflows, &self.config, |r| settle(r, None));
        }
        let mut results = results.into_iter();
        for f in files {
            let result = match is_test_file(f) {
                true => tests.check(f).map(|(src, diags)| {
                    let diags = suppressed(settings, root, &src, diags);
                    (src, diags, false)
                }),
                false => results.next().expect("one result per workflow file"),
            };
            match result {
                Ok((src, diags, _)) => found.checked.push((src, diags)),
                Err(e) => found
                    .unreadable
                    .push(Unreadable { path: e.path.display().to_string(), message: e.message }),
            }
        }
    }

    /// `--fix` / `--diff`: each workflow fixed until stable and re-checked;
    /// with `--fix` (not on stdin) the file is rewritten.
    fn fix(&self, args: &CheckArgs, stdin: bool, found: &mut Found) -> Fixed {
        let mut fixed = Fixed::default();
        for (source, diagnostics) in &mut found.checked {
            if is_test_file(Path::new(&source.path)) {
                continue; // The fixes are re-checked as workflows: test files are not fixed.
            }
            let ignored = workspace::ignored_in(&self.settings, Path::new(&source.path), &self.root);
            let recheck = |text: &str| {
                let fixed = SourceFile::new(source.path.clone(), text);
                let diagnostics = check::check_source(&fixed, &self.config);
                suppress::apply(&fixed, diagnostics, &ignored)
            };
            let (text, edits, left) =
                fix::fix_until_stable(&source.text, std::mem::take(diagnostics), recheck);
            *diagnostics = left;
            if edits == 0 {
                continue;
            }
            if args.diff {
                fixed.diff.push_str(&unified_diff(&source.path, &source.text, &text));
            } else if !stdin
                && let Err(e) =
                    savant_think::fsx::replace_file(Path::new(&source.path), text.as_bytes(), "savant-fix")
            {
                let message = format!("cannot write the fixes: {e}");
                found.unreadable.push(Unreadable { path: source.path.clone(), message });
                continue;
            }
            fixed.edits += edits;
            fixed.files += 1;
            *source = SourceFile::new(source.path.clone(), text);
        }
        fixed
    }

    /// The warnings and notes after the report: nothing found where
    /// `check` looked, per-file-ignores patterns that match nothing,
    /// workflows that shadow a bundled prompt.
    fn warn(&self, args: &CheckArgs, stdin: bool, found: &Found) {
        let root = &self.root;
        let searched = &found.searched;
        if !searched.is_empty() && found.excluded > 0 {
            eprintln!(
                "warning: nothing to check in {}: {} file(s) there are skipped by [check] exclude in savant-think.toml",
                display_paths(searched),
                found.excluded
            );
        } else if !searched.is_empty() {
            eprintln!("warning: no *.yaml or *.yml files found in {}", display_paths(searched));
        }
        // Patterns that match no workflow of the root (only said when checking
        // the whole root: with a few files named, most patterns match none).
        if args.paths.is_empty() && !stdin {
            let (all, _) = workspace::collect_files(&[root.join("workflows")]);
            let rel: Vec<String> = all.iter().map(|f| workspace::root_relative(f, root)).collect();
            for pattern in self.settings.unmatched_per_file_ignores(&rel) {
                eprintln!(
                    "warning: [check.per-file-ignores] pattern `{pattern}` matches no file (remove it, or fix the glob: paths are relative to {})",
                    root.display()
                );
            }
        }
        for id in shadowed_prompts(root, &found.checked) {
            eprintln!(
                "info: the workflow `{id}` shadows the bundled driver prompt `{id}`: MCP clients get the workflow for prompts/get `{id}`"
            );
        }
    }
}

/// The report in the chosen format (or `--statistics`), and its counts.
fn render(args: &CheckArgs, found: &Found) -> (String, Summary) {
    // In the machine formats an unreadable input is also a diagnostic, so a
    // run that could not read its input never looks clean.
    let io_sources: Vec<(SourceFile, Vec<Diagnostic>)> = if args.format.0 == Format::Human {
        Vec::new()
    } else {
        found
            .unreadable
            .iter()
            .map(|u| {
                let d = Diagnostic::new(Code::IoError, Span::point(0), u.message.clone())
                    .with_help("pass a path that exists and can be read");
                (SourceFile::new(u.path.clone(), ""), vec![d])
            })
            .collect()
    };
    let reports: Vec<FileReport> = found
        .checked
        .iter()
        .chain(&io_sources)
        .map(|(source, diagnostics)| FileReport { source, diagnostics })
        .collect();
    let out = if args.statistics {
        statistics(&reports)
    } else if args.format.0 == Format::Human && found.checked.is_empty() && !found.unreadable.is_empty() {
        // With nothing checked because of I/O errors, a human summary would only mislead.
        String::new()
    } else {
        report::render(
            args.format.0,
            &reports,
            &HumanOptions { color: output::color(args.color), width: output::width() },
        )
    };
    (out, Summary::from_reports(&reports))
}

/// The report on stdout; with `--fix` on stdin the fixed text goes there
/// and the report beside it, on stderr. A closed pipe (`| head`) is not an
/// error worth a panic.
fn write_out(args: &CheckArgs, stdin: bool, found: &Found, out: &str) {
    let mut stdout = std::io::stdout().lock();
    if args.fix && stdin {
        let _ = stdout.write_all(found.checked.first().map_or("", |(s, _)| s.text.as_str()).as_bytes());
        let _ = stdout.flush();
        let _ = std::io::stderr().lock().write_all(out.as_bytes());
    } else {
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

/// What `--fix` / `--diff` did.
#[derive(Default)]
struct Fixed {
    edits: usize,
    files: usize,
    diff: String,
}

impl Fixed {
    /// `--fix`: one line on stderr, like ruff's "N fixed".
    fn report(&self) {
        if self.edits > 0 {
            eprintln!("fixed {} problem(s) in {} file(s)", self.edits, self.files);
        }
    }

    /// `--diff`: the diff on stdout, a count on stderr; exit 1 when there is
    /// a fix, 2 when an input could not be read.
    fn print_diff(&self, unreadable: &[Unreadable]) -> ExitCode {
        let _ = std::io::stdout().lock().write_all(self.diff.as_bytes());
        for u in unreadable {
            eprintln!("error: {}: {}", u.path, u.message);
        }
        if self.edits > 0 {
            eprintln!("would fix {} problem(s) in {} file(s)", self.edits, self.files);
        }
        match (unreadable.is_empty(), self.edits) {
            (false, _) => ExitCode::from(2),
            (true, 0) => ExitCode::SUCCESS,
            (true, _) => ExitCode::from(1),
        }
    }
}

/// Suppressions: the file's comments, then `[check]` ignores by path.
fn suppressed(
    settings: &suppress::CheckSettings,
    root: &Path,
    source: &SourceFile,
    diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let ignored = workspace::ignored_in(settings, Path::new(&source.path), root);
    suppress::apply(source, diagnostics, &ignored)
}

/// One workflow's check as `check` keeps it: suppressed, whether it has a
/// `uses:` step (asked with `limits`, while no table is built), and its
/// text dropped unless `keep_text`, it has diagnostics, or a `uses:`.
fn settle(
    settings: &suppress::CheckSettings,
    root: &Path,
    keep_text: bool,
    limits: Option<&savant_think::source::Limits>,
    result: Result<(SourceFile, Vec<Diagnostic>), workspace::IoError>,
) -> Result<(SourceFile, Vec<Diagnostic>, bool), workspace::IoError> {
    let (mut src, diags) = result?;
    let uses = limits.is_some_and(|limits| workspace::uses_workflows(&src, limits));
    let diags = suppressed(settings, root, &src, diags);
    if !keep_text && diags.is_empty() && !uses {
        src = SourceFile::new(std::mem::take(&mut src.path), "");
    }
    Ok((src, diags, uses))
}

/// A unified diff (3 lines of context) of one file's fixes.
fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// `--statistics`: `COUNT  CODE  severity  summary` per code, most frequent first.
fn statistics(reports: &[FileReport<'_>]) -> String {
    let mut counts: std::collections::BTreeMap<Code, usize> = Default::default();
    for d in reports.iter().flat_map(|r| r.diagnostics) {
        *counts.entry(d.code).or_default() += 1;
    }
    let mut rows: Vec<(Code, usize)> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = String::new();
    for (code, n) in rows {
        out.push_str(&format!(
            "{n:>6}  {:<22} {:<8} {}\n",
            code.as_str(),
            code.severity().as_str(),
            code.summary()
        ));
    }
    let s = Summary::from_reports(reports);
    out.push_str(&format!("{} error(s), {} warning(s) in {} file(s)\n", s.errors, s.warnings, s.files));
    out
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Ids of the checked workflows of the root that are also the names of
/// bundled driver prompts (MCP serves the workflow under that name).
fn shadowed_prompts(root: &Path, checked: &[(SourceFile, Vec<Diagnostic>)]) -> Vec<String> {
    use savant_think::runtime::prompts::{Origin, registry};
    let stems: Vec<&str> = checked
        .iter()
        .filter_map(|(src, _)| {
            let path = Path::new(&src.path);
            let in_workflows = path.parent().and_then(Path::file_name).is_some_and(|d| d == "workflows");
            in_workflows.then(|| path.file_stem()?.to_str()).flatten()
        })
        .collect();
    // The registry is read only when a checked workflow could shadow one.
    if stems.is_empty() {
        return Vec::new();
    }
    let Ok(registry) = registry(root) else { return Vec::new() };
    let bundled: Vec<&str> =
        registry.entries.iter().filter(|e| e.origin == Origin::Bundled).map(|e| e.version.as_str()).collect();
    let mut out: Vec<String> =
        stems.into_iter().filter(|stem| bundled.contains(stem)).map(str::to_owned).collect();
    out.sort();
    out.dedup();
    out
}

/// `--runs`: each checked workflow of the root that has unfinished runs is
/// dry-run upgraded to the file as it is now; every refusal becomes an
/// `INCOMPATIBLE_UPGRADE` warning at its place in the file, and a file that
/// runs at an older version can all take says so on stderr (`note: …: 2
/// runs in flight can be upgraded to it`), so silence is never ambiguous.
fn stranded_runs(root: &Path, checked: &mut [(SourceFile, Vec<Diagnostic>)]) {
    let engine = match super::env::engine(root.to_path_buf()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("warning: --runs: cannot open the run state: {e}");
            return;
        }
    };
    for (source, diagnostics) in checked.iter_mut() {
        if diagnostics.iter().any(|d| d.severity == savant_think::diagnostic::Severity::Error) {
            continue; // a broken file cannot be upgraded to; its errors say why
        }
        let against = engine.runs_against(&source.path);
        if against.upgradable > 0 && against.diagnostics.is_empty() {
            let n = against.upgradable;
            eprintln!(
                "note: --runs: {path}: {n} run{} in flight can be upgraded to it (`savant-think upgrade {path} --all`)",
                if n == 1 { "" } else { "s" },
                path = source.path
            );
        }
        diagnostics.extend(against.diagnostics);
        savant_think::check::sort(diagnostics);
    }
}
