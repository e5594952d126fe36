//! The executor's cost per step: `exec --dry-run` through the library over a
//! generated 1,000-step workflow, against the engine's own loop over the
//! same workflow (`plan` + 1,000 × `next` with the same results). fsync off
//! in both, so the figure is the executor's overhead, not the disk's.
//!
//! Groups (each iteration is one whole run of 1,000 steps, on a new run id):
//! - `engine_loop_1000`: `plan`, then `next` with a ready-made result for
//!   each instruction — the floor any executor pays.
//! - `exec_dry_run_1000`: `agent::exec::exec` with `dry_run` and `jobs` 1
//!   (multiplexer, schema samples, events built and dropped).
//! - `exec_dry_run_1000_jobs4`: the same with `--jobs 4` (the workflow is
//!   four independent chains, so four steps are ready at a time).
//!
//! - `exec_dry_run_corpus_69`: `exec --dry-run` of the original system's
//!   `code_review_initial` (69 steps), migrated, from the corpus beside the
//!   repository (`SAVANT_CORPUS`, default `../shared/corpus/legacy`;
//!   skipped when absent). Its time divided by 70 (plan and 69 nexts) is the
//!   engine's per-call path as `exec` drives it (issue 29.5).
//!
//! Run with `cargo bench --bench exec`; figures in `docs/PERFORMANCE.md`
//! (section "Executor"). The state goes to a directory under the system temp
//! dir (`SAVANT_BENCH_DIR` to choose another file system).

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::Criterion;
use savant_think::agent::exec::{ExecOptions, ExecStatus, exec, sample::sample};
use savant_think::agent::mux::{Multiplexer, MuxOptions};
use savant_think::runtime::Engine;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use support::{Root, drive_to_done};

const STEPS: usize = 1000;
const CHAINS: usize = 4;

/// 1,000 steps in four chains; each step interpolates its predecessor's
/// capture, and every other one has a success schema.
fn workflow() -> String {
    let mut y = String::from("id: thousand\nparams:\n  repo: { type: string, default: r }\nsteps:\n");
    for i in 0..STEPS {
        writeln!(y, "  - id: s{i}\n    call: tool.t{}", i % 7).unwrap();
        if i >= CHAINS {
            writeln!(y, "    deps: [s{}]", i - CHAINS).unwrap();
            writeln!(y, "    input_template: {{ q: \"<<params.repo>> <<c{}.n>>\" }}", i - CHAINS).unwrap();
        }
        writeln!(y, "    capture_as: c{i}").unwrap();
        if i % 2 == 0 {
            y.push_str("    success_schema: { type: object, required: [n], properties: { n: { type: integer, minimum: 1 } } }\n");
        } else {
            y.push_str(
                "    success_schema: { type: object, required: [n], properties: { n: { type: integer } } }\n",
            );
        }
    }
    y
}

fn run_id() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("b{}", N.fetch_add(1, Ordering::Relaxed))
}

/// The engine alone: plan, then next with each step's result.
fn engine_loop(engine: &Engine) -> Duration {
    let results = [
        sample(
            &json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 1}}}),
        ),
        json!({"n": 0}),
    ];
    let id = run_id();
    let started = Instant::now();
    let mut steps = 0;
    let done = drive_to_done(engine, "thousand", &id, Value::Null, |i| {
        let n: usize = i.step_id[1..].parse().unwrap();
        steps += 1;
        results[n % 2].clone()
    });
    done.unwrap();
    assert_eq!(steps, STEPS);
    started.elapsed()
}

fn exec_run(rt: &tokio::runtime::Runtime, mux: &Arc<Multiplexer>, jobs: usize) -> Duration {
    let options = ExecOptions {
        workflow: "thousand".into(),
        params: Value::Null,
        run_id: Some(run_id()),
        dry_run: true,
        jobs,
        ..ExecOptions::default()
    };
    let started = Instant::now();
    let report = rt.block_on(exec(mux.clone(), &options, &mut |_| {})).unwrap();
    let elapsed = started.elapsed();
    assert_eq!(report.status, ExecStatus::Done);
    assert_eq!(report.steps_run, STEPS);
    elapsed
}

/// The corpus's `code_review_initial`, migrated, or `None` without the corpus.
fn corpus_workflow() -> Option<String> {
    let dir = std::env::var_os("SAVANT_CORPUS").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/legacy"),
        std::path::PathBuf::from,
    );
    let path = dir.join("code_review_initial__31c6b870.yaml");
    let text = std::fs::read_to_string(&path).ok()?;
    let src = savant_think::source::SourceFile::new(path.display().to_string(), text);
    match savant_think::migrate::migrate(&src, &Default::default()).outcome {
        savant_think::migrate::Outcome::Migrated { text, .. } => Some(text),
        _ => None,
    }
}

fn exec_corpus(rt: &tokio::runtime::Runtime, mux: &Arc<Multiplexer>) -> Duration {
    let options = ExecOptions {
        workflow: "cri".into(),
        params: json!({"mr_iid": "7"}),
        run_id: Some(run_id()),
        dry_run: true,
        jobs: 1,
        ..ExecOptions::default()
    };
    let started = Instant::now();
    let report = rt.block_on(exec(mux.clone(), &options, &mut |_| {})).unwrap();
    let elapsed = started.elapsed();
    assert_eq!(report.status, ExecStatus::Done);
    elapsed
}

fn bench(c: &mut Criterion) {
    let root = Root::with_workflows("exec", &[("thousand", &workflow())]);
    let engine = Arc::new(root.engine_fsync(false));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mux = Arc::new(Multiplexer::new(engine.clone(), MuxOptions::default()));
    let mut g = c.benchmark_group("exec");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("engine_loop_1000", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| engine_loop(&engine)).sum())
    });
    g.bench_function("exec_dry_run_1000", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| exec_run(&rt, &mux, 1)).sum())
    });
    g.bench_function("exec_dry_run_1000_jobs4", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| exec_run(&rt, &mux, 4)).sum())
    });
    if let Some(cri) = corpus_workflow() {
        let root = Root::with_workflows("exec-corpus", &[("cri", &cri)]);
        let engine = Arc::new(root.engine_fsync(false));
        let mux = Arc::new(Multiplexer::new(engine, MuxOptions::default()));
        g.bench_function("exec_dry_run_corpus_69", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| exec_corpus(&rt, &mux)).sum())
        });
    } else {
        eprintln!("exec_dry_run_corpus_69: skipped (no corpus; set SAVANT_CORPUS)");
    }
    g.finish();
}

criterion::criterion_group!(benches, bench);
criterion::criterion_main!(benches);
