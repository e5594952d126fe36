//! The dependency graph: explicit `deps` plus edges inferred from reading a
//! capture (or `steps.<id>.status`). Shared by the checks and the compiler.

use crate::ir::ast::{ExprKind, walk};
use crate::ir::{ScalarLoc, Workflow};
use crate::source::Span;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// Why `from` must run before `to`. Compact (a large file has hundreds of
/// thousands of edges): what a diagnostic needs beyond this is read back
/// from the steps ([`Edge::inferred_from`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// `to` lists `from` in `deps`; the span is that list entry.
    Explicit(Span),
    /// `to` reads the capture of `from` (or `steps.<from>` when `status`)
    /// at `span`, inside its expression number `site` (in the order of
    /// [`crate::ir::Step::expressions`]).
    Inferred { site: u32, status: bool, span: Span },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    from: u32,
    to: u32,
    pub kind: EdgeKind,
}

impl Edge {
    fn new(from: usize, to: usize, kind: EdgeKind) -> Edge {
        // Step indices fit: a file is at most a few hundred MiB.
        Edge { from: from as u32, to: to as u32, kind }
    }

    pub fn from(&self) -> usize {
        self.from as usize
    }

    pub fn to(&self) -> usize {
        self.to as usize
    }

    /// For an inferred edge, the name `to` reads (a capture of `from`, or
    /// `from`'s id after `steps.`), and where: the span in the decoded text
    /// `text` of the scalar at `loc`.
    pub fn inferred_from<'w>(&self, wf: &'w Workflow) -> Option<(&'w str, &'w ScalarLoc, &'w str, Span)> {
        let EdgeKind::Inferred { site, status, span } = self.kind else { return None };
        let from = &wf.steps[self.from()];
        // The index that made the edge maps this name to `from`.
        let name = if status { Some(&from.id) } else { from.capture_as.as_ref() }?;
        let (_, text, loc, _) = wf.steps[self.to()].expressions().into_iter().nth(site as usize)?;
        Some((name.value.as_str(), loc, text, span))
    }
}

/// Nodes are step indices (node `i` is step `i`); edges run dependency → dependent.
pub struct DepGraph {
    pub graph: DiGraph<u32, Edge>,
}

impl DepGraph {
    pub fn build(
        wf: &Workflow,
        step_index: &HashMap<&str, usize>,
        captures: &HashMap<&str, usize>,
    ) -> DepGraph {
        let mut graph = DiGraph::with_capacity(wf.steps.len(), wf.steps.len());
        for i in 0..wf.steps.len() {
            graph.add_node(i as u32);
        }
        for (to, step) in wf.steps.iter().enumerate() {
            let mut seen = Vec::new();
            for dep in &step.deps {
                if let Some(&from) = step_index.get(dep.value.as_str())
                    && !seen.contains(&from)
                {
                    seen.push(from);
                    let e = Edge::new(from, to, EdgeKind::Explicit(dep.span));
                    graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), e);
                }
            }
            let loop_var = step.foreach.as_ref().map(|_| step.loop_var_name());
            for (site, (expr, ..)) in step.expressions().into_iter().enumerate() {
                // The names of `references(expr)`, in its order, without collecting them.
                walk(expr, &mut |e| {
                    let (name, span, is_status) = match &e.kind {
                        ExprKind::Var(name) => (name.as_str(), e.span, false),
                        ExprKind::Field { base, name, name_span, .. } if matches!(&base.kind, ExprKind::Var(v) if v == "steps") => {
                            (name.as_str(), *name_span, true)
                        }
                        _ => return,
                    };
                    let from = if is_status {
                        step_index.get(name).copied()
                    } else if Some(name) == loop_var {
                        None
                    } else {
                        captures.get(name).copied()
                    };
                    let Some(from) = from else { return };
                    if seen.contains(&from) {
                        return;
                    }
                    seen.push(from);
                    let kind = EdgeKind::Inferred { site: site as u32, status: is_status, span };
                    let e = Edge::new(from, to, kind);
                    graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), e);
                });
            }
        }
        DepGraph { graph }
    }

    /// Indices of the steps `step` depends on directly.
    pub fn deps_of(&self, step: usize) -> impl Iterator<Item = usize> + '_ {
        self.graph.edges_directed(NodeIndex::new(step), petgraph::Incoming).map(|e| e.weight().from())
    }

    /// Whether step `a` depends on step `b`, directly or through others.
    pub fn depends_on(&self, a: usize, b: usize) -> bool {
        let mut seen = vec![false; self.graph.node_count()];
        let mut stack = vec![a];
        while let Some(s) = stack.pop() {
            for d in self.deps_of(s) {
                if d == b {
                    return true;
                }
                if !std::mem::replace(&mut seen[d], true) {
                    stack.push(d);
                }
            }
        }
        false
    }

    pub fn has_dependents(&self, step: usize) -> bool {
        self.graph.edges_directed(NodeIndex::new(step), petgraph::Outgoing).next().is_some()
    }
}
