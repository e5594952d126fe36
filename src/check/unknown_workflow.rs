//! `UNKNOWN_WORKFLOW`
//!
//! *What it does*: reports a `uses:` that names no workflow of the project
//! (with a did-you-mean), a `with:` key the called workflow does not declare
//! under `params:`, and a param it requires that `with:` does not give. A
//! value of the wrong type for a param is a `TYPE_MISMATCH`; reading an
//! output the workflow does not declare under `outputs:` an `UNRESOLVED_VAR`.
//!
//! *Why is this bad?* The run would stop at this step: the engine cannot
//! start a workflow that does not exist, nor one with params it refuses.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::TemplateValue;
use serde_json::Value;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let Some(table) = &cx.config.workflows else { return };
    let me = crate::check::workflow_cycle::self_id(cx, table);
    for (i, step) in cx.steps() {
        let Some(uses) = &step.uses else { continue };
        // Using itself is a `WORKFLOW_CYCLE`, wherever the file is.
        if table.get(&uses.value).is_none() && uses.value != me {
            let ids: Vec<&str> = table.ids().collect();
            let help = suggest(&uses.value, ids.iter().copied()).unwrap_or_else(|| {
                if ids.is_empty() {
                    "the project has no workflows under `workflows/`".to_owned()
                } else {
                    format!("the project's workflows (under `workflows/`): {}", ids.join(", "))
                }
            });
            out.push(
                Diagnostic::new(
                    Code::UnknownWorkflow,
                    uses.span,
                    format!("no workflow `{}` in the project", uses.value),
                )
                .with_help(help),
            );
            continue;
        }
        let Some(contract) = cx.contract(i) else { continue };
        let Some(schema) = &contract.input else { continue };
        check_with(step, &uses.value, schema, out);
    }
}

/// `with:` keys the workflow does not declare, and required params missing.
fn check_with(step: &crate::ir::Step, callee: &str, schema: &Value, out: &mut Vec<Diagnostic>) {
    let empty = serde_json::Map::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let given: Vec<_> = match &step.input_template {
        Some(TemplateValue::Object(entries, _)) => entries.iter().map(|(k, _)| k).collect(),
        // `with: <<obj>>` gives the params whole: not known statically.
        Some(TemplateValue::String(_)) => return,
        _ => Vec::new(),
    };
    let mut suggested: Vec<&str> = Vec::new();
    for key in &given {
        if props.contains_key(key.value.as_str()) {
            continue;
        }
        let names = || props.keys().map(String::as_str);
        suggested.extend(crate::diagnostic::did_you_mean(&key.value, names()));
        let help = suggest(&key.value, names()).unwrap_or_else(|| {
            if props.is_empty() {
                format!("`{callee}` declares no params")
            } else {
                format!("`{callee}` takes: {}", names().collect::<Vec<_>>().join(", "))
            }
        });
        out.push(
            Diagnostic::new(
                Code::UnknownWorkflow,
                key.span,
                format!("workflow `{callee}` has no param `{}`", key.value),
            )
            .with_help(help),
        );
    }
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
    for r in required.filter_map(Value::as_str) {
        // A misspelled key already reported with this suggestion is one mistake, not two.
        if given.iter().any(|k| k.value == r) || suggested.contains(&r) {
            continue;
        }
        let span = match &step.input_template {
            Some(TemplateValue::Object(_, span)) => *span,
            _ => step.uses.as_ref().map_or(step.id.span, |u| u.span),
        };
        out.push(
            Diagnostic::new(
                Code::UnknownWorkflow,
                span,
                format!("workflow `{callee}` requires param `{r}`, which `with` does not give"),
            )
            .with_help(format!("add `{r}:` to `with`")),
        );
    }
}
