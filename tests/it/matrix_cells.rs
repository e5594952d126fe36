//! The cells of the capability matrix (`matrix.rs`) past the engine loop:
//! each takes one shape's workflow (and its run, made on the CLI) through
//! one surface and says what does not hold there.

use crate::common::Root;
use crate::matrix::{EVENT, Event, SHAPES, Shape, ensure, timed};
use crate::matrix_drive::Trace;
use crate::matrix_run::{Matrix, TOKEN};
use savant_think::testing::children::without_items;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Runs the binary in `root`: (exit code, stdout, stderr).
fn run(root: &Root, args: &[&str]) -> (i32, String, String) {
    run_on(root, None, args)
}

/// [`run`] on the store at `url` (`SAVANT_STATE_URL`) when one is given.
fn run_on(root: &Root, url: Option<&str>, args: &[&str]) -> (i32, String, String) {
    let mut command = root.command(args);
    if let Some(url) = url {
        command.env("SAVANT_STATE_URL", url);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(root: &Root, args: &[&str]) -> Result<Value, String> {
    json_on(root, None, args)
}

fn json_on(root: &Root, url: Option<&str>, args: &[&str]) -> Result<Value, String> {
    let (code, out, err) = run_on(root, url, args);
    serde_json::from_str(&out).map_err(|e| format!("{args:?} exit {code}: not JSON ({e}): {out}{err}"))
}

/// `state get`: the status a user sees is the run's; a finished run has
/// no step left `ready`, a failed one names the step it failed at. `state
/// list`: each child run right after its parent, saying whose it is. On
/// the store at `url` when one is given (PostgreSQL).
pub fn state(
    (root, url): (&Root, Option<&str>),
    list: &Value,
    workflow: &str,
    run_id: &str,
    status: &str,
) -> Result<(), String> {
    let st = json_on(root, url, &["state", "get", workflow, "--run-id", run_id])?;
    ensure(st["status"] == status, || format!("state get says {}, not {status}", st["status"]))?;
    let steps = st["steps"].as_array().cloned().unwrap_or_default();
    let statuses: Vec<&str> = steps.iter().filter_map(|s| s["status"].as_str()).collect();
    ensure(!statuses.contains(&"ready"), || format!("a finished run lists a ready step: {statuses:?}"))?;
    if status == "failed" {
        ensure(statuses.contains(&"failed"), || format!("a failed run names no failed step: {statuses:?}"))?;
    }
    let runs = list["runs"].as_array().cloned().unwrap_or_default();
    let Some(at) = runs.iter().position(|r| r["workflow"] == workflow && r["run_id"] == run_id) else {
        return Err(format!("state list does not list {run_id}"));
    };
    let prefix = format!("{run_id}.");
    let children =
        runs.iter().filter(|r| r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix))).count();
    for (k, r) in runs[at + 1..].iter().take(children).enumerate() {
        let id = r["run_id"].as_str().unwrap_or("");
        ensure(id.starts_with(&prefix), || {
            format!("row {} after {run_id} is {id}, not one of its children", k + 1)
        })?;
        ensure(
            r["parent"]["run_id"].as_str().is_some_and(|p| p == run_id || p.starts_with(&prefix)),
            || format!("child {id} does not say its parent: {r}"),
        )?;
    }
    Ok(())
}

/// `compile`, `graph` (mermaid, dot) and `explain`: every step says what it
/// calls or the workflow it uses.
pub fn explain_graph(root: &Root, workflow: &str) -> Result<(), String> {
    let compiled = json_of(root, &["compile", workflow])?;
    for n in compiled["graph"]["nodes"].as_array().into_iter().flatten() {
        let face = n["call"].as_str().filter(|c| !c.is_empty()).or(n["uses"].as_str()).or(n["wait"].as_str());
        ensure(face.is_some(), || format!("compile: node {n} says neither call, uses nor wait"))?;
    }
    let (_, mermaid, _) = run(root, &["graph", workflow, "--format", "mermaid"]);
    ensure(mermaid.starts_with("flowchart") && !mermaid.contains("<small></small>"), || {
        format!("mermaid has a node with no call: {mermaid}")
    })?;
    let (_, dot, _) = run(root, &["graph", workflow, "--format", "dot"]);
    ensure(dot.starts_with("digraph") && !dot.contains("\\n\"]"), || {
        format!("dot has a node with no call: {dot}")
    })?;
    let explained = json_of(root, &["explain", workflow])?;
    for s in explained["steps"].as_array().into_iter().flatten() {
        let face = s["call"].as_str().filter(|c| !c.is_empty()).or(s["uses"].as_str()).or(s["wait"].as_str());
        ensure(face.is_some(), || format!("explain: step {s} says neither call, uses nor wait"))?;
    }
    Ok(())
}

