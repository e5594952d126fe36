//! Data-driven checker tests: every `tests/cases/ok/*.yaml` must produce no
//! diagnostic; every `tests/cases/err/*.yaml` is rendered exactly as a user
//! sees it (`check --format human`, no colour) into an insta snapshot.
//! `err/NAME.tools.json`, when present, is passed as the tool manifest.

use savant_think::check::{Config, ToolManifest};
use savant_think::diagnostic::Code;
use savant_think::report::{self, FileReport, Format, HumanOptions};
use savant_think::workspace;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn cases(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

fn config_for(path: &Path) -> Config {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut config = Config { schemas: workspace::load_schemas(&root.join("schemas")), ..Config::default() };
    let manifest = path.with_extension("tools.json");
    if manifest.exists() {
        config.tools = Some(ToolManifest::parse(&std::fs::read_to_string(manifest).unwrap()).unwrap());
    }
    config
}

/// Checks one case file with its path shown relative to the crate root.
fn check(path: &Path) -> (savant_think::source::SourceFile, Vec<savant_think::diagnostic::Diagnostic>) {
    let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let src = savant_think::source::SourceFile::new(rel.to_string_lossy().replace('\\', "/"), text);
    // As `check` reports it: suppression comments applied.
    let diags = savant_think::check::suppress::apply(
        &src,
        savant_think::check::check_source(&src, &config_for(path)),
        &[],
    );
    (src, diags)
}

#[test]
fn ok_cases_are_silent() {
    let files = cases("ok");
    assert!(!files.is_empty());
    for path in files {
        let (src, diags) = check(&path);
        if !diags.is_empty() {
            let out = report::render(
                Format::Human,
                &[FileReport { source: &src, diagnostics: &diags }],
                &HumanOptions::default(),
            );
            panic!("{} should check clean, got:\n{out}", path.display());
        }
    }
}

#[test]
fn err_cases_match_snapshots() {
    let mut seen = BTreeSet::new();
    for path in cases("err") {
        let (src, diags) = check(&path);
        assert!(!diags.is_empty(), "{} should produce diagnostics", path.display());
        seen.extend(diags.iter().map(|d| d.code));
        let out = report::render(
            Format::Human,
            &[FileReport { source: &src, diagnostics: &diags }],
            &HumanOptions::default(),
        );
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(format!("case_{name}"), out);
        });
    }
    // IO_ERROR is about files that cannot be read: tests/it/cli.rs covers it.
    // The TEST_* codes are about test files: tests/it/test_cmd.rs covers them.
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !seen.contains(c) && **c != Code::IoError && !c.as_str().starts_with("TEST_"))
        .map(|c| c.as_str())
        .collect();
    assert!(missing.is_empty(), "codes with no err/ case: {missing:?}");
}

#[test]
fn bundled_workflows_check_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = Config { schemas: workspace::load_schemas(&root.join("schemas")), ..Config::default() };
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
