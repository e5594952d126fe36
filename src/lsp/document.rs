//! Open documents, their analysis (the checker's, unchanged) and the project
//! configuration (named schemas, tool manifest, `[check]` settings) each
//! is checked with.

use crate::check::Config;
use crate::check::incremental::{self, Stopped};
use crate::check::suppress::{self, CheckSettings};
use crate::diagnostic::Diagnostic;
use crate::ir::Workflow;
use crate::source::SourceFile;
use crate::syntax::node::Node;
use crate::syntax::yaml;
use lsp_types::Url;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One analysis of one version of a document.
pub struct Analysis {
    pub src: SourceFile,
    /// The YAML tree (for keys), parsed on first use: publishing
    /// diagnostics never pays for a second parse.
    root: std::cell::OnceCell<Option<Node>>,
    limits: crate::source::Limits,
    /// The lowered workflow, when the text is a YAML document.
    pub wf: Option<Workflow>,
    /// Exactly what `savant-think check` reports for the same text.
    pub diags: Vec<Diagnostic>,
    /// The project root the schemas came from.
    pub project: PathBuf,
}

pub struct Document {
    pub uri: Url,
    pub version: i32,
    pub text: String,
    /// The analysis of `text`; `None` after an edit until it is re-analyzed.
    pub current: Option<Rc<Analysis>>,
    /// The latest analysis that produced a workflow (completion while the
    /// YAML is briefly broken mid-edit).
    pub last_good: Option<Rc<Analysis>>,
    /// What the checker kept of `last_good` to check the next version from
    /// it ([`incremental::reanalyze`]).
    pub base: Option<incremental::State>,
    /// The configuration `base` was checked with: its checks' diagnostics
    /// are reused only with the same one.
    pub base_config: Option<Rc<Config>>,
}

/// The file path a `file:` URI names (the URI itself otherwise, for display).
pub fn uri_path(uri: &Url) -> PathBuf {
    uri.to_file_path().unwrap_or_else(|_| PathBuf::from(uri.path()))
}

/// What a project root gives the checker: named schemas, the tool manifest
/// and `[check]` settings, loaded once until a watched file changes (a
/// manifest is re-read when its modification time changes).
#[derive(Default)]
pub struct Projects {
    projects: HashMap<PathBuf, Project>,
    /// The value of `SAVANT_PATH`, which wins over discovery.
    savant_path: Option<std::ffi::OsString>,
    /// The environment's state settings (`SAVANT_STATE_URL`, …).
    overrides: crate::config::Overrides,
}

struct Project {
    config: Rc<Config>,
    settings: Rc<CheckSettings>,
    /// The manifest file and its modification time when it was read.
    tools: Option<(PathBuf, Option<std::time::SystemTime>)>,
    /// `tools.lock.json` and its modification time when it was read (a
    /// `tools sync` is seen at the next request).
    lock: (PathBuf, Option<std::time::SystemTime>),
    /// The workflow files when they were read (`uses:` is checked against them).
    workflows: (PathBuf, Vec<(std::ffi::OsString, Option<std::time::SystemTime>)>),
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Project {
    fn load(root: &Path) -> Project {
        // A broken savant-think.toml: `check` stops on it; the editor still
        // checks with the defaults (the file itself is not a workflow).
        let loaded = crate::config::EngineConfig::load(root).ok();
        let settings = loaded.as_ref().map(|c| c.check.clone()).unwrap_or_default();
        // Its events, when it reads: `wait_for:` is checked against them.
        let events = loaded.as_ref().map(crate::workspace::declared_events);
        let tools = settings.tools_path(root);
        let lock_path = root.join(crate::check::lock::FILE_NAME);
        let lock_at = modified(&lock_path);
        let mut config = Config {
            schemas: crate::workspace::load_schemas(&root.join("schemas")),
            tools: tools.as_deref().and_then(|t| crate::workspace::load_manifest(t).ok()),
            builtins: crate::runtime::contracts::builtin(),
            select: settings.selected(),
            lock: crate::workspace::load_lock(root).map(|(table, _, _)| std::sync::Arc::new(table)),
            events,
            ..Config::default()
        };
        let workflows = crate::workspace::workflows_stamp(root);
        config.workflows = crate::workspace::load_workflows(root, &config, None);
        Project {
            workflows: (root.to_path_buf(), workflows),
            config: Rc::new(config),
            settings: Rc::new(settings),
            tools: tools.map(|t| {
                let at = modified(&t);
                (t, at)
            }),
            lock: (lock_path, lock_at),
        }
    }

    fn stale(&self) -> bool {
        self.tools.as_ref().is_some_and(|(path, at)| modified(path) != *at)
            || modified(&self.lock.0) != self.lock.1
            || self.workflows.1 != crate::workspace::workflows_stamp(&self.workflows.0)
    }
}

impl Projects {
    pub fn new(savant_path: Option<std::ffi::OsString>, overrides: crate::config::Overrides) -> Projects {
        Projects { projects: HashMap::new(), savant_path, overrides }
    }

