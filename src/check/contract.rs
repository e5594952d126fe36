//! Tool contracts: what the checker knows of a callee — its input schema,
//! its output schema and its hints — whatever the callee is (an engine tool,
//! a tool of the lock or of a manifest).
//!
//! The checker is handed the table (`Config::builtins`); it never builds
//! the engine's own: `runtime::contracts::builtin()` does, from the same
//! schemas the engine validates arguments with, so `check` and the engine
//! cannot disagree about a built-in tool.

use crate::ir::Type;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// MCP tool annotations (each a hint; `None` when the tool does not say).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// One callee as the checker sees it.
#[derive(Clone, Debug, Default)]
pub struct ToolContract {
    /// The canonical name (`think`, `prompt_say`, `gitlab.get_mr`).
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// The arguments' JSON Schema, when known.
    pub input: Option<Value>,
    /// The result's JSON Schema (MCP `outputSchema`), when known.
    pub output: Option<Value>,
    pub hints: Hints,
    /// The server that serves it (`None` for the engine's own tools).
    pub server: Option<String>,
    /// Whether the result has exactly the output schema's properties (the
    /// engine's own replies; a locked tool's unless its schema says
    /// `additionalProperties`): reading another field is a mistake.
    pub closed_output: bool,
    /// Whether a step's capture is typed from the output schema. Not for a
    /// tool whose step is often a question the client driving the run
    /// answers in its own shape: `prompt.say` ("Answer with {applicable,
    /// confidence}"), whose capture stays `any`.
    pub types_capture: bool,
    /// A workflow of the project run by `uses:` (its params in, its
    /// `outputs:` out), not a tool.
    pub sub_workflow: bool,
}

impl ToolContract {
    /// The type of the tool's result: from its output schema (top level
    /// closed when the contract says so), `any` without one.
    pub fn output_type(&self) -> Type {
        let Some(schema) = &self.output else { return Type::Any };
        let ty = Type::from_schema(schema);
        if self.closed_output { closed(ty, schema, 0) } else { ty }
    }

    /// Who answers for the tool, in a message: "the engine" or "server `gitlab`".
    pub fn owner(&self) -> String {
        match &self.server {
            Some(s) => format!("server `{s}`"),
            None if self.sub_workflow => format!("workflow `{}`", self.name),
            None => "the engine".to_owned(),
        }
    }
}

/// A tool's output type closed as deep as its schema goes: an object that
/// lists its `properties` holds those and no others, unless its schema says
/// `additionalProperties` (a typo one level down is caught as at the top).
fn closed(ty: Type, schema: &Value, depth: usize) -> Type {
    if depth > 64 {
        return ty;
    }
    match ty {
        Type::Object(mut o) => {
            let open =
                matches!(schema.get("additionalProperties"), Some(Value::Bool(true) | Value::Object(_)));
            // The top level is closed even when it lists nothing (as it always was).
            let props = schema.get("properties").and_then(Value::as_object);
            if props.is_some() || depth == 0 {
                o.open = open;
            }
            for (k, t) in o.fields.iter_mut() {
                if let Some(s) = props.and_then(|p| p.get(k)) {
                    *t = closed(std::mem::replace(t, Type::Any), s, depth + 1);
                }
            }
            Type::Object(o)
        }
        Type::Array(item) => match schema.get("items") {
            Some(s) => Type::array(closed(*item, s, depth + 1)),
            None => Type::Array(item),
        },
        t => t,
    }
}

/// A table of contracts, looked up by name. Engine tools are found with
/// `.` or `_` between words (`prompt.say` is `prompt_say`), as the engine
/// reads them.
#[derive(Clone, Debug, Default)]
pub struct Contracts {
    tools: Vec<Slot>,
    by_name: HashMap<String, usize>,
    /// `_`-separated form → index, for the engine's tools.
    loose: HashMap<String, usize>,
}

/// Makes a contract when it is first looked up ([`Contracts::insert_lazy`]).
pub type MakeContract = Arc<dyn Fn() -> ToolContract + Send + Sync>;

/// A contract, or how to make it.
#[derive(Clone)]
enum Slot {
    Ready(Arc<ToolContract>),
    Lazy(std::sync::OnceLock<Arc<ToolContract>>, MakeContract),
}

impl Slot {
    fn get(&self) -> &ToolContract {
        match self {
            Slot::Ready(c) => c,
            Slot::Lazy(cell, make) => cell.get_or_init(|| Arc::new(make())),
        }
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Slot::Ready(c) => c.fmt(f),
            Slot::Lazy(cell, _) => match cell.get() {
                Some(c) => c.fmt(f),
                None => f.write_str("(made when first looked up)"),
            },
        }
    }
}

impl Contracts {
    /// Adds a tool; `loose_separators` makes `a.b` find `a_b`.
    pub fn insert(&mut self, contract: ToolContract, loose_separators: bool) {
        let name = contract.name.clone();
        self.push(name, Slot::Ready(Arc::new(contract)), loose_separators);
    }

    /// Adds a tool named `name` whose contract `make` makes when it is
    /// first looked up (its `name` must be `name`): the engine's table
    /// reads the schemas of only the tools a workflow calls.
    pub fn insert_lazy(&mut self, name: String, make: MakeContract, loose_separators: bool) {
        self.push(name, Slot::Lazy(std::sync::OnceLock::new(), make), loose_separators);
    }

    fn push(&mut self, name: String, slot: Slot, loose_separators: bool) {
        let i = self.tools.len();
        if loose_separators {
            self.loose.entry(name.replace('.', "_")).or_insert(i);
        }
        self.by_name.entry(name).or_insert(i);
        self.tools.push(slot);
    }

    pub fn get(&self, name: &str) -> Option<&ToolContract> {
        let i = match self.by_name.get(name) {
            Some(i) => *i,
            None => *self.loose.get(&name.replace('.', "_"))?,
        };
        Some(self.tools[i].get())
    }

    pub fn iter(&self) -> impl Iterator<Item = &ToolContract> {
        self.tools.iter().map(Slot::get)
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn engine_tools_are_found_with_either_separator() {
        let mut c = Contracts::default();
        c.insert(ToolContract { name: "prompt_say".into(), ..ToolContract::default() }, true);
        c.insert(ToolContract { name: "gitlab.get_mr".into(), ..ToolContract::default() }, false);
        assert!(c.get("prompt.say").is_some() && c.get("prompt_say").is_some());
        assert!(c.get("gitlab.get_mr").is_some() && c.get("gitlab_get_mr").is_none());
    }

    #[test]
    fn a_closed_output_closes_the_top_level_only() {
        let t = ToolContract {
            output: Some(json!({"type": "object", "properties": {"a": {"type": "object"}}})),
            closed_output: true,
            ..ToolContract::default()
        };
        let Type::Object(o) = t.output_type() else { panic!("an object") };
        assert!(!o.open);
        assert!(matches!(&o.fields["a"], Type::Object(inner) if inner.open));
    }
}