/// `test --replay` of the unchanged workflow's run (on the store at `url`
/// when one is given): no divergence.
pub fn replay(root: &Root, url: Option<&str>, workflow: &str, run_id: &str) -> Result<(), String> {
    let (code, out, err) = run_on(root, url, &["test", "--replay", workflow, "--run-id", run_id]);
    ensure(code == 0 && out.contains("no divergence"), || format!("exit {code}: {out}{err}"))
}

/// `test --replay --from-run` writes a test (`tests/gen_NAME.test.yaml`;
/// it must pass: [`after_runs`] runs it).
pub fn from_run(root: &Root, name: &str, workflow: &str, run_id: &str) -> Result<(), String> {
    let (code, text, err) = run(root, &["test", "--replay", workflow, "--run-id", run_id, "--from-run"]);
    ensure(code == 0, || format!("--from-run exit {code}: {err}"))?;
    root.write(&format!("tests/gen_{name}.test.yaml"), &text);
    Ok(())
}

/// A test written by hand (`tests/mock_NAME.test.yaml`): the shape's
/// answers mocked by step path for every item (`review_each/read`), the
/// rest by `call:TOOL` (at any depth); it must end as the run did
/// ([`after_runs`] runs it).
pub fn mocks(root: &Root, shape: &super::matrix::ShapeRef, trace: Option<&Trace>) -> Result<(), String> {
    let Some(trace) = trace else { return Err("no CLI run to take the steps from".into()) };
    let mut mocks = BTreeMap::new();
    for (step_id, call, _) in &trace.instructions {
        let path = without_items(step_id);
        match shape.answers.iter().find(|(p, _)| *p == path) {
            Some((_, list)) => {
                let results: Vec<Value> = list.iter().map(|a| serde_json::from_str(a).unwrap()).collect();
                mocks.insert(path, json!({"results": results}));
            }
            None => {
                let call = call.clone().unwrap_or_default();
                mocks.insert(
                    format!("call:{call}"),
                    json!({"result": super::matrix::default_answer(Some(&call))}),
                );
            }
        }
    }
    let mut test = json!({
        "name": format!("{} by path and by tool", shape.name),
        "params": serde_json::from_str::<Value>(shape.params).unwrap(),
        "mocks": mocks,
        "expect": {"status": shape.status},
    });
    // Its waits as the run ended them: answers, the event, timeouts on the fake clock.
    let answers: serde_json::Map<String, Value> =
        shape.waits.iter().map(|(p, a)| ((*p).to_owned(), serde_json::from_str(a).unwrap())).collect();
    if !answers.is_empty() {
        test["answers"] = Value::Object(answers);
    }
    if let Some(e) = &shape.event {
        test["events"] = json!([{"event": super::matrix::EVENT, "key": e.key, "payload": e.payload()}]);
    }
    let timeouts: Vec<String> =
        trace.waits.iter().filter(|(_, how)| how == "deadline").map(|(s, _)| without_items(s)).collect();
    if !timeouts.is_empty() {
        test["timeouts"] = json!(timeouts);
    }
    let doc = json!({"workflow": shape.workflow, "tests": [test]});
    let file = format!("tests/mock_{}.test.yaml", shape.name);
    root.write(&file, serde_json::to_string_pretty(&doc).unwrap());
    Ok(())
}

/// The last event of `exec --json`: its summary.
fn summary(out: &str) -> Value {
    out.lines().rev().find_map(|l| serde_json::from_str::<Value>(l).ok()).unwrap_or(Value::Null)
}

