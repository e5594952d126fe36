//! The stdio transport's lines, read raw: a tool result whose reply was made
//! only as text (fsync off, a client that cannot be asked for a person's
//! answer) is written byte for byte as serde writes the whole result, its
//! `structuredContent` the reply itself (never a stand-in), equal to the
//! text copy.

use crate::common::{BIN, Root};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// Raw JSON-RPC lines in, one answer line out per request (in order: each
/// request is sent after the previous answer arrived), notifications
/// skipped.
struct Session {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Session {
    fn start(root: &std::path::Path) -> Session {
        let mut child = Command::new(BIN)
            .args(["serve", "--root"])
            .arg(root)
            .env("LOG_LEVEL", "error")
            .env("SAVANT_STATE_FSYNC", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut session = Session { child, stdin, lines };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
        session.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
        session.answer();
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next answer line, past notifications (`think_plan` announces a new run).
    fn answer(&mut self) -> String {
        loop {
            let line = self.lines.next().expect("an answer line").expect("a readable line");
            if !line.starts_with(r#"{"jsonrpc":"2.0","method":"notifications/"#) {
                return line;
            }
        }
    }

    /// Calls `tool`: the raw answer line, checked, and its structured reply.
    fn call(&mut self, id: u64, tool: &str, args: Value) -> (bool, Value) {
        let params = json!({"name": tool, "arguments": args});
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        let line = self.answer();
        let whole: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(whole["id"], id, "{line}");
        let serde_line = serde_json::to_string(&whole).unwrap();
        assert_eq!(line, serde_line, "{tool}: the line is not what serde writes for the whole result");
        let result = &whole["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text copy: {line}"));
        let copy: Value = serde_json::from_str(text).unwrap();
        assert!(result["structuredContent"].is_object(), "{tool}: structuredContent is the reply: {line}");
        assert_eq!(result["structuredContent"], copy, "{tool}: the text copy differs: {line}");
        assert!(!line.contains("savant-think: structuredContent"), "{tool}: a stand-in was written: {line}");
        (result["isError"] == true, result["structuredContent"].clone())
    }
}

#[test]
fn a_stdio_think_next_line_is_the_serde_line_of_the_whole_result() {
    let scratch = Root::new("mcp-stdio-wire");
    std::fs::create_dir_all(scratch.path.join("workflows")).unwrap();
    let wf = "id: two\nsteps:\n  - id: a\n    call: think\n    input_template:\n      thought: \"line\\nnext \\\"quoted\\\" \\\\ é\"\n  - id: b\n    call: think\n    deps: [a]\n";
    std::fs::write(scratch.path.join("workflows/two.yaml"), wf).unwrap();
    let mut session = Session::start(&scratch.path);
    let (err, plan) = session.call(1, "think_plan", json!({"workflow": "two"}));
    assert!(!err, "{plan}");
    assert_eq!(plan["instruction"]["step_id"], "a", "{plan}");
    assert_eq!(plan["instruction"]["input"]["thought"], "line\nnext \"quoted\" \\ é", "{plan}");
    let run_id = plan["run_id"].as_str().expect("think_plan made a run").to_owned();
    let next = |step: &str, result: Value| json!({"workflow": "two", "run_id": run_id, "step_id": step, "result": result});
    let (err, progress) = session.call(2, "think_next", next("a", json!({"x": [1, 2.5, "\u{1}"]})));
    assert!(!err, "{progress}");
    assert_eq!((progress["run_id"].as_str(), progress["workflow"].as_str()), (Some(&*run_id), Some("two")));
    assert_eq!(progress["instruction"]["step_id"], "b", "{progress}");
    let (err, wrong) = session.call(3, "think_next", next("a", json!({"x": 1})));
    assert!(err, "{wrong}");
    assert_eq!(wrong["error"], "STATE_CONFLICT", "{wrong}");
    let (err, done) = session.call(4, "think_next", next("b", json!({"y": "z"})));
    assert!(!err, "{done}");
    assert_eq!(done["done"], true, "{done}");
    let (err, list) = session.call(5, "think_state_list", json!({}));
    assert!(!err, "{list}");
    assert_eq!(list["runs"][0]["run_id"], run_id.as_str(), "{list}");
    drop(session.stdin);
    assert!(session.child.wait().unwrap().success(), "serve ends cleanly when stdin closes");
}
