//! `UNKNOWN_TOOL` (only with `--tools FILE`)
//!
//! *What it does*: reports a `call` the tool manifest does not list, and —
//! when the manifest gives the tool's input schema — `input_template` keys the
//! tool does not take and required inputs that are missing.
//!
//! *Why is this bad?* The client cannot run a tool it does not have; a
//! misspelled argument is silently dropped or rejected at run time.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::TemplateValue;
use serde_json::Value;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    let Some(manifest) = &cx.config.tools else { return };
    for step in &cx.wf.steps {
        let Some(call) = &step.call else { continue };
        if !manifest.contains(&call.value) {
            let help = suggest(&call.value, manifest.tools.keys().map(String::as_str));
            out.push(
                Diagnostic::new(Code::UnknownTool, call.span, format!("unknown tool `{}`", call.value))
                    .with_help_opt(
                        help.or_else(|| Some("the tool manifest (--tools) does not list it".into())),
                    ),
            );
            continue;
        }
        let Some(Some(schema)) = manifest.tools.get(&call.value) else { continue };
        let Some(props) = schema.get("properties").and_then(Value::as_object) else { continue };
        let open = !matches!(schema.get("additionalProperties"), Some(Value::Bool(false)) | None)
            || schema.get("additionalProperties").is_some_and(Value::is_object);
        let given: Vec<_> = match &step.input_template {
            Some(TemplateValue::Object(entries, _)) => entries.iter().map(|(k, _)| k).collect(),
            _ => Vec::new(),
        };
        if !open {
            for key in &given {
                if !props.contains_key(&key.value) {
                    let help = suggest(&key.value, props.keys().map(String::as_str)).or_else(|| {
                        Some(format!(
                            "`{}` takes: {}",
                            call.value,
                            props.keys().cloned().collect::<Vec<_>>().join(", ")
                        ))
                    });
                    out.push(
                        Diagnostic::new(
                            Code::UnknownTool,
                            key.span,
                            format!("tool `{}` has no input `{}`", call.value, key.value),
                        )
                        .with_help_opt(help),
                    );
                }
            }
        }
        let whole_template = matches!(&step.input_template, Some(TemplateValue::String(_)));
        let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
        for r in required.filter_map(Value::as_str) {
            if whole_template || given.iter().any(|k| k.value == r) {
                continue;
            }
            let span = match &step.input_template {
                Some(TemplateValue::Object(_, span)) => *span,
                _ => call.span,
            };
            out.push(
                Diagnostic::new(
                    Code::UnknownTool,
                    span,
                    format!(
                        "tool `{}` requires input `{r}`, which `input_template` does not give",
                        call.value
                    ),
                )
                .with_help(format!("add `{r}:` to `input_template`")),
            );
        }
    }
}
