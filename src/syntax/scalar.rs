//! Maps an offset inside a scalar's decoded value back to a byte in the file.

use crate::source::Span;
use crate::syntax::node::ScalarStyle;

/// `text` is the whole file, `span` the scalar's [`crate::syntax::node::Node::span`],
/// `value` its decoded value and `decoded` a byte offset into `value`
/// (`decoded == value.len()` is allowed: the end). Returns a byte offset into `text`.
pub fn map_offset(_text: &str, _span: Span, _style: ScalarStyle, _value: &str, _decoded: usize) -> usize {
    unimplemented!("helper: yaml")
}
