//! `savant-think serve`: its arguments, logging, the engine and the async
//! runtime around `savant_think::mcp::serve`.

use crate::fail;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:7331).
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Require `Authorization: Bearer TOKEN` on every HTTP request.
    #[arg(long, env = "SAVANT_THINK_TOKEN", hide_env_values = true, conflicts_with = "token_file")]
    token: Option<String>,
    /// Read the token from this file (its first line; kept out of `ps`): to rotate it, change the file and restart with the same command line.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// A second token, read from this file's first line, that may only read: read-only tools, resources, /metrics and the inspector's pages; 403 for anything that changes a run. Needs --token or --token-file.
    #[arg(long, value_name = "PATH", requires = "http")]
    read_token_file: Option<PathBuf>,
    /// Also accept this browser Origin (e.g. https://app.example.com:443; loopback origins are always accepted). Repeatable.
    #[arg(long, value_name = "ORIGIN")]
    allowed_origin: Vec<String>,
    /// Also accept this Host header (e.g. myhost or myhost:7331; loopback names are always accepted). Repeatable.
    #[arg(long, value_name = "HOST")]
    allowed_host: Vec<String>,
    /// Allow a non-loopback --http address without a token.
    #[arg(long)]
    insecure: bool,
    /// Refuse messages (stdio lines, HTTP bodies) larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = savant_think::mcp::DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// Streamable HTTP without sessions: each request is answered on its own, so replicas behind a load balancer need no sticky sessions (no server-to-client notifications then; docs/deploy.md).
    #[arg(long, requires = "http")]
    stateless: bool,
    /// The most MCP sessions (HTTP) held at once; a client opening one more gets HTTP 503 with a JSON-RPC error and Retry-After.
    #[arg(long, value_name = "N", default_value_t = savant_think::mcp::DEFAULT_MAX_SESSIONS)]
    max_sessions: usize,
    /// The most HTTP calls answered at once (each POST until its answer is sent); one more gets HTTP 503 with a JSON-RPC error (BUSY) and Retry-After, at once.
    #[arg(long, value_name = "N", default_value_t = savant_think::mcp::DEFAULT_MAX_IN_FLIGHT)]
    max_in_flight: usize,
    /// Close an HTTP session idle this long (e.g. 90s, 10m, 1h), releasing what it holds.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = humantime::parse_duration)]
    session_idle: std::time::Duration,
    /// On SIGTERM / SIGINT (--http): stop accepting, let in-flight requests finish for up to this long, then exit 0; a second signal exits at once.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    shutdown_grace: std::time::Duration,
    /// The run inspector at http://ADDR/ui/ shows runs but offers no actions (reset, fork, upgrade, archive, delete, restore).
    #[arg(long, requires = "http")]
    ui_read_only: bool,
    /// How log lines on stderr look: text, or json (one object per line: ts, level, msg, target, request_id, tool, ms, workflow, run_id, step, code, cause; docs/deploy.md).
    #[arg(long, value_enum, env = "LOG_FORMAT", default_value = "text")]
    log_format: super::logging::LogFormat,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml, else one holding workflows/, else the current directory (see `savant-think root`).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// Serves until the client goes away (stdio) or the process is interrupted (HTTP).
pub fn run(args: ServeArgs) -> ExitCode {
    let found = match super::env::root_from(args.root.as_deref(), None) {
        Ok(r) => r,
        Err(m) => return fail(m),
    };
    warn_if_not_a_project(&found);
    let root = found.path;
    // rmcp's own `info` lines are per session (and, stateless, per
    // request: three lines and a dump of the client's capabilities for
    // every call); `LOG_LEVEL=info` brings them back.
    super::logging::init_as("info,rmcp=warn", args.log_format);
    let token = match (&args.token, &args.token_file) {
        (_, Some(path)) => match read_token(path) {
            Ok(t) => Some(t),
            Err(m) => return fail(m),
        },
        (token, None) => token.clone(),
    };
    let read_token = match &args.read_token_file {
        Some(path) => match read_token(path) {
            Ok(t) => Some(t),
            Err(m) => return fail(m),
        },
        None => None,
    };
    let options = savant_think::mcp::ServeOptions {
        http: args.http,
        token,
        read_token,
        allowed_origins: args.allowed_origin,
        allowed_hosts: args.allowed_host,
        insecure: args.insecure,
        max_message_bytes: args.max_message_bytes,
        stateless: args.stateless,
        max_sessions: args.max_sessions,
        session_idle: args.session_idle,
        max_in_flight: args.max_in_flight,
        when_idle: Some(give_back_memory),
        shutdown_grace: args.shutdown_grace,
        ui_read_only: args.ui_read_only,
        #[cfg(feature = "agent")]
        exec_env: super::env::lookup(),
    };
    if let Err(m) = options.check() {
        return fail(m);
    }
    let (engine, _traces) = match super::env::traced_engine(root) {
        Ok(e) => e,
        Err(e) => return fail(format!("cannot start the engine: {}", e.human())),
    };
    log_start(&engine, &options);
    match super::runtime::block_on(savant_think::mcp::serve(engine, &options)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(m)) | Err(m) => fail(m),
    }
}

