//! A run is a task (issue 45, point 3): `think_exec` behind `[mcp] exec =
//! true`, the `io.modelcontextprotocol/tasks` extension over stdio (a
//! 2025-11-25 session that declared it) and stateless HTTP (2026-07-28
//! requests, capabilities in `_meta`): `tasks/get` from the store,
//! `tasks/update` answering a person's question, `tasks/cancel` after the
//! step in flight (two at once record one cancel), `notifications/tasks` on
//! a `subscriptions/listen` stream, refusals with their codes recording
//! nothing, and a task that outlives `kill -9` of its server.

use crate::support::{Root, Server};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

const APPROVE: &str = r#"
id: approve
params:
  mr: {type: integer}
steps:
  - id: summary
    call: think
    input_template: {thought: "summarise <<params.mr>>"}
  - id: approve
    await:
      ask: "Merge MR <<params.mr>>?"
      schema: {type: object, properties: {approved: {type: boolean}, note: {type: string}}, required: [approved]}
      timeout: 24h
    capture_as: approval
    deps: [summary]
  - id: merge
    call: think
    when: approval.approved
    input_template: {thought: "merging <<params.mr>>: <<approval.note>>"}
"#;

/// Four steps of a second each (`sleep 1`, allowed by `[local] exec_allow`).
const SLOW: &str = r#"
id: slow
steps:
  - id: a
    call: local.exec
    input_template: {command: "sleep 1"}
  - id: b
    call: local.exec
    input_template: {command: "sleep 1"}
    deps: [a]
  - id: c
    call: local.exec
    input_template: {command: "sleep 1"}
    deps: [b]
  - id: d
    call: local.exec
    input_template: {command: "sleep 1"}
    deps: [c]
"#;

const ALLOWED: &str = "[mcp]\nexec = true\n\n[local]\nexec_allow = [\"sleep\"]\n";

