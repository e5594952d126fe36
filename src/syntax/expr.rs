//! The expression parser (pest grammar in `grammar/expr.pest`) → [`Expr`].

use crate::syntax::ast::{Expr, SyntaxError};

/// Parses a whole expression. Spans are offsets into `text` plus `base`.
pub fn parse_expr_at(_text: &str, _base: usize) -> Result<Expr, SyntaxError> {
    unimplemented!("helper: expr")
}

pub fn parse_expr(text: &str) -> Result<Expr, SyntaxError> {
    parse_expr_at(text, 0)
}
