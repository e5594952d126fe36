//! Tests of `scalar.rs` (a file of their own, so that file stays readable).

use super::*;
use crate::source::Limits;
use crate::source::SourceFile;
use crate::syntax::node::{Node, NodeKind};
use crate::syntax::yaml::parse;

/// Parses `yaml`, takes the value of key `key` in the root mapping, and
/// checks that every occurrence of `needle` in the value maps to text that
/// starts with `expect` in the file (`needle` itself unless told otherwise).
fn check(yaml: &str, key: &str, needle: &str, expect: &str) -> Node {
    let src = SourceFile::new("t.yaml", yaml);
    let parsed = parse(&src, &Limits::default());
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let node = parsed.root.expect("a document").get(key).expect("the key").clone();
    let NodeKind::Scalar(s) = &node.kind else { panic!("not a scalar: {node:?}") };
    let at = s.value.find(needle).unwrap_or_else(|| panic!("{needle:?} not in {:?}", s.value));
    let mapped = map_offset(yaml, node.span, s.style, &s.value, at);
    assert!(
        yaml[mapped..].starts_with(expect),
        "{needle:?} in {:?} mapped to {mapped}: {:?}",
        s.value,
        &yaml[mapped..]
    );
    // The decoder reproduces the value: no fallback happened.
    assert!(decode_matching(yaml, node.span, s.style, &s.value).is_some(), "fallback for {:?}", s.value);
    node
}

#[test]
fn plain_scalars() {
    check("when: a && b == c\n", "when", "b ==", "b ==");
    check("k: héllo 😀 wörld\n", "k", "wörld", "wörld");
    check("k: first line\n  second   line\n\n  third\n", "k", "third", "third");
    check("k: first line\n  second   line\n", "k", "second", "second");
    check("k: a\n  b\n", "k", " ", "\n");
}

#[test]
fn single_quoted_scalars() {
    check("k: 'it''s a ''test'' é'\n", "k", "test", "test''");
    check("k: 'it''s'\n", "k", "'", "''");
    check("k: 'one\n  two\n\n  three'\n", "k", "three", "three");
    check("k: 'a  \n  b'\n", "k", "b", "b'");
}

#[test]
fn double_quoted_scalars() {
    check("when: \"a && \\\"b\\\" == c\"\n", "when", "\"b", "\\\"b");
    check("when: \"a && \\\"b\\\" == c\"\n", "when", "== c", "== c");
    check("k: \"\\x41\\u00e9\\U0001F600 tail\"\n", "k", "tail", "tail");
    check("k: \"\\x41\\u00e9\\U0001F600 tail\"\n", "k", "😀", "\\U0001F600");
    check("k: \"tab\\there \\\\ x\"\n", "k", "x", "x\"");
    check("k: \"a \\\n   b\"\n", "k", "b", "b\"");
    check("k: \"one\n  two\n\n  three é\"\n", "k", "three", "three");
    check("k: \"é😀 \\n z\"\n", "k", "z", "z");
    check("k: \"a\r\n  b\"\r\n", "k", "b", "b");
}

#[test]
fn literal_block_scalars() {
    check("k: |\n  line one\n    indented two\n  three\n", "k", "three", "three");
    check("k: |-\n  a\n  é b\n", "k", "b", "b\n");
    check("k: |+2\n    deep\n  x\n\n\nnext: 1\n", "k", "x", "x\n");
    check("k: |2 # comment\n    deep\n  x\n", "k", "deep", "deep");
    check("k: &anchor |\n\n  after blank\n", "k", "after", "after");
    check("list:\n  - |\n    item\n    more\nk: |\n   three spaces\n", "k", "spaces", "spaces");
    check("k: |\n  no final newline", "k", "final", "final");
    check("k: |\r\n  crlf\r\n  x\r\n", "k", "x", "x");
}

#[test]
fn folded_block_scalars() {
    check("k: >\n  folded\n  line é\n\n  para\n", "k", "line", "line");
    check("k: >\n  folded\n  line\n\n  para\n", "k", "para", "para");
    check("k: >-\n  a\n    more indented\n  b\n", "k", "b", "b\n");
    check("k: >-\n  a\n  b\n", "k", " ", "\n  b");
    check("k: >+1\n  x\n   y\n", "k", "y", "y");
}

