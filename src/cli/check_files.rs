//! Which files `check` reads: the paths given or the root's workflows,
//! schemas standing for the workflows that use them, and test files
//! checked over one shared in-memory engine.

use savant_think::diagnostic::Diagnostic;
use savant_think::source::SourceFile;
use savant_think::workspace;
use std::path::{Path, PathBuf};

/// Test files (`*.test.yaml`) are checked against their workflows, as
/// `savant-think test` reads them, over one in-memory engine made when the
/// first is met.
pub(super) struct TestFiles<'r> {
    root: &'r Path,
    engine: Option<Result<savant_think::Engine, String>>,
}

impl<'r> TestFiles<'r> {
    pub(super) fn new(root: &'r Path) -> TestFiles<'r> {
        TestFiles { root, engine: None }
    }

    pub(super) fn check(&mut self, path: &Path) -> Result<(SourceFile, Vec<Diagnostic>), workspace::IoError> {
        let root = self.root;
        let engine = self.engine.get_or_insert_with(|| {
            savant_think::testing::suite::memory_engine(root).map_err(|e| e.to_string())
        });
        let engine = engine
            .as_ref()
            .map_err(|message| workspace::IoError { path: path.to_path_buf(), message: message.clone() })?;
        let loaded = savant_think::testing::suite::load_file(engine, path, path.display().to_string())?;
        Ok((loaded.source, loaded.diagnostics))
    }
}

pub(super) fn is_test_file(path: &Path) -> bool {
    savant_think::testing::suite::is_test_file(path)
}

/// The paths `check` reads: the given ones, else `<root>/workflows`. A JSON
/// file under a `schemas/` directory (pre-commit passes changed schemas)
/// stands for the workflows of the root, which are the files that use it.
fn is_schema(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
        && p.parent().and_then(|d| d.file_name()).is_some_and(|d| d == "schemas")
}

pub(super) fn given_schemas(given: &[PathBuf]) -> bool {
    given.iter().any(|p| is_schema(p))
}

/// What to check: the paths given, and for a schema given (pre-commit
/// passes a staged `schemas/X.json`) the root's workflows — narrowed by
/// the caller to those that use one of the schemas.
pub(super) fn check_paths(given: &[PathBuf], root: &Path) -> Vec<PathBuf> {
    if given.is_empty() {
        return vec![root.join("workflows")];
    }
    let mut paths: Vec<PathBuf> = given.iter().filter(|p| !is_schema(p)).cloned().collect();
    if given_schemas(given) {
        paths.push(root.join("workflows"));
    }
    paths
}

/// Whether the workflow file `f` names one of the schemas among `given`
/// (by its name, `success_schema: X`), and is not a file git does not
/// track (a half-written draft is never part of a commit).
pub(super) fn uses_a_schema(f: &Path, given: &[PathBuf], root: &Path) -> bool {
    let names: Vec<&str> =
        given.iter().filter(|p| is_schema(p)).filter_map(|p| p.file_stem()?.to_str()).collect();
    let Ok(text) = savant_think::fsx::read_capped(f, 8 * 1024 * 1024) else { return true };
    let text = String::from_utf8_lossy(&text);
    let word = |name: &str| {
        text.match_indices(name).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            edge(before) && edge(after)
        })
    };
    names.iter().any(|n| word(n)) && !untracked(root).iter().any(|u| savant_think::fsx::same_file(u, f))
}

/// Files under `root` that git does not track (empty outside a git work
/// tree or without git).
fn untracked(root: &Path) -> Vec<PathBuf> {
    static CACHE: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    CACHE
        .get_or_init(|| {
            let out = std::process::Command::new("git")
                .args(["ls-files", "-z", "--others", "--exclude-standard", "--full-name"])
                .current_dir(root)
                .stderr(std::process::Stdio::null())
                .output();
            let top = std::process::Command::new("git")
                .args(["rev-parse", "--show-toplevel"])
                .current_dir(root)
                .stderr(std::process::Stdio::null())
                .output();
            match (out, top) {
                (Ok(o), Ok(t)) if o.status.success() && t.status.success() => {
                    let top = PathBuf::from(String::from_utf8_lossy(&t.stdout).trim());
                    o.stdout
                        .split(|b| *b == 0)
                        .filter(|s| !s.is_empty())
                        .map(|s| top.join(String::from_utf8_lossy(s).as_ref()))
                        .collect()
                }
                _ => Vec::new(),
            }
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::super::settle;
    use savant_think::check::suppress::CheckSettings;
    use savant_think::diagnostic::Code;
    use savant_think::source::{Limits, SourceFile};
    use std::path::Path;

    /// What `check` keeps of a checked workflow: the path always; the text
    /// only while something after the check reads it.
    #[test]
    fn a_clean_file_keeps_only_its_path_unless_its_text_is_read_later() {
        let (settings, root) = (CheckSettings::default(), Path::new("project"));
        let checked = |path: &str, text: &str| Ok((SourceFile::new(path, text), Vec::new()));
        let clean = "steps:\n  - id: a\n    call: prompt.say\n";
        let (src, diags, uses) = settle(&settings, root, false, None, checked("w/a.yaml", clean)).unwrap();
        assert_eq!((src.path.as_str(), src.text.as_str(), diags.len(), uses), ("w/a.yaml", "", 0, false));
        // `--fix`, `--diff` and `--runs` read it again.
        let (src, ..) = settle(&settings, root, true, None, checked("w/a.yaml", clean)).unwrap();
        assert_eq!(src.text, clean);
        // A `uses:` step, asked while no table is built: said, and the text kept for the table.
        let uses = "steps:\n  - id: a\n    uses: other\n";
        let limits = Limits::default();
        let (src, _, said) =
            settle(&settings, root, false, Some(&limits), checked("w/b.yaml", uses)).unwrap();
        assert!(said);
        assert_eq!(src.text, uses);
        let (src, _, said) = settle(&settings, root, false, None, checked("w/b.yaml", uses)).unwrap();
        assert_eq!((said, src.text.as_str()), (false, ""));
        // Suppressed where it was checked: a comment silencing nothing is a
        // diagnostic, and its file keeps the text the report quotes.
        let stale = "steps: [] # savant-think: ignore[UNRESOLVED_VAR]\n";
        let (src, diags, _) = settle(&settings, root, false, None, checked("w/c.yaml", stale)).unwrap();
        assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::UnusedSuppression]);
        assert_eq!(src.text, stale);
    }
}
