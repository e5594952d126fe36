//! What both dialects read of a step (its ids and bindings, its template
//! scalars) and the template rewrite they share; below `think`,
//! `engine_dialect` and `params`, which all use it.

use super::Cx;
use super::placeholder::{self, Scope, StepRef};
use super::value::{Yaml, key_text};
use crate::syntax::node::{Node, NodeKind};

/// What the graph and the resolver need to know about a step, read before
/// anything is rewritten.
#[derive(Debug, Default)]
pub struct StepInfo {
    pub id: Option<String>,
    pub capture: Option<String>,
    pub deps: Vec<String>,
    pub loop_var: Option<String>,
}

/// A scalar's text, whatever its type (`1` → "1").
pub fn scalar_text(node: &Node) -> Option<String> {
    node.as_scalar().filter(|_| !node.is_null()).map(|s| s.value.clone())
}

/// Rewrites `{{…}}` in every string of a template value.
pub fn template(cx: &mut Cx, scope: &mut Scope, step: &StepRef, node: &Node) -> Yaml {
    match &node.kind {
        NodeKind::Scalar(_) => match node.as_str() {
            Some(s) => Yaml::Str(placeholder::rewrite(cx, scope, step, node, s)),
            None => Yaml::from_node(node),
        },
        NodeKind::Seq(items) => Yaml::Seq(items.iter().map(|i| template(cx, scope, step, i)).collect()),
        NodeKind::Map(entries) => Yaml::Map(
            entries.iter().map(|e| (key_text(&e.key), template(cx, scope, step, &e.value))).collect(),
        ),
    }
}

/// Every scalar of a step's templates (`input_template`, `rationale`, `with`).
pub fn template_scalars(step: &Node) -> Vec<&Node> {
    let mut out = Vec::new();
    for key in ["input_template", "rationale", "with"] {
        if let Some(n) = step.get(key) {
            collect_nodes(n, &mut out);
        }
    }
    out
}

fn collect_nodes<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match &node.kind {
        NodeKind::Scalar(_) => out.push(node),
        NodeKind::Seq(items) => items.iter().for_each(|i| collect_nodes(i, out)),
        NodeKind::Map(entries) => entries.iter().for_each(|e| collect_nodes(&e.value, out)),
    }
}
