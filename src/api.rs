//! The library's front door: check a workflow held in memory and render the
//! result, without touching the file system.

use crate::check::{self, Config};
use crate::diagnostic::{Diagnostic, Severity};
use crate::report::{self, FileReport, Format, HumanOptions, Summary};
use crate::source::SourceFile;

/// A checked workflow: its source and its diagnostics, sorted by position,
/// with suppression comments (`# savant-think: ignore[…]`) applied.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The text checked (path as given, line index).
    pub source: SourceFile,
    /// The diagnostics, sorted by position then code.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    /// Whether any diagnostic is an error (what makes `check` exit 1).
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// Counts: one file, its errors and warnings.
    pub fn summary(&self) -> Summary {
        Summary::from_reports(&[self.report()])
    }

    /// The diagnostics as `check --format …` prints them (no colour, width 100).
    pub fn render(&self, format: Format) -> String {
        report::render(format, &[self.report()], &HumanOptions::default())
    }

    fn report(&self) -> FileReport<'_> {
        FileReport { source: &self.source, diagnostics: &self.diagnostics }
    }
}

/// Checks the workflow `text` as if it were the file `path`, with the default
/// configuration (no named schemas, no tool manifest). For schemas or a
/// manifest, use [`check_str_with`].
pub fn check_str(path: &str, text: &str) -> Checked {
    check_str_with(path, text, &Config::default())
}

/// [`check_str`] with a configuration (named schemas, tool manifest, limits).
pub fn check_str_with(path: &str, text: &str, config: &Config) -> Checked {
    let source = SourceFile::new(path, text);
    let diagnostics = check::suppress::apply(&source, check::check_source(&source, config), &[]);
    Checked { source, diagnostics }
}
