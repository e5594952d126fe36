//! Issue 47.2 and 47.3: what an operator sees of a `serve --http` replica.
//! `/metrics` (behind the token) parses as Prometheus text and its values
//! follow the calls made; `--log-format json` writes one object per line
//! with stable field names, the call's workflow, run, step and error code,
//! and never the token.

use crate::common::Root;
use crate::support::Server;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

pub(crate) const TOKEN: &str = "metrics-token-0123456789";

/// Two steps, `greet` then `bye` (also `read_token.rs`'s).
pub(crate) const HELLO: &str = "id: hello
steps:
  - id: greet
    call: prompt.say
    input_template: { text: hi }
  - id: bye
    call: prompt.say
    deps: [greet]
    input_template: { text: bye }
";

const NAP: &str = "id: nap
steps:
  - id: rest
    sleep: 1h
";

/// A `tools/call` of `name` with `arguments` (JSON text), answered.
pub(crate) fn call(addr: &str, id: u32, name: &str, arguments: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    );
    let bearer = format!("Bearer {TOKEN}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let reply = crate::inspect_http::request(addr, "POST", "/mcp", &headers, &body);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The samples of an exposition: `name{labels}` → value. Every line is a
/// comment, `# EOF`, or a sample whose value parses, else the test fails.
fn parse(text: &str) -> BTreeMap<String, f64> {
    assert!(text.ends_with("# EOF\n"), "{text}");
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a value: {line}"));
        assert!(name.starts_with("savant_think_"), "{line}");
        samples.insert(name.to_owned(), value);
    }
    samples
}

