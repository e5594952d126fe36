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
    for step in &cx.wf.steps {
        let Some(call) = &step.call else { continue };
        // The engine's own `model.generate` has a known input schema, with or without a manifest.
        let builtin = crate::check::manifest::builtin_input_schema(&call.value);
        let schema = match &cx.config.tools {
            None => match &builtin {
                Some(schema) => schema,
                None => continue,
            },
            Some(manifest) => {
                if !manifest.contains(&call.value) {
                    let help = suggest(&call.value, manifest.tools.keys().map(String::as_str));
                    out.push(
                        Diagnostic::new(
                            Code::UnknownTool,
                            call.span,
                            format!("unknown tool `{}`", call.value),
                        )
                        .with_help_opt(
                            help.or_else(|| Some("the tool manifest (--tools) does not list it".into())),
                        ),
                    );
                    continue;
                }
                match (manifest.tools.get(call.value.as_str()), &builtin) {
                    (Some(Some(schema)), _) | (_, Some(schema)) => schema,
                    _ => continue,
                }
            }
        };
        check_inputs(step, call, schema, out);
    }
}

/// `input_template` keys the tool does not take, and required inputs missing.
fn check_inputs(step: &crate::ir::Step, call: &crate::ir::Str, schema: &Value, out: &mut Vec<Diagnostic>) {
    {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
        // Deliberately stricter than JSON Schema's default: a tool's listed
        // `properties` are its inputs, and a key it does not list is almost
        // always a typo. Only `additionalProperties: true` (or a schema for
        // them) says the tool takes more.
        let open = matches!(schema.get("additionalProperties"), Some(Value::Bool(true) | Value::Object(_)));
        let given: Vec<_> = match &step.input_template {
            Some(TemplateValue::Object(entries, _)) => entries.iter().map(|(k, _)| k).collect(),
            _ => Vec::new(),
        };
        let mut suggested: Vec<String> = Vec::new();
        if !open {
            for key in &given {
                if !props.contains_key(key.value.as_str()) {
                    if let Some(s) =
                        crate::diagnostic::did_you_mean(&key.value, props.keys().map(String::as_str))
                    {
                        suggested.push(s.to_owned());
                    }
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
            // A misspelled key already reported with this suggestion is one mistake, not two.
            if whole_template || given.iter().any(|k| k.value == r) || suggested.iter().any(|s| s == r) {
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
