//! `<<expr>>` interpolation inside strings, with `\<<` as a literal escape.

use crate::syntax::ast::{SyntaxError, Template};

/// Splits a string into text and `<<expr>>` segments. Never fails: a broken
/// segment becomes literal text and its error is returned beside the template.
pub fn parse_template(_text: &str) -> (Template, Vec<SyntaxError>) {
    unimplemented!("helper: expr")
}
