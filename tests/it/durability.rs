//! Kill -9 at every state-writing system call: the real `savant-think`
//! binary run under `strace -f -e inject=<syscall>:signal=KILL:when=N`, for
//! each `rename`, `ftruncate`, `fsync`, `fdatasync` and `write` it makes
//! during a fresh `plan` over an existing run, a `next`, a `reset` and a
//! `next` that compacts the journal, and an `answer` to a waiting step.
//!
//! After every kill the run loads and is exactly the run before the command
//! (every acknowledged result in place) or the run after it, and the same
//! command then completes. Without strace the test says so and passes,
//! unless `SAVANT_REQUIRE_STRACE=1`.

use crate::support::root::reply;
use crate::support::{BIN, Root, copy_dir, generate};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const STRACE: &str = "/usr/bin/strace";
const SYSCALLS: [&str; 9] =
    ["rename", "renameat", "renameat2", "ftruncate", "fsync", "fdatasync", "write", "unlink", "unlinkat"];

/// A temporary project root with a `foreach` workflow `crashy`; every
/// command in it fsyncs.
fn root(name: &str) -> Root {
    Root::with_workflows(name, &[("crashy", &generate::foreach("crashy"))]).env("SAVANT_STATE_FSYNC", "1")
}

/// A copy of `template` (workflow and run state).
fn copy(template: &Root, name: &str) -> Root {
    let copy = root(name);
    copy_dir(&template.join(".savant"), &copy.join(".savant"));
    copy_dir(&template.join("workflows"), &copy.join("workflows"));
    copy
}

/// The run's state, reduced to what a user relies on (null when there is
/// no live run).
fn run_of(root: &Root) -> Value {
    run_named(root, "r")
}

/// Run `r` and its fork `f`.
fn run_and_fork(root: &Root) -> Value {
    json!([run_named(root, "r"), run_named(root, "f")])
}

fn run_named(root: &Root, run_id: &str) -> Value {
    let args = ["state", "get", "crashy", "--run-id", run_id];
    let out = root.command(&args).output().unwrap();
    let s = reply(&out, &args);
    if s["error"] == "UNKNOWN_RUN" {
        return Value::Null;
    }
    assert_eq!(out.status.code(), Some(0), "{s}");
    reduced(&s)
}

fn reduced(s: &Value) -> Value {
    json!({ "version": s["version"], "status": s["status"], "params": s["params"], "steps": s["steps"] })
}

/// Every archived copy of the run, reduced; each must read whole.
fn archives_of(root: &Root) -> Vec<Value> {
    let list = root.ok(&["state", "list", "--archived"]);
    let ids = list["runs"].as_array().unwrap().iter().map(|r| r["archive_id"].as_str().unwrap().to_owned());
    ids.map(|id| {
        reduced(&root.ok(&["state", "get", "crashy", "--run-id", "r", "--archived", "--archive-id", &id]))
    })
    .collect()
}

