//! The workflow as a whole and Think-format steps.
//!
//! Workflow keys: `workflow` → `id`, `title` → `name`, `summary` →
//! `description`; params (see [`super::params`]). Steps: numeric ids and
//! deps → strings, `applicable_when` → `when`, `{{path}}` → `<<path>>` in
//! `input_template` and `rationale`, and the keys of the other dialect
//! (`name`, `tool`, `agent`, `with`) where a step mixes them in.

use super::params::Params;
use super::placeholder::{Scope, StepRef};
use super::step::StepInfo;
use super::step::{scalar_text, template, template_scalars};
use super::value::{Yaml, key_text};
use super::{Cx, Dialect, engine_dialect, when};
use crate::syntax::ast::references;
use crate::syntax::expr::parse_expr;
use crate::syntax::node::{Node, NodeKind, ScalarValue};
use crate::syntax::template::parse_template;

/// Migrates a workflow mapping (`root` has a `steps` list).
pub fn migrate_workflow(cx: &mut Cx, root: &Node, dialect: Dialect) -> Yaml {
    let steps = root.get("steps").and_then(Node::as_seq).unwrap_or_default();
    let infos: Vec<StepInfo> = match dialect {
        Dialect::Think => steps.iter().map(think_info).collect(),
        Dialect::WorkflowEngine => engine_dialect::infos(steps),
    };
    let params = Params::read(cx, root, steps);
    let mut scope = build_scope(&infos, steps, &params);
    let entries = root.as_map().unwrap_or_default();
    let mut out: Vec<(String, Yaml)> = Vec::with_capacity(entries.len() + 2);
    let has = |k: &str| root.get(k).is_some();
    for e in entries {
        let key = key_text(&e.key);
        match key.as_str() {
            "workflow" | "title" | "summary" => {
                let new = match key.as_str() {
                    "workflow" => "id",
                    "title" => "name",
                    _ => "description",
                };
                if has(new) {
                    cx.change(&e.key, format!("dropped `{key}`: the file also has `{new}`"));
                } else {
                    cx.change(&e.key, format!("`{key}` → `{new}`"));
                    out.push((new.to_owned(), Yaml::from_node(&e.value)));
                }
            }
            "params" => {
                out.push(("params".into(), params.yaml(cx, Some(&e.value))));
                if !has("required") && !params.required.is_empty() {
                    out.push(("required".into(), str_seq(&params.required)));
                }
            }
            "required" => out.push(("required".into(), params.required_yaml(&e.value))),
            "steps" => {
                if !has("params") && !params.inferred.is_empty() {
                    out.push(("params".into(), params.yaml(cx, None)));
                    if !has("required") {
                        out.push(("required".into(), str_seq(&params.required)));
                    }
                }
                let migrated = match dialect {
                    Dialect::Think => steps
                        .iter()
                        .enumerate()
                        .map(|(i, s)| think_step(cx, &mut scope, &infos[i], i, s))
                        .collect(),
                    Dialect::WorkflowEngine => engine_dialect::steps(cx, &mut scope, &infos, steps),
                };
                out.push(("steps".into(), Yaml::Seq(migrated)));
            }
            _ => out.push((key, Yaml::from_node(&e.value))),
        }
    }
    Yaml::Map(out)
}

pub(super) fn str_seq(items: &[String]) -> Yaml {
    Yaml::Seq(items.iter().map(|s| Yaml::Str(s.clone())).collect())
}

fn think_info(step: &Node) -> StepInfo {
    let id = step.get("id").or_else(|| step.get("name")).and_then(scalar_text);
    let deps = match step.get("deps").map(|d| &d.kind) {
        Some(NodeKind::Seq(items)) => items.iter().filter_map(scalar_text).collect(),
        Some(NodeKind::Scalar(_)) => step.get("deps").and_then(scalar_text).into_iter().collect(),
        _ => Vec::new(),
    };
    let loop_var =
        step.get("foreach").map(|_| step.get("as").and_then(Node::as_str).unwrap_or("item").to_owned());
    StepInfo { id, capture: step.get("capture_as").and_then(Node::as_str).map(str::to_owned), deps, loop_var }
}