#[test]
fn offsets_at_the_ends_and_out_of_range_are_safe() {
    let yaml = "k: \"ab\"\n";
    let n = check(yaml, "k", "a", "a");
    let s = n.as_scalar().unwrap();
    assert_eq!(map_offset(yaml, n.span, s.style, &s.value, 2), 6, "the end is the closing quote");
    assert_eq!(map_offset(yaml, n.span, s.style, &s.value, 99), 6);
    // A value the decoder cannot reproduce falls back to the content start.
    assert_eq!(map_offset(yaml, n.span, s.style, "zz", 1), 4);
    // Nonsense spans and styles never panic.
    for style in [
        ScalarStyle::Plain,
        ScalarStyle::SingleQuoted,
        ScalarStyle::DoubleQuoted,
        ScalarStyle::Literal,
        ScalarStyle::Folded,
    ] {
        for (a, b) in [(0, 0), (0, 100), (50, 60), (3, 2), (1, 8)] {
            let at = map_offset("é: \"\\u\"", Span { start: a, end: b }, style, "x", 5);
            assert!(at <= 9);
        }
    }
    let range = map_range(yaml, n.span, s.style, &s.value, 0..2);
    assert_eq!(&yaml[range.range()], "ab");
}

/// The remembering map answers as a fresh decoding, for interleaved
/// scalars, more scalars than it keeps, and values it cannot reproduce.
#[test]
fn a_scalar_map_answers_as_a_fresh_decoding() {
    let yaml = "a: \"x \\\"y\\\" <<z>>\"\nb: |\n  one\n  two <<w>>\nc: 'it''s'\nd: plain\n  folded\ne: >\n  f\n  g\n";
    let parsed = parse(&SourceFile::new("t.yaml", yaml), &Limits::default());
    let root = parsed.root.expect("a document");
    let map = ScalarMap::new(yaml);
    for round in 0..3 {
        for key in ["a", "b", "c", "a", "d", "e", "b"] {
            let node = root.get(key).unwrap();
            let s = node.as_scalar().unwrap();
            for value in [s.value.as_str(), "not the value"] {
                for i in 0..=value.len() {
                    let fresh = map_range(yaml, node.span, s.style, value, i..value.len());
                    let cached = map.map_range(node.span, s.style, value, i..value.len());
                    assert_eq!(cached, fresh, "round {round}, {key}, {value:?}, {i}");
                }
            }
        }
    }
    assert!(map.recent.lock().unwrap().len() <= ScalarMap::KEEP);
    // A map of another text with the same spans answers for that text.
    let other = yaml.replace("<<z>>", "<<q>>").replace('x', "é");
    let node = root.get("a").unwrap();
    let s = node.as_scalar().unwrap();
    let fresh = map_range(&other, node.span, s.style, &s.value, 0..1);
    assert_eq!(ScalarMap::new(&other).map_range(node.span, s.style, &s.value, 0..1), fresh);
}

