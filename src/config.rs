//! `savant-think.toml` at the root, the one loader of it: every key optional
//! (docs/config.md). `check` reads its `[check]` section, the engine the rest
//! (`[state]`, `[local]`, `[servers.*]`, the payload caps); both load it here,
//! and every command stops on a broken file with the same [`ConfigError`].

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `savant-think.toml`: the engine's settings (every key optional; docs/config.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// A result larger than this (serialized JSON bytes) is truncated.
    pub max_snapshot_bytes: usize,
    /// Any string in a result longer than this many bytes is truncated.
    pub max_string_bytes: usize,
    /// `[state]`: durability and where run state lives.
    pub state: StateConfig,
    /// The built-in `local_read` / `local_exec` tools (`[local]`).
    pub local: LocalConfig,
    /// `[agent]`: the logs of `run` and `exec` (`logs/agent_*.log`, MCP
    /// servers' stderr logs), capped and rotated.
    pub agent: AgentConfig,
    /// External MCP servers by name (`[servers.NAME]`).
    pub servers: BTreeMap<String, ServerConfig>,
    /// `[check]`: ignored codes, per-file ignores, deny-warnings.
    pub check: crate::check::suppress::CheckSettings,
    /// `[telemetry]`: OpenTelemetry traces of runs.
    pub telemetry: TelemetryConfig,
    /// `[events.NAME]`: the events a `wait_for:` step may wait for, each
    /// with its payload's schema.
    pub events: BTreeMap<String, EventConfig>,
    /// `[mcp]`: what `serve` offers beyond the engine's tools.
    pub mcp: McpConfig,
}

/// `[mcp]`: what `serve` offers beyond the engine's tools (docs/config.md).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Offer `think_exec`: a client may have the server run a workflow to
    /// the end with `exec`, calling the project's configured tools
    /// (`[servers.*]`, `local_exec` within `[local] exec_allow`). Default false.
    pub exec: bool,
}

/// `[events.NAME]`: an event runs can wait for (`wait_for:`) and
/// `signal` delivers (docs/runtime.md, "Waiting").
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventConfig {
    /// The payload's JSON Schema, written as a TOML table (`schema =
    /// { type = "object", … }`); none: any JSON value.
    pub schema: Option<serde_json::Value>,
    /// What the event means.
    pub description: Option<String>,
}

/// `[telemetry]`: where `serve` and `exec` send OpenTelemetry traces of the
/// runs they drive (docs/config.md). Unset: no traces.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The OTLP/HTTP endpoint's base URL (`http://localhost:4318`); spans
    /// go to its `/v1/traces`. [`Overrides::otlp_traces_url`] (the binary's
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) wins.
    pub otlp_endpoint: Option<String>,
    /// The spans' `service.name` (default `savant-think`; the binary's
    /// `OTEL_SERVICE_NAME` wins).
    pub service_name: Option<String>,
    /// The full traces URL given outside the file ([`Overrides`]).
    #[serde(skip)]
    pub traces_url: Option<String>,
}

/// The traces URL of an OTLP/HTTP base endpoint (`http://h:4318/` →
/// `http://h:4318/v1/traces`), as `[telemetry] otlp_endpoint` and
/// `OTEL_EXPORTER_OTLP_ENDPOINT` are read.
pub fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

impl TelemetryConfig {
    /// Where spans go: the override as given, else `otlp_endpoint` with
    /// `/v1/traces` added (as OTLP/HTTP exporters read a base endpoint);
    /// `None`: no traces.
    pub fn traces(&self) -> Option<String> {
        let base = self.otlp_endpoint.as_deref().filter(|u| !u.trim().is_empty());
        self.traces_url.clone().or_else(|| base.map(traces_url))
    }

    /// The spans' `service.name`.
    pub fn service(&self) -> &str {
        self.service_name.as_deref().filter(|n| !n.trim().is_empty()).unwrap_or("savant-think")
    }
}

