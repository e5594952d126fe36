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
use crate::ir::Str;
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
    for i in 0..cx.wf.steps.len() {
        if let Some(c) = unused(cx, i, |name| read.contains(name)) {
            out.push(diagnostic(c));
        }
    }
}

/// Step `i`'s capture when it is reported: `read` says whether any
/// expression reads a root name. (Not when the workflow has an expression
/// error: the check is silent then.)
pub(crate) fn unused<'a>(cx: &Cx<'a>, i: usize, read: impl Fn(&str) -> bool) -> Option<&'a Str> {
    let c = cx.wf.steps.get(i)?.capture_as.as_ref()?;
    let first = cx.captures.get(c.value.as_str()) == Some(&i);
    (first && cx.graph.has_dependents(i) && !read(c.value.as_str())).then_some(c)
}

pub(crate) fn diagnostic(c: &Str) -> Diagnostic {
    Diagnostic::new(Code::UnusedCapture, c.span, format!("capture `{}` is never read", c.value))
        .with_help(format!("read it in a later step as `<<{}>>`, or remove `capture_as`", c.value))
}
