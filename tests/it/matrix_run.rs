//! How the capability matrix (`matrix.rs`) runs its cells: in lanes on a
//! few threads, since every cell is a process or a request and the
//! machine's cores wait on process starts more than they compute.
//!
//! - Phase one, in lanes: each shape's CLI run first (the reference), then
//!   its other engine loops (PostgreSQL, MCP stdio and HTTP, the `answer`
//!   and `signal` commands, the webhook), `exec`, `test --replay`, the test
//!   files `--from-run` and the mocks cell write, and the runs the
//!   inspector drives. Shapes that must not overlap share a lane (see
//!   [`lanes`]); the others each have their own. Per workflow rather than
//!   per shape: `compile`/`graph`/`explain` and `exec --dry-run`.
//! - Phase two, once every run exists: one `state list` and one `test`
//!   over every written test file, read by each shape's cells; `state get`
//!   per run; the inspector's pages.
//!
//! The servers (MCP stdio, MCP HTTP, the inspector) are started once, and
//! the PostgreSQL cluster in the background while the first runs go; the
//! PostgreSQL cells (each shape's run driven on the CLI, then replayed,
//! reset and forked; `exec`; `upgrade`; the inspector) come last in each
//! lane, with an MCP stdio server and an inspector of their own on the
//! cluster's schema, started once when first needed.

use crate::common::Root;
use crate::matrix::{CLOCK, EVENT, SHAPES, Shape, Shared, ensure, timed};
use crate::matrix_drive::{Cli, Http, Stdio_, Surface, Trace, drive};
use crate::support::Server;
use savant_think::state::{FileStore, RunKey, StateStore};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Threads the lanes run on: process starts, not the engine, are the cost.
const THREADS: usize = 4;

/// The workflows whose waits end at a deadline 1 s away: the lane that
/// moves the test clock forward (every process reads it, so no other
/// short wait may be in flight meanwhile).
const TIMED: &[&str] = &["m_await_timeout", "m_sleep"];

/// The shapes in lanes: the event shapes share one (an event goes to every
/// run that waits for its key), the [`TIMED`] shapes another, every other
/// shape has its own. Longest lanes first.
fn lanes() -> Vec<Vec<&'static Shape>> {
    let mut lanes: BTreeMap<&str, Vec<&Shape>> = BTreeMap::new();
    for shape in SHAPES {
        let lane = match (shape.event.is_some(), TIMED.contains(&shape.workflow)) {
            (true, _) => "events",
            (_, true) => "clock",
            _ => shape.name,
        };
        lanes.entry(lane).or_default().push(shape);
    }
    let mut lanes: Vec<_> = lanes.into_values().collect();
    lanes.sort_by_key(|l| std::cmp::Reverse(l.len()));
    lanes
}

/// What every lane shares.
pub struct Matrix<'a> {
    pub root: &'a Root,
    pub results: &'a Shared,
    /// The PostgreSQL schema's URL, once the cluster is up (`None` inside: not installed).
    pg: std::sync::OnceLock<Option<String>>,
    stdio: Mutex<Stdio_>,
    /// `serve` over stdio on PostgreSQL, once the cluster is up (`None` inside: not installed).
    pg_stdio: std::sync::OnceLock<Option<Mutex<Stdio_>>>,
    http: Server,
    pub inspector: Server,
    /// The CLI run of each shape, the reference of the other surfaces.
    pub traces: Mutex<BTreeMap<&'static str, Trace>>,
    /// What failed in phase one of a cell that ends in phase two: `(shape, surface)`.
    pub early: Mutex<BTreeMap<(&'static str, &'static str), String>>,
}

/// The token the inspector is served with.
pub const TOKEN: &str = "m4trix";

/// Runs every cell of the matrix into `results`.
pub fn run(root: &Root, results: &Shared) {
    let clock = root.join(CLOCK).to_string_lossy().into_owned();
    let serve = |args: &[&str]| {
        let mut command = Server::command(&root.path);
        command.args(args).env("LOG_LEVEL", "error").env("SAVANT_STATE_FSYNC", "0");
        command.env("SAVANT_TEST_CLOCK", &clock);
        Server::start(command, false)
    };
    let m = Matrix {
        root,
        results,
        pg: std::sync::OnceLock::new(),
        stdio: Mutex::new(Stdio_::start(root, &clock)),
        pg_stdio: std::sync::OnceLock::new(),
        http: serve(&["--stateless"]),
        inspector: serve(&["--token", TOKEN]),
        traces: Mutex::default(),
        early: Mutex::default(),
    };
    let mut workflows: Vec<&str> = SHAPES.iter().map(|s| s.workflow).collect();
    workflows.sort_unstable();
    workflows.dedup();
    let mut jobs: Vec<Job> = lanes().into_iter().map(Job::Lane).collect();
    jobs.extend(workflows.into_iter().map(Job::Workflow));
    std::thread::scope(|s| {
        s.spawn(|| {
            let url = savant_think::state::pg::cluster::shared()
                .map(|c| c.fresh_schema("matrix").expect("a schema for the matrix"));
            let _ = m.pg.set(url);
        });
        s.spawn(|| check_cells(&m));
        savant_think::parallel::map_in_order(&jobs, THREADS, |job| match job {
            Job::Lane(shapes) => shapes.iter().for_each(|shape| shape_cells(&m, shape)),
            Job::Workflow(w) => per_workflow(&m, w),
        });
    });
    crate::matrix_cells::after_runs(&m);
    upgrades(&m);
}

