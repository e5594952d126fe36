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
//! latency of one call, and both beside the floor at the same `N` (issue
//! 48): the own-file floor for the file store's engine API, pgbench for
//! PostgreSQL's (its latencies from its per-transaction log), the same
//! server's no-op tool for `serve --http` on either store, and the bare
//! HTTP server for the no-op tool.
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

/// Prints one row: throughput and p99 beside `floor`'s at the same `N`.
fn row(what: &str, runs: usize, c: &Cell, floor: Option<&Cell>) {
    let ratio = floor.map_or("—".into(), |f| format!("{:.0} %", 100.0 * c.per_second / f.per_second));
    let tail = floor.map_or("—".into(), |f| format!("{:.2}×", c.p99.as_secs_f64() / f.p99.as_secs_f64()));
    println!("| {what} | {runs} | {:.0} | {} | {} | {ratio} | {tail} |", c.per_second, ms(c.p50), ms(c.p99));
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
    println!("| what | runs | per s | p50 ms | p99 ms | of floor | p99 ÷ floor's p99 |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");

    // The file store, each concurrency beside its floors.
    let engine = engine_on(&root.path, Box::new(FileStore::new(&root.path, true)));
    let http = k.http.then(|| server(&root.path, None));
    let bare = k.http.then(|| floor::BareHttp::start(canned_answer(&engine, &tag)));
    for &n in &k.runs {
        let per = per_run(k.total, n);
        let files = floor::own_files(&scratch, n, k.total);
        let log = floor::group_log(&scratch, n, k.total);
        let api = drive::engine(&engine, &format!("{tag}-api"), n, per);
        row("floor: own file + fdatasync", n, &files, None);
        row("floor: one group-committed log", n, &log, Some(&files));
        row("file store, engine API", n, &api, Some(&files));
        if let (Some(server), Some(bare)) = (&http, &bare) {
            let canned = drive::http_calls(&bare.addr, "think_next", &json!({}), n, per);
            let noop = noop(server, n, per);
            let over = drive::http(&server.addr, &format!("{tag}-http"), n, per);
            row("floor: bare HTTP, a canned answer", n, &canned, None);
            row("serve --http, a no-op tool (prompt_say)", n, &noop, Some(&canned));
            row("file store, serve --http", n, &over, Some(&noop));
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
            // pg_stat_statements: statements per transition, printed below.
            let settings = ["shared_preload_libraries=pg_stat_statements"];
            let cluster = Cluster::start(&bin, &settings).expect("start a PostgreSQL cluster");
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
    let mut statements = Vec::new();
    for &n in &k.pg_runs {
        let per = per_run(k.total, n);
        let bench = floor::pgbench(&bin, &conninfo, &script, n, k.total);
        let before = floor::statements(&bin, &conninfo);
        let api = drive::engine(&engine, &format!("{tag}-pgapi"), n, per);
        if let (Some(before), Some(after)) = (before, floor::statements(&bin, &conninfo)) {
            // The runs' plans are counted too (not timed, made first).
            statements.push(format!(
                "{n} runs: {} statements for {} transitions and {n} plans",
                after - before,
                api.calls
            ));
        }
        row("floor: pgbench single-row UPDATE", n, &bench, None);
        row("PostgreSQL, engine API", n, &api, Some(&bench));
        if let Some(server) = &http {
            let noop = noop(server, n, per);
            let over = drive::http(&server.addr, &format!("{tag}-pghttp"), n, per);
            row("serve --http, a no-op tool (prompt_say)", n, &noop, None);
            row("PostgreSQL, serve --http", n, &over, Some(&noop));
        }
    }
    for line in statements {
        println!("\nPostgreSQL, engine API, {line}");
    }
    drop(http);
    drop(engine);
    drop(cluster);
}

/// `prompt_say` through `server`: the transport's own cost, no run behind it.
fn noop(server: &Server, runs: usize, per_run: usize) -> Cell {
    drive::http_calls(&server.addr, "prompt_say", &json!({"message": "hello"}), runs, per_run)
}
