//! `GET /metrics` on `serve --http`: Prometheus metrics in the OpenMetrics
//! text format (`prometheus-client`), behind the same guard as `/mcp` (the
//! bearer token, `Host`). Counted here, at the adapter: every tool call
//! ([`observe_call`], from `SavantServer::call`), the timers fired and the
//! pruning done ([`timers_fired`], [`pruned`], from `retention.rs`), and
//! every run lock the engine takes or is refused (the hook [`router`]
//! installs: its time, and `RUN_BUSY` refusals). Read from the engine when
//! scraped: runs by status, runs waiting, timers pending, runs cached, the
//! state database's connection pool; and the requests in flight. docs/deploy.md
//! lists every metric.

use crate::runtime::Engine;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Call {
    tool: String,
    /// `ok`, or the error's code.
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tool {
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Code {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolState {
    /// `work` (lent for reads and writes), `lock` (holding run locks), `idle`.
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Budget {
    budget: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Build {
    version: String,
}

type Histograms = Family<Tool, Histogram, fn() -> Histogram>;

/// Every metric of the process, registered once.
struct Metrics {
    registry: Registry,
    calls: Family<Call, Counter>,
    durations: Histograms,
    transitions: Family<Tool, Counter>,
    store_errors: Family<Code, Counter>,
    runs: Family<Status, Gauge>,
    waiting: Gauge,
    timers_pending: Gauge,
    runs_cached: Gauge,
    timers_fired: Counter,
    pruned_runs: Counter,
    pruned_objects: Counter,
    in_flight: Gauge,
    run_busy: Counter,
    lock_waits: Histogram,
    db_pool: Family<PoolState, Gauge>,
    db_pool_max: Family<Budget, Gauge>,
    /// One scrape at a time: the gauges read from the engine are reset and
    /// set together.
    scrape: Mutex<()>,
}

fn durations() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("savant_think");
        let m = Metrics {
            registry: Registry::default(),
            calls: Family::default(),
            durations: Family::new_with_constructor(durations as fn() -> Histogram),
            transitions: Family::default(),
            store_errors: Family::default(),
            runs: Family::default(),
            waiting: Gauge::default(),
            timers_pending: Gauge::default(),
            runs_cached: Gauge::default(),
            timers_fired: Counter::default(),
            pruned_runs: Counter::default(),
            pruned_objects: Counter::default(),
            in_flight: Gauge::default(),
            run_busy: Counter::default(),
            // 0.1 ms to about 26 s.
            lock_waits: Histogram::new(exponential_buckets(0.0001, 4.0, 10)),
            db_pool: Family::default(),
            db_pool_max: Family::default(),
            scrape: Mutex::new(()),
        };
        register(&mut registry, &m);
        let build: Family<Build, Gauge> = Family::default();
        build.get_or_create(&Build { version: env!("CARGO_PKG_VERSION").to_owned() }).set(1);
        registry.register("build_info", "The version of savant-think (always 1)", build);
        Metrics { registry, ..m }
    })
}

/// Registers each of `m`'s metrics under its name and help text.
fn register(registry: &mut Registry, m: &Metrics) {
    registry.register("calls", "Tool calls by tool and outcome (ok or the error code)", m.calls.clone());
    registry.register("call_duration_seconds", "How long tool calls took, by tool", m.durations.clone());
    registry.register(
        "transitions",
        "Calls that may change a run (not read-only) and succeeded, by tool",
        m.transitions.clone(),
    );
    registry.register(
        "store_errors",
        "Calls that failed in the state store, by code (STATE_UNAVAILABLE, STATE_IO, STATE_CORRUPT, ...)",
        m.store_errors.clone(),
    );
    registry.register("runs", "Live runs by status, when scraped", m.runs.clone());
    for (name, help, gauge) in [
        ("runs_waiting", "Live runs with a step waiting (an answer, a time, an event)", &m.waiting),
        ("timers_pending", "Runs waiting on a deadline, by the store's timer index", &m.timers_pending),
        ("runs_cached", "Runs kept in memory between calls (at most [state] cached_runs)", &m.runs_cached),
        ("requests_in_flight", "HTTP calls (POSTs) not answered yet", &m.in_flight),
    ] {
        registry.register(name, help, gauge.clone());
    }
    for (name, help, counter) in [
        ("timers_fired", "Runs changed by a deadline that came", &m.timers_fired),
        ("pruned_runs", "Runs and archived copies removed by [state] keep", &m.pruned_runs),
        ("pruned_objects", "Workflow versions removed by [state] keep", &m.pruned_objects),
        ("run_busy", "Run locks refused as busy (RUN_BUSY): held too long, or too many waiting", &m.run_busy),
    ] {
        registry.register(name, help, counter.clone());
    }
    registry.register(
        "lock_wait_seconds",
        "How long taking a run's lock took, refusals included (a round trip on PostgreSQL)",
        m.lock_waits.clone(),
    );
    registry.register(
        "db_pool_connections",
        "State database connections by state: work (reads, writes), lock (run locks), idle",
        m.db_pool.clone(),
    );
    registry.register(
        "db_pool_max",
        "The most connections each budget of the pool lends ([state] pool_size)",
        m.db_pool_max.clone(),
    );
}

/// Codes that say the state store failed (not the caller).
pub(super) fn store_error(code: &str) -> bool {
    matches!(code, "STATE_UNAVAILABLE" | "STATE_IO" | "STATE_CORRUPT" | "STATE_OUTSIDE_ROOT")
}

/// Counts one tool call: `tool` a known tool's name (never a caller's
/// string: the label set stays bounded), `code` `None` when it succeeded.
pub fn observe_call(tool: &str, read_only: bool, took: Duration, code: Option<&str>) {
    let m = metrics();
    m.calls.get_or_create(&Call { tool: tool.to_owned(), code: code.unwrap_or("ok").to_owned() }).inc();
    m.durations.get_or_create(&Tool { tool: tool.to_owned() }).observe(took.as_secs_f64());
    match code {
        None if !read_only => {
            m.transitions.get_or_create(&Tool { tool: tool.to_owned() }).inc();
        }
        Some(code) if store_error(code) => {
            m.store_errors.get_or_create(&Code { code: code.to_owned() }).inc();
        }
        _ => {}
    }
}

/// Records one run lock taken or refused (the engine's hook).
fn lock_waited(took: Duration, busy: bool) {
    let m = metrics();
    m.lock_waits.observe(took.as_secs_f64());
    if busy {
        m.run_busy.inc();
    }
}

/// Counts the runs a deadline changed.
pub fn timers_fired(runs: usize) {
    metrics().timers_fired.inc_by(runs as u64);
}

/// Counts what one pruning removed.
pub fn pruned(runs: usize, objects: usize) {
    metrics().pruned_runs.inc_by(runs as u64);
    metrics().pruned_objects.inc_by(objects as u64);
}

/// The text of a scrape: the engine's gauges read now.
fn render(engine: &Engine, in_flight: usize) -> String {
    let m = metrics();
    let _one = m.scrape.lock().unwrap_or_else(|p| p.into_inner());
    m.runs.clear();
    match engine.state_list(None) {
        Ok(list) => {
            for run in &list.runs {
                let status = run.status.as_ref().map_or("unknown", |s| s.as_str());
                m.runs.get_or_create(&Status { status: status.to_owned() }).inc();
            }
        }
        Err(e) => {
            tracing::warn!(code = e.code.as_str(), error = %e.human(), "/metrics cannot list the runs");
            m.store_errors.get_or_create(&Code { code: e.code.as_str().to_owned() }).inc();
        }
    }
    let waiting = engine.state_list_where(None, true).map_or(0, |l| l.runs.len());
    m.waiting.set(waiting as i64);
    m.timers_pending.set(engine.timers_pending() as i64);
    m.runs_cached.set(engine.runs_cached() as i64);
    m.in_flight.set(in_flight as i64);
    if let Some(pool) = engine.pool_usage() {
        for (state, n) in [("work", pool.work), ("lock", pool.lock), ("idle", pool.idle)] {
            m.db_pool.get_or_create(&PoolState { state: state.to_owned() }).set(n as i64);
        }
        for budget in ["work", "lock"] {
            m.db_pool_max.get_or_create(&Budget { budget: budget.to_owned() }).set(pool.size as i64);
        }
    }
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &m.registry);
    text
}

/// `GET /metrics` (mounted inside `/mcp`'s guard by `http.rs`).
pub fn router(engine: Arc<Engine>, in_flight: Arc<AtomicUsize>) -> Router {
    crate::runtime::engine::observe_lock_waits(lock_waited);
    Router::new().route("/metrics", axum::routing::get(scrape)).with_state((engine, in_flight))
}

async fn scrape(State((engine, in_flight)): State<(Arc<Engine>, Arc<AtomicUsize>)>) -> Response {
    let now = in_flight.load(Ordering::SeqCst);
    match tokio::task::spawn_blocking(move || render(&engine, now)).await {
        Ok(text) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
            text,
        )
            .into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "the scrape did not complete\n").into_response(),
    }
}
