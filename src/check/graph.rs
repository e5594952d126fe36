//! The dependency graph: explicit `deps` plus edges inferred from reading a
//! capture (or `steps.<id>.status`). Shared by the checks and the compiler.

use crate::ir::ast::references;
use crate::ir::{ScalarLoc, Workflow};
use crate::source::Span;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// Why `from` must run before `to`.
#[derive(Clone, Debug)]
pub enum EdgeKind<'a> {
    /// `to` lists `from` in `deps`; the span is that list entry.
    Explicit(Span),
    /// `to` reads `name` (a capture of `from`, or `steps.<from>`) at `span`
    /// inside the scalar `loc` whose decoded text is `text`.
    Inferred { name: &'a str, loc: &'a ScalarLoc, text: &'a str, span: Span },
}

#[derive(Clone, Debug)]
pub struct Edge<'a> {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind<'a>,
}

/// Nodes are step indices (node `i` is step `i`); edges run dependency → dependent.
pub struct DepGraph<'a> {
    pub graph: DiGraph<usize, Edge<'a>>,
}

impl<'a> DepGraph<'a> {
    pub fn build(
        wf: &'a Workflow,
        step_index: &HashMap<&'a str, usize>,
        captures: &HashMap<&'a str, usize>,
    ) -> DepGraph<'a> {
        let mut graph = DiGraph::with_capacity(wf.steps.len(), wf.steps.len());
        for i in 0..wf.steps.len() {
            graph.add_node(i);
        }
        for (to, step) in wf.steps.iter().enumerate() {
            let mut seen = Vec::new();
            for dep in &step.deps {
                if let Some(&from) = step_index.get(dep.value.as_str())
                    && !seen.contains(&from)
                {
                    seen.push(from);
                    let e = Edge { from, to, kind: EdgeKind::Explicit(dep.span) };
                    graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), e);
                }
            }
            let loop_var = step.foreach.as_ref().map(|_| step.loop_var_name());
            for (expr, text, loc, _) in step.expressions() {
                for (name, span, is_status) in references(expr) {
                    let from = if is_status {
                        step_index.get(name).copied()
                    } else if Some(name) == loop_var {
                        None
                    } else {
                        captures.get(name).copied()
                    };
                    let Some(from) = from else { continue };
                    if seen.contains(&from) {
                        continue;
                    }
                    seen.push(from);
                    let e = Edge { from, to, kind: EdgeKind::Inferred { name, loc, text, span } };
                    graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), e);
                }
            }
        }
        DepGraph { graph }
    }

    /// Indices of the steps `step` depends on directly.
    pub fn deps_of(&self, step: usize) -> impl Iterator<Item = usize> + '_ {
        self.graph.edges_directed(NodeIndex::new(step), petgraph::Incoming).map(|e| e.weight().from)
    }

    pub fn has_dependents(&self, step: usize) -> bool {
        self.graph.edges_directed(NodeIndex::new(step), petgraph::Outgoing).next().is_some()
    }
}
