//! YAML → spanned tree, and the expression / interpolation parser.

pub mod ast;
pub mod expr;
pub mod node;
pub mod scalar;
pub mod template;
pub mod yaml;
