//! Hostile input, continued from `bad_input.rs` (its helpers): whitespace
//! and line endings, expressions, unicode, property tests, and positions
//! at the edges.

use crate::bad_input::*;
use crate::common::{CRATE, Root, run};
use proptest::prelude::*;
use savant_think::check::Config;
use savant_think::diagnostic::Code;
use savant_think::report::{self, FileReport, Format, HumanOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------- whitespace and line endings

#[test]
fn tabs_for_indentation() {
    let (src, diags) = errors("steps:\n\t- id: a\n\t  call: think\n");
    assert!(has(&diags, Code::YamlSyntax, "tabs"), "{diags:?}");
    assert_eq!(pos(&src, &diags[0]).0, 2);
    // A tab inside a value is fine.
    let (_, diags) =
        check_text("steps:\n  - id: a\n    call: think\n    rationale: \"a\tb\"\n", &Config::default());
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn a_byte_order_mark_does_not_move_later_lines() {
    let yaml = format!("\u{feff}{}", template("é <<nope>>"));
    let (src, diags) = errors(&yaml);
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    assert_eq!(pos(&src, &diags[0]), (4, 31, 4, 35));
    let s = Root::new("bom");
    s.write("bom.yaml", &yaml);
    let r = run(&s.path, &["check", "bom.yaml", "--format", "github"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.starts_with("::error file=bom.yaml,line=4,col=31,endLine=4,endColumn=35,"), "{r:?}");
}

#[test]
fn crlf_positions_are_exact() {
    let (src, diags) = errors(CRLF);
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    assert_eq!(pos(&src, &diags[0]), (4, 35, 4, 39));
    // Multi-line double-quoted, literal and folded scalars with CRLF.
    let cases = [
        ("    when: \"true &&\r\n      nope\"\r\n", (5, 7, 5, 11)),
        ("    when: |\r\n      true &&\r\n        nope\r\n", (6, 9, 6, 13)),
        ("    when: >\r\n      true &&\r\n      nope\r\n", (6, 7, 6, 11)),
        ("    when: 'true &&\r\n\r\n      nope'\r\n", (6, 7, 6, 11)),
    ];
    for (tail, expected) in cases {
        let yaml = format!("steps:\r\n  - id: a\r\n    call: prompt.say\r\n{tail}");
        let (src, diags) = errors(&yaml);
        let d = diags
            .iter()
            .find(|d| d.code == Code::UnresolvedVar)
            .unwrap_or_else(|| panic!("{tail:?}: {diags:?}"));
        assert_eq!(pos(&src, d), expected, "{tail:?}");
        assert_eq!(&yaml[d.span.range()], "nope");
    }
    let s = Root::new("crlf");
    s.write("crlf.yaml", CRLF);
    let r = run(&s.path, &["check", "crlf.yaml", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64(), d["end_line"].as_u64(), d["end_column"].as_u64()),
        (Some(4), Some(35), Some(4), Some(39)),
        "{r:?}"
    );
    let r = run(&s.path, &["check", "crlf.yaml"]);
    assert!(r.stdout.contains("crlf.yaml:4:35"), "{r:?}");
}

// ---------------------------------------------------------------- expressions

#[test]
fn hundred_thousand_character_expressions() {
    // Over 64 KiB: refused before parsing, whatever it holds.
    let expr = vec!["params.a == 'x'"; 7_000].join(" && ");
    assert!(expr.len() > 100_000);
    let (src, diags) = errors(&when(&expr));
    assert!(has(&diags, Code::ExprSyntax, "over the 65536 byte limit"), "{diags:?}");
    assert_eq!(pos(&src, &diags[0]).0, 6);
    // Under it, many operators: refused as too long, quickly.
    let expr = vec!["params.a == 'x'"; 3_000].join(" && ");
    let (_, diags) = errors(&when(&expr));
    assert!(has(&diags, Code::ExprSyntax, "too long"), "{diags:?}");
    // One long name, one long string literal, one long number: no other limit needed.
    let name = "v".repeat(60_000);
    let (src, diags) = errors(&when(&name));
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    assert_eq!(pos(&src, &diags[0]), (6, 12, 6, 60_012));
    let literal = format!("params.a == '{}'", "é".repeat(30_000));
    let (_, diags) = check_text(&when(&literal), &Config::default());
    assert!(diags.is_empty(), "{diags:?}");
    // A 60,000-digit number: whatever it means, it is checked quickly and sanely.
    check_text(&when(&format!("params.a == '' || {} > 0", "9".repeat(60_000))), &Config::default());
    // Long chains of fields, indexes and calls.
    for expr in [
        format!("params{}", ".a".repeat(30_000)),
        format!("params{}", "[0]".repeat(20_000)),
        vec!["params.a"; 6_000].join(" + "),
    ] {
        let started = Instant::now();
        let (_, diags) = errors(&when(&expr));
        assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
        assert!(diags.iter().any(|d| d.code == Code::ExprSyntax), "{:?}", codes(&diags));
    }
}

#[test]
fn ten_thousand_deep_expressions() {
    let n = 10_000;
    let exprs = [
        format!("{}true{}", "(".repeat(n), ")".repeat(n)),
        "(".repeat(n),
        ")".repeat(n),
        format!("{}true", "!".repeat(n)),
        format!("{}1 > 0", "-".repeat(n)),
        format!("{}{}", "[".repeat(n), "]".repeat(n)),
        format!("{}params.a{}", "len(".repeat(n), ")".repeat(n)),
        format!("params.a{}", "[params.a".repeat(n)),
        format!("{}true", "true ? ".repeat(n)),
        format!("{}1{}", "(1 + ".repeat(n), ")".repeat(n)),
    ];
    for expr in &exprs {
        let started = Instant::now();
        let (src, diags) = errors(&when(expr));
        assert!(started.elapsed() < Duration::from_secs(10), "{}…: {:?}", &expr[..20], started.elapsed());
        assert!(diags.iter().any(|d| d.code == Code::ExprSyntax), "{}…: {:?}", &expr[..20], codes(&diags));
        assert_eq!(pos(&src, &diags[0]).0, 6);
    }
    // The deep-paren error points at the first parenthesis past the limit.
    let (src, diags) = errors(&when(&exprs[0]));
    assert!(has(&diags, Code::ExprSyntax, "nested too deeply"), "{diags:?}");
    assert_eq!(pos(&src, &diags[0]), (6, 12 + 64, 6, 13 + 64));
    // The same inside `<<…>>` and `foreach:`.
    let (_, diags) = errors(&template(&format!("<<{}x{}>>", "(".repeat(n), ")".repeat(n))));
    assert!(has(&diags, Code::ExprSyntax, "nested too deeply"), "{diags:?}");
    let (_, diags) =
        errors(&format!("steps:\n  - id: s\n    call: think\n    foreach: \"{}\"\n", "[".repeat(n)));
    assert!(diags.iter().any(|d| d.code == Code::ExprSyntax), "{diags:?}");
    // Through the binary.
    let s = Root::new("deep-expr");
    for (i, expr) in exprs.iter().enumerate() {
        s.write(&format!("e{i}.yaml"), when(expr));
    }
    for format in ["human", "json"] {
        let r = run(&s.path, &["check", ".", "--format", format]);
        assert_handled(&r, format);
        assert_eq!(r.code, Some(1), "{r:?}");
    }
}

// ---------------------------------------------------------------- unicode

#[test]
fn unicode_everywhere() {
    let (src, diags) = errors(UNICODE);
    // Every diagnostic's text is a whole number of characters of the file.
    for d in &diags {
        let _ = &src.text[d.span.range()];
    }
    // Non-ASCII ids and names are refused with a message, not mangled.
    assert!(has(&diags, Code::YamlSchemaViolation, "wf_ünï"), "{diags:?}");
    assert!(has(&diags, Code::UnknownDep, "不存在"), "{diags:?}");
    let d = diags.iter().find(|d| d.code == Code::UnknownDep).unwrap();
    assert_eq!(&src.text[d.span.range()], "不存在");
    assert_eq!(pos(&src, d), (14, 19, 14, 22));
    // Characters outside the BMP count as one column each.
    let (src, diags) = errors(&template("😀🦀𝔘 <<nope>>"));
    assert_eq!(pos(&src, &diags[0]), (4, 33, 4, 37));
    let s = Root::new("unicode");
    s.write("ünïcödé/файл 🦀.yaml", UNICODE);
    for format in ["human", "json", "sarif", "github"] {
        let r = run(&s.path, &["check", ".", "--format", format]);
        assert_handled(&r, format);
        assert_eq!(r.code, Some(1), "{r:?}");
        assert!(r.stdout.contains("UNKNOWN_DEP"), "{format}: {r:?}");
    }
}

// ---------------------------------------------------------------- property tests

fn bundled() -> Vec<String> {
    let dir = Path::new(CRATE).join("workflows");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

#[derive(Clone, Debug)]
enum Edit {
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Insert { at: usize, text: String },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), 1..80usize).prop_map(|(at, len)| Edit::Duplicate { at, len }),
        (any::<usize>(), "[ \t\r\n:\\-?,\\[\\]{}#&*!|>'\"%@`\\\\<>().=$a-z0-9é😀\u{0}\u{1}\u{feff}]{1,8}")
            .prop_map(|(at, text)| Edit::Insert { at, text }),
    ]
}

/// The char boundary at or before `at % (len + 1)`.
fn boundary(text: &str, at: usize) -> usize {
    let mut i = at % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &mut String, e: &Edit) {
    match e {
        Edit::Delete { at, len } => {
            let start = boundary(text, *at);
            let end = boundary(text, (start + len).min(text.len()));
            text.replace_range(start..end, "");
        }
        Edit::Duplicate { at, len } => {
            let start = boundary(text, *at);
            let end = boundary(text, (start + len).min(text.len()));
            let copy = text[start..end].to_owned();
            text.insert_str(end, &copy);
        }
        Edit::Insert { at, text: s } => {
            let at = boundary(text, *at);
            text.insert_str(at, s);
        }
    }
}

fn check_and_render(text: &str) {
    let (src, diags) = check_text(text, &Config::default());
    let reports = [FileReport { source: &src, diagnostics: &diags }];
    let _ = report::render(Format::Human, &reports, &HumanOptions::default());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        check_and_render(&text);
    }

    #[test]
    fn yaml_looking_strings_never_panic(
        text in "([ \t\r\n:\\-?,\\[\\]{}#&*!|>'\"<>().=]|steps|id|call|when|foreach|deps|capture_as|input_template|params|é|😀){0,120}"
    ) {
        check_and_render(&text);
    }

    #[test]
    fn mutated_workflows_never_panic(which in 0..16usize, edits in proptest::collection::vec(edit(), 1..8)) {
        let files = bundled();
        let mut text = files[which % files.len()].clone();
        for e in &edits {
            apply(&mut text, e);
        }
        check_and_render(&text);
    }
}

