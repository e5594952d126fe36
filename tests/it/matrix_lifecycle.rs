//! The capability matrix's cells for a run over time (`matrix.rs`):
//! `reset`, `fork` and `upgrade` of a run, its children included. What a
//! user relies on: the children follow their parent — a reset run starts
//! its children afresh (none of the old ones left in flight), a fork has
//! its own child for every `uses:` result it keeps, an upgraded run's
//! children in flight move to their workflow as it is now — and the run
//! then ends as the same run never touched (the CLI's reference).
//!
//! Runs are read in process (one engine on the file store, which reads a
//! run again whenever its stamp changed), the commands under test run as
//! processes, and each run is driven on over MCP stdio.

use crate::common::Root;
use crate::matrix::{CLOCK, Shape, ensure};
use crate::matrix_drive::{Surface, Trace, resume};
use serde_json::Value;

/// Runs the binary in `root`: the reply as JSON, or why not.
fn command(root: &Root, args: &[&str]) -> Result<Value, String> {
    let out = root.command(args).output().unwrap();
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

/// The engine the cells read runs with (the matrix's one project).
fn engine(root: &Root) -> &'static savant_think::runtime::Engine {
    static ENGINE: std::sync::OnceLock<savant_think::runtime::Engine> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| root.engine())
}

/// Every run below `run_id` (its children at any depth), as `state list` has them.
fn children(root: &Root, run_id: &str) -> Vec<Value> {
    let list = engine(root).state_list(None).map(|l| serde_json::to_value(l).unwrap_or(Value::Null));
    let prefix = format!("{run_id}.");
    let runs = list.ok().and_then(|l| l["runs"].as_array().cloned()).unwrap_or_default();
    runs.into_iter().filter(|r| r["run_id"].as_str().is_some_and(|id| id.starts_with(&prefix))).collect()
}

/// A run's full state (`state get`), read in process.
fn state(root: &Root, workflow: &str, run_id: &str) -> Value {
    engine(root)
        .state_get(workflow, run_id)
        .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

/// That every run below `run_id` says its parent is `run_id` or one of its children.
fn children_linked(root: &Root, run_id: &str) -> Result<(), String> {
    let prefix = format!("{run_id}.");
    for c in children(root, run_id) {
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
    root: &Root,
    surface: &mut dyn Surface,
    shape: &Shape,
    run_id: &str,
    r: Option<&Trace>,
) -> Result<(), String> {
    let r = r.ok_or("no reference run (cli failed)")?;
    command(root, &["reset", shape.workflow, "--run-id", run_id, "--force"])?;
    let left: Vec<Value> = children(root, run_id)
        .into_iter()
        .filter(|c| c["version"] != 0 || c["status"] != "running")
        .collect();
    ensure(left.is_empty(), || format!("reset to the start left child runs: {left:?}"))?;
    let t = resume(surface, shape, run_id, &root.join(CLOCK))?;
    ensure(t.instructions == r.instructions, || {
        format!(
            "other instructions than the CLI's after the reset:\n{:?}\nvs\n{:?}",
            t.instructions, r.instructions
        )
    })?;
    ends_as(&t, r)?;
    children_linked(root, run_id)
}

/// `fork --from LAST` of a finished run `source` (its last step run again)
/// into `<source>-fork`: the source is unchanged; for every child of the
/// source, the fork has its own (same place, linked to the fork), so its
/// kept `uses:` results keep their runs; driven on, the fork ends as the reference.
pub fn fork(
    root: &Root,
    surface: &mut dyn Surface,
    shape: &Shape,
    source: &str,
    r: Option<&Trace>,
) -> Result<(), String> {
    let r = r.ok_or("no reference run (cli failed)")?;
    let last = r.steps.last().map(|(id, _)| id.clone()).ok_or("the reference has no step")?;
    let before = state(root, shape.workflow, source);
    let fork_id = format!("{source}-fork");
    let made = command(
        root,
        &["fork", shape.workflow, "--run-id", source, "--from", &last, "--new-run-id", &fork_id],
    );
    // A fork that keeps the failure of its source fails at once, as the source did.
    if let Err(e) = made {
        let failed = state(root, shape.workflow, &fork_id)["status"] == "failed";
        ensure(r.status == "failed" && failed, || e)?;
    }
    let source_children: Vec<String> =
        children(root, source).iter().filter_map(|c| c["run_id"].as_str().map(str::to_owned)).collect();
    let t = resume(surface, shape, &fork_id, &root.join(CLOCK))?;
    ends_as(&t, r)?;
    let after = state(root, shape.workflow, source);
    ensure(before["version"] == after["version"] && before["status"] == after["status"], || {
        format!("the fork changed its source: {before} vs {after}")
    })?;
    let mine: Vec<String> =
        children(root, &fork_id).iter().filter_map(|c| c["run_id"].as_str().map(str::to_owned)).collect();
    for c in &source_children {
        let counterpart = format!("{fork_id}{}", &c[source.len()..]);
        ensure(mine.contains(&counterpart), || {
            format!("the source's child {c} has no counterpart {counterpart} in the fork: {mine:?}")
        })?;
    }
    children_linked(root, &fork_id)
}

/// The runs the upgrade cells upgrade, planned (on `surface`) before the
/// files change: each shape's run at its first instruction, its first
/// children in flight.
pub fn plan_for_upgrade(surface: &mut dyn Surface, shape: &Shape) -> Value {
    let run_id = shape.run_id("upgrade");
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
pub fn upgrade(
    root: &Root,
    surface: &mut dyn Surface,
    shape: &Shape,
    r: Option<&Trace>,
) -> Result<(), String> {
    let r = r.ok_or("no reference run (cli failed)")?;
    let run_id = shape.run_id("upgrade");
    let in_flight = || -> Vec<(String, String, Value)> {
        children(root, &run_id)
            .into_iter()
            .filter(|c| c["status"] == "running")
            .map(|c| {
                let (wf, id) = (
                    c["workflow"].as_str().unwrap_or("").to_owned(),
                    c["run_id"].as_str().unwrap_or("").to_owned(),
                );
                let hash = state(root, &wf, &id)["workflow_hash"].clone();
                (wf, id, hash)
            })
            .collect()
    };
    let before = in_flight();
    let reply = command(root, &["upgrade", shape.workflow, "--run-id", &run_id, "--force"])?;
    ensure(
        reply["runs"]
            .as_array()
            .is_some_and(|r| r.iter().any(|u| u["run_id"] == run_id.as_str() && u["status"] == "upgraded")),
        || format!("the run was not upgraded: {reply}"),
    )?;
    for (wf, id, hash) in &before {
        let now = state(root, wf, id)["workflow_hash"].clone();
        ensure(now != *hash && !now.is_null(), || {
            format!("child {id} did not follow its parent's upgrade (still at {hash}): {reply}")
        })?;
    }
    let t = resume(surface, shape, &run_id, &root.join(CLOCK))?;
    ensure(t.instructions == r.instructions, || {
        format!(
            "other instructions than the CLI's after the upgrade:\n{:?}\nvs\n{:?}",
            t.instructions, r.instructions
        )
    })?;
    ends_as(&t, r)?;
    children_linked(root, &run_id)
}