    /// The project root of a file (discovered upwards from its directory, as
    /// `check FILE` does) and its checker configuration.
    pub fn config_for(&mut self, file: &Path) -> (PathBuf, Rc<Config>) {
        let (root, config, _) = self.project_for(file);
        (root, config)
    }

    /// [`Projects::config_for`] and the root's `[check]` settings.
    pub fn project_for(&mut self, file: &Path) -> (PathBuf, Rc<Config>, Rc<CheckSettings>) {
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let root = crate::workspace::root_from(None, self.savant_path.as_deref(), Some(dir))
            .map(|r| r.path)
            .unwrap_or_else(|_| dir.into());
        let root = crate::fsx::canonical(&root).unwrap_or(root);
        if self.projects.get(&root).is_some_and(Project::stale) {
            self.projects.remove(&root);
        }
        let p = self.projects.entry(root.clone()).or_insert_with(|| Project::load(&root));
        (root, p.config.clone(), p.settings.clone())
    }

    /// Forgets every loaded project (a schema or savant-think.toml changed).
    pub fn invalidate(&mut self) {
        self.projects.clear();
    }
}

/// Checks one text as `check` would check the file at `path`.
#[cfg(test)]
pub fn analyze(path: &Path, text: &str, project: PathBuf, config: &Config) -> Analysis {
    match analyze_keeping(path, text, project, config, &|| false) {
        Ok((a, _)) => a,
        Err(Stopped) => unreachable!("never stopped"),
    }
}

/// [`analyze`], and what the checker keeps to check the next version
/// incrementally (a workflow file that reads without a YAML diagnostic).
fn analyze_keeping(
    path: &Path,
    text: &str,
    project: PathBuf,
    config: &Config,
    stop: &dyn Fn() -> bool,
) -> Result<(Analysis, Option<incremental::State>), Stopped> {
    let src = SourceFile::new(path.to_string_lossy().into_owned(), text);
    let (wf, diags, state) = if text.len() > config.limits.file_cap() {
        let (_, d) = check_oversized(config);
        (None, d, None)
    } else if crate::testing::suite::is_test_file(path) {
        // A test file: checked against its workflow, as `check` and `test` do.
        (None, crate::testing::suite::check_text(&project, path, src.clone()), None)
    } else if !looks_like_a_workflow(path, text, &project) {
        // Editors attach the server to every YAML file: another tool's
        // (.pre-commit-config.yaml, CI, compose) gets no diagnostics.
        (None, Vec::new(), None)
    } else {
        incremental::analyze_until(&src, config, stop)?
    };
    let limits = config.limits.clone();
    Ok((Analysis { src, root: Default::default(), limits, wf, diags, project }, state))
}

/// Top-level keys only a workflow has: one of them makes a file outside
/// `workflows/` a workflow (`name`, `version`, `description` are every
/// tool's, so they do not count).
const WORKFLOW_ONLY_KEYS: [&str; 6] = ["steps", "id", "params", "required", "driver_version", "rules"];

/// Whether the server checks `path` as a workflow: any file under the
/// project's `workflows/`, else a file with a top-level key only a workflow
/// has (or a flow-style document, which cannot be told apart line by line).
pub fn looks_like_a_workflow(path: &Path, text: &str, project: &Path) -> bool {
    if path.starts_with(project.join("workflows")) {
        return true;
    }
    let top = |l: &&str| !l.starts_with([' ', '\t', '#', '-']) && !l.trim().is_empty();
    let key = |l: &str, k: &str| {
        l.strip_prefix(k).is_some_and(|r| r.trim_start_matches(['"', '\'']).trim_start().starts_with(':'))
    };
    text.lines().filter(top).any(|l| {
        let l = l.trim_start_matches(['"', '\'']);
        l.starts_with('{') || WORKFLOW_ONLY_KEYS.iter().any(|k| key(l, k))
    })
}

impl Analysis {
    /// The YAML tree, when the text is a YAML document (for keys).
    pub fn root(&self) -> Option<&Node> {
        self.root
            .get_or_init(|| if self.wf.is_some() { yaml::parse(&self.src, &self.limits).root } else { None })
            .as_ref()
    }
}

fn check_oversized(config: &Config) -> (Option<Workflow>, Vec<Diagnostic>) {
    let cap = config.limits.file_cap();
    let d = Diagnostic::new(
        crate::diagnostic::Code::YamlLimit,
        crate::source::Span::point(0),
        format!("the file is larger than the {cap} byte limit"),
    )
    .with_help("split the workflow, or raise the limit with `--max-file-size BYTES`");
    (None, vec![d])
}

impl Document {
    /// The analysis of the current text, computing it when stale.
    pub fn analysis(&mut self, projects: &mut Projects) -> Rc<Analysis> {
        loop {
            // Never stopped: the first call answers.
            if let Some(a) = self.analysis_until(projects, &|| false) {
                return a;
            }
        }
    }

