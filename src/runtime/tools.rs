//! The engine's tools by name, with JSON arguments: the one entry point that
//! `savant-think call`, the MCP server and the executor share. Names use
//! underscores (`think_plan`); the seeds' dotted names (`think.plan`) are
//! accepted too. The tools themselves are the table in `runtime::catalog`.

use crate::runtime::catalog::{self, ToolName};
use crate::runtime::{Engine, EngineError, EngineResult, ErrorCode};
use serde_json::{Value, json};

/// Calls a tool. Unknown tools and bad arguments are `INVALID_INPUT` /
/// `UNKNOWN_TOOL` errors, never panics.
pub fn call(engine: &Engine, name: &str, args: Value) -> EngineResult {
    let args = if args.is_null() { json!({}) } else { args };
    if !args.is_object() {
        return Err(EngineError::message(
            ErrorCode::InvalidInput,
            format!("arguments must be a JSON object, got {args}"),
        ));
    }
    match ToolName::parse(name) {
        Some(tool) => tool.def().call(engine, args),
        None => Err(EngineError::unknown_tool(name, catalog::names())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tool of the table is called (bad arguments, never
    /// UNKNOWN_TOOL), and a name outside it is UNKNOWN_TOOL listing the
    /// table's names.
    #[test]
    fn the_dispatcher_serves_exactly_the_tool_table() {
        let dir = std::env::temp_dir().join(format!("savant-tools-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("workflows")).unwrap();
        let engine = Engine::new(&dir).unwrap();
        for name in catalog::names() {
            if let Err(e) = call(&engine, name, json!({"workflow": 1})) {
                assert_ne!(e.code, ErrorCode::UnknownTool, "{name} is in the table but not dispatched");
            }
        }
        let e = call(&engine, "think_plann", json!({})).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownTool);
        assert_eq!(e.details["help"], "did you mean `think_plan`?");
        let listed = e.details["tools"].as_array().unwrap().len();
        assert_eq!(listed, catalog::all().len());
        let e = call(&engine, "think_plan", json!({})).unwrap_err();
        assert_eq!(e.details["message"], "missing required argument `workflow`");
        let e = call(&engine, "think_plan", json!({"workflow": 1})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert_eq!(
            e.details["message"],
            "invalid arguments for `think_plan`: `workflow`: 1 is not of type \"string\"",
            "the message names the argument"
        );
        let args = json!({"workflow": "w", "run_id": "r", "step_id": "a", "expected_version": -1});
        let e = call(&engine, "think_next", args).unwrap_err();
        assert!(e.details["message"].as_str().unwrap().contains("`expected_version`"), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
