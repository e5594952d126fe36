//! Side files that are only ever appended to (the think tool's
//! `.savant/session.log`, the agent's `logs/agent_trace.log` and
//! `logs/agent_runtime.log`, an MCP server's stderr log) kept to a size:
//! when a write would take the file past its cap, the file is rotated
//! first — `log.N-1` becomes `log.N` (the oldest beyond `keep` is removed),
//! …, `log` becomes `log.1` — and a new `log` is started. Each write is one
//! `write` on a file opened with `O_APPEND` and `O_NOFOLLOW`, so concurrent
//! writers interleave whole lines and a symlink planted at the log's path
//! is never followed. Two processes that rotate at once may rotate twice
//! (the older copy then holds a short file); nothing is written outside the
//! `keep + 1` files.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// How large a side file may grow, and how many rotated copies are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct Rotation {
    /// The most bytes the live file holds (a single larger write still goes
    /// in whole, into a fresh file).
    pub max_bytes: u64,
    /// How many rotated copies (`log.1` … `log.N`) are kept; 0 keeps none.
    pub keep: u32,
}

/// A side file kept open for appending, rotated by [`Rotation`].
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    rotation: Rotation,
    file: File,
}

impl RotatingFile {
    /// Opens (creating) `path` for appending.
    pub fn open(path: impl Into<PathBuf>, rotation: Rotation) -> io::Result<RotatingFile> {
        let path = path.into();
        let file = open_append(&path)?;
        Ok(RotatingFile { path, rotation, file })
    }

    /// The live file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes` with one write, rotating first when they would take
    /// the file past its cap. A file another process rotated away meanwhile
    /// is let go, and the live one opened.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        if !is_same_file(&self.file, &self.path) {
            self.file = open_append(&self.path)?;
        }
        let len = self.file.metadata()?.len();
        if len > 0 && len + bytes.len() as u64 > self.rotation.max_bytes {
            rotate(&self.path, self.rotation.keep)?;
            self.file = open_append(&self.path)?;
        }
        self.file.write_all(bytes)
    }
}

/// Appends `bytes` to `path` once (opened, rotated if needed, closed).
pub fn append_rotating(path: &Path, rotation: Rotation, bytes: &[u8]) -> io::Result<()> {
    RotatingFile::open(path, rotation)?.append(bytes)
}

/// Rotates `path` when it is already at or past its cap (for a file handed
/// whole to a child process, which then writes it unwatched).
pub fn rotate_if_full(path: &Path, rotation: Rotation) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.len() >= rotation.max_bytes => rotate(path, rotation.keep),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// `path.{keep-1}` → `path.{keep}`, …, `path` → `path.1`; with `keep` 0,
/// `path` is removed. Renames act on names, never through a symlink.
fn rotate(path: &Path, keep: u32) -> io::Result<()> {
    let numbered = |n: u32| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    };
    if keep == 0 {
        return ignore_missing(fs::remove_file(path));
    }
    ignore_missing(fs::remove_file(numbered(keep)))?;
    for n in (1..keep).rev() {
        ignore_missing(fs::rename(numbered(n), numbered(n + 1)))?;
    }
    ignore_missing(fs::rename(path, numbered(1)))
}

fn ignore_missing(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    super::open_nofollow(path, OpenOptions::new().create(true).append(true))
}

/// Whether `path` still names the open `file`.
fn is_same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => {
            let (a, b) = (super::FileIdentity::from_metadata(&a), super::FileIdentity::from_metadata(&b));
            (a.dev, a.ino) == (b.dev, b.ino)
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "rotate_tests.rs"]
mod tests;
