//! The engine's tools as the checker's contracts (`check::Contracts`):
//! the same input and output schemas the engine validates arguments with
//! and MCP lists, so `check`, the LSP and the engine cannot disagree about
//! a built-in tool. There is no second copy of a tool's schema, and a
//! contract is made (its schemas read) only when a workflow names the tool.

use crate::runtime::catalog::{ToolDef, all};
use serde_json::Value;
use std::sync::LazyLock;

/// The engine's tools as the checker's contracts: the same input and
/// output schemas the engine validates with and MCP lists (their results
/// have exactly the output's properties), with `.` or `_` between words.
/// Built once; every `check::Config` of the engine, `check` and the LSP
/// holds this table.
pub fn builtin() -> std::sync::Arc<crate::check::Contracts> {
    static CONTRACTS: LazyLock<std::sync::Arc<crate::check::Contracts>> = LazyLock::new(|| {
        let mut table = crate::check::Contracts::default();
        for t in all() {
            // Made when a workflow first names the tool: only then are its
            // schemas read (`catalog::ToolDef::input`).
            table.insert_lazy(t.name.to_owned(), std::sync::Arc::new(move || contract(t)), true);
        }
        std::sync::Arc::new(table)
    });
    std::sync::Arc::clone(&CONTRACTS)
}

/// The checker's contract of engine tool `t`.
fn contract(t: &ToolDef) -> crate::check::ToolContract {
    let hints = crate::check::contract::Hints {
        read_only: Some(t.annotations.read_only),
        destructive: Some(t.annotations.destructive),
        idempotent: Some(t.annotations.idempotent),
        open_world: Some(false),
    };
    // A step's result is a reply: an `isError` result fails the step.
    let mut output = t.output().clone();
    if let Some(props) = output.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("error");
        props.remove("details");
    }
    crate::check::ToolContract {
        name: t.name.to_owned(),
        title: Some(t.title.to_owned()),
        description: Some(t.description.to_owned()),
        input: Some(t.input().clone()),
        output: Some(output),
        hints,
        server: None,
        closed_output: true,
        // A `prompt.say` step is often a question the client
        // answers in its own shape (the corpus's gates).
        types_capture: t.types_capture,
        sub_workflow: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::catalog;

    #[test]
    fn every_engine_tool_is_a_contract_with_the_catalogs_schemas() {
        let table = builtin();
        for t in catalog::all() {
            let c = table.get(t.name).unwrap_or_else(|| panic!("{} is not a contract", t.name));
            assert_eq!(c.input.as_ref(), Some(t.input()), "{}: the input is the catalog's", t.name);
            let props =
                c.output.as_ref().and_then(|o| o.get("properties")).and_then(Value::as_object).unwrap();
            assert!(!props.contains_key("error"), "a step's result is never an isError reply");
        }
        assert_eq!(table.get("prompt.say").map(|c| c.name.as_str()), Some("prompt_say"));
        assert_eq!(table.get("think.plan").map(|c| c.name.as_str()), Some("think_plan"));
        assert!(table.get("think").is_some_and(|c| c.types_capture && c.closed_output));
        assert!(table.get("prompt_say").is_some_and(|c| !c.types_capture));
    }
}
