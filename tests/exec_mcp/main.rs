//! `savant-think exec` and the multiplexer against real MCP servers: this
//! test binary is also the stdio MCP server the tests start
//! (`--fixture-server`, see fixture.rs), so the servers are real processes
//! speaking MCP, built with the tests. It has its own `main`
//! (`harness = false`): `cargo test --test exec_mcp [FILTER]`.

#[path = "../it/common.rs"]
mod common;
mod fixture;
mod stops;
#[path = "../support/mod.rs"]
mod support;

use common::{Root, Run, cmd, run_cmd};
use savant_think::agent::Tools;
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::runtime::Engine;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

const REVIEW_PARAMS: &str = r#"{"project": "g/app", "mr_iid": "!7"}"#;

/// A scratch root with the crate's workflows, schemas and prompts.
fn project(name: &str) -> Root {
    Root::new(name).bundled()
}

/// `[servers.NAME]` running this binary as the stdio fixture, logging calls to `log`.
fn stdio_server(name: &str, log: &Path, extra: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    format!(
        "[servers.{name}]\ncommand = {}\nargs = [\"--fixture-server\"]\nenv = {{ FIXTURE_LOG = {} }}\n{extra}\n",
        toml_str(&exe.display().to_string()),
        toml_str(&log.display().to_string())
    )
}

