//! The engine's tools by name, with JSON arguments: the handler half of the
//! tool table, and the one entry point that `savant-think call`, the CLI's
//! engine commands, the MCP server, the inspector's actions and the
//! executor share. Names use underscores (`think_plan`); the seeds' dotted
//! names (`think.plan`) are accepted too.
//!
//! The schema half (names, descriptions, annotations, facts, schemas) is
//! `runtime::catalog`, below the engine, where the checker and the language
//! server read it. This room sits above the engine and the test runner
//! (`think_test` is the test runner's), so the table below depends on both
//! and neither depends on it.
//!
//! A call: the arguments are checked against the row's input schema
//! (unknown ones refused, a mismatch is `INVALID_INPUT` naming the
//! argument), read into the tool's argument type (a payload moved in
//! whole), handed to its handler, and the typed reply is made JSON once,
//! here. Adding a tool: its types and row (see `runtime::catalog`) and one
//! line in `handlers.rs`; a test checks that every row has exactly one
//! handler of the row's own argument and reply types.

use crate::runtime::args::Payloads;
use crate::runtime::catalog::{self, ToolDef, ToolName};
use crate::runtime::{Engine, EngineError, EngineResult, ErrorCode};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::LazyLock;

mod handlers;
mod reply;
pub use reply::{Ids, Made, Reply};
#[cfg(feature = "mcp")]
mod off_runtime;
#[cfg(feature = "mcp")]
pub use off_runtime::{blocking, inline};

/// A tool's handler, typed arguments in and the reply out as JSON: a
/// value, its compact text or both, as [`Made`] asks.
type Call = Box<dyn Fn(&Engine, &ToolDef, Value, Made) -> EngineResult<Reply> + Send + Sync>;

/// One tool's handler, with the schemas of its own types (checked against
/// its row's by a test).
struct Handler {
    name: &'static str,
    call: Call,
    #[cfg_attr(not(test), allow(dead_code))]
    input: fn() -> Value,
    #[cfg_attr(not(test), allow(dead_code))]
    output: fn() -> Value,
}

impl Handler {
    /// The handler of tool `name`: `f` over the tool's argument type `A`,
    /// answering its reply type `R`.
    fn new<A, R>(
        name: &'static str,
        f: impl Fn(&Engine, A) -> EngineResult<R> + Send + Sync + 'static,
    ) -> Handler
    where
        A: DeserializeOwned + JsonSchema + Payloads,
        R: Serialize + JsonSchema,
    {
        Handler {
            name,
            call: Box::new(move |engine, def, args, made| {
                let args = typed::<A>(def, args)?;
                let reply = f(engine, args)?;
                let value = (made != Made::Text).then(|| serde_json::to_value(&reply).unwrap_or(Value::Null));
                let text = (made != Made::Value)
                    .then(|| serde_json::to_string(&reply).unwrap_or_else(|_| "null".into()));
                if let (Some(t), Some(v)) = (&text, &value) {
                    debug_assert_eq!(t, &v.to_string(), "the reply's text differs from its value");
                }
                Ok(Reply { value, text })
            }),
            input: catalog::input::<A>,
            output: catalog::output::<R>,
        }
    }
}

/// The handlers in the catalog's order (`HANDLERS[i]` serves
/// `catalog::all()[i]`); a row without a handler answers `UNKNOWN_TOOL`.
static HANDLERS: LazyLock<Vec<Option<Handler>>> = LazyLock::new(|| {
    let mut all = handlers::all();
    catalog::names().map(|name| all.iter().position(|h| h.name == name).map(|i| all.swap_remove(i))).collect()
});

/// Calls a tool. Unknown tools and bad arguments are `INVALID_INPUT` /
/// `UNKNOWN_TOOL` errors, never panics.
pub fn call(engine: &Engine, name: &str, args: Value) -> EngineResult {
    call_made(engine, name, args, Made::Value).map(Reply::into_value)
}

/// [`call`], the reply made what `made` asks: a value, its compact JSON
/// text (`value.to_string()`, written from the typed reply in one pass
/// instead of a walk of the value), or both.
pub fn call_made(engine: &Engine, name: &str, args: Value, made: Made) -> EngineResult<Reply> {
    let args = if args.is_null() { json!({}) } else { args };
    if !args.is_object() {
        return Err(EngineError::message(
            ErrorCode::InvalidInput,
            format!("arguments must be a JSON object, got {args}"),
        ));
    }
    let tool = ToolName::parse(name);
    match tool.and_then(|t| Some((t.def(), HANDLERS.get(t.index())?.as_ref()?))) {
        Some((def, handler)) => (handler.call)(engine, def, args, made),
        None => Err(EngineError::unknown_tool(name, catalog::names())),
    }
}

/// The arguments of tool `def` read into its type `A`: unknown ones are
/// refused; arguments the schema takes are moved into `A`, not copied (a
/// result can be megabytes); others are read borrowed, for the error's
/// message.
fn typed<A: DeserializeOwned + Payloads>(def: &ToolDef, args: Value) -> Result<A, EngineError> {
    let name = def.name;
    if let Some(e) = crate::runtime::tool_schema::unknown_arguments(name, def.input(), &args) {
        return Err(e);
    }
    // The usual arguments are surely valid without compiling the schema.
    if !def.surely_valid(&args) {
        let validator = def.validator();
        if !validator.is_none_or(|v| v.is_valid(&args)) {
            return A::deserialize(&args).map_err(|e| invalid(name, validator, &args, e));
        }
    }
    // A payload (a result: megabytes, maybe) is moved in whole, not rebuilt
    // value by value by serde.
    let mut args = args;
    let taken: Vec<(&str, Value)> = A::PAYLOADS
        .iter()
        .filter_map(|k| Some((*k, args.get_mut(*k).filter(|v| !v.is_null())?.take())))
        .collect();
    let mut typed = serde_json::from_value::<A>(args).map_err(|e| invalid(name, None, &Value::Null, e))?;
    for (k, v) in taken {
        typed.put(k, v);
    }
    Ok(typed)
}

/// `INVALID_INPUT` for arguments that do not fit the tool's type, naming
/// the argument: the input schema says which one and why (serde's own
/// message does not name a field of the wrong type).
fn invalid(
    tool: &str,
    validator: Option<&jsonschema::Validator>,
    args: &Value,
    e: serde_json::Error,
) -> EngineError {
    use jsonschema::error::ValidationErrorKind;
    // Unknown arguments are refused before (`tool_schema::unknown_arguments`);
    // a nested object's extra field is not the reason serde gave either.
    let first = validator.and_then(|v| {
        v.iter_errors(args).find(|e| !matches!(e.kind(), ValidationErrorKind::AdditionalProperties { .. }))
    });
    let why = match first.as_ref() {
        // A missing argument, named as the schema requires it (not read
        // from serde's text).
        Some(v) if let ValidationErrorKind::Required { property } = v.kind() => {
            let field = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
            let message = format!("missing required argument `{field}`");
            return EngineError::message(ErrorCode::InvalidInput, message);
        }
        Some(v) => format!("`{}`: {v}", v.instance_path().to_string().trim_start_matches('/')),
        None => e.to_string(),
    };
    let message = format!("invalid arguments for `{tool}`: {why}");
    EngineError::message(ErrorCode::InvalidInput, message)
}

#[cfg(test)]
mod tests;
