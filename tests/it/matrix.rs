//! The capability matrix (issue 42): every workflow shape through every
//! surface, each cell asserting what a user relies on there. The shapes are
//! the workflows in `tests/matrix/workflows/` and the rows of [`SHAPES`]; the
//! surfaces are the functions named in [`SURFACES`]. A cell that cannot hold
//! is listed in [`EXCEPTIONS`] with its reason — and a listed cell that
//! holds after all fails the test too, so the list only shrinks.
//!
//! One project holds every shape, so each server (MCP stdio, MCP HTTP, the
//! inspector) is started once; the cells run in lanes on a few threads
//! (`matrix_run.rs`). Nothing sleeps: a wait that ends at its deadline is
//! ended by moving the binary's test clock forward (`SAVANT_TEST_CLOCK`,
//! see `runtime::clock`). Every surface that touches run state runs on
//! the file store and on PostgreSQL (its `*_postgres` twin, on one schema
//! of the cluster the test run shares; skipped, with a note, only where
//! PostgreSQL is not installed and CI is not set): the engine loop (plan,
//! next, answers, events, timers, children), `test --replay`, `exec`,
//! `state get`/`state list`, the inspector, `reset`, `fork` and
//! `upgrade`. 21 shapes × 26 surfaces: 546 cells. The time each surface
//! took is printed (`--nocapture`), never asserted.

use crate::common::Root;
use crate::support::copy_dir;
use savant_think::testing::children::without_items;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One workflow shape: a workflow, its params, how its steps are answered,
/// and how its run ends.
pub struct Shape {
    pub name: &'static str,
    pub workflow: &'static str,
    pub params: &'static str,
    /// Answers by step path without items (`review_each/read`), one per
    /// attempt; other steps get [`default_answer`] for their tool.
    pub answers: &'static [(&'static str, &'static [&'static str])],
    /// How the run ends when driven with those answers.
    pub status: &'static str,
    /// How `exec` (real tools, no client, no model) ends it: `done`,
    /// `failed`, `stopped` (a tool failed: resumable), or `refused` before
    /// the first step (a step needs a model: MODEL_NOT_CONFIGURED).
    pub exec: &'static str,
    /// The answer to each `await:` step, by path without items
    /// (`child/approve`, `ask` for every item); a wait not answered here,
    /// nor ended by [`Shape::event`], ends at its deadline (1 s away).
    pub waits: &'static [(&'static str, &'static str)],
    /// The [`EVENT`] the run waits for, if it does.
    pub event: Option<Event>,
}

/// The event the wait shapes take (declared in `tests/matrix/savant-think.toml`).
pub const EVENT: &str = "m.done";

/// An [`EVENT`] a shape's run is sent.
pub struct Event {
    /// Its key (the `match:` of the wait).
    pub key: &'static str,
    /// Its payload, JSON.
    pub payload: &'static str,
    /// Sent right after `plan`, before the wait starts (kept in the run's
    /// inbox), rather than once the run waits.
    pub early: bool,
}

impl Event {
    pub fn payload(&self) -> Value {
        serde_json::from_str(self.payload).unwrap()
    }
}

/// A shape with no wait (the rest of a row).
const NO_WAIT: Shape = Shape {
    name: "",
    workflow: "",
    params: "{}",
    answers: &[],
    status: "done",
    exec: "done",
    waits: &[],
    event: None,
};

/// Answers to the wait shapes' `await:` steps.
const YES: &str = r#"{"approved": true}"#;

