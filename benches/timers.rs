//! Runs parked on timers: what 10,000 of them cost while nothing is due,
//! and what finding the next deadline costs (the engine's timer index, not
//! a scan of every run).
//!
//! Groups:
//! - `idle_tick_10k`: one tick of `serve`'s timer thread with 10,000 runs
//!   parked on a 1-hour sleep and nothing due (`Engine::fire_timers_due`).
//! - `next_timer_10k`: the earliest deadline among them (`Engine::next_timer`).
//! - `scan_10k`: reading every parked run once (`Engine::scan_timers`, what
//!   `serve` does at start and once a minute), for scale.
//!
//! Run with `cargo bench --bench timers`; figures in `docs/PERFORMANCE.md`
//! (section "Waits").

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::Criterion;
use serde_json::json;
use std::time::{Duration, SystemTime};
use support::Root;

const RUNS: usize = 10_000;

fn main() {
    let root = Root::with_workflows(
        "timers",
        &[("parked", "id: parked\nsteps:\n  - id: nap\n    sleep: 1h\n  - id: after\n    call: think\n    deps: [nap]\n")],
    )
    .env("SAVANT_STATE_FSYNC", "0");
    let engine = root.engine_fsync(false);
    let started = std::time::Instant::now();
    for i in 0..RUNS {
        engine.plan("parked", json!({}), Some(&format!("r{i}")), true).expect("plan");
    }
    eprintln!("{RUNS} runs parked in {:.1?}", started.elapsed());
    assert!(engine.next_timer().is_some());
    let mut c = Criterion::default().configure_from_args().measurement_time(Duration::from_secs(3));
    c.bench_function("idle_tick_10k", |b| {
        b.iter(|| assert_eq!(engine.fire_timers_due(SystemTime::now()), 0));
    });
    c.bench_function("next_timer_10k", |b| b.iter(|| engine.next_timer()));
    let mut g = c.benchmark_group("scan");
    g.sample_size(10);
    g.bench_function("scan_10k", |b| b.iter(|| assert_eq!(engine.scan_timers(), RUNS)));
    g.finish();
    c.final_summary();
}
