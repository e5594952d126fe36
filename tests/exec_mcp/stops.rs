//! `exec` interrupted and refused: `kill -9` then the same run again,
//! results that fail their schema, Ctrl-C, and usage errors (with the
//! helpers of main.rs).

use super::*;

fn long_workflow(n: usize) -> String {
    let mut y = String::from("id: long\nsteps:\n");
    for i in 0..n {
        y.push_str(&format!("  - id: s{i}\n    call: tool.t{}\n", i % 5));
        // Three chains: with --jobs, three steps are ready at a time.
        if i >= 3 {
            y.push_str(&format!("    deps: [s{}]\n", i - 3));
        }
        y.push_str("    success_schema: { type: object, required: [n], properties: { n: { type: integer, minimum: 3 } } }\n");
    }
    y
}

/// kill -9 in the middle of `exec --dry-run` (fsync on), then the same run
/// id again: no step acknowledged as done runs again, each step has exactly
/// one result in the run's history, and the run reaches done.
pub(crate) fn kill_9_then_resume_repeats_no_done_step() {
    for jobs in ["1", "3"] {
        kill_9_then_resume(jobs);
    }
}

fn kill_9_then_resume(jobs: &str) {
    let p = project("kill");
    p.write("workflows/long.yaml", long_workflow(300));
    let root = p.path.to_str().unwrap();
    let mut c = cmd(
        &p.path,
        &["exec", "long", "--dry-run", "--json", "--run-id", "k1", "--jobs", jobs, "--root", root],
    );
    c.env("SAVANT_STATE_FSYNC", "1").stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut acknowledged = BTreeSet::new();
    let reader = BufReader::new(child.stdout.take().unwrap());
    for line in reader.lines() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["event"] == "step_finished" && e["status"] == "done" {
            acknowledged.insert(e["step_id"].as_str().unwrap().to_owned());
        }
        if acknowledged.len() == 40 {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(acknowledged.len(), 40, "the first exec ended early");

    let r = exec(&p.path, &["long", "--dry-run", "--json", "--run-id", "k1", "--jobs", jobs]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let all = events(&r);
    assert_eq!(all[0]["event"], "run_started");
    assert_eq!(all[0]["resumed"], true);
    let rerun: Vec<&str> =
        all.iter().filter(|e| e["event"] == "step_started").map(|e| e["step_id"].as_str().unwrap()).collect();
    for id in &rerun {
        assert!(!acknowledged.contains(*id), "{id} was done before the kill and ran again");
    }
    assert_eq!(summary(&r)["status"], "done");
    let st = state(&p.path, "long", "k1");
    let mut results = BTreeMap::new();
    for h in st["history"].as_array().unwrap().iter().filter(|h| h["type"] == "result") {
        *results.entry(h["step_id"].as_str().unwrap().to_owned()).or_insert(0) += 1;
    }
    assert_eq!(results.len(), 300);
    assert!(results.values().all(|&n| n == 1), "a step has two results");
    // The dry-run answer respects the schema's minimum.
    assert_eq!(st["steps"][0]["result"], json!({"n": 3}));
}

const INVALID: &str = r#"id: invalid
steps:
  - id: lint
    call: ci.run_linters
    retry: { max: 2 }
    success_schema: { type: object, required: [passed] }
"#;

/// A result that fails its success schema is re-run up to `retry.max`
/// times; then the run fails, exit 1, with the engine's reason.
pub(crate) fn validation_failures_retry_then_fail() {
    let (p, log) = fixture_project("invalid", INVALID, "ci");
    let r = exec(&p.path, &["invalid", "--json"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let finished: Vec<Value> = events(&r).into_iter().filter(|e| e["event"] == "step_finished").collect();
    assert_eq!(finished.len(), 2, "{r:?}");
    assert!(finished.iter().all(|e| e["status"] == "invalid" && e["error"]["error"] == "VALIDATION_FAILED"));
    assert_eq!(finished[1]["attempt"], 2);
    let s = summary(&r);
    assert_eq!(s["status"], "failed");
    assert!(
        s["reason"]["details"]["message"].as_str().unwrap().contains("failed its success schema 2 times"),
        "{s}"
    );
    assert_eq!(calls(&log).0["run_linters"], 2);
    // A failed run stays failed: exec again says so, exit 1.
    let run_id = s["run_id"].as_str().unwrap();
    let again = exec(&p.path, &["invalid", "--json", "--run-id", run_id]);
    assert_eq!(again.code, Some(1), "{again:?}");
    assert_eq!(summary(&again)["status"], "failed");
    assert_eq!(calls(&log).0["run_linters"], 2);
}

const SLEEPY: &str = r#"id: sleepy
steps:
  - id: nap
    call: slowpoke.sleep
    input_template: { ms: 60000 }
"#;

/// Ctrl-C (SIGINT to exec alone) in the middle of a call: exit 130, the
/// server it started is stopped, and the step is still to do.
pub(crate) fn ctrl_c_stops_exec_and_its_servers() {
    let (p, log) = fixture_project("sleepy", SLEEPY, "slowpoke");
    let mut c =
        cmd(&p.path, &["exec", "sleepy", "--json", "--run-id", "z1", "--root", p.path.to_str().unwrap()]);
    c.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = KillOnDrop(c.spawn().unwrap());
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let started = lines.next().unwrap().unwrap();
    assert!(started.contains("run_started"), "{started}");
    let step = lines.next().unwrap().unwrap();
    assert!(step.contains("step_started"), "{step}");
    // Wait until the server has the call.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !calls(&log).0.contains_key("sleep") {
        assert!(Instant::now() < deadline, "the call never reached the server");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.0.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The stream ends with how to resume, not mid-step.
    let last: serde_json::Value = serde_json::from_str(&lines.last().unwrap().unwrap()).unwrap();
    assert_eq!(last["event"], "summary", "{last}");
    assert_eq!(last["status"], "interrupted", "{last}");
    assert_eq!(last["resume"], "savant-think exec sleepy --run-id z1", "{last}");
    let (_, logged) = calls(&log);
    for server in logged.iter().filter_map(|l| l["pid"].as_u64()) {
        assert_gone(server);
    }
    assert_eq!(state(&p.path, "sleepy", "z1")["steps"][0]["status"], "ready");
}

/// Usage errors exit 2; a params error names the field.
pub(crate) fn usage_errors_exit_2() {
    let p = project("usage");
    for (args, needle) in [
        (vec!["nope"], "UNKNOWN_WORKFLOW"),
        (vec!["review_v1"], "INVALID_PARAMS"),
        (vec!["review_v1", "--params", "{bad"], "--params is not valid JSON"),
        (vec!["review_v1", "--jobs", "0"], "jobs"),
    ] {
        let r = exec(&p.path, &args);
        assert_eq!(r.code, Some(2), "{args:?}: {r:?}");
        assert!(r.stderr.contains(needle), "{args:?}: {r:?}");
    }
    // With --json every usage error is the one `error` event, the early ones too.
    let r = exec(&p.path, &["review_v1", "--params", "{bad", "--json"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert_eq!(events(&r)[0]["event"], "error", "{r:?}");
    assert_eq!(events(&r)[0]["error"], "INVALID_INPUT", "{r:?}");
    let r = exec(&p.path, &["nope", "--json"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert_eq!(events(&r)[0]["event"], "error");
    assert_eq!(events(&r)[0]["error"], "UNKNOWN_WORKFLOW");
    p.write("savant-think.toml", "[servers.x]\nurl = \"http://127.0.0.1:1/mcp\"\ncommand = \"y\"\n");
    let r = exec(&p.path, &["review_v1", "--dry-run"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("INVALID_CONFIG") && r.stderr.contains("both `command` and `url`"), "{r:?}");
}
