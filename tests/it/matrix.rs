//! The capability matrix (issue 42): every workflow shape through every
//! surface, each cell asserting what a user relies on there. The shapes are
//! the workflows in `tests/matrix/workflows/` and the rows of [`SHAPES`]; the
//! surfaces are the functions named in [`SURFACES`]. A cell that cannot hold
//! is listed in [`EXCEPTIONS`] with its reason — and a listed cell that
//! holds after all fails the test too, so the list only shrinks.
//!
//! One project holds every shape, so each server (MCP stdio, MCP HTTP, the
//! inspector) is started once. Run state is exercised on the file store and,
//! for the engine loop, on PostgreSQL (skipped, with a note, only where
//! PostgreSQL is not installed and CI is not set).

use crate::common::Root;
use crate::matrix_drive::{Cli, Http, Stdio_, Surface, Trace, drive};
use crate::support::copy_dir;
use savant_think::testing::children::without_items;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

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
const SURFACES: &[&str] = &[
    "check",
    "cli",
    "cli_postgres",
    "mcp_stdio",
    "mcp_http",
    "state",
    "explain_graph",
    "replay",
    "from_run",
    "mocks",
    "exec",
    "exec_dry_run",
    "inspector",
    "answer",
    "signal",
    "webhook",
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

/// The project: every shape's workflow, its callees, the lock, the file `local_read` reads.
fn project() -> Root {
    let root = Root::new("matrix").crate_files();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/matrix"), &root.path);
    root
}

/// Where every cell's outcome goes.
#[derive(Default)]
pub struct Results {
    failures: Vec<String>,
    held: usize,
    excepted_but_held: Vec<String>,
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
}

fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(message()) }
}