#[test]
fn metrics_follow_the_calls_and_json_logs_name_the_run() {
    let root = Root::new("observing");
    root.write("workflows/hello.yaml", HELLO);
    root.write("workflows/nap.yaml", NAP);
    let mut command = Server::command(&root.path);
    command.args(["--token", TOKEN, "--stateless", "--log-format", "json"]).env_remove("LOG_LEVEL");
    let mut server = Server::start_logged(command);
    let a = server.addr.clone();

    let planned = call(&a, 3, "think_plan", r#"{"workflow":"hello","run_id":"r1"}"#);
    assert!(planned.contains("greet"), "{planned}");
    call(
        &a,
        4,
        "think_next",
        r#"{"workflow":"hello","run_id":"r1","step_id":"greet","result":{"said":"hi"}}"#,
    );
    let missing =
        call(&a, 5, "think_next", r#"{"workflow":"hello","run_id":"nope","step_id":"greet","result":{}}"#);
    assert!(missing.contains("UNKNOWN_RUN"), "{missing}");
    call(&a, 6, "think_plan", r#"{"workflow":"nap","run_id":"n1"}"#);
    call(&a, 7, "think_state_list", "{}");

    let refused =
        crate::inspect_http::request(&a, "GET", "/metrics", &[("Authorization", "Bearer wrong-secret")], "");
    assert_eq!(refused.status, 401, "/metrics is behind the token");
    let bearer = format!("Bearer {TOKEN}");
    let reply =
        crate::inspect_http::request(&a, "GET", "/metrics", &[("Authorization", bearer.as_str())], "");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.head.to_ascii_lowercase().contains("content-type: application/openmetrics-text"),
        "{}",
        reply.head
    );
    let m = parse(&reply.body);
    let at = |k: &str| m.get(k).copied().unwrap_or_else(|| panic!("no sample {k} in\n{}", reply.body));
    assert_eq!(at(r#"savant_think_calls_total{tool="think_plan",code="ok"}"#), 2.0);
    assert_eq!(at(r#"savant_think_calls_total{tool="think_next",code="ok"}"#), 1.0);
    assert_eq!(at(r#"savant_think_calls_total{tool="think_next",code="UNKNOWN_RUN"}"#), 1.0);
    assert_eq!(at(r#"savant_think_calls_total{tool="think_state_list",code="ok"}"#), 1.0);
    assert_eq!(at(r#"savant_think_transitions_total{tool="think_plan"}"#), 2.0);
    assert_eq!(at(r#"savant_think_transitions_total{tool="think_next"}"#), 1.0);
    assert!(
        !m.keys().any(|k| k.contains("transitions_total{tool=\"think_state_list\"")),
        "reads are no transitions"
    );
    assert_eq!(at(r#"savant_think_call_duration_seconds_count{tool="think_next"}"#), 2.0);
    assert_eq!(at(r#"savant_think_call_duration_seconds_bucket{le="+Inf",tool="think_next"}"#), 2.0);
    assert_eq!(at(r#"savant_think_runs{status="running"}"#), 2.0, "hello r1 and nap n1");
    assert_eq!(at("savant_think_runs_waiting"), 1.0, "nap sleeps");
    assert_eq!(at("savant_think_timers_pending"), 1.0);
    assert_eq!(at("savant_think_requests_in_flight"), 0.0);
    assert_eq!(at(r#"savant_think_build_info{version="0.1.0"}"#), 1.0);
    assert!(!m.keys().any(|k| k.starts_with("savant_think_store_errors_total")), "no store error: {m:?}");

    // One JSON object per line, the call's run named on its line.
    let _ = server.child.kill();
    let _ = server.child.wait();
    let log = server.log.take().unwrap();
    while std::sync::Arc::strong_count(&log) > 1 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let lines = log.lock().unwrap().clone();
    let text = lines.join("\n");
    assert!(!text.contains(TOKEN) && !text.contains("wrong-secret"), "no token in the log:\n{text}");
    let objects: Vec<Value> = lines
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.iter().filter(|l| l.starts_with('{')).count() >= 6, "{text}");
    for o in &objects {
        for key in ["ts", "level", "msg", "target"] {
            assert!(o.get(key).is_some(), "{key} missing: {o}");
        }
        assert!(o["ts"].as_str().unwrap().ends_with('Z'), "{o}");
    }
    let line = |tool: &str, request: &str| {
        objects
            .iter()
            .find(|o| o["tool"] == tool && o["request_id"] == request)
            .unwrap_or_else(|| panic!("no line of {tool} request {request}:\n{text}"))
    };
    let ok = line("think_next", "4");
    assert_eq!((ok["level"].as_str(), ok["msg"].as_str()), (Some("info"), Some("ok")), "{ok}");
    assert_eq!(
        (ok["workflow"].as_str(), ok["run_id"].as_str(), ok["step"].as_str()),
        (Some("hello"), Some("r1"), Some("greet"))
    );
    assert!(ok["ms"].is_u64(), "{ok}");
    let err = line("think_next", "5");
    assert_eq!(
        (err["msg"].as_str(), err["code"].as_str(), err["run_id"].as_str()),
        (Some("tool error"), Some("UNKNOWN_RUN"), Some("nope"))
    );
    assert!(err["cause"].as_str().is_some_and(|c| c.contains("nope")), "{err}");
    let start = objects.iter().find(|o| o["msg"] == "starting").unwrap_or_else(|| panic!("{text}"));
    assert_eq!((start["store"].as_str(), start["auth"].as_bool()), (Some("files"), Some(true)), "{start}");
    assert_eq!(start["max_in_flight"].as_u64(), Some(256), "{start}");
    let refused = objects.iter().find(|o| o["msg"].as_str().is_some_and(|m| m.contains("bearer token")));
    assert_eq!(refused.map(|o| o["level"].as_str()), Some(Some("warn")), "{text}");
}

/// `/metrics` of the replica at `addr`, parsed.
fn scrape(addr: &str) -> BTreeMap<String, f64> {
    let bearer = format!("Bearer {TOKEN}");
    let reply =
        crate::inspect_http::request(addr, "GET", "/metrics", &[("Authorization", bearer.as_str())], "");
    assert_eq!(reply.status, 200, "{}", reply.body);
    parse(&reply.body)
}

fn serve_at(root: &Root, env: &[(&str, &str)]) -> Server {
    let mut command = Server::command(&root.path);
    command.args(["--token", TOKEN, "--stateless"]).envs(env.iter().copied());
    Server::start(command, false)
}

/// Issue 47.2: every run lock's wait is timed and each `RUN_BUSY` refusal
/// counted; on PostgreSQL the connection pool's use is shown.
#[test]
fn lock_waits_busy_refusals_and_the_database_pool_are_measured() {
    let root = Root::new("observing-locks");
    root.write("workflows/hello.yaml", HELLO);
    root.write("savant-think.toml", "[state]\nlock_timeout = \"300ms\"\n");
    let server = serve_at(&root, &[]);
    let a = &server.addr;
    call(a, 1, "think_plan", r#"{"workflow":"hello","run_id":"r1"}"#);
    let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let before = scrape(a);
    assert!(get(&before, "savant_think_lock_wait_seconds_count") >= 1.0, "the plan took a lock: {before:?}");
    assert_eq!(get(&before, "savant_think_run_busy_total"), 0.0);
    assert!(!before.keys().any(|k| k.starts_with("savant_think_db_pool")), "no pool on files: {before:?}");

    // Another process holds the run's lock: the call waits for it, then is refused.
    let held = std::fs::File::open(root.join(".savant/state/hello__r1.lock")).unwrap();
    held.lock().unwrap();
    let next = r#"{"workflow":"hello","run_id":"r1","step_id":"greet","result":{"said":"hi"}}"#;
    let busy = call(a, 2, "think_next", next);
    assert!(busy.contains("RUN_BUSY"), "{busy}");
    held.unlock().unwrap();
    let after = scrape(a);
    assert_eq!(get(&after, "savant_think_run_busy_total"), 1.0, "{after:?}");
    let waits = get(&after, "savant_think_lock_wait_seconds_count");
    assert!(waits > get(&before, "savant_think_lock_wait_seconds_count"), "{after:?}");
    let waited = get(&after, "savant_think_lock_wait_seconds_sum")
        - get(&before, "savant_think_lock_wait_seconds_sum");
    assert!(waited >= 0.3, "the refused call waited lock_timeout: {waited}");
    assert!(!call(a, 3, "think_next", next).contains("RUN_BUSY"), "free again");
    assert_eq!(get(&scrape(a), "savant_think_run_busy_total"), 1.0);

    let Some(cluster) = savant_think::state::pg::cluster::for_test(
        "observing::lock_waits_busy_refusals_and_the_database_pool",
    ) else {
        return;
    };
    let url = cluster.fresh_schema("it_observing_pool").unwrap();
    let pg = Root::new("observing-pool");
    pg.write("workflows/hello.yaml", HELLO);
    pg.write("savant-think.toml", "[state]\npool_size = 3\n");
    let server = serve_at(&pg, &[("SAVANT_STATE_URL", url.as_str())]);
    call(&server.addr, 1, "think_plan", r#"{"workflow":"hello","run_id":"p1"}"#);
    let m = scrape(&server.addr);
    assert_eq!(get(&m, r#"savant_think_db_pool_max{budget="work"}"#), 3.0, "{m:?}");
    assert_eq!(get(&m, r#"savant_think_db_pool_max{budget="lock"}"#), 3.0, "{m:?}");
    let open: f64 = ["work", "lock", "idle"]
        .iter()
        .map(|s| get(&m, &format!("savant_think_db_pool_connections{{state=\"{s}\"}}")))
        .sum();
    assert!((1.0..=6.0).contains(&open), "the calls used pooled connections: {m:?}");
    assert!(get(&m, r#"savant_think_db_pool_connections{state="idle"}"#) >= 1.0, "returned after use: {m:?}");
}
