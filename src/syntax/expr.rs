//! The expression parser (pest grammar in `grammar/expr.pest`) → [`Expr`].
//!
//! Parsing runs in three passes: a small lexer rejects broken string literals
//! and measures nesting depth (so that neither pest nor the precedence climb
//! can exhaust the stack), pest checks the syntax, and a Pratt parser applies
//! precedence while building the AST. Pest's errors are rewritten into short
//! messages with the lexer's tokens. The two most common shapes, a plain
//! path (`params.repo`) and a path with a string for when it is missing
//! (`mr.title ?? ''`), skip all three: a hand parse builds the same AST.

use std::sync::LazyLock;

use pest::Parser;
use pest::error::{Error as PestError, ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};

use crate::source::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, SyntaxError, UnaryOp};

/// The deepest nesting of brackets, parentheses, ternaries and unary prefixes
/// that an expression may have.
pub const MAX_NESTING: usize = 64;

/// The deepest AST an expression may produce; this bounds long operator and
/// accessor chains (`a + a + …`, `a.b.c…`), which nest without brackets.
pub const MAX_AST_DEPTH: usize = 256;

/// The longest expression parsed, in bytes. Parsing costs far more memory
/// than the text (pest queues two tokens per rule entered, a dozen rules
/// per literal: about 1 KB per element of an array literal), so the length
/// is bounded before any parsing: 64 KiB of expression is far beyond any
/// real condition or loop, and keeps one parse under a few tens of MB.
pub const MAX_EXPR_BYTES: usize = 64 * 1024;

/// Parses a whole expression. Spans are offsets into `text` plus `base`.
pub fn parse_expr_at(text: &str, base: usize) -> Result<Expr, SyntaxError> {
    if text.trim().is_empty() {
        return Err(error("empty expression", Span::new(base, base + text.len()), None));
    }
    if text.len() > MAX_EXPR_BYTES {
        return Err(error(
            format!("expression is {} bytes long, over the {MAX_EXPR_BYTES} byte limit", text.len()),
            Span::new(base, base + text.len()),
            Some("pass large data as a param or a capture and read it by name"),
        ));
    }
    if let Some(expr) = parse_plain_path(text, base).or_else(|| parse_path_or_string(text, base)) {
        return Ok(expr);
    }
    parse_with_pest(text, base)
}

pub fn parse_expr(text: &str) -> Result<Expr, SyntaxError> {
    parse_expr_at(text, 0)
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn an_expression_over_the_byte_limit_is_refused_before_parsing() {
        let n = MAX_EXPR_BYTES / 4 + 1;
        let text = format!("[{}]", vec!["[1]"; n].join(","));
        let e = parse_expr_at(&text, 10).unwrap_err();
        assert!(e.message.contains("over the 65536 byte limit"), "{e:?}");
        assert_eq!(e.span, Span::new(10, 10 + text.len()));
        assert!(e.help.unwrap().contains("param"));
        // Just under the limit still parses.
        let ok = format!("[{}]", vec!["1"; MAX_EXPR_BYTES / 2 - 1].join(","));
        assert!(ok.len() <= MAX_EXPR_BYTES);
        assert!(parse_expr(&ok).is_ok());
    }
}

// The hand parses of the two commonest shapes, which skip pest.
#[path = "expr_fast.rs"]
mod fast;
#[cfg(test)]
use fast::PLAIN_PATH_MAX_FIELDS;
use fast::{parse_path_or_string, parse_plain_path};

/// Parses a non-empty expression with the grammar.
fn parse_with_pest(text: &str, base: usize) -> Result<Expr, SyntaxError> {
    let shift = |e: SyntaxError| SyntaxError { span: e.span.offset(base), ..e };
    let tokens = lex(text).map_err(shift)?;
    check_nesting(&tokens).map_err(shift)?;
    let mut pairs =
        ExprParser::parse(Rule::main, text).map_err(|e| shift(convert_error(&e, text, &tokens)))?;
    let expr = pairs.next().expect("`main` starts with `expr`");
    Ok(build_expr(expr, base)?.expr)
}

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/expr.pest"]
struct ExprParser;

fn error(message: impl Into<String>, span: Span, help: Option<&str>) -> SyntaxError {
    SyntaxError { message: message.into(), span, help: help.map(str::to_string) }
}

// ---------------------------------------------------------------------------
// Lexer: string checks, nesting depth and tokens for error messages.

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    start: usize,
}

