//! The lock-wait attacks of issue 24.2 at their original size, against
//! `serve --http`: 600 clients on one run whose lock another process holds
//! (file store), and 320 on PostgreSQL (skipped, saying so, without a
//! cluster). Each client must be answered (`RUN_BUSY` or 503 `BUSY`), the
//! server's threads and database connections stay bounded (asserted), and
//! the figures are printed: the slowest answer (against the default
//! `[state] lock_timeout` of 5 s), how long a call on another run took
//! meanwhile, the threads and connections at the peak. Before the fix the
//! attack took 515 threads, stalled other runs 18 s and exhausted the
//! database's connections. A bench, not a test: 600 connections at once
//! lose answers on a machine the test suite loads, and times are not for
//! tests.
//!
//! Run alone (about 6 s each) with `cargo bench --bench lock_attack`;
//! figures in docs/PERFORMANCE.md ("Lock-wait attacks") and
//! docs/threat-model.md.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};
use support::serve::post;
use support::{Root, Server};

fn main() {
    file_store();
    postgres();
}

const SAY: &str = "id: say
steps:
  - id: a
    call: prompt.say
    input_template: { text: hi }
";

fn next(run: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"think_next","arguments":{{"workflow":"say","run_id":"{run}","step_id":"a","result":{{}}}}}}}}"#
    )
}

/// The most threads the server may run at the peak (measured: 56–78;
/// before the fix, 515 for 600 clients).
const MAX_THREADS: usize = 200;

/// What an attack measured.
struct Attack {
    /// Answers by kind (`RUN_BUSY`, `503 BUSY`, …).
    kinds: std::collections::BTreeMap<String, usize>,
    /// The slowest client's answer.
    slowest: Duration,
    /// How long a call on another run took meanwhile.
    other_run: Duration,
    /// The server's threads at the peak.
    threads: usize,
    /// The peak of what `sample` counted.
    sampled: usize,
}

impl Attack {
    /// Asserts the bounds every attack must hold that are not times (the
    /// times are the figures this bench reports).
    fn assert_bounded(&self, clients: usize) {
        let busy = self.kinds.get("RUN_BUSY").unwrap_or(&0) + self.kinds.get("503 BUSY").unwrap_or(&0);
        assert_eq!(busy, clients, "every client is told the run is busy: {:?}", self.kinds);
        assert!(self.threads <= MAX_THREADS, "the server's threads stay bounded: {self}");
    }
}

impl std::fmt::Display for Attack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}, slowest {:?}; another run answered in {:?}; server threads peak {}; sampled peak {}",
            self.kinds, self.slowest, self.other_run, self.threads, self.sampled
        )
    }
}

fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

/// Fires `clients` calls on run `r1` at once, and one on `r2` a second in.
fn attack(server: &Server, clients: usize, sample: impl Fn() -> usize + Sync) -> Attack {
    let addr = server.addr.clone();
    let pid = server.child.id();
    let peak = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let peak_extra = std::sync::atomic::AtomicUsize::new(0);
    let (answers, other) = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                peak.fetch_max(threads(pid), std::sync::atomic::Ordering::SeqCst);
                peak_extra.fetch_max(sample(), std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let calls: Vec<_> = (0..clients)
            .map(|_| {
                let addr = addr.clone();
                s.spawn(move || {
                    let started = Instant::now();
                    let (status, _, body) = post(&addr, "application/json", &next("r1"), &[]);
                    let kind = match status {
                        503 => "503 BUSY".to_owned(),
                        200 if body.contains("RUN_BUSY") => "RUN_BUSY".to_owned(),
                        200 => "answered".to_owned(),
                        _ => format!("other ({status}): {}", body.chars().take(80).collect::<String>()),
                    };
                    (kind, started.elapsed())
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(1));
        let started = Instant::now();
        let (status, _, body) = post(&addr, "application/json", &next("r2"), &[]);
        let other =
            (status, body.contains("isError\":false") || body.contains("\"done\""), started.elapsed());
        let answers: Vec<_> = calls.into_iter().map(|c| c.join().unwrap()).collect();
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        (answers, other)
    });
    let mut kinds = std::collections::BTreeMap::new();
    for (kind, _) in &answers {
        *kinds.entry(kind.clone()).or_insert(0) += 1;
    }
    let slowest = answers.iter().map(|(_, d)| *d).max().unwrap_or_default();
    assert!(other.0 == 200 && other.1, "another run is served meanwhile: {other:?}");
    Attack {
        kinds,
        slowest,
        other_run: other.2,
        threads: peak.load(std::sync::atomic::Ordering::SeqCst),
        sampled: peak_extra.load(std::sync::atomic::Ordering::SeqCst),
    }
}

/// 600 clients on one run whose lock another process holds, file store.
fn file_store() {
    let root = Root::with_workflows("stress-file", &[("say", SAY)]);
    root.ok(&["plan", "say", "--run-id", "r1"]);
    root.ok(&["plan", "say", "--run-id", "r2"]);
    // Another process holds r1's lock (as `hostile_load::hold` does).
    let held = std::fs::File::options().read(true).write(true).open(root.join(".savant/state/say__r1.lock"));
    let held = held.unwrap();
    held.lock().unwrap();
    let mut command = Server::command(&root.path);
    command.args(["--stateless"]).env("LOG_LEVEL", "error");
    let server = Server::start(command, false);
    let measured = attack(&server, 600, || 0);
    println!("lock_attack/file_store, 600 clients: {measured}");
    measured.assert_bounded(600);
    drop(held);
}

/// 320 clients on one run another replica holds, PostgreSQL.
fn postgres() {
    use savant_think::state::pg::cluster;
    let Some(cluster) = cluster::for_test("lock_attack/postgres") else { return };
    let url = cluster.fresh_schema("stress_pg").unwrap();
    let root = Root::with_workflows("stress-pg", &[("say", SAY)]);
    let store = savant_think::state::PgStore::open(&url, true).unwrap();
    let engine =
        savant_think::runtime::Engine::with_store(root.path.clone(), Default::default(), Box::new(store));
    for run in ["r1", "r2"] {
        engine
            .plan("say", serde_json::Value::Null, Some(run), savant_think::runtime::args::IfExists::Error)
            .unwrap();
    }
    // Another replica holds r1's lock.
    let holder = savant_think::state::PgStore::open(&url, true).unwrap();
    use savant_think::state::StateStore;
    let _held = holder.lock(&savant_think::state::RunKey::new("say", "r1").unwrap()).unwrap();
    let mut command = Server::command(&root.path);
    command.args(["--stateless"]).env("LOG_LEVEL", "error").env("SAVANT_STATE_URL", &url);
    let server = Server::start(command, false);
    let admin = std::sync::Mutex::new(postgres::Client::connect(&url, postgres::NoTls).unwrap());
    let connections = move || {
        let mut admin = admin.lock().unwrap();
        let sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'savant-think'";
        admin.query_one(sql, &[]).map(|row| row.get::<_, i64>(0) as usize).unwrap_or(0)
    };
    let measured = attack(&server, 320, connections);
    println!("lock_attack/postgres, 320 clients (sampled: savant-think connections): {measured}");
    measured.assert_bounded(320);
    // A replica opens at most 2 × `[state] pool_size` (16) connections
    // (measured: 5–10; before the fix, the server's whole limit).
    assert!(measured.sampled <= 32, "the database connections stay bounded: {measured}");
}
