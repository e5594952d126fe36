//! `savant-think serve --http` on 127.0.0.1 (a free port): rmcp's Streamable
//! HTTP client runs the same checks as over stdio, and raw HTTP requests
//! check the security layer (401, 403, 404, 413) and the refusal of a public
//! bind without a token.

use crate::common::{BIN, Root};
use crate::mcp_support::{check_catalog, errors_are_results, full_loop, populate};
use crate::support::Server;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

const TOKEN: &str = "test-token-0123456789";

fn start(root: &std::path::Path, extra: &[&str]) -> Server {
    start_with(root, extra, &[])
}

/// `serve --http 127.0.0.1:0` with extra arguments and environment; waits
/// for the address it prints.
pub(crate) fn start_with(root: &std::path::Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
    let mut command = Server::command(root);
    command
        .args(["--max-message-bytes", "65536"])
        .args(extra)
        .env("LOG_LEVEL", "warn")
        .envs(env.iter().copied());
    Server::start(command, false)
}

/// One raw HTTP/1.1 request; returns (status, the response's head (in
/// lower case) and body).
fn raw(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let reply = crate::inspect_http::request(addr, method, path, headers, body);
    (reply.status, format!("{}\r\n\r\n{}", reply.head, reply.body))
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

#[tokio::test(flavor = "multi_thread")]
async fn http_loop_with_a_token() {
    let scratch = Root::new("mcp-http");
    populate(&scratch.path);
    let server = start(&scratch.path, &["--token", TOKEN]);
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.addr))
        .auth_header(TOKEN);
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize");
    let work = async {
        check_catalog(&client).await;
        full_loop(&client, "http-1").await;
        errors_are_results(&client).await;
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

#[test]
fn http_security_checks() {
    let scratch = Root::new("mcp-http-sec");
    populate(&scratch.path);
    let server = start(&scratch.path, &["--token", TOKEN]);
    let a = server.addr.as_str();
    let bearer = format!("Bearer {TOKEN}");
    let json = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let with = |more: &[(&'static str, &'static str)]| -> Vec<(&str, &str)> {
        let mut h: Vec<(&str, &str)> = json.to_vec();
        h.extend_from_slice(more);
        h
    };

    // No token, a wrong token: 401.
    let (status, _) = raw(a, "POST", "/mcp", &json[..2], INIT);
    assert_eq!(status, 401);
    let (status, _) = raw(a, "POST", "/mcp", &[json[0], json[1], ("Authorization", "Bearer wrong")], INIT);
    assert_eq!(status, 401);
    // A foreign Origin or Host: 403.
    let (status, _) = raw(a, "POST", "/mcp", &with(&[("Origin", "http://evil.example")]), INIT);
    assert_eq!(status, 403);
    let (status, _) = raw(a, "POST", "/mcp", &with(&[("Host", "evil.example")]), INIT);
    assert_eq!(status, 403);
    // A loopback Origin is fine.
    let (status, body) = raw(a, "POST", "/mcp", &with(&[("Origin", "http://localhost:3000")]), INIT);
    assert_eq!(status, 200, "{body}");
    // An unknown session: 404.
    let (status, _) = raw(a, "POST", "/mcp", &with(&[("Mcp-Session-Id", "no-such-session")]), LIST);
    assert_eq!(status, 404);
    // A body over --max-message-bytes: 413.
    let big =
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(100_000));
    let (status, _) = raw(a, "POST", "/mcp", &json, &big);
    assert_eq!(status, 413);
    // Malformed JSON: a client error, not a crash.
    let (status, _) = raw(a, "POST", "/mcp", &json, "{not json");
    assert!((400..500).contains(&status), "{status}");
    // A batch (MCP has none since 2025-06-18): 400 with the JSON-RPC error, not rmcp's 415 text.
    let (status, body) = raw(a, "POST", "/mcp", &json, r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("-32600") && body.contains("batches are not supported"), "{body}");
    // Another path: 404.
    let (status, _) = raw(a, "GET", "/other", &json, "");
    assert_eq!(status, 404);
    // A client that hangs up mid-request.
    {
        let mut s = TcpStream::connect(a).unwrap();
        let _ =
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"");
    }
    // Still serving.
    let (status, body) = raw(a, "POST", "/mcp", &json, INIT);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_public_bind_without_a_token_is_refused() {
    let out = Command::new(BIN)
        .args(["serve", "--http", "0.0.0.0:0"])
        .env_remove("SAVANT_THINK_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("without a token") && stderr.contains("--insecure"), "{stderr}");
}

/// The holes a reliability run found: lenient Host/Origin parsing, absolute
/// targets, `/mcp/`, a huge declared body held open, DELETE's status, and
/// half-sent requests that starved real sessions.
#[test]
fn http_hostile_requests_are_refused_early() {
    let scratch = Root::new("mcp-http-hostile");
    populate(&scratch.path);
    let server = start(&scratch.path, &["--token", TOKEN]);
    let a = server.addr.as_str();
    let bearer = format!("Bearer {TOKEN}");
    let json = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let with = |more: &[(&'static str, &'static str)]| -> Vec<(&str, &str)> {
        let mut h = json.clone();
        h.extend_from_slice(more);
        h
    };
    for host in ["evil.com@127.0.0.1", "localhost:evil", "127.0.0.1:", "[::1].evil.com", "a b"] {
        let (status, body) = raw(a, "POST", "/mcp", &with(&[("Host", host)]), INIT);
        assert!(status == 400 || status == 403, "Host {host}: {status} {body}");
    }
    let (status, _) = raw(a, "POST", "/mcp", &with(&[("Host", "127.0.0.1"), ("Host", "127.0.0.1")]), INIT);
    assert_eq!(status, 400, "two Host headers");
    let absolute = format!("http://{a}/mcp");
    let (status, _) = raw(a, "POST", &absolute, &json, INIT);
    assert_eq!(status, 400, "absolute-form target");
    for origin in ["http://[::1].evil.com", "http://localhost:3000/path", "http://u@localhost"] {
        let (status, _) = raw(a, "POST", "/mcp", &with(&[("Origin", origin)]), INIT);
        assert_eq!(status, 403, "Origin {origin}");
    }
    let (status, _) = raw(a, "POST", "/mcp/", &json, INIT);
    assert_eq!(status, 404, "only /mcp exactly is served");

    // A declared 100 GB body is answered 413 at once, before any body byte.
    let mut s = TcpStream::connect(a).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nAuthorization: {bearer}\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).expect("an answer before the body");
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 413"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );

    // Many half-sent requests do not starve a real session.
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = TcpStream::connect(a).unwrap();
            let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            s
        })
        .collect();
    let (status, init) = raw(a, "POST", "/mcp", &json, INIT);
    assert_eq!(status, 200, "{init}");
    // A half-sent request is closed after the header timeout, not held forever.
    let mut slow = idle.into_iter().next().unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut rest = Vec::new();
    let closed = slow.read_to_end(&mut rest);
    assert!(closed.is_ok(), "the server closes a connection that never finishes its head: {closed:?}");

    // DELETE of a live session: 204; of an unknown one: 404.
    let session = init
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: ").or_else(|| l.strip_prefix("Mcp-Session-Id: ")))
        .expect("a session id")
        .trim()
        .to_owned();
    let mut del = json.clone();
    del.push(("Mcp-Session-Id", session.as_str()));
    let (status, body) = raw(a, "DELETE", "/mcp", &del, "");
    assert!(status == 200 || status == 204, "DELETE of a live session: {status} {body}");
    let (status, _) = raw(a, "DELETE", "/mcp", &with(&[("Mcp-Session-Id", "no-such-session")]), "");
    assert_eq!(status, 404);
}