/// `exec`: real tools, no client; the run ends as expected, never stuck.
/// A short wait (the shapes' 1 s sleep or timeout) is waited in process;
/// a question or an event parks the run (exit 3, listing its waits), which
/// is then answered (`answer`) or sent (`signal`) and resumed. An event
/// sent before the wait starts (the run planned first) is taken from the
/// run's inbox with no park. On the store at `url` when one is given.
pub fn exec(root: &Root, url: Option<&str>, shape: &Shape, run_id: &str) -> Result<(), String> {
    let (workflow, status) = (shape.workflow, shape.exec);
    let run = |root: &Root, args: &[&str]| run_on(root, url, args);
    let send = |root: &Root, e: &Event, workflow: &str, run_id: &str| send(root, url, e, workflow, run_id);
    let mut resume = false;
    if let Some(e) = shape.event.as_ref().filter(|e| e.early) {
        let (code, _, err) = run(root, &["plan", workflow, "--run-id", run_id, "--params", shape.params]);
        ensure(code == 0, || format!("plan exit {code}: {err}"))?;
        send(root, e, workflow, run_id)?;
        resume = true;
    }
    let expected_parks = usize::from(shape.asks() || shape.event.as_ref().is_some_and(|e| !e.early));
    let mut parks = 0;
    let s = loop {
        let mut args = vec!["exec", workflow, "--run-id", run_id, "--json"];
        if !resume {
            args.extend(["--params", shape.params]);
        }
        let (code, out, err) = run(root, &args);
        if status == "refused" {
            // Refused before anything runs, every step that needs a model named.
            return ensure(code == 2 && out.contains("MODEL_NOT_CONFIGURED") && err.contains("need"), || {
                format!("exec was not refused for want of a model (exit {code}): {out}{err}")
            });
        }
        let s = summary(&out);
        if s["status"] != "waiting" {
            break s;
        }
        parks += 1;
        ensure(code == 3 && parks <= expected_parks, || format!("exec parked (exit {code}): {s}\n{err}"))?;
        for w in s["waiting"].as_array().into_iter().flatten() {
            let step = w["step_id"].as_str().unwrap_or_default();
            match (w["wait"].as_str(), shape.wait_answer(step), &shape.event) {
                (Some("answer"), Some(value), _) => {
                    let value = value.to_string();
                    let (code, out, err) = run(
                        root,
                        &["answer", workflow, "--run-id", run_id, "--step", step, "--value", &value],
                    );
                    ensure(code == 0, || format!("answer {step}: exit {code}: {out}{err}"))?;
                }
                (Some("event"), _, Some(e)) => send(root, e, workflow, run_id)?,
                _ => return Err(format!("exec parked on a wait it should have waited for: {w}")),
            }
        }
        resume = true;
    };
    ensure(s["event"] == "summary" && s["status"] == status, || {
        format!("exec ended {}, not {status}: {s}", s["status"])
    })?;
    ensure(parks == expected_parks, || format!("exec parked {parks} time(s), not {expected_parks}"))?;
    if status == "stopped" {
        let code = s["reason"]["error"].as_str().unwrap_or("");
        ensure(code != "NO_READY_STEP", || format!("exec got stuck: {s}"))?;
    }
    Ok(())
}

/// `savant-think signal` of a shape's event: delivered to run `run_id`.
fn send(root: &Root, url: Option<&str>, e: &Event, workflow: &str, run_id: &str) -> Result<(), String> {
    let (code, out, err) = run_on(root, url, &["signal", EVENT, "--key", e.key, "--payload", e.payload]);
    let reply: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    ensure(code == 0, || format!("signal exit {code}: {out}{err}"))?;
    crate::matrix_drive::delivered_to(&reply, workflow, run_id)
}

/// `exec --dry-run`: done, every `foreach` run with an item and every
/// child workflow started, and the summary says so.
pub fn dry_run(root: &Root, workflow: &str) -> Result<(), String> {
    let (code, out, err) = run(root, &["exec", workflow, "--dry-run", "--json"]);
    let s = summary(&out);
    ensure(code == 0 && s["status"] == "done", || {
        format!("a dry run ended {} (exit {code}): {s}\n{err}", s["status"])
    })?;
    let explained = json_of(root, &["explain", workflow])?;
    let steps = explained["steps"].as_array().cloned().unwrap_or_default();
    let foreach = steps.iter().filter(|s| s["foreach"].is_string()).count();
    let uses = steps.iter().filter(|s| s["uses"].is_string()).count();
    let exercised = &s["exercised"];
    ensure(exercised.is_object(), || format!("the summary says nothing of what it exercised: {s}"))?;
    ensure(foreach == 0 || exercised["items"].as_u64() >= Some(1), || {
        format!("a foreach ran no item: {exercised}")
    })?;
    ensure(exercised["child_runs"].as_u64() >= Some(uses as u64), || {
        format!("{uses} uses: step(s), {} child run(s): {exercised}", exercised["child_runs"])
    })
}

