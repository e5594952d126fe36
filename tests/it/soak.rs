//! Nothing grows over time (issue 46.3; the long version is
//! `benches/soak.py`, figures in docs/PERFORMANCE.md): `serve --http
//! --stateless` on the file store under a mixed load for [`LOAD`] — drivers
//! planning four-step runs and taking them to `done` (one in eight reset and
//! driven again, one in eight forked), a reader of `think_state_list` and
//! `think_state_get`, an inspector client (run list, a run's page, its live
//! stream held open), a client that sends `think_next` and goes away before
//! the answer, and `[state.keep]` pruning archived copies in the background.
//! Its open file descriptors and threads (`/proc/<pid>`) are sampled all
//! along: the most seen in the last quarter is within a tolerance of the
//! most seen in the second (after warm-up), and again once the load has
//! stopped; the engine keeps no more runs than `[state] cached_runs`
//! (`/metrics`); and every result the server acknowledged is in the store
//! at the end, read by a fresh engine. Counts and content only: no timings.

use crate::crowd::call;
use crate::inspect_http::get;
use crate::support::{Root, Server};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the load lasts (a length of load, not an assertion).
const LOAD: Duration = Duration::from_secs(30);
/// The clients taking runs to done.
const DRIVERS: usize = 3;
/// `[state] cached_runs`: far fewer than the runs the soak makes.
const CACHED: usize = 40;
/// What a count may differ by between two samples without being a leak: a
/// few connections in flight, the runtime's blocking threads coming and going.
const FD_SLACK: usize = 24;
const THREAD_SLACK: usize = 8;

/// Four steps, each after the one before.
fn workflow() -> String {
    let mut y = String::from("id: four\nsteps:\n");
    for i in 0..4 {
        y.push_str(&format!("  - id: s{i}\n    call: prompt.say\n    input_template: {{ text: hi }}\n"));
        if i > 0 {
            y.push_str(&format!("    deps: [s{}]\n", i - 1));
        }
    }
    y
}

/// What the soak saw: acknowledged results per run, counts by kind, and the
/// first few wrong answers.
#[derive(Default)]
struct Book {
    acked: BTreeMap<String, BTreeMap<String, Value>>,
    kinds: BTreeMap<String, usize>,
    wrong: Vec<String>,
}

impl Book {
    fn note(&mut self, kind: &str) {
        *self.kinds.entry(kind.to_owned()).or_insert(0) += 1;
    }

    fn wrong(&mut self, what: String) {
        self.note("wrong");
        if self.wrong.len() < 5 {
            self.wrong.push(what);
        }
    }
}

fn proc_count(pid: u32) -> (usize, usize) {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    (fds, threads)
}

/// `think_next` on steps `from..4` of `run`; each acknowledged result is
/// booked as it is answered.
fn drive(addr: &str, book: &Mutex<Book>, run: &str, from: usize, by: usize) -> Result<(), String> {
    for i in from..4 {
        let result = json!({"by": by, "step": i, "run": run});
        let step = format!("s{i}");
        let args = json!({"workflow": "four", "run_id": run, "step_id": step, "result": result});
        let answer = call(addr, "think_next", args)?;
        if answer["error"].is_string() {
            return Err(format!("next {run} {step}: {answer}"));
        }
        let mut book = book.lock().unwrap();
        book.acked.entry(run.to_owned()).or_default().insert(step, result);
        book.note("next");
    }
    Ok(())
}

/// One driver's turn: a fresh run to done, then maybe a reset (driven
/// again) or a fork from `s2` (driven to done).
fn one_run(addr: &str, book: &Mutex<Book>, by: usize, k: usize) -> Result<(), String> {
    let run = format!("d{by}-{k}");
    let planned = call(addr, "think_plan", json!({"workflow": "four", "run_id": run}))?;
    if planned["instruction"]["step_id"] != "s0" {
        return Err(format!("plan {run}: {planned}"));
    }
    book.lock().unwrap().acked.insert(run.clone(), BTreeMap::new());
    drive(addr, book, &run, 0, by)?;
    if k % 8 == 3 {
        let reset = call(addr, "think_reset", json!({"workflow": "four", "run_id": run, "force": true}))?;
        if reset["error"].is_string() {
            return Err(format!("reset {run}: {reset}"));
        }
        book.lock().unwrap().acked.insert(run.clone(), BTreeMap::new());
        drive(addr, book, &run, 0, by)?;
    } else if k % 8 == 6 {
        let fork = format!("{run}f");
        let args = json!({"workflow": "four", "run_id": run, "from": "s2", "new_run_id": fork});
        let forked = call(addr, "think_fork", args)?;
        if forked["error"].is_string() {
            return Err(format!("fork {run}: {forked}"));
        }
        {
            let mut book = book.lock().unwrap();
            let kept: BTreeMap<_, _> = book.acked[&run]
                .iter()
                .filter(|(s, _)| *s == "s0" || *s == "s1")
                .map(|(s, v)| (s.clone(), v.clone()))
                .collect();
            book.acked.insert(fork.clone(), kept);
        }
        drive(addr, book, &fork, 2, by)?;
    }
    book.lock().unwrap().note("done");
    Ok(())
}

