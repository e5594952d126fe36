//! Streamable HTTP under a hostile client (issue 24.4, 24.9): protocol
//! errors answered as JSON-RPC error objects with the right 4xx status,
//! sessions capped (503 + Retry-After past `--max-sessions`).

use crate::common::Root;
use crate::support::Server;
use serde_json::Value;
use std::time::Duration;

fn start(root: &std::path::Path, extra: &[&str]) -> Server {
    let mut command = Server::command(root);
    command.args(["--max-message-bytes", "65536"]).args(extra).env("LOG_LEVEL", "error");
    Server::start(command, false)
}

pub(crate) use crate::support::serve::post;

fn error_code(body: &str) -> i64 {
    let v: Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    v["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error code: {v}"))
}

pub(crate) const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[test]
fn malformed_requests_get_json_rpc_errors() {
    let root = Root::new("http-protocol");
    let server = start(&root.path, &[]);
    let (status, _, body) = post(&server.addr, "application/json", "{not json", &[]);
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_code(&body), -32700);
    let (status, _, body) = post(&server.addr, "application/json", r#"{"hello": "world"}"#, &[]);
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_code(&body), -32600);
    let (status, _, body) = post(&server.addr, "text/plain", INIT, &[]);
    assert_eq!(status, 415, "{body}");
    assert_eq!(error_code(&body), -32600);
    // A well-formed initialize still works.
    let (status, _, body) = post(&server.addr, "application/json", INIT, &[]);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn sessions_past_the_cap_are_503_with_retry_after() {
    let root = Root::new("http-sessions");
    let server = start(&root.path, &["--max-sessions", "2"]);
    for _ in 0..2 {
        let (status, head, _) = post(&server.addr, "application/json", INIT, &[]);
        assert_eq!(status, 200);
        assert!(head.to_lowercase().contains("mcp-session-id"), "{head}");
    }
    let (status, head, body) = post(&server.addr, "application/json", INIT, &[]);
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(head.to_lowercase().contains("retry-after"), "{head}");
    assert_eq!(error_code(&body), -32000);
    assert!(body.contains("--max-sessions"), "{body}");
}

#[test]
fn idle_sessions_expire_and_free_their_place() {
    let root = Root::new("http-idle");
    let server = start(&root.path, &["--max-sessions", "1", "--session-idle", "1s"]);
    let (status, _, _) = post(&server.addr, "application/json", INIT, &[]);
    assert_eq!(status, 200);
    assert_eq!(post(&server.addr, "application/json", INIT, &[]).0, 503);
    // After the idle time the session is gone and a new one fits.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        if post(&server.addr, "application/json", INIT, &[]).0 == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the idle session was never closed");
    }
}

/// SIGTERM while a call waits for its run's lock: the server stops
/// accepting, the call finishes and its client gets the real answer, and
/// the server exits 0 (issue 24.8).
#[test]
fn sigterm_lets_an_in_flight_call_finish_then_exits_0() {
    const HELLO: &str = "id: hello\nsteps:\n  - id: greet\n    call: prompt.say\n    input_template: { text: hi }\n  - id: after\n    call: think\n    deps: [greet]\n    input_template: { thought: done }\n";
    let root = Root::with_workflows("http-shutdown", &[("hello", HELLO)]);
    let r = crate::common::run(&root.path, &["plan", "hello", "--run-id", "r1"]);
    crate::common::assert_exit(&r, 0);
    let lock = root.path.join(".savant/state/hello__r1.lock");
    assert!(lock.exists(), "the run's lock file");
    let mut server = start(&root.path, &["--stateless", "--shutdown-grace", "20s"]);
    // Another process holds the run's lock for two seconds.
    let mut holder = std::process::Command::new("flock").arg(&lock).args(["sleep", "2"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let addr = server.addr.clone();
    let call = std::thread::spawn(move || {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"think_next","arguments":{"workflow":"hello","run_id":"r1","step_id":"greet","result_snapshot":{"said":true}}}}"#;
        post(&addr, "application/json", body, &[])
    });
    std::thread::sleep(Duration::from_millis(400));
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let (status, _, body) = call.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"after\""), "the client got the next instruction: {body}");
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "exit 0 after a graceful shutdown: {exit:?}");
    let _ = holder.wait();
    // What was acknowledged is in the run.
    let r = crate::common::run(&root.path, &["state", "get", "hello", "--run-id", "r1"]);
    assert!(r.stdout.contains("\"said\""), "{r:?}");
}
