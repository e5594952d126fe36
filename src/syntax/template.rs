//! `<<expr>>` interpolation inside strings, with `\<<` as a literal escape.
//!
//! `{{ … }}` is not interpolation: it stays literal text (checks flag it).

use crate::source::Span;
use crate::syntax::ast::{Segment, SyntaxError, Template, TextSegment};
use crate::syntax::expr::parse_expr_at;

/// Splits a string into text and `<<expr>>` segments. Never fails: a broken
/// segment becomes literal text and its error is returned beside the template.
///
/// An interpolation ends at the first `>>` outside the expression's string
/// literals, so `<<'a>>b'>>` holds the string `'a>>b'`. Expression spans are
/// offsets into `text`.
pub fn parse_template(text: &str) -> (Template, Vec<SyntaxError>) {
    let bytes = text.as_bytes();
    let mut segments = Vec::new();
    let mut errors = Vec::new();
    // Literal text seen but not yet pushed, and where the unread text begins.
    // `pending` is `text[start..copied]` unless an escape was unescaped in it:
    // only then is it kept (a text segment is otherwise a range of `text`).
    let mut pending = String::new();
    let mut start = 0;
    let mut escaped = false;
    let mut copied = 0;
    // After an unclosed `<<`, no later `<<` can close either.
    let mut closable = true;
    let mut i = 0;
    while i < bytes.len() {
        // Only `<` and `\\` can start what is looked for: skip to the next.
        match bytes[i..].iter().position(|&b| b == b'<' || b == b'\\') {
            Some(k) => i += k,
            None => break,
        }
        if bytes[i..].starts_with(b"\\<<") {
            pending.push_str(&text[copied..i]);
            pending.push_str("<<");
            escaped = true;
            i += 3;
            copied = i;
            continue;
        }
        if !(closable && bytes[i..].starts_with(b"<<")) {
            i += 1;
            continue;
        }
        let Some(close) = find_close(text, i + 2) else {
            errors.push(SyntaxError {
                message: "unclosed `<<`".to_string(),
                span: Span::new(i, i + 2),
                help: Some("close it with `>>`, or write `\\<<` for a literal `<<`".to_string()),
            });
            closable = false;
            i += 2;
            continue;
        };
        let span = Span::new(i, close + 2);
        let inner = &text[i + 2..close];
        let parsed = if inner.trim().is_empty() {
            Err(SyntaxError { message: "empty interpolation".to_string(), span, help: None })
        } else {
            parse_expr_at(inner, i + 2)
        };
        pending.push_str(&text[copied..i]);
        match parsed {
            Ok(expr) => {
                push_text(&mut segments, Span::new(start, i), &pending, escaped);
                pending.clear();
                escaped = false;
                start = close + 2;
                segments.push(Segment::Interp { expr, span });
            }
            Err(error) => {
                errors.push(error);
                pending.push_str(&text[span.range()]);
            }
        }
        i = close + 2;
        copied = i;
    }
    // A text that is all literal and unescaped keeps no segment: the
    // template is its text (most `input_template` values are such words).
    if segments.is_empty() && start == 0 && !escaped {
        return (Template { segments }, errors);
    }
    pending.push_str(&text[copied..]);
    push_text(&mut segments, Span::new(start, text.len()), &pending, escaped);
    // Templates live as long as the workflow: no slack.
    segments.shrink_to_fit();
    (Template { segments }, errors)
}

