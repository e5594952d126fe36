//! The state directory through a symlink (issue 24.1): when `.savant`,
//! `.savant/state` or a directory below it leads out of the project root,
//! `plan`, `next`, `state delete` (archived or purged), `state prune` and
//! `state list` refuse with `STATE_OUTSIDE_ROOT` — from the CLI and over
//! MCP, also for a link planted while the server runs — and nothing outside
//! the root is written or deleted. A link that stays inside the root is
//! fine, and `[state] dir` names a directory elsewhere on purpose.

use crate::common::{Root, assert_exit};
use crate::mcp_support::call;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

const FLOW: &str =
    "id: flow\nsteps:\n  - id: a\n    call: tool.a\n  - id: b\n    call: tool.b\n    deps: [a]\n";

/// Every file under `dir` (relative) with its bytes, sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(&path, base, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A project, and a directory outside it holding a state directory of
/// planted files that look like runs (`state/flow__r1.*`, `archive/…`).
fn planted(name: &str) -> (Root, Root) {
    let root = Root::new(&format!("symstate-{name}")).env("SAVANT_STATE_FSYNC", "0");
    root.write("workflows/flow.yaml", FLOW);
    let outside = Root::new(&format!("symstate-{name}-outside"));
    let snapshot = r#"{"version":1,"workflow":"flow","run_id":"r1"}"#;
    for dir in ["", "state/"] {
        outside.write(&format!("{dir}flow__r1.json"), snapshot);
        outside.write(&format!("{dir}flow__r1.journal"), "");
        outside.write(&format!("{dir}flow__r1.lock"), "");
    }
    outside.write("archive/flow__r1.v1-x.json", "{}");
    (root, outside)
}

fn refused(root: &Root, args: &[&str]) {
    let r = run_in(root, args);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["error"], "STATE_OUTSIDE_ROOT", "{args:?}: {r:?}");
    let message = v["details"]["message"].as_str().unwrap();
    assert!(message.contains("outside the project root") && message.contains("[state] dir"), "{message}");
}

fn run_in(root: &Root, args: &[&str]) -> crate::common::Run {
    let mut c = crate::common::cmd(&root.path, args);
    c.env("SAVANT_STATE_FSYNC", "0");
    crate::common::run_cmd(c)
}

const ATTACKS: &[&[&str]] = &[
    &["plan", "flow", "--run-id", "r2"],
    &["plan", "flow", "--run-id", "r1", "--replace"],
    &["next", "flow", "--run-id", "r1", "--step", "a", "--result", "{}"],
    &["state", "delete", "flow", "--run-id", "r1"],
    &["state", "delete", "flow", "--run-id", "r1", "--purge"],
    &["state", "prune", "--status", "done,failed,archived,running"],
    &["state", "list"],
    &["state", "get", "flow", "--run-id", "r1"],
];

#[test]
fn a_state_directory_linked_out_of_the_root_is_refused() {
    for link in [".savant", ".savant/state"] {
        let (root, outside) = planted(&link.replace('/', "-"));
        let target = if link == ".savant" { outside.path.clone() } else { outside.path.join("state") };
        if link != ".savant" {
            std::fs::create_dir_all(root.path.join(".savant")).unwrap();
        }
        symlink(&target, root.path.join(link)).unwrap();
        let before = tree(&outside.path);
        for args in ATTACKS {
            refused(&root, args);
        }
        assert_eq!(tree(&outside.path), before, "{link}: something outside the root changed");
    }
}

#[test]
fn a_dangling_link_out_of_the_root_is_never_created() {
    let (root, outside) = planted("dangling");
    let target = outside.path.join("made-by-plan");
    symlink(&target, root.path.join(".savant")).unwrap();
    refused(&root, &["plan", "flow", "--run-id", "r2"]);
    assert!(!target.exists(), "the link's target was created");
}

#[test]
fn an_archive_directory_linked_out_of_the_root_is_refused() {
    let (root, outside) = planted("archive");
    root.ok(&["plan", "flow", "--run-id", "r1"]);
    symlink(outside.path.join("archive"), root.path.join(".savant/state/archive")).unwrap();
    let before = tree(&outside.path);
    for args in
        [&["state", "delete", "flow", "--run-id", "r1"][..], &["plan", "flow", "--run-id", "r1", "--replace"]]
    {
        refused(&root, args);
    }
    assert_eq!(tree(&outside.path), before);
    assert!(root.path.join(".savant/state/flow__r1.json").exists(), "the run is still there");
}

#[test]
fn links_inside_the_root_and_an_explicit_dir_are_fine() {
    let (root, outside) = planted("inside");
    std::fs::create_dir_all(root.path.join("elsewhere")).unwrap();
    symlink(root.path.join("elsewhere"), root.path.join(".savant")).unwrap();
    root.ok(&["plan", "flow", "--run-id", "r1"]);
    assert!(root.path.join("elsewhere/state/flow__r1.json").exists());
    root.ok(&["state", "delete", "flow", "--run-id", "r1", "--purge"]);

    // `[state] dir` names a directory outside on purpose.
    let dir = outside.path.join("runs");
    root.write("savant-think.toml", format!("[state]\ndir = {:?}\n", dir.display().to_string()));
    root.ok(&["plan", "flow", "--run-id", "r9"]);
    assert!(dir.join("flow__r9.json").exists());
    assert_eq!(root.ok(&["state", "list"])["runs"][0]["run_id"], "r9");
    root.write("savant-think.toml", "[state]\ndir = \"runs\"\n");
    let r = run_in(&root, &["plan", "flow"]);
    assert_exit(&r, 1);
    assert_eq!(r.json()["error"], "INVALID_CONFIG", "{r:?}");
}

/// A link planted while `serve` runs is refused at the next call.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_refuses_a_link_planted_while_serving() {
    let (root, outside) = planted("mcp");
    let client = crate::mcp_support::connect_stdio(&root.path, "0").await;
    let work = async {
        let (is_error, v) = call(&client, "think_plan", json!({"workflow": "flow", "run_id": "r0"})).await;
        assert!(!is_error, "{v}");
        std::fs::rename(root.path.join(".savant"), root.path.join("old-savant")).unwrap();
        symlink(&outside.path, root.path.join(".savant")).unwrap();
        let before = tree(&outside.path);
        let calls = [
            ("think_plan", json!({"workflow": "flow", "run_id": "r2"})),
            ("think_plan", json!({"workflow": "flow", "run_id": "r1", "if_exists": "replace"})),
            ("think_next", json!({"workflow": "flow", "run_id": "r1", "step_id": "a", "result": {}})),
            ("think_state_list", json!({})),
            ("think_state_get", json!({"workflow": "flow", "run_id": "r1"})),
            ("think_state_restore", json!({"workflow": "flow", "run_id": "r1"})),
        ];
        for (tool, args) in calls {
            let (is_error, v) = call(&client, tool, args).await;
            assert!(is_error && v["error"] == "STATE_OUTSIDE_ROOT", "{tool}: {v}");
        }
        assert_eq!(tree(&outside.path), before, "something outside the root changed");
    };
    tokio::time::timeout(Duration::from_secs(60), work).await.expect("no hang");
    client.cancel().await.unwrap();
}
