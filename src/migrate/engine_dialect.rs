//! The original workflow engine's format: steps of `name`, `tool` | `agent`
//! and `with`, run one after the other, `{{ name }}` rendered from earlier
//! steps' outputs. Each becomes a step with `id` (the name), `call`
//! (`agent: x` → `agent.x`), `deps` on the previous step, `input_template`
//! (from `with`) and `capture_as` (the name, so `{{ name }}` resolves).
//! A key the step already has is never generated a second time: its own
//! `deps`, `input_template` or `capture_as` stays, and a `with` beside an
//! `input_template` is kept as it is (a literal `check` reports).

use super::Cx;
use super::placeholder::{Scope, StepRef};
use super::step::{StepInfo, template};
use super::value::{Yaml, key_text};
use crate::ir::lower::is_identifier;
use crate::syntax::node::Node;

/// Ids, captures and the sequential deps of the steps.
pub fn infos(steps: &[Node]) -> Vec<StepInfo> {
    let mut out: Vec<StepInfo> = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let id = step_id(step, i);
        let deps = out.last().and_then(|p| p.id.clone()).into_iter().collect();
        let capture = is_identifier(&id).then(|| id.clone());
        out.push(StepInfo { id: Some(id), capture, deps, loop_var: None });
    }
    out
}

/// The step's `name`, or `step_N` (1-based) when it has none.
fn step_id(step: &Node, index: usize) -> String {
    step.get("name")
        .and_then(|n| n.as_scalar())
        .filter(|_| !step.get("name").is_some_and(Node::is_null))
        .map_or_else(|| format!("step_{}", index + 1), |s| s.value.clone())
}

/// `tool: x` → `x`; `agent: x` → `agent.x`.
pub fn call_of(key: &str, value: &Node) -> Yaml {
    match (key, value.as_str()) {
        ("agent", Some(a)) => Yaml::Str(format!("agent.{a}")),
        _ => Yaml::from_node(value),
    }
}

/// The migrated steps.
pub fn steps(cx: &mut Cx, scope: &mut Scope, infos: &[StepInfo], steps: &[Node]) -> Vec<Yaml> {
    let mut out = Vec::with_capacity(steps.len());
    for (i, (step, info)) in steps.iter().zip(infos).enumerate() {
        let Some(entries) = step.as_map() else {
            out.push(Yaml::from_node(step));
            continue;
        };
        let id = info.id.clone().unwrap_or_default();
        let mut map: Vec<(String, Yaml)> = vec![("id".into(), Yaml::Str(id.clone()))];
        let mut what = vec![format!("`id: {id}`")];
        let call = step.get("tool").map(|v| ("tool", v)).or_else(|| step.get("agent").map(|v| ("agent", v)));
        if let Some((key, v)) = call {
            let call = call_of(key, v);
            what.push(format!("`call: {}`", call.as_str().unwrap_or("")));
            map.push(("call".into(), call));
        }
        let own = |key: &str| step.get(key).is_some();
        if !info.deps.is_empty() && !own("deps") {
            what.push(format!("`deps: [{}]`", info.deps.join(", ")));
            map.push(("deps".into(), Yaml::Seq(info.deps.iter().map(|d| Yaml::Str(d.clone())).collect())));
        }
        let with = step.get("with").filter(|_| !own("input_template"));
        if let Some(with) = with {
            what.push("`input_template` from `with`".into());
            let sref = StepRef { index: i, loop_var: None };
            map.push(("input_template".into(), template(cx, scope, &sref, with)));
        }
        if let Some(c) = info.capture.as_ref().filter(|_| step.get("capture_as").is_none()) {
            what.push(format!("`capture_as: {c}`"));
            map.push(("capture_as".into(), Yaml::Str(c.clone())));
        }
        cx.change(step, format!("workflow-engine step → {}", what.join(", ")));
        for e in entries {
            let key = key_text(&e.key);
            let used =
                key == "name" || (key == "with" && with.is_some()) || call.is_some_and(|(k, _)| k == key);
            if key == "with" && with.is_none() {
                let line = cx.line(e.key.span.start);
                let reason = "the step also has `input_template`; `check` reports the old key".to_owned();
                cx.literals.push(super::Literal { line, text: key.clone(), reason });
            }
            if !used {
                map.push((key, Yaml::from_node(&e.value)));
            }
        }
        out.push(Yaml::Map(map));
    }
    out
}
