//! Inputs whose size once broke the checker: deep recursion and quadratic work.

use savant_think::check::{Config, check_source};
use savant_think::diagnostic::Code;
use savant_think::source::SourceFile;

fn chain(n: usize, cycle: bool) -> String {
    let first = if cycle {
        format!("  - {{ id: s0, call: think, deps: [s{}] }}\n", n - 1)
    } else {
        "  - { id: s0, call: think }\n".to_owned()
    };
    let mut yaml = format!("steps:\n{first}");
    for i in 1..n {
        yaml.push_str(&format!("  - {{ id: s{i}, call: think, deps: [s{}] }}\n", i - 1));
    }
    yaml
}

/// The cycle search once recursed per step and overflowed the stack on a
/// long chain; it must be iterative. Run on a small thread stack to prove it.
#[test]
fn a_long_dependency_chain_does_not_overflow_the_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let config = Config {
                limits: savant_think::Limits { max_file_bytes: 1 << 30, ..Default::default() },
                ..Default::default()
            };
            let ok = check_source(&SourceFile::new("chain.yaml", chain(20_000, false)), &config);
            assert!(ok.is_empty(), "{:?}", &ok[..ok.len().min(3)]);
            let bad = check_source(&SourceFile::new("cycle.yaml", chain(20_000, true)), &config);
            assert_eq!(bad.iter().filter(|d| d.code == Code::CyclicDependency).count(), 1);
            assert_eq!(bad[0].labels.len(), 20_000, "a label on every edge of the cycle");
        })
        .unwrap();
    handle.join().unwrap();
}

/// Many misspelled names: each gets its own diagnostic; the first few hundred a suggestion.
#[test]
fn many_unresolved_names_each_get_a_suggestion() {
    let mut yaml = String::from("steps:\n");
    for i in 0..600 {
        yaml.push_str(&format!(
            "  - {{ id: s{i}, call: think, capture_as: cap{i}, input_template: {{ t: \"<<capx{i}>> <<steps.s{i}x.status>>\" }} }}\n"
        ));
    }
    let diags = check_source(&SourceFile::new("typos.yaml", yaml), &Config::default());
    let unresolved: Vec<_> = diags.iter().filter(|d| d.code == Code::UnresolvedVar).collect();
    assert_eq!(unresolved.len(), 1_200);
    assert_eq!(unresolved[0].help.as_deref(), Some("did you mean `cap0`?"));
}

fn check(yaml: String) -> Vec<savant_think::diagnostic::Diagnostic> {
    let config = Config {
        limits: savant_think::Limits { max_file_bytes: 1 << 30, ..Default::default() },
        ..Default::default()
    };
    check_source(&SourceFile::new("big.yaml", yaml), &config)
}

/// Output stays proportional to the mistakes a person can act on: one
/// expression naming thousands of unknowns reports a few and counts the rest.
#[test]
fn repeated_unresolved_names_in_one_expression_are_capped() {
    let names: Vec<String> = (0..8_000).map(|i| format!("x{i}")).collect();
    let yaml = format!(
        "steps:\n  - id: a\n    call: think\n    input_template: {{ t: \"<<[{}]>>\" }}\n",
        names.join(", ")
    );
    let diags = check(yaml);
    assert!(diags.len() <= 21, "{} diagnostics", diags.len());
    assert!(diags.iter().any(|d| d.message.contains("7980 more names")), "{:?}", diags.last());
}

/// A generated cycle through thousands of steps is one diagnostic with a
/// bounded message and bounded labels (the human renderer draws each label).
#[test]
fn a_huge_cycle_is_reported_compactly() {
    let diags = check(chain(12_000, true));
    let cycles: Vec<_> = diags.iter().filter(|d| d.code == Code::CyclicDependency).collect();
    assert_eq!(cycles.len(), 1);
    // Every edge is labelled (the JSON has them); the human renderer draws a few.
    assert_eq!(cycles[0].labels.len(), 12_000);
    let source = SourceFile::new("big.yaml", chain(12_000, true));
    let out = savant_think::report::render(
        savant_think::report::Format::Human,
        &[savant_think::report::FileReport { source: &source, diagnostics: &diags }],
        &savant_think::report::HumanOptions::default(),
    );
    assert!(out.contains("11976 more labels are not drawn"), "{out:.2000}");
    assert!(out.len() < 20_000, "{} bytes", out.len());
    assert!(cycles[0].message.len() < 2_000, "{} bytes", cycles[0].message.len());
    assert!(cycles[0].message.contains("cycle of 12000 steps"), "{}", cycles[0].message);
}

/// Thousands of unknown deps: every one is reported, suggestions stop after a
/// bounded number of distinct names (each compares against every step id).
#[test]
fn many_unknown_deps_are_all_reported() {
    let mut yaml = String::from("steps:\n");
    for i in 0..3_000 {
        yaml.push_str(&format!("  - {{ id: s{i}, call: think, deps: [nope{i}] }}\n"));
    }
    let diags = check(yaml);
    assert_eq!(diags.iter().filter(|d| d.code == Code::UnknownDep).count(), 3_000);
    assert!(diags.iter().filter(|d| d.help.is_some()).count() <= 256);
}

/// Parsing costs many times the expression's text in memory, so expression
/// text is bounded before parsing: 64 KiB per expression, 1 MiB per file.
/// Past the file's budget one diagnostic says so and the rest is skipped.
#[test]
fn expression_text_is_bounded_per_expression_and_per_file() {
    let array = |n: usize| format!("[{}]", vec!["[1]"; n].join(","));
    // One expression over 64 KiB: refused before parsing, at its scalar.
    let huge = format!("steps:\n  - id: a\n    call: think\n    foreach: \"{}\"\n", array(20_000));
    let d = check_source(&SourceFile::new("one.yaml", huge), &Config::default());
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, Code::ExprSyntax);
    assert!(d[0].message.contains("over the 65536 byte limit"), "{}", d[0].message);
    // Many expressions under 64 KiB each, 2.4 MB in all: one diagnostic.
    let e = array(15_000);
    let mut many = String::from("steps:\n");
    for i in 0..40 {
        many.push_str(&format!("  - id: a{i}\n    call: think\n    foreach: \"{e}\"\n"));
    }
    let d = check_source(&SourceFile::new("many.yaml", many), &Config::default());
    let over: Vec<_> = d.iter().filter(|d| d.message.contains("expressions total over")).collect();
    assert_eq!(over.len(), 1, "{:?}", &d[..d.len().min(3)]);
    assert!(d.len() <= 2, "nothing cascades from the skipped expressions: {:?}", &d[..d.len().min(3)]);
}
