//! A small deterministic YAML emitter for [`Yaml`] trees.
//!
//! The output is a function of the tree alone (not of how the input was
//! written), which is what makes `migrate` idempotent, and it reads back
//! through [`crate::syntax::yaml`] to the same values:
//!
//! - two-space indentation, block mappings, `- ` sequences; a list of short
//!   single-line scalars is written in flow style (`deps: [a, b]`) when the
//!   line stays under [`MAX_WIDTH`] columns;
//! - a string is plain only when that is unambiguous (it cannot be read as
//!   null, a bool or a number, and has no indicator characters); otherwise it
//!   is double-quoted, single-quoted, or — when it has several lines — a
//!   literal block (`|`, `|-`, `|+`); strings a block cannot hold exactly
//!   (a first line starting with a space, lines of only spaces, control
//!   characters) are double-quoted with escapes.

use super::value::Yaml;
use crate::syntax::node::{Scalar, ScalarStyle, ScalarValue};

/// Flow sequences longer than this stay in block style.
pub const MAX_WIDTH: usize = 100;

/// Emits a document (no `---` header), ending with a newline.
pub fn emit(doc: &Yaml) -> String {
    let mut out = String::new();
    match doc {
        Yaml::Map(entries) if !entries.is_empty() => emit_map(&mut out, entries, 0, false),
        Yaml::Seq(items) if !items.is_empty() => emit_seq(&mut out, items, 0),
        other => {
            emit_scalar_value(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

/// Entries at `indent`; with `continues_line` the first key follows a `- `
/// already written.
fn emit_map(out: &mut String, entries: &[(String, Yaml)], indent: usize, continues_line: bool) {
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 || !continues_line {
            push_indent(out, indent);
        }
        out.push_str(&inline_string(key));
        out.push(':');
        match value {
            Yaml::Map(m) if !m.is_empty() => {
                out.push('\n');
                emit_map(out, m, indent + 2, false);
            }
            Yaml::Seq(items) if !items.is_empty() => match flow_seq(items, indent + key.len() + 2) {
                Some(flow) => {
                    out.push(' ');
                    out.push_str(&flow);
                    out.push('\n');
                }
                None => {
                    out.push('\n');
                    emit_seq(out, items, indent + 2);
                }
            },
            scalar => {
                out.push(' ');
                emit_scalar_value(out, scalar, indent + 2);
                out.push('\n');
            }
        }
    }
}

fn emit_seq(out: &mut String, items: &[Yaml], indent: usize) {
    for item in items {
        push_indent(out, indent);
        out.push_str("- ");
        match item {
            Yaml::Map(m) if !m.is_empty() => emit_map(out, m, indent + 2, true),
            Yaml::Seq(inner) if !inner.is_empty() => match flow_seq(inner, indent + 2) {
                Some(flow) => {
                    out.push_str(&flow);
                    out.push('\n');
                }
                None => {
                    // `- ` then a nested list on the next lines.
                    out.pop();
                    out.push('\n');
                    emit_seq(out, inner, indent + 2);
                }
            },
            scalar => {
                emit_scalar_value(out, scalar, indent + 2);
                out.push('\n');
            }
        }
    }
}

/// A scalar (or an empty collection) after `key: ` or `- `; block scalars
/// put their lines at `content_indent`. No final newline.
fn emit_scalar_value(out: &mut String, value: &Yaml, content_indent: usize) {
    match value {
        Yaml::Raw(r) => out.push_str(r),
        Yaml::Seq(_) => out.push_str("[]"),
        Yaml::Map(_) => out.push_str("{}"),
        Yaml::Str(s) => match block_literal(s) {
            Some((header, lines)) => {
                out.push_str(&header);
                for line in lines {
                    out.push('\n');
                    if !line.is_empty() {
                        push_indent(out, content_indent);
                        out.push_str(line);
                    }
                }
            }
            None => out.push_str(&inline_string(s)),
        },
    }
}

/// `[a, b]` when every item is a single-line scalar and the line fits.
fn flow_seq(items: &[Yaml], column: usize) -> Option<String> {
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Yaml::Raw(r) => parts.push(r.clone()),
            Yaml::Str(s) if !s.contains('\n') => parts.push(inline_string(s)),
            _ => return None,
        }
    }
    let flow = format!("[{}]", parts.join(", "));
    (column + flow.chars().count() <= MAX_WIDTH).then_some(flow)
}

fn push_indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A string on one line: plain when safe, else quoted.
pub fn inline_string(s: &str) -> String {
    if is_plain_safe(s) {
        return s.to_owned();
    }
    let needs_escape = s.chars().any(needs_escape);
    if !needs_escape && !s.contains(['"', '\\']) {
        return format!("\"{s}\"");
    }
    if !needs_escape {
        return format!("'{}'", s.replace('\'', "''"));
    }
    double_quoted(s)
}

/// A double-quoted string with every character that needs it escaped.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if needs_escape(c) => {
                let n = c as u32;
                if n <= 0xff {
                    out.push_str(&format!("\\x{n:02X}"));
                } else if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04X}"));
                } else {
                    out.push_str(&format!("\\U{n:08X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters that must be escaped (so only a double-quoted string holds
/// them): outside YAML's printable set, line breaks, tabs and the
/// characters some readers take as line breaks or byte-order marks.
fn needs_escape(c: char) -> bool {
    let printable =
        matches!(c, ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}') || c >= '\u{10000}';
    !printable || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// Plain scalars: no leading indicator, no `: ` or ` #`, no flow
/// characters, no surrounding spaces, and read back as this same string by
/// YAML 1.2 (and by YAML 1.1 readers: `yes`/`no`/`on`/`off` are quoted).
fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    if "-?:,[]{}#&*!|>'\"%@`<=~ ".contains(first) || s.starts_with("...") {
        return false;
    }
    if s.ends_with([' ', ':']) || s.contains(": ") || s.contains(" #") || s.contains("<<") {
        return false;
    }
    if s.chars().any(|c| needs_escape(c) || matches!(c, ',' | '[' | ']' | '{' | '}' | '#')) {
        return false;
    }
    if matches!(s.to_ascii_lowercase().as_str(), "yes" | "no" | "on" | "off" | "y" | "n") {
        return false;
    }
    let scalar = Scalar { value: s.to_owned(), style: ScalarStyle::Plain };
    matches!(scalar.resolve(), ScalarValue::String(_))
}

/// A literal block (`|` header and its lines, unindented) for a multi-line
/// string it can hold exactly.
fn block_literal(s: &str) -> Option<(String, Vec<&str>)> {
    if !s.contains('\n') || s.chars().any(|c| c != '\n' && needs_escape(c)) {
        return None;
    }
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    let lines: Vec<&str> = body.split('\n').collect();
    // A first content line starting with a space would set the indentation;
    // lines of only spaces would lose their spaces.
    let first = lines.iter().find(|l| !l.is_empty())?;
    if first.starts_with(' ') || lines.iter().any(|l| !l.is_empty() && l.trim_matches(' ').is_empty()) {
        return None;
    }
    let chomp = match trailing {
        0 => "|-",
        1 => "|",
        _ => "|+",
    };
    let mut all = lines;
    // With keep chomping the extra line breaks are written as empty lines.
    all.extend(std::iter::repeat_n("", trailing.saturating_sub(1)));
    Some((chomp.to_owned(), all))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use crate::syntax::yaml;

    fn round_trip(doc: &Yaml) -> String {
        let text = emit(doc);
        let parsed = yaml::parse(&SourceFile::new("t.yaml", text.clone()), &crate::source::Limits::default());
        assert!(parsed.diagnostics.is_empty(), "{text}\n{:?}", parsed.diagnostics);
        let root = parsed.root.expect("a document");
        assert_eq!(Yaml::from_node(&root).to_json(), doc.to_json(), "{text}");
        assert_eq!(emit(&Yaml::from_node(&root)), text, "emitting is stable");
        text
    }

    fn map(entries: &[(&str, Yaml)]) -> Yaml {
        Yaml::Map(entries.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect())
    }

    fn s(v: &str) -> Yaml {
        Yaml::Str(v.to_owned())
    }

    #[test]
    fn layout_of_a_workflow() {
        let doc = map(&[
            ("id", s("review")),
            ("version", Yaml::Raw("4".into())),
            (
                "steps",
                Yaml::Seq(vec![map(&[
                    ("id", s("a")),
                    ("deps", Yaml::Seq(vec![s("b"), s("1")])),
                    (
                        "input_template",
                        map(&[("text", s("Hi <<params.x>>\n  more\n")), ("m", Yaml::Map(vec![]))]),
                    ),
                ])]),
            ),
        ]);
        let text = round_trip(&doc);
        assert_eq!(
            text,
            "id: review\nversion: 4\nsteps:\n  - id: a\n    deps: [b, \"1\"]\n    input_template:\n      text: |\n        Hi <<params.x>>\n          more\n      m: {}\n"
        );
    }

    #[test]
    fn strings_that_must_be_quoted() {
        for v in [
            "",
            "true",
            "null",
            "~",
            "12",
            "1.5",
            "0x1F",
            "yes",
            "- a",
            "a: b",
            "a #b",
            "#x",
            "'q'",
            "\"q\"",
            "<<x>>",
            "a, b",
            "[x]",
            " lead",
            "trail ",
            "tab\there",
            "é\u{85}",
            "\u{7f}",
            "...",
            "---",
            "x:",
            "@at",
            "%p",
            "`b`",
            "\r\n",
            "n",
            "Off",
        ] {
            let text = round_trip(&map(&[("k", s(v)), (v, s("key"))]));
            assert!(!text.starts_with(&format!("k: {v}\n")), "{v:?} stayed plain: {text}");
        }
        for v in ["back\\slash \"q\"", "it's", "a-b", "x.y_z", "Fix it (now)", "✅ done"] {
            assert_eq!(round_trip(&map(&[("k", s(v))])), format!("k: {v}\n"), "{v:?} can be plain");
        }
    }

    #[test]
    fn multi_line_strings() {
        for v in [
            "a\nb",
            "a\nb\n",
            "a\nb\n\n\n",
            "\n\nx\n",
            " lead\nx",
            "x\n  \ny",
            "x\n\ty",
            "x\n# not a comment\n",
            "x\r\ny",
            "\n",
            "\n\n",
            "- a\n- b\n",
            "a\n---\nb",
            "ends with space \nx",
        ] {
            round_trip(&map(&[("k", s(v))]));
            round_trip(&Yaml::Seq(vec![s(v), map(&[("k", s(v))])]));
        }
        assert_eq!(emit(&map(&[("k", s("a\nb"))])), "k: |-\n  a\n  b\n");
        assert_eq!(emit(&map(&[("k", s("a\n\nb\n\n"))])), "k: |+\n  a\n\n  b\n\n");
    }

    #[test]
    fn nested_collections() {
        let doc = Yaml::Seq(vec![
            Yaml::Seq(vec![s("a"), Yaml::Seq(vec![])]),
            Yaml::Seq(vec![map(&[("x", Yaml::Raw("1".into()))])]),
            Yaml::Map(vec![]),
            Yaml::Raw("null".into()),
        ]);
        round_trip(&doc);
        let long = Yaml::Seq((0..40).map(|i| s(&format!("item{i}"))).collect());
        let text = round_trip(&map(&[("deps", long)]));
        assert!(text.starts_with("deps:\n  - item0\n"), "{text}");
    }

    proptest::proptest! {
        #[test]
        fn any_string_round_trips(v in "\\PC{0,12}|[ -~\n\t]{0,20}", k in "[ -~é\n]{0,8}") {
            proptest::prop_assume!(k != "a");
            round_trip(&map(&[("a", s(&v)), (&k, Yaml::Seq(vec![s(&v), s(&k)]))]));
        }
    }
}