/// Captures, explicit deps, and the edges already implied by `<<…>>`,
/// `when`, `foreach` and `applicable_when`.
fn build_scope(infos: &[StepInfo], steps: &[Node], params: &Params) -> Scope {
    let mut scope = Scope::new(infos.len());
    scope.params = params.declared.iter().map(|n| (n.clone(), params.required.contains(n))).collect();
    for (i, info) in infos.iter().enumerate() {
        if let Some(c) = &info.capture {
            scope.captures.entry(c.clone()).or_insert(i);
        }
    }
    let index_of = |id: &str| infos.iter().position(|s| s.id.as_deref() == Some(id));
    for (to, info) in infos.iter().enumerate() {
        for dep in &info.deps {
            if let Some(from) = index_of(dep) {
                scope.add_edge(from, to);
            }
        }
        let Some(step) = steps.get(to) else { continue };
        let mut exprs = Vec::new();
        for key in ["when", "foreach"] {
            if let Some(e) = step.get(key).and_then(Node::as_str).and_then(|t| parse_expr(t).ok()) {
                exprs.push(e);
            }
        }
        for s in template_scalars(step).into_iter().filter_map(Node::as_str) {
            for seg in parse_template(s).0.segments {
                if let crate::syntax::ast::Segment::Interp { expr, .. } = seg {
                    exprs.push(expr);
                }
            }
        }
        let gate = step.get("applicable_when").and_then(|a| when::translate(a).ok()).map(|t| t.var);
        let mut names: Vec<(String, bool)> = gate.into_iter().map(|v| (v, false)).collect();
        for e in &exprs {
            names.extend(references(e).into_iter().map(|(n, _, status)| (n.to_owned(), status)));
        }
        for (name, is_status) in names {
            let from = if is_status {
                index_of(&name)
            } else if info.loop_var.as_deref() == Some(name.as_str()) {
                None
            } else {
                scope.captures.get(&name).copied()
            };
            if let Some(from) = from {
                scope.add_edge(from, to);
            }
        }
    }
    scope
}

fn think_step(cx: &mut Cx, scope: &mut Scope, info: &StepInfo, index: usize, step: &Node) -> Yaml {
    let Some(entries) = step.as_map() else { return Yaml::from_node(step) };
    let label = info.id.clone().unwrap_or_else(|| format!("#{}", index + 1));
    let sref = StepRef { index, loop_var: info.loop_var.as_deref() };
    let has = |k: &str| step.get(k).is_some();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let key = key_text(&e.key);
        let v = &e.value;
        match key.as_str() {
            "id" => out.push(("id".into(), stringified(cx, v, &format!("step id `{label}`")))),
            "name" if !has("id") => {
                cx.change(&e.key, format!("step `{label}`: `name` → `id`"));
                out.push(("id".into(), stringified(cx, v, &format!("step id `{label}`"))));
            }
            "name" if !has("description") => {
                cx.change(&e.key, format!("step `{label}`: `name` → `description`"));
                out.push(("description".into(), Yaml::from_node(v)));
            }
            "name" => {
                cx.change(&e.key, format!("step `{label}`: dropped `name` (it has `id` and `description`)"))
            }
            "tool" | "agent" if !has("call") => {
                let call = engine_dialect::call_of(&key, v);
                cx.change(
                    &e.key,
                    format!("step `{label}`: `{key}` → `call: {}`", call.as_str().unwrap_or("")),
                );
                out.push(("call".into(), call));
            }
            "with" if !has("input_template") => {
                cx.change(&e.key, format!("step `{label}`: `with` → `input_template`"));
                out.push(("input_template".into(), template(cx, scope, &sref, v)));
            }
            "deps" => out.push(("deps".into(), deps(cx, v, &label))),
            "applicable_when" if !has("when") => match when::translate(v) {
                Ok(t) => {
                    cx.change(&e.key, format!("step `{label}`: `applicable_when` → `when: {}`", t.expr));
                    out.push(("when".into(), Yaml::Str(t.expr)));
                }
                Err(why) => {
                    let line = cx.line(e.key.span.start);
                    cx.literals.push(super::Literal { line, text: "applicable_when".into(), reason: why });
                    out.push((key, Yaml::from_node(v)));
                }
            },
            "input_template" | "rationale" => out.push((key, template(cx, scope, &sref, v))),
            "tool" | "agent" | "with" | "applicable_when" => {
                let new = if key == "with" {
                    "input_template"
                } else if key == "applicable_when" {
                    "when"
                } else {
                    "call"
                };
                let line = cx.line(e.key.span.start);
                let reason = format!("the step also has `{new}`; `check` reports the old key");
                cx.literals.push(super::Literal { line, text: key.clone(), reason });
                out.push((key, Yaml::from_node(v)));
            }
            _ => out.push((key, Yaml::from_node(v))),
        }
    }
    Yaml::Map(out)
}

/// A scalar that must be a string (ids): `1` → `"1"`.
fn stringified(cx: &mut Cx, node: &Node, what: &str) -> Yaml {
    match node.as_scalar().map(|s| s.resolve()) {
        Some(ScalarValue::Int(_) | ScalarValue::Float(_) | ScalarValue::Bool(_)) => {
            let text = node.as_scalar().map(|s| s.value.clone()).unwrap_or_default();
            cx.change(node, format!("{what}: the number `{text}` → the string `'{text}'`"));
            Yaml::Str(text)
        }
        _ => Yaml::from_node(node),
    }
}

fn deps(cx: &mut Cx, node: &Node, label: &str) -> Yaml {
    match &node.kind {
        NodeKind::Seq(items) => {
            Yaml::Seq(items.iter().map(|d| stringified(cx, d, &format!("step `{label}` deps"))).collect())
        }
        _ => Yaml::from_node(node),
    }
}
