//! `LEGACY_INTERPOLATION` (warning)
//!
//! *What it does*: reports `{{…}}` in a template string.
//!
//! *Why is this bad?* Only `<<expr>>` interpolates. `{{…}}` reaches the LLM
//! as literal text — the original system's files used it expecting a value.
//! If the braces are meant for the LLM, ignore the warning; otherwise write
//! `<<path>>` (`savant-think migrate` rewrites them). When the braces hold a
//! plain path that resolves here (`{{mr.title}}` with a capture `mr`),
//! `check --fix` rewrites it to `<<mr.title>>`.

use crate::check::Cx;
use crate::check::scope::{self, Binding};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ExprSite, TemplateString};
use crate::source::Span;
use crate::syntax::template::find_pair;

/// `inner` as a path (`a.b.c`, identifiers only) whose root is in scope of
/// step `step`'s templates: safe to rewrite to `<<inner>>` (nothing to
/// escape, and it reads a value that exists).
fn resolvable_path(cx: &Cx, step: usize, inner: &str) -> bool {
    let ident = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut parts = inner.split('.');
    let root = parts.next().unwrap_or("");
    if !(ident(root) && parts.all(ident)) {
        return false;
    }
    match scope::resolve(cx, step, ExprSite::Template, root) {
        None => false,
        // Reading a capture adds a dependency: not when it would close a cycle.
        Some(Binding::Capture(from)) => from != step && !cx.graph.depends_on(from, step),
        Some(_) => true,
    }
}

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let mut visit = |t: &TemplateString| {
            let mut from = 0;
            while let Some(open) = find_pair(&t.text[from..], *b"{{").map(|i| i + from) {
                let Some(close) = find_pair(&t.text[open + 2..], *b"}}").map(|i| i + open + 2) else { break };
                let inner = t.text[open + 2..close].trim();
                // `${{ … }}` is GitHub Actions' syntax: underline the `$` too.
                let dollar = open > 0 && t.text.as_bytes()[open - 1] == b'$';
                let start = if dollar { open - 1 } else { open };
                let span = cx.file_span(&t.loc, &t.text, Span::new(start, close + 2));
                let shown = if dollar { format!("${{{{{inner}}}}}") } else { format!("{{{{{inner}}}}}") };
                let help = if inner.starts_with('#') || inner.starts_with('/') || inner.starts_with("else") {
                    // A Handlebars/Mustache block: `<<#each x>>` is no better.
                    let list =
                        inner.trim_start_matches(['#', '/']).split_whitespace().nth(1).unwrap_or("items");
                    format!(
                        "there are no template blocks: loop with a step's `foreach: {list}`, or write `<<join({list}, ', ')>>` to insert a list"
                    )
                } else if dollar {
                    format!(
                        "`${{{{ }}}}` is GitHub Actions' syntax; here write `<<{inner}>>` to insert the value"
                    )
                } else {
                    format!("write `<<{inner}>>` to insert the value")
                };
                let mut d = Diagnostic::new(
                    Code::LegacyInterpolation,
                    span,
                    format!("`{shown}` is literal text, not interpolation"),
                )
                .with_help(help);
                if resolvable_path(cx, i, inner) {
                    d = d.with_fix(span, format!("<<{inner}>>"));
                }
                out.push(d);
                from = close + 2;
            }
        };
        if let Some(tv) = &step.input_template {
            tv.for_each_string(&mut visit);
        }
        if let Some(r) = &step.rationale {
            visit(r);
        }
    }
}
