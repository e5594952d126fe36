//! `UNGUARDED_OPTIONAL` (warning)
//!
//! *What it does*: reports a field of an `await:` answer or a `wait_for:`
//! payload that its schema declares but does not require
//! (`approval.note` when `required: [approved]`), read with no guard: not
//! on the left of `??` (a default), and not tested by the reading step's
//! `when:`. A read in `when:` is the guard itself and is not reported.
//!
//! *Why is this bad?* A person may leave the field out, and so may the
//! event's sender: the step then fails to render its input
//! (`RENDER_FAILED`) on an answer the schema accepted.

use crate::check::Cx;
use crate::check::scope::{Binding, resolve};
use crate::check::waits::received_schema;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::ExprSite;
use crate::ir::ast::{BinOp, Expr, ExprKind, walk};
use std::collections::HashSet;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, expr, text, loc, site) in cx.expressions() {
        if site == ExprSite::When {
            continue;
        }
        // Reads with a default: every field read on the left of `??`.
        let mut defaulted: HashSet<(u32, u32)> = HashSet::new();
        walk(expr, &mut |e| {
            if let ExprKind::Binary { op: BinOp::Coalesce, lhs, .. } = &e.kind {
                walk(lhs, &mut |f| {
                    defaulted.insert((f.span.start, f.span.end));
                });
            }
        });
        let tested = if site == ExprSite::Output { HashSet::new() } else { when_reads(cx, i) };
        walk(expr, &mut |e| {
            let Some((k, cap, field)) = optional_read(cx, i, site, e) else { return };
            if defaulted.contains(&(e.span.start, e.span.end)) || tested.contains(&(k, field)) {
                return;
            }
            let Some((_, what)) = received_schema(cx, &cx.wf.steps[k]) else { return };
            let ExprKind::Field { name_span, .. } = &e.kind else { return };
            out.push(
                Diagnostic::new(
                    Code::UnguardedOptional,
                    cx.file_span(loc, text, *name_span),
                    format!("`{cap}.{field}` may be missing: {what} does not require `{field}`"),
                )
                .with_help(format!(
                    "give it a default (`{cap}.{field} ?? ''`), test it in `when:`, or add `{field}` to the schema's `required`"
                )),
            );
        });
    }
}

/// `cap.field` read in step `i` at `site`, where `cap` is the capture of a
/// wait step `k` (not a foreach) whose schema declares `field` without
/// requiring it: `(k, cap, field)`.
fn optional_read<'e>(cx: &Cx, i: usize, site: ExprSite, e: &'e Expr) -> Option<(usize, &'e str, &'e str)> {
    let ExprKind::Field { base, name, .. } = &e.kind else { return None };
    let ExprKind::Var(cap) = &base.kind else { return None };
    let Some(Binding::Capture(k)) = resolve(cx, i, site, cap) else { return None };
    let step = &cx.wf.steps[k];
    if step.wait.is_none() || step.foreach.is_some() {
        return None;
    }
    let (schema, _) = received_schema(cx, step)?;
    schema.get("properties")?.get(name.as_str())?;
    let required = schema.get("required").and_then(|r| r.as_array());
    let is_required = required.is_some_and(|r| r.iter().any(|f| f.as_str() == Some(name.as_str())));
    (!is_required).then_some((k, cap.as_str(), name.as_str()))
}

/// The optional fields of wait captures that step `i`'s `when:` reads: `(k, field)`.
fn when_reads<'a>(cx: &Cx<'a>, i: usize) -> HashSet<(usize, &'a str)> {
    let mut out = HashSet::new();
    let Some(when) = cx.wf.steps.get(i).and_then(|s| s.when.as_ref()?.expr.as_ref()) else { return out };
    walk(when, &mut |e| {
        if let Some((k, _, field)) = optional_read(cx, i, ExprSite::When, e) {
            out.insert((k, field));
        }
    });
    out
}
