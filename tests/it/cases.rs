//! The checker's fixtures, one directory per diagnostic code under
//! `tests/checks/<code>/` (lower case), each holding the code's fixture pair
//! beside its expected output:
//!
//! - `ok*.yaml` must check clean (a near miss: the check stays quiet);
//! - `err*.yaml` is rendered exactly as a user sees it (`check --format
//!   human`, no colour) and compared with `err*.snap` in the same directory
//!   (an insta snapshot: `cargo insta review` shows a change);
//! - `NAME.tools.json`, when present, is the tool manifest for `NAME.yaml`,
//!   `NAME.lock.json` its `tools.lock.json`, and `NAME.toml` its
//!   savant-think.toml (its `[events.NAME]`; without one, the events of
//!   `tests/checks/events.toml`);
//!   `tests/checks/schemas/` holds the named schemas, `tests/checks/workflows/`
//!   the project's workflows a fixture `uses:`.
//! - The `TEST_*` codes are about test files: the fixtures of their
//!   directories are test files (named without `.test.yaml`, so that
//!   `savant-think test` in this repository does not run them), checked as
//!   it reads them, against `wf.yaml` beside them, `tests/checks` the root.
//!
//! Every code has its directory with at least one `ok` and one `err`
//! fixture, and an `err` fixture's diagnostics include its directory's code.

use savant_think::check::{Config, ToolManifest};
use savant_think::diagnostic::{Code, Diagnostic};
use savant_think::report::{self, FileReport, Format, HumanOptions};
use savant_think::source::SourceFile;
use savant_think::workspace;
use std::path::{Path, PathBuf};

fn checks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/checks")
}

/// `(code, directory)` for every fixture directory, sorted.
fn code_dirs() -> Vec<(Option<Code>, PathBuf)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(checks_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "schemas" && n != "workflows"))
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| {
            let name = d.file_name().unwrap().to_string_lossy().to_uppercase();
            (Code::ALL.iter().copied().find(|c| c.as_str() == name), d)
        })
        .collect()
}

/// The fixtures of `dir` whose names start with `kind` (`ok` or `err`).
fn fixtures(dir: &Path, kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".yaml")
                && (name == format!("{kind}.yaml") || name.starts_with(&format!("{kind}_")))
        })
        .collect();
    files.sort();
    files
}

fn config_for(path: &Path) -> Config {
    let mut config = Config {
        schemas: workspace::load_schemas(&checks_dir().join("schemas")),
        builtins: savant_think::runtime::contracts::builtin(),
        ..Config::default()
    };
    // An opt-in code's fixtures are checked with it selected.
    let dir = path.parent().and_then(|d| d.file_name()).map(|d| d.to_string_lossy().to_uppercase());
    config.select =
        Code::ALL.iter().copied().filter(|c| c.is_opt_in() && dir.as_deref() == Some(c.as_str())).collect();
    // The fixtures' project: `tests/checks/workflows/`, as `check` reads a project's.
    config.workflows = workspace::load_workflows(&checks_dir(), &config, None);
    let lock = path.with_extension("lock.json");
    if lock.exists() {
        let src = SourceFile::new("tools.lock.json", std::fs::read_to_string(lock).unwrap());
        let (lock, diags) = savant_think::check::lock::ToolLock::parse(&src);
        assert!(diags.is_empty(), "{diags:?}");
        config.lock = Some(std::sync::Arc::new(lock.into()));
    }
    // The project's events: the fixture's own savant-think.toml, else the shared ones.
    let own = path.with_extension("toml");
    let toml = if own.exists() { own } else { checks_dir().join("events.toml") };
    let engine: savant_think::config::EngineConfig =
        toml::from_str(&std::fs::read_to_string(toml).unwrap()).unwrap();
    config.events = Some(workspace::declared_events(&engine));
    let manifest = path.with_extension("tools.json");
    if manifest.exists() {
        config.tools = Some(ToolManifest::parse(&std::fs::read_to_string(manifest).unwrap()).unwrap());
    }
    config
}

