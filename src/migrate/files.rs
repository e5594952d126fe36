//! The I/O edge of `migrate`: finding files, reading them, and writing the
//! results in place (`--write`) or under another directory (`--out`).

use super::{Migration, Outcome, migrate};
use crate::source::Limits;
use crate::workspace::{self, IoError};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Where migrated files go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing is written (the CLI prints the migrated YAML).
    DryRun,
    /// Files that need migration are rewritten in place.
    Write,
    /// Every file is written under this directory (same relative path):
    /// migrated, or copied unchanged when it needs nothing or cannot be read
    /// as a workflow — so `check DIR` sees the whole set.
    Out(PathBuf),
}

/// One file's migration and where it went.
#[derive(Debug)]
pub struct FileResult {
    /// The input path, as given (for messages).
    pub path: PathBuf,
    /// The text as read (non-UTF-8 bytes replaced), for positions in messages.
    pub source: crate::source::SourceFile,
    pub migration: Migration,
    /// Where the result was written, if anywhere.
    pub written: Option<PathBuf>,
    /// Writing it was tried and failed (the error is in `io_errors`).
    pub write_failed: bool,
}

/// Everything a run did.
#[derive(Debug, Default)]
pub struct RunResult {
    pub files: Vec<FileResult>,
    /// Inputs that could not be read, outputs that could not be written.
    pub io_errors: Vec<IoError>,
}

/// Migrates every workflow file under `paths` (files as given, directories
/// recursively) and writes the results as `mode` says.
pub fn run(paths: &[PathBuf], mode: &Mode, limits: &Limits) -> RunResult {
    let mut result = RunResult::default();
    let inputs = inputs(paths, mode, &mut result.io_errors);
    if let Mode::Out(dir) = mode {
        result.io_errors.extend(clashes(&inputs, dir));
        if !result.io_errors.is_empty() {
            return result;
        }
    }
    for (path, rel) in inputs {
        migrate_file(path, &rel, mode, limits, &mut result);
    }
    result
}

/// Each input file with the path it has under `--out`.
fn inputs(paths: &[PathBuf], mode: &Mode, io_errors: &mut Vec<IoError>) -> Vec<(PathBuf, PathBuf)> {
    let mut inputs: Vec<(PathBuf, PathBuf)> = Vec::new();
    // An `--out` directory inside an input directory holds earlier output,
    // not input: migrating it again would nest `out/out/…` on every run.
    let out_dir = match mode {
        Mode::Out(dir) => crate::fsx::canonical(dir).ok(),
        _ => None,
    };
    for p in paths {
        let (files, errors) = workspace::collect_files(std::slice::from_ref(p));
        io_errors.extend(errors);
        let is_dir = fs::metadata(p).is_ok_and(|m| m.is_dir());
        // Skipped when the --out directory is inside this input directory
        // (not when the input is the output directory itself, or inside it).
        let skip_out = out_dir
            .as_ref()
            .filter(|out| is_dir && !crate::fsx::canonical(p).is_ok_and(|c| c.starts_with(out)));
        for f in files {
            if let Some(out) = skip_out
                && crate::fsx::canonical(&f).is_ok_and(|c| c.starts_with(out))
            {
                continue;
            }
            let rel = if is_dir {
                f.strip_prefix(p).map(Path::to_path_buf).unwrap_or_else(|_| f.clone())
            } else {
                PathBuf::from(f.file_name().unwrap_or(f.as_os_str()))
            };
            inputs.push((f, rel));
        }
    }
    inputs
}

/// With `--out dir`: an input that would be written over itself, or two
/// that would be written to one path.
fn clashes(inputs: &[(PathBuf, PathBuf)], dir: &Path) -> Vec<IoError> {
    let mut errors = Vec::new();
    let mut seen: BTreeMap<&Path, &Path> = BTreeMap::new();
    for (f, rel) in inputs {
        let target = dir.join(rel);
        if crate::fsx::same_file(f, &target) {
            errors.push(IoError {
                path: f.clone(),
                message: format!(
                    "--out would overwrite the input itself ({} is {}); \
                     use --write to rewrite files in place, or choose another --out directory",
                    target.display(),
                    f.display()
                ),
            });
            continue;
        }
        if let Some(first) = seen.insert(rel, f) {
            errors.push(IoError {
                path: f.clone(),
                message: format!(
                    "{} and {} would both be written to {}",
                    first.display(),
                    f.display(),
                    dir.join(rel).display()
                ),
            });
        }
    }
    errors
}

/// Reads, migrates and (by `mode`) writes one file, into `result`.
fn migrate_file(path: PathBuf, rel: &Path, mode: &Mode, limits: &Limits, result: &mut RunResult) {
    let (src, read_diags) = match workspace::read_source(&path, limits) {
        Ok(r) => r,
        Err(e) => {
            result.io_errors.push(e);
            return;
        }
    };
    let migration = if read_diags.is_empty() {
        migrate(&src, limits)
    } else {
        Migration { outcome: Outcome::Failed { diagnostics: read_diags }, changes: vec![], literals: vec![] }
    };
    let target = match mode {
        Mode::DryRun => None,
        Mode::Write => migration.needs_migration().then(|| path.clone()),
        Mode::Out(dir) => Some(dir.join(rel)),
    };
    let mut write_failed = false;
    let written = match target {
        None => None,
        Some(target) => match write_result(&path, &target, &migration) {
            Ok(()) => Some(target),
            Err(message) => {
                result.io_errors.push(IoError { path: target, message });
                write_failed = true;
                None
            }
        },
    };
    result.files.push(FileResult { path, source: src, migration, written, write_failed });
}

/// Writes the migrated text, or copies the original bytes.
fn write_result(input: &Path, target: &Path, migration: &Migration) -> Result<(), String> {
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    match &migration.outcome {
        Outcome::Migrated { text, .. } => write_atomic(target, text.as_bytes()),
        _ if crate::fsx::same_file(input, target) => Ok(()),
        _ => {
            let bytes = fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
            write_atomic(target, &bytes)
        }
    }
}

fn write_atomic(target: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::fsx::replace_file(target, bytes, "savant-migrate")
        .map_err(|e| format!("cannot replace {}: {e}", target.display()))
}
