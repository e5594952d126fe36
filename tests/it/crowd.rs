//! Threads under a crowd (issue 46.2, docs/threat-model.md): 200 clients
//! hammer `serve --http` for a few seconds — most on one run's `think_next`,
//! the rest reading and planning other runs — while the server's
//! `/proc/<pid>/status` `Threads:` is sampled all along. The peak stays under
//! 64; the run's own turns succeed, the others are told `RUN_BUSY` or
//! `STATE_CONFLICT`, nothing is a 5xx or a dropped connection, and other runs
//! are served meanwhile. Bounds and content only, no timings. The server is
//! told `TOKIO_WORKER_THREADS=96`, as tokio would default to on a 96-core
//! host: before the worker cap (`MAX_WORKER_THREADS`) that alone peaked at
//! 138 threads.

use crate::http_protocol::post;
use crate::support::{Root, Server};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The clients at once.
const CLIENTS: usize = 200;
/// Of them, on the one hot run; the rest read and plan other runs.
const HOT: usize = 150;
/// The steps of the hot run: more than a few seconds of turns take.
const STEPS: usize = 400;
/// How long the crowd calls (a length of load, not an assertion).
const LOAD: Duration = Duration::from_secs(4);
/// The runs the readers read, side by side.
const COLD: usize = 5;
/// The bound of issue 46.2.
const MAX_THREADS: usize = 64;

fn workflow() -> String {
    let mut y = String::from("id: long\nsteps:\n");
    for i in 0..STEPS {
        y.push_str(&format!("  - id: s{i}\n    call: prompt.say\n    input_template: {{ text: hi }}\n"));
        if i > 0 {
            y.push_str(&format!("    deps: [s{}]\n", i - 1));
        }
    }
    y
}

fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

/// One `tools/call` on a fresh connection: `Ok(the tool's answer)` (an
/// error answer included), or `Err(what went wrong)` for anything else (a
/// status other than 200, a dropped connection, a body that is no answer).
pub(crate) fn call(addr: &str, tool: &str, arguments: Value) -> Result<Value, String> {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let (status, head, body) = post(addr, "application/json", &request.to_string(), &[]);
    if status != 200 {
        return Err(format!(
            "{tool}: status {status}: {head} {}",
            body.chars().take(200).collect::<String>()
        ));
    }
    let json = body.lines().find_map(|l| l.strip_prefix("data:")).unwrap_or(&body).trim();
    let reply: Value = serde_json::from_str(json).map_err(|e| format!("{tool}: {e}: {body}"))?;
    let text = reply["result"]["content"][0]["text"].as_str().ok_or(format!("{tool}: no answer: {body}"))?;
    serde_json::from_str(text).map_err(|e| format!("{tool}: {e}: {text}"))
}

/// What the crowd saw.
#[derive(Default)]
struct Seen {
    /// Answers by kind: `turn`, `done`, an error code, `read`, `planned`.
    kinds: BTreeMap<String, usize>,
    /// Anything else, verbatim (the first few).
    wrong: Vec<String>,
}

/// A hot client: submits the step it believes current until the run is done
/// or the load ends.
fn hot(
    addr: &str,
    client: usize,
    current: &AtomicUsize,
    finished: &AtomicBool,
    until: Instant,
    seen: &Mutex<Seen>,
) {
    while Instant::now() < until && !finished.load(Ordering::SeqCst) {
        let k = current.load(Ordering::SeqCst);
        let args = json!({"workflow": "long", "run_id": "hot", "step_id": format!("s{k}"),
            "result": {"by": client}});
        let kind = match call(addr, "think_next", args) {
            Ok(v) if v["error"].is_string() => {
                // Another client did this step first: go on to the next.
                if v["error"] == "STATE_CONFLICT" && v["details"]["step_id"] == format!("s{k}") {
                    current.fetch_max(k + 1, Ordering::SeqCst);
                }
                v["error"].as_str().unwrap().to_owned()
            }
            Ok(v) => match v["instruction"]["step_id"].as_str().and_then(|s| s.strip_prefix('s')) {
                Some(next) => {
                    current.fetch_max(next.parse().unwrap(), Ordering::SeqCst);
                    "turn".to_owned()
                }
                None if v["status"] == "done" || v.to_string().contains("\"done\"") => {
                    finished.store(true, Ordering::SeqCst);
                    "done".to_owned()
                }
                None => format!("unexpected answer: {v}"),
            },
            Err(e) => e,
        };
        note(seen, kind);
    }
}

