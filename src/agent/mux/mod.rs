//! The multiplexer: one [`Tools`] over every tool a loop may call.
//!
//! A name is routed, in this order, to
//! 1. an engine tool (`think_plan` or `think.plan`, `think`, `prompt_say` /
//!    `prompt.say`, …) through the one dispatcher, `tools::call`;
//! 2. a local built-in: `local_read` (`local.read`) or `local_exec`
//!    (`local.exec`), see [`local`];
//! 3. `model.generate` (`model_generate`): the configured model, see
//!    [`model`] (not listed: only workflows call it);
//! 4. an external MCP server from `[servers.NAME]` in `savant-think.toml`:
//!    `NAME.tool` or `NAME_tool`, see [`remote`].
//!
//! Anything else is `TOOL_NOT_FOUND` with a did-you-mean. Every failure is a
//! [`ToolOutcome`] with `ok: false` and `{error, details}`; nothing here
//! panics or returns `Err`.

pub mod local;
pub mod model;
pub mod remote;

use crate::agent::{ToolInfo, ToolOutcome, Tools};
use crate::runtime::Engine;
use crate::runtime::config::LocalConfig;
use crate::tools as engine_tools;
use remote::Server;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Options that are not in `savant-think.toml`.
#[derive(Clone, Debug, Default)]
pub struct MuxOptions {
    /// `--allow-exec`: `local_exec` may run any shell command.
    pub allow_exec: bool,
    /// Where a server's `token_env` is looked up.
    pub env: EnvLookup,
}

/// Looks up environment variables for the multiplexer (a server's
/// `token_env`). The library reads no environment variable itself: the
/// binary passes the process environment ([`EnvLookup::new`] over
/// `std::env::var`), a test a map; the default finds nothing.
#[derive(Clone, Default)]
pub struct EnvLookup(Option<Arc<LookupFn>>);

type LookupFn = dyn Fn(&str) -> Option<String> + Send + Sync;

impl EnvLookup {
    pub fn new(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> EnvLookup {
        EnvLookup(Some(Arc::new(lookup)))
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<String> {
        self.0.as_ref().and_then(|lookup| lookup(name))
    }
}

impl std::fmt::Debug for EnvLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "EnvLookup(..)" } else { "EnvLookup(none)" })
    }
}

/// The tool router. Cheap to share (`Arc`); servers start on first use and
/// stop on [`Multiplexer::shutdown`] or drop.
pub struct Multiplexer {
    engine: Arc<Engine>,
    local: local::Local,
    servers: Vec<Server>,
    /// The model `model.generate` asks ([`Multiplexer::with_model`]).
    model: Option<Arc<crate::agent::backend::AnyBackend>>,
}

