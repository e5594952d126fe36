//! The engine's caches of workflow files: a hot call neither re-reads nor
//! re-resolves a file, but a file that is replaced is seen, and a symlink
//! that leaves the root is refused even for a workflow already served.
//! And its caches of runs (the machine, the open journal and its end, the
//! open lock file): a write by another process between two calls is seen.

use savant_think::runtime::{Engine, ErrorCode};
use std::os::unix::fs::symlink;
use std::time::{Duration, SystemTime};

const WF: &str = "id: w\nsteps:\n  - id: a\n    call: think\n";

/// Writes `text` with a modification time two seconds ago: "settled", so
/// the engine may serve it from its cache without reading it again.
fn write_settled(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(2)).unwrap();
}

#[test]
fn a_cached_workflow_replaced_by_a_symlink_out_of_the_root_is_refused() {
    let dir = crate::common::Root::new("engine-cache-symlink");
    let root = dir.path.join("root");
    let outside = dir.path.join("outside");
    std::fs::create_dir_all(root.join("workflows")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let file = root.join("workflows/w.yaml");
    write_settled(&file, WF);
    write_settled(&outside.join("w.yaml"), &WF.replace("id: a", "id: stolen"));

    let engine = Engine::new(&root).unwrap();
    let first = engine.workflow("w").unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&first, &engine.workflow("w").unwrap()),
        "a hot call is served from the cache"
    );

    std::fs::remove_file(&file).unwrap();
    symlink(outside.join("w.yaml"), &file).unwrap();
    let e = engine.workflow("w").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownWorkflow, "{e:?}");
    assert!(e.details.to_json()["message"].as_str().unwrap_or_default().contains("w"), "{e:?}");
}

#[test]
fn a_cached_workflow_rewritten_is_read_again() {
    let dir = crate::common::Root::new("engine-cache-rewrite");
    std::fs::create_dir_all(dir.path.join("workflows")).unwrap();
    let file = dir.path.join("workflows/w.yaml");
    write_settled(&file, WF);
    let engine = Engine::new(&dir.path).unwrap();
    assert_eq!(engine.workflow("w").unwrap().wf.steps[0].id.value, "a");
    write_settled(&file, &WF.replace("id: a", "id: b"));
    assert_eq!(engine.workflow("w").unwrap().wf.steps[0].id.value, "b");
}

/// An engine (a server) keeps a run, its journal's end and its lock file
/// open between calls; the CLI (another process) advancing the run, a torn
/// line left by a killed writer, and the run deleted and started afresh in
/// between are all seen by the engine's next call.
#[test]
fn another_process_writing_between_two_calls_is_seen() {
    use crate::support::{generate, next_args};
    use serde_json::json;
    let root =
        crate::common::Root::with_workflows("engine-cache-runs", &[("w4", &generate::sequential("w4", 4))])
            .env("SAVANT_STATE_FSYNC", "0");
    let engine = root.engine_fsync(false);
    let cli_next = |step: &str| {
        root.ok(&["next", "w4", "--run-id", "r", "--step", step, "--result", r#"{"ok": false}"#])
    };
    let next = |step: &str| engine.next(next_args("w4", "r", step, json!({"ok": true})));
    let step_of = |p: &savant_think::runtime::reply::Progress| {
        serde_json::to_value(p).unwrap()["instruction"]["step_id"].as_str().map(str::to_owned)
    };

    engine.plan("w4", serde_json::Value::Null, Some("r"), true).unwrap();
    next("s0").unwrap();
    assert_eq!(cli_next("s1")["instruction"]["step_id"], "s2");
    let e = next("s1").map(|_| ()).unwrap_err();
    assert_eq!(
        e.code,
        ErrorCode::StateConflict,
        "s1 is done already, by the CLI, with another result: {e:?}"
    );
    assert_eq!(step_of(&next("s2").unwrap()).as_deref(), Some("s3"));
    // A writer killed mid-line leaves a torn tail: cut, never built upon.
    let journal = root.join(".savant/state/w4__r.journal");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"version\": 99, \"to"))
        .unwrap();
    assert_eq!(step_of(&next("s3").unwrap()).as_deref(), Some("end"));
    let fresh = root.engine_fsync(false).state_get("w4", "r").unwrap();
    let results: Vec<_> = fresh.history.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    assert_eq!(results.len(), 4, "four results, once each: {results:?}");
    assert_eq!(fresh.captures["c1"], json!({"ok": false}), "the CLI's result stands");

    // Replaced by the CLI (planned afresh): the engine starts from s0.
    root.ok(&["plan", "w4", "--run-id", "r", "--replace"]);
    let e = next("end").map(|_| ()).unwrap_err();
    assert_eq!(e.code, ErrorCode::StepNotReady, "{e:?}");
    assert_eq!(step_of(&next("s0").unwrap()).as_deref(), Some("s1"));
}

/// The run cache holds at most `[state] cached_runs` runs, however many
/// the engine has seen (issue 46.3); a run it dropped is read from the
/// store again and goes on where it was. With 0 it keeps none.
#[test]
fn the_run_cache_keeps_at_most_cached_runs_and_a_dropped_run_goes_on() {
    use crate::support::{generate, next_args};
    use serde_json::json;
    for bound in [3, 0] {
        let root = crate::common::Root::with_workflows(
            "engine-cache-bound",
            &[("w4", &generate::sequential("w4", 4))],
        );
        root.write("savant-think.toml", format!("[state]\nfsync = false\ncached_runs = {bound}\n"));
        let engine = root.engine();
        for i in 0..10 {
            engine.plan("w4", serde_json::Value::Null, Some(&format!("r{i}")), true).unwrap();
            assert!(engine.runs_cached() <= bound, "{} cached, bound {bound}", engine.runs_cached());
        }
        // r0 … r6 were dropped (with a bound of 3): each goes on from s0.
        for round in 0..2 {
            for i in 0..10 {
                let (run, step) = (format!("r{i}"), format!("s{round}"));
                let p = engine
                    .next(next_args("w4", &run, &step, json!({"ok": true, "run": i, "round": round})))
                    .unwrap();
                let p = serde_json::to_value(p).unwrap();
                assert_eq!(p["instruction"]["step_id"], format!("s{}", round + 1), "{run}: {p}");
                assert!(engine.runs_cached() <= bound, "{} cached, bound {bound}", engine.runs_cached());
            }
        }
        assert_eq!(engine.runs_cached(), bound, "the most recent runs are kept");
        let fresh = root.engine().state_get("w4", "r0").unwrap();
        let history: Vec<_> =
            fresh.history.iter().map(|e| serde_json::to_value(e).unwrap()["result"].clone()).collect();
        assert_eq!(
            history,
            [json!({"ok": true, "run": 0, "round": 0}), json!({"ok": true, "run": 0, "round": 1})],
            "bound {bound}"
        );
    }
}
