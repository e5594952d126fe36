//! IR → [`Plan`]: the dependency DAG (explicit and inferred edges) and a
//! stable order. Compiling needs a workflow that checks without errors.

use crate::check::graph::EdgeKind;
use crate::check::{self, Config, Cx};
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::Workflow;
use crate::source::SourceFile;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// What compiling a file gives: the lowered workflow (when the file was a
/// YAML document), the sorted diagnostics, and the plan when no diagnostic
/// is an error.
pub struct Compiled {
    pub workflow: Option<Workflow>,
    pub diagnostics: Vec<Diagnostic>,
    pub plan: Option<Plan>,
}

/// Checks `src` and, when it has no errors, plans it from the same checker
/// context (one parse, one lowering, one dependency graph).
pub fn compile(src: &SourceFile, config: &Config) -> Compiled {
    let (workflow, diagnostics, plan) = check::analyze_with(src, config, |cx, diags| {
        (!diags.iter().any(|d| d.severity == Severity::Error)).then(|| Plan::from_cx(cx))
    });
    Compiled { workflow, diagnostics, plan: plan.flatten() }
}

/// A wait step's face (see [`PlanStep::wait`]).
fn wait_face(kind: &crate::ir::WaitKind) -> String {
    use crate::ir::WaitKind;
    match kind {
        WaitKind::Answer { .. } => "await".to_owned(),
        WaitKind::Sleep { secs, .. } => {
            // In the largest unit that divides it, as a duration is written.
            let unit = [(86_400, "d"), (3_600, "h"), (60, "m")].into_iter().find(|(n, _)| secs % n == 0);
            match unit {
                Some((n, u)) if *secs > 0 => format!("sleep {}{u}", secs / n),
                _ => format!("sleep {secs}s"),
            }
        }
        WaitKind::SleepUntil { .. } => "sleep_until".to_owned(),
        WaitKind::Event { event, .. } => format!("wait_for {}", event.value),
    }
}

/// One step of a plan: its dependencies as step indices.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStep {
    pub id: String,
    /// The tool it calls (empty for a `uses:` step).
    pub call: String,
    /// The workflow a `uses:` step runs.
    pub uses: Option<String>,
    /// What a wait step waits for, in a word or two: `await`, `sleep 10m`,
    /// `sleep_until`, `wait_for EVENT`.
    pub wait: Option<String>,
    /// Every dependency (explicit and inferred), ascending.
    pub deps: Vec<usize>,
    /// The dependencies that come only from reading a capture or a status.
    pub inferred: Vec<usize>,
    /// Steps that depend on this one, ascending.
    pub dependents: Vec<usize>,
}

impl PlanStep {
    /// What the step does, in one phrase: the tool it calls, `uses
    /// WORKFLOW` for a step that runs a sub-workflow, or what a wait step
    /// waits for.
    pub fn face(&self) -> String {
        match (&self.uses, &self.wait) {
            (Some(uses), _) if self.call.is_empty() => format!("uses {uses}"),
            (_, Some(wait)) if self.call.is_empty() => wait.clone(),
            _ => self.call.clone(),
        }
    }
}

/// A workflow compiled: its steps with their edges, and the order they run in.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The workflow id.
    pub workflow: String,
    /// Each step's dependencies and dependents.
    pub steps: Vec<PlanStep>,
    /// A topological order; among steps whose deps are met, declaration order.
    pub order: Vec<usize>,
}

impl Plan {
    /// Builds the plan from the checker's context (its dependency graph).
    /// Cycles and unknown deps are the checks' to report: here unknown deps
    /// are ignored and cycles leave their steps out of `order`.
    pub fn from_cx(cx: &Cx) -> Plan {
        let wf = cx.wf;
        let g = &cx.graph.graph;
        let mut steps: Vec<PlanStep> = wf
            .steps
            .iter()
            .map(|s| PlanStep {
                id: s.id.value.to_string(),
                call: s.call.as_ref().map(|c| c.value.to_string()).unwrap_or_default(),
                uses: s.uses.as_ref().map(|u| u.value.to_string()),
                wait: s.wait.as_ref().map(|w| wait_face(&w.kind)),
                deps: Vec::new(),
                inferred: Vec::new(),
                dependents: Vec::new(),
            })
            .collect();
        // The graph holds at most one edge per pair: explicit wins over inferred.
        for e in g.edge_weights() {
            let (from, to) = (e.from(), e.to());
            if from == to {
                continue;
            }
            steps[to].deps.push(from);
            steps[from].dependents.push(to);
            if matches!(e.kind, EdgeKind::Inferred { .. }) {
                steps[to].inferred.push(from);
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
                let mut node = json!({
                    "id": s.id,
                    "call": s.call,
                    "deps": s.deps.iter().map(|&d| self.steps[d].id.as_str()).collect::<Vec<_>>(),
                    "inferred_deps": s.inferred.iter().map(|&d| self.steps[d].id.as_str()).collect::<Vec<_>>(),
                });
                if let Some(uses) = &s.uses {
                    node["uses"] = json!(uses);
                }
                if let Some(wait) = &s.wait {
                    node["wait"] = json!(wait);
                }
                node
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
                escape_label(&s.face())
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
                dot_escape(&s.face())
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

/// A Mermaid label's text as Mermaid entity codes where it matters: a step
/// id or call is text, never markup (Mermaid renders labels as HTML, so an
/// id like `<img onerror=…>` would otherwise run where the chart is shown).
fn escape_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            _ => out.push(c),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn compile_str(text: &str) -> Compiled {
        compile(&SourceFile::new("w.yaml", text), &Config::default())
    }

    /// One analysis gives the diagnostics and the plan: explicit and
    /// inferred edges, and a stable order.
    #[test]
    fn a_clean_file_compiles_to_a_plan() {
        let c = compile_str(
            "steps:\n  - {id: b, call: think, deps: [a]}\n  - {id: a, call: think, capture_as: x}\n  \
             - {id: c, call: think, input_template: {q: \"<<x>>\"}}\n",
        );
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let plan = c.plan.expect("a plan");
        assert_eq!(plan.steps[0].deps, [1]);
        assert_eq!((plan.steps[2].deps.as_slice(), plan.steps[2].inferred.as_slice()), (&[1][..], &[1][..]));
        assert_eq!(plan.order, [1, 0, 2]);
        assert_eq!(c.workflow.expect("a workflow").steps.len(), 3);
    }

    /// Markup in a step id or call is text in the Mermaid chart.
    #[test]
    fn mermaid_labels_are_text_not_markup() {
        let c = compile_str("steps:\n  - {id: \"<script>alert(1)</script>\", call: t.get}\n");
        let mermaid = c.plan.expect("a plan").to_mermaid();
        assert!(!mermaid.contains("<script"), "{mermaid}");
        assert!(mermaid.contains("#lt;script#gt;alert(1)#lt;/script#gt;"), "{mermaid}");
        assert_eq!(escape_label("a&b#c\"d"), "a#amp;b#35;c#quot;d");
    }

    #[test]
    fn a_file_with_errors_has_no_plan() {
        let c = compile_str("steps:\n  - {id: a, call: think, deps: [nope]}\n");
        assert!(c.plan.is_none());
        assert!(c.workflow.is_some());
        assert_eq!(c.diagnostics[0].code, crate::diagnostic::Code::UnknownDep);
        let empty = compile_str("");
        assert!(empty.plan.is_none() && empty.workflow.is_none() && !empty.diagnostics.is_empty());
    }
}
