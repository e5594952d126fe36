//! Hostile and broken YAML: every input gives diagnostics, never a panic or a hang.

use std::time::{Duration, Instant};

use proptest::prelude::any;

use savant_think::Limits;
use savant_think::diagnostic::Code;
use savant_think::source::{SourceFile, Span};
use savant_think::syntax::yaml::{Parsed, parse};

fn read(yaml: &str) -> Parsed {
    read_with(yaml, &Limits::default())
}

fn read_with(yaml: &str, limits: &Limits) -> Parsed {
    parse(&SourceFile::new("bad.yaml", yaml), limits)
}

/// Exactly one diagnostic, of `code`, whose message contains `words`; no root.
fn check_error(parsed: &Parsed, code: Code, words: &str) {
    assert_eq!(parsed.diagnostics.len(), 1, "{:?}", parsed.diagnostics);
    let d = &parsed.diagnostics[0];
    assert_eq!(d.code, code, "{d:?}");
    assert!(d.message.contains(words), "{:?} does not contain {words:?}", d.message);
    assert!(parsed.root.is_none());
}

#[test]
fn billion_laughs_stops_quickly() {
    let mut yaml =
        String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (prev, name) in
        ["a", "b", "c", "d", "e", "f", "g", "h"].iter().zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        yaml.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let started = Instant::now();
    let parsed = read(&yaml);
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
    check_error(&parsed, Code::YamlLimit, "more than 100000 nodes");
    // The alias that crossed the limit is underlined.
    let span = parsed.diagnostics[0].span;
    assert!(yaml[span.range()].starts_with('*'), "{span}");
}