impl Token<'_> {
    fn end(&self) -> usize {
        self.start + self.text.len()
    }

    fn span(&self) -> Span {
        Span::new(self.start, self.end())
    }

    /// Punctuation or an unknown character, as opposed to a word, number or string.
    fn is_punct(&self) -> bool {
        !self.text.starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '\'' | '"'))
    }

    /// Whether this token can end an operand, so that a `-` after it is binary.
    fn ends_operand(&self) -> bool {
        !self.is_punct() || matches!(self.text, ")" | "]")
    }
}

/// Punctuation, longest first. The mistakes (`===`, `{{`, `=` …) are tokens
/// too, so that errors can name them whole.
const PUNCTS: &[&str] = &["===", "!==", "{{", "}}", "??", "?.", "||", "&&", "==", "!=", "<=", ">="];

fn lex(text: &str) -> Result<Vec<Token<'_>>, SyntaxError> {
    let bytes = text.as_bytes();
    let word_byte = |i: usize| i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_');
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let start = i;
        if matches!(c, ' ' | '\t' | '\r' | '\n') {
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            i = scan_string(text, i)?;
        } else if c.is_ascii_digit() {
            // Greedy, so that `1.2.3` and `12abc` are reported whole.
            while word_byte(i)
                || (bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            while word_byte(i) {
                i += 1;
            }
        } else {
            let punct = PUNCTS.iter().find(|p| text[i..].starts_with(**p));
            i += punct.map_or(c.len_utf8(), |p| p.len());
        }
        tokens.push(Token { text: &text[start..i], start });
    }
    Ok(tokens)
}

/// Returns the end of the string literal starting at `start`, or an error for
/// an unterminated literal or an unknown escape.
fn scan_string(text: &str, start: usize) -> Result<usize, SyntaxError> {
    let quote = text.as_bytes()[start] as char;
    let mut chars = text[start + 1..].char_indices();
    while let Some((j, c)) = chars.next() {
        if c == quote {
            return Ok(start + 1 + j + 1);
        }
        if c != '\\' {
            continue;
        }
        match chars.next() {
            Some((_, '\'' | '"' | '\\' | 'n' | 't')) => {}
            Some((k, e)) => {
                let span = Span::new(start + 1 + j, start + 1 + k + e.len_utf8());
                let help = "the escapes are `\\'`, `\\\"`, `\\\\`, `\\n` and `\\t`";
                return Err(error(format!("unknown escape `\\{e}`"), span, Some(help)));
            }
            None => break,
        }
    }
    let help = format!("close it with `{quote}`");
    Err(error("unterminated string", Span::new(start, text.len()), Some(&help)))
}

/// One level of nesting while measuring depth.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    Bracket,
    /// Between `?` and `:`.
    Then,
    /// After a ternary's `:`, up to the end of the enclosing level.
    Else,
}

