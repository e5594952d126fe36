//! The `github` format: GitHub Actions workflow commands, which become
//! annotations on the pull request's diff.
//!
//! `::error file=a.yaml,line=3,col=5,endLine=3,endColumn=9,title=CODE::message`

use super::{FileReport, line_cols, portable_path};
use crate::diagnostic::Severity;
use std::fmt::Write;

pub(super) fn render(reports: &[FileReport<'_>]) -> String {
    let mut out = String::new();
    for report in reports {
        let file = escape_property(&portable_path(&report.source.path));
        for d in report.diagnostics {
            let command = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let (start, end) = line_cols(report.source, d.span);
            let mut message = d.message.clone();
            if let Some(help) = &d.help {
                let _ = write!(message, "\nhelp: {help}");
            }
            let _ = writeln!(
                out,
                "::{command} file={file},line={},col={},endLine={},endColumn={},title={}::{}",
                start.line,
                start.column,
                end.line,
                end.column,
                escape_property(d.code.as_str()),
                escape_data(&message),
            );
        }
    }
    out
}

/// Escapes a command's message, as `@actions/core` does (`escapeData`).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a command property's value (`escapeProperty`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Code, Diagnostic};
    use crate::report::tests::fixture;
    use crate::source::{SourceFile, Span};

    #[test]
    fn one_command_per_diagnostic() {
        let (source, diagnostics) = fixture();
        let out = render(&[FileReport { source: &source, diagnostics: &diagnostics }]);
        insta::assert_snapshot!(out, @r#"
            ::error file=flows/démo.yaml,line=8,col=39,endLine=8,endColumn=45,title=UNRESOLVED_VAR::unknown variable `mr_dta`%0Ahelp: did you mean `mr_data`?
            ::warning file=flows/démo.yaml,line=10,col=17,endLine=11,endColumn=9,title=LEGACY_INTERPOLATION::`{{ … }}` is literal text, not interpolation%0Ahelp: write `<<naïve>>` to interpolate
            ::error file=flows/démo.yaml,line=9,col=19,endLine=9,endColumn=23,title=UNKNOWN_DEP::no step has id `lint`
            "#);
    }

    #[test]
    fn escapes_properties_and_data() {
        assert_eq!(escape_property("a:b,c%d\r\ne"), "a%3Ab%2Cc%25d%0D%0Ae");
        assert_eq!(escape_data("50% a:b,c\nd"), "50%25 a:b,c%0Ad");
        let source = SourceFile::new("dir,1/a:b.yaml", "x: 1\n");
        let diagnostics = [Diagnostic::new(Code::YamlSyntax, Span::new(0, 1), "bad: 100%\nreally")
            .with_help("fix, then retry")];
        let out = render(&[FileReport { source: &source, diagnostics: &diagnostics }]);
        assert_eq!(
            out,
            "::error file=dir%2C1/a%3Ab.yaml,line=1,col=1,endLine=1,endColumn=2,title=YAML_SYNTAX\
             ::bad: 100%25%0Areally%0Ahelp: fix, then retry\n"
        );
    }
}
