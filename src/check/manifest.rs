//! The tool manifest given with `check --tools FILE`: which tools exist and,
//! optionally, their input schemas.
//!
//! Accepted shapes (JSON or YAML): an MCP `tools/list` result
//! `{"tools": [{"name", "inputSchema"}]}`, a bare list of such objects or of
//! names, or a mapping `name: input-schema-or-null`.

use crate::source::SourceFile;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct ToolManifest {
    /// Tool name → its input JSON Schema, when the manifest gives one.
    pub tools: BTreeMap<String, Option<Value>>,
}

/// Tools the engine itself provides: always known.
pub const BUILTIN_TOOLS: &[&str] = &[
    "prompt.say",
    "prompt_say",
    "think",
    "think.plan",
    "think.next",
    "think.explain",
    "think.reset",
    "think.driver_prompt",
    "think.validate",
    "local_read",
    "local_exec",
    "model.generate",
    "model_generate",
];

/// The inputs of `model.generate` (the agent's multiplexer routes it to the
/// configured model); `prompt` is required.
pub const MODEL_GENERATE_INPUTS: [&str; 4] = ["prompt", "schema", "system", "max_tokens"];

/// The input schema of a built-in tool the checker knows in detail:
/// `model.generate`.
pub fn builtin_input_schema(name: &str) -> Option<Value> {
    if !matches!(name, "model.generate" | "model_generate") {
        return None;
    }
    Some(serde_json::json!({"type": "object", "properties": {
        "prompt": {"type": "string"}, "schema": {"type": "object"},
        "system": {"type": "string"}, "max_tokens": {"type": "integer"}},
        "required": ["prompt"], "additionalProperties": false}))
}

/// The JSON Schema of a `model.generate` step's result, from its input:
/// the literal `schema` (a string when none is given). `None` for other
/// calls, or when `schema` is not a literal (it interpolates).
pub fn model_generate_output(step: &crate::ir::Step) -> Option<Value> {
    use crate::ir::TemplateValue;
    let call = step.call.as_ref()?;
    builtin_input_schema(&call.value)?;
    let Some(TemplateValue::Object(entries, _)) = &step.input_template else {
        return Some(serde_json::json!({"type": "string"}));
    };
    match entries.iter().find(|(k, _)| k.value == "schema") {
        None => Some(serde_json::json!({"type": "string"})),
        Some((_, v)) => literal_json(v).filter(Value::is_object),
    }
}

/// A template value with no interpolation, as JSON.
fn literal_json(v: &crate::ir::TemplateValue) -> Option<Value> {
    use crate::ir::TemplateValue as T;
    Some(match v {
        T::Null(_) => Value::Null,
        T::Bool(b, _) => Value::Bool(*b),
        T::Number(n, _) if n.fract() == 0.0 && n.abs() < 9.0e15 => Value::from(*n as i64),
        T::Number(n, _) => serde_json::Number::from_f64(*n).map(Value::Number)?,
        T::String(s) if !s.template.has_interpolation() => Value::String(s.text.clone()),
        T::String(_) => return None,
        T::Array(items, _) => Value::Array(items.iter().map(literal_json).collect::<Option<_>>()?),
        T::Object(entries, _) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| Some((k.value.to_string(), literal_json(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

impl ToolManifest {
    /// The largest manifest read, in bytes.
    pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

    /// Parses a manifest file's text. The error says what shape was expected.
    pub fn parse(text: &str) -> Result<ToolManifest, String> {
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => {
                let src = SourceFile::new("manifest", text);
                let parsed = crate::syntax::yaml::parse(&src, &crate::source::Limits::default());
                if let Some(d) = parsed.diagnostics.first() {
                    let at = src.line_col(d.span.start as usize);
                    return Err(format!("line {}:{}: {}", at.line, at.column, d.message));
                }
                parsed.root.map(|r| r.to_json()).unwrap_or(Value::Null)
            }
        };
        let list = match &value {
            Value::Object(o) if o.contains_key("tools") => match &o["tools"] {
                Value::Array(_) => o["tools"].clone(),
                other => return Err(format!("`tools` must be a list of tools, found {other}")),
            },
            other => other.clone(),
        };
        let mut tools = BTreeMap::new();
        match list {
            Value::Array(items) => {
                for item in items {
                    match item {
                        Value::String(name) => {
                            tools.insert(name, None);
                        }
                        Value::Object(o) => {
                            let Some(name) = o.get("name").and_then(Value::as_str) else {
                                return Err("every tool object needs a `name`".into());
                            };
                            let schema = o.get("inputSchema").or_else(|| o.get("input_schema")).cloned();
                            tools.insert(name.to_owned(), check_schema(name, schema)?);
                        }
                        _ => return Err("tools must be names or `{name, inputSchema}` objects".into()),
                    }
                }
            }
            Value::Object(o) => {
                for (name, schema) in o {
                    let schema = check_schema(&name, Some(schema))?;
                    tools.insert(name, schema);
                }
            }
            _ => {
                return Err(
                    "expected `{tools: [{name, inputSchema}]}`, a list of tools, or a mapping of tool names"
                        .into(),
                );
            }
        }
        Ok(ToolManifest { tools })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name) || BUILTIN_TOOLS.contains(&name)
    }
}

/// An input schema must be an object or a boolean (or absent / null).
fn check_schema(tool: &str, schema: Option<Value>) -> Result<Option<Value>, String> {
    match schema {
        None | Some(Value::Null) => Ok(None),
        Some(s @ (Value::Object(_) | Value::Bool(_))) => Ok(Some(s)),
        Some(other) => Err(format!("the input schema of `{tool}` must be an object, found {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let m =
            ToolManifest::parse(r#"{"tools":[{"name":"gitlab.get_mr","inputSchema":{"type":"object"}}]}"#)
                .unwrap();
        assert!(m.tools["gitlab.get_mr"].is_some());
        let m = ToolManifest::parse("- a.b\n- name: c\n").unwrap();
        assert!(m.contains("a.b") && m.contains("c") && m.contains("prompt.say"));
        let m = ToolManifest::parse("x: null\ny: {type: object}\n").unwrap();
        assert!(m.tools["x"].is_none() && m.tools["y"].is_some());
        assert!(ToolManifest::parse("12").is_err());
        assert!(ToolManifest::parse(r#"{"tools": 3}"#).is_err());
        assert!(ToolManifest::parse(r#"{"tools": "x"}"#).is_err());
        assert!(ToolManifest::parse(r#"{"gitlab.x": 3}"#).is_err());
    }
}
