//! The process environment, read here and nowhere in the library: each
//! variable the documentation lists (docs/config.md, docs/agent.md) becomes a
//! value handed to the library — `SAVANT_PATH` to root discovery,
//! `SAVANT_STATE_FSYNC` / `SAVANT_STATE_URL` as engine
//! [`Overrides`], a server's `token_env` through the multiplexer's lookup.
//! `LOG_LEVEL` is read by `logging.rs`, the model backends' variables by
//! `run.rs`, `NO_COLOR`, `FORCE_COLOR` and `COLUMNS` by `output.rs`.

use savant_think::root::ProjectRoot;
use savant_think::runtime::config::Overrides;
use savant_think::runtime::{Engine, EngineConfig, EngineError};
use savant_think::{state, workspace};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A variable's value, `None` when unset, not UTF-8, or blank.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `SAVANT_PATH` as set (root discovery treats an empty value as unset).
pub fn savant_path() -> Option<OsString> {
    std::env::var_os("SAVANT_PATH")
}

/// The project root for a command: `--root`, else `SAVANT_PATH`, else
/// discovered upwards from `start` (default: the working directory).
pub fn root_from(explicit: Option<&Path>, start: Option<&Path>) -> Result<ProjectRoot, String> {
    workspace::root_from(explicit, savant_path().as_deref(), start)
}

/// Where root discovery starts for a path: a directory itself, a file's directory.
pub fn start_dir(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_path_buf();
    }
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// [`root_from`] starting at the working directory, as a path.
pub fn root(explicit: Option<&Path>) -> Result<PathBuf, String> {
    root_from(explicit, None).map(|r| r.path)
}

/// `SAVANT_TEST_CLOCK`, for the binary's own tests only: in a debug
/// build, the file of a test clock (`runtime::clock`) every run's time is
/// read from; a release build ignores the variable.
pub fn test_clock() {
    #[cfg(debug_assertions)]
    if let Some(file) = var("SAVANT_TEST_CLOCK") {
        savant_think::runtime::clock::use_test_clock(file.into());
    }
}

/// `SAVANT_STATE_FSYNC` and `SAVANT_STATE_URL`, which win over `[state]`;
/// OpenTelemetry's `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full URL),
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL) and `OTEL_SERVICE_NAME`, which
/// win over `[telemetry]`.
pub fn overrides() -> Overrides {
    let mut o = Overrides::from_values(
        std::env::var(state::FSYNC_ENV).ok().as_deref(),
        std::env::var(state::URL_ENV).ok().as_deref(),
    );
    o.otlp_traces_url = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT").map(|b| savant_think::config::traces_url(&b)));
    o.service_name = var("OTEL_SERVICE_NAME");
    o
}

/// Stops the trace exporter when dropped, sending the spans still queued
/// (drop it outside the async runtime, after the engine's work is done).
#[cfg(feature = "mcp")]
pub struct Traces {
    #[cfg(feature = "telemetry")]
    tracer: Option<std::sync::Arc<savant_think::telemetry::Tracer>>,
}

#[cfg(feature = "mcp")]
impl Drop for Traces {
    fn drop(&mut self) {
        #[cfg(feature = "telemetry")]
        if let Some(t) = &self.tracer {
            t.shutdown();
        }
    }
}

/// [`engine`], exporting OpenTelemetry traces of its runs when
/// `[telemetry] otlp_endpoint` or `OTEL_EXPORTER_OTLP_ENDPOINT` names a
/// collector (and `OTEL_SDK_DISABLED` is not `true`); `serve` and `exec`.
#[cfg(feature = "mcp")]
pub fn traced_engine(root: impl Into<PathBuf>) -> Result<(Engine, Traces), EngineError> {
    #[allow(unused_mut)]
    let mut engine = engine(root)?;
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    #[cfg(feature = "telemetry")]
    if let Some(url) = engine.config().telemetry.traces().filter(|_| !disabled) {
        let service = engine.config().telemetry.service().to_owned();
        let tracer = savant_think::telemetry::Tracer::new(&url, &service).map_err(|e| {
            EngineError::message(savant_think::runtime::ErrorCode::InvalidConfig, format!("telemetry: {e}"))
        })?;
        let tracer = std::sync::Arc::new(tracer);
        engine.set_observer(tracer.clone());
        return Ok((engine, Traces { tracer: Some(tracer) }));
    }
    let _ = disabled;
    Ok((
        engine,
        Traces {
            #[cfg(feature = "telemetry")]
            tracer: None,
        },
    ))
}

/// The engine of a command's project root (`--root`, else found as [`root`]
/// finds it); a root that cannot be found is a usage error (exit 2), an
/// engine that cannot open is printed as a tool's error (exit 1).
pub fn engine_at(root: Option<&Path>) -> Result<Engine, std::process::ExitCode> {
    let root = self::root(root).map_err(crate::fail)?;
    engine(root).map_err(|e| super::output::print_result(Err(e)))
}

/// An engine over `root`: its `savant-think.toml` with [`overrides`], and
/// the state store that names.
pub fn engine(root: impl Into<PathBuf>) -> Result<Engine, EngineError> {
    let root = root.into();
    EngineConfig::load_with(&root, &overrides())?.open_engine(root)
}

/// The multiplexer's lookup of a server's `token_env`: the process environment.
#[cfg(feature = "agent")]
pub fn lookup() -> savant_think::agent::mux::EnvLookup {
    savant_think::agent::mux::EnvLookup::new(|name| std::env::var(name).ok())
}
