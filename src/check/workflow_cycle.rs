//! `WORKFLOW_CYCLE` and `WORKFLOW_TOO_DEEP` (and, past both,
//! `CALLEE_ERROR`: see `callee_error.rs`)
//!
//! *What it does*: follows `uses:` across the project's files. A workflow
//! that reaches itself again (A uses B uses A) is a `WORKFLOW_CYCLE`,
//! reported at the `uses:` that starts it with every edge of the cycle named
//! with its file, line and column. A chain of sub-workflows deeper than
//! [`MAX_USES_DEPTH`] (16) is a `WORKFLOW_TOO_DEEP`, with the chain.
//!
//! *Why is this bad?* A run of a cycle would start children forever; a chain
//! that deep is almost always one, or a design no one can follow.

use crate::check::Cx;
use crate::check::workflows::{MAX_USES_DEPTH, UseEdge, WorkflowTable};
use crate::diagnostic::{Code, Diagnostic};
use std::collections::{HashMap, HashSet, VecDeque};

/// Edges of a cycle or chain named in its help at most.
const MAX_SHOWN: usize = 20;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let Some(table) = &cx.config.workflows else { return };
    let me = self_id(cx, table);
    let mut depths = Depths { table, memo: HashMap::new(), on_path: HashSet::new() };
    for (_, step) in cx.steps() {
        let Some(uses) = &step.uses else { continue };
        let here = format!("`{me}` uses `{}` (step `{}`)", uses.value, step.id.value);
        if let Some(path) = path_back(table, &uses.value, &me) {
            let mut names: Vec<&str> = vec![&me, &uses.value];
            names.extend(path.iter().map(|e| e.callee.as_str()));
            let message = if uses.value == me {
                format!("workflow `{me}` uses itself")
            } else {
                format!("workflow cycle: {}", chain(&names))
            };
            let help = edges_help(table, &uses.value, &path);
            let mut d = Diagnostic::new(Code::WorkflowCycle, uses.span, message).with_label(uses.span, here);
            if !help.is_empty() {
                d = d.with_help(format!("then {help}; a workflow cannot run itself, even indirectly"));
            } else {
                d = d.with_help("a workflow cannot run itself");
            }
            out.push(d);
            continue;
        }
        // A cycle between workflows below this one: `plan` refuses this one too.
        if let Some((start, cycle)) = cycle_below(table, &uses.value) {
            let mut names: Vec<&str> = vec![&start];
            names.extend(cycle.iter().map(|e| e.callee.as_str()));
            let message = format!("`{}` leads into a workflow cycle: {}", uses.value, chain(&names));
            let help = edges_help(table, &start, &cycle);
            out.push(
                Diagnostic::new(Code::WorkflowCycle, uses.span, message)
                    .with_label(uses.span, here)
                    .with_help(format!("{help}; `plan` refuses this workflow until that cycle is broken")),
            );
            continue;
        }
        let (below, chain_edges) = depths.depth(&uses.value);
        let depth = below + 1;
        if depth > MAX_USES_DEPTH {
            let mut names: Vec<&str> = vec![&me, &uses.value];
            names.extend(chain_edges.iter().map(|e| e.callee.as_str()));
            let mut help = format!("the chain: {}", chain(&names));
            if let Some(last) = chain_edges.last() {
                let from =
                    chain_edges.len().checked_sub(2).map_or(uses.value.as_str(), |i| &chain_edges[i].callee);
                let path = table.get(from).map_or("?", |w| w.path.as_str());
                help.push_str(&format!(" (its last `uses:` at {path}:{}:{})", last.line, last.column));
            }
            out.push(
                Diagnostic::new(
                    Code::WorkflowTooDeep,
                    uses.span,
                    format!(
                        "this `uses:` starts a chain of more than {MAX_USES_DEPTH} nested sub-workflows (the limit)"
                    ),
                )
                .with_label(uses.span, here)
                .with_help(format!("{help}; flatten it: call the deeper workflows from one parent")),
            );
            continue;
        }
        // No cycle below and not too deep: the callee is checked in turn.
        if let Some(d) = crate::check::callee_error::diagnostic(cx, table, &uses.value, uses.span, here) {
            out.push(d);
        }
    }
}

/// The id callers name the checked workflow by: its file stem when the
/// project has it, else (a file outside `workflows/`) its id.
pub(crate) fn self_id(cx: &Cx, table: &WorkflowTable) -> String {
    let stem = crate::check::default_id(&cx.src.path);
    if table.get(&stem).is_some() { stem } else { cx.wf.id.clone() }
}

/// `a → b → c`, shortened when long.
fn chain(names: &[&str]) -> String {
    let shown = |ns: &[&str]| ns.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" → ");
    if names.len() > MAX_SHOWN {
        format!("{} → … → {}", shown(&names[..MAX_SHOWN / 2]), shown(&names[names.len() - 2..]))
    } else {
        shown(names)
    }
}

