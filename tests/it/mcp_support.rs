//! Shared by `mcp_stdio.rs` and `mcp_http.rs`: a scratch project root and the
//! checks an MCP client runs against `savant-think serve` (rmcp's client,
//! whatever the transport).
#![allow(dead_code)]

use crate::support::{CRATE, copy_dir};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::RunningService;
use serde_json::{Value, json};
use std::path::Path;

pub type Client = RunningService<RoleClient, ()>;

/// The tools the server must list.
pub const TOOLS: &[&str] = &[
    "think_plan",
    "think_next",
    "think_answer",
    "think_signal",
    "think_explain",
    "think_reset",
    "think_driver_prompt",
    "think_workflows_list",
    "think_workflows_read",
    "think_workflows_graph",
    "think_state_get",
    "think_state_list",
    "think_state_restore",
    "think_fork",
    "think_upgrade",
    "think_validate",
    "think_debug",
    "think",
    "prompt_say",
    "think_test",
];

/// `savant-think serve` over stdio for `root`, initialized, with
/// `SAVANT_STATE_FSYNC` set to `fsync` (with `0`, engine calls run on the
/// request's task instead of handing the worker over first).
pub async fn connect_stdio(root: &Path, fsync: &str) -> Client {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let transport = TokioChildProcess::new(tokio::process::Command::new(crate::common::BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(root).env("LOG_LEVEL", "warn").env("SAVANT_STATE_FSYNC", fsync);
    }))
    .expect("spawn savant-think serve");
    tokio::time::timeout(std::time::Duration::from_secs(20), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

/// Fills `root` with copies of the crate's workflows, schemas and prompts.
pub fn populate(root: &Path) {
    let crate_dir = Path::new(CRATE);
    for d in ["workflows", "schemas", "prompts"] {
        copy_dir(&crate_dir.join(d), &root.join(d));
    }
}

/// Calls a tool: `(isError, structuredContent)`; checks the text copy.
pub async fn call(client: &Client, name: &str, args: Value) -> (bool, Value) {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let structured = r.structured_content.clone().unwrap_or_else(|| panic!("{name}: no structuredContent"));
    let text = r.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).expect("a text copy");
    let copy: Value = serde_json::from_str(&text).expect("the text copy is JSON");
    assert_eq!(copy, structured, "{name}: the text copy differs from structuredContent");
    (r.is_error == Some(true), structured)
}

/// tools/list, prompts/list and prompts/get, and the initialize result.
pub async fn check_catalog(client: &Client) {
    let info = client.peer_info().expect("initialized");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("savant-think"));
    assert_eq!(info.server_info.as_ref().map(|s| s.version.as_str()), Some(env!("CARGO_PKG_VERSION")));
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("think_driver_prompt") && instructions.contains("think_workflows_list"));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for want in TOOLS {
        assert!(names.contains(want), "{want} is not listed: {names:?}");
    }
    for t in &tools {
        assert!(!t.name.contains('.'), "{} has a dot", t.name);
        assert!(t.description.as_deref().is_some_and(|d| d.len() > 40), "{} needs a description", t.name);
        assert!(t.output_schema.is_some(), "{} has no outputSchema", t.name);
        let a = t.annotations.as_ref().unwrap_or_else(|| panic!("{} has no annotations", t.name));
        assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some() && a.idempotent_hint.is_some());
        let props = t.input_schema.get("properties").and_then(Value::as_object).unwrap();
        for (field, schema) in props {
            assert!(schema.get("description").is_some(), "{}.{field} has no description", t.name);
        }
    }
    let plan = tools.iter().find(|t| t.name == "think_plan").unwrap();
    assert!(plan.description.as_deref().unwrap().contains("think_next"));
    let list = tools.iter().find(|t| t.name == "think_workflows_list").unwrap();
    assert_eq!(list.annotations.as_ref().unwrap().read_only_hint, Some(true));

    let prompts = client.list_all_prompts().await.unwrap();
    let pnames: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(pnames.contains(&"stable") && pnames.contains(&"code_review"), "{pnames:?}");
    let got = client.get_prompt(GetPromptRequestParams::new("stable")).await.unwrap();
    let expected =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/driver_stable.md"))
            .unwrap();
    let text =
        serde_json::to_value(&got.messages[0]).unwrap()["content"]["text"].as_str().unwrap().to_owned();
    assert_eq!(text, expected);
    assert!(client.get_prompt(GetPromptRequestParams::new("no_such_prompt")).await.is_err());
}

