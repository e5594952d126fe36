//! `savant-think test` at scale: 1,000 tests over the bundled workflows (the
//! shipped test files of `tests/bundled/`, copied until there are 1,000
//! tests), each a whole run of the real engine over the in-memory store.
//!
//! Groups (each iteration runs the whole suite: discovery, reading and
//! checking the test files, 1,000 runs, the comparisons):
//! - `suite_1000_jobs1`: on one thread;
//! - `suite_1000_jobs2`: on two (the target: under 1 s on 2 cores).
//!
//! Run with `cargo bench --bench test`; figures in `docs/PERFORMANCE.md`
//! (section "Workflow tests").

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::Criterion;
use savant_think::testing::suite::{Options, run};
use std::path::Path;
use std::time::Duration;
use support::Root;

const TESTS: usize = 1000;

/// A root with the bundled workflows and copies of their test files
/// holding `TESTS` tests in all.
fn root() -> Root {
    let root = Root::new("bench-test").bundled();
    let crate_dir = Path::new(support::CRATE);
    support::root::copy_dir(&crate_dir.join("tests/bundled/fixtures"), &root.join("tests/fixtures"));
    let files: Vec<(String, String)> = ["release_notes", "review_v1", "ticket_grooming"]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                std::fs::read_to_string(crate_dir.join(format!("tests/bundled/{f}.test.yaml"))).unwrap(),
            )
        })
        .collect();
    let per_round: usize = files.iter().map(|(_, t)| t.matches("\n  - name:").count()).sum();
    let mut written = 0;
    let mut round = 0;
    while written < TESTS {
        for (name, text) in &files {
            root.write(&format!("tests/{name}_{round}.test.yaml"), text);
        }
        written += per_round;
        round += 1;
    }
    root
}

fn suite(c: &mut Criterion) {
    let root = root();
    let options = |jobs| Options { root: root.path.clone(), paths: Vec::new(), filter: None, jobs };
    let report = run(&options(2)).unwrap();
    assert!(report.results.len() >= TESTS, "{} tests", report.results.len());
    assert!(report.passed(), "the shipped tests pass");
    let mut group = c.benchmark_group("test");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    for jobs in [1, 2] {
        group.bench_function(format!("suite_1000_jobs{jobs}"), |b| {
            b.iter(|| {
                let r = run(&options(jobs)).unwrap();
                assert!(r.passed());
                r.results.len()
            })
        });
    }
    group.finish();
}

criterion::criterion_group!(benches, suite);
criterion::criterion_main!(benches);