/// `[state]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StateConfig {
    /// fsync state writes (default true); [`Overrides::state_fsync`]
    /// (the binary's `SAVANT_STATE_FSYNC=0|1`) wins.
    pub fsync: bool,
    /// Where runs live: unset for the file store under `.savant/state/`, or
    /// `postgres://…` (docs/deploy.md); [`Overrides::state_url`] (the
    /// binary's `SAVANT_STATE_URL`) wins.
    pub url: Option<String>,
    /// The file store's directory, named on purpose: an absolute path (a
    /// relative one is `INVALID_CONFIG`). Unset: `<root>/.savant/state`,
    /// refused when a symlink leads it out of the root.
    pub dir: Option<PathBuf>,
    /// The think tool's `.savant/session.log` (thoughts given without a
    /// run) is rotated before it passes this many bytes (default 1 MiB).
    pub thoughts_max_bytes: u64,
    /// How many rotated copies of it are kept (`session.log.1` …; default 3).
    pub thoughts_keep: u32,
    /// `[state.keep]`: the retention policy `serve` applies in the
    /// background, at most once a minute (as `state prune` would).
    pub keep: Option<crate::state::Keep>,
    /// How long a call waits for a busy run's lock before `RUN_BUSY`
    /// (default 5s).
    #[serde(with = "humantime_serde")]
    pub lock_timeout: Duration,
    /// How many calls of one process may wait for one run's lock; one more
    /// is answered `RUN_BUSY` at once (default 32).
    pub max_lock_waiters: usize,
    /// PostgreSQL: how long one call to the database may take, connecting
    /// included, before `STATE_UNAVAILABLE` (default 10s).
    #[serde(with = "humantime_serde")]
    pub db_timeout: Duration,
    /// PostgreSQL: at most this many connections do reads and writes, and as
    /// many more hold run locks (default 16).
    pub pool_size: usize,
    /// How many runs the engine keeps in memory between calls, the least
    /// recently used dropped first (default [`DEFAULT_CACHED_RUNS`]); a run
    /// not kept is read from the store again when next used.
    pub cached_runs: usize,
}

/// The default `[state] cached_runs`.
pub const DEFAULT_CACHED_RUNS: usize = 1000;

impl StateConfig {
    /// The store settings these name.
    pub fn store_options(&self) -> crate::state::StoreOptions {
        crate::state::StoreOptions {
            fsync: self.fsync,
            lock: crate::state::LockPolicy { timeout: self.lock_timeout, max_waiters: self.max_lock_waiters },
            db_timeout: self.db_timeout,
            pool_size: self.pool_size.max(1),
        }
    }
}

/// Settings given outside `savant-think.toml` that win over it. The library
/// reads no environment variable: the binary fills these from
/// `SAVANT_STATE_FSYNC` and `SAVANT_STATE_URL` (docs/config.md) with
/// [`Overrides::from_values`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `state.fsync`.
    pub state_fsync: Option<bool>,
    /// `state.url`.
    pub state_url: Option<String>,
    /// Where traces go, as a full URL (`…/v1/traces`): wins over
    /// `telemetry.otlp_endpoint`.
    pub otlp_traces_url: Option<String>,
    /// `telemetry.service_name`.
    pub service_name: Option<String>,
}

impl Overrides {
    /// From the two variables' values as read: fsync `0`/`false` or
    /// `1`/`true` (anything else is no override), a URL unless blank.
    pub fn from_values(state_fsync: Option<&str>, state_url: Option<&str>) -> Overrides {
        Overrides {
            state_fsync: state_fsync.and_then(crate::state::parse_fsync),
            state_url: state_url.filter(|u| !u.trim().is_empty()).map(str::to_owned),
            ..Overrides::default()
        }
    }

    /// Applies the overrides to `config`.
    pub fn apply(&self, config: &mut EngineConfig) {
        if let Some(fsync) = self.state_fsync {
            config.state.fsync = fsync;
        }
        if let Some(url) = &self.state_url {
            config.state.url = Some(url.clone());
        }
        if let Some(url) = &self.otlp_traces_url {
            config.telemetry.traces_url = Some(url.clone());
        }
        if let Some(name) = &self.service_name {
            config.telemetry.service_name = Some(name.clone());
        }
    }
}

