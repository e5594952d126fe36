//! `savant-think test` at scale: 1,000 tests over the bundled workflows (the
//! shipped test files of `tests/bundled/`, copied until there are 1,000
//! tests), each a whole run of the real engine over the in-memory store.
//!
//! Groups (each iteration runs the whole suite: discovery, reading and
//! checking the test files, 1,000 runs, the comparisons):
//! - `suite_1000_jobs1`: on one thread;
//! - `suite_1000_jobs2`: on two (the target: under 1 s on 2 cores);
//! - `uses_1000_by_item` / `_by_path` / `_by_call`: 1,000 tests of a
//!   workflow whose `foreach` step `uses:` a two-step child (three items,
//!   six child steps mocked per test), the child's steps mocked by each
//!   item's path (`each[1]/read`), by the path of every item (`each/read`)
//!   or by the tool (`call:local_read`): the same runs, only the mock keys
//!   differ, so the difference is what resolving a path costs (issue 42:
//!   nothing measurable).
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

/// The parent and child workflows of the `uses_1000_*` groups.
const REVIEW_FILE: &str = "params:\n  path: { type: string }\nrequired: [path]\nsteps:\n  - id: read\n    call: local_read\n    input_template: { path: \"<<params.path>>\" }\n    capture_as: file\n  - id: ask\n    call: prompt.say\n    input_template: { text: \"Review <<params.path>>: <<file.content>>\" }\n    capture_as: answer\n    success_schema: { type: object, properties: { verdict: { type: string } }, required: [verdict] }\noutputs:\n  verdict: <<answer.verdict>>\n";
const REVIEW: &str = "params:\n  files: { type: array, items: { type: string } }\nsteps:\n  - id: each\n    uses: review_file\n    foreach: params.files\n    with: { path: \"<<item>>\" }\n    capture_as: reviews\n  - id: report\n    call: prompt.say\n    input_template: { text: \"<<len(reviews)>> files: <<reviews[0].verdict>>\" }\n";

/// A root with `REVIEW`/`REVIEW_FILE` and `TESTS` tests whose child steps
/// are mocked by `mocks` (YAML lines under `mocks:`).
fn uses_root(form: &str, mocks: &str) -> Root {
    let root = Root::with_workflows(
        &format!("bench-uses-{form}"),
        &[("review_file", REVIEW_FILE), ("review", REVIEW)],
    );
    let test = |n: usize| {
        format!(
            "  - name: t{n}\n    params: {{files: [a.rs, b.rs, c.rs]}}\n    mocks:\n{mocks}      report: {{result: {{message: ok}}}}\n    expect:\n      status: done\n      inputs:\n        \"each[1]/read\": {{path: b.rs}}\n"
        )
    };
    for file in 0..TESTS / 100 {
        let tests: String = (0..100).map(test).collect();
        root.write(&format!("tests/{form}_{file}.test.yaml"), format!("workflow: review\ntests:\n{tests}"));
    }
    root
}

fn uses(c: &mut Criterion) {
    let by_item: String = (0..3)
        .map(|i| format!("      each[{i}]/read: {{result: {{content: x}}}}\n      each[{i}]/ask: {{result: {{verdict: ok}}}}\n"))
        .collect();
    let forms = [
        ("by_item", by_item),
        (
            "by_path",
            "      each/read: {result: {content: x}}\n      each/ask: {result: {verdict: ok}}\n".to_owned(),
        ),
        (
            "by_call",
            "      call:local_read: {result: {content: x}}\n      each/ask: {result: {verdict: ok}}\n"
                .to_owned(),
        ),
    ];
    let mut group = c.benchmark_group("test");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    for (form, mocks) in forms {
        let root = uses_root(form, &mocks);
        let options = Options { root: root.path.clone(), paths: Vec::new(), filter: None, jobs: 1 };
        let report = run(&options).unwrap();
        assert_eq!(report.results.len(), TESTS, "{form}");
        assert!(report.passed(), "{form}: every test passes");
        group.bench_function(format!("uses_1000_{form}"), |b| {
            b.iter(|| {
                let r = run(&options).unwrap();
                assert!(r.passed());
                r.results.len()
            })
        });
    }
    group.finish();
}

criterion::criterion_group!(benches, suite, uses);
criterion::criterion_main!(benches);
