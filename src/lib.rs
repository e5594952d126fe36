//! savant-think: a compiler, static checker and deterministic run engine for
//! declarative LLM workflows.
#![forbid(unsafe_code)]

pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod ir;
pub mod report;
pub mod runtime;
pub mod source;
pub mod state;
pub mod syntax;
pub mod workspace;

/// Safety limits applied while reading a workflow file.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Files larger than this many bytes are refused (default 8 MiB).
    pub max_file_bytes: usize,
    /// Maximum nesting depth of YAML collections (default 128).
    pub max_depth: usize,
    /// Maximum number of nodes produced by alias expansion in one file
    /// (default 100,000): a "billion laughs" file stops here.
    pub max_alias_nodes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_file_bytes: 8 * 1024 * 1024, max_depth: 128, max_alias_nodes: 100_000 }
    }
}