#[test]
fn every_shape_through_every_surface() {
    let root = project();
    let mut results = Results::default();
    let traces = engine_loops(&root, &mut results);
    check_cells(&root, &mut results);
    for shape in SHAPES {
        let cli = traces.get(shape.name);
        results.cell(
            shape.name,
            "state",
            crate::matrix_cells::state(&root, shape.workflow, &shape.run_id("cli"), shape.status),
        );
        results.cell(shape.name, "explain_graph", crate::matrix_cells::explain_graph(&root, shape.workflow));
        results.cell(
            shape.name,
            "replay",
            crate::matrix_cells::replay(&root, shape.workflow, &shape.run_id("cli")),
        );
        results.cell(
            shape.name,
            "from_run",
            crate::matrix_cells::from_run(&root, shape.name, shape.workflow, &shape.run_id("cli")),
        );
        results.cell(shape.name, "mocks", crate::matrix_cells::mocks(&root, shape, cli));
        results.cell(shape.name, "exec", crate::matrix_cells::exec(&root, shape, &shape.run_id("exec")));
        results.cell(shape.name, "exec_dry_run", crate::matrix_cells::dry_run(&root, shape.workflow));
    }
    crate::matrix_cells::inspector(&root, &mut results, &traces);
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

/// `check` on the whole project: no diagnostic in any shape's file.
fn check_cells(root: &Root, results: &mut Results) {
    let out = root.command(&["check", "--format", "json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let diagnostics: Vec<Value> = report["diagnostics"].as_array().cloned().unwrap_or_default();
    for shape in SHAPES {
        let file = format!("{}.yaml", shape.workflow);
        let own: Vec<&Value> =
            diagnostics.iter().filter(|d| d["file"].as_str().is_some_and(|f| f.ends_with(&file))).collect();
        let outcome = ensure(out.status.success() && report.is_object(), || {
            format!("check failed: {}", String::from_utf8_lossy(&out.stdout))
        })
        .and_then(|()| ensure(own.is_empty(), || format!("diagnostics: {own:?}")));
        results.cell(shape.name, "check", outcome);
    }
}

/// The engine loop on each surface: the CLI on the file store is the
/// reference; PostgreSQL, MCP stdio and MCP HTTP must hand out the same
/// instructions and end the same way.
fn engine_loops(root: &Root, results: &mut Results) -> BTreeMap<&'static str, Trace> {
    let mut reference = BTreeMap::new();
    let mut file = Cli { root, env: Vec::new(), commands: false };
    for shape in SHAPES {
        let outcome = drive(&mut file, shape, &shape.run_id("cli")).and_then(|t| {
            ensure(t.status == shape.status, || format!("ended {}, not {}: {t:?}", t.status, shape.status))?;
            Ok(t)
        });
        match outcome {
            Ok(t) => {
                results.cell(shape.name, "cli", Ok(()));
                reference.insert(shape.name, t);
            }
            Err(e) => results.cell(shape.name, "cli", Err(e)),
        }
    }
    let pg = savant_think::state::pg::cluster::shared()
        .map(|c| c.fresh_schema("matrix").expect("a schema for the matrix"));
    let mut stdio = Stdio_::start(root);
    let mut http = Http::start(root);
    let mut hook = Http::start(root);
    hook.webhook = true;
    for shape in SHAPES {
        let same = |name: &str, surface: &mut dyn Surface| {
            let t = drive(surface, shape, &shape.run_id(name))?;
            let Some(r) = reference.get(shape.name) else {
                return Err("no reference run (cli failed)".into());
            };
            ensure(t.instructions == r.instructions, || {
                format!("other instructions than the CLI's:\n{:?}\nvs\n{:?}", t.instructions, r.instructions)
            })?;
            ensure(t.waits == r.waits, || {
                format!("waits ended otherwise than on the CLI: {:?} vs {:?}", t.waits, r.waits)
            })?;
            ensure((&t.status, &t.captures, &t.steps) == (&r.status, &r.captures, &r.steps), || {
                format!("another end than the CLI's: {t:?} vs {r:?}")
            })
        };
        let pg_outcome = match &pg {
            Some(url) => {
                let mut cli =
                    Cli { root, env: vec![("SAVANT_STATE_URL".into(), url.clone())], commands: false };
                same("pg", &mut cli)
            }
            None => {
                crate::support::skip::skip(
                    "matrix × cli_postgres",
                    "PostgreSQL is not installed",
                    Some("SAVANT_REQUIRE_PG"),
                );
                Ok(())
            }
        };
        results.cell(shape.name, "cli_postgres", pg_outcome);
        results.cell(shape.name, "mcp_stdio", same("stdio", &mut stdio));
        results.cell(shape.name, "mcp_http", same("http", &mut http));
        // The wait commands: `answer` and `signal` drive the shapes they
        // apply to; on the others they refuse, recording nothing.
        let mut commands = Cli { root, env: Vec::new(), commands: true };
        let (answer, signal) = match (shape.asks(), shape.event.is_some()) {
            (true, _) => (same("answer", &mut commands), refused_signal(root, shape)),
            (_, true) => (refused_answer(root, shape), same("signal", &mut commands)),
            _ => (refused_answer(root, shape), refused_signal(root, shape)),
        };
        results.cell(shape.name, "answer", answer);
        results.cell(shape.name, "signal", signal);
        let webhook = match shape.event {
            Some(_) => same("webhook", &mut hook),
            None => refused_webhook(root, &hook, shape),
        };
        results.cell(shape.name, "webhook", webhook);
    }
    reference
}

/// The CLI run's version, to show a refusal recorded nothing.
fn version(root: &Root, shape: &Shape) -> Value {
    let out =
        root.command(&["state", "get", shape.workflow, "--run-id", &shape.run_id("cli")]).output().unwrap();
    serde_json::from_slice::<Value>(&out.stdout).map(|s| s["version"].clone()).unwrap_or(Value::Null)
}

/// `answer` for a step of a run that waits for no answer: STEP_NOT_WAITING
/// (a failed run's own failure), exit 1, nothing recorded.
fn refused_answer(root: &Root, shape: &Shape) -> Result<(), String> {
    let before = version(root, shape);
    let state =
        root.command(&["state", "get", shape.workflow, "--run-id", &shape.run_id("cli")]).output().unwrap();
    let state: Value = serde_json::from_slice(&state.stdout).unwrap_or(Value::Null);
    // Its last step: never a wait in these shapes.
    let steps = state["steps"].as_array().cloned().unwrap_or_default();
    let step = steps.last().and_then(|s| s["id"].as_str()).unwrap_or("none").to_owned();
    let run_id = shape.run_id("cli");
    let out = root
        .command(&["answer", shape.workflow, "--run-id", &run_id, "--step", &step, "--value", "{}"])
        .output()
        .unwrap();
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    // A failed run answers with its failure; a running or done one names what waits (nothing).
    let code = reply["error"].as_str().unwrap_or("");
    let refused = code == "STEP_NOT_WAITING" || (shape.status == "failed" && !code.is_empty());
    ensure(out.status.code() == Some(1) && refused, || {
        format!("answer {step} was not refused: {reply} {}", String::from_utf8_lossy(&out.stderr))
    })?;
    ensure(version(root, shape) == before, || "a refused answer recorded something".into())
}

/// `signal` for the run of a shape that waits for no event: NO_WAITING_RUN, nothing recorded.
fn refused_signal(root: &Root, shape: &Shape) -> Result<(), String> {
    let before = version(root, shape);
    let run_id = shape.run_id("cli");
    let args = [
        "signal",
        EVENT,
        "--key",
        "p1",
        "--payload",
        r#"{"status": "green"}"#,
        "--workflow",
        shape.workflow,
        "--run-id",
        &run_id,
    ];
    let out = root.command(&args).output().unwrap();
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    ensure(out.status.code() == Some(1) && reply["error"] == "NO_WAITING_RUN", || {
        format!("signal was not refused: {reply} {}", String::from_utf8_lossy(&out.stderr))
    })?;
    ensure(version(root, shape) == before, || "a refused event recorded something".into())
}

/// `POST /events/m.done` when no run waits for it (every run of the
/// shapes before this one has ended): 409 NO_WAITING_RUN, nothing recorded.
fn refused_webhook(root: &Root, hook: &Http, shape: &Shape) -> Result<(), String> {
    let before = version(root, shape);
    let reply = hook.post_event(EVENT, "p1", &json!({"status": "green"}));
    ensure(reply["error"] == "NO_WAITING_RUN", || format!("the webhook was not refused: {reply}"))?;
    ensure(version(root, shape) == before, || "a refused event recorded something".into())
}
