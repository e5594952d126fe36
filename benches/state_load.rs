//! Load: durable `think_next` transitions per second, and the latency of one
//! call (p50, p99), over Streamable HTTP, at 1, 8 and 64 concurrent runs:
//!
//! - the file store, one `serve --http --stateless` (fsync on);
//! - PostgreSQL, one replica and two replicas on one database (a throwaway
//!   cluster with the server's defaults: `fsync` and `synchronous_commit`
//!   on), clients alternating between the replicas call by call.
//!
//! Beside each, the physical floor measured in the same run: for
//! PostgreSQL, `pgbench`'s built-in simple-update script (`-N`: one
//! `UPDATE`, one `SELECT`, one `INSERT` per transaction, each commit
//! durable) at the same number of clients; for the file store, a bare loop
//! of 200-byte appends each followed by `fdatasync`, one file per thread,
//! at the same number of threads.
//!
//! Not a criterion bench (it measures throughput under concurrency, not one
//! call): `cargo bench --bench state_load` prints a markdown table; figures
//! in docs/PERFORMANCE.md ("State store under load"). Needs PostgreSQL
//! installed (as for the tests); without it only the file store is
//! measured. `SAVANT_BENCH_DIR` chooses the file system of the file store's
//! root (default: the system temp dir). `SAVANT_LOAD_TOTAL` sets the
//! transitions per cell (default 640).

#[path = "../tests/support/mod.rs"]
mod support;

/// The floors and the cell of `benches/durable` (this bench uses only the
/// own-file floor).
#[path = "durable/floor.rs"]
#[allow(dead_code)]
mod floor;

use floor::Cell;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use savant_think::state::pg::cluster::{self, Cluster};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Root, Server, generate};

const CONCURRENCY: [usize; 3] = [1, 8, 64];

type Client = RunningService<RoleClient, ()>;

/// `serve --http --stateless` on `root`, fsync on, on the file store or
/// the PostgreSQL database at `url`.
fn start(root: &Path, url: Option<&str>) -> Server {
    let mut command = Server::command(root);
    command.arg("--stateless").env("LOG_LEVEL", "warn").env("SAVANT_STATE_FSYNC", "1");
    match url {
        Some(url) => command.env("SAVANT_STATE_URL", url),
        None => command.env_remove("SAVANT_STATE_URL"),
    };
    Server::start(command, true)
}

async fn connect(addr: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"))).await.expect("initialize")
}

async fn call(client: &Client, name: &str, args: Value) -> Value {
    let Value::Object(args) = args else { unreachable!() };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let out = r.structured_content.expect("structuredContent");
    assert!(r.is_error != Some(true), "{name}: {out}");
    out
}

/// `concurrency` runs of `per_run` transitions each, driven at once; call
/// `k` of run `i` goes to replica `(i + k) % replicas`.
async fn drive(clients: &Arc<Vec<Client>>, tag: &str, concurrency: usize, per_run: usize) -> Cell {
    let items = generate::items(per_run);
    // Plans first (not measured): each run is then `per_run` transitions.
    let mut firsts = Vec::new();
    for i in 0..concurrency {
        let run_id = format!("{tag}-{concurrency}-{i}");
        let plan = json!({"workflow": "load", "params": items, "run_id": run_id});
        let out = call(&clients[i % clients.len()], "think_plan", plan).await;
        firsts.push((run_id, out));
    }
    let started = Instant::now();
    let tasks: Vec<_> = firsts
        .into_iter()
        .enumerate()
        .map(|(i, (run_id, mut out))| {
            let clients = Arc::clone(clients);
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_run);
                let mut k = i;
                while out["done"] != true {
                    let step = out["instruction"]["step_id"].as_str().unwrap().to_owned();
                    let args = json!({"workflow": "load", "run_id": run_id, "step_id": step,
                                      "result_snapshot": {"ok": k}});
                    k += 1;
                    let t = Instant::now();
                    out = call(&clients[k % clients.len()], "think_next", args).await;
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed();
    assert_eq!(latencies.len(), concurrency * per_run);
    Cell::new(latencies, elapsed)
}

/// pgbench's simple-update TPS with `clients` clients.
fn pgbench_floor(cluster: &Cluster, clients: usize, total: usize) -> f64 {
    let out = Command::new(cluster.bin().join("pgbench"))
        .args(["-n", "-N", "-h", "127.0.0.1", "-U", "postgres"])
        .args(["-p", &cluster.port().to_string()])
        .args(["-c", &clients.to_string(), "-j", &clients.min(4).to_string()])
        .args(["-t", &total.div_ceil(clients).to_string(), "postgres"])
        .output()
        .expect("run pgbench");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pgbench: {text}{}", String::from_utf8_lossy(&out.stderr));
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no tps in pgbench's output: {text}"))
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn row(store: &str, replicas: usize, concurrency: usize, c: &Cell, floor: f64, floor_what: &str) {
    println!(
        "| {store} | {replicas} | {concurrency} | {:.0} | {} | {} | {floor:.0} ({floor_what}) | {:.0}% |",
        c.per_second,
        ms(c.p50),
        ms(c.p99),
        100.0 * c.per_second / floor
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // useful either: this bench takes no arguments.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let total: usize = std::env::var("SAVANT_LOAD_TOTAL").ok().and_then(|v| v.parse().ok()).unwrap_or(640);
    let root = Root::with_workflows("load", &[("load", &generate::foreach("load"))]);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    println!(
        "| store | replicas | concurrent runs | transitions/s | p50 ms | p99 ms | floor /s | % of floor |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");

    // The file store.
    {
        let replica = start(&root.path, None);
        let clients = Arc::new(vec![runtime.block_on(connect(&replica.addr))]);
        let floor_dir = root.join(".savant");
        std::fs::create_dir_all(&floor_dir).unwrap();
        for c in CONCURRENCY {
            let load = runtime.block_on(drive(&clients, "file", c, total.div_ceil(c)));
            let floor = floor::own_files(&floor_dir, c, total);
            row("file", 1, c, &load, floor.per_second, "append+fdatasync");
        }
    }

    // PostgreSQL, one and two replicas.
    let Some(bin) = cluster::find_bin() else {
        println!("\n(PostgreSQL is not installed: no PostgreSQL rows)");
        return;
    };
    let cluster = Cluster::start(&bin, &[]).expect("start a PostgreSQL cluster");
    let init = Command::new(bin.join("pgbench"))
        .args(["-i", "-q", "-s", "1", "-h", "127.0.0.1", "-U", "postgres", "-p", &cluster.port().to_string()])
        .arg("postgres")
        .output()
        .expect("pgbench -i");
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    for replicas in [1, 2] {
        let url = cluster.fresh_schema(&format!("load_{replicas}")).unwrap();
        let servers: Vec<Server> = (0..replicas).map(|_| start(&root.path, Some(&url))).collect();
        let clients =
            Arc::new(servers.iter().map(|s| runtime.block_on(connect(&s.addr))).collect::<Vec<_>>());
        for c in CONCURRENCY {
            let load = runtime.block_on(drive(&clients, &format!("pg{replicas}"), c, total.div_ceil(c)));
            let floor = pgbench_floor(&cluster, c, total);
            row("postgres", replicas, c, &load, floor, "pgbench -N");
        }
        drop(clients);
    }
    drop(cluster);
}
