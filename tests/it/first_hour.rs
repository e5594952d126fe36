//! The rough edges a new user met in the first hour (issue 30), each pinned
//! through the adapter where it was met.

use crate::common::{BIN, Root, assert_exit, run};
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use std::time::Duration;

const HELLO: &str = "id: hello\nparams:\n  name: { type: string }\nsteps:\n  - id: greet\n    call: prompt.say\n    input_template: { text: \"hi <<params.name>>\" }\n";

/// A JSON-encoded string as params: refused, and the help is the exact fix.
#[test]
fn params_as_a_json_string_get_the_exact_fix() {
    let root = Root::with_workflows("params-string", &[("hello", HELLO)]);
    let input = json!({"workflow": "hello", "params": "{\"name\": \"Ada\"}"}).to_string();
    let r = run(&root.path, &["call", "think_plan", "--input", &input]);
    assert_exit(&r, 1);
    let e = r.json();
    assert_eq!(e["error"], "INVALID_PARAMS", "{e}");
    let help = e["details"][0]["help"].as_str().unwrap();
    assert!(help.contains(r#""params": {"name":"Ada"}"#), "{help}");
}

/// Arguments a tool does not take are refused by name, with a did-you-mean,
/// instead of running with the defaults.
#[test]
fn unknown_tool_arguments_are_refused_by_name() {
    let root = Root::with_workflows("unknown-args", &[("hello", HELLO)]);
    let input = json!({"workflow": "hello", "params": {"name": "Ada"}, "runId": "r1"}).to_string();
    let r = run(&root.path, &["call", "think_plan", "--input", &input]);
    assert_exit(&r, 1);
    let e = r.json();
    assert_eq!(e["error"], "INVALID_PARAMS", "{e}");
    assert!(e["details"]["message"].as_str().unwrap().contains("did you mean `run_id`?"), "{e}");
    assert!(
        !root.path.join(".savant/state").exists()
            || std::fs::read_dir(root.path.join(".savant/state")).unwrap().count() == 0,
        "no run was started"
    );
    // The documented alias still works.
    let input = json!({"workflow": "hello", "params": {"name": "Ada"}, "run_id": "r1", "start_fresh": true})
        .to_string();
    assert_exit(&run(&root.path, &["call", "think_plan", "--input", &input]), 0);
}

/// Over MCP: the tool schemas are standard JSON Schema (no schemars
/// `format`s such as `uint64`), and an unknown argument is an error result.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_tool_schemas_are_standard_and_unknown_arguments_fail() {
    let root = Root::with_workflows("mcp-std", &[("hello", HELLO)]);
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(&root.path).env("LOG_LEVEL", "warn");
    }))
    .unwrap();
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await.unwrap().unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let text = serde_json::to_string(&tools).unwrap();
    for bad in ["\"uint", "\"int64\"", "\"double\"", "\"float\"", "\"int32\""] {
        assert!(!text.contains(&format!("\"format\":{bad}")), "non-standard format {bad} in tools/list");
    }
    let (is_error, out) = crate::mcp_support::call(
        &client,
        "think_plan",
        json!({"workflow": "hello", "runId": "x", "params": {"name": "A"}}),
    )
    .await;
    assert!(is_error, "{out}");
    assert_eq!(out["error"], "INVALID_PARAMS", "{out}");
    assert!(out.to_string().contains("run_id"), "{out}");
    let _: Value = out;
    client.cancel().await.unwrap();
}
