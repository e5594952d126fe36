//! What a rename changes beyond the renamed step, for [`super::recheck`]:
//! an edit that changed only a step's id, capture name or loop variable
//! (not what types its capture, not the names it reads nor its `deps`).
//!
//! The name indexes (ids, captures) then differ only at the step's old and
//! new names ([`names`]), so a check visiting another step reads something
//! different only if that step mentions one of those names ([`Readers`]: a
//! root name, a field, a string key, a `deps` entry), holds one as its id or
//! capture ([`holders`]: `DUPLICATE_STEP`, `DUPLICATE_CAPTURE`), or reports
//! a diagnostic whose did-you-mean compares against every name or that
//! walks the graph (`UNRESOLVED_VAR`, `UNKNOWN_DEP`, `LEGACY_INTERPOLATION`:
//! a step without one can gain one only by reading a changed name). The
//! graph's edges change only into the steps that mention a name, and come
//! from the steps that hold one: a new cycle passes through one of the
//! former, and only the latter can start or stop having dependents or be
//! the first to capture a name (`UNUSED_CAPTURE`); how many steps read each
//! name is unchanged.

use super::Cx;
use super::rewire::Reads;
use super::unused_capture;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Step;
use crate::ir::ast::{Expr, ExprKind, walk};
use std::collections::HashMap;

/// Which steps mention each name, kept up to date across edits.
#[derive(Clone, Debug, Default)]
pub struct Readers {
    by_name: HashMap<String, Vec<u32>, rustc_hash::FxBuildHasher>,
}

impl Readers {
    /// The readers of every name of `steps`.
    pub fn of(steps: &[Step]) -> Readers {
        let mut readers = Readers::default();
        for (i, step) in steps.iter().enumerate() {
            readers.add(i, step);
        }
        readers
    }

    /// Step `k` was `old` and is `new`.
    pub fn replace(&mut self, k: usize, old: &Step, new: &Step) {
        for name in mentions(old) {
            if let Some(steps) = self.by_name.get_mut(name) {
                steps.retain(|&i| i as usize != k);
            }
        }
        self.add(k, new);
    }

    /// The steps that mention any of `names`.
    pub fn of_names(&self, names: &[&str]) -> Vec<usize> {
        let found = names.iter().filter_map(|n| self.by_name.get(*n));
        found.flatten().map(|&i| i as usize).collect()
    }

    fn add(&mut self, k: usize, step: &Step) {
        for name in mentions(step) {
            // Step indices fit: a file is at most a few hundred MiB.
            self.by_name.entry(name.to_owned()).or_default().push(k as u32);
        }
    }
}

/// Every name a step's `deps` and expressions mention (root names, fields,
/// string literals: more than are looked up, never fewer), each once.
pub fn mentions(step: &Step) -> Vec<&str> {
    let mut out: Vec<&str> = step.deps.iter().map(|d| d.value.as_str()).collect();
    for (expr, ..) in step.expressions() {
        expr_mentions(expr, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The names `expr` mentions, appended to `out`.
pub fn expr_mentions<'e>(expr: &'e Expr, out: &mut Vec<&'e str>) {
    walk(expr, &mut |e| match &e.kind {
        ExprKind::Var(name) | ExprKind::Field { name, .. } => out.push(name.as_str()),
        ExprKind::Str(s) => out.push(s.as_str()),
        _ => {}
    });
}

/// The names a rename from `old` to `new` touches: both versions' id,
/// capture and loop variable (also those that did not change: the others'
/// diagnostics quote them beside a changed one).
pub fn names<'s>(old: &'s Step, new: &'s Step) -> Vec<&'s str> {
    let mut out = Vec::new();
    for s in [old, new] {
        out.push(s.id.value.as_str());
        out.extend(s.capture_as.as_ref().map(|c| c.value.as_str()));
        out.extend(s.foreach.as_ref().map(|_| s.loop_var_name()));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The steps whose id or capture is one of `names`.
pub fn holders(steps: &[Step], names: &[&str]) -> Vec<usize> {
    let holds = |s: &Step| {
        names.contains(&s.id.value.as_str())
            || s.capture_as.as_ref().is_some_and(|c| names.contains(&c.value.as_str()))
    };
    steps.iter().enumerate().filter(|(_, s)| holds(s)).map(|(i, _)| i).collect()
}

/// Whether `outputs:` mentions one of `names`.
pub fn outputs_mention(cx: &Cx, names: &[&str]) -> bool {
    let mut out = Vec::new();
    for (expr, ..) in cx.wf.output_expressions() {
        expr_mentions(expr, &mut out);
    }
    out.iter().any(|n| names.contains(n))
}

/// The `UNUSED_CAPTURE` diagnostics of `steps` in `whole` computed again
/// (those of the other steps are kept): a diagnostic belongs to the step
/// whose lines it starts in.
pub fn unused(cx: &Cx, reads: &Reads, steps: &[usize], whole: &mut Vec<Diagnostic>) {
    if cx.wf.has_expr_errors {
        return; // the check is silent, before and after
    }
    for &i in steps {
        // The step's lines reach to the next step: a capture commented out
        // (`#capture_as: x`) is past the mapping's own span, and its old
        // diagnostic with it.
        let start = cx.wf.steps[i].span.start;
        let end = cx.wf.steps.get(i + 1).map_or(u32::MAX, |next| next.span.start);
        whole.retain(|d| !(d.code == Code::UnusedCapture && start <= d.span.start && d.span.start < end));
        if let Some(c) = unused_capture::unused(cx, i, |name| reads.any(name)) {
            whole.push(unused_capture::diagnostic(c));
        }
    }
}
