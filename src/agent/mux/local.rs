//! The local built-ins: `local_read` (a file under the root) and
//! `local_exec` (a command, only when allowed).
//!
//! Policy (docs/exec.md):
//! - `local_read` takes a path relative to the root (or an absolute path
//!   inside it). `..` components are refused outright; the path is then
//!   resolved (symlinks followed) and must still lie inside the root, so a
//!   symlink pointing out of the root is refused too. At most
//!   `[local] read_max_bytes` are returned (`truncated: true` beyond).
//! - `local_exec` is refused unless `--allow-exec` was given (the command then
//!   runs through `sh -c`) or its program is listed in `[local] exec_allow`
//!   (the command is then split like a shell would, and run directly, with no
//!   shell: `;`, `|`, `$(…)` are plain arguments). It runs in the root (or
//!   `cwd` under it), with stdin closed, a timeout, and stdout / stderr kept
//!   up to `[local] exec_output_max_bytes` each. A command that runs to the
//!   end is a success whatever its exit code (`exit_code` says how it went).

use crate::agent::ToolInfo;
use crate::agent::mux::failure;
use crate::runtime::config::LocalConfig;
use serde_json::{Value, json};
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

pub struct Local {
    root: PathBuf,
    config: LocalConfig,
    allow_exec: bool,
}

fn invalid(message: String) -> (bool, Value) {
    (false, failure("INVALID_INPUT", json!({ "message": message })))
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, (bool, Value)> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(format!("`{key}` must be a string, got {other}"))),
    }
}

/// Reads everything from `r`, keeping the first `cap` bytes: `(kept, total)`.
async fn read_capped(mut r: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, usize) {
    let mut kept = Vec::new();
    let mut total = 0;
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        total += n;
    }
    (kept, total)
}

/// UTF-8 text of `bytes`: a character cut by a cap at the end is dropped,
/// other invalid bytes are replaced.
fn text(bytes: &[u8]) -> String {
    let end = match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => bytes.len(),
    };
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

impl Local {
    pub fn new(root: PathBuf, config: LocalConfig, allow_exec: bool) -> Local {
        let root = crate::fsx::canonical(&root).unwrap_or(root);
        Local { root, config, allow_exec }
    }

    pub fn config(&self) -> &LocalConfig {
        &self.config
    }

    fn exec_permitted(&self) -> bool {
        self.allow_exec || !self.config.exec_allow.is_empty()
    }

    /// What `local_read` and `local_exec` answer, as JSON Schemas (what an
    /// `exec --dry-run` answers for them); `None` for another tool.
    pub fn output_schema(tool: &str) -> Option<Value> {
        match tool {
            "local_read" => {
                Some(json!({"type": "object", "required": ["path", "content", "bytes", "truncated"],
                "properties": {"path": {"type": "string"}, "content": {"type": "string"},
                    "bytes": {"type": "integer", "minimum": 0}, "truncated": {"type": "boolean"}}}))
            }
            "local_exec" => Some(json!({"type": "object", "required": ["exit_code", "stdout", "stderr"],
                "properties": {"exit_code": {"type": "integer"}, "stdout": {"type": "string"},
                    "stderr": {"type": "string"}}})),
            _ => None,
        }
    }

