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
