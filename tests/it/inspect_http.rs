//! The inspector's HTTP side (issue 26): the page and its JSON API at
//! `/ui/` beside `/mcp` (`serve --http`) and alone (`savant-think ui`); the
//! same token, Host and Origin rules as MCP; actions only with auth, not
//! `--ui-read-only`, and from a browser only with the CSRF token and its
//! own Origin; bad input answered with a message and what helps; live
//! updates as server-sent events.

use crate::common::Root;
use crate::inspect_term::{REVIEW, review_run};
use crate::support::Server;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub fn serve(root: &Root, extra: &[&str]) -> Server {
    let mut command = Server::command(&root.path);
    command.args(extra).env("LOG_LEVEL", "error");
    Server::start(command, false)
}

/// A response: status, head (lowercase), body.
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One raw HTTP/1.1 request (`Host` is the server's unless given).
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    // A server may answer and close before the body is sent (413): no panic.
    let _ = s.write_all(req.as_bytes());
    let _ = s.write_all(body.as_bytes());
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Reply { status, head: head.to_lowercase(), body: body.to_owned() }
}

pub fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
    request(addr, "GET", path, headers, "")
}

#[test]
fn the_page_and_its_api_show_what_state_get_says() {
    let root = review_run("ui-api");
    let server = serve(&root, &[]);
    let addr = server.addr.as_str();
    let page = get(addr, "/ui/", &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.head.contains("content-type: text/html"), "{}", page.head);
    assert!(
        page.head.contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{}",
        page.head
    );
    assert!(page.head.contains("x-content-type-options: nosniff"));
    assert!(page.body.contains("<script src=\"/ui/assets/app.js\" defer></script>"));
    // The same page for a run's address; assets with an ETag, revalidated.
    assert_eq!(get(addr, "/ui/runs/review/r1", &[]).status, 200);
    let js = get(addr, "/ui/assets/app.js", &[]);
    assert_eq!(js.status, 200);
    let etag = js.head.lines().find_map(|l| l.strip_prefix("etag: ")).unwrap().to_owned();
    assert_eq!(get(addr, "/ui/assets/app.js", &[("If-None-Match", &etag)]).status, 304);

    let runs = get(addr, "/ui/api/runs", &[]).json();
    assert_eq!(runs["total"], 1);
    assert_eq!(runs["runs"][0]["ready"], json!(["lint", "review_each[0]", "review_each[1]"]));
    let state = root.ok(&["state", "get", "review", "--run-id", "r1"]);
    let view = get(addr, "/ui/api/runs/review/r1", &[]).json();
    assert_eq!(view["version"], state["version"]);
    let nodes = view["graph"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), state["steps"].as_array().unwrap().len());
    for (node, step) in nodes.iter().zip(state["steps"].as_array().unwrap()) {
        assert_eq!((&node["id"], &node["status"]), (&step["id"], &step["status"]));
    }
    assert_eq!(nodes[3]["items"], json!({"ready": 2}), "the foreach's items as a stack with counts");
    assert_eq!(view["timeline"]["rows"].as_array().unwrap().len(), 5);
    // Stable between reloads.
    assert_eq!(get(addr, "/ui/api/runs/review/r1", &[]).json()["graph"], view["graph"]);

    let panel = get(addr, "/ui/api/runs/review/r1/steps/lint", &[]).json();
    assert_eq!(panel["status"], "ready");
    assert_eq!(
        panel["instruction"]["call"], "tools.lint",
        "a ready step comes with its rendered instruction"
    );
    assert!(
        panel["yaml"]["text"].as_str().unwrap().starts_with("  - id: lint\n    call: tools.lint"),
        "{panel}"
    );
    assert_eq!(panel["yaml"]["first_line"], 9);
    let panel = get(addr, "/ui/api/runs/review/r1/steps/fetch", &[]).json();
    assert_eq!(panel["captures"], json!({"mr_data": {"title": "Fix <b>it</b>"}}));
    assert_eq!(panel["timing"]["from_ms"], 0);
    assert!(panel["timing"]["to_ms"].is_u64(), "{panel}");
    let source = get(addr, "/ui/api/runs/review/r1/source", &[]).json();
    assert_eq!(source["text"], REVIEW);
    assert_eq!(source["differs"], false);
    let wf = get(addr, "/ui/api/workflows/review", &[]).json();
    assert_eq!(wf["graph"]["nodes"].as_array().unwrap().len(), 5);
}

