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
    init_as(default, LogFormat::Text)
}

/// How lines on stderr look (`serve --log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-01-01T00:00:00Z  INFO target: msg key=value`, for a person.
    Text,
    /// One JSON object per line (`ts`, `level`, `msg`, `target`, fields; see `log_json.rs`).
    Json,
}

/// [`init`] with the lines on stderr in `format`.
pub fn init_as(default: &str, format: LogFormat) {
    let env_filter = || {
        super::env::var("LOG_LEVEL")
            .as_deref()
            .and_then(|l| EnvFilter::try_new(l.to_lowercase()).ok())
            .unwrap_or_else(|| EnvFilter::new(default))
    };
    let text = (format == LogFormat::Text).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_target(true)
            .with_filter(env_filter())
    });
    let json = (format == LogFormat::Json).then(|| super::log_json::JsonLines.with_filter(env_filter()));
    let to_clients = notify::McpLogLayer
        .with_filter(filter::filter_fn(notify::wanted).with_max_level_hint(filter::LevelFilter::DEBUG));
    let _ = tracing_subscriber::registry().with(text).with(json).with(to_clients).try_init();
}
