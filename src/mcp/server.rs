//! [`SavantServer`]: the MCP handler (tools, prompts, resources) over one
//! shared [`Engine`]. Engine calls are synchronous and may block on a run's
//! lock, on fsync or on PostgreSQL, so each one hands its worker's other
//! tasks to another thread first (`blocking`), except where a call is known
//! to be short ([`SavantServer::inline_calls`]).

use crate::mcp::calls::blocking;
use crate::mcp::notify::{self, Hub, Session};
use crate::mcp::prompts as mcp_prompts;
use crate::runtime::ErrorCode;
use crate::runtime::catalog;
use crate::runtime::error_details::{MissingRun, UnknownResource, UnknownWorkflow};
use crate::runtime::{Engine, EngineError};
use rmcp::ErrorData as McpError;
#[allow(deprecated)] // MCP logging: see notify.rs
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many resources one `resources/list` page holds.
pub const RESOURCE_PAGE: usize = 100;

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
    /// Every session of this server (for resource notifications).
    hub: Arc<Hub>,
    /// This session's log level and subscriptions.
    session: Arc<Session>,
    /// Engine calls run on the calling task (see [`SavantServer::inline_calls`]).
    inline: bool,
    /// The transport writes a tool result's text in its value's place (see
    /// [`SavantServer::text_replies`]).
    text_replies: bool,
    /// The `think_exec` drivers running on this server.
    #[cfg(feature = "agent")]
    drivers: Arc<super::exec_tool::Drivers>,
}

#[path = "server_call.rs"]
mod call;

fn error_result(e: &EngineError) -> CallToolResult {
    CallToolResult::structured_error(e.to_json())
}

fn as_object(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    })
}

impl SavantServer {
    pub fn new(engine: Engine) -> SavantServer {
        let root = crate::fsx::canonical(engine.root()).unwrap_or_else(|_| engine.root().to_path_buf());
        let (hub, session) = (Arc::new(Hub::default()), Session::new());
        hub.join(&session);
        SavantServer {
            engine: Arc::new(engine),
            root: Arc::new(root),
            hub,
            session,
            inline: false,
            text_replies: false,
            #[cfg(feature = "agent")]
            drivers: Arc::default(),
        }
    }

    /// Runs engine calls on the calling task instead of handing the worker's
    /// other tasks to another thread first (`block_in_place`), when that is
    /// safe and worth it: on stdio (one client, which waits for the answer
    /// anyway) with the file store and fsync off, where a call is a few tens
    /// of microseconds of CPU and a few system calls, and the hand-off (a
    /// thread woken, the scheduler moved) costs as much as the call. With
    /// fsync on, or PostgreSQL, a call waits on the disk or the network and
    /// keeps the hand-off.
    pub fn inline_calls(mut self, engine_is_quick: bool) -> SavantServer {
        self.inline = engine_is_quick;
        self
    }

    /// For a transport that writes a tool result's `structuredContent` from
    /// its text (stdio): replies are made only as text unless something
    /// else reads them (`server_call.rs`).
    pub(super) fn text_replies(mut self) -> SavantServer {
        self.text_replies = true;
        self
    }

    /// A handler for a new session (HTTP: one per `Mcp-Session-Id`): the
    /// same engine, its own log level and subscriptions.
    pub fn session(&self) -> SavantServer {
        let session = Session::new();
        self.hub.join(&session);
        SavantServer {
            engine: self.engine.clone(),
            root: self.root.clone(),
            hub: self.hub.clone(),
            session,
            inline: self.inline,
            text_replies: self.text_replies,
            #[cfg(feature = "agent")]
            drivers: self.drivers.clone(),
        }
    }

    async fn run_stamp(&self, uri: &str) -> Option<crate::state::Stamp> {
        let (engine, uri) = (self.engine.clone(), uri.to_owned());
        tokio::task::spawn_blocking(move || stamp_of(&engine, &uri)).await.ok().flatten()
    }

    /// `think_exec`'s drivers look up a server's `token_env` here.
    #[cfg(feature = "agent")]
    pub fn with_exec_env(mut self, env: crate::agent::mux::EnvLookup) -> SavantServer {
        self.drivers = Arc::new(super::exec_tool::Drivers::new(env));
        self
    }

