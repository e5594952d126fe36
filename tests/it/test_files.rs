//! Test files as files: their JSON Schema (`editor/test.schema.json`, the
//! committed copy of `savant-think schema --test-file`) accepts every shipped
//! and fixture test file and rejects unknown keys; `check` reads test files
//! as `savant-think test` does, in every format.
//!
//! `SAVANT_BLESS_SCHEMA=1 cargo test --test it test_files::` rewrites the
//! committed copy.

use crate::common::{CRATE, Root, assert_exit, run};
use savant_think::Limits;
use savant_think::source::SourceFile;
use savant_think::syntax::yaml;
use savant_think::testing::schema::{COMMITTED_PATH, test_file_schema, test_file_schema_text};
use serde_json::Value;
use std::path::Path;

fn yaml_to_json(path: &str, text: &str) -> Value {
    let parsed = yaml::parse(&SourceFile::new(path, text), &Limits::default());
    assert!(parsed.diagnostics.is_empty(), "{path}: {:?}", parsed.diagnostics);
    parsed.root.expect("a document").to_json()
}

fn errors(doc: &Value) -> Vec<String> {
    let v = jsonschema::draft7::new(&test_file_schema()).expect("a valid draft-07 schema");
    v.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

#[test]
fn the_committed_copy_is_the_generated_schema() {
    let path = Path::new(CRATE).join(COMMITTED_PATH);
    let generated = test_file_schema_text();
    if std::env::var_os("SAVANT_BLESS_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{COMMITTED_PATH} is out of date: run `savant-think schema --test-file > {COMMITTED_PATH}` \
         (or SAVANT_BLESS_SCHEMA=1 cargo test --test it test_files::)"
    );
    let out =
        std::process::Command::new(crate::common::BIN).args(["schema", "--test-file"]).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), generated);
}

#[test]
fn every_shipped_and_ok_fixture_test_file_is_valid() {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(Path::new(CRATE).join("tests/bundled"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.yaml"))
        .collect();
    for d in ["test_unknown_workflow", "test_unknown_step", "test_mock_invalid", "test_no_expect"] {
        files.push(Path::new(CRATE).join("tests/checks").join(d).join("ok.yaml"));
    }
    assert!(files.len() >= 7);
    for f in files {
        let doc = yaml_to_json(&f.display().to_string(), &std::fs::read_to_string(&f).unwrap());
        assert_eq!(errors(&doc), Vec::<String>::new(), "{}", f.display());
    }
}

#[test]
fn unknown_keys_and_bad_shapes_are_rejected_at_every_level() {
    let bad = [
        "workflow: w\ntests: []\nextra: 1\n",
        "workflow: w\ntests: [{name: a, expect: {status: done}, mock: {}}]\n",
        "workflow: w\ntests: [{name: a, expect: {status: dne}}]\n",
        "workflow: w\ntests: [{name: a, expect: {status: done, ran: x}}]\n",
        "workflow: w\ntests: [{name: a, expect: {status: done}, mocks: {s: {reslt: 1}}}]\n",
        "workflow: w\ntests: [{name: a, expect: {status: done}, mocks: {s: {result: 1, error: x}}}]\n",
        "workflow: w\ntests: [{name: a}]\n",
    ];
    for text in bad {
        assert!(!errors(&yaml_to_json("t.yaml", text)).is_empty(), "{text:?} should be rejected");
    }
}

#[test]
fn check_reads_test_files_as_test_does_in_every_format() {
    let root = Root::with_workflows(
        "test-files",
        &[("w", "id: w\nsteps:\n  - id: fetch\n    call: api.fetch\n    capture_as: data\n")],
    );
    root.write(
        "tests/w.test.yaml",
        "workflow: w\ntests:\n  - name: a\n    mocks: {fetc: {result: {}}}\n    expect: {status: done}\n",
    );
    // By default `check` reads the test files under tests/ too.
    let r = run(&root.path, &["check", "--format", "json"]);
    assert_exit(&r, 1);
    let v = r.json();
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "TEST_UNKNOWN_STEP", "{v}");
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(4), Some(13)), "{d}");
    for format in ["human", "sarif", "github", "concise"] {
        let r = run(&root.path, &["check", "tests/w.test.yaml", "--format", format]);
        assert_exit(&r, 1);
        assert!(r.stdout.contains("TEST_UNKNOWN_STEP"), "{format}: {r:?}");
        assert!(r.stdout.contains("fetch"), "{format}: the did-you-mean: {r:?}");
    }
    // From stdin, named by --stdin-filename (an editor's buffer).
    let mut c = crate::common::cmd(
        &root.path,
        &["check", "-", "--stdin-filename", "tests/w.test.yaml", "--format", "concise"],
    );
    c.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        b"workflow: w\ntests:\n  - name: a\n    mocks: {fetc: {result: {}}}\n    expect: {status: done}\n",
    )
    .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("TEST_UNKNOWN_STEP"), "{out:?}");
    // --fix leaves test files alone (their fixes are not re-checked as workflows).
    let r = run(&root.path, &["check", "tests/w.test.yaml", "--fix"]);
    assert_exit(&r, 1);
    assert!(std::fs::read_to_string(root.join("tests/w.test.yaml")).unwrap().contains("fetc:"));
    // Clean once fixed.
    root.write(
        "tests/w.test.yaml",
        "workflow: w\ntests:\n  - name: a\n    mocks: {fetch: {result: {}}}\n    expect: {status: done}\n",
    );
    assert_exit(&run(&root.path, &["check"]), 0);
}

#[test]
fn the_pre_commit_hooks_run_the_tests_when_a_workflow_or_test_changes() {
    let text = std::fs::read_to_string(Path::new(CRATE).join(".pre-commit-hooks.yaml")).unwrap();
    let hooks = yaml_to_json(".pre-commit-hooks.yaml", &text);
    let test_hooks: Vec<&Value> =
        hooks.as_array().unwrap().iter().filter(|h| h["entry"] == "savant-think test").collect();
    assert_eq!(test_hooks.len(), 3, "python, cargo and system flavours");
    for h in test_hooks {
        assert_eq!(h["pass_filenames"], false, "{h}: all tests run, not the changed files as test files");
        let files = regex::Regex::new(h["files"].as_str().unwrap()).unwrap();
        for path in [
            "workflows/release_notes.yaml",
            "schemas/MergeRequestV1.json",
            "tests/bundled/review_v1.test.yaml",
        ] {
            assert!(files.is_match(path), "{h} should run for {path}");
        }
        assert!(!files.is_match("src/main.rs"));
    }
}
