//! The expression AST. Spans are byte offsets into the *decoded* string the
//! expression came from (the YAML scalar's value), not into the file; the
//! caller maps them through the scalar's offset table (`syntax::scalar`).

use crate::source::Span;

/// A name in an expression (a variable, a field, a function): inline up to
/// 24 bytes, so the usual `params.repo` allocates no string (a large file
/// holds hundreds of thousands of them).
pub type Name = compact_str::CompactString;

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!`
    Not,
    /// `-`
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    In,
    And,
    Or,
    /// `??`
    Coalesce,
}

impl BinOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::In => "in",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Coalesce => "??",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Expr>),
    /// A bare identifier at the root of a path: `params`, `mr`, `loop`.
    Var(Name),
    /// `base.name` or `base?.name`.
    Field {
        base: Box<Expr>,
        name: Name,
        /// The span of `name` alone.
        name_span: Span,
        optional: bool,
    },
    /// `base[index]` or `base?.[index]`.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
        optional: bool,
    },
    /// `name(args…)`.
    Call {
        name: Name,
        name_span: Span,
        args: Vec<Expr>,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinOp,
        /// The span of the operator token.
        op_span: Span,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? then : otherwise`.
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
}

/// A syntax error in an expression or a template; the span is in the same
/// decoded-string coordinates as [`Expr::span`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub span: Span,
    pub help: Option<String>,
}

/// One piece of an interpolated string.
#[derive(Clone, Debug, PartialEq)]
pub enum Segment {
    /// Literal text, with `\<<` already unescaped to `<<`.
    Text(TextSegment),
    /// `<<expr>>`; `span` covers the delimiters too.
    Interp { expr: Expr, span: Span },
}

/// Literal text of a template: a range of the template's text (no copy),
/// or, when it differs from that range (an escaped `\<<`), the text itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextSegment {
    /// Where the text is in the template's text, escapes included.
    pub span: Span,
    unescaped: Option<Box<str>>,
}

impl TextSegment {
    /// `unescaped` is the segment's text when it is not `text[span]`.
    pub(crate) fn new(span: Span, unescaped: Option<Box<str>>) -> TextSegment {
        TextSegment { span, unescaped }
    }

    /// The literal text; `text` is the string the template was parsed from.
    pub fn as_str<'a>(&'a self, text: &'a str) -> &'a str {
        match &self.unescaped {
            Some(own) => own,
            None => text.get(self.span.range()).unwrap_or_default(),
        }
    }
}

/// A parsed string that may contain `<<expr>>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// Empty when the string is all literal text, written without escapes:
    /// the template is then its text verbatim (no allocation for the most
    /// common template, a plain word).
    pub segments: Vec<Segment>,
}

impl Template {
    /// A string that is exactly one `<<expr>>` yields the typed value.
    pub fn as_single_expr(&self) -> Option<&Expr> {
        match self.segments.as_slice() {
            [Segment::Interp { expr, .. }] => Some(expr),
            _ => None,
        }
    }

    pub fn has_interpolation(&self) -> bool {
        self.segments.iter().any(|s| matches!(s, Segment::Interp { .. }))
    }
}

/// The names an expression reads at the root of a path: `(name, span, false)`
/// for a variable, `(id, span, true)` for `steps.<id>`.
pub fn references(expr: &Expr) -> Vec<(&str, Span, bool)> {
    let mut out = Vec::new();
    walk(expr, &mut |e| match &e.kind {
        ExprKind::Var(name) => out.push((name.as_str(), e.span, false)),
        ExprKind::Field { base, name, name_span, .. } => {
            if matches!(&base.kind, ExprKind::Var(v) if v == "steps") {
                out.push((name.as_str(), *name_span, true));
            }
        }
        _ => {}
    });
    out
}

/// Visits every node of an expression, parents before children.
pub fn walk<'e>(expr: &'e Expr, f: &mut impl FnMut(&'e Expr)) {
    f(expr);
    match &expr.kind {
        ExprKind::Array(items) => items.iter().for_each(|i| walk(i, f)),
        ExprKind::Field { base, .. } => walk(base, f),
        ExprKind::Index { base, index, .. } => {
            walk(base, f);
            walk(index, f);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| walk(a, f)),
        ExprKind::Unary { expr, .. } => walk(expr, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk(lhs, f);
            walk(rhs, f);
        }
        ExprKind::Ternary { cond, then, otherwise } => {
            walk(cond, f);
            walk(then, f);
            walk(otherwise, f);
        }
        ExprKind::Null | ExprKind::Bool(_) | ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Var(_) => {}
    }
}
