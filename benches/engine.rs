//! Per-call latency of the run engine (`plan` and `next`, through the library
//! API on a temporary root), with fsync off and on, and the cost of a bare
//! durable write to compare with.
//!
//! Groups:
//! - `next_70`, `plan_70`: a 70-step workflow (a chain with extra edges,
//!   `when:`, schemas, interpolated inputs). `next` is timed call by call over
//!   whole runs; a finished run is started again (untimed).
//! - `next_foreach_10k`, `plan_foreach_10k`: one `foreach` over 10,000 items.
//!   With fsync on, `next` is timed from item 5,000 on (the run is filled to
//!   there with fsync off first), so the figure is mid-run, not at the start.
//! - `run_foreach`: the total time of a whole run (`plan` + every `next`) of a
//!   1,000- and a 10,000-item foreach, fsync off: linear means 10k ≈ 10 × 1k.
//! - `baseline`: write + fsync + rename of the bytes one `next` writes (its
//!   journal line) and of a whole 70-step snapshot, with std::fs only.
//!
//! Run with `cargo bench --bench engine`; figures in `docs/PERFORMANCE.md`
//! (section "Engine"). The state goes to a directory under the system temp
//! dir (`SAVANT_BENCH_DIR` to choose another file system).

#[path = "../tests/support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use savant_think::runtime::Engine;
use savant_think::runtime::reply::{Progress, ProgressStatus};
use serde_json::{Value, json};
use support::{Root, generate, next_args};

/// A scratch project root with the workflows `seventy` and `loop`.
fn root(name: &str) -> Root {
    Root::with_workflows(name, &[("seventy", &seventy()), ("loop", &generate::foreach_then_say("loop"))])
}

/// 70 steps: each depends on the previous one (and every 4th also on the
/// step 3 back), interpolates params and the previous capture, every 5th has
/// a success schema and every 10th a `when:` that holds.
fn seventy() -> String {
    let mut y = String::from(
        "id: seventy\nparams:\n  repo: { type: string }\n  limit: { type: integer, default: 3 }\n\
         required: [repo]\nsteps:\n",
    );
    for i in 0..70 {
        writeln!(y, "  - id: s{i}\n    call: tool.t{}", i % 7).unwrap();
        match i {
            0 => {}
            i if i % 4 == 0 && i >= 3 => writeln!(y, "    deps: [s{}, s{}]", i - 1, i - 3).unwrap(),
            i => writeln!(y, "    deps: [s{}]", i - 1).unwrap(),
        }
        if i % 10 == 9 {
            y.push_str("    when: \"params.limit > 0\"\n");
        }
        y.push_str("    input_template:\n");
        writeln!(y, "      q: \"step {i} of <<params.repo>> (limit <<params.limit>>)\"").unwrap();
        if i > 0 {
            writeln!(y, "      prev: \"<<c{}.ok>>\"", i - 1).unwrap();
        }
        if i % 5 == 0 {
            y.push_str(
                "    success_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }\n",
            );
        }
        writeln!(y, "    capture_as: c{i}\n    rationale: Step {i} of a long benchmark chain.").unwrap();
    }
    y
}

fn seventy_params() -> Value {
    json!({ "repo": "group/app" })
}

/// A tool's answer of a realistic size (about 200 bytes of JSON).
fn result_for(step: &str) -> Value {
    json!({ "ok": true, "step": step, "text": "The tool looked at the input and found nothing worth reporting; \
           this sentence pads the result to a typical size for a short answer." })
}

/// Drives runs of one workflow forever: each `timed_next` submits the first
/// ready step and returns how long `Engine::next` took; a finished run is
/// started again (untimed).
struct Driver {
    engine: Engine,
    workflow: &'static str,
    params: Value,
    run: &'static str,
    current: Progress,
}

impl Driver {
    fn new(engine: Engine, workflow: &'static str, params: Value, run: &'static str) -> Driver {
        let current = engine.plan(workflow, params.clone(), Some(run), true).unwrap();
        Driver { engine, workflow, params, run, current }
    }

    fn timed_next(&mut self) -> Duration {
        if self.current.is_done() {
            self.current =
                self.engine.plan(self.workflow, self.params.clone(), Some(self.run), true).unwrap();
        }
        let step = self.current.instruction().unwrap().step_id.clone();
        let result = result_for(&step);
        let args = next_args(self.workflow, self.run, step, result);
        let started = Instant::now();
        let r = self.engine.next(args);
        let took = started.elapsed();
        self.current = r.unwrap();
        took
    }
}

fn fsync_label(fsync: bool) -> &'static str {
    if fsync { "fsync_on" } else { "fsync_off" }
}

fn next_70(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_70");
    for fsync in [false, true] {
        let root = root(&format!("next70-{fsync}"));
        let mut d = Driver::new(root.engine_fsync(fsync), "seventy", seventy_params(), "bench");
        if fsync {
            g.sample_size(10).measurement_time(Duration::from_secs(6));
        } else {
            g.sample_size(50).measurement_time(Duration::from_secs(5));
        }
        g.bench_function(fsync_label(fsync), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| d.timed_next()).sum())
        });
    }
    g.finish();
}