/// A root found by falling back to the working directory, with nothing of a
/// project in it, is most likely a mistake (a client started the server
/// from `/` or `$HOME`): say which root was chosen and how discovery works.
fn warn_if_not_a_project(found: &savant_think::root::ProjectRoot) {
    let p = &found.path;
    let looks_like_a_project =
        ["workflows", "savant-think.toml", ".git"].iter().any(|name| p.join(name).symlink_metadata().is_ok());
    if found.source == savant_think::root::RootSource::WorkingDir && !looks_like_a_project {
        let shown = savant_think::fsx::canonical(p).unwrap_or_else(|_| p.clone());
        eprintln!(
            "warning: serving from {}, which is not a project (no workflows/, savant-think.toml or .git here or above).\n  \
             The root is --root, else $SAVANT_PATH, else the nearest directory above holding savant-think.toml, \
             else one holding workflows/, else the working directory.\n  \
             help: pass --root DIR (or set SAVANT_PATH), or run `savant-think init` to make this a project",
            shown.display()
        );
    }
}

/// Hands the memory freed by a burst of calls back to the system: glibc's
/// malloc keeps what its per-thread arenas freed (eight concurrent 4 MB
/// results left 2.83 GB held; with this, `serve` returns near its idle size;
/// docs/PERFORMANCE.md). Other allocators follow their own policy.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory back to the system; it
    // takes the allocator's own locks and may be called from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The token in `path`: its first line, trimmed; an empty one is refused.
fn read_token(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.is_empty() {
        return Err(format!("the token file {} is empty: write the token on its first line", path.display()));
    }
    Ok(token)
}

/// One line at start with what this replica runs with, so that drift
/// between replicas shows in their logs: the root, the store (its URL
/// without the password, the schema version it was checked at), retention,
/// telemetry and limits. Never the token.
fn log_start(engine: &savant_think::runtime::Engine, options: &savant_think::mcp::ServeOptions) {
    let config = engine.config();
    let store = match &config.state.url {
        Some(url) => without_password(url),
        None => "files".to_owned(),
    };
    #[cfg(feature = "postgres")]
    let schema = config.state.url.as_ref().map(|_| savant_think::state::pg::SCHEMA_VERSION);
    #[cfg(not(feature = "postgres"))]
    let schema: Option<i32> = None;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        root = %engine.root().display(),
        store,
        schema,
        keep = ?config.state.keep,
        telemetry = config.telemetry.traces_url.is_some(),
        auth = options.token.is_some(),
        stateless = options.stateless,
        max_in_flight = options.max_in_flight,
        max_sessions = options.max_sessions,
        max_message_bytes = options.max_message_bytes,
        db_timeout_ms = config.state.db_timeout.as_millis() as u64,
        pool_size = config.state.pool_size,
        "starting"
    );
    if savant_think::runtime::clock::is_test_clock() {
        tracing::warn!("SAVANT_TEST_CLOCK is set: runs read a test clock (a debug build, for tests only)");
    }
}

/// `scheme://user:secret@host/…` as `scheme://user@host/…`; the query
/// (`options=…`) is kept, a `password=` in it masked.
fn without_password(url: &str) -> String {
    let (head, query) = url.split_once('?').unwrap_or((url, ""));
    let head = match (head.split_once("://"), head.rfind('@')) {
        (Some((scheme, rest)), Some(_)) => {
            let (user, host) = rest.rsplit_once('@').unwrap_or(("", rest));
            format!("{scheme}://{}@{host}", user.split(':').next().unwrap_or(""))
        }
        _ => head.to_owned(),
    };
    let query: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| if p.starts_with("password=") { "password=***".to_owned() } else { p.to_owned() })
        .collect();
    if query.is_empty() { head } else { format!("{head}?{}", query.join("&")) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_password_is_never_logged() {
        for (url, shown) in [
            ("postgres://app:s3cret@db:5432/savant", "postgres://app@db:5432/savant"),
            (
                "postgres://app@db/savant?password=s3cret&options=x",
                "postgres://app@db/savant?password=***&options=x",
            ),
            ("postgres://a:b:c@d@h/db", "postgres://a@h/db"),
            ("postgres://h/db", "postgres://h/db"),
        ] {
            assert_eq!(super::without_password(url), shown);
        }
    }
}
