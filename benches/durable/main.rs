//! Durable throughput beside its floor (issue 29.1), in one invocation on
//! one machine:
//!
//! - the file-store floor: `N` threads each appending a journal-sized line
//!   (200 bytes) and `fdatasync`ing its own file; and `N` threads
//!   appending to one group-committed log (one `write` + `fdatasync` makes
//!   every waiting line durable);
//! - savant-think's file store (fsync on) with `N` = 1, 8, 64 and 256
//!   concurrent runs, through the engine's library API and through
//!   `serve --http --stateless` (a keep-alive HTTP client per run, in this
//!   process), beside the HTTP floor: a bare hyper server answering each
//!   POST with a canned `think_next` answer, and `serve --http` calling a
//!   no-op tool (`prompt_say`: no run, no state), same client;
//! - PostgreSQL (`SAVANT_TEST_PG_URL`, else a throwaway cluster started
//!   here; `fsync` and `synchronous_commit` on): a pgbench script of one
//!   single-row `UPDATE` per transaction with `N` clients, beside
//!   savant-think on that database (engine API and HTTP), `N` ≤ 64.
//!
//! Each cell prints transitions (or transactions) per second, p50 and p99
//! latency of one call, the ratio to the floor at the same `N` (own files
//! for the file store, pgbench for PostgreSQL) and p99 against the single
//! run's p50. pgbench gives only an average latency (marked `avg`).
//!
//! `cargo bench --bench durable` (about two minutes after the build);
//! figures in docs/PERFORMANCE.md ("Durable throughput"). Knobs:
//! `SAVANT_DURABLE_TOTAL` transitions per cell (default 2000),
//! `SAVANT_DURABLE_RUNS` the concurrencies (default `1,8,64,256`),
//! `SAVANT_DURABLE_PG_RUNS` those on PostgreSQL (default `1,8,64`),
//! `SAVANT_DURABLE_HTTP=0` / `SAVANT_DURABLE_PG=0` skip HTTP / PostgreSQL,
//! `SAVANT_DURABLE_PG_POOL` the store's `[state] pool_size` (default 16),
//! `SAVANT_DURABLE_BIN` another `savant-think` binary to serve (an A/B of
//! two builds), `SAVANT_BENCH_DIR` the file system of the state (default:
//! the temp dir).

#[path = "../../tests/support/mod.rs"]
mod support;

mod drive;
mod floor;

use floor::Cell;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use savant_think::runtime::{Engine, EngineConfig};
use savant_think::state::pg::cluster::{self, Cluster};
use savant_think::state::{FileStore, PgStore, StateStore, StoreOptions};
use support::{Root, Server, generate};

struct Knobs {
    total: usize,
    runs: Vec<usize>,
    pg_runs: Vec<usize>,
    http: bool,
    pg: bool,
    /// `[state] pool_size` on PostgreSQL (the default when `None`).
    pg_pool: Option<usize>,
}

fn knobs() -> Knobs {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let list = |name: &str, default: &[usize]| {
        var(name).map_or_else(
            || default.to_vec(),
            |v| v.split(',').map(|n| n.trim().parse().expect("a list of numbers")).collect(),
        )
    };
    Knobs {
        total: var("SAVANT_DURABLE_TOTAL").map_or(2000, |v| v.parse().expect("a number")),
        runs: list("SAVANT_DURABLE_RUNS", &[1, 8, 64, 256]),
        pg_runs: list("SAVANT_DURABLE_PG_RUNS", &[1, 8, 64]),
        http: var("SAVANT_DURABLE_HTTP").is_none_or(|v| v != "0"),
        pg: var("SAVANT_DURABLE_PG").is_none_or(|v| v != "0"),
        pg_pool: var("SAVANT_DURABLE_PG_POOL").map(|v| v.parse().expect("a number")),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// Prints one row; `single` is the one-run p50 of the same path.
fn row(what: &str, runs: usize, c: &Cell, floor: Option<&Cell>, single: Option<Duration>) {
    let avg = if c.averaged { " avg" } else { "" };
    let ratio = floor.map_or("—".into(), |f| format!("{:.0} %", 100.0 * c.per_second / f.per_second));
    let tail = single.map_or("—".into(), |s| format!("{:.1}×", c.p99.as_secs_f64() / s.as_secs_f64()));
    println!(
        "| {what} | {runs} | {:.0} | {}{avg} | {}{avg} | {ratio} | {tail} |",
        c.per_second,
        ms(c.p50),
        ms(c.p99)
    );
}

/// What the bare HTTP floor answers: a real `think_next` answer (its
/// structured content and the same as text), as `serve --http` sends it.
fn canned_answer(engine: &Engine, tag: &str) -> String {
    let run = format!("{tag}-canned");
    let plan = engine.plan("load", generate::items(2), Some(&run), true).unwrap();
    let step = plan.instruction().expect("an instruction").step_id.clone();
    let next = engine.next(support::next_args("load", &run, step, json!({"ok": 1}))).unwrap();
    let v = serde_json::to_value(&next).unwrap();
    json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": v.to_string()}],
           "structuredContent": v, "isError": false}})
    .to_string()
}

/// Transitions per run for a cell of `total` at `runs` runs.
fn per_run(total: usize, runs: usize) -> usize {
    total.div_ceil(runs).max(8)
}