/// Reads: the run list, one run, the inspector's list and page, and a live
/// stream held open for a second.
fn read_some(addr: &str, book: &Mutex<Book>, n: usize) -> Result<(), String> {
    let list = call(addr, "think_state_list", json!({"workflow": "four"}))?;
    let Some(runs) = list["runs"].as_array() else { return Err(format!("state list: {list}")) };
    let Some(run) = runs.get(n % runs.len().max(1)).and_then(|r| r["run_id"].as_str()) else { return Ok(()) };
    let got = call(addr, "think_state_get", json!({"workflow": "four", "run_id": run}))?;
    // A run reset or deleted meanwhile may be gone: UNKNOWN_RUN is right then.
    if got["run_id"] != run && got["error"] != "UNKNOWN_RUN" {
        return Err(format!("state get {run}: {got}"));
    }
    for path in
        ["/ui/api/runs".to_owned(), format!("/ui/runs/four/{run}"), format!("/ui/api/runs/four/{run}")]
    {
        let page = get(addr, &path, &[]);
        if page.status != 200 && page.status != 404 {
            return Err(format!("GET {path}: {} {}", page.status, page.body));
        }
    }
    let mut live = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    let request = format!(
        "GET /ui/api/runs/four/{run}/live HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    );
    live.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    live.set_read_timeout(Some(Duration::from_millis(1000))).map_err(|e| e.to_string())?;
    let mut head = [0u8; 12];
    let _ = live.read(&mut head);
    if !head.starts_with(b"HTTP/1.1 200") && !head.starts_with(b"HTTP/1.1 404") {
        return Err(format!("live {run}: {}", String::from_utf8_lossy(&head)));
    }
    book.lock().unwrap().note("read");
    Ok(())
}

/// Plans a run, sends its `think_next` and goes away before the answer.
fn drop_one(addr: &str, book: &Mutex<Book>, k: usize) -> Result<(), String> {
    let run = format!("x{k}");
    call(addr, "think_plan", json!({"workflow": "four", "run_id": run}))?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "think_next",
        "arguments": {"workflow": "four", "run_id": run, "step_id": "s0", "result": {"dropped": k}}}})
    .to_string();
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes())).map_err(|e| e.to_string())?;
    drop(s);
    book.lock().unwrap().note("dropped");
    Ok(())
}

/// `savant_think_runs_cached` read from `/metrics`.
fn runs_cached(addr: &str) -> Option<usize> {
    let metrics = get(addr, "/metrics", &[]);
    metrics
        .body
        .lines()
        .find_map(|l| l.strip_prefix("savant_think_runs_cached "))
        .and_then(|n| n.trim().parse().ok())
}

/// Calls `client` over and over until `until`, booking what goes wrong.
fn repeat(until: Instant, book: &Mutex<Book>, client: impl Fn(usize) -> Result<(), String>) {
    let mut k = 0;
    while Instant::now() < until {
        k += 1;
        if let Err(e) = client(k) {
            book.lock().unwrap().wrong(e);
        }
    }
}

/// File descriptors and threads of the server, sampled every 250 ms: (time
/// since the start, fds, threads).
type Samples = Vec<(Duration, usize, usize)>;