/// Every scalar of every document maps each of its characters onto the
/// same character in the file (or the escape / line break it came from).
#[test]
fn every_scalar_of_tricky_documents_maps_exactly() {
    let docs = [
        "- |\n  in a list\n- &a >-\n  anchored\n  folded\n- !!str |\n  tagged\n- ['a''b', \"c\\\"d\", e f]\n",
        "--- |\n  document\n  scalar\n...\n",
        "? |\n  block key\n: value\n",
        "outer:\n  inner: |2\n      two extra\n    base\n  next: >1\n     one extra\n    x\n",
        "k: plain\twith\ttabs\n  and\t continued\n",
        "k: a#b c\n",
        "k: {x: \"multi\n  line\", y: plain\n  flow}\n",
        "a: 1\r\nb: |\r\n  crlf\r\n  block\r\nc: \"crlf\r\n  quoted\"\r\n",
        "k: \"\\ttab\\\n  \\ escaped\\ \\\"  \"\n",
        "k: ' trailing  \n\n  '\n",
        "k: |+\n  keep\n\n\nz: 1\n",
        "k: >\n  a\n\n   more\n  b\n",
        "k: >\n\n  leading\n\n",
        "k: |\n  # not a comment\n  x\n# a comment\n",
    ];
    for yaml in docs {
        let parsed = parse(&SourceFile::new("t.yaml", yaml), &Limits::default());
        assert!(parsed.diagnostics.is_empty(), "{yaml:?}: {:?}", parsed.diagnostics);
        let mut todo = vec![parsed.root.expect("a document")];
        while let Some(node) = todo.pop() {
            let s = match node.kind {
                NodeKind::Scalar(s) => s,
                NodeKind::Seq(items) => {
                    todo.extend(items);
                    continue;
                }
                NodeKind::Map(entries) => {
                    todo.extend(entries.into_iter().flat_map(|e| [e.key, e.value]));
                    continue;
                }
            };
            assert!(
                decode_matching(yaml, node.span, s.style, &s.value).is_some(),
                "{:?} in {yaml:?}",
                s.value
            );
            for (i, c) in s.value.char_indices() {
                let at = map_offset(yaml, node.span, s.style, &s.value, i);
                let found = yaml[at..].chars().next().unwrap();
                let ok = found == c || found == '\\' || (c.is_whitespace() && found.is_whitespace());
                assert!(ok, "{c:?} of {:?} mapped to {found:?} in {yaml:?}", s.value);
            }
        }
    }
}

proptest::proptest! {
    #[test]
    fn every_char_maps_to_itself_in_simple_scalars(word in "[a-zé😀]{1,12}", style in 0..5usize) {
        let yaml = match style {
            0 => format!("k: x {word} y\n"),
            1 => format!("k: 'x {word} y'\n"),
            2 => format!("k: \"x\\t{word} y\"\n"),
            3 => format!("k: |\n  x\n  {word} y\n"),
            _ => format!("k: >\n  x\n  {word} y\n"),
        };
        let node = check(&yaml, "k", &word, &word);
        let s = node.as_scalar().unwrap();
        for (i, c) in s.value.char_indices().filter(|&(_, c)| !c.is_whitespace()) {
            let mapped = map_offset(&yaml, node.span, s.style, &s.value, i);
            proptest::prop_assert!(yaml[mapped..].starts_with(c));
        }
    }

    #[test]
    fn never_panics(text in "[ a:\"'\\\\|>#\n\t-é]{0,40}", a in 0u32..50, b in 0u32..50, d in 0usize..50) {
        for style in [ScalarStyle::Plain, ScalarStyle::DoubleQuoted, ScalarStyle::Literal] {
            let at = map_offset(&text, Span { start: a.min(b), end: a.max(b) }, style, "x", d);
            proptest::prop_assert!(at <= text.len());
        }
    }
}

mod flow_context {
    /// In flow collections saphyr's scalar spans can end past the scalar;
    /// offsets must still land on the right characters.
    #[test]
    fn scalars_inside_flow_mappings_map_exactly() {
        let text = "a: { d: \"<<x.y>>\" , s: '<<p.q>>' , p: <<m.n>> , l: [ \"<<u.v>>\" ] }\n";
        let src = crate::source::SourceFile::new("t", text);
        let root = crate::syntax::yaml::parse(&src, &crate::source::Limits::default()).root.unwrap();
        let a = root.get("a").unwrap();
        let nodes = [
            a.get("d").unwrap(),
            a.get("s").unwrap(),
            a.get("p").unwrap(),
            &a.get("l").unwrap().as_seq().unwrap()[0],
        ];
        for (n, want) in nodes.into_iter().zip(["x.y", "p.q", "m.n", "u.v"]) {
            let s = n.as_scalar().unwrap();
            let off = super::map_offset(text, n.span, s.style, &s.value, 2);
            assert_eq!(&text[off..off + 3], want, "{:?}", s.style);
        }
    }
}
