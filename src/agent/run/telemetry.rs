//! The run's two logs, under `<root>/logs/`, both appended to:
//! - `agent_trace.log`: NDJSON events for dashboards (`run_started`, exactly
//!   one `reasoning_step` per loop step, `tool_call_started`,
//!   `tool_call_completed`, `run_finished`), each with `run_id` and a Unix
//!   `timestamp` in seconds;
//! - `agent_runtime.log`: one human-readable line per happening — timings,
//!   prompt sizes, model switches, retries, tool calls, the final summary.
//!
//! Each line is written with a single `write` call on a file opened in append
//! mode, so concurrent runs interleave whole lines.

use serde_json::{Map, Value, json};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Telemetry {
    run_id: String,
    trace: File,
    runtime: File,
    trace_path: PathBuf,
    /// `--verbose`: every runtime log line also goes to stderr.
    echo: bool,
}

fn open(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Telemetry {
    /// Opens (creating) `<root>/logs/agent_trace.log` and `agent_runtime.log`.
    pub fn open(root: &Path, run_id: &str) -> Result<Telemetry, String> {
        let dir = root.join("logs");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let trace_path = dir.join("agent_trace.log");
        let runtime_path = dir.join("agent_runtime.log");
        let trace = open(&trace_path).map_err(|e| format!("cannot open {}: {e}", trace_path.display()))?;
        let runtime =
            open(&runtime_path).map_err(|e| format!("cannot open {}: {e}", runtime_path.display()))?;
        Ok(Telemetry { run_id: run_id.into(), trace, runtime, trace_path, echo: false })
    }

    /// Also write every runtime log line to stderr (`--verbose`).
    pub fn echo(mut self, on: bool) -> Telemetry {
        self.echo = on;
        self
    }

    pub fn trace_path(&self) -> &Path {
        &self.trace_path
    }

    /// Appends one event: `{type, run_id, …fields, timestamp}`.
    pub fn event(&mut self, kind: &str, fields: Value) {
        let mut m = Map::new();
        m.insert("type".into(), json!(kind));
        m.insert("run_id".into(), json!(self.run_id));
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        m.insert("timestamp".into(), json!(unix_seconds()));
        let mut line = Value::Object(m).to_string();
        line.push('\n');
        // Telemetry must never stop a run: a full disk loses log lines only.
        let _ = self.trace.write_all(line.as_bytes());
    }

    /// Appends one human-readable line, prefixed with the time and run id.
    pub fn log(&mut self, message: &str) {
        let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
        let line = format!("{now} {} {message}\n", self.run_id);
        let _ = self.runtime.write_all(line.as_bytes());
        if self.echo {
            eprintln!("savant-think run: {message}");
        }
    }
}
