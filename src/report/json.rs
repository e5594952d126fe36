//! The `json` format: one document, versioned, for programs.

use super::{FileReport, Summary, line_cols};
use crate::source::{SourceFile, Span};
use serde::Serialize;

/// Bumped when a field changes meaning or disappears; adding fields is not a
/// breaking change.
const VERSION: u32 = 1;

pub(super) fn render(reports: &[FileReport<'_>]) -> String {
    let mut out = serde_json::to_string_pretty(&document(reports)).expect("plain data always serializes");
    out.push('\n');
    out
}

/// The `json` format as a value (what the engine embeds in its errors).
pub(super) fn value(reports: &[FileReport<'_>]) -> serde_json::Value {
    serde_json::to_value(document(reports)).expect("plain data always serializes")
}

fn document<'a>(reports: &'a [FileReport<'a>]) -> Document<'a> {
    let diagnostics = reports
        .iter()
        .flat_map(|report| report.diagnostics.iter().map(move |d| (report.source, d)))
        .map(|(source, d)| JsonDiagnostic {
            file: &source.path,
            code: d.code.as_str(),
            severity: d.severity.as_str(),
            message: &d.message,
            range: Range::new(source, d.span),
            labels: d
                .labels
                .iter()
                .map(|label| JsonLabel { range: Range::new(source, label.span), message: &label.message })
                .collect(),
            help: d.help.as_deref(),
            fix: d
                .fix
                .as_ref()
                .map(|f| JsonFix { range: Range::new(source, f.span), replacement: &f.replacement }),
        })
        .collect();
    Document { version: VERSION, diagnostics, summary: Summary::from_reports(reports) }
}

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    summary: Summary,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: &'a str,
    code: &'static str,
    severity: &'static str,
    message: &'a str,
    #[serde(flatten)]
    range: Range,
    labels: Vec<JsonLabel<'a>>,
    help: Option<&'a str>,
    /// The edit `check --fix` makes: replace the range with `replacement`.
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    #[serde(flatten)]
    range: Range,
    replacement: &'a str,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    #[serde(flatten)]
    range: Range,
    message: &'a str,
}

/// 1-based lines and character columns; the end is exclusive.
#[derive(Serialize)]
struct Range {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

impl Range {
    fn new(source: &SourceFile, span: Span) -> Range {
        let (start, end) = line_cols(source, span);
        Range { line: start.line, column: start.column, end_line: end.line, end_column: end.column }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::fixture;

    #[test]
    fn renders_every_field_with_character_columns() {
        let (source, diagnostics) = fixture();
        let out = render(&[FileReport { source: &source, diagnostics: &diagnostics }]);
        insta::assert_snapshot!(out, @r#"
            {
              "version": 1,
              "diagnostics": [
                {
                  "file": "./flows/démo.yaml",
                  "code": "UNRESOLVED_VAR",
                  "severity": "error",
                  "message": "unknown variable `mr_dta`",
                  "line": 8,
                  "column": 39,
                  "end_line": 8,
                  "end_column": 45,
                  "labels": [
                    {
                      "line": 5,
                      "column": 17,
                      "end_line": 5,
                      "end_column": 24,
                      "message": "`mr_data` is captured here"
                    }
                  ],
                  "help": "did you mean `mr_data`?",
                  "fix": {
                    "line": 8,
                    "column": 39,
                    "end_line": 8,
                    "end_column": 45,
                    "replacement": "mr_data"
                  }
                },
                {
                  "file": "./flows/démo.yaml",
                  "code": "LEGACY_INTERPOLATION",
                  "severity": "warning",
                  "message": "`{{ … }}` is literal text, not interpolation",
                  "line": 10,
                  "column": 17,
                  "end_line": 11,
                  "end_column": 9,
                  "labels": [],
                  "help": "write `<<naïve>>` to interpolate"
                },
                {
                  "file": "./flows/démo.yaml",
                  "code": "UNKNOWN_DEP",
                  "severity": "error",
                  "message": "no step has id `lint`",
                  "line": 9,
                  "column": 19,
                  "end_line": 9,
                  "end_column": 23,
                  "labels": [],
                  "help": null
                }
              ],
              "summary": {
                "files": 1,
                "errors": 2,
                "warnings": 1
              }
            }
            "#);
    }

    #[test]
    fn no_files_is_an_empty_list() {
        let out = render(&[]);
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["diagnostics"], serde_json::json!([]));
        assert_eq!(value["summary"], serde_json::json!({"files": 0, "errors": 0, "warnings": 0}));
    }
}
