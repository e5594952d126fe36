//! `UNKNOWN_INPUT`
//!
//! *What it does*: whenever the input schema of what a step calls is known
//! — a tool (the engine's own always, the lock's, others from the
//! manifest) or a workflow of the project (`uses:`, its `params:`) —
//! reports an `input_template` / `with:` key it does not take, with a
//! did-you-mean: a close name, else the required input the key stands in
//! place of (`msg:` where `prompt.say` wants `message`), which is then not
//! reported again as a `MISSING_INPUT` (one mistake, one diagnostic).
//!
//! *Why is this bad?* A misspelled argument is silently dropped or
//! rejected at run time.
//!
//! [`inputs`] is the one reading of a step's keys against the schema,
//! shared with `MISSING_INPUT` (`missing_input.rs`).

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::ir::{Step, Str, TemplateValue};
use serde_json::Value;
use std::borrow::Cow;

/// What a step calls, as its messages name it.
pub(crate) struct Callee<'s> {
    /// `tool` or `workflow`.
    pub kind: &'static str,
    pub name: &'s Str,
    /// `input` or `param`.
    pub input: &'static str,
    /// The key the inputs are written under: `input_template` or `with`.
    pub key: &'static str,
}

/// A step's keys against the input schema of what it calls.
pub(crate) struct Inputs<'s> {
    pub callee: Callee<'s>,
    /// Keys it does not take, each with the input it most likely means.
    pub unknown: Vec<(&'s Str, Option<String>)>,
    /// The inputs it takes, for a help line when nothing is close.
    pub names: Vec<String>,
    /// Required inputs not given (each with its alternatives) and not
    /// stood in for by an unknown key.
    pub missing: Vec<Vec<String>>,
}

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

/// Step `i`'s keys against the input schema of its tool or workflow; `None`
/// when that schema is not known, or the step leaves its input to the client.
pub(crate) fn inputs<'s>(cx: &Cx<'s>, i: usize, step: &'s Step) -> Option<Inputs<'s>> {
    let (callee, schema): (Callee, Cow<Value>) = match (&step.call, &step.uses) {
        (Some(call), _) => {
            let schema = crate::check::tool_input::input_schema(cx, i)?;
            // An engine tool's step without `input_template` leaves the input
            // to the client driving the run (a `think` step: the model thinks).
            let listed = cx.config.tools.as_ref().is_some_and(|m| m.tools.contains_key(call.value.as_str()));
            if step.input_template.is_none() && !listed && cx.config.builtins.get(&call.value).is_some() {
                return None;
            }
            // A schema without `properties` does not say what the tool takes.
            schema.get("properties").and_then(Value::as_object)?;
            (Callee { kind: "tool", name: call, input: "input", key: "input_template" }, schema)
        }
        (None, Some(uses)) => {
            let schema = cx.contract(i)?.input.as_ref()?;
            (Callee { kind: "workflow", name: uses, input: "param", key: "with" }, Cow::Borrowed(schema))
        }
        (None, None) => return None,
    };
    let given: Vec<&Str> = match &step.input_template {
        Some(TemplateValue::Object(entries, _)) => entries.iter().map(|(k, _)| k).collect(),
        // `with: <<obj>>` / a whole-template string: not known statically.
        Some(TemplateValue::String(_)) => return None,
        _ => Vec::new(),
    };
    let empty = serde_json::Map::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    // Deliberately stricter than JSON Schema's default: the listed
    // `properties` are the inputs, and a key not listed is almost always a
    // typo. Only `additionalProperties: true` (or a schema) says it takes more.
    let open = matches!(schema.get("additionalProperties"), Some(Value::Bool(true) | Value::Object(_)));
    let mut missing: Vec<Vec<String>> = required_sets(&schema)
        .into_iter()
        .filter(|set| !set.iter().any(|r| given.iter().any(|k| k.value == *r)))
        .map(|set| set.into_iter().map(str::to_owned).collect())
        .collect();
    let mut unknown = Vec::new();
    for key in given.into_iter().filter(|k| !open && !props.contains_key(k.value.as_str())) {
        let close = did_you_mean(&key.value, props.keys().map(String::as_str)).map(str::to_owned);
        // The key stands in for a required input: a close one, else the
        // first required input still missing.
        let stands_for = match &close {
            Some(c) => missing.iter().position(|set| set.contains(c)),
            None => (!missing.is_empty()).then_some(0),
        };
        let meant = close.or_else(|| stands_for.map(|k| missing[k][0].clone()));
        if let Some(k) = stands_for {
            missing.remove(k);
        }
        unknown.push((key, meant));
    }
    Some(Inputs { callee, unknown, names: props.keys().cloned().collect(), missing })
}

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (i, step) in cx.steps() {
        let Some(found) = inputs(cx, i, step) else { continue };
        let Callee { kind, name, input, .. } = &found.callee;
        for (key, meant) in &found.unknown {
            let help = match meant {
                Some(m) => format!("did you mean `{m}`?"),
                None if found.names.is_empty() => format!("`{}` declares no {input}s", name.value),
                None => format!("`{}` takes: {}", name.value, found.names.join(", ")),
            };
            out.push(
                Diagnostic::new(
                    Code::UnknownInput,
                    key.span,
                    format!("{kind} `{}` has no {input} `{}`", name.value, key.value),
                )
                .with_help(help),
            );
        }
    }
}
