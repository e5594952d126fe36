//! The run engine: the only place workflow semantics live. The CLI and the
//! MCP server are thin adapters over [`Engine`].

pub mod args;
pub mod catalog;
pub mod config;
pub mod contracts;
pub mod engine;
mod error;
pub mod error_details;
pub mod eval;
pub mod failure;
mod fork;
mod integrity;
pub mod payload;
pub mod project;
pub mod prompts;
pub mod record;
pub mod render;
pub mod reply;
pub mod reply_runs;
pub mod run;
mod run_errors;
pub mod text;
pub mod tool_schema;
pub mod tools;
pub mod upgrade;
pub mod workflow;

pub use config::EngineConfig;
pub use engine::{COMPACT_AFTER, Engine};
pub use error::{EngineError, ErrorCode, ErrorContext};
pub use project::Project;

use serde_json::Value;

/// What an engine call returns: a reply (JSON by default) or an [`EngineError`].
pub type EngineResult<T = Value> = Result<T, EngineError>;