#[test]
fn aliases_within_the_budget_are_fine() {
    let yaml = "a: &a [1, 2]\nb: [*a, *a]\n";
    let parsed = read_with(yaml, &Limits { max_alias_nodes: 6, ..Limits::default() });
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let parsed = read_with(yaml, &Limits { max_alias_nodes: 5, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "more than 5 nodes");
}

#[test]
fn deep_flow_nesting_stops_at_the_limit() {
    // saphyr itself refuses more than 255 open flow collections.
    let parsed = read(&"[".repeat(10_000));
    check_error(&parsed, Code::YamlLimit, "more than 255 levels");
    let yaml = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let parsed = read(&yaml);
    check_error(&parsed, Code::YamlLimit, "more than 128 levels");
    assert_eq!(parsed.diagnostics[0].span, Span::new(128, 129));
}

#[test]
fn deep_block_nesting_stops_at_the_limit() {
    let yaml: String = (0..1_000).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
    let parsed = read_with(&yaml, &Limits { max_file_bytes: usize::MAX, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "more than 128 levels");
    let parsed = read_with(&yaml, &Limits { max_depth: 3, max_file_bytes: usize::MAX, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "more than 3 levels");
    assert_eq!(SourceFile::new("x", yaml).line_col(parsed.diagnostics[0].span.start as usize).line, 4);
}

#[test]
fn aliases_count_toward_the_depth() {
    let yaml = "a: &a [[[1]]]\nb: [[*a]]\n";
    let parsed = read_with(yaml, &Limits { max_depth: 5, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "through this alias");
    let parsed = read_with(yaml, &Limits { max_depth: 6, ..Limits::default() });
    assert!(parsed.diagnostics.is_empty());
}

/// A file of a few bytes per node (`[1,1,1,…]`) stops at `max_nodes`, at
/// the node that crossed it: memory grows with nodes, not bytes.
#[test]
fn a_file_of_too_many_nodes_stops_at_the_node_limit() {
    let yaml = format!("xs: [{}]\n", vec!["1"; 20].join(","));
    // 20 items, the sequence and the map, and the key: 23 nodes.
    assert!(read_with(&yaml, &Limits { max_nodes: 23, ..Limits::default() }).diagnostics.is_empty());
    let parsed = read_with(&yaml, &Limits { max_nodes: 22, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "more than 22 YAML nodes");
    assert_eq!(&yaml[parsed.diagnostics[0].span.range()], "1");
    // The default: 600,000 numbers in 1.2 MB are refused.
    let big = format!("xs: [{}]\n", vec!["1"; 600_000].join(","));
    check_error(&read(&big), Code::YamlLimit, "more than 500000 YAML nodes");
}

#[test]
fn a_file_over_the_size_limit_is_refused_unread() {
    let yaml = "a: 1\n".repeat(100);
    let parsed = read_with(&yaml, &Limits { max_file_bytes: 499, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "500 bytes, more than the limit of 499 bytes");
    assert!(read_with(&yaml, &Limits { max_file_bytes: 500, ..Limits::default() }).root.is_some());
}

#[test]
fn unknown_and_recursive_aliases() {
    let parsed = read("a: 1\nb: *nope\n");
    check_error(&parsed, Code::YamlSyntax, "unknown alias `*nope`");
    assert_eq!(parsed.diagnostics[0].span, Span::new(8, 13));
    let parsed = read("a: &a [1, *a]\n");
    check_error(&parsed, Code::YamlSyntax, "`*a` is inside the node");
}

#[test]
fn syntax_errors_point_at_the_problem() {
    let parsed = read("a: b: c\n");
    check_error(&parsed, Code::YamlSyntax, "mapping values are not allowed");
    assert_eq!(parsed.diagnostics[0].span, Span::new(4, 5));
    let parsed = read("é: \"unterminated\n");
    check_error(&parsed, Code::YamlSyntax, "invalid YAML");
    assert_eq!(parsed.diagnostics[0].span, Span::new(4, 5), "a byte offset, after the two-byte é");
}

#[test]
fn nul_and_control_characters() {
    let parsed = read("a: b\0c\nd: e\n");
    check_error(&parsed, Code::YamlSyntax, "U+0000");
    assert_eq!(parsed.diagnostics[0].span, Span::new(4, 5));
    let parsed = read("a: b\u{1}c\n");
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(
        parsed.diagnostics[0].help.as_deref(),
        Some("write it as an escape in a double-quoted string: \"\\x01\"")
    );
    assert!(parsed.root.is_some(), "the rest of the file is still read");
    assert!(read("a: \"tab\tand \u{feff}bom\"\n").diagnostics.is_empty());
}

#[test]
fn huge_scalars_and_many_steps_are_fast() {
    let big = "x".repeat(1 << 20);
    let yaml = format!("a: \"{big}\"\nb: {big}\nc: |\n  {big}\n");
    let started = Instant::now();
    let parsed = read(&yaml);
    assert!(parsed.diagnostics.is_empty());
    assert_eq!(parsed.root.unwrap().get("c").unwrap().as_scalar().unwrap().value.len(), big.len() + 1);
    let steps: String = (0..100_000).map(|i| format!("- id: step_{i}\n  when: \"é{i}\"\n")).collect();
    let unlimited = Limits { max_file_bytes: usize::MAX, max_nodes: usize::MAX, ..Limits::default() };
    let parsed = read_with(&steps, &unlimited);
    assert!(parsed.diagnostics.is_empty());
    assert_eq!(parsed.root.unwrap().as_seq().unwrap().len(), 100_000);
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn garbage_gives_diagnostics() {
    for yaml in
        ["{{{{", "]]]", "- a\nb: c", "\"\\q\"", "a:\n\t- b", "&", "*", "!<", "--- |\n\tx", "? [a]\n: b"]
    {
        let parsed = read(yaml);
        assert!(!parsed.diagnostics.is_empty(), "{yaml:?} gave no diagnostic");
    }
}

proptest::proptest! {
    #[test]
    fn never_panics(yaml in "[ \n\t\r:\\-?,\\[\\]{}#&*!|>'\"%@`\\\\ab01.é😀\u{1}]{0,60}") {
        let parsed = read_with(&yaml, &Limits { max_depth: 8, max_alias_nodes: 50, ..Limits::default() });
        for d in &parsed.diagnostics {
            proptest::prop_assert!(d.span.start <= d.span.end && d.span.end as usize <= yaml.len());
        }
        if let Some(root) = &parsed.root {
            proptest::prop_assert!(root.span.end as usize <= yaml.len());
        }
    }

    #[test]
    fn anything_at_all_never_panics(yaml in any::<String>()) {
        let _ = read(&yaml);
    }
}

#[test]
fn aliases_of_a_big_string_count_its_size() {
    let yaml = format!(
        "big: &big \"{}\"\nsteps:\n  - id: a\n    call: think\n    rationale: [{}]\n",
        "x".repeat(1 << 20),
        vec!["*big"; 500].join(", ")
    );
    let started = Instant::now();
    let parsed = read(&yaml);
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    // 500 nodes is far under the node budget; 500 MiB is far over the byte budget.
    check_error(&parsed, Code::YamlLimit, "aliases expand to more than 67108864 bytes");
    let d = &parsed.diagnostics[0];
    assert_eq!(&yaml[d.span.range()], "*big", "the alias that crossed the limit is underlined");
    assert_eq!(d.labels.len(), 1);
    assert!(yaml[d.labels[0].span.range()].starts_with("\"xxx"), "the anchored string is labelled");
    // The 64th alias is the last that fits: 64 × 1 MiB = 64 MiB.
    let offset = yaml.find("*big").unwrap() + 64 * "*big, ".len();
    assert_eq!(d.span.start as usize, offset);
}

#[test]
fn nested_aliases_of_a_string_count_its_size() {
    // 100 KB × 100 × 80 × 8: about 72,000 nodes but 6.4 GB once expanded.
    let mut yaml = format!("a: &a \"{}\"\n", "y".repeat(100_000));
    yaml.push_str(&format!("b: &b [{}]\n", vec!["*a"; 100].join(", ")));
    yaml.push_str(&format!("c: &c [{}]\n", vec!["*b"; 80].join(", ")));
    yaml.push_str(&format!("steps: [{}]\n", ["*c"; 8].join(", ")));
    let started = Instant::now();
    let parsed = read(&yaml);
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    check_error(&parsed, Code::YamlLimit, "bytes in this file");
    let d = &parsed.diagnostics[0];
    assert_eq!(&yaml[d.span.range()], "*b");
    assert!(yaml[d.labels[0].span.range()].starts_with("[*a, *a"));
}

#[test]
fn the_alias_byte_budget_is_a_limit() {
    let yaml = "a: &a [abc, de]\nb: [*a, *a]\n";
    let parsed = read_with(yaml, &Limits { max_alias_bytes: 10, ..Limits::default() });
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.root.unwrap().get("b").unwrap().as_seq().unwrap().len(), 2);
    let parsed = read_with(yaml, &Limits { max_alias_bytes: 9, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "more than 9 bytes");
    // Mapping keys are repeated too.
    let yaml = "a: &a {key: v}\nb: *a\n";
    assert!(read_with(yaml, &Limits { max_alias_bytes: 4, ..Limits::default() }).diagnostics.is_empty());
    let parsed = read_with(yaml, &Limits { max_alias_bytes: 3, ..Limits::default() });
    check_error(&parsed, Code::YamlLimit, "more than 3 bytes");
}

#[test]
fn the_largest_max_file_size_reads_files() {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_savant-think"))
        .current_dir(manifest)
        .args(["check", "--max-file-size", "18446744073709551615", "workflows/review_v1.yaml"])
        .output()
        .expect("run savant-think");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The same cap in the library: clamped to what spans can address.
    let limits = Limits { max_file_bytes: usize::MAX, ..Limits::default() };
    assert_eq!(limits.file_cap(), Limits::MAX_SPANNED_BYTES);
    let (src, diags) = savant_think::workspace::read_source(
        &std::path::Path::new(manifest).join("workflows/review_v1.yaml"),
        &limits,
    )
    .unwrap();
    assert!(diags.is_empty() && !src.text.is_empty(), "{diags:?}");
}
