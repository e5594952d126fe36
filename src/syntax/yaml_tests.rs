//! Tests of `yaml.rs` (a file of their own, so that file stays readable).

use super::*;

fn read(yaml: &str) -> Parsed {
    parse(&SourceFile::new("t.yaml", yaml), &Limits::default())
}

/// The text of the span of `node`.
fn text<'t>(yaml: &'t str, node: &Node) -> &'t str {
    &yaml[node.span.range()]
}

#[test]
fn scalar_spans_are_the_scalars_as_written() {
    let yaml = "a: plain value\nb: 'it''s'\nc: \"x \\\"y\\\" z\"\nd: |\n  line1\n  line2\n\n\
                    e: >-\n  f1\n  f2\nh: multi\n  line plain\nk: &A val\nm: !!str 12\nn: &B |2 # c|>\n   x\n";
    let parsed = read(yaml);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let root = parsed.root.unwrap();
    let cases = [
        ("a", "plain value"),
        ("b", "'it''s'"),
        ("c", "\"x \\\"y\\\" z\""),
        ("d", "|\n  line1\n  line2"),
        ("e", ">-\n  f1\n  f2"),
        ("h", "multi\n  line plain"),
        ("k", "val"),
        ("m", "12"),
        ("n", "|2 # c|>\n   x"),
    ];
    for (key, expect) in cases {
        assert_eq!(text(yaml, root.get(key).unwrap()), expect, "key {key}");
    }
    let keys: Vec<_> = root.as_map().unwrap().iter().map(|e| text(yaml, &e.key)).collect();
    assert_eq!(keys, ["a", "b", "c", "d", "e", "h", "k", "m", "n"]);
}

#[test]
fn spans_are_byte_offsets_after_multibyte_text() {
    let yaml = "é😀: ünïcødé\nk: \"😀 x\"\nl: |\n  ü\n";
    let root = read(yaml).root.unwrap();
    assert_eq!(text(yaml, root.get("k").unwrap()), "\"😀 x\"");
    assert_eq!(text(yaml, root.get("é😀").unwrap()), "ünïcødé");
    assert_eq!(text(yaml, root.get("l").unwrap()), "|\n  ü");
}

#[test]
fn collection_spans_run_from_start_to_last_item() {
    let yaml = "# c\nf: &x [1, {x: y}]\ng:\n  - p\n  - q   # c\nm:\n  a: 1\n  b: [2]\n";
    let root = read(yaml).root.unwrap();
    assert_eq!(text(yaml, &root), &yaml[4..yaml.len() - 1]);
    assert_eq!(text(yaml, root.get("f").unwrap()), "[1, {x: y}]");
    assert_eq!(text(yaml, root.get("g").unwrap()), "- p\n  - q");
    assert_eq!(text(yaml, root.get("m").unwrap()), "a: 1\n  b: [2]");
}

#[test]
fn empty_block_scalars_and_empty_values() {
    let yaml = "b: |\nc: >\n\nd:\ne: &a\nf: *a\n";
    let parsed = read(yaml);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let root = parsed.root.unwrap();
    assert_eq!(text(yaml, root.get("b").unwrap()), "|");
    assert_eq!(text(yaml, root.get("c").unwrap()), ">");
    assert!(root.get("d").unwrap().is_null());
    assert!(root.get("f").unwrap().is_null());
}

#[test]
fn an_under_indented_quoted_line_is_pointed_at() {
    // The original system's files had this; saphyr reports the opening quote.
    let yaml = "s:\n  - id: a\n    text: 'it''s a\n\n'\n    b: \"x\\\"\n  y\"\n";
    let parsed = read(yaml);
    let d = &parsed.diagnostics[0];
    assert_eq!(d.message, "invalid YAML: this line of a quoted string is not indented more than its key");
    assert_eq!(d.span, Span::new(yaml.find("\n'").unwrap() + 1, yaml.find("\n'").unwrap() + 2));
    assert_eq!(d.labels[0].span.start as usize, yaml.find("'it").unwrap());
    // A string on its own line keeps saphyr's position.
    let parsed = read("k:\n  'a\nb'\n");
    assert_eq!(parsed.diagnostics[0].message, "invalid YAML: invalid indentation in quoted scalar");
}

#[test]
fn duplicate_keys_keep_the_first() {
    let yaml = "a: 1\nb: 2\na: 3\n";
    let parsed = read(yaml);
    assert_eq!(parsed.diagnostics.len(), 1);
    let d = &parsed.diagnostics[0];
    assert_eq!((d.code, d.message.as_str()), (Code::YamlSyntax, "duplicate key `a`"));
    assert_eq!(d.span, Span::new(10, 11));
    assert_eq!(d.labels[0].span, Span::new(0, 1));
    assert_eq!(d.labels[0].message, "first defined here");
    let root = parsed.root.unwrap();
    assert_eq!(root.as_map().unwrap().len(), 2);
    assert_eq!(root.get("a").unwrap().as_scalar().unwrap().value, "1");
}

#[test]
fn aliases_are_expanded() {
    let yaml = "base: &b {x: 1, y: [2]}\nuse: *b\nagain: *b\n";
    let parsed = read(yaml);
    assert!(parsed.diagnostics.is_empty());
    let root = parsed.root.unwrap();
    assert_eq!(root.get("use"), root.get("base"));
    assert_eq!(root.get("again").unwrap().get("y").unwrap().as_seq().unwrap().len(), 1);
}

#[test]
fn empty_and_comment_only_files_have_no_root() {
    for yaml in ["", "# only a comment\n", "\n\n   \n"] {
        let parsed = read(yaml);
        assert!(parsed.root.is_none() && parsed.diagnostics.is_empty(), "{yaml:?}");
    }
}

#[test]
fn a_second_document_is_an_error() {
    let yaml = "a: 1\n---\nb: 2\n";
    let parsed = read(yaml);
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(parsed.diagnostics[0].message, "a workflow file holds one YAML document");
    assert_eq!(parsed.diagnostics[0].span, Span::new(5, 8));
    assert!(parsed.root.unwrap().get("a").is_some());
}

#[test]
fn char_offsets_convert_indices() {
    let text = "aé😀".repeat(100);
    let mut offsets = CharOffsets::new(&text);
    let expected: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    for (index, byte) in expected.iter().enumerate() {
        assert_eq!(offsets.byte(index), *byte);
    }
    for index in [5, 299, 3, 170, 171, 64, 63, 0, 300] {
        assert_eq!(offsets.byte(index), expected[index], "{index}");
    }
    assert_eq!(offsets.byte(10_000), text.len());
}

#[test]
fn the_byte_scan_finds_the_first_non_printable_character_as_the_character_scan_does() {
    let by_chars = |t: &str| t.char_indices().find(|&(_, c)| !is_printable(c));
    for t in [
        "",
        "a: b\n\tc: 'd'\r\n",
        "a\u{7f}b",
        "é\u{1}",
        "ok: é ü \u{a0} \u{85}\u{feff}x",
        "x\u{fffe}",
        "tail\0",
        "\u{1F600} \u{9c}",
        "日本\u{b}",
    ] {
        assert_eq!(first_non_printable(t), by_chars(t), "{t:?}");
    }
    assert_eq!(first_non_printable("a\u{7f}b"), Some((1, '\u{7f}')));
}
