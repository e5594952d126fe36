//! The run's two logs, under `<root>/logs/`, both appended to:
//! - `agent_trace.log`: NDJSON events for dashboards (`run_started`, exactly
//!   one `reasoning_step` per loop step, `tool_call_started`,
//!   `tool_call_completed`, `run_finished`), each with `run_id` and a Unix
//!   `timestamp` in seconds;
//! - `agent_runtime.log`: one human-readable line per happening — timings,
//!   prompt sizes, model switches, retries, tool calls, the final summary.
//!
//! Each line is written with a single `write` call on a file opened in append
//! mode, so concurrent runs interleave whole lines. Both are capped and
//! rotated (`[agent] log_max_bytes`, `log_keep`: `agent_trace.log.1` …, see
//! `fsx::RotatingFile`), and never written through a symlink.

use crate::fsx::{RotatingFile, Rotation};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

pub struct Telemetry {
    run_id: String,
    trace: RotatingFile,
    runtime: RotatingFile,
    trace_path: PathBuf,
    /// `--verbose`: every runtime log line also goes to stderr.
    echo: bool,
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Telemetry {
    /// Opens (creating) `<root>/logs/agent_trace.log` and `agent_runtime.log`,
    /// each rotated by `rotation`.
    pub fn open(root: &Path, run_id: &str, rotation: Rotation) -> Result<Telemetry, String> {
        let dir = root.join("logs");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let trace_path = dir.join("agent_trace.log");
        let runtime_path = dir.join("agent_runtime.log");
        let open = |path: &Path| RotatingFile::open(path, rotation);
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
        let _ = self.trace.append(line.as_bytes());
    }

    /// Appends one human-readable line, prefixed with the time and run id.
    pub fn log(&mut self, message: &str) {
        let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
        let line = format!("{now} {} {message}\n", self.run_id);
        let _ = self.runtime.append(line.as_bytes());
        if self.echo {
            eprintln!("savant-think run: {message}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_logs_are_capped_and_rotated() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let root = std::env::temp_dir().join(format!("savant-telemetry-{}-{nanos}", std::process::id()));
        let mut t = Telemetry::open(&root, "r-1", Rotation { max_bytes: 400, keep: 1 }).unwrap();
        for i in 0..60 {
            t.event("tool_call_started", json!({"step": i, "tool": "x.y"}));
            t.log(&format!("step {i}: called x.y"));
        }
        for name in ["agent_trace.log", "agent_runtime.log"] {
            let dir = root.join("logs");
            for file in [name.to_owned(), format!("{name}.1")] {
                let len = std::fs::metadata(dir.join(&file)).unwrap().len();
                assert!(len <= 400, "{file}: {len} bytes");
            }
            assert!(!dir.join(format!("{name}.2")).exists());
        }
        let trace = std::fs::read_to_string(root.join("logs/agent_trace.log")).unwrap();
        assert!(trace.contains(r#""step":59"#), "{trace}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
