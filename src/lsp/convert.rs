//! The checker's diagnostics as LSP diagnostics, and their fixes as quick fixes.

use super::document::Analysis;
use super::text::{Encoding, range};
use crate::diagnostic::{Diagnostic, Fix, Severity};
use crate::source::SourceFile;
use lsp_types as lt;
use std::collections::HashMap;

/// One diagnostic: the code, the message with its help on a second line, and
/// every label as related information.
pub fn diagnostic(src: &SourceFile, uri: &lt::Url, d: &Diagnostic, enc: Encoding) -> lt::Diagnostic {
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<lt::DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .map(|l| lt::DiagnosticRelatedInformation {
            location: lt::Location { uri: uri.clone(), range: range(src, l.span, enc) },
            message: l.message.clone(),
        })
        .collect();
    lt::Diagnostic {
        range: range(src, d.span, enc),
        severity: Some(match d.severity {
            Severity::Error => lt::DiagnosticSeverity::ERROR,
            Severity::Warning => lt::DiagnosticSeverity::WARNING,
        }),
        code: Some(lt::NumberOrString::String(d.code.as_str().to_owned())),
        code_description: None,
        source: Some("savant-think".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

pub fn publish_params(
    uri: &lt::Url,
    version: i32,
    a: &Analysis,
    enc: Encoding,
) -> lt::PublishDiagnosticsParams {
    lt::PublishDiagnosticsParams {
        uri: uri.clone(),
        diagnostics: a.diags.iter().map(|d| diagnostic(&a.src, uri, d, enc)).collect(),
        version: Some(version),
    }
}

/// The replacement text of a fix: a quoted scalar stays quoted.
pub fn replacement_text(src: &SourceFile, fix: &Fix) -> String {
    quoted_like(src.slice(fix.span), &fix.replacement)
}

/// `new` written with the quotes `old` has (`"a"` → `"new"`).
pub fn quoted_like(old: &str, new: &str) -> String {
    for q in ['"', '\''] {
        if old.len() >= 2 && old.starts_with(q) && old.ends_with(q) && !new.starts_with(q) {
            return format!("{q}{new}{q}");
        }
    }
    new.to_owned()
}

fn overlaps(a: lt::Range, b: lt::Range) -> bool {
    let before = |x: lt::Position, y: lt::Position| (x.line, x.character) < (y.line, y.character);
    !before(a.end, b.start) && !before(b.end, a.start)
}

/// A quick fix per fixable diagnostic that touches `within`.
pub fn code_actions(
    uri: &lt::Url,
    a: &Analysis,
    within: lt::Range,
    enc: Encoding,
) -> Vec<lt::CodeActionOrCommand> {
    let mut out = Vec::new();
    for d in &a.diags {
        let Some(fix) = &d.fix else { continue };
        let diag = diagnostic(&a.src, uri, d, enc);
        if !overlaps(diag.range, within) {
            continue;
        }
        let edit =
            lt::TextEdit { range: range(&a.src, fix.span, enc), new_text: replacement_text(&a.src, fix) };
        let mut changes = HashMap::new();
        changes.insert(uri.clone(), vec![edit]);
        out.push(lt::CodeActionOrCommand::CodeAction(lt::CodeAction {
            title: format!("Replace with `{}`", fix.replacement),
            kind: Some(lt::CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diag]),
            edit: Some(lt::WorkspaceEdit { changes: Some(changes), ..Default::default() }),
            is_preferred: Some(true),
            ..Default::default()
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Config, check_source};
    use crate::diagnostic::Code;

    fn fixes(text: &str) -> Vec<(Code, String, String)> {
        let src = SourceFile::new("w.yaml", text);
        check_source(&src, &Config::default())
            .into_iter()
            .filter_map(|d| {
                let f = d.fix.as_ref()?;
                Some((d.code, src.slice(f.span).to_owned(), replacement_text(&src, f)))
            })
            .collect()
    }

    #[test]
    fn a_closed_field_fix_replaces_the_name_only() {
        let text = "steps:\n  - id: a\n    call: t\n    capture_as: r\n    success_schema: { type: object, properties: { title: { type: string } }, additionalProperties: false }\n  - id: b\n    call: t\n    rationale: \"<<r.titel>>\"\n";
        assert_eq!(fixes(text), [(Code::UnresolvedVar, "titel".to_owned(), "title".to_owned())]);
    }

    #[test]
    fn a_quoted_name_stays_quoted() {
        let text = "steps:\n  - id: ab\n    call: t\n  - id: c\n    call: t\n    deps: [\"abc\"]\n";
        assert_eq!(fixes(text), [(Code::UnknownDep, "\"abc\"".to_owned(), "\"ab\"".to_owned())]);
    }
}
