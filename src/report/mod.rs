//! Renderers: diagnostics of checked files as text for people (`human`), for
//! programs (`json`), for code scanning (`sarif`) and for GitHub Actions
//! workflow commands (`github`).
//!
//! Every renderer is a pure function of its input: the same reports always give
//! the same bytes, so snapshots can hold them. Diagnostics are rendered in the
//! order given; sorting is the caller's job.

mod concise;
mod github;
mod human;
mod json;
mod sarif;

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{LineCol, SourceFile, Span};

/// One checked file and the diagnostics found in it.
#[derive(Clone, Copy, Debug)]
pub struct FileReport<'a> {
    /// The file's source.
    pub source: &'a SourceFile,
    /// Its diagnostics, sorted.
    pub diagnostics: &'a [Diagnostic],
}

/// An output format, as chosen with `--format`: [`Format::name`] is how it
/// is written, [`Format::description`] what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// For people: the source line with the characters underlined, help below.
    Human,
    /// One JSON document: `{diagnostics, summary}`.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…`), annotations on a pull request.
    Github,
    /// One line per diagnostic: `path:line:col: severity[CODE] message`.
    Concise,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 5] =
        [Format::Human, Format::Json, Format::Sarif, Format::Github, Format::Concise];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Github => "github",
            Format::Concise => "concise",
        }
    }

    /// One line on what the format is.
    pub fn description(self) -> &'static str {
        match self {
            Format::Human => "Annotated source snippets for a terminal",
            Format::Json => "One JSON document (`version` 1) with every diagnostic and a summary",
            Format::Sarif => "A SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers",
            Format::Github => "GitHub Actions workflow commands (`::error file=…::…`), one per line",
            Format::Concise => "One line per diagnostic: `path:line:col: severity[CODE] message`",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`Format::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl std::fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        write!(f, "unknown format `{}` (expected one of {})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownFormat {}

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    /// A format by its [`Format::name`] (ASCII case ignored).
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownFormat(s.into()))
    }
}

/// Counts over all rendered files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Files rendered.
    pub files: usize,
    /// Error diagnostics in them.
    pub errors: usize,
    /// Warning diagnostics in them.
    pub warnings: usize,
}

impl Summary {
    /// The counts over `reports`.
    pub fn from_reports(reports: &[FileReport<'_>]) -> Summary {
        let mut summary = Summary { files: reports.len(), ..Summary::default() };
        for diagnostic in reports.iter().flat_map(|r| r.diagnostics) {
            match diagnostic.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
            }
        }
        summary
    }
}

/// Options of the `human` format; the other formats ignore them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HumanOptions {
    /// Paint with ANSI colours (for a terminal).
    pub color: bool,
    /// The width, in columns, at which text wraps.
    pub width: usize,
}

impl Default for HumanOptions {
    fn default() -> HumanOptions {
        HumanOptions { color: false, width: 100 }
    }
}

/// Renders `reports` in `format`. The result ends with a newline unless it is
/// empty (the `github` format with no diagnostics).
pub fn render(format: Format, reports: &[FileReport<'_>], opts: &HumanOptions) -> String {
    match format {
        Format::Human => human::render(reports, opts),
        Format::Json => json::render(reports),
        Format::Sarif => sarif::render(reports),
        Format::Github => github::render(reports),
        Format::Concise => concise::render(reports),
    }
}

/// The `json` format's document as a value: `{version, diagnostics, summary}`.
pub fn json_value(reports: &[FileReport<'_>]) -> serde_json::Value {
    json::value(reports)
}

/// The start and the exclusive end of `span` as 1-based lines and columns.
fn line_cols(source: &SourceFile, span: Span) -> (LineCol, LineCol) {
    (source.line_col(span.start as usize), source.line_col(span.end as usize))
}

/// A path as repository tools expect it: forward slashes, no leading `./`.
fn portable_path(path: &str) -> String {
    let mut path = path.replace('\\', "/");
    while path.starts_with("./") {
        path.drain(..2);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    /// The shared fixture of the renderer tests: multi-byte text, a label, a
    /// help line, a warning whose span crosses a line end, and an error without help.
    pub(crate) fn fixture() -> (SourceFile, Vec<Diagnostic>) {
        let text = r#"id: démo
steps:
  - id: fetch
    call: gitlab.get_merge_request
    capture_as: mr_data
  - id: post
    call: chat.post
    input_template: { text: "résumé <<mr_dta.title>>" }
    deps: [fetch, lint]
    rationale: "{{ naïve
      }}"
"#;
        let source = SourceFile::new("./flows/démo.yaml", text);
        let span = |needle: &str| {
            let start = text.find(needle).unwrap();
            Span::new(start, start + needle.len())
        };
        let unresolved = Diagnostic::new(Code::UnresolvedVar, span("mr_dta"), "unknown variable `mr_dta`")
            .with_label(span("mr_data"), "`mr_data` is captured here")
            .with_help("did you mean `mr_data`?");
        let legacy = Diagnostic::new(
            Code::LegacyInterpolation,
            span("{{ naïve\n      }}"),
            "`{{ … }}` is literal text, not interpolation",
        )
        .with_help("write `<<naïve>>` to interpolate");
        let unknown = Diagnostic::new(Code::UnknownDep, span("lint"), "no step has id `lint`");
        (source, vec![unresolved, legacy, unknown])
    }

    #[test]
    fn summary_counts_files_errors_and_warnings() {
        let (source, diagnostics) = fixture();
        let reports = [
            FileReport { source: &source, diagnostics: &diagnostics },
            FileReport { source: &source, diagnostics: &[] },
        ];
        assert_eq!(Summary::from_reports(&reports), Summary { files: 2, errors: 2, warnings: 1 });
    }

    #[test]
    fn formats_round_trip_through_their_names() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!("SARIF".parse::<Format>(), Ok(Format::Sarif));
        let e = "xml".parse::<Format>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown format `xml` (expected one of human, json, sarif, github, concise)"
        );
    }

    #[test]
    fn portable_paths_use_forward_slashes() {
        assert_eq!(portable_path("./././a/b.yaml"), "a/b.yaml");
        assert_eq!(portable_path(".\\a\\b.yaml"), "a/b.yaml");
        assert_eq!(portable_path("../a.yaml"), "../a.yaml");
    }
}
