//! The `human` format: miette's annotated snippets, then a one-line summary.

use super::{FileReport, HumanOptions, Summary};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{SourceFile, Span};
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, SourceCode,
    SourceSpan, SpanContents,
};
use std::fmt;

pub(super) fn render(reports: &[FileReport<'_>], opts: &HumanOptions) -> String {
    let theme = if opts.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_urls(false)
        .without_syntax_highlighting();
    let mut out = String::new();
    for report in reports {
        let source = Named(report.source);
        for diagnostic in report.diagnostics {
            // miette fails only when it cannot read a span, and `Shown::new`
            // clamps every span into the file; still, never lose a diagnostic.
            let mut one = String::new();
            match handler.render_report(&mut one, &Shown::new(diagnostic, &source)) {
                Ok(()) => out.push_str(&one),
                Err(_) => out.push_str(&format!("{}: {}\n", diagnostic.code, diagnostic.message)),
            }
            out.push('\n');
        }
    }
    out.push_str(&summary_line(&Summary::from_reports(reports)));
    out.push('\n');
    out
}

/// `2 errors, 1 warning in 3 files`, or `no problems in 3 files`.
fn summary_line(summary: &Summary) -> String {
    let count = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let files = count(summary.files, "file");
    match (summary.errors, summary.warnings) {
        (0, 0) => format!("no problems in {files}"),
        (e, 0) => format!("{} in {files}", count(e, "error")),
        (0, w) => format!("{} in {files}", count(w, "warning")),
        (e, w) => format!("{}, {} in {files}", count(e, "error"), count(w, "warning")),
    }
}

/// A source file as miette reads it: named by its path, and with the snippet
/// header's column counted in characters (miette counts bytes).
#[derive(Debug)]
struct Named<'a>(&'a SourceFile);

impl SourceCode for Named<'_> {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents = self.0.text.as_str().read_span(span, before, after)?;
        // miette reads the header's position with no context lines; only then
        // is the column meaningful.
        let column = if before == 0 { self.0.line_col(span.offset()).column - 1 } else { contents.column() };
        Ok(Box::new(MietteSpanContents::new_named(
            self.0.path.clone(),
            contents.data(),
            *contents.span(),
            contents.line(),
            column,
            contents.line_count(),
        )))
    }
}

/// One diagnostic as a miette diagnostic.
#[derive(Debug)]
struct Shown<'a> {
    diagnostic: &'a Diagnostic,
    source: &'a Named<'a>,
    labels: Vec<LabeledSpan>,
}

impl<'a> Shown<'a> {
    fn new(diagnostic: &'a Diagnostic, source: &'a Named<'a>) -> Shown<'a> {
        let file = source.0;
        let mut labels = vec![LabeledSpan::new_primary_with_span(None, miette_span(file, diagnostic.span))];
        labels.extend(diagnostic.labels.iter().map(|label| {
            LabeledSpan::new_with_span(Some(label.message.clone()), miette_span(file, label.span))
        }));
        Shown { diagnostic, source, labels }
    }
}

/// `span` clamped into `file` on character boundaries, as miette needs.
///
/// miette draws nothing for the empty line after a final newline, so an empty
/// span there (an "unexpected end of file") moves onto that newline: the caret
/// then sits at the end of the last line.
fn miette_span(file: &SourceFile, span: Span) -> SourceSpan {
    let text = file.slice(span);
    let mut start = text.as_ptr() as usize - file.text.as_ptr() as usize;
    if text.is_empty() && start == file.text.len() && file.text.ends_with('\n') {
        start -= 1;
    }
    SourceSpan::new(start.into(), text.len())
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl std::error::Error for Shown<'_> {}

impl miette::Diagnostic for Shown<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.diagnostic.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.diagnostic.help.as_deref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::report::tests::fixture;

    fn human(source: &SourceFile, diagnostics: &[Diagnostic]) -> String {
        render(&[FileReport { source, diagnostics }], &HumanOptions::default())
    }

    #[test]
    fn renders_snippets_and_a_summary() {
        let (source, diagnostics) = fixture();
        insta::assert_snapshot!(human(&source, &diagnostics), @r#"
            UNRESOLVED_VAR

              × unknown variable `mr_dta`
               ╭─[./flows/démo.yaml:8:39]
             4 │     call: gitlab.get_merge_request
             5 │     capture_as: mr_data
               ·                 ───┬───
               ·                    ╰── `mr_data` is captured here
             6 │   - id: post
             7 │     call: chat.post
             8 │     input_template: { text: "résumé <<mr_dta.title>>" }
               ·                                       ──────
             9 │     deps: [fetch, lint]
               ╰────
              help: did you mean `mr_data`?

            LEGACY_INTERPOLATION

              ⚠ `{{ … }}` is literal text, not interpolation
                ╭─[./flows/démo.yaml:10:17]
              9 │         deps: [fetch, lint]
             10 │ ╭─▶     rationale: "{{ naïve
             11 │ ╰─▶       }}"
                ╰────
              help: write `<<naïve>>` to interpolate

            UNKNOWN_DEP

              × no step has id `lint`
                ╭─[./flows/démo.yaml:9:19]
              8 │     input_template: { text: "résumé <<mr_dta.title>>" }
              9 │     deps: [fetch, lint]
                ·                   ────
             10 │     rationale: "{{ naïve
                ╰────

            2 errors, 1 warning in 1 file
            "#);
    }

    #[test]
    fn empty_spans_still_get_a_caret() {
        let source = SourceFile::new("a.yaml", "steps:\n  - id: é\n");
        let diagnostics = [
            Diagnostic::new(Code::YamlSchemaViolation, Span::point(17), "missing key `call`"),
            Diagnostic::new(Code::YamlSyntax, Span::point(source.text.len()), "unexpected end of file"),
        ];
        insta::assert_snapshot!(human(&source, &diagnostics), @r#"
            YAML_SCHEMA_VIOLATION

              × missing key `call`
               ╭─[a.yaml:2:10]
             1 │ steps:
             2 │   - id: é
               ·          ▲
               ╰────

            YAML_SYNTAX

              × unexpected end of file
               ╭─[a.yaml:2:10]
             1 │ steps:
             2 │   - id: é
               ·          ▲
               ╰────

            2 errors in 1 file
            "#);
        let empty = SourceFile::new("empty.yaml", "");
        let diagnostics = [Diagnostic::new(Code::YamlSchemaViolation, Span::point(0), "the file is empty")];
        insta::assert_snapshot!(human(&empty, &diagnostics), @r#"
            YAML_SCHEMA_VIOLATION

              × the file is empty
               ╭─[empty.yaml:1:1]
               ╰────

            1 error in 1 file
            "#);
    }

    #[test]
    fn summary_lines() {
        let line = |files, errors, warnings| summary_line(&Summary { files, errors, warnings });
        assert_eq!(line(3, 0, 0), "no problems in 3 files");
        assert_eq!(line(1, 1, 0), "1 error in 1 file");
        assert_eq!(line(2, 0, 2), "2 warnings in 2 files");
        assert_eq!(line(3, 2, 1), "2 errors, 1 warning in 3 files");
    }

    #[test]
    fn color_paints_and_no_color_does_not() {
        let (source, diagnostics) = fixture();
        let reports = [FileReport { source: &source, diagnostics: &diagnostics }];
        let painted = render(&reports, &HumanOptions { color: true, width: 100 });
        assert!(painted.contains("\u{1b}["));
        assert!(!human(&source, &diagnostics).contains('\u{1b}'));
    }
}