/// A project with `workflows/ID.yaml` = `yaml`, whose tools live in the
/// fixture server `server`; returns it and the fixture's call log.
fn fixture_project(id: &str, yaml: &str, server: &str) -> (Root, std::path::PathBuf) {
    let p = project(id);
    let log = p.path.join("calls.log");
    p.write(&format!("workflows/{id}.yaml"), yaml);
    p.write("savant-think.toml", stdio_server(server, &log, ""));
    (p, log)
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn exec(root: &Path, args: &[&str]) -> Run {
    let mut all = vec!["exec"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--root", root.to_str().unwrap()]);
    run_cmd(cmd(root, &all))
}

fn events(r: &Run) -> Vec<Value> {
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not an NDJSON line ({e}): {l}\n{r:?}")))
        .collect()
}

fn summary(r: &Run) -> Value {
    let all = events(r);
    let last = all.last().unwrap_or_else(|| panic!("no events: {r:?}")).clone();
    assert_eq!(last["event"], "summary", "{r:?}");
    assert_eq!(all.iter().filter(|e| e["event"] == "summary").count(), 1);
    last
}

/// The calls the fixture servers logged: tool → how many times.
fn calls(log: &Path) -> (BTreeMap<String, usize>, Vec<Value>) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut counts = BTreeMap::new();
    for l in lines.iter().filter(|l| l.get("tool").is_some()) {
        *counts.entry(l["tool"].as_str().unwrap().to_owned()).or_insert(0) += 1;
    }
    (counts, lines)
}

/// Waits (bounded) until process `pid` is gone: the server was stopped.
fn assert_gone(pid: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let proc_dir = format!("/proc/{pid}");
    while Path::new(&proc_dir).exists() {
        let stat = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
        // A zombie has been killed; only its parent's reaping is left.
        if stat.split_whitespace().nth(2) == Some("Z") {
            return;
        }
        assert!(Instant::now() < deadline, "server process {pid} is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn state(root: &Path, workflow: &str, run_id: &str) -> Value {
    let r =
        run_cmd(cmd(root, &["state", "get", workflow, "--run-id", run_id, "--root", root.to_str().unwrap()]));
    r.json()
}

// ---- the tests ---------------------------------------------------------

/// review_v1 with its tools in three real stdio MCP servers reaches done;
/// every tool is called exactly as often as the workflow needs; the servers
/// are stopped at the end. Then again with --jobs 4: the same artifacts.
fn review_v1_over_stdio_servers() {
    let p = project("stdio");
    let log = p.path.join("calls.log");
    let toml = ["gitlab", "context", "ci"].map(|n| stdio_server(n, &log, "")).concat();
    p.write("savant-think.toml", toml);
    let r = exec(&p.path, &["review_v1", "--params", REVIEW_PARAMS, "--run-id", "s1", "--json"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let s = summary(&r);
    assert_eq!(s["status"], "done", "{s}");
    let artifacts = &s["artifacts"];
    assert_eq!(artifacts["mr"]["title"], "Add dark mode");
    // Cargo.lock is skipped by the step's `when`: its item is null.
    let reviews = artifacts["reviews"].as_array().unwrap();
    assert_eq!(reviews.iter().filter(|r| !r.is_null()).count(), 2, "{artifacts}");
    assert_eq!(reviews[0]["path"], "src/theme.rs");
    assert_eq!(artifacts["test_run"]["passed"], 12);

    let (counts, lines) = calls(&log);
    let want: BTreeMap<String, usize> =
        [("get_merge_request", 1), ("search", 2), ("run_linters", 1), ("run_tests", 1), ("create_note", 1)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
    assert_eq!(counts, want);
    let note = lines.iter().find(|l| l["tool"] == "create_note").unwrap();
    let body = note["args"]["body"].as_str().unwrap();
    assert!(body.contains("Review of Add dark mode") && body.contains("Files reviewed: 3"), "{body}");
    let pids: Vec<u64> = lines.iter().filter_map(|l| l["pid"].as_u64()).collect();
    assert_eq!(pids.len(), 3, "one process per server, started once: {lines:?}");
    for pid in pids {
        assert_gone(pid);
    }
    // Step events: one started and one finished per call, in pairs.
    let all = events(&r);
    let started = all.iter().filter(|e| e["event"] == "step_started").count();
    let finished: Vec<&Value> = all.iter().filter(|e| e["event"] == "step_finished").collect();
    assert_eq!(started, 6);
    assert_eq!(finished.len(), 6);
    assert!(finished.iter().all(|e| e["status"] == "done"));

    let r2 =
        exec(&p.path, &["review_v1", "--params", REVIEW_PARAMS, "--run-id", "s2", "--json", "--jobs", "4"]);
    assert_eq!(r2.code, Some(0), "{r2:?}");
    assert_eq!(summary(&r2)["artifacts"], s["artifacts"]);
}

/// `exec review_v1 --dry-run` on a fresh root, no config, no params: done.
fn dry_run_review_v1_on_a_fresh_root() {
    let p = project("dry");
    let r = exec(&p.path, &["review_v1", "--dry-run"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.starts_with("done: review_v1 run r-"), "{r:?}");
    let r = exec(&p.path, &["review_v1", "--dry-run", "--json"]);
    let s = summary(&r);
    assert_eq!(s["status"], "done");
    // The generated merge request is a MergeRequestV1 made to exercise the
    // workflow: one change (so `review_file`'s foreach runs an item), every
    // property filled.
    let change =
        json!({"new_path": "", "old_path": "", "diff": "", "new_file": false, "deleted_file": false});
    assert_eq!(
        s["artifacts"]["mr"],
        json!({"iid": 0, "title": "", "source_branch": "", "target_branch": "", "changes": [change]})
    );
    let st = state(&p.path, "review_v1", s["run_id"].as_str().unwrap());
    let items =
        st["steps"].as_array().unwrap().iter().find(|x| x["id"] == "review_file").unwrap()["items"].clone();
    assert_eq!(items.as_array().map(Vec::len), Some(1), "{st}");
    // Every bundled workflow: a `think` step with a success schema is answered from it,
    // not asked of the engine (which failed the schema until the run failed).
    for w in ["release_notes", "ticket_grooming"] {
        let r = exec(&p.path, &[w, "--dry-run"]);
        assert_eq!(r.code, Some(0), "{w}: {r:?}");
    }
    // An optional param without a default is sampled too: a dry run needs no input.
    p.write(
        "workflows/opt.yaml",
        "id: opt\nparams:\n  who: {type: string}\nsteps:\n  - id: a\n    call: prompt.say\n    input_template: {text: \"hi <<params.who>>\"}\n",
    );
    let r = exec(&p.path, &["opt", "--dry-run"]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

/// The same workflow with its servers reached over Streamable HTTP.
fn review_v1_over_streamable_http() {
    let url = fixture::serve_http();
    let p = project("http");
    let toml: String =
        ["gitlab", "context", "ci"].iter().map(|n| format!("[servers.{n}]\nurl = \"{url}\"\n")).collect();
    p.write("savant-think.toml", toml);
    let r = exec(&p.path, &["review_v1", "--params", REVIEW_PARAMS, "--json"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let s = summary(&r);
    assert_eq!(s["status"], "done");
    assert_eq!(s["artifacts"]["test_run"]["passed"], 12);
}

const REMOTE: &str = r#"id: remote
steps:
  - id: list
    call: engine.think_workflows_list
    capture_as: listed
"#;

/// `savant-think serve --http` with a bearer token as the server: the token
/// comes from `token_env`; without it the server is offline (401).
fn serve_over_http_with_a_token() {
    let served = project("served");
    let mut server = KillOnDrop(
        cmd(
            &served.path,
            &["serve", "--http", "127.0.0.1:0", "--token", "s3cret", "--root", served.path.to_str().unwrap()],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    );
    let mut stderr = BufReader::new(server.0.stderr.take().unwrap());
    let mut url = String::new();
    let mut line = String::new();
    while url.is_empty() && stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(at) = line.find("http://") {
            url = line[at..].split_whitespace().next().unwrap().to_owned();
        }
        line.clear();
    }
    assert!(url.ends_with("/mcp"), "no URL from serve");
    // Keep draining the server's logs.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));

    let p = project("remote");
    p.write("workflows/remote.yaml", REMOTE);
    p.write(
        "savant-think.toml",
        format!("[servers.engine]\nurl = \"{url}\"\ntoken_env = \"REMOTE_TOKEN\"\n"),
    );
    let root = p.path.to_str().unwrap();
    let mut c = cmd(&p.path, &["exec", "remote", "--json", "--root", root]);
    c.env("REMOTE_TOKEN", "s3cret");
    let r = run_cmd(c);
    assert_eq!(r.code, Some(0), "{r:?}");
    let listed = &summary(&r)["artifacts"]["listed"]["workflows"];
    assert!(listed.as_array().unwrap().iter().any(|w| w["id"] == "review_v1"), "{listed}");

    let mut c = cmd(&p.path, &["exec", "remote", "--json", "--root", root]);
    c.env_remove("REMOTE_TOKEN");
    let r = run_cmd(c);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert_eq!(summary(&r)["reason"]["error"], "SERVER_OFFLINE");
}

/// A child process killed (and reaped) when the test ends, passed or not.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const FAILURES: &str = r#"id: failures
steps:
  - id: offline
    call: broken.anything
  - id: slow
    call: slowpoke.sleep
    input_template: { ms: 20000 }
  - id: fails
    call: slowpoke.fail
  - id: typo
    call: slowpoke.slep
"#;

/// A server that cannot start, a call that times out, a tool error and an
/// unknown tool: each a recorded failure (events, summary, run history),
/// exit 1, the run still running and resumable.
fn failures_are_recorded_results() {
    let p = project("fail");
    let log = p.path.join("calls.log");
    p.write("workflows/failures.yaml", FAILURES);
    let toml = format!(
        "[servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n{}",
        stdio_server("slowpoke", &log, "timeout = \"300ms\"")
    );
    p.write("savant-think.toml", toml);
    let r = exec(&p.path, &["failures", "--run-id", "f1", "--json", "--jobs", "4"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let all = events(&r);
    let codes: BTreeMap<String, String> = all
        .iter()
        .filter(|e| e["event"] == "step_finished")
        .map(|e| {
            assert_eq!(e["status"], "failed", "{e}");
            (e["step_id"].as_str().unwrap().to_owned(), e["error"]["error"].as_str().unwrap().to_owned())
        })
        .collect();
    let want: BTreeMap<String, String> = [
        ("offline", "SERVER_OFFLINE"),
        ("slow", "TIMEOUT"),
        ("fails", "TOOL_ERROR"),
        ("typo", "TOOL_NOT_FOUND"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b.to_owned()))
    .collect();
    assert_eq!(codes, want);
    let typo = all.iter().find(|e| e["step_id"] == "typo" && e["event"] == "step_finished").unwrap();
    assert_eq!(typo["error"]["details"]["help"], "did you mean `slowpoke.sleep`?");
    let s = summary(&r);
    assert_eq!(s["status"], "stopped");
    // The first failure in the workflow's order is the reason.
    assert_eq!(s["reason"]["error"], "SERVER_OFFLINE");
    assert_eq!(s["reason"]["step_id"], "offline");
    assert_eq!(s["resume"], "savant-think exec failures --run-id f1");

    let st = state(&p.path, "failures", "f1");
    assert_eq!(st["status"], "running");
    let thoughts: Vec<&str> =
        st["history"].as_array().unwrap().iter().filter_map(|h| h["thought"].as_str()).collect();
    assert_eq!(thoughts.len(), 4, "{thoughts:?}");
    assert!(thoughts.iter().any(|t| t.contains("`slow` failed: TIMEOUT")), "{thoughts:?}");

    // The timed-out server was stopped at the end too.
    let (_, lines) = calls(&log);
    for pid in lines.iter().filter_map(|l| l["pid"].as_u64()) {
        assert_gone(pid);
    }
}

const LOCAL: &str = r#"id: local
steps:
  - id: run
    call: local_exec
    input_template: { command: "echo hi; echo there" }
    capture_as: out
  - id: read
    call: local.read
    input_template: { path: "notes/a.txt" }
    capture_as: file
"#;

/// local_exec is refused without --allow-exec or an allowlist; allowed, it
/// runs (through a shell with --allow-exec, without one from the allowlist).
fn local_exec_policy() {
    let p = project("local");
    // A workflow given by path, outside workflows/.
    let wf = p.write("other/local.yaml", LOCAL).display().to_string();
    p.write("workflows/local.yaml", LOCAL);
    p.write("notes/a.txt", "hello");
    let r = exec(&p.path, &[&wf, "--json", "--run-id", "l1"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let s = summary(&r);
    assert_eq!(s["reason"]["error"], "EXEC_NOT_ALLOWED");
    assert_eq!(s["resume"], format!("savant-think exec {wf} --run-id l1"));

    // Resumed, now allowed: the rest of the run.
    let r = exec(&p.path, &[&wf, "--json", "--run-id", "l1", "--allow-exec"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let a = &summary(&r)["artifacts"];
    assert_eq!(a["out"]["stdout"], "hi\nthere\n");
    assert_eq!(a["out"]["exit_code"], 0);
    assert_eq!(a["file"]["content"], "hello");

    // The allowlist runs the program with no shell: `;` is a plain argument.
    p.write("savant-think.toml", "[local]\nexec_allow = [\"echo\"]\n");
    let r = exec(&p.path, &["local", "--json"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(summary(&r)["artifacts"]["out"]["stdout"], "hi; echo there\n");
}

/// local_read refuses `..`, absolute paths outside the root and symlinks
/// out of it; reads files inside, capped.
fn local_read_policy() {
    let p = project("read");
    let outside = Root::new("outside");
    outside.write("secret.txt", "secret");
    p.write("in/ok.txt", "x".repeat(100));
    p.write("savant-think.toml", "[local]\nread_max_bytes = 10\n");
    std::os::unix::fs::symlink(outside.path.join("secret.txt"), p.path.join("in/link.txt")).unwrap();
    std::os::unix::fs::symlink(&outside.path, p.path.join("in/dirlink")).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mux = Multiplexer::new(Arc::new(Engine::new(&p.path).unwrap()), MuxOptions::default());
    let secret = outside.path.join("secret.txt").display().to_string();
    for (path, code) in [
        ("../outside/secret.txt", "PATH_OUTSIDE_ROOT"),
        ("in/../../x", "PATH_OUTSIDE_ROOT"),
        (secret.as_str(), "PATH_OUTSIDE_ROOT"),
        ("in/link.txt", "PATH_OUTSIDE_ROOT"),
        ("in/dirlink/secret.txt", "PATH_OUTSIDE_ROOT"),
        ("in/missing.txt", "NOT_FOUND"),
        ("in", "NOT_A_FILE"),
    ] {
        let out = rt.block_on(mux.call("local_read", json!({"path": path})));
        assert!(!out.ok, "{path}: {out:?}");
        assert_eq!(out.output["error"], code, "{path}: {out:?}");
    }
    let out = rt.block_on(mux.call("local_read", json!({"path": "in/ok.txt"})));
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["content"], "xxxxxxxxxx");
    assert_eq!(out.output["bytes"], 100);
    assert_eq!(out.output["truncated"], true);
    // local_exec is not even listed without permission.
    let names: Vec<String> = rt.block_on(mux.list()).into_iter().map(|t| t.name).collect();
    assert!(
        names.contains(&"local_read".to_owned()) && !names.contains(&"local_exec".to_owned()),
        "{names:?}"
    );
    let out = rt.block_on(mux.call("local_exec", json!({"command": "true"})));
    assert_eq!(out.output["error"], "EXEC_NOT_ALLOWED");
}

/// The multiplexer in-process: routing of engine, dotted and underscored
/// names, did-you-mean, lazy start and a clean shutdown.
fn multiplexer_routes_and_stops() {
    let p = project("mux");
    let log = p.path.join("calls.log");
    p.write("savant-think.toml", stdio_server("gitlab", &log, ""));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mux = Multiplexer::new(Arc::new(Engine::new(&p.path).unwrap()), MuxOptions::default());
    rt.block_on(async {
        // Nothing starts until it is needed.
        let out = mux.call("think.workflows_list", json!({})).await;
        assert!(out.ok, "{out:?}");
        assert!(!log.exists());
        let out = mux.call("think_plna", json!({})).await;
        assert_eq!(out.output["error"], "TOOL_NOT_FOUND");
        assert_eq!(out.output["details"]["help"], "did you mean `think_plan`?");
        let out = mux.call("gitlab_get_merge_request", json!({})).await;
        assert!(out.ok, "{out:?}");
        assert_eq!(out.output["iid"], 7);
        let out = mux.call("gitlab.create_note", json!({"body": "b"})).await;
        assert_eq!(out.output["body"], "b");
        let out = mux.call("gitlab.get_merge_requets", json!({})).await;
        assert_eq!(out.output["details"]["help"], "did you mean `gitlab.get_merge_request`?");
        let out = mux.call("gitlba.create_note", json!({})).await;
        assert_eq!(out.output["error"], "TOOL_NOT_FOUND");
        assert_eq!(out.output["details"]["help"], "did you mean `gitlab.create_note`?");
        // The closest tools, each with the server that provides it; the
        // tool's own part is enough to find it.
        let out = mux.call("create_notes", json!({})).await;
        assert_eq!(
            out.output["details"]["closest"][0],
            json!({"tool": "gitlab.create_note", "server": "gitlab"})
        );
        // The server dies during the call: restarted, and the call retried once.
        let out = mux.call("gitlab.flaky", json!({})).await;
        assert!(out.ok, "{out:?}");
        assert_eq!(out.output["survived"], true);
        let out = mux.call("prompt.say", json!({"message": 3})).await;
        assert_eq!(out.output["error"], "INVALID_INPUT");
        let names: Vec<String> = mux.list().await.into_iter().map(|t| t.name).collect();
        for want in ["think_plan", "prompt_say", "local_read", "gitlab_get_merge_request", "gitlab_sleep"] {
            assert!(names.contains(&want.to_owned()), "{want} not listed: {names:?}");
        }
        mux.shutdown().await;
    });
    let (counts, lines) = calls(&log);
    assert_eq!(counts.values().sum::<usize>(), 4, "{counts:?}");
    assert_eq!(counts["flaky"], 2, "{counts:?}");
    // Started once, then once more after the crash.
    let pids: Vec<u64> = lines.iter().filter_map(|l| l["pid"].as_u64()).collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert_gone(pid);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--fixture-server") {
        fixture::serve_stdio();
        return;
    }
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned().unwrap_or_default();
    let tests: &[(&str, fn())] = &[
        ("review_v1_over_stdio_servers", review_v1_over_stdio_servers),
        ("dry_run_review_v1_on_a_fresh_root", dry_run_review_v1_on_a_fresh_root),
        ("review_v1_over_streamable_http", review_v1_over_streamable_http),
        ("serve_over_http_with_a_token", serve_over_http_with_a_token),
        ("failures_are_recorded_results", failures_are_recorded_results),
        ("local_exec_policy", local_exec_policy),
        ("local_read_policy", local_read_policy),
        ("multiplexer_routes_and_stops", multiplexer_routes_and_stops),
        ("kill_9_then_resume_repeats_no_done_step", stops::kill_9_then_resume_repeats_no_done_step),
        ("validation_failures_retry_then_fail", stops::validation_failures_retry_then_fail),
        ("ctrl_c_stops_exec_and_its_servers", stops::ctrl_c_stops_exec_and_its_servers),
        ("usage_errors_exit_2", stops::usage_errors_exit_2),
    ];
    let mut failed = Vec::new();
    let selected: Vec<_> = tests.iter().filter(|(name, _)| name.contains(&filter)).collect();
    let started = std::time::Instant::now();
    println!("running {} test(s)", selected.len());
    for (name, test) in &selected {
        let ok = std::panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(*name);
        }
    }
    // The same summary line as libtest's, so `.ci/run` counts these tests too.
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        selected.len() - failed.len(),
        failed.len(),
        tests.len() - selected.len(),
        started.elapsed().as_secs_f64()
    );
    if !failed.is_empty() {
        println!("failed: {failed:?}");
        std::process::exit(1);
    }
}
