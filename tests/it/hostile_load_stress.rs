//! The lock-wait attacks of issue 24.2 at their original size, against
//! `serve --http` (ignored: minutes of load; run with a release build,
//! figures in docs/threat-model.md):
//!
//! ```text
//! cargo test --release --test it hostile_load_stress -- --ignored --nocapture
//! ```
//!
//! 600 clients on one run whose lock another process holds (file store), and
//! 320 on PostgreSQL: every client gets an answer (RUN_BUSY or 503 BUSY)
//! within the lock timeout, the server's threads and database connections
//! stay bounded, and another run is served meanwhile.

use crate::http_protocol::post;
use crate::support::{Root, Server};
use std::time::{Duration, Instant};

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

fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

/// Fires `clients` calls on run `r1` at once, and one on `r2` a second in;
/// returns (answers by kind, the slowest, the other run's latency, peak threads).
fn attack(server: &Server, clients: usize, sample: impl Fn() -> usize + Sync) -> String {
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
                        503 => "503 BUSY",
                        200 if body.contains("RUN_BUSY") => "RUN_BUSY",
                        200 => "answered",
                        _ => "other",
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
        *kinds.entry(*kind).or_insert(0) += 1;
    }
    let slowest = answers.iter().map(|(_, d)| *d).max().unwrap_or_default();
    assert!(answers.iter().all(|(k, _)| *k != "other"), "{kinds:?}");
    assert!(other.0 == 200 && other.2 < Duration::from_secs(1), "another run is served meanwhile: {other:?}");
    format!(
        "{clients} clients: {kinds:?}, slowest {slowest:?}; another run answered in {:?}; server threads peak {}; sampled peak {}",
        other.2,
        peak.load(std::sync::atomic::Ordering::SeqCst),
        peak_extra.load(std::sync::atomic::Ordering::SeqCst)
    )
}

#[test]
#[ignore = "a stress test at the attack's original size (minutes); run with --ignored"]
fn six_hundred_clients_on_one_locked_run_file_store() {
    let root = Root::with_workflows("stress-file", &[("say", SAY)]);
    root.ok(&["plan", "say", "--run-id", "r1"]);
    root.ok(&["plan", "say", "--run-id", "r2"]);
    let _held = crate::hostile_load::hold(&root, "r1");
    let mut command = Server::command(&root.path);
    command.args(["--stateless"]).env("LOG_LEVEL", "error");
    let server = Server::start(command, false);
    eprintln!("file store: {}", attack(&server, 600, || 0));
}

#[test]
#[ignore = "a stress test at the attack's original size (minutes); run with --ignored"]
fn three_hundred_twenty_clients_on_one_locked_run_postgres() {
    use savant_think::state::pg::cluster;
    let Some(cluster) = cluster::shared() else { return };
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
    eprintln!("PostgreSQL (sampled: savant-think connections): {}", attack(&server, 320, connections));
}
