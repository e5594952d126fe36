//! The surfaces the capability matrix (`matrix.rs`) drives a run through:
//! the CLI (`savant-think call`, on the file store or PostgreSQL), MCP over
//! stdio (`serve`) and MCP over Streamable HTTP (`serve --http
//! --stateless`), each a real process speaking its own protocol. All of
//! them answer a tool call with the same JSON (the engine's reply, or its
//! error object), which [`drive`] reads.

use crate::common::{BIN, Root};
use crate::support::Server;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A way to call the engine's tools.
pub trait Surface {
    /// Calls `tool` with `args`: the reply, or the error object.
    fn call(&mut self, tool: &str, args: Value) -> Value;
}

/// `savant-think call TOOL --input JSON` in a root, with extra environment.
pub struct Cli<'a> {
    pub root: &'a Root,
    pub env: Vec<(String, String)>,
}

impl Surface for Cli<'_> {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let mut c = self.root.command(&["call", tool, "--input", &args.to_string()]);
        c.env("SAVANT_STATE_FSYNC", "0");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            json!({"error": "NOT_JSON", "details": format!("{e}: {}{}", String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr))})
        })
    }
}

/// The JSON a `tools/call` result carries: its structured content, else
/// its first text block as JSON.
fn tool_result(response: &Value) -> Value {
    if let Some(e) = response.get("error") {
        return json!({"error": "JSONRPC_ERROR", "details": e});
    }
    let result = &response["result"];
    if let Some(s) = result.get("structuredContent").filter(|s| !s.is_null()) {
        return s.clone();
    }
    let text = result["content"][0]["text"].as_str().unwrap_or("null");
    serde_json::from_str(text).unwrap_or_else(|_| json!({"error": "NOT_JSON", "details": text}))
}

/// `savant-think serve` over stdio, spoken to as raw JSON-RPC lines.
pub struct Stdio_ {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    next_id: u64,
}

impl Stdio_ {
    pub fn start(root: &Root) -> Stdio_ {
        let mut child = Command::new(BIN)
            .arg("serve")
            .current_dir(&root.path)
            .env_remove("SAVANT_PATH")
            .env("SAVANT_STATE_FSYNC", "0")
            .env("LOG_LEVEL", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let from = BufReader::new(child.stdout.take().unwrap());
        let mut s = Stdio_ { child, to, from, next_id: 0 };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "matrix", "version": "1"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.to, "{message}").unwrap();
        self.to.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.from.read_line(&mut line).unwrap() > 0, "serve (stdio) closed its output");
            let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
            if v["id"] == json!(id) {
                return v;
            }
        }
    }
}

impl Surface for Stdio_ {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        tool_result(&self.request("tools/call", json!({"name": tool, "arguments": args})))
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `savant-think serve --http 127.0.0.1:0 --stateless`, one POST per call.
pub struct Http {
    pub server: Server,
    next_id: u64,
}

impl Http {
    pub fn start(root: &Root) -> Http {
        let mut command = Server::command(&root.path);
        command.args(["--stateless"]).env("LOG_LEVEL", "error").env("SAVANT_STATE_FSYNC", "0");
        Http { server: Server::start(command, false), next_id: 0 }
    }
}

impl Surface for Http {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let headers =
            [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
        let reply =
            crate::inspect_http::request(&self.server.addr, "POST", "/mcp", &headers, &body.to_string());
        // A JSON body, or server-sent events whose `data:` line is the response.
        let text = reply
            .body
            .lines()
            .find_map(|l| l.strip_prefix("data:").map(str::trim).filter(|d| d.starts_with('{')))
            .unwrap_or(reply.body.trim());
        match serde_json::from_str::<Value>(text) {
            Ok(v) => tool_result(&v),
            Err(e) => {
                json!({"error": "NOT_JSON", "details": format!("HTTP {}: {e}: {}", reply.status, reply.body)})
            }
        }
    }
}

/// What a run did: the instructions handed out, in order, and how it ended.
#[derive(Debug, PartialEq)]
pub struct Trace {
    /// `(step_id, call, input)` of each instruction handed out.
    pub instructions: Vec<(String, Option<String>, Value)>,
    /// The run's final status (`state get`).
    pub status: String,
    /// Its captures at the end.
    pub captures: Value,
    /// Each step's `(id, status)` at the end.
    pub steps: Vec<(String, String)>,
}

/// Past this many instructions a drive stops: a run that never ends.
const MAX_INSTRUCTIONS: usize = 200;

/// Drives run `run_id` of `workflow` from `plan` to its end on `surface`,
/// answering each instruction with `answer(step_id, call, attempt)`.
pub fn drive(
    surface: &mut dyn Surface,
    workflow: &str,
    params: &Value,
    run_id: &str,
    answer: &dyn Fn(&str, Option<&str>, u64) -> Value,
) -> Result<Trace, String> {
    let mut instructions = Vec::new();
    let mut reply =
        surface.call("think_plan", json!({"workflow": workflow, "params": params, "run_id": run_id}));
    loop {
        let instruction = reply.get("instruction").filter(|i| i.is_object()).cloned();
        let failed_for_good = reply.get("error").is_some() && instruction.is_none();
        if failed_for_good && reply["error"] != "RUN_FAILED" && reply["error"] != "VALIDATION_FAILED" {
            return Err(format!("{workflow}: the engine answered an error: {reply}"));
        }
        let Some(i) = instruction else { break };
        if instructions.len() >= MAX_INSTRUCTIONS {
            return Err(format!("{workflow}: still handing out instructions after {MAX_INSTRUCTIONS}"));
        }
        let step_id = i["step_id"].as_str().unwrap_or_default().to_owned();
        let call = i["call"].as_str().map(str::to_owned);
        instructions.push((step_id.clone(), call.clone(), i["input"].clone()));
        let result = answer(&step_id, call.as_deref(), i["attempt"].as_u64().unwrap_or(1));
        reply = surface.call(
            "think_next",
            json!({"workflow": workflow, "run_id": run_id, "step_id": step_id, "result_snapshot": result}),
        );
    }
    let state = surface.call("think_state_get", json!({"workflow": workflow, "run_id": run_id}));
    let Some(status) = state["status"].as_str() else {
        return Err(format!("{workflow}: state get answered {state}"));
    };
    let steps = state["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| (s["id"].as_str().unwrap_or("").to_owned(), s["status"].as_str().unwrap_or("").to_owned()))
        .collect();
    Ok(Trace { instructions, status: status.to_owned(), captures: state["captures"].clone(), steps })
}