    #[cfg(feature = "agent")]
    pub(super) fn drivers(&self) -> Arc<super::exec_tool::Drivers> {
        self.drivers.clone()
    }

    /// The canonical project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, shared (for background work such as retention).
    pub fn shared_engine(&self) -> Arc<Engine> {
        self.engine.clone()
    }

    /// Every tool as an MCP [`Tool`].
    pub fn tool_list() -> Vec<Tool> {
        catalog::tools()
            .map(|t| {
                Tool::new(t.name, t.description, as_object(t.input().clone()))
                    .with_title(t.title)
                    .with_raw_output_schema(as_object(t.output().clone()))
                    .with_annotations(
                        ToolAnnotations::with_title(t.title)
                            .read_only(t.annotations.read_only)
                            .destructive(t.annotations.destructive)
                            .idempotent(t.annotations.idempotent)
                            .open_world(false),
                    )
            })
            .collect()
    }

    fn resource_list(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        if let Ok(list) = self.engine.workflows_list(None) {
            for w in &list.workflows {
                let id = w.id();
                let mut r = Resource::new(format!("workflow://{id}"), format!("workflow {id}"))
                    .with_mime_type("application/yaml");
                if let Some(name) = w.name() {
                    r = r.with_title(name.to_owned());
                }
                if let Some(d) = w.description() {
                    r = r.with_description(d.to_owned());
                }
                out.push(r);
            }
        }
        if let Ok(list) = self.engine.state_list(None) {
            for run in &list.runs {
                let (w, id) = (&run.workflow, &run.run_id);
                let status =
                    run.status.as_ref().map_or("unknown", crate::runtime::reply::EntryStatus::as_str);
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
            if !crate::workspace::valid_workflow_id(id) {
                return Err(EngineError::with(
                    ErrorCode::UnknownWorkflow,
                    UnknownWorkflow::new(id, "not a workflow id".into()),
                ));
            }
            let yaml = self.engine.workflows_read(id)?.yaml;
            return Ok(ResourceContents::text(yaml, uri).with_mime_type("application/yaml"));
        }
        if let Some(rest) = uri.strip_prefix("run://")
            && let Some((w, id)) = rest.split_once('/')
        {
            if !crate::workspace::valid_workflow_id(w) {
                return Err(EngineError::with(
                    ErrorCode::UnknownWorkflow,
                    UnknownWorkflow::new(w, "not a workflow id".into()),
                ));
            }
            let text = match self.engine.state_get(w, id) {
                Ok(state) => serde_json::to_string_pretty(&state),
                Err(e) => serde_json::to_string_pretty(&self.stored_run(w, id, e)?),
            }
            .unwrap_or_default();
            return Ok(ResourceContents::text(text, uri).with_mime_type("application/json"));
        }
        Err(EngineError::with(
            ErrorCode::UnknownResource,
            UnknownResource {
                uri: uri.to_owned(),
                message: "resources are workflow://<id> and run://<workflow>/<run_id>".into(),
            },
        ))
    }
}

impl SavantServer {
    /// A run whose full state cannot be rebuilt (its workflow no longer
    /// compiles, changed, or is gone) as far as its stored files tell:
    /// status, version and when, plus why the full state is not shown.
    /// `Err(UNKNOWN_RUN)` when there is no such run at all.
    fn stored_run(&self, workflow: &str, run_id: &str, error: EngineError) -> Result<Value, EngineError> {
        if error.code == ErrorCode::UnknownRun {
            return Err(error);
        }
        let listed = self.engine.state_list(Some(workflow)).ok();
        let entry = listed
            .and_then(|l| l.runs.into_iter().find(|r| r.run_id == run_id))
            .and_then(|r| serde_json::to_value(r).ok());
        let Some(mut entry) = entry else {
            return Err(EngineError::with(
                ErrorCode::UnknownRun,
                MissingRun {
                    workflow: workflow.to_owned(),
                    run_id: run_id.to_owned(),
                    message: format!("no run `{run_id}` of `{workflow}`"),
                },
            ));
        };
        entry["complete"] = json!(false);
        entry["error"] = json!(error.code);
        entry["details"] = error.details.to_json();
        entry["message"] = json!(format!(
            "only the stored status of this run can be shown: its workflow cannot be loaded ({}); fix the workflow (savant-think check) to read the full state",
            error.code
        ));
        Ok(entry)
    }

