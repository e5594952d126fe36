//! `LEGACY_INTERPOLATION` (warning)
//!
//! *What it does*: reports `{{…}}` in a template string.
//!
//! *Why is this bad?* Only `<<expr>>` interpolates. `{{…}}` reaches the LLM
//! as literal text — the original system's files used it expecting a value.
//! If the braces are meant for the LLM, ignore the warning; otherwise write
//! `<<path>>` (`savant-think migrate` rewrites them).

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::TemplateString;
use crate::source::Span;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for step in &cx.wf.steps {
        let mut visit = |t: &TemplateString| {
            let mut from = 0;
            while let Some(open) = t.text[from..].find("{{").map(|i| i + from) {
                let Some(close) = t.text[open + 2..].find("}}").map(|i| i + open + 2) else { break };
                let inner = t.text[open + 2..close].trim();
                let span = cx.file_span(&t.loc, &t.text, Span::new(open, close + 2));
                out.push(
                    Diagnostic::new(
                        Code::LegacyInterpolation,
                        span,
                        format!("`{{{{{inner}}}}}` is literal text, not interpolation"),
                    )
                    .with_help(format!("write `<<{inner}>>` to insert the value")),
                );
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
