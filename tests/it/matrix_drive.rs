//! The surfaces the capability matrix (`matrix.rs`) drives a run through:
//! the CLI (`savant-think call`, on the file store or PostgreSQL), MCP over
//! stdio (`serve`) and MCP over Streamable HTTP (`serve --http
//! --stateless`), each a real process speaking its own protocol. All of
//! them answer a tool call with the same JSON (the engine's reply, or its
//! error object), which [`drive`] reads.

use crate::common::{BIN, Root};
use crate::matrix::{EVENT, Event, Shape};
use crate::support::Server;
use savant_think::runtime::clock::parse_time;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, SystemTime};

/// A way to call the engine's tools.
pub trait Surface {
    /// Calls `tool` with `args`: the reply, or the error object.
    fn call(&mut self, tool: &str, args: Value) -> Value;

    /// Answers the waiting `await:` step `step_id`: the run's progress.
    fn answer(&mut self, workflow: &str, run_id: &str, step_id: &str, value: &Value) -> Value {
        self.call(
            "think_answer",
            json!({"workflow": workflow, "run_id": run_id, "step_id": step_id, "value": value}),
        )
    }

    /// Sends event `event` with `key`: what was delivered.
    fn signal(&mut self, event: &str, key: &str, payload: &Value) -> Value {
        self.call("think_signal", json!({"event": event, "key": key, "payload": payload}))
    }
}

/// `savant-think call TOOL --input JSON` in a root, with extra environment;
/// with `commands`, waits end through `savant-think answer` and `savant-think signal`.
pub struct Cli<'a> {
    pub root: &'a Root,
    pub env: Vec<(String, String)>,
    pub commands: bool,
}

