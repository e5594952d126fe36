//! `CYCLIC_DEPENDENCY`
//!
//! *What it does*: reports each cycle in the dependency graph once, with a
//! label on every edge of it. Edges come from `deps` and from reading a
//! capture (`<<mr.title>>` makes the step depend on the step capturing `mr`),
//! so a step reading the capture of a step downstream of it is a cycle.
//!
//! *Why is this bad?* No step of a cycle can ever become ready: the run stalls.

use crate::check::Cx;
use crate::check::graph::{Edge, EdgeKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

/// Steps named in the message of one cycle at most (every edge is labelled).
const MAX_SHOWN: usize = 24;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    if !cx.whole() {
        return;
    }
    let g = &cx.graph.graph;
    // Kosaraju's DFS is iterative: a 100k-step chain cannot overflow the stack.
    let mut sccs = petgraph::algo::kosaraju_scc(g);
    for scc in &mut sccs {
        scc.sort();
    }
    sccs.sort();
    for scc in sccs {
        let start = scc[0];
        let self_loop = g.edges_connecting(start, start).next().is_some();
        if scc.len() == 1 && !self_loop {
            continue;
        }
        let Some(cycle) = find_cycle(cx, &scc, start) else { continue };
        let steps = &cx.wf.steps;
        let mut names: Vec<&str> = cycle.iter().map(|e| steps[e.from()].id.value.as_str()).collect();
        names.push(&steps[start.index()].id.value);
        let message = if cycle.len() == 1 {
            format!("step `{}` depends on itself", names[0])
        } else if names.len() > MAX_SHOWN {
            // A generated file can hold a cycle of thousands of steps: name
            // its ends, label its first edges, and say how long it is.
            let shown = |ns: &[&str]| ns.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" → ");
            format!(
                "dependency cycle of {} steps: {} → … → {}",
                cycle.len(),
                shown(&names[..MAX_SHOWN / 2]),
                shown(&names[names.len() - 2..])
            )
        } else {
            format!(
                "dependency cycle: {}",
                names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" → ")
            )
        };
        let mut d = Diagnostic::new(Code::CyclicDependency, steps[start.index()].id.span, message);
        for e in &cycle {
            let (span, label) = edge_label(cx, e);
            d = d.with_label(span, label);
        }
        out.push(d.with_help(
            "remove one of these dependencies: a step can only read captures of steps that run before it",
        ));
    }
}

/// A shortest cycle through `start` inside its strongly connected component,
/// as edges in order (breadth-first, so the path is stable and minimal).
fn find_cycle<'g>(cx: &'g Cx, scc: &[NodeIndex], start: NodeIndex) -> Option<Vec<&'g Edge>> {
    let g = &cx.graph.graph;
    let mut prev: std::collections::HashMap<NodeIndex, petgraph::graph::EdgeIndex> = Default::default();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        let mut edges: Vec<_> = g.edges(n).filter(|e| scc.binary_search(&e.target()).is_ok()).collect();
        edges.sort_by_key(|e| (e.target(), e.id()));
        for e in edges {
            let t = e.target();
            if t == start {
                let mut path = vec![e.id()];
                let mut cur = n;
                while cur != start {
                    let pe = prev[&cur];
                    path.push(pe);
                    cur = g.edge_endpoints(pe)?.0;
                }
                path.reverse();
                return Some(path.into_iter().map(|id| &g[id]).collect());
            }
            if let std::collections::hash_map::Entry::Vacant(v) = prev.entry(t) {
                v.insert(e.id());
                queue.push_back(t);
            }
        }
    }
    None
}

fn edge_label(cx: &Cx, e: &Edge) -> (Span, String) {
    let from = &cx.wf.steps[e.from()].id.value;
    let to = &cx.wf.steps[e.to()].id.value;
    match e.kind {
        EdgeKind::Explicit(span) => (span, format!("`{to}` depends on `{from}`")),
        EdgeKind::Inferred { .. } => {
            let Some((name, loc, text, span)) = e.inferred_from(cx.wf) else {
                return (cx.wf.steps[e.to()].span, format!("`{to}` depends on `{from}`"));
            };
            let file_span = cx.file_span(loc, text, span);
            let what = if cx.captures.contains_key(name) && name != from.as_str() {
                format!("`{to}` reads `{name}`, captured by `{from}`")
            } else {
                format!("`{to}` reads the status of `{from}`")
            };
            (file_span, what)
        }
    }
}
