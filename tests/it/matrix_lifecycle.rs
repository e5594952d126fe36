//! The capability matrix's cells for a run over time (`matrix.rs`):
//! `reset`, `fork` and `upgrade` of a run, its children included. What a
//! user relies on: the children follow their parent — a reset run starts
//! its children afresh (none of the old ones left in flight), a fork has
//! its own child for every `uses:` result it keeps, an upgraded run's
//! children in flight move to their workflow as it is now — and the run
//! then ends as the same run never touched (the CLI's reference).
//!
//! Each cell runs on one store ([`On`]): the file store, or PostgreSQL
//! (the matrix's `*_postgres` surfaces). Runs are read in process (one
//! engine per store, which reads a run again whenever its stamp changed),
//! the commands under test run as processes on that store, and each run
//! is driven on over MCP stdio (a `serve` on the same store).

use crate::common::Root;
use crate::matrix::{CLOCK, Shape, ensure};
use crate::matrix_drive::{Surface, Trace, resume};
use serde_json::Value;

/// Where a cell works: the project, and the PostgreSQL schema's URL
/// (`SAVANT_STATE_URL`) or `None` for the file store.
#[derive(Clone, Copy)]
pub struct On<'a> {
    pub root: &'a Root,
    pub url: Option<&'a str>,
}

/// Runs the binary in the project on its store: the reply as JSON, or why not.
fn command(on: On, args: &[&str]) -> Result<Value, String> {
    let mut command = on.root.command(args);
    if let Some(url) = on.url {
        command.env("SAVANT_STATE_URL", url);
    }
    let out = command.output().unwrap();
    let reply = serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null);
    ensure(out.status.success() && reply.is_object(), || {
        format!(
            "{args:?}: exit {:?}: {}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok(reply)
}

/// The engine the cells read runs with on `on`'s store (the matrix's one
/// project: one per store).
fn engine(on: On) -> &'static savant_think::runtime::Engine {
    use savant_think::runtime::Engine;
    use std::sync::OnceLock;
    static FILE: OnceLock<Engine> = OnceLock::new();
    static PG: OnceLock<Engine> = OnceLock::new();
    match on.url {
        None => FILE.get_or_init(|| on.root.engine()),
        Some(url) => PG.get_or_init(|| {
            let store =
                savant_think::state::PgStore::open(url, false).expect("the matrix's PostgreSQL schema");
            Engine::with_store(on.root.path.clone(), Default::default(), Box::new(store))
        }),
    }
}

/// Every run below run `run_id` of `workflow` (its children at any
/// depth), as `state list` has them: the runs of the workflows it uses,
/// at any depth, only (listing every run of the store for each look made
/// the PostgreSQL cells four times slower than the file store's).
fn children(on: On, workflow: &str, run_id: &str) -> Vec<Value> {
    let e = engine(on);
    let callees = e.workflow(workflow).map(|cw| e.with_callees(&cw)).unwrap_or_default();
    let prefix = format!("{run_id}.");
    let mut out = Vec::new();
    for callee in callees.iter().filter(|c| &*c.wf.id != workflow) {
        let list = e.state_list(Some(&*callee.wf.id)).map(|l| serde_json::to_value(l).unwrap_or(Value::Null));
        let runs = list.ok().and_then(|l| l["runs"].as_array().cloned()).unwrap_or_default();
        out.extend(
            runs.into_iter().filter(|r| r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix))),
        );
    }
    out
}

