//! Indentation that libyaml (the original system's reader) accepted and
//! YAML 1.2 does not, repaired without changing any value.
//!
//! Two forms, both seen in the original workflows:
//! - a continuation line of a quoted string not indented more than its key
//!   (`text: 'abc` … `'` at column 1);
//! - a `]` or `}` closing a flow collection at its key's indentation.
//!
//! Leading spaces of a quoted string's continuation lines and the
//! indentation inside `[…]` / `{…}` are not part of any value, so indenting
//! those lines changes the file's layout only. Anything else is left for
//! the reader to report.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::Limits;
use crate::source::SourceFile;
use crate::syntax::yaml;

/// At most this many lines are re-indented in one file.
const MAX_REPAIRS: usize = 256;

/// The repaired text and the 1-based lines it re-indented, when the only
/// syntax errors were the two forms above. `None` otherwise.
pub fn reindent(src: &SourceFile, first: &[Diagnostic], limits: &Limits) -> Option<(String, Vec<usize>)> {
    let mut text = src.text.clone();
    let mut diags = first.to_vec();
    let mut lines = Vec::new();
    loop {
        let [d] = diags.as_slice() else { return None };
        if d.code != Code::YamlSyntax || lines.len() >= MAX_REPAIRS {
            return None;
        }
        let at = d.span.start as usize;
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let indent = at - line_start;
        // The error must be at the first character of its line.
        if !text[line_start..at].bytes().all(|b| b == b' ') {
            return None;
        }
        let quoted_line =
            d.message.contains("this line of a quoted string is not indented more than its key");
        let closing_bracket =
            d.message == "invalid YAML: invalid indentation" && text[at..].starts_with([']', '}']);
        if !(quoted_line || closing_bracket) {
            return None;
        }
        // Two more spaces than the line the construct's key is on.
        let key_line = match d.labels.first() {
            Some(l) => l.span.start as usize,
            None => opening_bracket(&text, at)?,
        };
        let key_start = text[..key_line].rfind('\n').map_or(0, |i| i + 1);
        let key_indent = text[key_start..].bytes().take_while(|b| *b == b' ').count();
        let wanted = key_indent + 2;
        if wanted <= indent {
            return None;
        }
        text.insert_str(line_start, &" ".repeat(wanted - indent));
        // Only spaces are added: line numbers are the original file's.
        lines.push(text[..line_start].matches('\n').count() + 1);
        diags = yaml::parse(&SourceFile::new(src.path.clone(), text.clone()), limits).diagnostics;
        if diags.is_empty() {
            return Some((text, lines));
        }
    }
}

/// The `[` or `{` that the bracket at `at` closes (brackets inside quotes
/// are not counted; good enough for a line that only closes a list).
fn opening_bracket(text: &str, at: usize) -> Option<usize> {
    let close = text[at..].chars().next()?;
    let open = if close == ']' { '[' } else { '{' };
    let mut depth = 0usize;
    for (i, c) in text[..at].char_indices().rev() {
        if c == close {
            depth += 1;
        } else if c == open {
            if depth == 0 {
                return Some(i);
            }
            depth -= 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repair(text: &str) -> Option<(String, Vec<usize>)> {
        let src = SourceFile::new("t.yaml", text);
        let d = yaml::parse(&src, &Limits::default()).diagnostics;
        reindent(&src, &d, &Limits::default())
    }

    #[test]
    fn the_two_libyaml_forms_are_reindented_without_changing_values() {
        let text = "s:\n  - id: a\n    text: 'x\n\n'\n    deps: [\n      \"a\",\n    ]\n    n: \"p\n  q\"\n";
        let (fixed, lines) = repair(text).expect("repaired");
        assert_eq!(lines, [5, 8, 10]);
        assert_eq!(
            fixed,
            "s:\n  - id: a\n    text: 'x\n\n      '\n    deps: [\n      \"a\",\n      ]\n    n: \"p\n      q\"\n"
        );
        // What libyaml read: the values are unchanged.
        let root = yaml::parse(&SourceFile::new("f.yaml", fixed), &Limits::default()).root.unwrap();
        let step = &root.get("s").unwrap().as_seq().unwrap()[0];
        assert_eq!(step.get("text").unwrap().as_str(), Some("x\n"));
        assert_eq!(step.get("n").unwrap().as_str(), Some("p q"));
    }

    #[test]
    fn other_errors_are_left_alone() {
        for text in ["a:\n  b: 1\n c: 2\n", "a: \"\\(\"\n", "a: [\n", "k:\n  'a\nb'\n"] {
            assert_eq!(repair(text), None, "{text:?}");
        }
    }
}