/// The `upgrade` cells, last: every shape's run planned on each store,
/// then every file changed, then each run upgraded and driven on (in lanes
/// again).
fn upgrades(m: &Matrix) {
    use crate::matrix_lifecycle::{On, edit_workflows, plan_for_upgrade, upgrade};
    let url = m.pg_url();
    let file = On { root: m.root, url: None };
    let pg = url.as_deref().map(|url| On { root: m.root, url: Some(url) });
    for shape in SHAPES {
        plan_for_upgrade(file, &mut Locked(&m.stdio), shape);
        if let (Some(on), Some(stdio)) = (pg, m.pg_stdio()) {
            plan_for_upgrade(on, &mut Locked(stdio), shape);
        }
    }
    edit_workflows(m.root);
    let traces = m.traces.lock().unwrap_or_else(|e| e.into_inner());
    savant_think::parallel::map_in_order(&lanes(), THREADS, |lane| {
        for shape in lane {
            let r = traces.get(shape.name);
            timed(m.results, shape.name, "upgrade", || upgrade(file, &mut Locked(&m.stdio), shape, r));
            timed(m.results, shape.name, "upgrade_postgres", || {
                on_postgres(m, "upgrade_postgres", |_| match (pg, m.pg_stdio()) {
                    (Some(on), Some(stdio)) => upgrade(on, &mut Locked(stdio), shape, r),
                    _ => Err("no PostgreSQL serve".into()),
                })
            });
        }
    });
}

