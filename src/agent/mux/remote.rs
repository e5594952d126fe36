//! One external MCP server from `[servers.NAME]`, reached with rmcp's
//! client: a stdio child process (`command`) or Streamable HTTP (`url`).
//!
//! - Lazy: nothing starts until the first call or list. Starting (spawn +
//!   initialize + tools/list) is bounded by `startup_timeout`.
//! - A call is bounded by `timeout`. A transport failure (the server cannot
//!   be started, or its connection breaks) is transient: the connection is
//!   dropped, the server restarted, and the call tried once more. A timeout is
//!   not retried: the call may have had effects.
//! - Stopping: [`Server::shutdown`] cancels the session; the child process is
//!   killed and reaped (it is spawned with `kill_on_drop`, so dropping the
//!   multiplexer stops it too). A child's stderr goes to
//!   `.savant/logs/servers/NAME.log` under the root.

use crate::agent::ToolInfo;
use crate::agent::mux::{EnvLookup, failure};
use crate::check::contract::Hints;
use crate::check::lock::{LockedServer, LockedTool};
use crate::runtime::config::ServerConfig;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

/// Default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default bound on starting a server.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

type Client = RunningService<RoleClient, ()>;

struct Connection {
    client: Arc<Client>,
    /// Bumped at every (re)start, so a stale failure cannot drop a fresh connection.
    generation: u64,
}

#[derive(Default)]
struct State {
    conn: Option<Connection>,
    generation: u64,
}

pub struct Server {
    name: String,
    config: ServerConfig,
    root: PathBuf,
    /// Where `token_env` is looked up.
    env: EnvLookup,
    state: tokio::sync::Mutex<State>,
    /// The server's tools, as of its last start (for listing and did-you-mean).
    tools: std::sync::Mutex<Vec<Tool>>,
    /// How its stderr log is capped (`[agent]`).
    log_rotation: crate::fsx::Rotation,
    /// Compiled output schemas by tool, of the tools above (emptied at a start).
    validators: std::sync::Mutex<std::collections::HashMap<String, Option<Arc<jsonschema::Validator>>>>,
}

