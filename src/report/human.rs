//! The `human` format: miette's annotated snippets, then a one-line summary.
//!
//! miette is not handed the file itself but, per diagnostic, an [`Excerpt`]:
//! only the lines around its spans, with lines longer than
//! [`MAX_LINE_CHARS`] clipped to windows around the span ends, control
//! characters replaced (nothing in the file reaches the terminal as an escape
//! sequence) and lone `\r` line breaks shown as `\n`. Line numbers and the
//! header's column are still those of the file.

use super::{FileReport, HumanOptions, Summary};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{SourceFile, Span};
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, SourceCode,
    SourceSpan, SpanContents,
};
use std::fmt;
use std::ops::Range;

/// Lines of context miette shows before and after each span.
const CONTEXT_LINES: usize = 1;
/// Lines with more characters than this are clipped in snippets.
const MAX_LINE_CHARS: usize = 200;
/// On a clipped line, the characters kept on each side of a span's start and end.
const AROUND: usize = 80;
/// Marks the text left out of a clipped line.
const ELISION: &str = "…";

pub(super) fn render(reports: &[FileReport<'_>], opts: &HumanOptions) -> String {
    let theme = if opts.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_context_lines(CONTEXT_LINES)
        .with_urls(false)
        .without_syntax_highlighting();
    let mut out = String::new();
    for report in reports {
        let name = printable(&report.source.path);
        for diagnostic in report.diagnostics {
            let excerpt = Excerpt::new(report.source, &name, diagnostic);
            // miette fails only when it cannot read a span, and every span is
            // clamped into the excerpt; still, never lose a diagnostic.
            let mut one = String::new();
            match handler.render_report(&mut one, &Shown::new(diagnostic, &excerpt)) {
                Ok(()) => out.push_str(&one),
                Err(_) => out.push_str(&format!("{}: {}\n", diagnostic.code, printable(&diagnostic.message))),
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

/// Text from the file as it may be printed: control characters other than
/// line breaks and tabs written as `\u{…}` escapes.
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !matches!(c, '\n' | '\t') {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The part of a file one diagnostic shows, as miette reads it: the lines
/// from the first span's line to the last span's (with context), each long
/// line clipped around the span ends on it.
#[derive(Debug)]
struct Excerpt<'a> {
    file: &'a SourceFile,
    /// The file's path, printable.
    name: &'a str,
    text: String,
    /// The file's 0-based line number of the excerpt's first line.
    first_line: usize,
    /// The runs of the file copied into `text`, in order: (file offset,
    /// excerpt offset, length in bytes). Each copy has the same length as its
    /// original.
    pieces: Vec<(usize, usize, usize)>,
}

impl<'a> Excerpt<'a> {
    fn new(file: &'a SourceFile, name: &'a str, diagnostic: &Diagnostic) -> Excerpt<'a> {
        let spans: Vec<Range<usize>> = std::iter::once(diagnostic.span)
            .chain(diagnostic.labels.iter().take(MAX_LABELS).map(|l| l.span))
            .map(|span| clamped(file, span))
            .collect();
        let first = spans.iter().map(|s| file.line_index(s.start)).min().unwrap_or(0);
        let last = spans.iter().map(|s| file.line_index(s.end)).max().unwrap_or(0);
        let first_line = first.saturating_sub(CONTEXT_LINES);
        let last_line = (last + CONTEXT_LINES).min(file.line_count() - 1);
        let mut excerpt = Excerpt { file, name, text: String::new(), first_line, pieces: Vec::new() };
        let mut points: Vec<usize> = spans.iter().flat_map(|s| [s.start, s.end]).collect();
        points.sort_unstable();
        points.dedup();
        for line in first_line..=last_line {
            let (content, next) = file.line_bounds(line);
            let is_long = content.len() > MAX_LINE_CHARS
                && file.text[content.clone()].chars().nth(MAX_LINE_CHARS).is_some();
            if !is_long {
                excerpt.copy(content.start..next);
                continue;
            }
            // A point in the line break counts at the line's end; one at the end of
            // the text, on the last line.
            let on_line = points
                .iter()
                .filter(|&&p| content.start <= p && (p < next || p == content.end))
                .map(|&p| p.min(content.end));
            let windows = windows(&file.text, content.clone(), on_line);
            let mut at = content.start;
            for window in windows {
                if window.start > at {
                    excerpt.text.push_str(ELISION);
                }
                at = window.end;
                excerpt.copy(window);
            }
            if at < content.end {
                excerpt.text.push_str(ELISION);
            }
            excerpt.copy(content.end..next);
        }
        excerpt
    }

    /// Appends `range` of the file, made printable byte for byte.
    fn copy(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.pieces.push((range.start, self.text.len(), range.len()));
        let source = &self.file.text[range];
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\t' | '\n' => self.text.push(c),
                // Within a copy, `\r` is a line break: `\r\n` or a lone `\r`,
                // which miette would not see as one.
                '\r' if chars.peek() == Some(&'\n') => self.text.push(c),
                '\r' => self.text.push('\n'),
                c if c.is_control() => (0..c.len_utf8()).for_each(|_| self.text.push('?')),
                c => self.text.push(c),
            }
        }
    }

    /// The excerpt offset of file offset `offset`, which lies in a copied run
    /// (every span end does, by construction).
    fn to_excerpt(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|&(file_at, _, _)| file_at <= offset);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((file_at, at, len)) => at + (offset - file_at).min(len),
            None => 0,
        }
    }

    /// The file offset of excerpt offset `offset` (the nearest copied byte
    /// when it is in an elision mark).
    fn to_file(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|&(_, at, _)| at <= offset);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((file_at, at, len)) => file_at + (offset - at).min(len),
            None => 0,
        }
    }

    /// `span` of the file as a miette span of the excerpt.
    fn miette_span(&self, span: Span) -> SourceSpan {
        let range = clamped(self.file, span);
        let start = self.to_excerpt(range.start);
        let end = self.to_excerpt(range.end).max(start);
        SourceSpan::new(start.into(), end - start)
    }
}

