//! Side files stay bounded (issue 24.7): the think tool's
//! `.savant/session.log` is rotated by `[state] thoughts_max_bytes` /
//! `thoughts_keep`, never written through a symlink or out of the root.
//! (The agent's logs are rotated by the same code, `fsx::RotatingFile`:
//! its unit tests and telemetry's cover them.)

use crate::common::Root;
use serde_json::json;

fn think(root: &Root, thought: &str) -> std::process::Output {
    let input = json!({ "thought": thought }).to_string();
    root.command(&["call", "think", "--input", &input]).output().unwrap()
}

#[test]
fn the_thoughts_log_is_capped_and_rotated() {
    let root = Root::new("side-thoughts");
    root.write("savant-think.toml", "[state]\nthoughts_max_bytes = 300\nthoughts_keep = 2\n");
    for i in 0..20 {
        let out = think(&root, &format!("thought number {i:02} {}", "x".repeat(40)));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    }
    let log = |suffix: &str| root.join(&format!(".savant/session.log{suffix}"));
    for suffix in ["", ".1", ".2"] {
        let len = std::fs::metadata(log(suffix)).unwrap().len();
        assert!(len <= 300, "{suffix}: {len} bytes");
    }
    assert!(!log(".3").exists(), "only thoughts_keep copies stay");
    let live = std::fs::read_to_string(log("")).unwrap();
    assert!(live.contains("thought number 19"), "the newest thought is in the live file: {live}");
    let kept: usize =
        ["", ".1", ".2"].iter().map(|s| std::fs::read_to_string(log(s)).unwrap().lines().count()).sum();
    assert!(kept < 20, "older thoughts were dropped: {kept} kept");
}

#[cfg(unix)]
#[test]
fn the_thoughts_log_is_never_written_through_a_symlink() {
    use std::os::unix::fs::symlink;
    let root = Root::new("side-link");
    let outside = Root::new("side-link-outside");
    outside.write("secret.txt", "KEEP");
    std::fs::create_dir_all(root.join(".savant")).unwrap();
    symlink(outside.join("secret.txt"), root.join(".savant/session.log")).unwrap();
    let out = think(&root, "hello");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), "KEEP");

    std::fs::remove_dir_all(root.join(".savant")).unwrap();
    symlink(&outside.path, root.join(".savant")).unwrap();
    let out = think(&root, "hello");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"], "STATE_OUTSIDE_ROOT", "{v}");
    assert!(!outside.join("session.log").exists(), "nothing written outside the root");
}
