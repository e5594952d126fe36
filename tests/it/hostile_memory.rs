//! Memory per request for dense JSON (issue 46.1, docs/PERFORMANCE.md
//! "Memory per request under hostile input"): a result made of many small
//! values is measured from outside, as peak resident memory of the binary,
//! against the bound of 30 × its bytes + 64 MB. A result within the bound
//! gets the answer it always got; one whose parse would pass the bound is
//! refused before it is built.

use crate::common::{Run, cmd};
use crate::support::Root;
use std::process::Stdio;
use std::time::{Duration, Instant};

const DENSE: &str = "id: dense
steps:
  - id: a
    call: t.x
    success_schema:
      type: object
      properties:
        items: { type: array, items: { type: string } }
";

/// The bound of the issue: 30 × the input + 64 MB, in KB.
fn bound_kb(input: usize) -> u64 {
    (30 * input as u64 + (64 << 20)) / 1024
}

/// Runs `args` in `root` and samples the process's peak resident memory
/// (`VmHWM`, in KB) until it exits: the run and the peak seen.
fn measured(root: &Root, args: &[&str]) -> (Run, u64) {
    let started = Instant::now();
    let child =
        cmd(&root.path, args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let child = child.expect("spawn the binary");
    let status = format!("/proc/{}/status", child.id());
    let watcher = std::thread::spawn(move || {
        let mut peak = 0u64;
        while let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text.lines().find_map(|l| l.strip_prefix("VmHWM:"));
            if let Some(kb) = hwm.and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()) {
                peak = peak.max(kb);
            }
            if text.lines().any(|l| l.starts_with("State:") && l.contains('Z')) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        peak
    });
    let out = child.wait_with_output().unwrap();
    let peak = watcher.join().unwrap();
    let run = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: started.elapsed(),
    };
    (run, peak)
}

fn planned() -> Root {
    let root = Root::with_workflows("hostile-memory", &[("dense", DENSE)]);
    let r = crate::common::run(&root.path, &["plan", "dense", "--run-id", "r1"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    root
}

#[test]
fn a_result_of_many_small_objects_is_answered_within_the_bound() {
    let root = planned();
    // 400,000 objects of one key, 4 MB: 520 bytes an object in
    // serde_json's own parse (52× the text), 312 in the exact one.
    let text = format!("{{\"items\":[{}{{\"k\":\"b\"}}]}}", "{\"k\":\"b\"},".repeat(399_999));
    root.write("dense.json", &text);
    let (r, peak) =
        measured(&root, &["next", "dense", "--run-id", "r1", "--step", "a", "--result", "@dense.json"]);
    let reply = r.json();
    assert_eq!(reply["error"], "VALIDATION_FAILED", "{r:?}");
    assert_eq!(reply["details"][0]["path"], "/items/0", "{r:?}");
    let bound = bound_kb(text.len());
    assert!(peak <= bound, "peak {peak} KB over the bound {bound} KB for {} bytes", text.len());
}

#[test]
fn a_result_costlier_than_its_bound_is_refused_before_it_is_built() {
    let root = planned();
    // 4,000,000 zeros, 8 MB: 72 bytes a value, 36× the text.
    let text = format!("[{}0]", "0,".repeat(3_999_999));
    root.write("zeros.json", &text);
    let (r, peak) =
        measured(&root, &["next", "dense", "--run-id", "r1", "--step", "a", "--result", "@zeros.json"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("PAYLOAD_TOO_LARGE: --result was not read"), "{r:?}");
    assert!(r.stderr.contains("fewer, larger values"), "the fix is named: {r:?}");
    // Read once, never built: the text and the binary.
    let bound = (text.len() as u64 * 3 + (64 << 20)) / 1024;
    assert!(peak <= bound, "peak {peak} KB over {bound} KB for {} bytes", text.len());
    let state = crate::common::run(&root.path, &["state", "get", "dense", "--run-id", "r1"]);
    assert_eq!(state.json()["version"], 0, "nothing recorded: {state:?}");
}