/// A run's full state (`state get`), read in process.
fn state(on: On, workflow: &str, run_id: &str) -> Value {
    engine(on)
        .state_get(workflow, run_id)
        .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

/// That every run below `run_id` says its parent is `run_id` or one of its children.
fn children_linked(on: On, workflow: &str, run_id: &str) -> Result<(), String> {
    let prefix = format!("{run_id}.");
    for c in children(on, workflow, run_id) {
        let parent = c["parent"]["run_id"].as_str().unwrap_or("");
        ensure(parent == run_id || parent.starts_with(&prefix), || {
            format!("child {c} is not linked to {run_id}")
        })?;
    }
    Ok(())
}

/// That trace `t` ends as the reference `r`.
fn ends_as(t: &Trace, r: &Trace) -> Result<(), String> {
    ensure((&t.status, &t.captures, &t.steps) == (&r.status, &r.captures, &r.steps), || {
        format!("another end than the CLI's: {t:?} vs {r:?}")
    })
}

/// `reset --force` of a finished run (`run_id`, driven on `surface`) to its
/// start: no child of it is left but those the reset run started afresh
/// (at version 0, running); driven again, it hands out the reference's
/// instructions and ends as the reference.
pub fn reset(
    on: On,
    surface: &mut dyn Surface,
    shape: &Shape,
    run_id: &str,
    r: Option<&Trace>,
) -> Result<(), String> {
    let r = r.ok_or("no reference run (cli failed)")?;
    command(on, &["reset", shape.workflow, "--run-id", run_id, "--force"])?;
    let left: Vec<Value> = children(on, shape.workflow, run_id)
        .into_iter()
        .filter(|c| c["version"] != 0 || c["status"] != "running")
        .collect();
    ensure(left.is_empty(), || format!("reset to the start left child runs: {left:?}"))?;
    let t = resume(surface, shape, run_id, &on.root.join(CLOCK))?;
    ensure(t.instructions == r.instructions, || {
        format!(
            "other instructions than the CLI's after the reset:\n{:?}\nvs\n{:?}",
            t.instructions, r.instructions
        )
    })?;
    ends_as(&t, r)?;
    children_linked(on, shape.workflow, run_id)
}

/// `fork --from LAST` of a finished run `source` (its last step run again)
/// into `<source>-fork`: the source is unchanged; for every child of the
/// source, the fork has its own (same place, linked to the fork), so its
/// kept `uses:` results keep their runs; driven on, the fork ends as the reference.
pub fn fork(
    on: On,
    surface: &mut dyn Surface,
    shape: &Shape,
    source: &str,
    r: Option<&Trace>,
) -> Result<(), String> {
    let r = r.ok_or("no reference run (cli failed)")?;
    let last = r.steps.last().map(|(id, _)| id.clone()).ok_or("the reference has no step")?;
    let before = state(on, shape.workflow, source);
    let fork_id = format!("{source}-fork");
    let made =
        command(on, &["fork", shape.workflow, "--run-id", source, "--from", &last, "--new-run-id", &fork_id]);
    // A fork that keeps the failure of its source fails at once, as the source did.
    if let Err(e) = made {
        let failed = state(on, shape.workflow, &fork_id)["status"] == "failed";
        ensure(r.status == "failed" && failed, || e)?;
    }
    let source_children: Vec<String> = children(on, shape.workflow, source)
        .iter()
        .filter_map(|c| c["run_id"].as_str().map(str::to_owned))
        .collect();
    let t = resume(surface, shape, &fork_id, &on.root.join(CLOCK))?;
    ends_as(&t, r)?;
    let after = state(on, shape.workflow, source);
    ensure(before["version"] == after["version"] && before["status"] == after["status"], || {
        format!("the fork changed its source: {before} vs {after}")
    })?;
    let mine: Vec<String> = children(on, shape.workflow, &fork_id)
        .iter()
        .filter_map(|c| c["run_id"].as_str().map(str::to_owned))
        .collect();
    for c in &source_children {
        let counterpart = format!("{fork_id}{}", &c[source.len()..]);
        ensure(mine.contains(&counterpart), || {
            format!("the source's child {c} has no counterpart {counterpart} in the fork: {mine:?}")
        })?;
    }
    children_linked(on, shape.workflow, &fork_id)
}

/// The run id of the run the upgrade cells upgrade on `on`'s store.
pub fn upgrade_run_id(on: On, shape: &Shape) -> String {
    shape.run_id(if on.url.is_some() { "upgrade-pg" } else { "upgrade" })
}

/// The runs the upgrade cells upgrade, planned (on `surface`, on `on`'s
/// store) before the files change: each shape's run at its first
/// instruction, its first children in flight.
pub fn plan_for_upgrade(on: On, surface: &mut dyn Surface, shape: &Shape) -> Value {
    let run_id = upgrade_run_id(on, shape);
    surface.call(
        "think_plan",
        serde_json::json!({"workflow": shape.workflow, "params": shape.params(), "run_id": run_id}),
    )
}

/// Every workflow file changed (a comment appended): each a new version.
pub fn edit_workflows(root: &Root) {
    for entry in std::fs::read_dir(root.join("workflows")).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("# a new version\n");
        std::fs::write(&path, text).unwrap();
    }
}

/// `upgrade --force` of the run [`plan_for_upgrade`] made, once the files
/// changed: upgraded, and each of its children in flight now at its
/// workflow's new version too; driven on, it hands out the reference's
/// instructions and ends as the reference.
pub fn upgrade(on: On, surface: &mut dyn Surface, shape: &Shape, r: Option<&Trace>) -> Result<(), String> {
    let r = r.ok_or("no reference run (cli failed)")?;
    let run_id = upgrade_run_id(on, shape);
    let in_flight = || -> Vec<(String, String, Value)> {
        children(on, shape.workflow, &run_id)
            .into_iter()
            .filter(|c| c["status"] == "running")
            .map(|c| {
                let (wf, id) = (
                    c["workflow"].as_str().unwrap_or("").to_owned(),
                    c["run_id"].as_str().unwrap_or("").to_owned(),
                );
                let hash = state(on, &wf, &id)["workflow_hash"].clone();
                (wf, id, hash)
            })
            .collect()
    };
    let before = in_flight();
    let reply = command(on, &["upgrade", shape.workflow, "--run-id", &run_id, "--force"])?;
    ensure(
        reply["runs"]
            .as_array()
            .is_some_and(|r| r.iter().any(|u| u["run_id"] == run_id.as_str() && u["status"] == "upgraded")),
        || format!("the run was not upgraded: {reply}"),
    )?;
    for (wf, id, hash) in &before {
        let now = state(on, wf, id)["workflow_hash"].clone();
        ensure(now != *hash && !now.is_null(), || {
            format!("child {id} did not follow its parent's upgrade (still at {hash}): {reply}")
        })?;
    }
    let t = resume(surface, shape, &run_id, &on.root.join(CLOCK))?;
    ensure(t.instructions == r.instructions, || {
        format!(
            "other instructions than the CLI's after the upgrade:\n{:?}\nvs\n{:?}",
            t.instructions, r.instructions
        )
    })?;
    ends_as(&t, r)?;
    children_linked(on, shape.workflow, &run_id)
}
