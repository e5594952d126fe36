use super::*;
use serde_json::json;

fn read(text: &str) -> (TestFile, Vec<String>) {
    let src = SourceFile::new("t.test.yaml", text);
    let (file, diags) = parse(&src, &Limits::default());
    let codes = diags
        .iter()
        .map(|d| {
            format!(
                "{} {}{}",
                d.code.as_str(),
                d.message,
                d.help.as_deref().map(|h| format!(" (help: {h})")).unwrap_or_default()
            )
        })
        .collect();
    (file, codes)
}

#[test]
fn the_issue_example_reads_whole() {
    let (file, diags) = read(
        r#"
workflow: release_notes
tests:
  - name: skips publishing for drafts
    params: {draft: true, repo: acme/app}
    mocks:
      fetch_prs: {result: {items: [{title: Fix login}]}}
      summarize: {results: [{text: retry me}, {text: Fixed login}]}
      call:gitlab.create_note: {error: timeout}
      each:
        - {when_input: {q: a}, result: 1}
        - {result: 2}
    expect:
      status: done
      skipped: [publish]
      ran: [fetch_prs, summarize]
      inputs:  {summarize: {prs: [{title: Fix login}]}}
      captures: {notes: {text: Fixed login}, =exact: []}
"#,
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.workflow.unwrap().value, "release_notes");
    let t = &file.tests[0];
    assert_eq!(t.params, json!({"draft": true, "repo": "acme/app"}));
    assert_eq!(t.mocks.len(), 4);
    assert_eq!(t.mocks[2].target, MockTarget::Call("gitlab.create_note".into()));
    assert_eq!(t.mocks[2].cases[0].reply, Reply::Error(json!("timeout")));
    assert!(matches!(&t.mocks[1].cases[0].reply, Reply::Results(r) if r.len() == 2));
    assert_eq!(t.mocks[3].cases[0].when_input, Some(json!({"q": "a"})));
    let e = t.expect.as_ref().unwrap();
    assert_eq!(e.status.as_ref().unwrap().value, "done");
    assert_eq!(e.captures[1].name, "exact");
    assert!(e.captures[1].exact && !e.captures[0].exact);
}

#[test]
fn shape_errors_are_reported_and_never_panic() {
    for text in
        ["", "[1]", "workflow: [x]\ntests: 3", "tests: []", "workflow: w\ntests: [3, {name: [x]}]", "{{{"]
    {
        let (_, diags) = read(text);
        assert!(!diags.is_empty(), "{text:?} should be reported");
    }
    let (_, diags) = read("workflow: w\ntests:\n  - name: a\n    expct: {status: done}\n");
    assert!(diags.iter().any(|d| d.contains("unknown key `expct`")), "{diags:?}");
    assert!(diags.iter().any(|d| d.contains("did you mean `expect`?")), "{diags:?}");
    assert!(diags.iter().any(|d| d.starts_with("TEST_NO_EXPECT")), "{diags:?}");
    let (_, diags) = read("workflow: w\ntests:\n  - name: a\n    expect: {status: dne}\n");
    assert!(diags.iter().any(|d| d.contains("unknown status `dne`")), "{diags:?}");
    let (_, diags) = read(
        "workflow: w\ntests:\n  - name: a\n    mocks: {s: {result: 1, error: x}}\n    expect: {status: done}\n",
    );
    assert!(diags.iter().any(|d| d.contains("not several")), "{diags:?}");
    let (_, diags) =
        read("workflow: w\ntests:\n  - name: a\n    mocks: {s: {results: []}}\n    expect: {status: done}\n");
    assert!(diags.iter().any(|d| d.contains("non-empty list")), "{diags:?}");
}

#[test]
fn an_empty_expect_asserts_nothing() {
    let (_, diags) = read("workflow: w\ntests:\n  - name: a\n    expect: {}\n");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].starts_with("TEST_NO_EXPECT the test `a` asserts nothing"));
}

#[test]
fn every_prefix_and_mangling_of_a_test_file_reads_without_panicking() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bundled/review_v1.test.yaml"))
            .unwrap();
    let limits = Limits::default();
    for (n, (at, _)) in text.char_indices().enumerate() {
        let src = SourceFile::new("t.test.yaml", &text[..at]);
        let _ = parse(&src, &limits);
        if n % 17 != 0 {
            continue;
        }
        // The same with a byte of YAML syntax dropped in.
        for junk in [":", "- ", "{", "[", "\"", "&a ", "*a"] {
            let mangled = format!("{}{junk}{}", &text[..at], &text[at..]);
            let _ = parse(&SourceFile::new("t.test.yaml", mangled), &limits);
        }
    }
}
