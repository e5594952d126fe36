//! The hand parses of the two commonest expressions, a plain path
//! (`params.repo`) and a path with a string for when it is missing
//! (`mr.title ?? ''`): exactly the AST and spans the grammar gives, without
//! pest; anything else is `None`, for the grammar (`expr.rs`, whose tests
//! compare both).

use crate::source::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind};

/// Plain paths with more `.name` fields than this go through pest (which
/// also reports [`MAX_AST_DEPTH`]).
pub(super) const PLAIN_PATH_MAX_FIELDS: usize = 64;

/// The fast path for the most common expression, a plain path: a variable
/// followed by `.name` fields (`params.repo`, `c41.title`, `entry`), with
/// blanks allowed at both ends and around each `.`. It builds exactly the AST
/// and spans that the grammar and [`build_expr`] would, without pest (which
/// costs a few microseconds per expression), and returns `None` for anything
/// else, which then goes through the grammar: the grammar stays the one
/// source of syntax truth, and a test compares both on generated paths.
///
/// As in the grammar, the variable must not be a keyword (`null`, `true`,
/// `false`, `in`), a field name may be one (`a.in`), and both start with a
/// letter or `_`.
pub(super) fn parse_plain_path(text: &str, base: usize) -> Option<Expr> {
    let (expr, end) = plain_path_prefix(text, base)?;
    (end == text.len()).then_some(expr)
}

/// The plain path at the start of `text` (after blanks) and where the
/// blanks after it end; `None` when `text` does not start with one, or it
/// has more than [`PLAIN_PATH_MAX_FIELDS`] fields.
fn plain_path_prefix(text: &str, base: usize) -> Option<(Expr, usize)> {
    let bytes = text.as_bytes();
    // The end of the word starting at `i`.
    let word = |i: usize| {
        if !bytes.get(i).is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_') {
            return None;
        }
        let len = bytes[i..].iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'));
        Some(len.map_or(bytes.len(), |len| i + len))
    };
    let span = |start: usize, end: usize| Span::new(base + start, base + end);
    let start = skip_blanks(bytes, 0);
    let end = word(start)?;
    let root = &text[start..end];
    if matches!(root, "null" | "true" | "false" | "in") {
        return None;
    }
    let mut expr = Expr { kind: ExprKind::Var(root.into()), span: span(start, end) };
    let mut i = skip_blanks(bytes, end);
    let mut fields = 0;
    while bytes.get(i) == Some(&b'.') {
        fields += 1;
        if fields > PLAIN_PATH_MAX_FIELDS {
            return None;
        }
        let name_start = skip_blanks(bytes, i + 1);
        let name_end = word(name_start)?;
        let kind = ExprKind::Field {
            base: Box::new(expr),
            name: text[name_start..name_end].into(),
            name_span: span(name_start, name_end),
            optional: false,
        };
        expr = Expr { kind, span: span(start, name_end) };
        i = skip_blanks(bytes, name_end);
    }
    Some((expr, i))
}

/// The first byte at or after `i` that is not a blank.
fn skip_blanks(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// The fast path for the next most common expression, a plain path with a
/// string literal for when it is missing: `mr_data.title ?? ''` (a string
/// without escapes, in either quotes). Like [`parse_plain_path`], exactly
/// the AST and spans the grammar gives, or `None` for pest.
pub(super) fn parse_path_or_string(text: &str, base: usize) -> Option<Expr> {
    let bytes = text.as_bytes();
    let (lhs, op) = plain_path_prefix(text, base)?;
    if !text[op..].starts_with("??") {
        return None;
    }
    let open = skip_blanks(bytes, op + 2);
    let quote = *bytes.get(open).filter(|q| matches!(q, b'\'' | b'"'))?;
    let len = bytes[open + 1..].iter().position(|&b| b == quote || b == b'\\')?;
    let close = open + 1 + len;
    if bytes[close] != quote || skip_blanks(bytes, close + 1) != text.len() {
        return None;
    }
    let rhs = Expr {
        kind: ExprKind::Str(text[open + 1..close].to_owned()),
        span: Span::new(base + open, base + close + 1),
    };
    let span = Span { start: lhs.span.start, end: rhs.span.end };
    let op_span = Span::new(base + op, base + op + 2);
    let kind = ExprKind::Binary { op: BinOp::Coalesce, op_span, lhs: Box::new(lhs), rhs: Box::new(rhs) };
    Some(Expr { kind, span })
}
