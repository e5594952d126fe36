//! The MCP server (`savant-think serve`): a thin adapter over the engine on
//! `rmcp`, the official Rust MCP SDK. `server.rs` is the handler (tools —
//! one call in `server_call.rs` —, resources, subscriptions, logging level; `elicit.rs` asks a person
//! through the client for a waiting step), `prompts.rs` the prompts and
//! completions, `notify.rs` the notifications to clients, `stdio.rs` and
//! `http.rs` the transports (`http.rs` with its security checks). Log
//! records go where the binary's subscriber sends them (stderr), and to
//! clients that ask with `logging/setLevel`; on stdio, stdout belongs to the
//! protocol.
//!
//! The handler serves the tools through `crate::tools`, workflows and
//! runs as `workflow://` / `run://` resources (paged), subscriptions and
//! `logging/setLevel`; engine calls are handed off with `block_in_place`
//! (or, on stdio with the file store and fsync off, run on the request's
//! task), and engine errors are `isError` results. `retention.rs` applies
//! `[state] keep` in the background (a thread, once a minute). `stdio.rs`
//! answers oversized lines (`stdio_shape.rs` passes a plainly well-formed
//! request line without parsing it into a value) and writes its lines
//! through `stdio_wire.rs` (a tool's reply serialised once, and over stdio
//! made only as text unless a person may be asked afterwards); `http.rs` mounts the inspector under `/ui` with
//! its own guard, and `/events/{name}` (`webhook.rs`, an event from a
//! webhook) behind `/mcp`'s guard; both web surfaces read `Host`, `Origin` and the
//! bearer token through `crate::web_guard`. `tasks.rs` serves the tasks extension over
//! runs (read from the store), `exec_tool.rs` `think_exec` (the `exec`
//! executor behind a tool, when `[mcp] exec = true`), `calls.rs` how engine
//! calls leave the async runtime. This file is `ServeOptions`
//! (and `check`, the bind rule) and `serve`, async over a given `Engine` on
//! the caller's tokio runtime. Workflow ids are checked with
//! `workspace::valid_workflow_id`, never the lowerer directly.

mod call_log;
mod calls;
mod elicit;
#[cfg(feature = "agent")]
mod exec_tool;
pub mod http;
mod http_guard;
mod input_required;
pub mod metrics;
pub mod notify;
pub mod prompts;
mod read_token;
pub mod retention;
pub mod server;
pub mod stdio;
mod stdio_shape;
mod stdio_wire;
pub mod tasks;
mod webhook;

pub use server::SavantServer;

use crate::runtime::Engine;
use std::net::SocketAddr;

/// The default cap on one incoming message (a stdio line or an HTTP body).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// How to serve (the project root is the engine's).
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Serve Streamable HTTP at `/mcp` on this address instead of stdio.
    pub http: Option<SocketAddr>,
    /// A bearer token every HTTP request must carry.
    pub token: Option<String>,
    /// A second token that may only read (`--read-token-file`; needs `token`).
    pub read_token: Option<String>,
    /// Extra allowed `Origin`s (loopback origins are always allowed).
    pub allowed_origins: Vec<String>,
    /// Extra allowed `Host` names (loopback names are always allowed).
    pub allowed_hosts: Vec<String>,
    /// Allow a non-loopback bind without a token.
    pub insecure: bool,
    /// The largest message accepted, in bytes.
    pub max_message_bytes: usize,
    /// Streamable HTTP without sessions: every POST is answered on its
    /// own, so any replica can take any request (docs/deploy.md).
    pub stateless: bool,
    /// The most MCP sessions held at once (HTTP); a new one past it is 503.
    pub max_sessions: usize,
    /// An HTTP session idle this long is closed (its memory released).
    pub session_idle: std::time::Duration,
    /// The most HTTP calls (POSTs) answered at once; one more is 503 `BUSY`.
    pub max_in_flight: usize,
    /// HTTP: called when the server is idle after calls (checked every 2 s);
    /// the binary returns freed memory to the system there.
    pub when_idle: Option<fn()>,
    /// On SIGTERM / SIGINT, how long in-flight HTTP requests may take to
    /// finish before the server exits anyway.
    pub shutdown_grace: std::time::Duration,
    /// The inspector at `/ui/` shows runs but offers no actions.
    pub ui_read_only: bool,
    /// Where `think_exec`'s drivers look up a server's `token_env`.
    #[cfg(feature = "agent")]
    pub exec_env: crate::agent::mux::EnvLookup,
}