// ---------------------------------------------------------------- positions and rendering at the edges

#[test]
fn a_diagnostic_past_column_65535_renders_in_human_format() {
    let yaml = template(&format!("{} <<nope>>", "x".repeat(70_000)));
    let s = Root::new("wide-column");
    s.write("wide.yaml", &yaml);
    let r = run(&s.path, &["check", "wide.yaml"]);
    assert_handled(&r, "wide.yaml");
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("UNRESOLVED_VAR"), "{r:?}");
    let (src, diags) = errors(&yaml);
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    let out = report::render(
        Format::Human,
        &[FileReport { source: &src, diagnostics: &diags }],
        &HumanOptions::default(),
    );
    assert!(out.contains("UNRESOLVED_VAR"));
}

#[test]
fn many_diagnostics_in_one_string_take_linear_time() {
    let yaml = template(&"<<x>>".repeat(10_000));
    let s = Root::new("many-diags");
    s.write("many.yaml", &yaml);
    let r = run(&s.path, &["check", "many.yaml", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let (_, diags) = errors(&yaml);
    assert_eq!(diags.len(), 10_000);
}

#[test]
fn a_byte_order_mark_is_not_a_column() {
    let (src, diags) = errors("\u{feff}steps: 3\n");
    assert_eq!(codes(&diags), [Code::YamlSchemaViolation]);
    assert_eq!(pos(&src, &diags[0]), (1, 8, 1, 9));
}

#[test]
fn lone_cr_line_endings_count_as_lines() {
    let (src, diags) = errors("steps:\r  - id: a\r    call: prompt.say\r    when: nope\r");
    assert_eq!(codes(&diags), [Code::UnresolvedVar]);
    assert_eq!(pos(&src, &diags[0]), (4, 11, 4, 15));
}