fn plan_70(c: &mut Criterion) {
    let mut g = c.benchmark_group("plan_70");
    for fsync in [false, true] {
        let root = root(&format!("plan70-{fsync}"));
        let e = root.engine_fsync(fsync);
        if fsync {
            g.sample_size(10).measurement_time(Duration::from_secs(6));
        } else {
            g.sample_size(50).measurement_time(Duration::from_secs(4));
        }
        // A new run each time, as a client starting work would.
        let mut n = 0u64;
        g.bench_function(fsync_label(fsync), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    n += 1;
                    let run = format!("p{n}");
                    let started = Instant::now();
                    let r = e.plan("seventy", seventy_params(), Some(&run), true);
                    total += started.elapsed();
                    assert!(
                        matches!(r.unwrap().status, ProgressStatus::Running { ready, .. } if ready == ["s0"])
                    );
                }
                total
            })
        });
    }
    g.finish();
}

fn next_foreach_10k(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_foreach_10k");
    g.sampling_mode(SamplingMode::Flat);
    for fsync in [false, true] {
        let root = root(&format!("next10k-{fsync}"));
        let mut d = Driver::new(root.engine_fsync(false), "loop", generate::items(10_000), "bench");
        if fsync {
            // Fill the run to the middle with fsync off, then go on with it on.
            for _ in 0..5_000 {
                d.timed_next();
            }
            d.engine = root.engine_fsync(true);
            g.sample_size(10).measurement_time(Duration::from_secs(8));
        } else {
            g.sample_size(30).measurement_time(Duration::from_secs(6));
        }
        g.bench_function(fsync_label(fsync), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| d.timed_next()).sum())
        });
    }
    g.finish();
}

fn plan_foreach_10k(c: &mut Criterion) {
    let mut g = c.benchmark_group("plan_foreach_10k");
    g.sampling_mode(SamplingMode::Flat).sample_size(10).measurement_time(Duration::from_secs(4));
    let params = generate::items(10_000);
    for fsync in [false, true] {
        let root = root(&format!("plan10k-{fsync}"));
        let e = root.engine_fsync(fsync);
        let mut n = 0u64;
        g.bench_function(fsync_label(fsync), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    n += 1;
                    let run = format!("p{n}");
                    let p = params.clone();
                    let started = Instant::now();
                    let r = e.plan("loop", p, Some(&run), true);
                    total += started.elapsed();
                    assert!(matches!(r.unwrap().status, ProgressStatus::Running { ready_total: 10_000, .. }));
                }
                total
            })
        });
    }
    g.finish();
}

/// Per-call time of `next` by position in the run: ten buckets (deciles of
/// the items), each the total time and the number of calls.
type Profile = [(Duration, u32); 10];

/// The whole of one run: plan, then every item and the last step. Adds each
/// `next` to `profile` by its position.
fn whole_run(e: &Engine, params: &Value, run: &str, n: usize, profile: &mut Profile) -> Duration {
    let started = Instant::now();
    let mut r = e.plan("loop", params.clone(), Some(run), true).unwrap();
    let mut k = 0;
    while !r.is_done() {
        let step = r.instruction().unwrap().step_id.clone();
        let call = Instant::now();
        let result = result_for(&step);
        r = e.next(next_args("loop", run, step, result)).unwrap();
        let bucket = &mut profile[(k * 10 / n).min(9)];
        bucket.0 += call.elapsed();
        bucket.1 += 1;
        k += 1;
    }
    started.elapsed()
}

fn run_foreach(c: &mut Criterion) {
    let mut g = c.benchmark_group("run_foreach");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for (label, n, secs) in [("1k", 1_000, 4), ("10k", 10_000, 20)] {
        let root = root(&format!("run-{label}"));
        let e = root.engine_fsync(false);
        let params = generate::items(n);
        let mut profile: Profile = Default::default();
        g.measurement_time(Duration::from_secs(secs));
        g.bench_function(label, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| whole_run(&e, &params, "r", n, &mut profile)).sum())
        });
        let deciles: Vec<String> = profile
            .iter()
            .map(|(total, calls)| format!("{:.1}", total.as_secs_f64() * 1e6 / f64::from((*calls).max(1))))
            .collect();
        eprintln!("run_foreach/{label}: mean µs per `next` by decile of the run: {}", deciles.join(" "));
    }
    g.finish();
}

/// write + fsync + rename of `bytes`, nothing else.
fn write_fsync_rename(dir: &Path, bytes: &[u8]) {
    let tmp = dir.join("baseline.json.tmp");
    let mut f = std::fs::File::create(&tmp).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(&tmp, dir.join("baseline.json")).unwrap();
}

fn baseline(c: &mut Criterion) {
    let root = root("baseline");
    // The bytes of a real run: the journal line of a `next` on the 70-step
    // workflow, and the snapshot of that run half-way.
    let mut d = Driver::new(root.engine_fsync(false), "seventy", seventy_params(), "b");
    for _ in 0..35 {
        d.timed_next();
    }
    let state = d.engine.state_get("seventy", "b").unwrap();
    let event = &state.history[34];
    let mut line = serde_json::to_vec(event).unwrap();
    line.push(b'\n');
    let snapshot = serde_json::to_vec(&state).unwrap();
    eprintln!(
        "baseline: a `next` journal line is {} bytes, the snapshot {} bytes",
        line.len(),
        snapshot.len()
    );

    let mut g = c.benchmark_group("baseline");
    g.sample_size(10).measurement_time(Duration::from_secs(6));
    g.bench_function("write_fsync_rename_event", |b| b.iter(|| write_fsync_rename(&root.path, &line)));
    g.bench_function("write_fsync_rename_snapshot", |b| b.iter(|| write_fsync_rename(&root.path, &snapshot)));
    g.finish();
}

criterion::criterion_group!(
    benches,
    next_70,
    plan_70,
    next_foreach_10k,
    plan_foreach_10k,
    run_foreach,
    baseline
);
criterion::criterion_main!(benches);