/// Each edge with its file and position: "`b` uses `a` at workflows/b.yaml:3:11 (step `x`)".
fn edges_help(table: &WorkflowTable, first: &str, edges: &[UseEdge]) -> String {
    let mut from = first;
    let mut parts = Vec::new();
    for e in edges.iter().take(MAX_SHOWN) {
        let path = table.get(from).map_or("?", |w| w.path.as_str());
        parts.push(format!(
            "`{from}` uses `{}` at {path}:{}:{} (step `{}`)",
            e.callee, e.line, e.column, e.step
        ));
        from = &e.callee;
    }
    if edges.len() > MAX_SHOWN {
        parts.push(format!("… {} more", edges.len() - MAX_SHOWN));
    }
    parts.join(", ")
}

/// The shortest path of `uses:` edges from `from` back to `to`, if any
/// (empty when `from` is `to`).
fn path_back(table: &WorkflowTable, from: &str, to: &str) -> Option<Vec<UseEdge>> {
    if from == to {
        return Some(Vec::new());
    }
    let mut parent: HashMap<&str, (&str, &UseEdge)> = HashMap::new();
    let mut queue: VecDeque<&str> = VecDeque::from([from]);
    let mut seen: HashSet<&str> = HashSet::from([from]);
    while let Some(at) = queue.pop_front() {
        for e in table.get(at).map(|w| w.uses.as_slice()).unwrap_or_default() {
            if e.callee == to {
                let mut path = vec![e.clone()];
                let mut cur = at;
                while let Some((p, edge)) = parent.get(cur) {
                    path.push((*edge).clone());
                    cur = p;
                }
                path.reverse();
                return Some(path);
            }
            if table.get(&e.callee).is_some() && seen.insert(e.callee.as_str()) {
                parent.insert(e.callee.as_str(), (at, e));
                queue.push_back(e.callee.as_str());
            }
        }
    }
    None
}

/// A cycle of `uses:` reachable from `from` (depth first): the workflow
/// where it closes and its edges round to it again.
fn cycle_below(table: &WorkflowTable, from: &str) -> Option<(String, Vec<UseEdge>)> {
    let mut done: HashSet<&str> = HashSet::new();
    // The path from `from`: each workflow with the index of its next edge,
    // and the edges taken between them.
    let mut path: Vec<(&str, usize)> = vec![(table.get(from)?.id.as_str(), 0)];
    let mut taken: Vec<&UseEdge> = Vec::new();
    while let Some(&(at, k)) = path.last() {
        let uses = table.get(at).map(|w| w.uses.as_slice()).unwrap_or_default();
        let Some(e) = uses.get(k) else {
            done.insert(at);
            path.pop();
            taken.pop();
            continue;
        };
        if let Some(last) = path.last_mut() {
            last.1 += 1;
        }
        if let Some(i) = path.iter().position(|(w, _)| *w == e.callee) {
            let mut cycle: Vec<UseEdge> = taken[i..].iter().map(|e| (*e).clone()).collect();
            cycle.push(e.clone());
            return Some((e.callee.clone(), cycle));
        }
        if let Some(w) = table.get(&e.callee).filter(|w| !done.contains(w.id.as_str())) {
            path.push((w.id.as_str(), 0));
            taken.push(e);
        }
    }
    None
}

/// The longest chain of `uses:` below each workflow, counted up to one past
/// the limit (a cycle below is cut where it closes: it is reported in the
/// files of the cycle).
struct Depths<'t> {
    table: &'t WorkflowTable,
    memo: HashMap<&'t str, (usize, Vec<UseEdge>)>,
    on_path: HashSet<&'t str>,
}

impl<'t> Depths<'t> {
    fn depth(&mut self, id: &str) -> (usize, Vec<UseEdge>) {
        let Some(w) = self.table.get(id) else { return (0, Vec::new()) };
        let id = w.id.as_str();
        if let Some(known) = self.memo.get(id) {
            return known.clone();
        }
        // The recursion stops one past the limit: it is at most 18 deep.
        if self.on_path.contains(id) || self.on_path.len() > MAX_USES_DEPTH {
            return (0, Vec::new());
        }
        self.on_path.insert(id);
        let mut best: (usize, Vec<UseEdge>) = (0, Vec::new());
        for e in &w.uses {
            let (below, mut rest) = self.depth(&e.callee);
            let exists = self.table.get(&e.callee).is_some();
            let d = if exists { below + 1 } else { 0 };
            if d > best.0 {
                rest.insert(0, e.clone());
                best = (d, rest);
            }
        }
        self.on_path.remove(id);
        // A result cut short by the limit depends on the path here: not kept.
        if best.0 + self.on_path.len() < MAX_USES_DEPTH {
            self.memo.insert(id, best.clone());
        }
        best
    }
}