fn engine_on(root: &Path, store: Box<dyn StateStore>) -> Arc<Engine> {
    let mut config = EngineConfig::default();
    config.state.fsync = true;
    Arc::new(Engine::with_store(root.to_path_buf(), config, store))
}

fn server(root: &Path, url: Option<&str>) -> Server {
    let mut command = match std::env::var_os("SAVANT_DURABLE_BIN") {
        Some(bin) => Server::command_of(Path::new(&bin), root),
        None => Server::command(root),
    };
    command
        .args(["--stateless", "--max-in-flight", "1024"])
        .env("LOG_LEVEL", "warn")
        .env("SAVANT_STATE_FSYNC", "1");
    match url {
        Some(url) => command.env("SAVANT_STATE_URL", url),
        None => command.env_remove("SAVANT_STATE_URL"),
    };
    Server::start(command, true)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let k = knobs();
    let root = Root::with_workflows("durable", &[("load", &generate::foreach("load"))]);
    let scratch = root.join("floor");
    std::fs::create_dir_all(&scratch).unwrap();
    let tag = format!("b{}", std::process::id());
    println!("| what | runs | per s | p50 ms | p99 ms | of floor | p99 ÷ 1-run p50 |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");

    // The file store, each concurrency beside its floors.
    let engine = engine_on(&root.path, Box::new(FileStore::new(&root.path, true)));
    let http = k.http.then(|| server(&root.path, None));
    let bare = k.http.then(|| floor::BareHttp::start(canned_answer(&engine, &tag)));
    let (mut single_engine, mut single_http, mut single_floor) = (None, None, None);
    let (mut single_bare, mut single_noop) = (None, None);
    for &n in &k.runs {
        let files = floor::own_files(&scratch, n, k.total);
        let log = floor::group_log(&scratch, n, k.total);
        let api = drive::engine(&engine, &format!("{tag}-api"), n, per_run(k.total, n));
        if n == 1 {
            single_floor = Some(files.p50);
            single_engine = Some(api.p50);
        }
        row("floor: own file + fdatasync", n, &files, None, single_floor);
        row("floor: one group-committed log", n, &log, Some(&files), None);
        row("file store, engine API", n, &api, Some(&files), single_engine);
        if let (Some(server), Some(bare)) = (&http, &bare) {
            let per = per_run(k.total, n);
            let canned = drive::http_calls(&bare.addr, "think_next", &json!({}), n, per);
            let say = json!({"message": "hello"});
            let noop = drive::http_calls(&server.addr, "prompt_say", &say, n, per);
            let over = drive::http(&server.addr, &format!("{tag}-http"), n, per);
            if n == 1 {
                (single_bare, single_noop, single_http) = (Some(canned.p50), Some(noop.p50), Some(over.p50));
            }
            row("floor: bare HTTP, a canned answer", n, &canned, None, single_bare);
            row("serve --http, a no-op tool (prompt_say)", n, &noop, Some(&canned), single_noop);
            row("file store, serve --http", n, &over, Some(&files), single_http);
        }
    }
    drop(bare);
    drop(http);
    drop(engine);

    if !k.pg {
        return;
    }
    let Some(bin) = cluster::find_bin() else {
        println!("\n(PostgreSQL is not installed: no PostgreSQL rows)");
        return;
    };
    let external = std::env::var("SAVANT_TEST_PG_URL").ok().filter(|u| !u.trim().is_empty());
    let (cluster, url, conninfo): (Option<Cluster>, String, String) = match external {
        Some(url) => (None, url.clone(), url),
        None => {
            let cluster = Cluster::start(&bin, &[]).expect("start a PostgreSQL cluster");
            let url = cluster.fresh_schema("durable_bench").unwrap();
            let conninfo = cluster.url("postgres");
            (Some(cluster), url, conninfo)
        }
    };
    let script = floor::pgbench_init(&bin, &conninfo, &scratch);
    let mut options = StoreOptions::default();
    if let Some(size) = k.pg_pool {
        options.pool_size = size;
        root.write("savant-think.toml", format!("[state]\npool_size = {size}\n"));
    }
    let store = PgStore::open_with(&url, &options).expect("open the PostgreSQL store");
    let engine = engine_on(&root.path, Box::new(store));
    let http = k.http.then(|| server(&root.path, Some(&url)));
    let (mut single_floor, mut single_engine, mut single_http) = (None, None, None);
    for &n in &k.pg_runs {
        let bench = floor::pgbench(&bin, &conninfo, &script, n, k.total);
        let api = drive::engine(&engine, &format!("{tag}-pgapi"), n, per_run(k.total, n));
        if n == 1 {
            single_floor = Some(bench.p50);
            single_engine = Some(api.p50);
        }
        row("floor: pgbench single-row UPDATE", n, &bench, None, single_floor);
        row("PostgreSQL, engine API", n, &api, Some(&bench), single_engine);
        if let Some(server) = &http {
            let over = drive::http(&server.addr, &format!("{tag}-pghttp"), n, per_run(k.total, n));
            if n == 1 {
                single_http = Some(over.p50);
            }
            row("PostgreSQL, serve --http", n, &over, Some(&bench), single_http);
        }
    }
    drop(http);
    drop(engine);
    drop(cluster);
}
