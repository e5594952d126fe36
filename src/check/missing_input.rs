//! `MISSING_INPUT`
//!
//! *What it does*: whenever the input schema of what a step calls is known
//! (as for `UNKNOWN_INPUT`), reports a required input — of a tool, or a
//! param of a workflow it `uses:` — that `input_template` / `with:` does
//! not give. A misspelt key standing in for it is one mistake, reported
//! once, as `UNKNOWN_INPUT` with a did-you-mean.
//!
//! *Why is this bad?* The run would stop at this step: the tool or the
//! workflow refuses an input without it.

use crate::check::Cx;
use crate::check::unknown_input::inputs;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::TemplateValue;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(found) = inputs(cx, i, step) else { continue };
        let c = &found.callee;
        let span = match &step.input_template {
            Some(TemplateValue::Object(_, span)) => *span,
            _ => c.name.span,
        };
        for set in &found.missing {
            let or = set[1..].iter().map(|a| format!(" or `{a}`")).collect::<String>();
            out.push(
                Diagnostic::new(
                    Code::MissingInput,
                    span,
                    format!(
                        "{} `{}` requires {} `{}`{or}, which `{}` does not give",
                        c.kind, c.name.value, c.input, set[0], c.key
                    ),
                )
                .with_help(format!("add `{}:` to `{}`", set[0], c.key)),
            );
        }
    }
}
