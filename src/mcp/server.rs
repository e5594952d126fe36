//! [`SavantServer`]: the MCP handler (tools, prompts, resources) over one
//! shared [`Engine`]. Engine calls are synchronous and may block on a run's
//! lock or on fsync, so each one runs on tokio's blocking pool.

use crate::mcp::catalog;
use crate::runtime::{Engine, EngineError, prompts, tools};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `initialize` tells the client to do first.
pub const INSTRUCTIONS: &str = "savant-think runs declarative LLM workflows one instruction at a time. \
Start with think_driver_prompt (the driving instructions) and think_workflows_list (what can be run). \
Then think_plan starts a run and returns an instruction: call the tool named in instruction.call with \
instruction.input, submit its result with think_next, and repeat until done: true. \
Errors come back as tool results with isError: true and {error, details}: read them, fix, retry.";

/// The MCP server: cheap to clone (one engine shared by every session).
#[derive(Clone)]
pub struct SavantServer {
    engine: Arc<Engine>,
    /// The canonical project root: workflow paths outside it are refused.
    root: Arc<PathBuf>,
}

fn error_result(e: &EngineError) -> CallToolResult {
    CallToolResult::structured_error(e.to_json())
}

fn as_object(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    })
}

/// Runs blocking engine work off the async runtime; a panic becomes an error.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, EngineError> + Send + 'static,
) -> Result<T, EngineError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("engine call failed: {e}");
            Err(EngineError::new("INTERNAL", json!({"message": "the engine call did not complete"})))
        }
    }
}

impl SavantServer {
    pub fn new(engine: Engine) -> SavantServer {
        let root = std::fs::canonicalize(engine.root()).unwrap_or_else(|_| engine.root().to_path_buf());
        SavantServer { engine: Arc::new(engine), root: Arc::new(root) }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Every tool as an MCP [`Tool`].
    pub fn tool_list() -> Vec<Tool> {
        catalog::tools()
            .into_iter()
            .map(|t| {
                Tool::new(t.name, t.description, as_object(t.input))
                    .with_title(t.title)
                    .with_raw_output_schema(as_object(t.output))
                    .with_annotations(
                        ToolAnnotations::with_title(t.title)
                            .read_only(t.read_only)
                            .destructive(t.destructive)
                            .idempotent(t.idempotent)
                            .open_world(false),
                    )
            })
            .collect()
    }

    /// Calls a tool by name: the result, or an `isError` result with `{error, details}`.
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let started = std::time::Instant::now();
        let Some(spec) = catalog::find(name) else {
            let names: Vec<&str> = catalog::tools().iter().map(|t| t.name).collect();
            let help = crate::diagnostic::suggest(name, names.iter().copied());
            tracing::info!(tool = name, "unknown tool");
            return error_result(&EngineError::new(
                "UNKNOWN_TOOL",
                json!({"tool": name, "message": format!("no tool `{name}`"), "help": help, "tools": names}),
            ));
        };
        let engine = self.engine.clone();
        let root = self.root.clone();
        let tool = spec.name;
        let out = blocking(move || {
            check_workflow_arg(&root, &args)?;
            tools::call(&engine, tool, &args)
        })
        .await;
        let ms = started.elapsed().as_millis() as u64;
        match out {
            Ok(v) => {
                tracing::info!(tool, ms, "ok");
                CallToolResult::structured(v)
            }
            Err(e) => {
                tracing::info!(tool, ms, error = e.code, "tool error");
                error_result(&e)
            }
        }
    }

    fn prompt_list(&self) -> Result<Vec<Prompt>, EngineError> {
        let registry = prompts::registry(self.engine.root())?;
        let latest = registry.latest().map(str::to_owned);
        Ok(registry
            .entries
            .iter()
            .map(|entry| {
                let version = &entry.version;
                let mut d = format!("savant-think driver prompt `{version}` ({})", entry.location());
                if latest.as_deref() == Some(version) {
                    d.push_str(", the latest");
                }
                d.push_str(": how to drive workflows with think_plan / think_next.");
                Prompt::new(version.clone(), Some(d), None::<Vec<PromptArgument>>)
                    .with_title(format!("Driver prompt: {version}"))
            })
            .collect())
    }