/// `--stateless`: no session is created, and a request without one (to
/// this replica or any other) is answered; the file store works as before.
#[test]
fn stateless_http_needs_no_session() {
    let scratch = Root::new("mcp-http-stateless");
    populate(&scratch.path);
    let server = start(&scratch.path, &["--stateless"]);
    let a = server.addr.as_str();
    let json = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let (status, init) = raw(a, "POST", "/mcp", &json, INIT);
    assert_eq!(status, 200, "{init}");
    assert!(!init.to_ascii_lowercase().contains("mcp-session-id:"), "no session: {init}");
    let (status, body) = raw(a, "POST", "/mcp", &json, LIST);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("think_next"), "{body}");
    let plan = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"think_plan","arguments":{"workflow":"release_notes","params":{"milestone":"v1"},"run_id":"sl-1"}}}"#;
    let (status, body) = raw(a, "POST", "/mcp", &json, plan);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("list_changes"), "{body}");
    assert!(scratch.path.join(".savant/state/release_notes__sl-1.json").is_file());
}

/// By default a stateless server logs one line per tool call, not the MCP
/// library's session start and end around every request.
#[test]
fn stateless_http_logs_one_line_per_call_by_default() {
    let scratch = Root::new("mcp-http-quiet-log");
    populate(&scratch.path);
    let mut command = Server::command(&scratch.path);
    command.arg("--stateless").env_remove("LOG_LEVEL");
    let mut server = Server::start_logged(command);
    let json = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let plan = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"think_plan","arguments":{"workflow":"release_notes","params":{"milestone":"v1"},"run_id":"log-1"}}}"#;
    for _ in 0..2 {
        let (status, body) = raw(&server.addr, "POST", "/mcp", &json, plan);
        assert_eq!(status, 200, "{body}");
    }
    let _ = server.child.kill();
    let _ = server.child.wait();
    let log = server.log.take().unwrap();
    // The stderr reader lets go of the log when the pipe closes.
    while std::sync::Arc::strong_count(&log) > 1 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = log.lock().unwrap().join("\n");
    assert_eq!(text.matches("tool=\"think_plan\"").count(), 2, "{text}");
    assert!(!text.contains("rmcp::service"), "{text}");
}

/// `--token-file`: the token from a file's first line (kept out of `ps`);
/// an empty or missing file stops the start with a message.
#[test]
fn the_token_can_come_from_a_file() {
    let scratch = Root::new("mcp-http-token-file");
    populate(&scratch.path);
    let file = scratch.write("token", "from-a-file\n");
    let server = start(&scratch.path, &["--token-file", file.to_str().unwrap()]);
    let a = server.addr.as_str();
    let headers = |bearer: &'static str| {
        vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", bearer),
        ]
    };
    let (status, _) = raw(a, "POST", "/mcp", &headers("Bearer wrong"), INIT);
    assert_eq!(status, 401);
    let (status, body) = raw(a, "POST", "/mcp", &headers("Bearer from-a-file"), INIT);
    assert_eq!(status, 200, "{body}");
    let empty = scratch.write("empty", "\n");
    for (path, says) in [(empty.to_str().unwrap(), "is empty"), ("/nonexistent/token", "cannot read")] {
        let out = Command::new(BIN)
            .args(["serve", "--http", "127.0.0.1:0", "--token-file", path])
            .env_remove("SAVANT_THINK_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