    /// `local_read` always; `local_exec` only when some command is permitted.
    pub fn list(&self) -> Vec<ToolInfo> {
        let mut out = vec![ToolInfo {
            name: "local_read".into(),
            description: format!(
                "Read a text file under the project root (at most {} bytes; `..` and symlinks out of the root are refused).",
                self.config.read_max_bytes
            ),
            input_schema: json!({"type": "object", "required": ["path"], "properties": {
                "path": {"type": "string", "description": "A path relative to the project root."}}}),
        }];
        if self.exec_permitted() {
            let who = if self.allow_exec {
                "any shell command (--allow-exec)".to_owned()
            } else {
                format!("only these programs: {}", self.config.exec_allow.join(", "))
            };
            out.push(ToolInfo {
                name: "local_exec".into(),
                description: format!(
                    "Run a command in the project root and return {{exit_code, stdout, stderr}}; allowed: {who}."
                ),
                input_schema: json!({"type": "object", "required": ["command"], "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "cwd": {"type": "string", "description": "A directory under the root to run in."},
                    "timeout_ms": {"type": "integer", "description": "A shorter timeout than the configured one."}}}),
            });
        }
        out
    }

    /// Resolves `rel` inside the root, refusing `..`, and anything whose real
    /// path (symlinks followed) is outside the root.
    fn resolve(&self, rel: &str) -> Result<PathBuf, (bool, Value)> {
        let outside = |why: &str| {
            (
                false,
                failure(
                    "PATH_OUTSIDE_ROOT",
                    json!({"path": rel, "message": why, "root": self.root.display().to_string(),
                           "help": "give a path relative to the project root, without `..`"}),
                ),
            )
        };
        if rel.is_empty() || rel.contains('\0') {
            return Err(invalid("`path` must be a non-empty path".into()));
        }
        let path = Path::new(rel);
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(outside("`..` is not allowed in a path"));
        }
        match crate::fsx::confine(&self.root, path) {
            Ok(real) => Ok(real),
            Err(crate::fsx::PathError::OutsideRoot { .. }) => {
                Err(outside("the path is outside the project root"))
            }
            Err(crate::fsx::PathError::SymlinkOutsideRoot { .. }) => {
                Err(outside("the path resolves (through a symlink) to a place outside the project root"))
            }
            Err(crate::fsx::PathError::Invalid { reason, .. }) => Err(invalid(format!("`path`: {reason}"))),
            Err(e @ crate::fsx::PathError::NotFound { .. }) => {
                Err((false, failure("NOT_FOUND", json!({"path": rel, "message": e.to_string()}))))
            }
            Err(e) => Err((false, failure("IO_ERROR", json!({"path": rel, "message": e.reason()})))),
        }
    }

    /// Why `local_read` with `args` cannot work, when its path names
    /// nothing under the root (the call would answer `NOT_FOUND`); `None`
    /// otherwise: the call itself says the rest.
    pub fn precheck_read(&self, args: &Value) -> Option<crate::agent::Hopeless> {
        let rel = args.get("path")?.as_str()?;
        match self.resolve(rel) {
            Err((_, v)) if v["error"] == "NOT_FOUND" => Some(crate::agent::Hopeless {
                reason: format!("there is no file `{rel}` under the project root"),
                arg: "path".into(),
                choices: Vec::new(),
            }),
            _ => None,
        }
    }

    /// `local_read {path}` → `{path, content, bytes, truncated}`.
    pub async fn read(&self, args: &Value) -> (bool, Value) {
        let rel = match str_arg(args, "path") {
            Ok(Some(p)) => p,
            Ok(None) => return invalid("missing required argument `path`".into()),
            Err(e) => return e,
        };
        let real = match self.resolve(rel) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let io =
            |e: std::io::Error| (false, failure("IO_ERROR", json!({"path": rel, "message": e.to_string()})));
        let file = match tokio::fs::File::open(&real).await {
            Ok(f) => f,
            Err(e) => return io(e),
        };
        match file.metadata().await {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                return (false, failure("NOT_A_FILE", json!({"path": rel, "message": "not a regular file"})));
            }
            Err(e) => return io(e),
        }
        let cap = self.config.read_max_bytes;
        let (kept, total) = read_capped(file, cap).await;
        (true, json!({"path": rel, "content": text(&kept), "bytes": total, "truncated": total > kept.len()}))
    }

    /// The process `local_exec` starts for `command`: the shell with
    /// `--allow-exec`, else the command split into words, its program one
    /// of `exec_allow`. `Err` is the refusal.
    fn command(&self, command: &str) -> Result<tokio::process::Command, (bool, Value)> {
        if self.allow_exec {
            let mut c = tokio::process::Command::new("sh");
            c.arg("-c").arg(command);
            Ok(c)
        } else {
            let Some(argv) = shlex::split(command).filter(|a| !a.is_empty()) else {
                return Err(invalid(format!("cannot split `{command}` into words (unbalanced quotes?)")));
            };
            if !self.config.exec_allow.iter().any(|p| *p == argv[0]) {
                let allowed = if self.config.exec_allow.is_empty() {
                    "no program is allowed".to_owned()
                } else {
                    format!("allowed programs: {}", self.config.exec_allow.join(", "))
                };
                return Err((
                    false,
                    failure(
                        "EXEC_NOT_ALLOWED",
                        json!({"command": command, "program": argv[0],
                               "message": format!("local_exec may not run `{}`: {allowed}", argv[0]),
                               "help": "pass --allow-exec to allow any command, or add the program to `exec_allow` under [local] in savant-think.toml"}),
                    ),
                ));
            }
            let mut c = tokio::process::Command::new(&argv[0]);
            c.args(&argv[1..]);
            Ok(c)
        }
    }

    /// `local_exec {command, cwd?, timeout_ms?}` →
    /// `{command, exit_code, stdout, stderr, stdout_truncated, stderr_truncated}`.
    pub async fn exec(&self, args: &Value) -> (bool, Value) {
        let command = match str_arg(args, "command") {
            Ok(Some(c)) if !c.trim().is_empty() => c,
            Ok(_) => return invalid("missing required argument `command`".into()),
            Err(e) => return e,
        };
        let mut cmd = match self.command(command) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let dir = match str_arg(args, "cwd") {
            Ok(Some(d)) => match self.resolve(d) {
                Ok(p) => p,
                Err(e) => return e,
            },
            Ok(None) => self.root.clone(),
            Err(e) => return e,
        };
        let timeout = match args.get("timeout_ms").and_then(Value::as_u64) {
            Some(ms) => Duration::from_millis(ms).min(self.config.exec_timeout),
            None => self.config.exec_timeout,
        };
        cmd.current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return exec_failed(command, format!("cannot start: {e}")),
        };
        let cap = self.config.exec_output_max_bytes;
        let stdout = child.stdout.take().map(|o| tokio::spawn(read_capped(o, cap)));
        let stderr = child.stderr.take().map(|e| tokio::spawn(read_capped(e, cap)));
        let collect = |h: Option<tokio::task::JoinHandle<(Vec<u8>, usize)>>| async move {
            match h {
                Some(h) => h.await.unwrap_or_default(),
                None => (Vec::new(), 0),
            }
        };
        // The output counts against the timeout too: a background process
        // may hold the pipes open after the command itself has exited.
        let finished = tokio::time::timeout(timeout, async {
            let status = child.wait().await;
            (status, collect(stdout).await, collect(stderr).await)
        })
        .await;
        let (status, (out, out_total), (err, err_total)) = match finished {
            Ok((Ok(status), out, err)) => (status, out, err),
            Ok((Err(e), _, _)) => return exec_failed(command, e.to_string()),
            Err(_) => {
                // Kill and reap.
                let _ = child.kill().await;
                return (
                    false,
                    failure(
                        "TIMEOUT",
                        json!({"command": command, "timeout_ms": timeout.as_millis() as u64,
                               "message": format!("the command did not finish within {}", humantime::format_duration(timeout)),
                               "help": "raise `exec_timeout` under [local] in savant-think.toml"}),
                    ),
                );
            }
        };
        (
            true,
            json!({"command": command, "exit_code": status.code(), "success": status.success(),
                   "stdout": text(&out), "stderr": text(&err),
                   "stdout_truncated": out_total > out.len(), "stderr_truncated": err_total > err.len()}),
        )
    }
}

/// `EXEC_FAILED`: the command could not be started or waited for.
fn exec_failed(command: &str, message: String) -> (bool, Value) {
    (false, failure("EXEC_FAILED", json!({"command": command, "message": message})))
}
