//! The expression AST. Spans are byte offsets into the *decoded* string the
//! expression came from (the YAML scalar's value), not into the file; the
//! caller maps them through the scalar's offset table (`syntax::scalar`).

use crate::source::Span;

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
    Var(String),
    /// `base.name` or `base?.name`.
    Field {
        base: Box<Expr>,
        name: String,
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
        name: String,
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
    Text(String),
    /// `<<expr>>`; `span` covers the delimiters too.
    Interp { expr: Expr, span: Span },
}

/// A parsed string that may contain `<<expr>>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
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
