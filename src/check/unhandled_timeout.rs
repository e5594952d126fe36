//! `UNHANDLED_TIMEOUT` (warning)
//!
//! *What it does*: reports a step that reads the capture of an `await:` or
//! a `wait_for:` that has a `timeout:` but no `on_timeout:`, once per
//! reading step and capture.
//!
//! *Why is this bad?* When nobody answers in time (or the event does not
//! come), the wait fails with `WAIT_TIMED_OUT` and the run fails with it:
//! the reading step never runs, and neither does anything else after the
//! wait. An `on_timeout:` value lets the run go on (a "no" by default).

use crate::check::Cx;
use crate::check::scope::{Binding, resolve};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ast::{ExprKind, walk};
use crate::ir::{ExprSite, WaitKind, WaitTimeout};
use std::collections::HashSet;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let mut told: HashSet<(usize, usize)> = HashSet::new();
    for (i, expr, text, loc, site) in cx.expressions() {
        if site == ExprSite::Output {
            continue;
        }
        walk(expr, &mut |e| {
            let ExprKind::Var(name) = &e.kind else { return };
            let Some(Binding::Capture(k)) = resolve(cx, i, site, name) else { return };
            let Some(after) = fails_on_timeout(cx, k) else { return };
            if !told.insert((i, k)) {
                return;
            }
            let (reader, wait) = (&cx.wf.steps[i].id.value, &cx.wf.steps[k].id.value);
            let what = match cx.wf.steps[k].wait.as_deref().map(|w| &w.kind) {
                Some(WaitKind::Answer { .. }) => "nobody answers",
                _ => "its event does not come",
            };
            out.push(
                Diagnostic::new(
                    Code::UnhandledTimeout,
                    cx.file_span(loc, text, e.span),
                    format!(
                        "step `{reader}` reads `{name}`, but if {what} within {after} `{wait}` fails the run (it has no `on_timeout:`)"
                    ),
                )
                .with_help(format!(
                    "give `{wait}` an `on_timeout:` value to go on with (e.g. a \"no\"), or `timeout: never` to wait for ever"
                )),
            );
        });
    }
}

/// The timeout of step `k`'s wait, as written, when it fails the step:
/// an `await:` or `wait_for:` with a `timeout:` (not `never`) and no `on_timeout:`.
fn fails_on_timeout<'a>(cx: &Cx<'a>, k: usize) -> Option<&'a str> {
    let wait = cx.wf.steps.get(k)?.wait.as_deref()?;
    let Some(WaitTimeout::After { span, .. }) = wait.timeout() else { return None };
    if wait.on_timeout().is_some() {
        return None;
    }
    cx.src.text.get(span.start as usize..span.end as usize)
}
