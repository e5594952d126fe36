//! Waits answered from the other surfaces (issue 43, "Every surface
//! answers"): the inspector shows a waiting step's question and deadline,
//! lists and filters waiting runs, and answers through its action rule
//! (token, CSRF, own Origin) with the field's message on a wrong answer.

use crate::inspect_http::{get, request, serve};
use crate::waits::root;
use serde_json::json;

#[test]
fn the_inspector_shows_a_waiting_step_and_answers_it_through_its_action_rule() {
    let root = root("ui-waits");
    root.ok(&["plan", "approve", "--run-id", "r1", "--params", r#"{"mr": 7}"#]);
    root.ok(&["next", "approve", "--run-id", "r1", "--step", "summary", "--result", r#"{"thought": "ok"}"#]);
    root.ok(&["plan", "approve", "--run-id", "r2", "--params", r#"{"mr": 8}"#]);
    let server = serve(&root, &["--token", "s3cret"]);
    let addr = server.addr.as_str();
    let bearer = ("Authorization", "Bearer s3cret");

    // The runs list: r1 waits (with its question), r2 runs; the filter keeps r1.
    let runs = get(addr, "/ui/api/runs", &[bearer]).json();
    assert_eq!(runs["statuses"], json!({"running": 1, "waiting": 1}), "{runs}");
    let waiting = get(addr, "/ui/api/runs?status=waiting", &[bearer]).json();
    assert_eq!(waiting["total"], 1, "{waiting}");
    let row = &waiting["runs"][0];
    assert_eq!((&row["run_id"], &row["status"]), (&json!("r1"), &json!("waiting")));
    assert_eq!(row["waiting"][0]["ask"], "Merge MR 7?");
    // The page offers `waiting` as a filter choice even when no run waits.
    let js = get(addr, "/ui/assets/app.js", &[bearer]).body;
    assert!(js.contains("const RUN_STATUSES = ['running', 'waiting', 'done', 'failed'];"));

    // The run and the step: the question, its schema and its deadline.
    let view = get(addr, "/ui/api/runs/approve/r1", &[bearer]).json();
    let node = view["graph"]["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "approve").unwrap();
    assert_eq!(node["status"], "waiting");
    assert_eq!(view["waiting"][0]["step_id"], "approve", "{view}");
    let deadline = view["waiting"][0]["deadline"].as_str().unwrap().to_owned();
    assert!(deadline.ends_with('Z'), "{deadline}");
    let panel = get(addr, "/ui/api/runs/approve/r1/steps/approve", &[bearer]).json();
    assert_eq!(panel["status"], "waiting");
    let wait = &panel["waiting"][0];
    assert_eq!((&wait["wait"], &wait["ask"]), (&json!("answer"), &json!("Merge MR 7?")));
    assert_eq!(wait["schema"]["properties"]["approved"], json!({"type": "boolean"}));
    assert_eq!(wait["deadline"], deadline.as_str());
    let other = get(addr, "/ui/api/runs/approve/r1/steps/merge", &[bearer]).json();
    assert_eq!(other.get("waiting"), None, "a step that does not wait has no wait: {other}");

    // A cookie without the CSRF token is refused, as for any action.
    let json_type = ("Content-Type", "application/json");
    let path = "/ui/api/runs/approve/r1/actions/answer";
    let cookie = format!("savant_ui_{}=s3cret", addr.rsplit(':').next().unwrap());
    let own = format!("http://{addr}");
    let right = r#"{"step_id": "approve", "value": {"approved": true, "note": "lgtm"}}"#;
    let r = request(addr, "POST", path, &[("Cookie", &cookie), json_type, ("Origin", &own)], right);
    assert_eq!((r.status, r.json()["error"].as_str()), (403, Some("CSRF")), "{}", r.body);

    // A wrong answer: VALIDATION_FAILED naming the field, nothing recorded.
    let before = root.ok(&["state", "get", "approve", "--run-id", "r1"]);
    let wrong = r#"{"step_id": "approve", "value": {"approved": "yes"}}"#;
    let r = request(addr, "POST", path, &[bearer, json_type], wrong);
    assert_eq!(r.status, 422, "{}", r.body);
    let e = r.json();
    assert_eq!(e["error"], "VALIDATION_FAILED", "{e}");
    assert_eq!(e["details"][0]["path"], "/approved");
    assert!(e["details"][0]["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
    assert_eq!(root.ok(&["state", "get", "approve", "--run-id", "r1"])["version"], before["version"]);
    // An answer for a step that does not wait names the one that does.
    let r = request(addr, "POST", path, &[bearer, json_type], r#"{"step_id": "merge", "value": {}}"#);
    assert_eq!((r.status, r.json()["error"].as_str()), (422, Some("STEP_NOT_WAITING")), "{}", r.body);

    // The right answer, with the page's CSRF token: the run goes on.
    let session = get(addr, "/ui/api/session", &[("Cookie", &cookie)]).json();
    let csrf = session["csrf"].as_str().unwrap().to_owned();
    let headers = [("Cookie", cookie.as_str()), json_type, ("X-Savant-Csrf", &csrf), ("Origin", &own)];
    let r = request(addr, "POST", path, &headers, right);
    assert_eq!(r.status, 200, "{}", r.body);
    let result = &r.json()["result"];
    assert_eq!(result["instruction"]["step_id"], "merge", "{result}");
    assert_eq!(result["instruction"]["input"]["thought"], "merging 7: lgtm");
    let state = root.ok(&["state", "get", "approve", "--run-id", "r1"]);
    assert_eq!(state["steps"][1]["status"], "done", "{state}");
    let runs = get(addr, "/ui/api/runs?status=waiting", &[bearer]).json();
    assert_eq!(runs["total"], 0, "no run waits any more: {runs}");
}

#[test]
fn the_inspector_shows_when_a_timer_fires() {
    let root = root("ui-timer");
    root.write(
        "workflows/nap.yaml",
        "id: nap\nsteps:\n  - id: first\n    call: think\n    input_template: {thought: go}\n  - id: nap\n    sleep: 2h\n    deps: [first]\n",
    );
    root.ok(&["plan", "nap", "--run-id", "n1"]);
    root.ok(&["next", "nap", "--run-id", "n1", "--step", "first", "--result", "{}"]);
    let server = serve(&root, &[]);
    let panel = get(&server.addr, "/ui/api/runs/nap/n1/steps/nap", &[]).json();
    let wait = &panel["waiting"][0];
    assert_eq!(wait["wait"], "timer", "{panel}");
    let deadline = wait["deadline"].as_str().unwrap();
    let view = get(&server.addr, "/ui/api/runs/nap/n1", &[]).json();
    assert_eq!(view["waiting"][0]["deadline"], deadline);
    // The terminal's runs table says what the run waits for, and until when.
    let table = root.command(&["state", "list", "--format", "human"]).output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(table.contains("⏸ nap timer until"), "{table}");
    let summary =
        root.command(&["state", "get", "nap", "--run-id", "n1", "--format", "human"]).output().unwrap();
    let summary = String::from_utf8_lossy(&summary.stdout).into_owned();
    assert!(summary.contains(&format!("waiting: ⏸ nap timer until {deadline}")), "{summary}");
}

/// `POST /events/{name}` on `serve --http`: the guard of `/mcp` (token, body
/// cap), JSON in and out, each refusal with its status and nothing recorded.
#[test]
fn a_webhook_delivers_an_event_over_http_behind_the_mcp_guard() {
    let root = root("webhook");
    root.ok(&["plan", "pipeline", "--run-id", "a", "--params", r#"{"id": "p1"}"#]);
    root.ok(&["next", "pipeline", "--run-id", "a", "--step", "start", "--result", "{}"]);
    let server = crate::mcp_http::start_with(&root.path, &["--token", "hook-token"], &[]);
    let addr = server.addr.as_str();
    let bearer = ("Authorization", "Bearer hook-token");
    let json_type = ("Content-Type", "application/json");
    let path = "/events/pipeline.finished?key=p1&id=build-1";
    let green = r#"{"status": "green"}"#;
    let version = || root.ok(&["state", "get", "pipeline", "--run-id", "a"])["version"].clone();
    let before = version();

    // Without the token, not JSON, too big, from a web page: refused.
    assert_eq!(request(addr, "POST", path, &[json_type], green).status, 401);
    let r = request(addr, "POST", path, &[bearer, ("Content-Type", "text/plain")], green);
    assert_eq!((r.status, r.json()["error"].as_str()), (415, Some("INVALID_INPUT")), "{}", r.body);
    let big = format!(r#"{{"status": "{}"}}"#, "x".repeat(70_000));
    assert_eq!(request(addr, "POST", path, &[bearer, json_type], &big).status, 413);
    let r = request(addr, "POST", path, &[bearer, json_type, ("Origin", "https://evil.example")], green);
    assert_eq!(r.status, 403, "{}", r.body);
    let r = request(addr, "POST", path, &[bearer, json_type], "{not json");
    assert_eq!((r.status, r.json()["error"].as_str()), (400, Some("INVALID_INPUT")), "{}", r.body);

    // The engine's refusals, each with its status and code.
    let r = request(addr, "POST", "/events/pipeline.finishd?key=p1", &[bearer, json_type], green);
    assert_eq!((r.status, r.json()["error"].as_str()), (404, Some("UNKNOWN_EVENT")), "{}", r.body);
    assert!(r.json()["message"].as_str().is_some_and(|m| m.contains("pipeline.finishd")), "{}", r.body);
    let r = request(addr, "POST", "/events/pipeline.finished?key=p9", &[bearer, json_type], green);
    assert_eq!((r.status, r.json()["error"].as_str()), (409, Some("NO_WAITING_RUN")), "{}", r.body);
    let r = request(addr, "POST", path, &[bearer, json_type], r#"{"state": "red"}"#);
    assert_eq!((r.status, r.json()["error"].as_str()), (422, Some("VALIDATION_FAILED")), "{}", r.body);
    assert_eq!(version(), before, "nothing recorded by a refusal");

    // Delivered: the run goes on; the sender's retry (same id) is a duplicate.
    let r = request(addr, "POST", path, &[bearer, json_type], green);
    assert_eq!(r.status, 200, "{}", r.body);
    let got = r.json();
    assert_eq!(got["delivered"], json!([{"workflow": "pipeline", "run_id": "a", "step_id": "finished"}]));
    let state = root.ok(&["state", "get", "pipeline", "--run-id", "a"]);
    assert_eq!(state["steps"][1]["status"], "done", "{state}");
    assert_eq!(state["steps"][2]["status"], "ready", "{state}");
    let r = request(addr, "POST", path, &[bearer, json_type], green);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["delivered"][0]["duplicate"], true, "{}", r.body);
    assert_eq!(root.ok(&["state", "get", "pipeline", "--run-id", "a"])["version"], state["version"]);
}

/// A client that declared `elicitation`: `think_next` reaching an `await:`
/// is asked as `elicitation/create` (the wait's question and schema); the
/// accepted answer is recorded and the call returns the next instruction;
/// a declined one leaves the step waiting. Raw JSON-RPC over stdio.
#[test]
fn a_client_with_elicitation_is_asked_the_question_itself() {
    use std::io::{BufRead, BufReader, Write};
    let root = root("elicit");
    let mut child = std::process::Command::new(crate::common::BIN)
        .args(["serve", "--root"])
        .arg(&root.path)
        .env("LOG_LEVEL", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: serde_json::Value| writeln!(stdin, "{v}").unwrap();
    // The next request or response (notifications are skipped).
    let mut receive = || loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if !v["method"].as_str().is_some_and(|m| m.starts_with("notifications/")) {
            return v;
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "test", "version": "1"}}}));
    assert_eq!(receive()["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64, name: &str, args: serde_json::Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
    for (n, run, action) in [(10, "r1", "accept"), (20, "r2", "decline")] {
        send(call(n, "think_plan", json!({"workflow": "approve", "run_id": run, "params": {"mr": 7}})));
        let planned = receive();
        assert_eq!(planned["result"]["structuredContent"]["instruction"]["step_id"], "summary", "{planned}");
        let next =
            json!({"workflow": "approve", "run_id": run, "step_id": "summary", "result": {"thought": "ok"}});
        send(call(n + 1, "think_next", next));
        // The server asks the person before it answers the call.
        let ask = receive();
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        assert_eq!(ask["params"]["message"], "Merge MR 7?");
        assert_eq!(ask["params"]["requestedSchema"]["required"], json!(["approved"]), "{ask}");
        assert_eq!(ask["params"]["requestedSchema"]["properties"]["approved"]["type"], "boolean");
        let content = json!({"approved": true, "note": "lgtm"});
        let reply = if action == "accept" {
            json!({"action": "accept", "content": content})
        } else {
            json!({"action": "decline"})
        };
        send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": reply}));
        let answer = receive();
        assert_eq!(answer["id"], n + 1, "{answer}");
        let progress = &answer["result"]["structuredContent"];
        let state = root.ok(&["state", "get", "approve", "--run-id", run]);
        if action == "accept" {
            assert_eq!(progress["instruction"]["step_id"], "merge", "{progress}");
            assert_eq!(progress["instruction"]["input"]["thought"], "merging 7: lgtm");
            assert_eq!(state["steps"][1]["status"], "done", "{state}");
        } else {
            assert_eq!(progress["instruction"], serde_json::Value::Null, "{progress}");
            assert_eq!(progress["waiting"][0]["step_id"], "approve");
            assert_eq!(state["steps"][1]["status"], "waiting", "declined: still waiting: {state}");
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
