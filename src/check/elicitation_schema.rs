//! `ELICITATION_SCHEMA`
//!
//! *What it does*: reports an `await:` schema that an MCP client could
//! not show a person as an elicitation form: elicitation's forms are a
//! flat object whose properties are strings, numbers, integers, booleans
//! or enums — no nested objects, no arrays, no `oneOf` of shapes. The
//! warning names every property (or the top-level shape) that falls
//! outside.
//!
//! *Why is this bad?* A run may be answered over MCP elicitation (the
//! server asks the person itself): a schema outside the form subset cannot
//! be asked that way, so the question must be answered by other means
//! (`savant-think answer`, `think_answer`, the inspector).

use crate::check::Cx;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{SchemaRef, WaitKind};
use serde_json::Value;

pub(crate) fn check(cx: &Cx, out: &mut Vec<Diagnostic>) {
    for (_, step) in cx.steps() {
        let Some(WaitKind::Answer { .. }) = step.wait.as_deref().map(|w| &w.kind) else { continue };
        let (schema, span) = match &step.success_schema {
            Some(SchemaRef::Inline { schema, span }) => (&**schema, *span),
            Some(SchemaRef::Named(n)) => match cx.config.schemas.get(n.value.as_str()) {
                Some(Ok(schema)) => (schema, n.span),
                _ => continue,
            },
            None => continue,
        };
        // An invalid schema is UNKNOWN_SCHEMA's alone.
        let outside = outside(schema);
        if outside.is_empty() || jsonschema::validator_for(schema).is_err() {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::ElicitationSchema,
                span,
                format!(
                    "step `{}`'s answer cannot be asked with an MCP elicitation form: {}",
                    step.id.value,
                    outside.join("; ")
                ),
            )
            .with_help(
                "a form is a flat object of strings, numbers, integers, booleans and enums: split nested \
                 data into fields, or answer it with `savant-think answer` / `think_answer`",
            ),
        );
    }
}

/// What of `schema` falls outside elicitation's form subset, in words.
fn outside(schema: &Value) -> Vec<String> {
    let Some(obj) = schema.as_object() else { return vec!["the schema is not an object".to_owned()] };
    let mut out = Vec::new();
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None if obj.contains_key("properties") => {}
        Some(t) => out.push(format!("the answer is {}, not an object of fields", kind(t))),
        None => out.push("the answer has no `type: object` with `properties`".to_owned()),
    }
    for key in ["oneOf", "anyOf", "allOf", "$ref", "patternProperties"] {
        if obj.contains_key(key) {
            out.push(format!("`{key}` at the top"));
        }
    }
    let Some(properties) = obj.get("properties").and_then(Value::as_object) else { return out };
    for (name, p) in properties {
        if let Some(why) = property(p) {
            out.push(format!("`{name}` {why}"));
        }
    }
    out
}

/// Why one property is not a form field, if it is not.
fn property(p: &Value) -> Option<String> {
    let Some(p) = p.as_object() else { return Some("is not a schema".to_owned()) };
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    if let Some(e) = p.get("enum") {
        let stringy = p.get("type").is_none_or(|t| t == "string");
        return (!(strings(e) && stringy)).then(|| "is an enum of values other than strings".to_owned());
    }
    if let Some(one_of) = p.get("oneOf") {
        let titled = one_of.as_array().is_some_and(|a| {
            a.iter().all(|o| o.get("const").is_some_and(Value::is_string) && o.get("title").is_some())
        });
        return (!titled).then(|| "is a `oneOf` that is not a titled enum (`const` and `title`)".to_owned());
    }
    for key in ["anyOf", "allOf", "$ref"] {
        if p.contains_key(key) {
            return Some(format!("uses `{key}`"));
        }
    }
    match p.get("type") {
        Some(Value::String(t)) if matches!(t.as_str(), "string" | "number" | "integer" | "boolean") => None,
        Some(t) => Some(format!("is {}", kind(t))),
        None => Some("has no `type`".to_owned()),
    }
}

/// A `type:` in words: `an object`, `an array`, `one of string, null`.
fn kind(t: &Value) -> String {
    match t {
        Value::String(s) if matches!(s.as_str(), "object" | "array" | "integer") => format!("an {s}"),
        Value::String(s) => format!("a {s}"),
        Value::Array(a) => {
            let names: Vec<String> = a.iter().map(|v| v.as_str().unwrap_or("?").to_owned()).collect();
            format!("one of several types ({})", names.join(", "))
        }
        other => format!("of type {other}"),
    }
}
