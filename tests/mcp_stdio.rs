//! `savant-think serve` over stdio, driven by rmcp's client against the real
//! binary in a scratch root: catalog, a full plan → next loop, errors as
//! results, and a server that survives malformed input.

mod common;
mod mcp_support;

use common::{BIN, Scratch};
use mcp_support::{Client, check_catalog, errors_are_results, full_loop, populate};
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

async fn connect(root: &std::path::Path) -> Client {
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(root).env("LOG_LEVEL", "warn");
    }))
    .expect("spawn savant-think serve");
    tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_catalog_loop_and_errors() {
    let scratch = Scratch::new("mcp-stdio");
    populate(&scratch.path);
    let client = connect(&scratch.path).await;
    let work = async {
        check_catalog(&client).await;
        full_loop(&client, "stdio-1").await;
        errors_are_results(&client).await;
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC lines: garbage, an unknown method, a wrong-typed argument, an
/// oversized line. The server answers what it can, ignores what it cannot
/// parse, and keeps serving; closing stdin ends it cleanly.
#[test]
fn stdio_survives_malformed_messages() {
    let scratch = Scratch::new("mcp-stdio-raw");
    populate(&scratch.path);
    let mut child = Command::new(BIN)
        .args(["serve", "--max-message-bytes", "65536", "--root"])
        .arg(&scratch.path)
        .env("LOG_LEVEL", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let big =
        format!(r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(100_000));
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        "{not json".to_owned(),
        big,
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"think_plan","arguments":{"workflow":["x"]}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#.to_owned(),
    ];
    let writer = std::thread::spawn(move || {
        for l in lines {
            let _ = writeln!(stdin, "{l}");
        }
        // Keep stdin open until the answers are read, then close it.
        std::thread::sleep(Duration::from_millis(1500));
        drop(stdin);
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 5 {
        let line = rx.recv_timeout(Duration::from_secs(20)).expect("an answer for every request");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_u64() {
            answers.insert(id, v);
        }
    }
    assert!(answers[&1]["result"]["serverInfo"]["name"] == "savant-think");
    assert_eq!(answers[&2]["error"]["code"], -32601);
    assert_eq!(answers[&3]["result"]["isError"], true);
    assert_eq!(answers[&3]["result"]["structuredContent"]["error"], "INVALID_INPUT");
    assert_eq!(answers[&4]["result"]["structuredContent"]["error"], "UNKNOWN_TOOL");
    assert!(answers[&5].get("result").is_some());
    assert!(!answers.contains_key(&9), "the oversized message must be dropped");
    writer.join().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "serve exited with {status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "serve did not exit when stdin closed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The official Python SDK (`pip install mcp`) drives a full loop through
/// `tests/python/test_stdio.py`. The interpreter is `$MCP_PYTHON`, else
/// `python3`; without the `mcp` package the test is skipped with a note —
/// unless `MCP_PYTHON` is set (as `.ci/run` does), when a missing SDK fails.
#[test]
fn python_sdk_drives_a_full_loop() {
    let required = std::env::var_os("MCP_PYTHON").is_some();
    let python = std::env::var("MCP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let has_sdk = Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_sdk {
        assert!(!required, "MCP_PYTHON={python} is set but `{python} -c \"import mcp\"` fails");
        eprintln!(
            "note: skipping the Python MCP SDK test: `{python} -c \"import mcp\"` failed (set MCP_PYTHON to a venv with `pip install mcp`)"
        );
        return;
    }
    let scratch = Scratch::new("mcp-python");
    populate(&scratch.path);
    let script = std::path::Path::new(common::CRATE).join("tests/python/test_stdio.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(BIN)
        .arg(&scratch.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the Python SDK test hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("python mcp sdk: ok"), "{stdout}");
}
