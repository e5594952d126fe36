//! Hostile file systems: symlinks that leave the root, FIFOs where files are
//! expected, directories that link to themselves. Every case must end
//! quickly (the watchdog kills a hang) with a clear error and no write
//! outside the project.

use crate::common::{Root, assert_exit, run};
use std::os::unix::fs::symlink;
use std::path::Path;

const FLOW: &str =
    "id: flow\nsteps:\n  - id: a\n    call: prompt.say\n  - id: b\n    call: prompt.say\n    deps: [a]\n";

fn mkfifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
}

fn project() -> (Root, Root) {
    let root = Root::new("hostile-root");
    root.write("workflows/flow.yaml", FLOW);
    let outside = Root::new("hostile-outside");
    outside.write("secret.txt", "KEEP");
    (root, outside)
}

#[test]
fn state_files_that_are_symlinks_are_never_written_through() {
    let (root, outside) = project();
    let target = outside.path.join("secret.txt");
    assert_exit(&run(&root.path, &["plan", "flow", "--run-id", "r1"]), 0);
    let journal = root.path.join(".savant/state/flow__r1.journal");
    let _ = std::fs::remove_file(&journal);
    symlink(&target, &journal).unwrap();
    let r = run(&root.path, &["next", "flow", "--run-id", "r1", "--step", "a", "--result", "{}"]);
    assert_exit(&r, 1);
    let r = run(&root.path, &["plan", "flow", "--run-id", "r1"]);
    assert_exit(&r, 1);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "KEEP", "the journal's symlink target was written");

    // A lock symlink does not create its target.
    let lock = root.path.join(".savant/state/flow__r2.lock");
    let created = outside.path.join("created-by-lock");
    symlink(&created, &lock).unwrap();
    let r = run(&root.path, &["plan", "flow", "--run-id", "r2"]);
    assert_exit(&r, 1);
    assert!(!created.exists(), "the lock's symlink target was created");
}

#[test]
fn reads_through_symlinks_stay_inside_the_root() {
    let (root, outside) = project();
    outside.write("evil.yaml", FLOW);
    symlink(outside.path.join("evil.yaml"), root.path.join("workflows/evil.yaml")).unwrap();
    // Inside to inside is fine.
    symlink(root.path.join("workflows/flow.yaml"), root.path.join("workflows/alias.yaml")).unwrap();
    for args in [&["workflows", "read", "evil"][..], &["plan", "evil"], &["validate", "--workflow", "evil"]] {
        let r = run(&root.path, args);
        assert_exit(&r, 1);
        assert!(r.stdout.contains("outside the project root"), "{args:?}: {r:?}");
    }
    let abs = outside.path.join("evil.yaml");
    let r = run(&root.path, &["workflows", "read", abs.to_str().unwrap()]);
    assert_exit(&r, 1);
    assert!(!r.stdout.contains("prompt.say"), "{r:?}");
    assert_exit(&run(&root.path, &["workflows", "read", "alias"]), 0);

    // A named schema that links out of the root cannot be used.
    outside.write("S.json", r#"{"type":"object"}"#);
    symlink(outside.path.join("S.json"), root.path.join("schemas/S.json")).unwrap_or_else(|_| {
        std::fs::create_dir_all(root.path.join("schemas")).unwrap();
        symlink(outside.path.join("S.json"), root.path.join("schemas/S.json")).unwrap();
    });
    root.write("workflows/flow.yaml", "steps:\n  - id: a\n    call: x.y\n    success_schema: S\n");
    let r = run(&root.path, &["check", "--format", "concise"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("UNKNOWN_SCHEMA") && r.stdout.contains("outside the project root"), "{r:?}");
}

#[test]
fn fifos_are_refused_not_waited_on() {
    let (root, _outside) = project();
    mkfifo(&root.path.join("workflows/pipe.yaml"));
    let r = run(&root.path, &["check"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("not a regular file"), "{r:?}");
    let r = run(&root.path, &["plan", "pipe"]);
    assert_exit(&r, 1);
    std::fs::remove_file(root.path.join("workflows/pipe.yaml")).unwrap();

    mkfifo(&root.path.join("tools.json"));
    let r = run(&root.path, &["check", "--tools", "tools.json"]);
    assert_exit(&r, 2);
    std::fs::create_dir_all(root.path.join("schemas")).unwrap();
    mkfifo(&root.path.join("schemas/P.json"));
    root.write("workflows/flow.yaml", "steps:\n  - id: a\n    call: x.y\n    success_schema: P\n");
    let r = run(&root.path, &["check", "--format", "concise"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("not a regular file"), "{r:?}");
}

#[test]
fn an_unreadable_config_is_invalid_config() {
    let (root, _outside) = project();
    mkfifo(&root.path.join("savant-think.toml"));
    let r = run(&root.path, &["plan", "flow"]);
    assert_exit(&r, 1);
    assert_eq!(r.json()["error"], "INVALID_CONFIG", "{r:?}");
    std::fs::remove_file(root.path.join("savant-think.toml")).unwrap();
    std::fs::create_dir_all(root.path.join("savant-think.toml")).unwrap();
    let r = run(&root.path, &["check"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("INVALID_CONFIG"), "{r:?}");
}

#[test]
fn a_directory_that_links_to_itself_is_walked_once() {
    let root = Root::new("hostile-loops");
    root.write("flows/a.yaml", FLOW);
    symlink(root.path.join("flows"), root.path.join("flows/self")).unwrap();
    symlink(root.path.join("flows"), root.path.join("flows/again")).unwrap();
    let r = run(&root.path, &["check", "--format", "json", "flows"]);
    assert_exit(&r, 0);
    assert_eq!(r.json()["summary"]["files"], 1, "{r:?}");
    // Root's cleanup follows directory symlinks: remove the loops first.
    std::fs::remove_file(root.path.join("flows/self")).unwrap();
    std::fs::remove_file(root.path.join("flows/again")).unwrap();
}
