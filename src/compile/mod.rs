//! IR → [`Plan`]: the dependency DAG (explicit and inferred edges) and a
//! stable order. Compiling needs a workflow that checks without errors.

use crate::check::graph::EdgeKind;
use crate::check::{Config, Cx};
use crate::ir::Workflow;
use crate::source::SourceFile;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// One step of a plan: its dependencies as step indices.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStep {
    pub id: String,
    pub call: String,
    /// Every dependency (explicit and inferred), ascending.
    pub deps: Vec<usize>,
    /// The dependencies that come only from reading a capture or a status.
    pub inferred: Vec<usize>,
    /// Steps that depend on this one, ascending.
    pub dependents: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub workflow: String,
    pub steps: Vec<PlanStep>,
    /// A topological order; among steps whose deps are met, declaration order.
    pub order: Vec<usize>,
}

impl Plan {
    /// Builds the plan. The caller has checked the workflow: cycles and unknown
    /// deps are not reported here (unknown deps are ignored, cycles leave their
    /// steps out of `order`).
    pub fn build(src: &SourceFile, wf: &Workflow, config: &Config) -> Plan {
        let cx = Cx::new(src, wf, config);
        let g = &cx.graph.graph;
        let mut steps: Vec<PlanStep> = wf
            .steps
            .iter()
            .map(|s| PlanStep {
                id: s.id.value.clone(),
                call: s.call.as_ref().map(|c| c.value.clone()).unwrap_or_default(),
                deps: Vec::new(),
                inferred: Vec::new(),
                dependents: Vec::new(),
            })
            .collect();
        // The graph holds at most one edge per pair: explicit wins over inferred.
        for e in g.edge_weights() {
            if e.from == e.to {
                continue;
            }
            steps[e.to].deps.push(e.from);
            steps[e.from].dependents.push(e.to);
            if matches!(e.kind, EdgeKind::Inferred { .. }) {
                steps[e.to].inferred.push(e.from);
            }
        }
        for s in &mut steps {
            for v in [&mut s.deps, &mut s.inferred, &mut s.dependents] {
                v.sort_unstable();
                v.dedup();
            }
        }
        let order = stable_topo(&steps);
        Plan { workflow: wf.id.clone(), steps, order }
    }

    /// `{workflow, graph:{nodes:[{id,call,deps}], entry}, order, v}`.
    pub fn to_json(&self, version: Option<&str>) -> Value {
        let nodes: Vec<Value> = self
            .steps
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "call": s.call,
                    "deps": s.deps.iter().map(|&d| self.steps[d].id.as_str()).collect::<Vec<_>>(),
                    "inferred_deps": s.inferred.iter().map(|&d| self.steps[d].id.as_str()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let entry: Vec<&str> =
            self.steps.iter().filter(|s| s.deps.is_empty()).map(|s| s.id.as_str()).collect();
        json!({
            "workflow": self.workflow,
            "graph": { "nodes": nodes, "entry": entry },
            "order": self.order.iter().map(|&i| self.steps[i].id.as_str()).collect::<Vec<_>>(),
            "v": version.unwrap_or("1"),
        })
    }

    /// Mermaid flowchart; inferred edges dashed.
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("flowchart TD\n");
        for (i, s) in self.steps.iter().enumerate() {
            out.push_str(&format!(
                "  s{i}[\"{}<br/><small>{}</small>\"]\n",
                escape_label(&s.id),
                escape_label(&s.call)
            ));
        }
        for (i, s) in self.steps.iter().enumerate() {
            for &d in &s.deps {
                let arrow = if s.inferred.contains(&d) { "-.->" } else { "-->" };
                out.push_str(&format!("  s{d} {arrow} s{i}\n"));
            }
        }
        out
    }

    /// Graphviz DOT; inferred edges dashed.
    pub fn to_dot(&self) -> String {
        let mut out =
            format!("digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box];\n", dot_escape(&self.workflow));
        for s in &self.steps {
            out.push_str(&format!(
                "  \"{}\" [label=\"{}\\n{}\"];\n",
                dot_escape(&s.id),
                dot_escape(&s.id),
                dot_escape(&s.call)
            ));
        }
        for s in &self.steps {
            for &d in &s.deps {
                let style = if s.inferred.contains(&d) { " [style=dashed]" } else { "" };
                out.push_str(&format!(
                    "  \"{}\" -> \"{}\"{style};\n",
                    dot_escape(&self.steps[d].id),
                    dot_escape(&s.id)
                ));
            }
        }
        out.push_str("}\n");
        out
    }
}

fn escape_label(s: &str) -> String {
    s.replace('"', "#quot;")
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Kahn's algorithm, always taking the lowest declaration index that is ready.
fn stable_topo(steps: &[PlanStep]) -> Vec<usize> {
    let mut remaining: Vec<usize> = steps.iter().map(|s| s.deps.len()).collect();
    let mut ready: BTreeSet<usize> = (0..steps.len()).filter(|&i| remaining[i] == 0).collect();
    let mut order = Vec::with_capacity(steps.len());
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &d in &steps[i].dependents {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                ready.insert(d);
            }
        }
    }
    order
}