impl Cli<'_> {
    fn json(&self, args: &[&str]) -> Value {
        let mut c = self.root.command(args);
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

impl Surface for Cli<'_> {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.json(&["call", tool, "--input", &args.to_string()])
    }

    fn answer(&mut self, workflow: &str, run_id: &str, step_id: &str, value: &Value) -> Value {
        if !self.commands {
            let args = json!({"workflow": workflow, "run_id": run_id, "step_id": step_id, "value": value});
            return self.call("think_answer", args);
        }
        self.json(&["answer", workflow, "--run-id", run_id, "--step", step_id, "--value", &value.to_string()])
    }

    fn signal(&mut self, event: &str, key: &str, payload: &Value) -> Value {
        if !self.commands {
            return self.call("think_signal", json!({"event": event, "key": key, "payload": payload}));
        }
        self.json(&["signal", event, "--key", key, "--payload", &payload.to_string()])
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
    /// `serve` in `root`, on the test clock in file `clock`.
    pub fn start(root: &Root, clock: &str) -> Stdio_ {
        Stdio_::start_on(root, clock, None)
    }

    /// [`Stdio_::start`] on the PostgreSQL schema at `url` (`SAVANT_STATE_URL`) when one is given.
    pub fn start_on(root: &Root, clock: &str, url: Option<&str>) -> Stdio_ {
        let mut command = Command::new(BIN);
        if let Some(url) = url {
            command.env("SAVANT_STATE_URL", url);
        }
        let mut child = command
            .arg("serve")
            .current_dir(&root.path)
            .env_remove("SAVANT_PATH")
            .env("SAVANT_STATE_FSYNC", "0")
            .env("SAVANT_TEST_CLOCK", clock)
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

/// A `savant-think serve --http 127.0.0.1:0 --stateless`, one POST per
/// call; with `webhook`, events go to `POST /events/{name}` rather than
/// `think_signal`.
pub struct Http {
    addr: String,
    next_id: u64,
    webhook: bool,
}

impl Http {
    /// Calls to `server`.
    pub fn on(server: &Server, webhook: bool) -> Http {
        Http { addr: server.addr.clone(), next_id: 0, webhook }
    }

    /// `POST /events/{event}?key=KEY` with the payload as its body: the reply's JSON.
    pub fn post_event(&self, event: &str, key: &str, payload: &Value) -> Value {
        let path = format!("/events/{event}?key={key}");
        let headers = [("Content-Type", "application/json")];
        let reply = crate::inspect_http::request(&self.addr, "POST", &path, &headers, &payload.to_string());
        serde_json::from_str(&reply.body).unwrap_or_else(|e| {
            json!({"error": "NOT_JSON", "details": format!("HTTP {}: {e}: {}", reply.status, reply.body)})
        })
    }
}

impl Surface for Http {
    fn signal(&mut self, event: &str, key: &str, payload: &Value) -> Value {
        if self.webhook {
            return self.post_event(event, key, payload);
        }
        self.call("think_signal", json!({"event": event, "key": key, "payload": payload}))
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let headers =
            [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
        let reply = crate::inspect_http::request(&self.addr, "POST", "/mcp", &headers, &body.to_string());
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

/// The CLI for the engine loop, with each `await:` answered through the
/// inspector: its run page lists the wait with its question, and its
/// `answer` action (behind the server's token) records the answer.
pub struct InspectorAnswers<'a> {
    pub cli: Cli<'a>,
    pub addr: String,
    pub token: &'static str,
}

impl Surface for InspectorAnswers<'_> {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.cli.call(tool, args)
    }

    fn answer(&mut self, workflow: &str, run_id: &str, step_id: &str, value: &Value) -> Value {
        let bearer = format!("Bearer {}", self.token);
        let auth = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
        let view = crate::inspect_http::get(&self.addr, &format!("/ui/api/runs/{workflow}/{run_id}"), &auth);
        let view: Value = serde_json::from_str(&view.body).unwrap_or(Value::Null);
        let listed = view["waiting"].as_array().into_iter().flatten().find(|w| w["step_id"] == step_id);
        if listed.is_none_or(|w| w["ask"].as_str().is_none_or(str::is_empty)) {
            return json!({"error": "NOT_LISTED", "details": format!("the run page lists no question for {step_id}: {view}")});
        }
        let path = format!("/ui/api/runs/{workflow}/{run_id}/actions/answer");
        let body = json!({"step_id": step_id, "value": value}).to_string();
        let reply = crate::inspect_http::request(&self.addr, "POST", &path, &auth, &body);
        match serde_json::from_str::<Value>(&reply.body) {
            Ok(v) if reply.status == 200 => v["result"].clone(),
            Ok(v) => v,
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
    /// How each wait ended, in order: `(step_id, "answered" | "event" |
    /// "deadline")`, and `(EVENT, "sent early")` for an event sent before
    /// its wait started.
    pub waits: Vec<(String, String)>,
    /// The run's final status (`state get`).
    pub status: String,
    /// Its captures at the end.
    pub captures: Value,
    /// Each step's `(id, status)` at the end.
    pub steps: Vec<(String, String)>,
}

/// Past this many instructions (or ended waits) a drive stops: a run that never ends.
const MAX_INSTRUCTIONS: usize = 200;

/// The furthest a drive moves the test clock to end a wait (the wait
/// shapes' deadlines are 1 s away).
const MAX_JUMP: Duration = Duration::from_secs(2);

/// Drives run `run_id` of `shape` from `plan` to its end on `surface`,
/// answering each instruction with the shape's answers, each `await:` with
/// its wait answer, sending its event (early: right after `plan`, into the
/// run's inbox; else when the run waits for it), and moving the test clock
/// in file `clock` past any other wait's deadline.
pub fn drive(surface: &mut dyn Surface, shape: &Shape, run_id: &str, clock: &Path) -> Result<Trace, String> {
    let (workflow, params) = (shape.workflow, shape.params());
    let mut waits = Vec::new();
    let reply = surface.call("think_plan", json!({"workflow": workflow, "params": params, "run_id": run_id}));
    let mut event = shape.event.as_ref();
    if let Some(e) = event.filter(|e| e.early) {
        let sent = surface.signal(EVENT, e.key, &e.payload());
        delivered_to(&sent, workflow, run_id)?;
        waits.push((EVENT.to_owned(), "sent early".to_owned()));
        event = None;
    }
    drive_on(surface, shape, (run_id, clock), reply, event, waits)
}

/// [`drive`] from `reply` on (a run that exists: `plan` with `if_exists:
/// resume` answers it), its event still to send when it waits for it.
pub fn resume(surface: &mut dyn Surface, shape: &Shape, run_id: &str, clock: &Path) -> Result<Trace, String> {
    let resume = json!({"workflow": shape.workflow, "run_id": run_id, "if_exists": "resume"});
    let reply = surface.call("think_plan", resume);
    drive_on(surface, shape, (run_id, clock), reply, shape.event.as_ref(), Vec::new())
}

/// The loop of [`drive`], from `reply`.
fn drive_on(
    surface: &mut dyn Surface,
    shape: &Shape,
    (run_id, clock): (&str, &Path),
    mut reply: Value,
    mut event: Option<&Event>,
    mut waits: Vec<(String, String)>,
) -> Result<Trace, String> {
    let workflow = shape.workflow;
    let mut instructions = Vec::new();
    loop {
        let instruction = reply.get("instruction").filter(|i| i.is_object()).cloned();
        let failed_for_good = reply.get("error").is_some() && instruction.is_none();
        if failed_for_good && reply["error"] != "RUN_FAILED" && reply["error"] != "VALIDATION_FAILED" {
            return Err(format!("{workflow}: the engine answered an error: {reply}"));
        }
        if instructions.len() + waits.len() >= MAX_INSTRUCTIONS {
            return Err(format!("{workflow}: still going after {MAX_INSTRUCTIONS} instructions and waits"));
        }
        let Some(i) = instruction else {
            let waiting = reply["waiting"].as_array().cloned().unwrap_or_default();
            if waiting.is_empty() || failed_for_good {
                break;
            }
            reply = end_wait(surface, shape, (run_id, clock), &waiting, &mut event, &mut waits)?;
            continue;
        };
        let step_id = i["step_id"].as_str().unwrap_or_default().to_owned();
        let call = i["call"].as_str().map(str::to_owned);
        instructions.push((step_id.clone(), call.clone(), i["input"].clone()));
        let result = shape.answer(&step_id, call.as_deref(), i["attempt"].as_u64().unwrap_or(1));
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
    Ok(Trace { instructions, waits, status: status.to_owned(), captures: state["captures"].clone(), steps })
}

/// That `sent` (a signal's reply) delivered the event to run `run_id`.
pub fn delivered_to(sent: &Value, workflow: &str, run_id: &str) -> Result<(), String> {
    let to_run = |d: &Value| d["workflow"] == workflow && d["run_id"] == run_id;
    let ok = sent["delivered"].as_array().is_some_and(|d| d.iter().any(to_run));
    if ok { Ok(()) } else { Err(format!("the event was not delivered to {run_id}: {sent}")) }
}

/// Ends one of `waiting` through `surface` (see [`drive`]): the run's progress after it.
fn end_wait(
    surface: &mut dyn Surface,
    shape: &Shape,
    (run_id, clock): (&str, &Path),
    waiting: &[Value],
    event: &mut Option<&Event>,
    waits: &mut Vec<(String, String)>,
) -> Result<Value, String> {
    let workflow = shape.workflow;
    let resume = json!({"workflow": workflow, "run_id": run_id, "if_exists": "resume"});
    for w in waiting {
        let step = w["step_id"].as_str().unwrap_or_default();
        if w["wait"] == "answer"
            && let Some(value) = shape.wait_answer(step)
        {
            waits.push((step.to_owned(), "answered".to_owned()));
            return Ok(surface.answer(workflow, run_id, step, &value));
        }
        if w["wait"] == "event"
            && let Some(e) = event.take()
        {
            let sent = surface.signal(EVENT, e.key, &e.payload());
            delivered_to(&sent, workflow, run_id)?;
            waits.push((step.to_owned(), "event".to_owned()));
            return Ok(surface.call("think_plan", resume));
        }
    }
    // Nothing here ends a wait: the clock jumps to the earliest deadline.
    let next = waiting
        .iter()
        .filter_map(|w| Some((parse_time(w["deadline"].as_str()?)?, w["step_id"].as_str()?)))
        .min()
        .ok_or_else(|| format!("{workflow}: waits that nothing ends: {waiting:?}"))?;
    let offset = clock_offset(clock);
    let left = next.0.duration_since(SystemTime::now() + offset).unwrap_or_default();
    if left > MAX_JUMP {
        return Err(format!("{workflow}: a deadline {left:?} away: {waiting:?}"));
    }
    advance_clock(clock, next.0);
    waits.push((next.1.to_owned(), "deadline".to_owned()));
    Ok(surface.call("think_plan", resume))
}

/// The test clock's offset in file `clock` (see `runtime::clock`): the
/// largest number of milliseconds in it.
fn clock_offset(clock: &Path) -> Duration {
    let text = std::fs::read_to_string(clock).unwrap_or_default();
    Duration::from_millis(text.lines().filter_map(|l| l.trim().parse().ok()).max().unwrap_or(0))
}

/// Moves the test clock in file `clock` forward to `at` (a line appended,
/// as the binary does).
pub fn advance_clock(clock: &Path, at: SystemTime) {
    let needed = at.duration_since(SystemTime::now()).unwrap_or_default();
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(clock).unwrap();
    writeln!(f, "{}", needed.as_millis() + 1).unwrap();
}
