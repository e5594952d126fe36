//! The one confinement: a path given by a user (a workflow path, a prompt
//! file, a file for the local tools, migrate's output, an editor's root) is
//! resolved against the project root — never the process's working
//! directory — and refused unless it stays inside, symlinks followed. Every
//! refusal is a [`PathError`] with a stable code and a message naming the
//! path and the root.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Why a user's path was refused.
#[derive(Debug)]
pub enum PathError {
    /// Empty, with a NUL byte, or longer than [`MAX_PATH_BYTES`].
    Invalid {
        /// The path as given (lossy, cut to 200 characters).
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `..` or an absolute path that leads out of the root.
    OutsideRoot {
        /// The path as given.
        path: PathBuf,
        /// The project root.
        root: PathBuf,
    },
    /// Inside the root as written, but a symlink on the way leads out.
    SymlinkOutsideRoot {
        /// The path as given.
        path: PathBuf,
        /// The project root.
        root: PathBuf,
        /// Where it resolves (or, for a dangling link, where the link points).
        target: PathBuf,
    },
    /// Nothing there (a dangling symlink inside the root included).
    NotFound {
        /// The path as given.
        path: PathBuf,
        /// The project root.
        root: PathBuf,
    },
    /// There, but a directory, FIFO or device where a regular file is needed.
    NotAFile {
        /// The path as given.
        path: PathBuf,
    },
    /// The file system refused to say (permissions, a loop of links…).
    Io {
        /// The path as given.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
}

impl PathError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            PathError::Invalid { .. } => "INVALID_PATH",
            PathError::OutsideRoot { .. } => "OUTSIDE_ROOT",
            PathError::SymlinkOutsideRoot { .. } => "SYMLINK_OUTSIDE_ROOT",
            PathError::NotFound { .. } => "NOT_FOUND",
            PathError::NotAFile { .. } => "NOT_A_FILE",
            PathError::Io { .. } => "IO_ERROR",
        }
    }

    /// Whether the path simply does not exist (callers often treat that apart).
    pub fn is_not_found(&self) -> bool {
        matches!(self, PathError::NotFound { .. })
    }

    /// Whether the path was refused for leaving the root (directly or through a symlink).
    pub fn is_outside(&self) -> bool {
        matches!(self, PathError::OutsideRoot { .. } | PathError::SymlinkOutsideRoot { .. })
    }

    /// The reason alone, without the path (for callers that name the path themselves).
    pub fn reason(&self) -> String {
        match self {
            PathError::Invalid { reason, .. } => (*reason).to_owned(),
            PathError::OutsideRoot { root, .. } => {
                format!("it is outside the project root {}", root.display())
            }
            PathError::SymlinkOutsideRoot { root, target, .. } => format!(
                "it resolves (through a symlink) to {}, outside the project root {}",
                target.display(),
                root.display()
            ),
            PathError::NotFound { .. } => "no such file".to_owned(),
            PathError::NotAFile { .. } => "not a regular file".to_owned(),
            PathError::Io { error, .. } => error.to_string(),
        }
    }

    fn path(&self) -> String {
        match self {
            PathError::Invalid { path, .. } => path.clone(),
            PathError::OutsideRoot { path, .. }
            | PathError::SymlinkOutsideRoot { path, .. }
            | PathError::NotFound { path, .. }
            | PathError::NotAFile { path }
            | PathError::Io { path, .. } => path.display().to_string(),
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::NotFound { root, .. } => {
                write!(f, "{}: no such file under the project root {}", self.path(), root.display())
            }
            _ => write!(f, "{}: {}", self.path(), self.reason()),
        }
    }
}

impl std::error::Error for PathError {}

/// `user_path` resolved inside `root`: a relative path is taken from the
/// root, an absolute one must lie under it, `..` may not climb out, and
/// symlinks are followed only while they stay inside. Returns the resolved
/// (canonical) path of something that exists, file or directory.
pub fn confine(root: &Path, user_path: &Path) -> Result<PathBuf, PathError> {
    let bytes = user_path.as_os_str().as_encoded_bytes();
    let shown = || {
        let s = user_path.to_string_lossy();
        s.char_indices().nth(200).map_or_else(|| s.to_string(), |(i, _)| format!("{}…", &s[..i]))
    };
    let invalid = |reason| PathError::Invalid { path: shown(), reason };
    if bytes.is_empty() {
        return Err(invalid("the path is empty"));
    }
    if bytes.contains(&0) {
        return Err(invalid("the path holds a NUL byte"));
    }
    if bytes.len() > MAX_PATH_BYTES {
        return Err(invalid("the path is longer than 4096 bytes"));
    }
    let root_real = canonical(root).map_err(|error| PathError::Io { path: root.to_path_buf(), error })?;
    // The root as given, made absolute without the file system (a root given
    // through a symlink is inside itself both ways).
    let root_abs = std::path::absolute(root).map(|p| normalize(&p)).unwrap_or_else(|_| root_real.clone());
    let joined = if user_path.is_absolute() { user_path.to_path_buf() } else { root_abs.join(user_path) };
    let within = |p: &Path| p.starts_with(&root_abs) || p.starts_with(&root_real);
    // Lexically first: `..` out of the root, or an absolute path elsewhere.
    if !within(&normalize(&joined)) {
        return Err(PathError::OutsideRoot { path: user_path.to_path_buf(), root: root_real });
    }
    match canonical(&joined) {
        Ok(real) if real.starts_with(&root_real) => Ok(real),
        Ok(real) => Err(PathError::SymlinkOutsideRoot {
            path: user_path.to_path_buf(),
            root: root_real,
            target: real,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A dangling link: say where it points when that is outside.
            if let Ok(target) = std::fs::read_link(&joined) {
                let target = joined.parent().map_or(target.clone(), |dir| normalize(&dir.join(&target)));
                if !within(&target) {
                    return Err(PathError::SymlinkOutsideRoot {
                        path: user_path.to_path_buf(),
                        root: root_real,
                        target,
                    });
                }
            }
            Err(PathError::NotFound { path: user_path.to_path_buf(), root: root_real })
        }
        Err(error) => Err(PathError::Io { path: user_path.to_path_buf(), error }),
    }
}

/// [`confine`], and it must be a regular file (not a directory, FIFO or device).
pub fn confine_file(root: &Path, user_path: &Path) -> Result<PathBuf, PathError> {
    let real = confine(root, user_path)?;
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Ok(real),
        Ok(_) => Err(PathError::NotAFile { path: user_path.to_path_buf() }),
        Err(error) => Err(PathError::Io { path: user_path.to_path_buf(), error }),
    }
}

/// The path with every symlink resolved (it must exist): how two names of
/// one file, or a root given two ways, compare equal.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    std::fs::canonicalize(path)
}

/// Whether `a` and `b` name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((canonical(a), canonical(b)), (Ok(a), Ok(b)) if a == b)
}

/// `.` and `..` removed without touching the file system (`..` at the top
/// stays at the top; symlinks are not resolved, as a shell's `cd`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(all(test, unix))]
#[path = "confine_tests.rs"]
mod tests;