/// `span` clamped into `file` on character boundaries, as miette needs.
///
/// miette draws nothing for the empty line after a final newline, so an empty
/// span there (an "unexpected end of file") moves onto that newline: the caret
/// then sits at the end of the last line.
fn clamped(file: &SourceFile, span: Span) -> Range<usize> {
    let text = file.slice(span);
    let mut start = text.as_ptr() as usize - file.text.as_ptr() as usize;
    if text.is_empty() && start == file.text.len() && file.text.ends_with(['\n', '\r']) {
        start -= 1;
    }
    start..start + text.len()
}

/// The parts of the long line `content` of `text` to show: [`AROUND`]
/// characters each side of every point, merged where they meet; the line's
/// start when there is no point.
fn windows(text: &str, content: Range<usize>, points: impl Iterator<Item = usize>) -> Vec<Range<usize>> {
    let back = |at: usize, n: usize| {
        text[content.start..at].char_indices().rev().take(n).last().map_or(at, |(i, _)| content.start + i)
    };
    let forward = |at: usize, n: usize| {
        text[at..content.end].char_indices().nth(n).map_or(content.end, |(i, _)| at + i)
    };
    let mut out: Vec<Range<usize>> = Vec::new();
    for p in points {
        let window = back(p, AROUND)..forward(p, AROUND);
        match out.last_mut() {
            // Closer than an elision mark is worth: one window.
            Some(last) if window.start <= last.end + 8 => last.end = last.end.max(window.end),
            _ => out.push(window),
        }
    }
    if out.is_empty() {
        out.push(content.start..forward(content.start, 2 * AROUND));
    }
    out
}

impl SourceCode for Excerpt<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let contents = self.text.as_str().read_span(span, before, after)?;
        // miette reads the header's position with no context lines; only then
        // is the column meaningful. miette counts bytes; the file's columns
        // are characters.
        let column = if before == 0 {
            self.file.line_col(self.to_file(span.offset())).column - 1
        } else {
            contents.column()
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_owned(),
            contents.data(),
            *contents.span(),
            contents.line() + self.first_line,
            column,
            contents.line_count() + self.first_line,
        )))
    }
}

/// One diagnostic as a miette diagnostic.
/// Labels drawn per diagnostic: a cycle through thousands of steps labels
/// every edge, and drawing them all is quadratic in the excerpt.
const MAX_LABELS: usize = 24;

#[derive(Debug)]
struct Shown<'a> {
    diagnostic: &'a Diagnostic,
    source: &'a Excerpt<'a>,
    message: String,
    help: Option<String>,
    labels: Vec<LabeledSpan>,
}