/// Runs `args` under strace in `root`; returns strace's output.
fn strace(root: &Root, trace: &str, extra: &[&str], args: &[&str]) -> Output {
    let mut all = vec!["-f", "-qq", "-e", trace];
    all.extend_from_slice(extra);
    all.push(BIN);
    all.extend_from_slice(args);
    root.process(STRACE, &all).output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn result_of(j: usize) -> String {
    json!({ "answer": j }).to_string()
}

/// A root with run `r` over `items` items, the first `done` of them answered.
fn seeded(name: &str, items: usize, done: usize) -> Root {
    let root = root(name);
    let params = generate::items(items).to_string();
    root.ok(&["plan", "crashy", "--run-id", "r", "--params", &params]);
    for j in 0..done {
        root.ok(&next_args(j).iter().map(String::as_str).collect::<Vec<_>>());
    }
    root
}

fn next_args(j: usize) -> Vec<String> {
    ["next", "crashy", "--run-id", "r", "--step", &format!("each[{j}]"), "--result", &result_of(j)]
        .map(str::to_owned)
        .to_vec()
}

fn strace_usable() -> bool {
    let usable = Path::new(STRACE).exists()
        && Command::new(STRACE)
            .args(["-qq", "-o", "/dev/null", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !usable {
        crate::support::skip::skip(
            "the kill-at-every-syscall test",
            &format!("{STRACE} is missing or cannot trace here (apt-get install strace)"),
            Some("SAVANT_REQUIRE_STRACE"),
        );
    }
    usable
}

/// Counts the calls of each syscall in SYSCALLS that `args` makes on a copy
/// of `template`.
fn count_calls(template: &Root, args: &[&str]) -> Vec<(&'static str, usize)> {
    let root = copy(template, "count");
    let log = root.join("strace.log");
    let trace = format!("trace={}", SYSCALLS.join(","));
    let out = strace(&root, &trace, &["-o", log.to_str().unwrap()], args);
    assert!(out.status.success(), "{args:?} under strace: {}", text(&out));
    let log = std::fs::read_to_string(&log).unwrap();
    SYSCALLS
        .iter()
        .map(|&sc| {
            let n = log
                .lines()
                .filter(|l| {
                    let call = l.split_once(' ').map_or(*l, |(_, rest)| rest).trim_start();
                    call.starts_with(&format!("{sc}(")) || l.starts_with(&format!("{sc}("))
                })
                .count();
            (sc, n)
        })
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// Kills `args` at every call of every syscall it makes and checks what is
/// left: the run `before` or the run `after` (as `run_of` shows them).
fn kill_everywhere(name: &str, template: &Root, args: &[&str]) -> usize {
    kill_everywhere_seen(name, template, args, run_of)
}

/// [`kill_everywhere`], with what is compared before and after made by `run_of`.
fn kill_everywhere_seen(name: &str, template: &Root, args: &[&str], run_of: fn(&Root) -> Value) -> usize {
    let before = run_of(template);
    let mut archived = archives_of(template);
    let after = {
        let root = copy(template, &format!("{name}-after"));
        root.ok(args);
        archived.extend(archives_of(&root));
        run_of(&root)
    };
    assert_ne!(before, after, "{name}: the command must change the run");
    let calls = count_calls(template, args);
    assert!(
        calls.iter().any(|&(sc, _)| sc.starts_with("rename")) || ["next", "prune", "answer"].contains(&name),
        "{name}: no rename seen: {calls:?}"
    );
    assert!(calls.iter().any(|&(sc, _)| sc == "fdatasync" || sc == "fsync"), "{name}: no fsync: {calls:?}");
    let mut kills = 0;
    for (syscall, count) in calls {
        for when in 1..=count {
            let root = copy(template, &format!("{name}-{syscall}-{when}"));
            let inject = format!("inject={syscall}:signal=KILL:when={when}");
            let out = strace(&root, &format!("trace={syscall}"), &["-o", "/dev/null", "-e", &inject], args);
            let killed = !out.status.success();
            kills += usize::from(killed);
            let now = run_of(&root);
            let at = format!("{name}: killed at {syscall} #{when} (killed: {killed})");
            assert!(
                now == before || now == after,
                "{at}: the run is neither the old nor the new one:\n{now}"
            );
            // An archived copy is whole and one the command's start or end
            // has (a kill may leave the old run live beside its copy).
            for copy in archives_of(&root) {
                assert!(archived.contains(&copy), "{at}: an archived copy that is no run's:\n{copy}");
            }
            if !killed {
                assert_eq!(now, after, "{at}");
            }
            if now == before {
                // The command can be made again, and then has its effect.
                root.ok(args);
                assert_eq!(run_of(&root), after, "{at}: after the retry");
            } else if name == "plan" {
                // The new run takes results (cutting any old events away).
                let next = next_args(0);
                root.ok(&next.iter().map(String::as_str).collect::<Vec<_>>());
                let run = run_of(&root);
                assert_eq!(
                    (&run["version"], &run["steps"][0]["items"][0]["status"]),
                    (&json!(1), &json!("done"))
                );
            }
        }
    }
    eprintln!("{name}: {kills} kills");
    kills
}

#[test]
fn a_kill_at_any_state_write_keeps_the_old_run_or_the_new_one() {
    if !strace_usable() {
        return;
    }
    // A fresh plan over a run with acknowledged results (in its journal).
    let template = seeded("plan", 8, 5);
    // New params: the new run must be told apart from the old run's snapshot
    // with its journal lost (both at version 0, nothing done).
    let params = json!({ "items": (0..3).map(|i| format!("new{i}")).collect::<Vec<_>>() }).to_string();
    let kills = kill_everywhere(
        "plan",
        &template,
        &["plan", "crashy", "--run-id", "r", "--replace", "--params", &params],
    );
    assert!(kills >= 3, "plan: only {kills} kills");

    // `next`: one more result appended.
    let next = next_args(5);
    let next: Vec<&str> = next.iter().map(String::as_str).collect();
    kill_everywhere("next", &template, &next);

    // `reset` back to the start, discarding the results.
    kill_everywhere("reset", &template, &["reset", "crashy", "--run-id", "r", "--force"]);

    // `state delete` archives the run, then removes it; `state restore`
    // brings it back from the archive.
    kill_everywhere("delete", &template, &["state", "delete", "crashy", "--run-id", "r"]);
    let deleted = copy(&template, "deleted");
    deleted.ok(&["state", "delete", "crashy", "--run-id", "r"]);
    kill_everywhere("restore", &deleted, &["state", "restore", "crashy", "--run-id", "r"]);

    // `state prune` of the (unfinished, so named) run.
    kill_everywhere("prune", &template, &["state", "prune", "--status", "running"]);

    // `upgrade` onto an edited file (a new step): one snapshot.
    let edited = copy(&template, "edited");
    let text = std::fs::read_to_string(edited.join("workflows/crashy.yaml")).unwrap();
    edited.write("workflows/crashy.yaml", format!("{text}  - id: added_later\n    call: prompt.say\n"));
    kill_everywhere("upgrade", &edited, &["upgrade", "crashy", "--run-id", "r"]);

    // `fork` writes a new run and leaves the source as it was.
    let fork = ["fork", "crashy", "--run-id", "r", "--from", "each", "--new-run-id", "f"];
    kill_everywhere_seen("fork", &template, &fork, run_and_fork);

    // `answer`: a person's answer to a waiting step, appended as a result
    // is: never lost once acknowledged, never recorded twice.
    let waiting = root("answer");
    waiting.write(
        "workflows/ok.yaml",
        "id: ok\nsteps:\n  - id: ask\n    await: {ask: \"ok?\", schema: {type: boolean}, timeout: never}\n",
    );
    waiting.ok(&["plan", "ok", "--run-id", "r"]);
    let answer = ["answer", "ok", "--run-id", "r", "--step", "ask", "--value", "true"];
    kill_everywhere_seen("answer", &waiting, &answer, |root| {
        let args = ["state", "get", "ok", "--run-id", "r"];
        reduced(&reply(&root.command(&args).output().unwrap(), &args))
    });

    // A `next` that compacts: the journal holds COMPACT_AFTER events, the
    // next one folds them into the snapshot.
    const C: usize = savant_think::runtime::COMPACT_AFTER;
    let template = seeded("compact", C + 8, C);
    let next = next_args(C);
    let next: Vec<&str> = next.iter().map(String::as_str).collect();
    kill_everywhere("compact", &template, &next);
}

/// `serve --http` answers a `think_next` only after the `fdatasync` of the
/// journal line it appended has returned: acknowledged means durable
/// whatever thread the call or its flush ran on (issue 48 tried handing
/// only the flush off the async worker). Traced with `strace -f -y`: the
/// flush of the run's journal completes before the answer's first byte is
/// written to the socket.
#[test]
fn serve_http_answers_a_next_only_after_its_journal_line_is_flushed() {
    if !strace_usable() {
        return;
    }
    let root = seeded("http-flush", 8, 5);
    let trace = root.join("strace.out");
    let (trace_arg, root_arg) = (trace.to_str().unwrap(), root.path.to_str().unwrap());
    let args = ["-f", "-y", "-s", "4096", "-e", "trace=fdatasync,writev,sendto,write", "-o", trace_arg, BIN];
    let mut command = root.process(STRACE, &args);
    command.args(["serve", "--http", "127.0.0.1:0", "--stateless", "--root", root_arg]);
    command.env_remove("SAVANT_THINK_TOKEN").env("LOG_LEVEL", "error");
    let mut server = crate::support::Server::start(command, false);
    let arguments =
        json!({"workflow": "crashy", "run_id": "r", "step_id": "each[5]", "result_snapshot": {"answer": 5}});
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "think_next", "arguments": arguments}});
    let (status, _, body) =
        crate::support::serve::post(&server.addr, "application/json", &call.to_string(), &[]);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("each[6]") && !body.contains("isError\":true"),
        "the next item's instruction: {body}"
    );
    // SIGTERM to the traced server: it exits, strace writes out its trace.
    let strace = server.child.id();
    let children = std::fs::read_to_string(format!("/proc/{strace}/task/{strace}/children")).unwrap();
    let served = children.split_whitespace().next().expect("the traced server's pid").to_owned();
    assert!(Command::new("kill").args(["-TERM", &served]).status().unwrap().success());
    let _ = server.child.wait();
    let trace = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    let journal_flush = lines
        .iter()
        .position(|l| l.contains("fdatasync(") && l.contains("crashy__r"))
        .unwrap_or_else(|| panic!("no fdatasync of the run's journal:\n{trace}"));
    // Where that flush returned: its own line, or its `resumed` line.
    let pid = lines[journal_flush].split_whitespace().next().unwrap();
    let returned = if lines[journal_flush].contains("unfinished") {
        (journal_flush..lines.len())
            .find(|&i| lines[i].starts_with(pid) && lines[i].contains("fdatasync resumed"))
            .expect("the flush returned")
    } else {
        journal_flush
    };
    assert!(lines[returned].ends_with("= 0"), "the flush succeeded: {}", lines[returned]);
    let answered = lines
        .iter()
        .position(|l| l.contains("socket:[") && l.contains("HTTP/1.1 200"))
        .unwrap_or_else(|| panic!("no answer written to the socket:\n{trace}"));
    assert!(
        returned < answered,
        "answered (line {answered}) before the flush returned (line {returned}):\n{trace}"
    );
}