fn project(name: &str, config: &str) -> Root {
    let root =
        Root::with_workflows(name, &[("approve", APPROVE), ("slow", SLOW)]).env("SAVANT_STATE_FSYNC", "0");
    root.write("savant-think.toml", config);
    root
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `serve` over stdio, spoken to in raw JSON-RPC lines.
struct Stdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Stdio {
    /// Started and initialized (2025-11-25), declaring the tasks extension when `tasks`.
    fn start(root: &Root, tasks: bool) -> Stdio {
        let mut child = std::process::Command::new(crate::common::BIN)
            .args(["serve", "--root"])
            .arg(&root.path)
            .env("LOG_LEVEL", "error")
            .env("SAVANT_STATE_FSYNC", "0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
        let mut s = Stdio { child, stdin, stdout, id: 0 };
        let capabilities = if tasks { json!({"extensions": {TASKS: {}}}) } else { json!({}) };
        let init = s.rpc(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        );
        let allowed =
            std::fs::read_to_string(root.join("savant-think.toml")).unwrap().contains("exec = true");
        assert_eq!(init["result"]["capabilities"]["extensions"][TASKS].is_object(), allowed, "{init}");
        writeln!(s.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        s
    }

    /// A request and its response (notifications in between are skipped).
    fn rpc(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        )
        .unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == self.id {
                return v;
            }
        }
    }

    fn get(&mut self, task: &str) -> Value {
        self.rpc("tasks/get", json!({"taskId": task}))
    }

    /// Polls `tasks/get` until the task's status is `status`.
    fn until(&mut self, task: &str, status: &str) -> Value {
        for _ in 0..600 {
            let got = self.get(task);
            if got["result"]["status"] == status {
                return got["result"].clone();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{task} never became {status}: {}", self.get(task));
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn version(root: &Root, workflow: &str, run: &str) -> Value {
    root.ok(&["state", "get", workflow, "--run-id", run])["version"].clone()
}

/// The error's `{code, data.error}`.
fn refusal(reply: &Value) -> (i64, String) {
    let e = &reply["error"];
    (
        e["code"].as_i64().unwrap_or_else(|| panic!("not an error: {reply}")),
        e["data"]["error"].as_str().unwrap_or("").to_owned(),
    )
}

/// Over stdio: a task that waits for a person is input_required with the
/// question; wrong, unknown and malformed answers are refused and record
/// nothing; the right one lets the run end, and the task is completed
/// with the run's captures. Unknown ids and late updates or cancels are
/// refused with their codes.
#[test]
fn a_task_asks_its_question_and_completes_after_the_answer() {
    let root = project("tasks-stdio", ALLOWED);
    let mut s = Stdio::start(&root, true);
    let tools = s.rpc("tools/list", json!({}));
    let exec =
        tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "think_exec").cloned();
    let exec = exec.unwrap_or_else(|| panic!("think_exec is listed: {tools}"));
    assert_eq!(exec["inputSchema"]["required"], json!(["workflow"]), "{exec}");
    assert!(exec["outputSchema"]["properties"]["task_id"].is_object(), "{exec}");
    assert_eq!(exec["annotations"]["readOnlyHint"], false, "{exec}");

    let call = json!({"name": "think_exec", "arguments": {"workflow": "approve", "params": {"mr": 7}, "run_id": "r1"}});
    let created = s.rpc("tools/call", call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task, "run://approve/r1");
    assert!(matches!(created["result"]["status"].as_str(), Some("working" | "input_required")), "{created}");

    let asked = s.until(&task, "input_required");
    let request = &asked["inputRequests"]["approve"];
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    assert_eq!(request["params"]["message"], "Merge MR 7?");
    assert_eq!(request["params"]["requestedSchema"]["required"], json!(["approved"]));

    let before = version(&root, "approve", "r1");
    let update = |responses: Value| json!({"taskId": task, "inputResponses": responses});
    for (responses, code) in [
        (json!({"approve": {"action": "accept", "content": {"approved": "yes"}}}), "VALIDATION_FAILED"),
        (json!({"nope": {"action": "accept", "content": {"approved": true}}}), "INVALID_INPUT"),
        (json!({"approve": {"content": {"approved": true}}}), "INVALID_INPUT"),
        (json!({}), "INVALID_INPUT"),
    ] {
        let refused = s.rpc("tasks/update", update(responses.clone()));
        assert_eq!(refusal(&refused), (-32602, code.to_owned()), "{responses}: {refused}");
        assert!(refused["error"]["message"].as_str().is_some_and(|m| m.len() > 10), "{refused}");
    }
    assert_eq!(version(&root, "approve", "r1"), before, "a refused update records nothing");
    assert_eq!(s.get(&task)["result"]["status"], "input_required");

    let ok = s.rpc(
        "tasks/update",
        update(json!({"approve": {"action": "accept", "content": {"approved": true, "note": "lgtm"}}})),
    );
    assert_eq!(ok["result"]["resultType"], "complete", "{ok}");
    let done = s.until(&task, "completed");
    let result = &done["result"]["structuredContent"];
    assert_eq!(result["captures"]["approval"], json!({"approved": true, "note": "lgtm"}), "{done}");
    assert_eq!(done["result"]["isError"], false);
    let state = root.ok(&["state", "get", "approve", "--run-id", "r1"]);
    assert_eq!(state["status"], "done");
    assert_eq!(state["steps"][2]["status"], "done", "merge ran on the server: {state}");

    let late = s.rpc(
        "tasks/update",
        update(json!({"approve": {"action": "accept", "content": {"approved": false}}})),
    );
    assert_eq!(refusal(&late), (-32602, "STEP_NOT_WAITING".to_owned()), "{late}");
    assert_eq!(late["error"]["data"]["details"]["status"], "completed");
    let cancel = s.rpc("tasks/cancel", json!({"taskId": task}));
    assert_eq!(refusal(&cancel), (-32602, "INVALID_INPUT".to_owned()), "{cancel}");
    for id in ["run://approve/nope", "run://ghost/r1", "not a task", "run://approve/../x"] {
        let unknown = s.get(id);
        assert_eq!(refusal(&unknown), (-32602, "UNKNOWN_TASK".to_owned()), "{id}: {unknown}");
        assert_eq!(unknown["error"]["data"]["details"]["task_id"], id);
    }
    assert_eq!(
        version(&root, "approve", "r1"),
        root.ok(&["state", "get", "approve", "--run-id", "r1"])["version"]
    );
}

/// A client without the tasks extension gets the run id and how to follow
/// it at once, and `tasks/get` is refused naming the capability it lacks.
/// A project that does not allow think_exec neither lists nor runs it.
#[test]
fn without_the_extension_or_the_permission() {
    let root = project("tasks-plain", ALLOWED);
    let mut s = Stdio::start(&root, false);
    let call = json!({"name": "think_exec", "arguments": {"workflow": "approve", "params": {"mr": 8}, "run_id": "p1"}});
    let plain = s.rpc("tools/call", call);
    let out = &plain["result"]["structuredContent"];
    assert_eq!(plain["result"]["isError"], false, "{plain}");
    assert_eq!((&out["run_id"], &out["task_id"]), (&json!("p1"), &json!("run://approve/p1")), "{plain}");
    assert!(out["follow"].as_str().unwrap().contains("think_state_get"), "{out}");
    let refused = s.get("run://approve/p1");
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(), "{refused}");
    // The run goes on on the server all the same, to the person's question.
    for _ in 0..600 {
        if root.ok(&["state", "get", "approve", "--run-id", "p1"])["steps"][1]["status"] == "waiting" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(root.ok(&["state", "get", "approve", "--run-id", "p1"])["steps"][1]["status"], "waiting");
    let bad = s.rpc(
        "tools/call",
        json!({"name": "think_exec", "arguments": {"workflow": "approve", "params": {"mr": "x"}}}),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert_eq!(bad["result"]["structuredContent"]["error"], "INVALID_PARAMS", "{bad}");

    let closed = project("tasks-closed", "");
    let mut s = Stdio::start(&closed, true);
    let tools = s.rpc("tools/list", json!({}));
    assert!(
        !tools["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "think_exec"),
        "{tools}"
    );
    let refused = s.rpc("tools/call", json!({"name": "think_exec", "arguments": {"workflow": "slow"}}));
    assert_eq!(refusal(&refused), (-32602, "UNKNOWN_TOOL".to_owned()), "{refused}");
    assert!(refused["error"]["data"]["details"]["help"].as_str().unwrap().contains("[mcp]"), "{refused}");
    // No think_exec, no tasks: the extension is not declared, its methods unknown.
    assert_eq!(s.get("run://slow/x")["error"]["code"], -32601);
    assert!(root.ok(&["state", "list", "slow"])["runs"].as_array().is_none_or(Vec::is_empty));
}

/// Stateless HTTP with 2026-07-28 requests.
struct Http {
    addr: String,
    tasks: bool,
}

impl Http {
    fn body(&self, id: u64, method: &str, mut params: Value) -> String {
        let capabilities = if self.tasks { json!({"extensions": {TASKS: {}}}) } else { json!({}) };
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    }

    fn headers<'a>(method: &'a str, name: &'a str) -> Vec<(&'a str, &'a str)> {
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if !name.is_empty() {
            h.push(("Mcp-Name", name));
        }
        h
    }

    /// (HTTP status, the JSON-RPC reply).
    fn rpc(&self, method: &str, name: &str, params: Value) -> (u16, Value) {
        let reply = crate::inspect_http::request(
            &self.addr,
            "POST",
            "/mcp",
            &Http::headers(method, name),
            &self.body(1, method, params),
        );
        let json =
            reply.body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&reply.body).to_owned();
        (reply.status, serde_json::from_str(&json).unwrap_or_else(|_| panic!("{method}: {}", reply.body)))
    }

    fn get(&self, task: &str) -> Value {
        self.rpc("tasks/get", task, json!({"taskId": task})).1
    }

    fn exec(&self, workflow: &str, run: &str) -> Value {
        self.rpc(
            "tools/call",
            "think_exec",
            json!({"name": "think_exec", "arguments": {"workflow": workflow, "run_id": run}}),
        )
        .1
    }

    fn until(&self, task: &str, done: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..600 {
            let got = self.get(task)["result"].clone();
            if done(&got) {
                return got;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{task} never got there: {}", self.get(task));
    }
}

fn steps_done(task: &Value) -> usize {
    let message = task["statusMessage"].as_str().unwrap_or("");
    message.split(" of ").next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn serve_http(root: &Root) -> Server {
    let mut command = Server::command(&root.path);
    command.arg("--stateless").env("LOG_LEVEL", "warn").env("SAVANT_STATE_FSYNC", "0");
    Server::start(command, false)
}

/// Over stateless HTTP: `tasks/cancel` twice at once records one cancel,
/// the step in flight finishes, the task is cancelled, and think_exec with
/// the run id resumes the run to the end; a listen stream on the task gets
/// its statuses; a request without the extension is a 400 naming it; a
/// task of another project is unknown there.
#[test]
fn cancel_once_resume_and_listen_over_http() {
    let root = project("tasks-http", ALLOWED);
    let server = serve_http(&root);
    let http = Http { addr: server.addr.clone(), tasks: true };
    let created = http.exec("slow", "h1");
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = "run://slow/h1";
    http.until(task, |t| steps_done(t) >= 1);
    let both: Vec<Value> = std::thread::scope(|scope| {
        let cancel = || scope.spawn(|| http.rpc("tasks/cancel", task, json!({"taskId": task})).1);
        let (a, b) = (cancel(), cancel());
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    for reply in &both {
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    }
    let cancelled = http.until(task, |t| t["status"] == "cancelled");
    assert!(cancelled["statusMessage"].as_str().unwrap().contains("resumes"), "{cancelled}");
    let state = root.ok(&["state", "get", "slow", "--run-id", "h1"]);
    let is_mark = |e: &Value, mark: &str| e["thought"].as_str().is_some_and(|t| t.starts_with(mark));
    let marks = state["history"].as_array().unwrap().iter().filter(|e| is_mark(e, "mcp task: cancelled"));
    assert_eq!(marks.count(), 1, "two cancels at once record one: {state}");
    assert_eq!(state["status"], "running");

    // A listen stream on the task, then the run resumed to the end.
    let listen = listen_until_completed(
        &server.addr,
        &http.body(9, "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": [task]}})),
    );
    let resumed = http.exec("slow", "h1");
    assert_eq!(resumed["result"]["taskId"], task, "{resumed}");
    let completed = http.until(task, |t| t["status"] == "completed");
    assert_eq!(completed["result"]["structuredContent"]["status"], "done", "{completed}");
    // The step in flight at the cancel finished; no other step ran until
    // the run was resumed, and none ran twice.
    let state = root.ok(&["state", "get", "slow", "--run-id", "h1"]);
    let history = state["history"].as_array().unwrap();
    let cancel_at = history.iter().position(|e| is_mark(e, "mcp task: cancelled")).unwrap();
    let resumed_at =
        cancel_at + history[cancel_at..].iter().position(|e| is_mark(e, "mcp task: started")).unwrap();
    let results = |events: &[Value]| events.iter().filter(|e| e["type"] == "result").count();
    assert!(results(&history[cancel_at..resumed_at]) <= 1, "{state}");
    assert!(results(&history[..cancel_at]) >= 1, "{state}");
    assert_eq!(results(history), 4, "each step once: {state}");
    let seen = listen.join().unwrap();
    let statuses: Vec<&str> = seen.iter().filter_map(|n| n["params"]["status"].as_str()).collect();
    assert!(statuses.starts_with(&["cancelled"]) && statuses.last() == Some(&"completed"), "{seen:?}");
    assert!(
        seen.iter().all(|n| n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9),
        "{seen:?}"
    );
    assert!(seen.iter().all(|n| n["params"]["taskId"] == task), "{seen:?}");

    let plain = Http { addr: server.addr.clone(), tasks: false };
    let (status, refused) = plain.rpc("tasks/get", task, json!({"taskId": task}));
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32021)), "{refused}");
    assert!(refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(), "{refused}");

    let other = project("tasks-http-other", ALLOWED);
    let other_server = serve_http(&other);
    let elsewhere = Http { addr: other_server.addr.clone(), tasks: true };
    assert_eq!(refusal(&elsewhere.get(task)), (-32602, "UNKNOWN_TASK".to_owned()));
    let (_, refused) = elsewhere.rpc("tasks/cancel", task, json!({"taskId": task}));
    assert_eq!(refusal(&refused), (-32602, "UNKNOWN_TASK".to_owned()), "{refused}");
    assert!(
        !other.path.join(".savant/state/slow__h1.json").exists(),
        "nothing recorded in the other project"
    );
}

/// Opens a `subscriptions/listen` stream and collects its
/// `notifications/tasks` until one says `completed`.
fn listen_until_completed(addr: &str, body: &str) -> std::thread::JoinHandle<Vec<Value>> {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in Http::headers("subscriptions/listen", "") {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    // The acknowledgement, then the task as it is (cancelled): the stream
    // watches the task before the run resumes.
    let mut line = String::new();
    while !line.contains("notifications/tasks") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the listen stream ended before the task's status");
    }
    let first = serde_json::from_str::<Value>(line.trim().trim_start_matches("data: ")).unwrap();
    std::thread::spawn(move || {
        let mut seen = vec![first];
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if let Some(v) =
                line.trim().strip_prefix("data: ").and_then(|d| serde_json::from_str::<Value>(d).ok())
                && v["method"] == "notifications/tasks"
            {
                let completed = v["params"]["status"] == "completed";
                seen.push(v);
                if completed {
                    break;
                }
            }
            line.clear();
        }
        let _ = reader.get_mut().read(&mut [0; 1]);
        seen
    })
}

/// `kill -9` of the server whose driver runs a task: a new server on the
/// same state answers `tasks/get` (the steps done are kept), and
/// think_exec with the run id continues the run to the end.
#[test]
fn a_task_outlives_kill_9_of_its_server() {
    let root = project("tasks-kill", ALLOWED);
    let mut first = serve_http(&root);
    let http = Http { addr: first.addr.clone(), tasks: true };
    assert_eq!(http.exec("slow", "k1")["result"]["resultType"], "task");
    let task = "run://slow/k1";
    let before = http.until(task, |t| steps_done(t) >= 1);
    let pid = first.child.id();
    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let _ = first.child.wait();

    let second = serve_http(&root);
    let http = Http { addr: second.addr.clone(), tasks: true };
    let after = http.get(task)["result"].clone();
    assert_eq!(after["status"], "working", "{after}");
    assert!(steps_done(&after) >= steps_done(&before), "{before} then {after}");
    assert_eq!(after["createdAt"], before["createdAt"]);
    assert_eq!(http.exec("slow", "k1")["result"]["taskId"], task);
    let completed = http.until(task, |t| t["status"] == "completed");
    assert_eq!(completed["result"]["structuredContent"]["run_id"], "k1", "{completed}");
    let state = root.ok(&["state", "get", "slow", "--run-id", "k1"]);
    assert!(state["steps"].as_array().unwrap().iter().all(|s| s["status"] == "done"), "{state}");
}

/// Two replicas on one PostgreSQL database (skipped with a note when
/// PostgreSQL is not installed): a task started on A is read on B, cancelled
/// on B — A's driver stops between steps — and resumed on B to the end.
#[test]
fn replicas_on_postgres_share_a_task() {
    use savant_think::state::pg::cluster;
    let Some(cluster) = cluster::for_test("mcp_tasks::replicas_on_postgres_share_a_task") else { return };
    let url = cluster.fresh_schema("it_tasks").unwrap();
    let root = project("tasks-pg", ALLOWED);
    let replica = || {
        let mut command = Server::command(&root.path);
        command.arg("--stateless").env("LOG_LEVEL", "warn").env("SAVANT_STATE_URL", &url);
        Server::start(command, false)
    };
    let (a, b) = (replica(), replica());
    let (on_a, on_b) =
        (Http { addr: a.addr.clone(), tasks: true }, Http { addr: b.addr.clone(), tasks: true });
    let task = "run://slow/pg1";
    assert_eq!(on_a.exec("slow", "pg1")["result"]["taskId"], task);
    let seen = on_b.until(task, |t| steps_done(t) >= 1);
    assert_eq!(seen["status"], "working", "{seen}");
    let (_, ack) = on_b.rpc("tasks/cancel", task, json!({"taskId": task}));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(on_a.get(task)["result"]["status"], "cancelled");
    assert!(!root.path.join(".savant/state/slow__pg1.json").exists(), "the run lives in the database");
    assert_eq!(on_b.exec("slow", "pg1")["result"]["taskId"], task);
    let completed = on_a.until(task, |t| t["status"] == "completed");
    assert_eq!(completed["result"]["structuredContent"]["run_id"], "pg1", "{completed}");
    let state = on_b
        .rpc(
            "tools/call",
            "think_state_get",
            json!({"name": "think_state_get", "arguments": {"workflow": "slow", "run_id": "pg1"}}),
        )
        .1;
    let history = state["result"]["structuredContent"]["history"].as_array().unwrap().clone();
    let results = history.iter().filter(|e| e["type"] == "result").count();
    assert_eq!(results, 4, "each step once, across both replicas: {history:?}");
}
