//! Issue 47.7: `serve --read-token-file`: a second token that may read
//! (read-only tools, resources, `/metrics`, the inspector's pages) and is
//! refused (403) anything that changes a run; the operating token still
//! does everything, and any other token is 401.

use crate::common::Root;
use crate::support::Server;

const OPERATE: &str = "operate-token-0123456789";
const READ: &str = "read-token-0123456789";

fn post(addr: &str, token: &str, body: &str) -> (u16, String) {
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let reply = crate::inspect_http::request(addr, "POST", "/mcp", &headers, body);
    (reply.status, reply.body)
}

fn call(name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    )
}

fn get(addr: &str, token: &str, path: &str) -> u16 {
    let bearer = format!("Bearer {token}");
    crate::inspect_http::request(addr, "GET", path, &[("Authorization", bearer.as_str())], "").status
}

#[test]
fn a_read_token_reads_and_may_not_act() {
    let root = Root::new("read-token");
    root.write("workflows/hello.yaml", crate::observing::HELLO);
    let operate = root.write("operate.token", format!("{OPERATE}\n"));
    let read = root.write("read.token", format!("{READ}\n"));
    let mut command = Server::command(&root.path);
    command
        .args(["--stateless", "--token-file", operate.to_str().unwrap()])
        .args(["--read-token-file", read.to_str().unwrap()]);
    let server = Server::start(command, false);
    let a = server.addr.as_str();

    let (status, body) = post(a, OPERATE, &call("think_plan", r#"{"workflow":"hello","run_id":"r1"}"#));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("greet"), "{body}");

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"r","version":"1"}}}"#;
    let (status, body) = post(a, READ, init);
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(a, READ, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("think_next"), "{body}");
    let (status, body) = post(a, READ, &call("think_state_list", "{}"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\\\"r1\\\"") || body.contains("\"r1\""), "the run is listed: {body}");
    assert_eq!(get(a, READ, "/metrics"), 200);
    assert_eq!(get(a, READ, "/readyz"), 200);
    assert_eq!(get(a, READ, "/ui/api/runs"), 200);

    for (tool, args) in [
        ("think_next", r#"{"workflow":"hello","run_id":"r1","step_id":"greet","result":{}}"#),
        ("think_plan", r#"{"workflow":"hello","run_id":"r2"}"#),
        ("think_state_delete", r#"{"workflow":"hello","run_id":"r1"}"#),
    ] {
        let (status, body) = post(a, READ, &call(tool, args));
        assert_eq!(status, 403, "{tool}: {body}");
        assert!(body.contains("read-only token"), "{tool}: {body}");
    }
    let bearer = format!("Bearer {READ}");
    let action = crate::inspect_http::request(
        a,
        "POST",
        "/ui/api/runs/hello/r1/actions/reset",
        &[("Authorization", bearer.as_str()), ("Content-Type", "application/json")],
        "{}",
    );
    assert_eq!(action.status, 403, "an inspector action: {}", action.body);
    assert!(!root.path.join(".savant/state/hello__r2.json").exists(), "nothing was planned");
    let (status, body) = post(a, OPERATE, &call("think_state_get", r#"{"workflow":"hello","run_id":"r1"}"#));
    assert_eq!(status, 200);
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    let run = &reply["result"]["structuredContent"];
    assert_eq!(
        (run["version"].as_u64(), run["steps"][0]["status"].as_str()),
        (Some(0), Some("ready")),
        "{body}"
    );

    let (status, _) = post(a, "some-other-token", &call("think_state_list", "{}"));
    assert_eq!(status, 401);
}

/// A read-only token alone (no operating token), or the same as it, is refused at start.
#[test]
fn a_read_token_needs_a_distinct_operating_token() {
    let root = Root::new("read-token-alone");
    let read = root.write("read.token", "same-token\n");
    for extra in [&[][..], &["--token", "same-token"][..]] {
        let out = Server::command(&root.path)
            .args(["--read-token-file", read.to_str().unwrap()])
            .args(extra)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("read-only token"), "{err}");
    }
}