/// A shape, as the cells take it.
pub type ShapeRef = Shape;

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "plain",
        workflow: "m_plain",
        params: "{}",
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "when_true",
        workflow: "m_when",
        params: r#"{"go": true}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "when_false",
        workflow: "m_when",
        params: r#"{"go": false}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "nothing_runs",
        workflow: "m_when_none",
        params: r#"{"go": false}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "foreach_empty",
        workflow: "m_foreach",
        params: r#"{"files": []}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "foreach_one",
        workflow: "m_foreach",
        params: r#"{"files": ["a.rs"]}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "foreach_several",
        workflow: "m_foreach",
        params: r#"{"files": ["a.rs", "b.rs", "c.rs"]}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "uses",
        workflow: "m_uses",
        params: "{}",
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "uses_in_foreach",
        workflow: "m_uses_foreach",
        params: r#"{"files": ["notes.txt", "notes.txt"]}"#,
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "uses_nested",
        workflow: "m_uses_nested",
        params: "{}",
        answers: &[],
        status: "done",
        exec: "done",
        ..NO_WAIT
    },
    Shape {
        name: "model_step",
        workflow: "m_model",
        params: "{}",
        answers: &[("judge", &[r#"{"ready": true}"#])],
        status: "done",
        exec: "refused",
        ..NO_WAIT
    },
    Shape {
        name: "typed_tool",
        workflow: "m_typed",
        params: "{}",
        answers: &[],
        status: "done",
        exec: "stopped",
        ..NO_WAIT
    },
    Shape {
        name: "retry_then_ok",
        workflow: "m_retry",
        params: "{}",
        answers: &[("check", &[r#"{"nope": 1}"#, r#"{"ok": true}"#])],
        status: "done",
        exec: "refused",
        ..NO_WAIT
    },
    Shape {
        name: "retries_exhausted",
        workflow: "m_retry",
        params: "{}",
        answers: &[("check", &[r#"{"nope": 1}"#, r#"{"nope": 2}"#])],
        status: "failed",
        exec: "refused",
        ..NO_WAIT
    },
    Shape { name: "await_answered", workflow: "m_await", waits: &[("approve", YES)], ..NO_WAIT },
    Shape { name: "await_timed_out", workflow: "m_await_timeout", ..NO_WAIT },
    Shape {
        name: "await_in_foreach",
        workflow: "m_await_foreach",
        params: r#"{"files": ["a.rs", "b.rs"]}"#,
        waits: &[("ask", YES)],
        ..NO_WAIT
    },
    Shape { name: "await_in_uses", workflow: "m_await_uses", waits: &[("child/approve", YES)], ..NO_WAIT },
    Shape { name: "sleep", workflow: "m_sleep", ..NO_WAIT },
    Shape {
        name: "event_early",
        workflow: "m_event",
        params: r#"{"id": "p1"}"#,
        event: Some(Event { key: "p1", payload: r#"{"status": "green"}"#, early: true }),
        ..NO_WAIT
    },
    Shape {
        name: "event_late",
        workflow: "m_event",
        params: r#"{"id": "p1"}"#,
        event: Some(Event { key: "p1", payload: r#"{"status": "green"}"#, early: false }),
        ..NO_WAIT
    },
];

/// The surfaces, in the order their cells run.
pub const SURFACES: &[&str] = &[
    "check",
    "cli",
    "cli_postgres",
    "mcp_stdio",
    "mcp_http",
    "state",
    "state_postgres",
    "explain_graph",
    "replay",
    "replay_postgres",
    "from_run",
    "mocks",
    "exec",
    "exec_postgres",
    "exec_dry_run",
    "inspector",
    "inspector_postgres",
    "answer",
    "signal",
    "webhook",
    "reset",
    "reset_postgres",
    "fork",
    "fork_postgres",
    "upgrade",
    "upgrade_postgres",
];

/// Cells that cannot hold, each with its reason: `(shape, surface, why)`.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// What a step's tool answers unless the shape says otherwise.
pub fn default_answer(call: Option<&str>) -> Value {
    match call.unwrap_or("") {
        "local_read" => json!({"path": "notes.txt", "content": "text", "bytes": 4, "truncated": false}),
        "gitlab.get_issue" => json!({"iid": 7, "title": "Crash on save"}),
        "think" => json!({"thought": "noted"}),
        _ => json!({"message": "said"}),
    }
}

impl Shape {
    pub fn params(&self) -> Value {
        serde_json::from_str(self.params).unwrap()
    }

    /// The answer to waiting `await:` step `step_id`, if the shape gives one.
    pub fn wait_answer(&self, step_id: &str) -> Option<Value> {
        let path = without_items(step_id);
        self.waits.iter().find(|(p, _)| *p == path).map(|(_, a)| serde_json::from_str(a).unwrap())
    }

    /// Whether the shape's run waits for a person (`await:`).
    pub fn asks(&self) -> bool {
        !self.waits.is_empty()
    }

    pub fn answer(&self, step_id: &str, call: Option<&str>, attempt: u64) -> Value {
        let path = without_items(step_id);
        match self.answers.iter().find(|(p, _)| *p == path) {
            Some((_, list)) => {
                let i = (attempt.max(1) as usize - 1).min(list.len() - 1);
                serde_json::from_str(list[i]).unwrap()
            }
            None => default_answer(call),
        }
    }

    pub fn run_id(&self, surface: &str) -> String {
        format!("{}-{surface}", self.name.replace('_', "-"))
    }
}

/// The project: every shape's workflow, its callees, the lock, the file
/// `local_read` reads; every process started in it reads the test clock
/// in [`CLOCK`] and writes state without fsync.
fn project() -> Root {
    let root = Root::new("matrix").crate_files();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/matrix"), &root.path);
    let clock = root.join(CLOCK);
    root.env("SAVANT_TEST_CLOCK", &clock.to_string_lossy()).env("SAVANT_STATE_FSYNC", "0")
}

/// The test clock's file under the project (see `runtime::clock`): a
/// wait's deadline is ended by moving it forward, never slept through.
pub const CLOCK: &str = ".test-clock";

/// Where every cell's outcome goes, and the time each surface took.
#[derive(Default)]
pub struct Results {
    failures: Vec<String>,
    held: usize,
    excepted_but_held: Vec<String>,
    spent: BTreeMap<&'static str, Duration>,
}

impl Results {
    pub fn cell(&mut self, shape: &str, surface: &str, outcome: Result<(), String>) {
        let excepted = EXCEPTIONS.iter().find(|(s, f, _)| *s == shape && *f == surface);
        match (outcome, excepted) {
            (Ok(()), None) => self.held += 1,
            (Ok(()), Some((_, _, why))) => {
                self.excepted_but_held.push(format!("{shape} × {surface} holds now (listed because: {why})"))
            }
            (Err(_), Some(_)) => {}
            (Err(e), None) => self.failures.push(format!("{shape} × {surface}: {e}")),
        }
    }

    /// Counts `spent` against `surface` (printed at the end, not asserted).
    pub fn spent(&mut self, surface: &'static str, spent: Duration) {
        *self.spent.entry(surface).or_default() += spent;
    }
}

/// The results, shared by the lanes.
pub type Shared = Mutex<Results>;

/// Runs `cell`, times it against `surface` and records its outcome.
pub fn timed(
    results: &Shared,
    shape: &str,
    surface: &'static str,
    cell: impl FnOnce() -> Result<(), String>,
) {
    let started = Instant::now();
    let outcome = cell();
    let mut r = results.lock().unwrap_or_else(|e| e.into_inner());
    r.spent(surface, started.elapsed());
    r.cell(shape, surface, outcome);
}

pub fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(message()) }
}

#[test]
fn every_shape_through_every_surface() {
    let started = Instant::now();
    let root = project();
    let results = Shared::default();
    crate::matrix_run::run(&root, &results);
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut spent: Vec<_> = results.spent.iter().collect();
    spent.sort_by_key(|(_, d)| std::cmp::Reverse(**d));
    eprintln!(
        "matrix: {} cells in {:.1} s; time by surface, summed over threads: {}",
        SHAPES.len() * SURFACES.len(),
        started.elapsed().as_secs_f64(),
        spent.iter().map(|(s, d)| format!("{s} {:.1}", d.as_secs_f64())).collect::<Vec<_>>().join(", ")
    );
    assert!(
        results.failures.is_empty(),
        "{} cell(s) fail:\n{}",
        results.failures.len(),
        results.failures.join("\n")
    );
    assert!(
        results.excepted_but_held.is_empty(),
        "remove from EXCEPTIONS:\n{}",
        results.excepted_but_held.join("\n")
    );
    let cells = SHAPES.len() * SURFACES.len();
    assert!(results.held + EXCEPTIONS.len() >= cells, "{} of {cells} cells checked", results.held);
}