/// Rejects expressions nested deeper than [`MAX_NESTING`]. Unary prefixes
/// count until the next operator of their level, since they bind tighter
/// than any operator.
fn check_nesting(tokens: &[Token<'_>]) -> Result<(), SyntaxError> {
    let mut frames: Vec<(Frame, usize)> = vec![(Frame::Bracket, 0)];
    let mut prev: Option<&Token<'_>> = None;
    for tok in tokens {
        let pop_else = |frames: &mut Vec<(Frame, usize)>| {
            while frames.len() > 1 && frames.last().is_some_and(|f| f.0 == Frame::Else) {
                frames.pop();
            }
        };
        match tok.text {
            "(" | "[" => frames.push((Frame::Bracket, 0)),
            ")" | "]" => {
                pop_else(&mut frames);
                if frames.len() > 1 {
                    frames.pop();
                }
            }
            "?" => {
                frames.last_mut().expect("root frame").1 = 0;
                frames.push((Frame::Then, 0));
            }
            ":" => {
                pop_else(&mut frames);
                if let Some(top) = frames.last_mut().filter(|f| f.0 == Frame::Then) {
                    *top = (Frame::Else, 0);
                }
            }
            "," => {
                pop_else(&mut frames);
                frames.last_mut().expect("root frame").1 = 0;
            }
            "!" => frames.last_mut().expect("root frame").1 += 1,
            "-" if !prev.is_some_and(Token::ends_operand) => frames.last_mut().expect("root frame").1 += 1,
            "." | "?." => {}
            _ if tok.is_punct() || tok.text == "in" => frames.last_mut().expect("root frame").1 = 0,
            _ => {}
        }
        let depth = frames.len() - 1 + frames.iter().map(|f| f.1).sum::<usize>();
        if depth > MAX_NESTING {
            let message = format!("expression nested too deeply (limit {MAX_NESTING})");
            return Err(error(message, tok.span(), Some("split it into smaller expressions")));
        }
        prev = Some(tok);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Pest errors → short messages.

fn convert_error(err: &PestError<Rule>, text: &str, tokens: &[Token<'_>]) -> SyntaxError {
    let pos = match err.location {
        InputLocation::Pos(p) | InputLocation::Span((p, _)) => p,
    };
    let positives = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives.as_slice(),
        ErrorVariant::CustomError { .. } => {
            let message = format!("expression nested too deeply (limit {MAX_NESTING})");
            return error(message, Span::point(pos), None);
        }
    };
    let closers: Vec<&str> =
        [(Rule::comma, "`,`"), (Rule::rparen, "`)`"), (Rule::rbracket, "`]`"), (Rule::colon, "`:`")]
            .into_iter()
            .filter(|(rule, _)| positives.contains(rule))
            .map(|(_, name)| name)
            .collect();
    let wants_operand =
        positives.iter().any(|r| matches!(r, Rule::expr | Rule::primary | Rule::not | Rule::neg));
    let expected = if !closers.is_empty() {
        Some(closers.join(" or "))
    } else if wants_operand {
        Some("an expression".to_string())
    } else if positives.contains(&Rule::name) {
        Some("a field name".to_string())
    } else {
        None
    };
    let Some(index) = tokens.iter().position(|t| t.end() > pos) else {
        let message = match expected {
            Some(expected) => format!("expected {expected}"),
            None => "unexpected end of expression".to_string(),
        };
        return error(message, Span::point(text.len()), None);
    };
    let tok = tokens[index];
    if let Some(mistake) = mistake(tokens, index).or_else(|| method_call(text, tokens, index)) {
        return mistake;
    }
    let found = quote_token(tok.text);
    let message = match expected {
        Some(expected) => format!("expected {expected}, found {found}"),
        None => format!("unexpected {found}"),
    };
    error(message, tok.span(), None)
}

/// Recognizes common mistakes at `tokens[index]` and explains them.
fn mistake(tokens: &[Token<'_>], index: usize) -> Option<SyntaxError> {
    let tok = tokens[index];
    let unexpected =
        |t: Token<'_>, help: &str| Some(error(format!("unexpected `{}`", t.text), t.span(), Some(help)));
    match tok.text {
        "=" | "===" => return unexpected(tok, "use `==` to compare"),
        "!==" => return unexpected(tok, "use `!=` to compare"),
        "and" | "&" => return unexpected(tok, "use `&&`"),
        "or" | "|" => return unexpected(tok, "use `||`"),
        "{{" | "}}" | "{" | "}" => {
            return unexpected(
                tok,
                "`{{ … }}` is not interpolation; write the expression itself, or `<<expr>>` inside a template",
            );
        }
        _ => {}
    }
    let valid_number = |s: &str| {
        let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
        [int, frac].iter().all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    if tok.text.starts_with(|c: char| c.is_ascii_digit()) && !valid_number(tok.text) {
        return Some(error(format!("invalid number {}", quote_token(tok.text)), tok.span(), None));
    }
    // `not x`: `not` parses as a variable, and the error comes after it.
    let prev = index.checked_sub(1).map(|i| tokens[i])?;
    let before = index.checked_sub(2).map(|i| tokens[i]);
    let starts_operand = !before.is_some_and(|b| b.ends_operand() || matches!(b.text, "." | "?."));
    if prev.text == "not" && starts_operand {
        return unexpected(prev, "use `!` to negate");
    }
    None
}

/// `path.endswith('.lock')`: a method call, which this language writes as a
/// function of the value (`ends_with(path, '.lock')`). `tokens[index]` is
/// the `(` after `.name`.
fn method_call(text: &str, tokens: &[Token<'_>], index: usize) -> Option<SyntaxError> {
    let paren = tokens[index];
    let (name, dot) = (tokens.get(index.checked_sub(1)?)?, tokens.get(index.checked_sub(2)?)?);
    if paren.text != "(" || name.is_punct() || !matches!(dot.text, "." | "?.") {
        return None;
    }
    // The receiver: the path before the dot (names, dots, balanced brackets).
    let mut start = index - 2;
    let mut depth = 0usize;
    while start > 0 {
        let t = tokens[start - 1];
        match t.text {
            "]" | ")" => depth += 1,
            "[" | "(" if depth > 0 => depth -= 1,
            "." | "?." => {}
            _ if depth > 0 => {}
            _ if !t.is_punct() && !tokens[start].is_punct() => break,
            _ if !t.is_punct() => {}
            _ => break,
        }
        start -= 1;
    }
    let receiver = text.get(tokens[start].start..dot.start)?.trim();
    // The arguments, up to the matching `)` (or the end).
    let mut depth = 0usize;
    let close = tokens[index..].iter().position(|t| {
        match t.text {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0
    });
    let end = close.map_or(text.len(), |k| tokens[index + k].start);
    let args = text.get(paren.end()..end)?.trim();
    let function = match name.text {
        "endswith" | "endsWith" => "ends_with",
        "startswith" | "startsWith" => "starts_with",
        "toLowerCase" | "lowercase" | "downcase" => "lower",
        "toUpperCase" | "uppercase" | "upcase" => "upper",
        "strip" => "trim",
        "includes" | "has" => "contains",
        "length" | "size" | "count" => "len",
        other => other,
    };
    let call = if args.is_empty() {
        format!("{function}({receiver})")
    } else {
        format!("{function}({receiver}, {args})")
    };
    let message = format!("`{receiver}.{}(…)` is a method call, which expressions do not have", name.text);
    let help = format!("functions take the value first: write `{call}`");
    Some(error(message, Span::new(name.start, paren.end()), Some(&help)))
}

/// A token for a message, shortened when long.
fn quote_token(text: &str) -> String {
    match text.char_indices().nth(20) {
        Some((cut, _)) => format!("`{}…`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

// ---------------------------------------------------------------------------
// Pairs → AST.

static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    let left = |rule| Op::infix(rule, Assoc::Left);
    PrattParser::new()
        .op(Op::infix(Rule::ternary, Assoc::Right))
        .op(left(Rule::coalesce))
        .op(left(Rule::or))
        .op(left(Rule::and))
        .op(left(Rule::eq) | left(Rule::ne) | left(Rule::in_op))
        .op(left(Rule::lt) | left(Rule::le) | left(Rule::gt) | left(Rule::ge))
        .op(left(Rule::add) | left(Rule::sub))
        .op(left(Rule::mul) | left(Rule::div) | left(Rule::rem))
        .op(Op::prefix(Rule::not) | Op::prefix(Rule::neg))
        .op(Op::postfix(Rule::field)
            | Op::postfix(Rule::opt_field)
            | Op::postfix(Rule::index)
            | Op::postfix(Rule::opt_index))
});

/// An expression with the depth of its tree.
struct Built {
    expr: Expr,
    depth: usize,
}

type BuildResult = Result<Built, SyntaxError>;

fn span_of(pair: &Pair<'_, Rule>, base: usize) -> Span {
    let s = pair.as_span();
    Span::new(base + s.start(), base + s.end())
}

/// Makes a node over `children`, failing past [`MAX_AST_DEPTH`] at `at`.
fn node(kind: ExprKind, span: Span, children: &[usize], at: Span) -> BuildResult {
    let depth = 1 + children.iter().copied().max().unwrap_or(0);
    if depth > MAX_AST_DEPTH {
        let message = format!("expression too long (limit {MAX_AST_DEPTH} nested operations)");
        return Err(error(message, at, Some("split it into smaller expressions")));
    }
    Ok(Built { expr: Expr { kind, span }, depth })
}

fn build_expr(pair: Pair<'_, Rule>, base: usize) -> BuildResult {
    PRATT
        .map_primary(|p| build_primary(p, base))
        .map_prefix(|op, rhs| {
            let rhs = rhs?;
            let op_kind = if op.as_rule() == Rule::not { UnaryOp::Not } else { UnaryOp::Neg };
            let op_span = span_of(&op, base);
            let span = Span { start: op_span.start, end: rhs.expr.span.end };
            let kind = ExprKind::Unary { op: op_kind, expr: Box::new(rhs.expr) };
            node(kind, span, &[rhs.depth], op_span)
        })
        .map_postfix(|lhs, op| build_postfix(lhs?, op, base))
        .map_infix(|lhs, op, rhs| {
            let (lhs, rhs) = (lhs?, rhs?);
            let op_span = span_of(&op, base);
            let span = Span { start: lhs.expr.span.start, end: rhs.expr.span.end };
            let rule = op.as_rule();
            if rule == Rule::ternary {
                let then = build_expr(op.into_inner().next().expect("ternary middle"), base)?;
                let depths = [lhs.depth, then.depth, rhs.depth];
                let kind = ExprKind::Ternary {
                    cond: Box::new(lhs.expr),
                    then: Box::new(then.expr),
                    otherwise: Box::new(rhs.expr),
                };
                return node(kind, span, &depths, op_span);
            }
            let op = binary_op(rule);
            let depths = [lhs.depth, rhs.depth];
            let kind = ExprKind::Binary { op, op_span, lhs: Box::new(lhs.expr), rhs: Box::new(rhs.expr) };
            node(kind, span, &depths, op_span)
        })
        .parse(pair.into_inner())
}

fn binary_op(rule: Rule) -> BinOp {
    match rule {
        Rule::mul => BinOp::Mul,
        Rule::div => BinOp::Div,
        Rule::rem => BinOp::Rem,
        Rule::add => BinOp::Add,
        Rule::sub => BinOp::Sub,
        Rule::lt => BinOp::Lt,
        Rule::le => BinOp::Le,
        Rule::gt => BinOp::Gt,
        Rule::ge => BinOp::Ge,
        Rule::eq => BinOp::Eq,
        Rule::ne => BinOp::Ne,
        Rule::in_op => BinOp::In,
        Rule::and => BinOp::And,
        Rule::or => BinOp::Or,
        Rule::coalesce => BinOp::Coalesce,
        other => unreachable!("{other:?} is not a binary operator"),
    }
}

fn build_postfix(lhs: Built, op: Pair<'_, Rule>, base: usize) -> BuildResult {
    let op_span = span_of(&op, base);
    let span = Span { start: lhs.expr.span.start, end: op_span.end };
    let optional = matches!(op.as_rule(), Rule::opt_field | Rule::opt_index);
    let inner = op.into_inner().next().expect("postfix operand");
    if inner.as_rule() == Rule::name {
        let name_span = span_of(&inner, base);
        let kind =
            ExprKind::Field { base: Box::new(lhs.expr), name: inner.as_str().into(), name_span, optional };
        return node(kind, span, &[lhs.depth], op_span);
    }
    let index = build_expr(inner, base)?;
    let depths = [lhs.depth, index.depth];
    let kind = ExprKind::Index { base: Box::new(lhs.expr), index: Box::new(index.expr), optional };
    node(kind, span, &depths, op_span)
}

fn build_primary(primary: Pair<'_, Rule>, base: usize) -> BuildResult {
    let pair = primary.into_inner().next().expect("primary has one child");
    let span = span_of(&pair, base);
    let leaf = |kind| node(kind, span, &[], span);
    match pair.as_rule() {
        Rule::null_lit => leaf(ExprKind::Null),
        Rule::true_lit => leaf(ExprKind::Bool(true)),
        Rule::false_lit => leaf(ExprKind::Bool(false)),
        Rule::number => match pair.as_str().parse::<f64>() {
            Ok(n) if n.is_finite() => leaf(ExprKind::Number(n)),
            _ => Err(error("number too large", span, None)),
        },
        Rule::string => {
            let inner = pair.into_inner().next().expect("string content");
            leaf(ExprKind::Str(unescape(inner.as_str())))
        }
        Rule::var => leaf(ExprKind::Var(pair.as_str().into())),
        Rule::paren => {
            let mut inner = build_expr(pair.into_inner().next().expect("parenthesized expr"), base)?;
            // The node stands for the whole `( … )` text.
            inner.expr.span = span;
            Ok(inner)
        }
        Rule::array => {
            let (items, depths) = build_list(pair, base)?;
            node(ExprKind::Array(items), span, &depths, span)
        }
        Rule::call => {
            let mut inner = pair.clone().into_inner();
            let name = inner.next().expect("callee");
            let name_span = span_of(&name, base);
            let (args, depths) = build_list(pair, base)?;
            let kind = ExprKind::Call { name: name.as_str().into(), name_span, args };
            node(kind, span, &depths, span)
        }
        other => unreachable!("{other:?} is not a primary"),
    }
}

/// The `expr` children of an array or a call, with their depths.
fn build_list(pair: Pair<'_, Rule>, base: usize) -> Result<(Vec<Expr>, Vec<usize>), SyntaxError> {
    let mut items = Vec::new();
    let mut depths = Vec::new();
    for item in pair.into_inner().filter(|p| p.as_rule() == Rule::expr) {
        let built = build_expr(item, base)?;
        items.push(built.expr);
        depths.push(built.depth);
    }
    Ok((items, depths))
}

/// Decodes a string literal's content; the grammar admits only valid escapes.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
