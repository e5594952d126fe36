//! `savant-think serve` over stdio, driven by rmcp's client against the real
//! binary in a scratch root: catalog, a full plan → next loop, errors as
//! results, and a server that survives malformed input.

use crate::common::{BIN, Root};
use crate::mcp_support::{
    Client, call, check_catalog, connect_stdio, errors_are_results, full_loop, populate,
};
use crate::support::copy_dir;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, CompletionContext, GetPromptRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, Reference, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams, UnsubscribeRequestParams,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

async fn connect(root: &std::path::Path) -> Client {
    connect_stdio(root, "1").await
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_catalog_loop_and_errors() {
    let scratch = Root::new("mcp-stdio");
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

/// With fsync off the engine's calls are answered on the request's task:
/// the same loop and errors, and concurrent calls on one run each get
/// their own answer (the same result again accepted, another refused).
#[tokio::test(flavor = "multi_thread")]
async fn stdio_with_fsync_off_answers_on_the_task() {
    let scratch = Root::new("mcp-stdio-inline");
    populate(&scratch.path);
    let client = connect_stdio(&scratch.path, "0").await;
    let work = async {
        full_loop(&client, "inline-1").await;
        errors_are_results(&client).await;
        let wf = "id: two\nsteps:\n  - id: a\n    call: think\n  - id: b\n    call: think\n    deps: [a]\n";
        std::fs::write(scratch.path.join("workflows/two.yaml"), wf).unwrap();
        let (err, out) = call(&client, "think_plan", json!({"workflow": "two", "run_id": "race"})).await;
        assert!(!err, "{out}");
        let next = |x: u32| {
            call(
                &client,
                "think_next",
                json!({"workflow": "two", "run_id": "race", "step_id": "a", "result": {"x": x}}),
            )
        };
        let answers = [next(1).await, next(2).await];
        assert!(!answers[0].0 && answers[0].1["instruction"]["step_id"] == "b", "{:?}", answers[0]);
        assert_eq!(answers[1].1["error"], "STATE_CONFLICT", "{:?}", answers[1]);
        let (a, b, c, d) = tokio::join!(next(1), next(2), next(1), next(2));
        for (i, (err, out)) in [a, b, c, d].into_iter().enumerate() {
            let first_result = i % 2 == 0;
            assert_eq!(err, !first_result, "call {i}: {out}");
            if !first_result {
                assert_eq!(out["error"], "STATE_CONFLICT", "call {i}: {out}");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC lines: garbage, an unknown method, a wrong-typed argument, an
/// oversized line, a message without `jsonrpc`, params of the wrong shape.
/// The server answers each with its id when it has one (the oversized line
/// with -32600, garbage with -32700 and no id), and keeps serving; closing
/// stdin ends it cleanly.
#[test]
fn stdio_survives_malformed_messages() {
    let scratch = Root::new("mcp-stdio-raw");
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
        r#"{"id":6,"method":"tools/list"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"think","arguments":"{}"}}"#.to_owned(),
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
    let mut without_id = Vec::new();
    while answers.len() < 9 {
        let line = rx.recv_timeout(Duration::from_secs(20)).expect("an answer for every request");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        match v["id"].as_u64() {
            Some(id) => answers.insert(id, v),
            None => {
                without_id.push(v);
                None
            }
        };
    }
    assert_eq!(without_id.len(), 1, "{without_id:?}");
    assert_eq!(without_id[0]["error"]["code"], -32700, "garbage is a parse error: {without_id:?}");
    assert_eq!(answers[&6]["error"]["code"], -32600, "no jsonrpc: answered with its id");
    assert_eq!(answers[&7]["error"]["code"], -32602, "params not an object");
    assert!(answers[&8]["error"]["message"].as_str().unwrap().contains("arguments"), "{}", answers[&8]);
    assert!(answers[&1]["result"]["serverInfo"]["name"] == "savant-think");
    assert_eq!(answers[&2]["error"]["code"], -32601);
    assert_eq!(answers[&3]["result"]["isError"], true);
    assert_eq!(answers[&3]["result"]["structuredContent"]["error"], "INVALID_INPUT");
    // A tool the server does not have is a request error (-32602), not a result.
    assert_eq!(answers[&4]["error"]["code"], -32602, "{}", answers[&4]);
    assert_eq!(answers[&4]["error"]["data"]["error"], "UNKNOWN_TOOL");
    assert_eq!(answers[&4]["error"]["data"]["details"]["tool"], "nope");
    assert!(answers[&5].get("result").is_some());
    // The oversized request is answered (not dropped, which left the client waiting).
    assert_eq!(answers[&9]["error"]["code"], -32600, "{}", answers[&9]);
    assert!(answers[&9]["error"]["message"].as_str().unwrap().contains("65536"));
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

// ---- notifications, completions, paging, workflow prompts, error codes ----

/// A client that records the server's notifications, in order.
#[derive(Clone, Default)]
struct Recorder {
    seen: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    arrived: std::sync::Arc<tokio::sync::Notify>,
}

impl Recorder {
    fn push(&self, v: Value) {
        self.seen.lock().unwrap().push(v);
        self.arrived.notify_waiters();
    }

    /// Waits until a notification matches (the outer test timeout bounds it);
    /// returns every notification seen before it.
    async fn wait_for(&self, want: impl Fn(&Value) -> bool) -> Vec<Value> {
        loop {
            let arrived = self.arrived.notified();
            {
                let seen = self.seen.lock().unwrap();
                if let Some(i) = seen.iter().position(&want) {
                    return seen[..i].to_vec();
                }
            }
            arrived.await;
        }
    }

    fn count(&self, want: impl Fn(&Value) -> bool) -> usize {
        self.seen.lock().unwrap().iter().filter(|v| want(v)).count()
    }
}

#[allow(deprecated)]
impl ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.push(json!({"log": params}));
    }
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.push(json!({"updated": params.uri}));
    }
    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.push(json!({"list_changed": true}));
    }
}

type Recording = RunningService<RoleClient, Recorder>;

async fn connect_recording(root: &std::path::Path) -> (Recording, Recorder) {
    let transport = TokioChildProcess::new(tokio::process::Command::new(BIN).configure(|c| {
        c.arg("serve").arg("--root").arg(root).env("LOG_LEVEL", "warn");
    }))
    .expect("spawn savant-think serve");
    let recorder = Recorder::default();
    let client = tokio::time::timeout(Duration::from_secs(20), recorder.clone().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize");
    (client, recorder)
}

async fn tool(client: &Recording, name: &str, args: Value) -> (bool, Value) {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (r.is_error == Some(true), r.structured_content.unwrap_or(Value::Null))
}

/// The JSON-RPC error code of a failed request.
fn code<T: std::fmt::Debug>(r: Result<T, rmcp::ServiceError>) -> i32 {
    match r {
        Err(rmcp::ServiceError::McpError(e)) => e.code.0,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

async fn read_text(client: &Recording, uri: &str) -> Result<String, rmcp::ServiceError> {
    let r = client.read_resource(ReadResourceRequestParams::new(uri)).await?;
    match &r.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => Ok(text.clone()),
        other => panic!("not text: {other:?}"),
    }
}

const BROKEN: &str = "id: broken\nname: Broken one\ndescription: Uses a schema that does not exist\nversion: \"1\"\nsteps:\n  - id: a\n    call: think\n    success_schema: NoSuchSchemaV1\n";

#[tokio::test(flavor = "multi_thread")]
async fn broken_workflows_are_listed_with_their_real_error_and_their_runs_stay_readable() {
    let scratch = Root::new("mcp-broken");
    populate(&scratch.path);
    std::fs::write(scratch.path.join("workflows/broken.yaml"), BROKEN).unwrap();
    let (client, _) = connect_recording(&scratch.path).await;
    let work = async {
        let (err, listed) = tool(&client, "think_workflows_list", json!({})).await;
        assert!(!err, "{listed}");
        let broken =
            listed["workflows"].as_array().unwrap().iter().find(|w| w["id"] == "broken").unwrap().clone();
        assert_eq!(broken["valid"], false);
        assert_eq!(broken["error"], "UNKNOWN_SCHEMA", "{broken}");
        assert_eq!(broken["name"], "Broken one");
        assert_eq!(broken["description"], "Uses a schema that does not exist");

        // A run whose workflow breaks afterwards keeps its pinned version: fully readable.
        let (err, out) = tool(
            &client,
            "think_plan",
            json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": "r1"}),
        )
        .await;
        assert!(!err, "{out}");
        let file = scratch.path.join("workflows/release_notes.yaml");
        let yaml = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, yaml.replace("MergeRequestListV1", "NoSuchSchemaV1")).unwrap();
        let text = read_text(&client, "run://release_notes/r1")
            .await
            .expect("a run of a broken workflow is readable");
        let state: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(state["run_id"], "r1");
        assert_eq!(state["status"], "running", "{state}");
        assert_eq!((&state["file_hash"], &state["file_differs"]), (&Value::Null, &json!(true)), "{state}");
        assert!(state["steps"].as_array().is_some_and(|s| !s.is_empty()), "{state}");
        // Only an unknown resource is -32002.
        assert_eq!(code(read_text(&client, "run://release_notes/nope").await), -32002);
        assert_eq!(code(read_text(&client, "run://no_such_workflow/r1").await), -32002);
        assert_eq!(code(read_text(&client, "nope://x").await), -32002);
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)]
async fn logging_set_level_sends_the_servers_log_lines() {
    let scratch = Root::new("mcp-logging");
    populate(&scratch.path);
    let (client, recorder) = connect_recording(&scratch.path).await;
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert!(caps.logging.is_some(), "logging is declared");
    let work = async {
        client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.expect("logging/setLevel");
        let (err, _) = tool(&client, "think_workflows_list", json!({})).await;
        assert!(!err);
        recorder
            .wait_for(|v| v["log"]["data"]["tool"] == "think_workflows_list" && v["log"]["level"] == "info")
            .await;
        // At `error`, info lines stop: the state_list line (between the two levels) never arrives,
        // while the driver_prompt line after it does (notifications keep their order).
        client.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.unwrap();
        let (err, _) = tool(&client, "think_state_list", json!({})).await;
        assert!(!err);
        client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.unwrap();
        tool(&client, "think_driver_prompt", json!({})).await;
        recorder.wait_for(|v| v["log"]["data"]["tool"] == "think_driver_prompt").await;
        assert_eq!(recorder.count(|v| v["log"]["data"]["tool"] == "think_state_list"), 0);
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // resources/subscribe: rmcp calls it legacy (2026-07-28 adds subscriptions/listen)
async fn subscribed_runs_get_updates_and_new_runs_change_the_list() {
    let scratch = Root::new("mcp-subscribe");
    populate(&scratch.path);
    let (client, recorder) = connect_recording(&scratch.path).await;
    let caps = client.peer_info().unwrap().capabilities.clone();
    let resources = caps.resources.expect("resources");
    assert_eq!(resources.subscribe, Some(true));
    assert_eq!(resources.list_changed, Some(true));
    let work = async {
        client.subscribe(SubscribeRequestParams::new("run://release_notes/s1")).await.expect("subscribe");
        let (err, _) = tool(
            &client,
            "think_plan",
            json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": "s1"}),
        )
        .await;
        assert!(!err);
        recorder.wait_for(|v| v["list_changed"] == true).await;
        recorder.wait_for(|v| v["updated"] == "run://release_notes/s1").await;
        let items = json!({"items": [{"iid": 1, "title": "Add dark mode", "labels": []}]});
        let (err, out) = tool(&client, "think_next", json!({"workflow": "release_notes", "run_id": "s1", "step_id": "list_changes", "result_snapshot": items})).await;
        assert!(!err, "{out}");
        let (err, out) =
            tool(&client, "think_reset", json!({"workflow": "release_notes", "run_id": "s1", "force": true}))
                .await;
        assert!(!err, "{out}");
        recorder.wait_for(|v| v["list_changed"] == true).await;
        let updates = |r: &Recorder| r.count(|v| v["updated"] == "run://release_notes/s1");
        // plan, next, reset: three updates (waiting on the third proves it came).
        loop {
            if updates(&recorder) >= 3 {
                break;
            }
            recorder.arrived.notified().await;
        }
        // After unsubscribe, s1 changes are not sent: s2's update, sent later, arrives with no s1 update before it.
        client
            .unsubscribe(UnsubscribeRequestParams::new("run://release_notes/s1"))
            .await
            .expect("unsubscribe");
        client.subscribe(SubscribeRequestParams::new("run://release_notes/s2")).await.unwrap();
        let (err, _) = tool(
            &client,
            "think_plan",
            json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": "s1", "if_exists": "replace"}),
        )
        .await;
        assert!(!err);
        let (err, _) = tool(
            &client,
            "think_plan",
            json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": "s2", "if_exists": "replace"}),
        )
        .await;
        assert!(!err);
        recorder.wait_for(|v| v["updated"] == "run://release_notes/s2").await;
        assert_eq!(updates(&recorder), 3);
        // Only the URIs resources/read serves can be subscribed to.
        assert_eq!(code(client.subscribe(SubscribeRequestParams::new("file:///etc/passwd")).await), -32602);
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

/// A subscribed run changed by another process (here `savant-think next` on
/// the same root; a replica on the same PostgreSQL database alike) is
/// noticed by the server's watcher and sent as `resources/updated`, once.
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)]
async fn a_run_changed_by_another_process_is_sent_to_subscribers() {
    let scratch = Root::new("mcp-watch");
    populate(&scratch.path);
    let (client, recorder) = connect_recording(&scratch.path).await;
    let uri = "run://release_notes/w1";
    let work = async {
        let (err, _) = tool(
            &client,
            "think_plan",
            json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": "w1"}),
        )
        .await;
        assert!(!err);
        client.subscribe(SubscribeRequestParams::new(uri)).await.expect("subscribe");
        let updates = |r: &Recorder| r.count(|v| v["updated"] == uri);
        assert_eq!(updates(&recorder), 0, "subscribing sends nothing");
        let items = r#"{"items": [{"iid": 1, "title": "Add dark mode", "labels": []}]}"#;
        let root = scratch.path.clone();
        let out = tokio::task::spawn_blocking(move || {
            crate::common::run(
                &root,
                &["next", "release_notes", "--run-id", "w1", "--step", "list_changes", "--result", items],
            )
        })
        .await
        .unwrap();
        crate::common::assert_exit(&out, 0);
        recorder.wait_for(|v| v["updated"] == uri).await;
        // A change made through this server is sent once, not again by the watcher.
        let (err, _) =
            tool(&client, "think_reset", json!({"workflow": "release_notes", "run_id": "w1", "force": true}))
                .await;
        assert!(!err);
        loop {
            if updates(&recorder) >= 2 {
                break;
            }
            recorder.arrived.notified().await;
        }
        tokio::time::sleep(savant_think::mcp::notify::WATCH_INTERVAL * 3).await;
        assert_eq!(updates(&recorder), 2, "{:?}", recorder.seen.lock().unwrap());
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn completions_offer_workflow_ids_run_ids_and_param_values() {
    let scratch = Root::new("mcp-complete");
    populate(&scratch.path);
    let (client, _) = connect_recording(&scratch.path).await;
    assert!(client.peer_info().unwrap().capabilities.completions.is_some());
    let work = async {
        let complete = |r: Reference, name: &str, value: &str, context: Option<(&str, &str)>| {
            let mut p = CompleteRequestParams::new(r, ArgumentInfo::new(name, value));
            if let Some((k, v)) = context {
                p.context = Some(CompletionContext::with_arguments([(k.to_owned(), v.to_owned())].into()));
            }
            client.complete(p)
        };
        let got = complete(Reference::for_resource("workflow://{id}"), "id", "re", None).await.unwrap();
        assert_eq!(got.completion.values, ["release_notes", "review_v1"]);
        for run in ["c1", "c2"] {
            let (err, _) = tool(
                &client,
                "think_plan",
                json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": run}),
            )
            .await;
            assert!(!err);
        }
        let got = complete(
            Reference::for_resource("run://{workflow}/{run_id}"),
            "run_id",
            "c",
            Some(("workflow", "release_notes")),
        )
        .await
        .unwrap();
        assert_eq!(got.completion.values, ["c1", "c2"]);
        let got = complete(
            Reference::for_resource("run://{workflow}/{run_id}"),
            "run_id",
            "",
            Some(("workflow", "review_v1")),
        )
        .await
        .unwrap();
        assert!(got.completion.values.is_empty());
        // A workflow prompt's boolean param.
        let got = complete(Reference::for_prompt("review_v1"), "run_tests", "", None).await.unwrap();
        assert_eq!(got.completion.values, ["true", "false"]);
        // Nothing to suggest for what the server does not have: an empty list, not an error.
        let got = complete(Reference::for_prompt("no_such_prompt"), "x", "", None).await.unwrap();
        assert!(got.completion.values.is_empty());
        let got = complete(Reference::for_resource("nope://{x}"), "x", "", None).await.unwrap();
        assert!(got.completion.values.is_empty());
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_list_is_paged() {
    let scratch = Root::new("mcp-paging");
    populate(&scratch.path);
    let (client, _) = connect_recording(&scratch.path).await;
    let work = async {
        for i in 0..110 {
            let (err, out) = tool(&client, "think_plan", json!({"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": format!("p{i:03}")})).await;
            assert!(!err, "{out}");
        }
        let first = client.list_resources(None).await.unwrap();
        assert_eq!(first.resources.len(), 100);
        let cursor = first.next_cursor.clone().expect("a next page");
        let second = client
            .list_resources(Some(PaginatedRequestParams::default().with_cursor(Some(cursor))))
            .await
            .unwrap();
        // The bundled workflows, then the 110 runs.
        let bundled = std::fs::read_dir(crate::support::CRATE.to_owned() + "/workflows").unwrap().count();
        assert_eq!(second.resources.len(), bundled + 110 - 100);
        assert!(second.next_cursor.is_none());
        let all = client.list_all_resources().await.unwrap();
        let uris: std::collections::HashSet<String> = all.iter().map(|r| r.uri.clone()).collect();
        assert_eq!(uris.len(), bundled + 110);
        assert!(uris.contains("run://release_notes/p109") && uris.contains("workflow://review_v1"));
        let bad = client
            .list_resources(Some(PaginatedRequestParams::default().with_cursor(Some("zzz".into()))))
            .await;
        assert_eq!(code(bad), -32602);
    };
    tokio::time::timeout(Duration::from_secs(120), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn workflows_are_prompts_and_prompt_errors_are_invalid_params() {
    let scratch = Root::new("mcp-prompts");
    // Only workflows/ and schemas/: no prompts/ of the project's own.
    for d in ["workflows", "schemas"] {
        copy_dir(&std::path::Path::new(crate::common::CRATE).join(d), &scratch.path.join(d));
    }
    std::fs::write(scratch.path.join("workflows/broken.yaml"), BROKEN).unwrap();
    let (client, _) = connect_recording(&scratch.path).await;
    let work = async {
        let prompts = client.list_all_prompts().await.expect("prompts/list is never an error");
        let review = prompts.iter().find(|p| p.name == "review_v1").expect("a prompt per workflow");
        assert!(review.description.as_deref().is_some_and(|d| d.contains("merge request")), "{review:?}");
        let args = review.arguments.clone().unwrap();
        let mr = args.iter().find(|a| a.name == "mr_iid").unwrap();
        assert_eq!(mr.required, Some(true));
        assert!(!prompts.iter().any(|p| p.name == "broken"), "a workflow with errors is not offered");

        let mut a = serde_json::Map::new();
        a.insert("mr_iid".into(), json!("!12"));
        a.insert("project".into(), json!("group/app"));
        a.insert("max_files".into(), json!("3"));
        let got =
            client.get_prompt(GetPromptRequestParams::new("review_v1").with_arguments(a)).await.unwrap();
        let text =
            serde_json::to_value(&got.messages[0]).unwrap()["content"]["text"].as_str().unwrap().to_owned();
        assert!(text.contains("think_plan") && text.contains("\"review_v1\""), "{text}");
        assert!(text.contains("\"max_files\": 3") && text.contains("\"mr_iid\": \"!12\""), "{text}");

        assert_eq!(code(client.get_prompt(GetPromptRequestParams::new("review_v1")).await), -32602);
        assert_eq!(code(client.get_prompt(GetPromptRequestParams::new("no_such_prompt")).await), -32602);
        assert_eq!(code(client.get_prompt(GetPromptRequestParams::new("broken")).await), -32602);
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}

/// `think_test` runs the project's workflow tests and answers the report;
/// a path outside the root is refused.
#[tokio::test(flavor = "multi_thread")]
async fn think_test_runs_the_projects_tests() {
    let scratch = Root::new("mcp-think-test");
    populate(&scratch.path);
    scratch.write(
        "tests/rn.test.yaml",
        "workflow: release_notes\ntests:\n  - name: empty milestone\n    params: {milestone: \"1\"}\n    mocks: {list_changes: {result: {items: []}}, publish: {result: {}}}\n    expect: {status: done}\n  - name: wrong\n    params: {milestone: \"1\"}\n    mocks: {list_changes: {result: {items: []}}, publish: {result: {}}}\n    expect: {status: failed}\n",
    );
    let client = connect(&scratch.path).await;
    let work = async {
        let (err, out) = call(&client, "think_test", json!({})).await;
        assert!(!err, "{out}");
        assert_eq!(out["summary"]["passed"], 1, "{out}");
        assert_eq!(out["summary"]["failed"], 1, "{out}");
        assert_eq!(out["tests"][1]["mismatches"][0]["path"], "status");
        let (err, out) = call(&client, "think_test", json!({"filter": "EMPTY"})).await;
        assert!(!err && out["summary"]["ok"] == true, "{out}");
        let (err, out) = call(&client, "think_test", json!({"filter": "zzz no such test"})).await;
        assert!(!err && out["summary"]["ok"] == false, "a filter that selects nothing is not a pass: {out}");
        assert_eq!(out["summary"]["unmatched_filter"], "zzz no such test", "{out}");
        let (err, out) = call(&client, "think_test", json!({"paths": ["../elsewhere"]})).await;
        assert!(err, "{out}");
        assert_eq!(out["error"], "INVALID_INPUT", "{out}");
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("the session must not hang");
    client.cancel().await.unwrap();
}