#[test]
fn unknown_runs_workflows_and_steps_say_what_is_there() {
    let root = review_run("ui-unknown");
    let server = serve(&root, &[]);
    let addr = server.addr.as_str();
    let r = get(addr, "/ui/api/runs/review/r2", &[]);
    assert_eq!(r.status, 404);
    let e = r.json();
    assert_eq!(e["error"], "UNKNOWN_RUN");
    assert_eq!(e["did_you_mean"], json!({"run_id": "r1"}));
    assert_eq!(e["runs"], json!(["r1"]));
    let e = get(addr, "/ui/api/runs/reviw/r1", &[]).json();
    assert_eq!(
        (&e["error"], &e["did_you_mean"]),
        (&json!("UNKNOWN_WORKFLOW"), &json!({"workflow": "review"}))
    );
    let e = get(addr, "/ui/api/workflows/reviw", &[]).json();
    assert_eq!(e["did_you_mean"], json!({"workflow": "review"}));
    let e = get(addr, "/ui/api/runs/review/r1/steps/lnt", &[]).json();
    assert_eq!(e["error"], "UNKNOWN_STEP", "{e}");
    assert_eq!(e["did_you_mean"], json!({"step": "lint"}));
    assert!(e["message"].as_str().unwrap().contains("lnt"), "{e}");
    let r = get(addr, "/ui/api/nothing", &[]);
    assert_eq!((r.status, r.json()["error"].as_str()), (404, Some("NOT_FOUND")));
    assert_eq!(get(addr, "/ui/no/such/page", &[]).status, 404);
}