/// The byte offset of the first `pair` (two ASCII bytes) in `text`: what
/// `text.find` of the two characters answers, without setting up a
/// substring searcher, which costs more than scanning a workflow's short
/// strings.
pub fn find_pair(text: &str, pair: [u8; 2]) -> Option<usize> {
    debug_assert!(pair.is_ascii());
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(k) = bytes[from..].iter().position(|&b| b == pair[0]) {
        let at = from + k;
        if bytes.get(at + 1) == Some(&pair[1]) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Pushes the literal text `pending`, which is `span` of the template's text
/// with its escapes unescaped when `escaped`; nothing when it is empty.
fn push_text(segments: &mut Vec<Segment>, span: Span, pending: &str, escaped: bool) {
    if !pending.is_empty() {
        // An exact-size copy only when the text is not the range itself.
        let unescaped = escaped.then(|| pending.into());
        segments.push(Segment::Text(TextSegment::new(span, unescaped)));
    }
}

/// The offset of the `>>` that closes an interpolation whose expression starts
/// at `from`, skipping string literals. When a literal never closes, the first
/// `>>` is taken so that the expression parser can report the literal.
fn find_close(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut quote = None;
    let mut j = from;
    while j < bytes.len() {
        match (quote, bytes[j]) {
            (Some(_), b'\\') => j += 1,
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b @ (b'\'' | b'"')) => quote = Some(b),
            (None, _) if bytes[j..].starts_with(b">>") => return Some(j),
            (None, _) => {}
        }
        j += 1;
    }
    find_pair(&text[from..], *b">>").map(|k| from + k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::ExprKind;

    /// Renders segments as `"text"` and `<<span>>` pieces (a template with
    /// no segment as its whole text), and errors as `message @span`.
    fn check(text: &str, expect: &str) {
        let (template, errors) = parse_template(text);
        if template.segments.is_empty() && !text.is_empty() {
            let mut out = vec![format!("{text:?}")];
            out.extend(errors.iter().map(|e| format!("error: {} @{}", e.message, e.span)));
            assert_eq!(out.join(" "), expect, "template {text:?}");
            return;
        }
        let mut out: Vec<String> = template
            .segments
            .iter()
            .map(|s| match s {
                Segment::Text(t) => format!("{:?}", t.as_str(text)),
                Segment::Interp { expr, span } => {
                    format!("<<{}>>@{span}", &text[expr.span.range()])
                }
            })
            .collect();
        out.extend(errors.iter().map(|e| format!("error: {} @{}", e.message, e.span)));
        assert_eq!(out.join(" "), expect, "template {text:?}");
    }

    #[test]
    fn find_pair_is_find_of_the_two_characters() {
        for text in ["", "<", "<<", "a<b<<c", "<<<", "x\\<<y>>", "é<<ü>>", "<a<", ">>>", "{{ x }}", "{ {{"]
        {
            for pair in [*b"<<", *b">>", *b"{{", *b"}}"] {
                let as_str = std::str::from_utf8(&pair).unwrap();
                assert_eq!(find_pair(text, pair), text.find(as_str), "{text:?} {as_str}");
            }
        }
    }

    #[test]
    fn plain_text_is_one_segment() {
        check("hello", r#""hello""#);
        check("", "");
        check("{{ not interpolation }}", r#""{{ not interpolation }}""#);
        check("a < b >> c", r#""a < b >> c""#);
    }

    #[test]
    fn literal_text_keeps_no_segment() {
        for text in ["hello", "", "a << b", "x<< >>y"] {
            assert!(parse_template(text).0.segments.is_empty(), "{text:?}");
        }
        // An escape makes the text differ from the source: it is kept.
        let (template, _) = parse_template(r"a \<<b");
        assert_eq!(template.segments.len(), 1);
        assert_eq!(
            template.segments[0],
            Segment::Text(TextSegment::new(Span::new(0, 6), Some("a <<b".into())))
        );
    }

    #[test]
    fn single_expression() {
        let (template, errors) = parse_template("<<params.mr_iid>>");
        assert!(errors.is_empty());
        let expr = template.as_single_expr().expect("one interpolation");
        assert!(matches!(expr.kind, ExprKind::Field { .. }));
        assert_eq!(expr.span, Span::new(2, 15));
        check("<< x >>", "<<x>>@0..7");
    }

    #[test]
    fn mixed_text_and_expressions() {
        check(
            "review <<change.new_path>> (#<<loop.index>>)",
            r#""review " <<change.new_path>>@7..26 " (#" <<loop.index>>@29..43 ")""#,
        );
        check("<<a>><<b>>", "<<a>>@0..5 <<b>>@5..10");
        check("<<a>>>", r#"<<a>>@0..5 ">""#);
    }

    #[test]
    fn escaped_open_is_literal_and_merges() {
        check(r"a \<<b>> c", r#""a <<b>> c""#);
        check(r"\<<<<x>>", r#""<<" <<x>>@3..8"#);
        check(r"back\slash", r#""back\\slash""#);
    }

    #[test]
    fn closing_inside_strings_is_skipped() {
        check("<<'a>>b'>>", "<<'a>>b'>>@0..10");
        check(r#"<<"x\">>" + 'y'>>!"#, r#"<<"x\">>" + 'y'>>@0..17 "!""#);
        let (template, _) = parse_template("<<'a>>b'>>");
        let expr = template.as_single_expr().unwrap();
        assert_eq!(expr.kind, ExprKind::Str("a>>b".to_string()));
    }

    #[test]
    fn unterminated_string_reports_the_string() {
        check("<<'abc>> tail", r#""<<'abc>> tail" error: unterminated string @2..6"#);
    }

    #[test]
    fn unclosed_keeps_the_rest_as_text() {
        check("a << b", r#""a << b" error: unclosed `<<` @2..4"#);
        check(r"<<x \<< y << z", r#""<<x << y << z" error: unclosed `<<` @0..2"#);
        let (_, errors) = parse_template("<<");
        assert_eq!(errors[0].help.as_deref(), Some("close it with `>>`, or write `\\<<` for a literal `<<`"));
    }

    #[test]
    fn empty_and_broken_interpolations_stay_text() {
        check("x<< >>y", r#""x<< >>y" error: empty interpolation @1..6"#);
        check("x<<>>", r#""x<<>>" error: empty interpolation @1..5"#);
        check("<<a = b>>!", r#""<<a = b>>!" error: unexpected `=` @4..5"#);
        check("<<{{x}}>>", r#""<<{{x}}>>" error: unexpected `{{` @2..4"#);
    }

    #[test]
    fn multibyte_text_keeps_byte_offsets() {
        check("é <<'ü'>> ß", r#""é " <<'ü'>>@3..11 " ß""#);
        check("日本<<x>>語", r#""日本" <<x>>@6..11 "語""#);
        check("ü<<ä>>", r#""ü<<ä>>" error: expected an expression, found `ä` @4..6"#);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(text in r#"([a-z '"\\<>{}.?:!=é]|<<|>>|\\<<){0,30}|\PC{0,20}"#) {
            let (template, errors) = parse_template(&text);
            for segment in &template.segments {
                if let Segment::Interp { span, .. } = segment {
                    let source = &text[span.range()];
                    proptest::prop_assert!(source.starts_with("<<") && source.ends_with(">>"));
                }
            }
            for e in errors {
                proptest::prop_assert!(e.span.end as usize <= text.len() && text.is_char_boundary(e.span.start as usize));
            }
        }
    }
}
