//! `savant-think test`: the shipped tests of the bundled workflows pass, a
//! failing expectation is a diff with its JSON path (insta snapshots of the
//! human output), broken test files are diagnostics and exit 1, usage errors
//! exit 2, output is the same whatever the thread count.

use crate::common::{CRATE, Root, assert_exit, run};
use serde_json::Value;

const FLOW: &str = r#"
id: flow
params:
  items: { type: array, items: { type: string } }
  publish: { type: boolean, default: true }
required: [items]
steps:
  - id: fetch
    call: api.fetch
    input_template: { n: "<<len(params.items)>>" }
    capture_as: fetched
    success_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
  - id: each
    call: think
    foreach: params.items
    as: it
    when: "it != 'skip'"
    input_template: { thought: "item <<it>>" }
    capture_as: thoughts
  - id: publish
    call: prompt.say
    deps: [each]
    when: "params.publish && fetched.ok"
    input_template: { text: "<<len(thoughts)>> thoughts" }
"#;

fn root_with(test: &str) -> Root {
    let root = Root::with_workflows("test-cmd", &[("flow", FLOW)]);
    root.write("tests/flow.test.yaml", test);
    root
}

pub fn snapshot(name: &str, text: &str) {
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn the_shipped_tests_of_every_bundled_workflow_pass() {
    let r = run(std::path::Path::new(CRATE), &["test", "--format", "json"]);
    assert_exit(&r, 0);
    let v = r.json();
    let files: Vec<&str> =
        v["files"].as_array().unwrap().iter().filter_map(|f| f["workflow"].as_str()).collect();
    for entry in std::fs::read_dir(std::path::Path::new(CRATE).join("workflows")).unwrap() {
        let id = entry.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned();
        assert!(files.contains(&id.as_str()), "no test file for the bundled workflow {id}: {files:?}");
    }
    assert!(v["summary"]["passed"].as_u64().unwrap() >= 11, "{v}");
    assert_eq!(v["summary"]["failed"], 0);
    assert_eq!(v["diagnostics"], Value::Array(vec![]));
}

const PASSING: &str = r#"
workflow: flow
tests:
  - name: skips the skip item and publishes
    params: {items: [a, skip, b]}
    mocks:
      fetch: {result: {ok: true}}
      each:
        - {when_input: {thought: item a}, result: {t: A}}
        - {result: {t: B}}
      call:prompt.say: {result: {}}
    expect:
      status: done
      ran: [fetch, each, publish]
      inputs: {fetch: {n: 3}, "each[2]": {thought: item b}, publish: {text: 3 thoughts}}
      captures: {=thoughts: [{t: A}, null, {t: B}]}
  - name: not publishing when fetch is not ok
    params: {items: [], publish: true}
    mocks:
      fetch: {results: [{bad: 1}, {ok: false}]}
    expect: {status: done, skipped: [publish], captures: {fetched: {ok: false}}}
  - name: a tool error leaves the run waiting
    params: {items: [a]}
    mocks:
      fetch: {error: timeout}
    expect: {status: waiting, ran: []}
"#;

#[test]
fn mocks_per_step_per_tool_per_input_and_per_attempt_drive_the_engine() {
    let root = root_with(PASSING);
    let r = run(&root.path, &["test"]);
    assert_exit(&r, 0);
    snapshot("test_cmd_passing", &r.stdout);
}

#[test]
fn a_failing_expectation_is_a_diff_with_its_json_path() {
    let failing = PASSING
        .replace("=thoughts: [{t: A}, null, {t: B}]", "=thoughts: [{t: A}, null, {t: C, u: 1}]")
        .replace("publish: {text: 3 thoughts}", "publish: {text: 2 thoughts}")
        .replace("expect: {status: waiting, ran: []}", "expect: {status: done, ran: [fetch]}")
        .replace("skipped: [publish]", "skipped: [fetch]");
    let root = root_with(&failing);
    let r = run(&root.path, &["test"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("captures.thoughts[2].t: differs"), "{r:?}");
    assert!(r.stdout.contains("inputs.publish.text: differs"), "{r:?}");
    snapshot("test_cmd_failing", &r.stdout);
    // The same failures in JSON, with paths.
    let v = run(&root.path, &["test", "--format", "json"]).json();
    let paths: Vec<&str> =
        v["tests"][0]["mismatches"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["inputs.publish.text", "captures.thoughts[2].t", "captures.thoughts[2].u"]);
    assert_eq!(v["summary"]["failed"], 3);
}

#[test]
fn a_step_without_a_mock_is_an_error_naming_it_not_a_hang() {
    let root = root_with(
        "workflow: flow\ntests:\n  - name: forgot each\n    params: {items: [a]}\n    mocks: {fetch: {result: {ok: true}}}\n    expect: {status: done}\n",
    );
    let r = run(&root.path, &["test", "--format", "json"]);
    assert_exit(&r, 1);
    let t = &r.json()["tests"][0];
    assert_eq!(t["verdict"], "error");
    assert_eq!(t["error"]["code"], "NO_MOCK");
    assert_eq!(t["error"]["step_id"], "each[0]");
    assert!(t["error"]["help"].as_str().unwrap().contains("each: {result"), "{t}");
}

#[test]
fn broken_test_files_are_diagnostics_with_spans_never_passes() {
    let cases = [
        ("workflow: flow\ntests: [\n", "YAML_SYNTAX"),
        ("workflow: nope\ntests:\n  - name: a\n    expect: {status: done}\n", "TEST_UNKNOWN_WORKFLOW"),
        ("workflow: flow\ntests:\n  - name: a\n    params: {items: []}\n", "TEST_NO_EXPECT"),
        (
            "workflow: flow\ntests:\n  - name: a\n    params: {items: []}\n    mocks: {fetc: {result: {}}}\n    expect: {status: done}\n",
            "TEST_UNKNOWN_STEP",
        ),
        (
            "workflow: flow\ntests:\n  - name: a\n    params: {items: []}\n    expect: {captures: {thought: []}}\n",
            "TEST_UNKNOWN_CAPTURE",
        ),
        (
            "workflow: flow\ntests:\n  - name: a\n    params: {items: []}\n    expct: {status: done}\n",
            "YAML_SCHEMA_VIOLATION",
        ),
    ];
    for (text, code) in cases {
        let root = root_with(text);
        let r = run(&root.path, &["test", "--format", "json"]);
        assert_exit(&r, 1);
        let v = r.json();
        let codes: Vec<&str> =
            v["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
        assert!(codes.contains(&code), "{text:?}: {codes:?}");
        assert!(v["diagnostics"][0]["line"].as_u64().is_some(), "a span: {v}");
        assert_eq!(v["summary"]["passed"], 0, "{text:?}");
    }
    // A mock result against success_schema: a warning (tests of retries do it on purpose).
    let root = root_with(
        "workflow: flow\ntests:\n  - name: a\n    params: {items: []}\n    mocks: {fetch: {result: {ok: 1}}}\n    expect: {status: failed}\n",
    );
    let r = run(&root.path, &["test", "--format", "json"]);
    assert_exit(&r, 0);
    let d = &r.json()["diagnostics"][0];
    assert_eq!(
        (d["code"].as_str(), d["severity"].as_str()),
        (Some("TEST_MOCK_INVALID"), Some("warning")),
        "{d}"
    );
    let root = root_with(
        "workflow: flow\ntests:\n  - name: a\n    params: {items: []}\n    mocks: {fetc: {result: {}}}\n    expect: {status: done}\n",
    );
    let r = run(&root.path, &["test"]);
    snapshot("test_cmd_unknown_step", &r.stdout);
}

/// A test whose mapping is broken (a mock, its params, its expect) is an
/// error of that test alone, reported under its own name; the file's other
/// tests still run and report.
#[test]
fn a_broken_test_is_its_own_error_and_the_others_still_run() {
    let root = root_with(
        "workflow: flow\ntests:\n  - name: empty results\n    params: {items: []}\n    mocks: {fetch: {results: []}}\n    expect: {status: done}\n  - name: runs\n    params: {items: [a]}\n    mocks:\n      fetch: {error: timeout}\n    expect: {status: waiting, ran: []}\n  - name: params not a mapping\n    params: 5\n    expect: {status: done}\n  - name: expect not a mapping\n    params: {items: []}\n    expect: 5\n",
    );
    let r = run(&root.path, &["test", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    let tests = v["tests"].as_array().unwrap();
    let verdicts: Vec<(&str, &str, Option<&str>)> = tests
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["verdict"].as_str().unwrap(), t["error"]["code"].as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("empty results", "error", Some("YAML_SCHEMA_VIOLATION")),
            ("runs", "passed", None),
            ("params not a mapping", "error", Some("YAML_SCHEMA_VIOLATION")),
            ("expect not a mapping", "error", Some("YAML_SCHEMA_VIOLATION")),
        ],
        "{v}"
    );
    assert!(tests[0]["error"]["message"].as_str().unwrap().contains("`results` is a non-empty list"), "{v}");
    assert!(tests[3]["error"]["message"].as_str().unwrap().contains("expect"), "{v}");
    assert_eq!((v["summary"]["total"].as_u64(), v["summary"]["passed"].as_u64()), (Some(4), Some(1)), "{v}");
    // No TEST_NO_EXPECT for an `expect` that is there but broken.
    let codes: Vec<&str> =
        v["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["code"].as_str()).collect();
    assert!(!codes.contains(&"TEST_NO_EXPECT"), "{codes:?}");
}

#[test]
fn bad_params_are_an_error_of_the_test() {
    let root = root_with(
        "workflow: flow\ntests:\n  - name: a\n    params: {itemz: []}\n    expect: {status: done}\n",
    );
    let r = run(&root.path, &["test", "--format", "json"]);
    assert_exit(&r, 1);
    assert_eq!(r.json()["tests"][0]["error"]["code"], "INVALID_PARAMS");
}

#[test]
fn filter_junit_and_determinism() {
    let root = root_with(PASSING);
    let r = run(&root.path, &["test", "--filter", "WAITING", "--format", "json"]);
    assert_exit(&r, 0);
    let v = r.json();
    assert_eq!(v["summary"]["total"], 1);
    assert_eq!(v["tests"][0]["name"], "a tool error leaves the run waiting");
    let junit = run(&root.path, &["test", "--format", "junit"]);
    assert_exit(&junit, 0);
    assert!(
        junit
            .stdout
            .contains("<testsuites name=\"savant-think test\" tests=\"3\" failures=\"0\" errors=\"0\">"),
        "{junit:?}"
    );
    assert_eq!(junit.stdout.matches("<testcase ").count(), 3);
    let one = run(&root.path, &["test", "--jobs", "1"]).stdout;
    let two = run(&root.path, &["test", "--jobs", "2"]).stdout;
    assert_eq!(one, two);
}

#[test]
fn usage_errors_exit_2() {
    let root = root_with(PASSING);
    root.write("savant-think.toml", "[state\n");
    let r = run(&root.path, &["test"]);
    assert_exit(&r, 2);
    assert!(r.stderr.contains("INVALID_CONFIG"), "{r:?}");
    assert!(!r.stderr.contains("{\"error\""), "said for a person, not as raw JSON: {r:?}");
    let r = run(&root.path, &["test", "--format", "xml"]);
    assert_exit(&r, 2);
}

#[test]
fn no_test_files_is_not_a_pass_of_nothing_silently() {
    let root = Root::with_workflows("test-cmd-empty", &[("flow", FLOW)]);
    let r = run(&root.path, &["test"]);
    assert_exit(&r, 0);
    assert!(r.stdout.contains("no test files found"), "{r:?}");
    let r = run(&root.path, &["test", "missing.test.yaml"]);
    assert_exit(&r, 1);
    assert!(r.stdout.contains("missing.test.yaml"), "{r:?}");
    assert!(!r.stdout.contains("no test files found"), "the path was given and is not there: {r:?}");
}

#[test]
fn a_filter_that_selects_no_test_is_not_a_pass() {
    let root = Root::new("test-filter-none").bundled();
    let from = std::path::Path::new(CRATE).join("tests/bundled/release_notes.test.yaml");
    root.write("tests/release_notes.test.yaml", std::fs::read_to_string(from).unwrap());
    assert_exit(&run(&root.path, &["test"]), 0);
    let r = run(&root.path, &["test", "--filter", "no such test name"]);
    assert_exit(&r, 1);
    assert!(r.stderr.contains("no test name contains `no such test name`"), "{r:?}");
}

/// The README's `test` sample is real: its test file, run over the bundled
/// workflows, prints exactly the output shown.
#[test]
fn the_readme_sample_is_real_output() {
    let readme = std::fs::read_to_string(std::path::Path::new(CRATE).join("README.md")).unwrap();
    let start = readme.find("$ cat tests/release_notes.test.yaml\n").expect("the README shows its test file");
    let rest = &readme[start..];
    let file_start = rest.find('\n').unwrap() + 1;
    let file_end = rest.find("$ savant-think test\n").unwrap();
    let out_start = file_end + "$ savant-think test\n".len();
    let out_end = out_start + rest[out_start..].find("```").unwrap();
    let root = Root::new("readme-test").bundled();
    root.write("tests/release_notes.test.yaml", &rest[file_start..file_end]);
    let r = run(&root.path, &["test"]);
    assert_exit(&r, 1);
    assert_eq!(r.stdout, &rest[out_start..out_end], "the README's sample output differs from the real one");
}

/// docs/testing.md's first test and its output are real.
#[test]
fn the_testing_walkthrough_is_real_output() {
    let doc = std::fs::read_to_string(std::path::Path::new(CRATE).join("docs/testing.md")).unwrap();
    let start = doc.find("# tests/release_notes.test.yaml\n").expect("the walkthrough's test file");
    let file = &doc[start..start + doc[start..].find("```").unwrap()];
    let out_start =
        start + doc[start..].find("$ savant-think test\n").unwrap() + "$ savant-think test\n".len();
    let output = &doc[out_start..out_start + doc[out_start..].find("```").unwrap()];
    let root = Root::new("doc-test").bundled();
    root.write("tests/release_notes.test.yaml", file);
    let r = run(&root.path, &["test"]);
    assert_exit(&r, 0);
    assert_eq!(r.stdout, output, "docs/testing.md's sample output differs from the real one");
}

#[test]
fn a_file_with_no_tests_is_listed_not_counted_silently() {
    let root = root_with(PASSING);
    root.write("tests/empty.test.yaml", "workflow: flow\ntests: []\n");
    let r = run(&root.path, &["test"]);
    assert!(r.stdout.contains("tests/empty.test.yaml\n  (no tests in this file)\n"), "{r:?}");
}