    /// [`Document::analysis`], abandoned (`None`) when `stop`, asked
    /// between steps while the checks run step by step, says so: the
    /// analysis of a version a newer one already replaces. Nothing of it
    /// is kept; when it had started from the last version's workflow and
    /// state, those are dropped too (the next analysis checks the whole
    /// text).
    pub fn analysis_until(
        &mut self,
        projects: &mut Projects,
        stop: &dyn Fn() -> bool,
    ) -> Option<Rc<Analysis>> {
        if let Some(a) = &self.current {
            return Some(a.clone());
        }
        let path = uri_path(&self.uri);
        let (root, config, settings) = projects.project_for(&path);
        let (mut a, state) = match self.reanalyze(&path, &root, &config, stop) {
            Some(Ok((a, state))) => (a, Some(state)),
            Some(Err(Stopped)) => return None,
            None => analyze_keeping(&path, &self.text, root, &config, stop).ok()?,
        };
        // Suppressions, exactly as `check` applies them.
        let ignored = crate::workspace::ignored_in(&settings, &path, &a.project);
        let mut diags = std::mem::take(&mut a.diags);
        if a.wf.is_some() && !diags.iter().any(|d| d.severity == crate::diagnostic::Severity::Error) {
            diags.extend(stranded_runs(&a.project, &path, &self.text, &projects.overrides));
            crate::check::sort(&mut diags);
        }
        a.diags = suppress::apply(&a.src, diags, &ignored);
        let a = Rc::new(a);
        if a.wf.is_some() {
            self.last_good = Some(a.clone());
            self.base = state;
            self.base_config = Some(config.clone());
        }
        self.current = Some(a.clone());
        Some(a)
    }

    /// The analysis of the current text from `last_good`'s, when the edits
    /// since allow it ([`incremental::reanalyze`]); `None` leaves
    /// `last_good` and `base` as they were.
    fn reanalyze(
        &mut self,
        path: &Path,
        project: &Path,
        config: &Config,
        stop: &dyn Fn() -> bool,
    ) -> Option<Result<(Analysis, incremental::State), Stopped>> {
        if self.text.len() > config.limits.file_cap() || crate::testing::suite::is_test_file(path) {
            return None;
        }
        let mut state = self.base.take()?;
        if !self.base_config.as_ref().is_some_and(|c| std::ptr::eq(&**c, config)) {
            state.forget_checks();
        }
        let prev = match self.last_good.take().map(Rc::try_unwrap) {
            // The same project and depth limit (the other steps were read under it).
            Some(Ok(prev))
                if prev.wf.is_some()
                    && prev.project == project
                    && prev.limits.max_depth == config.limits.max_depth =>
            {
                prev
            }
            other => {
                // Still shared, or read under other settings: check the whole text.
                self.last_good = other.map(|p| p.map_or_else(|rc| rc, Rc::new));
                self.base = Some(state);
                return None;
            }
        };
        let src = SourceFile::new(path.to_string_lossy().into_owned(), self.text.as_str());
        let Analysis { src: old, root, limits, wf, diags, project } = prev;
        let mut wf = wf?;
        match incremental::reanalyze_until(&old, &mut wf, &mut state, &src, config, stop) {
            Some(Ok(diags)) => {
                let limits = config.limits.clone();
                Some(Ok((
                    Analysis { src, root: Default::default(), limits, wf: Some(wf), diags, project },
                    state,
                )))
            }
            // The workflow and state are of neither version: the next
            // analysis checks the whole text.
            Some(Err(Stopped)) => Some(Err(Stopped)),
            None => {
                let prev = Analysis { src: old, root, limits, wf: Some(wf), diags, project };
                self.last_good = Some(Rc::new(prev));
                self.base = Some(state);
                None
            }
        }
    }
}

/// `check --runs` in the editor: when the buffer is the file on disk (just
/// opened or saved), the runs in flight that this version would strand, as
/// `INCOMPATIBLE_UPGRADE` warnings. The state store is the project's
/// (`[state]` of savant-think.toml; `SAVANT_STATE_URL` as the editor's
/// environment sets it). Unsaved text is not compared with runs: the engine
/// upgrades to files, not buffers.
fn stranded_runs(
    root: &Path,
    path: &Path,
    text: &str,
    overrides: &crate::config::Overrides,
) -> Vec<crate::diagnostic::Diagnostic> {
    if crate::testing::suite::is_test_file(path)
        || !std::fs::read(path).is_ok_and(|disk| disk == text.as_bytes())
    {
        return Vec::new();
    }
    let Ok(mut config) = crate::config::EngineConfig::load(root) else { return Vec::new() };
    overrides.apply(&mut config);
    if config.state.url.is_none() && !root.join(".savant").is_dir() {
        return Vec::new(); // no run was ever made here
    }
    match config.open_engine(root.to_path_buf()) {
        Ok(engine) => engine.stranded_runs(&path.to_string_lossy()),
        Err(_) => Vec::new(),
    }
}
