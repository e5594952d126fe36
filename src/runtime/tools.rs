//! The engine's tools by name, with JSON arguments: the one dispatcher that
//! `savant-think call`, the MCP server and the executor share. Names use
//! underscores (`think_plan`); the seeds' dotted names (`think.plan`) are
//! accepted too.

use crate::runtime::ErrorCode;
use crate::runtime::engine::{Engine, NextArgs};
use crate::runtime::{EngineError, EngineResult};
use serde_json::{Value, json};

/// `think.plan` → `think_plan`.
pub fn canonical(name: &str) -> String {
    name.replace('.', "_")
}

fn bad(message: String) -> EngineError {
    EngineError::new(ErrorCode::InvalidInput, json!({ "message": message }))
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, EngineError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(bad(format!("`{key}` must be a string, got {other}"))),
        None => Err(bad(format!("missing required argument `{key}`"))),
    }
}

fn opt_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, EngineError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(bad(format!("`{key}` must be a string, got {other}"))),
    }
}

fn opt_bool(args: &Value, key: &str, default: bool) -> Result<bool, EngineError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(bad(format!("`{key}` must be true or false, got {other}"))),
    }
}

/// Calls a tool. Unknown tools and bad arguments are `INVALID_INPUT` /
/// `UNKNOWN_TOOL` errors, never panics.
pub fn call(engine: &Engine, name: &str, args: &Value) -> EngineResult {
    let args = if args.is_null() { &json!({}) } else { args };
    if !args.is_object() {
        return Err(bad(format!("arguments must be a JSON object, got {args}")));
    }
    match canonical(name).as_str() {
        "think_plan" => engine.plan(
            str_arg(args, "workflow")?,
            args.get("params").cloned().unwrap_or(Value::Null),
            opt_str(args, "run_id")?,
            opt_bool(args, "start_fresh", true)?,
        ),
        "think_next" => {
            let expected_version = match args.get("expected_version") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_u64()
                        .ok_or_else(|| bad(format!("`expected_version` must be a whole number, got {v}")))?,
                ),
            };
            engine.next(NextArgs {
                workflow: str_arg(args, "workflow")?.to_owned(),
                run_id: str_arg(args, "run_id")?.to_owned(),
                step_id: str_arg(args, "step_id")?.to_owned(),
                result: args
                    .get("result_snapshot")
                    .or_else(|| args.get("result"))
                    .cloned()
                    .unwrap_or(json!({})),
                expected_version,
            })
        }
        "think_explain" => {
            engine.explain(str_arg(args, "workflow")?, opt_str(args, "run_id")?, opt_str(args, "step_id")?)
        }
        "think_reset" => engine.reset(
            str_arg(args, "workflow")?,
            str_arg(args, "run_id")?,
            opt_str(args, "checkpoint")?,
            opt_bool(args, "force", false)?,
        ),
        "think_driver_prompt" => engine.driver_prompt(opt_str(args, "version")?),
        "think_workflows_list" => engine.workflows_list(opt_str(args, "filter")?),
        "think_workflows_read" => engine.workflows_read(str_arg(args, "workflow")?),
        "think_workflows_graph" => {
            engine.workflows_graph(str_arg(args, "workflow")?, opt_str(args, "format")?.unwrap_or("json"))
        }
        "think_state_get" => engine.state_get(str_arg(args, "workflow")?, str_arg(args, "run_id")?),
        "think_state_list" => engine.state_list(opt_str(args, "workflow")?),
        "think_state_delete" => engine.state_delete(str_arg(args, "workflow")?, str_arg(args, "run_id")?),
        "think_validate" => match (args.get("schema"), args.get("workflow")) {
            (Some(schema), _) => engine.validate(schema, args.get("response").unwrap_or(&Value::Null)),
            (None, Some(_)) => engine.validate_workflow(str_arg(args, "workflow")?),
            (None, None) => Err(bad("give `schema` and `response`, or `workflow`".into())),
        },
        "think_debug" => engine.debug(str_arg(args, "workflow")?, str_arg(args, "run_id")?),
        "think" => {
            let thought = opt_str(args, "thought")?
                .or(opt_str(args, "thoughts")?)
                .ok_or_else(|| bad("missing required argument `thought`".into()))?;
            let run = match (opt_str(args, "workflow")?, opt_str(args, "run_id")?) {
                (Some(w), Some(r)) => Some((w, r)),
                _ => None,
            };
            engine.think(thought, run)
        }
        "prompt_say" => {
            let message = opt_str(args, "message")?
                .or(opt_str(args, "text")?)
                .ok_or_else(|| bad("missing required argument `message`".into()))?;
            engine.say(message)
        }
        other => {
            let names: Vec<&str> = super::catalog::names().collect();
            let help = crate::diagnostic::suggest(other, names.iter().copied());
            Err(EngineError::new(
                ErrorCode::UnknownTool,
                json!({ "tool": name, "message": format!("no engine tool `{other}`"), "help": help, "tools": names }),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dispatcher and the tool table agree: every tool of the table is
    /// dispatched (bad arguments, never UNKNOWN_TOOL), and a name outside
    /// it is UNKNOWN_TOOL listing the table's names.
    #[test]
    fn the_dispatcher_serves_exactly_the_tool_table() {
        let dir = std::env::temp_dir().join(format!("savant-tools-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("workflows")).unwrap();
        let engine = Engine::new(&dir).unwrap();
        for name in crate::runtime::catalog::names() {
            if let Err(e) = call(&engine, name, &json!({"workflow": 1})) {
                assert_ne!(e.code, ErrorCode::UnknownTool, "{name} is in the table but not dispatched");
            }
        }
        let e = call(&engine, "think_plann", &json!({})).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownTool);
        assert_eq!(e.details["help"], "did you mean `think_plan`?");
        let listed = e.details["tools"].as_array().unwrap().len();
        assert_eq!(listed, crate::runtime::catalog::all().len());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