/// `[local]`: policy of the built-in `local_read` and `local_exec` tools.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalConfig {
    /// `local_read` returns at most this many bytes of a file.
    pub read_max_bytes: usize,
    /// Programs `local_exec` may run without `--allow-exec` (run directly, no shell).
    pub exec_allow: Vec<String>,
    /// How long a `local_exec` command may run.
    #[serde(with = "humantime_serde")]
    pub exec_timeout: Duration,
    /// `local_exec` keeps at most this many bytes of stdout and of stderr.
    pub exec_output_max_bytes: usize,
}

/// `[agent]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// `logs/agent_trace.log`, `logs/agent_runtime.log` and each MCP
    /// server's `.savant/logs/servers/NAME.log` are rotated before they pass
    /// this many bytes (default 10 MiB; a server's log when it starts).
    pub log_max_bytes: u64,
    /// How many rotated copies of each are kept (`.1` …; default 3).
    pub log_keep: u32,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig { log_max_bytes: 10 * 1024 * 1024, log_keep: 3 }
    }
}

impl AgentConfig {
    /// The logs' rotation.
    pub fn log_rotation(&self) -> crate::fsx::Rotation {
        crate::fsx::Rotation { max_bytes: self.log_max_bytes, keep: self.log_keep }
    }
}

impl StateConfig {
    /// `.savant/session.log`'s rotation.
    pub fn thoughts_rotation(&self) -> crate::fsx::Rotation {
        crate::fsx::Rotation { max_bytes: self.thoughts_max_bytes, keep: self.thoughts_keep }
    }
}

impl Default for LocalConfig {
    fn default() -> LocalConfig {
        LocalConfig {
            read_max_bytes: 1024 * 1024,
            exec_allow: Vec::new(),
            exec_timeout: Duration::from_secs(60),
            exec_output_max_bytes: 64 * 1024,
        }
    }
}

/// `[servers.NAME]`: an external MCP server, a stdio child process
/// (`command`) or a Streamable HTTP endpoint (`url`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// A stdio server: the program to start.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment given to it.
    pub env: BTreeMap<String, String>,
    /// The working directory of the child process (relative to the root).
    pub cwd: Option<String>,
    /// A Streamable HTTP server: its endpoint.
    pub url: Option<String>,
    /// Sent as `Authorization: Bearer TOKEN` to a `url` server.
    pub token: Option<String>,
    /// Read the token from this environment variable instead.
    pub token_env: Option<String>,
    /// How long one tool call may take (default 60s).
    #[serde(with = "humantime_serde::option")]
    pub timeout: Option<Duration>,
    /// How long starting and initializing the server may take (default 30s).
    #[serde(with = "humantime_serde::option")]
    pub startup_timeout: Option<Duration>,
}

impl Default for StateConfig {
    fn default() -> StateConfig {
        let d = crate::state::StoreOptions::default();
        StateConfig {
            fsync: true,
            url: None,
            dir: None,
            thoughts_max_bytes: 1024 * 1024,
            thoughts_keep: 3,
            keep: None,
            lock_timeout: d.lock.timeout,
            max_lock_waiters: d.lock.max_waiters,
            db_timeout: d.db_timeout,
            pool_size: d.pool_size,
            cached_runs: DEFAULT_CACHED_RUNS,
        }
    }
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            max_snapshot_bytes: 50_000,
            max_string_bytes: 5_000,
            state: StateConfig::default(),
            local: LocalConfig::default(),
            agent: AgentConfig::default(),
            servers: BTreeMap::new(),
            check: Default::default(),
            telemetry: TelemetryConfig::default(),
            events: BTreeMap::new(),
            mcp: McpConfig::default(),
        }
    }
}

/// Why `savant-think.toml` could not be used (the engine's `INVALID_CONFIG`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// The `[servers.NAME]` at fault, when one is.
    pub server: Option<String>,
    /// What is wrong, for a person.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The largest `savant-think.toml` read, in bytes.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