/// A piece of phase one: a lane of shapes, or the cells of one workflow.
enum Job {
    Lane(Vec<&'static Shape>),
    Workflow(&'static str),
}

impl Matrix<'_> {
    /// The PostgreSQL schema's URL (`None`: not installed), waiting for the cluster.
    pub fn pg_url(&self) -> Option<String> {
        pg(self)
    }

    /// `serve` over stdio on the PostgreSQL schema (`None`: not installed),
    /// started on first use.
    fn pg_stdio(&self) -> Option<&Mutex<Stdio_>> {
        let clock = self.root.join(CLOCK).to_string_lossy().into_owned();
        let start = || pg(self).map(|url| Mutex::new(Stdio_::start_on(self.root, &clock, Some(&url))));
        self.pg_stdio.get_or_init(start).as_ref()
    }
}

/// Runs `cell` with the PostgreSQL schema's URL; where PostgreSQL is not
/// installed (and CI not set), says that `surface` is skipped and holds.
pub fn on_postgres(
    m: &Matrix,
    surface: &str,
    cell: impl FnOnce(&str) -> Result<(), String>,
) -> Result<(), String> {
    match pg(m) {
        Some(url) => cell(&url),
        None => {
            let test = format!("matrix × {surface}");
            crate::support::skip::skip(&test, "PostgreSQL is not installed", Some("SAVANT_REQUIRE_PG"));
            Ok(())
        }
    }
}

/// The PostgreSQL URL, waiting for the cluster to be up.
fn pg(m: &Matrix) -> Option<String> {
    loop {
        if let Some(url) = m.pg.get() {
            return url.clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The cells of one workflow, for every shape of it.
fn per_workflow(m: &Matrix, workflow: &str) {
    let shapes = || SHAPES.iter().filter(|s| s.workflow == workflow);
    let mut explained = None;
    let mut dry = None;
    for shape in shapes().take(1) {
        timed(m.results, shape.name, "explain_graph", || {
            explained = Some(crate::matrix_cells::explain_graph(m.root, workflow));
            explained.clone().unwrap()
        });
        timed(m.results, shape.name, "exec_dry_run", || {
            dry = Some(crate::matrix_cells::dry_run(m.root, workflow));
            dry.clone().unwrap()
        });
    }
    for shape in shapes().skip(1) {
        timed(m.results, shape.name, "explain_graph", || explained.clone().unwrap());
        timed(m.results, shape.name, "exec_dry_run", || dry.clone().unwrap());
    }
}

/// Whether trace `t` of another surface is the reference `r`'s.
fn same_as(t: Result<Trace, String>, r: Option<&Trace>) -> Result<(), String> {
    let t = t?;
    let Some(r) = r else { return Err("no reference run (cli failed)".into()) };
    ensure(t.instructions == r.instructions, || {
        format!("other instructions than the CLI's:\n{:?}\nvs\n{:?}", t.instructions, r.instructions)
    })?;
    ensure(t.waits == r.waits, || {
        format!("waits ended otherwise than on the CLI: {:?} vs {:?}", t.waits, r.waits)
    })?;
    ensure((&t.status, &t.captures, &t.steps) == (&r.status, &r.captures, &r.steps), || {
        format!("another end than the CLI's: {t:?} vs {r:?}")
    })
}

/// The stdio server, one request at a time whoever asks.
struct Locked<'a>(&'a Mutex<Stdio_>);

impl Surface for Locked<'_> {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).call(tool, args)
    }
}

/// Every phase-one cell of `shape` (see the module).
fn shape_cells(m: &Matrix, shape: &'static Shape) {
    let (root, results, clock) = (m.root, m.results, m.root.join(CLOCK));
    let mut reference = None;
    timed(results, shape.name, "cli", || {
        let mut file = Cli { root, env: Vec::new(), commands: false };
        let t = drive(&mut file, shape, &shape.run_id("cli"), &clock)?;
        ensure(t.status == shape.status, || format!("ended {}, not {}: {t:?}", t.status, shape.status))?;
        reference = Some(t);
        Ok(())
    });
    let r = reference.as_ref();
    let same = |name: &str, surface: &mut dyn Surface| {
        same_as(drive(surface, shape, &shape.run_id(name), &clock), r)
    };
    timed(results, shape.name, "mcp_stdio", || same("stdio", &mut Locked(&m.stdio)));
    timed(results, shape.name, "mcp_http", || same("http", &mut Http::on(&m.http, false)));
    // The finished stdio run reset and driven again; the http run forked.
    let stdio_run = shape.run_id("stdio");
    let file = crate::matrix_lifecycle::On { root, url: None };
    timed(results, shape.name, "reset", || {
        crate::matrix_lifecycle::reset(file, &mut Locked(&m.stdio), shape, &stdio_run, r)
    });
    timed(results, shape.name, "fork", || {
        crate::matrix_lifecycle::fork(file, &mut Locked(&m.stdio), shape, &shape.run_id("http"), r)
    });
    // The wait commands: `answer` and `signal` drive the shapes they
    // apply to; on the others they refuse, recording nothing.
    let mut commands = Cli { root, env: Vec::new(), commands: true };
    timed(results, shape.name, "answer", || match shape.asks() {
        true => same("answer", &mut commands),
        false => refused_answer(root, shape, r),
    });
    timed(results, shape.name, "signal", || match shape.event.is_some() {
        true => same("signal", &mut Cli { root, env: Vec::new(), commands: true }),
        false => refused_signal(root, shape),
    });
    timed(results, shape.name, "webhook", || match shape.event {
        Some(_) => same("webhook", &mut Http::on(&m.http, true)),
        None => refused_webhook(root, &Http::on(&m.http, true), shape),
    });
    timed(results, shape.name, "replay", || {
        crate::matrix_cells::replay(root, None, shape.workflow, &shape.run_id("cli"))
    });
    timed(results, shape.name, "exec", || {
        crate::matrix_cells::exec(root, None, shape, &shape.run_id("exec"))
    });
    crate::matrix_cells::write_tests(m, shape, r);
    // Last: the cluster starts meanwhile.
    postgres_cells(m, shape, r);
    if let Some(t) = reference {
        m.traces.lock().unwrap_or_else(|e| e.into_inner()).insert(shape.name, t);
    }
}

/// The phase-one cells of `shape` on PostgreSQL: its run driven on the CLI
/// (`cli_postgres`), replayed, reset and driven again, forked; `exec`.
fn postgres_cells(m: &Matrix, shape: &'static Shape, r: Option<&Trace>) {
    use crate::matrix_lifecycle::{On, fork, reset};
    let (root, results, clock) = (m.root, m.results, m.root.join(CLOCK));
    let pg_run = shape.run_id("pg");
    timed(results, shape.name, "cli_postgres", || {
        on_postgres(m, "cli_postgres", |url| {
            let mut cli = Cli { root, env: vec![("SAVANT_STATE_URL".into(), url.into())], commands: false };
            same_as(drive(&mut cli, shape, &pg_run, &clock), r)
        })
    });
    timed(results, shape.name, "replay_postgres", || {
        on_postgres(m, "replay_postgres", |url| {
            crate::matrix_cells::replay(root, Some(url), shape.workflow, &pg_run)
        })
    });
    timed(results, shape.name, "exec_postgres", || {
        on_postgres(m, "exec_postgres", |url| {
            crate::matrix_cells::exec(root, Some(url), shape, &shape.run_id("exec-pg"))
        })
    });
    // The finished run reset and driven again over MCP stdio, then forked.
    let stdio = || m.pg_stdio().ok_or_else(|| "no PostgreSQL serve".to_owned());
    timed(results, shape.name, "reset_postgres", || {
        on_postgres(m, "reset_postgres", |url| {
            reset(On { root, url: Some(url) }, &mut Locked(stdio()?), shape, &pg_run, r)
        })
    });
    timed(results, shape.name, "fork_postgres", || {
        on_postgres(m, "fork_postgres", |url| {
            fork(On { root, url: Some(url) }, &mut Locked(stdio()?), shape, &pg_run, r)
        })
    });
}

/// `check` on the whole project: no diagnostic in any shape's file.
fn check_cells(m: &Matrix) {
    let started = std::time::Instant::now();
    let out = m.root.command(&["check", "--format", "json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let diagnostics: Vec<Value> = report["diagnostics"].as_array().cloned().unwrap_or_default();
    m.results.lock().unwrap_or_else(|e| e.into_inner()).spent("check", started.elapsed());
    for shape in SHAPES {
        let file = format!("{}.yaml", shape.workflow);
        let own: Vec<&Value> =
            diagnostics.iter().filter(|d| d["file"].as_str().is_some_and(|f| f.ends_with(&file))).collect();
        timed(m.results, shape.name, "check", || {
            ensure(out.status.success() && report.is_object(), || {
                format!("check failed: {}", String::from_utf8_lossy(&out.stdout))
            })?;
            ensure(own.is_empty(), || format!("diagnostics: {own:?}"))
        });
    }
}

/// The stored identity of the CLI run of `shape` (read in process): a
/// refusal must leave it as it was.
fn stamp(root: &Root, shape: &Shape) -> Option<savant_think::state::Stamp> {
    let key = RunKey::new(shape.workflow, shape.run_id("cli")).ok()?;
    FileStore::new(&root.path, false).stamp(&key).ok().flatten()
}

/// `answer` for a step of a run that waits for no answer: STEP_NOT_WAITING
/// (a failed run's own failure), exit 1, nothing recorded.
fn refused_answer(root: &Root, shape: &Shape, reference: Option<&Trace>) -> Result<(), String> {
    let before = stamp(root, shape);
    // Its last step: never a wait in these shapes.
    let step = reference.and_then(|t| t.steps.last()).map_or("none", |(id, _)| id.as_str());
    let run_id = shape.run_id("cli");
    let out = root
        .command(&["answer", shape.workflow, "--run-id", &run_id, "--step", step, "--value", "{}"])
        .output()
        .unwrap();
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    // A failed run answers with its failure; a running or done one names what waits (nothing).
    let code = reply["error"].as_str().unwrap_or("");
    let refused = code == "STEP_NOT_WAITING" || (shape.status == "failed" && !code.is_empty());
    ensure(out.status.code() == Some(1) && refused, || {
        format!("answer {step} was not refused: {reply} {}", String::from_utf8_lossy(&out.stderr))
    })?;
    ensure(before.is_some() && stamp(root, shape) == before, || "a refused answer recorded something".into())
}

/// `signal` for the run of a shape that waits for no event: NO_WAITING_RUN, nothing recorded.
fn refused_signal(root: &Root, shape: &Shape) -> Result<(), String> {
    let before = stamp(root, shape);
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
    ensure(before.is_some() && stamp(root, shape) == before, || "a refused event recorded something".into())
}

/// `POST /events/m.done` with a key no run waits for (the event shapes
/// wait for `p1`, in their own lane): 409 NO_WAITING_RUN, nothing recorded.
fn refused_webhook(root: &Root, hook: &Http, shape: &Shape) -> Result<(), String> {
    let before = stamp(root, shape);
    let reply = hook.post_event(EVENT, "nobody", &json!({"status": "green"}));
    ensure(reply["error"] == "NO_WAITING_RUN", || format!("the webhook was not refused: {reply}"))?;
    ensure(before.is_some() && stamp(root, shape) == before, || "a refused event recorded something".into())
}
