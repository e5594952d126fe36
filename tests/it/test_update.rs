//! `savant-think test --update`, `--coverage` (and lcov) and `--replay` /
//! `--from-run`, against the real binary.

use crate::common::{Root, assert_exit, run};

const UPDATABLE: &str = "# top comment
workflow: release_notes
tests:
  # before the first test
  - name: no expect yet
    params: {milestone: \"1.0\"}
    mocks:
      list_changes: {result: {items: [{iid: 1, title: A, labels: []}]}}  # keep me
      describe_change: {result: {sentence: a}}
      publish: {result: {}}
  - name: wrong expectations
    params: {milestone: \"1.0\"}
    mocks:
      list_changes: {result: {items: []}}
      publish: {result: {}}
    expect:
      status: failed   # replaced with the block
      inputs:
        =publish: {text: nope}
  - name: flow expect
    params: {milestone: \"1.0\"}
    mocks: {list_changes: {result: {items: []}}, publish: {result: {}}}
    expect: {status: waiting}
  - name: passing stays as written
    params: {milestone: \"1.0\"}
    mocks: {list_changes: {result: {items: []}}, publish: {result: {}}}
    expect: {status: done}  # mine
";

fn bundled_root(name: &str) -> Root {
    Root::new(name).bundled()
}

#[test]
fn update_rewrites_only_the_expect_blocks_that_need_it() {
    let root = bundled_root("test-update");
    let file = root.write("tests/t.test.yaml", UPDATABLE);
    let before = run(&root.path, &["test"]);
    assert_exit(&before, 1);
    let r = run(&root.path, &["test", "--update"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("updated 3 test(s) in tests/t.test.yaml"), "{r:?}");
    assert!(r.stdout.contains("4 passed, 0 failed"), "{r:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    for kept in ["# top comment", "# before the first test", "# keep me", "expect: {status: done}  # mine"] {
        assert!(text.contains(kept), "{kept:?} lost:\n{text}");
    }
    assert!(!text.contains("replaced with the block"), "{text}");
    crate::test_cmd::snapshot("test_update_rewritten", &text);
    // Updating again changes nothing.
    let again = run(&root.path, &["test", "--update"]);
    assert_exit(&again, 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn coverage_counts_steps_whens_and_foreach_sizes_and_writes_lcov() {
    let root = bundled_root("test-coverage");
    std::fs::create_dir_all(root.join("tests")).unwrap();
    for f in ["release_notes", "review_v1", "ticket_grooming"] {
        let from = std::path::Path::new(crate::common::CRATE).join(format!("tests/bundled/{f}.test.yaml"));
        std::fs::copy(from, root.join(&format!("tests/{f}.test.yaml"))).unwrap();
    }
    crate::support::root::copy_dir(
        &std::path::Path::new(crate::common::CRATE).join("tests/bundled/fixtures"),
        &root.join("tests/fixtures"),
    );
    let r =
        run(&root.path, &["test", "--coverage", "--coverage-format", "lcov", "--coverage-out", "cov.info"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("coverage of review_v1 (3 test(s))"), "{r:?}");
    assert!(r.stdout.contains("steps run 5/5, when seen both ways 2/2"), "{r:?}");
    let lcov = std::fs::read_to_string(root.join("cov.info")).unwrap();
    assert_eq!(lcov.matches("end_of_record").count(), 3, "{lcov}");
    // The step `tests` of review_v1 is on line 45 and ran in one test of three; its `when` on line 48.
    assert!(
        lcov.contains("FN:45,tests\n") && lcov.contains("FNDA:1,tests\n") && lcov.contains("DA:45,1\n"),
        "{lcov}"
    );
    assert!(lcov.contains("BRDA:48,6,0,1\nBRDA:48,6,1,2\n"), "{lcov}");
    // JSON carries it too.
    let v = run(&root.path, &["test", "--coverage", "--format", "json"]).json();
    assert_eq!(v["coverage"][1]["workflow"], "review_v1");
    assert_eq!(v["coverage"][1]["steps"][3]["skipped"], 2);
    // --coverage-out alone means lcov (it was silently ignored), and stderr says where it went.
    let r = run(&root.path, &["test", "--coverage-out", "alone.info"]);
    assert_exit(&r, 0);
    assert!(r.stderr.contains("wrote the lcov coverage to alone.info"), "{r:?}");
    assert_eq!(std::fs::read_to_string(root.join("alone.info")).unwrap(), lcov);
}

#[test]
fn a_run_still_running_replays_as_far_as_it_got() {
    let root = bundled_root("test-replay-running");
    root.ok(&["plan", "release_notes", "--params", r#"{"milestone":"2"}"#, "--run-id", "r2"]);
    // Nothing submitted yet: the recording ends at the first step, and that is no divergence.
    let r = run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r2"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("0 result(s) replayed"), "{r:?}");
    assert!(r.stdout.contains("still running: its recording ends at `list_changes`"), "{r:?}");
    assert!(r.stdout.contains("no divergence"), "{r:?}");
    let items = r#"{"items":[{"iid":1,"title":"A","labels":[]}]}"#;
    root.ok(&["next", "release_notes", "--run-id", "r2", "--step", "list_changes", "--result", items]);
    let v =
        run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r2", "--format", "json"]).json();
    assert_eq!(v["replayed"], 1, "{v}");
    assert_eq!(v["open_at"], "describe_change[0]", "{v}");
    assert_eq!(v["divergences"], serde_json::json!([]), "{v}");
    // A test needs a finished run: refused with what to do, not NO_MOCK.
    let r = run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r2", "--from-run"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("RUN_NOT_FINISHED: run `r2` of `release_notes` is still running"), "{r:?}");
    assert!(r.stderr.contains("help: finish the run first"), "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    // The replay runs no test: options about tests are usage errors, not silently dropped.
    for extra in
        [&["--format", "junit"][..], &["--filter", "x"], &["tests/a.test.yaml"], &["--coverage-out", "c"]]
    {
        let mut args = vec!["test", "--replay", "release_notes", "--run-id", "r2"];
        args.extend_from_slice(extra);
        assert_exit(&run(&root.path, &args), 2);
    }
    // An unknown workflow is said for a person, with its did-you-mean, not as raw JSON.
    let r = run(&root.path, &["test", "--replay", "release_nots", "--run-id", "r2"]);
    assert_exit(&r, 2);
    assert!(r.stderr.starts_with("error: UNKNOWN_WORKFLOW: "), "{r:?}");
    assert!(r.stderr.contains("release_notes") && !r.stderr.contains("{\""), "{r:?}");
}

#[test]
fn replay_finds_the_first_divergence_and_from_run_writes_a_passing_test() {
    let root = bundled_root("test-replay");
    root.ok(&["plan", "release_notes", "--params", r#"{"milestone":"1.0"}"#, "--run-id", "r1"]);
    let items = r#"{"items":[{"iid":1,"title":"A","labels":[]},{"iid":2,"title":"B","labels":["chore"]}]}"#;
    root.ok(&["next", "release_notes", "--run-id", "r1", "--step", "list_changes", "--result", items]);
    root.ok(&[
        "next",
        "release_notes",
        "--run-id",
        "r1",
        "--step",
        "describe_change[0]",
        "--result",
        r#"{"sentence":"a"}"#,
    ]);
    root.ok(&["next", "release_notes", "--run-id", "r1", "--step", "publish", "--result", "{}"]);
    let same = run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r1"]);
    assert_exit(&same, 0);
    assert!(
        same.stdout.contains("3 result(s) replayed") && same.stdout.contains("no divergence"),
        "{same:?}"
    );
    // A test file from the run passes as long as the workflow does the same.
    let from = run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r1", "--from-run"]);
    assert_exit(&from, 0);
    root.write("tests/r1.test.yaml", &from.stdout);
    assert_exit(&run(&root.path, &["test"]), 0);
    // The workflow's template changes: the input would render differently.
    let path = root.join("workflows/release_notes.yaml");
    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, original.replace("In one sentence for", "In a sentence for")).unwrap();
    let r = run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r1", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["divergences"][0]["code"], "INPUT_CHANGED", "{v}");
    assert_eq!(v["divergences"][0]["step_id"], "describe_change[0]");
    assert!(v["divergences"][0]["now"]["thought"].as_str().unwrap().starts_with("In a sentence"), "{v}");
    let t = run(&root.path, &["test"]);
    assert_exit(&t, 1);
    assert!(t.stdout.contains("inputs.describe_change[0].thought: differs"), "{t:?}");
    std::fs::write(&path, &original).unwrap();
    // The workflow changes: the chore is no longer skipped.
    let path = root.join("workflows/release_notes.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let when = text.lines().find(|l| l.trim_start().starts_with("when:")).unwrap().to_owned();
    std::fs::write(&path, text.replace(&when, "    when: \"true\"")).unwrap();
    let r = run(&root.path, &["test", "--replay", "release_notes", "--run-id", "r1", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    assert_eq!(v["divergences"][0]["code"], "NEW_STEP", "{v}");
    assert_eq!(v["divergences"][0]["step_id"], "describe_change[1]");
    assert_eq!(v["divergences"][1]["code"], "NOT_REACHED");
    let t = run(&root.path, &["test"]);
    assert_exit(&t, 1);
    assert!(t.stdout.contains("NO_MOCK: step `describe_change[1]`"), "{t:?}");
    // Usage errors: an unknown run, --run-id without --replay.
    assert_exit(&run(&root.path, &["test", "--replay", "release_notes", "--run-id", "nope"]), 2);
    assert_exit(&run(&root.path, &["test", "--run-id", "r1"]), 2);
}
