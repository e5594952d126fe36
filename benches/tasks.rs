//! `tasks/get` beside `think_state_get` on a run of 1,000 steps (issue 45:
//! `tasks/get` answers within 2× `think_state_get`), through the library
//! calls behind the two (`mcp::tasks::get` and `Engine::state_get`), each
//! with the serialization of its answer to JSON, on the file store (fsync
//! off: neither call writes).
//!
//! Groups (`task_read_1000`):
//! - `done`: a finished run of 999 `think` steps and a `prompt.say` (the
//!   task is `completed`, its captures inline as the result).
//! - `running`: the same workflow half-way (500 steps done; `working`).
//!
//! Run with `cargo bench --bench tasks`; figures in `docs/PERFORMANCE.md`
//! (section "tasks/get"). The state goes to a directory under the system
//! temp dir (`SAVANT_BENCH_DIR` to choose another file system).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use criterion::Criterion;
use savant_think::mcp::tasks;
use savant_think::runtime::Engine;
use serde_json::{Value, json};
use std::hint::black_box;
use support::{Root, generate, next_args};

/// Steps in the run: 999 `think` steps and the closing `prompt.say`.
const STEPS: usize = 1000;

/// Answers the first `n` steps of run `run_id` of `long` (all when `None`).
fn drive(e: &Engine, run_id: &str, n: Option<usize>) {
    let mut r = e.plan("long", Value::Null, Some(run_id), true).unwrap();
    let mut answered = 0;
    while !r.is_done() && n.is_none_or(|n| answered < n) {
        let step = r.instruction().expect("a running run has an instruction").step_id.clone();
        r = e.next(next_args("long", run_id, step, json!({ "ok": true }))).unwrap();
        answered += 1;
    }
}

fn task_read(c: &mut Criterion) {
    let root = Root::with_workflows("tasks-get", &[("long", &generate::sequential("long", STEPS - 1))]);
    let e = root.engine_fsync(false);
    drive(&e, "done", None);
    drive(&e, "running", Some(STEPS / 2));
    let mut g = c.benchmark_group("task_read_1000");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    for run in ["done", "running"] {
        let id = format!("run://long/{run}");
        let task = tasks::get(&e, &id).unwrap();
        let state = e.state_get("long", run).unwrap();
        eprintln!(
            "{run}: {} events; tasks/get answer {} bytes, think_state_get answer {} bytes",
            state.history.len(),
            serde_json::to_vec(&task).unwrap().len(),
            serde_json::to_vec(&state).unwrap().len()
        );
        g.bench_function(format!("{run}/tasks_get"), |b| {
            b.iter(|| black_box(serde_json::to_value(tasks::get(&e, &id).unwrap()).unwrap()))
        });
        g.bench_function(format!("{run}/state_get"), |b| {
            b.iter(|| black_box(serde_json::to_value(e.state_get("long", run).unwrap()).unwrap()))
        });
    }
    g.finish();
}

criterion::criterion_group!(benches, task_read);
criterion::criterion_main!(benches);