/// The phase-one part of the cells that end in phase two ([`after_runs`]):
/// the test files of `from_run` and `mocks` written, and a shape that
/// asks a person driven again with its answers given through the
/// inspector's `answer` action (it must end as on the CLI). What fails
/// here is kept for the cell.
pub fn write_tests(m: &Matrix, shape: &'static Shape, reference: Option<&Trace>) {
    let root = m.root;
    let mut early = Vec::new();
    let generated = from_run(root, shape.name, shape.workflow, &shape.run_id("cli"));
    early.push(("from_run", generated));
    early.push(("mocks", mocks(root, shape, reference)));
    if shape.asks() {
        let cli = crate::matrix_drive::Cli { root, env: Vec::new(), commands: false };
        let mut ui =
            crate::matrix_drive::InspectorAnswers { cli, addr: m.inspector.addr.clone(), token: TOKEN };
        let clock = root.join(crate::matrix::CLOCK);
        let outcome = crate::matrix_drive::drive(&mut ui, shape, &shape.run_id("ui"), &clock).and_then(|t| {
            let r = reference.ok_or("no reference run (cli failed)")?;
            ensure(t == *r, || {
                format!("answered through the inspector, the run ended otherwise: {t:?} vs {r:?}")
            })
        });
        early.push(("inspector", outcome));
    }
    let mut kept = m.early.lock().unwrap_or_else(|e| e.into_inner());
    for (surface, outcome) in early {
        if let Err(e) = outcome {
            kept.insert((shape.name, surface), e);
        }
    }
}

/// Phase two, once every run exists: `state get` of each CLI run against
/// one `state list`; one `test` over every file [`write_tests`] wrote;
/// the inspector's pages against one runs list.
pub fn after_runs(m: &Matrix) {
    let (root, results) = (m.root, m.results);
    let list = json_of(root, &["state", "list", "--format", "json"]).unwrap_or(Value::Null);
    let url = m.pg_url();
    let url = url.as_deref();
    let pg_list =
        url.map(|u| json_on(root, Some(u), &["state", "list", "--format", "json"]).unwrap_or(Value::Null));
    savant_think::parallel::map_in_order(SHAPES, 4, |shape| {
        timed(results, shape.name, "state", || {
            state((root, None), &list, shape.workflow, &shape.run_id("cli"), shape.status)
        });
        // The same of the run made on PostgreSQL.
        timed(results, shape.name, "state_postgres", || match &pg_list {
            Some(l) => state((root, url), l, shape.workflow, &shape.run_id("pg"), shape.status),
            None => Ok(()),
        });
    });
    let started = std::time::Instant::now();
    let report = json_of(root, &["test", "--format", "json", "tests"]).unwrap_or(Value::Null);
    results.lock().unwrap_or_else(|e| e.into_inner()).spent("mocks", started.elapsed());
    let early = |shape: &Shape, surface: &str| {
        m.early.lock().unwrap_or_else(|e| e.into_inner()).get(&(shape.name, surface)).cloned()
    };
    for shape in SHAPES {
        for (surface, prefix) in [("from_run", "gen"), ("mocks", "mock")] {
            let file = format!("tests/{prefix}_{}.test.yaml", shape.name);
            timed(results, shape.name, surface, || match early(shape, surface) {
                Some(e) => Err(e),
                None => passed(&report, &file),
            });
        }
    }
    let bearer = format!("Bearer {TOKEN}");
    let get =
        |path: &str| crate::inspect_http::get(&m.inspector.addr, path, &[("Authorization", bearer.as_str())]);
    let runs = get("/ui/api/runs?per_page=500").json();
    for shape in SHAPES {
        timed(results, shape.name, "inspector", || match early(shape, "inspector") {
            Some(e) => Err(e),
            None => inspector(&get, &runs, shape, &shape.run_id("cli")),
        });
    }
    inspector_postgres(m, url);
}

