//! The run engine: the only place workflow semantics live. The CLI and the
//! MCP server are thin adapters over [`Engine`].

pub mod config;
pub mod engine;
pub mod eval;
pub mod payload;
pub mod prompts;
pub mod render;
pub mod run;
pub mod tools;
pub mod workflow;

pub use config::EngineConfig;
pub use engine::Engine;

use serde_json::{Map, Value, json};

/// A failure the engine reports as data: `{ "error": CODE, "details": … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineError {
    pub code: &'static str,
    pub details: Value,
    /// Extra top-level fields (e.g. the repeated `instruction` on VALIDATION_FAILED).
    pub extra: Vec<(String, Value)>,
}

impl EngineError {
    pub fn new(code: &'static str, details: Value) -> EngineError {
        EngineError { code, details, extra: Vec::new() }
    }

    pub fn with(mut self, key: &str, value: Value) -> EngineError {
        self.extra.push((key.to_owned(), value));
        self
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("error".into(), json!(self.code));
        m.insert("details".into(), self.details.clone());
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.details)
    }
}

pub type EngineResult = Result<Value, EngineError>;