#[test]
fn a_run_whose_workflow_broke_keeps_its_history_and_a_corrupt_run_shows_the_stores_error() {
    let root = review_run("ui-broken");
    root.ok(&["plan", "review", "--run-id", "r9", "--params", r#"{"mr": "!9"}"#]);
    let server = serve(&root, &[]);
    let addr = server.addr.as_str();
    // The file no longer compiles: the run still shows, pinned, with the diff and the new errors.
    root.workflow("review", &REVIEW.replace("<<mr_data.title>>", "<<mr_dta.title>>"));
    let view = get(addr, "/ui/api/runs/review/r1", &[]);
    assert_eq!(view.status, 200, "{}", view.body);
    let view = view.json();
    assert_eq!((view["events"].as_u64(), &view["file_differs"]), (Some(2), &json!(true)));
    let source = get(addr, "/ui/api/runs/review/r1/source", &[]).json();
    assert!(
        source["diff"].as_str().unwrap().contains("+    input_template: { title: \"<<mr_dta.title>>\" }"),
        "{source}"
    );
    let codes: Vec<&str> = source["current_diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"UNRESOLVED_VAR"), "{source}");
    // The workflow page shows the broken file with its diagnostics, and no DAG.
    let wf = get(addr, "/ui/api/workflows/review", &[]).json();
    assert!(wf["graph"].is_null() && wf["error"]["error"] == "YAML_SCHEMA_VIOLATION", "{wf}");
    assert!(wf["source"]["diagnostics"].as_array().unwrap().iter().any(|d| d["code"] == "UNRESOLVED_VAR"));
    // A corrupt snapshot: the store's error, with a message, never a bare 500.
    std::fs::write(root.join(".savant/state/review__r9.json"), "{not json").unwrap();
    let r = get(addr, "/ui/api/runs/review/r9", &[]);
    assert_eq!(r.status, 500, "{}", r.body);
    let e = r.json();
    assert_eq!(e["error"], "STATE_CORRUPT", "{e}");
    assert!(!e["message"].as_str().unwrap().is_empty());
    assert_eq!(e["stored"]["error"], "STATE_CORRUPT", "{e}");
    let runs = get(addr, "/ui/api/runs", &[]).json();
    assert_eq!(runs["statuses"]["unreadable"], 1, "{runs}");
    // The pinned version gone too (a new server: this one holds the run in
    // memory): the history as stored, event by event.
    drop(server);
    for object in std::fs::read_dir(root.join(".savant/state/objects")).unwrap() {
        std::fs::remove_file(object.unwrap().path()).unwrap();
    }
    let server = serve(&root, &[]);
    let r = get(&server.addr, "/ui/api/runs/review/r1", &[]);
    assert_eq!(r.status, 422, "{}", r.body);
    let e = r.json();
    assert_eq!(e["error"], "WORKFLOW_CHANGED", "{e}");
    let history = e["stored"]["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{e}");
    assert_eq!(history[0]["step_id"], "fetch");
}

#[test]
fn runs_are_paged_filtered_and_searched_on_the_server() {
    let root = Root::with_workflows("ui-pages", &[("review", REVIEW)]);
    let engine = root.engine();
    for i in 0..120 {
        engine.plan("review", json!({"mr": "!1"}), Some(&format!("run-{i:03}")), true).unwrap();
    }
    drop(engine);
    let server = serve(&root, &[]);
    let addr = server.addr.as_str();
    let page = get(addr, "/ui/api/runs?per_page=50&page=3", &[]).json();
    assert_eq!((page["total"].as_u64(), page["pages"].as_u64()), (Some(120), Some(3)));
    assert_eq!(page["runs"].as_array().unwrap().len(), 20);
    let found = get(addr, "/ui/api/runs?q=RUN-11", &[]).json();
    assert_eq!(found["total"], 10, "case-insensitive search by id");
    assert_eq!(get(addr, "/ui/api/runs?status=done", &[]).json()["total"], 0);
    assert_eq!(get(addr, "/ui/api/runs?workflow=review&status=running", &[]).json()["total"], 120);
    assert_eq!(get(addr, "/ui/api/runs?archived=1", &[]).json()["total"], 0);
}

#[test]
fn host_origin_and_token_rules_are_the_mcp_endpoints() {
    let root = review_run("ui-guard");
    let server = serve(&root, &["--token", "s3cret"]);
    let addr = server.addr.as_str();
    let r = get(addr, "/ui/api/runs", &[]);
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"], "UNAUTHORIZED");
    assert_eq!(get(addr, "/ui/", &[]).status, 401);
    assert_eq!(get(addr, "/ui/api/runs", &[("Authorization", "Bearer s3cret")]).status, 200);
    assert_eq!(get(addr, "/ui/api/runs", &[("Authorization", "Bearer wrong")]).status, 401);
    // The printed address: the token becomes a cookie and leaves the address bar.
    let r = get(addr, "/ui/runs/review/r1?token=s3cret", &[]);
    assert_eq!(r.status, 303);
    assert!(r.head.contains("location: /ui/runs/review/r1\r\n"), "{}", r.head);
    let port = addr.rsplit(':').next().unwrap();
    let set = format!("set-cookie: savant_ui_{port}=s3cret; path=/ui; httponly; samesite=strict");
    assert!(r.head.contains(&set), "{}", r.head);
    let cookie = format!("savant_ui_{port}=s3cret");
    assert_eq!(get(addr, "/ui/api/runs", &[("Cookie", &cookie)]).status, 200);
    // Refusals and redirects carry the security headers too, as every answer does.
    for r in [r, get(addr, "/ui/", &[]), get(addr, "/ui/", &[("Host", "evil.example")])] {
        for h in [
            "content-security-policy: default-src 'none'",
            "x-content-type-options: nosniff",
            "x-frame-options: deny",
            "referrer-policy: no-referrer",
        ] {
            assert!(r.head.contains(h), "{h} missing from a {}: {}", r.status, r.head);
        }
    }
    assert_eq!(
        get(addr, "/ui/api/runs", &[("Cookie", "savant_ui_1=s3cret")]).status,
        401,
        "another server's cookie"
    );
    assert_eq!(get(addr, "/ui/api/runs?token=s3cret", &[]).status, 401, "the API takes no token in the URL");
    // DNS rebinding and foreign pages.
    let bearer = ("Authorization", "Bearer s3cret");
    assert_eq!(get(addr, "/ui/api/runs", &[bearer, ("Host", "evil.example")]).status, 403);
    assert_eq!(get(addr, "/ui/api/runs", &[bearer, ("Origin", "https://evil.example")]).status, 403);
    assert_eq!(get(addr, "/ui/api/runs", &[bearer, ("Origin", "http://localhost:1")]).status, 200);
    assert_eq!(get(addr, "/ui/api/runs", &[bearer, ("Origin", "http://x/y")]).status, 403);
    // /mcp is still guarded as before.
    assert_eq!(request(addr, "POST", "/mcp", &[("Content-Type", "application/json")], "{}").status, 401);
}

fn reset_body() -> &'static str {
    r#"{"checkpoint": "fetch", "force": true}"#
}

#[test]
fn actions_need_auth_csrf_and_their_own_origin_and_are_the_clis_calls() {
    let root = review_run("ui-actions");
    // No token: no actions at all.
    let open = serve(&root, &[]);
    let json_type = ("Content-Type", "application/json");
    let r = request(&open.addr, "POST", "/ui/api/runs/review/r1/actions/reset", &[json_type], reset_body());
    assert_eq!((r.status, r.json()["error"].as_str()), (403, Some("UNAUTHORIZED")), "{}", r.body);
    assert_eq!(get(&open.addr, "/ui/api/session", &[]).json()["can_act"], false);
    drop(open);
    let server = serve(&root, &["--token", "s3cret"]);
    let addr = server.addr.as_str();
    let own = format!("http://{addr}");
    let cookie = format!("savant_ui_{}=s3cret", addr.rsplit(':').next().unwrap());
    let cookie = ("Cookie", cookie.as_str());
    let session = get(addr, "/ui/api/session", &[cookie]).json();
    assert_eq!(session["can_act"], true);
    let csrf = session["csrf"].as_str().unwrap().to_owned();
    let path = "/ui/api/runs/review/r1/actions/reset";
    let post = |headers: &[(&str, &str)]| request(addr, "POST", path, headers, reset_body());
    // A cookie alone (what a forged cross-site form would carry) is refused.
    let r = post(&[cookie, json_type, ("Origin", &own)]);
    assert_eq!((r.status, r.json()["error"].as_str()), (403, Some("CSRF")));
    // The token but another (allowed) origin, or none.
    let r = post(&[cookie, json_type, ("X-Savant-Csrf", &csrf), ("Origin", "http://localhost:1")]);
    assert_eq!((r.status, r.json()["error"].as_str()), (403, Some("CSRF")));
    assert_eq!(post(&[cookie, json_type, ("X-Savant-Csrf", &csrf)]).status, 403);
    assert_eq!(post(&[cookie, ("X-Savant-Csrf", &csrf), ("Origin", &own)]).status, 415);
    let before = root.ok(&["state", "get", "review", "--run-id", "r1"]);
    let r = post(&[cookie, json_type, ("X-Savant-Csrf", &csrf), ("Origin", &own)]);
    assert_eq!(r.status, 200, "{}", r.body);
    let after = root.ok(&["state", "get", "review", "--run-id", "r1"]);
    assert_eq!(after["version"].as_u64(), Some(before["version"].as_u64().unwrap() + 1));
    assert_eq!(after["history"].as_array().unwrap().len(), 1, "reset to fetch's checkpoint: {after}");
    // A script with the bearer token needs no CSRF token; an unknown action has a did-you-mean.
    let bearer = ("Authorization", "Bearer s3cret");
    let r = request(
        addr,
        "POST",
        "/ui/api/runs/review/r1/actions/fork",
        &[bearer, json_type],
        r#"{"from": "fetch", "new_run_id": "r1b"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(root.ok(&["state", "get", "review", "--run-id", "r1b"])["forked_from"]["run_id"], "r1");
    let r = request(
        addr,
        "POST",
        "/ui/api/runs/review/r1/actions/upgrade",
        &[bearer, json_type],
        r#"{"dry_run": true}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = request(addr, "POST", "/ui/api/runs/review/r1/actions/resett", &[bearer, json_type], "{}");
    assert_eq!(r.status, 404);
    let e = r.json();
    assert!(e["details"]["message"].as_str().unwrap().contains("did you mean `reset`?"));
    assert_eq!(e["message"], e["details"]["message"], "every inspector error has its `message`");
    assert!(e["message"].as_str().unwrap().contains("the actions are reset, fork, upgrade, archive"), "{e}");
    let r = request(addr, "POST", "/ui/api/runs/review/r1b/actions/archive", &[bearer, json_type], "{}");
    assert_eq!(r.status, 200, "{}", r.body);
    let archived = get(addr, "/ui/api/runs?archived=1", &[bearer]).json();
    assert_eq!(archived["total"], 1);
    let archive_id = archived["runs"][0]["archive_id"].as_str().unwrap().to_owned();
    let view = get(addr, &format!("/ui/api/runs/review/r1b?archive_id={archive_id}"), &[bearer]).json();
    assert_eq!((&view["archived"], view["graph"]["nodes"].as_array().map(Vec::len)), (&json!(true), Some(5)));
    assert_eq!(get(addr, "/ui/api/runs/review/r1b", &[bearer]).status, 404, "archived: no live run");
    drop(server);
    // --ui-read-only: nothing, even with the token.
    let server = serve(&root, &["--token", "s3cret", "--ui-read-only"]);
    let r = request(&server.addr, "POST", path, &[bearer, json_type], reset_body());
    assert_eq!((r.status, r.json()["error"].as_str()), (403, Some("READ_ONLY")));
}

/// The next `event: state` of an SSE stream, as JSON.
pub fn next_state(reader: &mut impl BufRead) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut event = String::new();
    loop {
        assert!(Instant::now() < deadline, "no state event in time");
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            panic!("the stream ended");
        }
        let line = line.trim_end();
        if let Some(name) = line.strip_prefix("event: ") {
            event = name.to_owned();
        } else if let Some(data) = line.strip_prefix("data: ")
            && event == "state"
        {
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[test]
fn live_updates_follow_the_run_whoever_advances_it() {
    let root = review_run("ui-live");
    let server = serve(&root, &[]);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET /ui/api/runs/review/r1/live HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr).unwrap();
    let mut reader = BufReader::new(s);
    let first = next_state(&mut reader);
    assert_eq!(first["version"], 2);
    assert!(first["steps"].as_array().unwrap().iter().any(|s| s == &json!(["lint", "ready", 0])));
    root.ok(&["next", "review", "--run-id", "r1", "--step", "lint", "--result", "{}"]);
    let second = next_state(&mut reader);
    assert_eq!(second["version"], 3);
    assert!(second["steps"].as_array().unwrap().iter().any(|s| s == &json!(["lint", "done", 0])), "{second}");
}

fn ui(root: &Root, extra: &[&str]) -> Server {
    let mut command = std::process::Command::new(crate::support::BIN);
    command
        .args(["ui", "--port", "0", "--root"])
        .arg(&root.path)
        .args(extra)
        .env_remove("SAVANT_THINK_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    Server::start(command, true)
}

#[test]
fn ui_serves_the_inspector_alone_with_a_token_of_its_own() {
    let root = review_run("ui-cmd");
    let server = ui(&root, &[]);
    let addr = server.addr.as_str();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert_eq!(get(addr, "/ui/api/runs", &[]).status, 401, "a token of its own");
    let r = get(addr, "/", &[]);
    assert_eq!((r.status, r.head.contains("location: /ui/\r\n")), (303, true));
    drop(server);
    let server = ui(&root, &["--token", "t0k", "--read-only"]);
    let bearer = ("Authorization", "Bearer t0k");
    assert_eq!(get(&server.addr, "/ui/api/runs", &[bearer]).json()["total"], 1);
    assert_eq!(get(&server.addr, "/mcp", &[bearer]).status, 404, "the inspector alone");
    let session = get(&server.addr, "/ui/api/session", &[bearer]).json();
    assert_eq!((&session["can_act"], &session["read_only"]), (&json!(false), &json!(true)));
}

/// SIGTERM while an inspector action waits for its run's lock: the action
/// is in flight like an MCP call, so it finishes, its client gets the
/// answer, and the server exits 0 (a graceful shutdown waits for it).
#[test]
fn sigterm_lets_an_inspector_action_finish() {
    let root = review_run("ui-shutdown");
    let lock = root.path.join(".savant/state/review__r1.lock");
    assert!(lock.exists(), "the run's lock file");
    let mut command = Server::command(&root.path);
    command.args(["--token", "s3cret", "--shutdown-grace", "20s"]).env("LOG_LEVEL", "error");
    let mut server = Server::start(command, false);
    // Another process holds the run's lock for two seconds.
    let mut holder = std::process::Command::new("flock").arg(&lock).args(["sleep", "2"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let addr = server.addr.clone();
    let action = std::thread::spawn(move || {
        let headers = [("Authorization", "Bearer s3cret"), ("Content-Type", "application/json")];
        request(&addr, "POST", "/ui/api/runs/review/r1/actions/reset", &headers, reset_body())
    });
    std::thread::sleep(Duration::from_millis(400));
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let r = action.join().unwrap();
    assert_eq!(r.status, 200, "the action finished: {}", r.body);
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "exit 0 after a graceful shutdown: {exit:?}");
    let _ = holder.wait();
    let after = root.ok(&["state", "get", "review", "--run-id", "r1"]);
    assert_eq!(after["history"].as_array().unwrap().len(), 1, "the reset is in the run: {after}");
}