/// The inspector's cells on PostgreSQL: an inspector of its own on the
/// schema at `url`, each shape's run made there (`cli_postgres`).
fn inspector_postgres(m: &Matrix, url: Option<&str>) {
    let server = url.map(|url| {
        let mut command = crate::support::Server::command(&m.root.path);
        command.args(["--token", TOKEN]).env("LOG_LEVEL", "error").env("SAVANT_STATE_URL", url);
        command.env("SAVANT_TEST_CLOCK", m.root.join(crate::matrix::CLOCK));
        crate::support::Server::start(command, false)
    });
    let bearer = format!("Bearer {TOKEN}");
    let get = |path: &str| match &server {
        Some(s) => crate::inspect_http::get(&s.addr, path, &[("Authorization", bearer.as_str())]),
        None => unreachable!("no cell reads the inspector without PostgreSQL"),
    };
    let runs = server.as_ref().map(|_| get("/ui/api/runs?per_page=500").json());
    for shape in SHAPES {
        timed(m.results, shape.name, "inspector_postgres", || {
            crate::matrix_run::on_postgres(m, "inspector_postgres", |_| match &runs {
                Some(runs) => inspector(&get, runs, shape, &shape.run_id("pg")),
                None => Err("no inspector on PostgreSQL".into()),
            })
        });
    }
}

/// That `file`'s one test passed in `report` (`test --format json`).
fn passed(report: &Value, file: &str) -> Result<(), String> {
    let tests: Vec<&Value> = report["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["file"].as_str().is_some_and(|f| f.ends_with(file)))
        .collect();
    let diagnostics: Vec<&Value> = report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["file"].as_str().is_some_and(|f| f.ends_with(file)) && d["severity"] == "error")
        .collect();
    ensure(tests.len() == 1 && tests[0]["verdict"] == "passed" && diagnostics.is_empty(), || {
        format!("{file}: {tests:?} {diagnostics:?}")
    })
}

/// The inspector's API: the shape's run has its status, a `uses:` step's
/// panel names the workflow and links child runs that link back, and the
/// runs list (`list`) puts children after their parent.
fn inspector(
    get: &dyn Fn(&str) -> crate::inspect_http::Reply,
    list: &Value,
    shape: &Shape,
    run_id: &str,
) -> Result<(), String> {
    let view = get(&format!("/ui/api/runs/{}/{run_id}", shape.workflow)).json();
    ensure(view["status"] == shape.status, || format!("the run page says {}", view["status"]))?;
    for node in view["graph"]["nodes"].as_array().into_iter().flatten() {
        let Some(uses) = node["uses"].as_str() else { continue };
        let id = node["id"].as_str().unwrap_or("");
        let panel = get(&format!("/ui/api/runs/{}/{run_id}/steps/{id}", shape.workflow)).json();
        ensure(panel["uses"] == uses, || format!("the panel of {id} does not say it uses {uses}: {panel}"))?;
        let children = panel["children"].as_array().cloned().unwrap_or_default();
        ensure(!children.is_empty(), || format!("the panel of {id} links no child run: {panel}"))?;
        for c in &children {
            let (wf, run) = (c["workflow"].as_str().unwrap_or(""), c["run_id"].as_str().unwrap_or(""));
            let child = get(&format!("/ui/api/runs/{wf}/{run}")).json();
            ensure(child["parent"]["run_id"] == json!(run_id), || {
                format!("child {c} does not link back: {child}")
            })?;
        }
    }
    let rows = list["runs"].as_array().cloned().unwrap_or_default();
    let at = rows.iter().position(|r| r["run_id"] == json!(run_id)).ok_or("not in the runs list")?;
    let prefix = format!("{run_id}.");
    let n = rows.iter().filter(|r| r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix))).count();
    for r in rows[at + 1..].iter().take(n) {
        ensure(
            r["depth"].as_u64() >= Some(1) && r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix)),
            || format!("a child run is not right below its parent: {r}"),
        )?;
    }
    Ok(())
}
