//! Tests of `ir::lower` (a file of their own: lower.rs stays under 1,000 lines).

use super::*;

#[test]
fn durations() {
    assert_eq!(parse_duration("30"), Some(30.0));
    assert_eq!(parse_duration("500ms"), Some(0.5));
    assert_eq!(parse_duration("5m"), Some(300.0));
    assert_eq!(parse_duration("5 days"), None);
}

/// A file's expression budget is 1 MiB, or a quarter of the file when
/// larger: a big generated workflow (allowed by a raised size cap) is
/// checked whole, a small file of huge expressions is still cut off.
#[test]
fn the_expression_budget_grows_with_the_file() {
    assert_eq!(expr_budget(0), MAX_FILE_EXPR_BYTES);
    assert_eq!(expr_budget(4 * MAX_FILE_EXPR_BYTES), MAX_FILE_EXPR_BYTES);
    assert_eq!(expr_budget(25_359_383), 6_339_845);
    let steps: String = (0..2_000)
        .map(|i| format!("  - id: s{i}\n    call: think\n    when: \"'{}' == 'b'\"\n", "a".repeat(600)))
        .collect();
    let over = |text: &str| {
        let src = SourceFile::new("big.yaml", text);
        let root = crate::syntax::yaml::parse(&src, &crate::source::Limits::default()).root.unwrap();
        let (_, diags) = lower(&src, root, "big");
        diags.iter().any(|d| d.message.contains("expressions total over"))
    };
    // 1.2 MB of expressions: over the budget of a 1.3 MB file…
    let small = format!("steps:\n{steps}");
    assert!(over(&small));
    // …not of a 5.8 MB one.
    let padding = format!("# {}\n", "x".repeat(98)).repeat(45_000);
    assert!(!over(&format!("{padding}{small}")));
}

#[test]
fn ids() {
    assert!(valid_workflow_id("review_v1"));
    assert!(!valid_workflow_id("../etc"));
    assert!(!valid_workflow_id(".hidden"));
    assert!(is_identifier("mr_data"));
    assert!(!is_identifier("mr-data"));
}

fn lowered(text: &str) -> (Workflow, Vec<Diagnostic>) {
    let src = SourceFile::new("wf.yaml", text);
    let root = crate::syntax::yaml::parse(&src, &crate::source::Limits::default()).root.unwrap();
    lower(&src, root, "wf")
}

#[test]
fn a_uses_step_holds_its_with_as_the_input_and_outputs_are_read() {
    let (wf, diags) = lowered(
        "steps:\n  - id: a\n    uses: child\n    with: {n: <<1>>}\n    capture_as: r\noutputs:\n  total: <<r.n>>\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let step = &wf.steps[0];
    assert_eq!(step.uses.as_ref().unwrap().value, "child");
    assert!(step.call.is_none());
    assert!(matches!(&step.input_template, Some(TemplateValue::Object(e, _)) if e[0].0.value == "n"));
    assert_eq!(wf.outputs[0].name.value, "total");
    assert_eq!(wf.output_expressions().len(), 1);
}

#[test]
fn with_on_a_call_step_is_still_the_legacy_key_and_call_with_uses_is_one_too_many() {
    let (_, diags) = lowered("steps:\n  - id: a\n    call: think\n    with: {thought: x}\n");
    assert!(diags.iter().any(|d| d.message == "unknown step key `with`"), "{diags:?}");
    let (_, diags) = lowered("steps:\n  - id: a\n    call: think\n    uses: child\n");
    assert!(diags.iter().any(|d| d.message.contains("both `call` and `uses`")), "{diags:?}");
    let (_, diags) = lowered("steps:\n  - id: a\n    uses: child\n    input_template: {n: 1}\n");
    assert!(
        diags.iter().any(|d| d.help.as_deref() == Some("rename `input_template` to `with`")),
        "{diags:?}"
    );
    let (_, diags) = lowered("steps:\n  - id: a\n    uses: ../x\n");
    assert!(diags.iter().any(|d| d.message.contains("is not a workflow id")), "{diags:?}");
    let (_, diags) = lowered("steps:\n  - id: a\n    call: think\noutputs: [a]\n");
    assert!(diags.iter().any(|d| d.message.contains("`outputs` must be a mapping")), "{diags:?}");
}
