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
];

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
