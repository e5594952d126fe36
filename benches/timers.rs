//! Runs parked on timers: what 10,000 of them cost while nothing is due,
//! and what finding the next deadline costs (the store's timer index: on
//! the file store, one marker per run under `timers/`, listed again only
//! when the directory changed; not a scan of every run).
//!
//! Groups:
//! - `idle_tick_10k`: one tick of `serve`'s timer thread with 10,000 runs
//!   parked on a 1-hour sleep and nothing due (`Engine::fire_timers_due`):
//!   a `stat` of the markers' directory.
//! - `next_timer_10k`: the earliest deadline among them (`Engine::next_timer`).
//! - `relist_10k`: a tick right after another process set a marker (the
//!   directory changed): the 10,000 markers listed again.
//! - `scan_10k`: reading every parked run once (`Engine::scan_timers`, what
//!   `serve` does at start), for scale.
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
    assert_eq!(engine.timers_pending(), RUNS);
    // Past the window in which a fresh listing is not trusted yet.
    std::thread::sleep(Duration::from_millis(2500));
    let mut c = Criterion::default().configure_from_args().measurement_time(Duration::from_secs(3));
    c.bench_function("idle_tick_10k", |b| {
        b.iter(|| assert_eq!(engine.fire_timers_due(SystemTime::now()).unwrap(), 0));
    });
    c.bench_function("next_timer_10k", |b| b.iter(|| engine.next_timer()));
    let dir = root.path.join(".savant/state/timers");
    let mut g = c.benchmark_group("relist");
    g.sample_size(20);
    g.bench_function("relist_10k", |b| {
        b.iter(|| {
            // A change by another process: the directory's time moves.
            std::fs::write(dir.join(".touch"), b"").unwrap();
            std::fs::remove_file(dir.join(".touch")).unwrap();
            assert_eq!(engine.fire_timers_due(SystemTime::now()).unwrap(), 0)
        });
    });
    g.finish();
    let mut g = c.benchmark_group("scan");
    g.sample_size(10);
    g.bench_function("scan_10k", |b| b.iter(|| assert_eq!(engine.scan_timers(), RUNS)));
    g.finish();
    c.final_summary();
}
