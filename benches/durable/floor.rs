//! The floors: what the disk and the database do with no engine in front.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// One measured cell.
pub struct Cell {
    /// Calls (transitions, transactions) measured.
    pub calls: usize,
    pub per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
}

impl Cell {
    pub fn new(mut latencies: Vec<Duration>, elapsed: Duration) -> Cell {
        latencies.sort();
        let at =
            |p: f64| latencies[((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1];
        Cell {
            calls: latencies.len(),
            per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
            p50: at(0.50),
            p99: at(0.99),
        }
    }
}

/// A journal-sized line: about what one `next` appends (a result event
/// with its sequence number and checksum).
pub const LINE_BYTES: usize = 200;

fn line() -> Vec<u8> {
    let mut line = vec![b'x'; LINE_BYTES - 1];
    line.push(b'\n');
    line
}

/// `threads` threads, each appending lines to its own file with an
/// `fdatasync` after each: the file store's design, bare.
pub fn own_files(dir: &Path, threads: usize, total: usize) -> Cell {
    let per_thread = total.div_ceil(threads);
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let path = dir.join(format!("floor-{t}.ndjson"));
            std::thread::spawn(move || {
                let line = line();
                let mut file =
                    std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("floor file");
                let mut latencies = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    let t = Instant::now();
                    file.write_all(&line).unwrap();
                    file.sync_data().unwrap();
                    latencies.push(t.elapsed());
                }
                let _ = std::fs::remove_file(&path);
                latencies
            })
        })
        .collect();
    let latencies = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    Cell::new(latencies, started.elapsed())
}

/// The log of [`group_log`]: lines waiting to be written, and how far the
/// file is durable.
struct Log {
    pending: Vec<u8>,
    /// Lines handed in so far (the last one's number).
    appended: u64,
    /// Lines known durable.
    durable: u64,
    /// True while some thread writes and syncs a batch.
    syncing: bool,
}

/// `threads` threads appending lines to one shared log, group-committed:
/// a thread whose line is not yet durable either leads (writes every
/// pending line with one `write` and one `fdatasync`) or waits for the
/// leader's sync to cover it. The floor of a single write-ahead log.
pub fn group_log(dir: &Path, threads: usize, total: usize) -> Cell {
    let per_thread = total.div_ceil(threads);
    let path = dir.join("floor-group.log");
    let file = Arc::new(std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("log"));
    let log = Arc::new((
        Mutex::new(Log { pending: Vec::new(), appended: 0, durable: 0, syncing: false }),
        Condvar::new(),
    ));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (file, log) = (Arc::clone(&file), Arc::clone(&log));
            std::thread::spawn(move || {
                let line = line();
                let mut latencies = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    let t = Instant::now();
                    commit(&file, &log, &line);
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let latencies = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    let elapsed = started.elapsed();
    let _ = std::fs::remove_file(&path);
    Cell::new(latencies, elapsed)
}

fn commit(file: &std::fs::File, log: &(Mutex<Log>, Condvar), line: &[u8]) {
    let (lock, cond) = log;
    let mut state = lock.lock().unwrap();
    state.pending.extend_from_slice(line);
    state.appended += 1;
    let mine = state.appended;
    while state.durable < mine {
        if state.syncing {
            state = cond.wait(state).unwrap();
            continue;
        }
        let batch = std::mem::take(&mut state.pending);
        let upto = state.appended;
        state.syncing = true;
        drop(state);
        (&*file).write_all(&batch).unwrap();
        file.sync_data().unwrap();
        state = lock.lock().unwrap();
        state.durable = upto;
        state.syncing = false;
        cond.notify_all();
    }
}

/// A single-row `UPDATE` per transaction (pgbench's own accounts table, a
/// random row), committed durably, with `clients` clients. Its latencies
/// come from pgbench's per-transaction log (`-l`), written in `dir`.
pub fn pgbench(bin: &Path, conninfo: &str, script: &Path, clients: usize, total: usize) -> Cell {
    let per_client = total.div_ceil(clients);
    let dir = script.parent().expect("the script's directory");
    let prefix = dir.join(format!("pgbench-log-{clients}"));
    let out = Command::new(bin.join("pgbench"))
        .args(["-n", "-r", "-l", "--log-prefix"])
        .arg(&prefix)
        .arg("-f")
        .arg(script)
        .args(["-c", &clients.to_string(), "-j", &clients.min(4).to_string()])
        .args(["-t", &per_client.to_string()])
        .arg(conninfo)
        .output()
        .expect("run pgbench");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pgbench: {text}{}", String::from_utf8_lossy(&out.stderr));
    let tps = text
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no `tps = ` in pgbench's output: {text}"));
    let latencies = pgbench_latencies(dir, &prefix);
    assert!(!latencies.is_empty(), "pgbench wrote no transaction log under {}", prefix.display());
    let mut cell = Cell::new(latencies, Duration::from_secs(1));
    cell.per_second = tps;
    cell
}

/// The latencies in pgbench's transaction logs `PREFIX.PID[.THREAD]`
/// (third column, microseconds), removing the logs.
fn pgbench_latencies(dir: &Path, prefix: &Path) -> Vec<Duration> {
    let stem = prefix.file_name().and_then(|n| n.to_str()).expect("a log prefix").to_owned() + ".";
    let mut latencies = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the log directory").flatten() {
        if !entry.file_name().to_str().is_some_and(|n| n.starts_with(&stem)) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("a pgbench log");
        let micros = text.lines().filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok());
        latencies.extend(micros.map(Duration::from_micros));
        let _ = std::fs::remove_file(entry.path());
    }
    latencies
}