impl<'a> Shown<'a> {
    fn new(diagnostic: &'a Diagnostic, source: &'a Excerpt<'a>) -> Shown<'a> {
        let mut labels = vec![LabeledSpan::new_primary_with_span(None, source.miette_span(diagnostic.span))];
        labels.extend(diagnostic.labels.iter().take(MAX_LABELS).map(|label| {
            LabeledSpan::new_with_span(Some(printable(&label.message)), source.miette_span(label.span))
        }));
        let mut help = diagnostic.help.as_deref().map(printable);
        let hidden = diagnostic.labels.len().saturating_sub(MAX_LABELS);
        if hidden > 0 {
            let note = format!("{hidden} more labels are not drawn (`--format json` has them all)");
            help = Some(match help {
                Some(h) => format!("{h}\n{note}"),
                None => note,
            });
        }
        Shown { diagnostic, source, message: printable(&diagnostic.message), help, labels }
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
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
        self.help.as_deref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
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

    /// A diagnostic at `needle` (the `n`th occurrence, 0-based) of `text`.
    fn at(text: &str, needle: &str, n: usize, message: &str) -> Diagnostic {
        let start = text.match_indices(needle).nth(n).unwrap().0;
        Diagnostic::new(Code::UnresolvedVar, Span::new(start, start + needle.len()), message)
    }

    #[test]
    fn long_lines_are_clipped_around_the_spans() {
        let text = format!(
            "steps:\n  - when: {} nope {}\n    x: {} far {} end\n",
            "a".repeat(70_000),
            "b".repeat(300),
            "é".repeat(500),
            "c".repeat(250)
        );
        let source = SourceFile::new("wide.yaml", text.as_str());
        let diagnostics = [
            at(&text, "nope", 0, "one"),
            at(&text, "far", 0, "two").with_label(Span::new(7, text.find(" nope").unwrap()), "a long label"),
        ];
        let out = human(&source, &diagnostics);
        assert!(out.len() < 3_000, "{} bytes", out.len());
        insta::assert_snapshot!(out, @"
        UNRESOLVED_VAR

          × one
           ╭─[wide.yaml:2:70012]
         1 │ steps:
         2 │ …aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa nope bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb…
           ·                                                                                  ────
         3 │     x: ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé…
           ╰────

        UNRESOLVED_VAR

          × two
           ╭─[wide.yaml:3:509]
         1 │ steps:
         2 │   - when: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa nope bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb…
           · ────────────────────────────────────────────────────────────────────────────────┬────────────────────────────────────────────────────────────────────────────────
           ·                                                                                 ╰── a long label
         3 │ …ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé far ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc…
           ·                                                                                  ───
           ╰────

        2 errors in 1 file
        ");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let text = "steps:\n  - when: nope # \u{1b}[2J\u{7} \u{85} \u{9b}31m\n";
        let source = SourceFile::new("a\u{1b}[31m.yaml", text);
        let diagnostic = at(text, "nope", 0, "bad `\u{1b}]0;x\u{7}`")
            .with_label(Span::new(text.find('\u{85}').unwrap(), text.len() - 1), "here: \u{9b}")
            .with_help("\u{0}");
        let out = human(&source, &[diagnostic]);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        insta::assert_snapshot!(out, @r"
        UNRESOLVED_VAR

          × bad `\u{1b}]0;x\u{7}`
           ╭─[a\u{1b}[31m.yaml:2:11]
         1 │ steps:
         2 │   - when: nope # ?[2J? ?? ??31m
           ·           ────         ────┬───
           ·             │              ╰── here: \u{9b}
           ╰────
          help: \u{0}

        1 error in 1 file
        ");
    }

    #[test]
    fn lone_carriage_returns_are_line_breaks() {
        let text = "steps:\r  - id: a\r    when: nope\r    x: 1\r";
        let source = SourceFile::new("cr.yaml", text);
        let diagnostics = [
            at(text, "nope", 0, "unknown"),
            Diagnostic::new(Code::YamlSyntax, Span::point(text.len()), "unexpected end of file"),
        ];
        insta::assert_snapshot!(human(&source, &diagnostics), @"
        UNRESOLVED_VAR

          × unknown
           ╭─[cr.yaml:3:11]
         2 │   - id: a
         3 │     when: nope
           ·           ────
         4 │     x: 1
           ╰────

        YAML_SYNTAX

          × unexpected end of file
           ╭─[cr.yaml:4:9]
         3 │     when: nope
         4 │     x: 1
           ·         ▲
           ╰────

        2 errors in 1 file
        ");
    }

    proptest::proptest! {
        /// Whatever the text and the spans, rendering never panics, and no
        /// control character but a line break reaches the output.
        #[test]
        fn any_text_and_spans_render(
            text in "([a\r\n\té😀\u{1b}\u{85}\u{feff}]|x{250}){0,30}",
            spans in proptest::collection::vec((0u32..8000, 0u32..300), 1..4),
        ) {
            let source = SourceFile::new("p.yaml", text.as_str());
            let mut spans = spans.into_iter().map(|(start, len)| Span { start, end: start + len });
            let mut diagnostic = Diagnostic::new(Code::UnresolvedVar, spans.next().unwrap(), "m");
            for span in spans {
                diagnostic = diagnostic.with_label(span, "l");
            }
            let out = human(&source, &[diagnostic]);
            proptest::prop_assert!(out.contains("UNRESOLVED_VAR"));
            proptest::prop_assert!(!out.contains("Failed to read"), "{}", out);
            proptest::prop_assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{:?}", out);
        }
    }
}