impl EngineConfig {
    /// [`EngineConfig::load`], then `overrides`.
    pub fn load_with(root: &Path, overrides: &Overrides) -> Result<EngineConfig, ConfigError> {
        let mut config = EngineConfig::load(root)?;
        overrides.apply(&mut config);
        Ok(config)
    }

    /// Reads `<root>/savant-think.toml` if present (the defaults if not).
    pub fn load(root: &Path) -> Result<EngineConfig, ConfigError> {
        let path = root.join("savant-think.toml");
        let invalid = |message: String| ConfigError { path: path.clone(), server: None, message };
        // A missing file is the defaults; one that cannot be read (a
        // directory, a FIFO, no permission, over the cap) is an error, never
        // silently the defaults.
        let config = match crate::fsx::read_capped(&path, MAX_CONFIG_BYTES) {
            Ok(bytes) => {
                let text =
                    String::from_utf8(bytes).map_err(|_| invalid("the file is not valid UTF-8".into()))?;
                toml::from_str::<EngineConfig>(&text).map_err(|e| invalid(e.to_string()))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => EngineConfig::default(),
            Err(e) => return Err(invalid(format!("cannot read it: {e}"))),
        };
        if let Some(dir) = &config.state.dir
            && !dir.is_absolute()
        {
            return Err(invalid(format!(
                "[state] dir = {:?} is relative; name an absolute directory (unset, runs live in <root>/.savant/state)",
                dir.display().to_string()
            )));
        }
        if let Some(keep) = &config.state.keep {
            keep.check().map_err(|e| {
                let help = e.help.map(|h| format!("; {h}")).unwrap_or_default();
                invalid(format!("[state.keep] {}{help}", e.message))
            })?;
        }
        if let Some(endpoint) = &config.telemetry.otlp_endpoint
            && !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
        {
            return Err(invalid(format!(
                "[telemetry] otlp_endpoint = {endpoint:?} is not an http:// or https:// URL \
                 (write it like http://localhost:4318)"
            )));
        }
        for (name, server) in &config.servers {
            server.check(name).map_err(|message| ConfigError {
                path: path.clone(),
                server: Some(name.clone()),
                message,
            })?;
        }
        Ok(config)
    }
}

impl ServerConfig {
    /// A server needs exactly one of `command` and `url`, and a name that
    /// can prefix its tools (`NAME.tool`, `NAME_tool`).
    pub fn check(&self, name: &str) -> Result<(), String> {
        let valid_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(format!(
                "server name `{name}` must start with a letter and hold only letters, digits, `_` and `-`"
            ));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err(format!("[servers.{name}] has both `command` and `url`; keep one")),
            (None, None) => Err(format!(
                "[servers.{name}] needs `command` (a stdio server) or `url` (a Streamable HTTP server)"
            )),
            (Some(_), None) if self.token.is_some() || self.token_env.is_some() => {
                Err(format!("[servers.{name}]: `token` applies to `url` servers only"))
            }
            (None, Some(_)) if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() => {
                Err(format!("[servers.{name}]: `args`, `env` and `cwd` apply to `command` servers only"))
            }
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                Err(format!("[servers.{name}]: `url` must start with http:// or https://, got `{url}`"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn load(text: &str) -> Result<EngineConfig, ConfigError> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("savant-config-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("savant-think.toml"), text).unwrap();
        let out = EngineConfig::load(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        out
    }

    #[test]
    fn telemetry_endpoint_and_its_overrides() {
        let c = load("").unwrap();
        assert_eq!(c.telemetry.traces(), None, "no traces unless asked for");
        assert_eq!(c.telemetry.service(), "savant-think");
        let mut c =
            load("[telemetry]\notlp_endpoint = \"http://otel:4318/\"\nservice_name = \"ci\"\n").unwrap();
        assert_eq!(c.telemetry.traces().as_deref(), Some("http://otel:4318/v1/traces"));
        assert_eq!(c.telemetry.service(), "ci");
        let o = Overrides { otlp_traces_url: Some("http://h/t".into()), ..Overrides::default() };
        o.apply(&mut c);
        assert_eq!(c.telemetry.traces().as_deref(), Some("http://h/t"), "the environment wins");
        let e = load("[telemetry]\nendpoint = \"x\"\n").unwrap_err();
        assert!(e.message.contains("otlp_endpoint"), "{e}");
    }

    #[test]
    fn servers_and_local_parse_with_durations() {
        let c = load(
            "[local]\nexec_allow = [\"make\"]\nexec_timeout = \"90s\"\n\
             [servers.gitlab]\ncommand = \"gitlab-mcp\"\nargs = [\"--stdio\"]\nenv = { A = \"1\" }\ntimeout = \"500ms\"\n\
             [servers.ci]\nurl = \"http://127.0.0.1:7331/mcp\"\ntoken_env = \"CI_TOKEN\"\n",
        )
        .unwrap();
        assert_eq!(c.local.exec_allow, ["make"]);
        assert_eq!(c.local.exec_timeout, Duration::from_secs(90));
        assert_eq!(c.local.read_max_bytes, 1024 * 1024);
        let g = &c.servers["gitlab"];
        assert_eq!(g.timeout, Some(Duration::from_millis(500)));
        assert_eq!(g.env["A"], "1");
        assert_eq!(c.servers["ci"].token_env.as_deref(), Some("CI_TOKEN"));
    }

    #[test]
    fn bad_servers_are_invalid_config() {
        for (text, needle) in [
            ("[servers.x]\ncommand = \"a\"\ncomand = \"b\"\n", "unknown field `comand`"),
            ("[servers.x]\n", "needs `command`"),
            ("[servers.x]\ncommand = \"a\"\nurl = \"http://h/mcp\"\n", "both"),
            ("[servers.x]\nurl = \"ftp://h\"\n", "http://"),
            ("[servers.x]\nurl = \"http://h/mcp\"\nargs = [\"a\"]\n", "`command` servers only"),
            ("[servers.x]\ncommand = \"a\"\ntoken = \"t\"\n", "`url` servers only"),
            ("[servers.\"a.b\"]\ncommand = \"a\"\n", "must start with a letter"),
            ("[servers.x]\ncommand = \"a\"\ntimeout = \"soon\"\n", "timeout"),
            ("[local]\nexec_timeout = 5\n", "exec_timeout"),
            ("[state.keep]\nolder_than = \"30x\"\n", "[state.keep] older_than `30x` is not a duration"),
            (
                "[state.keep]\nstatus = [\"runing\"]\n",
                "unknown status `runing`: give done, failed, archived or running; did you mean `running`?",
            ),
            ("[telemetry]\notlp_endpoint = \"localhost:4318\"\n", "not an http:// or https:// URL"),
        ] {
            let e = load(text).unwrap_err();
            assert!(e.path.ends_with("savant-think.toml"), "{text}: {e}");
            assert!(e.message.contains(needle), "{text}: {}", e.message);
        }
    }

    #[test]
    fn overrides_win_over_the_file() {
        let mut c = load("[state]\nfsync = false\nurl = \"postgres://file/db\"\n").unwrap();
        Overrides::from_values(Some("1"), Some("postgres://env/db")).apply(&mut c);
        assert!(c.state.fsync);
        assert_eq!(c.state.url.as_deref(), Some("postgres://env/db"));
        // Unset, blank or unknown values change nothing.
        for (fsync, url) in [(None, None), (Some("maybe"), Some("  ")), (Some(""), Some(""))] {
            let mut c = load("[state]\nfsync = false\nurl = \"postgres://file/db\"\n").unwrap();
            let o = Overrides::from_values(fsync, url);
            assert_eq!(o, Overrides::default(), "{fsync:?} {url:?}");
            o.apply(&mut c);
            assert!(!c.state.fsync);
            assert_eq!(c.state.url.as_deref(), Some("postgres://file/db"));
        }
        assert_eq!(Overrides::from_values(Some("false"), None).state_fsync, Some(false));
    }
}