fn note(seen: &Mutex<Seen>, kind: String) {
    let mut seen = seen.lock().unwrap();
    let known = ["turn", "done", "RUN_BUSY", "STATE_CONFLICT", "read", "planned"];
    if known.contains(&kind.as_str()) {
        *seen.kinds.entry(kind).or_insert(0) += 1;
    } else {
        *seen.kinds.entry("wrong".to_owned()).or_insert(0) += 1;
        if seen.wrong.len() < 5 {
            seen.wrong.push(kind);
        }
    }
}

/// A client of other runs: reads the cold runs, plans fresh runs.
fn other(addr: &str, client: usize, until: Instant, seen: &Mutex<Seen>) {
    let mut n = 0;
    while Instant::now() < until {
        n += 1;
        let kind = if n % 2 == 0 {
            let run = format!("cold{}", client % COLD);
            match call(addr, "think_state_get", json!({"workflow": "long", "run_id": run})) {
                Ok(v) if v.to_string().contains(&format!("\"{run}\"")) => "read".to_owned(),
                // A read takes the run's lock too: a crowd of readers may be refused.
                Ok(v) if v["error"] == "RUN_BUSY" => "RUN_BUSY".to_owned(),
                Ok(v) => format!("state_get: {v}"),
                Err(e) => e,
            }
        } else {
            let run = format!("o{client}-{n}");
            match call(addr, "think_plan", json!({"workflow": "long", "run_id": run})) {
                Ok(v) if v["instruction"]["step_id"] == "s0" => "planned".to_owned(),
                Ok(v) => format!("plan: {v}"),
                Err(e) => e,
            }
        };
        note(seen, kind);
    }
}

#[test]
fn two_hundred_clients_on_one_run_stay_under_64_threads() {
    let root = Root::with_workflows("crowd", &[("long", &workflow())]);
    // Fewer waiters than hot clients: the rest are told RUN_BUSY at once.
    root.write("savant-think.toml", "[state]\nmax_lock_waiters = 8\n");
    root.ok(&["plan", "long", "--run-id", "hot"]);
    for i in 0..COLD {
        root.ok(&["plan", "long", "--run-id", &format!("cold{i}")]);
    }
    let mut command = Server::command(&root.path);
    // As on a 96-core host: tokio would start a worker per core.
    command.args(["--stateless"]).env("LOG_LEVEL", "error").env("TOKIO_WORKER_THREADS", "96");
    let server = Server::start(command, false);
    let (addr, pid) = (server.addr.as_str(), server.child.id());
    let idle = threads(pid);

    let (current, finished, stop) = (AtomicUsize::new(0), AtomicBool::new(false), AtomicBool::new(false));
    let (peak, samples) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let seen = Mutex::new(Seen::default());
    let until = Instant::now() + LOAD;
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                peak.fetch_max(threads(pid), Ordering::SeqCst);
                samples.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (current, finished, seen) = (&current, &finished, &seen);
                s.spawn(move || {
                    if i < HOT {
                        hot(addr, i, current, finished, until, seen)
                    } else {
                        other(addr, i, until, seen)
                    }
                })
            })
            .collect();
        for c in clients {
            c.join().unwrap();
        }
        stop.store(true, Ordering::SeqCst);
    });
    let seen = seen.into_inner().unwrap();
    let peak = peak.load(Ordering::SeqCst);
    let report = format!(
        "{:?}; wrong: {:?}; server threads idle {idle}, peak {peak} ({} samples)",
        seen.kinds,
        seen.wrong,
        samples.load(Ordering::SeqCst)
    );
    eprintln!("crowd of {CLIENTS}: {report}");

    assert!(idle > 0 && samples.load(Ordering::SeqCst) > 10, "the server was sampled: {report}");
    assert!(peak < MAX_THREADS, "the server stays under {MAX_THREADS} threads: {report}");
    assert!(seen.wrong.is_empty(), "every answer is a turn, RUN_BUSY or STATE_CONFLICT: {report}");
    let count = |k: &str| seen.kinds.get(k).copied().unwrap_or(0);
    assert!(count("turn") + count("done") > 0, "the run's own turns succeed: {report}");
    assert!(count("RUN_BUSY") + count("STATE_CONFLICT") > 0, "the crowd was refused: {report}");
    assert!(count("read") > 0 && count("planned") > 0, "other runs are served meanwhile: {report}");

    // What the server recorded matches the turns it answered.
    let state = root.ok(&["state", "get", "long", "--run-id", "hot"]);
    assert_eq!(state["version"].as_u64(), Some((count("turn") + count("done")) as u64), "{state}\n{report}");
}
