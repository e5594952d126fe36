//! `UNKNOWN_TOOL`
//!
//! *What it does*: reports a `call` the tool manifest does not list (with a
//! manifest), a call to a server of `tools.lock.json` that names none of its
//! tools, and — whenever the tool's input schema is known: the engine's own
//! tools (`think`, `prompt.say`, `think_*`, `model.generate`) always, the
//! lock's, others from the manifest — `input_template` keys the tool does
//! not take and required inputs that are missing.
//!
//! *Why is this bad?* The client cannot run a tool it does not have; a
//! misspelled argument is silently dropped or rejected at run time.

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::TemplateValue;
use serde_json::Value;

/// The alternatives of required inputs: `required`, or each branch of an
/// `anyOf` of `required` lists (`think` needs `thought` or its alias `thoughts`).
fn required_sets(schema: &Value) -> Vec<Vec<&str>> {
    fn list(s: &Value) -> Vec<&str> {
        s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect()
    }
    let mut sets: Vec<Vec<&str>> = list(schema).into_iter().map(|r| vec![r]).collect();
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        let alternatives: Vec<&str> = any.iter().flat_map(list).collect();
        if !alternatives.is_empty() && any.iter().all(|b| list(b).len() == 1) {
            sets.push(alternatives);
        }
    }
    sets
}

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(call) = &step.call else { continue };
        if let Some(manifest) = &cx.config.tools
            && !manifest.contains(&call.value)
            && cx.contract(i).is_none()
        {
            let help = suggest(&call.value, manifest.tools.keys().map(String::as_str));
            out.push(
                Diagnostic::new(Code::UnknownTool, call.span, format!("unknown tool `{}`", call.value))
                    .with_help_opt(
                        help.or_else(|| Some("the tool manifest (--tools) does not list it".into())),
                    ),
            );
            continue;
        }
        if let Some(table) = &cx.config.lock
            && let Some(server) = table.lock.server_of(&call.value)
            && cx.contract(i).is_none()
        {
            let tools = table.lock.servers[server].tools.iter().map(|t| format!("{server}.{}", t.name));
            let tools: Vec<String> = tools.collect();
            let help = suggest(&call.value, tools.iter().map(String::as_str)).unwrap_or_else(|| {
                let more = tools.len().saturating_sub(20);
                let shown = tools.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
                let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                format!("`{server}` has: {shown}{more} (tools.lock.json)")
            });
            out.push(
                Diagnostic::new(
                    Code::UnknownTool,
                    call.span,
                    format!("server `{server}` has no tool `{}`", call.value),
                )
                .with_help(help),
            );
            continue;
        }
        // The manifest's input schema, the engine's own tool's, or `model.generate`'s.
        let Some(schema) = crate::check::tool_input::input_schema(cx, i) else { continue };
        // An engine tool's step without `input_template` leaves the input to
        // the client driving the run (a `think` step: the model thinks).
        let listed = cx.config.tools.as_ref().is_some_and(|m| m.tools.contains_key(call.value.as_str()));
        if step.input_template.is_none() && !listed && cx.config.builtins.get(&call.value).is_some() {
            continue;
        }
        check_inputs(step, call, &schema, out);
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
        for set in required_sets(schema) {
            // A misspelled key already reported with this suggestion is one mistake, not two.
            let given_one =
                set.iter().any(|r| given.iter().any(|k| k.value == *r) || suggested.iter().any(|s| s == r));
            if whole_template || given_one {
                continue;
            }
            let span = match &step.input_template {
                Some(TemplateValue::Object(_, span)) => *span,
                _ => call.span,
            };
            let (r, alias) = (set[0], set.get(1..).unwrap_or_default());
            let or = alias.iter().map(|a| format!(" or `{a}`")).collect::<String>();
            out.push(
                Diagnostic::new(
                    Code::UnknownTool,
                    span,
                    format!(
                        "tool `{}` requires input `{r}`{or}, which `input_template` does not give",
                        call.value
                    ),
                )
                .with_help(format!("add `{r}:` to `input_template`")),
            );
        }
    }
}
