//! `savant-think test` and waits: `answers:`, `events:` and `timeouts:` end
//! a run's waits so that the answered and the timed-out branch are both
//! tested; an unanswered wait is reported, a wrong answer is the engine's
//! VALIDATION_FAILED, and `answers:` naming a step that is no `await:` is
//! TEST_UNKNOWN_STEP.

use crate::support::Root;

const CI: &str = r#"
id: ci
steps:
  - id: nap
    sleep: 10m
  - id: approve
    await:
      ask: "Post it?"
      schema: {type: object, properties: {approved: {type: boolean}}, required: [approved]}
      timeout: 24h
      on_timeout: {approved: false}
    capture_as: approval
    deps: [nap]
  - id: post
    call: think
    when: approval.approved
    input_template: {thought: "posting"}
  - id: built
    wait_for: {event: ci.done, match: "x1", timeout: 2h}
    capture_as: build
    deps: [approve]
"#;

const TESTS: &str = r#"workflow: ci
tests:
  - name: approved
    answers: {approve: {approved: true}}
    events: [{event: ci.done, key: x1, payload: {status: green}}]
    mocks: {post: {result: {}}}
    expect: {status: done, ran: [post], captures: {build: {status: green}}}
  - name: timed out
    timeouts: [approve, built]
    expect: {status: failed, skipped: [post], captures: {approval: {approved: false}}}
  - name: unanswered
    expect: {status: done}
  - name: wrong answer
    answers: {approve: {approved: 3}}
    expect: {status: waiting}
"#;

#[test]
fn answers_events_and_timeouts_test_both_branches_of_a_wait() {
    let root = Root::with_workflows("test_waits", &[("ci", CI)]).crate_files();
    root.write(
        "savant-think.toml",
        "[events.\"ci.done\"]\nschema = { type = \"object\", properties = { status = { type = \"string\" } } }\n",
    );
    root.write("tests/ci.test.yaml", TESTS);
    let out = root.command(&["test"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("PASS  approved"), "{stdout}");
    assert!(stdout.contains("PASS  timed out"), "{stdout}");
    assert!(
        stdout.contains(
            "status: the run is waiting, not done (it waits: approve (asks \"Post it?\": give it under `answers`))"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("VALIDATION_FAILED: at /approved: 3 is not of type \"boolean\""), "{stdout}");
    // `check` of the test file knows the keys, and what they name.
    root.write(
        "tests/ci.test.yaml",
        "workflow: ci\ntests:\n  - name: t\n    answers: {post: 1}\n    timeouts: [nop]\n    expect: {status: done}\n",
    );
    let out = root.command(&["test"]).output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(all.contains("`answers` names `post`, which is not an `await:` step"), "{all}");
    assert!(all.contains("`timeouts` names `nop`: the workflow `ci` has no such step"), "{all}");
}

const COVERED: &str = r#"
id: cov
steps:
  - id: nap
    sleep: 10m
  - id: approve
    await:
      ask: "Post it?"
      schema: {type: object, properties: {approved: {type: boolean}}, required: [approved]}
      timeout: 24h
      on_timeout: {approved: false}
    capture_as: approval
    deps: [nap]
  - id: built
    wait_for: {event: ci.done, match: "x1", timeout: 2h, on_timeout: {status: none}}
    capture_as: build
    deps: [approve]
  - id: again
    await:
      ask: "Really?"
      schema: {type: object, properties: {approved: {type: boolean}}, required: [approved]}
      timeout: 1h
      on_timeout: {approved: false}
    when: "build.status == 'never'"
    deps: [built]
"#;

const COVERED_TESTS: &str = r#"workflow: cov
tests:
  - name: answered
    answers: {approve: {approved: true}}
    events: [{event: ci.done, key: x1, payload: {status: green}}]
    expect: {status: done}
  - name: timed out
    timeouts: [approve, built]
    expect: {status: done, captures: {approval: {approved: false}, build: {status: none}}}
"#;

/// Coverage counts each way a wait ended: answered (or its event came),
/// timed out, a sleep's end, or never reached — in the text and in lcov.
#[test]
fn coverage_counts_the_answered_and_the_timed_out_branch_of_each_wait() {
    let root = Root::with_workflows("test_waits_cov", &[("cov", COVERED)]).crate_files();
    root.write(
        "savant-think.toml",
        "[events.\"ci.done\"]\nschema = { type = \"object\", properties = { status = { type = \"string\" } } }\n",
    );
    root.write("tests/cov.test.yaml", COVERED_TESTS);
    let text = |args: &[&str]| {
        let out = root.command(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        stdout
    };
    let both = text(&["test", "--coverage", "--coverage-out", "lcov.info"]);
    assert!(both.contains("  wait nap      ended: yes\n"), "{both}");
    assert!(both.contains("  wait approve  answered: yes  timed out: yes\n"), "{both}");
    assert!(both.contains("  wait built    answered: yes  timed out: yes\n"), "{both}");
    assert!(both.contains("  wait again    never reached\n"), "{both}");
    assert!(both.contains(", waits ended every way 3/4\n"), "{both}");
    // lcov: the answered and the timed-out branch of each wait on its step's line.
    let lcov = std::fs::read_to_string(root.join("lcov.info")).unwrap();
    let approve_line = COVERED.lines().position(|l| l.contains("- id: approve")).unwrap() + 1;
    assert!(lcov.contains(&format!("BRDA:{approve_line},9,0,1\nBRDA:{approve_line},9,1,1\n")), "{lcov}");
    let again_line = COVERED.lines().position(|l| l.contains("- id: again")).unwrap() + 1;
    assert!(lcov.contains(&format!("BRDA:{again_line},11,0,0\nBRDA:{again_line},11,1,0\n")), "{lcov}");

    // One test alone: the timed-out branch of `approve` is not covered.
    let one = text(&["test", "--coverage", "--filter", "answered"]);
    assert!(one.contains("  wait approve  answered: yes  timed out: NO\n"), "{one}");
    assert!(one.contains(", waits ended every way 1/4\n"), "{one}");
}