/// The load, for [`LOAD`], with the server sampled all along.
fn load(addr: &str, pid: u32) -> (Book, Samples) {
    let book = Mutex::new(Book::default());
    let samples: Mutex<Samples> = Mutex::default();
    let stop = AtomicBool::new(false);
    let began = Instant::now();
    let until = began + LOAD;
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                let (fds, threads) = proc_count(pid);
                samples.lock().unwrap().push((began.elapsed(), fds, threads));
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        let book = &book;
        let mut clients = Vec::new();
        for by in 0..DRIVERS {
            clients.push(s.spawn(move || repeat(until, book, |k| one_run(addr, book, by, k))));
        }
        clients.push(s.spawn(move || repeat(until, book, |k| read_some(addr, book, k))));
        clients.push(s.spawn(move || repeat(until, book, |k| drop_one(addr, book, k))));
        for c in clients {
            c.join().unwrap();
        }
        stop.store(true, Ordering::SeqCst);
    });
    (book.into_inner().unwrap(), samples.into_inner().unwrap())
}

/// The most fds and threads seen between two fractions of the load.
fn most(samples: &Samples, from: f64, to: f64) -> (usize, usize) {
    let part = samples.iter().filter(|(t, _, _)| {
        let t = t.as_secs_f64() / LOAD.as_secs_f64();
        t >= from && t < to
    });
    part.fold((0, 0), |(f, th), (_, fds, threads)| (f.max(*fds), th.max(*threads)))
}

/// The acknowledged results not in the store, read by a fresh engine.
fn missing(root: &Root, book: &Book) -> Vec<String> {
    let engine = root.engine();
    let mut missing = Vec::new();
    for (run, acked) in &book.acked {
        let state = engine.state_get("four", run).map(|s| serde_json::to_value(s).unwrap());
        let steps = state.map(|s| s["steps"].as_array().cloned().unwrap_or_default()).unwrap_or_default();
        let results: BTreeMap<String, Value> = steps
            .iter()
            .map(|st| (st["id"].as_str().unwrap_or("").to_owned(), st["result"].clone()))
            .collect();
        missing.extend(
            acked.iter().filter(|(s, v)| results.get(*s) != Some(v)).map(|(s, _)| format!("{run}/{s}")),
        );
    }
    missing
}

#[test]
fn a_minute_of_mixed_load_leaks_no_fd_thread_or_run_and_loses_no_event() {
    let root = Root::with_workflows("soak", &[("four", &workflow())]);
    root.write(
        "savant-think.toml",
        format!("[state]\nfsync = false\ncached_runs = {CACHED}\n[state.keep]\nstatus = [\"archived\"]\n"),
    );
    let mut command = Server::command(&root.path);
    command.args(["--stateless"]).env("LOG_LEVEL", "error");
    let server = Server::start(command, true);
    let (addr, pid) = (server.addr.as_str(), server.child.id());
    let (book, samples) = load(addr, pid);
    // Quiet: what was in flight has ended.
    std::thread::sleep(Duration::from_secs(2));
    let (fds_idle, threads_idle) = proc_count(pid);
    let cached = runs_cached(addr);
    drop(server);

    let (warm, last) = (most(&samples, 0.25, 0.5), most(&samples, 0.75, 1.0));
    let report = format!(
        "{:?}; wrong: {:?}; fds/threads: after warm-up {warm:?}, last quarter {last:?}, \
         idle ({fds_idle}, {threads_idle}); runs cached {cached:?}; {} samples",
        book.kinds,
        book.wrong,
        samples.len()
    );
    eprintln!("soak: {report}");
    let count = |k: &str| book.kinds.get(k).copied().unwrap_or(0);
    assert!(book.wrong.is_empty(), "every answer is right: {report}");
    assert!(
        count("done") > 2 * CACHED && count("read") > 0 && count("dropped") > 0,
        "the load ran: {report}"
    );
    assert!(warm.0 > 0 && warm.1 > 0, "the server was sampled after warm-up: {report}");
    assert!(last.0 <= warm.0 + FD_SLACK, "no file descriptor leak under load: {report}");
    assert!(last.1 <= warm.1 + THREAD_SLACK, "no thread leak under load: {report}");
    assert!(
        fds_idle <= warm.0 + FD_SLACK && threads_idle <= warm.1 + THREAD_SLACK,
        "none once idle: {report}"
    );
    assert!(cached.is_some_and(|n| n > 0 && n <= CACHED), "the engine keeps at most cached_runs: {report}");
    let missing = missing(&root, &book);
    assert!(
        missing.is_empty(),
        "{} acknowledged results not stored: {:?}; {report}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
}
