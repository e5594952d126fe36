//! The engine's caches of workflow files: a hot call neither re-reads nor
//! re-resolves a file, but a file that is replaced is seen, and a symlink
//! that leaves the root is refused even for a workflow already served.

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
    assert!(e.details["message"].as_str().unwrap_or_default().contains("w"), "{e:?}");
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
