//! Logging of the commands that log (`serve`, `exec`, `run`): to stderr at
//! the level in `LOG_LEVEL`, and to MCP clients that asked for it.

use savant_think::mcp::notify;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, filter};

/// Sends logs to stderr at the level in `LOG_LEVEL` (an `EnvFilter`
/// directive such as `debug` or `savant_think=debug,rmcp=warn`; default
/// `default`), and to every MCP client that asked for them with
/// `logging/setLevel` (at that client's level, whatever `LOG_LEVEL` says).
pub fn init(default: &str) {
    let level = super::env::var("LOG_LEVEL");
    let env_filter = level
        .as_deref()
        .and_then(|l| EnvFilter::try_new(l.to_lowercase()).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_filter(env_filter);
    let to_clients = notify::McpLogLayer
        .with_filter(filter::filter_fn(notify::wanted).with_max_level_hint(filter::LevelFilter::DEBUG));
    let _ = tracing_subscriber::registry().with(stderr).with(to_clients).try_init();
}