/// The default of `--shutdown-grace`.
pub const DEFAULT_SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The default of `--max-sessions`.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;
/// The default of `--max-in-flight`.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;
/// The default of `--session-idle`.
pub const DEFAULT_SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(600);

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            http: None,
            token: None,
            read_token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            insecure: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            stateless: false,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: DEFAULT_SESSION_IDLE,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            when_idle: None,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            ui_read_only: false,
            #[cfg(feature = "agent")]
            exec_env: crate::agent::mux::EnvLookup::default(),
        }
    }
}

impl ServeOptions {
    /// Refuses options that must not be served (a public HTTP bind with no
    /// token, unless `insecure`), before anything starts.
    pub fn check(&self) -> Result<(), String> {
        if let Some(read) = &self.read_token {
            if self.token.is_none() {
                return Err(
                    "a read-only token needs the operating token too: give --token or --token-file".into()
                );
            }
            if read.trim().is_empty() || self.token.as_deref() == Some(read.as_str()) {
                return Err(
                    "the read-only token must be non-empty and differ from the operating token".into()
                );
            }
        }
        match self.http {
            Some(addr) => http::check_bind(addr, self.token.as_deref(), self.insecure),
            None => Ok(()),
        }
    }
}

/// Serves `engine` until the client goes away (stdio) or the process is
/// interrupted (HTTP). An `Err` is a message for the user (bad options, bind
/// failure). Runs on the caller's tokio runtime (multi-threaded: engine calls
/// block in place); logging is the caller's too (the binary's `src/cli/`
/// sends it to stderr and, through [`notify::McpLogLayer`], to clients).
pub async fn serve(engine: Engine, options: &ServeOptions) -> Result<(), String> {
    options.check()?;
    // A server compiles every tool's input schema before its first request
    // (a one-shot command compiles only the one it calls).
    crate::runtime::catalog::compile_validators();
    let server = SavantServer::new(engine);
    #[cfg(feature = "agent")]
    let server = server.with_exec_env(options.exec_env.clone());
    retention::spawn(server.shared_engine());
    retention::spawn_timers(server.shared_engine());
    match options.http {
        Some(addr) => http::serve(server, addr, options).await,
        None => {
            let state = &server.engine().config().state;
            let quick = !state.fsync && state.url.as_deref().is_none_or(|u| u.trim().is_empty());
            serve_stdio(server.inline_calls(quick), options.max_message_bytes).await
        }
    }
}

/// MCP over stdin/stdout, newline-delimited JSON-RPC.
pub async fn serve_stdio(server: SavantServer, max_message_bytes: usize) -> Result<(), String> {
    use rmcp::ServiceExt;
    tracing::info!(root = %server.engine().root().display(), version = env!("CARGO_PKG_VERSION"), "serving MCP on stdio");
    let transport = stdio::BoundedStdio::new(tokio::io::stdin(), tokio::io::stdout(), max_message_bytes);
    // The transport writes a tool result's text as its structuredContent.
    let running = server
        .text_replies()
        .serve(transport)
        .await
        .map_err(|e| format!("MCP initialization failed: {e}"))?;
    let reason = running.waiting().await.map_err(|e| format!("the MCP session ended with an error: {e}"))?;
    tracing::info!(?reason, "stdio session ended");
    Ok(())
}
