//! Tool schemas and arguments at the edge, for every tool of the catalog:
//! standard JSON Schema only (no schemars `format`s a strict validator
//! rejects), and arguments a tool does not take refused by name.

use crate::runtime::error_details::{UnknownArgument, UnknownArguments};
use crate::runtime::{EngineError, ErrorCode};
use serde_json::{Value, json};

/// The `format`s JSON Schema defines (draft 2020-12); schemars' own
/// (`uint64`, `double`, …) are not among them and strict validators (ajv,
/// the MCP Inspector) warn or fail on them.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops every non-standard `format`, keeping what it meant where JSON
/// Schema can say it: an unsigned integer is `minimum: 0`.
pub(crate) fn standard_formats(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let format = o.get("format").and_then(Value::as_str).map(str::to_owned);
            if let Some(format) = format.filter(|f| !STANDARD_FORMATS.contains(&f.as_str())) {
                o.remove("format");
                if format.starts_with("uint") {
                    o.entry("minimum").or_insert(json!(0));
                }
            }
            o.values_mut().for_each(standard_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats),
        _ => {}
    }
}

/// `INVALID_PARAMS` for arguments the tool does not take (its input schema
/// lists every argument, the documented aliases included), each with a
/// did-you-mean; `None` when every argument is known.
pub(crate) fn unknown_arguments(tool: &str, input: &Value, args: &Value) -> Option<EngineError> {
    let props = input.get("properties").and_then(Value::as_object)?;
    let given = args.as_object()?;
    let unknown: Vec<UnknownArgument> = given
        .keys()
        .filter(|k| !props.contains_key(*k))
        .map(|k| {
            let snake = to_snake_case(k);
            let help = if props.contains_key(&snake) {
                Some(format!("did you mean `{snake}`?"))
            } else {
                crate::diagnostic::suggest(k, props.keys().map(String::as_str))
            };
            UnknownArgument { argument: k.to_string(), help }
        })
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let names: Vec<String> = unknown.iter().map(|u| format!("`{}`", u.argument)).collect();
    let mut message = format!(
        "`{tool}` does not take {} {}",
        if names.len() == 1 { "argument" } else { "arguments" },
        names.join(", ")
    );
    if let [only] = unknown.as_slice()
        && let Some(help) = &only.help
    {
        message.push_str(&format!(" ({help})"));
    }
    let known: Vec<String> = props.keys().cloned().collect();
    let help = format!("the arguments of `{tool}` are: {}", known.join(", "));
    Some(EngineError::with(
        ErrorCode::InvalidParams,
        UnknownArguments { message, unknown, arguments: known, help },
    ))
}

/// `runId` → `run_id`.
fn to_snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '-' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::catalog;

    #[test]
    fn every_tool_schema_is_standard_json_schema() {
        fn formats(v: &Value, at: &str, out: &mut Vec<String>) {
            match v {
                Value::Object(o) => {
                    if let Some(f) = o.get("format").and_then(Value::as_str)
                        && !STANDARD_FORMATS.contains(&f)
                    {
                        out.push(format!("{at}: {f}"));
                    }
                    o.iter().for_each(|(k, v)| formats(v, &format!("{at}/{k}"), out));
                }
                Value::Array(items) => {
                    items.iter().enumerate().for_each(|(i, v)| formats(v, &format!("{at}/{i}"), out))
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        for t in catalog::all() {
            formats(t.input(), &format!("{} input", t.name), &mut found);
            formats(t.output(), &format!("{} output", t.name), &mut found);
        }
        assert!(found.is_empty(), "non-standard formats: {found:?}");
        // What the format said is kept: an unsigned integer has minimum 0.
        let next = catalog::find("think_next").unwrap();
        assert_eq!(next.input()["properties"]["expected_version"]["minimum"], json!(0), "{}", next.input());
    }

    #[test]
    fn unknown_arguments_are_named_with_a_did_you_mean() {
        let plan = catalog::find("think_plan").unwrap();
        let e =
            unknown_arguments("think_plan", plan.input(), &json!({"workflow": "w", "runId": "r1"})).unwrap();
        assert_eq!(e.code, ErrorCode::InvalidParams);
        let message = e.message_text().unwrap();
        assert!(message.contains("`runId`") && message.contains("did you mean `run_id`?"), "{message}");
        let e = unknown_arguments("think_plan", plan.input(), &json!({"worklfow": "w", "x": 1})).unwrap();
        assert_eq!(
            e.details.to_json()["unknown"][0],
            json!({"argument": "worklfow", "help": "did you mean `workflow`?"})
        );
        assert_eq!(e.details.to_json()["unknown"][1]["argument"], "x");
        // The documented aliases are arguments too.
        assert!(
            unknown_arguments("think_plan", plan.input(), &json!({"workflow": "w", "start_fresh": true}))
                .is_none()
        );
        let next = catalog::find("think_next").unwrap();
        assert!(unknown_arguments("think_next", next.input(), &json!({"result": {}})).is_none());
    }
}
