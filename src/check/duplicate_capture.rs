//! `DUPLICATE_CAPTURE`
//!
//! *What it does*: reports a `capture_as` name that an earlier step already
//! captures.
//!
//! *Why is this bad?* A reader of the name would get whichever step wrote it
//! last, and a step skipped by its `when` writes `null`: "either branch sets
//! `summary`" silently loses the branch that ran. Give each capture its own
//! name and combine them where they are read (`<<a ?? b>>`).

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(c) = &step.capture_as else { continue };
        // The first step that captures the name.
        let j = cx.captures.get(c.value.as_str()).copied().unwrap_or(i);
        if j == i {
            continue;
        }
        let earlier = &cx.wf.steps[j];
        let span = earlier.capture_as.as_ref().map_or(earlier.id.span, |c| c.span);
        out.push(
            Diagnostic::new(
                Code::DuplicateCapture,
                c.span,
                format!("`{}` is already captured by step `{}`", c.value, earlier.id.value),
            )
            .with_label(span, "first captured here")
            .with_help(format!(
                "give each capture its own name (e.g. `{}_{}`), and combine them where they are read, e.g. `<<a ?? b>>`",
                c.value, step.id.value
            )),
        );
    }
}
