//! Damaged run state (issue 24.6): a journal line changed so that it is
//! still JSON, a line dropped from the middle, lines swapped, a snapshot that
//! no longer fits its workflow — each is `STATE_CORRUPT` naming the file and
//! line, through the CLI and MCP, never loaded as if it were what was
//! acknowledged; `state repair` shows the damage and, with `--apply`, cuts
//! the journal back to its last good event, keeping a backup. Journals
//! written before checksums still load.

use crate::common::Root;
use crate::mcp_support::call;
use serde_json::{Value, json};
use std::time::Duration;

const FLOW: &str = "id: flow\nsteps:\n  - id: a\n    call: tool.a\n  - id: b\n    call: tool.b\n    deps: [a]\n  \
                    - id: c\n    call: tool.c\n    deps: [b]\n  - id: d\n    call: tool.d\n    deps: [c]\n";

/// A project whose run `r` has results for `a`, `b` and `c` in its journal.
fn project(name: &str) -> Root {
    let root = Root::new(&format!("corrupt-{name}")).env("SAVANT_STATE_FSYNC", "0");
    root.write("workflows/flow.yaml", FLOW);
    root.ok(&["plan", "flow", "--run-id", "r"]);
    for step in ["a", "b", "c"] {
        root.ok(&[
            "next",
            "flow",
            "--run-id",
            "r",
            "--step",
            step,
            "--result",
            &format!(r#"{{"n":"{step}1"}}"#),
        ]);
    }
    root
}

fn err(root: &Root, args: &[&str], code: &str) -> Value {
    let out = root.command(args).output().unwrap();
    let v = crate::support::root::reply(&out, args);
    assert_eq!((out.status.code(), v["error"].as_str()), (Some(1), Some(code)), "{args:?}: {v}");
    v
}

fn journal(root: &Root) -> std::path::PathBuf {
    root.join(".savant/state/flow__r.journal")
}

fn lines(root: &Root) -> Vec<String> {
    std::fs::read_to_string(journal(root)).unwrap().lines().map(str::to_owned).collect()
}

fn set_lines(root: &Root, lines: &[String]) {
    std::fs::write(journal(root), lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

/// Every way in refuses the run, naming the file and the line.
fn refused(root: &Root, line: usize, what: &str) {
    let next = ["next", "flow", "--run-id", "r", "--step", "d", "--result", "{}"];
    for args in [&["state", "get", "flow", "--run-id", "r"][..], &next] {
        let e = err(root, args, "STATE_CORRUPT");
        let message = e["details"]["message"].as_str().unwrap();
        assert!(
            message.contains("flow__r.journal") && message.contains(&format!("line {line}")),
            "{message}"
        );
        assert!(message.contains(what), "{message}");
        assert!(e["details"]["help"].as_str().unwrap().contains("state repair"), "{e}");
    }
    let list = root.ok(&["state", "list"]);
    assert_eq!(list["runs"][0]["error"], "STATE_CORRUPT", "{list}");
}

#[test]
fn a_changed_character_that_keeps_the_json_valid_is_refused_then_repaired() {
    let root = project("changed");
    let mut l = lines(&root);
    assert_eq!(l.len(), 3);
    assert!(l[1].starts_with(r#"{"seq":2,"#) && l[1].contains(r#","crc32c":""#), "{}", l[1]);
    l[1] = l[1].replace("b1", "b2");
    set_lines(&root, &l);
    refused(&root, 2, "checksum");

    // The dry run says what is damaged and what would go, and changes nothing.
    let before = std::fs::read(journal(&root)).unwrap();
    let dry = root.ok(&["state", "repair", "flow", "--run-id", "r"]);
    assert_eq!((dry["applied"].as_bool(), dry["healthy"].as_bool()), (Some(false), Some(false)), "{dry}");
    assert_eq!(dry["journal"]["damaged_line"], 2, "{dry}");
    assert_eq!(dry["journal"]["good_lines"], 1, "{dry}");
    let cut: Vec<u64> =
        dry["journal"]["cut_lines"].as_array().unwrap().iter().map(|c| c["line"].as_u64().unwrap()).collect();
    assert_eq!(cut, vec![2, 3], "{dry}");
    assert_eq!(dry["problem"]["error"], "STATE_CORRUPT", "{dry}");
    assert_eq!(std::fs::read(journal(&root)).unwrap(), before, "a dry run changes nothing");

    let done = root.ok(&["state", "repair", "flow", "--run-id", "r", "--apply"]);
    assert_eq!((done["applied"].as_bool(), done["healthy"].as_bool()), (Some(true), Some(true)), "{done}");
    let backup = root.join(".savant/state/flow__r.journal.bak");
    assert!(
        done["journal"]["backup"].as_str().unwrap().ends_with(".savant/state/flow__r.journal.bak"),
        "{done}"
    );
    assert_eq!(std::fs::read(&backup).unwrap(), before, "the backup is the journal as it was");
    assert_eq!(lines(&root).len(), 1);
    // The run goes on from its last good event: `b` is ready again.
    let state = root.ok(&["state", "get", "flow", "--run-id", "r"]);
    assert_eq!(state["steps"][1]["status"], "ready", "{state}");
    root.ok(&["next", "flow", "--run-id", "r", "--step", "b", "--result", r#"{"n":"b3"}"#]);
    assert_eq!(lines(&root).len(), 2);

    // A second repair finds nothing to cut, and a second backup never overwrites the first.
    let again = root.ok(&["state", "repair", "flow", "--run-id", "r", "--apply"]);
    assert_eq!(
        (again["applied"].as_bool(), again["healthy"].as_bool()),
        (Some(false), Some(true)),
        "{again}"
    );
    assert_eq!(again["journal"]["cut_bytes"], 0, "{again}");
    let mut l = lines(&root);
    l[0] = l[0].replace("a1", "a9");
    set_lines(&root, &l);
    let second = root.ok(&["state", "repair", "flow", "--run-id", "r", "--apply"]);
    assert!(second["journal"]["backup"].as_str().unwrap().ends_with("flow__r.journal.bak.2"), "{second}");
    assert_eq!(std::fs::read(&backup).unwrap(), before);
}

#[test]
fn a_dropped_or_moved_middle_line_is_refused() {
    let root = project("dropped");
    let l = lines(&root);
    set_lines(&root, &[l[0].clone(), l[2].clone()]);
    refused(&root, 2, "sequence number 3 where 2 was expected");
    set_lines(&root, &[l[1].clone(), l[0].clone(), l[2].clone()]);
    refused(&root, 1, "sequence number 2 where 1 was expected");
    // A changed checksum field, or a plain line after checksummed ones.
    set_lines(&root, &[l[0].clone(), l[1].replace("crc32c", "crc32C"), l[2].clone()]);
    refused(&root, 2, "crc32c");
    let plain = r#"{"version":9,"at":"2026-01-01T00:00:00Z","type":"thought","thought":"x"}"#.to_owned();
    set_lines(&root, &[l[0].clone(), l[1].clone(), l[2].clone(), plain, l[2].clone()]);
    refused(&root, 4, "without a checksum");
}

#[test]
fn a_changed_last_line_is_refused_but_a_torn_one_is_cut() {
    let root = project("last");
    let l = lines(&root);
    set_lines(&root, &[l[0].clone(), l[1].clone(), l[2].replace("c1", "c2")]);
    refused(&root, 3, "checksum");
    // Not JSON: a write the crash cut short, dropped as before.
    set_lines(&root, &[l[0].clone(), l[1].clone(), l[2][..l[2].len() / 2].to_owned()]);
    let state = root.ok(&["state", "get", "flow", "--run-id", "r"]);
    assert_eq!(state["steps"][2]["status"], "ready", "{state}");
    root.ok(&["next", "flow", "--run-id", "r", "--step", "c", "--result", r#"{"n":"c3"}"#]);
    assert_eq!(lines(&root).len(), 3);
    root.ok(&["next", "flow", "--run-id", "r", "--step", "d", "--result", "{}"]);
}

/// Journals written before checksums: their plain lines load, and the lines
/// appended after them are numbered on from them.
#[test]
fn journals_without_checksums_still_load() {
    let root = project("legacy");
    let plain: Vec<String> = lines(&root)
        .iter()
        .map(|l| {
            let mut v: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
            v.shift_remove("seq");
            v.shift_remove("crc32c");
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    set_lines(&root, &plain);
    let state = root.ok(&["state", "get", "flow", "--run-id", "r"]);
    assert_eq!(state["steps"][3]["status"], "ready", "{state}");
    assert_eq!(state["steps"][2]["result"], json!({"n": "c1"}), "{state}");
    root.ok(&["next", "flow", "--run-id", "r", "--step", "d", "--result", "{}"]);
    let l = lines(&root);
    assert_eq!(&l[..3], &plain[..]);
    assert!(l[3].starts_with(r#"{"seq":4,"#), "{}", l[3]);
    let state = root.ok(&["state", "get", "flow", "--run-id", "r"]);
    assert_eq!(state["status"], "done", "{state}");
    let check = root.ok(&["state", "repair", "flow", "--run-id", "r"]);
    assert_eq!(
        (check["healthy"].as_bool(), &check["journal"]["good_lines"]),
        (Some(true), &json!(4)),
        "{check}"
    );
}

/// Snapshots that do not fit their workflow are refused, never shown as
/// healthy or answered with a misleading UNKNOWN_STEP.
#[test]
fn snapshots_that_fail_validation_are_refused() {
    let root = project("snapshot");
    let path = root.join(".savant/state/flow__r.json");
    let good: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    type Spoil = fn(&mut Value);
    let cases: [(&str, Spoil); 4] = [
        ("lists 0 steps", |s| s["steps"] = json!([])),
        ("`zz`", |s| s["steps"][1]["id"] = json!("zz")),
        ("below its own history", |s| {
            s["history"] =
                json!([{"version": 7, "at": "2026-01-01T00:00:00Z", "type": "thought", "thought": "x"}])
        }),
        ("checkpoint", |s| s["checkpoints"] = json!([{"step_id": "a", "version": 1, "history_len": 5}])),
    ];
    for (what, spoil) in cases {
        let mut bad = good.clone();
        spoil(&mut bad);
        std::fs::write(&path, serde_json::to_vec(&bad).unwrap()).unwrap();
        for args in [
            &["state", "get", "flow", "--run-id", "r"][..],
            &["next", "flow", "--run-id", "r", "--step", "d", "--result", "{}"],
        ] {
            let e = err(&root, args, "STATE_CORRUPT");
            let message = e["details"]["message"].as_str().unwrap();
            assert!(message.contains(what) && message.contains("flow/r"), "{what}: {message}");
        }
        let check = root.ok(&["state", "repair", "flow", "--run-id", "r", "--apply"]);
        assert_eq!(
            (check["healthy"].as_bool(), check["applied"].as_bool()),
            (Some(false), Some(false)),
            "{check}"
        );
    }
    std::fs::write(&path, serde_json::to_vec(&good).unwrap()).unwrap();
    root.ok(&["state", "get", "flow", "--run-id", "r"]);
}

/// The same answers through MCP: think_state_get and think_next say
/// STATE_CORRUPT, and the run list marks the run.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_answers_state_corrupt() {
    let root = project("mcp");
    let mut l = lines(&root);
    l[0] = l[0].replace("a1", "a2");
    set_lines(&root, &l);
    let client = crate::mcp_support::connect_stdio(&root.path, "0").await;
    let work = async {
        let (is_error, v) =
            call(&client, "think_state_get", json!({"workflow": "flow", "run_id": "r"})).await;
        assert!(is_error && v["error"] == "STATE_CORRUPT", "{v}");
        assert!(v["details"]["message"].as_str().unwrap().contains("journal line 1"), "{v}");
        let next = json!({"workflow": "flow", "run_id": "r", "step_id": "d", "result": {}});
        let (is_error, v) = call(&client, "think_next", next).await;
        assert!(is_error && v["error"] == "STATE_CORRUPT", "{v}");
        let (_, v) = call(&client, "think_state_list", json!({})).await;
        assert_eq!(v["runs"][0]["error"], "STATE_CORRUPT", "{v}");
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("no hang");
    client.cancel().await.unwrap();
}

/// The snapshot check is the engine's: a spoiled snapshot is refused the
/// same way on the memory store and on PostgreSQL (when a throwaway cluster
/// can be started; skipped with a note otherwise, as in `replicas.rs`).
#[test]
fn snapshot_validation_holds_on_every_store() {
    use savant_think::state::{MemStore, RunKey, StateStore};
    let root = Root::with_workflows("corrupt-stores", &[("flow", FLOW)]);
    // Each: a name, the engine's store, and another handle on the same runs.
    type Stores = Vec<(&'static str, Box<dyn StateStore>, Box<dyn StateStore>)>;
    let mut stores: Stores = Vec::new();
    let mem = MemStore::new();
    stores.push(("memory", Box::new(mem.clone()), Box::new(mem)));
    #[cfg(feature = "postgres")]
    if let Some(cluster) = savant_think::state::pg::cluster::for_test(
        "corrupt_state::snapshot_validation_holds_on_every_store on postgres",
    ) {
        let url = cluster.fresh_schema("it_corrupt").unwrap();
        let open =
            || Box::new(savant_think::state::PgStore::open(&url, true).unwrap()) as Box<dyn StateStore>;
        stores.push(("postgres", open(), open()));
    }
    for (name, engine_store, store) in stores {
        let engine =
            savant_think::runtime::Engine::with_store(root.path.clone(), Default::default(), engine_store);
        engine.plan("flow", Value::Null, Some("r"), savant_think::runtime::args::IfExists::Error).unwrap();
        let key = RunKey::new("flow", "r").unwrap();
        {
            let _lock = store.lock(&key).unwrap();
            let mut snapshot = store.load(&key).unwrap().unwrap().snapshot;
            snapshot["steps"] = json!([]);
            store.write_snapshot(&key, &snapshot).unwrap();
        }
        let e = engine.state_get("flow", "r").unwrap_err();
        assert_eq!(e.code, "STATE_CORRUPT", "{name}: {e}");
        assert!(e.details.to_json()["message"].as_str().unwrap().contains("lists 0 steps"), "{name}: {e}");
        let e = crate::support::next_json(&engine, "flow", "r", "a", json!({})).unwrap_err();
        assert_eq!(e["error"], "STATE_CORRUPT", "{name}: {e}");
        let repaired = engine.state_repair("flow", "r", true).unwrap();
        assert!(!repaired.healthy && repaired.journal.is_none(), "{name}: {repaired:?}");
    }
}
