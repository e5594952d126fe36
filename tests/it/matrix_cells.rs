//! The cells of the capability matrix (`matrix.rs`) past the engine loop:
//! each takes one shape's workflow (and its run, made on the CLI) through
//! one surface and says what does not hold there.

use crate::common::Root;
use crate::matrix_drive::Trace;
use savant_think::testing::children::without_items;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(message()) }
}

/// Runs the binary in `root`: (exit code, stdout, stderr).
fn run(root: &Root, args: &[&str]) -> (i32, String, String) {
    let out = root.command(args).env("SAVANT_STATE_FSYNC", "0").output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(root: &Root, args: &[&str]) -> Result<Value, String> {
    let (code, out, err) = run(root, args);
    serde_json::from_str(&out).map_err(|e| format!("{args:?} exit {code}: not JSON ({e}): {out}{err}"))
}

/// `state get`: the status a user sees is the run's; a finished run has
/// no step left `ready`, a failed one names the step it failed at. `state
/// list`: each child run right after its parent, saying whose it is.
pub fn state(root: &Root, workflow: &str, run_id: &str, status: &str) -> Result<(), String> {
    let st = json_of(root, &["state", "get", workflow, "--run-id", run_id])?;
    ensure(st["status"] == status, || format!("state get says {}, not {status}", st["status"]))?;
    let steps = st["steps"].as_array().cloned().unwrap_or_default();
    let statuses: Vec<&str> = steps.iter().filter_map(|s| s["status"].as_str()).collect();
    ensure(!statuses.contains(&"ready"), || format!("a finished run lists a ready step: {statuses:?}"))?;
    if status == "failed" {
        ensure(statuses.contains(&"failed"), || format!("a failed run names no failed step: {statuses:?}"))?;
    }
    let list = json_of(root, &["state", "list", "--format", "json"])?;
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
        let face = n["call"].as_str().filter(|c| !c.is_empty()).or(n["uses"].as_str());
        ensure(face.is_some(), || format!("compile: node {n} says neither call nor uses"))?;
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
        let face = s["call"].as_str().filter(|c| !c.is_empty()).or(s["uses"].as_str());
        ensure(face.is_some(), || format!("explain: step {s} says neither call nor uses"))?;
    }
    Ok(())
}

/// `test --replay` of the unchanged workflow's run: no divergence.
pub fn replay(root: &Root, workflow: &str, run_id: &str) -> Result<(), String> {
    let (code, out, err) = run(root, &["test", "--replay", workflow, "--run-id", run_id]);
    ensure(code == 0 && out.contains("no divergence"), || format!("exit {code}: {out}{err}"))
}

/// `test --replay --from-run` writes a test that passes.
pub fn from_run(root: &Root, name: &str, workflow: &str, run_id: &str) -> Result<(), String> {
    let (code, text, err) = run(root, &["test", "--replay", workflow, "--run-id", run_id, "--from-run"]);
    ensure(code == 0, || format!("--from-run exit {code}: {err}"))?;
    let file = format!("tests/gen_{name}.test.yaml");
    root.write(&file, &text);
    let (code, out, err) = run(root, &["test", &file]);
    ensure(code == 0 && out.contains("1 passed"), || {
        format!("the generated test: exit {code}: {out}{err}\n{text}")
    })
}

/// A test written by hand: the shape's answers mocked by step path for
/// every item (`review_each/read`), the rest by `call:TOOL` (at any depth);
/// it ends as the run did.
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
    let doc = json!({"workflow": shape.workflow, "tests": [{
        "name": format!("{} by path and by tool", shape.name),
        "params": serde_json::from_str::<Value>(shape.params).unwrap(),
        "mocks": mocks,
        "expect": {"status": shape.status},
    }]});
    let file = format!("tests/mock_{}.test.yaml", shape.name);
    root.write(&file, serde_json::to_string_pretty(&doc).unwrap());
    let (code, out, err) = run(root, &["test", &file]);
    ensure(code == 0 && out.contains("1 passed"), || format!("exit {code}: {out}{err}\n{doc}"))
}

/// The last event of `exec --json`: its summary.
fn summary(out: &str) -> Value {
    out.lines().rev().find_map(|l| serde_json::from_str::<Value>(l).ok()).unwrap_or(Value::Null)
}

/// `exec`: real tools, no client; the run ends as expected, never stuck.
pub fn exec(root: &Root, workflow: &str, params: &str, run_id: &str, status: &str) -> Result<(), String> {
    let (code, out, err) = run(root, &["exec", workflow, "--params", params, "--run-id", run_id, "--json"]);
    if status == "refused" {
        // Refused before anything runs, every step that needs a model named.
        return ensure(code == 2 && out.contains("MODEL_NOT_CONFIGURED") && err.contains("need"), || {
            format!("exec was not refused for want of a model (exit {code}): {out}{err}")
        });
    }
    let s = summary(&out);
    ensure(s["event"] == "summary" && s["status"] == status, || {
        format!("exec ended {} (exit {code}), not {status}: {s}\n{err}", s["status"])
    })?;
    if status == "stopped" {
        let code = s["reason"]["error"].as_str().unwrap_or("");
        ensure(code != "NO_READY_STEP", || format!("exec got stuck: {s}"))?;
    }
    Ok(())
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

/// The inspector's API: each shape's run has its status, a `uses:` step's
/// panel names the workflow and links child runs that link back, and the
/// runs list puts children after their parent.
pub fn inspector(root: &Root, results: &mut super::matrix::Results) {
    let server = crate::inspect_http::serve(root, &[]);
    let get = |path: &str| crate::inspect_http::get(&server.addr, path, &[]);
    let list = get("/ui/api/runs?per_page=500").json();
    for shape in super::matrix::SHAPES {
        let run_id = shape.run_id("cli");
        let outcome = (|| {
            let view = get(&format!("/ui/api/runs/{}/{run_id}", shape.workflow)).json();
            ensure(view["status"] == shape.status, || format!("the run page says {}", view["status"]))?;
            for node in view["graph"]["nodes"].as_array().into_iter().flatten() {
                let Some(uses) = node["uses"].as_str() else { continue };
                let id = node["id"].as_str().unwrap_or("");
                let panel = get(&format!("/ui/api/runs/{}/{run_id}/steps/{id}", shape.workflow)).json();
                ensure(panel["uses"] == uses, || {
                    format!("the panel of {id} does not say it uses {uses}: {panel}")
                })?;
                let children = panel["children"].as_array().cloned().unwrap_or_default();
                ensure(!children.is_empty(), || format!("the panel of {id} links no child run: {panel}"))?;
                for c in &children {
                    let child = get(&format!(
                        "/ui/api/runs/{}/{}",
                        c["workflow"].as_str().unwrap_or(""),
                        c["run_id"].as_str().unwrap_or("")
                    ))
                    .json();
                    ensure(child["parent"]["run_id"] == json!(run_id), || {
                        format!("child {c} does not link back: {child}")
                    })?;
                }
            }
            let rows = list["runs"].as_array().cloned().unwrap_or_default();
            let at = rows.iter().position(|r| r["run_id"] == json!(run_id)).ok_or("not in the runs list")?;
            let prefix = format!("{run_id}.");
            let n = rows
                .iter()
                .filter(|r| r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix)))
                .count();
            for r in rows[at + 1..].iter().take(n) {
                ensure(
                    r["depth"].as_u64() >= Some(1)
                        && r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix)),
                    || format!("a child run is not right below its parent: {r}"),
                )?;
            }
            Ok(())
        })();
        results.cell(shape.name, "inspector", outcome);
    }
}
