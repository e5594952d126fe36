//! The MCP server (`savant-think serve`): a thin adapter over the engine on
//! `rmcp`, the official Rust MCP SDK. `server.rs` is the handler (tools,
//! resources, subscriptions, logging level), `prompts.rs` the prompts and
//! completions, `notify.rs` the notifications to clients, `stdio.rs` and
//! `http.rs` the transports (`http.rs` with its security checks). Logs go to
//! stderr, and to clients that ask with `logging/setLevel`; on stdio, stdout
//! belongs to the protocol.

pub mod http;
pub mod notify;
pub mod prompts;
pub mod server;
pub mod stdio;

pub use server::SavantServer;

use crate::runtime::Engine;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The default cap on one incoming message (a stdio line or an HTTP body).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The project root (workflows/, schemas/, prompts/, .savant/state/).
    pub root: PathBuf,
    /// Serve Streamable HTTP at `/mcp` on this address instead of stdio.
    pub http: Option<SocketAddr>,
    /// A bearer token every HTTP request must carry.
    pub token: Option<String>,
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
}

impl ServeOptions {
    pub fn new(root: PathBuf) -> ServeOptions {
        ServeOptions {
            root,
            http: None,
            token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            insecure: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            stateless: false,
        }
    }
}

/// Sends logs to stderr at the level in `LOG_LEVEL` (an `EnvFilter`
/// directive such as `debug` or `savant_think=debug,rmcp=warn`; default
/// `default`), and to every MCP client that asked for them with
/// `logging/setLevel` (at that client's level, whatever `LOG_LEVEL` says).
pub fn init_logging(default: &str) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{Layer, filter};
    let level = std::env::var("LOG_LEVEL").ok().filter(|l| !l.trim().is_empty());
    let env_filter = level
        .as_deref()
        .and_then(|l| tracing_subscriber::EnvFilter::try_new(l.to_lowercase()).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_filter(env_filter);
    let to_clients = notify::McpLogLayer
        .with_filter(filter::filter_fn(notify::wanted).with_max_level_hint(filter::LevelFilter::DEBUG));
    let _ = tracing_subscriber::registry().with(stderr).with(to_clients).try_init();
}

/// Serves until the client goes away (stdio) or the process is interrupted
/// (HTTP). An `Err` is a message for the user (bad options, bind failure).
pub fn serve(options: ServeOptions) -> Result<(), String> {
    init_logging("info");
    if let Some(addr) = options.http {
        http::check_bind(addr, options.token.as_deref(), options.insecure)?;
    }
    let engine = Engine::new(&options.root).map_err(|e| format!("cannot start the engine: {e}"))?;
    let server = SavantServer::new(engine);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = runtime.block_on(async move {
        match options.http {
            Some(addr) => http::serve(server, addr, &options).await,
            None => serve_stdio(server, options.max_message_bytes).await,
        }
    });
    // Blocking engine calls left over from a vanished client must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    result
}

/// MCP over stdin/stdout, newline-delimited JSON-RPC.
pub async fn serve_stdio(server: SavantServer, max_message_bytes: usize) -> Result<(), String> {
    use rmcp::ServiceExt;
    tracing::info!(root = %server.engine().root().display(), version = env!("CARGO_PKG_VERSION"), "serving MCP on stdio");
    let transport = stdio::BoundedStdio::new(tokio::io::stdin(), tokio::io::stdout(), max_message_bytes);
    let running = server.serve(transport).await.map_err(|e| format!("MCP initialization failed: {e}"))?;
    let reason = running.waiting().await.map_err(|e| format!("the MCP session ended with an error: {e}"))?;
    tracing::info!(?reason, "stdio session ended");
    Ok(())
}