/// Why a connection could not be had: `(code, message)`.
type Offline = (&'static str, String);

/// Transport-level failures, worth one reconnect and retry.
fn is_transient(e: &ServiceError) -> bool {
    matches!(e, ServiceError::TransportSend(_) | ServiceError::TransportClosed)
}

/// A tool result as a JSON value: its structured content, else its text
/// (parsed as JSON when it is JSON).
pub fn result_value(r: &CallToolResult) -> Value {
    if let Some(v) = &r.structured_content {
        return v.clone();
    }
    let text: Vec<&str> = r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    let text = text.join("\n");
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// A tool from `tools/list` as the lock holds it.
pub fn locked(t: &Tool) -> LockedTool {
    let a = t.annotations.as_ref();
    LockedTool {
        name: t.name.to_string(),
        title: t.title.clone().or_else(|| a.and_then(|a| a.title.clone())),
        description: t.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object((*t.input_schema).clone()),
        output_schema: t.output_schema.as_ref().map(|o| Value::Object((**o).clone())),
        annotations: Hints {
            read_only: a.and_then(|a| a.read_only_hint),
            destructive: a.and_then(|a| a.destructive_hint),
            idempotent: a.and_then(|a| a.idempotent_hint),
            open_world: a.and_then(|a| a.open_world_hint),
        },
    }
}

/// The last lines a child wrote to its stderr log since `from` (bytes).
fn stderr_tail(log: &Path, from: u64) -> String {
    let Ok(bytes) = std::fs::read(log) else { return String::new() };
    let new = bytes.get(usize::try_from(from).unwrap_or(0)..).unwrap_or_default();
    let text = String::from_utf8_lossy(new);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(20)..].iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

impl Server {
    pub fn new(name: &str, config: ServerConfig, root: &Path, env: EnvLookup) -> Server {
        Server {
            name: name.to_owned(),
            config,
            root: root.to_path_buf(),
            env,
            state: tokio::sync::Mutex::default(),
            tools: std::sync::Mutex::default(),
            log_rotation: crate::config::AgentConfig::default().log_rotation(),
            validators: std::sync::Mutex::default(),
        }
    }

    /// With its stderr log capped and rotated by `rotation`.
    pub fn with_log_rotation(mut self, rotation: crate::fsx::Rotation) -> Server {
        self.log_rotation = rotation;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn timeout(&self) -> Duration {
        self.config.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// Tool names seen at the last start (empty before the first).
    pub fn known_tools(&self) -> Vec<String> {
        self.tools.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|t| t.name.to_string()).collect()
    }

    fn describe(&self) -> String {
        match (&self.config.command, &self.config.url) {
            (Some(c), _) => format!(
                "`{}`",
                std::iter::once(c).chain(&self.config.args).cloned().collect::<Vec<_>>().join(" ")
            ),
            (_, Some(u)) => u.clone(),
            _ => String::new(),
        }
    }

    async fn connect(&self) -> Result<(Client, Vec<Tool>), Offline> {
        let start = async {
            let client = match (&self.config.command, &self.config.url) {
                (Some(command), _) => {
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(&self.config.args)
                        .envs(&self.config.env)
                        .current_dir(self.root.join(self.config.cwd.as_deref().unwrap_or("")))
                        .kill_on_drop(true);
                    let (transport, _) = TokioChildProcess::builder(cmd)
                        .stderr(self.stderr_log())
                        .spawn()
                        .map_err(|e| ("SERVER_OFFLINE", format!("cannot start {}: {e}", self.describe())))?;
                    ().serve(transport).await.map_err(|e| {
                        (
                            "SERVER_OFFLINE",
                            format!("{} did not initialize as an MCP server: {e}", self.describe()),
                        )
                    })?
                }
                (None, Some(url)) => {
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                    let token = match &self.config.token_env {
                        Some(var) => self.env.get(var),
                        None => self.config.token.clone(),
                    };
                    if let Some(t) = token {
                        config = config.auth_header(t);
                    }
                    let transport = StreamableHttpClientTransport::from_config(config);
                    ().serve(transport).await.map_err(|e| {
                        ("SERVER_OFFLINE", format!("cannot reach the MCP server at {url}: {e}"))
                    })?
                }
                (None, None) => return Err(("SERVER_OFFLINE", "no `command` or `url`".to_owned())),
            };
            let tools = client
                .list_all_tools()
                .await
                .map_err(|e| ("SERVER_OFFLINE", format!("tools/list failed on {}: {e}", self.describe())))?;
            Ok((client, tools))
        };
        let limit = self.config.startup_timeout.unwrap_or(DEFAULT_STARTUP_TIMEOUT);
        match tokio::time::timeout(limit, start).await {
            Ok(r) => r,
            Err(_) => Err((
                "SERVER_OFFLINE",
                format!("{} did not start within {}", self.describe(), humantime::format_duration(limit)),
            )),
        }
    }

    /// Where a stdio child's stderr goes: a log file (rotated when it is
    /// full as the server starts, `[agent] log_max_bytes` / `log_keep`;
    /// never through a symlink), or nowhere if it cannot be opened.
    fn stderr_log(&self) -> Stdio {
        let dir = self.root.join(".savant").join("logs").join("servers");
        let path = dir.join(format!("{}.log", self.name));
        let file = std::fs::create_dir_all(&dir)
            .and_then(|_| crate::fsx::rotate_if_full(&path, self.log_rotation))
            .and_then(|_| {
                crate::fsx::open_nofollow(&path, std::fs::OpenOptions::new().create(true).append(true))
            });
        file.map_or_else(|_| Stdio::null(), Stdio::from)
    }

    /// Starts the server exactly as a call would (command, args, env, cwd;
    /// URL and token), lists its tools (every page) and stops it: what
    /// `tools sync` locks. The error names the server and how it was
    /// started, and for a command ends with what it printed on stderr.
    pub async fn listing(&self) -> Result<LockedServer, String> {
        let log = self.root.join(".savant").join("logs").join("servers").join(format!("{}.log", self.name));
        let before = std::fs::metadata(&log).map_or(0, |m| m.len());
        let (client, tools) = match self.connect().await {
            Ok(c) => c,
            Err((_, message)) => {
                let tail = stderr_tail(&log, before);
                let printed = if self.config.command.is_none() {
                    String::new()
                } else if tail.is_empty() {
                    "\nit printed nothing on stderr".to_owned()
                } else {
                    format!("\nits stderr ended with:\n{tail}")
                };
                return Err(format!("server `{}`: {message}{printed}", self.name));
            }
        };
        let info = client.peer_info().and_then(|i| i.server_info.clone()).map(|s| (s.name, s.version));
        stop(Arc::new(client)).await;
        let (name, version) = info.unwrap_or_default();
        let mut tools: Vec<LockedTool> = tools.iter().map(locked).collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(LockedServer { name, version, tools })
    }

    /// The live connection, starting the server if needed.
    async fn client(&self) -> Result<(Arc<Client>, u64), Offline> {
        let mut state = self.state.lock().await;
        if let Some(c) = &state.conn
            && !c.client.is_closed()
            && !c.client.is_transport_closed()
        {
            return Ok((c.client.clone(), c.generation));
        }
        state.conn = None;
        let (client, tools) = self.connect().await?;
        *self.tools.lock().unwrap_or_else(|p| p.into_inner()) = tools;
        self.validators.lock().unwrap_or_else(|p| p.into_inner()).clear();
        state.generation += 1;
        let client = Arc::new(client);
        state.conn = Some(Connection { client: client.clone(), generation: state.generation });
        tracing::info!(server = %self.name, "started");
        Ok((client, state.generation))
    }

    /// Drops the connection of `generation` (if it is still the current one).
    async fn drop_connection(&self, generation: u64) {
        let mut state = self.state.lock().await;
        if state.conn.as_ref().is_some_and(|c| c.generation == generation)
            && let Some(c) = state.conn.take()
        {
            stop(c.client).await;
        }
    }

    fn offline(&self, (code, message): Offline) -> Value {
        failure(
            code,
            json!({"server": self.name, "message": message,
                   "help": format!("check [servers.{}] in savant-think.toml{}", self.name,
                       if self.config.command.is_some() { format!(" and .savant/logs/servers/{}.log", self.name) } else { String::new() })}),
        )
    }

    /// The server's tools as `NAME_tool`; empty (logged) when it is offline.
    pub async fn list(&self) -> Vec<ToolInfo> {
        if let Err(e) = self.client().await {
            tracing::warn!(server = %self.name, "offline: {}", e.1);
            return Vec::new();
        }
        let tools = self.tools.lock().unwrap_or_else(|p| p.into_inner()).clone();
        tools
            .into_iter()
            .map(|t| ToolInfo {
                name: format!("{}_{}", self.name, t.name),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect()
    }

    /// A successful result, checked against the tool's `outputSchema` (as
    /// listed at the server's start): a tool with one must return
    /// `structuredContent` that matches it, else the result is
    /// `TOOL_OUTPUT_INVALID` — the tool's fault, naming the server.
    fn checked_output(&self, tool: &str, r: &CallToolResult) -> (bool, Value) {
        let value = result_value(r);
        let Some(validator) = self.output_validator(tool) else { return (true, value) };
        let errors: Vec<Value> = match &r.structured_content {
            None => vec![
                json!({"path": "", "message": "the tool has an outputSchema but returned no structuredContent"}),
            ],
            Some(v) => validator
                .iter_errors(v)
                .take(10)
                .map(|e| json!({"path": e.instance_path().to_string(), "message": e.to_string()}))
                .collect(),
        };
        if errors.is_empty() {
            return (true, value);
        }
        let first = errors[0]["message"].as_str().unwrap_or_default().to_owned();
        (
            false,
            failure(
                "TOOL_OUTPUT_INVALID",
                json!({"server": self.name, "tool": tool, "errors": errors, "result": value,
                       "message": format!("server `{}` returned a result of `{tool}` that does not match the tool's outputSchema: {first}", self.name),
                       "help": format!("the server `{}` is at fault (its tool breaks its own outputSchema); report it there, or run `savant-think tools sync` if the tool changed", self.name)}),
            ),
        )
    }

    /// The compiled `outputSchema` of `tool`, compiled once per listing
    /// (`None` when it has none, or it does not compile).
    fn output_validator(&self, tool: &str) -> Option<Arc<jsonschema::Validator>> {
        let mut cache = self.validators.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = cache.get(tool) {
            return v.clone();
        }
        let tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        let schema = tools.iter().find(|t| t.name == tool).and_then(|t| t.output_schema.clone());
        let compiled =
            schema.and_then(|s| jsonschema::validator_for(&Value::Object((*s).clone())).ok()).map(Arc::new);
        cache.insert(tool.to_owned(), compiled.clone());
        compiled
    }

    /// Calls `tool` with `args`: one retry after a transport failure.
    pub async fn call(&self, tool: &str, args: Value) -> (bool, Value) {
        let Value::Object(args) = args else {
            return (false, failure("INVALID_INPUT", json!({"message": "arguments must be a JSON object"})));
        };
        let mut last = None;
        for attempt in 0..2 {
            let (client, generation) = match self.client().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(server = %self.name, attempt, "offline: {}", e.1);
                    last = Some(self.offline(e));
                    continue;
                }
            };
            let known = self.known_tools();
            if !known.iter().any(|t| t == tool) {
                return (false, self.unknown_tool(tool, &known));
            }
            let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args.clone());
            let timeout = self.timeout();
            match tokio::time::timeout(timeout, client.call_tool(params)).await {
                Err(_) => {
                    return (
                        false,
                        failure(
                            "TIMEOUT",
                            json!({"server": self.name, "tool": tool, "timeout_ms": timeout.as_millis() as u64,
                                   "message": format!("`{}.{tool}` did not answer within {}", self.name, humantime::format_duration(timeout)),
                                   "help": format!("raise `timeout` under [servers.{}] in savant-think.toml", self.name)}),
                        ),
                    );
                }
                Ok(Ok(r)) if r.is_error == Some(true) => {
                    return (
                        false,
                        failure(
                            "TOOL_ERROR",
                            json!({"server": self.name, "tool": tool, "message": format!("`{}.{tool}` failed", self.name), "result": result_value(&r)}),
                        ),
                    );
                }
                Ok(Ok(r)) => return self.checked_output(tool, &r),
                Ok(Err(e)) if is_transient(&e) => {
                    tracing::warn!(server = %self.name, tool, attempt, "transport failure: {e}");
                    self.drop_connection(generation).await;
                    last =
                        Some(self.offline((
                            "SERVER_OFFLINE",
                            format!("the connection broke during `{tool}`: {e}"),
                        )));
                }
                Ok(Err(e)) => return (false, self.call_failed(tool, &e)),
            }
        }
        (false, last.unwrap_or_else(|| self.offline(("SERVER_OFFLINE", "unreachable".into()))))
    }

    /// `TOOL_NOT_FOUND`: the server has no tool `tool` (and which it has).
    fn unknown_tool(&self, tool: &str, known: &[String]) -> Value {
        let help = crate::diagnostic::did_you_mean(tool, known.iter().map(String::as_str))
            .map(|t| format!("did you mean `{}.{t}`?", self.name));
        failure(
            "TOOL_NOT_FOUND",
            json!({"server": self.name, "tool": tool,
                   "message": format!("server `{}` has no tool `{tool}`", self.name),
                   "help": help, "tools": known}),
        )
    }

    /// `TOOL_ERROR`: the call failed for a reason a retry does not mend.
    fn call_failed(&self, tool: &str, e: &ServiceError) -> Value {
        let details = match e {
            ServiceError::McpError(m) => {
                json!({"code": m.code.0, "message": m.message, "data": m.data})
            }
            other => json!({"message": other.to_string()}),
        };
        failure(
            "TOOL_ERROR",
            json!({"server": self.name, "tool": tool, "error": details,
                   "message": format!("`{}.{tool}` failed: {e}", self.name)}),
        )
    }

    /// Stops the server if it was started.
    pub async fn shutdown(&self) {
        let conn = self.state.lock().await.conn.take();
        if let Some(c) = conn {
            stop(c.client).await;
        }
    }
}

/// Cancels a session and waits for its task (which drops the transport:
/// a child process is killed and reaped), unless a call still holds it.
async fn stop(client: Arc<Client>) {
    match Arc::try_unwrap(client) {
        Ok(c) => {
            let _ = c.cancel().await;
        }
        Err(shared) => shared.cancellation_token().cancel(),
    }
}