    fn page<T: Clone>(items: &[T], cursor: Option<&str>) -> Result<(Vec<T>, Option<String>), McpError> {
        let start = match cursor {
            None => 0,
            Some(c) => c.parse::<usize>().ok().filter(|&n| n <= items.len()).ok_or_else(|| {
                McpError::invalid_params(
                    format!("invalid cursor `{c}`"),
                    Some(json!({"help": "pass the nextCursor of the previous page, or no cursor for the first page"})),
                )
            })?,
        };
        let end = (start + RESOURCE_PAGE).min(items.len());
        let next = (end < items.len()).then(|| end.to_string());
        Ok((items[start..end].to_vec(), next))
    }
}

/// A resource error as JSON-RPC: -32002 only when the resource does not
/// exist, -32603 only for a real internal failure, else -32602 with the
/// engine's `{error, details}` as data.
fn resource_error(e: &EngineError) -> McpError {
    let message = e.message_text().unwrap_or(e.code.as_str()).to_owned();
    match e.code {
        ErrorCode::UnknownWorkflow
        | ErrorCode::UnknownRun
        | ErrorCode::UnknownResource
        | ErrorCode::InvalidId => McpError::resource_not_found(message, Some(e.to_json())),
        ErrorCode::Internal => McpError::internal_error(message, Some(e.to_json())),
        _ => McpError::invalid_params(message, Some(e.to_json())),
    }
}

/// The stored stamp of the run a `run://<workflow>/<run_id>` URI names.
fn stamp_of(engine: &Engine, uri: &str) -> Option<crate::state::Stamp> {
    let (workflow, run_id) = uri.strip_prefix("run://")?.split_once('/')?;
    engine.run_stamp(workflow, run_id)
}

/// `resources/subscribe` accepts the URIs `resources/read` serves.
fn check_subscribable(uri: &str) -> Result<(), McpError> {
    let ok = if let Some(id) = uri.strip_prefix("workflow://") {
        crate::workspace::valid_workflow_id(id)
    } else if let Some((w, id)) = uri.strip_prefix("run://").and_then(|r| r.split_once('/')) {
        crate::workspace::valid_workflow_id(w) && crate::state::is_valid_id(id)
    } else {
        false
    };
    if ok {
        Ok(())
    } else {
        Err(McpError::invalid_params(
            format!("cannot subscribe to `{uri}`"),
            Some(json!({"uri": uri, "help": "subscribe to run://<workflow>/<run_id> or workflow://<id>"})),
        ))
    }
}

impl ServerHandler for SavantServer {
    #[allow(deprecated)] // MCP logging: see notify.rs
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools();
        // The tasks extension comes with think_exec (`[mcp] exec = true`).
        let tasks = cfg!(feature = "agent") && self.engine.config().mcp.exec;
        ServerConfig::new(if tasks { capabilities.enable_tasks().build() } else { capabilities.build() })
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
        #[allow(unused_mut)]
        let mut tools = SavantServer::tool_list();
        #[cfg(feature = "agent")]
        if super::exec_tool::enabled(&self.engine) {
            tools.push(super::exec_tool::tool());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        #[cfg(feature = "agent")]
        if request.name == super::exec_tool::NAME {
            if !super::exec_tool::enabled(&self.engine) {
                return Err(super::exec_tool::refusal());
            }
            return super::exec_tool::call(self, request, &context).await;
        }
        if catalog::find(&request.name).is_none_or(|t| !t.mcp) {
            // Not a tool of this server: a request error, as the spec's
            // InvalidParamsError says ("unknown tool name"), not a result.
            tracing::info!(tool = %request.name, "unknown tool");
            let e = EngineError::unknown_tool(&request.name, catalog::tools().map(|t| t.name));
            return Err(McpError::invalid_params(
                format!("Unknown tool: {}", request.name),
                Some(e.to_json()),
            ));
        }
        let mut request = request;
        let args = Value::Object(request.arguments.take().unwrap_or_default());
        if let Some(answered) = super::input_required::retry(self, &request, &args).await {
            return answered;
        }
        // Kept only to ask a person after the call (a result can be megabytes),
        // which reads the reply's value.
        let may_ask = super::input_required::may_ask(&request.name, &context);
        let kept = if may_ask { args.clone() } else { Value::Null };
        let span = tracing::info_span!("call", request_id = %context.id);
        let result =
            tracing::Instrument::instrument(self.call_made(&request.name, args, may_ask), span).await;
        // A run now waiting for a person: asked through the client when it can.
        if super::input_required::applies(&context) {
            return super::input_required::ask(self, &request.name, &kept, result);
        }
        Ok(super::elicit::ask_person(self, &request.name, &kept, result, &context.peer).await.into())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(notify::accepted(requested, |uri| check_subscribable(uri).is_ok()))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            if uri.starts_with("run://") {
                let stamp = self.run_stamp(uri).await;
                self.hub.record(uri, stamp);
                let engine = self.engine.clone();
                self.hub.watch(move |uri| stamp_of(&engine, uri));
            }
        }
        let _listening = self.hub.listen(context.sink().clone());
        let request = context.request_context();
        if request.client_capabilities().is_some_and(|c| c.supports_tasks()) {
            let uris = context.accepted().resource_subscriptions.clone().unwrap_or_default();
            let (peer, id) = (request.peer.clone(), context.sink().id().clone());
            super::tasks::watch(self, peer, id, uris, request.ct.clone());
        }
        context.cancelled().await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let engine = self.engine.clone();
        let prompts = blocking(move || Ok(mcp_prompts::list(&engine))).await.unwrap_or_default();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let engine = self.engine.clone();
        match tokio::task::spawn_blocking(move || mcp_prompts::get(&engine, &request)).await {
            Ok(r) => r.map(Into::into),
            Err(e) => Err(McpError::internal_error(format!("the prompt could not be built: {e}"), None)),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let engine = self.engine.clone();
        match tokio::task::spawn_blocking(move || mcp_prompts::complete(&engine, &request)).await {
            Ok(r) => r,
            Err(e) => Err(McpError::internal_error(format!("the completion failed: {e}"), None)),
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session.attach(&context.peer);
        self.session.set_level(request.level);
        tracing::debug!(level = ?request.level, "logging level set");
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        check_subscribable(&request.uri)?;
        self.session.attach(&context.peer);
        self.session.subscribe(&request.uri);
        if request.uri.starts_with("run://") {
            // What the subscriber starts from; later changes by any process
            // are sent by the watcher.
            let stamp = self.run_stamp(&request.uri).await;
            self.hub.record(&request.uri, stamp);
            let engine = self.engine.clone();
            self.hub.watch(move |uri| stamp_of(&engine, uri));
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        super::tasks::handle_get(self, request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let answered = super::tasks::handle_update(self, request.task_id, request.input_responses).await?;
        #[cfg(feature = "agent")]
        if let Some(task) = answered.filter(|_| super::exec_tool::enabled(&self.engine)) {
            super::exec_tool::spawn(self, task);
        }
        #[cfg(not(feature = "agent"))]
        let _ = answered;
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let task = super::tasks::handle_cancel(self, request.task_id).await?;
        #[cfg(feature = "agent")]
        self.drivers.stop(&task);
        #[cfg(not(feature = "agent"))]
        let _ = task;
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.session.attach(&context.peer);
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let this = self.clone();
        let all = blocking(move || Ok(this.resource_list())).await.map_err(|e| resource_error(&e))?;
        let (page, next) = SavantServer::page(&all, request.as_ref().and_then(|r| r.cursor.as_deref()))?;
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = next;
        Ok(result)
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
        let contents = blocking(move || this.read(&uri)).await.map_err(|e| {
            // The URI asked for, in the error's data (SEP-2164).
            let mut error = resource_error(&e);
            if let Some(Value::Object(data)) = error.data.as_mut() {
                data.insert("uri".into(), Value::from(request.uri));
            }
            error
        })?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