/// Where a name goes.
enum Route<'a> {
    Engine(&'static str),
    LocalRead,
    LocalExec,
    Model,
    Server(&'a Server, String),
}

/// A failed call as data: `{error: CODE, details}`.
pub fn failure(code: &str, details: Value) -> Value {
    json!({ "error": code, "details": details })
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

const LOCAL_READ: &str = "local_read";
const LOCAL_EXEC: &str = "local_exec";

impl Multiplexer {
    /// A multiplexer over `engine`, with the servers and `[local]` policy of
    /// its `savant-think.toml`. Nothing starts until it is used.
    pub fn new(engine: Arc<Engine>, options: MuxOptions) -> Multiplexer {
        let config = engine.config().clone();
        let root = engine.root().to_path_buf();
        let servers = config
            .servers
            .iter()
            .map(|(name, c)| {
                Server::new(name, c.clone(), &root, options.env.clone())
                    .with_log_rotation(config.agent.log_rotation())
            })
            .collect();
        Multiplexer {
            local: local::Local::new(root, config.local, options.allow_exec),
            engine,
            servers,
            model: None,
        }
    }

    /// The multiplexer with a model for `model.generate` steps.
    pub fn with_model(mut self, backend: Arc<crate::agent::backend::AnyBackend>) -> Multiplexer {
        self.model = Some(backend);
        self
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Whether a model is configured ([`Multiplexer::with_model`]).
    pub fn has_model(&self) -> bool {
        self.model.is_some()
    }

    /// The `[local]` policy in force.
    pub fn local_config(&self) -> &LocalConfig {
        self.local.config()
    }

    /// Whether `name` is one of the engine's own tools (dotted names too).
    pub fn is_engine_tool(name: &str) -> bool {
        engine_name(name).is_some()
    }

    /// Stops every server that was started: stdio children are closed, then
    /// killed if they linger, and reaped.
    pub async fn shutdown(&self) {
        for s in &self.servers {
            s.shutdown().await;
        }
    }

    fn route<'a>(&'a self, name: &str) -> Option<Route<'a>> {
        if let Some(n) = engine_name(name) {
            return Some(Route::Engine(n));
        }
        match name {
            LOCAL_READ | "local.read" => return Some(Route::LocalRead),
            LOCAL_EXEC | "local.exec" => return Some(Route::LocalExec),
            n if model::NAMES.contains(&n) => return Some(Route::Model),
            _ => {}
        }
        if let Some((prefix, tool)) = name.split_once('.')
            && let Some(s) = self.servers.iter().find(|s| s.name() == prefix)
        {
            return Some(Route::Server(s, tool.to_owned()));
        }
        // `NAME_tool`: the longest server name that prefixes it wins.
        self.servers
            .iter()
            .filter(|s| {
                name.len() > s.name().len() + 1
                    && name.starts_with(s.name())
                    && name.as_bytes()[s.name().len()] == b'_'
            })
            .max_by_key(|s| s.name().len())
            .map(|s| Route::Server(s, name[s.name().len() + 1..].to_owned()))
    }

    fn not_found(&self, name: &str) -> Value {
        let mut known: Vec<String> = crate::runtime::catalog::names().map(str::to_owned).collect();
        known.push(LOCAL_READ.into());
        known.push(LOCAL_EXEC.into());
        known.push(model::NAMES[0].into());
        for s in &self.servers {
            known.extend(s.known_tools().into_iter().map(|t| format!("{}.{t}", s.name())));
        }
        let servers: Vec<&str> = self.servers.iter().map(Server::name).collect();
        let mut help = crate::diagnostic::suggest(name, known.iter().map(String::as_str));
        if help.is_none()
            && let Some(prefix) = name.split(['.', '_']).next()
        {
            help = crate::diagnostic::suggest(prefix, servers.iter().copied())
                .map(|s| format!("no server `{prefix}`; {s}"));
        }
        let help = help.unwrap_or_else(|| {
            if servers.is_empty() {
                "declare the server that has this tool as [servers.NAME] in savant-think.toml, and call it as NAME.tool"
                    .to_owned()
            } else {
                format!("external tools are called as NAME.tool; servers: {}", servers.join(", "))
            }
        });
        let closest = closest_tools(name, &known);
        failure(
            "TOOL_NOT_FOUND",
            json!({"tool": name, "message": format!("no tool `{name}`"), "help": help, "servers": servers,
                   "closest": closest}),
        )
    }

    async fn call_engine(&self, tool: &'static str, args: Value) -> (bool, Value) {
        if let Some(invalid) = invalid_engine_args(tool, &args) {
            return (false, invalid);
        }
        let engine = self.engine.clone();
        // On the calling thread on a multi-threaded runtime (`exec`'s loop):
        // no hand-off to a blocking thread and back per step.
        match engine_tools::blocking(move || engine_tools::call(&engine, tool, args)).await {
            Ok(v) => (true, v),
            Err(e) => (false, e.to_json()),
        }
    }
}

/// `INVALID_INPUT` when `args` break the engine tool's own input schema (the
/// tool table's, `additionalProperties: false`): a model's junk arguments
/// come back as an error that says which, instead of being ignored.
fn invalid_engine_args(tool: &str, args: &Value) -> Option<Value> {
    let spec = crate::runtime::catalog::find(tool)?;
    // The usual arguments are surely valid without compiling the schema.
    if spec.surely_valid(args) {
        return None;
    }
    let validator = spec.validator()?;
    let errors: Vec<String> =
        validator.iter_errors(args).take(5).map(|e| format!("{}: {e}", e.instance_path())).collect();
    if errors.is_empty() {
        return None;
    }
    Some(failure(
        "INVALID_INPUT",
        json!({"tool": tool, "message": format!("the arguments do not match `{tool}`'s input schema: {}", errors.join("; ")),
               "errors": errors, "hint": "pass only the fields of the tool's input schema"}),
    ))
}

/// The canonical engine tool name for `name`, if it is one.
fn engine_name(name: &str) -> Option<&'static str> {
    crate::runtime::catalog::ToolName::parse(name).map(|t| t.as_str())
}