/// Checks one fixture as `check` reports it (suppression comments applied),
/// its path shown relative to the crate root; returns the human rendering too.
fn check(path: &Path) -> (Vec<Diagnostic>, String) {
    let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
    let display = rel.to_string_lossy().replace('\\', "/");
    let in_test_dir =
        path.parent().and_then(|d| d.file_name()).is_some_and(|d| d.to_string_lossy().starts_with("test_"));
    if in_test_dir {
        let engine = savant_think::testing::suite::memory_engine(&checks_dir()).unwrap();
        let loaded = savant_think::testing::suite::load_file(&engine, path, display).unwrap();
        let out = report::render(
            Format::Human,
            &[FileReport { source: &loaded.source, diagnostics: &loaded.diagnostics }],
            &HumanOptions::default(),
        );
        return (loaded.diagnostics, out);
    }
    let text = std::fs::read_to_string(path).unwrap();
    let src = SourceFile::new(display, text);
    let diags = savant_think::check::suppress::apply(
        &src,
        savant_think::check::check_source(&src, &config_for(path)),
        &[],
    );
    let out = report::render(
        Format::Human,
        &[FileReport { source: &src, diagnostics: &diags }],
        &HumanOptions::default(),
    );
    (diags, out)
}

#[test]
fn every_code_has_its_fixture_pair_and_every_directory_is_a_code() {
    let dirs = code_dirs();
    let strays: Vec<String> =
        dirs.iter().filter(|(c, _)| c.is_none()).map(|(_, d)| d.display().to_string()).collect();
    assert!(strays.is_empty(), "fixture directories that name no code: {strays:?}");
    // IO_ERROR is about files that cannot be read: tests/it/cli.rs covers it;
    // INCOMPATIBLE_UPGRADE about stored runs: tests/it/first_hour.rs.
    for code in Code::ALL
        .iter()
        .filter(|c| !matches!(c, Code::IoError | Code::IncompatibleUpgrade | Code::InvalidToolLock))
    {
        let dir = checks_dir().join(code.as_str().to_lowercase());
        assert!(!fixtures(&dir, "ok").is_empty(), "{code}: no {}/ok.yaml", dir.display());
        assert!(!fixtures(&dir, "err").is_empty(), "{code}: no {}/err.yaml", dir.display());
    }
}

#[test]
fn ok_fixtures_are_silent() {
    for (_, dir) in code_dirs() {
        for path in fixtures(&dir, "ok") {
            let (diags, out) = check(&path);
            assert!(diags.is_empty(), "{} should check clean, got:\n{out}", path.display());
        }
    }
}

#[test]
fn err_fixtures_match_their_snapshots() {
    for (code, dir) in code_dirs() {
        for path in fixtures(&dir, "err") {
            let (diags, out) = check(&path);
            let code = code.unwrap();
            assert!(
                diags.iter().any(|d| d.code == code),
                "{} should report {code}, got:\n{out}",
                path.display()
            );
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            insta::with_settings!({ snapshot_path => dir.clone(), prepend_module_to_snapshot => false, omit_expression => true }, {
                insta::assert_snapshot!(name, out);
            });
        }
    }
}

#[test]
fn bundled_workflows_check_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = Config {
        schemas: workspace::load_schemas(&root.join("schemas")),
        builtins: savant_think::runtime::contracts::builtin(),
        ..Config::default()
    };
    let (files, errors) = workspace::collect_files(&[root.join("workflows")]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(files.len() >= 3, "at least three bundled workflows");
    for f in files {
        let (src, diags) = workspace::check_file(&f, &config).unwrap();
        let out = report::render(
            Format::Human,
            &[FileReport { source: &src, diagnostics: &diags }],
            &HumanOptions::default(),
        );
        assert!(diags.is_empty(), "{} should check clean:\n{out}", f.display());
    }
}
