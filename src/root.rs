//! Finding the project root, like ruff finds its configuration.
//!
//! `--root` wins, then `SAVANT_PATH`; otherwise the nearest ancestor of the
//! starting directory (the first checked file's directory for `check FILE`,
//! else the working directory) that holds `savant-think.toml`, else the
//! nearest one that holds a `workflows/` directory, else the working
//! directory. The caller reads the environment and passes it in: the library
//! reads no environment variable.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Why this directory is the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootSource {
    /// `--root DIR`.
    Flag,
    /// `SAVANT_PATH`.
    Env,
    /// The nearest ancestor with `savant-think.toml`.
    Config,
    /// The nearest ancestor with a `workflows/` directory.
    WorkflowsDir,
    /// Nothing found: the working directory.
    WorkingDir,
}

impl RootSource {
    /// How `savant-think root` explains it.
    pub fn describe(&self) -> &'static str {
        match self {
            RootSource::Flag => "given with --root",
            RootSource::Env => "given by $SAVANT_PATH",
            RootSource::Config => "the nearest directory holding savant-think.toml",
            RootSource::WorkflowsDir => "the nearest directory holding workflows/",
            RootSource::WorkingDir => "the working directory (no savant-think.toml or workflows/ above it)",
        }
    }
}

/// A project root and how it was found.
#[derive(Clone, Debug)]
pub struct ProjectRoot {
    /// Relative to the working directory when it is above or below it, so
    /// that paths in diagnostics stay short; absolute otherwise.
    pub path: PathBuf,
    pub source: RootSource,
}

/// Finds the root. `explicit` is `--root`, `env` the value of `SAVANT_PATH`,
/// `start` where discovery begins (relative to `cwd`), `cwd` the working
/// directory. An explicit root that is not a directory is an error.
pub fn discover(
    explicit: Option<&Path>,
    env: Option<&OsStr>,
    start: Option<&Path>,
    cwd: &Path,
) -> Result<ProjectRoot, String> {
    if let Some(dir) = explicit {
        return given(dir, "--root", RootSource::Flag);
    }
    if let Some(dir) = env.filter(|v| !v.is_empty()) {
        return given(Path::new(dir), "SAVANT_PATH", RootSource::Env);
    }
    let cwd_abs = normalize(cwd);
    let start_abs = match start {
        Some(s) => normalize(&cwd_abs.join(s)),
        None => cwd_abs.clone(),
    };
    let found = find_up(&start_abs, |d| d.join("savant-think.toml").exists())
        .map(|d| (d, RootSource::Config))
        .or_else(|| {
            find_up(&start_abs, |d| d.join("workflows").is_dir()).map(|d| (d, RootSource::WorkflowsDir))
        });
    Ok(match found {
        Some((dir, source)) => ProjectRoot { path: relative_to(&dir, &cwd_abs), source },
        None => ProjectRoot { path: PathBuf::from("."), source: RootSource::WorkingDir },
    })
}

fn given(dir: &Path, what: &str, source: RootSource) -> Result<ProjectRoot, String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(ProjectRoot { path: dir.to_path_buf(), source }),
        Ok(_) => Err(format!("{what} {}: not a directory", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{what} {}: no such directory", dir.display()))
        }
        Err(e) => Err(format!("{what} {}: {e}", dir.display())),
    }
}

/// The nearest of `start` and its ancestors that satisfies `holds`.
fn find_up(start: &Path, holds: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    start.ancestors().find(|d| holds(d)).map(Path::to_path_buf)
}

/// `path` made absolute against `base`-free lexical rules: `.` removed, `..`
/// applied to the path so far (symlinks are not resolved, as a shell's `cd`).
fn normalize(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    crate::fsx::normalize(&absolute)
}

/// `dir` as seen from `cwd`: `.`, `../..`, `sub/dir`, or absolute when the
/// two share only a distant ancestor.
fn relative_to(dir: &Path, cwd: &Path) -> PathBuf {
    if let Ok(below) = dir.strip_prefix(cwd) {
        return if below.as_os_str().is_empty() { PathBuf::from(".") } else { below.to_path_buf() };
    }
    if let Ok(above) = cwd.strip_prefix(dir) {
        return above.components().map(|_| "..").collect();
    }
    dir.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempdir::Dir {
        tempdir::Dir::new()
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let p = std::env::temp_dir().join(format!(
                    "savant-root-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&p).unwrap();
                Dir(p.canonicalize().unwrap())
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn config_beats_workflows_and_is_found_from_a_subdirectory() {
        let t = tree();
        let root = &t.0;
        std::fs::create_dir_all(root.join("proj/workflows/team")).unwrap();
        std::fs::write(root.join("savant-think.toml"), "").unwrap();
        let cwd = root.join("proj/workflows/team");
        let found = discover(None, None, None, &cwd).unwrap();
        // `proj/` has workflows/, but the config file higher up wins.
        assert_eq!(found.source, RootSource::Config);
        assert_eq!(found.path, PathBuf::from("../../.."));
        std::fs::remove_file(root.join("savant-think.toml")).unwrap();
        let found = discover(None, None, None, &cwd).unwrap();
        assert_eq!(found.source, RootSource::WorkflowsDir);
        assert_eq!(found.path, PathBuf::from("../.."));
    }

    #[test]
    fn a_file_starts_the_search_at_its_directory() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("mono/app/workflows")).unwrap();
        std::fs::write(t.0.join("mono/app/savant-think.toml"), "").unwrap();
        let found = discover(None, None, Some(Path::new("mono/app/workflows")), &t.0).unwrap();
        assert_eq!(found.path, PathBuf::from("mono/app"));
        assert_eq!(found.source, RootSource::Config);
    }

    #[test]
    fn explicit_roots_win_and_must_exist() {
        let t = tree();
        let found = discover(Some(&t.0), Some(OsStr::new("/nowhere")), None, &t.0).unwrap();
        assert_eq!(found.source, RootSource::Flag);
        let err = discover(Some(&t.0.join("missing")), None, None, &t.0).unwrap_err();
        assert!(err.contains("--root") && err.contains("no such directory"), "{err}");
        let err = discover(None, Some(t.0.join("missing").as_os_str()), None, &t.0).unwrap_err();
        assert!(err.contains("SAVANT_PATH"), "{err}");
        let found = discover(None, Some(OsStr::new("")), None, &t.0).unwrap();
        assert_eq!(found.source, RootSource::WorkingDir);
        assert_eq!(found.path, PathBuf::from("."));
    }
}