    fn resource_list(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        if let Ok(list) = self.engine.workflows_list(None)
            && let Some(items) = list["workflows"].as_array()
        {
            for w in items {
                let Some(id) = w["id"].as_str() else { continue };
                let mut r = Resource::new(format!("workflow://{id}"), format!("workflow {id}"))
                    .with_mime_type("application/yaml");
                if let Some(name) = w["name"].as_str() {
                    r = r.with_title(name.to_owned());
                }
                if let Some(d) = w["description"].as_str() {
                    r = r.with_description(d.to_owned());
                }
                out.push(r);
            }
        }
        if let Ok(list) = self.engine.state_list(None)
            && let Some(runs) = list["runs"].as_array()
        {
            for run in runs {
                let (Some(w), Some(id)) = (run["workflow"].as_str(), run["run_id"].as_str()) else {
                    continue;
                };
                let status = run["status"].as_str().unwrap_or("unknown");
                out.push(
                    Resource::new(format!("run://{w}/{id}"), format!("run {w}/{id}"))
                        .with_mime_type("application/json")
                        .with_description(format!("Run `{id}` of `{w}` ({status}): its full state.")),
                );
            }
        }
        out
    }

    fn read(&self, uri: &str) -> Result<ResourceContents, EngineError> {
        if let Some(id) = uri.strip_prefix("workflow://") {
            if !crate::ir::lower::valid_workflow_id(id) {
                return Err(EngineError::new(
                    "UNKNOWN_WORKFLOW",
                    json!({"workflow": id, "message": "not a workflow id"}),
                ));
            }
            let v = self.engine.workflows_read(id)?;
            let yaml = v["yaml"].as_str().unwrap_or_default().to_owned();
            return Ok(ResourceContents::text(yaml, uri).with_mime_type("application/yaml"));
        }
        if let Some(rest) = uri.strip_prefix("run://")
            && let Some((w, id)) = rest.split_once('/')
        {
            if !crate::ir::lower::valid_workflow_id(w) {
                return Err(EngineError::new(
                    "UNKNOWN_WORKFLOW",
                    json!({"workflow": w, "message": "not a workflow id"}),
                ));
            }
            let v = self.engine.state_get(w, id)?;
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            return Ok(ResourceContents::text(text, uri).with_mime_type("application/json"));
        }
        Err(EngineError::new(
            "UNKNOWN_RESOURCE",
            json!({"uri": uri, "message": "resources are workflow://<id> and run://<workflow>/<run_id>"}),
        ))
    }
}

/// A workflow given as a path (not an id) must be inside the project root:
/// over MCP, a client names workflows, it does not read arbitrary files.
fn check_workflow_arg(root: &Path, args: &Value) -> Result<(), EngineError> {
    let Some(w) = args.get("workflow").and_then(Value::as_str) else { return Ok(()) };
    let looks_like_path = w.ends_with(".yaml") || w.ends_with(".yml") || w.contains('/') || w.contains('\\');
    if !looks_like_path || !Path::new(w).is_file() {
        return Ok(());
    }
    match std::fs::canonicalize(w) {
        Ok(p) if p.starts_with(root) => Ok(()),
        _ => Err(EngineError::new(
            "INVALID_INPUT",
            json!({"workflow": w, "message": "a workflow path must be inside the project root; give a workflow id from think_workflows_list"}),
        )),
    }
}

fn mcp_error(e: &EngineError) -> McpError {
    let message = e.details.get("message").and_then(Value::as_str).unwrap_or(e.code).to_owned();
    match e.code {
        "UNKNOWN_WORKFLOW" | "UNKNOWN_RUN" | "UNKNOWN_RESOURCE" | "INVALID_ID" | "PROMPT_NOT_FOUND" => {
            McpError::resource_not_found(message, Some(e.to_json()))
        }
        _ => McpError::internal_error(message, Some(e.to_json())),
    }
}

impl ServerHandler for SavantServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build(),
        )
        .with_server_info(
            Implementation::new("savant-think", env!("CARGO_PKG_VERSION"))
                .with_title("savant-think")
                .with_description("Deterministic run engine for declarative LLM workflows"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(SavantServer::tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(self.call(&request.name, args).await.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let this = self.clone();
        let prompts = blocking(move || this.prompt_list()).await.map_err(|e| mcp_error(&e))?;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let engine = self.engine.clone();
        let name = request.name.clone();
        let v = blocking(move || engine.driver_prompt(Some(&name))).await.map_err(|e| {
            McpError::invalid_params(format!("no prompt `{}`", request.name), Some(e.to_json()))
        })?;
        let md = v["prompt_md"].as_str().unwrap_or_default().to_owned();
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, md)]);
        result.description = Some(format!(
            "savant-think driver prompt `{}` ({})",
            request.name,
            v["hash"].as_str().unwrap_or("")
        ));
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let this = self.clone();
        let list = blocking(move || Ok(this.resource_list())).await.map_err(|e| mcp_error(&e))?;
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("workflow://{id}", "workflow")
                .with_description("A workflow's YAML source, by id.")
                .with_mime_type("application/yaml"),
            ResourceTemplate::new("run://{workflow}/{run_id}", "run")
                .with_description("A run's full state as JSON.")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let this = self.clone();
        let uri = request.uri.clone();
        let contents = blocking(move || this.read(&uri)).await.map_err(|e| mcp_error(&e))?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