/// A full plan → next loop over release_notes, with one validation failure,
/// the think and prompt_say tools along the way, then the run's resources.
pub async fn full_loop(client: &Client, run_id: &str) {
    let (err, listed) = call(client, "think_workflows_list", json!({})).await;
    assert!(!err);
    assert!(listed["workflows"].as_array().unwrap().iter().any(|w| w["id"] == "release_notes"));

    let (err, mut out) = call(
        client,
        "think_plan",
        json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": run_id}),
    )
    .await;
    assert!(!err, "{out}");
    assert_eq!(out["instruction"]["step_id"], "list_changes");

    // A result that does not match MergeRequestListV1: an isError result, the instruction repeated.
    let (err, bad) = call(
        client,
        "think_next",
        json!({"workflow": "release_notes", "run_id": run_id, "step_id": "list_changes", "result_snapshot": {"items": "nope"}}),
    )
    .await;
    assert!(err);
    assert_eq!(bad["error"], "VALIDATION_FAILED", "{bad}");
    assert_eq!(bad["instruction"]["step_id"], "list_changes");

    let mut steps = 0;
    while out["done"] != true {
        steps += 1;
        assert!(steps < 20, "the loop does not end: {out}");
        let i = out["instruction"].clone();
        let step = i["step_id"].as_str().unwrap().to_owned();
        let result = match i["call"].as_str().unwrap() {
            "gitlab.list_merge_requests" => json!({"items": [
                {"iid": 1, "title": "Add dark mode", "labels": []},
                {"iid": 2, "title": "Bump CI image", "labels": ["ci"]},
                {"iid": 3, "title": "Faster search", "labels": ["feature"]}
            ]}),
            "think" => {
                let mut args = i["input"].clone();
                args["workflow"] = json!("release_notes");
                args["run_id"] = json!(run_id);
                let (err, thought) = call(client, "think", args).await;
                assert!(!err, "{thought}");
                assert_eq!(thought["recorded_in"], "run");
                json!({"sentence": format!("{} is better now.", step)})
            }
            "prompt.say" => {
                let (err, said) = call(client, "prompt_say", i["input"].clone()).await;
                assert!(!err, "{said}");
                said
            }
            other => panic!("unexpected call {other}"),
        };
        let (err, next) = call(
            client,
            "think_next",
            json!({"workflow": "release_notes", "run_id": run_id, "step_id": step, "result_snapshot": result}),
        )
        .await;
        assert!(!err, "{next}");
        out = next;
    }
    assert_eq!(out["done"], true);
    // The ci change is skipped (its item is null); the other two have notes.
    let notes = out["artifacts"]["notes"].as_array().unwrap();
    assert_eq!(notes.iter().filter(|n| !n.is_null()).count(), 2, "{out}");

    // The run as a resource, and the workflow.
    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"workflow://release_notes"), "{uris:?}");
    let run_uri = format!("run://release_notes/{run_id}");
    assert!(uris.contains(&run_uri.as_str()), "{uris:?}");
    let read = client.read_resource(ReadResourceRequestParams::new(run_uri.clone())).await.unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else { panic!("not text") };
    let state: Value = serde_json::from_str(text).unwrap();
    assert_eq!(state["status"], "done");
    let read =
        client.read_resource(ReadResourceRequestParams::new("workflow://release_notes")).await.unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else { panic!("not text") };
    assert!(text.contains("id: release_notes"));
    assert!(client.read_resource(ReadResourceRequestParams::new("workflow://nope")).await.is_err());
}

/// Errors are results, never crashes: unknown tools, wrong types, bad paths.
pub async fn errors_are_results(client: &Client) {
    // A tool the server does not have: -32602 with a did-you-mean.
    let e = client
        .call_tool(CallToolRequestParams::new("think_plann").with_arguments(Default::default()))
        .await
        .expect_err("an unknown tool is a request error");
    let rmcp::service::ServiceError::McpError(e) = e else { panic!("{e}") };
    assert_eq!(e.code.0, -32602);
    let data = e.data.expect("data");
    assert_eq!(data["error"], "UNKNOWN_TOOL");
    assert_eq!(data["details"]["help"], "did you mean `think_plan`?", "{data}");
    let (err, v) = call(client, "think_plan", json!({"workflow": 42})).await;
    assert!(err);
    assert_eq!(v["error"], "INVALID_INPUT");
    let (err, v) =
        call(client, "think_plan", json!({"workflow": "release_notes", "params": {"milestone": 3}})).await;
    assert!(err);
    assert_eq!(v["error"], "INVALID_PARAMS");
    let (err, v) = call(client, "think_workflows_read", json!({"workflow": "/etc/hostname"})).await;
    assert!(err, "{v}");
    let (err, v) = call(client, "think", json!({"thoughts": "  the alias works  "})).await;
    assert!(!err, "{v}");
    assert_eq!(v["thought"], "the alias works");
    let (err, v) = call(client, "think", json!({"thought": "   "})).await;
    assert!(err);
    assert_eq!(v["error"], "INVALID_INPUT");
    let (err, v) =
        call(client, "think_validate", json!({"schema": "MergeRequestListV1", "response": {"items": []}}))
            .await;
    assert!(!err);
    assert_eq!(v["valid"], true);
}
