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
}

/// A shape, as the cells take it.
pub type ShapeRef = Shape;

pub const SHAPES: &[Shape] = &[
    Shape { name: "plain", workflow: "m_plain", params: "{}", answers: &[], status: "done", exec: "done" },
    Shape {
        name: "when_true",
        workflow: "m_when",
        params: r#"{"go": true}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "when_false",
        workflow: "m_when",
        params: r#"{"go": false}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "nothing_runs",
        workflow: "m_when_none",
        params: r#"{"go": false}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "foreach_empty",
        workflow: "m_foreach",
        params: r#"{"files": []}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "foreach_one",
        workflow: "m_foreach",
        params: r#"{"files": ["a.rs"]}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "foreach_several",
        workflow: "m_foreach",
        params: r#"{"files": ["a.rs", "b.rs", "c.rs"]}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape { name: "uses", workflow: "m_uses", params: "{}", answers: &[], status: "done", exec: "done" },
    Shape {
        name: "uses_in_foreach",
        workflow: "m_uses_foreach",
        params: r#"{"files": ["notes.txt", "notes.txt"]}"#,
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "uses_nested",
        workflow: "m_uses_nested",
        params: "{}",
        answers: &[],
        status: "done",
        exec: "done",
    },
    Shape {
        name: "model_step",
        workflow: "m_model",
        params: "{}",
        answers: &[("judge", &[r#"{"ready": true}"#])],
        status: "done",
        exec: "refused",
    },
    Shape {
        name: "typed_tool",
        workflow: "m_typed",
        params: "{}",
        answers: &[],
        status: "done",
        exec: "stopped",
    },
    Shape {
        name: "retry_then_ok",
        workflow: "m_retry",
        params: "{}",
        answers: &[("check", &[r#"{"nope": 1}"#, r#"{"ok": true}"#])],
        status: "done",
        exec: "refused",
    },
    Shape {
        name: "retries_exhausted",
        workflow: "m_retry",
        params: "{}",
        answers: &[("check", &[r#"{"nope": 1}"#, r#"{"nope": 2}"#])],
        status: "failed",
        exec: "refused",
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
    fn params(&self) -> Value {
        serde_json::from_str(self.params).unwrap()
    }

    fn answer(&self, step_id: &str, call: Option<&str>, attempt: u64) -> Value {
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
        results.cell(
            shape.name,
            "exec",
            crate::matrix_cells::exec(&root, shape.workflow, shape.params, &shape.run_id("exec"), shape.exec),
        );
        results.cell(shape.name, "exec_dry_run", crate::matrix_cells::dry_run(&root, shape.workflow));
    }
    crate::matrix_cells::inspector(&root, &mut results);
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
    let mut file = Cli { root, env: Vec::new() };
    for shape in SHAPES {
        let answer = |s: &str, c: Option<&str>, a: u64| shape.answer(s, c, a);
        let outcome = drive(&mut file, shape.workflow, &shape.params(), &shape.run_id("cli"), &answer)
            .and_then(|t| {
                ensure(t.status == shape.status, || {
                    format!("ended {}, not {}: {t:?}", t.status, shape.status)
                })?;
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
    for shape in SHAPES {
        let answer = |s: &str, c: Option<&str>, a: u64| shape.answer(s, c, a);
        let same = |name: &str, surface: &mut dyn Surface| {
            let t = drive(surface, shape.workflow, &shape.params(), &shape.run_id(name), &answer)?;
            let Some(r) = reference.get(shape.name) else {
                return Err("no reference run (cli failed)".into());
            };
            ensure(t.instructions == r.instructions, || {
                format!("other instructions than the CLI's:\n{:?}\nvs\n{:?}", t.instructions, r.instructions)
            })?;
            ensure((&t.status, &t.captures, &t.steps) == (&r.status, &r.captures, &r.steps), || {
                format!("another end than the CLI's: {t:?} vs {r:?}")
            })
        };
        let pg_outcome = match &pg {
            Some(url) => {
                let mut cli = Cli { root, env: vec![("SAVANT_STATE_URL".into(), url.clone())] };
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
    }
    reference
}