/// Creates pgbench's tables (scale 1) in the database at `conninfo`, and
/// the script of [`pgbench`] in `dir`.
pub fn pgbench_init(bin: &Path, conninfo: &str, dir: &Path) -> std::path::PathBuf {
    let init = Command::new(bin.join("pgbench"))
        .args(["-i", "-q", "-s", "1"])
        .arg(conninfo)
        .output()
        .expect("pgbench -i");
    assert!(init.status.success(), "pgbench -i: {}", String::from_utf8_lossy(&init.stderr));
    let script = dir.join("single-row-update.sql");
    std::fs::write(
        &script,
        "\\set aid random(1, 100000 * :scale)\n\
         UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n",
    )
    .unwrap();
    script
}

/// The HTTP floor: an HTTP/1.1 server (hyper under axum, as `serve --http`
/// uses, `TCP_NODELAY` on) on its own runtime in this process, answering
/// every `POST /mcp` with the same bytes and doing nothing else. Beside it,
/// `serve --http` shows what MCP and the engine add to a call.
pub struct BareHttp {
    pub addr: String,
    /// Dropped with the server: its tasks are cancelled (it has no
    /// blocking work to wait for).
    _runtime: tokio::runtime::Runtime,
}

impl BareHttp {
    /// Serves `answer` (a JSON-RPC response) to every POST.
    pub fn start(answer: String) -> BareHttp {
        use axum::serve::ListenerExt;
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind the bare HTTP server");
        let addr = listener.local_addr().expect("its address").to_string();
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let answer = axum::body::Bytes::from(answer);
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(move |_body: axum::body::Bytes| {
                let answer = answer.clone();
                async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], answer) }
            }),
        );
        runtime.spawn(async move { axum::serve(listener, app).await });
        BareHttp { addr, _runtime: runtime }
    }
}

/// Statements the database has run so far (`pg_stat_statements`, when the
/// server loads it), for statements per transition; `None` without it.
pub fn statements(bin: &Path, conninfo: &str) -> Option<u64> {
    let out = Command::new(bin.join("psql"))
        .args(["-X", "-A", "-t", "-q", "-d", conninfo, "-c"])
        .arg(
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; \
             SELECT sum(calls) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'",
        )
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    out.status.success().then(|| text.lines().last()?.trim().parse().ok()).flatten()
}