impl Tools for Multiplexer {
    async fn list(&self) -> Vec<ToolInfo> {
        let mut out: Vec<ToolInfo> = crate::runtime::catalog::tools().map(ToolInfo::from).collect();
        out.extend(self.local.list());
        for s in &self.servers {
            out.extend(s.list().await);
        }
        out
    }

    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        let started = Instant::now();
        let args = if args.is_null() { json!({}) } else { args };
        let (ok, output) = match self.route(name) {
            None => (false, self.not_found(name)),
            Some(_) if !args.is_object() => (
                false,
                failure(
                    "INVALID_INPUT",
                    json!({"tool": name, "message": format!("arguments must be a JSON object, got {args}")}),
                ),
            ),
            Some(Route::Engine(tool)) => self.call_engine(tool, args).await,
            Some(Route::LocalRead) => self.local.read(&args).await,
            Some(Route::LocalExec) => self.local.exec(&args).await,
            Some(Route::Model) => model::generate(self.model.as_deref(), &args).await,
            Some(Route::Server(s, tool)) => s.call(&tool, args).await,
        };
        ToolOutcome { ok, output, duration_ms: elapsed_ms(started) }
    }

    /// An engine tool's `workflow` that is not one of the project's, or
    /// its required `run_id` that names no stored run of that workflow; a
    /// `local_read` of a path that is not there.
    fn precheck(&self, name: &str, args: &Value) -> Option<crate::agent::Hopeless> {
        if matches!(self.route(name), Some(Route::LocalRead)) {
            return self.local.precheck_read(args);
        }
        let def = crate::runtime::catalog::find(name)?;
        let project = self.engine.project();
        if def.name == "think_workflows_list" {
            return list_filter_matches_nothing(&project.ids(), args);
        }
        let workflow = args.get("workflow")?.as_str().filter(|w| !w.trim().is_empty())?;
        if project.resolve(workflow).is_err() {
            let ids = project.ids();
            let known = if ids.is_empty() { "none".to_owned() } else { ids.join(", ") };
            return Some(crate::agent::Hopeless {
                reason: format!("`{workflow}` is not a workflow of this project (the workflows: {known})"),
                arg: "workflow".into(),
                choices: ids,
            });
        }
        let required = def.input().get("required").and_then(Value::as_array);
        let run_required = required.is_some_and(|r| r.iter().any(|n| n == "run_id"));
        let run_id = args.get("run_id").and_then(Value::as_str).filter(|r| !r.trim().is_empty())?;
        (run_required && !self.engine.run_exists(workflow, run_id)).then(|| crate::agent::Hopeless {
            reason: format!(
                "no run `{run_id}` of `{workflow}` is stored (think_plan starts one, think_state_list lists them)"
            ),
            arg: "run_id".into(),
            choices: Vec::new(),
        })
    }
}

/// A `think_workflows_list` filter that no workflow id contains, when there
/// are workflows: the call can only list nothing.
fn list_filter_matches_nothing(ids: &[String], args: &Value) -> Option<crate::agent::Hopeless> {
    let filter = args.get("filter")?.as_str().filter(|f| !f.is_empty())?.to_lowercase();
    if ids.is_empty() || ids.iter().any(|id| id.to_lowercase().contains(&filter)) {
        return None;
    }
    Some(crate::agent::Hopeless {
        reason: format!(
            "the filter `{filter}` matches none of the project's workflows ({}); leave it out to list them all",
            ids.join(", ")
        ),
        arg: "filter".into(),
        choices: Vec::new(),
    })
}

/// Up to three known tools closest to `name` — by the whole name or by the
/// tool's own part (`get_mr` finds `gitlab.get_mr`) — each with the server
/// that provides it (`null` for the engine's and the local tools).
fn closest_tools(name: &str, known: &[String]) -> Vec<Value> {
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .map(|k| {
            let tool = k.split_once('.').map_or(k.as_str(), |(_, t)| t);
            let d = strsim::damerau_levenshtein(name, k).min(strsim::damerau_levenshtein(name, tool));
            (d, k)
        })
        .filter(|(d, _)| *d <= (name.chars().count() / 3).max(2))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, k)| {
            let server = k.split_once('.').map(|(s, _)| s);
            json!({"tool": k, "server": server})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::invalid_engine_args;
    use serde_json::json;

    #[test]
    fn a_list_filter_that_matches_nothing_is_hopeless() {
        let ids = ["release_notes".to_owned(), "review_v1".to_owned()];
        let junk = super::list_filter_matches_nothing(&ids, &json!({"filter": "[]}, "})).unwrap();
        assert!(junk.reason.contains("matches none of the project's workflows (release_notes, review_v1)"));
        assert_eq!((junk.arg.as_str(), junk.choices.len()), ("filter", 0));
        assert_eq!(super::list_filter_matches_nothing(&ids, &json!({"filter": "REL"})), None);
        assert_eq!(super::list_filter_matches_nothing(&ids, &json!({"filter": ""})), None);
        assert_eq!(super::list_filter_matches_nothing(&[], &json!({"filter": "x"})), None, "nothing to list");
    }

    #[test]
    fn engine_tool_args_are_checked_against_the_tool_schema() {
        let junk = json!({"type": "object", "properties": {"workflow": {"type": "string"}}});
        let e = invalid_engine_args("think_workflows_list", &junk).expect("junk args are refused");
        assert_eq!(e["error"], "INVALID_INPUT");
        assert!(e["details"]["message"].as_str().unwrap().contains("think_workflows_list"), "{e}");
        assert!(invalid_engine_args("think_workflows_list", &json!({})).is_none());
        assert!(invalid_engine_args("think_plan", &json!({"workflow": 3})).is_some());
    }
}
