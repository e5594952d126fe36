//! What an edit that changed only the names one step reads or its `deps`
//! changes beyond that step's own diagnostics, for [`super::recheck`]:
//! the graph lost or gained edges into the step, nothing else. So a new
//! cycle passes through it ([`on_cycle`]), and only the steps at the other
//! end of those edges, or whose capture name it read before or reads now,
//! can become unused or used ([`Reads::unused`]). Everything else of the
//! whole-workflow parts (`outputs:`, unused captures of other steps) reads
//! the name indexes and capture types, which are as they were.

use super::Cx;
use super::unused_capture;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Step;
use crate::ir::ast::{ExprKind, walk};
use petgraph::graph::NodeIndex;
use std::collections::HashMap;

/// How many steps (and `outputs:`, as one more) read each root name: a
/// capture is unused only when none does.
#[derive(Clone, Debug, Default)]
pub struct Reads {
    count: HashMap<String, u32, rustc_hash::FxBuildHasher>,
}

impl Reads {
    /// The counts of the workflow `cx` checks.
    pub fn of(cx: &Cx) -> Reads {
        let mut reads = Reads::default();
        for step in &cx.wf.steps {
            reads.add(step);
        }
        let mut outputs: Vec<&str> = Vec::new();
        for (expr, ..) in cx.wf.output_expressions() {
            walk(expr, &mut |e| {
                if let ExprKind::Var(name) = &e.kind {
                    outputs.push(name.as_str());
                }
            });
        }
        outputs.sort_unstable();
        outputs.dedup();
        for name in outputs {
            *reads.count.entry(name.to_owned()).or_default() += 1;
        }
        reads
    }

    /// `old` was replaced by `new` (a step of `cx`'s workflow): updates
    /// the counts and `whole`'s `UNUSED_CAPTURE` diagnostics of the steps
    /// whose capture may have become used or unused.
    pub fn unused(&mut self, cx: &Cx, old: &Step, new: &Step, whole: &mut Vec<Diagnostic>) {
        self.remove(old);
        self.add(new);
        if cx.wf.has_expr_errors {
            return; // the check is silent, before and after
        }
        // The steps at the other end of an edge into `k`, and those whose
        // capture `k` read.
        let mut touched: Vec<usize> = Vec::new();
        for step in [old, new] {
            for (name, status) in reads(step) {
                let index = if status { &cx.step_index } else { &cx.captures };
                touched.extend(index.get(name));
            }
            touched.extend(step.deps.iter().filter_map(|d| cx.step_index.get(d.value.as_str())));
        }
        touched.sort_unstable();
        touched.dedup();
        for i in touched {
            let Some(c) = &cx.wf.steps[i].capture_as else { continue };
            whole.retain(|d| !(d.code == Code::UnusedCapture && d.span == c.span));
            if let Some(c) = unused_capture::unused(cx, i, |name| self.any(name)) {
                whole.push(unused_capture::diagnostic(c));
            }
        }
    }

    /// Whether a step (or `outputs:`) reads `name`.
    pub fn any(&self, name: &str) -> bool {
        self.count.get(name).is_some_and(|&n| n > 0)
    }

    fn add(&mut self, step: &Step) {
        for (name, status) in reads(step) {
            if !status {
                *self.count.entry(name.to_owned()).or_default() += 1;
            }
        }
    }

    fn remove(&mut self, step: &Step) {
        for (name, status) in reads(step) {
            if let Some(n) = self.count.get_mut(name).filter(|_| !status) {
                *n = n.saturating_sub(1);
            }
        }
    }
}

/// Whether step `k` is on a cycle of `cx`'s graph: it reaches itself.
pub fn on_cycle(cx: &Cx, k: usize) -> bool {
    let g = &cx.graph.graph;
    let mut seen = vec![false; g.node_count()];
    let mut stack = vec![NodeIndex::new(k)];
    while let Some(n) = stack.pop() {
        for next in g.neighbors_directed(n, petgraph::Outgoing) {
            if next.index() == k {
                return true;
            }
            if !std::mem::replace(&mut seen[next.index()], true) {
                stack.push(next);
            }
        }
    }
    false
}

/// The root names a step's expressions read, and the `X` of `steps.X`
/// (`true`), each once.
pub fn reads(step: &Step) -> Vec<(&str, bool)> {
    let mut reads = Vec::new();
    for (expr, ..) in step.expressions() {
        walk(expr, &mut |e| match &e.kind {
            ExprKind::Var(name) => reads.push((name.as_str(), false)),
            ExprKind::Field { base, name, .. } if matches!(&base.kind, ExprKind::Var(v) if v == "steps") => {
                reads.push((name.as_str(), true))
            }
            _ => {}
        });
    }
    reads.sort_unstable();
    reads.dedup();
    reads
}
