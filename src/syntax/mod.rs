//! YAML → spanned tree, and the expression / interpolation parser.
//!
//! `yaml.rs` builds a `Node` tree from saphyr-parser's event stream
//! (iteratively; duplicate keys, depth, size and alias-expansion limits;
//! `yaml_text.rs` reads what the events do not say from the file's bytes);
//! `node.rs` holds the tree types and YAML 1.2 core-schema scalar
//! resolution; `scalar.rs` maps decoded offsets back to the file for every
//! scalar style; `expr.rs` with `grammar/expr.pest` parses expressions
//! (`expr_fast.rs` the commonest two shapes by hand, without pest) to
//! `ast.rs` (with the expression walk: `walk`, `references`; names are
//! inline `ast::Name`s); `template.rs` splits `<<expr>>` interpolation
//! (text segments are ranges of the template's text; an all-literal
//! template has no segment). A file's unit tests sit in a sibling
//! `*_tests.rs`.
//!
//! A diagnostic inside an expression is found in *decoded-string*
//! coordinates (the scalar's value after quotes, escapes and block folding
//! are removed) and mapped back to a file byte range by
//! `scalar::map_range` (or a `ScalarMap`, which remembers the last few
//! decodings of one file), which re-decodes the scalar as written. That is
//! how `check` underlines the exact characters of `params.x` inside
//! `"…\"é\" && params.x…"` or a `|` block.

pub mod ast;
pub mod expr;
pub mod node;
pub mod scalar;
pub mod template;
pub mod yaml;
