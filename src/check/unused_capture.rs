//! `UNUSED_CAPTURE` (warning)
//!
//! *What it does*: reports a `capture_as` that no expression reads, on a step
//! that other steps depend on. Captures of final steps (no dependents) are the
//! workflow's artifacts and are not reported.
//!
//! *Why is this bad?* Usually a typo in the reading step or a leftover; the
//! captured result is stored in the run state for nothing.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ast::{ExprKind, walk};
use std::collections::HashSet;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    if cx.wf.has_expr_errors || !cx.whole() {
        return;
    }
    // Every root name an expression reads (a capture is read by name only).
    let mut read: HashSet<&str> = HashSet::new();
    let mut add = |expr| {
        walk(expr, &mut |e| {
            if let ExprKind::Var(name) = &e.kind {
                read.insert(name.as_str());
            }
        })
    };
    for step in &cx.wf.steps {
        step.expressions().into_iter().for_each(|(expr, ..)| add(expr));
    }
    cx.wf.output_expressions().into_iter().for_each(|(expr, ..)| add(expr));
    for (i, step) in cx.wf.steps.iter().enumerate() {
        let Some(c) = &step.capture_as else { continue };
        if read.contains(c.value.as_str())
            || !cx.graph.has_dependents(i)
            || cx.captures[c.value.as_str()] != i
        {
            continue;
        }
        out.push(
            Diagnostic::new(Code::UnusedCapture, c.span, format!("capture `{}` is never read", c.value))
                .with_help(format!("read it in a later step as `<<{}>>`, or remove `capture_as`", c.value)),
        );
    }
}
